/**
 * Applies the schema's migration history (../migrations.ts, the PostgreSQL side of each) at open, versioned
 * in `schema_migrations`. Each runs in its own transaction together with its `schema_migrations` row,
 * under a transaction-scoped advisory lock, so replicas starting together apply each exactly once and a
 * failed migration leaves no trace.
 */
import type { PoolClient } from "pg";
import { type Migration, MIGRATIONS } from "../migrations";

/** Key of the advisory lock migrations hold (any constant; "surety" in ASCII). */
export const MIGRATION_LOCK_KEY = 0x737572657479;

/** The name version 1 had in PostgreSQL's former numbering (never edited, so it marks that numbering). */
export const LEGACY_POSTGRES_V1_NAME = "the schema of SQLite migrations 1-6";

/** Applies every migration `client`'s database lacks, each in its own transaction under the advisory lock. */
export async function migratePostgres(
  client: PoolClient,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<void> {
  await locked(client, async () => {
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    await renumberLegacy(client);
  });
  for (const migration of migrations) {
    await locked(client, async () => {
      const done = await client.query("SELECT 1 FROM schema_migrations WHERE version = $1", [
        migration.version,
      ]);
      if (done.rowCount !== 0) return;
      if (migration.postgres !== null) await client.query(migration.postgres);
      await client.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [
        migration.version,
        migration.name,
      ]);
    });
  }
}

/**
 * A database migrated before the history was one (PostgreSQL versions 1–10) gets its rows in this
 * numbering: each migration whose former versions (`legacyPostgres`) are all applied is recorded as
 * applied (when its former versions were), the others stay pending. A former version applied alone of
 * two that share a migration (2 without 3, 4 without 5) leaves that migration pending: its PostgreSQL DDL
 * is idempotent for that reason.
 */
async function renumberLegacy(client: PoolClient): Promise<void> {
  const first = await client.query<{ name: string }>("SELECT name FROM schema_migrations WHERE version = 1");
  if (first.rows[0]?.name !== LEGACY_POSTGRES_V1_NAME) return;
  const { rows } = await client.query<{ version: number; applied_at: Date }>(
    "SELECT version, applied_at FROM schema_migrations",
  );
  const appliedAt = new Map(rows.map((row) => [row.version, row.applied_at]));
  await client.query("DELETE FROM schema_migrations");
  for (const migration of MIGRATIONS) {
    const former = migration.legacyPostgres.map((version) => appliedAt.get(version));
    if (former.length === 0 || former.some((at) => at === undefined)) continue;
    const last = new Date(Math.max(...former.map((at) => (at as Date).getTime())));
    await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
      migration.version,
      migration.name,
      last,
    ]);
  }
}

/** Runs `body` in one transaction holding the migrations' advisory lock. */
async function locked(client: PoolClient, body: () => Promise<void>): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    await body();
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}
