/** Helpers shared by the PostgreSQL repositories. */
import type { QueryResultRow } from "pg";

export type Row = Record<string, unknown>;

/**
 * The one connection a repository works on: every operation of the store runs on one pooled client between
 * BEGIN and COMMIT (postgres-store.ts), so each repository method is atomic without its own transaction.
 */
export interface PgConn {
  query<R extends QueryResultRow = Row>(
    text: string,
    params?: readonly unknown[],
  ): Promise<{ rows: R[]; rowCount: number }>;
  /**
   * Runs `body` as one unit inside the current transaction (a SAVEPOINT): rolled back to where it started
   * if it throws, the enclosing transaction stays usable.
   */
  savepoint<T>(body: () => Promise<T>): Promise<T>;
}

/** SQLSTATE of a unique-key violation. */
export const UNIQUE_VIOLATION = "23505";
