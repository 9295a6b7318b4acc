/**
 * How the two engines read a cycle's reserved range of guarantees in one pass (sql/netting.ts), side by
 * side: what they truly do differently for a 1M-guarantee cycle.
 *
 * - **SQLite** walks the covering pool index once (`guarantees_pool`: payable key, asset, payer, recipient,
 *   amount, version, id, leaf hash; partial: only the payable pool), so planning never reads the ≈ 800-byte
 *   rows. Amounts are decimal TEXT (uint256) and SQLite's integers are 64-bit, so the pass sums them in JS,
 *   exactly (see {@link Sum}), while it hands each stored leaf hash on.
 * - **PostgreSQL** sums in SQL (amounts are NUMERIC(78, 0): one scan, grouping sets) and reads the leaf
 *   hashes and the V2 ids in pages of {@link HASH_PAGE} guarantees, each page as a few byteas, so the
 *   driver never buffers a whole cycle nor builds an object per guarantee; `scan` runs the sums on a second
 *   pooled connection meanwhile.
 */
import type { Database, Statement } from "better-sqlite3";
import { sortHashes } from "../../../sdk/compact-merkle";
import type { CycleAggregates, CycleAssetVolume, CycleFlow, CycleLeafRow, CycleScan } from "../repositories";
import type { PgConn } from "../postgres/common";
import { type KeyRange, POOL_SQL } from "./payable-keys";

type Row = Record<string, unknown>;

/** One pass over a reserved range (every method reads only the pool's keys in the range). */
export interface CycleScanner {
  /** Net flows per (asset, participant) and volumes per asset. */
  aggregate(range: KeyRange): Promise<CycleAggregates>;
  /** The V2 ids that are not self-payments, lower case, sorted. */
  nettedV2Ids(range: KeyRange): Promise<string[]>;
  /** One `visit` per guarantee (streamed, never all held); how many. */
  leaves(range: KeyRange, visit: (row: CycleLeafRow) => void): Promise<number>;
  /** The aggregates, the netted V2 ids and one `visit` per guarantee (`cycleId`: for the error message). */
  scan(cycleId: number, range: KeyRange, visit: (row: CycleLeafRow) => void): Promise<CycleScan>;
  /** Runs `body` on one snapshot of the database (SQLite: a read transaction; PostgreSQL: the operation's). */
  snapshot<T>(body: () => Promise<T>): Promise<T>;
}

const byLowerCase = (a: string, b: string): number => {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
};

// ---------------------------------------------------------------------------------------------- SQLite

/** Amounts of at most this many digits are below 2^53 and summed as doubles (exact). */
const SMALL_DIGITS = 15;
/** A double partial sum stays at or below this before another amount below 10^15 is added. */
const SMALL_CEILING = Number.MAX_SAFE_INTEGER - 1e15;

/**
 * An exact sum of decimal amounts: those below 10^15 (nearly all) are added as doubles — exact while the
 * partial sum stays below 2^53, which {@link SMALL_CEILING} guarantees by folding it into the bigint first
 * — the rest as bigints. ≈ 10× cheaper per row than a `BigInt` per amount.
 */
class Sum {
  private small = 0;
  private big = 0n;

  add(amount: string): void {
    if (amount.length <= SMALL_DIGITS) {
      if (this.small > SMALL_CEILING) {
        this.big += BigInt(this.small);
        this.small = 0;
      }
      this.small += Number(amount);
    } else {
      this.big += BigInt(amount);
    }
  }

  get value(): bigint {
    return this.big + BigInt(this.small);
  }
}

interface AssetSums {
  asset: string;
  count: number;
  gross: Sum;
  /** Per participant: [received, paid]. */
  participants: Map<string, [Sum, Sum]>;
}

/** A reserved range of the pool: its keys in (?, ?]. Every column is in `guarantees_pool`: index-only. */
const SQLITE_IN_RANGE = `${POOL_SQL} AND payable_seq > ? AND payable_seq <= ?`;

/** SQLite: one pass over the covering pool index, raw rows through a prepared statement, summed in JS. */
export class SqliteCycleScanner implements CycleScanner {
  private readonly pass: Statement;
  private readonly unhashed: Statement;
  private readonly v2Ids: Statement;

  constructor(private readonly db: Database) {
    this.pass = db.prepare(
      `SELECT asset_address, user_address, recipient_address, amount, version, guarantee_id, leaf_hash
       FROM guarantees INDEXED BY guarantees_pool WHERE ${SQLITE_IN_RANGE}`,
    );
    this.unhashed = db.prepare(
      `SELECT guarantee_id, user_address, recipient_address, asset_address, amount, signature
       FROM guarantees WHERE ${SQLITE_IN_RANGE} AND leaf_hash IS NULL`,
    );
    this.v2Ids = db.prepare(
      `SELECT guarantee_id FROM guarantees INDEXED BY guarantees_pool
       WHERE ${SQLITE_IN_RANGE} AND version = 2 AND user_address <> recipient_address ORDER BY guarantee_id`,
    );
  }

  async aggregate(range: KeyRange): Promise<CycleAggregates> {
    const { guaranteeCount, assets, flows } = this.scanRange(range, () => undefined);
    return { guaranteeCount, assets, flows };
  }

  async nettedV2Ids(range: KeyRange): Promise<string[]> {
    return this.v2Ids.pluck().all(range.after.seq, range.upto.seq) as string[];
  }

  async leaves(range: KeyRange, visit: (row: CycleLeafRow) => void): Promise<number> {
    return this.scanRange(range, visit).guaranteeCount;
  }

  async scan(_cycleId: number, range: KeyRange, visit: (row: CycleLeafRow) => void): Promise<CycleScan> {
    return this.scanRange(range, visit);
  }

  async snapshot<T>(body: () => Promise<T>): Promise<T> {
    // A deferred read transaction (not IMMEDIATE: other processes keep writing during a long pass); inside
    // a store transaction, that one.
    if (this.db.inTransaction) return body();
    this.db.exec("BEGIN");
    try {
      return await body();
    } finally {
      if (this.db.inTransaction) this.db.exec("COMMIT");
    }
  }

  private scanRange(range: KeyRange, visit: (row: CycleLeafRow) => void): CycleScan {
    const byAsset = new Map<string, AssetSums>();
    const nettedV2Ids: string[] = [];
    let guaranteeCount = 0;
    let unhashed = 0;
    for (const row of this.pass.raw().iterate(range.after.seq, range.upto.seq) as Iterable<unknown[]>) {
      const asset = row[0] as string;
      const user = row[1] as string;
      const recipient = row[2] as string;
      const amount = row[3] as string;
      let sums = byAsset.get(asset);
      if (sums === undefined) {
        sums = { asset, count: 0, gross: new Sum(), participants: new Map() };
        byAsset.set(asset, sums);
      }
      sums.count++;
      sums.gross.add(amount);
      if (user !== recipient) {
        participant(sums, recipient)[0].add(amount);
        participant(sums, user)[1].add(amount);
        if (row[4] === 2) nettedV2Ids.push(row[5] as string);
      }
      const leafHash = row[6] as Buffer | null;
      if (leafHash === null) unhashed++;
      else {
        const guaranteeId = row[5] as string;
        visit({ leafHash, guaranteeId, user, recipient, asset, amount: BigInt(amount) });
      }
      guaranteeCount++;
    }
    if (unhashed > 0) {
      for (const row of this.unhashed.raw().iterate(range.after.seq, range.upto.seq) as Iterable<unknown[]>) {
        visit({
          leafHash: null,
          guaranteeId: row[0] as string,
          user: row[1] as string,
          recipient: row[2] as string,
          asset: row[3] as string,
          amount: BigInt(row[4] as string),
          signature: row[5] as string,
        });
      }
    }
    // Lower-case hex of equal length: code-unit order is bytewise order, as `ORDER BY guarantee_id`.
    nettedV2Ids.sort();
    const assets: CycleAssetVolume[] = [];
    const flows: CycleFlow[] = [];
    for (const sums of byAsset.values()) {
      assets.push({ asset: sums.asset, guaranteeCount: sums.count, grossAmount: sums.gross.value });
      for (const [who, [received, paid]] of sums.participants) {
        flows.push({ asset: sums.asset, participant: who, received: received.value, paid: paid.value });
      }
    }
    assets.sort((a, b) => byLowerCase(a.asset, b.asset));
    return { guaranteeCount, assets, flows, nettedV2Ids };
  }
}

function participant(sums: AssetSums, who: string): [Sum, Sum] {
  let pair = sums.participants.get(who);
  if (pair === undefined) {
    pair = [new Sum(), new Sum()];
    sums.participants.set(who, pair);
  }
  return pair;
}

// ------------------------------------------------------------------------------------------ PostgreSQL

/** Rows fetched per round trip while streaming rows through a cursor (rows without a leaf hash). */
export const LEAF_BATCH = 10_000;
/** Guarantees per page of leaf hashes and V2 ids (one bytea of 32 bytes each per page). */
export const HASH_PAGE = 50_000;

/** A reserved range of the pool: keys in (($1, $2), ($3, $4)]. */
const PG_IN_RANGE = `${POOL_SQL}
  AND (payable_xid, payable_seq) > ($1::xid8, $2::bigint) AND (payable_xid, payable_seq) <= ($3::xid8, $4::bigint)`;

const rangeParams = (r: KeyRange): unknown[] => [r.after.xid, r.after.seq, r.upto.xid, r.upto.seq];

/** PostgreSQL: sums in SQL, leaf hashes and V2 ids in pages of byteas (module comment). */
export class PgCycleScanner implements CycleScanner {
  /**
   * @param hashPage stored leaf hashes per page (tests page through small cycles with a small one).
   * @param fork runs a read on another pooled connection (an operation of its own; never inside a store
   *   transaction): `scan` then sums there while this connection streams the leaves.
   */
  constructor(
    private readonly db: PgConn,
    private readonly hashPage = HASH_PAGE,
    private readonly fork?: <T>(body: (scanner: PgCycleScanner) => Promise<T>) => Promise<T>,
  ) {}

  aggregate(range: KeyRange): Promise<CycleAggregates> {
    return this.aggregateRange(range);
  }

  async nettedV2Ids(range: KeyRange): Promise<string[]> {
    return (await this.pages(range, () => undefined)).nettedV2Ids;
  }

  async leaves(range: KeyRange, visit: (row: CycleLeafRow) => void): Promise<number> {
    return (await this.pages(range, visit)).count;
  }

  async scan(cycleId: number, range: KeyRange, visit: (row: CycleLeafRow) => void): Promise<CycleScan> {
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

  snapshot<T>(body: () => Promise<T>): Promise<T> {
    return body();
  }

  private async aggregateRange(range: KeyRange): Promise<CycleAggregates> {
    // One scan, three hashed groupings: per (asset, recipient) what it received, per (asset, payer) what it
    // paid (self-payments left out of both), per asset the volume (self-payments in).
    const { rows } = await this.db.query(
      `SELECT asset_address AS asset, recipient_address AS recipient, user_address AS payer,
         COUNT(*)::bigint AS n, SUM(amount)::text AS gross,
         COALESCE(SUM(amount) FILTER (WHERE user_address <> recipient_address), 0)::text AS flow
       FROM guarantees WHERE ${PG_IN_RANGE}
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
    const page: KeyRange = { after: { ...range.after }, upto: range.upto };
    for (;;) {
      // The hashed rows' fields, in the order of their hashes (the debtors' sum trees group by them).
      const hashedField = (expr: string) =>
        `string_agg(${expr}, ''::bytea ORDER BY payable_xid, payable_seq) FILTER (WHERE leaf_hash IS NOT NULL)`;
      const { rows } = await this.db.query(
        `WITH page AS MATERIALIZED (
           SELECT payable_xid, payable_seq, leaf_hash, guarantee_id, version, user_address, recipient_address,
                  asset_address, amount
           FROM guarantees WHERE ${PG_IN_RANGE} ORDER BY payable_xid, payable_seq LIMIT ${this.hashPage})
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
      page.after = { xid: row.last_xid as string, seq: Number(row.last_seq) };
      if (n < this.hashPage) break;
    }
    if (unhashed > 0) {
      // Guarantees stored before the leaf_hash column (or unhashable then): their fields.
      await this.stream(
        `SELECT guarantee_id, user_address, recipient_address, asset_address, amount::text AS amount, signature
         FROM guarantees WHERE ${PG_IN_RANGE} AND leaf_hash IS NULL`,
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
