/**
 * `bench:clearing --store sqlite|postgres`: clearing in the database (docs/clearing.md "Netting in the
 * database"). Loads N payable guarantees into a real store, then a child process (standing in for Core:
 * the store opened as Core opens it, nothing else) reserves them for a cycle and plans it with
 * `planStoredCycle` (SQL sums, streamed leaf hashes, both roots, commitCycle arguments); it reports wall
 * and CPU time of each step and its own peak RSS. Between runs the reservation is released.
 *
 *   npm run bench:clearing -- --store sqlite 1000000 [participants] [assets] [runs]
 *   npm run bench:clearing -- --store postgres 1000000,10000000 [participants] [assets] [runs]
 *
 * The child runs compiled (this file and its imports built to `dist/` with tsconfig.bench.json, the build of
 * `npm run operator:build`), as `npm run operator:start` runs Core; `BENCH_CHILD_TS_NODE=1` runs it under
 * ts-node instead, as `npm run operator` does (≈ 100 MB more RSS: the TypeScript compiler).
 *
 * `BENCH_RESERVED_V1=K` passes the ids of K of the cycle's V1 guarantees as sellers' reserves, as Core's
 * scheduler passes `listV1ReserveIds()` (docs/clearing.md, "Reserved V1 ids"): the plan then also reads the
 * cycle's ids and lists those K among the V2 ids. Default 0.
 *
 * PostgreSQL: `SURETY_DATABASE_URL` (a database the bench may fill and empty), else an embedded server
 * from test/support (binaries from `npm ci`, temp dir, free port, stopped at the end). Rows are generated
 * on the server (`generate_series`, sha256/md5 of the row number) and on SQLite by the same formulas in
 * JS, so both backends hold the same guarantees and must give the same roots (printed). Secondary
 * indexes are dropped for the load and rebuilt after it (the schema is unchanged), then ANALYZEd.
 */
import { fork, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { getAddress } from "ethers";
import { Client } from "pg";
import { planStoredCycle } from "../../operator/clearing/db-netting";
import { fastKeccak256, keccakBackend } from "../../operator/clearing/native-keccak";
import { GuaranteeLeafHasher } from "../../sdk/guarantee-tree";
import { PostgresStore, SqliteStore, type Store } from "../../operator/store";
import { startTestPostgres, type TestPostgres } from "../../test/support/embedded-postgres";
import { median } from "./stats";

const T = 1_700_000_000;
const CYCLE_ID = 1;
const MAX_AMOUNT = 1_000_000_000_000;
const PAYER_STRIDE = 7919;
const RECIPIENT_STRIDE = 31;
const SQLITE_BATCH = 100_000;
const PG_BATCH = 100_000;
const MB = 1024 * 1024;

type Backend = "sqlite" | "postgres";

interface ChildRequest {
  backend: Backend;
  /** SQLite file or postgres:// URL. */
  location: string;
  runs: number;
  /** How many of the cycle's V1 ids to pass as reserved (BENCH_RESERVED_V1). */
  reservedV1: number;
}

interface ChildReport {
  reserveMs: number[];
  planMs: number[];
  planCpuMs: number[];
  /** CPU of the store's part of the plan alone (scanCycle: sums, V2 ids, leaf hashes handed over). */
  scanCpuMs: number;
  reserveCpuMs: number[];
  reserved: number;
  leaves: number;
  debtors: number;
  v2Ids: number;
  root: string;
  guaranteesRoot: string;
  debitsRoot: string;
  rssAfterOpenMb: number;
  /** Peak RSS when the first plan is done: one cycle's worth (later runs add the earlier ones' garbage). */
  firstPlanMaxRssMb: number;
  maxRssMb: number;
}

const sha256 = (data: Buffer | string): Buffer => createHash("sha256").update(data).digest();

function int8(value: number): Buffer {
  const buf = Buffer.alloc(8);
  buf.writeBigInt64BE(BigInt(value));
  return buf;
}

function participantsOf(count: number): string[] {
  return Array.from({ length: count }, (_, k) =>
    getAddress("0x" + sha256(`participant ${k}`).toString("hex", 0, 20)),
  );
}

function assetsOf(count: number): string[] {
  const assets = ["0x0000000000000000000000000000000000000000"];
  for (let k = 1; k < count; k++) assets.push(getAddress("0x" + sha256(`asset ${k}`).toString("hex", 0, 20)));
  return assets;
}

/** Row `i` (1-based), by the same formulas as the PostgreSQL generator below. */
function rowOf(i: number, participants: string[], assets: string[]) {
  const p = participants.length;
  const payer = (i * PAYER_STRIDE) % p;
  const recipient = (payer + 1 + ((i * RECIPIENT_STRIDE) % (p - 1))) % p;
  const amount =
    (parseInt(createHash("md5").update(String(i)).digest("hex").slice(0, 10), 16) % MAX_AMOUNT) + 1;
  const signature = Buffer.concat([sha256(int8(i)), sha256(int8(-i)), Buffer.from([0x1b])]);
  return {
    id: "0x" + sha256(int8(i)).toString("hex"),
    version: 1 + (i % 2),
    user: participants[payer],
    recipient: participants[recipient],
    amount: String(amount),
    asset: assets[i % assets.length],
    signature: "0x" + signature.toString("hex"),
  };
}

const leafHasher = new GuaranteeLeafHasher(fastKeccak256);

/** Row `i`'s leaf hash, as the store computes it at issuance (column `leaf_hash`). */
function leafHashInto(r: ReturnType<typeof rowOf>, out: Buffer, offset: number): void {
  leafHasher.hashInto(
    {
      guaranteeId: r.id,
      payer: r.user,
      recipient: r.recipient,
      asset: r.asset,
      amount: BigInt(r.amount),
      signature: r.signature,
    },
    out,
    offset,
  );
}

const elapsed = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;

export async function loadSqlite(
  file: string,
  size: number,
  participants: number,
  assetCount: number,
): Promise<void> {
  await (await SqliteStore.open(file)).close();
  const db = new BetterSqlite3(file);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = OFF");
    const indexes = db
      .prepare(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'guarantees' AND sql IS NOT NULL",
      )
      .all() as { name: string; sql: string }[];
    for (const index of indexes) db.exec(`DROP INDEX ${index.name}`);
    const insert = db.prepare(
      `INSERT INTO guarantees (guarantee_id, seq, version, user_address, recipient_address, req_id, amount,
         asset_address, timestamp, policy, scheme, signature, certificate_claims, certificate_signature, state,
         created_at, updated_at, leaf_hash, payable_seq)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ${T}, NULL, 'eip712', ?, '0x01', '0x02', 'FINALIZED_PAYABLE', ${T}, ${T}, ?, ?)`,
    );
    const p = participantsOf(participants);
    const a = assetsOf(assetCount);
    const batch = db.transaction((from: number, to: number) => {
      for (let i = from; i <= to; i++) {
        const r = rowOf(i, p, a);
        const hash = Buffer.allocUnsafe(32);
        leafHashInto(r, hash, 0);
        insert.run(
          r.id,
          i,
          r.version,
          r.user,
          r.recipient,
          String(i),
          r.amount,
          r.asset,
          r.signature,
          hash,
          i,
        );
      }
    });
    for (let from = 1; from <= size; from += SQLITE_BATCH)
      batch(from, Math.min(size, from + SQLITE_BATCH - 1));
    for (const index of indexes) db.exec(index.sql);
    db.exec("ANALYZE");
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}

export async function loadPostgres(
  url: string,
  size: number,
  participants: number,
  assetCount: number,
): Promise<void> {
  await (await PostgresStore.open(url)).close();
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("TRUNCATE guarantees, cycle_reservations");
    await client.query(
      "CREATE TEMP TABLE bench_participants (idx INTEGER PRIMARY KEY, address TEXT NOT NULL)",
    );
    await client.query("CREATE TEMP TABLE bench_assets (idx INTEGER PRIMARY KEY, address TEXT NOT NULL)");
    const p = participantsOf(participants);
    const a = assetsOf(assetCount);
    await client.query("INSERT INTO bench_participants SELECT * FROM unnest($1::int[], $2::text[])", [
      p.map((_, k) => k),
      p,
    ]);
    await client.query("INSERT INTO bench_assets SELECT * FROM unnest($1::int[], $2::text[])", [
      a.map((_, k) => k),
      a,
    ]);
    const { rows: indexes } = await client.query<{ indexname: string; indexdef: string }>(
      `SELECT i.indexname, i.indexdef FROM pg_indexes i
       WHERE i.tablename = 'guarantees' AND NOT EXISTS
         (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    );
    for (const index of indexes) await client.query(`DROP INDEX ${index.indexname}`);
    const hashes = Buffer.allocUnsafe(PG_BATCH * 32);
    for (let from = 1; from <= size; from += PG_BATCH) {
      const to = Math.min(size, from + PG_BATCH - 1);
      // SQL has no keccak256: the leaf hashes of the batch are computed here from the same formulas and
      // sent as one bytea, row i's at offset 32·(i − from).
      for (let i = from; i <= to; i++) leafHashInto(rowOf(i, p, a), hashes, (i - from) * 32);
      await client.query(
        `INSERT INTO guarantees (guarantee_id, version, user_address, recipient_address, req_id, amount, asset_address,
           timestamp, policy, scheme, signature, certificate_claims, certificate_signature, state, created_at, updated_at,
           leaf_hash, payable_xid, payable_seq)
         SELECT '0x' || encode(sha256(int8send(i)), 'hex'), 1 + (i % 2), pp.address, rp.address, i,
           ('x' || substr(md5(i::text), 1, 10))::bit(40)::bigint % ${MAX_AMOUNT} + 1, aa.address, ${T}, NULL, 'eip712',
           '0x' || encode(sha256(int8send(i)) || sha256(int8send(-i)) || '\\x1b'::bytea, 'hex'),
           '0x01', '0x02', 'FINALIZED_PAYABLE', ${T}, ${T}, substring($3::bytea FROM ((i - $1) * 32 + 1)::int FOR 32),
           pg_current_xact_id(), nextval('guarantees_payable_seq')
         FROM generate_series($1::bigint, $2::bigint) AS i
         JOIN bench_participants pp ON pp.idx = (i * ${PAYER_STRIDE}) % ${participants}
         JOIN bench_participants rp
           ON rp.idx = ((i * ${PAYER_STRIDE}) % ${participants} + 1 + (i * ${RECIPIENT_STRIDE}) % ${participants - 1}) % ${participants}
         JOIN bench_assets aa ON aa.idx = i % ${assetCount}`,
        [from, to, hashes.subarray(0, (to - from + 1) * 32)],
      );
    }
    for (const index of indexes) await client.query(index.indexdef);
    await client.query("VACUUM ANALYZE guarantees");
  } finally {
    await client.end();
  }
}

async function runChild(request: ChildRequest): Promise<ChildReport> {
  const store: Store =
    request.backend === "sqlite"
      ? await SqliteStore.open(request.location)
      : await PostgresStore.open(request.location);
  const rssAfterOpenMb = process.memoryUsage().rss / MB;
  const report: ChildReport = {
    reserveMs: [],
    planMs: [],
    planCpuMs: [],
    scanCpuMs: 0,
    reserveCpuMs: [],
    reserved: 0,
    leaves: 0,
    debtors: 0,
    v2Ids: 0,
    root: "",
    guaranteesRoot: "",
    debitsRoot: "",
    rssAfterOpenMb,
    firstPlanMaxRssMb: 0,
    maxRssMb: 0,
  };
  // V1 rows are the even ones (version 1 + i mod 2): ids of rows 2, 4, …, 2K.
  const reservedV1Ids = new Set(
    Array.from({ length: request.reservedV1 }, (_, k) => "0x" + sha256(int8(2 * (k + 1))).toString("hex")),
  );
  try {
    await store.netting.releaseCycleGuarantees(CYCLE_ID);
    for (let run = 0; run < request.runs; run++) {
      let start = process.hrtime.bigint();
      const reserveCpu = process.cpuUsage();
      report.reserved = await store.netting.reservePayableGuarantees(CYCLE_ID);
      report.reserveMs.push(elapsed(start));
      const reserveUsed = process.cpuUsage(reserveCpu);
      report.reserveCpuMs.push((reserveUsed.user + reserveUsed.system) / 1000);
      const cpu = process.cpuUsage();
      start = process.hrtime.bigint();
      const plan = await planStoredCycle(store.netting, CYCLE_ID, undefined, reservedV1Ids);
      report.planMs.push(elapsed(start));
      const used = process.cpuUsage(cpu);
      report.planCpuMs.push((used.user + used.system) / 1000);
      if (run === 0) report.firstPlanMaxRssMb = process.resourceUsage().maxRSS / 1024;
      if (plan === null) throw new Error("the bench cycle is empty");
      if (report.root !== "" && report.guaranteesRoot !== plan.args.guaranteesRoot) {
        throw new Error("guarantees root changed between runs");
      }
      if (report.root !== "" && report.debitsRoot !== plan.args.debitsRoot) {
        throw new Error("debits root changed between runs");
      }
      report.leaves = plan.leaves.length;
      report.debtors = plan.args.debtors.length;
      report.v2Ids = plan.args.nettedV2Ids.length;
      report.root = plan.root;
      report.guaranteesRoot = plan.args.guaranteesRoot;
      report.debitsRoot = plan.args.debitsRoot;
      if (run === request.runs - 1) {
        const scanCpu = process.cpuUsage();
        await store.netting.scanCycle(CYCLE_ID, () => undefined);
        const scanUsed = process.cpuUsage(scanCpu);
        report.scanCpuMs = (scanUsed.user + scanUsed.system) / 1000;
      }
      await store.netting.releaseCycleGuarantees(CYCLE_ID);
    }
  } finally {
    await store.close();
  }
  report.maxRssMb = process.resourceUsage().maxRSS / 1024;
  return report;
}

/** The child runs under ts-node (as `npm run operator`) instead of compiled (as `npm run operator:start`). */
const CHILD_TS_NODE = process.env.BENCH_CHILD_TS_NODE === "1";

/**
 * Compiles this file and what it imports (the store, the plan) to `dist/` with the build Core's compiled
 * start uses (tsconfig.build.json), so the child runs as `npm run operator:start` runs Core: plain node,
 * no TypeScript compiler in the process. Returns the compiled file.
 */
function compileChild(): string {
  const root = join(__dirname, "..", "..");
  const build = spawnSync(
    process.execPath,
    [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.bench.json"],
    {
      cwd: root,
      encoding: "utf8",
    },
  );
  if (build.status !== 0)
    throw new Error(`tsc -p tsconfig.bench.json failed:\n${build.stdout}${build.stderr}`);
  return join(root, "dist", "scripts", "bench", "clearing-db.js");
}

function spawnChild(request: ChildRequest, compiled: string | null): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = fork(compiled ?? __filename, ["--db-child"], {
      execArgv: [
        ...(compiled === null ? ["-r", "ts-node/register/transpile-only"] : []),
        // BENCH_CHILD_NODE_ARGS="--max-old-space-size=192 …": Node options for the child (Core).
        ...(process.env.BENCH_CHILD_NODE_ARGS ? process.env.BENCH_CHILD_NODE_ARGS.split(" ") : []),
      ],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    let report: ChildReport | undefined;
    child.on("message", (message) => (report = message as ChildReport));
    child.on("error", reject);
    child.on("exit", (code) =>
      report !== undefined ? resolve(report) : reject(new Error(`child exited ${code}`)),
    );
    child.send(request);
  });
}

const fmt = (value: number, digits = 0): string => value.toFixed(digits);
const range = (values: number[]): string => `${fmt(Math.min(...values))}–${fmt(Math.max(...values))}`;

export async function benchClearingInDatabase(args: string[]): Promise<void> {
  const backend = args[0] as Backend;
  if (backend !== "sqlite" && backend !== "postgres") throw new Error("--store must be sqlite or postgres");
  const sizes = (args[1] ?? "1000000").split(",").map(Number);
  const participants = Number(args[2] ?? 1000);
  const assets = Number(args[3] ?? 2);
  const runs = Number(args[4] ?? 3);
  const reservedV1 = Number(process.env.BENCH_RESERVED_V1 ?? 0);
  const compiled = CHILD_TS_NODE ? null : compileChild();
  const dir = mkdtempSync(join(tmpdir(), "surety-bench-clearing-"));
  let embedded: TestPostgres | undefined;
  try {
    let location: string;
    if (backend === "sqlite") {
      location = join(dir, "operator.sqlite");
    } else if (process.env.SURETY_DATABASE_URL) {
      location = process.env.SURETY_DATABASE_URL;
    } else {
      embedded = await startTestPostgres();
      location = await embedded.createDatabase("bench_clearing");
    }
    console.log(
      `clearing in the database: ${backend}, ${participants} participants, ${assets} assets, ${runs} runs per size, ` +
        `${reservedV1} reserved V1 ids, keccak ${keccakBackend()}, the child (Core) ${compiled === null ? "under ts-node" : "compiled"}, ` +
        `node ${process.version}, load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(" ")}\n`,
    );
    console.log(
      "guarantees | load s | reserve ms (median, range) | reserve CPU ms | plan ms (median, range) | plan CPU ms | of which scan CPU ms | total ms | leaves | debtors | V2 ids | RSS after open MB | peak RSS, 1st plan MB | peak RSS MB | guarantees root | debits root | positions root",
    );
    for (const size of sizes) {
      if (backend === "sqlite") rmSync(location, { force: true });
      const loadStart = process.hrtime.bigint();
      if (backend === "sqlite") await loadSqlite(location, size, participants, assets);
      else await loadPostgres(location, size, participants, assets);
      const loadS = elapsed(loadStart) / 1000;
      const r = await spawnChild({ backend, location, runs, reservedV1 }, compiled);
      const reserve = median(r.reserveMs);
      const plan = median(r.planMs);
      console.log(
        [
          size,
          fmt(loadS, 1),
          `${fmt(reserve)} (${range(r.reserveMs)})`,
          fmt(median(r.reserveCpuMs)),
          `${fmt(plan)} (${range(r.planMs)})`,
          fmt(median(r.planCpuMs)),
          fmt(r.scanCpuMs),
          fmt(reserve + plan),
          r.leaves,
          r.debtors,
          r.v2Ids,
          fmt(r.rssAfterOpenMb),
          fmt(r.firstPlanMaxRssMb),
          fmt(r.maxRssMb),
          r.guaranteesRoot,
          r.debitsRoot,
          r.root,
        ].join(" | "),
      );
      console.log(
        `  load average after: ${loadavg()
          .map((l) => l.toFixed(2))
          .join(" ")}`,
      );
    }
  } finally {
    await embedded?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module && process.argv.includes("--db-child")) {
  process.once("message", (request) => {
    runChild(request as ChildRequest).then(
      (report) => process.send?.(report, undefined, {}, () => process.disconnect()),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}
