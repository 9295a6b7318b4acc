/**
 * Devnet options from `SURETY_DEVNET_*` environment variables. Every value is
 * validated before anything starts; a bad one stops the script with a
 * message naming the variable.
 */
import path from "node:path";
import { maxV2ValidationDeadline } from "../../operator/chain/timings";
import type { Timings } from "../deploy";

export const DEVNET_ENV_PREFIX = "SURETY_DEVNET_";

export interface DevnetOptions {
  /** Interface every service binds to. */
  host: string;
  rpcPort: number;
  corePort: number;
  facilitatorPort: number;
  /** The official x402 `exact` facilitator's port (`--with-exact`). */
  exactPort: number;
  /** Clearing timings written to the Vault (cycle length from SURETY_DEVNET_CYCLE_SECONDS). */
  timings: Timings;
  /** Core's `SURETY_V2_DEADLINE_MARGIN_SECONDS` on the devnet ({@link DEVNET_V2_DEADLINE_MARGIN_SECONDS}). */
  v2DeadlineMarginSeconds: number;
  /** Wiped at every start: Core's SQLite database and the services' log files live here. */
  dataDir: string;
  /** Where the deployment record is written (Core reads it from there too). */
  deploymentFile: string;
  /** pino level of Core and the facilitator (their logs go to files under dataDir/logs). */
  logLevel: string;
  /** Also echo every service's output on this terminal. */
  verbose: boolean;
  /** How long each service may take to become ready. */
  startupTimeoutMs: number;
}

/** Variable → what it sets, for usage text and docs. */
export const DEVNET_ENV_HELP: Readonly<Record<string, string>> = {
  SURETY_DEVNET_HOST: "interface every service binds to (default 127.0.0.1)",
  SURETY_DEVNET_RPC_PORT: "Hardhat node port (default 8545)",
  SURETY_DEVNET_CORE_PORT: "Core port (default 8080)",
  SURETY_DEVNET_FACILITATOR_PORT: "facilitator port (default 8402)",
  SURETY_DEVNET_EXACT_PORT: "the official x402 exact facilitator's port with --with-exact (default 8403)",
  SURETY_DEVNET_POSTGRES_PORT: "embedded PostgreSQL port with --store postgres (default 55432)",
  SURETY_DEVNET_CYCLE_SECONDS:
    "clearing cycle length in seconds (default 60, at least 10); the other timings follow it",
  SURETY_DEVNET_TIMINGS: 'JSON object overriding single timings, e.g. {"paymentWindow":30}',
  SURETY_DEVNET_DATA_DIR: "state directory, wiped at every start (default .data/devnet)",
  SURETY_DEVNET_DEPLOYMENT_FILE: "deployment record to write (default deployments/localhost.json)",
  SURETY_DEVNET_LOG_LEVEL: "log level of Core and the facilitator (default info)",
  SURETY_DEVNET_VERBOSE: "1 = echo the services' logs here too (default 0)",
  SURETY_DEVNET_STARTUP_TIMEOUT_SECONDS: "how long each service may take to start (default 60)",
};

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
const MAX_CYCLE_SECONDS = 24 * 60 * 60;
const MAX_PORT = 65_535;

export class DevnetOptionsError extends Error {
  override readonly name = "DevnetOptionsError";
}

/**
 * Core's reaction time on the devnet, in seconds: once a chain deadline passes, the next block (one a
 * second: scripts/devnet/node.config.ts) shows it, Core's next round (SURETY_POLL_INTERVAL_MS = 1000)
 * indexes it and acts, and its transaction is mined in the following block. Three seconds, plus one
 * to spare. Every window Core must act within is at least this long.
 */
export const DEVNET_REACTION_SECONDS = 4;
/**
 * Core's confirmation lag on the devnet, in seconds (the Vault's `confirmationLag`): Core acts on blocks 0
 * deep there, and the latest block is at most one block time (a second) behind the chain's clock.
 * Generally: confirmations × block time + one block time.
 */
export const DEVNET_CONFIRMATION_LAG_SECONDS = 1;
/** Core's round on the devnet (SURETY_POLL_INTERVAL_MS), as the reaction time above assumes. */
export const DEVNET_POLL_INTERVAL_MS = 1_000;
/**
 * Core's `SURETY_V2_DEADLINE_MARGIN_SECONDS` on the devnet: a passed V2 deadline is indexed and the
 * guarantee netted within one reaction time (0 confirmations, a block a second). The 30 s default is
 * sized for public chains; on the devnet it would eat the whole V2 window of short cycles.
 */
export const DEVNET_V2_DEADLINE_MARGIN_SECONDS = DEVNET_REACTION_SECONDS;
/**
 * The shortest cycle the devnet runs the whole protocol with. The payment window is one cycle: a debtor
 * learns its debit once Core has indexed the commit (a reaction time) and needs its payment mined
 * (another), with as much again to spare; and a cycle's commit (within the commit delay, at least a
 * reaction time) must land well before the next cutoff.
 */
export const DEVNET_MIN_CYCLE_SECONDS = 10;
/**
 * The least room a V2 guarantee must get: the latest validation deadline Core accepts is at least this
 * far ahead, time for the validation request and response to be mined and indexed.
 */
export const DEVNET_MIN_V2_WINDOW_SECONDS = 10;

/**
 * Timings for a cycle of `cycleLength` seconds: short windows, each at least Core's reaction time, that
 * keep the Vault's invariant (grace > cycle + commit delay + confirmation lag + 2 × challenge window +
 * payment + default window; the answer window is as long as the challenge window) with half a cycle (at least 10 s) to
 * spare. The challenge window is half a cycle, and more than Core's reaction time: a challenge opened in
 * its last second is answered by Core's keeper within the answer window that follows.
 */
export function devnetTimings(cycleLength: number): Timings {
  const commitDelay = Math.max(DEVNET_REACTION_SECONDS, Math.ceil(cycleLength / 6));
  const challengeWindow = Math.max(DEVNET_REACTION_SECONDS + 1, Math.ceil(cycleLength / 2));
  const paymentWindow = cycleLength;
  const defaultWindow = Math.max(DEVNET_REACTION_SECONDS + 1, Math.ceil(cycleLength / 2));
  const margin = Math.max(10, Math.ceil(cycleLength / 2));
  const confirmationLag = DEVNET_CONFIRMATION_LAG_SECONDS;
  return {
    cycleLength,
    commitDelay,
    challengeWindow,
    paymentWindow,
    defaultWindow,
    withdrawalGracePeriod:
      cycleLength +
      commitDelay +
      confirmationLag +
      2 * challengeWindow +
      paymentWindow +
      defaultWindow +
      margin,
    confirmationLag,
  };
}

/** How far ahead of now Core accepts a V2 validation deadline with these timings on the devnet. */
export function devnetV2Window(timings: Timings, marginSeconds = DEVNET_V2_DEADLINE_MARGIN_SECONDS): number {
  return maxV2ValidationDeadline(timings, 0, marginSeconds);
}

/**
 * Why these timings cannot run the whole protocol on the devnet (empty: they can). Checked at startup,
 * after SURETY_DEVNET_TIMINGS overrides, so that a devnet that starts can clear, cover and validate.
 */
export function devnetTimingProblems(timings: Timings): string[] {
  const problems: string[] = [];
  const t = timings;
  if (t.cycleLength < DEVNET_MIN_CYCLE_SECONDS) {
    problems.push(
      `cycleLength ${t.cycleLength} s is below the devnet's minimum of ${DEVNET_MIN_CYCLE_SECONDS} s (the ` +
        "shortest cycle with which it runs the whole protocol, V2 included)",
    );
  }
  for (const name of ["commitDelay", "challengeWindow", "paymentWindow", "defaultWindow"] as const) {
    if (t[name] < DEVNET_REACTION_SECONDS) {
      problems.push(
        `${name} ${t[name]} s is shorter than Core's reaction time on the devnet (${DEVNET_REACTION_SECONDS} s)`,
      );
    }
  }
  if (t.confirmationLag < DEVNET_CONFIRMATION_LAG_SECONDS) {
    problems.push(
      `confirmationLag ${t.confirmationLag} s is shorter than Core's lag behind the chain on the devnet ` +
        `(${DEVNET_CONFIRMATION_LAG_SECONDS} s: a block a second, 0 confirmations)`,
    );
  }
  const clearingPath =
    t.cycleLength +
    t.commitDelay +
    t.confirmationLag +
    2 * t.challengeWindow +
    t.paymentWindow +
    t.defaultWindow;
  if (t.withdrawalGracePeriod <= clearingPath) {
    problems.push(
      `withdrawalGracePeriod ${t.withdrawalGracePeriod} s must exceed cycleLength + commitDelay + ` +
        `confirmationLag + 2 × challengeWindow + paymentWindow + defaultWindow = ${clearingPath} s ` +
        "(the Vault refuses it)",
    );
  } else if (devnetV2Window(t) < DEVNET_MIN_V2_WINDOW_SECONDS) {
    problems.push(
      `V2 guarantees would get a validation window of ${devnetV2Window(t)} s (withdrawalGracePeriod − ` +
        `cycleLength − commitDelay − confirmationLag − ${DEVNET_V2_DEADLINE_MARGIN_SECONDS} s margin − 1), less than the ` +
        `${DEVNET_MIN_V2_WINDOW_SECONDS} s minimum: raise withdrawalGracePeriod`,
    );
  }
  return problems;
}

export function devnetOptionsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): DevnetOptions {
  const problems: string[] = [];
  const read = <T>(name: string, fallback: T, parse: (raw: string) => T): T => {
    const raw = env[DEVNET_ENV_PREFIX + name];
    if (raw === undefined || raw.trim() === "") return fallback;
    try {
      return parse(raw.trim());
    } catch (error) {
      problems.push(`${DEVNET_ENV_PREFIX}${name}: ${(error as Error).message}`);
      return fallback;
    }
  };
  const port = (raw: string) => integer(raw, 1, MAX_PORT);
  const cycle = read("CYCLE_SECONDS", 60, (raw) => {
    const seconds = integer(raw, 1, MAX_CYCLE_SECONDS);
    if (seconds < DEVNET_MIN_CYCLE_SECONDS) {
      throw new Error(
        `must be at least ${DEVNET_MIN_CYCLE_SECONDS}, the shortest cycle with which the devnet runs the whole ` +
          `protocol (V2 included), got ${seconds}`,
      );
    }
    return seconds;
  });
  const overrides = read<Partial<Timings>>("TIMINGS", {}, timingOverrides);
  const options: DevnetOptions = {
    host: read("HOST", "127.0.0.1", (raw) => raw),
    rpcPort: read("RPC_PORT", 8545, port),
    corePort: read("CORE_PORT", 8080, port),
    facilitatorPort: read("FACILITATOR_PORT", 8402, port),
    exactPort: read("EXACT_PORT", 8403, port),
    timings: { ...devnetTimings(cycle), ...overrides },
    v2DeadlineMarginSeconds: DEVNET_V2_DEADLINE_MARGIN_SECONDS,
    dataDir: path.resolve(
      cwd,
      read("DATA_DIR", path.join(".data", "devnet"), (raw) => raw),
    ),
    deploymentFile: path.resolve(
      cwd,
      read("DEPLOYMENT_FILE", path.join("deployments", "localhost.json"), (raw) => raw),
    ),
    logLevel: read("LOG_LEVEL", "info", (raw) => {
      if (!LOG_LEVELS.includes(raw)) throw new Error(`must be one of ${LOG_LEVELS.join(", ")}`);
      return raw;
    }),
    verbose: read("VERBOSE", false, (raw) => {
      if (raw !== "0" && raw !== "1") throw new Error("must be 0 or 1");
      return raw === "1";
    }),
    startupTimeoutMs: read("STARTUP_TIMEOUT_SECONDS", 60, (raw) => integer(raw, 1, 3600)) * 1000,
  };
  // A bad cycle is already reported above; the timings derived from the fallback say nothing more.
  if (problems.length === 0) {
    for (const problem of devnetTimingProblems(options.timings)) {
      problems.push(`${DEVNET_ENV_PREFIX}CYCLE_SECONDS / ${DEVNET_ENV_PREFIX}TIMINGS: ${problem}`);
    }
  }
  const ports = [options.rpcPort, options.corePort, options.facilitatorPort];
  if (new Set(ports).size !== ports.length)
    problems.push(`the three ports must differ, got ${ports.join(", ")}`);
  for (const name of Object.keys(env)) {
    if (name.startsWith(DEVNET_ENV_PREFIX) && !(name in DEVNET_ENV_HELP)) {
      problems.push(`${name}: unknown setting (known: ${Object.keys(DEVNET_ENV_HELP).join(", ")})`);
    }
  }
  if (problems.length > 0) {
    throw new DevnetOptionsError(`invalid devnet settings:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
  return options;
}

function integer(raw: string, min: number, max: number): number {
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new Error(`must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

const TIMING_NAMES: readonly (keyof Timings)[] = [
  "cycleLength",
  "commitDelay",
  "challengeWindow",
  "paymentWindow",
  "defaultWindow",
  "withdrawalGracePeriod",
  "confirmationLag",
];

function timingOverrides(raw: string): Partial<Timings> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error("must be a JSON object of seconds");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error("must be a JSON object of seconds");
  }
  const timings: Partial<Timings> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!(TIMING_NAMES as readonly string[]).includes(key)) {
      throw new Error(`unknown timing ${JSON.stringify(key)} (known: ${TIMING_NAMES.join(", ")})`);
    }
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      throw new Error(`${key} must be a non-negative integer number of seconds`);
    }
    timings[key as keyof Timings] = value;
  }
  return timings;
}
