/** Clearing cycles (docs/clearing.md): the planned and committed cycles, their debts and claims. */

export const CYCLE_STATES = ["PLANNED", "SENT", "COMMITTED", "FINALIZED", "VETOED"] as const;
export type CycleState = (typeof CYCLE_STATES)[number];

export interface CycleRecord {
  cycleId: number;
  state: CycleState;
  root: string;
  /** JSON of `StandardMerkleTree.dump()`. */
  treeDump: string;
  /** JSON of the commitCycle arguments (bigints as decimal strings). */
  args: string;
  guaranteeIds: string[];
  /** The cutoff (Core's clock) the cycle closed at. */
  cutoff: number;
  plannedAt: number;
  txHash: string | null;
  txNonce: number | null;
  /** The signed commit transaction, kept so a restart rebroadcasts exactly it (same hash). */
  rawTx: string | null;
  sentAt: number | null;
  committedBlock: number | null;
  committedAt: number | null;
  paymentDeadline: number | null;
  defaultDeadline: number | null;
  finalizedAt: number | null;
  /** Debits can be challenged (and the cycle vetoed) until then (chain time, from `CycleChallengeWindow`). */
  challengeDeadline: number | null;
  /** Challenges can be answered until then. */
  answerDeadline: number | null;
  /** Block time of the guardian's `CycleVetoed`. */
  vetoedAt: number | null;
  /**
   * False for a cycle committed on chain that Core did not plan (the operator key used outside Core): its
   * record is built from the commit's events, it has no net-position tree (`treeDump` "null") and no
   * guarantees of Core's, and the keeper never answers its challenges (docs/clearing.md).
   */
  plannedByCore: boolean;
}

export const DEBT_STATUSES = [
  "OPEN",
  "PAID",
  "COVERED",
  "CHALLENGED",
  "ANSWERED",
  "VOIDED",
  "REFUNDED",
] as const;
export type DebtStatus = (typeof DEBT_STATUSES)[number];

export interface CycleDebtRecord {
  cycleId: number;
  asset: string;
  debtor: string;
  amount: bigint;
  status: DebtStatus;
  /** What arrived at the ClearingHouse for a covered debt (its DefaultCovered `covered`). */
  covered: bigint | null;
  resolvedTx: string | null;
}

/** A disputed position's state (the contract's `DisputeStatus`, None excluded). */
export const DISPUTE_STATUSES = ["OPEN", "UPHELD", "VOIDED", "REMOVED", "DISMISSED"] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];

/** One disputed position of a debtor's sum tree in a cycle (docs/clearing.md "Disputes"). */
export interface CycleDisputeRecord {
  cycleId: number;
  asset: string;
  debtor: string;
  position: number;
  status: DisputeStatus;
  /** The guarantee the answer showed at the position (null while open, conceded or empty). */
  guaranteeId: string | null;
  /** The position's amount once answered (null while open). */
  amount: bigint | null;
  openedTx: string;
  resolvedTx: string | null;
}

export interface CycleClaimRecord {
  cycleId: number;
  asset: string;
  participant: string;
  amount: bigint;
  txHash: string;
}

/**
 * A V2 guarantee id a committed cycle marked netted (consumed) in the Vault: one `Vault.GuaranteeNetted`
 * log of the commit's transaction. An id is netted at most once on chain (consumption is permanent), so
 * the guarantee id is the key. Recorded for every committed cycle, Core's and foreign ones
 * (docs/clearing.md, "A cycle Core did not plan").
 */
export interface V2NettingRecord {
  guaranteeId: string;
  cycleId: number;
  txHash: string;
  logIndex: number;
  blockNumber: number;
}

export interface CycleRepository {
  insertCycle(record: CycleRecord): Promise<void>;
  getCycle(cycleId: number): Promise<CycleRecord | null>;
  /** The cycle with the highest id (any state), or null. */
  latestCycle(): Promise<CycleRecord | null>;
  listCycles(states: readonly CycleState[]): Promise<CycleRecord[]>;
  /** Ids of cycles in `states` below `beforeId` (all when absent), newest first, at most `limit`. */
  listCycleIds(states: readonly CycleState[], page: { beforeId?: number; limit: number }): Promise<number[]>;
  updateCycle(cycleId: number, changes: Partial<Omit<CycleRecord, "cycleId">>): Promise<void>;
  deleteCycle(cycleId: number): Promise<void>;
  putCycleDebt(record: CycleDebtRecord): Promise<void>;
  getCycleDebt(cycleId: number, asset: string, debtor: string): Promise<CycleDebtRecord | null>;
  /** Debts by cycle, status and debtor, in (cycle, asset, debtor) order. */
  listCycleDebts(query: {
    cycleId?: number;
    status?: DebtStatus;
    debtor?: string;
  }): Promise<CycleDebtRecord[]>;
  deleteCycleDebt(cycleId: number, asset: string, debtor: string): Promise<void>;
  /** Records a disputed position (replacing the record of the same position). */
  putCycleDispute(record: CycleDisputeRecord): Promise<void>;
  getCycleDispute(
    cycleId: number,
    asset: string,
    debtor: string,
    position: number,
  ): Promise<CycleDisputeRecord | null>;
  /** Disputes by cycle, debtor (with asset) and status, in (cycle, asset, debtor, position) order. */
  listCycleDisputes(query: {
    cycleId?: number;
    asset?: string;
    debtor?: string;
    status?: DisputeStatus;
  }): Promise<CycleDisputeRecord[]>;
  deleteCycleDispute(cycleId: number, asset: string, debtor: string, position: number): Promise<void>;
  putCycleClaim(record: CycleClaimRecord): Promise<void>;
  listCycleClaims(cycleId: number): Promise<CycleClaimRecord[]>;
  deleteCycleClaim(cycleId: number, asset: string, participant: string): Promise<void>;
  /** Every claim `participant` made, in (cycle, asset) order (the console's per-payer ledger). */
  listCycleClaimsOf(participant: string): Promise<CycleClaimRecord[]>;
  /** How many cycles are in `states` (the console's totals). */
  countCycles(states: readonly CycleState[]): Promise<number>;
  /**
   * Cycles a transaction touched, ascending: its commit (`tx_hash`), a debt's payment, cover or void
   * (`resolved_tx`), a claim (any case; the console's search by transaction hash).
   */
  cycleIdsOfTx(txHash: string): Promise<number[]>;
  /** Records a netted V2 id (replacing a record of the same id: a re-applied log after a rewind). */
  putV2Netting(record: V2NettingRecord): Promise<void>;
  getV2Netting(guaranteeId: string): Promise<V2NettingRecord | null>;
  /** The V2 ids `cycleId`'s commit netted, in log order. */
  listV2Nettings(cycleId: number): Promise<V2NettingRecord[]>;
  deleteV2Netting(guaranteeId: string): Promise<void>;
}
