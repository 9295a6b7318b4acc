/**
 * A Core process's share of the work beside HTTP (operator/app/open.ts decides by role): an HTTP
 * worker mirrors the background work's state from the store; a single process (with
 * `config.backgroundTasks`) and the background process run the background tasks and the webhook
 * dispatcher while they lead (operator/leadership/).
 */
import type { JsonRpcProvider } from "ethers";
import { type BackgroundTasks, createBackgroundTasks, rpcProvider } from "../background";
import { BackgroundStateMirror, BackgroundStatePublisher } from "../background-state";
import type { ChainProvider } from "../chain/indexer";
import { type BackgroundOwnership, type RunningWork, startReplicaWork } from "../leadership";
import { createWebhookDispatcher, startDispatcherLoop, syncConfiguredSubscriptions } from "../webhooks";
import type { CoreContext } from "./context";

/**
 * A process's share of Core's work:
 * - "single": HTTP and, with `config.backgroundTasks`, the background work (one process, the default);
 * - "background": the background work (indexer, V2 lifecycle, sender, scheduler, keeper, bond monitor,
 *   webhook dispatcher) and no HTTP; it publishes what HTTP processes read of it to the store;
 * - "http": HTTP only; the background work runs in another process, and this one reads its state
 *   (chain time, chain sync, Vault timings) from the store (background-state.ts).
 */
export type CoreProcessRole = "single" | "background" | "http";

export interface CoreWorkOptions {
  /** Who runs the background work in this process. */
  ownership: BackgroundOwnership;
  /** The background tasks' JSON-RPC provider; opened here (and destroyed by stop()) when absent and `ownsChain`. */
  chainProvider?: ChainProvider;
  /** Whether the process opened its own chain connection (then the chain tasks run without an injected provider). */
  ownsChain: boolean;
}

export interface CoreWork {
  /** Stops what was started, in reverse order. */
  stop(): Promise<void>;
}

export async function startCoreWork(
  role: CoreProcessRole,
  context: CoreContext,
  options: CoreWorkOptions,
): Promise<CoreWork> {
  const { config, logger, store } = context;
  let follower: RunningWork | undefined;
  let mirror: BackgroundStateMirror | undefined;
  let ownProvider: JsonRpcProvider | undefined;
  const stop = async () => {
    await mirror?.stop();
    await follower?.stop();
    ownProvider?.destroy();
  };
  try {
    if (role === "http") {
      // The background work runs in another process: its state comes from the store, never from here.
      mirror = new BackgroundStateMirror({ ...context, intervalMs: config.pollIntervalMs });
      await mirror.refresh();
      mirror.start();
      return { stop };
    }
    await syncConfiguredSubscriptions(store, config.webhooks, context.clock.nowSeconds());
    // The background process exists to run the background work, whatever `backgroundTasks` says.
    if (role === "background" || config.backgroundTasks) {
      const chainTasks = options.chainProvider !== undefined || options.ownsChain;
      const provider = chainTasks ? (options.chainProvider ?? (ownProvider = rpcProvider(config))) : null;
      const termContext = context;
      // Runs while this process leads, on the term's store (fenced on PostgreSQL: operator/leadership/).
      follower = await startReplicaWork(options.ownership, termContext, async ({ store: termStore }) => {
        const termDeps = { ...termContext, store: termStore };
        // Independent of the chain tasks: issuance events need no chain connection (docs/webhooks.md).
        const webhooks = startDispatcherLoop(
          createWebhookDispatcher(termDeps),
          config.pollIntervalMs,
          logger,
        );
        let background: BackgroundTasks | undefined;
        if (provider !== null) {
          try {
            background = await createBackgroundTasks({
              ...termDeps,
              provider,
              timings: context.timings,
              statePublisher: role === "background" ? new BackgroundStatePublisher(termDeps) : undefined,
            });
          } catch (error) {
            await webhooks.stop();
            throw error;
          }
          background.start();
          logger.info({ role }, "background work started");
        }
        return {
          stop: async () => {
            await webhooks.stop();
            await background?.stop();
          },
        };
      });
    }
    return { stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
