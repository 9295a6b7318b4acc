/**
 * The check-and-lock's capacity check (docs/protocol.md, "Collateral and safety invariants"), the one
 * place it is written: every engine's check-and-lock and batched issuance call it with the capacity
 * capacity.ts computed for the balance, in the transaction that read the balance.
 */
import type { CollateralBalance } from "./capacity";

/**
 * `balance` with `amount` more locked, or null when the locked total would exceed `capacity` (a lock
 * that reaches it exactly is allowed). Pure: writing the result is the caller's.
 */
export function tryLock(
  balance: CollateralBalance,
  amount: bigint,
  capacity: bigint,
): CollateralBalance | null {
  const locked = balance.locked + amount;
  return locked > capacity ? null : { ...balance, locked };
}
