/**
 * {@link CycleNettingRepository} on better-sqlite3. A cycle is a range of payable keys (cycle_reservations,
 * migration 10), read in one pass over the covering pool index (`guarantees_pool`: payable key, asset,
 * payer, recipient, amount, version, id, leaf hash; partial: only the payable pool), so planning never
 * reads the ≈ 800-byte rows. Amounts are decimal
 * TEXT (uint256) and SQLite's integers are 64-bit, so the pass sums them in JS, exactly (see {@link Sum}),
 * while it hands each stored leaf hash on.
 */
import type { Database, Statement } from "better-sqlite3";
import type {
  CycleAggregates,
  CycleAssetVolume,
  CycleFlow,
  CycleLeafRow,
  CycleNettingRepository,
  CycleScan,
} from "../repositories";
import type { SyncOf } from "./common";
import { NEXT_PAYABLE_KEY } from "./guarantees";

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

const byLowerCase = (a: string, b: string): number => {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
};

export class SqliteCycleNetting implements SyncOf<CycleNettingRepository> {
  private readonly stmt: ReturnType<typeof prepare>;

  constructor(private readonly db: Database) {
    this.stmt = prepare(db);
  }

  reservePayableGuarantees(cycleId: number, limit?: number): number {
    const take = limit === undefined ? -1 : checkLimit(limit);
    return this.db.transaction(() => {
      this.releaseCycleGuarantees(cycleId);
      const after = this.stmt.lastUpto.pluck().get() as number;
      const range = this.stmt.poolRange.get(after, take) as { n: number; upto: number | null };
      if (range.n === 0 || range.upto === null) return 0;
      this.stmt.insertReservation.run(cycleId, after, range.upto);
      return range.n;
    })();
  }

  releaseCycleGuarantees(cycleId: number): number {
    return this.db.transaction(() => {
      let released = 0;
      const range = this.reservation(cycleId);
      if (range !== undefined) {
        this.stmt.deleteReservation.run(cycleId);
        if ((this.stmt.lastUpto.pluck().get() as number) > range.upto) {
          // A range below a later one: its guarantees take fresh keys, after every reserved range.
          const ids = this.stmt.rangeIds.pluck().all(range.after, range.upto) as string[];
          for (const id of ids) this.stmt.freshKey.run(id);
          released += ids.length;
        } else {
          released += this.stmt.count.pluck().get(range.after, range.upto) as number;
        }
      }
      // Guarantees assigned to the cycle by cycle_id (a reservation made before key ranges, migration 10).
      const assigned = this.stmt.assignedIds.pluck().all(cycleId) as string[];
      for (const id of assigned) this.stmt.unassign.run(id);
      return released + assigned.length;
    })();
  }

  hasUnreservedPayable(): boolean {
    return this.stmt.unreserved.get() !== undefined;
  }

  countUnreservedPayable(limit: number): number {
    return this.stmt.unreservedCount.pluck().get(Math.max(0, Math.floor(limit))) as number;
  }

  countCycleGuarantees(cycleId: number): number {
    const range = this.reservation(cycleId);
    return range === undefined ? 0 : (this.stmt.count.pluck().get(range.after, range.upto) as number);
  }

  aggregateCycleGuarantees(cycleId: number): CycleAggregates {
    const { guaranteeCount, assets, flows } = this.scanCycle(cycleId, () => undefined);
    return { guaranteeCount, assets, flows };
  }

  listCycleNettedV2Ids(cycleId: number): string[] {
    const range = this.reservation(cycleId);
    return range === undefined
      ? []
      : (this.stmt.nettedV2Ids.pluck().all(range.after, range.upto) as string[]);
  }

  listCycleGuaranteeIds(cycleId: number): string[] {
    const range = this.reservation(cycleId);
    return range === undefined ? [] : (this.stmt.rangeIds.pluck().all(range.after, range.upto) as string[]);
  }

  listCycleGuaranteesAmong(cycleId: number, guaranteeIds: readonly string[]): string[] {
    const range = this.reservation(cycleId);
    if (range === undefined || guaranteeIds.length === 0) return [];
    return this.stmt.rangeAmong
      .pluck()
      .all(JSON.stringify(guaranteeIds), range.after, range.upto) as string[];
  }

  scanCycleLeaves(cycleId: number, visit: (row: CycleLeafRow) => void): number {
    return this.scanCycle(cycleId, visit).guaranteeCount;
  }

  scanCycle(cycleId: number, visit: (row: CycleLeafRow) => void): CycleScan {
    // One read transaction: the pass and the rows without a stored leaf hash see the same cycle.
    return this.db.transaction(() => {
      const range = this.reservation(cycleId);
      if (range === undefined) return { guaranteeCount: 0, assets: [], flows: [], nettedV2Ids: [] };
      return this.scanRange(range, visit);
    })();
  }

  /** The key range reserved for `cycleId` (cycle_reservations), if any. */
  private reservation(cycleId: number): KeyRange | undefined {
    const row = this.stmt.reservation.get(cycleId) as { after_seq: number; upto_seq: number } | undefined;
    return row === undefined ? undefined : { after: row.after_seq, upto: row.upto_seq };
  }

  private scanRange(range: KeyRange, visit: (row: CycleLeafRow) => void): CycleScan {
    const byAsset = new Map<string, AssetSums>();
    const nettedV2Ids: string[] = [];
    let guaranteeCount = 0;
    let unhashed = 0;
    for (const row of this.stmt.pass.raw().iterate(range.after, range.upto) as Iterable<unknown[]>) {
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
      for (const row of this.stmt.unhashed.raw().iterate(range.after, range.upto) as Iterable<unknown[]>) {
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

/** A reserved range of payable keys: (after, upto]. */
interface KeyRange {
  after: number;
  upto: number;
}

function participant(sums: AssetSums, who: string): [Sum, Sum] {
  let pair = sums.participants.get(who);
  if (pair === undefined) {
    pair = [new Sum(), new Sum()];
    sums.participants.set(who, pair);
  }
  return pair;
}

function checkLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  return limit;
}

/** The payable pool (the partial predicate of the covering index `guarantees_pool`, migration 10). */
const POOL = "state = 'FINALIZED_PAYABLE' AND cycle_id IS NULL AND excluded_reason IS NULL";
/** A reserved range of the pool: its keys in (?, ?]. Every column is in `guarantees_pool`: index-only. */
const IN_RANGE = `${POOL} AND payable_seq > ? AND payable_seq <= ?`;

function prepare(db: Database) {
  const p = (sql: string): Statement => db.prepare(sql);
  return {
    reservation: p("SELECT after_seq, upto_seq FROM cycle_reservations WHERE cycle_id = ?"),
    lastUpto: p("SELECT COALESCE(MAX(upto_seq), 0) FROM cycle_reservations"),
    insertReservation: p("INSERT INTO cycle_reservations (cycle_id, after_seq, upto_seq) VALUES (?, ?, ?)"),
    deleteReservation: p("DELETE FROM cycle_reservations WHERE cycle_id = ?"),
    // The oldest `limit` (−1: all) keys of the pool after `after`: how many, and the last.
    poolRange: p(
      `SELECT COUNT(*) AS n, MAX(payable_seq) AS upto FROM (SELECT payable_seq FROM guarantees INDEXED BY guarantees_pool
         WHERE ${POOL} AND payable_seq > ? ORDER BY payable_seq LIMIT ?)`,
    ),
    unreserved: p(
      `SELECT 1 FROM guarantees INDEXED BY guarantees_pool
       WHERE ${POOL} AND payable_seq > (SELECT COALESCE(MAX(upto_seq), 0) FROM cycle_reservations) LIMIT 1`,
    ),
    // How many keys of the pool lie after every reserved range, counted up to a bound (an index walk).
    unreservedCount: p(
      `SELECT COUNT(*) FROM (SELECT 1 FROM guarantees INDEXED BY guarantees_pool
       WHERE ${POOL} AND payable_seq > (SELECT COALESCE(MAX(upto_seq), 0) FROM cycle_reservations) LIMIT ?)`,
    ),
    count: p(`SELECT COUNT(*) FROM guarantees INDEXED BY guarantees_pool WHERE ${IN_RANGE}`),
    rangeIds: p(
      `SELECT guarantee_id FROM guarantees INDEXED BY guarantees_pool WHERE ${IN_RANGE} ORDER BY payable_seq`,
    ),
    rangeAmong: p(
      `SELECT guarantee_id FROM guarantees WHERE guarantee_id IN (SELECT value FROM json_each(?)) AND ${IN_RANGE}`,
    ),
    pass: p(
      `SELECT asset_address, user_address, recipient_address, amount, version, guarantee_id, leaf_hash
       FROM guarantees INDEXED BY guarantees_pool WHERE ${IN_RANGE}`,
    ),
    unhashed: p(
      `SELECT guarantee_id, user_address, recipient_address, asset_address, amount, signature
       FROM guarantees WHERE ${IN_RANGE} AND leaf_hash IS NULL`,
    ),
    nettedV2Ids: p(
      `SELECT guarantee_id FROM guarantees INDEXED BY guarantees_pool
       WHERE ${IN_RANGE} AND version = 2 AND user_address <> recipient_address ORDER BY guarantee_id`,
    ),
    freshKey: p(`UPDATE guarantees SET payable_seq = ${NEXT_PAYABLE_KEY} WHERE guarantee_id = ?`),
    assignedIds: p("SELECT guarantee_id FROM guarantees WHERE cycle_id = ? ORDER BY seq"),
    unassign: p(
      `UPDATE guarantees SET cycle_id = NULL, payable_seq = ${NEXT_PAYABLE_KEY} WHERE guarantee_id = ?`,
    ),
  };
}
