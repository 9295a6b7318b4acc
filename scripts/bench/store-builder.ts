/**
 * What the query builder costs per operation (docs/store.md "Query builder"): one read and one upsert of
 * `operator_state` on an in-memory SQLite database, 3 rounds of N calls each, three ways:
 *   hand-written  a prepared better-sqlite3 statement, called synchronously (the per-engine code before);
 *   engine        Kysely compiles, the store's engine runs it on its connection (statement cached by text);
 *   kysely-driver Kysely's own SqliteDialect executes on the same connection (`.execute()`).
 * Prints the median µs per call of each. `npx ts-node --transpile-only scripts/bench/store-builder.ts [N]`
 */
import BetterSqlite3 from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { migrate } from "../../operator/store/sqlite-migrate";
import { sqliteEngine } from "../../operator/store/sql/engine";
import { OperatorState } from "../../operator/store/sql/operator-state";
import type { Schema } from "../../operator/store/sql/schema";

const N = Number(process.argv[2] ?? 20_000);

async function time(label: string, body: (i: number) => unknown): Promise<void> {
  const rounds: number[] = [];
  for (let round = 0; round < 3; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < N; i++) await body(i);
    rounds.push(Number(process.hrtime.bigint() - start) / 1000 / N);
  }
  rounds.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(28)} ${rounds[1].toFixed(2)} µs/call (rounds ${rounds.map((r) => r.toFixed(2)).join(", ")})`,
  );
}

async function main(): Promise<void> {
  const db = new BetterSqlite3(":memory:");
  migrate(db);
  const get = db.prepare("SELECT value FROM operator_state WHERE key = ?");
  const put = db.prepare(
    "INSERT INTO operator_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
  );
  const unified = new OperatorState(sqliteEngine(db));
  const kysely = new Kysely<Schema>({ dialect: new SqliteDialect({ database: db }) });
  for (let pass = 0; pass < 2; pass++) {
    console.log(pass === 0 ? "warm-up" : `N = ${N}`);
    await time("hand-written read", (i) => get.get(`k${i % 100}`));
    await time("engine read", (i) => unified.getOperatorState(`k${i % 100}`));
    await time("kysely-driver read", (i) =>
      kysely
        .selectFrom("operator_state")
        .select("value")
        .where("key", "=", `k${i % 100}`)
        .executeTakeFirst(),
    );
    await time("hand-written upsert", (i) => put.run(`k${i % 100}`, `v${i}`));
    await time("engine upsert", (i) => unified.setOperatorState(`k${i % 100}`, `v${i}`));
    await time("kysely-driver upsert", (i) =>
      kysely
        .insertInto("operator_state")
        .values({ key: `k${i % 100}`, value: `v${i}` })
        .onConflict((c) => c.column("key").doUpdateSet({ value: `v${i}` }))
        .execute(),
    );
  }
  await kysely.destroy();
}

void main();
