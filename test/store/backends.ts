/** The store backends the contract suite (contract.ts) runs against. */
import { join } from "node:path";
import { PostgresStore, SqliteStore } from "../../operator/store";
import { tempDir } from "../operator/helpers";
import { startTestPostgres, type TestPostgres } from "../support/embedded-postgres";
import type { StoreBackend } from "./contract";

/** SQLite: one file in a fresh temp dir; every instance opens its own connection to it. */
export const sqliteBackend: StoreBackend = {
  name: "SQLite",
  serializesWriters: true,
  async create() {
    const dir = tempDir();
    const file = join(dir.path, "operator.sqlite");
    return {
      open: async () => SqliteStore.open(file),
      remove: async () => dir.remove(),
    };
  },
};

let server: Promise<TestPostgres> | undefined;
let databases = 0;

/**
 * PostgreSQL: one embedded server for the whole test run (started on first use, stopped by
 * {@link stopTestPostgresBackend}), a fresh database per test; every instance is its own pool on it.
 */
export const postgresBackend: StoreBackend = {
  name: "PostgreSQL",
  async create() {
    server ??= startTestPostgres();
    const pg = await server;
    const name = `store_contract_${process.pid}_${++databases}`;
    const url = await pg.createDatabase(name);
    return {
      open: async () => PostgresStore.open(url),
      remove: async () => pg.dropDatabase(name),
    };
  },
};

/** Stops the embedded server if a test started it. */
export async function stopTestPostgresBackend(): Promise<void> {
  const running = server;
  server = undefined;
  if (running) await (await running).stop();
}

export const STORE_BACKENDS: readonly StoreBackend[] = [sqliteBackend, postgresBackend];
