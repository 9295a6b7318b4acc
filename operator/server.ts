/**
 * `startCoreServer`: the Core app on a TCP port. Before listening it opens Core (operator/app/: it
 * loads the deployment file, connects to the chain and runs the startup checks (chain ids agree;
 * Core's BLS key is the Vault's), refusing to start otherwise, then wires the services and starts
 * the process's share of the work), and mounts the routes on those services (operator/api/).
 * `close()` stops accepting connections, lets in-flight requests finish (idle keep-alive connections
 * are closed at once, busy ones cut after a drain timeout), then closes the store and chain
 * connection if the server opened them.
 *
 * The background work without an HTTP listener is `startCoreBackground` (operator/app/), for the
 * process that does it while workers serve HTTP (`SURETY_WORKERS` > 1, operator/main.ts).
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import { mountCoreRoutes, type RouteModule } from "./api";
import { type CoreContext, type CoreProcessDeps, openCore } from "./app";
import type { OperatorConfig } from "./config";
import { createExpressServer } from "../runtime/express-server";

/** How long close() waits for in-flight requests before cutting their connections. */
export const DRAIN_TIMEOUT_MS = 10_000;

export interface CoreServerDeps extends CoreProcessDeps {
  /** Route modules mounted after the ones every Core serves (`CORE_ROUTES`). */
  routes?: readonly RouteModule[];
}

export interface CoreServer {
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  port: number;
  app: Express;
  context: CoreContext;
  /** The listening server (benchmarks observe its requests; nothing else should need it). */
  server: Server;
  close(): Promise<void>;
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

export async function startCoreServer(
  config: OperatorConfig,
  deps: CoreServerDeps = {},
): Promise<CoreServer> {
  const role = deps.role ?? "single";
  if (role === "background") throw new Error("startCoreServer serves HTTP: use startCoreBackground");
  const { context, logger, release } = await openCore(config, deps, role);
  let app: Express;
  let server: Server;
  try {
    app = mountCoreRoutes(context, deps.routes);
    server = createExpressServer(app);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(config.port, config.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    await release();
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
      await release();
      logger.info("Core stopped");
    })();
    return closing;
  };

  return { url: `http://${urlHost(config.host)}:${port}`, port, app, context, server, close };
}
