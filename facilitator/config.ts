/**
 * Facilitator configuration: one typed object from defaults and
 * `SURETY_FACILITATOR_*` environment variables (or a plain object in tests).
 * Every value is validated at startup; a bad value stops the process with a
 * message naming the variable and what is wrong with it.
 */
import { computeAddress } from "ethers";
import { parsePrivateKey } from "../sdk/eip712";
import {
  ConfigProblemsError,
  type FieldTable as ConfigFieldTable,
  type LogLevel,
  absoluteUrl,
  envNameWithPrefix,
  integer,
  logLevel,
  nonEmptyString,
  resolveConfig,
} from "../runtime/config-fields";

export const FACILITATOR_ENV_PREFIX = "SURETY_FACILITATOR_";

export type FacilitatorLogLevel = LogLevel;

export interface FacilitatorConfig {
  /** Interface the HTTP server binds to. */
  host: string;
  /** TCP port; 0 picks a free port (tests). */
  port: number;
  logLevel: FacilitatorLogLevel;
  /**
   * Core's base URL, without a trailing slash (e.g. `http://127.0.0.1:8080`); several replicas of one
   * Core as a comma-separated list (`coreUrlsOf` splits it; docs/facilitator.md, "Several Core replicas").
   */
  coreUrl: string;
  /** The facilitator wallet (0x hex secp256k1 key): its SIWE identity towards Core. */
  privateKey: string;
  /**
   * JSON-RPC URL of a node of the chain, used to check that the Vault holds Core's BLS key; null
   * skips the check (the facilitator then trusts Core's public params).
   */
  rpcUrl: string | null;
  /** Chain the facilitator expects Core to serve; null accepts Core's. A mismatch fails health and verification. */
  chainId: number | null;
  /** Accepted claim timestamps: now − past ≤ timestamp ≤ now + future (same defaults as Core). */
  timestampWindowPastSeconds: number;
  timestampWindowFutureSeconds: number;
  /** Deadline of each HTTP request to Core, in milliseconds. */
  coreTimeoutMs: number;
  /** How long Core's public parameters are reused before they are fetched again. */
  publicParamsTtlSeconds: number;
}

/** Raw values as they come from env vars or a test; validated by {@link facilitatorConfigFromObject}. */
export type FacilitatorConfigInput = { [K in keyof FacilitatorConfig]?: unknown };

/** The configuration is unusable; `problems` lists each bad setting. */
export class FacilitatorConfigError extends ConfigProblemsError {
  override readonly name: string = "FacilitatorConfigError";
  constructor(problems: readonly string[]) {
    super("facilitator", problems);
  }
}

type FieldTable = ConfigFieldTable<FacilitatorConfig>;

const MAX_PORT = 65_535;
/** An HTTP deadline longer than this is a misconfiguration, not patience. */
const MAX_TIMEOUT_MS = 10 * 60 * 1000;

const FIELDS: FieldTable = {
  host: { parse: nonEmptyString, fallback: () => "127.0.0.1" },
  port: { parse: (raw) => integer(raw, 0, MAX_PORT), fallback: () => 8402 },
  logLevel: { parse: logLevel, fallback: () => "info" },
  coreUrl: { parse: httpUrlList, fallback: () => "http://127.0.0.1:8080" },
  privateKey: { parse: parsePrivateKey },
  rpcUrl: { parse: (raw) => (raw === null || raw === "" ? null : httpUrl(raw)), fallback: () => null },
  chainId: { parse: optionalChainId, fallback: () => null },
  timestampWindowPastSeconds: {
    parse: (raw) => integer(raw, 0, Number.MAX_SAFE_INTEGER),
    fallback: () => 600,
  },
  timestampWindowFutureSeconds: {
    parse: (raw) => integer(raw, 0, Number.MAX_SAFE_INTEGER),
    fallback: () => 30,
  },
  coreTimeoutMs: { parse: (raw) => integer(raw, 1, MAX_TIMEOUT_MS), fallback: () => 10_000 },
  publicParamsTtlSeconds: { parse: (raw) => integer(raw, 0, Number.MAX_SAFE_INTEGER), fallback: () => 60 },
};

const FIELD_NAMES = Object.keys(FIELDS) as (keyof FacilitatorConfig)[];

/** `coreUrl` → `SURETY_FACILITATOR_CORE_URL`. */
export function facilitatorEnvName(field: keyof FacilitatorConfig): string {
  return envNameWithPrefix(FACILITATOR_ENV_PREFIX, field);
}

/** Validates raw values; `describe` names a field in messages (env var name in {@link loadFacilitatorConfig}). */
export function facilitatorConfigFromObject(
  input: FacilitatorConfigInput,
  describe: (field: keyof FacilitatorConfig) => string = (field) => field,
): FacilitatorConfig {
  return resolveConfig(FIELDS, input, describe, (problems) => new FacilitatorConfigError(problems));
}

/** The startup path: defaults overridden by `SURETY_FACILITATOR_*` variables. */
export function loadFacilitatorConfig(env: NodeJS.ProcessEnv = process.env): FacilitatorConfig {
  const input: FacilitatorConfigInput = {};
  for (const field of FIELD_NAMES) {
    const value = env[facilitatorEnvName(field)];
    if (value !== undefined) input[field] = value;
  }
  return facilitatorConfigFromObject(input, facilitatorEnvName);
}

/**
 * How many facilitator processes `main.ts` runs (node:cluster workers sharing
 * the port; 1 = no cluster). A setting of the process, not of one server, so
 * it is not part of {@link FacilitatorConfig}. `/verify` is stateless and
 * CPU-bound, so a second process lets it use a second core; each worker keeps
 * its own Core session and public-params cache.
 */
export const FACILITATOR_WORKERS_ENV = `${FACILITATOR_ENV_PREFIX}WORKERS`;
const MAX_WORKERS = 64;

/** `SURETY_FACILITATOR_WORKERS` (default 1); a bad value is a FacilitatorConfigError naming the variable. */
export function loadFacilitatorWorkers(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[FACILITATOR_WORKERS_ENV];
  if (raw === undefined) return 1;
  try {
    return integer(raw, 1, MAX_WORKERS);
  } catch (error) {
    throw new FacilitatorConfigError([`${FACILITATOR_WORKERS_ENV}: ${(error as Error).message}`]);
  }
}

/** `SURETY_FACILITATOR_*` variables nobody reads: worth a startup warning (a typo silently means a default). */
export function unknownFacilitatorEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const known = new Set([...FIELD_NAMES.map(facilitatorEnvName), FACILITATOR_WORKERS_ENV]);
  return Object.keys(env).filter((name) => name.startsWith(FACILITATOR_ENV_PREFIX) && !known.has(name));
}

/** The facilitator wallet's address (EIP-55). */
export function facilitatorAddress(config: Pick<FacilitatorConfig, "privateKey">): string {
  return computeAddress(config.privateKey);
}

// ---- value parsers: each throws an Error saying what is wrong (never echoing secrets) ----

function optionalChainId(raw: unknown): number | null {
  if (raw === null || raw === "") return null;
  return integer(raw, 1, Number.MAX_SAFE_INTEGER);
}

function httpUrl(raw: unknown): string {
  const { value, parsed } = absoluteUrl(raw, ["http:", "https:"]);
  if (parsed.search !== "" || parsed.hash !== "") throw new Error("must not carry a query or fragment");
  return value.replace(/\/+$/, "");
}

/** One URL, or several separated by commas: each checked as {@link httpUrl}, joined again without spaces. */
function httpUrlList(raw: unknown): string {
  if (typeof raw !== "string") return httpUrl(raw);
  const urls = raw.split(",").map((part) => part.trim());
  const parsed = urls.map((url, index) => {
    try {
      return httpUrl(url);
    } catch (error) {
      throw new Error(
        urls.length === 1 ? (error as Error).message : `URL ${index + 1}: ${(error as Error).message}`,
      );
    }
  });
  if (new Set(parsed).size !== parsed.length) throw new Error("lists the same URL twice");
  return parsed.join(",");
}
