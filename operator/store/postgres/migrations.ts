/**
 * PostgreSQL schema migrations, versioned in `schema_migrations` and applied at open. Never edit a released
 * migration: add a new one. Each runs in its own transaction together with its `schema_migrations` row,
 * under a transaction-scoped advisory lock, so replicas starting together apply each exactly once and a
 * failed migration leaves no trace.
 *
 * Version 1 is the schema SQLite reaches with its migrations 1–6 (migrations.ts), in PostgreSQL types:
 * amounts are NUMERIC(78, 0) (every uint256 exactly, never negative: the CHECKs), so the database itself
 * can sum them (netting in SQL); unix-second times and block numbers are BIGINT.
 */
import type { PoolClient } from "pg";

export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

/** Key of the advisory lock migrations hold (any constant; "surety" in ASCII). */
export const MIGRATION_LOCK_KEY = 0x737572657479;

const amount = (column: string, nullable = false) =>
  `${column} NUMERIC(78, 0) ${nullable ? "" : "NOT NULL"} CHECK (${column} >= 0)`;

const GUARANTEE_STATES =
  "'PENDING_VALIDATION', 'FINALIZED_PAYABLE', 'DISPUTED', 'CANCELLED', 'NETTED', 'SETTLED', 'REMUNERATED', 'DEFAULT_REMUNERATED'";

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: "the schema of SQLite migrations 1-6",
    sql: `
      CREATE TABLE siwe_nonces (
        nonce      TEXT   PRIMARY KEY,
        address    TEXT   NOT NULL,
        issued_at  BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        used_at    BIGINT
      );
      CREATE INDEX siwe_nonces_expires_at ON siwe_nonces (expires_at);
      CREATE TABLE refresh_tokens (
        token_hash   TEXT   PRIMARY KEY,
        family_id    TEXT   NOT NULL,
        wallet       TEXT   NOT NULL,
        scopes       TEXT   NOT NULL,
        issued_at    BIGINT NOT NULL,
        expires_at   BIGINT NOT NULL,
        rotated_from TEXT   REFERENCES refresh_tokens (token_hash),
        rotated_at   BIGINT,
        revoked_at   BIGINT
      );
      CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
      CREATE TABLE collateral (
        user_address  TEXT   NOT NULL,
        asset_address TEXT   NOT NULL,
        ${amount("deposited")} DEFAULT 0,
        ${amount("locked")} DEFAULT 0,
        ${amount("pending_withdrawal")} DEFAULT 0,
        updated_at    BIGINT NOT NULL,
        PRIMARY KEY (user_address, asset_address)
      );
      CREATE TABLE guarantees (
        guarantee_id          TEXT    PRIMARY KEY,
        seq                   BIGINT  GENERATED ALWAYS AS IDENTITY UNIQUE,
        version               INTEGER NOT NULL CHECK (version IN (1, 2)),
        user_address          TEXT    NOT NULL,
        recipient_address     TEXT    NOT NULL,
        ${amount("req_id")},
        ${amount("amount")},
        asset_address         TEXT    NOT NULL,
        timestamp             BIGINT  NOT NULL,
        policy                TEXT,
        scheme                TEXT    NOT NULL CHECK (scheme IN ('eip712', 'eip191')),
        signature             TEXT    NOT NULL,
        certificate_claims    TEXT    NOT NULL,
        certificate_signature TEXT    NOT NULL,
        state                 TEXT    NOT NULL CHECK (state IN (${GUARANTEE_STATES})),
        created_at            BIGINT  NOT NULL,
        updated_at            BIGINT  NOT NULL,
        cycle_id              BIGINT,
        excluded_reason       TEXT,
        validation_request_hash TEXT
      );
      CREATE INDEX guarantees_recipient ON guarantees (recipient_address, seq);
      CREATE INDEX guarantees_user ON guarantees (user_address, seq);
      CREATE INDEX guarantees_state ON guarantees (state, seq);
      CREATE INDEX guarantees_cycle ON guarantees (cycle_id, user_address, asset_address);
      CREATE INDEX guarantees_request_hash ON guarantees (validation_request_hash);
      CREATE TABLE chain_cursor (
        id              INTEGER PRIMARY KEY CHECK (id = 1),
        block_number    BIGINT  NOT NULL,
        block_hash      TEXT    NOT NULL,
        block_timestamp BIGINT  NOT NULL,
        updated_at      BIGINT  NOT NULL
      );
      CREATE TABLE chain_blocks (
        block_number    BIGINT PRIMARY KEY,
        block_hash      TEXT   NOT NULL,
        block_timestamp BIGINT NOT NULL
      );
      CREATE TABLE chain_events (
        tx_hash         TEXT    NOT NULL,
        log_index       INTEGER NOT NULL,
        block_number    BIGINT  NOT NULL,
        block_hash      TEXT    NOT NULL,
        block_timestamp BIGINT  NOT NULL,
        contract        TEXT    NOT NULL,
        name            TEXT    NOT NULL,
        args            TEXT    NOT NULL,
        undo            TEXT    NOT NULL,
        applied_at      BIGINT  NOT NULL,
        PRIMARY KEY (tx_hash, log_index)
      );
      CREATE INDEX chain_events_block ON chain_events (block_number, log_index);
      CREATE TABLE cycles (
        cycle_id           BIGINT  PRIMARY KEY CHECK (cycle_id >= 1),
        state              TEXT    NOT NULL CHECK (state IN ('PLANNED', 'SENT', 'COMMITTED', 'FINALIZED', 'VETOED')),
        root               TEXT    NOT NULL,
        tree_dump          TEXT    NOT NULL,
        args               TEXT    NOT NULL,
        guarantee_ids      TEXT    NOT NULL,
        cutoff             BIGINT  NOT NULL,
        planned_at         BIGINT  NOT NULL,
        tx_hash            TEXT,
        tx_nonce           BIGINT,
        raw_tx             TEXT,
        sent_at            BIGINT,
        committed_block    BIGINT,
        committed_at       BIGINT,
        payment_deadline   BIGINT,
        default_deadline   BIGINT,
        finalized_at       BIGINT,
        challenge_deadline BIGINT,
        answer_deadline    BIGINT,
        vetoed_at          BIGINT,
        planned_by_core    BOOLEAN NOT NULL DEFAULT TRUE
      );
      CREATE INDEX cycles_state ON cycles (state);
      CREATE TABLE cycle_debts (
        cycle_id    BIGINT NOT NULL,
        asset       TEXT   NOT NULL,
        debtor      TEXT   NOT NULL,
        ${amount("amount")},
        status      TEXT   NOT NULL
          CHECK (status IN ('OPEN', 'PAID', 'COVERED', 'CHALLENGED', 'ANSWERED', 'VOIDED', 'REFUNDED')),
        ${amount("covered", true)},
        resolved_tx TEXT,
        PRIMARY KEY (cycle_id, asset, debtor)
      );
      CREATE INDEX cycle_debts_status ON cycle_debts (status, cycle_id);
      CREATE TABLE cycle_claims (
        cycle_id    BIGINT NOT NULL,
        asset       TEXT   NOT NULL,
        participant TEXT   NOT NULL,
        ${amount("amount")},
        tx_hash     TEXT   NOT NULL,
        PRIMARY KEY (cycle_id, asset, participant)
      );
      CREATE TABLE withdrawals (
        withdrawal_id  BIGINT PRIMARY KEY,
        user_address   TEXT   NOT NULL,
        asset_address  TEXT   NOT NULL,
        ${amount("amount")},
        finalizable_at BIGINT NOT NULL,
        requested_at   BIGINT NOT NULL,
        state          TEXT   NOT NULL CHECK (state IN ('PENDING', 'CANCELLED', 'FINALIZED')),
        ${amount("paid", true)},
        closed_at      BIGINT
      );
      CREATE INDEX withdrawals_user ON withdrawals (user_address, asset_address, state);
      CREATE TABLE validation_responses (
        tx_hash         TEXT    NOT NULL,
        log_index       INTEGER NOT NULL,
        request_hash    TEXT    NOT NULL,
        validator       TEXT    NOT NULL,
        ${amount("agent_id")},
        response        INTEGER NOT NULL,
        tag             TEXT    NOT NULL,
        block_number    BIGINT  NOT NULL,
        block_timestamp BIGINT  NOT NULL,
        PRIMARY KEY (tx_hash, log_index)
      );
      CREATE INDEX validation_responses_request ON validation_responses (request_hash, validator, block_number, log_index);
      CREATE TABLE operator_state (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
      CREATE TABLE webhook_subscriptions (
        id          TEXT   PRIMARY KEY,
        url         TEXT   NOT NULL,
        secret      TEXT   NOT NULL,
        event_types TEXT   NOT NULL,
        description TEXT,
        source      TEXT   NOT NULL CHECK (source IN ('config', 'api')),
        created_at  BIGINT NOT NULL
      );
      CREATE TABLE webhook_events (
        id           TEXT   PRIMARY KEY,
        type         TEXT   NOT NULL,
        created_at   BIGINT NOT NULL,
        payload      TEXT   NOT NULL,
        retracted_at BIGINT
      );
      CREATE TABLE webhook_deliveries (
        seq              BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        event_id         TEXT    NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
        subscription_id  TEXT    NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
        status           TEXT    NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'cancelled')),
        attempts         INTEGER NOT NULL DEFAULT 0,
        next_attempt_at  BIGINT,
        last_attempt_at  BIGINT,
        last_error       TEXT,
        last_status_code INTEGER,
        delivered_at     BIGINT,
        created_at       BIGINT  NOT NULL,
        UNIQUE (event_id, subscription_id)
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
      CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, seq);
      CREATE TABLE reserves (
        guarantee_id  TEXT   PRIMARY KEY,
        user_address  TEXT   NOT NULL,
        asset_address TEXT   NOT NULL,
        recipient     TEXT   NOT NULL,
        ${amount("amount")},
        expires_at    BIGINT NOT NULL,
        tx_hash       TEXT   NOT NULL,
        block_number  BIGINT NOT NULL
      );
      CREATE INDEX reserves_user ON reserves (user_address, asset_address);
    `,
  },
  {
    version: 2,
    name: "V2 ids netted by committed cycles (SQLite migration 7)",
    sql: `
      CREATE TABLE v2_nettings (
        guarantee_id TEXT   PRIMARY KEY,
        cycle_id     BIGINT NOT NULL,
        tx_hash      TEXT   NOT NULL,
        log_index    BIGINT NOT NULL,
        block_number BIGINT NOT NULL
      );
      CREATE INDEX v2_nettings_cycle ON v2_nettings (cycle_id);
    `,
  },
  {
    // Leader leases of replicas on one database (docs/scale-out.md, "Leader lease and fencing"): one row per
    // lease name; times are the database's own clock in unix milliseconds, so replicas' clocks never meet.
    version: 3,
    name: "leader leases",
    sql: `
      CREATE TABLE leader_leases (
        name           TEXT   PRIMARY KEY,
        holder         TEXT   NOT NULL,
        token          BIGINT NOT NULL CHECK (token > 0),
        acquired_at_ms BIGINT NOT NULL,
        expires_at_ms  BIGINT NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: "V1 reserves (SQLite migration 8)",
    sql: `
      ALTER TABLE reserves ADD COLUMN v1 BOOLEAN NOT NULL DEFAULT FALSE;
    `,
  },
  {
    // Paging by recipient in commit-safe order (guarantees.ts, listGuaranteesByRecipient): the id of the
    // inserting transaction. Rows stored before this migration all get the migration's own id (one
    // transaction), so they keep their seq order.
    version: 5,
    name: "guarantees.ins_xid (paging under concurrent inserts; PostgreSQL only)",
    sql: `
      ALTER TABLE guarantees ADD COLUMN ins_xid xid8 NOT NULL DEFAULT pg_current_xact_id();
      CREATE INDEX guarantees_recipient_xid ON guarantees (recipient_address, ins_xid, seq);
      DROP INDEX guarantees_recipient;
    `,
  },
  {
    // Each guarantee's leaf in its cycle's guarantees root, computed once when it is stored (SQLite
    // migration 9; null for the rows stored before: the plan hashes their fields itself). The cycle index
    // holds only assigned guarantees (issuance never writes it), in seq order.
    version: 6,
    name: "guarantee leaf hashes, partial cycle index (SQLite migration 9)",
    sql: `
      ALTER TABLE guarantees ADD COLUMN leaf_hash BYTEA CHECK (leaf_hash IS NULL OR length(leaf_hash) = 32);
      DROP INDEX guarantees_cycle;
      CREATE INDEX guarantees_cycle ON guarantees (cycle_id, seq) WHERE cycle_id IS NOT NULL;
    `,
  },
  {
    // Reservation by key range (SQLite migration 10; docs/clearing.md "Netting in the database"): a
    // guarantee's payable key is (transaction id, sequence number), taken each time it enters the pool;
    // a cycle reserves a range of keys that ends below every transaction still in flight. Rows payable and
    // unassigned now keep their order (ins_xid, seq); reserved rows keep their cycle_id.
    version: 7,
    name: "payable keys, cycle reservations by key range (SQLite migration 10)",
    sql: `
      CREATE SEQUENCE guarantees_payable_seq AS BIGINT;
      ALTER TABLE guarantees ADD COLUMN payable_xid xid8, ADD COLUMN payable_seq BIGINT;
      UPDATE guarantees SET payable_xid = ins_xid, payable_seq = seq
        WHERE state = 'FINALIZED_PAYABLE' AND cycle_id IS NULL;
      SELECT setval('guarantees_payable_seq', COALESCE((SELECT MAX(seq) FROM guarantees), 0) + 1, false);
      CREATE INDEX guarantees_pool ON guarantees (payable_xid, payable_seq)
        WHERE state = 'FINALIZED_PAYABLE' AND cycle_id IS NULL AND excluded_reason IS NULL;
      CREATE TABLE cycle_reservations (
        cycle_id BIGINT PRIMARY KEY CHECK (cycle_id > 0),
        after_xid xid8 NOT NULL,
        after_seq BIGINT NOT NULL,
        upto_xid xid8 NOT NULL,
        upto_seq BIGINT NOT NULL,
        CHECK ((upto_xid, upto_seq) > (after_xid, after_seq))
      );
    `,
  },
  {
    // The last reserved range's end (each reservation and release reads it) as an index step, not a scan of
    // one row per cycle ever reserved (SQLite migration 11).
    version: 8,
    name: "index on the end of each reserved range (SQLite migration 11)",
    sql: `
      CREATE INDEX cycle_reservations_upto ON cycle_reservations (upto_xid, upto_seq);
    `,
  },
  {
    // Webhook retries to the millisecond (SQLite migration 12; docs/webhooks.md): BIGINT already holds
    // unix milliseconds; the column is renamed to say its unit and its rows converted in place.
    version: 9,
    name: "webhook due times in milliseconds (SQLite migration 12)",
    sql: `
      ALTER TABLE webhook_deliveries RENAME COLUMN next_attempt_at TO next_attempt_at_ms;
      UPDATE webhook_deliveries SET next_attempt_at_ms = next_attempt_at_ms * 1000
        WHERE next_attempt_at_ms IS NOT NULL;
    `,
  },
  {
    version: 10,
    name: "cycle disputes (SQLite migration 13)",
    sql: `
      CREATE TABLE cycle_disputes (
        cycle_id     BIGINT  NOT NULL,
        asset        TEXT    NOT NULL,
        debtor       TEXT    NOT NULL,
        position     BIGINT  NOT NULL CHECK (position >= 0),
        status       TEXT    NOT NULL CHECK (status IN ('OPEN', 'UPHELD', 'VOIDED', 'REMOVED', 'DISMISSED')),
        guarantee_id TEXT,
        ${amount("amount", true)},
        opened_tx    TEXT    NOT NULL,
        resolved_tx  TEXT,
        PRIMARY KEY (cycle_id, asset, debtor, position)
      );
      CREATE INDEX cycle_disputes_status ON cycle_disputes (status, cycle_id);
    `,
  },
  {
    version: 11,
    name: "finalization signature (SQLite migration 14)",
    sql: `ALTER TABLE guarantees ADD COLUMN finalization_signature TEXT;`,
  },
];

/** Applies every migration `client`'s database lacks, each in its own transaction under the advisory lock. */
export async function migratePostgres(
  client: PoolClient,
  migrations: readonly PgMigration[] = PG_MIGRATIONS,
): Promise<void> {
  for (const migration of migrations) {
    await client.query("BEGIN");
    try {
      await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
      await client.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
      );
      const done = await client.query("SELECT 1 FROM schema_migrations WHERE version = $1", [
        migration.version,
      ]);
      if (done.rowCount === 0) {
        await client.query(migration.sql);
        await client.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [
          migration.version,
          migration.name,
        ]);
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
  }
}
