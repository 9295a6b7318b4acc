/**
 * Leader election among Core replicas on one PostgreSQL database (docs/scale-out.md, "Leader lease and
 * fencing"): a lease row (`leader_leases`, operator/store/postgres/leases.ts) with an expiry on the
 * database's clock and a fencing token that grows with every new term.
 *
 * Every `leaseMs / 3` each replica tries to take or renew the lease. The holder renews (same token); the
 * others see it held and wait; once it has expired (the holder died, paused or lost the database) the
 * next try takes it with token + 1. A leader dead at time t renewed last at r ≤ t, so its lease expires by
 * r + leaseMs and a follower's next try (at most leaseMs / 3 later) takes it: within 4/3 of a lease
 * period, under the two the design allows.
 *
 * The term's work runs on a store view fenced by the term (`PostgresStore.fenced`): each of its
 * transactions first checks, under a share lock on the lease row, that the term is current. So a replica
 * whose lease ran out cannot write anything, nor journal (and so broadcast) an operator transaction, even
 * before it notices; and it stops its work as soon as it does notice (a renewal finds another holder, or
 * its local copy of the expiry passes without a successful renewal).
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { performance } from "node:perf_hooks";
import { systemClock } from "../clock";
import { FailureLog } from "../failure-log";
import type { Logger } from "../logger";
import type { LeaseState, PostgresStore } from "../store";
import type { BackgroundOwnership, LeadershipView, LeadWork, RunningWork } from "./ownership";

/** The lease Core's background work runs under. */
export const BACKGROUND_LEASE = "core.background";

/** Tries (take or renew) per lease period. */
const TRIES_PER_PERIOD = 3;

/** A replica id unique per process start: `<configured or host name>/<pid>/<random>`. */
export function replicaId(configured: string | null): string {
  return `${configured ?? hostname()}/${process.pid}/${randomBytes(4).toString("hex")}`;
}

export interface LeaderLeaseOptions {
  store: Pick<PostgresStore, "leases" | "fenced">;
  /** This replica's id ({@link replicaId}). */
  self: string;
  /** Lease period: how long a term lasts without renewal (`SURETY_LEADER_LEASE_MS`). */
  leaseMs: number;
  logger: Logger;
  name?: string;
  /** Monotonic milliseconds (default `performance.now`). */
  now?: () => number;
  /**
   * Time between two tries (default `leaseMs / 3`, at most that): shorter tries let a test watch many
   * renewals under a lease long enough that a stalled host never loses it.
   */
  renewEveryMs?: number;
}

interface ActiveTerm {
  token: number;
  /** Local monotonic ms after which this replica no longer counts itself leader without a renewal. */
  deadline: number;
  running: RunningWork | null;
}

export class LeaderLease implements BackgroundOwnership {
  readonly self: string;
  private readonly name: string;
  private readonly now: () => number;
  private readonly failures: FailureLog;
  private work: LeadWork | null = null;
  private term: ActiveTerm | null = null;
  private seen: LeaseState | null = null;
  private timer: NodeJS.Timeout | undefined;
  private attempting: Promise<void> | null = null;
  /** Starts and stops of terms, one after the other (a new term's work starts after the old one stopped). */
  private transition: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: LeaderLeaseOptions) {
    if (!Number.isSafeInteger(options.leaseMs) || options.leaseMs < TRIES_PER_PERIOD) {
      throw new RangeError("leaseMs must be an integer of at least 3");
    }
    const every = options.renewEveryMs;
    if (every !== undefined && (!Number.isSafeInteger(every) || every < 1 || every > options.leaseMs / 3)) {
      throw new RangeError("renewEveryMs must be an integer from 1 to leaseMs / 3");
    }
    this.self = options.self;
    this.name = options.name ?? BACKGROUND_LEASE;
    this.now = options.now ?? (() => performance.now());
    this.failures = new FailureLog(options.logger, systemClock);
  }

  /** Time between two tries to take or renew the lease. */
  get renewIntervalMs(): number {
    return this.options.renewEveryMs ?? Math.floor(this.options.leaseMs / TRIES_PER_PERIOD);
  }

  isLeader(): boolean {
    return this.term !== null && this.now() < this.term.deadline;
  }

  token(): number | null {
    return this.isLeader() ? this.term!.token : null;
  }

  view(): LeadershipView {
    const seen = this.seen;
    const live = seen !== null && seen.expiresAtMs > seen.nowMs;
    return {
      role: this.isLeader() ? "leader" : "follower",
      self: this.self,
      leader: live ? seen.holder : null,
      token: live ? seen.token : null,
      expiresAt: live ? seen.expiresAtMs : null,
    };
  }

  /** Tries once at once (a lone replica leads from its first moment), then every {@link renewIntervalMs}. */
  async start(work: LeadWork): Promise<void> {
    if (this.work !== null) throw new Error("the lease is already started");
    this.work = work;
    await this.attempt();
    // Renewals go on while the first term's work starts (it reads the chain): a start slower than the lease
    // must not cost the lease.
    if (!this.stopped) {
      this.timer = setInterval(() => this.tick(), this.renewIntervalMs);
      this.timer.unref();
    }
    await this.transition;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    await this.attempting;
    const term = this.term;
    this.endTerm("Core is stopping");
    await this.transition;
    if (term !== null) {
      await this.options.store.leases
        .release({ name: this.name, holder: this.self, token: term.token })
        .catch(() => false);
    }
  }

  /**
   * Stops renewing and forgets the term WITHOUT stopping its work or giving the lease up: what a frozen or
   * partitioned process looks like to the others. For tests of takeover and fencing only.
   */
  abandon(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private tick(): void {
    if (this.stopped) return;
    if (this.term !== null && this.now() >= this.term.deadline) {
      this.endTerm("its lease ran out before it could be renewed");
    }
    if (this.attempting !== null) return; // a try still waits for the database
    this.attempting = this.attempt().finally(() => {
      this.attempting = null;
    });
  }

  private async attempt(): Promise<void> {
    const startedAt = this.now();
    let state: LeaseState;
    try {
      state = await this.options.store.leases.acquire(this.name, this.self, this.options.leaseMs);
      this.failures.succeeded("leader lease");
    } catch (error) {
      this.failures.failed("leader lease", error);
      if (this.term !== null && this.now() >= this.term.deadline) {
        this.endTerm("its lease could not be renewed (database unreachable)");
      }
      return;
    }
    this.seen = state;
    if (this.stopped) {
      if (state.holder === this.self && this.term === null) {
        await this.options.store.leases
          .release({ name: this.name, holder: this.self, token: state.token })
          .catch(() => false);
      }
      return;
    }
    if (state.holder !== this.self) {
      if (this.term !== null) this.endTerm(`the lease is held by ${state.holder} (token ${state.token})`);
      return;
    }
    const deadline = startedAt + (state.expiresAtMs - state.nowMs);
    if (this.term !== null && this.term.token === state.token) {
      this.term.deadline = deadline;
      return;
    }
    if (this.term !== null) this.endTerm(`a new term began (token ${state.token})`);
    this.beginTerm(state.token, deadline);
  }

  private beginTerm(token: number, deadline: number): void {
    const term: ActiveTerm = { token, deadline, running: null };
    this.term = term;
    const { logger } = this.options;
    logger.info(
      { replica: this.self, lease: this.name, token },
      "this replica leads: background work starts",
    );
    const store = this.options.store.fenced({ name: this.name, holder: this.self, token });
    this.transition = this.transition.then(async () => {
      if (this.term !== term) return;
      try {
        term.running = await this.work!({ token, store });
      } catch (error) {
        logger.error(
          { err: error, replica: this.self, token },
          "background work could not start; the lease is given up",
        );
        if (this.term === term) this.term = null;
        await this.options.store.leases
          .release({ name: this.name, holder: this.self, token })
          .catch(() => false);
        return;
      }
      if (this.term !== term) await this.stopWork(term);
    });
  }

  private endTerm(reason: string): void {
    const term = this.term;
    if (term === null) return;
    this.term = null;
    this.options.logger.warn(
      { replica: this.self, lease: this.name, token: term.token, reason },
      "this replica no longer leads: background work stops",
    );
    this.transition = this.transition.then(() => this.stopWork(term));
  }

  private async stopWork(term: ActiveTerm): Promise<void> {
    const running = term.running;
    term.running = null;
    try {
      await running?.stop();
    } catch (error) {
      this.options.logger.error({ err: error, token: term.token }, "background work did not stop cleanly");
    }
  }
}
