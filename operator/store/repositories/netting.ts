/**
 * Clearing in the database (docs/clearing.md "Netting in the database"): the scheduler reserves the payable
 * guarantees for a cycle id, then nets them where they are stored, so Core's memory grows with the
 * participants and assets of a cycle, not with its guarantees. Each guarantee's leaf in the guarantees
 * root (keccak256, which SQL lacks) is computed once when the guarantee is stored (`leaf_hash`); the
 * plan streams those hashes through a callback.
 */

/** What one participant received and paid in one asset within a cycle (self-payments left out). */
export interface CycleFlow {
  /** EIP-55, as stored. */
  asset: string;
  /** EIP-55, as stored. */
  participant: string;
  received: bigint;
  paid: bigint;
}

/** One asset's volume in a cycle, self-payments included. */
export interface CycleAssetVolume {
  asset: string;
  guaranteeCount: number;
  grossAmount: bigint;
}

/** The aggregates a cycle is netted from: O(participants × assets) rows, whatever the guarantee count. */
export interface CycleAggregates {
  /** Guarantees the cycle reserved (self-payments included). */
  guaranteeCount: number;
  /** Sorted by lower-case asset. */
  assets: CycleAssetVolume[];
  /** Every (asset, participant) with a non-self-payment; any order. */
  flows: CycleFlow[];
}

/**
 * A guarantee of a cycle as its guarantees-root leaf needs it (sdk/guarantee-tree.ts): the leaf hash
 * stored at issuance, or — for a guarantee stored before the `leaf_hash` column existed, or with a field
 * that could not be hashed then — the fields to hash it from.
 */
export type CycleLeafRow = CycleLeafFields &
  ({ leafHash: Buffer } | { leafHash: null; /** The payer's signature, 0x hex. */ signature: string });

/** The fields of a cycle's guarantee every scan hands on (the debtors' sum trees group by them). */
export interface CycleLeafFields {
  /** Lower case, as stored. */
  guaranteeId: string;
  user: string;
  recipient: string;
  asset: string;
  amount: bigint;
}

/** What one pass over a cycle's guarantees gives (see {@link CycleNettingRepository.scanCycle}). */
export interface CycleScan extends CycleAggregates {
  /** As {@link CycleNettingRepository.listCycleNettedV2Ids}. */
  nettedV2Ids: string[];
}

/**
 * A cycle's guarantees from reservation to commit: a range of payable keys (docs/clearing.md "Netting in the
 * database"). Each guarantee takes a fresh key from a counter whenever it enters the payable pool
 * (FINALIZED_PAYABLE, no cycle, not excluded: stored payable, finalized, returned to the pool by a veto, a
 * dropped plan or a rewind); a reservation records the range (after, upto] of the oldest keys (one row,
 * whatever the guarantee count), and every read below is over that range of the pool. `cycle_id` is written
 * on each guarantee when the commit is indexed (with its state), not when it is reserved. On PostgreSQL a
 * key is (inserting-or-updating transaction id, sequence number) and a range ends below every transaction
 * still in flight (`pg_snapshot_xmin`), so a guarantee that becomes payable later always gets a key after
 * it, whatever order transactions commit in.
 */
export interface CycleNettingRepository {
  /**
   * Reserves the `limit` (default: all) oldest keys of the pool after every other reserved range for
   * `cycleId` (replacing a reservation of its own); returns how many guarantees that is (0: nothing
   * reserved). A guarantee that becomes payable meanwhile gets a later key, so it is never netted in this
   * cycle without being in its range. Undone by {@link releaseCycleGuarantees}.
   */
  reservePayableGuarantees(cycleId: number, limit?: number): Promise<number>;
  /**
   * Drops `cycleId`'s reservation (its guarantees stay in the pool: fresh keys when a later range exists),
   * and returns to the pool any guarantee assigned to it by `cycle_id` (a reservation made before key
   * ranges); returns how many guarantees that was. Only for a cycle not committed.
   */
  releaseCycleGuarantees(cycleId: number): Promise<number>;
  /** Whether a guarantee of the pool lies after every reserved range (the next cycle has work). */
  hasUnreservedPayable(): Promise<boolean>;
  /**
   * How many guarantees of the pool lie after every reserved range (what the next cycle would take),
   * counted up to `limit` (an index walk of at most `limit` keys): the clearing deadline gate's load figure.
   */
  countUnreservedPayable(limit: number): Promise<number>;
  /** How many guarantees `cycleId` reserved (an index count over its range). */
  countCycleGuarantees(cycleId: number): Promise<number>;
  /**
   * Net flows per (asset, participant) and volumes per asset of the cycle's guarantees, summed in the
   * database (PostgreSQL in SQL; SQLite in one pass over its covering cycle index, exactly, in JS).
   */
  aggregateCycleGuarantees(cycleId: number): Promise<CycleAggregates>;
  /** The cycle's V2 guarantee ids that are not self-payments (commitCycle's `nettedV2Ids`), lower case, sorted. */
  listCycleNettedV2Ids(cycleId: number): Promise<string[]>;
  /** The ids among `guaranteeIds` (lower case, as stored) that `cycleId` reserved; any order. */
  listCycleGuaranteesAmong(cycleId: number, guaranteeIds: readonly string[]): Promise<string[]>;
  /** Every guarantee id of the cycle, lower case, oldest first. */
  listCycleGuaranteeIds(cycleId: number): Promise<string[]>;
  /**
   * Calls `visit` once per guarantee of the cycle (any order; rows are streamed, never all held) and
   * returns how many. `visit` is synchronous; if it throws, the scan stops and the error propagates.
   */
  scanCycleLeaves(cycleId: number, visit: (row: CycleLeafRow) => void): Promise<number>;
  /**
   * Everything a cycle's plan reads, in as few passes as the backend allows: the aggregates, the netted
   * V2 ids and one `visit` per guarantee (as {@link scanCycleLeaves}), all from one snapshot of the
   * cycle. SQLite reads the covering cycle index once and sums in JS; PostgreSQL sums in SQL and streams
   * the leaf hashes with cursors.
   */
  scanCycle(cycleId: number, visit: (row: CycleLeafRow) => void): Promise<CycleScan>;
}
