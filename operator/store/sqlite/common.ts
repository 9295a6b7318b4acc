/** Helpers shared by the SQLite repositories. */

/** The synchronous shape of an async interface. */
export type SyncOf<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : never;
};

export type Row = Record<string, unknown>;

export { address, bytes32, nonNegative, positive } from "../values";
