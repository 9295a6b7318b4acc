/**
 * Webhook subscription rules (docs/webhooks.md): endpoint URL, secret, event types, description, and the
 * configured list (`SURETY_WEBHOOKS`, the config file's `webhooks`) that config.ts parses at startup. The
 * admin API applies the same rules (webhooks/subscriptions.ts).
 */
import { createHash } from "node:crypto";
import { isIP } from "node:net";
import { WireError } from "../sdk/errors";
import { isWebhookEventType, WEBHOOK_EVENT_TYPES } from "../sdk/webhooks";

import {
  ALL_EVENT_TYPES,
  MAX_DESCRIPTION_LENGTH,
  MAX_WEBHOOK_SECRET_LENGTH,
  MAX_WEBHOOK_URL_LENGTH,
  MIN_WEBHOOK_SECRET_LENGTH,
} from "../sdk/api-vocabulary";

// The limits are the admin API's (its schema in the sdk holds them).
export {
  ALL_EVENT_TYPES,
  MAX_DESCRIPTION_LENGTH,
  MAX_WEBHOOK_SECRET_LENGTH,
  MAX_WEBHOOK_URL_LENGTH,
  MIN_WEBHOOK_SECRET_LENGTH,
};

/** A subscription as configured (SURETY_WEBHOOKS / the config file's `webhooks`). */
export interface WebhookSubscriptionConfig {
  id: string;
  url: string;
  secret: string;
  eventTypes: readonly string[];
  description: string | null;
}

/** 127.0.0.0/8, ::1 and localhost: plain http is allowed only there (a receiver on the same host). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) return host === "::1" || host === "0:0:0:0:0:0:0:1";
  return false;
}

/** An endpoint URL: absolute, https (http only on loopback), no credentials or fragment. */
export function parseWebhookUrl(raw: unknown, field = "url"): string {
  if (typeof raw !== "string" || raw.trim() === "") throw new WireError(field, "must be a non-empty string");
  const value = raw.trim();
  if (value.length > MAX_WEBHOOK_URL_LENGTH) {
    throw new WireError(field, `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new WireError(field, "must be an absolute URL");
  }
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    throw new WireError(field, "must use https (plain http is allowed only for loopback hosts)");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new WireError(field, "must use https");
  if (url.username !== "" || url.password !== "") throw new WireError(field, "must not carry credentials");
  if (url.hash !== "") throw new WireError(field, "must not have a fragment");
  return url.toString();
}

export function parseWebhookSecret(raw: unknown, field = "secret"): string {
  if (typeof raw !== "string") throw new WireError(field, "must be a string");
  if (raw.length < MIN_WEBHOOK_SECRET_LENGTH || raw.length > MAX_WEBHOOK_SECRET_LENGTH) {
    throw new WireError(
      field,
      `must be ${MIN_WEBHOOK_SECRET_LENGTH} to ${MAX_WEBHOOK_SECRET_LENGTH} characters long`,
    );
  }
  if (!/^[\x21-\x7e]+$/.test(raw)) throw new WireError(field, "must be printable ASCII without spaces");
  return raw;
}

/** A non-empty list of known event types, or `["*"]` (also accepted as the string "*"). */
export function parseEventTypes(raw: unknown, field = "event_types"): readonly string[] {
  if (raw === ALL_EVENT_TYPES) return [ALL_EVENT_TYPES];
  if (!Array.isArray(raw) || raw.length === 0) {
    throw new WireError(field, `must be a non-empty array of event types or "${ALL_EVENT_TYPES}"`);
  }
  const types = raw.map((type, i) => {
    if (type !== ALL_EVENT_TYPES && !isWebhookEventType(type)) {
      throw new WireError(`${field}[${i}]`, `must be one of ${WEBHOOK_EVENT_TYPES.join(", ")} or "*"`);
    }
    return type;
  });
  return types.includes(ALL_EVENT_TYPES) ? [ALL_EVENT_TYPES] : [...new Set(types)];
}

export function parseDescription(raw: unknown, field = "description"): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "string" || raw.length > MAX_DESCRIPTION_LENGTH) {
    throw new WireError(field, `must be a string of at most ${MAX_DESCRIPTION_LENGTH} characters`);
  }
  return raw;
}

function parseId(raw: unknown, field: string): string {
  if (typeof raw !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(raw)) {
    throw new WireError(field, "must be 1 to 64 letters, digits, '_' or '-'");
  }
  return raw;
}

/** Stable id of a configured subscription without an explicit `id` (derived from its URL). */
export function configuredSubscriptionId(url: string): string {
  return "whk_cfg_" + createHash("sha256").update(url).digest("hex").slice(0, 16);
}

/**
 * The configured list: a JSON array (or its text, as in `SURETY_WEBHOOKS`) of
 * `{ id?, url, secret, event_types, description? }`. Throws an Error naming the entry and field.
 */
export function parseWebhookConfig(raw: unknown): readonly WebhookSubscriptionConfig[] {
  let list = raw;
  if (typeof raw === "string") {
    if (raw.trim() === "") return [];
    try {
      list = JSON.parse(raw);
    } catch {
      throw new Error("must be a JSON array of { url, secret, event_types } objects");
    }
  }
  if (!Array.isArray(list)) throw new Error("must be a JSON array of { url, secret, event_types } objects");
  const ids = new Set<string>();
  return Object.freeze(
    list.map((entry: unknown, i) => {
      try {
        if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
          throw new WireError(`[${i}]`, "must be an object");
        }
        const e = entry as Record<string, unknown>;
        for (const key of Object.keys(e)) {
          if (!["id", "url", "secret", "event_types", "description"].includes(key)) {
            throw new WireError(`[${i}].${key}`, "unknown field");
          }
        }
        const url = parseWebhookUrl(e.url, `[${i}].url`);
        const id = e.id === undefined ? configuredSubscriptionId(url) : parseId(e.id, `[${i}].id`);
        if (ids.has(id)) throw new WireError(`[${i}].id`, `duplicate subscription id ${id}`);
        ids.add(id);
        return {
          id,
          url,
          secret: parseWebhookSecret(e.secret, `[${i}].secret`),
          eventTypes: parseEventTypes(e.event_types, `[${i}].event_types`),
          description: parseDescription(e.description, `[${i}].description`),
        };
      } catch (error) {
        throw new Error((error as Error).message);
      }
    }),
  );
}

/** The body of `POST /core/admin/webhooks`; a missing secret is generated (returned once). */
