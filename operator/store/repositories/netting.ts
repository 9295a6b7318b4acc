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
  /** Guarantees assigned to the cycle (self-payments included). */
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
export type CycleLeafRow =
  | { leafHash: Buffer }
  | {
      leafHash: null;
      /** Lower case, as stored. */
      guaranteeId: string;
      user: string;
      recipient: string;
      asset: string;
      amount: bigint;
      /** The payer's signature, 0x hex. */
      signature: string;
    };

/** What one pass over a cycle's guarantees gives (see {@link CycleNettingRepository.scanCycle}). */
export interface CycleScan extends CycleAggregates {
  /** As {@link CycleNettingRepository.listCycleNettedV2Ids}. */
  nettedV2Ids: string[];
}

export interface CycleNettingRepository {
  /**
   * Assigns up to `limit` (default: all) of the oldest payable guarantees — FINALIZED_PAYABLE, no cycle,
   * not excluded — to `cycleId` in one statement; returns how many. A reservation the cycle is then
   * netted from (by `cycle_id`), so a guarantee that becomes payable meanwhile is never assigned without
   * being netted. Undone by {@link releaseCycleGuarantees}.
   */
  reservePayableGuarantees(cycleId: number, limit?: number): Promise<number>;
  /** Unassigns every guarantee of `cycleId` (a plan dropped or never stored); returns how many. */
  releaseCycleGuarantees(cycleId: number): Promise<number>;
  /** How many guarantees are assigned to `cycleId` (an index count). */
  countCycleGuarantees(cycleId: number): Promise<number>;
  /**
   * Net flows per (asset, participant) and volumes per asset of the cycle's guarantees, summed in the
   * database (PostgreSQL in SQL; SQLite in one pass over its covering cycle index, exactly, in JS).
   */
  aggregateCycleGuarantees(cycleId: number): Promise<CycleAggregates>;
  /** The cycle's V2 guarantee ids that are not self-payments (commitCycle's `nettedV2Ids`), lower case, sorted. */
  listCycleNettedV2Ids(cycleId: number): Promise<string[]>;
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
