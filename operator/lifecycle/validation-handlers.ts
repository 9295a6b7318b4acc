/**
 * The ValidationRegistry's answers (`ValidationResponse`), which the V2 lifecycle judges (./v2-lifecycle.ts),
 * and the Vault's pins of passed verdicts (`VerdictPinned`, ./verdict-pins.ts). Registered with the indexer
 * by chain/events.ts.
 */
import type { EventHandlers } from "../chain/handlers";

export function registerValidationHandlers(handlers: EventHandlers): void {
  handlers.on("ValidationRegistry.ValidationResponse", async (j, event) => {
    const a = event.args;
    await j.recordValidationResponse({
      txHash: event.txHash,
      logIndex: event.logIndex,
      requestHash: a.requestHash,
      validator: a.validatorAddress,
      agentId: a.agentId,
      response: Number(a.response),
      tag: a.tag,
      blockNumber: event.blockNumber,
      blockTimestamp: event.blockTimestamp,
    });
  });
  /** A verdict pinned (by Core or anyone): final on chain, whatever the registry says later (audit H-2). */
  handlers.on("Vault.VerdictPinned", async (j, event, context) => {
    const id = event.args.guaranteeId.toLowerCase();
    if (!(await j.setVerdictPinned(id, event.args.requestHash))) {
      context.logger.debug(
        { guarantee_id: id, request_hash: event.args.requestHash, tx: event.txHash },
        "VerdictPinned for a guarantee Core does not hold, or of another policy under its id",
      );
    }
  });
}
