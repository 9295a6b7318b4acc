/**
 * The chain indexer's cursor, recorded blocks and journal of applied logs with their inverses
 * (docs/operator-async.md): what a reorg rewind undoes.
 */

export interface ChainCursor {
  /** Last block whose logs are applied. */
  blockNumber: number;
  blockHash: string;
  blockTimestamp: number;
}

export interface ChainBlock {
  blockNumber: number;
  blockHash: string;
  blockTimestamp: number;
}

/** One applied log, with the inverse of what applying it changed (see operator/chain/undo.ts). */
export interface ChainEventRecord {
  txHash: string;
  logIndex: number;
  blockNumber: number;
  blockHash: string;
  blockTimestamp: number;
  /** "Vault" | "ClearingHouse" | "ValidationRegistry". */
  contract: string;
  name: string;
  /** Decoded event arguments (JSON, bigints as decimal strings). */
  args: Record<string, unknown>;
  /** Inverse operations, applied in reverse order on a rewind (JSON). */
  undo: unknown[];
  appliedAt: number;
}

export interface ChainJournalRepository {
  getChainCursor(): Promise<ChainCursor | null>;
  setChainCursor(cursor: ChainCursor | null, now: number): Promise<void>;
  recordChainBlock(block: ChainBlock): Promise<void>;
  /** Recorded blocks at or below `atOrBelow`, newest first. */
  listChainBlocks(atOrBelow: number, limit: number): Promise<ChainBlock[]>;
  /** Deletes recorded blocks above `blockNumber` (rewind) and, when given, below `pruneBelow`. */
  deleteChainBlocks(above: number, pruneBelow?: number): Promise<void>;
  getChainEvent(txHash: string, logIndex: number): Promise<ChainEventRecord | null>;
  insertChainEvent(record: ChainEventRecord): Promise<void>;
  /** Applied events in blocks above `blockNumber`, newest first (the rewind order). */
  listChainEventsAbove(blockNumber: number): Promise<ChainEventRecord[]>;
  /**
   * The journal's events of one kind (e.g. "Vault", "Deposited"), oldest first: what the indexer applied in
   * the blocks it still keeps for a rewind (older ones are pruned; the console's ledger says so).
   */
  listChainEventsNamed(contract: string, name: string): Promise<ChainEventRecord[]>;
  deleteChainEvent(txHash: string, logIndex: number): Promise<void>;
  /** Deletes the journal of events in blocks below `blockNumber` (too old to be rewound); returns how many. */
  deleteChainEventsBelow(blockNumber: number): Promise<number>;
}
