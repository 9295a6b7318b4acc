/**
 * Throughput and latency of the facilitator's `POST /verify` under load,
 * next to three references measured in the same run: a bare Express JSON
 * handler on the server our services use (runtime/express-server.ts), the
 * same handler on `http.createServer(app)` (Express as most apps run it),
 * and a bare `node:http` JSON handler (the floor of Node's HTTP stack).
 *
 *   npm run bench:verify            (= ts-node --transpile-only scripts/bench/verify.ts)
 *   BENCH_DURATION=10 BENCH_CONNECTIONS=64 BENCH_PAYLOADS=2000 BENCH_RUNS=3 npm run bench:verify
 *   BENCH_WORKERS=2 npm run bench:verify      (the facilitator as a node:cluster of 2 processes)
 *
 * The server under test runs in a child process (its own event loop); the
 * load generator (autocannon) runs in this process. On a small machine both
 * share the CPU cores, so the figures are a lower bound for a dedicated host.
 * Besides req/s and latency, each run reports the server's CPU time per
 * request (user + system, from the server process itself): it depends far
 * less on what else the machine is doing than throughput does.
 *
 * Every request carries a distinct, validly signed V1 payment (pre-built,
 * `req_id` differs), so the facilitator parses, checks and recovers the
 * payer's signature on every request; a sample is checked to be `isValid`
 * before measuring and every answer must be 2xx. The deployment is pinned
 * (no Core: /verify never calls it). Each configuration runs `BENCH_RUNS`
 * times, alternating, and the median run (by req/s) is reported.
 */
import { fork, type ChildProcess } from "node:child_process";
import cluster from "node:cluster";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import express from "express";
import { Wallet } from "ethers";
import { blsKeyFromSecret, publicKeyToArray } from "../../sdk/bls";
import { type GuaranteeClaimsV1, toWireSignedGuarantee } from "../../sdk/claims";
import { VALIDATION_HASH_CANONICALIZATION_VERSION, certificateDomain } from "../../sdk/ids";
import { SCHEME } from "../../sdk/x402";
import { facilitatorConfigFromObject } from "../../facilitator/config";
import { type DeploymentParams, deploymentFromPublicParams } from "../../facilitator/deployment";
import { silentFacilitatorLogger } from "../../facilitator/logger";
import { startFacilitatorServer } from "../../facilitator/server";
import { createExpressServer } from "../../runtime/express-server";
import { verifyBody } from "../../facilitator/api/responses";
import { parsePaymentRequest, verifyPayment } from "../../facilitator/verify";
import { recoverGuaranteeSignerLowerCase } from "../../sdk/eip712";

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
interface AutocannonRequest {
  method: string;
  headers: Record<string, string>;
  setupRequest: (request: Record<string, unknown>) => Record<string, unknown>;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  requests: AutocannonRequest[];
}) => Promise<AutocannonResult>;
// autocannon ships no type declarations (and @types/autocannon is not installed).
const autocannon = createRequire(__filename)("autocannon") as Autocannon;

const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const PAYLOADS = Number(process.env.BENCH_PAYLOADS ?? 2000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** Concurrency of the latency runs: with many connections latency is queueing (connections / throughput). */
const LATENCY_CONNECTIONS = Number(process.env.BENCH_LATENCY_CONNECTIONS ?? 4);
/** When set, the facilitator child writes a V8 CPU profile there and its hottest functions are printed. */
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
/** Facilitator processes (node:cluster workers sharing the port); 1 = a single process. */
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
const WARMUP_SECONDS = 3;

const CHAIN_ID = 31337;
const NETWORK = `eip155:${CHAIN_ID}`;
const VAULT = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const TOKEN = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
const payer = new Wallet("0x" + "11".repeat(32));
const seller = new Wallet("0x" + "33".repeat(32));
const facilitatorKey = "0x" + "44".repeat(32);

function deployment(): DeploymentParams {
  return deploymentFromPublicParams({
    public_key: publicKeyToArray(blsKeyFromSecret("0x" + "55".repeat(32)).publicKey),
    contract_address: VAULT,
    ethereum_http_rpc_url: "http://127.0.0.1:8545",
    eip712_name: "Surety",
    eip712_version: "1",
    chain_id: CHAIN_ID,
    max_accepted_guarantee_version: 2,
    accepted_guarantee_versions: [1, 2],
    active_guarantee_domain_separator: certificateDomain({ chainId: CHAIN_ID, vault: VAULT }),
    trusted_validation_registries: [],
    validation_hash_canonicalization_version: VALIDATION_HASH_CANONICALIZATION_VERSION,
  });
}

// ---------------------------------------------------------------------------
// Child: the server under test
// ---------------------------------------------------------------------------

/** What the reference handlers answer: the facilitator's answer to a valid payment. */
const BARE_ANSWER = {
  isValid: true,
  invalidReason: null,
  invalidMessage: null,
  payer: payer.address,
  certificate: null,
};

async function listen(kind: string): Promise<number> {
  if (kind === "facilitator") {
    const server = await startFacilitatorServer(
      facilitatorConfigFromObject({
        host: "127.0.0.1",
        port: 0,
        logLevel: "silent",
        privateKey: facilitatorKey,
        coreUrl: "http://127.0.0.1:9",
      }),
      { deployment: deployment(), logger: silentFacilitatorLogger() },
    );
    return server.port;
  }
  let server;
  if (kind === "express" || kind === "express-plain") {
    // Same Express version, settings and JSON parser as the facilitator, a constant answer.
    const app = express();
    app.disable("x-powered-by");
    app.disable("etag");
    app.use(express.json({ limit: "64kb" }));
    app.post("/verify", (_req, res) => {
      res.json(BARE_ANSWER);
    });
    server = kind === "express" ? createExpressServer(app) : createServer(app);
  } else {
    // node:http alone: read the body, JSON.parse it, answer a constant JSON document.
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const body = JSON.stringify(BARE_ANSWER);
        res.writeHead(200, {
          "Content-Type": "application/json; charset=utf-8",
          "Content-Length": Buffer.byteLength(body),
        });
        res.end(body);
      });
    });
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

type CpuUsage = { user: number; system: number };
const CPU_REQUEST = "cpu?";

async function serve(kind: string): Promise<void> {
  // Exit cleanly on SIGTERM so that --cpu-prof writes its profile.
  process.on("SIGTERM", () => process.exit(0));
  if (kind === "facilitator" && WORKERS > 1) {
    if (cluster.isPrimary) {
      // Workers listening on port 0 share one handle, hence one port; CPU is summed over them.
      const workers = Array.from({ length: WORKERS }, () => cluster.fork());
      const ports = await Promise.all(
        workers.map(
          (worker) =>
            new Promise<number>((resolve) =>
              worker.once("message", (message: { port: number }) => resolve(message.port)),
            ),
        ),
      );
      const port = ports[0];
      if (ports.some((other) => other !== port))
        throw new Error(`workers listen on different ports: ${ports}`);
      process.on("message", async (message) => {
        if (message !== CPU_REQUEST) return;
        const usages = await Promise.all(
          workers.map(
            (worker) =>
              new Promise<CpuUsage>((resolve) => {
                worker.once("message", resolve);
                worker.send(CPU_REQUEST);
              }),
          ),
        );
        const own = process.cpuUsage();
        process.send?.(
          usages.reduce((sum, u) => ({ user: sum.user + u.user, system: sum.system + u.system }), own),
        );
      });
      process.on("SIGTERM", () => {
        for (const worker of workers) worker.kill("SIGTERM");
        process.exit(0);
      });
      process.send?.({ port });
      return;
    }
    const port = await listen(kind);
    process.on("message", (message) => {
      if (message === CPU_REQUEST) process.send?.(process.cpuUsage());
    });
    process.send?.({ port });
    return;
  }
  const port = await listen(kind);
  process.on("message", (message) => {
    if (message === CPU_REQUEST) process.send?.(process.cpuUsage());
  });
  process.send?.({ port });
}

// ---------------------------------------------------------------------------
// Parent: payloads, load, report
// ---------------------------------------------------------------------------

/** Distinct signed `/verify` bodies (signing the EIP-712 digest directly: the same signature a wallet makes). */
function buildBodies(count: number): string[] {
  const hasher = deployment().hasher;
  const now = Math.floor(Date.now() / 1000);
  const requirements = {
    scheme: SCHEME,
    network: NETWORK,
    maxAmountRequired: "1000",
    resource: "https://seller.test/weather",
    description: "Weather",
    mimeType: "application/json",
    payTo: seller.address,
    maxTimeoutSeconds: 60,
    asset: TOKEN,
    extra: {},
  };
  return Array.from({ length: count }, (_, i) => {
    const claims: GuaranteeClaimsV1 = {
      version: 1,
      user: payer.address,
      recipient: seller.address,
      reqId: BigInt(i + 1) << 64n,
      amount: 1000n,
      asset: TOKEN,
      timestamp: now,
    };
    const signature = payer.signingKey.sign(hasher.digest(claims)).serialized;
    const payload = toWireSignedGuarantee({ claims, signature, scheme: "eip712" });
    return JSON.stringify({
      x402Version: 1,
      paymentPayload: { x402Version: 1, scheme: SCHEME, network: NETWORK, payload },
      paymentRequirements: requirements,
    });
  });
}

interface Child {
  child: ChildProcess;
  url: string;
}

async function startChild(kind: string): Promise<Child> {
  const profile = PROFILE_DIR !== undefined && kind === "facilitator";
  const child = fork(__filename, [`--serve=${kind}`], {
    execArgv: [
      "-r",
      "ts-node/register/transpile-only",
      ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : []),
    ],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (message) => resolve((message as { port: number }).port));
    child.once("exit", (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

async function stopChild(child: ChildProcess): Promise<void> {
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** CPU time (user + system, µs) the server has used so far, all of its processes. */
function serverCpu(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once("message", (message) => {
      const usage = message as CpuUsage;
      resolve(usage.user + usage.system);
    });
    child.send(CPU_REQUEST);
  });
}

interface RunResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  /** Server CPU time per answered request, µs. */
  cpuMicros: number;
}

async function load(
  server: Child,
  bodies: string[],
  seconds: number,
  connections: number,
): Promise<RunResult> {
  let next = 0;
  const cpuBefore = await serverCpu(server.child);
  const result = await autocannon({
    url: `${server.url}/verify`,
    connections,
    duration: seconds,
    requests: [
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length] }),
      },
    ],
  });
  const cpu = (await serverCpu(server.child)) - cpuBefore;
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    cpuMicros: cpu / Math.max(1, result.requests.total),
  };
}

function medianRun(runs: RunResult[]): RunResult {
  return [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[runs.length >> 1];
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[values.length >> 1];
}

async function checkValid(url: string, bodies: string[]): Promise<void> {
  for (const body of [bodies[0], bodies[bodies.length - 1]]) {
    const response = await fetch(`${url}/verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    const verdict = (await response.json()) as { isValid: boolean; invalidReason: string | null };
    if (!verdict.isValid) throw new Error(`bench payload is not valid: ${verdict.invalidReason}`);
  }
}

/** Microseconds per call of `op` over all bodies (median of 7 passes after a warm-up pass). */
function microsPerOp(bodies: string[], op: (body: string, i: number) => unknown): number {
  const passes: number[] = [];
  let sink = 0;
  for (let pass = 0; pass < 8; pass++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < bodies.length; i++) sink += op(bodies[i], i) === undefined ? 0 : 1;
    if (pass > 0) passes.push(Number(process.hrtime.bigint() - start) / 1e3 / bodies.length);
  }
  if (sink < 0) console.log(sink);
  return median(passes);
}

/** The in-process cost of each stage of /verify, without HTTP. */
function breakdown(bodies: string[]): void {
  const params = deployment();
  const context = {
    deployment: params,
    clock: { nowSeconds: () => Math.floor(Date.now() / 1000) },
    timestampWindow: { pastSeconds: 600, futureSeconds: 30 },
  };
  const json = bodies.map((body) => JSON.parse(body) as unknown);
  const requests = json.map((body) => parsePaymentRequest(body));
  const rows = {
    "JSON.parse of the body": microsPerOp(bodies, (body) => JSON.parse(body)),
    "sdk envelope parsing (parsePaymentRequest)": microsPerOp(bodies, (_, i) => parsePaymentRequest(json[i])),
    "EIP-712 digest (3 keccak256 in JS)": microsPerOp(bodies, (_, i) => {
      const { claims, scheme } = requests[i].paymentPayload.payload;
      return params.hasher.signedHash(claims, scheme);
    }),
    "digest + native recovery + address keccak": microsPerOp(bodies, (_, i) => {
      const { claims, signature, scheme } = requests[i].paymentPayload.payload;
      return recoverGuaranteeSignerLowerCase(params.hasher, claims, signature, scheme);
    }),
    "verifyPayment (all checks + recovery)": microsPerOp(bodies, (_, i) =>
      verifyPayment(requests[i], context),
    ),
    "whole handler: JSON.parse + parse + verify + JSON answer": microsPerOp(bodies, (body) =>
      JSON.stringify(verifyBody(verifyPayment(parsePaymentRequest(JSON.parse(body)), context))),
    ),
  };
  console.log("in-process CPU per request, µs (no HTTP; median of 7 passes):");
  console.table(Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, { µs: Number(v.toFixed(1)) }])));
}

const KINDS = ["facilitator", "express", "express-plain", "http"] as const;
const LABELS: Record<(typeof KINDS)[number], string> = {
  facilitator: "facilitator /verify",
  express: "bare Express JSON",
  "express-plain": "bare Express, createServer(app)",
  http: "bare node:http JSON",
};

function loadAverage(): string {
  return loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");
}

async function main(): Promise<void> {
  console.log(
    `POST /verify: ${CONNECTIONS} connections, ${DURATION_SECONDS} s per run, ${RUNS} runs, ` +
      `${PAYLOADS} distinct signed payloads, facilitator workers: ${WORKERS}; ` +
      "load generator and servers share this host's CPUs",
  );
  console.log(`load average at start: ${loadAverage()}`);
  const bodies = buildBodies(PAYLOADS);
  breakdown(bodies);
  const servers = Object.fromEntries(
    await Promise.all(KINDS.map(async (kind) => [kind, await startChild(kind)] as const)),
  ) as Record<(typeof KINDS)[number], Child>;
  try {
    await checkValid(servers.facilitator.url, bodies);
    for (const kind of KINDS) await load(servers[kind], bodies, WARMUP_SECONDS, CONNECTIONS);
    for (const [phase, connections] of [
      ["throughput", CONNECTIONS],
      ["latency", LATENCY_CONNECTIONS],
    ] as const) {
      console.log(`${phase}: ${connections} connections`);
      const runs: Record<string, RunResult[]> = Object.fromEntries(KINDS.map((kind) => [kind, []]));
      for (let run = 0; run < RUNS; run++) {
        console.log(`  run ${run + 1}, load average ${loadAverage()}`);
        for (const kind of KINDS) {
          const result = await load(servers[kind], bodies, DURATION_SECONDS, connections);
          if (result.non2xx > 0 || result.errors > 0) {
            throw new Error(`${kind}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
          }
          runs[kind].push(result);
          console.log(
            `    ${LABELS[kind].padEnd(32)} ${result.requestsPerSecond.toFixed(0).padStart(7)} req/s  ` +
              `p50 ${result.p50} ms  p99 ${result.p99} ms  server CPU ${result.cpuMicros.toFixed(0)} µs/request  ` +
              `(${result.total} requests)`,
          );
        }
      }
      console.log(`median run (${phase}, ${connections} connections; CPU: median over runs):`);
      console.table(
        Object.fromEntries(
          KINDS.map((kind) => {
            const median_ = medianRun(runs[kind]);
            return [
              LABELS[kind],
              {
                "req/s": Math.round(median_.requestsPerSecond),
                "p50 ms": median_.p50,
                "p99 ms": median_.p99,
                "server CPU µs/req": Math.round(median(runs[kind].map((r) => r.cpuMicros))),
              },
            ];
          }),
        ),
      );
      const rate = (kind: (typeof KINDS)[number]) => medianRun(runs[kind]).requestsPerSecond;
      console.log(
        `facilitator / bare Express: ${((100 * rate("facilitator")) / rate("express")).toFixed(0)} %, ` +
          `facilitator / bare node:http: ${((100 * rate("facilitator")) / rate("http")).toFixed(0)} %`,
      );
    }
  } finally {
    await Promise.all(KINDS.map((kind) => stopChild(servers[kind].child)));
  }
  if (PROFILE_DIR !== undefined) printProfile(PROFILE_DIR);
}

/** Our own files are named from the repository root in the profile tables. */
const REPO_ROOT = new RegExp(
  `^(file://)?${join(__dirname, "..", "..").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/`,
);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

/** Self time of the hottest functions in the newest profile of `dir`, grouped by function and file. */
function printProfile(dir: string): void {
  const newest = readdirSync(dir)
    .filter((name) => name.endsWith(".cpuprofile"))
    .map((name) => join(dir, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (newest === undefined) return;
  const profile = JSON.parse(readFileSync(newest, "utf8")) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const frameOf = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let busy = 0;
  const add = (map: Map<string, number>, key: string, micros: number) =>
    map.set(key, (map.get(key) ?? 0) + micros);
  profile.samples.forEach((id, i) => {
    const frame = frameOf.get(id)!;
    if (frame.functionName === "(idle)") return; // the facilitator waits while the bare server is measured
    const micros = profile.timeDeltas[i];
    busy += micros;
    const file = frame.url.replace(/^.*node_modules\//, "").replace(REPO_ROOT, "");
    add(byFunction, `${frame.functionName || "(anonymous)"} ${file}`.trim(), micros);
    add(byModule, moduleOf(frame.url, frame.functionName), micros);
  });
  const table = (map: Map<string, number>, rows: number) =>
    Object.fromEntries(
      [...map.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, rows)
        .map(([key, micros]) => [
          key.slice(0, 80),
          { "% of busy": Number(((100 * micros) / busy).toFixed(1)) },
        ]),
    );
  console.log(`facilitator CPU profile (${newest}), self time while busy, by module:`);
  console.table(table(byModule, 12));
  console.log("hottest functions:");
  console.table(table(byFunction, 15));
}

/** A coarse owner of a stack frame: npm package, our source file, node internals, or V8. */
function moduleOf(url: string, functionName: string): string {
  if (url === "") return functionName.startsWith("(") ? functionName : "node native (writev, crypto …)";
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency !== null) return dependency[1];
  if (url.startsWith("node:")) return "node internals (http, streams, events)";
  return url.replace(REPO_ROOT, "");
}

const serveFlag = process.argv.find((arg) => arg.startsWith("--serve="));
if (serveFlag !== undefined) {
  serve(serveFlag.slice("--serve=".length)).catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
