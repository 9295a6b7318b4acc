/**
 * The event → state mapping (docs/operator-async.md, "Event → state"): which domain handles which event.
 * Logs are decoded once, through the typechain bindings (./typed-events.ts); each domain registers the
 * handlers of the events it owns in its own module, listed here. A handler changes the store only through a
 * {@link JournaledTx}, so a reorg can rewind it exactly, and moves guarantees only through the transition
 * table (guarantees/transitions.ts).
 *
 * A new event: add its handler to its domain's module (`handlers.on("Contract.Event", …)`); a new domain:
 * add its `register…Handlers` to {@link HANDLER_MODULES}. An event no module registers changes nothing in
 * Core (the indexer still journals it).
 */
import { registerCommitHandlers } from "../clearing/commit-handlers";
import { registerCycleHandlers } from "../clearing/cycle-handlers";
import { registerDisputeHandlers } from "../clearing/dispute-handlers";
import { registerTimingHandlers } from "../clearing/timing-handlers";
import { registerCollateralHandlers } from "../guarantees/collateral-handlers";
import { registerGuaranteeHandlers } from "../guarantees/guarantee-handlers";
import { registerReserveHandlers } from "../guarantees/reserve-handlers";
import { registerValidationHandlers } from "../lifecycle/validation-handlers";
import { type ApplyContext, EventHandlers, type HandlerModule } from "./handlers";
import type { JournaledTx } from "./journal";
import type { TypedChainEvent } from "./typed-events";

// Their own modules so that webhooks/ and the domains can name them without importing the handlers.
export type { ChainEvent, ChainLogRef, ContractName, EventValue } from "./event-types";
export type { ApplyContext, ScheduledTimings, VaultTimings } from "./handlers";
export { EventDecoder, jsonArgs, type TypedChainEvent } from "./typed-events";

/** Every domain's handlers, by domain. */
export const HANDLER_MODULES: readonly HandlerModule[] = [
  registerCollateralHandlers,
  registerReserveHandlers,
  registerGuaranteeHandlers,
  registerCommitHandlers,
  registerCycleHandlers,
  registerDisputeHandlers,
  registerValidationHandlers,
  registerTimingHandlers,
];

/** The handlers of {@link HANDLER_MODULES} (an event registered twice throws here). */
export function eventHandlers(modules: readonly HandlerModule[] = HANDLER_MODULES): EventHandlers {
  const handlers = new EventHandlers();
  for (const register of modules) register(handlers);
  return handlers;
}

const DEFAULT_HANDLERS = eventHandlers();

/** Applies one event's effects through `j` (event → state table in docs/operator-async.md). */
export async function applyEvent(
  j: JournaledTx,
  event: TypedChainEvent,
  context: ApplyContext,
): Promise<void> {
  await DEFAULT_HANDLERS.apply(j, event, context);
}
