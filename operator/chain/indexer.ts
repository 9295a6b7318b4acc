/**
 * Chain indexer (docs/operator-async.md): follows the Vault, ClearingHouse and ValidationRegistry logs
 * from a persisted cursor, `confirmations` blocks behind the head. Each batch (its logs and the cursor
 * advance) is applied in ONE store transaction; every log is journaled by (tx hash, log index) with the
 * inverse of what it changed, so applying is idempotent and a reorg is rewound exactly:
 *
 *   tick(): 1. is the cursor's block hash still canonical? if not, find the newest recorded block that
 *              is, undo every journaled event above it (newest first) and move the cursor back there;
 *           2. fetch logs of (cursor, min(head − confirmations, cursor + maxBlocksPerTick)];
 *           3. apply them in (block, log index) order + advance the cursor, in one transaction.
 *
 * A restart resumes from the stored cursor; nothing is lost (the cursor moves only with the effects)
 * and nothing is applied twice (the cursor and the journal both say what was applied).
 */
import type { Block, Log } from "ethers";
import type { ChainProvider } from "./provider";
import type { Clock } from "../clock";
import type { DeploymentInfo } from "../deployment";
import type { Logger } from "../logger";
import type { ChainCursor, StoreAreas } from "../store";
import { GuaranteeTransitions, type TransitionRefusals } from "../guarantees/transitions";
import { applyEvent } from "./events";
import type { ApplyContext, VaultTimings } from "./handlers";
import { EventDecoder, jsonArgs, type TypedChainEvent } from "./typed-events";
import { applyUndo, type JournalArea, JournaledTx, type UndoOp } from "./journal";
import type { ChainSyncMonitor } from "./sync-status";
import { ChainWebhooks } from "../webhooks/events";
import { ReorgTooDeepError } from "./reorg-error";

export { ReorgTooDeepError };

/**
 * History kept below the cursor: recorded block hashes and the journal of applied events (with their
 * undo). A reorg up to this deep is rewound exactly; older journal entries are pruned as the cursor
 * advances, so the journal does not grow with the chain.
 */
export const REORG_HISTORY_BLOCKS = 10_000;
/**
 * Operator-state key: journal entries below this block have been pruned. A rewind below it would have
 * to undo events it no longer knows, and then apply them again: it is refused instead.
 */
export const JOURNAL_PRUNED_BELOW_KEY = "indexer.journal_pruned_below";
/** Recorded blocks examined per page while looking for the common ancestor of a reorg. */
const ANCESTOR_PAGE = 64;

export type { ChainProvider } from "./provider";

export interface ChainIndexerOptions {
  store: StoreAreas<JournalArea>;
  provider: ChainProvider;
  deployment: Pick<
    DeploymentInfo,
    "chainId" | "vault" | "clearingHouse" | "validationRegistry" | "vaultDeployBlock"
  >;
  clock: Clock;
  logger: Logger;
  /** Blocks a log must be buried under before it is applied (0: apply at the head). */
  confirmations: number;
  /** Largest block range fetched and applied per tick. */
  maxBlocksPerTick: number;
  onTimings?: (timings: VaultTimings) => void;
  onTimingsScheduled?: ApplyContext["onTimingsScheduled"];
  onOperationCancelled?: ApplyContext["onOperationCancelled"];
  /** Told the cursor after every completed tick (Core's chain clock follows it: operator/clock.ts). */
  onCursor?: (cursor: ChainCursor | null) => void;
  /** Told the outcome of every tick: health, the issuance gate and metrics read it (sync-status.ts). */
  syncStatus?: ChainSyncMonitor;
  /** Counts the guarantee moves the transition table refuses (CoreMetrics). */
  transitionRefusals?: TransitionRefusals;
  /** Counts credit disputes opened and ended (CoreMetrics). */
  creditDisputes?: ApplyContext["creditDisputes"];
}

export interface IndexerTickResult {
  /** Set when a reorg was detected: the block the cursor was rewound to (−1: before the first block). */
  rewoundTo: number | null;
  /** Events undone by the rewind. */
  undone: number;
  /** Block range applied this tick (null when the cursor was already at the confirmed head). */
  range: { from: number; to: number } | null;
  applied: number;
  /** Logs already in the journal (a retried batch). */
  skipped: number;
  cursor: ChainCursor | null;
  /** The head block number read this tick. */
  head: number;
}

/** A log's block disagrees with the header fetched for it: the chain moved while we read it. */
export class ChainMovedError extends Error {
  override readonly name = "ChainMovedError";
}

export class ChainIndexer {
  private readonly decoder: EventDecoder;
  private readonly applyContext: ApplyContext;
  private running: Promise<IndexerTickResult> | null = null;

  constructor(private readonly options: ChainIndexerOptions) {
    if (!Number.isSafeInteger(options.confirmations) || options.confirmations < 0) {
      throw new RangeError("confirmations must be a non-negative integer");
    }
    if (!Number.isSafeInteger(options.maxBlocksPerTick) || options.maxBlocksPerTick < 1) {
      throw new RangeError("maxBlocksPerTick must be a positive integer");
    }
    this.decoder = new EventDecoder(options.deployment);
    this.applyContext = {
      logger: options.logger,
      transitions: new GuaranteeTransitions({ logger: options.logger, refusals: options.transitionRefusals }),
      onTimings: options.onTimings,
      onTimingsScheduled: options.onTimingsScheduled,
      onOperationCancelled: options.onOperationCancelled,
      creditDisputes: options.creditDisputes,
      webhooks: new ChainWebhooks(
        { chainId: options.deployment.chainId, vault: options.deployment.vault },
        options.confirmations,
      ),
    };
    options.syncStatus?.indexerStarted();
  }

  /** First block worth reading: the Vault's deployment block. */
  get startBlock(): number {
    return this.options.deployment.vaultDeployBlock;
  }

  /** One step; concurrent calls share the running step (ticks never overlap). */
  tick(): Promise<IndexerTickResult> {
    this.running ??= this.step()
      .then(
        (result) => {
          this.options.onCursor?.(result.cursor);
          this.options.syncStatus?.tickSucceeded({
            head: result.head,
            confirmations: this.options.confirmations,
            cursorBlock: result.cursor?.blockNumber ?? this.startBlock - 1,
          });
          return result;
        },
        (error: unknown) => this.reportFailure(error),
      )
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  /** Tells the sync monitor about a failed tick (with the head, when the node answers), then rethrows. */
  private async reportFailure(error: unknown): Promise<never> {
    const { syncStatus, provider, store, confirmations } = this.options;
    if (syncStatus) {
      // Best effort: the lag is worth showing while failing, but a second failure must not hide the first.
      const [head, cursor] = await Promise.all([
        provider.getBlockNumber().catch(() => null),
        store.chainJournal.getChainCursor().catch(() => undefined),
      ]);
      syncStatus.tickFailed(error, {
        head,
        confirmations,
        cursorBlock: cursor === undefined ? null : (cursor?.blockNumber ?? this.startBlock - 1),
      });
    }
    throw error;
  }

  /** Ticks until the cursor reaches the confirmed head (tests, catch-up at startup). */
  async syncToHead(maxTicks = 1_000): Promise<ChainCursor | null> {
    for (let i = 0; i < maxTicks; i++) {
      const result = await this.tick();
      if (result.range === null && result.rewoundTo === null) return result.cursor;
    }
    throw new Error(`indexer did not reach the head within ${maxTicks} ticks`);
  }

  private async step(): Promise<IndexerTickResult> {
    const { store, provider, confirmations, maxBlocksPerTick } = this.options;
    const result: IndexerTickResult = {
      rewoundTo: null,
      undone: 0,
      range: null,
      applied: 0,
      skipped: 0,
      cursor: await store.chainJournal.getChainCursor(),
      head: -1,
    };
    if (result.cursor) {
      const canonical = await provider.getBlock(result.cursor.blockNumber);
      if (!canonical || canonical.hash?.toLowerCase() !== result.cursor.blockHash.toLowerCase()) {
        const { ancestor, undone } = await this.rewind(result.cursor);
        result.rewoundTo = ancestor ? ancestor.blockNumber : this.startBlock - 1;
        result.undone = undone;
        result.cursor = ancestor;
      }
    }

    const head = await provider.getBlockNumber();
    result.head = head;
    const confirmed = head - confirmations;
    const from = result.cursor ? result.cursor.blockNumber + 1 : this.startBlock;
    if (confirmed < from) return result;
    const to = Math.min(confirmed, from + maxBlocksPerTick - 1);

    const logs = await provider.getLogs({ address: this.decoder.addresses, fromBlock: from, toBlock: to });
    const headers = await this.headers(to, logs);
    const events: TypedChainEvent[] = [];
    for (const log of [...logs].sort((x, y) => x.blockNumber - y.blockNumber || x.index - y.index)) {
      if (log.removed) continue;
      const header = headers.get(log.blockNumber);
      if (!header || header.hash?.toLowerCase() !== log.blockHash.toLowerCase()) {
        throw new ChainMovedError(`block ${log.blockNumber} changed while its logs were read; retry`);
      }
      const event = this.decoder.decode(log, header.timestamp);
      if (event) events.push(event);
    }
    const end = headers.get(to)!;
    const cursor: ChainCursor = { blockNumber: to, blockHash: end.hash!, blockTimestamp: end.timestamp };
    const now = this.options.clock.nowSeconds();

    await store.transaction(async (tx) => {
      for (const event of events) {
        if (await tx.chainJournal.getChainEvent(event.txHash, event.logIndex)) {
          result.skipped++;
          continue;
        }
        const journal = new JournaledTx(tx, now);
        await applyEvent(journal, event, this.applyContext);
        await tx.chainJournal.insertChainEvent({
          txHash: event.txHash,
          logIndex: event.logIndex,
          blockNumber: event.blockNumber,
          blockHash: event.blockHash,
          blockTimestamp: event.blockTimestamp,
          contract: event.contract,
          name: event.name,
          args: jsonArgs(event.plainArgs),
          undo: journal.undo,
          appliedAt: now,
        });
        result.applied++;
      }
      for (const header of headers.values()) {
        await tx.chainJournal.recordChainBlock({
          blockNumber: header.number,
          blockHash: header.hash!,
          blockTimestamp: header.timestamp,
        });
      }
      const pruneBelow = to - REORG_HISTORY_BLOCKS;
      await tx.chainJournal.deleteChainBlocks(Number.MAX_SAFE_INTEGER, pruneBelow);
      if ((await tx.chainJournal.deleteChainEventsBelow(pruneBelow)) > 0) {
        await tx.operatorState.setOperatorState(JOURNAL_PRUNED_BELOW_KEY, String(pruneBelow));
      }
      await tx.chainJournal.setChainCursor(cursor, now);
    });
    result.range = { from, to };
    result.cursor = cursor;
    if (result.applied > 0) {
      this.options.logger.debug({ from, to, applied: result.applied }, "indexer applied chain events");
    }
    return result;
  }

  /** Headers of the batch's last block and of every block with a log, by number. */
  private async headers(to: number, logs: readonly Log[]): Promise<Map<number, Block>> {
    const numbers = new Set<number>([to, ...logs.map((log) => log.blockNumber)]);
    const headers = new Map<number, Block>();
    for (const n of numbers) {
      const block = await this.options.provider.getBlock(n);
      if (!block || !block.hash) throw new ChainMovedError(`block ${n} is not available; retry`);
      headers.set(n, block);
    }
    return headers;
  }

  /**
   * The cursor's block is no longer canonical: find the newest recorded block that still is, undo
   * everything applied above it and move the cursor there (null: before the first block).
   */
  private async rewind(cursor: ChainCursor): Promise<{ ancestor: ChainCursor | null; undone: number }> {
    const { store, provider, logger } = this.options;
    let ancestor: ChainCursor | null = null;
    let below = cursor.blockNumber;
    search: while (below >= 0) {
      const page = await store.chainJournal.listChainBlocks(below, ANCESTOR_PAGE);
      if (page.length === 0) break;
      for (const block of page) {
        const canonical = await provider.getBlock(block.blockNumber);
        if (canonical?.hash?.toLowerCase() === block.blockHash.toLowerCase()) {
          ancestor = block;
          break search;
        }
      }
      below = page[page.length - 1].blockNumber - 1;
    }
    const floor = ancestor ? ancestor.blockNumber : -1;
    const prunedBelow = Number((await store.operatorState.getOperatorState(JOURNAL_PRUNED_BELOW_KEY)) ?? -1);
    if (floor < prunedBelow) {
      // Not logged here: this repeats every tick; the background loop and the sync monitor log it once.
      throw new ReorgTooDeepError(
        `chain reorganised below the kept history: the cursor's block ${cursor.blockNumber} is gone, the ` +
          `newest canonical recorded block is ${ancestor ? ancestor.blockNumber : "none"}, the journal starts ` +
          `at block ${prunedBelow}; refusing to rewind (restore the store from a snapshot or re-index into a new one)`,
      );
    }
    const now = this.options.clock.nowSeconds();
    const undone = await store.transaction(async (tx) => {
      const events = await tx.chainJournal.listChainEventsAbove(floor);
      for (const event of events) {
        await applyUndo(tx, event.undo as UndoOp[], now);
        await tx.chainJournal.deleteChainEvent(event.txHash, event.logIndex);
      }
      await tx.chainJournal.deleteChainBlocks(floor);
      await tx.chainJournal.setChainCursor(ancestor, now);
      return events.length;
    });
    logger.warn(
      { from_block: cursor.blockNumber, to_block: floor, undone },
      "chain reorganisation: rewound applied events",
    );
    return { ancestor, undone };
  }
}
