/**
 * The webhook events SQLite's synchronous issuance adds in its own transaction (SqliteIssuance): hand-written
 * until issuance moves to the single implementation (docs/store.md "What remains per engine"). Every other
 * outbox operation is `sql/webhooks.ts`, for both engines, whose {@link wantsEvent} this shares.
 */
import type { Database, Statement } from "better-sqlite3";
import type { OutboxEvent } from "../repositories";
import { type Atomic, atomicRunner } from "../sqlite-atomic";
import { wantsEvent } from "../sql/webhooks";

export class SqliteWebhookOutbox {
  private readonly subscriptionTypes: Statement;
  private readonly reviveEvent: Statement;
  private readonly revivedDeliveries: Statement;
  private readonly insertEvent: Statement;
  private readonly insertDelivery: Statement;
  private readonly atomic: Atomic;

  constructor(db: Database) {
    this.subscriptionTypes = db.prepare("SELECT id, event_types FROM webhook_subscriptions");
    this.reviveEvent = db.prepare("UPDATE webhook_events SET payload = ?, retracted_at = NULL WHERE id = ?");
    this.revivedDeliveries = db.prepare(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at_ms = ?, last_error = NULL
       WHERE event_id = ? AND status = 'cancelled'`,
    );
    this.insertEvent = db.prepare(
      "INSERT INTO webhook_events (id, type, created_at, payload) VALUES (?, ?, ?, ?)",
    );
    this.insertDelivery = db.prepare(
      `INSERT INTO webhook_deliveries (event_id, subscription_id, status, next_attempt_at_ms, created_at)
       VALUES (?, ?, 'pending', ?, ?) ON CONFLICT (event_id, subscription_id) DO NOTHING`,
    );
    this.atomic = atomicRunner(db);
  }

  /** `WebhookOutboxRepository.insertWebhookEvent`, synchronously. */
  insertWebhookEvent(event: OutboxEvent, now: number): number {
    // Cheap when nobody subscribes (issuance calls this for every guarantee): one read of a tiny table.
    const targets = (this.subscriptionTypes.all() as { id: string; event_types: string }[]).filter((s) =>
      wantsEvent(s, event.type),
    );
    if (targets.length === 0) return 0;
    return this.atomic(() => {
      if (this.reviveEvent.run(event.payload, event.id).changes === 1) {
        this.revivedDeliveries.run(now * 1000, event.id);
      } else {
        this.insertEvent.run(event.id, event.type, event.createdAt, event.payload);
      }
      let created = 0;
      for (const target of targets) {
        created += this.insertDelivery.run(event.id, target.id, now * 1000, now).changes;
      }
      return created;
    });
  }
}
