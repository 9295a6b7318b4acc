/**
 * Collateral capacity (docs/protocol.md, "Collateral and safety invariants"; docs/operator-async.md,
 * "Sellers' reserves"): what a payer's (user, asset) balance may carry in unresolved guarantees, and what
 * it may withdraw. The one definition used by issuance's check-and-lock and by every collateral view.
 *
 *   hold(g)      = max(Core's lock of g, the Vault's reserve of g)          per guarantee id g
 *   reserve_hold = Σ_g hold(g) − Core's lock of g = Σ_g max(0, reserve(g) − lock(g))
 *   held         = locked + reserve_hold        (locked: Core's guarantee and net-debit locks)
 *   capacity     = (deposited − pending_withdrawal) × collateral factor
 *   available    = capacity − held               (never below zero)
 *   free         = deposited − held              (never below zero; what a withdrawal may take)
 *
 * Core's lock of g is g's amount while g is PENDING_VALIDATION, FINALIZED_PAYABLE or DISPUTED for the
 * reserve's payer and asset, and 0 otherwise (cancelled, netted, settled, remunerated, unknown to Core).
 * While Core locks g the reserve adds nothing (the same amount, counted once); once Core releases its lock
 * but the Vault still holds the reserve (until `ReserveReleased`), the reserve holds the payer's collateral
 * in Core's books exactly as on chain. A pending withdrawal leaves capacity at once, so collateral on its
 * way out never backs a new guarantee.
 *
 * Domain vocabulary: the store's check-and-lock takes a {@link CapacityFn}; this module imports nothing of
 * the store (its balances and reserves are read through the shapes below, which the store's records fit).
 */
import { BPS_DENOMINATOR } from "../config";
import { type GuaranteeState, PRE_CYCLE_LOCKED_STATES } from "./states";

/** A (user, asset) balance as the rule reads it (the store's `CollateralBalance`). */
export interface CollateralBalance {
  user: string;
  asset: string;
  deposited: bigint;
  /** Sum of unresolved guarantees and unpaid net debits. */
  locked: bigint;
  pendingWithdrawal: bigint;
}

/** A seller's reserve on chain with the guarantee Core holds under its id (the store's `ActiveReserve` fits it). */
export interface CapacityReserve {
  user: string;
  asset: string;
  amount: bigint;
  guarantee: { state: GuaranteeState; user: string; asset: string; amount: bigint } | null;
}

/**
 * Largest total `locked` the balance may carry (deposits × collateral factor − pending withdrawals, less
 * what the payer's on-chain reserves hold beyond Core's locks). The store's check-and-lock calls it with
 * the balance and the payer's active reserves read in its own transaction.
 */
export type CapacityFn = (balance: CollateralBalance, reserves: readonly CapacityReserve[]) => bigint;

const sameAddress = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** What Core itself locks for the guarantee a reserve backs. */
function coreLockOf(reserve: CapacityReserve): bigint {
  const g = reserve.guarantee;
  if (g === null || !PRE_CYCLE_LOCKED_STATES.includes(g.state)) return 0n;
  if (!sameAddress(g.user, reserve.user) || !sameAddress(g.asset, reserve.asset)) return 0n;
  return g.amount;
}

/** Σ max(0, reserve − Core's lock) over `reserves` of `balance`'s (user, asset): holds beyond `locked`. */
export function reserveHold(balance: CollateralBalance, reserves: readonly CapacityReserve[]): bigint {
  let hold = 0n;
  for (const r of reserves) {
    if (!sameAddress(r.user, balance.user) || !sameAddress(r.asset, balance.asset)) continue;
    const lock = coreLockOf(r);
    if (r.amount > lock) hold += r.amount - lock;
  }
  return hold;
}

export function collateralCapacity(balance: CollateralBalance, factorBps: number): bigint {
  const free = balance.deposited - balance.pendingWithdrawal;
  if (free <= 0n) return 0n;
  return (free * BigInt(factorBps)) / BigInt(BPS_DENOMINATOR);
}

/** The largest `locked` the check-and-lock may reach: capacity − reserve_hold (may be negative). */
export function lockLimit(
  balance: CollateralBalance,
  reserves: readonly CapacityReserve[],
  factorBps: number,
): bigint {
  return collateralCapacity(balance, factorBps) - reserveHold(balance, reserves);
}

/** What new guarantees may still lock: capacity − held, ≥ 0. */
export function availableCollateral(
  balance: CollateralBalance,
  reserves: readonly CapacityReserve[],
  factorBps: number,
): bigint {
  const available = lockLimit(balance, reserves, factorBps) - balance.locked;
  return available > 0n ? available : 0n;
}

/** What a withdrawal may take by Core's books: deposited − held, ≥ 0 (the Vault's `freeCollateralOf`). */
export function freeCollateral(balance: CollateralBalance, reserves: readonly CapacityReserve[]): bigint {
  const free = balance.deposited - balance.locked - reserveHold(balance, reserves);
  return free > 0n ? free : 0n;
}
