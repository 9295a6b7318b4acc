/**
 * Schema migrations, applied in order at startup. Never edit a released
 * migration: add a new one. Each runs in its own transaction together with
 * its row in `schema_migrations`, so a failed migration leaves no trace.
 *
 * Amounts are TEXT holding unsigned decimal integers (up to 2^256 − 1, which
 * no SQLite numeric type holds exactly); the CHECKs keep anything else out.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** SQL CHECK body: `column` is a canonical unsigned decimal integer string. */
function decimal(column: string): string {
  return `CHECK (${column} GLOB '[0-9]*' AND ${column} NOT GLOB '*[^0-9]*' AND (${column} = '0' OR ${column} NOT GLOB '0*') AND length(${column}) <= 78)`;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "auth, collateral and guarantees",
    sql: `
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
  },
];
