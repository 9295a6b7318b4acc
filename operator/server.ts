/**
 * `startCoreServer`: the Core app on a TCP port. Before listening it loads
 * the deployment file, connects to the chain and runs the startup checks
 * (chain ids agree; Core's BLS key is the Vault's), refusing to start
 * otherwise. `close()` stops accepting connections, lets in-flight requests
 * finish (idle keep-alive connections are closed at once, busy ones cut
 * after a drain timeout), then closes the store and chain connection if the
 * server opened them.
 *
 * `startCoreBackground`: the same Core without an HTTP listener, for the
 * process that does the background work while workers serve HTTP
 * (`SURETY_WORKERS` > 1, operator/main.ts).
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import { createCoreApp, type RouteModule } from "./api";
import type { CoreContext, CoreServices } from "./app/context";
import { operatorBlsSigner } from "./guarantees/signing-worker";
import type { JsonRpcProvider } from "ethers";
import { type BackgroundTasks, createBackgroundTasks, rpcProvider } from "./background";
import { type ChainGateway, RpcChainGateway } from "./chain";
import type { ChainProvider } from "./chain/indexer";
import { ChainClock, type Clock, systemClock } from "./clock";
import type { OperatorConfig } from "./config";
import { type DeploymentInfo, loadDeployment } from "./deployment";
import { createLogger, type Logger } from "./logger";
import { checkBlsBackend, checkChainAndDeployment, type VaultKeyCheck } from "./startup";
import { PostgresStore, SqliteStore, type Store } from "./store";
import { createWebhookDispatcher, startDispatcherLoop, syncConfiguredSubscriptions } from "./webhooks";
import { BackgroundStateMirror, BackgroundStatePublisher } from "./background-state";
import { createExpressServer } from "../runtime/express-server";
import { blsBackend } from "../sdk/bls";
import {
  type BackgroundOwnership,
  coreOwnership,
  NeverLeads,
  type RunningWork,
  startReplicaWork,
} from "./leadership";

/** How long close() waits for in-flight requests before cutting their connections. */
export const DRAIN_TIMEOUT_MS = 10_000;

export interface CoreServerDeps {
  /**
   * Defaults to a PostgresStore on `config.databaseUrl` if set, else a SqliteStore on `config.dbFile`; owned
   * (and closed) by the server.
   */
  store?: Store;
  /** Wall clock (default: the system's). */
  clock?: Clock;
  /**
   * Chain time for deadlines the contracts also judge. Default: a ChainClock seeded from the stored
   * indexer cursor and fed by the background indexer (docs/operator-async.md, "Which clock").
   */
  chainClock?: Clock;
  logger?: Logger;
  services?: Partial<CoreServices>;
  routes?: readonly RouteModule[];
  /** Close the store on close(); defaults to true only for a store the server opened itself. */
  closeStore?: boolean;
  /** Defaults to `loadDeployment(config.deploymentFile)`. */
  deployment?: DeploymentInfo;
  /** Defaults to JSON-RPC at `config.rpcUrl`, owned (and closed) by the server. */
  chain?: ChainGateway;
  /**
   * JSON-RPC provider for the background tasks (indexer, clearing, keeper, V2 lifecycle). They run
   * when `config.backgroundTasks` is on and either this is given or the server owns its chain
   * connection (no `chain` injected): tests that inject only a ChainGateway run Core without them.
   */
  chainProvider?: ChainProvider;
  /**
   * Whether startup compares Core's BLS key with the Vault's (default
   * "enforce"). "skip" only where no Vault is deployed (tests of Core alone).
   */
  vaultKeyCheck?: VaultKeyCheck;
  /**
   * What this process does of Core's work (operator/main.ts decides, {@link CoreProcessRole}); default
   * "single". startCoreServer takes "single" or "http", startCoreBackground is "background".
   */
  role?: CoreProcessRole;
  /**
   * Who runs the background work (operator/leadership/). Default: a {@link LeaderLease} on a PostgreSQL
   * store (replicas elect a leader), the process alone otherwise; never in an "http" worker. Stopped by
   * `close()`.
   */
  ownership?: BackgroundOwnership;
}

/**
 * A process's share of Core's work:
 * - "single": HTTP and, with `config.backgroundTasks`, the background work (one process, the default);
 * - "background": the background work (indexer, V2 lifecycle, sender, scheduler, keeper, bond monitor,
 *   webhook dispatcher) and no HTTP; it publishes what HTTP processes read of it to the store;
 * - "http": HTTP only; the background work runs in another process, and this one reads its state
 *   (chain time, chain sync, Vault timings) from the store (background-state.ts).
 */
export type CoreProcessRole = "single" | "background" | "http";

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

/** Core's background work without HTTP ({@link startCoreBackground}). */
export interface CoreBackground {
  context: CoreContext;
  close(): Promise<void>;
}

function workerSigner(config: OperatorConfig) {
  return operatorBlsSigner(config, { worker: true });
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

interface OpenCore {
  app: Express;
  context: CoreContext;
  logger: Logger;
  /** Stops what was started and closes what was opened, in reverse order. */
  release(): Promise<void>;
}

/** Everything but the listener: startup checks, store, app and context, and the role's share of the work. */
async function openCore(
  config: OperatorConfig,
  deps: CoreServerDeps,
  role: CoreProcessRole,
): Promise<OpenCore> {
  const logger = deps.logger ?? createLogger(config.logLevel);
  // Before anything is opened: a Core on the pure-JS signer refuses to start unless allowed.
  checkBlsBackend(config);
  if (blsBackend() === "noble") {
    logger.warn(
      { bls: "noble", allow_slow_bls: true },
      "signing certificates with the pure-JavaScript BLS fallback (about 40/s): SURETY_ALLOW_SLOW_BLS is set; npm rebuild builds native/blst-minsig",
    );
  }
  const deployment = deps.deployment ?? loadDeployment(config.deploymentFile);
  // The background process signs nothing: no signing worker there.
  const ownSigner =
    deps.services?.signer === undefined && config.blsSigningWorker && role !== "background"
      ? workerSigner(config)
      : null;
  const signer = deps.services?.signer ?? ownSigner ?? operatorBlsSigner(config);
  const chain = deps.chain ?? RpcChainGateway.fromUrl(config.rpcUrl, config.chainId, config.rpcTimeoutMs);
  const closeChain = deps.chain === undefined;
  let store: Store | undefined;
  const closeStore = deps.closeStore ?? deps.store === undefined;
  let ownership: BackgroundOwnership | undefined;
  let follower: RunningWork | undefined;
  let mirror: BackgroundStateMirror | undefined;
  let ownProvider: JsonRpcProvider | undefined;
  let stopAdmission: (() => void) | undefined;
  const release = async () => {
    stopAdmission?.();
    await mirror?.stop();
    await follower?.stop();
    await ownership?.stop();
    ownProvider?.destroy();
    if (closeStore) await store?.close();
    if (closeChain) await chain.close();
    await ownSigner?.close();
  };

  try {
    await checkChainAndDeployment(
      config,
      deployment,
      chain,
      signer.publicKey,
      deps.vaultKeyCheck ?? "enforce",
    );
    store =
      deps.store ??
      (config.databaseUrl === null
        ? SqliteStore.open(config.dbFile)
        : await PostgresStore.open(config.databaseUrl));
    // A restart knows the chain time at once (the stored cursor); a fresh store waits for the indexer.
    const chainClock = deps.chainClock ?? new ChainClock(await store.getChainCursor());
    ownership = deps.ownership ?? (role === "http" ? new NeverLeads() : coreOwnership(config, store, logger));
    const { app, context } = createCoreApp({
      config,
      store,
      clock: deps.clock ?? systemClock,
      chainClock,
      logger,
      deployment,
      chain,
      services: { leadership: ownership, ...deps.services, signer },
      routes: deps.routes,
    });
    stopAdmission = () => context.admission.stop();
    if (role === "http") {
      // The background work runs in another process: its state comes from the store, never from here.
      mirror = new BackgroundStateMirror({ ...context, intervalMs: config.pollIntervalMs });
      await mirror.refresh();
      mirror.start();
      return { app, context, logger, release };
    }
    await syncConfiguredSubscriptions(store, config.webhooks, context.clock.nowSeconds());
    // The background process exists to run the background work, whatever `backgroundTasks` says.
    if (role === "background" || config.backgroundTasks) {
      const chainTasks = deps.chainProvider !== undefined || deps.chain === undefined;
      const provider = chainTasks ? (deps.chainProvider ?? (ownProvider = rpcProvider(config))) : null;
      const termContext = context;
      // Runs while this process leads, on the term's store (fenced on PostgreSQL: operator/leadership/).
      follower = await startReplicaWork(ownership, termContext, async ({ store: termStore }) => {
        const termDeps = { ...termContext, store: termStore };
        // Independent of the chain tasks: issuance events need no chain connection (docs/webhooks.md).
        const webhooks = startDispatcherLoop(
          createWebhookDispatcher(termDeps),
          config.pollIntervalMs,
          logger,
        );
        let background: BackgroundTasks | undefined;
        if (provider !== null) {
          try {
            background = await createBackgroundTasks({
              ...termDeps,
              provider,
              timings: context.timings,
              statePublisher: role === "background" ? new BackgroundStatePublisher(termDeps) : undefined,
            });
          } catch (error) {
            await webhooks.stop();
            throw error;
          }
          background.start();
          logger.info({ role }, "background work started");
        }
        return {
          stop: async () => {
            await webhooks.stop();
            await background?.stop();
          },
        };
      });
    }
    return { app, context, logger, release };
  } catch (error) {
    await release();
    throw error;
  }
}

export async function startCoreServer(
  config: OperatorConfig,
  deps: CoreServerDeps = {},
): Promise<CoreServer> {
  const role = deps.role ?? "single";
  if (role === "background") throw new Error("startCoreServer serves HTTP: use startCoreBackground");
  const { app, context, logger, release } = await openCore(config, deps, role);
  const server = createExpressServer(app);
  try {
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

/**
 * Core's background work in this process, without HTTP: startup checks, the store, the background
 * tasks and the webhook dispatcher (both regardless of `config.backgroundTasks`: this process exists
 * to run them), publishing their state for the HTTP workers.
 */
export async function startCoreBackground(
  config: OperatorConfig,
  deps: Omit<CoreServerDeps, "role" | "routes"> = {},
): Promise<CoreBackground> {
  const { context, logger, release } = await openCore(config, { ...deps }, "background");
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= release().then(() => logger.info("Core background work stopped"));
    return closing;
  };
  return { context, close };
}
