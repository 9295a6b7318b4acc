/**
 * The one migration history (operator/store/migrations.ts) opens databases the operator created before it:
 * a SQLite file at its version 13 and a PostgreSQL database at its former version 10 (and at every former
 * version before, whose numbering it renumbers), both built from the fixtures the previous code produced
 * (test/store/fixtures/), holding a row in every converted area and a guarantee. Every row survives, the
 * database is at the newest version in the one numbering, and opening it again applies nothing.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { expect } from "chai";
import { Client } from "pg";
import { MIGRATIONS, migrate, PostgresStore, SqliteStore, type Store } from "../../operator/store";
import { T0, tempDir } from "../operator/helpers";
import { sharedTestPostgres, stopTestPostgresBackend } from "./backends";

const PAYER = "0x1111111111111111111111111111111111111111";
const SELLER = "0x2222222222222222222222222222222222222222";
const ASSET = "0x3333333333333333333333333333333333333333";
const GUARANTEE_ID = `0x${"ab".repeat(32)}`;
const TX = `0x${"cd".repeat(32)}`;
const BLOCK = `0x${"ef".repeat(32)}`;

/** One row in each converted area and a guarantee, in SQL both engines read (TRUE is 1 on SQLite). */
const ROWS = [
  `INSERT INTO siwe_nonces (nonce, address, issued_at, expires_at) VALUES ('n1', '${PAYER}', ${T0}, ${T0 + 300})`,
  `INSERT INTO refresh_tokens (token_hash, family_id, wallet, scopes, issued_at, expires_at)
     VALUES ('h1', 'f1', '${PAYER}', '["core"]', ${T0}, ${T0 + 3600})`,
  `INSERT INTO operator_state (key, value) VALUES ('sender.journal', '{"nonce":7}')`,
  `INSERT INTO chain_cursor (id, block_number, block_hash, block_timestamp, updated_at)
     VALUES (1, 42, '${BLOCK}', ${T0}, ${T0})`,
  `INSERT INTO chain_blocks (block_number, block_hash, block_timestamp) VALUES (42, '${BLOCK}', ${T0})`,
  `INSERT INTO chain_events (tx_hash, log_index, block_number, block_hash, block_timestamp, contract, name, args,
       undo, applied_at)
     VALUES ('${TX}', 3, 42, '${BLOCK}', ${T0}, 'Vault', 'Deposited', '{"amount":"5"}', '[]', ${T0})`,
  `INSERT INTO reserves (guarantee_id, user_address, asset_address, recipient, amount, expires_at, tx_hash,
       block_number, v1)
     VALUES ('${GUARANTEE_ID}', '${PAYER}', '${ASSET}', '${SELLER}', '900', ${T0 + 99}, '${TX}', 42, TRUE)`,
  `INSERT INTO webhook_subscriptions (id, url, secret, event_types, description, source, created_at)
     VALUES ('whk_a', 'https://a.test/hook', 's', '["*"]', NULL, 'api', ${T0})`,
  `INSERT INTO webhook_events (id, type, created_at, payload) VALUES ('evt_1', 'guarantee.issued', ${T0}, '{}')`,
  `INSERT INTO webhook_deliveries (event_id, subscription_id, status, attempts, next_attempt_at_ms, created_at)
     VALUES ('evt_1', 'whk_a', 'pending', 1, ${(T0 + 30) * 1000}, ${T0})`,
  `INSERT INTO collateral (user_address, asset_address, deposited, locked, updated_at)
     VALUES ('${PAYER}', '${ASSET}', '1000', '900', ${T0})`,
];

const GUARANTEE_COLUMNS =
  "guarantee_id, version, user_address, recipient_address, req_id, amount, asset_address, timestamp, scheme, " +
  "signature, certificate_claims, certificate_signature, state, created_at, updated_at";
const GUARANTEE_VALUES = `'${GUARANTEE_ID}', 1, '${PAYER}', '${SELLER}', '7', '900', '${ASSET}', ${T0}, 'eip712',
  '0x01', 'claims', 'sig', 'PENDING_VALIDATION', ${T0}, ${T0}`;

/** Checks every row of {@link ROWS} and the guarantee through the store. */
async function expectRowsSurvived(store: Store): Promise<void> {
  expect(await store.authSessions.consumeNonce("n1", PAYER, T0 + 1)).to.equal("consumed");
  expect(await store.authSessions.getRefreshToken("h1")).to.include({
    familyId: "f1",
    wallet: PAYER,
    rotatedAt: null,
  });
  expect(await store.operatorState.getOperatorState("sender.journal")).to.equal('{"nonce":7}');
  expect(await store.chainJournal.getChainCursor()).to.deep.equal({
    blockNumber: 42,
    blockHash: BLOCK,
    blockTimestamp: T0,
  });
  expect(await store.chainJournal.listChainBlocks(42, 10)).to.have.length(1);
  expect(await store.chainJournal.getChainEvent(TX, 3)).to.include({ name: "Deposited", blockNumber: 42 });
  const [reserve] = await store.reserves.listReserves(PAYER, ASSET);
  expect(reserve).to.include({ guaranteeId: GUARANTEE_ID, amount: 900n, v1: true, expiresAt: T0 + 99 });
  expect(reserve.guarantee).to.deep.equal({
    state: "PENDING_VALIDATION",
    user: PAYER,
    asset: ASSET,
    amount: 900n,
  });
  expect(await store.reserves.listV1ReserveIds()).to.deep.equal([GUARANTEE_ID]);
  expect(await store.webhooks.getWebhookDelivery("evt_1", "whk_a")).to.include({
    status: "pending",
    attempts: 1,
    nextAttemptAtMs: (T0 + 30) * 1000,
  });
  expect(await store.collateral.getCollateral(PAYER, ASSET)).to.include({ deposited: 1000n, locked: 900n });
  expect(await store.guarantees.getGuarantee(GUARANTEE_ID)).to.include({
    amount: 900n,
    reqId: 7n,
    state: "PENDING_VALIDATION",
  });
}

const NEWEST = Math.max(...MIGRATIONS.map((m) => m.version));
const ALL_VERSIONS = MIGRATIONS.map((m) => m.version).sort((a, b) => a - b);
const fixture = (name: string) => readFileSync(join(__dirname, "fixtures", name), "utf8");

describe("one migration history: databases of the previous code migrate forward", function () {
  this.timeout(120_000);

  after(stopTestPostgresBackend);

  it("SQLite at version 13: every row survives, nothing to renumber, reopening applies nothing", async () => {
    const dir = tempDir();
    const file = join(dir.path, "operator.sqlite");
    try {
      const db = new BetterSqlite3(file);
      try {
        db.pragma("journal_mode = WAL");
        db.exec(fixture("sqlite-v13.sql"));
        for (const sql of ROWS) db.exec(sql);
        db.exec(`INSERT INTO guarantees (seq, ${GUARANTEE_COLUMNS}) VALUES (1, ${GUARANTEE_VALUES})`);
      } finally {
        db.close();
      }
      for (let open = 0; open < 2; open++) {
        const store = SqliteStore.open(file);
        try {
          if (open === 0) await expectRowsSurvived(store);
        } finally {
          await store.close();
        }
      }
      const check = new BetterSqlite3(file, { readonly: true });
      try {
        const versions = check
          .prepare("SELECT version FROM schema_migrations ORDER BY version")
          .pluck()
          .all();
        expect(versions).to.deep.equal(ALL_VERSIONS);
        const indexes = check
          .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'guarantees'")
          .pluck()
          .all();
        expect(indexes).to.include("guarantees_pool").and.not.include("guarantees_request_hash");
      } finally {
        check.close();
      }
    } finally {
      dir.remove();
    }
  });

  /** The PostgreSQL fixture up to and including former migration `upTo` (its sections are marked). */
  function postgresFixtureUpTo(upTo: number): string {
    const text = fixture("postgres-v10.sql");
    const next = text.indexOf(`-- PostgreSQL migration ${upTo + 1}:`);
    return next === -1 ? text : text.slice(0, next);
  }

  async function openPostgresAt(upTo: number, body: (url: string, client: Client) => Promise<void>) {
    const pg = await sharedTestPostgres();
    const name = `migrate_forward_${process.pid}_${upTo}`;
    const url = await pg.createDatabase(name);
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(postgresFixtureUpTo(upTo));
      await body(url, client);
    } finally {
      await client.end();
      await pg.dropDatabase(name);
    }
  }

  const versionsOf = async (client: Client) =>
    (
      await client.query<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version")
    ).rows.map((row) => row.version);

  it("PostgreSQL at former version 10: renumbered, every row survives, reopening applies nothing", async () => {
    await openPostgresAt(10, async (url, client) => {
      for (const sql of ROWS) await client.query(sql);
      await client.query(`INSERT INTO guarantees (${GUARANTEE_COLUMNS}) VALUES (${GUARANTEE_VALUES})`);
      const store = await PostgresStore.open(url);
      try {
        await expectRowsSurvived(store);
      } finally {
        await store.close();
      }
      expect(await versionsOf(client)).to.deep.equal(ALL_VERSIONS);
      const { rows } = await client.query("SELECT name FROM schema_migrations WHERE version = $1", [NEWEST]);
      expect(rows[0].name).to.equal(MIGRATIONS.find((m) => m.version === NEWEST)?.name);
      await (await PostgresStore.open(url)).close();
      expect(await versionsOf(client)).to.deep.equal(ALL_VERSIONS);
      const indexes = await client.query("SELECT indexname FROM pg_indexes WHERE tablename = 'guarantees'");
      const names = indexes.rows.map((r: { indexname: string }) => r.indexname);
      expect(names).to.include("guarantees_pool").and.not.include("guarantees_request_hash");
    });
  });

  it("SQLite: a new database has exactly the schema of one the previous code created", () => {
    const fresh = new BetterSqlite3(":memory:");
    const migrated = new BetterSqlite3(":memory:");
    try {
      migrate(fresh);
      migrated.exec(fixture("sqlite-v13.sql"));
      migrate(migrated);
      const schema = (db: BetterSqlite3.Database) =>
        db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").all();
      expect(schema(fresh)).to.deep.equal(schema(migrated));
    } finally {
      fresh.close();
      migrated.close();
    }
  });

  /** Columns, indexes and constraints of the public schema, comparable across databases. */
  async function postgresSchema(client: Client): Promise<unknown[]> {
    const columns = await client.query(
      `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
       WHERE table_schema = 'public' ORDER BY table_name, column_name`,
    );
    const indexes = await client.query(
      "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname",
    );
    const constraints = await client.query(
      `SELECT conrelid::regclass::text AS tbl, pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2`,
    );
    return [columns.rows, indexes.rows, constraints.rows];
  }

  /** The schema of a new PostgreSQL database (read once). */
  let freshSchema: Promise<unknown[]> | undefined;
  function freshPostgresSchema(): Promise<unknown[]> {
    freshSchema ??= (async () => {
      const pg = await sharedTestPostgres();
      const name = `migrate_forward_${process.pid}_fresh`;
      const url = await pg.createDatabase(name);
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        await (await PostgresStore.open(url)).close();
        return await postgresSchema(client);
      } finally {
        await client.end();
        await pg.dropDatabase(name);
      }
    })();
    return freshSchema;
  }

  for (const upTo of [1, 2, 3, 4, 5, 7, 9, 10]) {
    it(`PostgreSQL at former version ${upTo}: reaches the newest version, schema as a new database's`, async () => {
      await openPostgresAt(upTo, async (url, client) => {
        await (await PostgresStore.open(url)).close();
        expect(await versionsOf(client)).to.deep.equal(ALL_VERSIONS);
        expect(await postgresSchema(client)).to.deep.equal(await freshPostgresSchema());
      });
    });
  }
});
