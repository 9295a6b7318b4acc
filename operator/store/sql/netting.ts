/**
 * {@link CycleNettingRepository} for both engines (docs/clearing.md "Netting in the database"): a cycle is
 * a range of payable keys (cycle_reservations, migration 10), and every read is over that range of the
 * pool. What the engines do differently: the keys and ranges ({@link PayableKeys}) and the one-pass reads
 * of a 1M-guarantee cycle ({@link CycleScanner}).
 */
import { type Expression, type SqlBool, sql as raw } from "kysely";
import type { CycleAggregates, CycleLeafRow, CycleNettingRepository, CycleScan } from "../repositories";
import type { SqlEngine } from "./engine";
import type { CycleScanner } from "./netting-scan";
import { compareKeys, type KeyRange, POOL, type PayableKeys } from "./payable-keys";

export class CycleNetting implements CycleNettingRepository {
  constructor(
    private readonly sql: SqlEngine,
    private readonly keys: PayableKeys,
    private readonly scanner: CycleScanner,
  ) {}

  reservePayableGuarantees(cycleId: number, limit?: number): Promise<number> {
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) {
      return Promise.reject(new RangeError(`limit must be a positive integer, got ${limit}`));
    }
    return this.sql.atomic(async () => {
      await this.releaseCycleGuarantees(cycleId);
      const after = await this.keys.lastUpto();
      const taken = await this.keys.take(after, limit);
      if (taken === undefined) return 0;
      await this.sql.run(
        this.sql.db
          .insertInto("cycle_reservations")
          .values(this.keys.reservationRow(cycleId, { after, upto: taken.upto }) as never),
      );
      return taken.count;
    });
  }

  releaseCycleGuarantees(cycleId: number): Promise<number> {
    return this.sql.atomic(async () => {
      let released = 0;
      const range = await this.keys.reservation(cycleId);
      if (range !== undefined) {
        await this.sql.run(this.sql.db.deleteFrom("cycle_reservations").where("cycle_id", "=", cycleId));
        // A range below a later one: its guarantees take fresh keys, after every reserved range.
        released +=
          compareKeys(await this.keys.lastUpto(), range.upto) > 0
            ? await this.keys.refresh(this.inRange(range), "payable_seq", false)
            : await this.countRange(range);
      }
      // Guarantees assigned to the cycle by cycle_id (a reservation made before key ranges, migration 10).
      return released + (await this.keys.refresh(raw<SqlBool>`cycle_id = ${cycleId}`, "seq", true));
    });
  }

  async hasUnreservedPayable(): Promise<boolean> {
    const after = await this.keys.lastUpto();
    const row = await this.sql.first(
      this.sql.db
        .selectFrom(this.keys.poolTable)
        .select(raw<number>`1`.as("one"))
        .where(POOL)
        .where(this.keys.after(after))
        .limit(1),
    );
    return row !== undefined;
  }

  async countUnreservedPayable(limit: number): Promise<number> {
    const after = await this.keys.lastUpto();
    const row = await this.sql.first(
      this.sql.db
        .selectFrom(
          this.sql.db
            .selectFrom(this.keys.poolTable)
            .select(raw<number>`1`.as("one"))
            .where(POOL)
            .where(this.keys.after(after))
            .limit(Math.max(0, Math.floor(limit)))
            .as("pool"),
        )
        .select((eb) => eb.fn.countAll().as("n")),
    );
    return Number(row?.n ?? 0);
  }

  async countCycleGuarantees(cycleId: number): Promise<number> {
    const range = await this.keys.reservation(cycleId);
    return range === undefined ? 0 : this.countRange(range);
  }

  async aggregateCycleGuarantees(cycleId: number): Promise<CycleAggregates> {
    const range = await this.keys.reservation(cycleId);
    return range === undefined ? { guaranteeCount: 0, assets: [], flows: [] } : this.scanner.aggregate(range);
  }

  async listCycleNettedV2Ids(cycleId: number): Promise<string[]> {
    const range = await this.keys.reservation(cycleId);
    return range === undefined ? [] : this.scanner.nettedV2Ids(range);
  }

  async listCycleGuaranteeIds(cycleId: number): Promise<string[]> {
    const range = await this.keys.reservation(cycleId);
    if (range === undefined) return [];
    let select = this.sql.db
      .selectFrom(this.keys.poolTable)
      .select("guarantee_id")
      .where(this.inRange(range));
    for (const column of this.keys.keyColumns) select = select.orderBy(column);
    return (await this.sql.all(select)).map((row) => row.guarantee_id);
  }

  async listCycleGuaranteesAmong(cycleId: number, guaranteeIds: readonly string[]): Promise<string[]> {
    const range = await this.keys.reservation(cycleId);
    if (range === undefined || guaranteeIds.length === 0) return [];
    const rows = await this.sql.all(
      this.sql.db
        .selectFrom("guarantees")
        .select("guarantee_id")
        .where("guarantee_id", "in", [...guaranteeIds])
        .where(this.inRange(range)),
    );
    return rows.map((row) => row.guarantee_id);
  }

  async scanCycleLeaves(cycleId: number, visit: (row: CycleLeafRow) => void): Promise<number> {
    return this.scanner.snapshot(async () => {
      const range = await this.keys.reservation(cycleId);
      return range === undefined ? 0 : this.scanner.leaves(range, visit);
    });
  }

  scanCycle(cycleId: number, visit: (row: CycleLeafRow) => void): Promise<CycleScan> {
    // One snapshot: the pass and the rows without a stored leaf hash see the same cycle.
    return this.scanner.snapshot(async () => {
      const range = await this.keys.reservation(cycleId);
      if (range === undefined) return { guaranteeCount: 0, assets: [], flows: [], nettedV2Ids: [] };
      return this.scanner.scan(cycleId, range, visit);
    });
  }

  /** The pool's keys in `range`. */
  private inRange(range: KeyRange): Expression<SqlBool> {
    return raw<SqlBool>`${POOL} AND ${this.keys.inRange(range)}`;
  }

  private async countRange(range: KeyRange): Promise<number> {
    const row = await this.sql.first(
      this.sql.db
        .selectFrom(this.keys.poolTable)
        .select((eb) => eb.fn.countAll().as("n"))
        .where(this.inRange(range)),
    );
    return Number(row?.n ?? 0);
  }
}
