/**
 * The schema's one migration history, for both engines, applied in order at open (SQLite:
 * sqlite-migrate.ts; PostgreSQL: postgres/migrate.ts). Never edit a released migration: add a new one.
 * Each runs in its own transaction together with its row in `schema_migrations`, so a failed migration
 * leaves no trace. A change is one migration with each engine's DDL side by side; `null` where an engine
 * has nothing to do (its schema already has the change: PostgreSQL support began at migration 6, whose
 * schema its migration 1 creates at once).
 *
 * Types per engine: SQLite amounts are TEXT holding unsigned decimal integers (up to 2^256 − 1, which no
 * SQLite numeric type holds exactly; the CHECKs keep anything else out); PostgreSQL amounts are
 * NUMERIC(78, 0) (every uint256 exactly, never negative: the CHECKs), so the database itself can sum them
 * (netting in SQL), and unix-second times and block numbers are BIGINT.
 *
 * Until this list was one, PostgreSQL had its own numbering (1–10 for what is 1–13 here);
 * `legacyPostgres` names the old PostgreSQL versions each migration replaces, and a PostgreSQL database
 * still in the old numbering is renumbered once at open (postgres/migrate.ts).
 */
export interface Migration {
  version: number;
  name: string;
  /** SQLite's DDL, or null when SQLite has nothing to do. */
  sqlite: string | null;
  /** PostgreSQL's DDL, or null when PostgreSQL has nothing to do. */
  postgres: string | null;
  /** The versions of PostgreSQL's former numbering whose changes this one holds (all must be applied). */
  legacyPostgres: readonly number[];
}

/** SQL CHECK body: `column` is a canonical unsigned decimal integer string. */
function decimal(column: string): string {
  return `CHECK (${column} GLOB '[0-9]*' AND ${column} NOT GLOB '*[^0-9]*' AND (${column} = '0' OR ${column} NOT GLOB '0*') AND length(${column}) <= 78)`;
}

/** PostgreSQL column: an amount (NUMERIC(78, 0), never negative). */
const amount = (column: string, nullable = false) =>
  `${column} NUMERIC(78, 0) ${nullable ? "" : "NOT NULL"} CHECK (${column} >= 0)`;

/** Every guarantee state (docs/protocol.md, "Guarantee lifecycle"); migration 2 widens the CHECK to all of them. */
const ALL_STATES =
  "'PENDING_VALIDATION', 'FINALIZED_PAYABLE', 'DISPUTED', 'CANCELLED', 'NETTED', 'SETTLED', 'REMUNERATED', 'DEFAULT_REMUNERATED'";

const GUARANTEE_COLUMNS =
  "guarantee_id, seq, version, user_address, recipient_address, req_id, amount, asset_address, timestamp, " +
  "policy, scheme, signature, certificate_claims, certificate_signature, state, created_at, updated_at";

/**
 * Migration 2 (docs/operator-async.md). SQLite cannot change a CHECK constraint in place, so the
 * guarantees table is rebuilt with the full lifecycle's states and three columns:
 * `cycle_id` (the cycle the guarantee is planned in / netted in), `excluded_reason` (why the
 * scheduler must not net it, e.g. consumed on chain) and `validation_request_hash` (V2, filled by
 * the lifecycle task). The other tables hold what the chain indexer and the clearing scheduler need.
 */
const ASYNC_SCHEMA_SQL = `
  CREATE TABLE guarantees_rebuilt (
    guarantee_id          TEXT    PRIMARY KEY,
    seq                   INTEGER NOT NULL UNIQUE,
    version               INTEGER NOT NULL CHECK (version IN (1, 2)),
    user_address          TEXT    NOT NULL,
    recipient_address     TEXT    NOT NULL,
    req_id                TEXT    NOT NULL ${decimal("req_id")},
    amount                TEXT    NOT NULL ${decimal("amount")},
    asset_address         TEXT    NOT NULL,
    timestamp             INTEGER NOT NULL,
    policy                TEXT,
    scheme                TEXT    NOT NULL CHECK (scheme IN ('eip712', 'eip191')),
    signature             TEXT    NOT NULL,
    certificate_claims    TEXT    NOT NULL,
    certificate_signature TEXT    NOT NULL,
    state                 TEXT    NOT NULL CHECK (state IN (${ALL_STATES})),
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL,
    cycle_id              INTEGER,
    excluded_reason       TEXT,
    validation_request_hash TEXT
  ) STRICT;
  INSERT INTO guarantees_rebuilt (${GUARANTEE_COLUMNS}) SELECT ${GUARANTEE_COLUMNS} FROM guarantees;
  DROP TABLE guarantees;
  ALTER TABLE guarantees_rebuilt RENAME TO guarantees;
  CREATE INDEX guarantees_recipient ON guarantees (recipient_address, seq);
  CREATE INDEX guarantees_user ON guarantees (user_address, seq);
  CREATE INDEX guarantees_state ON guarantees (state, seq);
  CREATE INDEX guarantees_cycle ON guarantees (cycle_id, user_address, asset_address);
  CREATE INDEX guarantees_request_hash ON guarantees (validation_request_hash);

  -- The indexer's position: the last block whose logs are applied (one row).
  CREATE TABLE chain_cursor (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    block_number    INTEGER NOT NULL,
    block_hash      TEXT    NOT NULL,
    block_timestamp INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
  ) STRICT;
  -- Hashes of processed blocks (batch ends and blocks with events): where a reorg is detected and rewound to.
  CREATE TABLE chain_blocks (
    block_number    INTEGER PRIMARY KEY,
    block_hash      TEXT    NOT NULL,
    block_timestamp INTEGER NOT NULL
  ) STRICT;
  -- Journal of applied logs, keyed by (tx hash, log index), with the inverse of what each changed.
  CREATE TABLE chain_events (
    tx_hash         TEXT    NOT NULL,
    log_index       INTEGER NOT NULL,
    block_number    INTEGER NOT NULL,
    block_hash      TEXT    NOT NULL,
    block_timestamp INTEGER NOT NULL,
    contract        TEXT    NOT NULL,
    name            TEXT    NOT NULL,
    args            TEXT    NOT NULL,
    undo            TEXT    NOT NULL,
    applied_at      INTEGER NOT NULL,
    PRIMARY KEY (tx_hash, log_index)
  ) STRICT;
  CREATE INDEX chain_events_block ON chain_events (block_number, log_index);

  CREATE TABLE cycles (
    cycle_id         INTEGER PRIMARY KEY CHECK (cycle_id >= 1),
    state            TEXT    NOT NULL CHECK (state IN ('PLANNED', 'SENT', 'COMMITTED', 'FINALIZED')),
    root             TEXT    NOT NULL,
    tree_dump        TEXT    NOT NULL,
    args             TEXT    NOT NULL,
    guarantee_ids    TEXT    NOT NULL,
    cutoff           INTEGER NOT NULL,
    planned_at       INTEGER NOT NULL,
    tx_hash          TEXT,
    tx_nonce         INTEGER,
    raw_tx           TEXT,
    sent_at          INTEGER,
    committed_block  INTEGER,
    committed_at     INTEGER,
    payment_deadline INTEGER,
    default_deadline INTEGER,
    finalized_at     INTEGER
  ) STRICT;
  CREATE INDEX cycles_state ON cycles (state);

  CREATE TABLE cycle_debts (
    cycle_id    INTEGER NOT NULL,
    asset       TEXT    NOT NULL,
    debtor      TEXT    NOT NULL,
    amount      TEXT    NOT NULL ${decimal("amount")},
    status      TEXT    NOT NULL CHECK (status IN ('OPEN', 'PAID', 'COVERED')),
    covered     TEXT    ${decimal("covered")},
    resolved_tx TEXT,
    PRIMARY KEY (cycle_id, asset, debtor)
  ) STRICT;
  CREATE INDEX cycle_debts_status ON cycle_debts (status, cycle_id);

  CREATE TABLE cycle_claims (
    cycle_id    INTEGER NOT NULL,
    asset       TEXT    NOT NULL,
    participant TEXT    NOT NULL,
    amount      TEXT    NOT NULL ${decimal("amount")},
    tx_hash     TEXT    NOT NULL,
    PRIMARY KEY (cycle_id, asset, participant)
  ) STRICT;

  CREATE TABLE withdrawals (
    withdrawal_id  INTEGER PRIMARY KEY,
    user_address   TEXT    NOT NULL,
    asset_address  TEXT    NOT NULL,
    amount         TEXT    NOT NULL ${decimal("amount")},
    finalizable_at INTEGER NOT NULL,
    requested_at   INTEGER NOT NULL,
    state          TEXT    NOT NULL CHECK (state IN ('PENDING', 'CANCELLED', 'FINALIZED')),
    paid           TEXT    ${decimal("paid")},
    closed_at      INTEGER
  ) STRICT;
  CREATE INDEX withdrawals_user ON withdrawals (user_address, asset_address, state);

  CREATE TABLE validation_responses (
    tx_hash         TEXT    NOT NULL,
    log_index       INTEGER NOT NULL,
    request_hash    TEXT    NOT NULL,
    validator       TEXT    NOT NULL,
    agent_id        TEXT    NOT NULL,
    response        INTEGER NOT NULL,
    tag             TEXT    NOT NULL,
    block_number    INTEGER NOT NULL,
    block_timestamp INTEGER NOT NULL,
    PRIMARY KEY (tx_hash, log_index)
  ) STRICT;
  CREATE INDEX validation_responses_request ON validation_responses (request_hash, validator, block_number, log_index);

  -- Small durable settings of the background tasks (e.g. the clearing scheduler's last cutoff).
  CREATE TABLE operator_state (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT;
`;

/** Migration 3: the webhook outbox (docs/webhooks.md). */
const WEBHOOK_SCHEMA_SQL = `
  CREATE TABLE webhook_subscriptions (
    id          TEXT    PRIMARY KEY,
    url         TEXT    NOT NULL,
    secret      TEXT    NOT NULL,
    event_types TEXT    NOT NULL,
    description TEXT,
    source      TEXT    NOT NULL CHECK (source IN ('config', 'api')),
    created_at  INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE webhook_events (
    id           TEXT    PRIMARY KEY,
    type         TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    payload      TEXT    NOT NULL,
    retracted_at INTEGER
  ) STRICT;

  CREATE TABLE webhook_deliveries (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id         TEXT    NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    subscription_id  TEXT    NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    status           TEXT    NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'cancelled')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER,
    last_attempt_at  INTEGER,
    last_error       TEXT,
    last_status_code INTEGER,
    delivered_at     INTEGER,
    created_at       INTEGER NOT NULL,
    UNIQUE (event_id, subscription_id)
  ) STRICT;
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
  CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, seq);
`;

const POSTGRES_SCHEMA_OF_MIGRATIONS_1_TO_6 = `
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
        state                 TEXT    NOT NULL CHECK (state IN (${ALL_STATES})),
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
    `;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "auth, collateral and guarantees",
    sqlite: `
      CREATE TABLE siwe_nonces (
        nonce      TEXT    PRIMARY KEY,
        address    TEXT    NOT NULL,
        issued_at  INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at    INTEGER
      ) STRICT;
      CREATE INDEX siwe_nonces_expires_at ON siwe_nonces (expires_at);

      CREATE TABLE refresh_tokens (
        token_hash   TEXT    PRIMARY KEY,
        family_id    TEXT    NOT NULL,
        wallet       TEXT    NOT NULL,
        scopes       TEXT    NOT NULL,
        issued_at    INTEGER NOT NULL,
        expires_at   INTEGER NOT NULL,
        rotated_from TEXT    REFERENCES refresh_tokens (token_hash),
        rotated_at   INTEGER,
        revoked_at   INTEGER
      ) STRICT;
      CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

      CREATE TABLE collateral (
        user_address       TEXT    NOT NULL,
        asset_address      TEXT    NOT NULL,
        deposited          TEXT    NOT NULL DEFAULT '0' ${decimal("deposited")},
        locked             TEXT    NOT NULL DEFAULT '0' ${decimal("locked")},
        pending_withdrawal TEXT    NOT NULL DEFAULT '0' ${decimal("pending_withdrawal")},
        updated_at         INTEGER NOT NULL,
        PRIMARY KEY (user_address, asset_address)
      ) STRICT;

      CREATE TABLE guarantees (
        guarantee_id          TEXT    PRIMARY KEY,
        -- Insertion order for stable pagination cursors (rowid may change on VACUUM).
        seq                   INTEGER NOT NULL UNIQUE,
        version               INTEGER NOT NULL CHECK (version IN (1, 2)),
        user_address          TEXT    NOT NULL,
        recipient_address     TEXT    NOT NULL,
        req_id                TEXT    NOT NULL ${decimal("req_id")},
        amount                TEXT    NOT NULL ${decimal("amount")},
        asset_address         TEXT    NOT NULL,
        timestamp             INTEGER NOT NULL,
        policy                TEXT,
        scheme                TEXT    NOT NULL CHECK (scheme IN ('eip712', 'eip191')),
        signature             TEXT    NOT NULL,
        certificate_claims    TEXT    NOT NULL,
        certificate_signature TEXT    NOT NULL,
        state                 TEXT    NOT NULL
          CHECK (state IN ('PENDING_VALIDATION', 'FINALIZED_PAYABLE', 'DISPUTED', 'CANCELLED')),
        created_at            INTEGER NOT NULL,
        updated_at            INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX guarantees_recipient ON guarantees (recipient_address, seq);
      CREATE INDEX guarantees_user ON guarantees (user_address, seq);
      CREATE INDEX guarantees_state ON guarantees (state);
    `,
    postgres: POSTGRES_SCHEMA_OF_MIGRATIONS_1_TO_6,
    legacyPostgres: [1],
  },
  {
    version: 2,
    name: "chain indexer, clearing cycles, withdrawals, V2 lifecycle",
    sqlite: ASYNC_SCHEMA_SQL,
    postgres: null,
    legacyPostgres: [1],
  },
  {
    version: 3,
    name: "webhook outbox",
    sqlite: WEBHOOK_SCHEMA_SQL,
    postgres: null,
    legacyPostgres: [1],
  },
  {
    // Issue 17: cycles carry challenge and answer deadlines and can be VETOED; debts can be challenged,
    // answered, voided and refunded. SQLite cannot change a CHECK: both tables are rebuilt.
    version: 4,
    name: "challenge windows, vetoed cycles, challenged debts",
    sqlite: `
      CREATE TABLE cycles_v4 (
        cycle_id           INTEGER PRIMARY KEY CHECK (cycle_id >= 1),
        state              TEXT    NOT NULL
          CHECK (state IN ('PLANNED', 'SENT', 'COMMITTED', 'FINALIZED', 'VETOED')),
        root               TEXT    NOT NULL,
        tree_dump          TEXT    NOT NULL,
        args               TEXT    NOT NULL,
        guarantee_ids      TEXT    NOT NULL,
        cutoff             INTEGER NOT NULL,
        planned_at         INTEGER NOT NULL,
        tx_hash            TEXT,
        tx_nonce           INTEGER,
        raw_tx             TEXT,
        sent_at            INTEGER,
        committed_block    INTEGER,
        committed_at       INTEGER,
        payment_deadline   INTEGER,
        default_deadline   INTEGER,
        finalized_at       INTEGER,
        challenge_deadline INTEGER,
        answer_deadline    INTEGER,
        vetoed_at          INTEGER
      ) STRICT;
      INSERT INTO cycles_v4 (cycle_id, state, root, tree_dump, args, guarantee_ids, cutoff, planned_at, tx_hash,
          tx_nonce, raw_tx, sent_at, committed_block, committed_at, payment_deadline, default_deadline, finalized_at)
        SELECT cycle_id, state, root, tree_dump, args, guarantee_ids, cutoff, planned_at, tx_hash,
          tx_nonce, raw_tx, sent_at, committed_block, committed_at, payment_deadline, default_deadline, finalized_at
        FROM cycles;
      DROP TABLE cycles;
      ALTER TABLE cycles_v4 RENAME TO cycles;
      CREATE INDEX cycles_state ON cycles (state);

      CREATE TABLE cycle_debts_v4 (
        cycle_id    INTEGER NOT NULL,
        asset       TEXT    NOT NULL,
        debtor      TEXT    NOT NULL,
        amount      TEXT    NOT NULL ${decimal("amount")},
        status      TEXT    NOT NULL
          CHECK (status IN ('OPEN', 'PAID', 'COVERED', 'CHALLENGED', 'ANSWERED', 'VOIDED', 'REFUNDED')),
        covered     TEXT    ${decimal("covered")},
        resolved_tx TEXT,
        PRIMARY KEY (cycle_id, asset, debtor)
      ) STRICT;
      INSERT INTO cycle_debts_v4 SELECT cycle_id, asset, debtor, amount, status, covered, resolved_tx FROM cycle_debts;
      DROP TABLE cycle_debts;
      ALTER TABLE cycle_debts_v4 RENAME TO cycle_debts;
      CREATE INDEX cycle_debts_status ON cycle_debts (status, cycle_id);
    `,
    postgres: null,
    legacyPostgres: [1],
  },
  {
    // A cycle committed on chain that Core did not plan (the operator key used outside Core) is indexed
    // from its events like any other (docs/clearing.md, "A cycle Core did not plan"); 0 marks it.
    version: 5,
    name: "cycles Core did not plan",
    sqlite: `
      ALTER TABLE cycles ADD COLUMN planned_by_core INTEGER NOT NULL DEFAULT 1 CHECK (planned_by_core IN (0, 1));
    `,
    postgres: null,
    legacyPostgres: [1],
  },
  {
    // Sellers' on-chain reserves (Vault.registerReserve): a row exists while the Vault holds the reserve,
    // from ReserveRegistered to ReserveReleased (docs/operator-async.md, "Seller's reserves"). Version 5
    // (cycles Core did not plan) was developed alongside; the runner applies each missing version in
    // order, so a database that got 6 first gets 5 later.
    version: 6,
    name: "sellers' on-chain reserves",
    sqlite: `
      CREATE TABLE reserves (
        guarantee_id  TEXT    PRIMARY KEY,
        user_address  TEXT    NOT NULL,
        asset_address TEXT    NOT NULL,
        recipient     TEXT    NOT NULL,
        amount        TEXT    NOT NULL ${decimal("amount")},
        expires_at    INTEGER NOT NULL,
        tx_hash       TEXT    NOT NULL,
        block_number  INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX reserves_user ON reserves (user_address, asset_address);
    `,
    postgres: null,
    legacyPostgres: [1],
  },
  {
    // The V2 ids each committed cycle marked netted in the Vault (Vault.GuaranteeNetted, one row per log),
    // so that a cycle Core did not plan names them (docs/clearing.md, "A cycle Core did not plan").
    version: 7,
    name: "V2 ids netted by committed cycles",
    sqlite: `
      CREATE TABLE v2_nettings (
        guarantee_id TEXT    PRIMARY KEY,
        cycle_id     INTEGER NOT NULL,
        tx_hash      TEXT    NOT NULL,
        log_index    INTEGER NOT NULL,
        block_number INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX v2_nettings_cycle ON v2_nettings (cycle_id);
    `,
    postgres: `
      CREATE TABLE IF NOT EXISTS v2_nettings (
        guarantee_id TEXT   PRIMARY KEY,
        cycle_id     BIGINT NOT NULL,
        tx_hash      TEXT   NOT NULL,
        log_index    BIGINT NOT NULL,
        block_number BIGINT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS v2_nettings_cycle ON v2_nettings (cycle_id);
      -- Leader leases of replicas on one database (docs/scale-out.md, "Leader lease and fencing"): one row per
      -- lease name; times are the database's own clock in unix milliseconds, so replicas' clocks never meet.
      CREATE TABLE IF NOT EXISTS leader_leases (
        name           TEXT   PRIMARY KEY,
        holder         TEXT   NOT NULL,
        token          BIGINT NOT NULL CHECK (token > 0),
        acquired_at_ms BIGINT NOT NULL,
        expires_at_ms  BIGINT NOT NULL
      );
    `,
    legacyPostgres: [2, 3],
  },
  {
    // V1 reserves (Vault.V1ReserveRegistered; docs/contracts.md "Seller's V1 reserve"): they never expire, so
    // the keeper must not call releaseReserve on them at expires_at (which holds their collectableAt), and
    // the scheduler lists their ids in the commit's nettedV2Ids (docs/clearing.md, "Reserved V1 ids").
    version: 8,
    name: "V1 reserves",
    sqlite: `
      ALTER TABLE reserves ADD COLUMN v1 INTEGER NOT NULL DEFAULT 0 CHECK (v1 IN (0, 1));
    `,
    postgres: `
      ALTER TABLE reserves ADD COLUMN IF NOT EXISTS v1 BOOLEAN NOT NULL DEFAULT FALSE;
      -- Paging by recipient in commit-safe order (guarantees.ts, listGuaranteesByRecipient): the id of the
      -- inserting transaction. Rows stored before all get the migration's own id (one transaction), so they
      -- keep their seq order.
      ALTER TABLE guarantees ADD COLUMN IF NOT EXISTS ins_xid xid8 NOT NULL DEFAULT pg_current_xact_id();
      CREATE INDEX IF NOT EXISTS guarantees_recipient_xid ON guarantees (recipient_address, ins_xid, seq);
      DROP INDEX IF EXISTS guarantees_recipient;
    `,
    legacyPostgres: [4, 5],
  },
  {
    // Clearing in the database (docs/clearing.md "Netting in the database"): each guarantee's leaf in its
    // cycle's guarantees root, computed once when it is stored (null for the rows stored before: the plan
    // hashes their fields itself), and the cycle index made partial (only assigned guarantees: issuance never
    // writes it), ordered by seq (a reservation appends to it) and covering everything a cycle's plan
    // reads, so that planning never reads the ≈ 800-byte rows (signatures, certificates).
    version: 9,
    name: "guarantee leaf hashes, covering cycle index",
    sqlite: `
      ALTER TABLE guarantees ADD COLUMN leaf_hash BLOB CHECK (leaf_hash IS NULL OR length(leaf_hash) = 32);
      DROP INDEX guarantees_cycle;
      CREATE INDEX guarantees_cycle ON guarantees
        (cycle_id, seq, asset_address, user_address, recipient_address, amount, version, guarantee_id, leaf_hash)
        WHERE cycle_id IS NOT NULL;
    `,
    postgres: `
      ALTER TABLE guarantees ADD COLUMN leaf_hash BYTEA CHECK (leaf_hash IS NULL OR length(leaf_hash) = 32);
      DROP INDEX guarantees_cycle;
      CREATE INDEX guarantees_cycle ON guarantees (cycle_id, seq) WHERE cycle_id IS NOT NULL;
    `,
    legacyPostgres: [6],
  },
  {
    // Reservation by key range (docs/clearing.md "Netting in the database"): a guarantee gets a payable key
    // from a counter each time it enters the pool (stored payable, finalized, returned by a veto or an
    // abandoned plan), and a cycle reserves a range of keys (one row in cycle_reservations) instead of
    // writing cycle_id on each guarantee; cycle_id is written when the commit is indexed, together with the
    // state. The pool index covers everything a plan reads; the cycle index is a plain lookup again.
    // Rows payable and unassigned now keep their seq order (keys = seq); reserved rows keep their cycle_id.
    version: 10,
    name: "payable keys, cycle reservations by key range",
    sqlite: `
      ALTER TABLE guarantees ADD COLUMN payable_seq INTEGER;
      UPDATE guarantees SET payable_seq = seq WHERE state = 'FINALIZED_PAYABLE' AND cycle_id IS NULL;
      DROP INDEX guarantees_cycle;
      CREATE INDEX guarantees_cycle ON guarantees (cycle_id, seq) WHERE cycle_id IS NOT NULL;
      CREATE INDEX guarantees_pool ON guarantees
        (payable_seq, asset_address, user_address, recipient_address, amount, version, guarantee_id, leaf_hash)
        WHERE state = 'FINALIZED_PAYABLE' AND cycle_id IS NULL AND excluded_reason IS NULL;
      CREATE TABLE cycle_reservations (
        cycle_id INTEGER PRIMARY KEY CHECK (cycle_id > 0),
        after_seq INTEGER NOT NULL CHECK (after_seq >= 0),
        upto_seq INTEGER NOT NULL,
        CHECK (upto_seq > after_seq)
      ) STRICT;
    `,
    postgres: `
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
    legacyPostgres: [7],
  },
  {
    // Every payable key taken at issuance reads the last reserved range's end (NEXT_PAYABLE_KEY): one row per
    // cycle accumulates, so MAX(upto_seq) must be an index step, not a scan of every cycle's row.
    version: 11,
    name: "index on the end of each reserved range",
    sqlite: `
      CREATE INDEX cycle_reservations_upto ON cycle_reservations (upto_seq);
    `,
    postgres: `
      CREATE INDEX cycle_reservations_upto ON cycle_reservations (upto_xid, upto_seq);
    `,
    legacyPostgres: [8],
  },
  {
    // Webhook retries to the millisecond (docs/webhooks.md): a due time kept in whole seconds let a retry
    // start up to a second before its backoff had run. The column says its unit; rows migrate in place
    // (seconds × 1000: exactly the instant they were due at). Its index follows the rename.
    version: 12,
    name: "webhook due times in milliseconds",
    sqlite: `
      ALTER TABLE webhook_deliveries RENAME COLUMN next_attempt_at TO next_attempt_at_ms;
      UPDATE webhook_deliveries SET next_attempt_at_ms = next_attempt_at_ms * 1000
        WHERE next_attempt_at_ms IS NOT NULL;
    `,
    postgres: `
      ALTER TABLE webhook_deliveries RENAME COLUMN next_attempt_at TO next_attempt_at_ms;
      UPDATE webhook_deliveries SET next_attempt_at_ms = next_attempt_at_ms * 1000
        WHERE next_attempt_at_ms IS NOT NULL;
    `,
    legacyPostgres: [9],
  },
  {
    // The dispute game (docs/clearing.md "Disputes"): one row per disputed position of a debtor's sum tree,
    // from `GuaranteeDisputed` to its `DisputeResolved`, so the keeper answers each open one.
    version: 13,
    name: "cycle disputes",
    sqlite: `
      CREATE TABLE cycle_disputes (
        cycle_id     INTEGER NOT NULL,
        asset        TEXT    NOT NULL,
        debtor       TEXT    NOT NULL,
        position     INTEGER NOT NULL CHECK (position >= 0),
        status       TEXT    NOT NULL CHECK (status IN ('OPEN', 'UPHELD', 'VOIDED', 'REMOVED', 'DISMISSED')),
        guarantee_id TEXT,
        amount       TEXT    ${decimal("amount")},
        opened_tx    TEXT    NOT NULL,
        resolved_tx  TEXT,
        PRIMARY KEY (cycle_id, asset, debtor, position)
      ) STRICT;
      CREATE INDEX cycle_disputes_status ON cycle_disputes (status, cycle_id);
    `,
    postgres: `
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
    legacyPostgres: [10],
  },
  {
    // A payer's finalization of a V2 guarantee as its signature (sdk/finalization.ts; docs/clearing.md
    // "Payer-finalized V2 guarantees"): a dispute answer carries it in place of the validator's verdict.
    version: 14,
    name: "finalization signature",
    sqlite: `ALTER TABLE guarantees ADD COLUMN finalization_signature TEXT;`,
    postgres: `ALTER TABLE guarantees ADD COLUMN finalization_signature TEXT;`,
    legacyPostgres: [],
  },
  {
    // Each delivery attempt's outcome (docs/webhooks.md "Attempts"; the console's delivery page): the
    // delivery row keeps only the latest. Removed with its delivery.
    version: 15,
    name: "webhook attempts",
    sqlite: `
      CREATE TABLE webhook_attempts (
        event_id        TEXT    NOT NULL,
        subscription_id TEXT    NOT NULL,
        attempt         INTEGER NOT NULL CHECK (attempt >= 1),
        at              INTEGER NOT NULL,
        outcome         TEXT    NOT NULL CHECK (outcome IN ('delivered', 'pending', 'failed')),
        status_code     INTEGER,
        error           TEXT,
        PRIMARY KEY (event_id, subscription_id, attempt),
        FOREIGN KEY (event_id, subscription_id)
          REFERENCES webhook_deliveries (event_id, subscription_id) ON DELETE CASCADE
      ) STRICT;
    `,
    postgres: `
      CREATE TABLE webhook_attempts (
        event_id        TEXT    NOT NULL,
        subscription_id TEXT    NOT NULL,
        attempt         INTEGER NOT NULL CHECK (attempt >= 1),
        at              BIGINT  NOT NULL,
        outcome         TEXT    NOT NULL CHECK (outcome IN ('delivered', 'pending', 'failed')),
        status_code     INTEGER,
        error           TEXT,
        PRIMARY KEY (event_id, subscription_id, attempt),
        FOREIGN KEY (event_id, subscription_id)
          REFERENCES webhook_deliveries (event_id, subscription_id) ON DELETE CASCADE
      );
    `,
    legacyPostgres: [],
  },
  {
    // A V2 guarantee's verdict pinned in the Vault (audit H-2; docs/clearing.md "Pinned verdicts"): 'sent'
    // once Core sent `Vault.pinVerdicts` for it, 'pinned' once the indexer applied its `VerdictPinned`.
    version: 16,
    name: "verdict pins",
    sqlite: `ALTER TABLE guarantees ADD COLUMN verdict_pin TEXT CHECK (verdict_pin IN ('sent', 'pinned'));`,
    postgres: `ALTER TABLE guarantees ADD COLUMN verdict_pin TEXT CHECK (verdict_pin IN ('sent', 'pinned'));`,
    legacyPostgres: [],
  },
  {
    // The payable pool waits for a verdict's pin (audit H-2's remaining window; docs/clearing.md "Pinned
    // verdicts"): `verdict_payable_at` (wall clock, unix seconds) is set when the V2 lifecycle makes a
    // guarantee payable on its verdict; unless its payer finalized it, it is in the pool only once the
    // indexer applied its `VerdictPinned`. The partial index is the pool (sql/payable-keys.ts POOL_SQL, the
    // same text). Rows made payable before this migration have none: the pool keeps them as it did.
    version: 17,
    name: "pool waits for verdict pins",
    sqlite: `
      ALTER TABLE guarantees ADD COLUMN verdict_payable_at INTEGER;
      DROP INDEX guarantees_pool;
      CREATE INDEX guarantees_pool ON guarantees
        (payable_seq, asset_address, user_address, recipient_address, amount, version, guarantee_id, leaf_hash)
        WHERE state = 'FINALIZED_PAYABLE' AND cycle_id IS NULL AND excluded_reason IS NULL
          AND (verdict_payable_at IS NULL OR finalization_signature IS NOT NULL OR verdict_pin = 'pinned');
    `,
    postgres: `
      ALTER TABLE guarantees ADD COLUMN verdict_payable_at BIGINT;
      DROP INDEX guarantees_pool;
      CREATE INDEX guarantees_pool ON guarantees (payable_xid, payable_seq)
        WHERE state = 'FINALIZED_PAYABLE' AND cycle_id IS NULL AND excluded_reason IS NULL
          AND (verdict_payable_at IS NULL OR finalization_signature IS NOT NULL OR verdict_pin = 'pinned');
    `,
    legacyPostgres: [],
  },
  {
    // When Core last sent a verdict's pin (wall clock, unix seconds): a pin still not indexed some time after
    // is sent again (lifecycle/verdict-pins.ts). The partial index holds the guarantees payable on their
    // verdict and waiting for the pin's indexing (sql/payable-keys.ts PIN_AWAITED_SQL, the same text), oldest
    // first: the health check `verdict_pins` reads its first entry.
    version: 18,
    name: "verdict pin resends",
    sqlite: `
      ALTER TABLE guarantees ADD COLUMN verdict_pin_at INTEGER;
      CREATE INDEX guarantees_pin_wait ON guarantees (verdict_payable_at)
        WHERE state = 'FINALIZED_PAYABLE' AND (verdict_payable_at IS NOT NULL AND finalization_signature IS NULL
          AND (verdict_pin IS NULL OR verdict_pin <> 'pinned'));
    `,
    postgres: `
      ALTER TABLE guarantees ADD COLUMN verdict_pin_at BIGINT;
      CREATE INDEX guarantees_pin_wait ON guarantees (verdict_payable_at)
        WHERE state = 'FINALIZED_PAYABLE' AND (verdict_payable_at IS NOT NULL AND finalization_signature IS NULL
          AND (verdict_pin IS NULL OR verdict_pin <> 'pinned'));
    `,
    legacyPostgres: [],
  },
  {
    // Every issuance inserts a guarantee row and an entry in each of the table's indexes (docs/store.md
    // "The guarantees table's indexes"). No query looks a guarantee up by its validation request hash (the
    // column is only written, by the V2 lifecycle, and read with its row), so its index was kept up to date
    // on every insert for nothing.
    version: 19,
    name: "no index on the validation request hash",
    sqlite: `DROP INDEX IF EXISTS guarantees_request_hash;`,
    postgres: `DROP INDEX IF EXISTS guarantees_request_hash;`,
    legacyPostgres: [],
  },
];
