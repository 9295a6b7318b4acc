/**
 * A durable {@link PaymentLedger}: one SQLite file (better-sqlite3), so a
 * seller that restarts still refuses the payments it served, and still
 * recognises as its own retry a payment whose settlement it had submitted
 * without learning the outcome. Several seller processes on one host may
 * share the file: every reservation is one `BEGIN IMMEDIATE` transaction, so
 * exactly one of them gets a payment; WAL and a busy timeout let them wait for
 * each other instead of failing. (Replicas on several hosts need a ledger in a
 * database they all reach: the same four methods on PostgreSQL, Redis, ….)
 *
 * A separate module from the scheme's entry point (./index.ts): importing the
 * scheme loads no native module; this one needs `better-sqlite3`.
 *
 * Writes are synchronous and use SQLite's default durability for WAL
 * (`synchronous = FULL` here: a reservation is on disk before the settlement
 * starts, so a crash cannot forget a payment that was then served).
 */
import Database from "better-sqlite3";
import {
  type LedgerEntry,
  type LedgerEntryState,
  type PaymentLedger,
  type PaymentLedgerOptions,
  type ReservationResult,
  SWEEP_EVERY,
  decideReservation,
  parseLeaseSeconds,
} from "./ledger";

/** How long a process waits for another one's transaction on the file (ms). */
const BUSY_TIMEOUT_MS = 5000;

export interface SqlitePaymentLedgerOptions extends PaymentLedgerOptions {
  /** Table name (default `surety_payments`); lets the ledger live in an application's own database file. */
  table?: string;
}

interface Row {
  state: LedgerEntryState;
  reserved_at: number;
  expires_at: number;
}

export class SqlitePaymentLedger implements PaymentLedger {
  private readonly db: Database.Database;
  private readonly owned: boolean;
  private readonly leaseSeconds: number;
  private readonly reserveTx: (key: string, expiresAt: number, nowSeconds: number) => ReservationResult;
  private readonly releaseStmt: Database.Statement;
  private readonly attemptedStmt: Database.Statement;
  private readonly usedStmt: Database.Statement;
  private readonly sweepStmt: Database.Statement;
  private readonly countStmt: Database.Statement;
  private reservations = 0;

  /**
   * Opens (creating when missing) the ledger in `file`, or uses an open better-sqlite3 connection
   * (then closing the ledger leaves the connection open).
   */
  constructor(file: string | Database.Database, options: SqlitePaymentLedgerOptions = {}) {
    this.leaseSeconds = parseLeaseSeconds(options.leaseSeconds);
    const table = options.table ?? "surety_payments";
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(table)) {
      throw new RangeError(
        `table: must be a SQL identifier (letters, digits, _), got ${JSON.stringify(table)}`,
      );
    }
    this.owned = typeof file === "string";
    this.db = typeof file === "string" ? new Database(file) : file;
    if (this.owned) {
      this.db.pragma("journal_mode = WAL");
      this.db.pragma("synchronous = FULL");
    }
    this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    this.db.exec(
      `CREATE TABLE IF NOT EXISTS ${table} (
         key TEXT PRIMARY KEY,
         state TEXT NOT NULL CHECK (state IN ('settling', 'attempted', 'used')),
         reserved_at INTEGER NOT NULL,
         expires_at INTEGER NOT NULL
       ) WITHOUT ROWID;
       CREATE INDEX IF NOT EXISTS ${table}_expires_at ON ${table} (expires_at);`,
    );
    const select = this.db.prepare(`SELECT state, reserved_at, expires_at FROM ${table} WHERE key = ?`);
    const upsert = this.db.prepare(
      `INSERT INTO ${table} (key, state, reserved_at, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET state = excluded.state, reserved_at = excluded.reserved_at,
         expires_at = excluded.expires_at`,
    );
    const decide = this.db.transaction((key: string, expiresAt: number, nowSeconds: number) => {
      const row = select.get(key) as Row | undefined;
      const entry: LedgerEntry | null =
        row === undefined
          ? null
          : { state: row.state, reservedAt: row.reserved_at, expiresAt: row.expires_at };
      const decision = decideReservation(entry, expiresAt, nowSeconds, this.leaseSeconds);
      if (decision.store !== null) {
        const { state, reservedAt, expiresAt: until } = decision.store;
        upsert.run(key, state, reservedAt, until);
      }
      return decision.result;
    });
    // BEGIN IMMEDIATE: the read and the write are one step for every process sharing the file.
    this.reserveTx = (key, expiresAt, nowSeconds) => decide.immediate(key, expiresAt, nowSeconds);
    this.releaseStmt = this.db.prepare(`DELETE FROM ${table} WHERE key = ? AND state = 'settling'`);
    this.attemptedStmt = this.db.prepare(
      `UPDATE ${table} SET state = 'attempted' WHERE key = ? AND state = 'settling'`,
    );
    this.usedStmt = this.db.prepare(`UPDATE ${table} SET state = 'used' WHERE key = ?`);
    this.sweepStmt = this.db.prepare(`DELETE FROM ${table} WHERE expires_at <= ?`);
    this.countStmt = this.db.prepare(`SELECT count(*) AS n FROM ${table} WHERE expires_at > ?`);
  }

  reserve(key: string, expiresAt: number, nowSeconds: number): ReservationResult {
    checkSeconds(expiresAt, "expiresAt");
    checkSeconds(nowSeconds, "nowSeconds");
    if (++this.reservations % SWEEP_EVERY === 0) this.sweepStmt.run(nowSeconds);
    return this.reserveTx(key, expiresAt, nowSeconds);
  }

  release(key: string): void {
    this.releaseStmt.run(key);
  }

  markAttempted(key: string): void {
    this.attemptedStmt.run(key);
  }

  markUsed(key: string): void {
    this.usedStmt.run(key);
  }

  /** Live entries at `nowSeconds` (tests, metrics). */
  size(nowSeconds: number): number {
    return (this.countStmt.get(nowSeconds) as { n: number }).n;
  }

  /** Closes the file (a connection passed in stays open). */
  close(): void {
    if (this.owned) this.db.close();
  }
}

function checkSeconds(value: number, field: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${field}: must be unix seconds (a non-negative integer), got ${String(value)}`);
  }
}
