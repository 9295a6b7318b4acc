/**
 * One payment, one delivery. Settling the same signed guarantee twice is
 * idempotent at the facilitator (Core answers its stored certificate), so
 * without a ledger a replayed payment header would buy the resource again
 * for free. The paywall reserves a payment's identity (network, payer,
 * req_id) before verifying it, releases it when the payment fails (so the
 * buyer may present it again), and keeps it once served.
 *
 * Entries live until `claims.timestamp + retentionSeconds`; after that the
 * facilitator refuses the payment as `timestamp_too_old` anyway, so the
 * retention must exceed the facilitator's past window (default 600 s).
 * {@link MemoryPaymentLedger} serves one process; several seller replicas
 * need a shared implementation (e.g. Redis SET NX with expiry).
 */

export type ReservationResult = "reserved" | "in_progress" | "used";

export interface PaymentLedger {
  /** Reserve `key` until `expiresAt` (unix seconds) unless it is reserved or used already. */
  reserve(key: string, expiresAt: number, nowSeconds: number): ReservationResult | Promise<ReservationResult>;
  /** The payment failed: forget the reservation. */
  release(key: string): void | Promise<void>;
  /** The payment was settled and the resource is being served: keep the key until it expires. */
  markUsed(key: string): void | Promise<void>;
}

/** Default retention; comfortably above the facilitator's default 600 s timestamp window. */
export const DEFAULT_RETENTION_SECONDS = 3600;
/** Expired entries are swept every this many reservations. */
const SWEEP_EVERY = 1024;

/** The identity of a payment as the ledger keys it (unique per deployment: Core rejects a reused req_id). */
export function paymentKey(network: string, payer: string, reqId: bigint): string {
  return `${network}|${payer.toLowerCase()}|${reqId.toString()}`;
}

export class MemoryPaymentLedger implements PaymentLedger {
  private readonly entries = new Map<string, { used: boolean; expiresAt: number }>();
  private reservations = 0;

  reserve(key: string, expiresAt: number, nowSeconds: number): ReservationResult {
    if (++this.reservations % SWEEP_EVERY === 0) this.sweep(nowSeconds);
    const entry = this.entries.get(key);
    if (entry !== undefined && entry.expiresAt > nowSeconds) return entry.used ? "used" : "in_progress";
    this.entries.set(key, { used: false, expiresAt });
    return "reserved";
  }

  release(key: string): void {
    const entry = this.entries.get(key);
    if (entry !== undefined && !entry.used) this.entries.delete(key);
  }

  markUsed(key: string): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) entry.used = true;
  }

  /** Number of live entries (tests, metrics). */
  get size(): number {
    return this.entries.size;
  }

  private sweep(nowSeconds: number): void {
    for (const [key, entry] of this.entries) if (entry.expiresAt <= nowSeconds) this.entries.delete(key);
  }
}
