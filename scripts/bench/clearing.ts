/**
 * Benchmark of the clearing engine (operator/clearing): multilateral netting and the cycle's Merkle tree
 * + commitCycle arguments, on random cycles (seeded, so every run nets the same guarantees).
 *
 *   npx ts-node --transpile-only scripts/bench/clearing.ts [sizes] [participants] [assets]
 *   e.g. scripts/bench/clearing.ts 10000,100000,1000000 1000 2        (the defaults)
 *   npx ts-node --transpile-only scripts/bench/clearing.ts --store sqlite|postgres [sizes] [participants] [assets] [runs]
 *   (clearing in the database, the way Core plans a cycle: scripts/bench/clearing-db.ts)
 *
 * Each size runs in its own child process (--max-old-space-size=4096 --expose-gc) so that memory figures
 * do not mix: `input MB` is the heap the generated guarantees occupy; `peak heap + MB` the most heap netting
 * and planning used above that (heapUsed sampled every 4096 guarantees during an extra, untimed run);
 * `result MB` what the netting result and plan keep after GC; `maxRSS MB` the child's peak RSS overall
 * (process.resourceUsage().maxRSS, input generation included). Times are medians over several runs
 * (fewer for the large sizes). Addresses arrive as fresh lower-case strings per guarantee, as
 * rows read from a store would, so the per-address cache is exercised by content, not identity.
 */
import { fork } from "node:child_process";
import { ZeroAddress, getAddress } from "ethers";
import { buildCommitPlan } from "../../operator/clearing/commit-plan";
import { netCycle, type PayableGuarantee } from "../../operator/clearing/netting";
import { benchClearingInDatabase } from "./clearing-db";
import { median } from "./stats";

const DEFAULT_SIZES = [10_000, 100_000, 1_000_000];
const DEFAULT_PARTICIPANTS = 1_000;
const DEFAULT_ASSETS = 2;
const SEED = 0x5eed;
const MAX_AMOUNT = 1_000_000_000_000; // 1e6 tUSD at 6 decimals
const CHILD_HEAP_MB = 4096;
const MB = 1024 * 1024;
const FLAT_CHECK = /^0x/;
const SAMPLE_EVERY = 4096;

interface ChildRequest {
  size: number;
  participants: number;
  assets: number;
  runs: number;
}

interface ChildReport {
  size: number;
  runs: number;
  nettingMs: number;
  planMs: number;
  /** CPU time (user + system) of netting + plan: less sensitive than wall time to a busy machine. */
  cpuMs: number;
  leaves: number;
  debtors: number;
  v2Ids: number;
  root: string;
  inputHeapMb: number;
  peakHeapMb: number;
  resultHeapMb: number;
  maxRssMb: number;
}

/** mulberry32: small, fast, seeded; quality is plenty for a benchmark's inputs. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomHex(random: () => number, bytes: number): string {
  let hex = "0x";
  for (let i = 0; i < bytes; i += 4)
    hex += Math.floor(random() * 4294967296)
      .toString(16)
      .padStart(8, "0");
  return hex.slice(0, 2 + bytes * 2);
}

export function generateGuarantees(
  size: number,
  participantCount: number,
  assetCount: number,
  seed = SEED,
): PayableGuarantee[] {
  const random = prng(seed);
  // EIP-55 pools; each guarantee gets a fresh lower-case copy (toLowerCase allocates for mixed case).
  const participants = Array.from({ length: participantCount }, () => getAddress(randomHex(random, 20)));
  const assets = [ZeroAddress]; // ETH, then ERC-20s
  while (assets.length < assetCount) assets.push(getAddress(randomHex(random, 20)));
  const guarantees: PayableGuarantee[] = new Array(size);
  for (let i = 0; i < size; i++) {
    const payer = Math.floor(random() * participantCount);
    let recipient = Math.floor(random() * (participantCount - 1));
    if (recipient >= payer) recipient += 1; // no self-payments in the bench
    guarantees[i] = {
      guaranteeId: randomHex(random, 32),
      version: random() < 0.5 ? 1 : 2,
      user: participants[payer].toLowerCase(),
      recipient: participants[recipient].toLowerCase(),
      asset: assets[Math.floor(random() * assetCount)].toLowerCase(),
      amount: BigInt(1 + Math.floor(random() * MAX_AMOUNT)),
    };
  }
  return guarantees;
}

function collect(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

const elapsedMs = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;

/** Yields the guarantees, sampling heapUsed every SAMPLE_EVERY items (netting is synchronous). */
function* sampled(guarantees: PayableGuarantee[], peak: { heap: number }): Generator<PayableGuarantee> {
  for (let i = 0; i < guarantees.length; i++) {
    if (i % SAMPLE_EVERY === 0) peak.heap = Math.max(peak.heap, process.memoryUsage().heapUsed);
    yield guarantees[i];
  }
}

function runChild(request: ChildRequest): ChildReport {
  collect();
  const heapBefore = process.memoryUsage().heapUsed;
  const guarantees = generateGuarantees(request.size, request.participants, request.assets);
  // Ids built by concatenation are V8 cons strings; the first regex test would flatten them (and
  // shrink the heap) inside the measured netting. Rows from a store arrive flat: flatten them here.
  for (const g of guarantees) FLAT_CHECK.test(g.guaranteeId);
  collect();
  const baseline = process.memoryUsage().heapUsed;

  // Memory run (untimed): peak heap while netting and planning, then what the result keeps.
  const peak = { heap: baseline };
  const sampledNetting = netCycle(1n, sampled(guarantees, peak));
  peak.heap = Math.max(peak.heap, process.memoryUsage().heapUsed);
  const sampledPlan = buildCommitPlan(sampledNetting, guarantees);
  peak.heap = Math.max(peak.heap, process.memoryUsage().heapUsed);
  collect();
  const retained = process.memoryUsage().heapUsed - baseline;
  if (sampledPlan === null) throw new Error("benchmark cycle is empty");

  const nettingTimes: number[] = [];
  const planTimes: number[] = [];
  const cpuTimes: number[] = [];
  for (let run = 0; run < request.runs; run++) {
    collect();
    const cpuStart = process.cpuUsage();
    let start = process.hrtime.bigint();
    const netting = netCycle(1n, guarantees);
    nettingTimes.push(elapsedMs(start));
    start = process.hrtime.bigint();
    const plan = buildCommitPlan(netting, guarantees);
    planTimes.push(elapsedMs(start));
    const cpu = process.cpuUsage(cpuStart);
    cpuTimes.push((cpu.user + cpu.system) / 1000);
    if (plan?.root !== sampledPlan.root) throw new Error("root changed between runs");
  }
  return {
    size: request.size,
    runs: request.runs,
    nettingMs: median(nettingTimes),
    planMs: median(planTimes),
    cpuMs: median(cpuTimes),
    leaves: sampledPlan.leaves.length,
    debtors: sampledPlan.args.debtors.length,
    v2Ids: sampledPlan.args.nettedV2Ids.length,
    root: sampledPlan.root,
    inputHeapMb: (baseline - heapBefore) / MB,
    peakHeapMb: (peak.heap - baseline) / MB,
    resultHeapMb: retained / MB,
    maxRssMb: process.resourceUsage().maxRSS / 1024, // KiB
  };
}

function spawnChild(request: ChildRequest): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, ["--child"], {
      execArgv: [
        "-r",
        "ts-node/register/transpile-only",
        `--max-old-space-size=${CHILD_HEAP_MB}`,
        "--expose-gc",
      ],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    let report: ChildReport | undefined;
    child.on("message", (message) => (report = message as ChildReport));
    child.on("error", reject);
    child.on("exit", (code) =>
      report !== undefined ? resolve(report) : reject(new Error(`child for ${request.size} exited ${code}`)),
    );
    child.send(request);
  });
}

function runsFor(size: number): number {
  if (size <= 10_000) return 15;
  if (size <= 100_000) return 7;
  return 3;
}

const fmt = (value: number, digits = 1): string => value.toFixed(digits);

async function main(): Promise<void> {
  const sizes = process.argv[2] ? process.argv[2].split(",").map(Number) : DEFAULT_SIZES;
  const participants = Number(process.argv[3] ?? DEFAULT_PARTICIPANTS);
  const assets = Number(process.argv[4] ?? DEFAULT_ASSETS);
  console.log(
    `clearing bench: ${participants} participants, ${assets} assets, seed ${SEED}, node ${process.version}\n`,
  );
  const header = [
    "guarantees",
    "runs",
    "netting ms",
    "ns/guar.",
    "tree+args ms",
    "total ms",
    "total CPU ms",
    "leaves",
    "debtors",
    "V2 ids",
    "input MB",
    "peak heap + MB",
    "result MB",
    "maxRSS MB",
  ];
  console.log(header.join(" | "));
  for (const size of sizes) {
    const r = await spawnChild({ size, participants, assets, runs: runsFor(size) });
    console.log(
      [
        r.size,
        r.runs,
        fmt(r.nettingMs),
        fmt((r.nettingMs * 1e6) / r.size, 0),
        fmt(r.planMs),
        fmt(r.nettingMs + r.planMs),
        fmt(r.cpuMs),
        r.leaves,
        r.debtors,
        r.v2Ids,
        fmt(r.inputHeapMb),
        fmt(r.peakHeapMb),
        fmt(r.resultHeapMb),
        fmt(r.maxRssMb),
      ].join(" | "),
    );
  }
}

if (require.main !== module) {
  // imported (profiling)
} else if (process.argv.includes("--child")) {
  process.once("message", (request) => {
    process.send?.(runChild(request as ChildRequest), undefined, {}, () => process.disconnect());
  });
} else if (process.argv[2] === "--store") {
  // Clearing in the database (scripts/bench/clearing-db.ts).
  benchClearingInDatabase(process.argv.slice(3)).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
} else {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
