/**
 * {@link AsyncStoreOps} on a better-sqlite3 connection, synchronous (SqliteStore makes them async and
 * runs them under its mutex / inside its transactions). Schema: migration 2.
 */
import { type Atomic, atomicRunner } from "./sqlite-atomic";
import type { Database, Statement } from "better-sqlite3";
import { getAddress } from "ethers";
import type {
  ActiveReserve,
  AsyncStoreOps,
  ChainBlock,
  ChainCursor,
  ChainEventRecord,
  ClearingGuarantee,
  CollateralAdjustment,
  CollateralDelta,
  CycleClaimRecord,
  CycleDebtRecord,
  CycleRecord,
  CycleState,
  DebtStatus,
  GuaranteeQuery,
  ReserveRecord,
  ValidationResponseRecord,
  WithdrawalRecord,
  WithdrawalState,
} from "./async-types";
import { type GuaranteeRow, guaranteeFromRow, type SyncOf } from "./sqlite-ops";
import { SqliteReserves } from "./sqlite-reserves";
import type { CollateralBalance, GuaranteeState } from "./types";

/** Largest page {@link SqliteAsyncOps.listGuarantees} returns when no limit is given. */
export const DEFAULT_GUARANTEE_QUERY_LIMIT = 100_000;

const addr = (value: string): string => getAddress(value.toLowerCase());
const bytes32 = (value: string): string => value.toLowerCase();

type Row = Record<string, unknown>;

const CYCLE_COLUMNS: Record<keyof Omit<CycleRecord, "cycleId">, string> = {
  state: "state",
  root: "root",
  treeDump: "tree_dump",
  args: "args",
  guaranteeIds: "guarantee_ids",
  cutoff: "cutoff",
  plannedAt: "planned_at",
  txHash: "tx_hash",
  txNonce: "tx_nonce",
  rawTx: "raw_tx",
  sentAt: "sent_at",
  committedBlock: "committed_block",
  committedAt: "committed_at",
  paymentDeadline: "payment_deadline",
  defaultDeadline: "default_deadline",
  finalizedAt: "finalized_at",
  challengeDeadline: "challenge_deadline",
  answerDeadline: "answer_deadline",
  vetoedAt: "vetoed_at",
  plannedByCore: "planned_by_core",
};

export class SqliteAsyncOps implements SyncOf<AsyncStoreOps> {
  private readonly stmt: ReturnType<typeof prepare>;
  private readonly atomic: Atomic;
  private readonly reserves: SqliteReserves;

  constructor(private readonly db: Database) {
    this.stmt = prepare(db);
    this.atomic = atomicRunner(db);
    this.reserves = new SqliteReserves(db);
  }

  // --- cursor and journal ---

  getChainCursor(): ChainCursor | null {
    const row = this.stmt.getCursor.get() as Row | undefined;
    if (!row) return null;
    return {
      blockNumber: row.block_number as number,
      blockHash: row.block_hash as string,
      blockTimestamp: row.block_timestamp as number,
    };
  }

  setChainCursor(cursor: ChainCursor | null, now: number): void {
    if (cursor === null) {
      this.stmt.deleteCursor.run();
      return;
    }
    this.stmt.putCursor.run(cursor.blockNumber, bytes32(cursor.blockHash), cursor.blockTimestamp, now);
  }

  recordChainBlock(block: ChainBlock): void {
    this.stmt.putBlock.run(block.blockNumber, bytes32(block.blockHash), block.blockTimestamp);
  }

  listChainBlocks(atOrBelow: number, limit: number): ChainBlock[] {
    return (this.stmt.listBlocks.all(atOrBelow, limit) as Row[]).map((row) => ({
      blockNumber: row.block_number as number,
      blockHash: row.block_hash as string,
      blockTimestamp: row.block_timestamp as number,
    }));
  }

  deleteChainBlocks(above: number, pruneBelow?: number): void {
    this.stmt.deleteBlocksAbove.run(above);
    if (pruneBelow !== undefined) this.stmt.deleteBlocksBelow.run(pruneBelow);
  }

  getChainEvent(txHash: string, logIndex: number): ChainEventRecord | null {
    const row = this.stmt.getEvent.get(bytes32(txHash), logIndex) as Row | undefined;
    return row ? eventFromRow(row) : null;
  }

  insertChainEvent(record: ChainEventRecord): void {
    this.stmt.insertEvent.run(
      bytes32(record.txHash),
      record.logIndex,
      record.blockNumber,
      bytes32(record.blockHash),
      record.blockTimestamp,
      record.contract,
      record.name,
      JSON.stringify(record.args),
      JSON.stringify(record.undo),
      record.appliedAt,
    );
  }

  listChainEventsAbove(blockNumber: number): ChainEventRecord[] {
    return (this.stmt.eventsAbove.all(blockNumber) as Row[]).map(eventFromRow);
  }

  deleteChainEvent(txHash: string, logIndex: number): void {
    this.stmt.deleteEvent.run(bytes32(txHash), logIndex);
  }

  deleteChainEventsBelow(blockNumber: number): number {
    return this.stmt.deleteEventsBelow.run(blockNumber).changes;
  }

  // --- collateral ---

  adjustCollateral(user: string, asset: string, delta: CollateralDelta, now: number): CollateralAdjustment {
    return this.atomic(() => {
      const key = { user: addr(user), asset: addr(asset) };
      const row = this.stmt.getCollateral.get(key.user, key.asset) as Row | undefined;
      const before: CollateralBalance = {
        ...key,
        deposited: BigInt((row?.deposited as string) ?? 0),
        locked: BigInt((row?.locked as string) ?? 0),
        pendingWithdrawal: BigInt((row?.pending_withdrawal as string) ?? 0),
      };
      const clamp = (value: bigint) => (value < 0n ? 0n : value);
      const balance = {
        ...before,
        deposited: clamp(before.deposited + (delta.deposited ?? 0n)),
        locked: clamp(before.locked + (delta.locked ?? 0n)),
      };
      this.stmt.upsertCollateral.run(
        key.user,
        key.asset,
        balance.deposited.toString(),
        balance.locked.toString(),
        balance.pendingWithdrawal.toString(),
        now,
      );
      return {
        balance,
        applied: {
          deposited: balance.deposited - before.deposited,
          locked: balance.locked - before.locked,
        },
      };
    });
  }

  // --- guarantees ---

  getClearingGuarantee(guaranteeId: string): ClearingGuarantee | null {
    const row = this.stmt.getGuarantee.get(bytes32(guaranteeId)) as Row | undefined;
    return row ? clearingGuaranteeFromRow(row) : null;
  }

  listGuarantees(query: GuaranteeQuery): ClearingGuarantee[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.states && query.states.length > 0) {
      where.push(`state IN (${query.states.map(() => "?").join(", ")})`);
      params.push(...query.states);
    }
    if (query.cycleId !== undefined) {
      where.push("cycle_id = ?");
      params.push(query.cycleId);
    }
    if (query.user !== undefined) {
      where.push("user_address = ?");
      params.push(addr(query.user));
    }
    if (query.asset !== undefined) {
      where.push("asset_address = ?");
      params.push(addr(query.asset));
    }
    if (query.version !== undefined) {
      where.push("version = ?");
      params.push(query.version);
    }
    if (query.unassigned) where.push("cycle_id IS NULL AND excluded_reason IS NULL");
    if (query.missingRequestHash) where.push("validation_request_hash IS NULL");
    if (query.afterSeq !== undefined) {
      where.push("seq > ?");
      params.push(query.afterSeq);
    }
    const sql =
      "SELECT * FROM guarantees" +
      (where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "") +
      " ORDER BY seq LIMIT ?";
    params.push(query.limit ?? DEFAULT_GUARANTEE_QUERY_LIMIT);
    return (this.db.prepare(sql).all(...params) as Row[]).map(clearingGuaranteeFromRow);
  }

  transitionGuarantee(
    guaranteeId: string,
    from: readonly GuaranteeState[],
    to: GuaranteeState,
    now: number,
  ): ClearingGuarantee | null {
    return this.atomic(() => {
      const before = this.getClearingGuarantee(guaranteeId);
      if (!before || !from.includes(before.state)) return null;
      this.stmt.setState.run(to, now, bytes32(guaranteeId));
      return before;
    });
  }

  assignGuaranteesToCycle(guaranteeIds: readonly string[], cycleId: number | null): void {
    this.atomic(() => {
      for (const id of guaranteeIds) this.stmt.setCycle.run(cycleId, bytes32(id));
    });
  }

  setGuaranteeExcluded(guaranteeId: string, reason: string | null): void {
    this.stmt.setExcluded.run(reason, bytes32(guaranteeId));
  }

  setValidationRequestHash(guaranteeId: string, requestHash: string): void {
    this.stmt.setRequestHash.run(bytes32(requestHash), bytes32(guaranteeId));
  }

  // --- cycles ---

  insertCycle(record: CycleRecord): void {
    this.stmt.insertCycle.run(
      record.cycleId,
      record.state,
      record.root,
      record.treeDump,
      record.args,
      JSON.stringify(record.guaranteeIds),
      record.cutoff,
      record.plannedAt,
      record.txHash,
      record.txNonce,
      record.rawTx,
      record.sentAt,
      record.committedBlock,
      record.committedAt,
      record.paymentDeadline,
      record.defaultDeadline,
      record.finalizedAt,
      record.challengeDeadline,
      record.answerDeadline,
      record.vetoedAt,
      record.plannedByCore ? 1 : 0,
    );
  }

  getCycle(cycleId: number): CycleRecord | null {
    const row = this.stmt.getCycle.get(cycleId) as Row | undefined;
    return row ? cycleFromRow(row) : null;
  }

  latestCycle(): CycleRecord | null {
    const row = this.stmt.latestCycle.get() as Row | undefined;
    return row ? cycleFromRow(row) : null;
  }

  listCycles(states: readonly CycleState[]): CycleRecord[] {
    if (states.length === 0) return [];
    const sql = `SELECT * FROM cycles WHERE state IN (${states.map(() => "?").join(", ")}) ORDER BY cycle_id`;
    return (this.db.prepare(sql).all(...states) as Row[]).map(cycleFromRow);
  }

  updateCycle(cycleId: number, changes: Partial<Omit<CycleRecord, "cycleId">>): void {
    const entries = Object.entries(changes) as [keyof typeof CYCLE_COLUMNS, unknown][];
    if (entries.length === 0) return;
    const sets = entries.map(([key]) => `${CYCLE_COLUMNS[key]} = ?`).join(", ");
    const values = entries.map(([key, value]) =>
      key === "guaranteeIds" ? JSON.stringify(value) : key === "plannedByCore" ? (value ? 1 : 0) : value,
    );
    this.db.prepare(`UPDATE cycles SET ${sets} WHERE cycle_id = ?`).run(...values, cycleId);
  }

  deleteCycle(cycleId: number): void {
    this.stmt.deleteCycle.run(cycleId);
  }

  putCycleDebt(record: CycleDebtRecord): void {
    this.stmt.putDebt.run(
      record.cycleId,
      addr(record.asset),
      addr(record.debtor),
      record.amount.toString(),
      record.status,
      record.covered === null ? null : record.covered.toString(),
      record.resolvedTx,
    );
  }

  getCycleDebt(cycleId: number, asset: string, debtor: string): CycleDebtRecord | null {
    const row = this.stmt.getDebt.get(cycleId, addr(asset), addr(debtor)) as Row | undefined;
    return row ? debtFromRow(row) : null;
  }

  listCycleDebts(query: { cycleId?: number; status?: DebtStatus }): CycleDebtRecord[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.cycleId !== undefined) {
      where.push("cycle_id = ?");
      params.push(query.cycleId);
    }
    if (query.status !== undefined) {
      where.push("status = ?");
      params.push(query.status);
    }
    const sql =
      "SELECT * FROM cycle_debts" +
      (where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "") +
      " ORDER BY cycle_id, asset, debtor";
    return (this.db.prepare(sql).all(...params) as Row[]).map(debtFromRow);
  }

  deleteCycleDebt(cycleId: number, asset: string, debtor: string): void {
    this.stmt.deleteDebt.run(cycleId, addr(asset), addr(debtor));
  }

  putCycleClaim(record: CycleClaimRecord): void {
    this.stmt.putClaim.run(
      record.cycleId,
      addr(record.asset),
      addr(record.participant),
      record.amount.toString(),
      bytes32(record.txHash),
    );
  }

  listCycleClaims(cycleId: number): CycleClaimRecord[] {
    return (this.stmt.listClaims.all(cycleId) as Row[]).map((row) => ({
      cycleId: row.cycle_id as number,
      asset: row.asset as string,
      participant: row.participant as string,
      amount: BigInt(row.amount as string),
      txHash: row.tx_hash as string,
    }));
  }

  deleteCycleClaim(cycleId: number, asset: string, participant: string): void {
    this.stmt.deleteClaim.run(cycleId, addr(asset), addr(participant));
  }

  // --- sellers' on-chain reserves ---

  putReserve(record: ReserveRecord): void {
    this.reserves.putReserve(record);
  }

  getReserve(guaranteeId: string): ReserveRecord | null {
    return this.reserves.getReserve(guaranteeId);
  }

  deleteReserve(guaranteeId: string): void {
    this.reserves.deleteReserve(guaranteeId);
  }

  listReserves(user: string, asset?: string): ActiveReserve[] {
    return this.reserves.listReserves(user, asset);
  }

  listReleasableReserves(nowSeconds: number, limit: number): ActiveReserve[] {
    return this.reserves.listReleasableReserves(nowSeconds, limit);
  }

  // --- withdrawals ---

  putWithdrawal(record: WithdrawalRecord): void {
    this.stmt.putWithdrawal.run(
      record.withdrawalId,
      addr(record.user),
      addr(record.asset),
      record.amount.toString(),
      record.finalizableAt,
      record.requestedAt,
      record.state,
      record.paid === null ? null : record.paid.toString(),
      record.closedAt,
    );
  }

  getWithdrawal(withdrawalId: number): WithdrawalRecord | null {
    const row = this.stmt.getWithdrawal.get(withdrawalId) as Row | undefined;
    return row ? withdrawalFromRow(row) : null;
  }

  deleteWithdrawal(withdrawalId: number): void {
    this.stmt.deleteWithdrawal.run(withdrawalId);
  }

  listWithdrawals(user: string, states?: readonly WithdrawalState[]): WithdrawalRecord[] {
    const rows = this.stmt.listWithdrawals.all(addr(user)) as Row[];
    return rows.map(withdrawalFromRow).filter((w) => !states || states.includes(w.state));
  }

  // --- validation responses ---

  insertValidationResponse(record: ValidationResponseRecord): void {
    this.stmt.insertResponse.run(
      bytes32(record.txHash),
      record.logIndex,
      bytes32(record.requestHash),
      addr(record.validator),
      record.agentId.toString(),
      record.response,
      record.tag,
      record.blockNumber,
      record.blockTimestamp,
    );
  }

  deleteValidationResponse(txHash: string, logIndex: number): void {
    this.stmt.deleteResponse.run(bytes32(txHash), logIndex);
  }

  latestValidationResponse(
    requestHash: string,
    validator: string,
    maxTimestamp: number = Number.MAX_SAFE_INTEGER,
  ): ValidationResponseRecord | null {
    const row = this.stmt.latestResponse.get(bytes32(requestHash), addr(validator), maxTimestamp) as
      | Row
      | undefined;
    if (!row) return null;
    return {
      txHash: row.tx_hash as string,
      logIndex: row.log_index as number,
      requestHash: row.request_hash as string,
      validator: row.validator as string,
      agentId: BigInt(row.agent_id as string),
      response: row.response as number,
      tag: row.tag as string,
      blockNumber: row.block_number as number,
      blockTimestamp: row.block_timestamp as number,
    };
  }

  // --- settings ---

  getOperatorState(key: string): string | null {
    const row = this.stmt.getState.get(key) as Row | undefined;
    return row ? (row.value as string) : null;
  }

  setOperatorState(key: string, value: string | null): void {
    if (value === null) this.stmt.deleteState.run(key);
    else this.stmt.putState.run(key, value);
  }
}

function prepare(db: Database) {
  const p = (sql: string): Statement => db.prepare(sql);
  return {
    getCursor: p("SELECT * FROM chain_cursor WHERE id = 1"),
    deleteCursor: p("DELETE FROM chain_cursor WHERE id = 1"),
    putCursor: p(
      `INSERT INTO chain_cursor (id, block_number, block_hash, block_timestamp, updated_at) VALUES (1, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET block_number = excluded.block_number, block_hash = excluded.block_hash,
         block_timestamp = excluded.block_timestamp, updated_at = excluded.updated_at`,
    ),
    putBlock: p(
      `INSERT INTO chain_blocks (block_number, block_hash, block_timestamp) VALUES (?, ?, ?)
       ON CONFLICT (block_number) DO UPDATE SET block_hash = excluded.block_hash,
         block_timestamp = excluded.block_timestamp`,
    ),
    listBlocks: p("SELECT * FROM chain_blocks WHERE block_number <= ? ORDER BY block_number DESC LIMIT ?"),
    deleteBlocksAbove: p("DELETE FROM chain_blocks WHERE block_number > ?"),
    deleteBlocksBelow: p("DELETE FROM chain_blocks WHERE block_number < ?"),
    getEvent: p("SELECT * FROM chain_events WHERE tx_hash = ? AND log_index = ?"),
    insertEvent: p(
      `INSERT INTO chain_events (tx_hash, log_index, block_number, block_hash, block_timestamp, contract, name,
         args, undo, applied_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    eventsAbove: p(
      "SELECT * FROM chain_events WHERE block_number > ? ORDER BY block_number DESC, log_index DESC",
    ),
    deleteEvent: p("DELETE FROM chain_events WHERE tx_hash = ? AND log_index = ?"),
    deleteEventsBelow: p("DELETE FROM chain_events WHERE block_number < ?"),
    getCollateral: p(
      "SELECT deposited, locked, pending_withdrawal FROM collateral WHERE user_address = ? AND asset_address = ?",
    ),
    upsertCollateral: p(
      `INSERT INTO collateral (user_address, asset_address, deposited, locked, pending_withdrawal, updated_at)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (user_address, asset_address) DO UPDATE SET
         deposited = excluded.deposited, locked = excluded.locked,
         pending_withdrawal = excluded.pending_withdrawal, updated_at = excluded.updated_at`,
    ),
    getGuarantee: p("SELECT * FROM guarantees WHERE guarantee_id = ?"),
    setState: p("UPDATE guarantees SET state = ?, updated_at = ? WHERE guarantee_id = ?"),
    setCycle: p("UPDATE guarantees SET cycle_id = ? WHERE guarantee_id = ?"),
    setExcluded: p("UPDATE guarantees SET excluded_reason = ? WHERE guarantee_id = ?"),
    setRequestHash: p("UPDATE guarantees SET validation_request_hash = ? WHERE guarantee_id = ?"),
    insertCycle: p(
      `INSERT INTO cycles (cycle_id, state, root, tree_dump, args, guarantee_ids, cutoff, planned_at, tx_hash,
         tx_nonce, raw_tx, sent_at, committed_block, committed_at, payment_deadline, default_deadline, finalized_at,
         challenge_deadline, answer_deadline, vetoed_at, planned_by_core)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    getCycle: p("SELECT * FROM cycles WHERE cycle_id = ?"),
    latestCycle: p("SELECT * FROM cycles ORDER BY cycle_id DESC LIMIT 1"),
    deleteCycle: p("DELETE FROM cycles WHERE cycle_id = ?"),
    putDebt: p(
      `INSERT INTO cycle_debts (cycle_id, asset, debtor, amount, status, covered, resolved_tx) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (cycle_id, asset, debtor) DO UPDATE SET amount = excluded.amount, status = excluded.status,
         covered = excluded.covered, resolved_tx = excluded.resolved_tx`,
    ),
    getDebt: p("SELECT * FROM cycle_debts WHERE cycle_id = ? AND asset = ? AND debtor = ?"),
    deleteDebt: p("DELETE FROM cycle_debts WHERE cycle_id = ? AND asset = ? AND debtor = ?"),
    putClaim: p(
      `INSERT INTO cycle_claims (cycle_id, asset, participant, amount, tx_hash) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (cycle_id, asset, participant) DO UPDATE SET amount = excluded.amount, tx_hash = excluded.tx_hash`,
    ),
    listClaims: p("SELECT * FROM cycle_claims WHERE cycle_id = ? ORDER BY asset, participant"),
    deleteClaim: p("DELETE FROM cycle_claims WHERE cycle_id = ? AND asset = ? AND participant = ?"),
    putWithdrawal: p(
      `INSERT INTO withdrawals (withdrawal_id, user_address, asset_address, amount, finalizable_at, requested_at,
         state, paid, closed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (withdrawal_id) DO UPDATE SET amount = excluded.amount, finalizable_at = excluded.finalizable_at,
         requested_at = excluded.requested_at, state = excluded.state, paid = excluded.paid, closed_at = excluded.closed_at`,
    ),
    getWithdrawal: p("SELECT * FROM withdrawals WHERE withdrawal_id = ?"),
    deleteWithdrawal: p("DELETE FROM withdrawals WHERE withdrawal_id = ?"),
    listWithdrawals: p("SELECT * FROM withdrawals WHERE user_address = ? ORDER BY withdrawal_id"),
    insertResponse: p(
      `INSERT OR REPLACE INTO validation_responses (tx_hash, log_index, request_hash, validator, agent_id, response, tag,
         block_number, block_timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    deleteResponse: p("DELETE FROM validation_responses WHERE tx_hash = ? AND log_index = ?"),
    latestResponse: p(
      `SELECT * FROM validation_responses WHERE request_hash = ? AND validator = ? AND block_timestamp <= ?
       ORDER BY block_number DESC, log_index DESC LIMIT 1`,
    ),
    getState: p("SELECT value FROM operator_state WHERE key = ?"),
    putState: p(
      "INSERT INTO operator_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    ),
    deleteState: p("DELETE FROM operator_state WHERE key = ?"),
  };
}

function eventFromRow(row: Row): ChainEventRecord {
  return {
    txHash: row.tx_hash as string,
    logIndex: row.log_index as number,
    blockNumber: row.block_number as number,
    blockHash: row.block_hash as string,
    blockTimestamp: row.block_timestamp as number,
    contract: row.contract as string,
    name: row.name as string,
    args: JSON.parse(row.args as string) as Record<string, unknown>,
    undo: JSON.parse(row.undo as string) as unknown[],
    appliedAt: row.applied_at as number,
  };
}

function clearingGuaranteeFromRow(row: Row): ClearingGuarantee {
  const guaranteeRow = row as unknown as GuaranteeRow;
  return {
    ...guaranteeFromRow(guaranteeRow),
    seq: guaranteeRow.seq,
    validationRequestHash: guaranteeRow.validation_request_hash ?? null,
  };
}

function cycleFromRow(row: Row): CycleRecord {
  return {
    cycleId: row.cycle_id as number,
    state: row.state as CycleState,
    root: row.root as string,
    treeDump: row.tree_dump as string,
    args: row.args as string,
    guaranteeIds: JSON.parse(row.guarantee_ids as string) as string[],
    cutoff: row.cutoff as number,
    plannedAt: row.planned_at as number,
    txHash: (row.tx_hash as string | null) ?? null,
    txNonce: (row.tx_nonce as number | null) ?? null,
    rawTx: (row.raw_tx as string | null) ?? null,
    sentAt: (row.sent_at as number | null) ?? null,
    committedBlock: (row.committed_block as number | null) ?? null,
    committedAt: (row.committed_at as number | null) ?? null,
    paymentDeadline: (row.payment_deadline as number | null) ?? null,
    defaultDeadline: (row.default_deadline as number | null) ?? null,
    finalizedAt: (row.finalized_at as number | null) ?? null,
    challengeDeadline: (row.challenge_deadline as number | null) ?? null,
    answerDeadline: (row.answer_deadline as number | null) ?? null,
    vetoedAt: (row.vetoed_at as number | null) ?? null,
    plannedByCore: row.planned_by_core !== 0,
  };
}

function debtFromRow(row: Row): CycleDebtRecord {
  return {
    cycleId: row.cycle_id as number,
    asset: row.asset as string,
    debtor: row.debtor as string,
    amount: BigInt(row.amount as string),
    status: row.status as DebtStatus,
    covered: row.covered === null ? null : BigInt(row.covered as string),
    resolvedTx: (row.resolved_tx as string | null) ?? null,
  };
}

function withdrawalFromRow(row: Row): WithdrawalRecord {
  return {
    withdrawalId: row.withdrawal_id as number,
    user: row.user_address as string,
    asset: row.asset_address as string,
    amount: BigInt(row.amount as string),
    finalizableAt: row.finalizable_at as number,
    requestedAt: row.requested_at as number,
    state: row.state as WithdrawalState,
    paid: row.paid === null ? null : BigInt(row.paid as string),
    closedAt: (row.closed_at as number | null) ?? null,
  };
}
