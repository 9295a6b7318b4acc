/**
 * Runs tasks one at a time, in call order. The SQLite store has a single
 * connection: while an async transaction body is between awaits, no other
 * statement may run on that connection, or it would silently join (and
 * possibly roll back with) the transaction.
 */
export class AsyncMutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    // The next task waits for this one to settle, whether it succeeded or not.
    this.tail = result.catch(() => undefined);
    return result;
  }
}
