/**
 * A node:cluster primary that runs `count` HTTP workers on one port and supervises them: a worker
 * that dies is replaced, unless it died before it ever listened (then the setup is broken and the
 * whole service stops, exit 1). On SIGINT or SIGTERM it stops every worker (each drains its own
 * connections), then runs `onStopped` and exits. Used by Core (`SURETY_WORKERS`) and the facilitator
 * (`SURETY_FACILITATOR_WORKERS`); a worker calls {@link reportListening} once its server listens.
 */
import cluster, { type Worker } from "node:cluster";

/** What a worker tells the primary once its server listens. */
const WORKER_LISTENING = "worker-listening";

/** The part of a pino logger the supervisor uses. */
export interface SupervisorLogger {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface SupervisorOptions {
  count: number;
  logger: SupervisorLogger;
  /** Names the service in log lines ("Core", "facilitator"). */
  service: string;
  /** Runs once every worker has exited after a stop (e.g. closing what the primary itself runs). */
  onStopped?: () => Promise<void>;
}

/** In a worker: tells the primary this worker serves (a no-op outside a cluster). */
export function reportListening(): void {
  process.send?.(WORKER_LISTENING);
}

export function superviseWorkers(options: SupervisorOptions): void {
  const { count, logger, service } = options;
  const registered = process.execArgv.some((arg) => arg.startsWith("ts-node/register"));
  if (__filename.endsWith(".ts") && !registered) {
    // Started through ts-node's own command (`npx ts-node …/main.ts`): workers need it too.
    cluster.setupPrimary({ execArgv: [...process.execArgv, "-r", "ts-node/register/transpile-only"] });
  }
  let stopping = false;
  let exitCode = 0;
  const listening = new WeakSet<Worker>();
  const running = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
  const finish = () => {
    const done = options.onStopped?.() ?? Promise.resolve();
    done.then(
      () => process.exit(exitCode),
      (error: unknown) => {
        logger.error({ err: error }, `${service} did not stop cleanly`);
        process.exit(1);
      },
    );
  };
  const stopAll = () => {
    const workers = running();
    if (workers.length === 0) finish();
    for (const worker of workers) worker.process.kill("SIGTERM");
  };
  const start = (): void => {
    const worker = cluster.fork();
    worker.on("message", (message) => {
      if (message === WORKER_LISTENING) listening.add(worker);
    });
  };
  cluster.on("exit", (worker, code, signal) => {
    if (stopping) {
      if (running().length === 0) finish();
      return;
    }
    if (!listening.has(worker)) {
      logger.error({ pid: worker.process.pid, code, signal }, `${service} worker failed to start; stopping`);
      stopping = true;
      exitCode = 1;
      stopAll();
      return;
    }
    logger.error({ pid: worker.process.pid, code, signal }, `${service} worker died; starting another`);
    start();
  });
  for (let i = 0; i < count; i++) start();
  logger.info({ workers: count }, `${service} cluster started`);

  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `stopping ${service} workers`);
    stopAll();
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}
