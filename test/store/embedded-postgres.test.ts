import { expect } from "chai";
import { Client } from "pg";
import { startTestPostgres, type TestPostgres } from "../support/embedded-postgres";

describe("test harness: embedded PostgreSQL", function () {
  this.timeout(60_000);
  let server: TestPostgres | undefined;

  after(async () => {
    await server?.stop();
  });

  it("starts PostgreSQL 18 on a free port, gives each test its own database, and stops it", async () => {
    server = await startTestPostgres();
    const url = await server.createDatabase("harness_check");
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ version: string; db: string }>(
        "SELECT current_setting('server_version_num') AS version, current_database() AS db",
      );
      expect(Number(rows[0].version)).to.be.at.least(180000);
      expect(rows[0].db).to.equal("harness_check");
    } finally {
      await client.end();
    }
    await server.dropDatabase("harness_check");
    const port = server.port;
    await server.stop();
    server = undefined;
    const probe = new Client({ connectionString: `postgres://postgres:x@127.0.0.1:${port}/postgres` });
    let refused: unknown;
    await probe.connect().catch((error) => (refused = error));
    expect(String(refused)).to.match(/ECONNREFUSED/);
  });
});
