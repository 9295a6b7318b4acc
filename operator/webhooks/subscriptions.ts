/**
 * Webhook subscriptions: those made over the admin API (`POST /core/admin/webhooks`) and the sync of the
 * configured list into the store at startup. The rules (URL, secret, event types) are the configuration's,
 * in webhook-config.ts.
 */
import { randomBytes } from "node:crypto";
import { WireError } from "../../sdk/errors";
import type { StoreAreas, WebhookSubscriptionRecord } from "../store";
import type { WebhookSubscriptionConfig } from "../webhook-config";

export * from "../webhook-config";

/** The fields of a subscription made over the admin API (`POST /core/admin/webhooks`), each parsed. */
export interface NewSubscription {
  url: string;
  /** Absent: Core generates one. */
  secret?: string;
  event_types: readonly string[];
  description?: string | null;
}

/** The fields `POST /core/admin/webhooks` takes; any other is refused. */
export const NEW_SUBSCRIPTION_FIELDS = ["url", "secret", "event_types", "description"] as const;

/** A JSON object of {@link NEW_SUBSCRIPTION_FIELDS} only (its fields are parsed one by one). */
export function parseNewSubscriptionBody(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new WireError("body", "must be a JSON object");
  }
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) {
    if (!(NEW_SUBSCRIPTION_FIELDS as readonly string[]).includes(key)) {
      throw new WireError(key, "unknown field");
    }
  }
  return b;
}

/** The record of a new API-made subscription: a fresh id, and a fresh secret unless one was given. */
export function newSubscription(fields: NewSubscription, now: number): WebhookSubscriptionRecord {
  return {
    id: "whk_" + randomBytes(12).toString("hex"),
    url: fields.url,
    secret: fields.secret ?? "whsec_" + randomBytes(32).toString("hex"),
    eventTypes: fields.event_types,
    description: fields.description ?? null,
    source: "api",
    createdAt: now,
  };
}

/**
 * Makes the store's configured subscriptions equal the configuration: new and changed ones are
 * written, ones removed from the configuration are deleted (with their deliveries). Subscriptions
 * created through the admin API are left alone.
 */
export async function syncConfiguredSubscriptions(
  store: StoreAreas<"webhooks">,
  configured: readonly WebhookSubscriptionConfig[],
  now: number,
): Promise<void> {
  await store.transaction(async (tx) => {
    const existing = await tx.webhooks.listWebhookSubscriptions();
    const wanted = new Set(configured.map((c) => c.id));
    for (const s of existing) {
      if (s.source === "config" && !wanted.has(s.id)) await tx.webhooks.deleteWebhookSubscription(s.id);
    }
    for (const c of configured) {
      const previous = existing.find((s) => s.id === c.id);
      if (previous && previous.source === "api") {
        throw new Error(
          `configured webhook id ${c.id} is already used by a subscription made through the API`,
        );
      }
      await tx.webhooks.putWebhookSubscription({
        ...c,
        source: "config",
        createdAt: previous?.createdAt ?? now,
      });
    }
  });
}
