/**
 * `startCoreBackground`: Core's background work in this process, without HTTP, for the process that
 * does it while workers serve HTTP (`SURETY_WORKERS` > 1, operator/main.ts). It opens Core as every
 * process does (open.ts) and mounts no routes: nothing here imports the HTTP layer or Express.
 */
import type { OperatorConfig } from "../config";
import type { CoreContext } from "./context";
import { type CoreProcessDeps, openCore } from "./open";

/** Core's background work without HTTP ({@link startCoreBackground}). */
export interface CoreBackground {
  context: CoreContext;
  close(): Promise<void>;
}

/**
 * Core's background work in this process, without HTTP: startup checks, the store, the background
 * tasks and the webhook dispatcher (both regardless of `config.backgroundTasks`: this process exists
 * to run them), publishing their state for the HTTP workers.
 */
export async function startCoreBackground(
  config: OperatorConfig,
  deps: Omit<CoreProcessDeps, "role"> = {},
): Promise<CoreBackground> {
  const { context, logger, release } = await openCore(config, { ...deps }, "background");
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= release().then(() => logger.info("Core background work stopped"));
    return closing;
  };
  return { context, close };
}
