/**
 * {@link CycleNettingRepository} on PostgreSQL: amounts are NUMERIC(78, 0), so the database sums them
 * exactly (one scan, grouping sets); the leaf hashes and the V2 ids are read in pages of {@link HASH_PAGE}
 * guarantees, each page as two byteas, so the driver never buffers a whole cycle nor builds an object per
 * guarantee. `scanCycle` runs the sums on a second pooled connection meanwhile.
 */
import type { CycleAggregates, CycleLeafRow, CycleNettingRepository, CycleScan } from "../repositories";
import { sortHashes } from "../../../sdk/compact-merkle";
import type { PgConn, Row } from "./common";
import { FRESH_PAYABLE_KEY } from "./guarantees";

/** Rows fetched per round trip while streaming rows through a cursor (rows without a leaf hash). */
export const LEAF_BATCH = 10_000;
/** Guarantees per page of leaf hashes and V2 ids (one bytea of 32 bytes each per page). */
export const HASH_PAGE = 50_000;

/** The payable pool (the partial predicate of the index `guarantees_pool`, migration 10). */
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
      // A range below a later one: its guarantees take fresh keys, after every reserved range.
      const later = (
        await this.db.query(
          `SELECT EXISTS (SELECT 1 FROM cycle_reservations
             WHERE (upto_xid, upto_seq) > ($1::xid8, $2::bigint)) AS later`,
          [range.uptoXid, range.uptoSeq],
        )
      ).rows[0].later as boolean;
      released += later
        ? (
            await this.db.query(
              `UPDATE guarantees SET ${FRESH_PAYABLE_KEY} WHERE ${IN_RANGE}`,
              rangeParams(range),
            )
          ).rowCount
        : await this.countRange(range);
    }
    // Guarantees assigned to the cycle by cycle_id (a reservation made before key ranges, migration 10).
    released += (
      await this.db.query(`UPDATE guarantees SET cycle_id = NULL, ${FRESH_PAYABLE_KEY} WHERE cycle_id = $1`, [
        cycleId,
      ])
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

  async countUnreservedPayable(limit: number): Promise<number> {
    const after = await this.lastUpto();
    const { rows } = await this.db.query(
      `SELECT COUNT(*)::int AS n FROM (SELECT 1 FROM guarantees
         WHERE ${POOL} AND (payable_xid, payable_seq) > ($1::xid8, $2::bigint) LIMIT $3) AS pool`,
      [after.xid, after.seq, Math.max(0, Math.floor(limit))],
    );
    return Number(rows[0].n);
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
    // One scan, three hashed groupings: per (asset, recipient) what it received, per (asset, payer) what it
    // paid (self-payments left out of both), per asset the volume (self-payments in).
    const { rows } = await this.db.query(
      `SELECT asset_address AS asset, recipient_address AS recipient, user_address AS payer,
         COUNT(*)::bigint AS n, SUM(amount)::text AS gross,
         COALESCE(SUM(amount) FILTER (WHERE user_address <> recipient_address), 0)::text AS flow
       FROM guarantees WHERE ${IN_RANGE}
       GROUP BY GROUPING SETS ((asset_address), (asset_address, recipient_address), (asset_address, user_address))`,
      rangeParams(range),
    );
    let guaranteeCount = 0;
    const assets: CycleAggregates["assets"] = [];
    const flows = new Map<string, CycleAggregates["flows"][number]>();
    const flowOf = (asset: string, participant: string) => {
      const key = `${asset}:${participant}`;
      let flow = flows.get(key);
      if (flow === undefined) flows.set(key, (flow = { asset, participant, received: 0n, paid: 0n }));
      return flow;
    };
    for (const row of rows as Row[]) {
      const asset = row.asset as string;
      if (row.recipient === null && row.payer === null) {
        guaranteeCount += Number(row.n);
        assets.push({ asset, guaranteeCount: Number(row.n), grossAmount: BigInt(row.gross as string) });
        continue;
      }
      const amount = BigInt(row.flow as string);
      if (amount === 0n) continue; // only self-payments in this group
      if (row.recipient !== null) flowOf(asset, row.recipient as string).received += amount;
      else flowOf(asset, row.payer as string).paid += amount;
    }
    assets.sort((a, b) => byLowerCase(a.asset, b.asset));
    return { guaranteeCount, assets, flows: [...flows.values()] };
  }

  async listCycleNettedV2Ids(cycleId: number): Promise<string[]> {
    const range = await this.reservation(cycleId);
    return range === null ? [] : (await this.pages(range, () => undefined)).nettedV2Ids;
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

  async listCycleGuaranteesAmong(cycleId: number, guaranteeIds: readonly string[]): Promise<string[]> {
    const range = await this.reservation(cycleId);
    if (range === null || guaranteeIds.length === 0) return [];
    const result = await this.db.query<{ guarantee_id: string }>(
      `SELECT guarantee_id FROM guarantees WHERE guarantee_id = ANY($5::text[]) AND ${IN_RANGE}`,
      [...rangeParams(range), guaranteeIds],
    );
    return result.rows.map((row) => row.guarantee_id);
  }

  async scanCycleLeaves(cycleId: number, visit: (row: CycleLeafRow) => void): Promise<number> {
    const range = await this.reservation(cycleId);
    return range === null ? 0 : (await this.pages(range, visit)).count;
  }

  /**
   * One pass over the range in key order, `hashPage` guarantees per round trip, each page as two byteas:
   * the stored leaf hashes and the ids of the V2 guarantees that are not self-payments (32 bytes each),
   * so the driver builds a few values per page instead of one row object per guarantee. The ids are
   * sorted here (bytewise: the order of their lower-case hex). Rows without a stored leaf hash (stored
   * before the column) are read with their fields afterwards, only when a page had one.
   */
  private async pages(
    range: KeyRange,
    visit: (row: CycleLeafRow) => void,
  ): Promise<{ count: number; nettedV2Ids: string[] }> {
    let count = 0;
    let unhashed = 0;
    const v2: Buffer[] = [];
    let v2Count = 0;
    const page: KeyRange = { ...range };
    for (;;) {
      // The hashed rows' fields, in the order of their hashes (the debtors' sum trees group by them).
      const hashedField = (expr: string) =>
        `string_agg(${expr}, ''::bytea ORDER BY payable_xid, payable_seq) FILTER (WHERE leaf_hash IS NOT NULL)`;
      const { rows } = await this.db.query(
        `WITH page AS MATERIALIZED (
           SELECT payable_xid, payable_seq, leaf_hash, guarantee_id, version, user_address, recipient_address,
                  asset_address, amount
           FROM guarantees WHERE ${IN_RANGE} ORDER BY payable_xid, payable_seq LIMIT ${this.hashPage})
         SELECT agg.n, agg.hashed, agg.hashes, agg.v2, agg.ids, agg.users, agg.recipients, agg.assets, agg.amounts,
                last.payable_xid::text AS last_xid, last.payable_seq AS last_seq
         FROM (SELECT COUNT(*)::int AS n, COUNT(leaf_hash)::int AS hashed, ${hashedField("leaf_hash")} AS hashes,
                 string_agg(decode(substr(guarantee_id, 3), 'hex'), ''::bytea)
                   FILTER (WHERE version = 2 AND user_address <> recipient_address) AS v2,
                 ${hashedField("decode(substr(guarantee_id, 3), 'hex')")} AS ids,
                 ${hashedField("decode(substr(user_address, 3), 'hex')")} AS users,
                 ${hashedField("decode(substr(recipient_address, 3), 'hex')")} AS recipients,
                 ${hashedField("decode(substr(asset_address, 3), 'hex')")} AS assets,
                 string_agg(amount::text, ',' ORDER BY payable_xid, payable_seq)
                   FILTER (WHERE leaf_hash IS NOT NULL) AS amounts
               FROM page) agg,
              (SELECT payable_xid, payable_seq FROM page ORDER BY payable_xid DESC, payable_seq DESC LIMIT 1) last`,
        rangeParams(page),
      );
      if (rows.length === 0) break;
      const row = rows[0] as Row;
      const n = row.n as number;
      const hashed = row.hashed as number;
      const hashes = row.hashes as Buffer | null;
      if (hashed > 0) {
        const [ids, users, recipients, assets] = [row.ids, row.users, row.recipients, row.assets] as Buffer[];
        const amounts = (row.amounts as string).split(",");
        const hex = (b: Buffer, size: number, i: number) =>
          "0x" + b.toString("hex", i * size, i * size + size);
        for (let i = 0; i < hashed; i++) {
          visit({
            leafHash: (hashes as Buffer).subarray(i * 32, i * 32 + 32),
            guaranteeId: hex(ids, 32, i),
            user: hex(users, 20, i),
            recipient: hex(recipients, 20, i),
            asset: hex(assets, 20, i),
            amount: BigInt(amounts[i]),
          });
        }
      }
      unhashed += n - hashed;
      if (row.v2 !== null) {
        v2.push(row.v2 as Buffer);
        v2Count += (row.v2 as Buffer).length / 32;
      }
      count += n;
      page.afterXid = row.last_xid as string;
      page.afterSeq = Number(row.last_seq);
      if (n < this.hashPage) break;
    }
    if (unhashed > 0) {
      // Guarantees stored before the leaf_hash column (or unhashable then): their fields.
      await this.stream(
        `SELECT guarantee_id, user_address, recipient_address, asset_address, amount::text AS amount, signature
         FROM guarantees WHERE ${IN_RANGE} AND leaf_hash IS NULL`,
        rangeParams(range),
        (r) =>
          visit({
            leafHash: null,
            guaranteeId: r.guarantee_id as string,
            user: r.user_address as string,
            recipient: r.recipient_address as string,
            asset: r.asset_address as string,
            amount: BigInt(r.amount as string),
            signature: r.signature as string,
          }),
      );
    }
    const ids = sortHashes(Buffer.concat(v2, v2Count * 32), v2Count, true);
    const nettedV2Ids = new Array<string>(v2Count);
    for (let i = 0; i < v2Count; i++) nettedV2Ids[i] = "0x" + ids.toString("hex", i * 32, i * 32 + 32);
    return { count, nettedV2Ids };
  }

  async scanCycle(cycleId: number, visit: (row: CycleLeafRow) => void): Promise<CycleScan> {
    const range = await this.reservation(cycleId);
    if (range === null) return { guaranteeCount: 0, assets: [], flows: [], nettedV2Ids: [] };
    // The sums (server CPU) on a second connection while this one streams the V2 ids and leaf hashes. A
    // guarantee can leave the range between the two reads (a state change), never join it: the counts
    // below then differ and nothing is planned from the moving set.
    const sums = this.fork ? this.fork((other) => other.aggregateRange(range)) : null;
    sums?.catch(() => undefined); // awaited below; not unhandled if the scan fails first
    const { count: scanned, nettedV2Ids } = await this.pages(range, visit);
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
