/**
 * Graceful stop for a service process: on the first SIGINT or SIGTERM, close
 * the server (drain, release its resources) and exit 0, or 1 if closing fails.
 * A second signal while closing is ignored.
 */
import type { Logger } from "pino";

export function stopOnSignals(server: { close(): Promise<void> }, logger: Logger, service: string): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `stopping ${service}`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, `${service} did not stop cleanly`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}
