import type { Database } from "better-sqlite3";
import { type Migration, MIGRATIONS } from "./migrations";

/**
 * Brings the schema up to date (the SQLite side of each migration of migrations.ts). Each pending migration runs in an IMMEDIATE
 * transaction (taking the write lock first, so two processes opening the same
 * file cannot both apply it) and re-checks inside that it is still pending.
 * Returns the versions applied by this call.
 */
export function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
  ) STRICT`);
  const isApplied = db.prepare<[number], { version: number }>(
    "SELECT version FROM schema_migrations WHERE version = ?",
  );
  const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");

  const newestKnown = Math.max(0, ...migrations.map((m) => m.version));
  const newest = db
    .prepare<[], { version: number | null }>("SELECT MAX(version) AS version FROM schema_migrations")
    .get();
  if (newest !== undefined && newest.version !== null && newest.version > newestKnown) {
    throw new Error(
      `database schema version ${newest.version} is newer than this operator knows (${newestKnown}): upgrade the operator`,
    );
  }

  const applied: number[] = [];
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    db.transaction(() => {
      if (isApplied.get(migration.version)) return;
      if (migration.sqlite !== null) db.exec(migration.sqlite);
      record.run(migration.version, migration.name, Math.floor(Date.now() / 1000));
      applied.push(migration.version);
    }).immediate();
  }
  return applied;
}

/** Versions recorded in `schema_migrations`, ascending. */
export function appliedMigrations(db: Database): number[] {
  return db
    .prepare<[], { version: number }>("SELECT version FROM schema_migrations ORDER BY version")
    .all()
    .map((row) => row.version);
}
