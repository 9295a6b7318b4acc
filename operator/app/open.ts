/**
 * `openCore`: one Core process's composition, from its configuration to its running share of the
 * work, without HTTP. Config → the startup checks, the deployment, the chain gateway, the signer, the
 * store, the clocks, who runs the background work, the services (context.ts), then the role's share
 * of the work (work.ts). The HTTP server (operator/server.ts) mounts its routes on what this returns;
 * the background-only process (background-process.ts) uses it as it is, and builds no Express app.
 */
import { blsBackend } from "../../sdk/bls";
import { useKeccak256 } from "../../sdk/keccak";
import type { ChainProvider } from "../chain/indexer";
import { type ChainGateway, RpcChainGateway } from "../chain";
import { ChainClock, type Clock, systemClock } from "../clock";
import type { OperatorConfig } from "../config";
import { type DeploymentInfo, loadDeployment } from "../deployment";
import { operatorBlsSigner } from "../guarantees/signing-worker";
import { type BackgroundOwnership, coreOwnership, NeverLeads } from "../leadership";
import { createLogger, type Logger } from "../logger";
import { fastKeccak256, keccakBackend } from "../clearing/native-keccak";
import { checkBlsBackend, checkChainAndDeployment, type VaultKeyCheck } from "../startup";
import { PostgresStore, SqliteStore, type Store } from "../store";
import { type CoreContext, type CoreServices, createCoreContext } from "./context";
import { type CoreProcessRole, type CoreWork, startCoreWork } from "./work";

export type { CoreProcessRole };

/** What a Core process is opened with: everything has a default from the configuration. */
export interface CoreProcessDeps {
  /**
   * Defaults to a PostgresStore on `config.databaseUrl` if set, else a SqliteStore on `config.dbFile`; owned
   * (and closed) by the process.
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
  /** Close the store on close(); defaults to true only for a store the process opened itself. */
  closeStore?: boolean;
  /** Defaults to `loadDeployment(config.deploymentFile)`. */
  deployment?: DeploymentInfo;
  /** Defaults to JSON-RPC at `config.rpcUrl`, owned (and closed) by the process. */
  chain?: ChainGateway;
  /**
   * JSON-RPC provider for the background tasks (indexer, clearing, keeper, V2 lifecycle). They run
   * when `config.backgroundTasks` is on and either this is given or the process owns its chain
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

export interface OpenCore {
  context: CoreContext;
  logger: Logger;
  /** Stops what was started and closes what was opened, in reverse order. */
  release(): Promise<void>;
}

function workerSigner(config: OperatorConfig) {
  return operatorBlsSigner(config, { worker: true });
}

/** Everything but HTTP: startup checks, store, services, and the role's share of the work. */
export async function openCore(
  config: OperatorConfig,
  deps: CoreProcessDeps,
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
  // The sdk's per-guarantee hashes (EIP-712, signer address, guarantee id) on the native keccak when it
  // loaded: the same bytes, checked again by useKeccak256 (docs/benchmarks.md, "Fourth round: Core's CPU").
  if (keccakBackend() !== "noble") useKeccak256(fastKeccak256);
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
  let work: CoreWork | undefined;
  let stopAdmission: (() => void) | undefined;
  const release = async () => {
    stopAdmission?.();
    await work?.stop();
    await ownership?.stop();
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
    const chainClock = deps.chainClock ?? new ChainClock(await store.chainJournal.getChainCursor());
    ownership = deps.ownership ?? (role === "http" ? new NeverLeads() : coreOwnership(config, store, logger));
    const context = createCoreContext(
      {
        config,
        store,
        clock: deps.clock ?? systemClock,
        chainClock,
        logger,
        deployment,
        chain,
      },
      { leadership: ownership, ...deps.services, signer },
    );
    stopAdmission = () => context.admission.stop();
    work = await startCoreWork(role, context, {
      ownership,
      chainProvider: deps.chainProvider,
      // Background tasks need a provider: injected, or opened here when the chain connection is ours.
      ownsChain: deps.chain === undefined,
    });
    return { context, logger, release };
  } catch (error) {
    await release();
    throw error;
  }
}
