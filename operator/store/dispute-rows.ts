/**
 * The `cycle_disputes` table's SQL and row mapping, shared by both engines (migration 13):
 * the same columns, statements and filters; only the placeholders differ.
 */
import type { CycleDisputeRecord, DisputeStatus } from "./repositories";
import { address, bytes32, type Row } from "./sqlite/common";

/** `(placeholder n)` → `?` (SQLite) or `$n` (PostgreSQL). */
export type Placeholder = (n: number) => string;

export function putDisputeSql(ph: Placeholder): string {
  return `INSERT INTO cycle_disputes (cycle_id, asset, debtor, position, status, guarantee_id, amount, opened_tx,
     resolved_tx) VALUES (${[1, 2, 3, 4, 5, 6, 7, 8, 9].map(ph).join(", ")})
     ON CONFLICT (cycle_id, asset, debtor, position) DO UPDATE SET status = excluded.status,
       guarantee_id = excluded.guarantee_id, amount = excluded.amount, opened_tx = excluded.opened_tx,
       resolved_tx = excluded.resolved_tx`;
}

export function disputeParams(record: CycleDisputeRecord): unknown[] {
  return [
    record.cycleId,
    address(record.asset),
    address(record.debtor),
    record.position,
    record.status,
    record.guaranteeId === null ? null : bytes32(record.guaranteeId),
    record.amount === null ? null : record.amount.toString(),
    bytes32(record.openedTx),
    record.resolvedTx === null ? null : bytes32(record.resolvedTx),
  ];
}

const KEY = (ph: Placeholder) =>
  `cycle_id = ${ph(1)} AND asset = ${ph(2)} AND debtor = ${ph(3)} AND position = ${ph(4)}`;

export const getDisputeSql = (ph: Placeholder) => `SELECT * FROM cycle_disputes WHERE ${KEY(ph)}`;
export const deleteDisputeSql = (ph: Placeholder) => `DELETE FROM cycle_disputes WHERE ${KEY(ph)}`;

export function keyParams(cycleId: number, asset: string, debtor: string, position: number): unknown[] {
  return [cycleId, address(asset), address(debtor), position];
}

/** The list query for `listCycleDisputes` and its parameters. */
export function listDisputesSql(
  query: { cycleId?: number; asset?: string; debtor?: string; status?: DisputeStatus },
  ph: Placeholder,
): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (column: string, value: unknown) => {
    params.push(value);
    where.push(`${column} = ${ph(params.length)}`);
  };
  if (query.cycleId !== undefined) add("cycle_id", query.cycleId);
  if (query.asset !== undefined) add("asset", address(query.asset));
  if (query.debtor !== undefined) add("debtor", address(query.debtor));
  if (query.status !== undefined) add("status", query.status);
  const sql =
    "SELECT * FROM cycle_disputes" +
    (where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "") +
    " ORDER BY cycle_id, asset, debtor, position";
  return { sql, params };
}

export function disputeFromRow(row: Row): CycleDisputeRecord {
  return {
    cycleId: Number(row.cycle_id),
    asset: row.asset as string,
    debtor: row.debtor as string,
    position: Number(row.position),
    status: row.status as DisputeStatus,
    guaranteeId: (row.guarantee_id as string | null) ?? null,
    amount: row.amount === null || row.amount === undefined ? null : BigInt(row.amount as string),
    openedTx: row.opened_tx as string,
    resolvedTx: (row.resolved_tx as string | null) ?? null,
  };
}
