/**
 * Core's time sources. Two clocks exist (docs/operator-async.md, "Which clock"): the wall clock for
 * Core's own rules (nonce expiry, token lifetimes, the claim timestamp window, webhook timing), shared
 * with the facilitator in runtime/clock.ts, and {@link ChainClock}, the time of the head Core has
 * indexed, for every deadline a contract also judges by `block.timestamp`.
 */
import { assertWholeSeconds, type Clock } from "../runtime/clock";

export { type Clock, ManualClock, nowMilliseconds, systemClock } from "../runtime/clock";

/** Core has not indexed any block yet: a chain deadline cannot be judged (yet). */
export class ChainTimeUnavailableError extends Error {
  override readonly name = "ChainTimeUnavailableError";
}

/** The indexed head a {@link ChainClock} reads: the indexer's cursor block. */
export interface IndexedHead {
  blockNumber: number;
  blockTimestamp: number;
}

/**
 * Chain time as Core knows it: the timestamp of the newest block the indexer has applied (already
 * `confirmations` deep). The contracts judge deadlines by `block.timestamp`, and a block mined after
 * the indexed head has a timestamp at least the head's, so a deadline this clock says has passed has
 * passed for the contracts too (never the reverse). It lags the chain by the indexing lag and follows
 * the cursor exactly, also backwards after a reorg (a lower time only delays decisions).
 *
 * Fed by the indexer (`observe` after every tick); seeded from the stored cursor at startup. Until a
 * first block is indexed `nowSeconds()` throws {@link ChainTimeUnavailableError}: callers refuse or
 * wait, never fall back to the wall clock.
 */
export class ChainClock implements Clock {
  private head: IndexedHead | null;

  constructor(head: IndexedHead | null = null) {
    this.head = null;
    this.observe(head);
  }

  /** The indexer applied (or rewound to) `head`; null: nothing indexed. */
  observe(head: IndexedHead | null): void {
    if (head !== null) assertWholeSeconds(head.blockTimestamp);
    this.head = head === null ? null : { blockNumber: head.blockNumber, blockTimestamp: head.blockTimestamp };
  }

  /** The indexed head, or null before the first indexed block. */
  current(): IndexedHead | null {
    return this.head;
  }

  nowSeconds(): number {
    if (this.head === null) {
      throw new ChainTimeUnavailableError(
        "Core has not indexed any block yet, so it cannot judge chain deadlines; retry once the indexer has run",
      );
    }
    return this.head.blockTimestamp;
  }
}

/** Unix seconds → ISO 8601 (the form SIWE messages carry). */
export function isoFromSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}
