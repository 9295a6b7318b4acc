/**
 * Repository operations of Core's asynchronous side (docs/operator-async.md): the chain indexer's
 * cursor and journal, clearing cycles and their debts, withdrawals, V2 validation responses, and the
 * guarantee-state transitions they drive. Same conventions as `types.ts`: addresses EIP-55, amounts
 * bigint, times unix seconds, every call atomic on its own and usable inside `store.transaction`.
 */
import type { CollateralBalance, GuaranteeState, StoredGuarantee } from "./types";

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

/** Signed changes to a collateral row; the result must stay ≥ 0 (the store clamps and reports). */
export interface CollateralDelta {
  deposited?: bigint;
  locked?: bigint;
}

/** What {@link AsyncStoreOps.adjustCollateral} actually changed (after clamping at zero). */
export interface CollateralAdjustment {
  balance: CollateralBalance;
  applied: { deposited: bigint; locked: bigint };
}

/**
 * A seller's reserve the Vault holds (Vault.registerReserve; docs/contracts.md, "Seller's reserve"): indexed
 * from ReserveRegistered, removed on ReserveReleased. An expired reserve still holds until someone calls
 * `releaseReserve`, as on chain.
 */
export interface ReserveRecord {
  /** 0x-prefixed 32-byte id, lower case. */
  guaranteeId: string;
  user: string;
  asset: string;
  recipient: string;
  amount: bigint;
  /** Unix seconds from which `releaseReserve` may free it (validation deadline + withdrawal grace). */
  expiresAt: number;
  /** The registration (lower case hash) and its block. */
  txHash: string;
  blockNumber: number;
}

/** An active reserve with what Core itself locks for the guarantee it backs (capacity.ts takes the max). */
export interface ActiveReserve extends ReserveRecord {
  /** The guarantee as Core holds it, or null if Core has no guarantee under that id. */
  guarantee: { state: GuaranteeState; user: string; asset: string; amount: bigint } | null;
}

/** A guarantee with the clearing columns. */
export interface ClearingGuarantee extends StoredGuarantee {
  seq: number;
  validationRequestHash: string | null;
}

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

export interface CycleClaimRecord {
  cycleId: number;
  asset: string;
  participant: string;
  amount: bigint;
  txHash: string;
}

export const WITHDRAWAL_STATES = ["PENDING", "CANCELLED", "FINALIZED"] as const;
export type WithdrawalState = (typeof WITHDRAWAL_STATES)[number];

export interface WithdrawalRecord {
  withdrawalId: number;
  user: string;
  asset: string;
  amount: bigint;
  /** As emitted by `WithdrawalRequested` (the Vault's `withdrawalFinalizableAt` may be later). */
  finalizableAt: number;
  /** Block time of the request. */
  requestedAt: number;
  state: WithdrawalState;
  paid: bigint | null;
  closedAt: number | null;
}

export interface ValidationResponseRecord {
  txHash: string;
  logIndex: number;
  requestHash: string;
  validator: string;
  agentId: bigint;
  response: number;
  tag: string;
  blockNumber: number;
  blockTimestamp: number;
}

/** Filter of {@link AsyncStoreOps.listGuarantees}. */
export interface GuaranteeQuery {
  states?: readonly GuaranteeState[];
  cycleId?: number;
  user?: string;
  asset?: string;
  version?: 1 | 2;
  /** Only guarantees with no cycle assigned and not excluded (what the scheduler may net). */
  unassigned?: boolean;
  /** Only those without a validation request hash yet. */
  missingRequestHash?: boolean;
  /** seq > afterSeq (paging). */
  afterSeq?: number;
  limit?: number;
}

export interface AsyncStoreOps {
  // --- indexer cursor and journal ---
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
  deleteChainEvent(txHash: string, logIndex: number): Promise<void>;
  /** Deletes the journal of events in blocks below `blockNumber` (too old to be rewound); returns how many. */
  deleteChainEventsBelow(blockNumber: number): Promise<number>;

  // --- collateral ---
  /** Adds the signed deltas; a result below zero is clamped to zero and `applied` says what changed. */
  adjustCollateral(
    user: string,
    asset: string,
    delta: CollateralDelta,
    now: number,
  ): Promise<CollateralAdjustment>;

  // --- sellers' on-chain reserves ---
  /** Inserts or replaces the reserve of `record.guaranteeId`. */
  putReserve(record: ReserveRecord): Promise<void>;
  getReserve(guaranteeId: string): Promise<ReserveRecord | null>;
  deleteReserve(guaranteeId: string): Promise<void>;
  /** `user`'s active reserves (in `asset` only, when given) with the guarantees they back, oldest first. */
  listReserves(user: string, asset?: string): Promise<ActiveReserve[]>;
  /**
   * Reserves `Vault.releaseReserve` would free, oldest first, at most `limit`: expired at chain time
   * `nowSeconds` (`expiresAt <= nowSeconds`) or backing a guarantee Core holds as netted or remunerated.
   */
  listReleasableReserves(nowSeconds: number, limit: number): Promise<ActiveReserve[]>;

  // --- guarantees ---
  getClearingGuarantee(guaranteeId: string): Promise<ClearingGuarantee | null>;
  listGuarantees(query: GuaranteeQuery): Promise<ClearingGuarantee[]>;
  /**
   * Sets the state iff the current one is in `from`; returns the guarantee as it was before, or null
   * (unknown id or another state: nothing changed).
   */
  transitionGuarantee(
    guaranteeId: string,
    from: readonly GuaranteeState[],
    to: GuaranteeState,
    now: number,
  ): Promise<ClearingGuarantee | null>;
  /** Sets `cycle_id` of the given guarantees (null unassigns). */
  assignGuaranteesToCycle(guaranteeIds: readonly string[], cycleId: number | null): Promise<void>;
  setGuaranteeExcluded(guaranteeId: string, reason: string | null): Promise<void>;
  setValidationRequestHash(guaranteeId: string, requestHash: string): Promise<void>;

  // --- cycles ---
  insertCycle(record: CycleRecord): Promise<void>;
  getCycle(cycleId: number): Promise<CycleRecord | null>;
  /** The cycle with the highest id (any state), or null. */
  latestCycle(): Promise<CycleRecord | null>;
  listCycles(states: readonly CycleState[]): Promise<CycleRecord[]>;
  updateCycle(cycleId: number, changes: Partial<Omit<CycleRecord, "cycleId">>): Promise<void>;
  deleteCycle(cycleId: number): Promise<void>;
  putCycleDebt(record: CycleDebtRecord): Promise<void>;
  getCycleDebt(cycleId: number, asset: string, debtor: string): Promise<CycleDebtRecord | null>;
  listCycleDebts(query: { cycleId?: number; status?: DebtStatus }): Promise<CycleDebtRecord[]>;
  deleteCycleDebt(cycleId: number, asset: string, debtor: string): Promise<void>;
  putCycleClaim(record: CycleClaimRecord): Promise<void>;
  listCycleClaims(cycleId: number): Promise<CycleClaimRecord[]>;
  deleteCycleClaim(cycleId: number, asset: string, participant: string): Promise<void>;

  // --- withdrawals ---
  putWithdrawal(record: WithdrawalRecord): Promise<void>;
  getWithdrawal(withdrawalId: number): Promise<WithdrawalRecord | null>;
  deleteWithdrawal(withdrawalId: number): Promise<void>;
  listWithdrawals(user: string, states?: readonly WithdrawalState[]): Promise<WithdrawalRecord[]>;

  // --- V2 validation responses ---
  insertValidationResponse(record: ValidationResponseRecord): Promise<void>;
  deleteValidationResponse(txHash: string, logIndex: number): Promise<void>;
  /** The latest response of `validator` to `requestHash` in a block at or before `maxTimestamp`. */
  latestValidationResponse(
    requestHash: string,
    validator: string,
    maxTimestamp?: number,
  ): Promise<ValidationResponseRecord | null>;

  // --- small durable settings ---
  getOperatorState(key: string): Promise<string | null>;
  setOperatorState(key: string, value: string | null): Promise<void>;
}
