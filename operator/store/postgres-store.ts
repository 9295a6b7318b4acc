/**
 * {@link Store} on PostgreSQL (`pg`), for several Core replicas on one database (docs/scale-out.md).
 *
 * Every operation runs on one pooled connection from BEGIN to COMMIT (so each is atomic on its own, like
 * SQLite's), and its promise resolves only after COMMIT returned: with `synchronous_commit = on` (set per
 * connection, whatever the server default) that is after the commit's WAL record is flushed on the server.
 * `store.transaction(fn)` holds one connection for all of `fn`; each operation inside it runs in a
 * SAVEPOINT, so a failed operation leaves the transaction usable, as on SQLite.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import pg from "pg";
import { type Repositories, type Store, StoreUnavailableError } from "./store";
import { lazyRepositories, mapRepositories, StoreOfAreas, wrapMethods } from "./area-view";
import { migratePostgres } from "./postgres/migrate";
import { AsyncMutex } from "./mutex";
import { isConnectionError, type PgConn } from "./postgres/common";
import { AuthSessions } from "./sql/auth-sessions";
import { ChainJournal } from "./sql/chain-journal";
import { Collateral } from "./sql/collateral";
import { postgresCollateralRows } from "./sql/collateral-rows";
import { Cycles } from "./sql/cycles";
import { postgresEngine } from "./sql/engine";
import { Guarantees } from "./sql/guarantees";
import { Issuance } from "./sql/issuance";
import { CycleNetting } from "./sql/netting";
import { PgCycleScanner } from "./sql/netting-scan";
import { postgresPayableKeys } from "./sql/payable-keys";
import { OperatorState } from "./sql/operator-state";
import { Reserves } from "./sql/reserves";
import { WebhookOutbox } from "./sql/webhooks";
import { type LeaseFence, type LeaseState, PgLeases } from "./postgres/leases";

/** Connections per store instance (per Core process): concurrent operations beyond it queue in the pool. */
export const PG_POOL_SIZE = 10;
/**
 * Connections of the background lane: the leader's fenced work (indexer, sender, scheduler, keeper) runs on a
 * pool of its own, so it never queues behind issuance for a connection (docs/clearing.md "Deadline work
 * before issuance"). The leader lease has one more connection of its own.
 */
export const PG_BACKGROUND_POOL_SIZE = 3;

const INT8_OID = 20;

/**
 * BIGINT columns (unix seconds, block numbers, sequence numbers) come back as JS numbers: all of them are far
 * below 2^53. One beyond it is an error, never a silently rounded value. Amounts are NUMERIC and stay strings.
 */
function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`BIGINT ${text} is beyond Number.MAX_SAFE_INTEGER`);
  return value;
}

const TYPES = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID && format !== "binary"
      ? parseInt8
      : (pg.types.getTypeParser as (oid: number, format?: string) => unknown)(
          oid,
          format,
        )) as typeof pg.types.getTypeParser,
};

/** Runs `body` on another pooled connection in its own transaction (committed data only). */
type NettingFork = <T>(body: (scanner: PgCycleScanner) => Promise<T>) => Promise<T>;

/** `fork`: only for an operation of its own (never inside `transaction(fn)`, whose writes it could not see). */
function pgAreas(conn: PgConn, fork?: NettingFork): Repositories {
  const sql = postgresEngine(conn);
  const rows = postgresCollateralRows(conn);
  const collateral = new Collateral(sql, rows);
  const keys = postgresPayableKeys(conn, sql);
  const guarantees = new Guarantees(sql, keys);
  const webhooks = new WebhookOutbox(sql);
  return {
    authSessions: new AuthSessions(sql),
    collateral,
    reserves: new Reserves(sql),
    guarantees,
    issuance: new Issuance(sql, rows, collateral, guarantees, webhooks),
    cycles: new Cycles(sql),
    netting: new CycleNetting(sql, keys, new PgCycleScanner(conn, undefined, fork)),
    chainJournal: new ChainJournal(sql),
    webhooks,
    operatorState: new OperatorState(sql),
  };
}

/** Calls `area`'s method `name` (a name its class defines: the template's views take them from it). */
function call(area: object, name: string, args: unknown[]): Promise<unknown> {
  return (area as Record<string, (...a: unknown[]) => Promise<unknown>>)[name].apply(area, args);
}

/** A {@link PgConn} on one checked-out client, inside its transaction. */
function connOf(client: pg.PoolClient): PgConn {
  let savepoints = 0;
  return {
    async query(text, params) {
      const result = await client.query(text, params as unknown[] | undefined);
      return { rows: result.rows, rowCount: result.rowCount ?? 0 };
    },
    async savepoint(body) {
      const name = `sp${++savepoints}`;
      await client.query(`SAVEPOINT ${name}`);
      try {
        const result = await body();
        await client.query(`RELEASE SAVEPOINT ${name}`);
        return result;
      } catch (error) {
        await client.query(`ROLLBACK TO SAVEPOINT ${name}`);
        await client.query(`RELEASE SAVEPOINT ${name}`);
        throw error;
      }
    },
  };
}

/**
 * The areas' classes, on a connection that is never used: the outer store's views take their methods from
 * it, each call then running on areas of its own connection.
 */
const TEMPLATE = pgAreas({
  query: () => Promise.reject(new Error("the template connection is never used")),
  savepoint: () => Promise.reject(new Error("the template connection is never used")),
});

export interface PostgresStoreOptions {
  /** Pool size (default {@link PG_POOL_SIZE}). */
  poolSize?: number;
  /** Pool size of the background lane (fenced views; default {@link PG_BACKGROUND_POOL_SIZE}). */
  backgroundPoolSize?: number;
}

/** The pools besides the main one: the background lane and the lease's own connection. */
interface PgLanes {
  background: pg.Pool;
  lease: pg.Pool;
}

export class PostgresStore extends StoreOfAreas<PostgresStore> implements Store {
  private readonly inTransaction = new AsyncLocalStorage<boolean>();
  private closed = false;

  /**
   * @param fence when set, every transaction of this store (each operation, each `transaction(fn)`) first
   *   checks that the lease term is still current ({@link PostgresStore.fenced}).
   * @param ownsPool whether `close()` ends the pool (false for a fenced view of another store's pool).
   */
  private constructor(
    private readonly pool: pg.Pool,
    private readonly lanes: PgLanes,
    private readonly fence: LeaseFence | null = null,
    private readonly ownsPool = true,
  ) {
    // Each call of the outer store: its own transaction on a pooled connection, on that connection's areas.
    super((store) =>
      mapRepositories(TEMPLATE, (template, key) =>
        wrapMethods(
          template,
          (name) =>
            (...args) =>
              store.runOuter(key, name, args),
        ),
      ),
    );
  }

  private runOuter(key: keyof Repositories, name: string, args: unknown[]): Promise<unknown> {
    if (this.inTransaction.getStore()) {
      // Another connection could wait on a row lock our own transaction holds: refuse, as SQLite does.
      return Promise.reject(new Error("inside store.transaction use the tx handle, not the store"));
    }
    return this.withTransaction((conn) => call(pgAreas(conn, this.forkNetting)[key], name, args));
  }

  /** A cycle's sums on a second connection while the first streams its leaves (PgCycleScanner.scan). */
  private readonly forkNetting: NettingFork = (body) =>
    this.withTransaction((conn) => body(new PgCycleScanner(conn)));

  /** Connects to `url` (`postgres://…`) and applies missing migrations. */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const newPool = (max: number) => {
      const created = new pg.Pool({
        connectionString: url,
        max,
        types: TYPES,
        // An acknowledged commit must be durable on the server, whatever its default.
        options: "-c synchronous_commit=on",
      });
      // An idle client's error (server restart) must not crash the process; the next checkout reconnects.
      created.on("error", () => undefined);
      return created;
    };
    const pool = newPool(options.poolSize ?? PG_POOL_SIZE);
    // Connected on first use only: a replica that never leads opens no background connection.
    const lanes: PgLanes = {
      background: newPool(options.backgroundPoolSize ?? PG_BACKGROUND_POOL_SIZE),
      lease: newPool(1),
    };
    const endAll = () => Promise.all([pool.end(), lanes.background.end(), lanes.lease.end()]);
    try {
      const client = await pool.connect();
      try {
        await migratePostgres(client);
      } finally {
        client.release();
      }
    } catch (error) {
      await endAll();
      throw error;
    }
    return new PostgresStore(pool, lanes);
  }

  /**
   * The same database, every transaction fenced by `fence` (docs/scale-out.md, "Leader lease and fencing"):
   * it begins with the lease check (share-locking the lease row until COMMIT) and fails with
   * `LeaseLostError`, writing nothing, once `fence`'s term is over. Background work of a leader runs on such
   * a view, so a replica that lost its lease (paused, partitioned) cannot write, nor journal an on-chain
   * send. Runs on this store's background lane (a pool of its own: the term's work never waits behind
   * issuance for a connection); closing the view closes nothing.
   */
  fenced(fence: LeaseFence): PostgresStore {
    return new PostgresStore(this.lanes.background, this.lanes, { ...fence }, false);
  }

  /**
   * Leader leases (operator/leadership/lease.ts), each call its own transaction, never fenced, on the lease's
   * own connection: a renewal never queues behind issuance or the background work for a connection.
   */
  readonly leases = {
    acquire: (name: string, holder: string, ttlMs: number): Promise<LeaseState> =>
      this.unfenced((conn) => new PgLeases(conn).acquire(name, holder, ttlMs)),
    get: (name: string): Promise<LeaseState | null> => this.unfenced((conn) => new PgLeases(conn).get(name)),
    release: (fence: LeaseFence): Promise<boolean> =>
      this.unfenced((conn) => new PgLeases(conn).release(fence)),
  };

  private unfenced<T>(body: (conn: PgConn) => Promise<T>): Promise<T> {
    return this.withTransaction(body, false, this.lanes.lease);
  }

  /**
   * Runs `body` on one pooled connection between BEGIN and COMMIT; ROLLBACK if it throws. A failure of the
   * connection (server down, restarting, connection lost) is thrown as {@link StoreUnavailableError}.
   */
  private async withTransaction<T>(
    body: (conn: PgConn) => Promise<T>,
    fenced = true,
    pool: pg.Pool = this.pool,
  ): Promise<T> {
    if (this.closed) throw new Error("store is closed");
    try {
      return await this.onConnection(body, fenced, pool);
    } catch (error) {
      throw isConnectionError(error) ? new StoreUnavailableError(error) : error;
    }
  }

  private async onConnection<T>(
    body: (conn: PgConn) => Promise<T>,
    fenced: boolean,
    pool: pg.Pool,
  ): Promise<T> {
    const client = await pool.connect();
    let broken: Error | undefined;
    // A checked-out client has no error listener of the pool's: if the server ends the connection while no
    // statement runs on it (a restart, an administrator's terminate, a network cut between two statements
    // of a transaction body), the client emits 'error', which unhandled would end the process. The
    // connection is then discarded on release, and the body's next statement fails.
    const onError = (error: Error) => (broken ??= error);
    client.on("error", onError);
    try {
      await client.query("BEGIN");
      try {
        const conn = connOf(client);
        if (fenced && this.fence !== null) await new PgLeases(conn).check(this.fence);
        const result = await body(conn);
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch((rollbackError: Error) => (broken = rollbackError));
        throw error;
      }
    } catch (error) {
      // A connection that failed outside SQL (e.g. reset) is discarded instead of returned to the pool.
      if (!(error as { code?: string }).code) broken ??= error as Error;
      throw error;
    } finally {
      client.off("error", onError);
      client.release(broken);
    }
  }

  async transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
    if (this.inTransaction.getStore()) throw new Error("store transactions do not nest: use the tx handle");
    return this.withTransaction(async (conn) => {
      let active = true;
      const areas = pgAreas(conn);
      // One connection: operations of the body started together (Promise.all) run one after the other, so
      // their savepoints nest properly instead of interleaving on the connection.
      const serial = new AsyncMutex();
      const tx = lazyRepositories(areas, (area) =>
        wrapMethods(area, (_name, method) => async (...args) => {
          if (!active) throw new Error("transaction handle used after its transaction ended");
          return serial.run(() => conn.savepoint(() => method.apply(area, args) as Promise<unknown>));
        }),
      );
      try {
        return await this.inTransaction.run(true, () => fn(tx));
      } finally {
        active = false;
      }
    });
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error("store is closed");
    try {
      await this.pool.query("SELECT 1");
    } catch (error) {
      throw isConnectionError(error) ? new StoreUnavailableError(error) : error;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.ownsPool) return;
    // Waits for checked-out connections (running operations) to be released.
    await Promise.all([this.pool.end(), this.lanes.background.end(), this.lanes.lease.end()]);
  }
}
