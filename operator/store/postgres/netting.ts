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

/** The payable pool (the partial predicate of the index `guarantees_pool`, migration 7). */
const POOL = "state = 'FINALIZED_PAYABLE' AND cycle_id IS NULL AND excluded_reason IS NULL";
/** A reserved range of the pool: keys in (($1, $2), ($3, $4)]. */
const IN_RANGE = `${POOL} AND (payable_xid, payable_seq) > ($1::xid8, $2::bigint)
  AND (payable_xid, payable_seq) <= ($3::xid8, $4::bigint)`;

/** A reserved range of payable keys, (after, upto], as the driver reads xid8 and bigint (text, number). */
interface KeyRange {
  afterXid: string;
  afterSeq: number;
  uptoXid: string;
  uptoSeq: number;
}

const rangeParams = (r: KeyRange): unknown[] => [r.afterXid, r.afterSeq, r.uptoXid, r.uptoSeq];

const byLowerCase = (a: string, b: string): number => {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
};

export class PgCycleNetting implements CycleNettingRepository {
  /**
   * @param hashPage stored leaf hashes per page (tests page through small cycles with a small one).
   * @param fork runs a read on another pooled connection (an operation of its own; never inside a store
   *   transaction): `scanCycle` then sums there while this connection streams the leaves.
   */
  constructor(
    private readonly db: PgConn,
    private readonly hashPage = HASH_PAGE,
    private readonly fork?: <T>(body: (netting: PgCycleNetting) => Promise<T>) => Promise<T>,
  ) {}

  async reservePayableGuarantees(cycleId: number, limit?: number): Promise<number> {
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) {
      throw new RangeError(`limit must be a positive integer, got ${limit}`);
    }
    await this.releaseCycleGuarantees(cycleId);
    const after = await this.lastUpto();
    // The oldest keys after every reserved range and below every transaction in flight: a guarantee that
    // becomes payable in a transaction not yet committed gets a key after this range.
    const { rows } = await this.db.query(
      `WITH taken AS (
         SELECT payable_xid, payable_seq FROM guarantees
         WHERE ${POOL} AND (payable_xid, payable_seq) > ($1::xid8, $2::bigint)
           AND (payable_xid, payable_seq) < (pg_snapshot_xmin(pg_current_snapshot()), 0)
         ORDER BY payable_xid, payable_seq ${limit === undefined ? "" : `LIMIT ${limit}`})
       SELECT (SELECT COUNT(*)::bigint FROM taken) AS n, last.payable_xid::text AS upto_xid, last.payable_seq AS upto_seq
       FROM (SELECT payable_xid, payable_seq FROM taken ORDER BY payable_xid DESC, payable_seq DESC LIMIT 1) last`,
      [after.xid, after.seq],
    );
    if (rows.length === 0) return 0;
    await this.db.query(
      `INSERT INTO cycle_reservations (cycle_id, after_xid, after_seq, upto_xid, upto_seq)
       VALUES ($1, $2::xid8, $3, $4::xid8, $5)`,
      [cycleId, after.xid, after.seq, rows[0].upto_xid, rows[0].upto_seq],
    );
    return Number(rows[0].n);
  }

  async releaseCycleGuarantees(cycleId: number): Promise<number> {
    let released = 0;
    const range = await this.reservation(cycleId);
    if (range !== null) {
      await this.db.query("DELETE FROM cycle_reservations WHERE cycle_id = $1", [cycleId]);
      const last = await this.lastUpto();
      // A range below a later one: its guarantees take fresh keys, after every reserved range.
      const later = (
        await this.db.query("SELECT ($1::xid8, $2::bigint) > ($3::xid8, $4::bigint) AS later", [
          last.xid,
          last.seq,
          range.uptoXid,
          range.uptoSeq,
        ])
      ).rows[0].later as boolean;
      released += later
        ? (
            await this.db.query(
              `UPDATE guarantees SET payable_xid = pg_current_xact_id(), payable_seq = nextval('guarantees_payable_seq')
               WHERE ${IN_RANGE}`,
              rangeParams(range),
            )
          ).rowCount
        : await this.countRange(range);
    }
    // Guarantees assigned to the cycle by cycle_id (a reservation made before key ranges, migration 7).
    released += (
      await this.db.query(
        `UPDATE guarantees SET cycle_id = NULL, payable_xid = pg_current_xact_id(),
           payable_seq = nextval('guarantees_payable_seq') WHERE cycle_id = $1`,
        [cycleId],
      )
    ).rowCount;
    return released;
  }

  async hasUnreservedPayable(): Promise<boolean> {
    const after = await this.lastUpto();
    const { rows } = await this.db.query(
      `SELECT 1 FROM guarantees WHERE ${POOL} AND (payable_xid, payable_seq) > ($1::xid8, $2::bigint) LIMIT 1`,
      [after.xid, after.seq],
    );
    return rows.length > 0;
  }

  async countCycleGuarantees(cycleId: number): Promise<number> {
    const range = await this.reservation(cycleId);
    return range === null ? 0 : this.countRange(range);
  }

  /** The key range reserved for `cycleId`, if any. */
  private async reservation(cycleId: number): Promise<KeyRange | null> {
    const { rows } = await this.db.query(
      `SELECT after_xid::text AS after_xid, after_seq, upto_xid::text AS upto_xid, upto_seq
       FROM cycle_reservations WHERE cycle_id = $1`,
      [cycleId],
    );
    if (rows.length === 0) return null;
    const row = rows[0];
    return {
      afterXid: row.after_xid as string,
      afterSeq: Number(row.after_seq),
      uptoXid: row.upto_xid as string,
      uptoSeq: Number(row.upto_seq),
    };
  }

  /** The end of the last reserved range ((0, 0) before any). */
  private async lastUpto(): Promise<{ xid: string; seq: number }> {
    const { rows } = await this.db.query(
      `SELECT upto_xid::text AS xid, upto_seq AS seq FROM cycle_reservations
       ORDER BY upto_xid DESC, upto_seq DESC LIMIT 1`,
    );
    return rows.length === 0
      ? { xid: "0", seq: 0 }
      : { xid: rows[0].xid as string, seq: Number(rows[0].seq) };
  }

  private async countRange(range: KeyRange): Promise<number> {
    const { rows } = await this.db.query(
      `SELECT COUNT(*)::bigint AS n FROM guarantees WHERE ${IN_RANGE}`,
      rangeParams(range),
    );
    return Number(rows[0].n);
  }

  async aggregateCycleGuarantees(cycleId: number): Promise<CycleAggregates> {
    const range = await this.reservation(cycleId);
    return range === null ? { guaranteeCount: 0, assets: [], flows: [] } : this.aggregateRange(range);
  }

  private async aggregateRange(range: KeyRange): Promise<CycleAggregates> {
    const volumes = await this.db.query(
      `SELECT asset_address AS asset, COUNT(*)::bigint AS n, SUM(amount)::text AS gross
       FROM guarantees WHERE ${IN_RANGE} GROUP BY asset_address`,
      rangeParams(range),
    );
    // One pass: each guarantee is a credit of its recipient and a debit of its payer.
    const flows = await this.db.query(
      `SELECT asset, participant, SUM(received)::text AS received, SUM(paid)::text AS paid FROM (
         SELECT asset_address AS asset, p.participant, p.received, p.paid
         FROM guarantees g
         CROSS JOIN LATERAL (VALUES (g.recipient_address, g.amount, 0::numeric),
                                    (g.user_address, 0::numeric, g.amount)) AS p(participant, received, paid)
         WHERE ${IN_RANGE} AND g.user_address <> g.recipient_address
       ) f GROUP BY asset, participant`,
      rangeParams(range),
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
    const range = await this.reservation(cycleId);
    return range === null ? [] : this.nettedV2IdsOf(range);
  }

  private async nettedV2IdsOf(range: KeyRange): Promise<string[]> {
    const ids: string[] = [];
    await this.stream(
      `SELECT guarantee_id FROM guarantees
       WHERE ${IN_RANGE} AND version = 2 AND user_address <> recipient_address ORDER BY guarantee_id COLLATE "C"`,
      rangeParams(range),
      (row) => void ids.push(row.guarantee_id as string),
    );
    return ids;
  }

  async listCycleGuaranteeIds(cycleId: number): Promise<string[]> {
    const range = await this.reservation(cycleId);
    if (range === null) return [];
    const result = await this.db.query<{ guarantee_id: string }>(
      `SELECT guarantee_id FROM guarantees WHERE ${IN_RANGE} ORDER BY payable_xid, payable_seq`,
      rangeParams(range),
    );
    return result.rows.map((row) => row.guarantee_id);
  }

  async scanCycleLeaves(cycleId: number, visit: (row: CycleLeafRow) => void): Promise<number> {
    const range = await this.reservation(cycleId);
    return range === null ? 0 : this.scanLeaves(range, visit);
  }

  private async scanLeaves(range: KeyRange, visit: (row: CycleLeafRow) => void): Promise<number> {
    // Pages of `hashPage` stored leaf hashes, each as one bytea (in key order, over the pool index), so
    // the driver builds one value per page instead of one row object per guarantee.
    let count = 0;
    const page: KeyRange = { ...range };
    for (;;) {
      const { rows } = await this.db.query(
        `WITH page AS (
           SELECT payable_xid, payable_seq, leaf_hash FROM guarantees WHERE ${IN_RANGE} AND leaf_hash IS NOT NULL
           ORDER BY payable_xid, payable_seq LIMIT ${this.hashPage})
         SELECT (SELECT COUNT(*)::int FROM page) AS n,
           (SELECT string_agg(leaf_hash, ''::bytea ORDER BY payable_xid, payable_seq) FROM page) AS hashes,
           last.payable_xid::text AS last_xid, last.payable_seq AS last_seq
         FROM (SELECT payable_xid, payable_seq FROM page ORDER BY payable_xid DESC, payable_seq DESC LIMIT 1) last`,
        rangeParams(page),
      );
      if (rows.length === 0) break;
      const n = rows[0].n as number;
      const hashes = rows[0].hashes as Buffer;
      for (let i = 0; i < n; i++) visit({ leafHash: hashes.subarray(i * 32, i * 32 + 32) });
      count += n;
      page.afterXid = rows[0].last_xid as string;
      page.afterSeq = Number(rows[0].last_seq);
      if (n < this.hashPage) break;
    }
    // Guarantees stored before the leaf_hash column (or unhashable then): their fields.
    count += await this.stream(
      `SELECT guarantee_id, user_address, recipient_address, asset_address, amount::text AS amount, signature
       FROM guarantees WHERE ${IN_RANGE} AND leaf_hash IS NULL`,
      rangeParams(range),
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
    const range = await this.reservation(cycleId);
    if (range === null) return { guaranteeCount: 0, assets: [], flows: [], nettedV2Ids: [] };
    // The sums (server CPU) on a second connection while this one streams the V2 ids and leaf hashes. A
    // guarantee can leave the range between the two reads (a state change), never join it: the counts
    // below then differ and nothing is planned from the moving set.
    const sums = this.fork ? this.fork((other) => other.aggregateRange(range)) : null;
    sums?.catch(() => undefined); // awaited below; not unhandled if the scan fails first
    const nettedV2Ids = await this.nettedV2IdsOf(range);
    const scanned = await this.scanLeaves(range, visit);
    const aggregates = sums ? await sums : await this.aggregateRange(range);
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
