/**
 * One payment, one delivery: the seller's record of the payments it has
 * submitted for settlement and served. The server scheme (and the paywall)
 * reserve a payment's identity (network, payer, req_id) before settling it,
 * and tell the facilitator from that record whether this is the seller's first
 * settlement of it (`settle_attempt: "first"`: a guarantee Core had issued
 * already is then refused as `payment_already_used`, a replay) or a retry of
 * its own (`"retry"`: an issued guarantee is this seller's, served once).
 *
 * Entry states: `settling` (a settlement in flight since `reservedAt`),
 * `attempted` (submitted, outcome unknown: timeout, facilitator or Core
 * failure), `used` (settled and served). A `settling` entry older than the
 * ledger's lease counts as `attempted`: its process stopped mid-settle.
 * Entries live until `claims.timestamp + retentionSeconds`; after that the
 * facilitator refuses the payment as `timestamp_too_old` anyway, so the
 * retention must exceed the facilitator's past window (default 600 s).
 *
 * {@link MemoryPaymentLedger} serves one process and forgets everything on a
 * restart (the facilitator's refusal of undeclared replays still holds, but a
 * payment whose settlement was interrupted cannot be retried as the seller's
 * own); `SqlitePaymentLedger` (./sqlite-ledger.ts) keeps the record in a file
 * that survives restarts and that the seller processes of one host share.
 */

/**
 * - `reserved`: a first settlement: go ahead, declaring `settle_attempt: "first"`;
 * - `retry`: this seller submitted the payment before and never served it: go ahead, declaring `"retry"`;
 * - `in_progress`: another request is settling it now (402 `payment_in_progress`);
 * - `used`: settled and served already (402 `payment_already_used`).
 */
export type ReservationResult = "reserved" | "retry" | "in_progress" | "used";

export interface PaymentLedger {
  /**
   * Reserve `key` until `expiresAt` (unix seconds) for one settlement, atomically across every process
   * that shares the ledger; see {@link ReservationResult}. An entry whose `expiresAt` has passed counts as absent.
   */
  reserve(key: string, expiresAt: number, nowSeconds: number): ReservationResult | Promise<ReservationResult>;
  /** The facilitator refused the payment (nothing was issued): forget the reservation. */
  release(key: string): void | Promise<void>;
  /** The settlement's outcome is unknown (timeout, facilitator or Core failure): remember it was submitted. */
  markAttempted(key: string): void | Promise<void>;
  /** The payment was settled and the resource is being served: keep the key until it expires. */
  markUsed(key: string): void | Promise<void>;
}

/** Default retention; comfortably above the facilitator's default 600 s timestamp window. */
export const DEFAULT_RETENTION_SECONDS = 3600;
/**
 * Default lease of a settlement in flight: longer than any settle call may take (`@x402/core`'s
 * `HTTPFacilitatorClient` gives up after 90 s by default, the paywall after 15 s). A reservation older
 * than this is taken over as the seller's own retry.
 */
export const DEFAULT_SETTLE_LEASE_SECONDS = 120;
/** Expired entries are swept every this many reservations. */
export const SWEEP_EVERY = 1024;

export type LedgerEntryState = "settling" | "attempted" | "used";

export interface LedgerEntry {
  state: LedgerEntryState;
  /** When the last settlement of it started (unix seconds). */
  reservedAt: number;
  expiresAt: number;
}

/**
 * The one decision of `reserve`, shared by the ledgers: the result for an existing entry (null when
 * absent or expired) and the entry to store, or null to leave it as it is.
 */
export function decideReservation(
  entry: LedgerEntry | null,
  expiresAt: number,
  nowSeconds: number,
  leaseSeconds: number,
): { result: ReservationResult; store: LedgerEntry | null } {
  const settling = { state: "settling" as const, reservedAt: nowSeconds };
  if (entry === null || entry.expiresAt <= nowSeconds) {
    return { result: "reserved", store: { ...settling, expiresAt } };
  }
  if (entry.state === "used") return { result: "used", store: null };
  if (entry.state === "settling" && entry.reservedAt + leaseSeconds > nowSeconds) {
    return { result: "in_progress", store: null };
  }
  return { result: "retry", store: { ...settling, expiresAt: Math.max(entry.expiresAt, expiresAt) } };
}

/** The identity of a payment as the ledger keys it (unique per deployment: Core rejects a reused req_id). */
export function paymentKey(network: string, payer: string, reqId: bigint): string {
  return `${network}|${payer.toLowerCase()}|${reqId.toString()}`;
}

/** Checks a ledger's lease option (positive integer seconds). */
export function parseLeaseSeconds(value: number | undefined): number {
  const lease = value ?? DEFAULT_SETTLE_LEASE_SECONDS;
  if (!Number.isSafeInteger(lease) || lease <= 0) {
    throw new RangeError(`leaseSeconds: must be a positive integer, got ${String(value)}`);
  }
  return lease;
}

export interface PaymentLedgerOptions {
  /** How long a settlement in flight holds its payment (default {@link DEFAULT_SETTLE_LEASE_SECONDS}). */
  leaseSeconds?: number;
}

export class MemoryPaymentLedger implements PaymentLedger {
  private readonly entries = new Map<string, LedgerEntry>();
  private readonly leaseSeconds: number;
  private reservations = 0;

  constructor(options: PaymentLedgerOptions = {}) {
    this.leaseSeconds = parseLeaseSeconds(options.leaseSeconds);
  }

  reserve(key: string, expiresAt: number, nowSeconds: number): ReservationResult {
    if (++this.reservations % SWEEP_EVERY === 0) this.sweep(nowSeconds);
    const decision = decideReservation(
      this.entries.get(key) ?? null,
      expiresAt,
      nowSeconds,
      this.leaseSeconds,
    );
    if (decision.store !== null) this.entries.set(key, decision.store);
    return decision.result;
  }

  release(key: string): void {
    if (this.entries.get(key)?.state === "settling") this.entries.delete(key);
  }

  markAttempted(key: string): void {
    const entry = this.entries.get(key);
    if (entry?.state === "settling") entry.state = "attempted";
  }

  markUsed(key: string): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) entry.state = "used";
  }

  /** Number of live entries (tests, metrics). */
  get size(): number {
    return this.entries.size;
  }

  private sweep(nowSeconds: number): void {
    for (const [key, entry] of this.entries) if (entry.expiresAt <= nowSeconds) this.entries.delete(key);
  }
}
