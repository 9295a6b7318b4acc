/**
 * Core's background tasks in the server process (docs/operator-async.md): every `pollIntervalMs`,
 * one after the other, indexer → V2 lifecycle → verdict pins → operator sender → operator key → keeper → clearing scheduler → bond
 * monitor (the keeper's covers have the shortest deadline: docs/clearing.md "Deadline work before issuance"). Each task is a `tick()` (tests drive them directly); a failing tick is retried on the next
 * round, never fatal, and logged without flooding (failure-log.ts: once, then at a bounded rate while it
 * repeats).
 * `stop()` waits for the running round, so the store is never closed under a task.
 */
import { FetchRequest, JsonRpcProvider, Network } from "ethers";
import { ChainIndexer, type ChainProvider } from "./chain/indexer";
import { OperatorSender, type SenderPolicy } from "./chain/sender";
import type { ChainSyncMonitor } from "./chain/sync-status";
import {
  confirmationLagProblem,
  parseScheduledTimings,
  type ProtocolTimings,
  type ScheduledTimings,
} from "./chain/timings";
import { ChainClock, ChainTimeUnavailableError, type Clock, systemClock } from "./clock";
import type { CommitBondGate } from "./clearing/bond-floor";
import type { CommitDeadlineGate } from "./clearing/commit-deadline";
import { BondMonitor } from "./clearing/bond-monitor";
import { ClearingKeeper } from "./clearing/keeper";
import { type AnswerCertifier, createAnswerCertifier } from "./clearing/answer-certifier";
import { OperatorKeyWatch } from "./clearing/key-watch";
import type { ChainGateway } from "./chain/gateway";
import type { BlsSigner } from "../sdk/bls";
import type { CoreMetrics } from "./metrics";
import { ClearingScheduler } from "./clearing/scheduler";
import type { OperatorConfig } from "./config";
import type { DeploymentInfo } from "./deployment";
import { FailureLog } from "./failure-log";
import { V2Lifecycle } from "./lifecycle/v2-lifecycle";
import { VerdictPinner } from "./lifecycle/verdict-pins";
import type { Logger } from "./logger";
import type { Repositories, Store } from "./store";

export interface BackgroundDeps {
  config: OperatorConfig;
  store: Store;
  deployment: DeploymentInfo;
  /** Wall clock: bookkeeping stamps. */
  clock: Clock;
  /**
   * Chain time for every deadline a contract also judges (lifecycle, scheduler, keeper). A
   * {@link ChainClock} is fed by this indexer; any other Clock (tests) is used as given.
   */
  chainClock: Clock;
  logger: Logger;
  provider: ChainProvider;
  timings: ProtocolTimings;
  /** Where the indexer reports whether the books follow the chain (health, issuance gate, metrics). */
  chainSync?: ChainSyncMonitor;
  /** Paces repeated failure logs (default: the system clock). */
  wallClock?: Clock;
  /** Exports the bond monitor's readings (`surety_operator_bond`). */
  metrics?: CoreMetrics;
  /** The V2 lifecycle the routes use (the Core context's); one is built when absent (tests). */
  lifecycle?: V2Lifecycle;
  /**
   * Writes what HTTP workers in other processes read of the background work (chain sync, timings)
   * to the store after every indexer tick (background-state.ts); none when this process serves HTTP alone.
   */
  statePublisher?: { tick(): Promise<unknown> };
  /** Where the scheduler reports commits held back by the on-chain bond floor (health, metrics). */
  commitBond?: CommitBondGate;
  /** Where the scheduler reports whether owed commits land by their deadline (issuance gate, health, metrics). */
  commitDeadline?: CommitDeadlineGate;
  /**
   * Core's certificate signer and chain gateway (the Core context's): the keeper re-signs answered
   * guarantees under the Vault's current key with them (clearing/answer-certifier.ts). Without both it
   * answers with the certificates stored at issuance.
   */
  signer?: BlsSigner;
  chain?: Pick<ChainGateway, "vaultOperatorKey">;
}

export interface BackgroundTasks {
  indexer: ChainIndexer;
  lifecycle: V2Lifecycle;
  scheduler: ClearingScheduler | null;
  keeper: ClearingKeeper | null;
  /** Reads the operator bond per asset every round (metrics, floor warnings). */
  bond: BondMonitor;
  /** The operator account's transactions (null without SURETY_OPERATOR_PRIVATE_KEY). */
  sender: OperatorSender | null;
  /** Pins the verdicts of the V2 guarantees Core nets (null without an operator key). */
  pinner: VerdictPinner | null;
  /** Checks Core's BLS key against the Vault's every round (null without a keeper or a certifier). */
  keyWatch: OperatorKeyWatch | null;
  /** Runs one round now (all tasks once). */
  runOnce(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

/** The keeper's certifier from the Core context's signer and gateway (none without both). */
function answerCertifier(deps: BackgroundDeps, vault: string): AnswerCertifier | undefined {
  const { signer, chain } = deps;
  if (signer === undefined || chain === undefined) return undefined;
  return createAnswerCertifier({ signer, vaultKey: () => chain.vaultOperatorKey(vault) });
}

/** `operator_state` key of the scheduled timings changes, kept for a restart or the next leader. */
export const SCHEDULED_TIMINGS_KEY = "vault.scheduled_timings";

async function storedScheduledTimings(
  store: Pick<Repositories, "operatorState">,
): Promise<ScheduledTimings[]> {
  const raw = await store.operatorState.getOperatorState(SCHEDULED_TIMINGS_KEY);
  if (raw === null) return [];
  try {
    return parseScheduledTimings(JSON.parse(raw));
  } catch {
    return []; // unreadable: nothing to restore (the Vault still enforces; the indexer sees later schedules)
  }
}

/** A background task: writes the scheduled timings changes to the store when they changed (after the indexer). */
function scheduledTimingsKeeper(store: Pick<Repositories, "operatorState">, timings: ProtocolTimings) {
  let written: string | null = null;
  return {
    async tick(): Promise<void> {
      const value = JSON.stringify(timings.scheduled());
      if (value === written) return;
      await store.operatorState.setOperatorState(SCHEDULED_TIMINGS_KEY, value);
      written = value;
    },
  };
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
    // ethers answers a repeated request within 250 ms from a cache by default: a receipt, a nonce
    // count or a block number read right after a send would be stale. Every read goes to the node.
    cacheTimeout: -1,
  });
}

/** The sender's policy from Core's `SURETY_TX_*` settings and its confirmation depth. */
export function senderPolicy(
  config: Pick<
    OperatorConfig,
    "txReplaceAfterBlocks" | "txFeeBumpBps" | "txMaxFeePerGasGwei" | "confirmations"
  >,
): SenderPolicy {
  return {
    replaceAfterBlocks: config.txReplaceAfterBlocks,
    feeBumpBps: config.txFeeBumpBps,
    maxFeePerGas: config.txMaxFeePerGasGwei === null ? null : BigInt(config.txMaxFeePerGasGwei) * 10n ** 9n,
    confirmations: config.confirmations,
  };
}

export async function createBackgroundTasks(deps: BackgroundDeps): Promise<BackgroundTasks> {
  const { config, store, deployment, clock, chainClock, logger, provider, timings } = deps;
  const vaultTimings = await timings.load(provider, deployment.vault);
  // Timings changes scheduled before this process started (a restart, a new leader: the indexer resumes
  // past their events) were kept in the store; the Vault says which of them are still scheduled.
  await timings.restoreScheduled(provider, deployment.vault, await storedScheduledTimings(store));
  if (timings.scheduled().length > 0) {
    logger.warn(
      { scheduled_timings: timings.scheduled() },
      "Vault timings changes are scheduled: V2 deadlines are capped under them too until they execute or are cancelled",
    );
  }
  const lagProblem = confirmationLagProblem(vaultTimings, config.confirmations);
  if (lagProblem) logger.warn({ confirmations: config.confirmations }, lagProblem);
  const indexer = new ChainIndexer({
    store,
    provider,
    deployment,
    clock,
    logger,
    confirmations: config.confirmations,
    maxBlocksPerTick: config.indexerMaxBlocksPerTick,
    onTimings: (t) => timings.set(t),
    onTimingsScheduled: (change) => timings.schedule(change),
    onOperationCancelled: (operation) => timings.cancel(operation),
    onCursor: chainClock instanceof ChainClock ? (cursor) => chainClock.observe(cursor) : undefined,
    syncStatus: deps.chainSync,
    transitionRefusals: deps.metrics,
    creditDisputes: deps.metrics,
  });
  const lifecycle =
    deps.lifecycle ??
    new V2Lifecycle({
      store,
      clock,
      chainClock,
      logger,
      chainId: config.chainId,
      transitionRefusals: deps.metrics,
    });
  const bond = new BondMonitor({
    provider,
    clearingHouse: deployment.clearingHouse,
    floors: config.bondFloors,
    assets: async () => (await store.collateral.lockedTotals()).keys(),
    logger,
  });
  deps.metrics?.observeBond(bond);
  let scheduler: ClearingScheduler | null = null;
  let keeper: ClearingKeeper | null = null;
  let sender: OperatorSender | null = null;
  let pinner: VerdictPinner | null = null;
  let keyWatch: OperatorKeyWatch | null = null;
  if (config.operatorPrivateKey) {
    sender = new OperatorSender({
      privateKey: config.operatorPrivateKey,
      provider,
      chainId: BigInt(config.chainId),
      store,
      logger,
      policy: senderPolicy(config),
    });
    scheduler = new ClearingScheduler({
      store,
      provider,
      sender,
      deployment,
      chainClock,
      logger,
      cycleLengthSeconds: config.cycleLengthSeconds ?? vaultTimings.cycleLength,
      gasBudget: BigInt(config.commitGasBudget),
      bondGate: deps.commitBond,
      deadlineGate: deps.commitDeadline,
      maxGuaranteesPerCycle: config.maxGuaranteesPerCycle,
      // The Vault's timings as the indexer follows them: a change of commitDelay applies at once.
      commitBudgetSeconds: () => {
        const t = timings.get();
        return t === null ? null : t.commitDelay + t.confirmationLag;
      },
      initialSecondsPerCommit: Math.max(1, Math.ceil(config.pollIntervalMs / 1000)),
    });
    pinner = new VerdictPinner({
      store,
      sender,
      vault: deployment.vault,
      chainClock,
      clock,
      logger,
      resendAfterSeconds: config.verdictPinResendSeconds,
    });
    if (config.keeperEnabled) {
      const certifier = answerCertifier(deps, deployment.vault);
      keeper = new ClearingKeeper({
        store,
        sender,
        deployment,
        chainClock,
        logger,
        claimCredits: config.keeperClaimsCredits,
        certifier,
        // The bond floor's share of settled cycles is released when it holds something back: refunds the
        // bond owes or holds (last bond round), or this scheduler's commit (audit3 A3-M3).
        releaseRisk: () =>
          [...bond.refundsOwed().values()].some((owed) => owed > 0n) ||
          scheduler?.bondGate.status().state === "short",
      });
      if (certifier) keyWatch = new OperatorKeyWatch({ certifier, store, clock, logger });
    }
  } else {
    logger.warn(
      "SURETY_OPERATOR_PRIVATE_KEY is not set: clearing cycles are not committed and no keeper runs",
    );
  }

  const tasks: [string, { tick(): Promise<unknown> } | null][] = [
    ["indexer", indexer],
    ["scheduled timings", scheduledTimingsKeeper(store, timings)],
    ["shared state", deps.statePublisher ?? null],
    ["lifecycle", lifecycle],
    // After the lifecycle (what it just made payable on its verdict): the pin is sent in the same round,
    // and the scheduler nets the guarantee once the indexer has applied it (lifecycle/verdict-pins.ts).
    ["verdict pins", pinner],
    // Before the scheduler and the keeper: they then see what was mined, re-sent or replaced.
    ["sender", sender],
    // The keeper before the scheduler: a cover's deadline (the default window) is the shortest Core has,
    // and planning a large cycle (netting, trees, estimates) must not hold a due cover back for a round.
    // Whether the keeper's answers would verify, every round, open disputes or not (health, metrics).
    ["operator key", keyWatch],
    ["keeper", keeper],
    ["scheduler", scheduler],
    ["bond", bond],
  ];
  const failures = new FailureLog(logger, deps.wallClock ?? systemClock);
  const runOnce = async () => {
    for (const [name, task] of tasks) {
      if (!task) continue;
      try {
        await task.tick();
        failures.succeeded(name);
      } catch (error) {
        if (error instanceof ChainTimeUnavailableError) {
          // Nothing indexed yet (a fresh store, or the deployment block not yet confirmed): wait.
          logger.debug({ task: name }, "waiting for the first indexed block (no chain time yet)");
          continue;
        }
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
    bond,
    sender,
    pinner,
    keyWatch,
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
