/**
 * The ValidationRegistry's answers (`ValidationResponse`), which the V2 lifecycle judges (./v2-lifecycle.ts).
 * Registered with the indexer by chain/events.ts.
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
}
