/** Webhooks (docs/webhooks.md): event builders, subscriptions, the dispatcher. */
import type { Clock } from "../clock";
import type { OperatorConfig } from "../config";
import type { Logger } from "../logger";
import type { StoreAreas } from "../store";
import { WebhookDispatcher, type WebhookDispatcherOptions } from "./dispatcher";

export * from "./events";
export * from "./subscriptions";
export * from "./dispatcher";

/** The dispatcher with the configured timeout and retry policy. */
export function createWebhookDispatcher(
  deps: { config: OperatorConfig; store: StoreAreas<"webhooks">; clock: Clock; logger: Logger },
  overrides: Partial<WebhookDispatcherOptions> = {},
): WebhookDispatcher {
  const { config } = deps;
  return new WebhookDispatcher({
    store: deps.store,
    clock: deps.clock,
    logger: deps.logger,
    timeoutMs: config.webhookTimeoutMs,
    maxAttempts: config.webhookMaxAttempts,
    backoffBaseSeconds: config.webhookBackoffBaseSeconds,
    backoffMaxSeconds: config.webhookBackoffMaxSeconds,
    ...overrides,
  });
}
