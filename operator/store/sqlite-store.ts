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
import { AsyncMutex } from "./mutex";
import { Checkpointer, type CheckpointResult, type FsyncFn, WalSync } from "./sqlite-durability";
import { migrate } from "./sqlite-migrate";
import type { AsyncStoreOps } from "./async-types";
import { SqliteAsyncOps } from "./sqlite-async-ops";
import { SqliteOps } from "./sqlite-ops";
import type { Store, StoreOps, StoreTx } from "./types";
import type { WebhookStoreOps } from "./webhook-types";
import { SqliteWebhookOps } from "./sqlite-webhook-ops";

/** How long a statement waits for another process's write lock before failing with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5_000;

/** Every {@link StoreOps} method; the type check below fails if one is missing. */
const OPERATIONS = [
  "insertNonce",
  "consumeNonce",
  "deleteExpiredNonces",
  "insertRefreshToken",
  "getRefreshToken",
  "markRefreshTokenRotated",
  "revokeRefreshTokenFamily",
  "getCollateral",
  "creditDeposit",
  "lockIfAvailable",
  "insertGuarantee",
  "getGuarantee",
  "listGuaranteesByRecipient",
  "issueGuarantees",
  "setPendingWithdrawal",
  "listCollateral",
  "lockedTotals",
] as const satisfies readonly (keyof StoreOps)[];
/** The operations of the asynchronous side (async-types.ts), implemented by {@link SqliteAsyncOps}. */
const ASYNC_OPERATIONS = [
  "getChainCursor",
  "setChainCursor",
  "recordChainBlock",
  "listChainBlocks",
  "deleteChainBlocks",
  "getChainEvent",
  "insertChainEvent",
  "listChainEventsAbove",
  "deleteChainEvent",
  "deleteChainEventsBelow",
  "adjustCollateral",
  "putReserve",
  "getReserve",
  "deleteReserve",
  "listReserves",
  "listReleasableReserves",
  "getClearingGuarantee",
  "listGuarantees",
  "transitionGuarantee",
  "assignGuaranteesToCycle",
  "setGuaranteeExcluded",
  "setValidationRequestHash",
  "insertCycle",
  "getCycle",
  "latestCycle",
  "listCycles",
  "updateCycle",
  "deleteCycle",
  "putCycleDebt",
  "getCycleDebt",
  "listCycleDebts",
  "deleteCycleDebt",
  "putCycleClaim",
  "listCycleClaims",
  "deleteCycleClaim",
  "putWithdrawal",
  "getWithdrawal",
  "deleteWithdrawal",
  "listWithdrawals",
  "insertValidationResponse",
  "deleteValidationResponse",
  "latestValidationResponse",
  "getOperatorState",
  "setOperatorState",
] as const satisfies readonly (keyof AsyncStoreOps)[];
/** The webhook outbox's operations (webhook-types.ts), implemented by {@link SqliteWebhookOps}. */
const WEBHOOK_OPERATIONS = [
  "putWebhookSubscription",
  "getWebhookSubscription",
  "listWebhookSubscriptions",
  "deleteWebhookSubscription",
  "insertWebhookEvent",
  "retractWebhookEvent",
  "claimDueWebhookDeliveries",
  "recordWebhookAttempt",
  "listWebhookDeliveries",
  "getWebhookDelivery",
] as const satisfies readonly (keyof WebhookStoreOps)[];
type MissingOperation = Exclude<
  keyof StoreOps,
  (typeof OPERATIONS)[number] | (typeof ASYNC_OPERATIONS)[number] | (typeof WEBHOOK_OPERATIONS)[number]
>;
const allOperationsListed: [MissingOperation] extends [never] ? true : false = true;
void allOperationsListed;

type Runner = <T>(task: () => T) => Promise<T>;

/** Binds each synchronous operation to `run`, which decides when it may execute. */
function asyncView(
  ops: SqliteOps,
  asyncOps: SqliteAsyncOps,
  webhookOps: SqliteWebhookOps,
  run: Runner,
): StoreOps {
  const view: Record<string, unknown> = {};
  const bind = (target: object, names: readonly string[]) => {
    for (const name of names) {
      const method = (target as Record<string, (...args: unknown[]) => unknown>)[name];
      view[name] = (...args: unknown[]) => run(() => method.apply(target, args));
    }
  };
  bind(ops, OPERATIONS);
  bind(asyncOps, ASYNC_OPERATIONS);
  bind(webhookOps, WEBHOOK_OPERATIONS);
  return view as unknown as StoreOps;
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

// The async-side operations are delegated in the constructor (declaration merging gives their types).
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface SqliteStore extends AsyncStoreOps, WebhookStoreOps {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class SqliteStore implements Store {
  private readonly mutex = new AsyncMutex();
  /** Marks async contexts running inside one of this store's transactions. */
  private readonly inTransaction = new AsyncLocalStorage<boolean>();
  private readonly ops: SqliteOps;
  private readonly asyncOps: SqliteAsyncOps;
  private readonly webhookOps: SqliteWebhookOps;
  private readonly outer: StoreOps;
  private closed = false;
  /** `total_changes()` of the connection: a change since the last look means a commit to make durable. */
  private readonly totalChanges;
  private lastTotalChanges: number;

  private constructor(
    private readonly db: Database,
    private readonly durability: Durability | null,
  ) {
    this.totalChanges = db.prepare("SELECT total_changes()").pluck();
    this.lastTotalChanges = this.totalChanges.get() as number;
    this.webhookOps = new SqliteWebhookOps(db);
    this.ops = new SqliteOps(db, this.webhookOps);
    this.asyncOps = new SqliteAsyncOps(db);
    this.outer = asyncView(this.ops, this.asyncOps, this.webhookOps, (task) => {
      if (this.inTransaction.getStore()) {
        // Waiting for the mutex here would deadlock on our own transaction.
        return Promise.reject(new Error("inside store.transaction use the tx handle, not the store"));
      }
      return this.durable(this.mutex.run(() => this.checkedOpen(task)));
    });
    for (const name of [...ASYNC_OPERATIONS, ...WEBHOOK_OPERATIONS]) {
      (this as unknown as Record<string, unknown>)[name] = this.outer[name];
    }
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

  async transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    if (this.inTransaction.getStore()) throw new Error("store transactions do not nest: use the tx handle");
    return this.durable(
      this.mutex.run(() =>
        this.checkedOpen(async () => {
          let active = true;
          const tx = asyncView(this.ops, this.asyncOps, this.webhookOps, async (task) => {
            if (!active) throw new Error("transaction handle used after its transaction ended");
            return task();
          });
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

  insertNonce: StoreOps["insertNonce"] = (...args) => this.outer.insertNonce(...args);
  consumeNonce: StoreOps["consumeNonce"] = (...args) => this.outer.consumeNonce(...args);
  deleteExpiredNonces: StoreOps["deleteExpiredNonces"] = (...args) => this.outer.deleteExpiredNonces(...args);
  insertRefreshToken: StoreOps["insertRefreshToken"] = (...args) => this.outer.insertRefreshToken(...args);
  getRefreshToken: StoreOps["getRefreshToken"] = (...args) => this.outer.getRefreshToken(...args);
  markRefreshTokenRotated: StoreOps["markRefreshTokenRotated"] = (...args) =>
    this.outer.markRefreshTokenRotated(...args);
  revokeRefreshTokenFamily: StoreOps["revokeRefreshTokenFamily"] = (...args) =>
    this.outer.revokeRefreshTokenFamily(...args);
  getCollateral: StoreOps["getCollateral"] = (...args) => this.outer.getCollateral(...args);
  creditDeposit: StoreOps["creditDeposit"] = (...args) => this.outer.creditDeposit(...args);
  lockIfAvailable: StoreOps["lockIfAvailable"] = (...args) => this.outer.lockIfAvailable(...args);
  insertGuarantee: StoreOps["insertGuarantee"] = (...args) => this.outer.insertGuarantee(...args);
  getGuarantee: StoreOps["getGuarantee"] = (...args) => this.outer.getGuarantee(...args);
  listGuaranteesByRecipient: StoreOps["listGuaranteesByRecipient"] = (...args) =>
    this.outer.listGuaranteesByRecipient(...args);
  issueGuarantees: StoreOps["issueGuarantees"] = (...args) => this.outer.issueGuarantees(...args);
  setPendingWithdrawal: StoreOps["setPendingWithdrawal"] = (...args) =>
    this.outer.setPendingWithdrawal(...args);
  listCollateral: StoreOps["listCollateral"] = (...args) => this.outer.listCollateral(...args);
  lockedTotals: StoreOps["lockedTotals"] = (...args) => this.outer.lockedTotals(...args);
}
