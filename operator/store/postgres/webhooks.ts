/** {@link WebhookOutboxRepository} on PostgreSQL (docs/webhooks.md); `next_attempt_at_ms` since migration 12. */
import type {
  DueWebhookDelivery,
  OutboxEvent,
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
import type { PgConn, Row } from "./common";

/** Longest `last_error` kept (a receiver's error page could be large). */
const MAX_ERROR_LENGTH = 500;
const truncate = (text: string) => (text.length > MAX_ERROR_LENGTH ? text.slice(0, MAX_ERROR_LENGTH) : text);
const DELIVERY_SELECT =
  "SELECT d.*, e.type FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id";
const DUE_SELECT = `SELECT d.*, e.type, e.payload, s.url, s.secret FROM webhook_deliveries d
  JOIN webhook_events e ON e.id = d.event_id JOIN webhook_subscriptions s ON s.id = d.subscription_id`;

export class PgWebhookOutbox implements WebhookOutboxRepository {
  constructor(private readonly db: PgConn) {}

  async putWebhookSubscription(record: WebhookSubscriptionRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO webhook_subscriptions (id, url, secret, event_types, description, source, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (id) DO UPDATE SET url = excluded.url, secret = excluded.secret,
         event_types = excluded.event_types, description = excluded.description, source = excluded.source`,
      [
        record.id,
        record.url,
        record.secret,
        JSON.stringify(record.eventTypes),
        record.description,
        record.source,
        record.createdAt,
      ],
    );
  }

  async getWebhookSubscription(id: string): Promise<WebhookSubscriptionRecord | null> {
    const { rows } = await this.db.query("SELECT * FROM webhook_subscriptions WHERE id = $1", [id]);
    return rows[0] ? subscriptionFromRow(rows[0]) : null;
  }

  async listWebhookSubscriptions(): Promise<WebhookSubscriptionRecord[]> {
    const { rows } = await this.db.query("SELECT * FROM webhook_subscriptions ORDER BY created_at, id");
    return rows.map(subscriptionFromRow);
  }

  async deleteWebhookSubscription(id: string): Promise<boolean> {
    return (await this.db.query("DELETE FROM webhook_subscriptions WHERE id = $1", [id])).rowCount === 1;
  }

  async insertWebhookEvent(event: OutboxEvent, now: number): Promise<number> {
    return this.insertWebhookEventTo(event, now, await this.subscriptions());
  }

  /** Every subscription's id and event types (read once for a batch of events). */
  async subscriptions(): Promise<readonly Row[]> {
    return (await this.db.query("SELECT id, event_types FROM webhook_subscriptions")).rows;
  }

  /** {@link insertWebhookEvent} with the subscriptions already read in this transaction. */
  async insertWebhookEventTo(event: OutboxEvent, now: number, rows: readonly Row[]): Promise<number> {
    const targets = rows.filter((s) => {
      const types = JSON.parse(s.event_types as string) as string[];
      return types.includes("*") || types.includes(event.type);
    });
    if (targets.length === 0) return 0;
    const revived = await this.db.query(
      "UPDATE webhook_events SET payload = $1, retracted_at = NULL WHERE id = $2",
      [event.payload, event.id],
    );
    if (revived.rowCount === 1) {
      await this.db.query(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at_ms = $1, last_error = NULL
         WHERE event_id = $2 AND status = 'cancelled'`,
        [now * 1000, event.id],
      );
    } else {
      await this.db.query(
        "INSERT INTO webhook_events (id, type, created_at, payload) VALUES ($1, $2, $3, $4)",
        [event.id, event.type, event.createdAt, event.payload],
      );
    }
    const created = await this.db.query(
      `INSERT INTO webhook_deliveries (event_id, subscription_id, status, next_attempt_at_ms, created_at)
       SELECT $1, id, 'pending', $2, $3 FROM unnest($4::text[]) AS id
       ON CONFLICT (event_id, subscription_id) DO NOTHING`,
      [event.id, now * 1000, now, targets.map((t) => t.id as string)],
    );
    return created.rowCount;
  }

  async retractWebhookEvent(eventId: string, now: number): Promise<void> {
    await this.db.query("UPDATE webhook_events SET retracted_at = $1 WHERE id = $2", [now, eventId]);
    await this.db.query(
      `UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at_ms = NULL,
         last_error = 'retracted: the chain event was undone by a reorganisation'
       WHERE event_id = $1 AND status IN ('pending', 'failed')`,
      [eventId],
    );
  }

  async claimDueWebhookDeliveries(
    nowMs: number,
    limit: number,
    leaseMs: number,
    lanes?: WebhookLanes,
  ): Promise<DueWebhookDelivery[]> {
    const now = Math.floor(nowMs / 1000);
    const { rows } =
      lanes === undefined
        ? await this.db.query(
            `${DUE_SELECT} WHERE d.status = 'pending' AND d.next_attempt_at_ms <= $1
             ORDER BY d.next_attempt_at_ms, d.seq LIMIT $2`,
            [nowMs, limit],
          )
        : await this.db.query(
            // As SQLite's: rank each subscription's due deliveries, keep what its lane has room for, rank 1
            // of every subscription before rank 2 of any.
            `WITH ranked AS (
               SELECT seq, subscription_id, next_attempt_at_ms,
                 ROW_NUMBER() OVER (PARTITION BY subscription_id ORDER BY next_attempt_at_ms, seq) AS lane_rank
               FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at_ms <= $1
             ), picked AS (
               SELECT seq, lane_rank, next_attempt_at_ms FROM ranked
               WHERE lane_rank <= $2 - COALESCE(
                 (SELECT value::int FROM jsonb_each_text($3::jsonb) WHERE key = ranked.subscription_id), 0)
               ORDER BY lane_rank, next_attempt_at_ms, seq LIMIT $4
             )
             ${DUE_SELECT.replace("FROM webhook_deliveries d", "FROM picked p JOIN webhook_deliveries d ON d.seq = p.seq")}
             ORDER BY p.lane_rank, p.next_attempt_at_ms, p.seq`,
            [nowMs, lanes.perSubscription, JSON.stringify(Object.fromEntries(lanes.inFlight)), limit],
          );
    if (rows.length > 0) {
      await this.db.query(
        "UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = $1, next_attempt_at_ms = $2 WHERE seq = ANY($3::bigint[])",
        [now, nowMs + leaseMs, rows.map((row) => row.seq as number)],
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
          ? ["pending", outcome.nextAttemptAtMs, truncate(outcome.error), outcome.statusCode, null]
          : ["failed", null, truncate(outcome.error), outcome.statusCode, null];
    await this.db.query(
      `UPDATE webhook_deliveries SET status = $1, next_attempt_at_ms = $2, last_error = $3, last_status_code = $4,
         delivered_at = $5
       WHERE event_id = $6 AND subscription_id = $7 AND status = 'pending'`,
      [status, next, error, code, delivered, eventId, subscriptionId],
    );
  }

  async webhookBacklog(): Promise<WebhookBacklog[]> {
    const { rows } = await this.db.query(
      `SELECT subscription_id,
         SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END) AS pending,
         SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) AS failed,
         MIN(CASE WHEN status = 'pending' THEN created_at END) AS oldest_pending_at,
         MAX(CASE WHEN status = 'pending' THEN attempts ELSE 0 END) AS max_pending_attempts
       FROM webhook_deliveries WHERE status IN ('pending', 'failed')
       GROUP BY subscription_id ORDER BY subscription_id`,
    );
    return rows.map(backlogFromRow);
  }

  async listWebhookDeliveries(
    query: WebhookDeliveryQuery,
  ): Promise<(WebhookDeliveryRecord & { seq: number })[]> {
    const where = ["d.subscription_id = $1"];
    const params: unknown[] = [query.subscriptionId];
    if (query.status !== undefined) {
      params.push(query.status);
      where.push(`d.status = $${params.length}`);
    }
    if (query.beforeSeq !== undefined) {
      params.push(query.beforeSeq);
      where.push(`d.seq < $${params.length}`);
    }
    params.push(query.limit);
    const { rows } = await this.db.query(
      `${DELIVERY_SELECT} WHERE ${where.join(" AND ")} ORDER BY d.seq DESC LIMIT $${params.length}`,
      params,
    );
    return rows.map(deliveryFromRow);
  }

  async getWebhookDelivery(eventId: string, subscriptionId: string): Promise<WebhookDeliveryRecord | null> {
    const { rows } = await this.db.query(
      `${DELIVERY_SELECT} WHERE d.event_id = $1 AND d.subscription_id = $2`,
      [eventId, subscriptionId],
    );
    if (!rows[0]) return null;
    const { seq: _seq, ...delivery } = deliveryFromRow(rows[0]);
    void _seq;
    return delivery;
  }
}

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

function backlogFromRow(row: Record<string, unknown>): WebhookBacklog {
  return {
    subscriptionId: String(row.subscription_id),
    pending: Number(row.pending),
    failed: Number(row.failed),
    oldestPendingAt: row.oldest_pending_at === null ? null : Number(row.oldest_pending_at),
    maxPendingAttempts: Number(row.max_pending_attempts),
  };
}
