/**
 * Collateral events of the Vault (docs/operator-async.md, "Event → state"): deposits, withdrawal requests
 * and their ends, and what a default took out of a payer's deposit. Registered with the indexer by
 * chain/events.ts.
 */
import type { EventHandlers } from "../chain/handlers";
import type { JournaledTx } from "../chain/journal";
import type { DecodedEvent } from "../chain/typed-events";
import type { ApplyContext } from "../chain/handlers";
import type { WithdrawalRecord } from "../store";

export function registerCollateralHandlers(handlers: EventHandlers): void {
  handlers
    .on("Vault.Deposited", async (j, event, context) => {
      const { user, asset, amount } = event.args;
      await j.adjustCollateral(user, asset, { deposited: amount });
      await j.emit(context.webhooks?.deposited(event, user, asset, amount, j.now));
    })
    .on("Vault.WithdrawalRequested", async (j, event, context) => {
      const a = event.args;
      const withdrawal: WithdrawalRecord = {
        withdrawalId: Number(a.withdrawalId),
        user: a.user,
        asset: a.asset,
        amount: a.amount,
        finalizableAt: Number(a.finalizableAt),
        requestedAt: event.blockTimestamp,
        state: "PENDING",
        paid: null,
        closedAt: null,
      };
      await j.putWithdrawal(withdrawal);
      await j.setPendingWithdrawal(a.user, a.asset, a.amount);
      await j.emit(context.webhooks?.withdrawal(event, "withdrawal.requested", withdrawal, j.now));
    })
    .on("Vault.WithdrawalCancelled", (j, event, context) => closeWithdrawal(j, event, context, null))
    .on("Vault.WithdrawalFinalized", (j, event, context) =>
      closeWithdrawal(j, event, context, { requested: event.args.requested, paid: event.args.paid }),
    )
    .on("Vault.DefaultCovered", async (j, event) => {
      // What left the Vault (the ClearingHouse's event carries what arrived there).
      await j.adjustCollateral(event.args.user, event.args.asset, { deposited: -event.args.covered });
    });
}

/** A withdrawal cancelled (`finalized` null) or finalized: closed, the pending amount cleared. */
async function closeWithdrawal(
  j: JournaledTx,
  event: DecodedEvent<"Vault.WithdrawalCancelled" | "Vault.WithdrawalFinalized">,
  context: ApplyContext,
  finalized: { requested: bigint; paid: bigint } | null,
): Promise<void> {
  const { user, asset } = event.args;
  const id = Number(event.args.withdrawalId);
  const existing = await j.tx.collateral.getWithdrawal(id);
  const withdrawal: WithdrawalRecord = {
    withdrawalId: id,
    user,
    asset,
    amount: existing?.amount ?? (finalized ? finalized.requested : 0n),
    finalizableAt: existing?.finalizableAt ?? 0,
    requestedAt: existing?.requestedAt ?? 0,
    state: finalized ? "FINALIZED" : "CANCELLED",
    paid: finalized ? finalized.paid : null,
    closedAt: event.blockTimestamp,
  };
  await j.putWithdrawal(withdrawal);
  if (finalized) await j.adjustCollateral(user, asset, { deposited: -finalized.paid });
  await j.setPendingWithdrawal(user, asset, 0n);
  const type = finalized ? "withdrawal.finalized" : "withdrawal.cancelled";
  await j.emit(context.webhooks?.withdrawal(event, type, withdrawal, j.now));
}
