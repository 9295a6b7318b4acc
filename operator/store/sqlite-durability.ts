/**
 * Durable commits without blocking the event loop.
 *
 * better-sqlite3 is synchronous: with `synchronous = FULL` every COMMIT
 * waits for an fsync of the WAL on the calling thread, i.e. on Core's event
 * loop. On this VM's disk that fsync is usually 0.1 ms but often 3–13 ms
 * (docs/benchmarks.md), and every request queued behind it waits too.
 *
 * So a file store runs SQLite with `synchronous = NORMAL` (in WAL mode:
 * COMMIT writes the WAL but does not fsync it; checkpoints still sync, and
 * the database cannot be corrupted) and makes each commit durable itself:
 * {@link WalSync} fsyncs the WAL file on libuv's thread pool, and the store
 * resolves an operation only once every commit made up to its end is on
 * disk. That is FULL's guarantee (an acknowledged commit survives power
 * loss; nobody in this process is answered from data that could still be
 * lost) with the wait moved off the event loop, and commits that happen
 * while an fsync is running share the next one (group commit).
 *
 * Checkpoints (copying the WAL into the database file, with its own fsyncs)
 * would also run on the committing thread (`wal_autocheckpoint`), so the
 * store turns automatic checkpoints off and a {@link Checkpointer} on a
 * worker thread, with its own connection, runs a PASSIVE checkpoint at an
 * interval (PASSIVE never blocks the writer). If that worker fails, the
 * store falls back to SQLite's automatic checkpoints.
 */
import { closeSync, fdatasync, fsync as fsFsync, openSync } from "node:fs";
import { dirname } from "node:path";
import { Worker } from "node:worker_threads";
import type { Database } from "better-sqlite3";

/** How often the checkpointer copies the WAL into the database file. */
export const CHECKPOINT_INTERVAL_MS = 1_000;
/** SQLite's own default, restored if the checkpointer worker fails. */
const DEFAULT_WAL_AUTOCHECKPOINT_PAGES = 1_000;

export type FsyncFn = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => void;

interface Waiter {
  target: number;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Group fsync of one WAL file. `noteCommit()` after every commit (the bytes
 * are already written: better-sqlite3's COMMIT is synchronous);
 * `whenDurable()` resolves once every commit noted so far is on disk.
 */
export class WalSync {
  private committed = 0;
  private durable = 0;
  private syncing = false;
  private waiters: Waiter[] = [];
  private fd: number | null = null;
  /** The directory entry of a new WAL file must be durable too: synced once, with the first fsync. */
  private directorySynced = false;

  /**
   * `syncData` makes the WAL's bytes durable: `fdatasync` by default, which (POSIX) also flushes the
   * metadata needed to read them back, such as the file's size, but not its timestamps, so a WAL reused
   * in place costs no inode journal commit (SQLite itself syncs its files with fdatasync where it can).
   * `syncDirectory` makes a new WAL's directory entry durable, once.
   */
  constructor(
    private readonly walPath: string,
    private readonly syncData: FsyncFn = fdatasync,
    private readonly syncDirectory: FsyncFn = fsFsync,
  ) {}

  noteCommit(): void {
    this.committed++;
  }

  whenDurable(): Promise<void> {
    const target = this.committed;
    if (this.durable >= target) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ target, resolve, reject });
      this.startSync();
    });
  }

  /** Closes the WAL file descriptor (after the last commit's fsync has settled). */
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private startSync(): void {
    if (this.syncing) return;
    this.syncing = true;
    // Every commit noted so far has been written; one fsync makes all of them durable.
    const target = this.committed;
    const done = (error: unknown) => {
      this.syncing = false;
      const waiters = this.waiters;
      if (error) {
        // Whether any of them reached the disk is unknown: all fail, and the next commit tries again.
        this.waiters = [];
        for (const waiter of waiters) waiter.reject(error);
        return;
      }
      this.durable = Math.max(this.durable, target);
      this.waiters = waiters.filter((waiter) => waiter.target > target);
      for (const waiter of waiters) if (waiter.target <= target) waiter.resolve();
      if (this.waiters.length > 0) this.startSync();
    };
    let directory: number | null = null;
    try {
      this.fd ??= openSync(this.walPath, "r");
      if (!this.directorySynced) directory = openSync(dirname(this.walPath), "r");
    } catch (error) {
      // A failed open fails this round like a failed fsync (and clears `syncing` for the next one).
      done(error);
      return;
    }
    const fd = this.fd;
    if (directory === null) {
      this.syncData(fd, done);
      return;
    }
    this.syncDirectory(directory, (error) => {
      closeSync(directory);
      if (error) return done(error);
      this.directorySynced = true;
      this.syncData(fd, done);
    });
  }
}

/** Result of `PRAGMA wal_checkpoint`: busy flag, frames in the WAL, frames copied to the database. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * The worker runs a few lines of plain JavaScript (no TypeScript loader in worker threads): its own
 * connection, a PASSIVE checkpoint at every interval and on request. A checkpoint fsyncs the WAL before
 * copying and the database after (SQLite does so at NORMAL, better-sqlite3's WAL default, as at FULL).
 */
const CHECKPOINTER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require("better-sqlite3");
const db = new Database(workerData.file, { fileMustExist: true });
const checkpoint = () => db.pragma("wal_checkpoint(PASSIVE)")[0];
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", (message) => {
  if (message.type === "checkpoint") parentPort.postMessage({ id: message.id, result: checkpoint() });
  if (message.type === "stop") {
    clearInterval(timer);
    db.close();
    parentPort.close();
  }
});
`;

/** Periodic PASSIVE checkpoints of a WAL database on a worker thread (see the module comment). */
export class Checkpointer {
  private worker: Worker | null;
  private nextId = 0;
  private readonly pending = new Map<
    number,
    { resolve(r: CheckpointResult): void; reject(e: unknown): void }
  >();

  constructor(
    file: string,
    private readonly db: Database,
    intervalMs = CHECKPOINT_INTERVAL_MS,
  ) {
    db.pragma("wal_autocheckpoint = 0");
    this.worker = new Worker(CHECKPOINTER_SOURCE, { eval: true, workerData: { file, intervalMs } });
    this.worker.unref();
    this.worker.on("message", (message: { id: number; result: CheckpointResult }) => {
      this.pending.get(message.id)?.resolve(message.result);
      this.pending.delete(message.id);
      if (this.pending.size === 0) this.worker?.unref();
    });
    this.worker.on("error", (error) => this.fail(error));
    this.worker.on("exit", () => this.fail(new Error("checkpointer stopped")));
  }

  /** Runs a PASSIVE checkpoint now (on the worker); in-thread if the worker has failed. */
  checkpoint(): Promise<CheckpointResult> {
    if (this.worker === null) {
      return Promise.resolve((this.db.pragma("wal_checkpoint(PASSIVE)") as CheckpointResult[])[0]);
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // An awaited answer keeps this thread alive until it comes.
      this.worker!.ref();
      this.worker!.postMessage({ type: "checkpoint", id });
    });
  }

  /** Stops the worker and waits for it to close its connection. */
  async stop(): Promise<void> {
    const worker = this.worker;
    if (worker === null) return;
    this.worker = null;
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    // Waiting for the exit must keep this thread alive (the worker is unref'd while it runs).
    worker.ref();
    worker.postMessage({ type: "stop" });
    await exited;
  }

  private fail(error: unknown): void {
    if (this.worker === null) return;
    this.worker = null;
    // Without the worker, SQLite checkpoints on commit again (on the event loop, but the WAL stays bounded).
    this.db.pragma(`wal_autocheckpoint = ${DEFAULT_WAL_AUTOCHECKPOINT_PAGES}`);
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
  }
}
