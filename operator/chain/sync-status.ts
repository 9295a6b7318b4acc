/**
 * Whether Core's books follow the chain (docs/operator-async.md, "When the books cannot follow the
 * chain"). The indexer reports every tick here; `GET /core/health`, the issuance gate and `/metrics`
 * read the one verdict:
 *
 *   halted    the last tick refused a reorg deeper than the kept history (ReorgTooDeepError): the
 *             books describe a chain that no longer exists until an operator restores the store;
 *   stale     no tick has succeeded for more than `maxStaleSeconds` (RPC down, store failing, a hung
 *             tick, or never since start);
 *   starting  no tick has succeeded yet, within `maxStaleSeconds` of the indexer's start;
 *   lagging   the last tick left the cursor more than `maxLagBlocks` below the confirmed head;
 *   ok        none of these;
 *   off       no indexer reports here (a Core run without background tasks: tests and tools).
 *
 * Staleness is measured on the wall clock given here, never on chain time: a halted or cut-off indexer
 * stops chain time from advancing in Core, which is exactly when staleness must still grow.
 */
import type { Clock } from "../clock";
import type { Logger } from "../logger";
import { ReorgTooDeepError } from "./reorg-error";

export type ChainSyncState = "off" | "starting" | "ok" | "lagging" | "stale" | "halted";

/** Every state, for metrics that export one series per state. */
export const CHAIN_SYNC_STATES: readonly ChainSyncState[] = Object.freeze([
  "off",
  "starting",
  "ok",
  "lagging",
  "stale",
  "halted",
]);

export interface ChainSyncLimits {
  /** Largest confirmed-head − indexed-block distance issuance tolerates. */
  maxLagBlocks: number;
  /** Longest time without a successful indexer tick issuance tolerates. */
  maxStaleSeconds: number;
}

export interface ChainSyncStatus {
  state: ChainSyncState;
  /** Issuance may rely on the books: `ok`, or `off` (no indexer in this process to judge by). */
  ready: boolean;
  /** Latest head block number the indexer read (null before it read one). */
  headBlock: number | null;
  /** The indexer's cursor block (null before the first tick, or before the Vault's first block). */
  indexedBlock: number | null;
  /** Confirmed head − indexed block at the last tick that read the head (≥ 0; null before one). */
  lagBlocks: number | null;
  /** Unix seconds (wall clock) of the last successful tick; null if none. */
  lastSyncedAt: number | null;
  /** Seconds since the last successful tick, or since the indexer started when none succeeded. */
  secondsSinceSync: number | null;
  /** Why the state is not ok, in words (null when ok or off). */
  reason: string | null;
  limits: Readonly<ChainSyncLimits>;
}

/** What the indexer tells the monitor after each tick. */
export interface IndexerTickReport {
  /** Head block number read this tick (null when the tick failed before reading it). */
  head: number | null;
  confirmations: number;
  /** Cursor block after the tick (null: nothing indexed yet, the cursor is before the first block). */
  cursorBlock: number | null;
}

/**
 * What a monitor's verdict is computed from, as plain JSON: the background process writes it to the
 * store and Core's HTTP workers mirror it (operator/background-state.ts), each judging staleness on
 * its own wall clock, so a background process that stops writing makes the workers' verdict stale.
 * A follower replica adopts the leader's published snapshot the same way (operator/leadership/replica-state.ts).
 */
export interface ChainSyncSnapshot {
  attachedAt: number | null;
  lastSyncedAt: number | null;
  headBlock: number | null;
  indexedBlock: number | null;
  confirmations: number;
  halt: string | null;
  lastError: string | null;
}

export interface ChainSyncMonitorOptions {
  limits: ChainSyncLimits;
  /** Wall clock for staleness (see the module comment). */
  clock: Clock;
  logger: Logger;
}

export class ChainSyncMonitor {
  private attachedAt: number | null = null;
  private lastSyncedAt: number | null = null;
  private headBlock: number | null = null;
  private indexedBlock: number | null = null;
  private confirmations = 0;
  private halt: string | null = null;
  private lastError: string | null = null;
  /** The state last logged: each change is logged once, never every tick. */
  private loggedState: ChainSyncState = "off";

  constructor(private readonly options: ChainSyncMonitorOptions) {
    const { maxLagBlocks, maxStaleSeconds } = options.limits;
    if (!Number.isSafeInteger(maxLagBlocks) || maxLagBlocks < 0) {
      throw new RangeError("maxLagBlocks must be a non-negative integer");
    }
    if (!Number.isSafeInteger(maxStaleSeconds) || maxStaleSeconds < 1) {
      throw new RangeError("maxStaleSeconds must be a positive integer");
    }
  }

  get limits(): Readonly<ChainSyncLimits> {
    return this.options.limits;
  }

  /** An indexer now reports here: from now on its ticks decide (state `starting` until the first). */
  indexerStarted(): void {
    this.attachedAt ??= this.options.clock.nowSeconds();
    this.status();
  }

  /** A tick completed: clears a halt (the chain came back, or the store was restored). */
  tickSucceeded(report: IndexerTickReport): void {
    this.indexerStarted();
    this.lastSyncedAt = this.options.clock.nowSeconds();
    this.halt = null;
    this.lastError = null;
    this.observe(report);
    this.status();
  }

  /** A tick failed. A deep reorg halts; anything else only ages the last success (stale in time). */
  tickFailed(error: unknown, report: IndexerTickReport): void {
    this.indexerStarted();
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof ReorgTooDeepError) this.halt = message;
    else this.lastError = message;
    this.observe(report);
    this.status();
  }

  /** The verdict's inputs (see {@link ChainSyncSnapshot}), for other processes and replicas. */
  snapshot(): ChainSyncSnapshot {
    return {
      attachedAt: this.attachedAt,
      lastSyncedAt: this.lastSyncedAt,
      headBlock: this.headBlock,
      indexedBlock: this.indexedBlock,
      confirmations: this.confirmations,
      halt: this.halt,
      lastError: this.lastError,
    };
  }

  /**
   * Takes over the inputs of the monitor the indexer reports to in another process. An indexer
   * runs somewhere, so this monitor is never `off`: until the other process has started one, it is
   * `starting` from the time of the first call here.
   */
  mirror(snapshot: ChainSyncSnapshot | null): void {
    this.indexerStarted();
    if (snapshot !== null) this.adopt({ ...snapshot, attachedAt: snapshot.attachedAt ?? this.attachedAt });
    this.status();
  }

  /**
   * Judges by another replica's indexer: adopts the leader's published snapshot, so this monitor says what
   * the leader's says (`off` where the leader runs no indexer). Staleness is measured from the leader's last
   * successful tick on this replica's wall clock, so a dead leader makes every follower `stale` (and refuse
   * issuance) until a new leader's indexer ticks.
   */
  follow(snapshot: ChainSyncSnapshot): void {
    this.adopt(snapshot);
    this.status();
  }

  /** Takes every input of the verdict from `snapshot` (mirror of another process, or the leader's view). */
  private adopt(snapshot: ChainSyncSnapshot): void {
    this.attachedAt = snapshot.attachedAt;
    this.lastSyncedAt = snapshot.lastSyncedAt;
    this.headBlock = snapshot.headBlock;
    this.indexedBlock = snapshot.indexedBlock;
    this.confirmations = snapshot.confirmations;
    this.halt = snapshot.halt;
    this.lastError = snapshot.lastError;
  }

  private observe(report: IndexerTickReport): void {
    this.confirmations = report.confirmations;
    if (report.head !== null) this.headBlock = report.head;
    if (report.cursorBlock !== null) this.indexedBlock = report.cursorBlock;
  }

  /** The verdict now (cheap: no I/O; issuance calls it per request). Logs a change of state once. */
  status(): ChainSyncStatus {
    const { limits, clock } = this.options;
    const now = clock.nowSeconds();
    const lagBlocks =
      this.headBlock === null
        ? null
        : Math.max(0, this.headBlock - this.confirmations - (this.indexedBlock ?? this.headBlock));
    const since = this.lastSyncedAt ?? this.attachedAt;
    const secondsSinceSync = since === null ? null : Math.max(0, now - since);
    let state: ChainSyncState;
    let reason: string | null = null;
    if (this.attachedAt === null) {
      state = "off";
    } else if (this.halt !== null) {
      state = "halted";
      reason = `the indexer halted: ${this.halt}`;
    } else if (secondsSinceSync !== null && secondsSinceSync > limits.maxStaleSeconds) {
      state = "stale";
      reason =
        (this.lastSyncedAt === null
          ? `no indexer tick has succeeded in the ${secondsSinceSync} s since it started`
          : `the last successful indexer tick was ${secondsSinceSync} s ago`) +
        ` (bound ${limits.maxStaleSeconds} s)` +
        (this.lastError === null ? "" : `; last error: ${this.lastError}`);
    } else if (this.lastSyncedAt === null) {
      state = "starting";
      reason = "the indexer has not completed its first tick";
    } else if (lagBlocks !== null && lagBlocks > limits.maxLagBlocks) {
      state = "lagging";
      reason = `the books are ${lagBlocks} blocks behind the confirmed head (bound ${limits.maxLagBlocks})`;
    } else {
      state = "ok";
    }
    const status: ChainSyncStatus = {
      state,
      ready: state === "ok" || state === "off",
      headBlock: this.headBlock,
      indexedBlock: this.indexedBlock,
      lagBlocks,
      lastSyncedAt: this.lastSyncedAt,
      secondsSinceSync,
      reason,
      limits,
    };
    if (state !== this.loggedState) this.logChange(status);
    return status;
  }

  private logChange(status: ChainSyncStatus): void {
    const { logger } = this.options;
    const previous = this.loggedState;
    this.loggedState = status.state;
    const fields = {
      chain_sync: status.state,
      previous,
      lag_blocks: status.lagBlocks,
      indexed_block: status.indexedBlock,
      head_block: status.headBlock,
    };
    switch (status.state) {
      case "ok":
        if (previous !== "starting") logger.info(fields, "chain sync recovered: issuance resumed");
        return;
      case "starting":
      case "off":
        return;
      case "halted":
        logger.error(fields, `chain sync halted, issuance refused until an operator acts: ${status.reason}`);
        return;
      default:
        logger.warn(fields, `chain sync ${status.state}, issuance refused: ${status.reason}`);
    }
  }
}
