/**
 * `startCoreServer`: the Core app on a TCP port. `close()` stops accepting
 * connections, lets in-flight requests finish (idle keep-alive connections
 * are closed at once, busy ones cut after a drain timeout), then closes the
 * store if the server opened it.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import { type CoreContext, createCoreApp, type CoreServices, type RouteModule } from "./api";
import { type Clock, systemClock } from "./clock";
import type { OperatorConfig } from "./config";
import { createLogger, type Logger } from "./logger";
import { SqliteStore, type Store } from "./store";

/** How long close() waits for in-flight requests before cutting their connections. */
export const DRAIN_TIMEOUT_MS = 10_000;

export interface CoreServerDeps {
  /** Defaults to a SqliteStore on `config.dbFile`, owned (and closed) by the server. */
  store?: Store;
  clock?: Clock;
  logger?: Logger;
  services?: Partial<CoreServices>;
  routes?: readonly RouteModule[];
  /** Close the store on close(); defaults to true only for a store the server opened itself. */
  closeStore?: boolean;
}

export interface CoreServer {
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  port: number;
  app: Express;
  context: CoreContext;
  close(): Promise<void>;
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

export async function startCoreServer(
  config: OperatorConfig,
  deps: CoreServerDeps = {},
): Promise<CoreServer> {
  const store = deps.store ?? SqliteStore.open(config.dbFile);
  const closeStore = deps.closeStore ?? deps.store === undefined;
  const logger = deps.logger ?? createLogger(config.logLevel);
  const { app, context } = createCoreApp({
    config,
    store,
    clock: deps.clock ?? systemClock,
    logger,
    services: deps.services,
    routes: deps.routes,
  });

  const server = createServer(app);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(config.port, config.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    if (closeStore) await store.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await new Promise<void>((resolve) => {
        const cutoff = setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS);
        cutoff.unref();
        server.close(() => {
          clearTimeout(cutoff);
          resolve();
        });
        server.closeIdleConnections();
      });
      if (closeStore) await store.close();
      logger.info("Core stopped");
    })();
    return closing;
  };

  return { url: `http://${urlHost(config.host)}:${port}`, port, app, context, close };
}
