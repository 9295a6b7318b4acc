/**
 * Core entry point: load and validate config, start the server, stop
 * cleanly on SIGINT/SIGTERM. Run with `npx ts-node operator/main.ts`.
 */
import { stopOnSignals } from "../runtime/signals";
import { ConfigError, loadConfig, unknownEnvSettings } from "./config";
import { DeploymentError } from "./deployment";
import { createLogger } from "./logger";
import { startCoreServer } from "./server";
import { StartupError } from "./startup";

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  for (const name of unknownEnvSettings())
    logger.warn({ variable: name }, "unknown SURETY_* variable ignored");

  let server;
  try {
    server = await startCoreServer(config, { logger });
  } catch (error) {
    if (error instanceof DeploymentError || error instanceof StartupError) {
      logger.fatal(error.message);
      console.error(`Core refused to start: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
  logger.info({ url: server.url, chain_id: config.chainId, db: describeDatabase(config) }, "Core listening");

  stopOnSignals(server, logger, "Core");
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
