/**
 * Facilitator entry point: load and validate config, start the server, stop
 * cleanly on SIGINT/SIGTERM. Run with `npx ts-node facilitator/main.ts`.
 *
 * With `SURETY_FACILITATOR_WORKERS` > 1 this process becomes a node:cluster
 * primary that runs that many servers (workers) on the same port and only
 * supervises them: a worker that dies is replaced, unless it died before it
 * ever listened (then the setup is broken and the whole facilitator stops).
 */
import cluster from "node:cluster";
import { reportListening, superviseWorkers } from "../runtime/cluster";
import { stopOnSignals } from "../runtime/signals";
import {
  FacilitatorConfigError,
  loadFacilitatorConfig,
  loadFacilitatorWorkers,
  unknownFacilitatorEnv,
} from "./config";
import { createFacilitatorLogger } from "./logger";
import { startFacilitatorServer } from "./server";

async function main(): Promise<void> {
  let config;
  let workers;
  try {
    config = loadFacilitatorConfig();
    workers = loadFacilitatorWorkers();
  } catch (error) {
    if (error instanceof FacilitatorConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const logger = createFacilitatorLogger(config.logLevel);
  if (cluster.isPrimary) {
    for (const name of unknownFacilitatorEnv()) {
      logger.warn({ variable: name }, "unknown SURETY_FACILITATOR_* variable ignored");
    }
  }
  if (workers > 1 && cluster.isPrimary) {
    superviseWorkers({ count: workers, logger, service: "facilitator" });
    return;
  }
  const server = await startFacilitatorServer(config, { logger });
  logger.info({ url: server.url }, "facilitator ready");
  reportListening();

  stopOnSignals(server, logger, "facilitator");
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
