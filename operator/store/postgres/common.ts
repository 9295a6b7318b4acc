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

/** Node socket errors of a connection that cannot be made or was lost. */
const SOCKET_ERRORS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * Whether `error` says the connection to the server failed rather than the statement: SQLSTATE class 08
 * (connection exception), 57P01–57P03 (administrator or crash shutdown, server starting up), a socket error,
 * or the driver's own messages for a connection that ended or a pool checkout that timed out.
 */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    return code.startsWith("08") || /^57P0[123]$/.test(code) || SOCKET_ERRORS.has(code);
  }
  return /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect)/.test(
    error.message,
  );
}
