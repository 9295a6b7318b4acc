/** {@link CycleRepository} on PostgreSQL. */
import type {
  CycleClaimRecord,
  CycleDebtRecord,
  CycleDisputeRecord,
  DisputeStatus,
  CycleRecord,
  CycleRepository,
  CycleState,
  DebtStatus,
  V2NettingRecord,
} from "../repositories";
import { address, bytes32 } from "../sqlite/common";
import type { PgConn, Row } from "./common";
import {
  deleteDisputeSql,
  disputeFromRow,
  disputeParams,
  getDisputeSql,
  keyParams,
  listDisputesSql,
  putDisputeSql,
} from "../dispute-rows";

const DOLLAR = (n: number) => `$${n}`;

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

const columnValue = (key: keyof typeof CYCLE_COLUMNS, value: unknown): unknown =>
  key === "guaranteeIds" ? JSON.stringify(value) : value;

export class PgCycles implements CycleRepository {
  constructor(private readonly db: PgConn) {}

  async insertCycle(record: CycleRecord): Promise<void> {
    const keys = Object.keys(CYCLE_COLUMNS) as (keyof typeof CYCLE_COLUMNS)[];
    await this.db.query(
      `INSERT INTO cycles (cycle_id, ${keys.map((k) => CYCLE_COLUMNS[k]).join(", ")})
       VALUES ($1, ${keys.map((_, i) => `$${i + 2}`).join(", ")})`,
      [record.cycleId, ...keys.map((k) => columnValue(k, record[k]))],
    );
  }

  async getCycle(cycleId: number): Promise<CycleRecord | null> {
    const { rows } = await this.db.query("SELECT * FROM cycles WHERE cycle_id = $1", [cycleId]);
    return rows[0] ? cycleFromRow(rows[0]) : null;
  }

  async latestCycle(): Promise<CycleRecord | null> {
    const { rows } = await this.db.query("SELECT * FROM cycles ORDER BY cycle_id DESC LIMIT 1");
    return rows[0] ? cycleFromRow(rows[0]) : null;
  }

  async listCycles(states: readonly CycleState[]): Promise<CycleRecord[]> {
    if (states.length === 0) return [];
    const { rows } = await this.db.query(
      "SELECT * FROM cycles WHERE state = ANY($1::text[]) ORDER BY cycle_id",
      [[...states]],
    );
    return rows.map(cycleFromRow);
  }

  async listCycleIds(
    states: readonly CycleState[],
    page: { beforeId?: number; limit: number },
  ): Promise<number[]> {
    if (states.length === 0) return [];
    const { rows } = await this.db.query<{ cycle_id: string | number }>(
      "SELECT cycle_id FROM cycles WHERE state = ANY($1::text[]) AND cycle_id < $2 ORDER BY cycle_id DESC LIMIT $3",
      [[...states], page.beforeId ?? Number.MAX_SAFE_INTEGER, page.limit],
    );
    return rows.map((row) => Number(row.cycle_id));
  }

  async updateCycle(cycleId: number, changes: Partial<Omit<CycleRecord, "cycleId">>): Promise<void> {
    const entries = Object.entries(changes) as [keyof typeof CYCLE_COLUMNS, unknown][];
    if (entries.length === 0) return;
    const sets = entries.map(([key], i) => `${CYCLE_COLUMNS[key]} = $${i + 1}`).join(", ");
    await this.db.query(`UPDATE cycles SET ${sets} WHERE cycle_id = $${entries.length + 1}`, [
      ...entries.map(([key, value]) => columnValue(key, value)),
      cycleId,
    ]);
  }

  async deleteCycle(cycleId: number): Promise<void> {
    await this.db.query("DELETE FROM cycles WHERE cycle_id = $1", [cycleId]);
  }

  async putCycleDebt(record: CycleDebtRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO cycle_debts (cycle_id, asset, debtor, amount, status, covered, resolved_tx)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (cycle_id, asset, debtor) DO UPDATE SET amount = excluded.amount, status = excluded.status,
         covered = excluded.covered, resolved_tx = excluded.resolved_tx`,
      [
        record.cycleId,
        address(record.asset),
        address(record.debtor),
        record.amount.toString(),
        record.status,
        record.covered === null ? null : record.covered.toString(),
        record.resolvedTx,
      ],
    );
  }

  async getCycleDebt(cycleId: number, asset: string, debtor: string): Promise<CycleDebtRecord | null> {
    const { rows } = await this.db.query(
      "SELECT * FROM cycle_debts WHERE cycle_id = $1 AND asset = $2 AND debtor = $3",
      [cycleId, address(asset), address(debtor)],
    );
    return rows[0] ? debtFromRow(rows[0]) : null;
  }

  async listCycleDebts(query: {
    cycleId?: number;
    status?: DebtStatus;
    debtor?: string;
  }): Promise<CycleDebtRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.debtor !== undefined) {
      params.push(address(query.debtor));
      where.push(`debtor = $${params.length}`);
    }
    if (query.cycleId !== undefined) {
      params.push(query.cycleId);
      where.push(`cycle_id = $${params.length}`);
    }
    if (query.status !== undefined) {
      params.push(query.status);
      where.push(`status = $${params.length}`);
    }
    const { rows } = await this.db.query(
      "SELECT * FROM cycle_debts" +
        (where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "") +
        " ORDER BY cycle_id, asset, debtor",
      params,
    );
    return rows.map(debtFromRow);
  }

  async putCycleDispute(record: CycleDisputeRecord): Promise<void> {
    await this.db.query(putDisputeSql(DOLLAR), disputeParams(record));
  }

  async getCycleDispute(
    cycleId: number,
    asset: string,
    debtor: string,
    position: number,
  ): Promise<CycleDisputeRecord | null> {
    const { rows } = await this.db.query(getDisputeSql(DOLLAR), keyParams(cycleId, asset, debtor, position));
    return rows[0] ? disputeFromRow(rows[0]) : null;
  }

  async listCycleDisputes(query: {
    cycleId?: number;
    asset?: string;
    debtor?: string;
    status?: DisputeStatus;
  }): Promise<CycleDisputeRecord[]> {
    const { sql, params } = listDisputesSql(query, DOLLAR);
    return (await this.db.query(sql, params)).rows.map(disputeFromRow);
  }

  async deleteCycleDispute(cycleId: number, asset: string, debtor: string, position: number): Promise<void> {
    await this.db.query(deleteDisputeSql(DOLLAR), keyParams(cycleId, asset, debtor, position));
  }

  async deleteCycleDebt(cycleId: number, asset: string, debtor: string): Promise<void> {
    await this.db.query("DELETE FROM cycle_debts WHERE cycle_id = $1 AND asset = $2 AND debtor = $3", [
      cycleId,
      address(asset),
      address(debtor),
    ]);
  }

  async putCycleClaim(record: CycleClaimRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO cycle_claims (cycle_id, asset, participant, amount, tx_hash) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (cycle_id, asset, participant) DO UPDATE SET amount = excluded.amount, tx_hash = excluded.tx_hash`,
      [
        record.cycleId,
        address(record.asset),
        address(record.participant),
        record.amount.toString(),
        bytes32(record.txHash),
      ],
    );
  }

  async listCycleClaims(cycleId: number): Promise<CycleClaimRecord[]> {
    const { rows } = await this.db.query(
      "SELECT * FROM cycle_claims WHERE cycle_id = $1 ORDER BY asset, participant",
      [cycleId],
    );
    return rows.map((row) => ({
      cycleId: row.cycle_id as number,
      asset: row.asset as string,
      participant: row.participant as string,
      amount: BigInt(row.amount as string),
      txHash: row.tx_hash as string,
    }));
  }

  async listCycleClaimsOf(participant: string): Promise<CycleClaimRecord[]> {
    const { rows } = await this.db.query(
      "SELECT * FROM cycle_claims WHERE participant = $1 ORDER BY cycle_id, asset",
      [address(participant)],
    );
    return rows.map((row) => ({
      cycleId: Number(row.cycle_id),
      asset: row.asset as string,
      participant: row.participant as string,
      amount: BigInt(row.amount as string),
      txHash: row.tx_hash as string,
    }));
  }

  async countCycles(states: readonly CycleState[]): Promise<number> {
    if (states.length === 0) return 0;
    const { rows } = await this.db.query<{ n: string }>(
      "SELECT COUNT(*) AS n FROM cycles WHERE state = ANY($1::text[])",
      [[...states]],
    );
    return Number(rows[0].n);
  }

  async cycleIdsOfTx(txHash: string): Promise<number[]> {
    const { rows } = await this.db.query<{ cycle_id: string | number }>(
      `SELECT cycle_id FROM cycles WHERE lower(tx_hash) = $1
       UNION SELECT cycle_id FROM cycle_debts WHERE lower(resolved_tx) = $1
       UNION SELECT cycle_id FROM cycle_claims WHERE lower(tx_hash) = $1
       ORDER BY cycle_id`,
      [txHash.toLowerCase()],
    );
    return rows.map((row) => Number(row.cycle_id));
  }

  async deleteCycleClaim(cycleId: number, asset: string, participant: string): Promise<void> {
    await this.db.query("DELETE FROM cycle_claims WHERE cycle_id = $1 AND asset = $2 AND participant = $3", [
      cycleId,
      address(asset),
      address(participant),
    ]);
  }

  async putV2Netting(record: V2NettingRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO v2_nettings (guarantee_id, cycle_id, tx_hash, log_index, block_number) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (guarantee_id) DO UPDATE SET cycle_id = excluded.cycle_id, tx_hash = excluded.tx_hash,
         log_index = excluded.log_index, block_number = excluded.block_number`,
      [
        bytes32(record.guaranteeId),
        record.cycleId,
        bytes32(record.txHash),
        record.logIndex,
        record.blockNumber,
      ],
    );
  }

  async getV2Netting(guaranteeId: string): Promise<V2NettingRecord | null> {
    const { rows } = await this.db.query("SELECT * FROM v2_nettings WHERE guarantee_id = $1", [
      bytes32(guaranteeId),
    ]);
    return rows.length === 0 ? null : nettingFromRow(rows[0]);
  }

  async listV2Nettings(cycleId: number): Promise<V2NettingRecord[]> {
    const { rows } = await this.db.query(
      "SELECT * FROM v2_nettings WHERE cycle_id = $1 ORDER BY tx_hash, log_index",
      [cycleId],
    );
    return rows.map(nettingFromRow);
  }

  async deleteV2Netting(guaranteeId: string): Promise<void> {
    await this.db.query("DELETE FROM v2_nettings WHERE guarantee_id = $1", [bytes32(guaranteeId)]);
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

function cycleFromRow(row: Row): CycleRecord {
  const n = (column: string) => (row[column] as number | null) ?? null;
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
    txNonce: n("tx_nonce"),
    rawTx: (row.raw_tx as string | null) ?? null,
    sentAt: n("sent_at"),
    committedBlock: n("committed_block"),
    committedAt: n("committed_at"),
    paymentDeadline: n("payment_deadline"),
    defaultDeadline: n("default_deadline"),
    finalizedAt: n("finalized_at"),
    challengeDeadline: n("challenge_deadline"),
    answerDeadline: n("answer_deadline"),
    vetoedAt: n("vetoed_at"),
    plannedByCore: row.planned_by_core as boolean,
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
