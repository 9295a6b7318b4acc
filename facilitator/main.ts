/**
 * Facilitator entry point: load and validate config, start the server, stop
 * cleanly on SIGINT/SIGTERM. Run with `npx ts-node facilitator/main.ts`.
 */
import { FacilitatorConfigError, loadFacilitatorConfig, unknownFacilitatorEnv } from "./config";
import { createFacilitatorLogger } from "./logger";
import { startFacilitatorServer } from "./server";

async function main(): Promise<void> {
  let config;
  try {
    config = loadFacilitatorConfig();
  } catch (error) {
    if (error instanceof FacilitatorConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const logger = createFacilitatorLogger(config.logLevel);
  for (const name of unknownFacilitatorEnv()) {
    logger.warn({ variable: name }, "unknown SURETY_FACILITATOR_* variable ignored");
  }
  const server = await startFacilitatorServer(config, { logger });
  logger.info({ url: server.url }, "facilitator ready");

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping facilitator");
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "facilitator did not stop cleanly");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
