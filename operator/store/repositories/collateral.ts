/**
 * Collateral and locks (docs/protocol.md, "Collateral and safety invariants"): per (user, asset) balances,
 * the check-and-lock, the chain's adjustments, and the Vault's withdrawal requests.
 */
import type { CapacityFn, CollateralBalance } from "../../guarantees/capacity";

// The balance's shape and the capacity rule are the domain's (operator/guarantees/capacity.ts): the store
// holds the figures, the domain says what they may carry.
export type { CapacityFn, CollateralBalance };

export type LockResult =
  | { locked: true; balance: CollateralBalance; capacity: bigint }
  | { locked: false; balance: CollateralBalance; capacity: bigint };

/** Signed changes to a collateral row; the result must stay ≥ 0 (the store clamps and reports). */
export interface CollateralDelta {
  deposited?: bigint;
  locked?: bigint;
}

/** What {@link adjustCollateral} actually changed (after clamping at zero). */
export interface CollateralAdjustment {
  balance: CollateralBalance;
  applied: { deposited: bigint; locked: bigint };
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

export interface CollateralRepository {
  /** Zero balance when the pair has never been seen. */
  getCollateral(user: string, asset: string): Promise<CollateralBalance>;
  creditDeposit(user: string, asset: string, amount: bigint, now: number): Promise<CollateralBalance>;
  /**
   * Check-and-lock (docs/protocol.md, "Collateral and safety invariants"): adds `amount` to `locked` iff the
   * new total stays ≤ `capacity(balance)`; otherwise changes nothing.
   */
  lockIfAvailable(
    user: string,
    asset: string,
    amount: bigint,
    capacity: CapacityFn,
    now: number,
  ): Promise<LockResult>;
  /** Sets the amount of `asset` the user has asked to withdraw (the Vault's pending request; 0 clears it). */
  setPendingWithdrawal(user: string, asset: string, amount: bigint, now: number): Promise<CollateralBalance>;
  /** Every (user, asset) balance of `user` the store knows, by asset address. */
  listCollateral(user: string): Promise<CollateralBalance[]>;
  /**
   * Every (user, asset) balance with something in it (deposited, locked or pending withdrawal), ordered by
   * user then asset address (byte order of the checksummed strings), those after `after` (paging), only
   * `asset`'s when given, at most `limit` (the admin's collateral list).
   */
  listAllCollateral(page: {
    after?: { user: string; asset: string };
    asset?: string;
    limit: number;
  }): Promise<CollateralBalance[]>;
  /** Sum of `locked` over all users, per asset (metrics). */
  lockedTotals(): Promise<Map<string, bigint>>;
  /** Adds the signed deltas; a result below zero is clamped to zero and `applied` says what changed. */
  adjustCollateral(
    user: string,
    asset: string,
    delta: CollateralDelta,
    now: number,
  ): Promise<CollateralAdjustment>;

  // --- withdrawals ---
  putWithdrawal(record: WithdrawalRecord): Promise<void>;
  getWithdrawal(withdrawalId: number): Promise<WithdrawalRecord | null>;
  deleteWithdrawal(withdrawalId: number): Promise<void>;
  listWithdrawals(user: string, states?: readonly WithdrawalState[]): Promise<WithdrawalRecord[]>;
}
