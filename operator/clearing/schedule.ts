/**
 * The clearing schedule as Core runs it (docs/operator-api.md, `GET /core/clearing/schedule`): chain time
 * (the newest indexed block's timestamp, the clock Core judges cutoffs and deadlines by), the next cutoff
 * the scheduler keeps in the store, the commit promised within the Vault's `commitDelay` of it, and a cycle
 * planned or sent but not yet seen committed. No HTTP here: the route maps it to its wire form.
 */
import type { VaultTimings } from "../chain/handlers";
import type { Clock } from "../clock";
import type { OperatorConfig } from "../config";
import type { CycleRecord, Repositories } from "../store";
import { NEXT_CUTOFF_KEY } from "./scheduler";

export interface ClearingSchedule {
  /** Chain time, unix seconds; null before the indexer has applied a block. */
  chainTime: number | null;
  /** Cycle length the scheduler uses (configured, else the Vault's); null while the timings are unknown. */
  cycleLengthSeconds: number | null;
  commitDelaySeconds: number | null;
  /** Next cutoff (unix seconds, chain time); null before the scheduler's first run. */
  nextCutoff: number | null;
  /** `nextCutoff + commitDelay`: the commit of the cycle closing then is due by this time. */
  nextCommitBy: number | null;
  /** A cycle Core planned (or sent) that the chain has not yet shown committed. */
  pending:
    | (Pick<CycleRecord, "cycleId" | "cutoff" | "plannedAt" | "txHash" | "sentAt"> & {
        state: "PLANNED" | "SENT";
      })
    | null;
  /** Highest committed (committed, finalized or vetoed) cycle id; 0 when none. */
  latestCommittedCycleId: number;
}

export const COMMITTED_CYCLE_STATES = ["COMMITTED", "FINALIZED", "VETOED"] as const;

function chainNow(chainClock: Clock): number | null {
  try {
    return chainClock.nowSeconds();
  } catch {
    // Nothing indexed yet (ChainTimeUnavailableError): the schedule says so with null.
    return null;
  }
}

export async function clearingSchedule(deps: {
  store: Pick<Repositories, "cycles" | "operatorState">;
  chainClock: Clock;
  config: Pick<OperatorConfig, "cycleLengthSeconds">;
  timings: VaultTimings | null;
}): Promise<ClearingSchedule> {
  const { store, chainClock, config, timings } = deps;
  const [stored, latest, [latestCommitted]] = await Promise.all([
    store.operatorState.getOperatorState(NEXT_CUTOFF_KEY),
    store.cycles.latestCycle(),
    store.cycles.listCycleIds(COMMITTED_CYCLE_STATES, { limit: 1 }),
  ]);
  const nextCutoff = stored === null ? null : Number(stored);
  const commitDelay = timings?.commitDelay ?? null;
  const pendingState = latest?.state === "PLANNED" || latest?.state === "SENT" ? latest.state : null;
  const pending = latest && pendingState && { ...latest, state: pendingState };
  return {
    chainTime: chainNow(chainClock),
    cycleLengthSeconds: config.cycleLengthSeconds ?? timings?.cycleLength ?? null,
    commitDelaySeconds: commitDelay,
    nextCutoff,
    nextCommitBy: nextCutoff !== null && commitDelay !== null ? nextCutoff + commitDelay : null,
    pending: pending && {
      cycleId: pending.cycleId,
      state: pending.state,
      cutoff: pending.cutoff,
      plannedAt: pending.plannedAt,
      txHash: pending.txHash,
      sentAt: pending.sentAt,
    },
    latestCommittedCycleId: latestCommitted ?? 0,
  };
}
