/**
 * Who runs Core's background work, and what replicas that do not run it read instead (docs/scale-out.md).
 * Core's startup wires it with two calls: {@link coreOwnership} and {@link startReplicaWork}.
 */
import type { ChainSyncMonitor } from "../chain/sync-status";
import type { ProtocolTimings } from "../chain/timings";
import type { Clock } from "../clock";
import type { OperatorConfig } from "../config";
import type { Logger } from "../logger";
import { PostgresStore, type Store } from "../store";
import { LeaderLease, replicaId } from "./lease";
import { type BackgroundOwnership, type LeadWork, type RunningWork, SoleOwnership } from "./ownership";
import type { CommitBondGate } from "../clearing/bond-floor";
import type { CommitDeadlineGate } from "../clearing/commit-deadline";
import { publishReplicaState, ReplicaStateFollower } from "./replica-state";

export * from "./ownership";
export { BACKGROUND_LEASE, LeaderLease, type LeaderLeaseOptions, replicaId } from "./lease";
export { publishReplicaState, REPLICA_STATE_KEY, ReplicaStateFollower } from "./replica-state";

/** A {@link LeaderLease} on a PostgreSQL store (replicas may share it), the process alone on any other. */
export function coreOwnership(
  config: Pick<OperatorConfig, "replicaId" | "leaderLeaseMs">,
  store: Store,
  logger: Logger,
): BackgroundOwnership {
  if (store instanceof PostgresStore) {
    return new LeaderLease({
      store,
      self: replicaId(config.replicaId),
      leaseMs: config.leaderLeaseMs,
      logger,
    });
  }
  return new SoleOwnership(store);
}

export interface ReplicaContext {
  config: Pick<OperatorConfig, "pollIntervalMs">;
  store: Store;
  chainClock: Clock;
  chainSync: ChainSyncMonitor;
  timings: ProtocolTimings;
  commitBond: CommitBondGate;
  commitDeadline?: CommitDeadlineGate;
  logger: Logger;
}

/**
 * Starts `ownership` with `work`. Where there is something to elect (not a sole owner), each term also
 * publishes the leader's in-memory view (chain sync, timings) and this replica follows the published view
 * while it does not lead: answers the returned loop, which the caller stops before the ownership.
 */
export async function startReplicaWork(
  ownership: BackgroundOwnership,
  context: ReplicaContext,
  work: LeadWork,
): Promise<RunningWork | undefined> {
  if (ownership.view().role === "sole") {
    await ownership.start(work);
    return undefined;
  }
  const deps = {
    chainClock: context.chainClock,
    chainSync: context.chainSync,
    timings: context.timings,
    commitBond: context.commitBond,
    commitDeadline: context.commitDeadline,
    logger: context.logger,
    intervalMs: context.config.pollIntervalMs,
  };
  const follower = await new ReplicaStateFollower({ ...deps, store: context.store, ownership }).start();
  try {
    await ownership.start(async (term) => {
      const running = await work(term);
      const publisher = publishReplicaState({
        ...deps,
        store: term.store,
        self: ownership.self,
        token: term.token,
      });
      return {
        stop: async () => {
          await publisher.stop();
          await running.stop();
        },
      };
    });
  } catch (error) {
    await follower.stop();
    throw error;
  }
  return follower;
}
