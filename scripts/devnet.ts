/**
 * `npm run devnet`: the whole Surety stack on this machine in one command.
 *
 *   1. a Hardhat node (hardfork prague) on SURETY_DEVNET_RPC_PORT (8545), fresh chain every run, its time
 *      kept on the wall clock (a block every second, same-second blocks allowed: devnet/node.config.ts);
 *   2. the contracts, deployed with `deploySurety` (devnet BLS key, tUSD 6 dec + tETH 18 dec, short
 *      timings), written to deployments/localhost.json together with the services' URLs;
 *   3. test tokens minted to dev accounts 0-9 (Hardhat's public mnemonic);
 *   4. Core (operator/main.ts) on SURETY_DEVNET_CORE_PORT (8080), state under .data/devnet/;
 *   5. the facilitator (facilitator/main.ts) on SURETY_DEVNET_FACILITATOR_PORT (8402).
 *
 * `npm run devnet -- --with-exact`: also an EIP-3009 test token (xUSD, contracts/test/Eip3009Token.sol)
 * minted to the dev accounts and the official x402 `exact` facilitator (scripts/devnet/exact-facilitator.ts)
 * on SURETY_DEVNET_EXACT_PORT (8403), so that a seller offers `exact` beside `svc-credit` locally.
 *
 * `npm run devnet -- --store postgres --replicas 2` (scripts/devnet/topology.ts): an embedded PostgreSQL
 * server first (scripts/devnet/postgres.ts), then two Cores on it on consecutive ports (the first leads the
 * background work, docs/scale-out.md), the facilitator given both URLs.
 *
 * Prints what runs, then `devnet ready: …`. Ctrl-C (SIGINT) or SIGTERM stops every service (each in its
 * own process group) and waits until the ports are free. Settings: scripts/devnet/options.ts, docs/devnet.md.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { unknownEnvSettings } from "../operator/config";
import { DEVNET_BLS_IKM } from "./deploy";
import { DEVNET_ROLES, FUNDED_ACCOUNT_COUNT, devAccount, devAccounts } from "./devnet/accounts";
import {
  type DevnetDeploymentFile,
  type DevnetExactToken,
  type DevnetUrls,
  DEVNET_EXACT_TOKEN,
  deployDevnetContracts,
  deployExactToken,
  devnetProvider,
  writeDevnetDeployment,
} from "./devnet/contracts";
import {
  DEVNET_POLL_INTERVAL_MS,
  type DevnetOptions,
  DevnetOptionsError,
  devnetOptionsFromEnv,
} from "./devnet/options";
import { isPortFree, portOwner, waitForPortFree } from "./devnet/ports";
import { READY_MARKER } from "./devnet/ready";
import { ServiceProcess } from "./devnet/service";
import { DEVNET_LEADER_LEASE_MS, type DevnetTopology, devnetTopology } from "./devnet/topology";
import { getJson, rpcChainId, waitFor } from "./devnet/wait";

const ROOT = path.resolve(__dirname, "..");
/** Written into the data dir while running: lets the next run recognise what a dead run left behind. */
const STATE_FILE = "devnet.json";
/** Running compiled (packages/devnet's dist/, no ts-node): every entry point is the `.js` next to its source. */
const COMPILED = path.extname(__filename) === ".js";

interface RunState {
  pid: number;
  startedAt: string;
  services: Record<string, number>;
}

function say(message: string): void {
  process.stdout.write(`[devnet] ${message}\n`);
}

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

/** Paths inside the project relative to it, others absolute. */
function displayPath(file: string): string {
  const relative = path.relative(ROOT, file);
  return relative === "" || relative.startsWith("..") ? file : relative;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Environment without any SURETY_* variable: each service gets exactly the settings meant for it. */
function baseEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("SURETY_")));
}

/** The user's own SURETY_* settings for a service (devnet's values are applied on top of them). */
function passThrough(accept: (name: string) => boolean): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => name.startsWith("SURETY_") && !name.startsWith("SURETY_DEVNET_") && accept(name),
    ),
  );
}

/** Node's arguments to run a service's entry point: its TypeScript source, or the compiled file (@surety/devnet). */
function tsNodeArgs(entry: string): string[] {
  if (COMPILED) return [entry.replace(/\.ts$/, ".js")];
  return ["-r", "ts-node/register/transpile-only", entry];
}

class Devnet {
  readonly services: ServiceProcess[] = [];
  readonly urls: DevnetUrls;
  deployment: DevnetDeploymentFile | null = null;
  grants: Record<string, string> = {};
  private stopping: Promise<void> | null = null;
  /** Set once this run has wiped the data dir and written its state file there. */
  private ownsDataDir = false;
  /** Every Core's URL, on consecutive ports from `corePort` (the first is `urls.core`). */
  readonly coreUrls: string[];
  /** Each service's port, by service name. */
  private readonly ports = new Map<string, number>();
  /** `postgres://…` of the devnet's database (with `--store postgres`). */
  private databaseUrl: string | null = null;

  constructor(
    readonly options: DevnetOptions,
    readonly topology: DevnetTopology = { store: "sqlite", replicas: 1, postgresPort: 0 },
  ) {
    const host = options.host.includes(":") ? `[${options.host}]` : options.host;
    this.coreUrls = Array.from(
      { length: topology.replicas },
      (_, i) => `http://${host}:${options.corePort + i}`,
    );
    this.urls = {
      rpc: `http://${host}:${options.rpcPort}`,
      core: this.coreUrls[0],
      facilitator: `http://${host}:${options.facilitatorPort}`,
      ...(topology.withExact === true ? { exact: `http://${host}:${options.exactPort}` } : {}),
    };
    this.ports.set("chain", options.rpcPort);
    this.ports.set("facilitator", options.facilitatorPort);
    if (topology.withExact === true) this.ports.set("exact", options.exactPort);
    for (let i = 0; i < topology.replicas; i++) this.ports.set(coreName(i), options.corePort + i);
    if (topology.store === "postgres") this.ports.set("postgres", topology.postgresPort);
  }

  private get logDir(): string {
    return path.join(this.options.dataDir, "logs");
  }

  async start(): Promise<void> {
    await this.checkNothingLeftOver();
    this.resetDataDir();

    const chain = await this.startChain();
    const provider = devnetProvider(this.urls.rpc, chain.chainId);
    try {
      let started = Date.now();
      say("contracts: deploying (deploySurety: ValidationRegistry, Vault, ClearingHouse, tUSD, tETH) …");
      const { record, grants } = await deployDevnetContracts(provider, this.options.timings);
      this.grants = grants;
      let exactToken: DevnetExactToken | undefined;
      if (this.topology.withExact === true) {
        exactToken = await deployExactToken(provider);
        this.grants[exactToken.symbol] = DEVNET_EXACT_TOKEN.grant;
      }
      this.deployment = writeDevnetDeployment(this.options.deploymentFile, record, this.urls, exactToken);
      say(`contracts: deployed and dev accounts funded in ${seconds(started)}`);
      say(`contracts: wrote ${displayPath(this.options.deploymentFile)}`);
      if (this.topology.store === "postgres") {
        started = Date.now();
        await this.startPostgres();
        say(`postgres: ready at ${this.redactedDatabaseUrl()} in ${seconds(started)}`);
      }
      for (let i = 0; i < this.topology.replicas; i++) {
        started = Date.now();
        await this.startCore(chain.chainId, i);
        say(`${coreName(i)}: healthy at ${this.coreUrls[i]} in ${seconds(started)}`);
      }
      started = Date.now();
      await this.startFacilitator(chain.chainId);
      say(`facilitator: healthy at ${this.urls.facilitator} in ${seconds(started)}`);
      if (this.urls.exact !== undefined) {
        started = Date.now();
        await this.startExactFacilitator(chain.chainId, this.urls.exact);
        say(
          `exact: the official x402 exact facilitator healthy at ${this.urls.exact} in ${seconds(started)}`,
        );
      }
    } finally {
      provider.destroy();
    }
  }

  /** Refuses to start over a running devnet or a busy port, saying which process holds it. */
  private async checkNothingLeftOver(): Promise<void> {
    const stateFile = path.join(this.options.dataDir, STATE_FILE);
    let previous: RunState | null = null;
    if (existsSync(stateFile)) {
      try {
        previous = JSON.parse(readFileSync(stateFile, "utf8")) as RunState;
      } catch {
        previous = null;
      }
    }
    if (previous && previous.pid !== process.pid && isAlive(previous.pid)) {
      throw new Error(
        `another devnet is running (pid ${previous.pid}, started ${previous.startedAt}, data ${this.options.dataDir}); ` +
          `stop it with Ctrl-C in its terminal or \`kill -INT ${previous.pid}\`, or give this one another ` +
          "SURETY_DEVNET_DATA_DIR and other ports",
      );
    }
    const ports: [string, number, string][] = [
      ["chain RPC", this.options.rpcPort, "SURETY_DEVNET_RPC_PORT"],
      ...this.coreUrls.map(
        (_, i) =>
          [i === 0 ? "Core" : `Core ${i + 1}`, this.options.corePort + i, "SURETY_DEVNET_CORE_PORT"] as [
            string,
            number,
            string,
          ],
      ),
      ["facilitator", this.options.facilitatorPort, "SURETY_DEVNET_FACILITATOR_PORT"],
    ];
    if (this.topology.withExact === true) {
      ports.push(["exact facilitator", this.options.exactPort, "SURETY_DEVNET_EXACT_PORT"]);
    }
    if (this.topology.store === "postgres") {
      ports.push(["PostgreSQL", this.topology.postgresPort, "SURETY_DEVNET_POSTGRES_PORT"]);
    }
    const busy: string[] = [];
    const taken = new Map<number, string>();
    for (const [what, port] of ports) {
      if (taken.has(port)) busy.push(`port ${port} is given to both ${taken.get(port)} and ${what}`);
      taken.set(port, what);
    }
    for (const [what, port, variable] of ports) {
      if (await isPortFree(this.options.host, port)) continue;
      const owner = await portOwner(port);
      const leftover = owner && previous && Object.values(previous.services).includes(owner.pid);
      let line = `port ${port} (${what}) is in use`;
      if (owner) line += ` by pid ${owner.pid}${owner.command ? ` (${owner.command})` : ""}`;
      if (leftover)
        line += `, left over from a devnet run that did not stop cleanly: stop it with \`kill -- -${owner.pid}\``;
      else line += `; stop that process or choose another port with ${variable}`;
      busy.push(line);
    }
    if (busy.length > 0) throw new Error(busy.join("\n  "));
    say(`ports ${ports.map(([, port]) => port).join(", ")} on ${this.options.host}: free`);
  }

  /** Fresh chain every run, so yesterday's database and deployment mean nothing: start from empty. */
  private resetDataDir(): void {
    const dir = this.options.dataDir;
    const forbidden = [path.parse(dir).root, ROOT, process.cwd(), homedir()];
    if (forbidden.includes(dir))
      throw new Error(`SURETY_DEVNET_DATA_DIR must be a directory of its own, got ${dir}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(this.logDir, { recursive: true });
    this.ownsDataDir = true;
    this.saveState();
    say(`state: ${displayPath(dir)}/ wiped (fresh chain, fresh Core database)`);
  }

  private saveState(): void {
    const state: RunState = {
      pid: process.pid,
      startedAt: new Date().toISOString(),
      services: Object.fromEntries(this.services.map((service) => [service.name, service.pid])),
    };
    writeFileSync(path.join(this.options.dataDir, STATE_FILE), JSON.stringify(state, null, 2) + "\n");
  }

  private launch(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): ServiceProcess {
    // A Ctrl-C during startup: start nothing more (stop() only knows the services started so far).
    if (this.stopping !== null) throw new Error("interrupted");
    const service = ServiceProcess.start({
      name,
      command,
      args,
      env,
      cwd: ROOT,
      logFile: path.join(this.logDir, `${name}.log`),
      echo: this.options.verbose,
    });
    this.services.push(service);
    this.saveState();
    say(`${name}: started (pid ${service.pid}, log ${displayPath(service.logFile)})`);
    return service;
  }

  private abortIfDead(service: ServiceProcess): () => string | null {
    return () =>
      service.running
        ? null
        : `${service.name} ${service.describeExit()}; its last output:\n${service.tail()}`;
  }

  private async startChain(): Promise<{ chainId: number }> {
    const started = Date.now();
    const hardhat = require.resolve("hardhat/internal/cli/bootstrap.js", { paths: [ROOT] });
    const args = [
      hardhat,
      "--config",
      path.join(__dirname, "devnet", COMPILED ? "node.config.js" : "node.config.ts"),
      "node",
      "--hostname",
      this.options.host,
      "--port",
      String(this.options.rpcPort),
    ];
    const service = this.launch("chain", process.execPath, args, baseEnv());
    const chainId = await waitFor(() => rpcChainId(this.urls.rpc), {
      what: `chain RPC at ${this.urls.rpc}`,
      timeoutMs: this.options.startupTimeoutMs,
      abort: this.abortIfDead(service),
    });
    say(
      `chain: ready at ${this.urls.rpc} (chain id ${chainId}, hardfork prague, a block every second) in ${seconds(started)}`,
    );
    return { chainId };
  }

  /** The embedded PostgreSQL server as a service of its own; ready once its database answers. */
  private async startPostgres(): Promise<void> {
    const password = randomBytes(12).toString("hex");
    const port = this.topology.postgresPort;
    this.databaseUrl = `postgres://postgres:${password}@127.0.0.1:${port}/surety`;
    const args = [
      ...tsNodeArgs("scripts/devnet/postgres.ts"),
      path.join(this.options.dataDir, "postgres"),
      String(port),
      password,
      "surety",
    ];
    const service = this.launch("postgres", process.execPath, args, baseEnv());
    const url = this.databaseUrl;
    await waitFor(
      async () => {
        const { Client } = await import("pg");
        const client = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
        await client.connect();
        await client.end();
        return true;
      },
      {
        what: `PostgreSQL at 127.0.0.1:${port}`,
        timeoutMs: this.options.startupTimeoutMs,
        abort: this.abortIfDead(service),
      },
    );
  }

  private redactedDatabaseUrl(): string {
    return (this.databaseUrl ?? "").replace(/:[^:@/]*@/, ":***@");
  }

  private coreEnv(chainId: number, index = 0): NodeJS.ProcessEnv {
    const facilitator = devAccount(DEVNET_ROLES.facilitator);
    const operator = devAccount(DEVNET_ROLES.operator);
    const devnet: NodeJS.ProcessEnv = {
      SURETY_HOST: this.options.host,
      SURETY_PORT: String(this.options.corePort + index),
      SURETY_LOG_LEVEL: this.options.logLevel,
      SURETY_DATA_DIR: path.join(this.options.dataDir, coreName(index)),
      SURETY_NETWORK: "localhost",
      SURETY_RPC_URL: this.urls.rpc,
      SURETY_CHAIN_ID: String(chainId),
      SURETY_DEPLOYMENT_FILE: this.options.deploymentFile,
      // The Vault was given the key derived from this public material: Core must sign with the same one.
      SURETY_BLS_SECRET: DEVNET_BLS_IKM,
      SURETY_OPERATOR_PRIVATE_KEY: operator.privateKey,
      // Fresh per run, like the chain: tokens of an earlier run must not work against this one.
      SURETY_JWT_SECRET: randomBytes(32).toString("hex"),
      SURETY_FACILITATORS: facilitator.address,
      // Sized for the devnet's chain (a block a second, 0 confirmations): the devnet's timings assume them.
      SURETY_POLL_INTERVAL_MS: String(DEVNET_POLL_INTERVAL_MS),
      SURETY_V2_DEADLINE_MARGIN_SECONDS: String(this.options.v2DeadlineMarginSeconds),
    };
    if (this.databaseUrl !== null) {
      devnet.SURETY_DATABASE_URL = this.databaseUrl;
      devnet.SURETY_REPLICA_ID = coreName(index);
      devnet.SURETY_LEADER_LEASE_MS = String(DEVNET_LEADER_LEASE_MS);
    }
    // Settings of newer Core versions (clearing cadence): passed only when this Core knows them.
    const optional: NodeJS.ProcessEnv = {
      SURETY_CYCLE_LENGTH_SECONDS: String(this.options.timings.cycleLength),
    };
    for (const [name, value] of Object.entries(optional)) {
      if (unknownEnvSettings({ [name]: value }).length === 0) devnet[name] = value;
    }
    const ownedByDevnet = new Set(Object.keys(devnet));
    const user = passThrough((name) => !name.startsWith("SURETY_FACILITATOR_") && !ownedByDevnet.has(name));
    // A default, not owned: the console's admin (docs/console.md) is the deployer unless the user names
    // admin wallets (SURETY_ADMIN_WALLETS, or a config file, which the environment would override).
    const defaults: NodeJS.ProcessEnv =
      user.SURETY_CONFIG_FILE === undefined
        ? { SURETY_ADMIN_WALLETS: devAccount(DEVNET_ROLES.deployer).address }
        : {};
    return { ...baseEnv(), ...defaults, ...user, ...devnet };
  }

  private async startCore(chainId: number, index = 0): Promise<void> {
    const service = this.launch(
      coreName(index),
      process.execPath,
      tsNodeArgs("operator/main.ts"),
      this.coreEnv(chainId, index),
    );
    const url = this.coreUrls[index];
    await waitFor(async () => ((await getJson(`${url}/core/health`)).status === 200 ? true : undefined), {
      what: `Core health at ${url}/core/health`,
      timeoutMs: this.options.startupTimeoutMs,
      abort: this.abortIfDead(service),
    });
  }

  private async startFacilitator(chainId: number): Promise<void> {
    const devnet: NodeJS.ProcessEnv = {
      SURETY_FACILITATOR_HOST: this.options.host,
      SURETY_FACILITATOR_PORT: String(this.options.facilitatorPort),
      SURETY_FACILITATOR_LOG_LEVEL: this.options.logLevel,
      // Several replicas: the facilitator spreads its calls over them and fails over (docs/facilitator.md).
      SURETY_FACILITATOR_CORE_URL: this.coreUrls.join(","),
      SURETY_FACILITATOR_PRIVATE_KEY: devAccount(DEVNET_ROLES.facilitator).privateKey,
      SURETY_FACILITATOR_CHAIN_ID: String(chainId),
      SURETY_FACILITATOR_RPC_URL: this.urls.rpc,
    };
    const owned = new Set(Object.keys(devnet));
    const user = passThrough((name) => name.startsWith("SURETY_FACILITATOR_") && !owned.has(name));
    const env = { ...baseEnv(), ...user, ...devnet };
    const service = this.launch("facilitator", process.execPath, tsNodeArgs("facilitator/main.ts"), env);
    await waitFor(
      async () => ((await getJson(`${this.urls.facilitator}/health`)).status === 200 ? true : undefined),
      {
        what: `facilitator health at ${this.urls.facilitator}/health`,
        timeoutMs: this.options.startupTimeoutMs,
        abort: this.abortIfDead(service),
      },
    );
  }

  /**
   * The official x402 `exact` facilitator (`--with-exact`), a service of its own: @x402/core's
   * x402Facilitator with @x402/evm's exact scheme, settling with the `exactFacilitator` dev account.
   */
  private async startExactFacilitator(chainId: number, url: string): Promise<void> {
    const env: NodeJS.ProcessEnv = {
      ...baseEnv(),
      EXACT_FACILITATOR_HOST: this.options.host,
      EXACT_FACILITATOR_PORT: String(this.options.exactPort),
      EXACT_FACILITATOR_RPC_URL: this.urls.rpc,
      EXACT_FACILITATOR_CHAIN_ID: String(chainId),
      EXACT_FACILITATOR_PRIVATE_KEY: devAccount(DEVNET_ROLES.exactFacilitator).privateKey,
    };
    const service = this.launch(
      "exact",
      process.execPath,
      tsNodeArgs("scripts/devnet/exact-facilitator.ts"),
      env,
    );
    await waitFor(async () => ((await getJson(`${url}/health`)).status === 200 ? true : undefined), {
      what: `exact facilitator health at ${url}/health`,
      timeoutMs: this.options.startupTimeoutMs,
      abort: this.abortIfDead(service),
    });
  }

  /** Whether `dead` is a Core replica and another Core replica still runs. */
  otherCoreRunning(dead: ServiceProcess): boolean {
    const isCore = (name: string) => name === "core" || name.startsWith("core-");
    return (
      isCore(dead.name) &&
      this.services.some((other) => other !== dead && isCore(other.name) && other.running)
    );
  }

  /** Calls `onDeath` once if any service exits while the devnet is up. */
  watch(onDeath: (service: ServiceProcess) => void): void {
    for (const service of this.services) {
      void service.exited.then(() => {
        if (this.stopping === null) onDeath(service);
      });
    }
  }

  /** Stops the services in reverse start order and waits until their ports are free. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const service of [...this.services].reverse()) {
        const started = Date.now();
        await service.stop();
        say(
          `${service.name}: stopped (pid ${service.pid}, ${service.describeExit()}) in ${seconds(started)}`,
        );
      }
      const ports = this.services.map((service) => this.portOf(service.name)).reverse();
      const stuck: number[] = [];
      for (const port of ports)
        if (!(await waitForPortFree(this.options.host, port, 5_000))) stuck.push(port);
      if (stuck.length > 0) say(`warning: port(s) ${stuck.join(", ")} still in use`);
      else if (ports.length > 0) say(`ports ${ports.join(", ")} free`);
      // Only our own state file: a run refused because another devnet owns the data dir leaves it alone.
      if (this.ownsDataDir) rmSync(path.join(this.options.dataDir, STATE_FILE), { force: true });
    })();
    return this.stopping;
  }

  private portOf(name: string): number {
    return this.ports.get(name) ?? this.options.facilitatorPort;
  }

  /** Second Ctrl-C: no more waiting. */
  killNow(): void {
    for (const service of this.services) service.kill();
  }

  printSummary(): void {
    const deployment = this.deployment;
    if (!deployment) return;
    const t = this.options.timings;
    const rel = displayPath;
    const lines: string[] = ["", `Surety devnet is running (chain id ${deployment.chainId})`, "", "Services"];
    const byName = new Map(this.services.map((s) => [s.name, s]));
    const rows: [string, string, string][] = [
      ["chain", "Chain RPC", this.urls.rpc],
      ...(this.topology.store === "postgres"
        ? [["postgres", "PostgreSQL", `127.0.0.1:${this.topology.postgresPort}`] as [string, string, string]]
        : []),
      ...this.coreUrls.map(
        (url, i) => [coreName(i), i === 0 ? "Core" : `Core ${i + 1}`, url] as [string, string, string],
      ),
      ["facilitator", "Facilitator", this.urls.facilitator],
      ...(this.urls.exact !== undefined
        ? [["exact", "Exact (x402)", this.urls.exact] as [string, string, string]]
        : []),
    ];
    for (const [name, label, url] of rows) {
      const service = byName.get(name);
      lines.push(
        `  ${label.padEnd(12)} ${url.padEnd(24)} pid ${String(service?.pid).padEnd(8)} log ${rel(service?.logFile ?? "")}`,
      );
    }
    // Core serves the console (docs/console.md); `npm run devnet` builds it first.
    lines.push(`  ${"Console".padEnd(12)} ${this.urls.core}/console/`);
    if (this.databaseUrl !== null) {
      lines.push(
        "",
        `Store: PostgreSQL ${this.databaseUrl} (SURETY_DATABASE_URL of every Core)`,
        this.topology.replicas > 1
          ? `  ${this.topology.replicas} Core replicas share it; one leads the background work (GET /core/health, "leadership"); ` +
              `kill it and another takes over within ${(2 * DEVNET_LEADER_LEASE_MS) / 1000} s`
          : "  one Core; add --replicas 2 for a second one on the same database",
      );
    }
    lines.push("", `Contracts (${rel(this.options.deploymentFile)})`);
    for (const [name, contract] of Object.entries(deployment.contracts)) {
      lines.push(`  ${name.padEnd(19)} ${contract.address}  block ${contract.blockNumber}`);
    }
    for (const token of deployment.tokens) {
      lines.push(`  ${token.symbol.padEnd(19)} ${token.address}  ${token.decimals} decimals`);
    }
    const exact = deployment.exactToken;
    if (exact !== undefined) {
      lines.push(
        `  ${exact.symbol.padEnd(19)} ${exact.address}  ${exact.decimals} decimals, EIP-3009 (for x402 exact; ` +
          `EIP-712 domain "${exact.name}" version "${exact.version}"; not Surety collateral)`,
      );
    }
    lines.push(
      "",
      `Timings: cycle ${t.cycleLength} s, commit delay ${t.commitDelay} s, challenge window ${t.challengeWindow} s ` +
        `(+ as long to answer), payment window ${t.paymentWindow} s, default window ${t.defaultWindow} s, ` +
        `withdrawal grace ${t.withdrawalGracePeriod} s, confirmation lag ${t.confirmationLag} s`,
      "",
      "Service accounts",
    );
    const role = (label: string, index: number) => {
      const account = devAccount(index);
      lines.push(
        `  ${label.padEnd(28)} #${String(index).padEnd(3)} ${account.address}  key ${account.privateKey}`,
      );
    };
    role("deployer, admin, Core admin", DEVNET_ROLES.deployer);
    role("Core operator (OPERATOR_ROLE)", DEVNET_ROLES.operator);
    role("guardian (GUARDIAN_ROLE, vetoes)", DEVNET_ROLES.guardian);
    role("facilitator wallet", DEVNET_ROLES.facilitator);
    if (exact !== undefined) role("exact facilitator wallet", DEVNET_ROLES.exactFacilitator);
    const grants = Object.entries(this.grants)
      .map(([symbol, amount]) => `${Number(amount).toLocaleString("en-US")} ${symbol}`)
      .join(", ");
    lines.push(
      "",
      `Dev accounts (10,000 ETH${grants ? `, ${grants}` : ""} each). These are Hardhat's PUBLIC keys: never use them with real value.`,
    );
    for (const account of devAccounts(FUNDED_ACCOUNT_COUNT)) {
      lines.push(`  #${String(account.index).padEnd(3)} ${account.address}  key ${account.privateKey}`);
    }
    lines.push(
      "",
      "Try",
      "  npm run cli -- deposit --account 1 --amount 1      (1 ETH of collateral for account #1)",
      "  npm run cli -- balance --account 1",
      "  npm run smoke                                     (deposit + x402 purchase + certificate check)",
      ...(exact !== undefined && this.urls.exact !== undefined
        ? [
            `  exact beside svc-credit: HTTPFacilitatorClient({ url: "${this.urls.exact}" }) and a price of`,
            `    { asset: "${exact.address}", amount: "1000", extra: { name: "${exact.name}", version: "${exact.version}" } }`,
          ]
        : []),
      "",
      "Stop: Ctrl-C here (or kill -INT " + process.pid + "): stops every service and frees the ports.",
      "",
    );
    process.stdout.write(lines.join("\n") + "\n");
  }
}

async function main(): Promise<void> {
  let options: DevnetOptions;
  let topology: DevnetTopology;
  try {
    options = devnetOptionsFromEnv();
    topology = devnetTopology(process.argv.slice(2));
  } catch (error) {
    if (error instanceof DevnetOptionsError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const devnet = new Devnet(options, topology);
  let exitCode = 0;
  const shutdown = async (reason: string, code: number) => {
    exitCode = Math.max(exitCode, code);
    say(`${reason}: stopping every service …`);
    await devnet.stop();
    process.exit(exitCode);
  };
  let signals = 0;
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      signals += 1;
      if (signals > 1) {
        say(`${signal} again: killing every service now`);
        devnet.killNow();
        process.exit(130);
      }
      void shutdown(signal, 0);
    });
  }
  process.on("uncaughtException", (error) => {
    console.error(error);
    devnet.killNow();
    process.exit(1);
  });

  const started = Date.now();
  say(`starting the Surety devnet in ${ROOT}`);
  try {
    await devnet.start();
  } catch (error) {
    console.error(`[devnet] failed to start: ${(error as Error).message}`);
    await shutdown("startup failed", 1);
    return;
  }
  devnet.printSummary();
  say(
    `${READY_MARKER} rpc=${devnet.urls.rpc} core=${devnet.urls.core} facilitator=${devnet.urls.facilitator} console=${devnet.urls.core}/console/` +
      (devnet.coreUrls.length > 1 ? ` cores=${devnet.coreUrls.join(",")}` : "") +
      (devnet.urls.exact !== undefined && devnet.deployment?.exactToken !== undefined
        ? ` exact=${devnet.urls.exact} exact_token=${devnet.deployment.exactToken.address}`
        : "") +
      ` (${seconds(started)})`,
  );
  devnet.watch((service) => {
    if (devnet.otherCoreRunning(service)) {
      // Replicas: the others keep serving, one of them takes the background work over (docs/scale-out.md).
      say(`${service.name} ${service.describeExit()}; the other Core replicas keep serving`);
      return;
    }
    console.error(
      `[devnet] ${service.name} ${service.describeExit()} unexpectedly; its last output:\n${service.tail()}`,
    );
    void shutdown(`${service.name} died`, 1);
  });
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}

/** Service name of the `index`-th Core: `core`, then `core-2`, `core-3`, … */
function coreName(index: number): string {
  return index === 0 ? "core" : `core-${index + 1}`;
}
