/**
 * The one place the two engines differ for the single store implementation (this folder): how a
 * compiled query runs on the connection the store already manages, how an operation is made atomic,
 * and the few things SQL itself spells differently. Both implementations side by side.
 *
 * The queries are written once with Kysely (a typed query builder with SQLite and PostgreSQL dialects)
 * and only compiled by it: Kysely never owns a connection. The stores keep their own transaction and
 * durability machinery (SQLite: one connection behind a mutex, commits fsynced off the event loop;
 * PostgreSQL: pooled connections, one per operation, the fencing check), and an engine runs each
 * compiled query on that connection: better-sqlite3 through prepared statements cached by SQL text,
 * pg through the operation's client. Measured against a Kysely driver wrapping the same connection in
 * docs/store.md ("Query builder").
 */
import type { Database, Statement } from "better-sqlite3";
import {
  type Compilable,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type RawBuilder,
  sql,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";
import { writerMutex } from "../mutex";
import type { PgConn } from "../postgres/common";
import type { Schema, SqlBoolean } from "./schema";

export type EngineKind = "sqlite" | "postgres";

export interface SqlEngine {
  readonly kind: EngineKind;
  /** The query builder in this engine's dialect (compiles only: run its queries with the methods below). */
  readonly db: Kysely<Schema>;
  /** Whether `SELECT … FOR UPDATE` exists (PostgreSQL); SQLite's write transaction already excludes writers. */
  readonly rowLocks: boolean;
  /** A text column compared and ordered byte by byte (PostgreSQL `COLLATE "C"`; SQLite's default BINARY). */
  bytewise(column: string): RawBuilder<string>;
  /** Every row of a query. */
  all<R>(query: Compilable<R>): Promise<R[]>;
  /** The first row of a query, or undefined. */
  first<R>(query: Compilable<R>): Promise<R | undefined>;
  /** Runs a write; resolves to the number of rows it changed. */
  run(query: Compilable<unknown>): Promise<number>;
  /**
   * Runs `body` as one unit: SQLite takes the write lock first (an IMMEDIATE transaction, or a savepoint
   * inside `store.transaction`), so a read-then-write is not raced by another process; on PostgreSQL every
   * operation already runs in a transaction (a savepoint inside `store.transaction`), locking rows it
   * reads with {@link rowLocks}.
   */
  atomic<T>(body: () => Promise<T>): Promise<T>;
  /** A boolean as the engine's column holds it (SQLite INTEGER 0/1, PostgreSQL BOOLEAN). */
  bool(value: boolean): SqlBoolean;
}

/** A column value as either engine returns a boolean. */
export const isTrue = (value: SqlBoolean): boolean => value === true || value === 1;

function compileOnly(
  adapter: () => SqliteAdapter | PostgresAdapter,
  compiler: () => SqliteQueryCompiler | PostgresQueryCompiler,
  introspector: (db: Kysely<unknown>) => SqliteIntrospector | PostgresIntrospector,
): Kysely<Schema> {
  return new Kysely<Schema>({
    dialect: {
      createAdapter: adapter,
      createDriver: () => new DummyDriver(),
      createIntrospector: introspector,
      createQueryCompiler: compiler,
    },
  });
}

const SQLITE_BUILDER = compileOnly(
  () => new SqliteAdapter(),
  () => new SqliteQueryCompiler(),
  (db) => new SqliteIntrospector(db),
);
const POSTGRES_BUILDER = compileOnly(
  () => new PostgresAdapter(),
  () => new PostgresQueryCompiler(),
  (db) => new PostgresIntrospector(db),
);

/** SQLite: better-sqlite3 on the store's one connection (the store's mutex already serialises callers). */
export function sqliteEngine(connection: Database): SqlEngine {
  // A write transaction holds the write lock across awaits: another store of this process on the same
  // file waits for it here, not in SQLite's busy wait on the event loop (mutex.ts).
  const writer = writerMutex(connection);
  const statements = new Map<string, Statement>();
  const prepared = (text: string): Statement => {
    let statement = statements.get(text);
    if (statement === undefined) {
      statement = connection.prepare(text);
      statements.set(text, statement);
    }
    return statement;
  };
  let savepoints = 0;
  let writing = false;
  const engine: SqlEngine = {
    kind: "sqlite",
    db: SQLITE_BUILDER,
    rowLocks: false,
    bytewise: (column) => sql<string>`${sql.ref(column)}`,
    async all<R>(query: Compilable<R>) {
      const { sql, parameters } = query.compile();
      return prepared(sql).all(...parameters) as R[];
    },
    async first<R>(query: Compilable<R>) {
      const { sql, parameters } = query.compile();
      return prepared(sql).get(...parameters) as R | undefined;
    },
    async run(query) {
      const { sql, parameters } = query.compile();
      return prepared(sql).run(...parameters).changes;
    },
    async atomic<T>(body: () => Promise<T>): Promise<T> {
      if (!connection.inTransaction && !writing) {
        return writer.run(async () => {
          writing = true;
          try {
            return await engine.atomic(body);
          } finally {
            writing = false;
          }
        });
      }
      const [begin, commit, rollback] = connection.inTransaction
        ? [
            `SAVEPOINT atomic${++savepoints}`,
            `RELEASE atomic${savepoints}`,
            `ROLLBACK TO atomic${savepoints}`,
          ]
        : ["BEGIN IMMEDIATE", "COMMIT", "ROLLBACK"];
      const nested = connection.inTransaction;
      // Prepared once each (by text, as every statement here): `exec` would parse them per call.
      prepared(begin).run();
      try {
        const result = await body();
        prepared(commit).run();
        return result;
      } catch (error) {
        if (connection.inTransaction) {
          prepared(rollback).run();
          if (nested) prepared(commit).run();
        }
        throw error;
      } finally {
        if (nested) savepoints--;
      }
    },
    bool: (value) => (value ? 1 : 0),
  };
  return engine;
}

/** PostgreSQL: the operation's pooled client, already inside its transaction (postgres-store.ts). */
export function postgresEngine(connection: PgConn): SqlEngine {
  return {
    kind: "postgres",
    db: POSTGRES_BUILDER,
    rowLocks: true,
    bytewise: (column) => sql<string>`${sql.ref(column)} COLLATE "C"`,
    async all<R>(query: Compilable<R>) {
      const { sql, parameters } = query.compile();
      return (await connection.query(sql, parameters)).rows as R[];
    },
    async first<R>(query: Compilable<R>) {
      const { sql, parameters } = query.compile();
      return (await connection.query(sql, parameters)).rows[0] as R | undefined;
    },
    async run(query) {
      const { sql, parameters } = query.compile();
      return (await connection.query(sql, parameters)).rowCount;
    },
    atomic: (body) => body(),
    bool: (value) => value,
  };
}
