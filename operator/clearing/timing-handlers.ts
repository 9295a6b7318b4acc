/**
 * The Vault's timings (cycle length, windows, confirmation lag) and their timelock: Core follows them
 * (chain/timings.ts holds what is in force and scheduled; issuance caps V2 deadlines with it). Registered
 * with the indexer by chain/events.ts.
 */
import type { EventHandlers, VaultTimings } from "../chain/handlers";
import type { IClearingVault } from "../../typechain-types/contracts/Vault";

/** A `Timings` tuple of an event (TimingsUpdated, TimingsScheduled), in seconds. */
function timingsOf(t: IClearingVault.TimingsStructOutput): VaultTimings {
  return {
    cycleLength: Number(t.cycleLength),
    commitDelay: Number(t.commitDelay),
    challengeWindow: Number(t.challengeWindow),
    paymentWindow: Number(t.paymentWindow),
    defaultWindow: Number(t.defaultWindow),
    withdrawalGracePeriod: Number(t.withdrawalGracePeriod),
    confirmationLag: Number(t.confirmationLag),
  };
}

export function registerTimingHandlers(handlers: EventHandlers): void {
  handlers
    .on("Vault.TimingsUpdated", async (_j, event, context) => {
      context.onTimings?.(timingsOf(event.args.timings));
    })
    .on("Vault.TimingsScheduled", async (_j, event, context) => {
      const a = event.args;
      // CONFIG_ROLE scheduled new timings (timelocked, docs/contracts.md "Timelocked grants and changes"):
      // they are not in force before a second setTimings executes them (TimingsUpdated), but V2 deadlines
      // issued meanwhile must hold under them too (the cap counts them: chain/timings.ts). A shorter window
      // from an unknown hand is the first sign of an attack, and Core's own settings (confirmations, cycle
      // length) may need to follow: someone must look now, while the admin can still cancel.
      context.onTimingsScheduled?.({
        operation: a.operation.toLowerCase(),
        readyAt: Number(a.readyAt),
        timings: timingsOf(a.timings),
      });
      context.logger.error(
        {
          event: "timings_scheduled",
          operation: a.operation,
          ready_at: Number(a.readyAt),
          timings: timingsOf(a.timings),
          tx_hash: event.txHash,
        },
        "Vault timings change scheduled: it takes effect when executed after readyAt unless the admin cancels it",
      );
    })
    .on("Vault.OperationCancelled", async (_j, event, context) => {
      context.onOperationCancelled?.(event.args.operation.toLowerCase());
    });
}
