/**
 * Operator (Core) configuration: one typed object, built from defaults, an
 * optional JSON file (`SURETY_CONFIG_FILE`) and `SURETY_*` environment
 * variables (env wins over file, file over defaults). Everything is validated
 * at startup; a bad value stops the process with a message naming the
 * variable (or file key) and what is wrong with it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parsePrivateKey } from "../sdk/eip712";
import { parseAddress } from "../sdk/wire";
import { parseWebhookConfig, type WebhookSubscriptionConfig } from "./webhook-config";
import {
  ConfigProblemsError,
  type FieldTable as ConfigFieldTable,
  type LogLevel,
  absoluteUrl,
  describeValue,
  envNameWithPrefix,
  integer,
  logLevel,
  nonEmptyString,
  resolveConfig,
} from "../runtime/config-fields";

export const ENV_PREFIX = "SURETY_";
export const CONFIG_FILE_ENV = "SURETY_CONFIG_FILE";
/** 100 % in basis points: the largest collateral factor (never lend more than is deposited). */
export const BPS_DENOMINATOR = 10_000;
/** The smallest fee raise nodes accept for a replacement (+10 % on both fee fields), in basis points. */
export const MIN_FEE_BUMP_BPS = 1_000;
/** HS256 needs a key at least as long as its output (RFC 7518 §3.2). */
export const MIN_JWT_SECRET_BYTES = 32;
/** BLS key generation (EIP-2333 / blst keygen) requires at least 32 bytes of input keying material. */
export const MIN_BLS_IKM_BYTES = 32;

/** Upper bound of `workers`: a sanity limit (each worker is a process with its own connection to the store). */
export const MAX_WORKERS = 64;

export type { LogLevel };

export interface OperatorConfig {
  /** Interface the HTTP server binds to. */
  host: string;
  /** TCP port; 0 picks a free port (tests). */
  port: number;
  logLevel: LogLevel;
  /** Directory for operator state; `dbFile` defaults to `<dataDir>/operator.sqlite`. */
  dataDir: string;
  /** SQLite database file (or `:memory:`); unused when `databaseUrl` is set. */
  dbFile: string;
  /** `postgres://…`: the PostgreSQL store (docs/scale-out.md) instead of the SQLite file; null: SQLite. */
  databaseUrl: string | null;
  /**
   * Leader lease period of replicas on one PostgreSQL database (docs/scale-out.md): a leader that stops
   * renewing is replaced within 4/3 of it; renewed every third of it. Unused with SQLite.
   */
  leaderLeaseMs: number;
  /** This replica's name in the lease and in health (a process id and a random suffix are appended); null: the host name. */
  replicaId: string | null;
  /** Network name; `deploymentFile` defaults to `deployments/<network>.json`. */
  network: string;
  rpcUrl: string;
  /** RPC URL published in public params (`ethereum_http_rpc_url`); defaults to `rpcUrl`. */
  publicRpcUrl: string;
  /** Upper bound on one chain RPC call (health checks, startup checks). */
  rpcTimeoutMs: number;
  chainId: number;
  deploymentFile: string;
  /** Input keying material (0x hex, ≥ 32 bytes) for Core's BLS certificate key. */
  blsSecret: string;
  /** Operator EOA key (0x hex) for on-chain transactions (cycle commits); null when not configured. */
  operatorPrivateKey: string | null;
  /** HMAC key for access tokens (UTF-8, ≥ 32 bytes). */
  jwtSecret: string;
  jwtIssuer: string;
  jwtAudience: string;
  /** EIP-4361 fields that every sign-in message must carry. */
  siweDomain: string;
  siweUri: string;
  siweStatement: string;
  nonceLifetimeSeconds: number;
  accessTokenLifetimeSeconds: number;
  refreshTokenLifetimeSeconds: number;
  /** Wallets that may request guarantees for any recipient (checksummed). */
  facilitators: readonly string[];
  /** Accepted claim timestamps: now − past ≤ timestamp ≤ now + future. */
  timestampWindowPastSeconds: number;
  timestampWindowFutureSeconds: number;
  eip712Name: string;
  eip712Version: string;
  /** Collateral factor for assets without an explicit entry, in basis points. */
  defaultCollateralFactorBps: number;
  /** Per-asset collateral factor in basis points, keyed by checksummed asset address. */
  collateralFactorsBps: Readonly<Record<string, number>>;
  /** V2 validation registries Core accepts (checksummed). */
  trustedValidationRegistries: readonly string[];
  /**
   * Sign certificates on a worker thread, so HTTP parsing and BLS signing overlap on two cores
   * (docs/benchmarks.md: ≈ 30% more guarantees/s on this 2-core machine).
   */
  blsSigningWorker: boolean;
  /**
   * Start even when certificates would be signed by the pure-JavaScript BLS fallback (@noble/curves,
   * ≈ 40 certificates/s) because the native addon native/blst-minsig is missing (`SURETY_ALLOW_SLOW_BLS`,
   * default false: Core refuses to start, naming the fix). For tests and development machines without a
   * C toolchain; never for serving payments.
   */
  allowSlowBls: boolean;
  /**
   * HTTP server processes (`SURETY_WORKERS`, default 1). Above 1, operator/main.ts runs a node:cluster:
   * the primary does the background work and serves no HTTP, the workers serve HTTP on one port
   * (docs/architecture.md, "Processes").
   */
  workers: number;
  // --- asynchronous side (docs/operator-async.md) ---
  /** Run the indexer, clearing scheduler, keeper and V2 lifecycle in the server process. */
  backgroundTasks: boolean;
  /** How often each background task ticks. */
  pollIntervalMs: number;
  /** Blocks a log must be buried under before the indexer applies it (default 0 on chain 31337, else 12). */
  confirmations: number;
  /** Largest block range the indexer reads per tick. */
  indexerMaxBlocksPerTick: number;
  /** Issuance is refused (503) while the books are more blocks than this behind the confirmed head. */
  indexerMaxLagBlocks: number;
  /** Issuance is refused (503) while the indexer's last successful tick is older than this. */
  indexerMaxStaleSeconds: number;
  /** Clearing cycle length; null: the Vault's `cycleLength`. */
  cycleLengthSeconds: number | null;
  /** Largest gas one `commitCycle` may use; larger cycles are split. */
  commitGasBudget: number;
  /** Most guarantees one commit takes; a larger cycle is committed in several, under the same cutoff. */
  maxGuaranteesPerCycle: number;
  /** Issuances running at once per process before more are shed (500 issuance_overloaded); 0: no bound. */
  issuanceMaxInFlight: number;
  /** Event-loop delay (ms) above which issuance is shed so that deadline work runs first; 0: not judged. */
  issuanceMaxLoopDelayMs: number;
  /** Cover unpaid debts after the payment deadline (`coverDefault`). */
  keeperEnabled: boolean;
  /** Also claim funded credits on the creditors' behalf (operator pays the gas). */
  keeperClaimsCredits: boolean;
  /** Indexing/lifecycle lag allowed for in the V2 validation deadline cap. */
  v2DeadlineMarginSeconds: number;
  /** Seconds (wall clock) after which a V2 verdict's pin sent and not yet indexed is sent again. */
  verdictPinResendSeconds: number;
  /** New blocks without inclusion after which an operator transaction is replaced with higher fees. */
  txReplaceAfterBlocks: number;
  /** Raise of maxFeePerGas and maxPriorityFeePerGas per replacement, in basis points (≥ 1000 = 10 %). */
  txFeeBumpBps: number;
  /** Ceiling on the fees of operator transactions, in gwei; null: none. */
  txMaxFeePerGasGwei: number | null;
  /** Operator bond floor per asset (checksummed address → base units): a warning is logged below it. */
  bondFloors: Readonly<Record<string, bigint>>;
  // --- health warnings (docs/monitoring.md): `warn` in GET /core/health, never a 503 ---
  /** Warn when a subscription's oldest pending webhook delivery is older than this (seconds). */
  healthWebhookBacklogSeconds: number;
  /** Warn when the next cutoff is this far past its time, or this far beyond one cycle length away (chain seconds). */
  healthCutoffLatenessSeconds: number;
  /** Warn when an owed commit has less than this left before cutoff + commitDelay; null: half the Vault's commitDelay. */
  healthCommitSlackSeconds: number | null;
  /** Warn when an unpaid debt past its payment deadline has less than this left before its default deadline; null: half the Vault's defaultWindow. */
  healthCoverSlackSeconds: number | null;
  /** Warn when the operator bond is less than this many basis points above what the last checked cycle needs. */
  healthBondMarginBps: number;
  /** Warn when the indexer is more than this many blocks behind the confirmed head; null: half of `indexerMaxLagBlocks`. */
  healthIndexerLagBlocks: number | null;
  /** Warn when the indexer's last successful tick is older than this; null: half of `indexerMaxStaleSeconds`. */
  healthIndexerStaleSeconds: number | null;
  /** Wait for a verdict's pin above which health warns (`verdict_pins`); null: one cycle length. */
  healthVerdictPinSeconds: number | null;
  /**
   * Block explorer of the chain, for the console's links (docs/console.md): `<url>/tx/<hash>` and
   * `<url>/address/<address>`; null: no links.
   */
  explorerUrl: string | null;
  // --- webhooks (docs/webhooks.md) ---
  /** Wallets allowed on the admin API (`/core/admin/*`), checksummed. */
  adminWallets: readonly string[];
  /** Configured subscriptions (`SURETY_WEBHOOKS`: a JSON array), synced into the store at startup. */
  webhooks: readonly WebhookSubscriptionConfig[];
  /** Per-attempt timeout of a delivery. */
  webhookTimeoutMs: number;
  /** Attempts per delivery (the first included) before it is `failed`. */
  webhookMaxAttempts: number;
  /** First retry delay; doubled after every failure up to `webhookBackoffMaxSeconds`. */
  webhookBackoffBaseSeconds: number;
  webhookBackoffMaxSeconds: number;
}

/** Raw values as they come from a JSON file, env vars or a test: validated by {@link configFromObject}. */
export type OperatorConfigInput = { [K in keyof OperatorConfig]?: unknown };

/** Startup configuration is unusable; `problems` lists each bad setting. */
export class ConfigError extends ConfigProblemsError {
  override readonly name: string = "ConfigError";
  constructor(problems: readonly string[]) {
    super("operator", problems);
  }
}

type FieldTable = ConfigFieldTable<OperatorConfig>;

// Order matters: derived defaults (dbFile, deploymentFile, siweDomain, siweUri) read earlier fields.
const FIELDS: FieldTable = {
  host: { parse: nonEmptyString, fallback: () => "127.0.0.1" },
  port: { parse: (raw) => integer(raw, 0, 65_535), fallback: () => 8080 },
  logLevel: { parse: logLevel, fallback: () => "info" },
  dataDir: { parse: nonEmptyString, fallback: () => ".data" },
  dbFile: { parse: nonEmptyString, fallback: (c) => join(c.dataDir ?? ".data", "operator.sqlite") },
  databaseUrl: { parse: (raw) => url(raw, ["postgres:", "postgresql:"]), fallback: () => null },
  leaderLeaseMs: { parse: (raw) => integer(raw, 300, 600_000), fallback: () => 10_000 },
  replicaId: {
    parse: (raw) => (raw === null || raw === "" ? null : replicaName(raw)),
    fallback: () => null,
  },
  network: { parse: networkName, fallback: () => "localhost" },
  rpcUrl: {
    parse: (raw) => url(raw, ["http:", "https:", "ws:", "wss:"]),
    fallback: () => "http://127.0.0.1:8545",
  },
  publicRpcUrl: { parse: (raw) => url(raw, ["http:", "https:"]), fallback: (c) => c.rpcUrl ?? "" },
  rpcTimeoutMs: { parse: (raw) => integer(raw, 1, 600_000), fallback: () => 5_000 },
  chainId: { parse: (raw) => integer(raw, 1, Number.MAX_SAFE_INTEGER), fallback: () => 31337 },
  deploymentFile: {
    parse: nonEmptyString,
    fallback: (c) => join("deployments", `${c.network ?? "localhost"}.json`),
  },
  blsSecret: { parse: (raw) => hexSecret(raw, MIN_BLS_IKM_BYTES) },
  operatorPrivateKey: { parse: privateKey, fallback: () => null },
  jwtSecret: { parse: jwtSecret },
  jwtIssuer: { parse: nonEmptyString, fallback: () => "surety-core" },
  jwtAudience: { parse: nonEmptyString, fallback: () => "surety-core" },
  siweDomain: { parse: siweDomain, fallback: (c) => `${c.host ?? "127.0.0.1"}:${c.port ?? 8080}` },
  siweUri: { parse: (raw) => url(raw, ["http:", "https:"]), fallback: (c) => `http://${c.host}:${c.port}` },
  siweStatement: { parse: siweStatement, fallback: () => "Sign in to Surety Core." },
  nonceLifetimeSeconds: { parse: positiveInteger, fallback: () => 300 },
  accessTokenLifetimeSeconds: { parse: positiveInteger, fallback: () => 900 },
  refreshTokenLifetimeSeconds: { parse: positiveInteger, fallback: () => 30 * 24 * 60 * 60 },
  facilitators: { parse: addressList, fallback: () => [] },
  timestampWindowPastSeconds: { parse: nonNegativeInteger, fallback: () => 600 },
  timestampWindowFutureSeconds: { parse: nonNegativeInteger, fallback: () => 30 },
  eip712Name: { parse: nonEmptyString, fallback: () => "Surety" },
  eip712Version: { parse: nonEmptyString, fallback: () => "1" },
  defaultCollateralFactorBps: { parse: bps, fallback: () => BPS_DENOMINATOR },
  collateralFactorsBps: { parse: factorMap, fallback: () => ({}) },
  trustedValidationRegistries: { parse: addressList, fallback: () => [] },
  blsSigningWorker: { parse: boolean, fallback: () => true },
  allowSlowBls: { parse: boolean, fallback: () => false },
  workers: { parse: (raw) => integer(raw, 1, MAX_WORKERS), fallback: () => 1 },
  backgroundTasks: { parse: boolean, fallback: () => true },
  pollIntervalMs: { parse: (raw) => integer(raw, 10, 3_600_000), fallback: () => 1_000 },
  confirmations: { parse: (raw) => integer(raw, 0, 1_000), fallback: (c) => (c.chainId === 31337 ? 0 : 12) },
  indexerMaxBlocksPerTick: { parse: (raw) => integer(raw, 1, 100_000), fallback: () => 2_000 },
  indexerMaxLagBlocks: { parse: (raw) => integer(raw, 0, 1_000_000), fallback: () => 64 },
  indexerMaxStaleSeconds: {
    parse: (raw) => integer(raw, 1, 86_400),
    // Several rounds: one slow tick (RPC timeouts) must not refuse issuance.
    fallback: (c) => Math.max(30, Math.ceil((5 * (c.pollIntervalMs ?? 1_000)) / 1_000)),
  },
  cycleLengthSeconds: { parse: optionalPositiveInteger, fallback: () => null },
  // At most EIP-7825's 2^24 gas per transaction (the commit is one transaction).
  commitGasBudget: { parse: (raw) => integer(raw, 100_000, 16_777_216), fallback: () => 15_000_000 },
  maxGuaranteesPerCycle: { parse: (raw) => integer(raw, 1, 10_000_000), fallback: () => 100_000 },
  issuanceMaxInFlight: { parse: (raw) => integer(raw, 0, 1_000_000), fallback: () => 256 },
  issuanceMaxLoopDelayMs: { parse: (raw) => integer(raw, 0, 600_000), fallback: () => 0 },
  keeperEnabled: { parse: boolean, fallback: () => true },
  keeperClaimsCredits: { parse: boolean, fallback: () => false },
  v2DeadlineMarginSeconds: { parse: nonNegativeInteger, fallback: () => 30 },
  verdictPinResendSeconds: { parse: (raw) => integer(raw, 1, 86_400), fallback: () => 300 },
  txReplaceAfterBlocks: { parse: (raw) => integer(raw, 1, 10_000), fallback: () => 3 },
  // Nodes refuse a replacement below +10 % on both fee fields (geth's default); 12.5 % clears any of them.
  txFeeBumpBps: {
    parse: (raw) => integer(raw, MIN_FEE_BUMP_BPS, 10 * BPS_DENOMINATOR),
    fallback: () => 1_250,
  },
  txMaxFeePerGasGwei: { parse: (raw) => optionalInteger(raw, 1, 10_000_000), fallback: () => null },
  bondFloors: { parse: bondFloorMap, fallback: () => ({}) },
  healthWebhookBacklogSeconds: { parse: (raw) => integer(raw, 1, 30 * 86_400), fallback: () => 300 },
  healthCutoffLatenessSeconds: { parse: (raw) => integer(raw, 1, 86_400), fallback: () => 10 },
  healthCommitSlackSeconds: { parse: optionalNonNegativeInteger, fallback: () => null },
  healthCoverSlackSeconds: { parse: optionalNonNegativeInteger, fallback: () => null },
  healthBondMarginBps: { parse: (raw) => integer(raw, 0, 1_000_000), fallback: () => 2_000 },
  healthIndexerLagBlocks: { parse: optionalNonNegativeInteger, fallback: () => null },
  healthIndexerStaleSeconds: { parse: optionalNonNegativeInteger, fallback: () => null },
  healthVerdictPinSeconds: { parse: optionalNonNegativeInteger, fallback: () => null },
  explorerUrl: {
    parse: (raw) => url(raw, ["http:", "https:"]).replace(/\/+$/, ""),
    fallback: () => null,
  },
  adminWallets: { parse: addressList, fallback: () => [] },
  webhooks: { parse: parseWebhookConfig, fallback: () => [] },
  webhookTimeoutMs: { parse: (raw) => integer(raw, 100, 120_000), fallback: () => 10_000 },
  webhookMaxAttempts: { parse: (raw) => integer(raw, 1, 100), fallback: () => 12 },
  webhookBackoffBaseSeconds: { parse: (raw) => integer(raw, 1, 86_400), fallback: () => 30 },
  webhookBackoffMaxSeconds: { parse: (raw) => integer(raw, 1, 7 * 86_400), fallback: () => 6 * 3_600 },
};

const FIELD_NAMES = Object.keys(FIELDS) as (keyof OperatorConfig)[];

/** `siweUri` → `SURETY_SIWE_URI`. */
export function envNameOf(field: keyof OperatorConfig): string {
  return envNameWithPrefix(ENV_PREFIX, field);
}

/**
 * Validates raw values into a config. `describe` names a field in error
 * messages (env var name, file key …). Missing fields take their defaults;
 * `jwtSecret` and `blsSecret` have none.
 */
export function configFromObject(
  input: OperatorConfigInput,
  describe: (field: keyof OperatorConfig) => string = (field) => field,
): OperatorConfig {
  return resolveConfig(FIELDS, input, describe, (problems) => new ConfigError(problems));
}

/** Reads a JSON config file whose keys are {@link OperatorConfig} field names. */
export function readConfigFile(path: string): OperatorConfigInput {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError([`${CONFIG_FILE_ENV}: cannot read ${path}: ${(error as Error).message}`]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`${path}: not valid JSON: ${(error as Error).message}`]);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError([`${path}: must contain a JSON object`]);
  }
  return parsed as OperatorConfigInput;
}

/**
 * The startup path: defaults, then the file named by `SURETY_CONFIG_FILE`
 * (if any), then `SURETY_*` variables.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): OperatorConfig {
  const filePath = env[CONFIG_FILE_ENV];
  const fromFile = filePath ? readConfigFile(filePath) : {};
  const fromEnv: OperatorConfigInput = {};
  for (const field of FIELD_NAMES) {
    const value = env[envNameOf(field)];
    if (value !== undefined) fromEnv[field] = value;
  }
  const fieldsFromEnv = new Set(Object.keys(fromEnv));
  return configFromObject({ ...fromFile, ...fromEnv }, (field) =>
    fieldsFromEnv.has(field) || !filePath ? envNameOf(field) : `${filePath}: ${field}`,
  );
}

/**
 * `SURETY_*` variables the operator does not know. Not an error (the
 * facilitator and scripts share the prefix), but worth a warning at startup:
 * a typo would otherwise fall back to a default silently.
 */
export function unknownEnvSettings(env: NodeJS.ProcessEnv = process.env): string[] {
  const known = new Set([CONFIG_FILE_ENV, ...FIELD_NAMES.map(envNameOf)]);
  return Object.keys(env).filter((name) => name.startsWith(ENV_PREFIX) && !known.has(name));
}

/** The collateral factor (bps) that applies to `asset`. */
export function collateralFactorBps(config: OperatorConfig, asset: string): number {
  return config.collateralFactorsBps[parseAddress(asset, "asset")] ?? config.defaultCollateralFactorBps;
}

// ---- value parsers: each throws an Error whose message says what is wrong ----

function positiveInteger(raw: unknown): number {
  return integer(raw, 1, Number.MAX_SAFE_INTEGER);
}

function nonNegativeInteger(raw: unknown): number {
  return integer(raw, 0, Number.MAX_SAFE_INTEGER);
}

function optionalPositiveInteger(raw: unknown): number | null {
  if (raw === null || raw === "") return null;
  return positiveInteger(raw);
}

function optionalNonNegativeInteger(raw: unknown): number | null {
  if (raw === null || raw === "") return null;
  return nonNegativeInteger(raw);
}

function optionalInteger(raw: unknown, min: number, max: number): number | null {
  if (raw === null || raw === "") return null;
  return integer(raw, min, max);
}

function boolean(raw: unknown): boolean {
  if (typeof raw === "boolean") return raw;
  if (typeof raw === "string" && ["true", "1", "yes", "on"].includes(raw.trim().toLowerCase())) return true;
  if (typeof raw === "string" && ["false", "0", "no", "off"].includes(raw.trim().toLowerCase())) return false;
  throw new Error(`must be true or false, got ${describeValue(raw)}`);
}

function bps(raw: unknown): number {
  return integer(raw, 0, BPS_DENOMINATOR);
}

function networkName(raw: unknown): string {
  const value = nonEmptyString(raw);
  // It becomes part of a file path: keep it to a plain name.
  if (!/^[A-Za-z0-9_-]+$/.test(value)) throw new Error("must contain only letters, digits, '-' and '_'");
  return value;
}

function url(raw: unknown, protocols: readonly string[]): string {
  return absoluteUrl(raw, protocols).value;
}

function hexBytes(raw: unknown): Buffer {
  if (typeof raw !== "string" || !/^0x([0-9a-fA-F]{2})+$/.test(raw.trim())) {
    throw new Error("must be a 0x-prefixed hex string of whole bytes");
  }
  return Buffer.from(raw.trim().slice(2), "hex");
}

function hexSecret(raw: unknown, minBytes: number): string {
  const bytes = hexBytes(raw);
  if (bytes.length < minBytes) throw new Error(`must be at least ${minBytes} bytes, got ${bytes.length}`);
  return "0x" + bytes.toString("hex");
}

function privateKey(raw: unknown): string | null {
  if (raw === null || raw === "") return null;
  return parsePrivateKey(raw);
}

function jwtSecret(raw: unknown): string {
  if (typeof raw !== "string") throw new Error(`must be a string, got ${describeValue(raw)}`);
  const length = Buffer.byteLength(raw, "utf8");
  if (length < MIN_JWT_SECRET_BYTES) {
    throw new Error(`must be at least ${MIN_JWT_SECRET_BYTES} bytes, got ${length}`);
  }
  return raw;
}

function siweDomain(raw: unknown): string {
  const value = nonEmptyString(raw);
  // EIP-4361 `domain` is an RFC 3986 authority (host[:port]), without scheme or path.
  if (!/^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$/.test(value)) {
    throw new Error(`must be a host[:port] authority without scheme or path, got ${JSON.stringify(value)}`);
  }
  return value;
}

function siweStatement(raw: unknown): string {
  const value = nonEmptyString(raw);
  if (/[\r\n]/.test(value)) throw new Error("must be a single line (EIP-4361)");
  return value;
}

/** A JSON array of addresses or a comma-separated string → unique checksummed addresses. */
function addressList(raw: unknown): readonly string[] {
  const items =
    typeof raw === "string"
      ? raw
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s !== "")
      : raw;
  if (!Array.isArray(items)) throw new Error(`must be a comma-separated list or an array of addresses`);
  const addresses = items.map((item, index) => {
    try {
      return parseAddress(item, `[${index}]`);
    } catch (error) {
      throw new Error(`entry ${index}: ${(error as Error).message.replace(/^\[\d+\]: /, "")}`);
    }
  });
  return Object.freeze([...new Set(addresses)]);
}

/** `{ "0xToken": 8000 }` or `"0xToken:8000,0xOther:10000"` → checksummed address → bps. */
/** `<address>:<base units>,…` or a JSON object of address → decimal string (or safe integer). */
/**
 * A per-asset setting, given as an object (address → value) or as an "<address>:<value>,…" string:
 * its entries with each address parsed. `unit` names the value in messages (e.g. "bps").
 */
function assetEntries(raw: unknown, unit: string): [string, unknown][] {
  let entries: [string, unknown][];
  if (typeof raw === "string") {
    entries = raw
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "")
      .map((pair) => {
        const [asset, value, ...rest] = pair.split(":");
        if (value === undefined || rest.length > 0)
          throw new Error(`entry ${JSON.stringify(pair)} must be <address>:<${unit}>`);
        return [asset.trim(), value.trim()];
      });
  } else if (typeof raw === "object" && raw !== null && !Array.isArray(raw)) {
    entries = Object.entries(raw);
  } else {
    throw new Error(`must be an object of address → ${unit} or an '<address>:<${unit}>,…' string`);
  }
  return entries.map(([asset, value]) => {
    try {
      return [parseAddress(asset, "asset"), value];
    } catch {
      throw new Error(`${JSON.stringify(asset)} is not an address`);
    }
  });
}

function bondFloorMap(raw: unknown): Readonly<Record<string, bigint>> {
  const floors: Record<string, bigint> = {};
  for (const [address, value] of assetEntries(raw, "base units")) {
    const text = typeof value === "number" && Number.isSafeInteger(value) ? String(value) : value;
    if (typeof text !== "string" || !/^(0|[1-9][0-9]{0,77})$/.test(text)) {
      throw new Error(`${address}: must be a decimal amount in base units`);
    }
    floors[address] = BigInt(text);
  }
  return Object.freeze(floors);
}

function factorMap(raw: unknown): Readonly<Record<string, number>> {
  const factors: Record<string, number> = {};
  for (const [address, value] of assetEntries(raw, "bps")) {
    try {
      factors[address] = bps(value);
    } catch (error) {
      throw new Error(`${address}: ${(error as Error).message}`);
    }
  }
  return Object.freeze(factors);
}

function replicaName(raw: unknown): string {
  const name = nonEmptyString(raw).trim();
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(name)) {
    throw new Error("must be 1-64 characters of letters, digits, '.', '_', ':' or '-'");
  }
  return name;
}
