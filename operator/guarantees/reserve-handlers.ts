/**
 * A seller's reserve (docs/operator-async.md, "Sellers' reserves"), V2 or V1 (`V1ReserveRegistered`, kept
 * apart: it never expires, and the scheduler lists its id as netted): registered → Core holds it as the
 * Vault does until ReserveReleased (also emitted by a remuneration paid out of it, before
 * GuaranteeRemunerated, which then reduces the deposit once). Capacity counts it beyond Core's own lock
 * of the guarantee only (./capacity.ts). Registered with the indexer by chain/events.ts.
 */
import type { EventHandlers } from "../chain/handlers";

export function registerReserveHandlers(handlers: EventHandlers): void {
  handlers
    .on("Vault.ReserveRegistered", async (j, event) => {
      const a = event.args;
      await j.putReserve({
        guaranteeId: a.guaranteeId.toLowerCase(),
        user: a.user,
        asset: a.asset,
        recipient: a.recipient,
        amount: a.amount,
        expiresAt: Number(a.expiresAt),
        txHash: event.txHash,
        blockNumber: event.blockNumber,
      });
    })
    .on("Vault.V1ReserveRegistered", async (j, event) => {
      const a = event.args;
      await j.putReserve({
        guaranteeId: a.guaranteeId.toLowerCase(),
        user: a.user,
        asset: a.asset,
        recipient: a.recipient,
        amount: a.amount,
        // A V1 reserve never expires; Core stores its collectableAt (the keeper's releaseListedReserve deadline).
        expiresAt: Number(a.collectableAt),
        txHash: event.txHash,
        blockNumber: event.blockNumber,
        v1: true,
      });
    })
    .on("Vault.ReserveReleased", async (j, event, context) => {
      const id = event.args.guaranteeId.toLowerCase();
      if (!(await j.deleteReserve(id))) {
        context.logger.warn(
          { guarantee_id: id, tx: event.txHash },
          "ReserveReleased for a reserve Core does not hold",
        );
      }
    });
}
