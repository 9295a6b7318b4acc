/**
 * Who runs Core's background work (indexer, V2 lifecycle, operator sender, scheduler, keeper, bond
 * monitor, webhook dispatcher): the one seam between "serve the API" and "act on the books and the chain"
 * (docs/scale-out.md). Core starts it with the work to run while it leads; the ownership decides when:
 *
 * - {@link SoleOwnership}: one process on its own store (SQLite, or a test): it leads from start to stop.
 * - `LeaderLease` (./lease.ts): replicas on one PostgreSQL database elect one leader with a lease row and
 *   a fencing token; each term runs the work on a store view fenced by that term's token.
 *
 * A process that must never lead (a worker of a cluster whose primary runs the work) uses
 * {@link NeverLeads}.
 */
import type { Store } from "../store";

/** One term of leadership: the fencing token and the store the term's work must write through. */
export interface Term {
  /** Fencing token of this term (grows with every new term on the database; 1 for a sole owner). */
  token: number;
  /** The store for this term's work: every write through it is refused once the term is over. */
  store: Store;
}

/** What a term's work hands back: stopped (and awaited) when the term ends. */
export interface RunningWork {
  stop(): Promise<void>;
}

/** Starts the background work for one term. */
export type LeadWork = (term: Term) => Promise<RunningWork>;

/** Who leads, for `GET /core/health` (`leadership`) and the logs. */
export interface LeadershipView {
  /** `sole`: nothing to elect; `leader` / `follower`: this replica's role now; `never`: never leads. */
  role: "sole" | "leader" | "follower" | "never";
  /** This replica's id. */
  self: string;
  /** The current leader's id as last seen (null: none known, e.g. the lease expired and nobody took it). */
  leader: string | null;
  /** Fencing token of the current term as last seen (null: none). */
  token: number | null;
  /** Unix ms (database clock) when the current term's lease expires unless renewed (null: no lease). */
  expiresAt: number | null;
}

export interface BackgroundOwnership {
  /** This replica's id (unique per process start). */
  readonly self: string;
  /** Whether this process leads now (its term has not ended, as far as it knows). */
  isLeader(): boolean;
  /** The current term's token while leading, else null. */
  token(): number | null;
  view(): LeadershipView;
  /** Begins: runs `work` for every term this process holds until {@link stop}. */
  start(work: LeadWork): Promise<void>;
  /** Ends the current term (its work stopped first) and gives the lease up for others to take at once. */
  stop(): Promise<void>;
}

/** A single process on its own store: it leads from `start` to `stop`, token 1, its store unfenced. */
export class SoleOwnership implements BackgroundOwnership {
  private running: RunningWork | null = null;
  private leading = false;

  constructor(
    private readonly store: Store,
    readonly self = "sole",
  ) {}

  isLeader(): boolean {
    return this.leading;
  }

  token(): number | null {
    return this.leading ? 1 : null;
  }

  view(): LeadershipView {
    return { role: "sole", self: this.self, leader: this.self, token: 1, expiresAt: null };
  }

  async start(work: LeadWork): Promise<void> {
    this.leading = true;
    this.running = await work({ token: 1, store: this.store });
  }

  async stop(): Promise<void> {
    const running = this.running;
    this.running = null;
    this.leading = false;
    await running?.stop();
  }
}

/** A process that serves the API only (a worker whose primary runs the background work). */
export class NeverLeads implements BackgroundOwnership {
  constructor(readonly self = "worker") {}

  isLeader(): boolean {
    return false;
  }

  token(): number | null {
    return null;
  }

  view(): LeadershipView {
    return { role: "never", self: this.self, leader: null, token: null, expiresAt: null };
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {}
}
