export * from "./repositories";
export * from "./store";
export { SqliteStore, type SqliteStoreOptions, BUSY_TIMEOUT_MS } from "./sqlite-store";
export { MIGRATIONS, type Migration } from "./migrations";
export { migrate, appliedMigrations } from "./sqlite-migrate";
export { PostgresStore, type PostgresStoreOptions, PG_POOL_SIZE } from "./postgres-store";
export { migratePostgres } from "./postgres/migrate";
export { LeaseLostError, type LeaseFence, type LeaseState } from "./postgres/leases";
