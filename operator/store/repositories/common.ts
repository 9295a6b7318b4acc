/**
 * Conventions shared by every repository of the store: addresses are EIP-55 checksummed (implementations
 * normalise what they are given), amounts are bigint (stored exactly, never as floating point), times are
 * unix seconds. Every method is async so that a backend with a network round trip (PostgreSQL) implements
 * the same interface as the embedded SQLite store, whose synchronous code returns resolved values.
 */

export interface Page<T> {
  items: T[];
  /** Pass back as `cursor` to read the next page; null when there is no more. */
  nextCursor: string | null;
}

export interface PageRequest {
  /** 1 … {@link MAX_PAGE_SIZE}; defaults to {@link DEFAULT_PAGE_SIZE}. */
  limit?: number;
  /** Opaque cursor from a previous page; a cursor this store did not issue is a WireError on `cursor`. */
  cursor?: string | null;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;
