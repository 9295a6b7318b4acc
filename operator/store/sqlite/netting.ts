/**
 * {@link CycleNettingRepository} on better-sqlite3. Amounts are decimal TEXT (uint256): SQLite's integers are
 * 64-bit, so sums are taken exactly in base-10^9 limbs — each limb `CAST(substr(amount, -9·(k+1), 9) AS
 * INTEGER)` is below 10^9, a limb sum over up to 9·10^9 rows fits a 64-bit integer — and recombined as bigint.
 * Only as many limbs as the cycle's longest amount needs are summed (2 for amounts below 10^18).
 */
import type { Database, Statement } from "better-sqlite3";
import type {
  CycleAggregates,
  CycleAssetVolume,
  CycleFlow,
  CycleLeafRow,
  CycleNettingRepository,
} from "../repositories";
import type { Row, SyncOf } from "./common";

const LIMB_DIGITS = 9;
const LIMB = 10n ** BigInt(LIMB_DIGITS);
/** uint256 has at most 78 decimal digits. */
const MAX_LIMBS = Math.ceil(78 / LIMB_DIGITS);

const limbColumns = (prefix: string, limbs: number): string =>
  Array.from(
    { length: limbs },
    (_, k) =>
      `SUM(CAST(substr(amount, ${-LIMB_DIGITS * (k + 1)}, ${LIMB_DIGITS}) AS INTEGER)) AS ${prefix}${k}`,
  ).join(", ");

function fromLimbs(row: Row, prefix: string, limbs: number): bigint {
  let total = 0n;
  for (let k = limbs - 1; k >= 0; k--) total = total * LIMB + BigInt((row[`${prefix}${k}`] as number) ?? 0);
  return total;
}

const byLowerCase = (a: string, b: string): number => {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
};

export class SqliteCycleNetting implements SyncOf<CycleNettingRepository> {
  private readonly stmt: ReturnType<typeof prepare>;
  /** Aggregate statements by limb count (prepared on first use). */
  private readonly aggregates = new Map<
    number,
    { assets: Statement; received: Statement; paid: Statement }
  >();

  constructor(private readonly db: Database) {
    this.stmt = prepare(db);
  }

  reservePayableGuarantees(cycleId: number, limit?: number): number {
    const result =
      limit === undefined
        ? this.stmt.reserveAll.run(cycleId)
        : this.stmt.reserveOldest.run(cycleId, checkLimit(limit));
    return result.changes;
  }

  releaseCycleGuarantees(cycleId: number): number {
    return this.stmt.release.run(cycleId).changes;
  }

  aggregateCycleGuarantees(cycleId: number): CycleAggregates {
    const digits = (this.stmt.maxDigits.get(cycleId) as { digits: number | null }).digits ?? 0;
    const limbs = Math.min(MAX_LIMBS, Math.max(1, Math.ceil(digits / LIMB_DIGITS)));
    const stmt = this.aggregateStatements(limbs);
    let guaranteeCount = 0;
    const assets: CycleAssetVolume[] = (stmt.assets.all(cycleId) as Row[]).map((row) => {
      guaranteeCount += row.n as number;
      return {
        asset: row.asset as string,
        guaranteeCount: row.n as number,
        grossAmount: fromLimbs(row, "l", limbs),
      };
    });
    assets.sort((a, b) => byLowerCase(a.asset, b.asset));
    const flows = new Map<string, CycleFlow>();
    const flowOf = (asset: string, participant: string): CycleFlow => {
      const key = `${asset}/${participant}`;
      let flow = flows.get(key);
      if (flow === undefined) {
        flow = { asset, participant, received: 0n, paid: 0n };
        flows.set(key, flow);
      }
      return flow;
    };
    for (const row of stmt.received.all(cycleId) as Row[]) {
      flowOf(row.asset as string, row.participant as string).received = fromLimbs(row, "l", limbs);
    }
    for (const row of stmt.paid.all(cycleId) as Row[]) {
      flowOf(row.asset as string, row.participant as string).paid = fromLimbs(row, "l", limbs);
    }
    return { guaranteeCount, assets, flows: [...flows.values()] };
  }

  listCycleNettedV2Ids(cycleId: number): string[] {
    return this.stmt.nettedV2Ids.pluck().all(cycleId) as string[];
  }

  listCycleGuaranteeIds(cycleId: number): string[] {
    return this.stmt.guaranteeIds.pluck().all(cycleId) as string[];
  }

  scanCycleLeaves(cycleId: number, visit: (row: CycleLeafRow) => void): number {
    let count = 0;
    for (const row of this.stmt.leaves.raw().iterate(cycleId) as Iterable<unknown[]>) {
      visit({
        guaranteeId: row[0] as string,
        user: row[1] as string,
        recipient: row[2] as string,
        asset: row[3] as string,
        amount: BigInt(row[4] as string),
        signature: row[5] as string,
      });
      count++;
    }
    return count;
  }

  private aggregateStatements(limbs: number) {
    let stmt = this.aggregates.get(limbs);
    if (stmt === undefined) {
      const sums = limbColumns("l", limbs);
      const p = (sql: string): Statement => this.db.prepare(sql);
      stmt = {
        assets: p(
          `SELECT asset_address AS asset, COUNT(*) AS n, ${sums} FROM guarantees WHERE cycle_id = ? GROUP BY asset_address`,
        ),
        received: p(
          `SELECT asset_address AS asset, recipient_address AS participant, ${sums} FROM guarantees
           WHERE cycle_id = ? AND user_address <> recipient_address GROUP BY asset_address, recipient_address`,
        ),
        paid: p(
          `SELECT asset_address AS asset, user_address AS participant, ${sums} FROM guarantees
           WHERE cycle_id = ? AND user_address <> recipient_address GROUP BY asset_address, user_address`,
        ),
      };
      this.aggregates.set(limbs, stmt);
    }
    return stmt;
  }
}

function checkLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  return limit;
}

const PAYABLE = "state = 'FINALIZED_PAYABLE' AND cycle_id IS NULL AND excluded_reason IS NULL";

function prepare(db: Database) {
  const p = (sql: string): Statement => db.prepare(sql);
  return {
    guaranteeIds: p("SELECT guarantee_id FROM guarantees WHERE cycle_id = ? ORDER BY seq"),
    leaves: p(
      `SELECT guarantee_id, user_address, recipient_address, asset_address, amount, signature
       FROM guarantees WHERE cycle_id = ?`,
    ),
    maxDigits: p("SELECT MAX(length(amount)) AS digits FROM guarantees WHERE cycle_id = ?"),
    nettedV2Ids: p(
      `SELECT guarantee_id FROM guarantees WHERE cycle_id = ? AND version = 2 AND user_address <> recipient_address
       ORDER BY guarantee_id`,
    ),
    release: p("UPDATE guarantees SET cycle_id = NULL WHERE cycle_id = ?"),
    reserveAll: p(`UPDATE guarantees SET cycle_id = ? WHERE ${PAYABLE}`),
    reserveOldest: p(
      `UPDATE guarantees SET cycle_id = ? WHERE seq IN (SELECT seq FROM guarantees WHERE ${PAYABLE} ORDER BY seq LIMIT ?)`,
    ),
  };
}
