/**
 * Core entry point: load and validate config, start the server, stop
 * cleanly on SIGINT/SIGTERM. Run with `npm run operator` (ts-node, from the sources) or, built once with
 * `npm run operator:build`, `npm run operator:start` (`node dist/operator/main.js`: no TypeScript compiler
 * in the process; docs/scale-out.md "Running Core compiled").
 *
 * With `SURETY_WORKERS` > 1 Core is a node:cluster (docs/architecture.md,
 * "Processes"): the primary runs the background work (indexer, V2 lifecycle,
 * operator sender, clearing scheduler, keeper, bond monitor, webhook
 * dispatcher) and no HTTP, and supervises that many HTTP workers sharing the
 * port; every worker reads what it needs of the background work from the
 * store (operator/background-state.ts). Who runs the background work is
 * decided in one place, {@link coreProcessRole}.
 */
import cluster from "node:cluster";
import { reportListening, superviseWorkers } from "../runtime/cluster";
import { stopOnSignals } from "../runtime/signals";
import { blsBackend } from "../sdk/bls";
import { keccakBackend } from "./clearing/native-keccak";
import { ConfigError, loadConfig, type OperatorConfig, unknownEnvSettings } from "./config";
import { DeploymentError } from "./deployment";
import { createLogger, type Logger } from "./logger";
import { type CoreProcessRole, startCoreBackground } from "./app";
import { startCoreServer } from "./server";
import { StartupError } from "./startup";

/**
 * This process's share of Core's work: the one place that decides who runs the background work.
 * One process does everything; in a cluster the primary does the background work and the workers
 * serve HTTP. (A lease shared by several Core hosts would decide here too.)
 */
export function coreProcessRole(
  config: Pick<OperatorConfig, "workers">,
  isPrimary: boolean,
): CoreProcessRole {
  if (config.workers <= 1) return "single";
  return isPrimary ? "background" : "http";
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
    if (config.workers > 1 && config.databaseUrl === null && config.dbFile === ":memory:") {
      throw new ConfigError(["SURETY_WORKERS: several processes cannot share an in-memory SQLite database"]);
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  // In a cluster every line names its process.
  const logger =
    config.workers > 1
      ? createLogger(config.logLevel).child({ pid: process.pid })
      : createLogger(config.logLevel);
  if (cluster.isPrimary) {
    for (const name of unknownEnvSettings())
      logger.warn({ variable: name }, "unknown SURETY_* variable ignored");
  }

  const role = coreProcessRole(config, cluster.isPrimary);
  try {
    if (role === "background") {
      // Migrations, configured subscriptions and the first round run before any worker opens the store.
      const background = await startCoreBackground(config, { logger });
      logger.info({ chain_id: config.chainId, db: describeDatabase(config) }, "Core background work running");
      superviseWorkers({
        count: config.workers,
        logger,
        service: "Core",
        onStopped: () => background.close(),
      });
      return;
    }
    const server = await startCoreServer(config, { logger, role });
    logger.info(
      {
        url: server.url,
        chain_id: config.chainId,
        db: describeDatabase(config),
        // Which native addons this process found (a compiled or moved build that lost them says so here).
        bls: blsBackend(),
        keccak: keccakBackend(),
      },
      "Core listening",
    );
    reportListening();
    stopOnSignals(server, logger, "Core");
  } catch (error) {
    refuse(error, logger);
  }
}

function refuse(error: unknown, logger: Logger): never {
  if (error instanceof DeploymentError || error instanceof StartupError) {
    logger.fatal(error.message);
    console.error(`Core refused to start: ${error.message}`);
    process.exit(1);
  }
  throw error;
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}

/** Where the store lives, for the log: the SQLite file, or the PostgreSQL URL without its password. */
function describeDatabase(config: { dbFile: string; databaseUrl: string | null }): string {
  if (config.databaseUrl === null) return config.dbFile;
  const url = new URL(config.databaseUrl);
  if (url.password) url.password = "***";
  return url.toString();
}
