/**
 * {@link Store} on an embedded SQLite file (better-sqlite3): WAL journal,
 * foreign keys on, a busy timeout for other processes holding the write lock,
 * and migrations applied on open. Commits are made durable off the event
 * loop (sqlite-durability.ts): an operation resolves only once every commit
 * up to its end has been fsynced.
 *
 * better-sqlite3 is synchronous and this store has one connection, so every
 * call goes through a mutex: an async transaction body owns the connection
 * from BEGIN to COMMIT, and no other caller's statement can slip into it.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3, { type Database } from "better-sqlite3";
import { AsyncMutex, writerMutex } from "./mutex";
import { Checkpointer, type CheckpointResult, type FsyncFn, WalSync } from "./sqlite-durability";
import { migrate } from "./sqlite-migrate";
import type { StoredGuarantee } from "./repositories";
import { DuplicateGuaranteeError } from "./repositories";
import type { Repositories, Store } from "./store";
import { lazyRepositories, mapRepositories, StoreOfAreas, wrapMethods } from "./area-view";
import { AuthSessions } from "./sql/auth-sessions";
import { ChainJournal } from "./sql/chain-journal";
import { Collateral } from "./sql/collateral";
import { sqliteCollateralRows } from "./sql/collateral-rows";
import { Cycles } from "./sql/cycles";
import { sqliteEngine } from "./sql/engine";
import { Guarantees } from "./sql/guarantees";
import { Issuance, type IssuanceGuarantees } from "./sql/issuance";
import { CycleNetting } from "./sql/netting";
import { SqliteCycleScanner } from "./sql/netting-scan";
import { SqliteGuaranteeRows, sqlitePayableKeys } from "./sql/payable-keys";
import { OperatorState } from "./sql/operator-state";
import { Reserves } from "./sql/reserves";
import { WebhookOutbox } from "./sql/webhooks";

/** How long a statement waits for another process's write lock before failing with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5_000;

/** The repositories on one connection, by area: each one object, of the single implementation (./sql). */
function sqliteAreas(db: Database): Repositories {
  const sql = sqliteEngine(db);
  const rows = sqliteCollateralRows(sql);
  const collateral = new Collateral(sql, rows);
  const guaranteeRows = new SqliteGuaranteeRows(db);
  const keys = sqlitePayableKeys(db, sql, guaranteeRows);
  const webhooks = new WebhookOutbox(sql);
  return {
    authSessions: new AuthSessions(sql),
    collateral,
    reserves: new Reserves(sql),
    guarantees: new Guarantees(sql, keys),
    // The issuance hot path keeps the hand-written statements of the guarantee rows (docs/store.md).
    issuance: new Issuance(sql, rows, collateral, issuanceGuarantees(guaranteeRows), webhooks),
    cycles: new Cycles(sql),
    netting: new CycleNetting(sql, keys, new SqliteCycleScanner(db)),
    chainJournal: new ChainJournal(sql),
    webhooks,
    operatorState: new OperatorState(sql),
  };
}

/** Issuance's view of the guarantee rows' hand-written statements (synchronous on this connection). */
function issuanceGuarantees(guarantees: SqliteGuaranteeRows): IssuanceGuarantees {
  return {
    getGuarantee: async (id) => guarantees.getGuarantee(id),
    async getGuarantees(ids) {
      const found = new Map<string, StoredGuarantee>();
      for (const id of ids) {
        const stored = guarantees.getGuarantee(id);
        if (stored) found.set(id.toLowerCase(), stored);
      }
      return found;
    },
    async insertGuaranteeIfNew(record) {
      try {
        guarantees.insertGuarantee(record);
        return true;
      } catch (error) {
        if (error instanceof DuplicateGuaranteeError) return false;
        throw error;
      }
    },
  };
}

type Runner = <T>(task: () => T) => Promise<T>;

/** `area` with each method run by `run`, which decides when it may execute. */
function runThrough<R extends object>(area: R, run: Runner): R {
  return wrapMethods(
    area,
    (_name, method) =>
      (...args) =>
        run(() => method.apply(area, args)),
  );
}

export interface SqliteStoreOptions {
  /** Create the file's directory if missing (default true). */
  createDirectory?: boolean;
  /**
   * The sync that makes commits durable (tests hold or fail it): used for the WAL (default
   * `fs.fdatasync`) and, once, its directory (default `fs.fsync`).
   */
  fsync?: FsyncFn;
  /** Interval of the background WAL checkpoints, ms (default {@link CHECKPOINT_INTERVAL_MS}). */
  checkpointIntervalMs?: number;
}

/** How a file store makes its commits durable; null for an in-memory store (nothing to sync). */
interface Durability {
  wal: WalSync;
  checkpointer: Checkpointer;
}

export class SqliteStore extends StoreOfAreas<SqliteStore> implements Store {
  private readonly mutex = new AsyncMutex();
  /** Marks async contexts running inside one of this store's transactions. */
  private readonly inTransaction = new AsyncLocalStorage<boolean>();
  private readonly areas: Repositories;
  private closed = false;
  /** `total_changes()` of the connection: a change since the last look means a commit to make durable. */
  private readonly totalChanges;
  private lastTotalChanges: number;

  private constructor(
    private readonly db: Database,
    private readonly durability: Durability | null,
  ) {
    const areas = sqliteAreas(db);
    super((store) => {
      const outer: Runner = (task) => store.runOuter(task);
      return mapRepositories(areas, (area) => runThrough(area, outer));
    });
    this.areas = areas;
    this.totalChanges = db.prepare("SELECT total_changes()").pluck();
    this.lastTotalChanges = this.totalChanges.get() as number;
  }

  /** One call of the outer store: in the mutex, made durable before it resolves. */
  private runOuter<T>(task: () => T): Promise<T> {
    if (this.inTransaction.getStore()) {
      // Waiting for the mutex here would deadlock on our own transaction.
      return Promise.reject(new Error("inside store.transaction use the tx handle, not the store"));
    }
    return this.durable(this.mutex.run(() => this.checkedOpen(task)));
  }

  /** Opens (creating if needed) and migrates the database at `file` (`:memory:` for a private in-memory one). */
  static open(file: string, options: SqliteStoreOptions = {}): SqliteStore {
    const inMemory = file === ":memory:";
    if (!inMemory && options.createDirectory !== false) mkdirSync(dirname(file), { recursive: true });
    const db = new BetterSqlite3(file);
    try {
      db.pragma("journal_mode = WAL");
      // NORMAL: COMMIT does not fsync on the event loop; WalSync does it off-thread before anyone is
      // answered, so a committed lock or nonce spend still survives power loss (sqlite-durability.ts).
      // An in-memory database has nothing to sync and keeps FULL.
      db.pragma(`synchronous = ${inMemory ? "FULL" : "NORMAL"}`);
      db.pragma("foreign_keys = ON");
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      migrate(db);
    } catch (error) {
      db.close();
      throw error;
    }
    const durability = inMemory
      ? null
      : {
          wal: new WalSync(`${db.name}-wal`, options.fsync, options.fsync),
          checkpointer: new Checkpointer(db.name, db, options.checkpointIntervalMs),
        };
    return new SqliteStore(db, durability);
  }

  /** Runs a WAL checkpoint now (normally the background checkpointer's job); null for an in-memory store. */
  async checkpoint(): Promise<CheckpointResult | null> {
    return (await this.durability?.checkpointer.checkpoint()) ?? null;
  }

  /**
   * Notes a commit if the connection changed anything since the last look. Called once an operation's task
   * has run; if a later operation has committed by then too, both are noted as one, which is safe: the
   * target each waits for is taken after its own commit is noted, and one fsync covers every byte written
   * before it starts.
   */
  private noteChanges(): void {
    if (this.durability === null || this.closed) return;
    const total = this.totalChanges.get() as number;
    if (total === this.lastTotalChanges) return;
    this.lastTotalChanges = total;
    this.durability.wal.noteCommit();
  }

  /**
   * `result` (an operation run under the mutex), resolved only once every commit made up to its end
   * is on disk. The wait is outside the mutex: the next operation runs while the fsync does.
   */
  private async durable<T>(result: Promise<T>): Promise<T> {
    const value = await result.finally(() => this.noteChanges());
    if (this.durability !== null) await this.durability.wal.whenDurable();
    return value;
  }

  async transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
    if (this.inTransaction.getStore()) throw new Error("store transactions do not nest: use the tx handle");
    return this.durable(
      this.mutex.run(() =>
        this.checkedOpen(async () => {
          let active = true;
          const inside: Runner = async (task) => {
            if (!active) throw new Error("transaction handle used after its transaction ended");
            return task();
          };
          const tx = lazyRepositories(this.areas, (area) => runThrough(area, inside));
          return writerMutex(this.db).run(async () => {
            this.db.exec("BEGIN IMMEDIATE");
            try {
              const result = await this.inTransaction.run(true, () => fn(tx));
              this.db.exec("COMMIT");
              return result;
            } catch (error) {
              if (this.db.inTransaction) this.db.exec("ROLLBACK");
              throw error;
            } finally {
              active = false;
            }
          });
        }),
      ),
    );
  }

  async ping(): Promise<void> {
    await this.mutex.run(() => this.checkedOpen(() => this.db.prepare("SELECT 1").get()));
  }

  async close(): Promise<void> {
    // Queued behind any running transaction, so closing never cuts one short.
    const closing = await this.mutex.run(() => {
      if (this.closed) return false;
      this.closed = true;
      return true;
    });
    if (!closing) return;
    const durability = this.durability;
    if (durability !== null) {
      // The last commits' fsync settles first; the checkpointer's connection closes before ours (the last
      // connection to close checkpoints and removes the WAL).
      await durability.wal.whenDurable().catch(() => undefined);
      await durability.checkpointer.stop();
    }
    this.db.close();
    durability?.wal.close();
  }

  private checkedOpen<T>(task: () => T): T {
    if (this.closed) throw new Error("store is closed");
    return task();
  }
}
