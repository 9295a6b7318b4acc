/**
 * Throughput and latency of the facilitator's `POST /verify` under load,
 * next to a bare Express JSON handler as the ceiling of the same stack.
 *
 *   npm run bench:verify            (= ts-node --transpile-only scripts/bench/verify.ts)
 *   BENCH_DURATION=10 BENCH_CONNECTIONS=64 BENCH_PAYLOADS=2000 BENCH_RUNS=3 npm run bench:verify
 *
 * The server under test runs in a child process (its own event loop); the
 * load generator (autocannon) runs in this process. On a small machine both
 * share the CPU cores, so the figures are a lower bound for a dedicated host.
 *
 * Every request carries a distinct, validly signed V1 payment (pre-built,
 * `req_id` differs), so the facilitator parses, checks and recovers the
 * payer's signature on every request; a sample is checked to be `isValid`
 * before measuring and every answer must be 2xx. The deployment is pinned
 * (no Core: /verify never calls it). Each configuration runs `BENCH_RUNS`
 * times, alternating, and the median run (by req/s) is reported.
 */
import { fork, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync, statSync } from "node:fs";
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
import { parsePaymentRequest, verifyPayment } from "../../facilitator/verify";
import { recoverGuaranteeSigner } from "../../sdk/eip712";

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

async function serve(kind: string): Promise<void> {
  let port: number;
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
    port = server.port;
  } else {
    // The ceiling: same Express version and JSON parser, a constant answer.
    const app = express();
    app.disable("x-powered-by");
    app.use(express.json({ limit: "64kb" }));
    app.post("/verify", (_req, res) => {
      res.json({
        isValid: true,
        invalidReason: null,
        invalidMessage: null,
        payer: payer.address,
        certificate: null,
      });
    });
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  }
  // Exit cleanly on SIGTERM so that --cpu-prof writes its profile.
  process.on("SIGTERM", () => process.exit(0));
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

async function startChild(kind: string): Promise<{ child: ChildProcess; url: string }> {
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

interface RunResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
}

async function load(url: string, bodies: string[], seconds: number, connections: number): Promise<RunResult> {
  let next = 0;
  const result = await autocannon({
    url: `${url}/verify`,
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
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

function medianRun(runs: RunResult[]): RunResult {
  return [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[runs.length >> 1];
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

/** Microseconds per call of `op` over all bodies (median of 5 passes): where a request's CPU time goes. */
function microsPerOp(bodies: string[], op: (body: string, i: number) => unknown): number {
  const passes: number[] = [];
  let sink = 0;
  for (let pass = 0; pass < 6; pass++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < bodies.length; i++) sink += op(bodies[i], i) === undefined ? 0 : 1;
    if (pass > 0) passes.push(Number(process.hrtime.bigint() - start) / 1e3 / bodies.length);
  }
  if (sink < 0) console.log(sink);
  return passes.sort((a, b) => a - b)[passes.length >> 1];
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
    "signature recovery alone (libsecp256k1)": microsPerOp(bodies, (_, i) => {
      const { claims, signature, scheme } = requests[i].paymentPayload.payload;
      return recoverGuaranteeSigner(params.hasher, claims, signature, scheme);
    }),
    "verifyPayment (all checks + recovery)": microsPerOp(bodies, (_, i) =>
      verifyPayment(requests[i], context),
    ),
  };
  console.log("in-process CPU per request, µs (no HTTP):");
  console.table(Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, { µs: Number(v.toFixed(1)) }])));
}

async function main(): Promise<void> {
  console.log(
    `POST /verify: ${CONNECTIONS} connections, ${DURATION_SECONDS} s per run, ${RUNS} runs, ` +
      `${PAYLOADS} distinct signed payloads; load generator and server share this host's CPUs`,
  );
  const bodies = buildBodies(PAYLOADS);
  breakdown(bodies);
  const kinds = ["facilitator", "express"] as const;
  const servers = Object.fromEntries(await Promise.all(kinds.map(async (k) => [k, await startChild(k)])));
  try {
    await checkValid(servers.facilitator.url, bodies);
    for (const kind of kinds) await load(servers[kind].url, bodies, WARMUP_SECONDS, CONNECTIONS);
    for (const [phase, connections] of [
      ["throughput", CONNECTIONS],
      ["latency", LATENCY_CONNECTIONS],
    ] as const) {
      console.log(`${phase}: ${connections} connections`);
      const runs: Record<string, RunResult[]> = { facilitator: [], express: [] };
      for (let run = 0; run < RUNS; run++) {
        for (const kind of kinds) {
          const result = await load(servers[kind].url, bodies, DURATION_SECONDS, connections);
          if (result.non2xx > 0 || result.errors > 0) {
            throw new Error(`${kind}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
          }
          runs[kind].push(result);
          console.log(
            `  run ${run + 1} ${kind.padEnd(11)} ${result.requestsPerSecond.toFixed(0).padStart(7)} req/s  ` +
              `p50 ${result.p50} ms  p99 ${result.p99} ms  (${result.total} requests)`,
          );
        }
      }
      const facilitator = medianRun(runs.facilitator);
      const bare = medianRun(runs.express);
      console.log(`median run (${phase}, ${connections} connections):`);
      console.table({
        "facilitator /verify": {
          "req/s": Math.round(facilitator.requestsPerSecond),
          "p50 ms": facilitator.p50,
          "p99 ms": facilitator.p99,
        },
        "bare Express JSON": {
          "req/s": Math.round(bare.requestsPerSecond),
          "p50 ms": bare.p50,
          "p99 ms": bare.p99,
        },
      });
      const ratio = (100 * facilitator.requestsPerSecond) / bare.requestsPerSecond;
      console.log(`facilitator / bare Express: ${ratio.toFixed(0)} %`);
    }
  } finally {
    await Promise.all(kinds.map((kind) => stopChild(servers[kind].child)));
  }
  if (PROFILE_DIR !== undefined) printProfile(PROFILE_DIR);
}

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
    const file = frame.url.replace(/^.*node_modules\//, "").replace(/^.*\/work\/main\//, "");
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
  const own = /\/work\/main\/(.*)$/.exec(url);
  return own !== null ? own[1] : url;
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
