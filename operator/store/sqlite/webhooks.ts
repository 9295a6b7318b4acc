/**
 * {@link WebhookOutboxRepository} on a better-sqlite3 connection, synchronous (SqliteStore makes them async).
 * Schema: migration 3 (migrations.ts); `next_attempt_at_ms` in milliseconds since migration 12.
 */
import { type Atomic, atomicRunner } from "../sqlite-atomic";
import type { Database, Statement } from "better-sqlite3";
import type { SyncOf } from "./common";
import type {
  DueWebhookDelivery,
  OutboxEvent,
  StoredWebhookEvent,
  WebhookAttemptOutcome,
  WebhookBacklog,
  WebhookDeliveryQuery,
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
  WebhookLanes,
  WebhookOutboxRepository,
  WebhookSubscriptionRecord,
  WebhookSubscriptionSource,
} from "../repositories";

/** Longest `last_error` kept (a receiver's error page could be large). */
const MAX_ERROR_LENGTH = 500;

type Row = Record<string, unknown>;

function subscriptionFromRow(row: Row): WebhookSubscriptionRecord {
  return {
    id: row.id as string,
    url: row.url as string,
    secret: row.secret as string,
    eventTypes: JSON.parse(row.event_types as string) as string[],
    description: (row.description as string | null) ?? null,
    source: row.source as WebhookSubscriptionSource,
    createdAt: row.created_at as number,
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

function wants(subscription: { event_types: string }, type: string): boolean {
  const types = JSON.parse(subscription.event_types) as string[];
  return types.includes("*") || types.includes(type);
}

const truncate = (text: string) => (text.length > MAX_ERROR_LENGTH ? text.slice(0, MAX_ERROR_LENGTH) : text);

const DELIVERY_SELECT = `SELECT d.*, e.type FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`;

function prepare(db: Database) {
  const s = (sql: string): Statement => db.prepare(sql);
  return {
    putSubscription: s(
      `INSERT INTO webhook_subscriptions (id, url, secret, event_types, description, source, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET url = excluded.url, secret = excluded.secret,
         event_types = excluded.event_types, description = excluded.description, source = excluded.source`,
    ),
    getSubscription: s("SELECT * FROM webhook_subscriptions WHERE id = ?"),
    listSubscriptions: s("SELECT * FROM webhook_subscriptions ORDER BY created_at, id"),
    subscriptionTypes: s("SELECT id, event_types FROM webhook_subscriptions"),
    deleteSubscription: s("DELETE FROM webhook_subscriptions WHERE id = ?"),
    getEvent: s("SELECT id FROM webhook_events WHERE id = ?"),
    insertEvent: s("INSERT INTO webhook_events (id, type, created_at, payload) VALUES (?, ?, ?, ?)"),
    reviveEvent: s("UPDATE webhook_events SET payload = ?, retracted_at = NULL WHERE id = ?"),
    insertDelivery: s(
      `INSERT INTO webhook_deliveries (event_id, subscription_id, status, next_attempt_at_ms, created_at)
       VALUES (?, ?, 'pending', ?, ?) ON CONFLICT (event_id, subscription_id) DO NOTHING`,
    ),
    revivedDeliveries: s(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at_ms = ?, last_error = NULL
       WHERE event_id = ? AND status = 'cancelled'`,
    ),
    retractEvent: s("UPDATE webhook_events SET retracted_at = ? WHERE id = ?"),
    cancelDeliveries: s(
      `UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at_ms = NULL,
         last_error = 'retracted: the chain event was undone by a reorganisation'
       WHERE event_id = ? AND status IN ('pending', 'failed')`,
    ),
    due: s(
      `SELECT d.*, e.type, e.payload, s.url, s.secret FROM webhook_deliveries d
       JOIN webhook_events e ON e.id = d.event_id
       JOIN webhook_subscriptions s ON s.id = d.subscription_id
       WHERE d.status = 'pending' AND d.next_attempt_at_ms <= ?
       ORDER BY d.next_attempt_at_ms, d.seq LIMIT ?`,
    ),
    // Lanes: rank each subscription's due deliveries (on the delivery rows alone, payloads are
    // joined only for the rows taken), keep the ranks the lane has room for, and take rank 1 of
    // every subscription before rank 2 of any, so a subscription's backlog cannot crowd out others.
    dueInLanes: s(
      `WITH ranked AS (
         SELECT seq, subscription_id, next_attempt_at_ms,
           ROW_NUMBER() OVER (PARTITION BY subscription_id ORDER BY next_attempt_at_ms, seq) AS lane_rank
         FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at_ms <= ?
       ), picked AS (
         SELECT seq, lane_rank, next_attempt_at_ms FROM ranked
         WHERE lane_rank <= ? - COALESCE((SELECT value FROM json_each(?) WHERE key = ranked.subscription_id), 0)
         ORDER BY lane_rank, next_attempt_at_ms, seq LIMIT ?
       )
       SELECT d.*, e.type, e.payload, s.url, s.secret FROM picked p
       JOIN webhook_deliveries d ON d.seq = p.seq
       JOIN webhook_events e ON e.id = d.event_id
       JOIN webhook_subscriptions s ON s.id = d.subscription_id
       ORDER BY p.lane_rank, p.next_attempt_at_ms, p.seq`,
    ),
    lease: s(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = ?, next_attempt_at_ms = ?
       WHERE seq = ?`,
    ),
    record: s(
      `UPDATE webhook_deliveries SET status = ?, next_attempt_at_ms = ?, last_error = ?, last_status_code = ?,
         delivered_at = ?
       WHERE event_id = ? AND subscription_id = ? AND status = 'pending'`,
    ),
    getDelivery: s(`${DELIVERY_SELECT} WHERE d.event_id = ? AND d.subscription_id = ?`),
  };
}

export class SqliteWebhookOutbox implements SyncOf<WebhookOutboxRepository> {
  private readonly stmt: ReturnType<typeof prepare>;
  private readonly atomic: Atomic;

  constructor(private readonly db: Database) {
    this.stmt = prepare(db);
    this.atomic = atomicRunner(db);
  }

  putWebhookSubscription(record: WebhookSubscriptionRecord): void {
    this.stmt.putSubscription.run(
      record.id,
      record.url,
      record.secret,
      JSON.stringify(record.eventTypes),
      record.description,
      record.source,
      record.createdAt,
    );
  }

  getWebhookSubscription(id: string): WebhookSubscriptionRecord | null {
    const row = this.stmt.getSubscription.get(id) as Row | undefined;
    return row ? subscriptionFromRow(row) : null;
  }

  listWebhookSubscriptions(): WebhookSubscriptionRecord[] {
    return (this.stmt.listSubscriptions.all() as Row[]).map(subscriptionFromRow);
  }

  deleteWebhookSubscription(id: string): boolean {
    return this.stmt.deleteSubscription.run(id).changes === 1;
  }

  insertWebhookEvent(event: OutboxEvent, now: number): number {
    // Cheap when nobody subscribes (issuance calls this for every guarantee): one read of a tiny table.
    const targets = (this.stmt.subscriptionTypes.all() as { id: string; event_types: string }[]).filter((s) =>
      wants(s, event.type),
    );
    if (targets.length === 0) return 0;
    return this.atomic(() => {
      if (this.stmt.getEvent.get(event.id)) {
        this.stmt.reviveEvent.run(event.payload, event.id);
        this.stmt.revivedDeliveries.run(now * 1000, event.id);
      } else {
        this.stmt.insertEvent.run(event.id, event.type, event.createdAt, event.payload);
      }
      let created = 0;
      for (const target of targets) {
        created += this.stmt.insertDelivery.run(event.id, target.id, now * 1000, now).changes;
      }
      return created;
    });
  }

  retractWebhookEvent(eventId: string, now: number): void {
    this.atomic(() => {
      this.stmt.retractEvent.run(now, eventId);
      this.stmt.cancelDeliveries.run(eventId);
    });
  }

  claimDueWebhookDeliveries(
    nowMs: number,
    limit: number,
    leaseMs: number,
    lanes?: WebhookLanes,
  ): DueWebhookDelivery[] {
    const now = Math.floor(nowMs / 1000);
    return this.atomic(() => {
      const rows = (
        lanes === undefined
          ? this.stmt.due.all(nowMs, limit)
          : this.stmt.dueInLanes.all(
              nowMs,
              lanes.perSubscription,
              JSON.stringify(Object.fromEntries(lanes.inFlight)),
              limit,
            )
      ) as Row[];
      return rows.map((row) => {
        this.stmt.lease.run(now, nowMs + leaseMs, row.seq);
        const delivery = deliveryFromRow({
          ...row,
          attempts: (row.attempts as number) + 1,
          last_attempt_at: now,
          next_attempt_at_ms: nowMs + leaseMs,
        });
        return {
          ...delivery,
          url: row.url as string,
          secret: row.secret as string,
          payload: row.payload as string,
        };
      });
    });
  }

  recordWebhookAttempt(
    eventId: string,
    subscriptionId: string,
    outcome: WebhookAttemptOutcome,
    now: number,
  ): void {
    switch (outcome.status) {
      case "delivered":
        this.stmt.record.run("delivered", null, null, outcome.statusCode, now, eventId, subscriptionId);
        return;
      case "pending":
        this.stmt.record.run(
          "pending",
          outcome.nextAttemptAtMs,
          truncate(outcome.error),
          outcome.statusCode,
          null,
          eventId,
          subscriptionId,
        );
        return;
      case "failed":
        this.stmt.record.run(
          "failed",
          null,
          truncate(outcome.error),
          outcome.statusCode,
          null,
          eventId,
          subscriptionId,
        );
        return;
    }
  }

  webhookBacklog(): WebhookBacklog[] {
    const rows = this.db
      .prepare(
        `SELECT subscription_id,
         SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END) AS pending,
         SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) AS failed,
         MIN(CASE WHEN status = 'pending' THEN created_at END) AS oldest_pending_at,
         MAX(CASE WHEN status = 'pending' THEN attempts ELSE 0 END) AS max_pending_attempts
       FROM webhook_deliveries WHERE status IN ('pending', 'failed')
       GROUP BY subscription_id ORDER BY subscription_id`,
      )
      .all() as Record<string, unknown>[];
    return rows.map(backlogFromRow);
  }

  listWebhookDeliveries(query: WebhookDeliveryQuery): (WebhookDeliveryRecord & { seq: number })[] {
    const where = ["d.subscription_id = ?"];
    const params: unknown[] = [query.subscriptionId];
    if (query.status !== undefined) {
      where.push("d.status = ?");
      params.push(query.status);
    }
    if (query.beforeSeq !== undefined) {
      where.push("d.seq < ?");
      params.push(query.beforeSeq);
    }
    params.push(query.limit);
    const rows = this.db
      .prepare(`${DELIVERY_SELECT} WHERE ${where.join(" AND ")} ORDER BY d.seq DESC LIMIT ?`)
      .all(...params) as Row[];
    return rows.map(deliveryFromRow);
  }

  getWebhookDelivery(eventId: string, subscriptionId: string): WebhookDeliveryRecord | null {
    const row = this.stmt.getDelivery.get(eventId, subscriptionId) as Row | undefined;
    if (!row) return null;
    const { seq: _seq, ...delivery } = deliveryFromRow(row);
    void _seq;
    return delivery;
  }

  getWebhookEvent(eventId: string): StoredWebhookEvent | null {
    const row = this.db.prepare("SELECT * FROM webhook_events WHERE id = ?").get(eventId) as Row | undefined;
    return row ? eventFromRow(row) : null;
  }

  retryWebhookDelivery(eventId: string, subscriptionId: string, nowMs: number): WebhookDeliveryRecord | null {
    const changed = this.db
      .prepare(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at_ms = ?
         WHERE event_id = ? AND subscription_id = ? AND status IN ('pending', 'failed')`,
      )
      .run(nowMs, eventId, subscriptionId).changes;
    return changed === 1 ? this.getWebhookDelivery(eventId, subscriptionId) : null;
  }

  insertWebhookEventFor(event: OutboxEvent, subscriptionId: string, now: number): void {
    this.atomic(() => {
      this.stmt.insertEvent.run(event.id, event.type, event.createdAt, event.payload);
      this.stmt.insertDelivery.run(event.id, subscriptionId, now * 1000, now);
    });
  }
}

function backlogFromRow(row: Record<string, unknown>): WebhookBacklog {
  return {
    subscriptionId: String(row.subscription_id),
    pending: Number(row.pending),
    failed: Number(row.failed),
    oldestPendingAt: row.oldest_pending_at === null ? null : Number(row.oldest_pending_at),
    maxPendingAttempts: Number(row.max_pending_attempts),
  };
}

function eventFromRow(row: Row): StoredWebhookEvent {
  return {
    id: String(row.id),
    type: String(row.type),
    createdAt: Number(row.created_at),
    payload: String(row.payload),
    retractedAt: row.retracted_at === null ? null : Number(row.retracted_at),
  };
}
