/**
 * Collateral capacity (docs/protocol.md, "Collateral and safety invariants"): what a payer's (user, asset)
 * balance may carry in unresolved guarantees.
 *
 *   capacity  = (deposited − pending_withdrawal) × collateral factor
 *   available = capacity − locked   (never below zero)
 *
 * A pending withdrawal leaves capacity at once, so collateral on its way out
 * never backs a new guarantee.
 */
import { BPS_DENOMINATOR } from "../config";
import type { CollateralBalance } from "../store";

export function collateralCapacity(balance: CollateralBalance, factorBps: number): bigint {
  const free = balance.deposited - balance.pendingWithdrawal;
  if (free <= 0n) return 0n;
  return (free * BigInt(factorBps)) / BigInt(BPS_DENOMINATOR);
}

export function availableCollateral(balance: CollateralBalance, factorBps: number): bigint {
  const available = collateralCapacity(balance, factorBps) - balance.locked;
  return available > 0n ? available : 0n;
}
