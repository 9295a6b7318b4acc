/**
 * Webhook due times in milliseconds (migration 12; docs/webhooks.md): a database
 * written by the previous version, with due times in whole seconds, opened by this one. Every pending
 * delivery keeps exactly the instant it was due at, and new ones are due to the millisecond.
 */
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { expect } from "chai";
import { Client, type PoolClient } from "pg";
import { MIGRATIONS, migrate, migratePostgres, PostgresStore, SqliteStore } from "../../operator/store";
import type { Store } from "../../operator/store";
import { T0, tempDir } from "../operator/helpers";
import { sharedTestPostgres, stopTestPostgresBackend } from "./backends";

/** The rows the previous schema holds: one subscription, two events, a delivery due at T0 + 30 s and a delivered one. */
const LEGACY_ROWS = [
  `INSERT INTO webhook_subscriptions (id, url, secret, event_types, description, source, created_at)
     VALUES ('whk_a', 'https://a.test/hook', 's', '["*"]', NULL, 'api', ${T0})`,
  `INSERT INTO webhook_events (id, type, created_at, payload) VALUES ('evt_1', 'guarantee.issued', ${T0}, '{}')`,
  `INSERT INTO webhook_events (id, type, created_at, payload) VALUES ('evt_2', 'guarantee.issued', ${T0}, '{}')`,
  `INSERT INTO webhook_deliveries (event_id, subscription_id, status, attempts, next_attempt_at, last_attempt_at,
       last_error, created_at)
     VALUES ('evt_1', 'whk_a', 'pending', 1, ${T0 + 30}, ${T0}, 'HTTP 503', ${T0})`,
  `INSERT INTO webhook_deliveries (event_id, subscription_id, status, attempts, next_attempt_at, delivered_at,
       created_at)
     VALUES ('evt_2', 'whk_a', 'delivered', 1, NULL, ${T0}, ${T0})`,
];

interface LegacyBackend {
  name: string;
  /** A database at the schema before due times in milliseconds, holding {@link LEGACY_ROWS}, opened by this store. */
  open(): Promise<{ store: Store; remove(): Promise<void> }>;
}

const BACKENDS: LegacyBackend[] = [
  {
    name: "SQLite",
    async open() {
      const dir = tempDir();
      const file = join(dir.path, "operator.sqlite");
      const db = new BetterSqlite3(file);
      try {
        db.pragma("journal_mode = WAL");
        migrate(
          db,
          MIGRATIONS.filter((m) => m.version <= 11),
        );
        for (const sql of LEGACY_ROWS) db.prepare(sql).run();
      } finally {
        db.close();
      }
      return { store: SqliteStore.open(file), remove: async () => dir.remove() };
    },
  },
  {
    name: "PostgreSQL",
    async open() {
      const pg = await sharedTestPostgres();
      const name = `webhook_due_ms_${process.pid}_${Date.now()}`;
      const url = await pg.createDatabase(name);
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        await migratePostgres(
          client as unknown as PoolClient,
          MIGRATIONS.filter((m) => m.version <= 11),
        );
        for (const sql of LEGACY_ROWS) await client.query(sql);
      } finally {
        await client.end();
      }
      return { store: await PostgresStore.open(url), remove: async () => pg.dropDatabase(name) };
    },
  },
];

for (const backend of BACKENDS) {
  describe(`webhook due times migrate to milliseconds (${backend.name})`, function () {
    this.timeout(60_000);

    it("a pending delivery stays due at the same instant; retries are kept to the millisecond", async () => {
      const { store, remove } = await backend.open();
      try {
        expect(await store.webhooks.getWebhookDelivery("evt_1", "whk_a")).to.include({
          status: "pending",
          attempts: 1,
          nextAttemptAtMs: (T0 + 30) * 1000,
          lastAttemptAt: T0,
        });
        expect(await store.webhooks.getWebhookDelivery("evt_2", "whk_a")).to.include({
          status: "delivered",
          nextAttemptAtMs: null,
        });
        // Not a millisecond early.
        expect(
          await store.webhooks.claimDueWebhookDeliveries((T0 + 30) * 1000 - 1, 10, 30_000),
        ).to.deep.equal([]);
        const [due] = await store.webhooks.claimDueWebhookDeliveries((T0 + 30) * 1000, 10, 30_000);
        expect(due).to.include({ eventId: "evt_1", attempts: 2, lastAttemptAt: T0 + 30 });
        const retryAt = (T0 + 30) * 1000 + 2_137;
        await store.webhooks.recordWebhookAttempt(
          "evt_1",
          "whk_a",
          { status: "pending", nextAttemptAtMs: retryAt, error: "HTTP 503", statusCode: 503 },
          T0 + 30,
        );
        expect((await store.webhooks.getWebhookDelivery("evt_1", "whk_a"))?.nextAttemptAtMs).to.equal(
          retryAt,
        );
        expect(await store.webhooks.claimDueWebhookDeliveries(retryAt - 1, 10, 30_000)).to.deep.equal([]);
        expect(await store.webhooks.claimDueWebhookDeliveries(retryAt, 10, 30_000)).to.have.length(1);
        // A new event is due at once (its creation second, in milliseconds).
        await store.webhooks.insertWebhookEvent(
          { id: "evt_3", type: "guarantee.issued", createdAt: T0 + 40, payload: "{}" },
          T0 + 40,
        );
        expect((await store.webhooks.getWebhookDelivery("evt_3", "whk_a"))?.nextAttemptAtMs).to.equal(
          (T0 + 40) * 1000,
        );
      } finally {
        await store.close();
        await remove();
      }
    });
  });
}

after(async function () {
  this.timeout(60_000);
  await stopTestPostgresBackend();
});
