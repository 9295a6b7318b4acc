/**
 * The commit deadline gate (docs/clearing.md "Cadence and the commit deadline"): whether Core can still
 * commit every guarantee it has acknowledged by the latest time the grace-period invariant allows
 * (docs/protocol.md#grace-period-invariant), and so whether it may acknowledge more.
 *
 * A cycle closing at cutoff `c` must be committed, in every one of its commits (a cycle cut by the size or
 * gas bound is committed in several, all under the same cutoff), by `c + commitDelay + confirmationLag`
 * of chain time: the Vault budgets `cycleLength + commitDelay + confirmationLag` between a guarantee's
 * acknowledgement and its commit. Core's scheduler judges, on every tick:
 *
 * - **owed work**: the earliest cutoff whose guarantees are not all committed (a plan sent and not yet
 *   seen on chain, the rest of a cycle cut by a bound, a cutoff that has passed with guarantees waiting).
 *   Its commits still to land, one after the other, each taking the time a commit has taken recently,
 *   must land by its deadline;
 * - **the next cutoff's load**: the guarantees waiting for the next cutoff must fit in the commits that
 *   can land between that cutoff and its deadline (the commits that fit in `commitDelay +
 *   confirmationLag`, less one for the time to notice the cutoff, times the guarantees one commit takes).
 *
 * Either at risk, issuance is refused (`commit_deadline_at_risk`, 500 like the other gates: the interface
 * lists no 503 for `POST /core/guarantees`) before a commit can land late: a guarantee acknowledged now
 * would only add to work that can no longer be done in time. Where the scheduler runs in another process
 * the verdict is mirrored from the store like the commit-bond verdict (operator/background-state.ts); a
 * missing or stale publication reads `off` here because the commit-bond gate already refuses issuance
 * then (`commit_bond_unknown`), and one refusal code per cause is enough.
 */
import type { Clock } from "../clock";
import type { Logger } from "../logger";

/** `off`: nothing judged (no scheduler here, or no timings yet); `ok`; `at_risk`: issuance refused. */
export type CommitDeadlineState = "off" | "ok" | "at_risk";

export interface CommitDeadlineStatus {
  state: CommitDeadlineState;
  /** Chain time (unix seconds) by which the earliest owed commit must land; null when nothing is owed. */
  deadline: number | null;
  /** The cutoff of that owed work (null: none). */
  cutoff: number | null;
  /** Commits still to land for it, the one in flight included. */
  commitsOwed: number;
  /** Guarantees waiting for the next cutoff (counted up to `capacity` + 1). */
  waiting: number;
  /** Guarantees the commits after one cutoff can take in time (null: not judged). */
  capacity: number | null;
  /** Chain seconds one commit takes, as Core estimates it (the longest of the recent ones). */
  secondsPerCommit: number;
  /** Why it is at risk (null when ok or off). */
  reason: string | null;
  /** Wall-clock unix seconds since the state holds (null while off). */
  since: number | null;
}

/** A published verdict (JSON). */
export type CommitDeadlineSnapshot = CommitDeadlineStatus;

export interface CommitDeadlineInput {
  /** Chain time now (the indexed head). */
  now: number;
  /** `commitDelay + confirmationLag` of the Vault's timings: a cutoff's commits land by cutoff + this. */
  budgetSeconds: number;
  /** The earliest cutoff with owed work (null: none). */
  owedCutoff: number | null;
  /** Commits still to land for it (≥ 1 when owed). */
  commitsOwed: number;
  /** Guarantees waiting after every reserved range, counted up to `capacity + 1`. */
  waiting: number;
  /** Guarantees one commit takes (the size bound, or what the gas bound cut it to). */
  perCommit: number;
  secondsPerCommit: number;
}

const OFF: CommitDeadlineStatus = {
  state: "off",
  deadline: null,
  cutoff: null,
  commitsOwed: 0,
  waiting: 0,
  capacity: null,
  secondsPerCommit: 0,
  reason: null,
  since: null,
};

/** Commits that fit between a cutoff and its deadline: one commit's time goes to noticing the cutoff. */
export function commitsPerCutoff(budgetSeconds: number, secondsPerCommit: number): number {
  return Math.max(1, Math.floor(budgetSeconds / Math.max(1, secondsPerCommit)) - 1);
}

/** The verdict for one tick of the scheduler (pure: tested on its own). */
export function judgeCommitDeadline(input: CommitDeadlineInput): Omit<CommitDeadlineStatus, "since"> {
  const spc = Math.max(1, input.secondsPerCommit);
  const capacity = commitsPerCutoff(input.budgetSeconds, spc) * Math.max(1, input.perCommit);
  const deadline = input.owedCutoff === null ? null : input.owedCutoff + input.budgetSeconds;
  const base = {
    deadline,
    cutoff: input.owedCutoff,
    commitsOwed: input.commitsOwed,
    waiting: input.waiting,
    capacity,
    secondsPerCommit: spc,
  };
  if (deadline !== null) {
    const landsBy = input.now + Math.max(1, input.commitsOwed) * spc;
    if (landsBy > deadline) {
      return {
        ...base,
        state: "at_risk",
        reason:
          `the cycle closed at chain time ${input.owedCutoff} needs ${input.commitsOwed} more commit(s) of ` +
          `≈ ${spc} s: they would land at ${landsBy}, after ${deadline} (cutoff + commitDelay + confirmationLag)`,
      };
    }
  }
  if (input.waiting >= capacity) {
    return {
      ...base,
      state: "at_risk",
      reason:
        `${input.waiting} guarantees wait for the next cutoff: the commits that land in time after it ` +
        `take ${capacity} (${commitsPerCutoff(input.budgetSeconds, spc)} of ${input.perCommit} guarantees, ` +
        `≈ ${spc} s each, within commitDelay + confirmationLag = ${input.budgetSeconds} s)`,
    };
  }
  return { ...base, state: "ok", reason: null };
}

export interface CommitDeadlineGateOptions {
  logger: Logger;
  /** Wall clock for `since` and the mirror's age. */
  clock: Clock;
}

export class CommitDeadlineGate {
  private current: CommitDeadlineStatus = OFF;
  private mirrored: {
    snapshot: CommitDeadlineSnapshot | null;
    publishedAt: number | null;
    maxStaleSeconds: number;
  } | null = null;

  constructor(private readonly options: CommitDeadlineGateOptions) {}

  /** What issuance, health and metrics read. */
  status(): CommitDeadlineStatus {
    if (this.mirrored === null) return this.current;
    const { snapshot, publishedAt, maxStaleSeconds } = this.mirrored;
    const age = publishedAt === null ? null : this.options.clock.nowSeconds() - publishedAt;
    // Missing or stale: the commit-bond gate refuses issuance as `unknown` already (one code per cause).
    if (snapshot === null || age === null || age > maxStaleSeconds) return OFF;
    return snapshot;
  }

  snapshot(): CommitDeadlineSnapshot {
    return this.current;
  }

  /** Takes the verdict of the process that runs the scheduler (as the commit-bond gate does). */
  mirror(snapshot: CommitDeadlineSnapshot | null, publishedAt: number | null, maxStaleSeconds: number): void {
    this.mirrored = { snapshot, publishedAt, maxStaleSeconds };
  }

  /** The scheduler's verdict of this tick; logged only when the state changes. */
  record(verdict: Omit<CommitDeadlineStatus, "since">): void {
    this.mirrored = null;
    const previous = this.current.state;
    const since = verdict.state === previous ? this.current.since : this.options.clock.nowSeconds();
    this.current = { ...verdict, since };
    if (verdict.state === "at_risk" && previous !== "at_risk") {
      this.options.logger.error(
        {
          event: "commit_deadline_at_risk",
          cutoff: verdict.cutoff,
          deadline: verdict.deadline,
          commits_owed: verdict.commitsOwed,
          waiting: verdict.waiting,
          capacity: verdict.capacity,
          seconds_per_commit: verdict.secondsPerCommit,
        },
        `clearing commits at risk of landing after the grace-period budget: issuance refused (${verdict.reason})`,
      );
    } else if (verdict.state === "ok" && previous === "at_risk") {
      this.options.logger.info(
        { event: "commit_deadline_restored", waiting: verdict.waiting, capacity: verdict.capacity },
        "clearing commits on time again: issuance resumes",
      );
    }
  }
}

const STATES: ReadonlySet<unknown> = new Set(["off", "ok", "at_risk"]);

/** A published verdict, or null when absent or malformed. */
export function parseCommitDeadlineSnapshot(value: unknown): CommitDeadlineSnapshot | null {
  if (typeof value !== "object" || value === null) return null;
  const v = value as Partial<CommitDeadlineSnapshot>;
  if (!STATES.has(v.state) || typeof v.commitsOwed !== "number" || typeof v.waiting !== "number") return null;
  return value as CommitDeadlineSnapshot;
}
