/**
 * Webhooks on the wire (docs/webhooks.md): the event envelope, the signature
 * header, and a receiver's pure helpers (verification, deduplication). Core's dispatcher signs with
 * {@link signWebhook}; receivers check with {@link verifyWebhook}: one definition of the format on both
 * sides. The HTTP request handler of a receiver is a kit: sdk/kits/webhook-receiver.ts.
 *
 *   Surety-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + rawBody)>
 *
 * The timestamp is signed with the body, so a captured delivery cannot be replayed after the
 * tolerance window; within it, receivers deduplicate by the envelope `id` ({@link WebhookDeduplicator}).
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** `api_version` of every envelope Core sends today (date-shaped, spec "Versioning"). */
export const WEBHOOK_API_VERSION = "2026-11-01";
export const SIGNATURE_HEADER = "Surety-Signature";
/** The envelope id, repeated as a header so a receiver can deduplicate before parsing. */
export const EVENT_ID_HEADER = "Surety-Event-Id";
/** Signature scheme tag in the header (`v1` = HMAC-SHA256 over `t.rawBody`). */
export const SIGNATURE_SCHEME = "v1";
/** Default age (either way) a signature timestamp may have at the receiver. */
export const DEFAULT_TOLERANCE_SECONDS = 300;
/** Default number of event ids a {@link WebhookDeduplicator} remembers. */
export const DEFAULT_DEDUP_CAPACITY = 10_000;

/** Every event type Core emits; `data` shapes are in docs/webhooks.md. */
export const WEBHOOK_EVENT_TYPES = [
  "collateral.deposited",
  "withdrawal.requested",
  "withdrawal.cancelled",
  "withdrawal.finalized",
  "guarantee.issued",
  "guarantee.settled",
  "guarantee.remunerated",
  "cycle.committed",
  "default.covered",
  "cycle.challenge_opened",
  "cycle.challenge_answered",
  "cycle.challenge_voided",
  "cycle.credit_disputed",
  "cycle.credit_dispute_resolved",
  "cycle.vetoed",
  "cycle.foreign_commit",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * The type of an operator's test event (`POST /core/admin/webhooks/{id}/test`): sent to that one
 * subscription whatever its event types, never subscribable; `data` says it is a test.
 */
export const WEBHOOK_TEST_EVENT_TYPE = "webhook.test";

export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return typeof value === "string" && (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}

/** The JSON body of every delivery (spec "Events": all fields required). */
export interface WebhookEnvelope<D extends Record<string, unknown> = Record<string, unknown>> {
  /** Unique per event; identical on every retry of it (deduplicate by it). */
  id: string;
  type: string;
  /** ISO 8601, when Core created the event. */
  created_at: string;
  api_version: string;
  data: D;
}

export type WebhookFailure =
  | "malformed_signature_header"
  | "stale_timestamp"
  | "bad_signature"
  | "malformed_body";

/** A delivery that must not be trusted; `reason` says why (answer it with a 400). */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
  constructor(
    readonly reason: WebhookFailure,
    message: string,
  ) {
    super(message);
  }
}

type RawBody = string | Uint8Array;

function bodyBytes(rawBody: RawBody): Buffer {
  return typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : Buffer.from(rawBody);
}

/** Hex HMAC-SHA256 of `t + "." + rawBody` under `secret` (the `v1` value). */
export function webhookSignature(secret: string, timestamp: number, rawBody: RawBody): string {
  return createHmac("sha256", secret)
    .update(`${timestamp}.`, "utf8")
    .update(bodyBytes(rawBody))
    .digest("hex");
}

/** The `Surety-Signature` header value for `rawBody` sent at `timestamp` (unix seconds). */
export function signWebhook(rawBody: RawBody, secret: string, timestamp: number): string {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError(`timestamp must be non-negative unix seconds, got ${timestamp}`);
  }
  if (secret.length === 0) throw new RangeError("secret must not be empty");
  return `t=${timestamp},${SIGNATURE_SCHEME}=${webhookSignature(secret, timestamp, rawBody)}`;
}

/** `t=…,v1=…[,v1=…]` → timestamp and every v1 signature (several during a secret rotation). */
export function parseSignatureHeader(header: string | undefined | null): {
  timestamp: number;
  signatures: string[];
} {
  if (typeof header !== "string" || header.trim() === "") {
    throw new WebhookVerificationError("malformed_signature_header", `${SIGNATURE_HEADER} header is missing`);
  }
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === "t" && /^[0-9]{1,15}$/.test(value)) timestamp = Number(value);
    else if (key === SIGNATURE_SCHEME && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  if (timestamp === null || signatures.length === 0) {
    throw new WebhookVerificationError(
      "malformed_signature_header",
      `${SIGNATURE_HEADER} header must be "t=<unix seconds>,${SIGNATURE_SCHEME}=<64 hex chars>"`,
    );
  }
  return { timestamp, signatures };
}

export interface VerifyWebhookOptions {
  /** Receiver's current unix time in seconds (default: the wall clock). */
  now?: number;
  /** Largest |now − t| accepted, seconds (default {@link DEFAULT_TOLERANCE_SECONDS}). */
  toleranceSeconds?: number;
}

function parseEnvelope(rawBody: RawBody): WebhookEnvelope {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyBytes(rawBody).toString("utf8"));
  } catch {
    throw new WebhookVerificationError("malformed_body", "body is not JSON");
  }
  const e = parsed as Record<string, unknown>;
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new WebhookVerificationError("malformed_body", "body must be a JSON object");
  }
  for (const field of ["id", "type", "created_at", "api_version"] as const) {
    if (typeof e[field] !== "string" || e[field] === "") {
      throw new WebhookVerificationError("malformed_body", `${field}: must be a non-empty string`);
    }
  }
  if (typeof e.data !== "object" || e.data === null || Array.isArray(e.data)) {
    throw new WebhookVerificationError("malformed_body", "data: must be an object");
  }
  return parsed as WebhookEnvelope;
}

/**
 * Checks a delivery against `secret` and returns its envelope. Verify the bytes exactly as received
 * (before any JSON parsing). Throws {@link WebhookVerificationError} for a missing or malformed
 * header, a timestamp outside the tolerance, a signature that does not match (compared in constant
 * time), or a body that is not an envelope.
 */
export function verifyWebhook(
  rawBody: RawBody,
  signatureHeader: string | undefined | null,
  secret: string,
  options: VerifyWebhookOptions = {},
): WebhookEnvelope {
  const { timestamp, signatures } = parseSignatureHeader(signatureHeader);
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookVerificationError(
      "stale_timestamp",
      `signature timestamp ${timestamp} is more than ${tolerance} s from now (${now})`,
    );
  }
  const expected = Buffer.from(webhookSignature(secret, timestamp, rawBody), "hex");
  const matches = signatures.some((candidate) => timingSafeEqual(Buffer.from(candidate, "hex"), expected));
  if (!matches) {
    throw new WebhookVerificationError("bad_signature", "signature does not match the body and secret");
  }
  return parseEnvelope(rawBody);
}

/**
 * Remembers the last `capacity` event ids (oldest forgotten first), so a receiver drops redelivered
 * events. Deliveries are at-least-once: a receiver that must never act twice keeps ids durably (e.g.
 * a unique key in its database); this bounded memory covers retries that arrive close together.
 */
export class WebhookDeduplicator {
  private readonly ids = new Set<string>();

  constructor(readonly capacity: number = DEFAULT_DEDUP_CAPACITY) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError("capacity must be a positive integer");
    }
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Records `id`; true the first time, false for an id seen (and not yet forgotten) before. */
  markSeen(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.values().next().value as string;
      this.ids.delete(oldest);
    }
    return true;
  }

  get size(): number {
    return this.ids.size;
  }
}
