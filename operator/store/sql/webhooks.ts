/**
 * {@link WebhookOutboxRepository} for both engines (docs/webhooks.md; tables of migration 3,
 * `next_attempt_at_ms` in milliseconds since migration 12). PostgreSQL's batched issuance adds its events
 * Issuance (issuance.ts) adds its events here: the subscriptions read once per batch ({@link
 * WebhookOutbox.subscriptions}, precompiled), then {@link WebhookOutbox.insertWebhookEventTo} per event.
 */
import { type Kysely, sql as rawSql } from "kysely";
import type {
  DueWebhookDelivery,
  OutboxEvent,
  StoredWebhookEvent,
  WebhookAttemptOutcome,
  WebhookAttemptRecord,
  WebhookBacklog,
  WebhookDeliveryQuery,
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
  WebhookLanes,
  WebhookOutboxRepository,
  WebhookSubscriptionRecord,
  WebhookSubscriptionSource,
} from "../repositories";
import type { SqlEngine } from "./engine";
import { precompile } from "./precompiled";
import type { Schema, WebhookSubscriptionsTable } from "./schema";

/** Longest `last_error` kept (a receiver's error page could be large). */
const MAX_ERROR_LENGTH = 500;
export const truncateError = (text: string) =>
  text.length > MAX_ERROR_LENGTH ? text.slice(0, MAX_ERROR_LENGTH) : text;

type Row = Record<string, unknown>;

/** Read for every issuance batch (the hot path): compiled once. */
const SUBSCRIPTION_TYPES = precompile((db) =>
  db.selectFrom("webhook_subscriptions").select(["id", "event_types"]),
);

export class WebhookOutbox implements WebhookOutboxRepository {
  constructor(private readonly sql: SqlEngine) {}

  async putWebhookSubscription(record: WebhookSubscriptionRecord): Promise<void> {
    const values = {
      url: record.url,
      secret: record.secret,
      event_types: JSON.stringify(record.eventTypes),
      description: record.description,
      source: record.source,
    };
    await this.sql.run(
      this.sql.db
        .insertInto("webhook_subscriptions")
        .values({ id: record.id, ...values, created_at: record.createdAt })
        .onConflict((conflict) => conflict.column("id").doUpdateSet(values)),
    );
  }

  async getWebhookSubscription(id: string): Promise<WebhookSubscriptionRecord | null> {
    const row = await this.sql.first(
      this.sql.db.selectFrom("webhook_subscriptions").selectAll().where("id", "=", id),
    );
    return row ? subscriptionFromRow(row) : null;
  }

  async listWebhookSubscriptions(): Promise<WebhookSubscriptionRecord[]> {
    const rows = await this.sql.all(
      this.sql.db.selectFrom("webhook_subscriptions").selectAll().orderBy("created_at").orderBy("id"),
    );
    return rows.map(subscriptionFromRow);
  }

  async deleteWebhookSubscription(id: string): Promise<boolean> {
    return (await this.sql.run(this.sql.db.deleteFrom("webhook_subscriptions").where("id", "=", id))) === 1;
  }

  async insertWebhookEvent(event: OutboxEvent, now: number): Promise<number> {
    return this.insertWebhookEventTo(event, now, await this.subscriptions());
  }

  /** Every subscription's id and event types (issuance reads them once for a batch of events). */
  subscriptions(): Promise<Pick<WebhookSubscriptionsTable, "id" | "event_types">[]> {
    return this.sql.all(SUBSCRIPTION_TYPES.with(this.sql));
  }

  /** {@link insertWebhookEvent} with the subscriptions already read in this transaction. */
  async insertWebhookEventTo(
    event: OutboxEvent,
    now: number,
    subscriptions: readonly Pick<WebhookSubscriptionsTable, "id" | "event_types">[],
  ): Promise<number> {
    const { db } = this.sql;
    // Cheap when nobody subscribes (issuance calls this for every guarantee): no statement at all.
    const targets = subscriptions.filter((subscription) => wantsEvent(subscription, event.type));
    if (targets.length === 0) return 0;
    return this.sql.atomic(async () => {
      const revived = await this.sql.run(
        db
          .updateTable("webhook_events")
          .set({ payload: event.payload, retracted_at: null })
          .where("id", "=", event.id),
      );
      if (revived === 1) {
        await this.sql.run(
          db
            .updateTable("webhook_deliveries")
            .set({ status: "pending", next_attempt_at_ms: now * 1000, last_error: null })
            .where("event_id", "=", event.id)
            .where("status", "=", "cancelled"),
        );
      } else {
        await this.sql.run(
          db
            .insertInto("webhook_events")
            .values({ id: event.id, type: event.type, created_at: event.createdAt, payload: event.payload }),
        );
      }
      return this.sql.run(
        db
          .insertInto("webhook_deliveries")
          .values(
            targets.map((target) => ({
              event_id: event.id,
              subscription_id: target.id,
              status: "pending",
              next_attempt_at_ms: now * 1000,
              created_at: now,
            })),
          )
          .onConflict((conflict) => conflict.columns(["event_id", "subscription_id"]).doNothing()),
      );
    });
  }

  async retractWebhookEvent(eventId: string, now: number): Promise<void> {
    const { db } = this.sql;
    await this.sql.atomic(async () => {
      await this.sql.run(
        db.updateTable("webhook_events").set({ retracted_at: now }).where("id", "=", eventId),
      );
      await this.sql.run(
        db
          .updateTable("webhook_deliveries")
          .set({
            status: "cancelled",
            next_attempt_at_ms: null,
            last_error: "retracted: the chain event was undone by a reorganisation",
          })
          .where("event_id", "=", eventId)
          .where("status", "in", ["pending", "failed"]),
      );
    });
  }

  claimDueWebhookDeliveries(
    nowMs: number,
    limit: number,
    leaseMs: number,
    lanes?: WebhookLanes,
  ): Promise<DueWebhookDelivery[]> {
    const now = Math.floor(nowMs / 1000);
    const { db } = this.sql;
    return this.sql.atomic(async () => {
      const rows = await this.sql.all(
        lanes === undefined
          ? dueSelect(db)
              .where("d.status", "=", "pending")
              .where("d.next_attempt_at_ms", "<=", nowMs)
              .orderBy("d.next_attempt_at_ms")
              .orderBy("d.seq")
              .limit(limit)
          : dueInLanes(db, nowMs, limit, lanes),
      );
      if (rows.length > 0) {
        await this.sql.run(
          db
            .updateTable("webhook_deliveries")
            .set((eb) => ({
              attempts: eb("attempts", "+", 1),
              last_attempt_at: now,
              next_attempt_at_ms: nowMs + leaseMs,
            }))
            .where(
              "seq",
              "in",
              rows.map((row) => row.seq as number),
            ),
        );
      }
      return rows.map((row) => ({
        ...deliveryFromRow({
          ...row,
          attempts: (row.attempts as number) + 1,
          last_attempt_at: now,
          next_attempt_at_ms: nowMs + leaseMs,
        }),
        url: row.url as string,
        secret: row.secret as string,
        payload: row.payload as string,
      }));
    });
  }

  async recordWebhookAttempt(
    eventId: string,
    subscriptionId: string,
    outcome: WebhookAttemptOutcome,
    now: number,
  ): Promise<void> {
    const [status, next, error, code, delivered] =
      outcome.status === "delivered"
        ? ["delivered", null, null, outcome.statusCode, now]
        : outcome.status === "pending"
          ? ["pending", outcome.nextAttemptAtMs, truncateError(outcome.error), outcome.statusCode, null]
          : ["failed", null, truncateError(outcome.error), outcome.statusCode, null];
    const { db } = this.sql;
    await this.sql.atomic(async () => {
      const changed = await this.sql.run(
        db
          .updateTable("webhook_deliveries")
          .set({
            status,
            next_attempt_at_ms: next,
            last_error: error,
            last_status_code: code,
            delivered_at: delivered,
          })
          .where("event_id", "=", eventId)
          .where("subscription_id", "=", subscriptionId)
          .where("status", "=", "pending"),
      );
      if (changed !== 1) return;
      // The attempt number is the delivery's count, incremented when the attempt was claimed.
      const row = await this.sql.first(
        db
          .selectFrom("webhook_deliveries")
          .select("attempts")
          .where("event_id", "=", eventId)
          .where("subscription_id", "=", subscriptionId),
      );
      const attempt = Math.max(1, Number(row?.attempts ?? 1));
      await this.sql.run(
        db
          .insertInto("webhook_attempts")
          .values({
            event_id: eventId,
            subscription_id: subscriptionId,
            attempt,
            at: now,
            outcome: outcome.status,
            status_code: code,
            error,
          })
          .onConflict((conflict) =>
            conflict.columns(["event_id", "subscription_id", "attempt"]).doUpdateSet({
              at: now,
              outcome: outcome.status,
              status_code: code,
              error,
            }),
          ),
      );
    });
  }

  async listWebhookAttempts(eventId: string, subscriptionId: string): Promise<WebhookAttemptRecord[]> {
    const rows = await this.sql.all(
      this.sql.db
        .selectFrom("webhook_attempts")
        .selectAll()
        .where("event_id", "=", eventId)
        .where("subscription_id", "=", subscriptionId)
        .orderBy("attempt"),
    );
    return rows.map((row) => ({
      attempt: Number(row.attempt),
      at: Number(row.at),
      outcome: row.outcome as WebhookAttemptRecord["outcome"],
      statusCode: row.status_code === null ? null : Number(row.status_code),
      error: row.error,
    }));
  }

  async webhookBacklog(): Promise<WebhookBacklog[]> {
    const rows = await this.sql.all(
      this.sql.db
        .selectFrom("webhook_deliveries")
        .select([
          "subscription_id",
          rawSql<number>`SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END)`.as("pending"),
          rawSql<number>`SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END)`.as("failed"),
          rawSql<number | null>`MIN(CASE WHEN status = 'pending' THEN created_at END)`.as(
            "oldest_pending_at",
          ),
          rawSql<number>`MAX(CASE WHEN status = 'pending' THEN attempts ELSE 0 END)`.as(
            "max_pending_attempts",
          ),
        ])
        .where("status", "in", ["pending", "failed"])
        .groupBy("subscription_id")
        .orderBy("subscription_id"),
    );
    return rows.map(backlogFromRow);
  }

  async listWebhookDeliveries(
    query: WebhookDeliveryQuery,
  ): Promise<(WebhookDeliveryRecord & { seq: number })[]> {
    const rows = await this.sql.all(
      deliverySelect(this.sql.db)
        .where("d.subscription_id", "=", query.subscriptionId)
        .$if(query.status !== undefined, (q) => q.where("d.status", "=", query.status as string))
        .$if(query.beforeSeq !== undefined, (q) => q.where("d.seq", "<", query.beforeSeq as number))
        .orderBy("d.seq", "desc")
        .limit(query.limit),
    );
    return rows.map(deliveryFromRow);
  }

  async getWebhookDelivery(eventId: string, subscriptionId: string): Promise<WebhookDeliveryRecord | null> {
    const row = await this.sql.first(
      deliverySelect(this.sql.db)
        .where("d.event_id", "=", eventId)
        .where("d.subscription_id", "=", subscriptionId),
    );
    if (!row) return null;
    const { seq: _seq, ...delivery } = deliveryFromRow(row);
    void _seq;
    return delivery;
  }

  async getWebhookEvent(eventId: string): Promise<StoredWebhookEvent | null> {
    const row = await this.sql.first(
      this.sql.db.selectFrom("webhook_events").selectAll().where("id", "=", eventId),
    );
    if (!row) return null;
    return {
      id: String(row.id),
      type: String(row.type),
      createdAt: Number(row.created_at),
      payload: String(row.payload),
      retractedAt: row.retracted_at === null ? null : Number(row.retracted_at),
    };
  }

  async retryWebhookDelivery(
    eventId: string,
    subscriptionId: string,
    nowMs: number,
  ): Promise<WebhookDeliveryRecord | null> {
    const changed = await this.sql.run(
      this.sql.db
        .updateTable("webhook_deliveries")
        .set({ status: "pending", next_attempt_at_ms: nowMs })
        .where("event_id", "=", eventId)
        .where("subscription_id", "=", subscriptionId)
        .where("status", "in", ["pending", "failed"]),
    );
    return changed === 1 ? this.getWebhookDelivery(eventId, subscriptionId) : null;
  }

  async insertWebhookEventFor(event: OutboxEvent, subscriptionId: string, now: number): Promise<void> {
    const { db } = this.sql;
    await this.sql.atomic(async () => {
      await this.sql.run(
        db
          .insertInto("webhook_events")
          .values({ id: event.id, type: event.type, created_at: event.createdAt, payload: event.payload }),
      );
      await this.sql.run(
        db.insertInto("webhook_deliveries").values({
          event_id: event.id,
          subscription_id: subscriptionId,
          status: "pending",
          next_attempt_at_ms: now * 1000,
          created_at: now,
        }),
      );
    });
  }
}

/** Deliveries with their event's type. */
function deliverySelect(db: Kysely<Schema>) {
  return db
    .selectFrom("webhook_deliveries as d")
    .innerJoin("webhook_events as e", "e.id", "d.event_id")
    .selectAll("d")
    .select("e.type");
}

/** Deliveries with what sending them needs (payload, url, secret). */
function dueSelect(db: Kysely<Schema>) {
  return deliverySelect(db)
    .innerJoin("webhook_subscriptions as s", "s.id", "d.subscription_id")
    .select(["e.payload", "s.url", "s.secret"]);
}

/**
 * Lanes: rank each subscription's due deliveries (on the delivery rows alone, payloads are joined only for
 * the rows taken), keep the ranks the lane has room for, and take rank 1 of every subscription before
 * rank 2 of any, so a subscription's backlog cannot crowd out others. A subscription's deliveries in flight
 * come in as a CASE over the (few) subscriptions that have some.
 */
function dueInLanes(db: Kysely<Schema>, nowMs: number, limit: number, lanes: WebhookLanes) {
  const inFlight = [...lanes.inFlight].filter(([, count]) => count > 0);
  const room =
    inFlight.length === 0
      ? rawSql<number>`${lanes.perSubscription}`
      : rawSql<number>`${lanes.perSubscription} - CASE subscription_id ${rawSql.join(
          inFlight.map(([id, count]) => rawSql`WHEN ${id} THEN ${count}`),
          rawSql` `,
        )} ELSE 0 END`;
  return db
    .with("ranked", (qb) =>
      qb
        .selectFrom("webhook_deliveries")
        .select([
          "seq",
          "subscription_id",
          "next_attempt_at_ms",
          rawSql<number>`ROW_NUMBER() OVER (PARTITION BY subscription_id ORDER BY next_attempt_at_ms, seq)`.as(
            "lane_rank",
          ),
        ])
        .where("status", "=", "pending")
        .where("next_attempt_at_ms", "<=", nowMs),
    )
    .with("picked", (qb) =>
      qb
        .selectFrom("ranked")
        .select(["seq", "lane_rank", "next_attempt_at_ms"])
        .where("lane_rank", "<=", room)
        .orderBy("lane_rank")
        .orderBy("next_attempt_at_ms")
        .orderBy("seq")
        .limit(limit),
    )
    .selectFrom("picked as p")
    .innerJoin("webhook_deliveries as d", "d.seq", "p.seq")
    .innerJoin("webhook_events as e", "e.id", "d.event_id")
    .innerJoin("webhook_subscriptions as s", "s.id", "d.subscription_id")
    .selectAll("d")
    .select(["e.type", "e.payload", "s.url", "s.secret"])
    .orderBy("p.lane_rank")
    .orderBy("p.next_attempt_at_ms")
    .orderBy("p.seq");
}

/** Whether a subscription (its `event_types` JSON) wants events of `type`. */
export function wantsEvent(
  subscription: Pick<WebhookSubscriptionsTable, "event_types">,
  type: string,
): boolean {
  const types = JSON.parse(subscription.event_types) as string[];
  return types.includes("*") || types.includes(type);
}

function subscriptionFromRow(row: WebhookSubscriptionsTable): WebhookSubscriptionRecord {
  return {
    id: row.id,
    url: row.url,
    secret: row.secret,
    eventTypes: JSON.parse(row.event_types) as string[],
    description: row.description ?? null,
    source: row.source as WebhookSubscriptionSource,
    createdAt: row.created_at,
  };
}

function deliveryFromRow(row: Row): WebhookDeliveryRecord & { seq: number } {
  return {
    seq: row.seq as number,
    eventId: row.event_id as string,
    subscriptionId: row.subscription_id as string,
    eventType: row.type as string,
    status: row.status as WebhookDeliveryStatus,
    attempts: row.attempts as number,
    nextAttemptAtMs: (row.next_attempt_at_ms as number | null) ?? null,
    lastAttemptAt: (row.last_attempt_at as number | null) ?? null,
    lastError: (row.last_error as string | null) ?? null,
    lastStatusCode: (row.last_status_code as number | null) ?? null,
    deliveredAt: (row.delivered_at as number | null) ?? null,
    createdAt: row.created_at as number,
  };
}

function backlogFromRow(row: Row): WebhookBacklog {
  return {
    subscriptionId: String(row.subscription_id),
    pending: Number(row.pending),
    failed: Number(row.failed),
    oldestPendingAt: row.oldest_pending_at === null ? null : Number(row.oldest_pending_at),
    maxPendingAttempts: Number(row.max_pending_attempts),
  };
}
