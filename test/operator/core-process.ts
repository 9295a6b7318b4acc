/**
 * Core as an operator runs it: a child process (`operator/main.ts` under ts-node, or the compiled
 * `dist/operator/main.js`) on a free port, its chain the in-process Hardhat network served over JSON-RPC,
 * its JSON log lines collected. Shared by the tests that start Core as a process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { network } from "hardhat";
import { JsonRpcServer } from "hardhat/internal/hardhat-network/jsonrpc/server";
import { facilitator } from "./guarantee-fixtures";
import {
  deployTestContracts,
  TEST_BLS_SECRET,
  TEST_CHAIN_ID,
  TEST_DOMAIN,
  TEST_URI,
  tempDir,
} from "./helpers";

export const ROOT = resolve(__dirname, "../..");
export const START_TIMEOUT_MS = 240_000;
export const STOP_TIMEOUT_MS = 30_000;

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

export interface LogLine {
  pid: number;
  msg: string;
  [field: string]: unknown;
}

export interface CoreRun {
  child: ChildProcess;
  lines: () => LogLine[];
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts `node <args>` in the repository root with only `env`'s SURETY_* settings. */
export function startCore(args: readonly string[], env: Record<string, string>): CoreRun {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("SURETY_")),
  );
  const child = spawn(process.execPath, [...args], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const lines = () =>
    output
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as LogLine);
  return { child, lines, output: () => output, exited };
}

/** Polls `probe` until it gives a value; fails with Core's output when Core exits or time runs out. */
export async function until<T>(what: string, run: CoreRun, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (run.child.exitCode !== null) throw new Error(`Core exited (${run.child.exitCode}):\n${run.output()}`);
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${START_TIMEOUT_MS} ms:\n${run.output()}`);
    await new Promise((done) => setTimeout(done, 250));
  }
}

/** Kills a Core still running (a test's `after` hook: whatever the test left). */
export async function killCore(run: CoreRun | undefined): Promise<void> {
  if (run && run.child.exitCode === null) {
    run.child.kill("SIGKILL");
    await run.exited;
  }
}

/** SIGTERM, then Core's exit code ("timeout" when it does not stop within STOP_TIMEOUT_MS). */
export async function stopCore(run: CoreRun): Promise<number | null | "timeout"> {
  run.child.kill("SIGTERM");
  return Promise.race([
    run.exited,
    new Promise<"timeout">((done) => setTimeout(() => done("timeout"), STOP_TIMEOUT_MS)),
  ]);
}

/** A deployed chain served over JSON-RPC and the SURETY_* settings of a Core on it (SQLite in a temp dir). */
export async function coreOnTestChain(): Promise<{
  contracts: Awaited<ReturnType<typeof deployTestContracts>>;
  url: string;
  env: Record<string, string>;
  close(): Promise<void>;
}> {
  const contracts = await deployTestContracts();
  const rpc = new JsonRpcServer({ hostname: "127.0.0.1", port: 0, provider: network.provider });
  const { port: rpcPort } = await rpc.listen();
  const dir = tempDir();
  const deploymentFile = join(dir.path, "hardhat.json");
  writeFileSync(deploymentFile, JSON.stringify(contracts.json));
  const port = await freePort();
  return {
    contracts,
    url: `http://127.0.0.1:${port}`,
    env: {
      SURETY_HOST: "127.0.0.1",
      SURETY_PORT: String(port),
      SURETY_LOG_LEVEL: "info",
      SURETY_DATA_DIR: dir.path,
      SURETY_NETWORK: "hardhat",
      SURETY_DEPLOYMENT_FILE: deploymentFile,
      SURETY_RPC_URL: `http://127.0.0.1:${rpcPort}`,
      SURETY_CHAIN_ID: String(TEST_CHAIN_ID),
      SURETY_BLS_SECRET: TEST_BLS_SECRET,
      SURETY_JWT_SECRET: "test-jwt-secret-of-at-least-32-bytes!!",
      SURETY_SIWE_DOMAIN: TEST_DOMAIN,
      SURETY_SIWE_URI: TEST_URI,
      SURETY_FACILITATORS: facilitator.address,
      SURETY_POLL_INTERVAL_MS: "100",
    },
    async close() {
      await rpc.close();
      dir.remove();
    },
  };
}
