/**
 * Issuance benchmark: `POST /core/guarantees` end to end (HTTP, JWT, parse,
 * EIP-712 hash, native recovery, BLS certificate, durable SQLite commit).
 *
 *   npm run bench:issuance [-- --duration 10 --connections 64 --payers 50]
 *   BENCH_SIGN_IN_THREAD=1 npm run bench:issuance   # BLS signing on the event loop (Core's default: a worker)
 *   npm run bench:issuance -- --store postgres [--replicas 2] [--phases max]
 *   BENCH_CORE_WORKERS=2 npm run bench:issuance     # Core as a node:cluster: 2 HTTP workers + the background process
 *
 * `--store postgres`: Core on PostgreSQL (docs/scale-out.md): the database at SURETY_DATABASE_URL, or, when
 * it is unset, an embedded PostgreSQL server the bench starts (scripts/bench/postgres.ts; fsync on) and
 * whose CPU time it counts per guarantee next to Core's. `--replicas N`: N Core processes on that one
 * database (each its own port and pool, one of them leading the background work); the load is split over
 * them (N autocannon instances, connections / N each, disjoint guarantees), latencies merged into one
 * histogram. `--phases max`: only phase 1 and the floor (the half-rate phases need one Core URL). The last
 * line, `RESULT {…}`, is the run's figures as JSON, for scripts that take medians over runs.
 *
 * The parent process pre-signs guarantees and drives the load with
 * autocannon and, for the fixed-rate phases, its own open-loop generator on
 * raw sockets (open-loop.ts); Core runs in a child process (its own core, as in production)
 * on a free port, over a SQLite file in a temp dir (every lock durable before its answer,
 * docs/store.md); its
 * chain is a `hardhat node` in a third process (as in production, the chain is
 * not in Core's process; Core uses it only for its startup checks and health:
 * the Vault key check is skipped, no Vault is deployed here). Phases:
 *   1. max throughput at high concurrency: guarantees/s, p50, p99;
 *   2. half that rate (or --half-rate): with autocannon's bursty overallRate,
 *      then open loop at a fixed arrival rate over 8, 16 and 64 connections
 *      (--half-connections): p50, p99, Core's own time per request (headers
 *      parsed → answer written), its event-loop delay and GC pauses, and how
 *      late the generator itself sent;
 *   3. the crypto floor: one native secp256k1 recovery + one blst sign per
 *      guarantee (median of several runs), and the ratio measured / floor;
 *   4. the per-hop lower bound (hops.ts; `--no-hops` skips it): a bare
 *      `node:http` server driven as Core was, and the SQLite store's
 *      `issueGuarantees` alone; floor + HTTP + store against 1.5 × the floor.
 */
import { fork, spawn, type ChildProcess } from "node:child_process";
import cluster, { type Worker } from "node:cluster";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { createServer } from "node:http";
import { constants, createHistogram, monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { getBytes, JsonRpcProvider, NonceManager, Wallet } from "ethers";
import secp256k1 from "secp256k1";
import { SiweMessage } from "siwe";
import { blsKeyFromSecret, createBlsSigner } from "../../sdk/bls";
import { encodeCertificateClaims } from "../../sdk/certificate";
import { type GuaranteeClaimsV1, toWireSignedGuarantee } from "../../sdk/claims";
import { GuaranteeHasher, verifyGuaranteeSignature } from "../../sdk/eip712";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { rpcProvider } from "../../operator/background";
import { RpcChainGateway } from "../../operator/chain";
import { configFromObject } from "../../operator/config";
import { parseDeployment } from "../../operator/deployment";
import { startCoreBackground } from "../../operator/app";
import { startCoreServer } from "../../operator/server";
import { PostgresStore, SqliteStore, type Store } from "../../operator/store";
import { deploySurety } from "../deploy";
import { formatSteal, stealMeter } from "./host-steal";
import { type LoadFigures, openLoop, type OpenLoopResult } from "./open-loop";
import { median } from "./stats";
import { type BenchPostgres, startBenchPostgres } from "./postgres";
import { type RecordShape, STORE_BATCH, startBareServer, storeCpuPerGuarantee } from "./hops";

/** The part of autocannon's API used here (the package ships no type declarations). */
interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  overallRate?: number;
  requests: {
    method: string;
    path: string;
    headers: Record<string, string>;
    setupRequest: (request: Record<string, unknown>) => Record<string, unknown>;
  }[];
}
interface AutocannonResult {
  requests: { total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  "2xx": number;
}
interface AutocannonInstance {
  on(
    event: "response",
    listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void,
  ): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require("autocannon") as (
  options: AutocannonOptions,
  done: (error: Error | null, result: AutocannonResult) => void,
) => AutocannonInstance;

type Signer = Pick<Wallet, "address" | "privateKey" | "signMessage">;

const CHAIN_ID = 31337;
// Where deploySurety puts the Vault on a fresh `hardhat node` (the deployer's nonce 4: registry, verifier and
// the Vault's two libraries come first); the ClearingHouse follows its three libraries at nonce 8.
const VAULT = "0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9";
const EIP712 = { name: "Surety", version: "1" };
const SIWE = { domain: "bench.surety.test", uri: "https://bench.surety.test", statement: "Sign in (bench)." };
const BLS_SECRET = "0x" + "5e".repeat(32);
/** Large enough that no request of the run is refused for collateral. */
const DEPOSIT = 10n ** 30n;
const FLOOR_RUNS = 7;
const FLOOR_OPS = 500;
/** Connection counts of the open-loop half-rate phases (--half-connections). */
const HALF_RATE_CONNECTIONS = "8,16,64";
const RPC_TIMEOUT_MS = 2_000;
/** How long `hardhat node` may take to start listening. */
const CHAIN_START_TIMEOUT_MS = 60_000;
/** The highest maximum rate the pre-signed guarantees are sized for. */
const MAX_EXPECTED_RATE = 2_500;

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

function textArg<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = process.argv[i + 1] as T;
  if (!allowed.includes(value)) throw new Error(`--${name}: one of ${allowed.join(", ")}`);
  return value;
}

// ------------------------------------------------------------------ server (child process)

/**
 * BENCH_CORE_WORKERS=N (N > 1): Core as operator/main.ts runs it with `SURETY_WORKERS=N`: this child is
 * the cluster's primary and does the background work, N node:cluster workers serve HTTP on one port over
 * the one SQLite file. The figures add up every process (CPU, event-loop busy, GC) or take the worst
 * (event-loop delay, Core's time per request: the highest worker's percentile).
 */
const CORE_WORKERS = Number(process.env.BENCH_CORE_WORKERS ?? 1);

function benchConfig() {
  const dataDir = process.env.BENCH_DATA_DIR as string;
  return configFromObject({
    host: "127.0.0.1",
    port: 0,
    logLevel: process.env.BENCH_LOG_LEVEL ?? "info",
    dataDir,
    chainId: CHAIN_ID,
    jwtSecret: "bench-jwt-secret-of-at-least-32-bytes!",
    blsSecret: BLS_SECRET,
    siweDomain: SIWE.domain,
    siweUri: SIWE.uri,
    siweStatement: SIWE.statement,
    // Pre-signed claims must stay inside the window for the whole run.
    timestampWindowPastSeconds: 3_600,
    // BENCH_SIGN_IN_THREAD=1: certificates are signed on the event loop instead of Core's signing worker.
    blsSigningWorker: !process.env.BENCH_SIGN_IN_THREAD,
    // --store postgres: every replica on the one database; the replicas elect a leader (docs/scale-out.md).
    ...(process.env.BENCH_DATABASE_URL
      ? { databaseUrl: process.env.BENCH_DATABASE_URL, replicaId: process.env.BENCH_REPLICA_ID }
      : {}),
  });
}

function benchDeployment() {
  // BENCH_CORE_WORKERS: contracts deployed on the chain (the background process indexes them).
  if (process.env.BENCH_DEPLOYMENT) return parseDeployment(JSON.parse(process.env.BENCH_DEPLOYMENT));
  return parseDeployment({
    chainId: CHAIN_ID,
    contracts: {
      Vault: { address: VAULT },
      ClearingHouse: { address: "0xa513E6E4b8f2a923D98304ec87F64353C4D5C853" },
      ValidationRegistry: { address: "0x5FbDB2315678afecb367f032d93F642f64180aa3" },
    },
    tokens: [],
  });
}

function benchChain() {
  return RpcChainGateway.fromUrl(process.env.BENCH_RPC_URL as string, CHAIN_ID, RPC_TIMEOUT_MS);
}

async function creditPayers(store: Store): Promise<void> {
  const payers = (process.env.BENCH_PAYERS as string).split(",");
  const now = Math.floor(Date.now() / 1000);
  for (const payer of payers) await store.collateral.creditDeposit(payer, ZERO_ADDRESS, DEPOSIT, now);
}

async function serve(): Promise<void> {
  if (CORE_WORKERS > 1) return cluster.isPrimary ? servePrimary() : serveWorker();
  const config = benchConfig();
  const store: Store =
    config.databaseUrl === null
      ? SqliteStore.open(config.dbFile)
      : await PostgresStore.open(config.databaseUrl);
  // Several replicas on one database: the first credits the payers.
  if (process.env.BENCH_CREDIT === "1") await creditPayers(store);
  const chain = benchChain();
  const core = await startCoreServer(config, {
    store,
    closeStore: true,
    deployment: benchDeployment(),
    chain,
    vaultKeyCheck: "skip",
  });
  const heapProfile = process.env.BENCH_HEAP_PROF ? await startHeapSampling() : undefined;
  process.send?.({ url: core.url });
  startPauseMonitors();
  // Time inside Core: from the request's headers being parsed to the last byte of the answer handed to the socket.
  core.server.prependListener("request", (_req, res) => {
    const started = process.hrtime.bigint();
    res.once("finish", () => serverTime.record(process.hrtime.bigint() - started));
  });
  process.on("message", (message) => {
    if (message === "stop")
      void core.close().then(async () => {
        await chain.close();
        if (heapProfile) await heapProfile.stopAndWrite(process.env.BENCH_HEAP_PROF as string);
        process.exit(0);
      });
    if (message === "usage") process.send?.(coreUsage());
  });
}

/** The cluster's primary: background work, N HTTP workers; answers the parent for all of them. */
async function servePrimary(): Promise<void> {
  const config = benchConfig();
  const store = SqliteStore.open(config.dbFile);
  await creditPayers(store);
  const chain = benchChain();
  // The workers issue only once the background process has indexed the chain (its indexer runs on the
  // `hardhat node`, where no Vault is deployed: it finds no events); a single Core runs no indexer here.
  const provider = rpcProvider({ ...config, rpcUrl: process.env.BENCH_RPC_URL as string });
  const background = await startCoreBackground(config, {
    store,
    closeStore: true,
    deployment: benchDeployment(),
    chain,
    chainProvider: provider,
    vaultKeyCheck: "skip",
  });
  startPauseMonitors();
  const workers: Worker[] = Array.from({ length: CORE_WORKERS }, () => cluster.fork());
  const urls = await Promise.all(
    workers.map(
      (worker) =>
        new Promise<string>((resolve, reject) => {
          worker.once("message", (message: { url: string }) => resolve(message.url));
          worker.once("exit", (code) =>
            reject(new Error(`Core worker exited with ${code} before listening`)),
          );
        }),
    ),
  );
  if (urls.some((url) => url !== urls[0])) throw new Error(`workers listen on different URLs: ${urls}`);
  const usages = () =>
    Promise.all(
      workers.map(
        (worker) =>
          new Promise<CoreUsage>((resolve) => {
            worker.once("message", resolve);
            worker.send("usage");
          }),
      ),
    );
  process.send?.({ url: urls[0] });
  process.on("message", (message) => {
    if (message === "usage") void usages().then((all) => process.send?.(sumUsage([coreUsage(), ...all])));
    if (message === "stop") {
      void Promise.all(
        workers.map((worker) => {
          const exited = new Promise((resolve) => worker.once("exit", resolve));
          worker.send("stop");
          return exited;
        }),
      ).then(async () => {
        await background.close();
        provider.destroy();
        await chain.close();
        process.exit(0);
      });
    }
  });
}

/** An HTTP worker of the cluster over the primary's SQLite file (its own store, chain client and signer). */
async function serveWorker(): Promise<void> {
  const config = benchConfig();
  const chain = benchChain();
  const core = await startCoreServer(config, {
    role: "http",
    deployment: benchDeployment(),
    chain,
    vaultKeyCheck: "skip",
  });
  startPauseMonitors();
  core.server.prependListener("request", (_req, res) => {
    const started = process.hrtime.bigint();
    res.once("finish", () => serverTime.record(process.hrtime.bigint() - started));
  });
  process.send?.({ url: core.url });
  process.on("message", (message) => {
    if (message === "stop")
      void core.close().then(async () => {
        await chain.close();
        process.exit(0);
      });
    if (message === "usage") process.send?.(coreUsage());
  });
}

/** Every process's figures as one: sums, and the worst of the percentiles and maxima. */
function sumUsage(all: CoreUsage[]): CoreUsage {
  const sum = (pick: (u: CoreUsage) => number) => all.reduce((total, u) => total + pick(u), 0);
  // A process that saw no request reports NaN (null through IPC) for its time per request.
  const worst = (pick: (u: CoreUsage) => number) =>
    Math.max(...all.map(pick).filter((v) => v !== null && !Number.isNaN(v)));
  return {
    cpuMs: sum((u) => u.cpuMs),
    eventLoopBusyMs: sum((u) => u.eventLoopBusyMs),
    loopDelayP50Ms: worst((u) => u.loopDelayP50Ms),
    loopDelayP99Ms: worst((u) => u.loopDelayP99Ms),
    loopDelayMaxMs: worst((u) => u.loopDelayMaxMs),
    gcCount: sum((u) => u.gcCount),
    gcTotalMs: sum((u) => u.gcTotalMs),
    gcMaxMs: worst((u) => u.gcMaxMs),
    gcMajorCount: sum((u) => u.gcMajorCount),
    gcMajorMs: sum((u) => u.gcMajorMs),
    serverP50Ms: worst((u) => u.serverP50Ms),
    serverP99Ms: worst((u) => u.serverP99Ms),
  };
}

/** Bytes between heap samples: small enough to see per-request allocations. */
const HEAP_SAMPLING_INTERVAL = 16_384;

/**
 * BENCH_HEAP_PROF=<file>: a sampling heap profile of Core's main thread that
 * keeps the objects scavenges already collected (unlike `--heap-prof`, which
 * shows only what is still alive at exit), i.e. where the young garbage comes
 * from. Open it in Chrome DevTools (Memory tab).
 */
async function startHeapSampling(): Promise<{ stopAndWrite(file: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post("HeapProfiler.enable");
  await post("HeapProfiler.startSampling", {
    samplingInterval: HEAP_SAMPLING_INTERVAL,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return {
    async stopAndWrite(file: string) {
      const { profile } = (await post("HeapProfiler.stopSampling")) as { profile: unknown };
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/**
 * CPU time of the whole Core process (all threads) and busy time of its event
 * loop, in ms so far; event-loop delay and GC pauses since the previous sample.
 */
interface CoreUsage {
  cpuMs: number;
  eventLoopBusyMs: number;
  /** `monitorEventLoopDelay` (10 ms resolution is too coarse: 1 ms), ms. */
  loopDelayP50Ms: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  gcCount: number;
  gcTotalMs: number;
  gcMaxMs: number;
  /** Of which mark-compact (the rest are scavenges and incremental steps). */
  gcMajorCount: number;
  gcMajorMs: number;
  /** Time inside Core per request (parsed headers → answer written), ms. */
  serverP50Ms: number;
  serverP99Ms: number;
}

const LOOP_DELAY_RESOLUTION_MS = 1;
const loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
const gc = { count: 0, totalMs: 0, maxMs: 0, majorCount: 0, majorMs: 0 };
const serverTime = createHistogram();

function startPauseMonitors(): void {
  loopDelay.enable();
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.count++;
      gc.totalMs += entry.duration;
      gc.maxMs = Math.max(gc.maxMs, entry.duration);
      if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        gc.majorCount++;
        gc.majorMs += entry.duration;
      }
    }
  }).observe({ entryTypes: ["gc"] });
}

function coreUsage(): CoreUsage {
  const cpu = process.cpuUsage();
  const usage: CoreUsage = {
    cpuMs: (cpu.user + cpu.system) / 1000,
    eventLoopBusyMs: performance.eventLoopUtilization().active,
    loopDelayP50Ms: loopDelay.percentile(50) / 1e6,
    loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
    loopDelayMaxMs: loopDelay.max / 1e6,
    gcCount: gc.count,
    gcTotalMs: gc.totalMs,
    gcMaxMs: gc.maxMs,
    gcMajorCount: gc.majorCount,
    gcMajorMs: gc.majorMs,
    serverP50Ms: serverTime.count === 0 ? NaN : serverTime.percentile(50) / 1e6,
    serverP99Ms: serverTime.count === 0 ? NaN : serverTime.percentile(99) / 1e6,
  };
  loopDelay.reset();
  serverTime.reset();
  Object.assign(gc, { count: 0, totalMs: 0, maxMs: 0, majorCount: 0, majorMs: 0 });
  return usage;
}

function pauses(usage: CoreUsage): string {
  return (
    // NaN (no request seen, or no server to observe) arrives as null through the IPC channel's JSON.
    (usage.serverP50Ms === null || Number.isNaN(usage.serverP50Ms)
      ? ""
      : `Core time per request p50 ${usage.serverP50Ms.toFixed(1)} ms, p99 ${usage.serverP99Ms.toFixed(1)} ms; `) +
    `event-loop delay p50 ${usage.loopDelayP50Ms.toFixed(1)} ms, p99 ${usage.loopDelayP99Ms.toFixed(1)} ms, ` +
    `max ${usage.loopDelayMaxMs.toFixed(1)} ms; GC ${usage.gcCount} pauses, ` +
    `${usage.gcTotalMs.toFixed(0)} ms in all, longest ${usage.gcMaxMs.toFixed(1)} ms ` +
    `(mark-compact: ${usage.gcMajorCount}, ${usage.gcMajorMs.toFixed(0)} ms)`
  );
}

// ------------------------------------------------------------------ load (parent process)

function askUsage(child: ChildProcess): Promise<CoreUsage> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (typeof message === "object" && message !== null && "cpuMs" in message) {
        child.off("message", onMessage);
        resolve(message as CoreUsage);
      }
    };
    child.on("message", onMessage);
    child.send("usage");
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A `hardhat node` in its own process (the caller stops it): Core's chain, outside Core's process. */
async function startChain(): Promise<{ rpcUrl: string; chain: ChildProcess }> {
  const port = await freePort();
  const chain = spawn(
    process.execPath,
    [
      require.resolve("hardhat/internal/cli/cli.js"),
      "node",
      "--hostname",
      "127.0.0.1",
      "--port",
      String(port),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("hardhat node did not start")), CHAIN_START_TIMEOUT_MS);
    let seen = "";
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (!seen.includes("Started HTTP")) return;
      clearTimeout(timer);
      chain.stdout?.off("data", onData);
      chain.stdout?.resume(); // its per-call log is not wanted, but must be drained
      resolve();
    };
    chain.stdout?.on("data", onData);
    chain.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`hardhat node exited with ${code}`));
    });
  });
  return { rpcUrl: `http://127.0.0.1:${port}`, chain };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** hardhat node's first default account (a published development key): deploys the contracts. */
const HARDHAT_DEPLOYER_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

/**
 * The contracts on the bench's chain (deploySurety, Core's BLS key as the operator key), for a Core whose
 * background process runs the indexer. On a fresh `hardhat node` the Vault lands at {@link VAULT}, the
 * address the guarantees are signed for.
 */
async function deployContracts(rpcUrl: string): Promise<string> {
  const provider = new JsonRpcProvider(rpcUrl, CHAIN_ID, { staticNetwork: true });
  try {
    const signer = new NonceManager(new Wallet(HARDHAT_DEPLOYER_KEY, provider));
    const { record } = await deploySurety(signer, {
      operatorBlsPublicKey: blsKeyFromSecret(BLS_SECRET).publicKey,
    });
    if (record.contracts.Vault.address.toLowerCase() !== VAULT.toLowerCase()) {
      throw new Error(`the Vault was deployed at ${record.contracts.Vault.address}, not at ${VAULT}`);
    }
    return JSON.stringify(record);
  } finally {
    provider.destroy();
  }
}

async function startServer(
  dataDir: string,
  payers: string[],
  rpcUrl: string,
  extraEnv: Record<string, string> = { BENCH_CREDIT: "1" },
): Promise<{ url: string; child: ChildProcess }> {
  const deployment = CORE_WORKERS > 1 ? { BENCH_DEPLOYMENT: await deployContracts(rpcUrl) } : {};
  const child = fork(__filename, ["--serve"], {
    // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of Core (open it in Chrome DevTools).
    execArgv: [
      "-r",
      "ts-node/register/transpile-only",
      // BENCH_NODE_ARGS="--trace-gc ...": extra Node options for Core (its stdout goes to /dev/null or BENCH_LOG_PIPE's pipe: use stderr flags).
      ...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(" ") : []),
      ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
    ],
    env: {
      ...process.env,
      BENCH_DATA_DIR: dataDir,
      BENCH_PAYERS: payers.join(","),
      BENCH_RPC_URL: rpcUrl,
      ...deployment,
      ...extraEnv,
    },
    // BENCH_LOG_PIPE=1: Core's stdout (its log lines) is a pipe that this process reads and drops, as the
    // devnet's is (docs/benchmarks.md, "Fourth round: Core's CPU"); by default /dev/null.
    stdio: ["ignore", process.env.BENCH_LOG_PIPE === "1" ? "pipe" : "ignore", "inherit", "ipc"],
  });
  child.stdout?.resume();
  const url = await new Promise<string>((resolve, reject) => {
    child.once("message", (message: { url: string }) => resolve(message.url));
    child.once("exit", (code) => reject(new Error(`Core exited with ${code} before listening`)));
  });
  return { url, child };
}

async function signIn(url: string, wallet: Signer): Promise<string> {
  const nonce = (await (
    await fetch(url + "/auth/nonce", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ address: wallet.address }),
    })
  ).json()) as {
    nonce: string;
    siwe: {
      domain: string;
      uri: string;
      chain_id: number;
      statement: string;
      issued_at: string;
      expiration: string;
    };
  };
  const message = new SiweMessage({
    domain: nonce.siwe.domain,
    address: wallet.address,
    statement: nonce.siwe.statement,
    uri: nonce.siwe.uri,
    version: "1",
    chainId: nonce.siwe.chain_id,
    nonce: nonce.nonce,
    issuedAt: nonce.siwe.issued_at,
    expirationTime: nonce.siwe.expiration,
  }).prepareMessage();
  const signature = await wallet.signMessage(message);
  const response = await fetch(url + "/auth/verify", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ address: wallet.address, message, signature }),
  });
  const body = (await response.json()) as { access_token: string };
  if (response.status !== 200) throw new Error(`sign-in failed: ${JSON.stringify(body)}`);
  return body.access_token as string;
}

/** Real payer signatures, made with libsecp256k1 over the EIP-712 digest (same bytes a wallet signs). */
function presign(
  hasher: GuaranteeHasher,
  payers: Signer[],
  recipient: string,
  count: number,
  startReqId: number,
): { claims: GuaranteeClaimsV1; body: string }[] {
  const timestamp = Math.floor(Date.now() / 1000);
  const keys = payers.map((payer) => getBytes(payer.privateKey));
  return Array.from({ length: count }, (_, i) => {
    const p = i % payers.length;
    const claims: GuaranteeClaimsV1 = {
      version: 1,
      user: payers[p].address,
      recipient,
      reqId: BigInt(startReqId + i),
      amount: 1_000n,
      asset: ZERO_ADDRESS,
      timestamp,
    };
    const { signature, recid } = secp256k1.ecdsaSign(hasher.digestBytes(claims), keys[p]);
    const hex = "0x" + Buffer.from(signature).toString("hex") + (27 + recid).toString(16);
    return {
      claims,
      body: JSON.stringify(toWireSignedGuarantee({ claims, signature: hex, scheme: "eip712" })),
    };
  });
}

interface LoadResult extends LoadFigures, Partial<Pick<OpenLoopResult, "sendLateP99" | "loopDelayMax">> {
  /** Hypervisor steal during the phase, % of the VM's CPU time (null where not measurable). */
  steal?: number | null;
}

async function load(
  url: string,
  token: string,
  bodies: string[],
  options: { connections: number; duration: number; overallRate?: number },
  onResponse?: (responseTimeMs: number) => void,
): Promise<LoadResult> {
  let next = 0;
  const result = await new Promise<AutocannonResult>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: options.connections,
        duration: options.duration,
        overallRate: options.overallRate,
        requests: [
          {
            method: "POST",
            path: "/core/guarantees",
            headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
            setupRequest: (request: Record<string, unknown>) => ({
              ...request,
              body: bodies[next++ % bodies.length],
            }),
          },
        ],
      },
      (error, done) => (error ? reject(error) : resolve(done)),
    );
    if (onResponse) instance.on("response", (_client, _status, _bytes, ms) => onResponse(ms));
  });
  return {
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    perSecond: result["2xx"] / options.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
  };
}

/**
 * {@link load} spread over several Core replicas: one autocannon instance per URL, `connections / N`
 * connections each, every instance its own share of `bodies` (no guarantee sent twice). Counts are summed;
 * p50 and p99 come from one histogram of every response's latency (µs resolution).
 */
async function loadReplicas(
  urls: string[],
  token: string,
  bodies: string[],
  options: { connections: number; duration: number },
): Promise<LoadResult> {
  const latency = createHistogram();
  const record = (ms: number) => latency.record(Math.max(1, Math.round(ms * 1000)));
  const parts = await Promise.all(
    urls.map((url, i) =>
      load(
        url,
        token,
        bodies.filter((_, j) => j % urls.length === i),
        {
          connections: Math.max(1, Math.round(options.connections / urls.length)),
          duration: options.duration,
        },
        record,
      ),
    ),
  );
  const sum = (pick: (r: LoadResult) => number) => parts.reduce((total, r) => total + pick(r), 0);
  return {
    requests: sum((r) => r.requests),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    perSecond: sum((r) => r.perSecond),
    p50: Number((latency.percentile(50) / 1000).toFixed(1)),
    p99: Number((latency.percentile(99) / 1000).toFixed(1)),
  };
}

/** The open-loop phase at a fixed arrival rate (scripts/bench/open-loop.ts). */
function openLoad(
  url: string,
  token: string,
  bodies: string[],
  options: { connections: number; duration: number; rate: number },
): Promise<LoadResult> {
  return openLoop({
    url,
    path: "/core/guarantees",
    headers: { Authorization: `Bearer ${token}` },
    bodies,
    ...options,
  });
}

/** Median ms per guarantee of the unavoidable crypto: hash + native recovery, and one blst signature. */
function cryptoFloor(
  hasher: GuaranteeHasher,
  samples: { claims: GuaranteeClaimsV1; body: string }[],
): number {
  const signer = createBlsSigner(blsKeyFromSecret(BLS_SECRET).secretKey);
  const deployment = { chainId: CHAIN_ID, vault: VAULT };
  const prepared = samples.slice(0, FLOOR_OPS).map(({ claims, body }) => ({
    claims,
    signature: (JSON.parse(body) as { signature: string }).signature,
    message: getBytes(encodeCertificateClaims(claims, deployment)),
  }));
  const perRun: number[] = [];
  for (let run = 0; run <= FLOOR_RUNS; run++) {
    const start = process.hrtime.bigint();
    for (const item of prepared) {
      verifyGuaranteeSignature(hasher, item.claims, item.signature, "eip712");
      signer.sign(item.message);
    }
    const ms = Number(process.hrtime.bigint() - start) / 1e6 / prepared.length;
    if (run > 0) perRun.push(ms); // run 0 warms up
  }
  return median(perRun);
}

/**
 * The per-hop lower bounds (hops.ts), after the floor: the bare HTTP server driven as Core was (a warm-up on
 * `warm`, then `phase1`'s bodies for the same duration and connections, as fast as it answers, then again at
 * Core's measured rate: autocannon's overallRate), and the SQLite store alone on records shaped as
 * `phase1`'s (on a file, then in memory).
 */
async function hopBounds(
  token: string,
  phase1: { claims: GuaranteeClaimsV1; body: string }[],
  warm: { body: string }[],
  answerBytes: number,
  options: { connections: number; duration: number; coreRate: number },
): Promise<{
  httpMs: number;
  httpPerSecond: number;
  httpAtCoreRateMs: number;
  storeMs: number;
  storeInMemoryMs: number;
}> {
  const bare = await startBareServer(answerBytes);
  const { connections, duration } = options;
  const measured = async (overallRate?: number) => {
    const before = await bare.cpuMs();
    const result = await load(
      bare.url,
      token,
      phase1.map((p) => p.body),
      { connections, duration, overallRate },
    );
    return {
      ms: ((await bare.cpuMs()) - before) / (result.perSecond * duration),
      perSecond: result.perSecond,
    };
  };
  let http: { httpMs: number; httpPerSecond: number; httpAtCoreRateMs: number };
  try {
    await load(
      bare.url,
      token,
      warm.map((w) => w.body),
      { connections, duration: 2 },
    );
    const fastest = await measured();
    const atCoreRate = await measured(Math.max(1, Math.round(options.coreRate)));
    http = { httpMs: fastest.ms, httpPerSecond: fastest.perSecond, httpAtCoreRateMs: atCoreRate.ms };
  } finally {
    await bare.stop();
  }
  const signer = createBlsSigner(blsKeyFromSecret(BLS_SECRET).secretKey);
  const deployment = { chainId: CHAIN_ID, vault: VAULT };
  const byPayer = new Map<string, RecordShape>();
  for (const { claims, body } of phase1) {
    if (byPayer.has(claims.user)) continue;
    const certificateClaims = encodeCertificateClaims(claims, deployment);
    byPayer.set(claims.user, {
      user: claims.user,
      recipient: claims.recipient,
      asset: claims.asset,
      signature: (JSON.parse(body) as { signature: string }).signature,
      certificateClaims,
      certificateSignature: "0x" + Buffer.from(signer.sign(getBytes(certificateClaims))).toString("hex"),
    });
  }
  const shapes = [...byPayer.values()];
  const now = Math.floor(Date.now() / 1000);
  const storeMs = await storeCpuPerGuarantee(shapes, now);
  const storeInMemoryMs = await storeCpuPerGuarantee(shapes, now, true);
  return { ...http, storeMs, storeInMemoryMs };
}

async function main(): Promise<void> {
  if (process.argv.includes("--serve")) return serve();
  const duration = arg("duration", 10);
  const connections = arg("connections", 64);
  const payerCount = arg("payers", 50);
  const storeKind = textArg("store", ["sqlite", "postgres"] as const, "sqlite");
  const replicas = arg("replicas", 1);
  if (!Number.isSafeInteger(replicas) || replicas < 1) throw new Error("--replicas: a whole number ≥ 1");
  if (replicas > 1 && storeKind !== "postgres") throw new Error("--replicas > 1 needs --store postgres");
  if (CORE_WORKERS > 1 && (storeKind !== "sqlite" || replicas > 1)) {
    throw new Error("BENCH_CORE_WORKERS: one Core on SQLite (SURETY_WORKERS shares one SQLite file)");
  }
  // The half-rate phases drive one Core URL: with several replicas only the max phase runs.
  const halfPhases = textArg("phases", ["all", "max"] as const, "all") === "all" && replicas === 1;
  const halfConnectionsIndex = process.argv.indexOf("--half-connections");
  const halfConnections = (
    halfConnectionsIndex >= 0 ? process.argv[halfConnectionsIndex + 1] : HALF_RATE_CONNECTIONS
  )
    .split(",")
    .map(Number);
  const loadBefore = loadavg();
  console.log(
    `load average before the run: ${loadBefore.map((l) => l.toFixed(2)).join(" ")} (${cpus().length} cores)`,
  );

  const payers = Array.from({ length: payerCount }, () => Wallet.createRandom());
  const recipient = Wallet.createRandom();
  const hasher = new GuaranteeHasher({ ...EIP712, chainId: CHAIN_ID, verifyingContract: VAULT });
  // Enough distinct guarantees for every phase at up to MAX_EXPECTED_RATE: none is ever sent twice.
  const perPhase = Math.ceil(duration * MAX_EXPECTED_RATE);
  const halfTotal = halfPhases
    ? Math.ceil(duration * (arg("half-rate", 0) || MAX_EXPECTED_RATE / 2)) * (2 + halfConnections.length)
    : 0;
  const started = Date.now();
  const phase1 = presign(hasher, payers, recipient.address, perPhase, 1);
  const phase2 = presign(hasher, payers, recipient.address, halfTotal, 1 + perPhase);
  console.log(
    `pre-signed ${perPhase + halfTotal} guarantees in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );

  const dataDir = mkdtempSync(join(tmpdir(), "surety-bench-"));
  let postgres: BenchPostgres | undefined;
  let databaseUrl: string | undefined;
  if (storeKind === "postgres") {
    databaseUrl = process.env.SURETY_DATABASE_URL || undefined;
    if (databaseUrl === undefined) {
      postgres = await startBenchPostgres();
      databaseUrl = postgres.url;
      console.log("store: an embedded PostgreSQL server started by the bench (fsync on)");
    } else console.log("store: PostgreSQL at SURETY_DATABASE_URL (its CPU is not counted here)");
  } else console.log("store: SQLite file, one Core process");
  const { rpcUrl, chain } = await startChain();
  const cores: { url: string; child: ChildProcess }[] = [];
  try {
    for (let i = 0; i < replicas; i++) {
      const replicaDir = join(dataDir, `core-${i}`);
      mkdirSync(replicaDir);
      cores.push(
        await startServer(
          replicaDir,
          payers.map((p) => p.address),
          rpcUrl,
          {
            BENCH_CREDIT: i === 0 ? "1" : "0",
            ...(databaseUrl === undefined
              ? {}
              : { BENCH_DATABASE_URL: databaseUrl, BENCH_REPLICA_ID: `bench-core-${i}` }),
          },
        ),
      );
    }
  } catch (error) {
    for (const core of cores) core.child.kill("SIGTERM");
    await stopChild(chain);
    await postgres?.stop();
    throw error;
  }
  const urls = cores.map((c) => c.url);
  const children = cores.map((c) => c.child);
  const { url, child } = cores[0];
  const usageOfAll = async () => {
    const usages = await Promise.all(children.map((c) => askUsage(c)));
    return {
      cpuMs: usages.reduce((total, u) => total + u.cpuMs, 0),
      loopMs: usages.reduce((total, u) => total + u.eventLoopBusyMs, 0),
      first: usages[0],
      database: postgres?.cpuMs() ?? null,
    };
  };
  try {
    const token = await signIn(url, recipient);
    // Warm up the JIT and the connection pool on a slice that phase 1 does not reuse.
    const warm = presign(hasher, payers, recipient.address, 2_000, 10_000_000);
    // One guarantee first: a Core that refuses them all would otherwise be measured refusing.
    const sample = await fetch(url + "/core/guarantees", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: warm[0].body,
    });
    const sampleAnswer = await sample.text();
    if (sample.status !== 200) throw new Error(`Core refused a guarantee: ${sample.status} ${sampleAnswer}`);
    await loadReplicas(
      urls,
      token,
      warm.map((w) => w.body),
      { connections, duration: 2 },
    );

    const before = await usageOfAll();
    const maxSteal = stealMeter();
    const max = await loadReplicas(
      urls,
      token,
      phase1.map((p) => p.body),
      { connections, duration },
    );
    max.steal = maxSteal();
    const after = await usageOfAll();
    const loadAfter = loadavg();
    const issued = max.perSecond * duration;
    const cpuPerGuarantee = (after.cpuMs - before.cpuMs) / issued;
    const loopPerGuarantee = (after.loopMs - before.loopMs) / issued;
    const dbPerGuarantee =
      after.database === null || before.database === null
        ? null
        : (after.database - before.database) / issued;

    const halfRate = arg("half-rate", 0) || Math.max(1, Math.floor(max.perSecond / 2));
    let burst: LoadResult | undefined;
    let burstUsage: CoreUsage | undefined;
    const open: { connections: number; result: LoadResult; usage: CoreUsage }[] = [];
    if (halfPhases) {
      // --half-rate fixes the offered rate (to compare runs); by default it is half the measured maximum.
      let used = 0;
      const halfBodies = (count = Math.ceil(halfRate * duration)) => {
        const slice = phase2.slice(used, used + count);
        used += slice.length;
        if (slice.length < count) throw new Error("not enough pre-signed guarantees");
        return slice.map((p) => p.body);
      };
      // autocannon's overallRate (per-connection quota per second: bursty), kept for comparison with older figures.
      // A second more than asked for: autocannon may start another second's quota before it stops.
      const burstSteal = stealMeter();
      burst = await load(url, token, halfBodies(Math.ceil(halfRate * (duration + 1))), {
        connections,
        duration,
        overallRate: halfRate,
      });
      burst.steal = burstSteal();
      burstUsage = await askUsage(child);
      for (const openConnections of halfConnections) {
        const openSteal = stealMeter();
        const result = await openLoad(url, token, halfBodies(), {
          connections: openConnections,
          duration,
          rate: halfRate,
        });
        result.steal = openSteal();
        open.push({ connections: openConnections, result, usage: await askUsage(child) });
      }
    }
    const floorMs = cryptoFloor(hasher, phase1);
    const floorPerSecond = 1000 / floorMs;
    const hops = process.argv.includes("--no-hops")
      ? null
      : await hopBounds(token, phase1, warm, Buffer.byteLength(sampleAnswer), {
          connections,
          duration,
          coreRate: max.perSecond,
        });

    console.log(
      `\nNode ${process.version}, ${duration} s per phase, ${connections} connections, ${payerCount} payers, ` +
        `store ${storeKind}, ${replicas} Core process${replicas > 1 ? "es" : ""}` +
        (CORE_WORKERS > 1
          ? `, as ${CORE_WORKERS} HTTP workers + the background process (figures summed over all)`
          : ""),
    );
    console.log(
      `max rate : ${max.perSecond.toFixed(0)} guarantees/s   p50 ${max.p50} ms   p99 ${max.p99} ms` +
        `   (${max.requests} requests, ${max.non2xx} non-2xx, ${max.errors} errors; ${formatSteal(max.steal ?? null)})`,
    );
    console.log(
      `Core at max rate: ${cpuPerGuarantee.toFixed(2)} ms CPU/guarantee (all threads` +
        `${replicas > 1 ? `, all ${replicas} processes` : ""}), ` +
        `event loop busy ${loopPerGuarantee.toFixed(2)} ms/guarantee`,
    );
    if (dbPerGuarantee !== null) {
      console.log(
        `PostgreSQL server at max rate: ${dbPerGuarantee.toFixed(2)} ms CPU/guarantee (all its processes)`,
      );
    }
    console.log(`  ${pauses(after.first)}`);
    const row = (label: string, r: LoadResult, usage: CoreUsage) =>
      console.log(
        `${label}: ${r.perSecond.toFixed(0)}/s issued   p50 ${r.p50} ms   p99 ${r.p99} ms` +
          `   (${r.non2xx} non-2xx, ${r.errors} errors; ${formatSteal(r.steal ?? null)})\n  ${pauses(usage)}` +
          (r.sendLateP99 !== undefined && r.loopDelayMax !== undefined
            ? `\n  load generator: sent late p99 ${r.sendLateP99.toFixed(1)} ms, ` +
              `its event-loop delay max ${r.loopDelayMax.toFixed(1)} ms`
            : ""),
      );
    if (burst && burstUsage) {
      console.log(`half rate, ${halfRate}/s offered:`);
      row(`  autocannon overallRate, ${connections} connections (bursty)`, burst, burstUsage);
      for (const { connections: c, result, usage } of open)
        row(`  open loop, ${c} connections`, result, usage);
    }
    console.log(
      `crypto floor: ${floorMs.toFixed(3)} ms/guarantee (${floorPerSecond.toFixed(0)}/s on one core; ` +
        `native recovery + blst sign, median of ${FLOOR_RUNS} runs × ${FLOOR_OPS})`,
    );
    console.log(`ratio measured / floor: ${(max.perSecond / floorPerSecond).toFixed(2)}`);
    const hopBoundMs = hops === null ? null : floorMs + hops.httpMs + hops.storeMs;
    if (hops !== null && hopBoundMs !== null) {
      console.log(
        `per-hop lower bound: bare node:http ${hops.httpMs.toFixed(3)} ms CPU/request at its max ` +
          `(${hops.httpPerSecond.toFixed(0)}/s, same client and connections, ${Buffer.byteLength(sampleAnswer)}-byte answers), ` +
          `${hops.httpAtCoreRateMs.toFixed(3)} ms at Core's rate; SQLite issueGuarantees alone ` +
          `${hops.storeMs.toFixed(3)} ms CPU/guarantee (batches of ${STORE_BATCH}, fsynced; in memory ` +
          `${hops.storeInMemoryMs.toFixed(3)} ms)`,
      );
      console.log(
        `floor + HTTP + store = ${hopBoundMs.toFixed(3)} ms/guarantee (${(hopBoundMs / floorMs).toFixed(2)} × floor) ` +
          `against 1.5 × floor = ${(1.5 * floorMs).toFixed(3)} ms; Core measured ${cpuPerGuarantee.toFixed(3)} ms ` +
          `(${(cpuPerGuarantee / floorMs).toFixed(2)} × floor)`,
      );
    }
    const halves = [...(burst ? [burst] : []), ...open.map((o) => o.result)];
    if (max.non2xx > 0 || max.errors > 0 || halves.some((h) => h.non2xx > 0 || h.errors > 0)) {
      console.log("WARNING: some requests failed; the figures above count 2xx only");
    }
    console.log(
      "RESULT " +
        JSON.stringify({
          store: storeKind,
          replicas,
          perSecond: Math.round(max.perSecond),
          p50Ms: max.p50,
          p99Ms: max.p99,
          failed: max.non2xx + max.errors,
          coreCpuMsPerGuarantee: Number(cpuPerGuarantee.toFixed(3)),
          dbCpuMsPerGuarantee: dbPerGuarantee === null ? null : Number(dbPerGuarantee.toFixed(3)),
          floorMsPerGuarantee: Number(floorMs.toFixed(3)),
          bareHttpMsPerRequest: hops === null ? null : Number(hops.httpMs.toFixed(3)),
          storeMsPerGuarantee: hops === null ? null : Number(hops.storeMs.toFixed(3)),
          hopBoundMs: hopBoundMs === null ? null : Number(hopBoundMs.toFixed(3)),
          bareHttpAtCoreRateMs: hops === null ? null : Number(hops.httpAtCoreRateMs.toFixed(3)),
          storeInMemoryMsPerGuarantee: hops === null ? null : Number(hops.storeInMemoryMs.toFixed(3)),
          steal: max.steal ?? null,
          loadBefore: Number(loadBefore[0].toFixed(2)),
          loadAfter: Number(loadAfter[0].toFixed(2)),
        }),
    );
  } finally {
    for (const c of children) {
      if (c.exitCode !== null || c.signalCode !== null) continue;
      const exited = new Promise((resolve) => c.once("exit", resolve));
      c.send("stop");
      await exited;
    }
    await stopChild(chain);
    await postgres?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
