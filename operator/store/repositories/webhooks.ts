/**
 * Repository operations of the webhook outbox (docs/webhooks.md): subscriptions, events and one
 * delivery row per (event, subscription). Events are inserted in the same store transaction as the
 * state change they announce (fan-out to the matching subscriptions happens in that insert), so an
 * event exists iff its change was committed. Times are unix seconds, except when a delivery is due
 * (`nextAttemptAtMs`, the claim's `nowMs` and lease): unix milliseconds, so a retry never starts
 * before its backoff has run (docs/webhooks.md; migration 12).
 */

import { WEBHOOK_DELIVERY_STATUSES, type WebhookDeliveryStatus } from "../../../sdk/api-vocabulary";

// Wire vocabulary (`GET /core/admin/webhooks/{id}/deliveries`): the sdk holds it.
export { WEBHOOK_DELIVERY_STATUSES, type WebhookDeliveryStatus };

/** Where a subscription came from: the operator's configuration (re-synced at startup) or the admin API. */
export type WebhookSubscriptionSource = "config" | "api";

export interface WebhookSubscriptionRecord {
  /** `whk_…` (API) or the configured id. */
  id: string;
  url: string;
  /** HMAC key of the `Surety-Signature` header. */
  secret: string;
  /** Event types delivered to it; `["*"]` for all. */
  eventTypes: readonly string[];
  description: string | null;
  source: WebhookSubscriptionSource;
  createdAt: number;
}

/** An event ready for the outbox: its id, type and the exact JSON body every delivery sends. */
export interface OutboxEvent {
  /** `evt_…`; deterministic per source (docs/webhooks.md), so re-applying the same source re-uses it. */
  id: string;
  type: string;
  createdAt: number;
  /** The envelope, serialised once: every attempt to every subscriber signs these bytes. */
  payload: string;
}

export interface WebhookDeliveryRecord {
  eventId: string;
  subscriptionId: string;
  eventType: string;
  status: WebhookDeliveryStatus;
  /** Attempts started (an attempt is counted when it starts, so one cut by a crash counts too). */
  attempts: number;
  /** When the next attempt may start, unix milliseconds (null once delivered, failed or cancelled). */
  nextAttemptAtMs: number | null;
  lastAttemptAt: number | null;
  lastError: string | null;
  lastStatusCode: number | null;
  deliveredAt: number | null;
  createdAt: number;
}

/** One attempt of a delivery and its outcome (`pending`: it failed and another is scheduled). */
export interface WebhookAttemptRecord {
  /** 1 for the first attempt. */
  attempt: number;
  /** Unix seconds when the outcome was recorded. */
  at: number;
  outcome: "delivered" | "pending" | "failed";
  /** The receiver's HTTP status, null when none came back (refused, timed out). */
  statusCode: number | null;
  error: string | null;
}

/** A due delivery with what sending it needs. */
export interface DueWebhookDelivery extends WebhookDeliveryRecord {
  url: string;
  secret: string;
  payload: string;
}

export type WebhookAttemptOutcome =
  | { status: "delivered"; statusCode: number }
  | { status: "pending"; nextAttemptAtMs: number; error: string; statusCode: number | null }
  | { status: "failed"; error: string; statusCode: number | null };

export interface WebhookDeliveryQuery {
  subscriptionId: string;
  status?: WebhookDeliveryStatus;
  /** Newest first; rows with seq < `beforeSeq` (paging). */
  beforeSeq?: number;
  limit: number;
}

/** Per-subscription delivery lanes for {@link WebhookOutboxRepository.claimDueWebhookDeliveries}. */
export interface WebhookLanes {
  /** Most deliveries of one subscription under way at once. */
  perSubscription: number;
  /** Deliveries already under way, by subscription id (absent = none). */
  inFlight: ReadonlyMap<string, number>;
}

/** A subscription's backlog: deliveries still to be sent and those that gave up ({@link webhookBacklog}). */
export interface WebhookBacklog {
  subscriptionId: string;
  pending: number;
  failed: number;
  /** `created_at` of its oldest pending delivery; null when none is pending. */
  oldestPendingAt: number | null;
  /** Most attempts among its pending deliveries (0 when none): how far into the retries it is. */
  maxPendingAttempts: number;
}

export interface WebhookOutboxRepository {
  /** Inserts or replaces the subscription with this id (its existing deliveries stay). */
  putWebhookSubscription(record: WebhookSubscriptionRecord): Promise<void>;
  getWebhookSubscription(id: string): Promise<WebhookSubscriptionRecord | null>;
  listWebhookSubscriptions(): Promise<WebhookSubscriptionRecord[]>;
  /** Deletes the subscription and its deliveries; false for an unknown id. */
  deleteWebhookSubscription(id: string): Promise<boolean>;

  /**
   * Adds the event with one pending delivery (due at once) per subscription of its type, and returns
   * how many deliveries were created. Nothing is stored when no subscription wants the type. An id
   * already stored (the same source applied again, e.g. after a reorg rewind) is revived: its payload
   * is replaced and its cancelled deliveries are pending again; delivered ones are never resent.
   */
  insertWebhookEvent(event: OutboxEvent, now: number): Promise<number>;
  /** The source of the event was undone (reorg): its not yet delivered deliveries are cancelled. */
  retractWebhookEvent(eventId: string, now: number): Promise<void>;
  /**
   * Up to `limit` pending deliveries due at `nowMs` (unix milliseconds). Each is leased: its attempt
   * count goes up, `lastAttemptAt` is `nowMs` in whole seconds, and it is not due again before
   * `nowMs + leaseMs`, so an attempt cut short by a crash is retried once
   * the lease has run out (at-least-once). With `lanes`, at most `perSubscription` minus the
   * subscription's `inFlight` count are taken per subscription, and the subscriptions take turns:
   * every subscription's oldest due delivery comes before any subscription's second (then oldest
   * first). Without, oldest first.
   */
  claimDueWebhookDeliveries(
    nowMs: number,
    limit: number,
    leaseMs: number,
    lanes?: WebhookLanes,
  ): Promise<DueWebhookDelivery[]>;
  recordWebhookAttempt(
    eventId: string,
    subscriptionId: string,
    outcome: WebhookAttemptOutcome,
    now: number,
  ): Promise<void>;
  /**
   * Pending and failed deliveries per subscription (only subscriptions with some; delivered and cancelled
   * ones are not counted: the query reads the status index, not every delivery ever made).
   */
  webhookBacklog(): Promise<WebhookBacklog[]>;
  /** Deliveries of a subscription, newest first, with their row sequence for paging. */
  listWebhookDeliveries(query: WebhookDeliveryQuery): Promise<(WebhookDeliveryRecord & { seq: number })[]>;
  getWebhookDelivery(eventId: string, subscriptionId: string): Promise<WebhookDeliveryRecord | null>;
  /** Every recorded attempt of a delivery, oldest first (an attempt cut by a crash has none). */
  listWebhookAttempts(eventId: string, subscriptionId: string): Promise<WebhookAttemptRecord[]>;
  /** The stored event (its payload is the body every delivery sends), or null. */
  getWebhookEvent(eventId: string): Promise<StoredWebhookEvent | null>;
  /**
   * An operator's retry (the console): a failed or pending delivery is pending again and due at `nowMs`,
   * its attempt count kept. Returns the delivery after the change, or null when there is no such
   * delivery or it is delivered or cancelled (nothing changed).
   */
  retryWebhookDelivery(
    eventId: string,
    subscriptionId: string,
    nowMs: number,
  ): Promise<WebhookDeliveryRecord | null>;
  /**
   * Adds `event` with one pending delivery, due at once, to `subscriptionId` alone, whatever the event types
   * it subscribes to (an operator's test event). Throws if the event id exists.
   */
  insertWebhookEventFor(event: OutboxEvent, subscriptionId: string, now: number): Promise<void>;
}

/** An event of the outbox as stored. */
export interface StoredWebhookEvent extends OutboxEvent {
  /** When a reorg undid its source (its deliveries cancelled); null normally. */
  retractedAt: number | null;
}
