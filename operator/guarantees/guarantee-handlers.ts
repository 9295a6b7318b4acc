/**
 * A guarantee's own chain event: a V2 remunerated on chain (`Vault.GuaranteeRemunerated`). Registered with
 * the indexer by chain/events.ts. (Its moves within a cycle follow its cycle's events: clearing/.)
 */
import type { EventHandlers } from "../chain/handlers";

export function registerGuaranteeHandlers(handlers: EventHandlers): void {
  /** V2 paid on chain: REMUNERATED, its lock released, the payer's deposit reduced by what was paid. */
  handlers.on("Vault.GuaranteeRemunerated", async (j, event, context) => {
    const { user, asset, amount } = event.args;
    await j.adjustCollateral(user, asset, { deposited: -amount });
    const id = event.args.guaranteeId.toLowerCase();
    const previous = await context.transitions.apply(j, id, { trigger: "remunerated" });
    if (previous === null) {
      const known = await j.tx.guarantees.getClearingGuarantee(id);
      context.logger.warn(
        { guarantee_id: id, state: known?.state ?? null, tx: event.txHash },
        "GuaranteeRemunerated for a guarantee Core does not hold as unresolved",
      );
      return;
    }
    if (previous !== "CANCELLED") await j.adjustCollateral(user, asset, { locked: -amount });
    const g = await j.tx.guarantees.getClearingGuarantee(id);
    if (g) await j.emit(context.webhooks?.guaranteeRemunerated(event, g, amount, j.now));
  });
}
