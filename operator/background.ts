/**
 * Core's background tasks in the server process (docs/operator-async.md): every `pollIntervalMs`,
 * one after the other, indexer → V2 lifecycle → clearing scheduler → keeper. Each task is a `tick()`
 * (tests drive them directly); a failing tick is retried on the next round, never fatal, and logged
 * without flooding (failure-log.ts: once, then at a bounded rate while it repeats).
 * `stop()` waits for the running round, so the store is never closed under a task.
 */
import { FetchRequest, JsonRpcProvider, Network } from "ethers";
import { ChainIndexer, type ChainProvider } from "./chain/indexer";
import { OperatorSender } from "./chain/sender";
import type { ChainSyncMonitor } from "./chain/sync-status";
import type { ProtocolTimings } from "./chain/timings";
import { type Clock, systemClock } from "./clock";
import { ClearingKeeper } from "./clearing/keeper";
import { ClearingScheduler } from "./clearing/scheduler";
import type { OperatorConfig } from "./config";
import type { DeploymentInfo } from "./deployment";
import { FailureLog } from "./failure-log";
import { V2Lifecycle } from "./lifecycle/v2-lifecycle";
import type { Logger } from "./logger";
import type { Store } from "./store";

export interface BackgroundDeps {
  config: OperatorConfig;
  store: Store;
  deployment: DeploymentInfo;
  clock: Clock;
  logger: Logger;
  provider: ChainProvider;
  timings: ProtocolTimings;
  /** Where the indexer reports whether the books follow the chain (health, issuance gate, metrics). */
  chainSync?: ChainSyncMonitor;
  /** Paces repeated failure logs (default: the system clock). */
  wallClock?: Clock;
}

export interface BackgroundTasks {
  indexer: ChainIndexer;
  lifecycle: V2Lifecycle;
  scheduler: ClearingScheduler | null;
  keeper: ClearingKeeper | null;
  /** Runs one round now (all tasks once). */
  runOnce(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

/** A JSON-RPC provider fixed to the configured chain (no network detection loop). */
export function rpcProvider(
  config: Pick<OperatorConfig, "rpcUrl" | "chainId" | "rpcTimeoutMs">,
): JsonRpcProvider {
  const request = new FetchRequest(config.rpcUrl);
  request.timeout = config.rpcTimeoutMs;
  return new JsonRpcProvider(request, undefined, {
    staticNetwork: Network.from(config.chainId),
    batchMaxCount: 1,
  });
}

export async function createBackgroundTasks(deps: BackgroundDeps): Promise<BackgroundTasks> {
  const { config, store, deployment, clock, logger, provider, timings } = deps;
  const vaultTimings = await timings.load(provider, deployment.vault);
  const indexer = new ChainIndexer({
    store,
    provider,
    deployment,
    clock,
    logger,
    confirmations: config.confirmations,
    maxBlocksPerTick: config.indexerMaxBlocksPerTick,
    onTimings: (t) => timings.set(t),
    syncStatus: deps.chainSync,
  });
  const lifecycle = new V2Lifecycle({ store, clock, logger, chainId: config.chainId });
  let scheduler: ClearingScheduler | null = null;
  let keeper: ClearingKeeper | null = null;
  if (config.operatorPrivateKey) {
    const sender = new OperatorSender(config.operatorPrivateKey, provider, BigInt(config.chainId));
    scheduler = new ClearingScheduler({
      store,
      provider,
      sender,
      deployment,
      clock,
      logger,
      cycleLengthSeconds: config.cycleLengthSeconds ?? vaultTimings.cycleLength,
      gasBudget: BigInt(config.commitGasBudget),
    });
    if (config.keeperEnabled) {
      keeper = new ClearingKeeper({
        store,
        sender,
        deployment,
        clock,
        logger,
        claimCredits: config.keeperClaimsCredits,
      });
    }
  } else {
    logger.warn(
      "SURETY_OPERATOR_PRIVATE_KEY is not set: clearing cycles are not committed and no keeper runs",
    );
  }

  const tasks: [string, { tick(): Promise<unknown> } | null][] = [
    ["indexer", indexer],
    ["lifecycle", lifecycle],
    ["scheduler", scheduler],
    ["keeper", keeper],
  ];
  const failures = new FailureLog(logger, deps.wallClock ?? systemClock);
  const runOnce = async () => {
    for (const [name, task] of tasks) {
      if (!task) continue;
      try {
        await task.tick();
        failures.succeeded(name);
      } catch (error) {
        failures.failed(name, error);
      }
    }
  };

  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let round: Promise<void> = Promise.resolve();
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      round = runOnce().finally(schedule);
    }, config.pollIntervalMs);
    timer.unref();
  };
  return {
    indexer,
    lifecycle,
    scheduler,
    keeper,
    runOnce,
    // The first round at once: until the indexer's first tick, health and issuance say `starting`.
    start: () => {
      if (stopped) return;
      round = runOnce().finally(schedule);
    },
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}
