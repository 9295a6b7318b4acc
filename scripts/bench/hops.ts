/**
 * Lower bounds per hop for Core's CPU per guarantee (issue 28, target 3: ≤ 1.5 × the crypto floor), measured
 * by `bench:issuance` in the same run as the floor (docs/benchmarks.md, "Sixth round"):
 *
 * - **HTTP**: a bare `node:http` server in its own process (as Core is), keep-alive, that reads each request's
 *   body and answers with a body of the size of Core's answer: no Express, no JSON parsing, no store, no
 *   crypto. The bench drives it with the same client, bodies, headers and connections as Core; its CPU per
 *   request (all threads) is what any HTTP API on Node costs at that rate.
 * - **Store**: `issueGuarantees` on a SQLite file (WAL, each batch fsynced before it resolves, as in Core),
 *   in sequential batches of the size seen under load, records of the size Core stores; CPU per guarantee
 *   of this process (all threads: the fsync thread included).
 *
 * The floor plus both is what Core cannot go below with an HTTP API and a durable store, whatever else it
 * does: set against 1.5 × the floor, it says whether the target is reachable at all.
 *
 *   npx ts-node --transpile-only scripts/bench/hops.ts --serve   (the bare server: forked by the bench)
 */
import { fork, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CollateralBalance, GuaranteeRecord } from "../../operator/store";
import { SqliteStore } from "../../operator/store/sqlite-store";
import { median } from "./stats";

/** Guarantees per `issueGuarantees` batch: the issuance batcher's mean under load (fourth round). */
export const STORE_BATCH = 27;
const STORE_BATCHES = 150;
const STORE_ROUNDS = 5;

// ------------------------------------------------------------------ the bare server (child process)

function serveBare(): void {
  const answer = Buffer.alloc(Number(process.env.BARE_ANSWER_BYTES ?? 0), "a");
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    req.on("data", () => undefined);
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json", "content-length": answer.length });
      res.end(answer);
    });
  });
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as { port: number };
    process.send?.({ url: `http://127.0.0.1:${port}` });
  });
  process.on("message", (message) => {
    if (message === "usage") {
      const cpu = process.cpuUsage();
      process.send?.({ cpuMs: (cpu.user + cpu.system) / 1000 });
    }
    if (message === "stop") server.close(() => process.exit(0));
  });
}

/** The bare server in a child process: its URL, its CPU so far (ms), and how to stop it. */
export interface BareServer {
  url: string;
  cpuMs(): Promise<number>;
  stop(): Promise<void>;
}

export async function startBareServer(answerBytes: number): Promise<BareServer> {
  const child: ChildProcess = fork(__filename, ["--serve"], {
    execArgv: ["-r", "ts-node/register/transpile-only"],
    env: { ...process.env, BARE_ANSWER_BYTES: String(answerBytes) },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once("message", (message: { url: string }) => resolve(message.url));
    child.once("exit", (code) => reject(new Error(`the bare server exited with ${code}`)));
  });
  return {
    url,
    cpuMs: () =>
      new Promise((resolve) => {
        child.once("message", (message: { cpuMs: number }) => resolve(message.cpuMs));
        child.send("usage");
      }),
    stop: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.send("stop");
      await exited;
    },
  };
}

// ------------------------------------------------------------------ the store alone

/** What a stored guarantee's variable-size fields look like (hex strings, as Core stores them). */
export interface RecordShape {
  user: string;
  recipient: string;
  asset: string;
  signature: string;
  certificateClaims: string;
  certificateSignature: string;
}

const full = (b: CollateralBalance) => b.deposited - b.pendingWithdrawal;

/**
 * Median CPU ms per guarantee of `issueGuarantees` on a SQLite file, batches of {@link STORE_BATCH}, each
 * durable (fsynced) before the next starts; `inMemory`: on an in-memory database instead (the SQL without the
 * WAL writes and fsyncs). `shapes`: one per payer.
 */
export async function storeCpuPerGuarantee(
  shapes: readonly RecordShape[],
  now: number,
  inMemory = false,
): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "surety-bench-hops-"));
  const store = SqliteStore.open(inMemory ? ":memory:" : join(dir, "operator.sqlite"));
  try {
    for (const shape of new Map(shapes.map((s) => [s.user, s])).values()) {
      await store.collateral.creditDeposit(shape.user, shape.asset, 10n ** 30n, now);
    }
    let n = 0;
    const record = (shape: RecordShape): GuaranteeRecord => ({
      ...shape,
      guaranteeId: "0x" + randomBytes(32).toString("hex"),
      version: 1,
      reqId: BigInt(++n),
      amount: 1_000n,
      timestamp: now,
      policy: null,
      scheme: "eip712",
      state: "FINALIZED_PAYABLE",
      createdAt: now,
    });
    const perRound: number[] = [];
    for (let round = 0; round <= STORE_ROUNDS; round++) {
      const batches = Array.from({ length: STORE_BATCHES }, () =>
        Array.from({ length: STORE_BATCH }, () => ({
          record: record(shapes[n % shapes.length]),
          capacity: full,
        })),
      );
      const start = process.cpuUsage();
      for (const batch of batches) {
        const outcomes = await store.issuance.issueGuarantees(batch, now);
        if (outcomes.some((o) => o.kind !== "issued")) throw new Error("a guarantee was not issued");
      }
      const used = process.cpuUsage(start);
      // Round 0 warms up.
      if (round > 0) perRound.push((used.user + used.system) / 1000 / (STORE_BATCHES * STORE_BATCH));
    }
    return median(perRound);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module && process.argv.includes("--serve")) serveBare();
