/**
 * What a replica answers from memory that only the leader's background work produces (docs/scale-out.md,
 * "What followers read from the database"):
 *
 * - chain time (`ChainClock`, fed by the indexer's cursor): a follower reads the stored cursor;
 * - whether the books follow the chain (`ChainSyncMonitor`, fed by the indexer's ticks: the issuance gate
 *   and `/core/health`): the leader publishes its monitor's snapshot, followers adopt it;
 * - the Vault's timings (`ProtocolTimings`, loaded by the background tasks and updated by the indexer:
 *   the V2 deadline cap and public params): published with the snapshot;
 * - whether clearing commits can be sent (`CommitBondGate`, fed by the leader's scheduler: the issuance gate
 *   and `/core/health`): published with the snapshot and its time; a follower reads a publication older
 *   than `SURETY_INDEXER_MAX_STALE_SECONDS`, or none, as `unknown` (issuance refused), never `ok`.
 *
 * The leader publishes every interval through its term's fenced store ({@link publishReplicaState});
 * every replica pulls every interval while it does not lead ({@link ReplicaStateFollower}). Everything
 * else a replica answers (balances, guarantees, cycles, proofs, withdrawals, sessions) is read from the
 * database per request already.
 */
import { type ChainSyncMonitor, type ChainSyncSnapshot } from "../chain/sync-status";
import type { VaultTimings } from "../chain/handlers";
import { parseScheduledTimings, type ProtocolTimings, type ScheduledTimings } from "../chain/timings";
import type { CommitBondGate, CommitBondSnapshot } from "../clearing/bond-floor";
import { parseCommitBondSnapshot } from "../background-state";
import {
  type CommitDeadlineGate,
  type CommitDeadlineSnapshot,
  parseCommitDeadlineSnapshot,
} from "../clearing/commit-deadline";
import { ChainClock, type Clock, systemClock } from "../clock";
import { FailureLog } from "../failure-log";
import type { Logger } from "../logger";
import type { Repositories } from "../store";
import type { BackgroundOwnership, RunningWork } from "./ownership";

/** operator_state key of the leader's published view. */
export const REPLICA_STATE_KEY = "replica.chain_view";

interface PublishedState {
  /** The publishing replica and its term. */
  leader: string;
  token: number;
  sync: ChainSyncSnapshot;
  timings: VaultTimings | null;
  /** Timings changes scheduled and not yet executed or cancelled (absent from a version that published none). */
  scheduledTimings?: ScheduledTimings[];
  /** The leader's bond-floor verdict (absent from a version that published none: `unknown`). */
  commitBond?: CommitBondSnapshot | null;
  /** The leader's commit-deadline verdict (absent from a version that published none: `off`). */
  commitDeadline?: CommitDeadlineSnapshot | null;
  /** Wall-clock unix seconds of the publication (absent from a version that published none). */
  publishedAt?: number;
}

export interface ReplicaStateDeps {
  chainClock: Clock;
  chainSync: ChainSyncMonitor;
  timings: ProtocolTimings;
  commitBond: CommitBondGate;
  /** The leader's scheduler's commit-deadline verdict (issuance gate); none: not published or followed. */
  commitDeadline?: CommitDeadlineGate;
  logger: Logger;
  intervalMs: number;
}

/** Writes the leader's view every `intervalMs` through the term's (fenced) store; part of the term's work. */
export function publishReplicaState(
  deps: ReplicaStateDeps & { store: Pick<Repositories, "operatorState">; self: string; token: number },
): RunningWork {
  const failures = new FailureLog(deps.logger, systemClock);
  const publish = async () => {
    const state: PublishedState = {
      leader: deps.self,
      token: deps.token,
      sync: deps.chainSync.snapshot(),
      timings: deps.timings.get(),
      scheduledTimings: deps.timings.scheduled(),
      commitBond: deps.commitBond.snapshot(),
      commitDeadline: deps.commitDeadline?.snapshot() ?? null,
      publishedAt: systemClock.nowSeconds(),
    };
    try {
      await deps.store.operatorState.setOperatorState(REPLICA_STATE_KEY, JSON.stringify(state));
      failures.succeeded("replica state");
    } catch (error) {
      failures.failed("replica state", error);
    }
  };
  return loop(publish, deps.intervalMs, true);
}

/** Pulls the leader's view into this replica's clock, sync monitor and timings while it does not lead. */
export class ReplicaStateFollower {
  private readonly failures: FailureLog;

  constructor(
    private readonly deps: ReplicaStateDeps & {
      store: Pick<Repositories, "chainJournal" | "operatorState">;
      ownership: Pick<BackgroundOwnership, "isLeader">;
    },
  ) {
    this.failures = new FailureLog(deps.logger, systemClock);
  }

  /** One pull (skipped while leading: then this replica's own tasks feed the same objects). */
  async tick(): Promise<void> {
    const { store, chainClock, chainSync, timings, commitBond, commitDeadline, ownership } = this.deps;
    if (ownership.isLeader()) return;
    try {
      const [cursor, raw] = await Promise.all([
        store.chainJournal.getChainCursor(),
        store.operatorState.getOperatorState(REPLICA_STATE_KEY),
      ]);
      if (ownership.isLeader()) return; // became leader meanwhile: its own indexer is ahead of this read
      if (chainClock instanceof ChainClock) chainClock.observe(cursor);
      const state = raw === null ? null : (JSON.parse(raw) as PublishedState);
      // Nothing published yet (no leader has run): this replica's own monitor stays as it is.
      if (state !== null) chainSync.follow(state.sync);
      if (state?.timings) timings.set(state.timings);
      if (state !== null) timings.setScheduled(parseScheduledTimings(state.scheduledTimings));
      // Nothing published yet (no leader has run) or a leader that publishes no verdict (an earlier
      // version, during a rolling upgrade): this replica's own gate stays as it is, like its sync monitor.
      // A published verdict is judged by its age: stale reads `unknown`, never `ok`.
      if (state !== null && state.commitBond !== undefined) {
        commitBond.mirror(
          parseCommitBondSnapshot(state.commitBond),
          typeof state.publishedAt === "number" ? state.publishedAt : null,
          chainSync.limits.maxStaleSeconds,
        );
      }
      if (state !== null) {
        commitDeadline?.mirror(
          parseCommitDeadlineSnapshot(state.commitDeadline),
          typeof state.publishedAt === "number" ? state.publishedAt : null,
          chainSync.limits.maxStaleSeconds,
        );
      }
      this.failures.succeeded("replica state");
    } catch (error) {
      this.failures.failed("replica state", error);
    }
  }

  /** Pulls once now, then every interval. */
  async start(): Promise<RunningWork> {
    await this.tick();
    return loop(() => this.tick(), this.deps.intervalMs, false);
  }
}

/** Runs `body` every `intervalMs` (first at once if `now`), one run at a time; `stop` waits for the running one. */
function loop(body: () => Promise<void>, intervalMs: number, now: boolean): RunningWork {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      round = body().finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  if (now) round = body().finally(schedule);
  else schedule();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}
