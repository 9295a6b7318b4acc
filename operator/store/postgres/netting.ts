/**
 * {@link CycleNettingRepository} on PostgreSQL: amounts are NUMERIC(78, 0), so the database sums them
 * exactly; the V2 ids are streamed with a server-side cursor inside the operation's transaction, a batch
 * of {@link LEAF_BATCH} rows at a time, and the stored leaf hashes are read in pages of {@link HASH_PAGE}
 * concatenated into one bytea, so the driver never buffers a whole cycle nor builds an object per leaf.
 */
import type { CycleAggregates, CycleLeafRow, CycleNettingRepository, CycleScan } from "../repositories";
import type { PgConn, Row } from "./common";

/** Rows fetched per round trip while streaming rows through a cursor. */
export const LEAF_BATCH = 10_000;
/** Stored leaf hashes per page (one bytea of 32 bytes each). */
export const HASH_PAGE = 50_000;

const PAYABLE = "state = 'FINALIZED_PAYABLE' AND cycle_id IS NULL AND excluded_reason IS NULL";

const byLowerCase = (a: string, b: string): number => {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
};

export class PgCycleNetting implements CycleNettingRepository {
  /** `hashPage`: stored leaf hashes per page (tests page through small cycles with a small one). */
  constructor(
    private readonly db: PgConn,
    private readonly hashPage = HASH_PAGE,
  ) {}

  async reservePayableGuarantees(cycleId: number, limit?: number): Promise<number> {
    if (limit === undefined) {
      return (await this.db.query(`UPDATE guarantees SET cycle_id = $1 WHERE ${PAYABLE}`, [cycleId]))
        .rowCount;
    }
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError(`limit must be a positive integer, got ${limit}`);
    }
    const result = await this.db.query(
      `UPDATE guarantees SET cycle_id = $1
       WHERE seq IN (SELECT seq FROM guarantees WHERE ${PAYABLE} ORDER BY seq LIMIT $2)`,
      [cycleId, limit],
    );
    return result.rowCount;
  }

  async releaseCycleGuarantees(cycleId: number): Promise<number> {
    return (await this.db.query("UPDATE guarantees SET cycle_id = NULL WHERE cycle_id = $1", [cycleId]))
      .rowCount;
  }

  async countCycleGuarantees(cycleId: number): Promise<number> {
    const result = await this.db.query("SELECT COUNT(*)::bigint AS n FROM guarantees WHERE cycle_id = $1", [
      cycleId,
    ]);
    return Number(result.rows[0].n);
  }

  async aggregateCycleGuarantees(cycleId: number): Promise<CycleAggregates> {
    const volumes = await this.db.query(
      `SELECT asset_address AS asset, COUNT(*)::bigint AS n, SUM(amount)::text AS gross
       FROM guarantees WHERE cycle_id = $1 GROUP BY asset_address`,
      [cycleId],
    );
    // One pass: each guarantee is a credit of its recipient and a debit of its payer.
    const flows = await this.db.query(
      `SELECT asset, participant, SUM(received)::text AS received, SUM(paid)::text AS paid FROM (
         SELECT asset_address AS asset, p.participant, p.received, p.paid
         FROM guarantees g
         CROSS JOIN LATERAL (VALUES (g.recipient_address, g.amount, 0::numeric),
                                    (g.user_address, 0::numeric, g.amount)) AS p(participant, received, paid)
         WHERE g.cycle_id = $1 AND g.user_address <> g.recipient_address
       ) f GROUP BY asset, participant`,
      [cycleId],
    );
    let guaranteeCount = 0;
    const assets = volumes.rows.map((row: Row) => {
      guaranteeCount += Number(row.n);
      return {
        asset: row.asset as string,
        guaranteeCount: Number(row.n),
        grossAmount: BigInt(row.gross as string),
      };
    });
    assets.sort((a, b) => byLowerCase(a.asset, b.asset));
    return {
      guaranteeCount,
      assets,
      flows: flows.rows.map((row: Row) => ({
        asset: row.asset as string,
        participant: row.participant as string,
        received: BigInt(row.received as string),
        paid: BigInt(row.paid as string),
      })),
    };
  }

  async listCycleNettedV2Ids(cycleId: number): Promise<string[]> {
    const ids: string[] = [];
    await this.stream(
      `SELECT guarantee_id FROM guarantees
       WHERE cycle_id = $1 AND version = 2 AND user_address <> recipient_address ORDER BY guarantee_id COLLATE "C"`,
      [cycleId],
      (row) => void ids.push(row.guarantee_id as string),
    );
    return ids;
  }

  async listCycleGuaranteeIds(cycleId: number): Promise<string[]> {
    const result = await this.db.query<{ guarantee_id: string }>(
      "SELECT guarantee_id FROM guarantees WHERE cycle_id = $1 ORDER BY seq",
      [cycleId],
    );
    return result.rows.map((row) => row.guarantee_id);
  }

  async scanCycleLeaves(cycleId: number, visit: (row: CycleLeafRow) => void): Promise<number> {
    // Pages of `hashPage` stored leaf hashes, each as one bytea (in seq order, over the partial cycle
    // index), so the driver builds one value per page instead of one row object per guarantee.
    let count = 0;
    let after = 0;
    for (;;) {
      const page = await this.db.query(
        `SELECT COUNT(*)::int AS n, MAX(seq) AS last, string_agg(leaf_hash, ''::bytea ORDER BY seq) AS hashes
         FROM (SELECT seq, leaf_hash FROM guarantees
               WHERE cycle_id = $1 AND seq > $2 AND leaf_hash IS NOT NULL ORDER BY seq LIMIT ${this.hashPage}) page`,
        [cycleId, after],
      );
      const n = page.rows[0].n as number;
      if (n === 0) break;
      const hashes = page.rows[0].hashes as Buffer;
      for (let i = 0; i < n; i++) visit({ leafHash: hashes.subarray(i * 32, i * 32 + 32) });
      count += n;
      after = Number(page.rows[0].last);
      if (n < this.hashPage) break;
    }
    // Guarantees stored before the leaf_hash column (or unhashable then): their fields.
    count += await this.stream(
      `SELECT guarantee_id, user_address, recipient_address, asset_address, amount::text AS amount, signature
       FROM guarantees WHERE cycle_id = $1 AND leaf_hash IS NULL`,
      [cycleId],
      (row) =>
        visit({
          leafHash: null,
          guaranteeId: row.guarantee_id as string,
          user: row.user_address as string,
          recipient: row.recipient_address as string,
          asset: row.asset_address as string,
          amount: BigInt(row.amount as string),
          signature: row.signature as string,
        }),
    );
    return count;
  }

  async scanCycle(cycleId: number, visit: (row: CycleLeafRow) => void): Promise<CycleScan> {
    // The operation's transaction (postgres-store.ts) holds the reserved set still for every read below.
    const aggregates = await this.aggregateCycleGuarantees(cycleId);
    const nettedV2Ids = await this.listCycleNettedV2Ids(cycleId);
    const scanned = await this.scanCycleLeaves(cycleId, visit);
    if (scanned !== aggregates.guaranteeCount) {
      throw new Error(`cycle ${cycleId}: ${scanned} leaves, ${aggregates.guaranteeCount} guarantees summed`);
    }
    return { ...aggregates, nettedV2Ids };
  }

  /**
   * Runs `sql` through a server-side cursor (the operation runs inside its own transaction, postgres-store.ts,
   * where a cursor lives until COMMIT), {@link LEAF_BATCH} rows per round trip.
   */
  private async stream(sql: string, params: unknown[], visit: (row: Row) => void): Promise<number> {
    await this.db.query(`DECLARE cycle_rows NO SCROLL CURSOR FOR ${sql}`, params);
    let count = 0;
    try {
      for (;;) {
        const batch = await this.db.query(`FETCH ${LEAF_BATCH} FROM cycle_rows`);
        for (const row of batch.rows) {
          visit(row);
          count++;
        }
        if (batch.rows.length < LEAF_BATCH) break;
      }
    } finally {
      await this.db.query("CLOSE cycle_rows");
    }
    return count;
  }
}
