/**
 * The devnet (`scripts/devnet.ts`: Hardhat node, contracts, Core, Surety's facilitator) as a child process on free
 * ports, for the benches that drive it from outside (vs-peers, paid-request).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { DevnetDeploymentFile } from "../../devnet/contracts";

export const ROOT = path.resolve(__dirname, "../../..");
const READY = /devnet ready: rpc=(\S+) core=(\S+) facilitator=(\S+)/;

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function close(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

// ---------------------------------------------------------------------------
// Devnet child
// ---------------------------------------------------------------------------

export interface Devnet {
  child: ChildProcess;
  rpc: string;
  core: string;
  facilitator: string;
  deployment: DevnetDeploymentFile;
  dir: string;
}

export async function startDevnet(prefix = "surety-bench-"): Promise<Devnet> {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const deploymentFile = path.join(dir, "deployment.json");
  const env = {
    ...process.env,
    SURETY_DEVNET_RPC_PORT: String(await freePort()),
    SURETY_DEVNET_CORE_PORT: String(await freePort()),
    SURETY_DEVNET_FACILITATOR_PORT: String(await freePort()),
    SURETY_DEVNET_DATA_DIR: path.join(dir, "data"),
    SURETY_DEVNET_DEPLOYMENT_FILE: deploymentFile,
    // e.g. `--cpu-prof --cpu-prof-dir=DIR`: profiles of the devnet's processes (chain, Core, facilitator).
    ...(process.env.BENCH_CHILD_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_CHILD_NODE_OPTIONS } : {}),
  };
  const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", "scripts/devnet.ts"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const urls = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`devnet not ready in 120 s:\n${output}`)), 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = READY.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`devnet exited (${code}):\n${output}`)));
  });
  child.stdout!.resume();
  child.stderr!.resume();
  const deployment = JSON.parse(readFileSync(deploymentFile, "utf8")) as DevnetDeploymentFile;
  return { child, rpc: urls[1], core: urls[2], facilitator: urls[3], deployment, dir };
}

export async function stopDevnet(devnet: Devnet): Promise<void> {
  const exited = new Promise((resolve) => devnet.child.once("exit", resolve));
  devnet.child.kill("SIGINT");
  await exited;
  rmSync(devnet.dir, { recursive: true, force: true });
}
