/**
 * `npm run bench:paid-request`: where the time of one sequential `svc-credit` paid request goes, hop by hop, through
 * the official packages (`@x402/fetch` buyer → `@x402/express` seller → Surety's facilitator `/verify` → handler →
 * `/settle` → Core `POST /core/guarantees` → durable commit → back), against the same route unpaid.
 *
 * The devnet runs as a child (chain, contracts, Core, facilitator: each its own process); buyer and seller run in
 * this process, one request at a time, alternating `BENCH_ROUNDS` rounds of `BENCH_REQUESTS` unpaid then paid
 * requests. Measured per paid request:
 *   - the buyer's two round trips (`@x402/fetch` asks unpaid first, gets 402, signs, asks again) and its signing;
 *   - the seller's `/verify` and `/settle` round trips to the facilitator;
 *   - Core's own time for `POST /core/guarantees` (its `surety_http_request_duration_seconds`, sum / count, read from
 *     `/metrics` around the phase);
 *   - CPU per paid request of every process (`/proc/<pid>/stat`, user + system, the paid phase minus the unpaid);
 *   - TCP connections opened per request: the seller's `connection` events, and the sockets each port left in
 *     TIME_WAIT (a connection closed after use; none with keep-alive).
 * The last line `RESULT {…}` holds the figures as JSON.
 */
import { execFileSync, spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { HTTPFacilitatorClient, type RoutesConfig, x402ResourceServer } from "@x402/core/server";
import type {
  Network,
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  VerifyResponse,
} from "@x402/core/types";
import { paymentMiddleware } from "@x402/express";
import { wrapFetchWithPaymentFromConfig } from "@x402/fetch";
import { JsonRpcProvider, Wallet, parseEther } from "ethers";
import express from "express";
import {
  SCHEME,
  SuretyClientScheme,
  SuretyServerScheme,
  domainFromPublicParams,
  suretyPrice,
} from "../../sdk/kits/x402-scheme";
import { SuretyFacilitatorClient } from "../../sdk/kits/x402-scheme/facilitator-client";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { Vault__factory } from "../../typechain-types";
import { devAccount } from "../devnet/accounts";
import { ROOT, close, listen, startDevnet, stopDevnet } from "./peers/devnet-child";
import {
  NOOP_HTTP_SCHEME,
  NOOP_SCHEME,
  NoopClientScheme,
  NoopFacilitator,
  NoopServerScheme,
  noopFacilitatorServer,
} from "./peers/noop-scheme";
import { median, percentile } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);
const PRICE = 1_000_000_000n;
const TICK_MS = 1000 / 100; // USER_HZ
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 3000);
/** Throughput phase: concurrent buyers (a child process) and how long they pay; then bench:issuance's max rate. */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const THROUGHPUT_MS = Number(process.env.BENCH_THROUGHPUT_SECONDS ?? 5) * 1000;
const ISSUANCE_SECONDS = Number(process.env.BENCH_ISSUANCE_SECONDS ?? 5);

function log(message: string): void {
  process.stdout.write(`[paid-request] ${message}\n`);
}

/** Every process under `root` (inclusive), by pid, with a short name from its command line. */
function processTree(root: number): Map<number, string> {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone
    }
  }
  const out = new Map<number, string>();
  const visit = (pid: number) => {
    let cmd = "";
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
    } catch {
      return;
    }
    const name = /hardhat node|hardhat\/internal\/cli/.test(cmd)
      ? "chain (hardhat node)"
      : /facilitator/.test(cmd)
        ? "facilitator"
        : /operator|core/.test(cmd)
          ? "core"
          : /devnet/.test(cmd)
            ? "devnet supervisor"
            : cmd.slice(0, 40);
    out.set(pid, name);
    for (const [child, parent] of parents) if (parent === pid) visit(child);
  };
  visit(root);
  return out;
}

function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime + stime
  } catch {
    return NaN;
  }
}

function snapshot0(tree: Map<number, string>): Map<number, number> {
  return new Map([...tree.keys()].map((pid) => [pid, cpuMs(pid)]));
}

function timeWait(port: string): number {
  const out = execFileSync("ss", ["-Htan", "state", "time-wait"], { encoding: "utf8" });
  return out.split("\n").filter((line) => line.includes(`:${port} `) || line.endsWith(`:${port}`)).length;
}

interface CoreTime {
  sum: number;
  count: number;
  /** Cumulative bucket counts by upper bound (seconds). */
  buckets: Map<number, number>;
}

async function coreGuaranteeTime(core: string): Promise<CoreTime> {
  const text = await (await fetch(`${core}/metrics`)).text();
  const out: CoreTime = { sum: 0, count: 0, buckets: new Map() };
  for (const line of text.split("\n")) {
    if (!line.includes('route="/core/guarantees"') || !line.includes('method="POST"')) continue;
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (line.startsWith("surety_http_request_duration_seconds_sum")) out.sum += value;
    if (line.startsWith("surety_http_request_duration_seconds_count")) out.count += value;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (le !== undefined && le !== "+Inf")
      out.buckets.set(Number(le), (out.buckets.get(Number(le)) ?? 0) + value);
  }
  return out;
}

/** The upper bound (ms) of the bucket holding quantile `q` of the requests between two readings. */
function bucketQuantile(before: CoreTime, after: CoreTime, q: number): number {
  const n = after.count - before.count;
  for (const [le, count] of [...after.buckets].sort((a, b) => a[0] - b[0])) {
    if (count - (before.buckets.get(le) ?? 0) >= q * n) return le * 1000;
  }
  return Infinity;
}

/** The seller's client for Surety's facilitator: the kit's node:http one (the official one for the no-op routes). */
class TimedFacilitator extends SuretyFacilitatorClient {
  verifyMs: number[] = [];
  settleMs: number[] = [];
  override async verify(p: PaymentPayload, r: PaymentRequirements): Promise<VerifyResponse> {
    const t0 = performance.now();
    const out = await super.verify(p, r);
    this.verifyMs.push(performance.now() - t0);
    return out;
  }
  override async settle(p: PaymentPayload, r: PaymentRequirements): Promise<SettleResponse> {
    const t0 = performance.now();
    const out = await super.settle(p, r);
    this.settleMs.push(performance.now() - t0);
    return out;
  }
}

const p = (values: number[], q: number) =>
  percentile(
    [...values].sort((a, b) => a - b),
    q,
  );
const f = (ms: number) => (Number.isNaN(ms) ? "–" : ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

interface Throughput {
  paid: number;
  failed: number;
  perSecond: number;
  /** CPU ms per paid request: the buyers' process, of it their signing, and every devnet/bench process. */
  buyerCpu: number;
  buyerSign: number;
  cpu: Record<string, number>;
}

/**
 * `CONCURRENCY` buyers paying as fast as they can for `THROUGHPUT_MS`, in a child process
 * (peers/buyer-child.ts) so that the buyer's CPU is apart from the seller's (this process).
 */
async function throughputPhase(
  input: Record<string, unknown>,
  tree: Map<number, string>,
  background: Map<number, number>,
): Promise<Throughput> {
  const child = spawn(
    process.execPath,
    ["-r", "ts-node/register/transpile-only", "scripts/bench/peers/buyer-child.ts", JSON.stringify(input)],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  let output = "";
  let before: Map<number, number> | null = null;
  let started = 0;
  const after = await new Promise<Map<number, number>>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (before === null && output.includes("START")) {
        before = snapshot0(tree);
        started = performance.now();
      }
      if (output.includes("RESULT")) resolve(snapshot0(tree));
    });
    child.once("exit", (code) =>
      code === 0 ? undefined : reject(new Error(`buyers exited ${code}: ${output}`)),
    );
  });
  const wall = performance.now() - started;
  await new Promise((resolve) => child.once("exit", resolve));
  const result = JSON.parse(/RESULT (.*)/.exec(output)![1]) as {
    paid: number;
    failed: number;
    wallMs: number;
    signMs: number;
    cpuMs: number;
  };
  const n = Math.max(1, result.paid);
  return {
    paid: result.paid,
    failed: result.failed,
    perSecond: (result.paid / result.wallMs) * 1000,
    buyerCpu: result.cpuMs / n,
    buyerSign: result.signMs,
    cpu: Object.fromEntries(
      [...tree].map(([pid, name]) => [
        name,
        (after.get(pid)! - before!.get(pid)! - background.get(pid)! * wall) / n,
      ]),
    ),
  };
}

/** `bench:issuance --phases max` in a child: Core's max rate, its CPU per guarantee and the crypto floor. */
function issuanceMax(): { perSecond: number; coreCpuMsPerGuarantee: number; floorMsPerGuarantee: number } {
  const out = execFileSync(
    process.execPath,
    [
      "-r",
      "ts-node/register/transpile-only",
      "scripts/bench/issuance.ts",
      "--phases",
      "max",
      "--duration",
      String(ISSUANCE_SECONDS),
    ],
    { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(/^RESULT (.*)$/m.exec(out)![1]) as ReturnType<typeof issuanceMax>;
}

async function main(): Promise<void> {
  let throughput: Throughput | null = null;
  let noopRate = NaN;
  log("starting the devnet …");
  const devnet = await startDevnet("surety-paid-request-");
  const servers: Server[] = [];
  const provider = new JsonRpcProvider(devnet.rpc, devnet.deployment.chainId, { staticNetwork: true });
  try {
    const network = `eip155:${devnet.deployment.chainId}` as Network;
    const buyer = new Wallet(devAccount(7).privateKey, provider);
    const seller = devAccount(8).address;
    await (
      await Vault__factory.connect(devnet.deployment.contracts.Vault.address, buyer).deposit({
        value: parseEther("10"),
      })
    ).wait();

    const facilitator = new TimedFacilitator({ url: devnet.facilitator });
    // The official packages' own cost: the same route under a scheme that does nothing (peers/noop-scheme.ts),
    // its facilitator in process (`/noop`) or one HTTP round trip away (`/noop-http`).
    const noopServer = noopFacilitatorServer(network);
    servers.push(noopServer);
    const noopHttp = new HTTPFacilitatorClient({ url: await listen(noopServer) });
    const resourceServer = new x402ResourceServer([facilitator, new NoopFacilitator(network), noopHttp])
      .register(network, new SuretyServerScheme())
      .register(network, new NoopServerScheme(NOOP_SCHEME))
      .register(network, new NoopServerScheme(NOOP_HTTP_SCHEME));
    const price = suretyPrice({ asset: ZERO_ADDRESS, amount: PRICE });
    const route = (scheme: string) => ({ accepts: { scheme, network, payTo: seller, price } });
    const routes: RoutesConfig = {
      "GET /paid": route(SCHEME),
      "GET /noop": route(NOOP_SCHEME),
      "GET /noop-http": route(NOOP_HTTP_SCHEME),
    };
    const app = express();
    app.use(paymentMiddleware(routes, resourceServer));
    app.get(
      ["/paid", "/free", "/noop", "/noop-http"],
      (req, res) => void res.json({ ok: true, path: req.path }),
    );
    const server = createServer(app);
    let sellerConnections = 0;
    server.on("connection", () => sellerConnections++);
    servers.push(server);
    const sellerUrl = await listen(server);

    const publicParams = await (await fetch(`${devnet.core}/core/public-params`)).json();
    const scheme = new SuretyClientScheme({
      signer: buyer,
      domain: domainFromPublicParams(publicParams),
      maxAmountPerRequest: { [ZERO_ADDRESS]: PRICE },
    });
    const signMs: number[] = [];
    const create = scheme.createPaymentPayload.bind(scheme);
    scheme.createPaymentPayload = async (...args: Parameters<typeof create>) => {
      const t0 = performance.now();
      const out = await create(...args);
      signMs.push(performance.now() - t0);
      return out;
    };
    const trips: number[][] = [];
    let current: number[] = [];
    const timedFetch: typeof fetch = async (input, init) => {
      const t0 = performance.now();
      const response = await fetch(input, init);
      current.push(performance.now() - t0);
      return response;
    };
    const pay = wrapFetchWithPaymentFromConfig(timedFetch, {
      schemes: [
        { network, client: scheme },
        { network, client: new NoopClientScheme(NOOP_SCHEME) },
        { network, client: new NoopClientScheme(NOOP_HTTP_SCHEME) },
      ],
      spendControls: scheme.spendControls(),
    });
    // Core indexes the deposit: wait for the first paid request to pass.
    for (let i = 0; ; i++) {
      current = [];
      const response = await pay(`${sellerUrl}/paid`);
      await response.arrayBuffer();
      if (response.status === 200) break;
      if (i > 120) throw new Error(`paid route still answers ${response.status}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    for (let i = 0; i < 50; i++) {
      await (await pay(`${sellerUrl}/paid`)).arrayBuffer(); // warm-up
      await (await fetch(`${sellerUrl}/free`)).arrayBuffer();
    }
    const tree = processTree(devnet.child.pid!);
    tree.set(process.pid, "bench (buyer + seller)");
    const ports = {
      seller: new URL(sellerUrl).port,
      facilitator: new URL(devnet.facilitator).port,
      core: new URL(devnet.core).port,
    };

    // Background CPU (timers, chain polling, checkpoints) per ms of wall time, measured idle, so that the per-request
    // CPU below is the requests' own.
    const idleBefore = snapshot0(tree);
    const idleStart = performance.now();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const idleWall = performance.now() - idleStart;
    const background = new Map(
      [...tree.keys()].map((pid) => [pid, (cpuMs(pid) - idleBefore.get(pid)!) / idleWall]),
    );
    const wall = { paid: 0, free: 0, noop: 0, noopHttp: 0 };
    const unpaidMs: number[] = [];
    const paidMs: number[] = [];
    const noopMs: number[] = [];
    const noopHttpMs: number[] = [];
    const cpu = {
      paid: new Map<number, number>(),
      free: new Map<number, number>(),
      noop: new Map<number, number>(),
      noopHttp: new Map<number, number>(),
    };
    const add = (into: Map<number, number>, before: Map<number, number>) => {
      for (const pid of tree.keys()) into.set(pid, (into.get(pid) ?? 0) + cpuMs(pid) - before.get(pid)!);
    };
    const snapshot = () => snapshot0(tree);
    const tw0 = Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, timeWait(v)]));
    const conn0 = sellerConnections;
    const core0 = await coreGuaranteeTime(devnet.core);
    const v0 = facilitator.verifyMs.length;
    const s0 = facilitator.settleMs.length;
    const sign0 = signMs.length;
    // BENCH_PROFILE_SIGNAL=1: SIGUSR2 to Core, the facilitator and this process before and after the measured
    // rounds and again around the svc-credit throughput phase (for a `--require` hook that starts and writes a CPU profile on it; `--cpu-prof` is not allowed in
    // NODE_OPTIONS). Only with such a hook loaded in every one of them: SIGUSR2 ends a process that has none.
    const profiled = process.env.BENCH_PROFILE_SIGNAL
      ? [...tree].filter(([, name]) => /core|facilitator|bench/.test(name))
      : [];
    for (const [pid] of profiled) process.kill(pid, "SIGUSR2");
    const noopPhase = async (kind: "noop" | "noopHttp", path: string, into: number[]) => {
      const before = snapshot();
      const phase = performance.now();
      for (let i = 0; i < REQUESTS; i++) {
        const t0 = performance.now();
        const response = await pay(`${sellerUrl}${path}`);
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
        into.push(performance.now() - t0);
      }
      add(cpu[kind], before);
      wall[kind] += performance.now() - phase;
    };
    for (let round = 0; round < ROUNDS; round++) {
      let before = snapshot();
      let phase = performance.now();
      for (let i = 0; i < REQUESTS; i++) {
        const t0 = performance.now();
        const response = await fetch(`${sellerUrl}/free`);
        await response.arrayBuffer();
        unpaidMs.push(performance.now() - t0);
      }
      add(cpu.free, before);
      wall.free += performance.now() - phase;
      await noopPhase("noop", "/noop", noopMs);
      await noopPhase("noopHttp", "/noop-http", noopHttpMs);
      before = snapshot();
      phase = performance.now();
      for (let i = 0; i < REQUESTS; i++) {
        current = [];
        const t0 = performance.now();
        const response = await pay(`${sellerUrl}/paid`);
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`paid request answered ${response.status}`);
        paidMs.push(performance.now() - t0);
        trips.push(current);
      }
      add(cpu.paid, before);
      wall.paid += performance.now() - phase;
    }
    for (const [pid] of profiled) process.kill(pid, "SIGUSR2");
    const core1 = await coreGuaranteeTime(devnet.core);
    const sellerAccepted = sellerConnections - conn0;
    const n = ROUNDS * REQUESTS;
    const tw1 = Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, timeWait(v)]));
    const verifyMs = facilitator.verifyMs.slice(v0);
    const settleMs = facilitator.settleMs.slice(s0);
    const coreMean = ((core1.sum - core0.sum) / Math.max(1, core1.count - core0.count)) * 1000;
    const first = trips.map((t) => t[0]);
    const second = trips.map((t) => t[t.length - 1]);
    const sign = signMs.slice(sign0);
    const rows: [string, number[]][] = [
      ["unpaid request (same route, no middleware work)", unpaidMs],
      ["paid request, whole (buyer's view)", paidMs],
      ["  1st round trip: unpaid ask → 402 with requirements", first],
      ["  buyer signs the guarantee (EIP-712; native libsecp256k1 for an in-process key)", sign],
      ["  2nd round trip: paid ask → 200", second],
      ["    seller → facilitator /verify round trip", verifyMs],
      ["    seller → facilitator /settle round trip", settleMs],
      ["no-op scheme, facilitator in process (the official packages alone)", noopMs],
      ["no-op scheme, facilitator over HTTP (the packages + one round trip)", noopHttpMs],
    ];
    const table = rows.map(([label, values]) => `| ${label} | ${f(p(values, 50))} | ${f(p(values, 99))} |`);
    table.push(
      `| Core's own time in POST /core/guarantees (/metrics: bucket bounds; mean ${f(coreMean)}) | ≤ ${f(bucketQuantile(core0, core1, 0.5))} | ≤ ${f(bucketQuantile(core0, core1, 0.99))} |`,
    );
    const secondResidual =
      median(second) - (verifyMs.length > 0 ? median(verifyMs) : 0) - median(settleMs) - median(unpaidMs);
    const own = (pid: number, kind: keyof typeof cpu) =>
      ((cpu[kind].get(pid) ?? 0) - background.get(pid)! * wall[kind]) / n;
    const cpuRows = [...tree].map(([pid, name]) => {
      const paid = own(pid, "paid");
      const free = own(pid, "free");
      const noop = own(pid, "noop") - free;
      const noopHttp = own(pid, "noopHttp") - free;
      return `| ${name} | ${f(paid)} | ${f(free)} | ${f(paid - free)} | ${f(noop)} | ${f(noopHttp)} | ${f(background.get(pid)! * 1000)} |`;
    });
    const buyers = (path: string) =>
      throughputPhase(
        {
          url: `${sellerUrl}${path}`,
          network,
          publicParams,
          privateKey: devAccount(7).privateKey,
          price: PRICE.toString(),
          concurrency: CONCURRENCY,
          durationMs: THROUGHPUT_MS,
        },
        tree,
        background,
      );
    // BENCH_PROFILE_SIGNAL: a second profile of each process, of the svc-credit throughput phase alone.
    for (const [pid] of profiled) process.kill(pid, "SIGUSR2");
    throughput = await buyers("/paid");
    for (const [pid] of profiled) process.kill(pid, "SIGUSR2");
    const noopThroughput = await buyers("/noop-http");
    noopRate = noopThroughput.perSecond;
    process.stdout.write(
      [
        "",
        `One sequential svc-credit paid request, ${ROUNDS} rounds × ${REQUESTS} requests alternated with the same route unpaid:`,
        "",
        "| Hop | p50 ms | p99 ms |",
        "| --- | ---: | ---: |",
        ...table,
        "",
        `Added by payment: p50 ${f(p(paidMs, 50) - p(unpaidMs, 50))} ms, p99 ${f(p(paidMs, 99) - p(unpaidMs, 99))} ms. ` +
          `2nd round trip minus /settle and an unpaid request (medians): ${f(secondResidual)} ms (seller middleware; ` +
          `${verifyMs.length} /verify calls: svc-credit's seller scheme checks the payment itself before /settle). ` +
          `Added by the no-op scheme: p50 ${f(p(noopMs, 50) - p(unpaidMs, 50))} ms, p99 ${f(p(noopMs, 99) - p(unpaidMs, 99))} ms ` +
          `in process; p50 ${f(p(noopHttpMs, 50) - p(unpaidMs, 50))} ms, p99 ${f(p(noopHttpMs, 99) - p(unpaidMs, 99))} ms over HTTP.`,
        "",
        "| Process | CPU ms per paid request | per unpaid request | added | added by no-op, in process | added by no-op over HTTP | background CPU ms per s (idle, subtracted) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ...cpuRows,
        "",
        `TCP connections: seller accepted ${sellerAccepted} for ${2 * n} buyer requests (${n} unpaid + ${n} paid, 2 asks each); ` +
          `new TIME_WAIT sockets: seller ${tw1.seller - tw0.seller}, facilitator ${tw1.facilitator - tw0.facilitator}, Core ${tw1.core - tw0.core}.`,
        "",
        `Throughput, ${CONCURRENCY} concurrent buyers (a child process) for ${THROUGHPUT_MS / 1000} s: ` +
          `${throughput.perSecond.toFixed(1)} paid requests/s (${throughput.paid} paid, ${throughput.failed} failed). ` +
          `CPU ms per paid request: buyers ${f(throughput.buyerCpu)} (of it signing ${f(throughput.buyerSign)}), ` +
          Object.entries(throughput.cpu)
            .map(([name, ms]) => `${name} ${f(ms)}`)
            .join(", ") +
          ". " +
          `The no-op scheme over HTTP (the official packages and one facilitator round trip, nothing checked): ` +
          `${noopThroughput.perSecond.toFixed(1)}/s; CPU ms per request: buyers ${f(noopThroughput.buyerCpu)}, ` +
          `seller ${f(noopThroughput.cpu["bench (buyer + seller)"])} (its no-op facilitator included).`,
        "",
        `RESULT ${JSON.stringify({
          throughput,
          noopThroughput,
          unpaid: { p50: p(unpaidMs, 50), p99: p(unpaidMs, 99) },
          paid: { p50: p(paidMs, 50), p99: p(paidMs, 99) },
          noop: { p50: p(noopMs, 50), p99: p(noopMs, 99) },
          noopHttp: { p50: p(noopHttpMs, 50), p99: p(noopHttpMs, 99) },
          first: p(first, 50),
          sign: p(sign, 50),
          second: p(second, 50),
          verify: p(verifyMs, 50),
          settle: p(settleMs, 50),
          coreMean,
          coreP50: bucketQuantile(core0, core1, 0.5),
          cpu: Object.fromEntries(
            [...tree].map(([pid, name]) => [name, own(pid, "paid") - own(pid, "free")]),
          ),
          cpuNoop: Object.fromEntries(
            [...tree].map(([pid, name]) => [name, own(pid, "noop") - own(pid, "free")]),
          ),
          cpuNoopHttp: Object.fromEntries(
            [...tree].map(([pid, name]) => [name, own(pid, "noopHttp") - own(pid, "free")]),
          ),
        })}`,
        "",
      ].join("\n"),
    );
  } finally {
    for (const s of servers) await close(s);
    provider.destroy();
    await stopDevnet(devnet);
  }
  if (throughput === null || process.env.BENCH_ISSUANCE === "0") return;
  log(`bench:issuance --phases max --duration ${ISSUANCE_SECONDS} (the same run, the devnet stopped) …`);
  const issuance = issuanceMax();
  const ratio = throughput.perSecond / issuance.perSecond;
  const noopRatio = noopRate / issuance.perSecond;
  const floorRatio = issuance.coreCpuMsPerGuarantee / issuance.floorMsPerGuarantee;
  process.stdout.write(
    [
      `Issuance max rate: ${issuance.perSecond}/s; paid requests through the official packages at ${CONCURRENCY} buyers: ` +
        `${(ratio * 100).toFixed(1)} % of it (target ≥ 40 %; the no-op scheme over HTTP: ${(noopRatio * 100).toFixed(1)} %). Core CPU per guarantee ${issuance.coreCpuMsPerGuarantee} ms, ` +
        `crypto floor ${issuance.floorMsPerGuarantee} ms: ${floorRatio.toFixed(2)} × (target ≤ 1.5 ×).`,
      `TARGETS ${JSON.stringify({ issuance, throughputRatio: ratio, noopRatio, coreFloorRatio: floorRatio })}`,
      "",
    ].join("\n"),
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`[paid-request] FAILED: ${(error as Error).stack ?? String(error)}`);
    process.exit(1);
  },
);
