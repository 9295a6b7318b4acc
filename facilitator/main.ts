/**
 * Facilitator entry point: load and validate config, start the server, stop
 * cleanly on SIGINT/SIGTERM. Run with `npx ts-node facilitator/main.ts`.
 *
 * With `SURETY_FACILITATOR_WORKERS` > 1 this process becomes a node:cluster
 * primary that runs that many servers (workers) on the same port and only
 * supervises them: a worker that dies is replaced, unless it died before it
 * ever listened (then the setup is broken and the whole facilitator stops).
 */
import { stopOnSignals } from "../runtime/signals";
import cluster, { type Worker } from "node:cluster";
import {
  FacilitatorConfigError,
  loadFacilitatorConfig,
  loadFacilitatorWorkers,
  unknownFacilitatorEnv,
} from "./config";
import { createFacilitatorLogger, type Logger } from "./logger";
import { startFacilitatorServer } from "./server";

/** What a worker tells the primary once its server listens. */
const WORKER_LISTENING = "facilitator-listening";

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
  if (workers > 1 && cluster.isPrimary) {
    supervise(workers, logger);
    return;
  }
  if (cluster.isPrimary) {
    for (const name of unknownFacilitatorEnv()) {
      logger.warn({ variable: name }, "unknown SURETY_FACILITATOR_* variable ignored");
    }
  }
  const server = await startFacilitatorServer(config, { logger });
  logger.info({ url: server.url }, "facilitator ready");
  process.send?.(WORKER_LISTENING);

  stopOnSignals(server, logger, "facilitator");
}

/** The cluster primary: starts `count` workers, replaces dead ones, stops them all on a signal. */
function supervise(count: number, logger: Logger): void {
  for (const name of unknownFacilitatorEnv()) {
    logger.warn({ variable: name }, "unknown SURETY_FACILITATOR_* variable ignored");
  }
  if (__filename.endsWith(".ts")) {
    // Started through ts-node (`npx ts-node facilitator/main.ts`): workers need it too.
    cluster.setupPrimary({ execArgv: [...process.execArgv, "-r", "ts-node/register/transpile-only"] });
  }
  let stopping = false;
  const listening = new WeakSet<Worker>();
  const start = (): void => {
    const worker = cluster.fork();
    worker.on("message", (message) => {
      if (message === WORKER_LISTENING) listening.add(worker);
    });
  };
  cluster.on("exit", (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    if (!listening.has(worker)) {
      logger.error({ pid: worker.process.pid, code, signal }, "facilitator worker failed to start; stopping");
      stopping = true;
      for (const other of Object.values(cluster.workers ?? {})) other?.process.kill("SIGTERM");
      process.exitCode = 1;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(1);
      return;
    }
    logger.error({ pid: worker.process.pid, code, signal }, "facilitator worker died; starting another");
    start();
  });
  for (let i = 0; i < count; i++) start();
  logger.info({ workers: count }, "facilitator cluster started");

  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping facilitator workers");
    const running = Object.values(cluster.workers ?? {});
    if (running.length === 0) process.exit(0);
    for (const worker of running) worker?.process.kill("SIGTERM");
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
