/** {@link CycleRepository} on a better-sqlite3 connection (schema: migrations 2 and 4). */
import type { Database, Statement } from "better-sqlite3";
import {
  type CycleClaimRecord,
  type CycleDebtRecord,
  type CycleDisputeRecord,
  type DisputeStatus,
  type CycleRecord,
  type CycleRepository,
  type CycleState,
  type DebtStatus,
  type V2NettingRecord,
} from "../repositories";
import { address, bytes32, type Row, type SyncOf } from "./common";
import {
  deleteDisputeSql,
  disputeFromRow,
  disputeParams,
  getDisputeSql,
  keyParams,
  listDisputesSql,
  putDisputeSql,
} from "../dispute-rows";

const QUESTION = () => "?";

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

export class SqliteCycles implements SyncOf<CycleRepository> {
  private readonly stmt: ReturnType<typeof prepare>;

  constructor(private readonly db: Database) {
    this.stmt = prepare(db);
  }

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

  listCycleIds(states: readonly CycleState[], page: { beforeId?: number; limit: number }): number[] {
    if (states.length === 0) return [];
    const sql =
      `SELECT cycle_id FROM cycles WHERE state IN (${states.map(() => "?").join(", ")}) AND cycle_id < ?` +
      " ORDER BY cycle_id DESC LIMIT ?";
    const rows = this.db
      .prepare(sql)
      .all(...states, page.beforeId ?? Number.MAX_SAFE_INTEGER, page.limit) as { cycle_id: number }[];
    return rows.map((row) => Number(row.cycle_id));
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
      address(record.asset),
      address(record.debtor),
      record.amount.toString(),
      record.status,
      record.covered === null ? null : record.covered.toString(),
      record.resolvedTx,
    );
  }

  getCycleDebt(cycleId: number, asset: string, debtor: string): CycleDebtRecord | null {
    const row = this.stmt.getDebt.get(cycleId, address(asset), address(debtor)) as Row | undefined;
    return row ? debtFromRow(row) : null;
  }

  listCycleDebts(query: { cycleId?: number; status?: DebtStatus; debtor?: string }): CycleDebtRecord[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.debtor !== undefined) {
      where.push("debtor = ?");
      params.push(address(query.debtor));
    }
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
    this.stmt.deleteDebt.run(cycleId, address(asset), address(debtor));
  }

  putCycleDispute(record: CycleDisputeRecord): void {
    this.stmt.putDispute.run(...disputeParams(record));
  }

  getCycleDispute(
    cycleId: number,
    asset: string,
    debtor: string,
    position: number,
  ): CycleDisputeRecord | null {
    const row = this.stmt.getDispute.get(...keyParams(cycleId, asset, debtor, position)) as Row | undefined;
    return row ? disputeFromRow(row) : null;
  }

  listCycleDisputes(query: {
    cycleId?: number;
    asset?: string;
    debtor?: string;
    status?: DisputeStatus;
  }): CycleDisputeRecord[] {
    const { sql, params } = listDisputesSql(query, QUESTION);
    return (this.db.prepare(sql).all(...params) as Row[]).map(disputeFromRow);
  }

  deleteCycleDispute(cycleId: number, asset: string, debtor: string, position: number): void {
    this.stmt.deleteDispute.run(...keyParams(cycleId, asset, debtor, position));
  }

  putCycleClaim(record: CycleClaimRecord): void {
    this.stmt.putClaim.run(
      record.cycleId,
      address(record.asset),
      address(record.participant),
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

  listCycleClaimsOf(participant: string): CycleClaimRecord[] {
    const rows = this.db
      .prepare("SELECT * FROM cycle_claims WHERE participant = ? ORDER BY cycle_id, asset")
      .all(address(participant)) as Row[];
    return rows.map((row) => ({
      cycleId: row.cycle_id as number,
      asset: row.asset as string,
      participant: row.participant as string,
      amount: BigInt(row.amount as string),
      txHash: row.tx_hash as string,
    }));
  }

  countCycles(states: readonly CycleState[]): number {
    if (states.length === 0) return 0;
    const row = this.db
      .prepare(`SELECT COUNT(*) AS n FROM cycles WHERE state IN (${states.map(() => "?").join(", ")})`)
      .get(...states) as { n: number };
    return Number(row.n);
  }

  cycleIdsOfTx(txHash: string): number[] {
    const hash = txHash.toLowerCase();
    const rows = this.db
      .prepare(
        `SELECT cycle_id FROM cycles WHERE lower(tx_hash) = ?
         UNION SELECT cycle_id FROM cycle_debts WHERE lower(resolved_tx) = ?
         UNION SELECT cycle_id FROM cycle_claims WHERE lower(tx_hash) = ?
         ORDER BY cycle_id`,
      )
      .all(hash, hash, hash) as { cycle_id: number }[];
    return rows.map((row) => Number(row.cycle_id));
  }

  deleteCycleClaim(cycleId: number, asset: string, participant: string): void {
    this.stmt.deleteClaim.run(cycleId, address(asset), address(participant));
  }

  putV2Netting(record: V2NettingRecord): void {
    this.stmt.putNetting.run(
      bytes32(record.guaranteeId),
      record.cycleId,
      bytes32(record.txHash),
      record.logIndex,
      record.blockNumber,
    );
  }

  getV2Netting(guaranteeId: string): V2NettingRecord | null {
    const row = this.stmt.getNetting.get(bytes32(guaranteeId)) as Row | undefined;
    return row ? nettingFromRow(row) : null;
  }

  listV2Nettings(cycleId: number): V2NettingRecord[] {
    return (this.stmt.listNettings.all(cycleId) as Row[]).map(nettingFromRow);
  }

  deleteV2Netting(guaranteeId: string): void {
    this.stmt.deleteNetting.run(bytes32(guaranteeId));
  }
}

function nettingFromRow(row: Row): V2NettingRecord {
  return {
    guaranteeId: row.guarantee_id as string,
    cycleId: Number(row.cycle_id),
    txHash: row.tx_hash as string,
    logIndex: Number(row.log_index),
    blockNumber: Number(row.block_number),
  };
}

function prepare(db: Database) {
  const p = (sql: string): Statement => db.prepare(sql);
  return {
    deleteClaim: p("DELETE FROM cycle_claims WHERE cycle_id = ? AND asset = ? AND participant = ?"),
    deleteNetting: p("DELETE FROM v2_nettings WHERE guarantee_id = ?"),
    getNetting: p("SELECT * FROM v2_nettings WHERE guarantee_id = ?"),
    listNettings: p("SELECT * FROM v2_nettings WHERE cycle_id = ? ORDER BY tx_hash, log_index"),
    putNetting: p(
      `INSERT INTO v2_nettings (guarantee_id, cycle_id, tx_hash, log_index, block_number) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (guarantee_id) DO UPDATE SET cycle_id = excluded.cycle_id, tx_hash = excluded.tx_hash,
         log_index = excluded.log_index, block_number = excluded.block_number`,
    ),
    deleteCycle: p("DELETE FROM cycles WHERE cycle_id = ?"),
    deleteDebt: p("DELETE FROM cycle_debts WHERE cycle_id = ? AND asset = ? AND debtor = ?"),
    putDispute: p(putDisputeSql(QUESTION)),
    getDispute: p(getDisputeSql(QUESTION)),
    deleteDispute: p(deleteDisputeSql(QUESTION)),
    getCycle: p("SELECT * FROM cycles WHERE cycle_id = ?"),
    getDebt: p("SELECT * FROM cycle_debts WHERE cycle_id = ? AND asset = ? AND debtor = ?"),
    insertCycle: p(
      `INSERT INTO cycles (cycle_id, state, root, tree_dump, args, guarantee_ids, cutoff, planned_at, tx_hash,
         tx_nonce, raw_tx, sent_at, committed_block, committed_at, payment_deadline, default_deadline, finalized_at,
         challenge_deadline, answer_deadline, vetoed_at, planned_by_core)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    latestCycle: p("SELECT * FROM cycles ORDER BY cycle_id DESC LIMIT 1"),
    listClaims: p("SELECT * FROM cycle_claims WHERE cycle_id = ? ORDER BY asset, participant"),
    putClaim: p(
      `INSERT INTO cycle_claims (cycle_id, asset, participant, amount, tx_hash) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (cycle_id, asset, participant) DO UPDATE SET amount = excluded.amount, tx_hash = excluded.tx_hash`,
    ),
    putDebt: p(
      `INSERT INTO cycle_debts (cycle_id, asset, debtor, amount, status, covered, resolved_tx) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (cycle_id, asset, debtor) DO UPDATE SET amount = excluded.amount, status = excluded.status,
         covered = excluded.covered, resolved_tx = excluded.resolved_tx`,
    ),
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
