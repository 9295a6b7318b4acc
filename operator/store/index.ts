export * from "./repositories";
export * from "./store";
export { SqliteStore, type SqliteStoreOptions, BUSY_TIMEOUT_MS } from "./sqlite-store";
export { MIGRATIONS, type Migration } from "./migrations";
export { migrate, appliedMigrations } from "./sqlite-migrate";
