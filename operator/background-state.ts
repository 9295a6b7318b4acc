/**
 * What Core's HTTP processes need to know of the background work when it runs in another process
 * (`SURETY_WORKERS` > 1, docs/architecture.md "Processes"): every piece of it comes from the store,
 * never from this process's memory.
 *
 * | State | Written by (background process) | Read by (HTTP workers) |
 * | --- | --- | --- |
 * | chain time (`ChainClock`) | the indexer's cursor (`chain_cursor`), in the indexer's own transactions | {@link BackgroundStateMirror}: `getChainCursor()` |
 * | whether the books follow the chain (`ChainSyncMonitor`: issuance gate, health, metrics) | {@link BackgroundStatePublisher}, after every indexer tick | the mirror: `operator_state` key {@link BACKGROUND_STATE_KEY} |
 * | the Vault's timings (`ProtocolTimings`: V2 deadline cap, public params) | the publisher (loaded at startup, followed by the indexer) | the mirror, same key |
 * | whether clearing commits can be sent (`CommitBondGate`: issuance gate, health) | the publisher (the scheduler's last bond-floor verdict) | the mirror, same key; older than `SURETY_INDEXER_MAX_STALE_SECONDS` (by `publishedAt`) or missing reads `unknown` (issuance refused), never `ok` |
 *
 * The mirror refreshes every `intervalMs` (Core's poll interval). A worker therefore sees a change at
 * most one interval after the background process wrote it; chain time lagging that much more only
 * delays decisions (operator/clock.ts), and the issuance gate judges staleness on the worker's own
 * wall clock, so a background process that stops publishing turns every worker's verdict `stale`
 * (issuance refused) after `SURETY_INDEXER_MAX_STALE_SECONDS`, exactly as a stopped indexer does.
 */
import type { ChainSyncMonitor, ChainSyncSnapshot } from "./chain/sync-status";
import type { CommitBondGate, CommitBondSnapshot } from "./clearing/bond-floor";
import {
  type CommitDeadlineGate,
  type CommitDeadlineSnapshot,
  parseCommitDeadlineSnapshot,
} from "./clearing/commit-deadline";
import { parseScheduledTimings, type ProtocolTimings, type ScheduledTimings } from "./chain/timings";
import type { VaultTimings } from "./chain/handlers";
import { ChainClock, type Clock, systemClock } from "./clock";
import type { Logger } from "./logger";
import type { StoreAreas } from "./store";

/** `operator_state` key of the published state. */
export const BACKGROUND_STATE_KEY = "background_state";

/** The published document (JSON in `operator_state`). */
export interface BackgroundState {
  chainSync: ChainSyncSnapshot;
  timings: VaultTimings | null;
  /** Timings changes scheduled on the Vault and not yet executed or cancelled (the V2 deadline cap counts them). */
  scheduledTimings: ScheduledTimings[];
  /** The scheduler's bond-floor verdict (null from a version that published none: read as `unknown`). */
  commitBond: CommitBondSnapshot | null;
  /** The scheduler's commit-deadline verdict (null from a version that published none: `off`). */
  commitDeadline: CommitDeadlineSnapshot | null;
  /** Wall-clock unix seconds of the publication (null from a version that published none). */
  publishedAt: number | null;
}

const COMMIT_BOND_SNAPSHOT_STATES: ReadonlySet<unknown> = new Set(["off", "ok", "short"]);

/** A published commit-bond verdict, or null when absent or malformed. */
export function parseCommitBondSnapshot(value: unknown): CommitBondSnapshot | null {
  if (typeof value !== "object" || value === null) return null;
  const v = value as Partial<CommitBondSnapshot>;
  if (!COMMIT_BOND_SNAPSHOT_STATES.has(v.state) || !Array.isArray(v.assets)) return null;
  return value as CommitBondSnapshot;
}

/** Parses a published document; null for none or one this version cannot read (then the worker stays `starting`/stale). */
export function parseBackgroundState(raw: string | null): BackgroundState | null {
  if (raw === null) return null;
  try {
    const value = JSON.parse(raw) as Partial<BackgroundState>;
    if (typeof value !== "object" || value === null || typeof value.chainSync !== "object") return null;
    return {
      chainSync: value.chainSync as ChainSyncSnapshot,
      timings: value.timings ?? null,
      scheduledTimings: parseScheduledTimings(value.scheduledTimings),
      commitBond: parseCommitBondSnapshot(value.commitBond),
      commitDeadline: parseCommitDeadlineSnapshot(value.commitDeadline),
      publishedAt: typeof value.publishedAt === "number" ? value.publishedAt : null,
    };
  } catch {
    return null;
  }
}

/** In the background process: writes the state after every indexer tick (a background task of its own). */
export class BackgroundStatePublisher {
  constructor(
    private readonly deps: {
      store: StoreAreas<"chainJournal" | "operatorState">;
      chainSync: ChainSyncMonitor;
      timings: ProtocolTimings;
      commitBond: CommitBondGate;
      commitDeadline?: CommitDeadlineGate;
      /** Wall clock of `publishedAt` (default: the system clock). */
      wallClock?: Clock;
    },
  ) {}

  async tick(): Promise<void> {
    const state: BackgroundState = {
      chainSync: this.deps.chainSync.snapshot(),
      timings: this.deps.timings.get(),
      scheduledTimings: this.deps.timings.scheduled(),
      commitBond: this.deps.commitBond.snapshot(),
      commitDeadline: this.deps.commitDeadline?.snapshot() ?? null,
      publishedAt: (this.deps.wallClock ?? systemClock).nowSeconds(),
    };
    await this.deps.store.operatorState.setOperatorState(BACKGROUND_STATE_KEY, JSON.stringify(state));
  }
}

export interface BackgroundStateMirrorDeps {
  store: StoreAreas<"chainJournal" | "operatorState">;
  chainSync: ChainSyncMonitor;
  /** Only a {@link ChainClock} is fed (an injected test clock is left alone). */
  chainClock: Clock;
  timings: ProtocolTimings;
  commitBond: CommitBondGate;
  commitDeadline?: CommitDeadlineGate;
  logger: Logger;
  /** How often to read the store (Core's poll interval). */
  intervalMs: number;
}

/** In an HTTP worker: keeps this process's chain clock, chain-sync verdict and timings equal to the store's. */
export class BackgroundStateMirror {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private failing = false;

  constructor(private readonly deps: BackgroundStateMirrorDeps) {}

  /** Reads the store once now. */
  async refresh(): Promise<void> {
    const { store, chainSync, chainClock, timings, commitBond, commitDeadline } = this.deps;
    const [cursor, raw] = await Promise.all([
      store.chainJournal.getChainCursor(),
      store.operatorState.getOperatorState(BACKGROUND_STATE_KEY),
    ]);
    const state = parseBackgroundState(raw);
    if (chainClock instanceof ChainClock) chainClock.observe(cursor);
    if (state?.timings) timings.set(state.timings);
    if (state) timings.setScheduled(state.scheduledTimings);
    chainSync.mirror(state?.chainSync ?? null);
    // Judged on this worker's wall clock against the same bound as the chain sync's staleness.
    commitBond.mirror(
      state?.commitBond ?? null,
      state?.publishedAt ?? null,
      chainSync.limits.maxStaleSeconds,
    );
    commitDeadline?.mirror(
      state?.commitDeadline ?? null,
      state?.publishedAt ?? null,
      chainSync.limits.maxStaleSeconds,
    );
  }

  /** Refreshes every interval until {@link stop}; a failed read is logged once and retried (the verdict ages meanwhile). */
  start(): void {
    const { intervalMs, logger } = this.deps;
    const schedule = () => {
      this.timer = setTimeout(() => {
        this.running = this.refresh().then(
          () => {
            if (this.failing) logger.info("background state readable again");
            this.failing = false;
          },
          (error: unknown) => {
            if (!this.failing)
              logger.error({ err: error }, "cannot read the background state from the store");
            this.failing = true;
          },
        );
        void this.running.finally(() => {
          if (this.timer !== undefined) schedule();
        });
      }, intervalMs);
      this.timer.unref();
    };
    schedule();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
