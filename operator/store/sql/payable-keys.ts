/**
 * Where the guarantees and netting areas differ between the engines, both implementations side by side:
 * the payable key a guarantee takes when it enters the payable pool, the ranges of keys a cycle reserves,
 * the issuance's insert (hand-written: the hot path) and the recipient's paging order (docs/clearing.md
 * "Netting in the database", docs/scale-out.md "Paging under concurrent inserts").
 *
 * - **SQLite** has one writer at a time: a key is `payable_seq`, one past every key in the pool and every
 *   reserved range, and the rows' `seq` order is their commit order.
 * - **PostgreSQL** commits transactions in any order: a key is (the writing transaction's id, a sequence
 *   number), a range ends below every transaction still in flight (`pg_snapshot_xmin`), and a recipient's
 *   guarantees are paged in (inserting transaction id, seq) order below that xmin, so a row committed late
 *   always sorts after the ranges and cursors handed out before.
 */
import type { Database, Statement } from "better-sqlite3";
import { type Expression, type RawBuilder, type SqlBool, sql as raw } from "kysely";
import { storedLeafHash } from "../../clearing/leaf-hash";
import { decodeCursor, decodeXidCursor, encodeCursor, encodeXidCursor } from "../guarantee-paging";
import { DuplicateGuaranteeError, type GuaranteeRecord, type StoredGuarantee } from "../repositories";
import { address, nonNegative, positive } from "../values";
import { type PgConn, UNIQUE_VIOLATION } from "../postgres/common";
import type { SqlEngine } from "./engine";
import { type GuaranteeRow, guaranteeFromRow } from "./guarantee-rows";

/** A payable key (`xid` is "0" on SQLite, which has none). */
export interface PayableKey {
  xid: string;
  seq: number;
}

/** A reserved range of payable keys, (after, upto]. */
export interface KeyRange {
  after: PayableKey;
  upto: PayableKey;
}

/** Key order (xid as a number, then seq). */
export function compareKeys(a: PayableKey, b: PayableKey): number {
  const xid = BigInt(a.xid) - BigInt(b.xid);
  return xid !== 0n ? (xid < 0n ? -1 : 1) : a.seq - b.seq;
}

/**
 * A guarantee of the pool needs no pin, or its pin is indexed (audit H-2; docs/clearing.md "Pinned
 * verdicts"): `verdict_payable_at` is set when the V2 lifecycle makes a guarantee payable on its verdict
 * (migration 17); such a guarantee, unless its payer finalized it too, is FINALIZED_PAYABLE but waits outside
 * the pool until the indexer applied its `VerdictPinned`. V1, payer-finalized V2 and rows made payable
 * before migration 17 need nothing.
 */
export const PIN_SETTLED_SQL = `(verdict_payable_at IS NULL OR finalization_signature IS NOT NULL OR verdict_pin = 'pinned')`;
/** The complement of {@link PIN_SETTLED_SQL} (null-safe): payable on a verdict whose pin is not indexed. */
export const PIN_AWAITED_SQL = `(verdict_payable_at IS NOT NULL AND finalization_signature IS NULL
  AND (verdict_pin IS NULL OR verdict_pin <> 'pinned'))`;

/**
 * The payable pool: the partial predicate of the index `guarantees_pool` (migration 17). Every statement
 * reading the pool uses this text, so that both engines' planners match it to the index.
 */
export const POOL_SQL = `state = 'FINALIZED_PAYABLE' AND cycle_id IS NULL AND excluded_reason IS NULL
  AND ${PIN_SETTLED_SQL}`;
export const POOL = raw.raw<SqlBool>(POOL_SQL);

/** Column assignments of a fresh payable key. */
export type FreshKey = { payable_seq: RawBuilder<number>; payable_xid?: RawBuilder<string> };

export interface PayableKeys {
  /** `guarantees` as the netting reads it (SQLite names the pool index: its planner lacks statistics). */
  readonly poolTable: "guarantees";
  /** The key's columns, for `ORDER BY`. */
  readonly keyColumns: readonly ("payable_xid" | "payable_seq")[];
  /** The assignments giving a guarantee a fresh key as it enters the pool (after every reserved range). */
  freshKey(): FreshKey;
  /**
   * Stores a guarantee with its `seq` and, when stored payable, a payable key (hand-written: the issuance
   * hot path). `ifNew`: false instead of {@link DuplicateGuaranteeError} when the id exists.
   */
  insertGuarantee(record: GuaranteeRecord, ifNew: boolean): Promise<boolean>;
  /** Up to `take` guarantees to `recipient` after `cursor`, in the engine's commit-safe order. */
  recipientRows(recipient: string, cursor: string | null, take: number): Promise<GuaranteeRow[]>;
  /** The cursor after `row` (one of {@link recipientRows}). */
  recipientCursor(row: GuaranteeRow): string;
  /** Keys in `range` (pool membership is the caller's). */
  inRange(range: KeyRange): Expression<SqlBool>;
  /** Keys after `key`. */
  after(key: PayableKey): Expression<SqlBool>;
  /** The range reserved for `cycleId`, if any. */
  reservation(cycleId: number): Promise<KeyRange | undefined>;
  /** The end of the last reserved range (0 before any). */
  lastUpto(): Promise<PayableKey>;
  /** The oldest `limit` (all) keys of the pool after `after` that a later writer cannot precede: how many, the last. */
  take(
    after: PayableKey,
    limit: number | undefined,
  ): Promise<{ count: number; upto: PayableKey } | undefined>;
  /** The columns of a `cycle_reservations` row for `range`. */
  reservationRow(cycleId: number, range: KeyRange): Record<string, number | string>;
  /**
   * Gives a fresh key to each guarantee matching `where` (in `order`), also setting `cycle_id` to null when
   * `unassign`; returns how many.
   */
  refresh(where: Expression<SqlBool>, order: "payable_seq" | "seq", unassign: boolean): Promise<number>;
}

/** The values of a guarantee's insert, $1…$16 (SQLite's positional statement rearranges them). */
function insertParams(record: GuaranteeRecord): unknown[] {
  return [
    record.guaranteeId.toLowerCase(),
    record.version,
    address(record.user),
    address(record.recipient),
    nonNegative(record.reqId, "req_id").toString(),
    positive(record.amount, "amount").toString(),
    address(record.asset),
    record.timestamp,
    record.policy === null ? null : JSON.stringify(record.policy),
    record.scheme,
    record.signature,
    record.certificateClaims,
    record.certificateSignature,
    record.state,
    record.createdAt,
    storedLeafHash(record),
  ];
}

const INSERT_COLUMNS = `guarantee_id, version, user_address, recipient_address, req_id, amount, asset_address,
  timestamp, policy, scheme, signature, certificate_claims, certificate_signature, state, created_at, updated_at,
  leaf_hash`;

/** What makes an insert "if new": the primary key decides. */
const IF_NEW = "ON CONFLICT (guarantee_id) DO NOTHING";

// ---------------------------------------------------------------------------------------------- SQLite

/**
 * SQLite's next payable key: one past every key in the pool and every reserved range. The last entry of
 * the pool index is one step (`ORDER BY … DESC LIMIT 1`; SQLite does not apply its min/max shortcut to
 * `MAX()` under a WHERE: that scanned the whole index, ≈ 10 ms at 1M).
 */
const NEXT_PAYABLE_KEY = `(SELECT MAX(COALESCE((SELECT payable_seq FROM guarantees INDEXED BY guarantees_pool
    WHERE ${POOL_SQL}
    ORDER BY payable_seq DESC LIMIT 1), 0),
  COALESCE((SELECT MAX(upto_seq) FROM cycle_reservations), 0)) + 1)`;

/** SQLite's issuance statements, synchronous: the issuance runs them inside one better-sqlite3 transaction. */
export class SqliteGuaranteeRows {
  private readonly insert: Statement;
  private readonly insertIfNew: Statement;
  private readonly byId: Statement;

  constructor(db: Database) {
    // Positional parameters (the hot path: named ones cost a property lookup each): see sqliteParams.
    const insert = `INTO guarantees (${INSERT_COLUMNS}, seq, payable_seq)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM guarantees),
        CASE WHEN ? = 'FINALIZED_PAYABLE' THEN ${NEXT_PAYABLE_KEY} END)`;
    this.insert = db.prepare(`INSERT ${insert}`);
    this.insertIfNew = db.prepare(`INSERT ${insert} ${IF_NEW}`);
    this.byId = db.prepare("SELECT * FROM guarantees WHERE guarantee_id = ?");
  }

  /** As {@link PayableKeys.insertGuarantee}. */
  insertGuarantee(record: GuaranteeRecord, ifNew = false): boolean {
    try {
      const params = insertParams(record);
      // created_at again as updated_at, the leaf hash, the state again (a payable key only if stored payable).
      params.push(params[15], params[13]);
      params[15] = params[14];
      return (ifNew ? this.insertIfNew : this.insert).run(...params).changes === 1;
    } catch (error) {
      if ((error as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
        throw new DuplicateGuaranteeError(record.guaranteeId.toLowerCase());
      }
      throw error;
    }
  }

  /** The stored guarantee, or null. */
  getGuarantee(guaranteeId: string): StoredGuarantee | null {
    const row = this.byId.get(guaranteeId.toLowerCase()) as GuaranteeRow | undefined;
    return row ? guaranteeFromRow(row) : null;
  }
}

export function sqlitePayableKeys(
  db: Database,
  sql: SqlEngine,
  rows = new SqliteGuaranteeRows(db),
): PayableKeys {
  const next = raw.raw<number>(NEXT_PAYABLE_KEY);
  const poolTable = raw`guarantees INDEXED BY guarantees_pool` as unknown as "guarantees";
  const fresh = db.prepare(`UPDATE guarantees SET payable_seq = ${NEXT_PAYABLE_KEY} WHERE guarantee_id = ?`);
  const unassign = db.prepare(
    `UPDATE guarantees SET cycle_id = NULL, payable_seq = ${NEXT_PAYABLE_KEY} WHERE guarantee_id = ?`,
  );
  const key = (seq: number | null | undefined): PayableKey => ({ xid: "0", seq: seq ?? 0 });
  return {
    poolTable,
    keyColumns: ["payable_seq"],
    freshKey: () => ({ payable_seq: next }),
    insertGuarantee: async (record, ifNew) => rows.insertGuarantee(record, ifNew),
    recipientRows: (recipient, cursor, take) =>
      sql.all(
        sql.db
          .selectFrom("guarantees")
          .selectAll()
          .where("recipient_address", "=", address(recipient))
          .where("seq", ">", cursor === null ? 0 : decodeCursor(cursor))
          .orderBy("seq")
          .limit(take),
      ) as Promise<GuaranteeRow[]>,
    recipientCursor: (row) => encodeCursor(row.seq),
    inRange: (range) => raw<SqlBool>`payable_seq > ${range.after.seq} AND payable_seq <= ${range.upto.seq}`,
    after: (after) => raw<SqlBool>`payable_seq > ${after.seq}`,
    async reservation(cycleId) {
      const row = await sql.first(
        sql.db
          .selectFrom("cycle_reservations")
          .select(["after_seq", "upto_seq"])
          .where("cycle_id", "=", cycleId),
      );
      return row === undefined ? undefined : { after: key(row.after_seq), upto: key(row.upto_seq) };
    },
    async lastUpto() {
      const row = await sql.first(
        sql.db.selectFrom("cycle_reservations").select((eb) => eb.fn.max("upto_seq").as("upto")),
      );
      return key(row?.upto);
    },
    async take(after, limit) {
      const row = await sql.first(
        sql.db
          .selectFrom(
            sql.db
              .selectFrom(poolTable)
              .select("payable_seq")
              .where(POOL)
              .where("payable_seq", ">", after.seq)
              .orderBy("payable_seq")
              .limit(limit ?? -1)
              .as("taken"),
          )
          .select((eb) => [eb.fn.countAll<number>().as("n"), eb.fn.max("payable_seq").as("upto")]),
      );
      return row === undefined || row.n === 0 || row.upto === null
        ? undefined
        : { count: Number(row.n), upto: key(row.upto) };
    },
    reservationRow: (cycleId, range) => ({
      cycle_id: cycleId,
      after_seq: range.after.seq,
      upto_seq: range.upto.seq,
    }),
    async refresh(where, order, unassigning) {
      // One statement per guarantee: the next key is read after the previous one is written.
      const ids = await sql.all(
        sql.db.selectFrom("guarantees").select("guarantee_id").where(where).orderBy(order),
      );
      const statement = unassigning ? unassign : fresh;
      for (const { guarantee_id } of ids) statement.run(guarantee_id);
      return ids.length;
    },
  };
}

// ------------------------------------------------------------------------------------------ PostgreSQL

const PG_INSERT = `INSERT INTO guarantees (${INSERT_COLUMNS}, payable_xid, payable_seq)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15, $16,
    CASE WHEN $14 = 'FINALIZED_PAYABLE' THEN pg_current_xact_id() END,
    CASE WHEN $14 = 'FINALIZED_PAYABLE' THEN nextval('guarantees_payable_seq') END)`;

/** The xid8 bound below which every transaction has ended. */
const XMIN = raw`pg_snapshot_xmin(pg_current_snapshot())`;

export function postgresPayableKeys(conn: PgConn, sql: SqlEngine): PayableKeys {
  const row = (xid: string, seq: number): Expression<SqlBool> => raw`(${xid}::xid8, ${seq}::bigint)`;
  const key = (xid: unknown, seq: unknown): PayableKey => ({ xid: String(xid), seq: Number(seq) });
  const freshKey = (): FreshKey => ({
    payable_xid: raw<string>`pg_current_xact_id()`,
    payable_seq: raw<number>`nextval('guarantees_payable_seq')`,
  });
  return {
    poolTable: "guarantees",
    keyColumns: ["payable_xid", "payable_seq"],
    freshKey,
    async insertGuarantee(record, ifNew) {
      try {
        const result = await conn.query(ifNew ? `${PG_INSERT} ${IF_NEW}` : PG_INSERT, insertParams(record));
        return result.rowCount === 1;
      } catch (error) {
        if ((error as { code?: string }).code === UNIQUE_VIOLATION) {
          throw new DuplicateGuaranteeError(record.guaranteeId.toLowerCase());
        }
        throw error;
      }
    },
    recipientRows(recipient, cursor, take) {
      const after = cursor === null ? { xid: "0", seq: 0 } : decodeXidCursor(cursor);
      return sql.all(
        sql.db
          .selectFrom("guarantees")
          .selectAll()
          .where("recipient_address", "=", address(recipient))
          .where(raw<SqlBool>`(ins_xid, seq) > ${row(after.xid, after.seq)}`)
          .where(raw<SqlBool>`ins_xid < ${XMIN}`)
          .orderBy("ins_xid")
          .orderBy("seq")
          .limit(take),
      ) as Promise<GuaranteeRow[]>;
    },
    recipientCursor: (r) => encodeXidCursor(String(r.ins_xid), r.seq),
    inRange: (range) =>
      raw<SqlBool>`(payable_xid, payable_seq) > ${row(range.after.xid, range.after.seq)}
        AND (payable_xid, payable_seq) <= ${row(range.upto.xid, range.upto.seq)}`,
    after: (after) => raw<SqlBool>`(payable_xid, payable_seq) > ${row(after.xid, after.seq)}`,
    async reservation(cycleId) {
      const r = await sql.first(
        sql.db
          .selectFrom("cycle_reservations")
          .select([
            raw<string>`after_xid::text`.as("after_xid"),
            "after_seq",
            raw<string>`upto_xid::text`.as("upto_xid"),
            "upto_seq",
          ])
          .where("cycle_id", "=", cycleId),
      );
      return r === undefined
        ? undefined
        : { after: key(r.after_xid, r.after_seq), upto: key(r.upto_xid, r.upto_seq) };
    },
    async lastUpto() {
      const r = await sql.first(
        sql.db
          .selectFrom("cycle_reservations")
          .select([raw<string>`upto_xid::text`.as("xid"), "upto_seq"])
          .orderBy("upto_xid", "desc")
          .orderBy("upto_seq", "desc")
          .limit(1),
      );
      return r === undefined ? { xid: "0", seq: 0 } : key(r.xid, r.upto_seq);
    },
    async take(after, limit) {
      // Below every transaction in flight: a guarantee that becomes payable in a transaction not yet
      // committed gets a key after this range.
      let taken = sql.db
        .selectFrom("guarantees")
        .select(["payable_xid", "payable_seq"])
        .where(POOL)
        .where(raw<SqlBool>`(payable_xid, payable_seq) > ${row(after.xid, after.seq)}`)
        .where(raw<SqlBool>`(payable_xid, payable_seq) < (${XMIN}, 0)`)
        .orderBy("payable_xid")
        .orderBy("payable_seq");
      if (limit !== undefined) taken = taken.limit(limit);
      // The last key from a subquery, so that only its one row is cast to text (a cast in the outer select
      // list would be computed for every row before the sort: ≈ +300 ms at 1M).
      const r = await sql.first(
        sql.db
          .with("taken", () => taken)
          .selectFrom((eb) =>
            eb
              .selectFrom("taken")
              .select(["payable_xid", "payable_seq"])
              .orderBy("payable_xid", "desc")
              .orderBy("payable_seq", "desc")
              .limit(1)
              .as("last"),
          )
          .select([
            raw<number>`(SELECT COUNT(*) FROM taken)`.as("n"),
            raw<string>`last.payable_xid::text`.as("xid"),
            "last.payable_seq",
          ]),
      );
      return r === undefined ? undefined : { count: Number(r.n), upto: key(r.xid, r.payable_seq) };
    },
    reservationRow: (cycleId, range) => ({
      cycle_id: cycleId,
      after_xid: range.after.xid,
      after_seq: range.after.seq,
      upto_xid: range.upto.xid,
      upto_seq: range.upto.seq,
    }),
    refresh: (where, _order, unassigning) =>
      sql.run(
        sql.db
          .updateTable("guarantees")
          .set({ ...(unassigning ? { cycle_id: null } : {}), ...freshKey() })
          .where(where),
      ),
  };
}
