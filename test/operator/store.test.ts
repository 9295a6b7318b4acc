import { expect } from "chai";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import BetterSqlite3 from "better-sqlite3";
import { appliedMigrations, MIGRATIONS, migrate, SqliteStore } from "../../operator/store";
import { T0, tempDir } from "./helpers";

const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const ASSET = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

const LOCK_WORKER = join(__dirname, "lock-worker.ts");

// Backend-independent behaviour is in test/store/contract.ts; these tests are SQLite-specific.
describe("operator store (SQLite)", () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;
  const opened: SqliteStore[] = [];

  function open(): SqliteStore {
    const store = SqliteStore.open(file);
    opened.push(store);
    return store;
  }

  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, "nested", "operator.sqlite");
  });

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    dir.remove();
  });

  describe("migrations", () => {
    it("apply once and are idempotent across reopen", async () => {
      const first = open();
      await first.collateral.creditDeposit(USER, ASSET, 5n, T0);
      await first.close();

      const second = open();
      expect((await second.collateral.getCollateral(USER, ASSET)).deposited).to.equal(5n);
      await second.close();

      const db = new BetterSqlite3(file);
      try {
        expect(appliedMigrations(db)).to.deep.equal(MIGRATIONS.map((m) => m.version));
        expect(migrate(db)).to.deep.equal([]);
        expect(db.pragma("journal_mode", { simple: true })).to.equal("wal");
      } finally {
        db.close();
      }
    });

    it("a failing migration leaves no trace and later ones are not applied", () => {
      const db = new BetterSqlite3(join(dir.path, "m.sqlite"));
      try {
        const broken = [
          { version: 1, name: "ok", sqlite: "CREATE TABLE a (x INTEGER) STRICT;" },
          {
            version: 2,
            name: "broken",
            sqlite: "CREATE TABLE b (x INTEGER) STRICT; INSERT INTO nowhere VALUES (1);",
          },
          { version: 3, name: "after", sqlite: "CREATE TABLE c (x INTEGER) STRICT;" },
        ].map((m) => ({ ...m, postgres: null, legacyPostgres: [] }));
        expect(() => migrate(db, broken)).to.throw(/nowhere/);
        expect(appliedMigrations(db)).to.deep.equal([1]);
        const tables = db
          .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
          .pluck()
          .all();
        expect(tables).to.deep.equal(["a", "schema_migrations"]);
      } finally {
        db.close();
      }
    });

    it("refuses a database migrated by a newer operator", () => {
      const db = new BetterSqlite3(join(dir.path, "newer.sqlite"));
      try {
        migrate(db);
        db.prepare("INSERT INTO schema_migrations VALUES (999, 'future', 0)").run();
        expect(() => migrate(db)).to.throw(/newer than this operator/);
      } finally {
        db.close();
      }
    });
  });

  describe("collateral across threads", () => {
    it("parallel locks from worker threads (own connections) never exceed capacity", async function () {
      this.timeout(60_000);
      const setup = open();
      await setup.collateral.creditDeposit(USER, ASSET, 1000n, T0);
      const workers = [3n, 5n, 7n, 11n].map(
        (amount) =>
          new Promise<bigint>((resolve, reject) => {
            // Workers do not inherit Hardhat's ts-node hook: register it before loading the TS worker.
            const bootstrap = `require("ts-node").register({ transpileOnly: true }); require(${JSON.stringify(LOCK_WORKER)});`;
            const worker = new Worker(bootstrap, {
              eval: true,
              workerData: { file, user: USER, asset: ASSET, amount: amount.toString(), attempts: 150 },
            });
            worker.once("message", (granted: string) => resolve(BigInt(granted)));
            worker.once("error", reject);
            worker.once("exit", (code) => code !== 0 && reject(new Error(`worker exited with ${code}`)));
          }),
      );
      const granted = (await Promise.all(workers)).reduce((sum, amount) => sum + amount, 0n);
      const balance = await setup.collateral.getCollateral(USER, ASSET);
      expect(balance.locked).to.equal(granted);
      expect(balance.locked <= 1000n).to.equal(true);
      // 600 attempts for far more than 1000 units: capacity is exhausted to within one lock.
      expect(1000n - balance.locked < 11n).to.equal(true);
    });
  });
});
