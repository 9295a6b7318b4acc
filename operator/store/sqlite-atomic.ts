/**
 * Read-modify-write as one unit on a better-sqlite3 connection: a savepoint
 * inside an outer transaction, otherwise an IMMEDIATE transaction (the write
 * lock is taken before the read, so another process cannot change the row in
 * between). The transaction wrapper is built once per connection: building it
 * per call allocates four functions on the issuance hot path.
 */
import type { Database } from "better-sqlite3";

export type Atomic = <T>(body: () => T) => T;

export function atomicRunner(db: Database): Atomic {
  const run = db.transaction((body: () => unknown) => body());
  return <T>(body: () => T): T => (db.inTransaction ? run(body) : run.immediate(body)) as T;
}
