/**
 * Runs tasks one at a time, in call order. The SQLite store has a single
 * connection: while an async transaction body is between awaits, no other
 * statement may run on that connection, or it would silently join (and
 * possibly roll back with) the transaction.
 */
import { resolve } from "node:path";
import type { Database } from "better-sqlite3";

export class AsyncMutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    // The next task waits for this one to settle, whether it succeeded or not.
    this.tail = result.catch(() => undefined);
    return result;
  }
}

const WRITERS = new Map<string, AsyncMutex>();
const MEMORY_WRITERS = new WeakMap<Database, AsyncMutex>();

/**
 * The write transactions of one SQLite file in this process, one at a time. A transaction holds the write
 * lock across awaits (`store.transaction`, the single implementation's `atomic`), so another connection
 * of the same process (tests open two stores on one file) waits its turn here instead of in SQLite's busy
 * wait, which would block the event loop the holder needs to finish. Reads are not queued (WAL readers
 * never wait); other processes wait in the busy wait as before. A private in-memory database has its own.
 */
export function writerMutex(db: Database): AsyncMutex {
  if (db.memory) {
    const mutex = MEMORY_WRITERS.get(db) ?? new AsyncMutex();
    MEMORY_WRITERS.set(db, mutex);
    return mutex;
  }
  const file = resolve(db.name);
  const mutex = WRITERS.get(file) ?? new AsyncMutex();
  WRITERS.set(file, mutex);
  return mutex;
}
