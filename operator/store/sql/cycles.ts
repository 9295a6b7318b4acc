/**
 * {@link CycleRepository} for both engines: clearing cycles, their debts, disputes and claims, and the V2
 * ids committed cycles netted (migrations 2, 4, 7 and 13). Nothing here differs between the engines.
 */
import { sql as raw } from "kysely";
import type {
  CycleClaimRecord,
  CycleDebtRecord,
  CycleDisputeRecord,
  CycleRecord,
  CycleRepository,
  CycleState,
  DebtStatus,
  DisputeStatus,
  V2NettingRecord,
} from "../repositories";
import { address, bytes32 } from "../values";
import { isTrue, type SqlEngine } from "./engine";
import type {
  CycleClaimsTable,
  CycleDebtsTable,
  CycleDisputesTable,
  CyclesTable,
  V2NettingsTable,
} from "./schema";

type CycleFields = Omit<CycleRecord, "cycleId">;

/** Each field of a cycle record and its column. */
const CYCLE_COLUMNS = {
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
} as const satisfies Record<keyof CycleFields, keyof CyclesTable>;

type DisputeQuery = { cycleId?: number; asset?: string; debtor?: string; status?: DisputeStatus };

export class Cycles implements CycleRepository {
  constructor(private readonly sql: SqlEngine) {}

  async insertCycle(record: CycleRecord): Promise<void> {
    await this.sql.run(
      this.sql.db
        .insertInto("cycles")
        .values({ cycle_id: record.cycleId, ...this.columns(fieldsOf(record)) } as CyclesTable),
    );
  }

  async getCycle(cycleId: number): Promise<CycleRecord | null> {
    const row = await this.sql.first(
      this.sql.db.selectFrom("cycles").selectAll().where("cycle_id", "=", cycleId),
    );
    return row ? cycleFromRow(row) : null;
  }

  async latestCycle(): Promise<CycleRecord | null> {
    const row = await this.sql.first(
      this.sql.db.selectFrom("cycles").selectAll().orderBy("cycle_id", "desc").limit(1),
    );
    return row ? cycleFromRow(row) : null;
  }

  async listCycles(states: readonly CycleState[]): Promise<CycleRecord[]> {
    if (states.length === 0) return [];
    const rows = await this.sql.all(
      this.sql.db.selectFrom("cycles").selectAll().where("state", "in", states).orderBy("cycle_id"),
    );
    return rows.map(cycleFromRow);
  }

  async listCycleIds(
    states: readonly CycleState[],
    page: { beforeId?: number; limit: number },
  ): Promise<number[]> {
    if (states.length === 0) return [];
    const rows = await this.sql.all(
      this.sql.db
        .selectFrom("cycles")
        .select("cycle_id")
        .where("state", "in", states)
        .where("cycle_id", "<", page.beforeId ?? Number.MAX_SAFE_INTEGER)
        .orderBy("cycle_id", "desc")
        .limit(page.limit),
    );
    return rows.map((row) => Number(row.cycle_id));
  }

  async updateCycle(cycleId: number, changes: Partial<CycleFields>): Promise<void> {
    const set = this.columns(changes);
    if (Object.keys(set).length === 0) return;
    await this.sql.run(this.sql.db.updateTable("cycles").set(set).where("cycle_id", "=", cycleId));
  }

  async deleteCycle(cycleId: number): Promise<void> {
    await this.sql.run(this.sql.db.deleteFrom("cycles").where("cycle_id", "=", cycleId));
  }

  async countCycles(states: readonly CycleState[]): Promise<number> {
    if (states.length === 0) return 0;
    const row = await this.sql.first(
      this.sql.db
        .selectFrom("cycles")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("state", "in", states),
    );
    return Number(row?.n ?? 0);
  }

  async cycleIdsOfTx(txHash: string): Promise<number[]> {
    const hash = txHash.toLowerCase();
    const { db } = this.sql;
    const rows = await this.sql.all(
      db
        .selectFrom("cycles")
        .select("cycle_id")
        .where(raw`lower(tx_hash)`, "=", hash)
        .union(
          db
            .selectFrom("cycle_debts")
            .select("cycle_id")
            .where(raw`lower(resolved_tx)`, "=", hash),
        )
        .union(
          db
            .selectFrom("cycle_claims")
            .select("cycle_id")
            .where(raw`lower(tx_hash)`, "=", hash),
        )
        .orderBy("cycle_id"),
    );
    return rows.map((row) => Number(row.cycle_id));
  }

  async putCycleDebt(record: CycleDebtRecord): Promise<void> {
    const values = {
      amount: record.amount.toString(),
      status: record.status,
      covered: record.covered === null ? null : record.covered.toString(),
      resolved_tx: record.resolvedTx,
    };
    await this.sql.run(
      this.sql.db
        .insertInto("cycle_debts")
        .values({
          cycle_id: record.cycleId,
          asset: address(record.asset),
          debtor: address(record.debtor),
          ...values,
        })
        .onConflict((conflict) => conflict.columns(["cycle_id", "asset", "debtor"]).doUpdateSet(values)),
    );
  }

  async getCycleDebt(cycleId: number, asset: string, debtor: string): Promise<CycleDebtRecord | null> {
    const row = await this.sql.first(
      this.sql.db
        .selectFrom("cycle_debts")
        .selectAll()
        .where((eb) => eb.and(debtKey(cycleId, asset, debtor))),
    );
    return row ? debtFromRow(row) : null;
  }

  async listCycleDebts(query: {
    cycleId?: number;
    status?: DebtStatus;
    debtor?: string;
  }): Promise<CycleDebtRecord[]> {
    let select = this.sql.db.selectFrom("cycle_debts").selectAll();
    if (query.debtor !== undefined) select = select.where("debtor", "=", address(query.debtor));
    if (query.cycleId !== undefined) select = select.where("cycle_id", "=", query.cycleId);
    if (query.status !== undefined) select = select.where("status", "=", query.status);
    const rows = await this.sql.all(select.orderBy("cycle_id").orderBy("asset").orderBy("debtor"));
    return rows.map(debtFromRow);
  }

  async deleteCycleDebt(cycleId: number, asset: string, debtor: string): Promise<void> {
    await this.sql.run(
      this.sql.db.deleteFrom("cycle_debts").where((eb) => eb.and(debtKey(cycleId, asset, debtor))),
    );
  }

  async putCycleDispute(record: CycleDisputeRecord): Promise<void> {
    const values = {
      status: record.status,
      guarantee_id: record.guaranteeId === null ? null : bytes32(record.guaranteeId),
      amount: record.amount === null ? null : record.amount.toString(),
      opened_tx: bytes32(record.openedTx),
      resolved_tx: record.resolvedTx === null ? null : bytes32(record.resolvedTx),
    };
    await this.sql.run(
      this.sql.db
        .insertInto("cycle_disputes")
        .values({
          cycle_id: record.cycleId,
          asset: address(record.asset),
          debtor: address(record.debtor),
          position: record.position,
          ...values,
        })
        .onConflict((conflict) =>
          conflict.columns(["cycle_id", "asset", "debtor", "position"]).doUpdateSet(values),
        ),
    );
  }

  async getCycleDispute(
    cycleId: number,
    asset: string,
    debtor: string,
    position: number,
  ): Promise<CycleDisputeRecord | null> {
    const row = await this.sql.first(
      this.sql.db
        .selectFrom("cycle_disputes")
        .selectAll()
        .where((eb) => eb.and({ ...debtKey(cycleId, asset, debtor), position })),
    );
    return row ? disputeFromRow(row) : null;
  }

  async listCycleDisputes(query: DisputeQuery): Promise<CycleDisputeRecord[]> {
    const filter = disputeFilter(query);
    let select = this.sql.db.selectFrom("cycle_disputes").selectAll();
    if (Object.keys(filter).length > 0) select = select.where((eb) => eb.and(filter));
    const rows = await this.sql.all(
      select.orderBy("cycle_id").orderBy("asset").orderBy("debtor").orderBy("position"),
    );
    return rows.map(disputeFromRow);
  }

  async deleteCycleDispute(cycleId: number, asset: string, debtor: string, position: number): Promise<void> {
    await this.sql.run(
      this.sql.db
        .deleteFrom("cycle_disputes")
        .where((eb) => eb.and({ ...debtKey(cycleId, asset, debtor), position })),
    );
  }

  async putCycleClaim(record: CycleClaimRecord): Promise<void> {
    const values = { amount: record.amount.toString(), tx_hash: bytes32(record.txHash) };
    await this.sql.run(
      this.sql.db
        .insertInto("cycle_claims")
        .values({
          cycle_id: record.cycleId,
          asset: address(record.asset),
          participant: address(record.participant),
          ...values,
        })
        .onConflict((conflict) => conflict.columns(["cycle_id", "asset", "participant"]).doUpdateSet(values)),
    );
  }

  async listCycleClaims(cycleId: number): Promise<CycleClaimRecord[]> {
    const rows = await this.sql.all(
      this.sql.db
        .selectFrom("cycle_claims")
        .selectAll()
        .where("cycle_id", "=", cycleId)
        .orderBy("asset")
        .orderBy("participant"),
    );
    return rows.map(claimFromRow);
  }

  async listCycleClaimsOf(participant: string): Promise<CycleClaimRecord[]> {
    const rows = await this.sql.all(
      this.sql.db
        .selectFrom("cycle_claims")
        .selectAll()
        .where("participant", "=", address(participant))
        .orderBy("cycle_id")
        .orderBy("asset"),
    );
    return rows.map(claimFromRow);
  }

  async deleteCycleClaim(cycleId: number, asset: string, participant: string): Promise<void> {
    await this.sql.run(
      this.sql.db
        .deleteFrom("cycle_claims")
        .where("cycle_id", "=", cycleId)
        .where("asset", "=", address(asset))
        .where("participant", "=", address(participant)),
    );
  }

  async putV2Netting(record: V2NettingRecord): Promise<void> {
    const values = {
      cycle_id: record.cycleId,
      tx_hash: bytes32(record.txHash),
      log_index: record.logIndex,
      block_number: record.blockNumber,
    };
    await this.sql.run(
      this.sql.db
        .insertInto("v2_nettings")
        .values({ guarantee_id: bytes32(record.guaranteeId), ...values })
        .onConflict((conflict) => conflict.column("guarantee_id").doUpdateSet(values)),
    );
  }

  async getV2Netting(guaranteeId: string): Promise<V2NettingRecord | null> {
    const row = await this.sql.first(
      this.sql.db.selectFrom("v2_nettings").selectAll().where("guarantee_id", "=", bytes32(guaranteeId)),
    );
    return row ? nettingFromRow(row) : null;
  }

  async listV2Nettings(cycleId: number): Promise<V2NettingRecord[]> {
    const rows = await this.sql.all(
      this.sql.db
        .selectFrom("v2_nettings")
        .selectAll()
        .where("cycle_id", "=", cycleId)
        .orderBy("tx_hash")
        .orderBy("log_index"),
    );
    return rows.map(nettingFromRow);
  }

  async deleteV2Netting(guaranteeId: string): Promise<void> {
    await this.sql.run(
      this.sql.db.deleteFrom("v2_nettings").where("guarantee_id", "=", bytes32(guaranteeId)),
    );
  }

  /** The columns of the given fields of a cycle record, as stored. */
  private columns(fields: Partial<CycleFields>): Partial<CyclesTable> {
    const set: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(fields) as [keyof CycleFields, unknown][]) {
      if (value === undefined) continue;
      set[CYCLE_COLUMNS[key]] =
        key === "guaranteeIds"
          ? JSON.stringify(value)
          : key === "plannedByCore"
            ? this.sql.bool(value === true)
            : value;
    }
    return set as Partial<CyclesTable>;
  }
}

/** A cycle record's fields without its id. */
function fieldsOf(record: CycleRecord): CycleFields {
  const { cycleId, ...fields } = record;
  void cycleId;
  return fields;
}

/** One debt's key as a filter (`where((eb) => eb.and(…))`). */
const debtKey = (cycleId: number, asset: string, debtor: string) => ({
  cycle_id: cycleId,
  asset: address(asset),
  debtor: address(debtor),
});

/** The dispute filters given, as columns (`where((eb) => eb.and(…))`; empty: every row). */
function disputeFilter(query: DisputeQuery): Partial<CycleDisputesTable> {
  const filter: Partial<CycleDisputesTable> = {};
  if (query.cycleId !== undefined) filter.cycle_id = query.cycleId;
  if (query.asset !== undefined) filter.asset = address(query.asset);
  if (query.debtor !== undefined) filter.debtor = address(query.debtor);
  if (query.status !== undefined) filter.status = query.status;
  return filter;
}

function cycleFromRow(row: CyclesTable): CycleRecord {
  return {
    cycleId: Number(row.cycle_id),
    state: row.state as CycleState,
    root: row.root,
    treeDump: row.tree_dump,
    args: row.args,
    guaranteeIds: JSON.parse(row.guarantee_ids) as string[],
    cutoff: row.cutoff,
    plannedAt: row.planned_at,
    txHash: row.tx_hash ?? null,
    txNonce: row.tx_nonce ?? null,
    rawTx: row.raw_tx ?? null,
    sentAt: row.sent_at ?? null,
    committedBlock: row.committed_block ?? null,
    committedAt: row.committed_at ?? null,
    paymentDeadline: row.payment_deadline ?? null,
    defaultDeadline: row.default_deadline ?? null,
    finalizedAt: row.finalized_at ?? null,
    challengeDeadline: row.challenge_deadline ?? null,
    answerDeadline: row.answer_deadline ?? null,
    vetoedAt: row.vetoed_at ?? null,
    plannedByCore: isTrue(row.planned_by_core),
  };
}

function debtFromRow(row: CycleDebtsTable): CycleDebtRecord {
  return {
    cycleId: Number(row.cycle_id),
    asset: row.asset,
    debtor: row.debtor,
    amount: BigInt(row.amount),
    status: row.status as DebtStatus,
    covered: row.covered === null ? null : BigInt(row.covered),
    resolvedTx: row.resolved_tx ?? null,
  };
}

function disputeFromRow(row: CycleDisputesTable): CycleDisputeRecord {
  return {
    cycleId: Number(row.cycle_id),
    asset: row.asset,
    debtor: row.debtor,
    position: Number(row.position),
    status: row.status as DisputeStatus,
    guaranteeId: row.guarantee_id ?? null,
    amount: row.amount === null || row.amount === undefined ? null : BigInt(row.amount),
    openedTx: row.opened_tx,
    resolvedTx: row.resolved_tx ?? null,
  };
}

function claimFromRow(row: CycleClaimsTable): CycleClaimRecord {
  return {
    cycleId: Number(row.cycle_id),
    asset: row.asset,
    participant: row.participant,
    amount: BigInt(row.amount),
    txHash: row.tx_hash,
  };
}

function nettingFromRow(row: V2NettingsTable): V2NettingRecord {
  return {
    guaranteeId: row.guarantee_id,
    cycleId: Number(row.cycle_id),
    txHash: row.tx_hash,
    logIndex: Number(row.log_index),
    blockNumber: Number(row.block_number),
  };
}
