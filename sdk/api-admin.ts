/**
 * Wire shapes of Core's admin webhook endpoints and the console's own API (docs/webhooks.md,
 * docs/console.md), with the limits and vocabularies they are checked by. Components of Core's OpenAPI
 * document (`core-api.ts`).
 */
import { z } from "zod/v4";
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE } from "./webhooks";
import { Address, DateTime } from "./api-common";
import { Guarantee } from "./api-guarantees";
import { Cycle } from "./api-clearing";
import {
  ALL_EVENT_TYPES,
  LEDGER_ENTRY_KINDS,
  MAX_DESCRIPTION_LENGTH,
  MAX_WEBHOOK_SECRET_LENGTH,
  MAX_WEBHOOK_URL_LENGTH,
  MIN_WEBHOOK_SECRET_LENGTH,
  WEBHOOK_DELIVERY_STATUSES,
} from "./api-vocabulary";

export const WebhookDeliveryStatus = z.enum(WEBHOOK_DELIVERY_STATUSES);
export type WebhookDeliveryStatus = z.infer<typeof WebhookDeliveryStatus>;

const EventTypeOrAll = z.enum([...WEBHOOK_EVENT_TYPES, ALL_EVENT_TYPES]);
const WebhookSecret = z
  .string()
  .regex(/^[!-~]+$/)
  .min(MIN_WEBHOOK_SECRET_LENGTH)
  .max(MAX_WEBHOOK_SECRET_LENGTH);
const WebhookDescription = z.string().max(MAX_DESCRIPTION_LENGTH).nullable();

export const WebhookEventTypes = z
  .array(EventTypeOrAll)
  .min(1)
  .meta({ uniqueItems: true })
  .describe('`["*"]`: every type, including ones added later (docs/webhooks.md).');
export type WebhookEventTypes = z.infer<typeof WebhookEventTypes>;

export const NewWebhookSubscription = z.object({
  url: z
    .url()
    .max(MAX_WEBHOOK_URL_LENGTH)
    .describe("`https://` (plain `http://` only for loopback hosts); no credentials, no fragment."),
  event_types: z
    .union([z.array(EventTypeOrAll).min(1), z.literal(ALL_EVENT_TYPES)])
    .describe("Event types to deliver; `*` (or a list containing it) for all."),
  secret: WebhookSecret.describe(
    "HMAC key of `Surety-Signature`; generated (`whsec_` + 64 hex) when absent.",
  ).optional(),
  description: WebhookDescription.optional(),
});
export type NewWebhookSubscription = z.infer<typeof NewWebhookSubscription>;

export const WebhookSubscription = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  url: z.url(),
  event_types: WebhookEventTypes,
  description: WebhookDescription,
  source: z
    .enum(["config", "api"])
    .describe("`config`: from `SURETY_WEBHOOKS` (removable only there); `api`: made here."),
  created_at: DateTime,
});
export type WebhookSubscription = z.infer<typeof WebhookSubscription>;

export const CreatedWebhookSubscription = WebhookSubscription.extend({
  id: z.string().regex(/^whk_[0-9a-f]{24}$/),
  source: z.literal("api"),
  secret: WebhookSecret,
}).describe("The only answer that shows the secret.");
export type CreatedWebhookSubscription = z.infer<typeof CreatedWebhookSubscription>;

export const WebhookBacklog = z.object({
  pending: z.int().min(0).describe("Deliveries still to be sent (incl. retries)."),
  failed: z.int().min(0).describe("Deliveries that gave up after their last attempt."),
  oldest_pending_at: DateTime.nullable().describe(
    "When the oldest pending delivery was created; null when none is pending.",
  ),
  max_pending_attempts: z
    .int()
    .min(0)
    .describe("Most attempts among the pending deliveries (how far into the retries)."),
});
export type WebhookBacklog = z.infer<typeof WebhookBacklog>;

export const ListedWebhookSubscription = WebhookSubscription.extend({ backlog: WebhookBacklog });
export type ListedWebhookSubscription = z.infer<typeof ListedWebhookSubscription>;

export const WebhookSubscriptions = z.object({
  webhooks: z.array(ListedWebhookSubscription),
  backlog: WebhookBacklog.omit({ max_pending_attempts: true }),
});
export type WebhookSubscriptions = z.infer<typeof WebhookSubscriptions>;

export const WebhookDelivery = z.object({
  event_id: z.string().regex(/^evt_[0-9a-f]{32}$/),
  event_type: z
    .enum([...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE])
    .describe("`webhook.test`: an operator's test event (`POST /core/admin/webhooks/{id}/test`)."),
  status: WebhookDeliveryStatus,
  attempts: z.int().min(0).describe("Attempts started so far."),
  last_error: z
    .string()
    .nullable()
    .describe("e.g. `HTTP 503: <first 200 bytes>`, `timeout after 10000 ms`, `network error: …`."),
  last_status_code: z
    .int()
    .min(100)
    .max(999)
    .nullable()
    .describe("HTTP status of the last answer; null before any answer or after a network error."),
  next_attempt_at: DateTime.nullable().describe(
    "When the next attempt may start, to the millisecond; null once delivered, failed or cancelled.",
  ),
  last_attempt_at: DateTime.nullable(),
  delivered_at: DateTime.nullable(),
  created_at: DateTime,
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WebhookDeliveryDetail = z.object({
  webhook_id: z.string(),
  delivery: WebhookDelivery,
  event: z
    .object({
      id: z.string(),
      type: z.string(),
      created_at: DateTime,
      retracted_at: DateTime.nullable(),
      payload: z
        .record(z.string(), z.unknown())
        .describe("The event's envelope, parsed: every attempt sends (and signs) its exact bytes."),
      payload_bytes: z.int().min(2),
    })
    .nullable(),
  attempts: z
    .array(
      z.object({
        attempt: z.int().min(1),
        at: DateTime,
        outcome: z
          .enum(["delivered", "pending", "failed"])
          .describe("`pending`: it failed and another attempt is scheduled; `failed`: the last one."),
        status_code: z.int().nullable(),
        error: z.string().nullable(),
      }),
    )
    .describe("Every recorded attempt, oldest first (one cut by a restart has no record)."),
});
export type WebhookDeliveryDetail = z.infer<typeof WebhookDeliveryDetail>;

export const WebhookDeliveryAction = z.object({
  webhook_id: z.string(),
  delivery: WebhookDelivery,
});
export type WebhookDeliveryAction = z.infer<typeof WebhookDeliveryAction>;

/** A cycle as the console lists it: `GET /core/cycles/{id}` and the cutoff it closed at. */
export const ConsoleCycle = Cycle.extend({
  cutoff: DateTime.describe("The cutoff the cycle closed at."),
});
export type ConsoleCycle = z.infer<typeof ConsoleCycle>;

export const ConsoleCycleList = z.object({
  cycles: z.array(ConsoleCycle),
  total: z.int().min(0).describe("Committed cycles in all (COMMITTED, FINALIZED, VETOED)."),
  next_cursor: z
    .string()
    .regex(/^[1-9][0-9]*$/)
    .nullable(),
});
export type ConsoleCycleList = z.infer<typeof ConsoleCycleList>;

export const GuaranteeSearch = z.object({
  guarantees: z.array(Guarantee),
  total: z.int().min(0).describe("Guarantees the search matches in all."),
  next_cursor: z.string().nullable(),
});
export type GuaranteeSearch = z.infer<typeof GuaranteeSearch>;

export const ConsoleSession = z.object({
  address: Address,
  admin: z.boolean(),
  facilitator: z.boolean(),
});
export type ConsoleSession = z.infer<typeof ConsoleSession>;

export const ConsoleConfig = z.object({
  explorer_url: z
    .url()
    .nullable()
    .describe("`SURETY_EXPLORER_URL`: links are `<url>/tx/<hash>` and `<url>/address/<address>`."),
});
export type ConsoleConfig = z.infer<typeof ConsoleConfig>;

export const LedgerEntry = z.object({
  kind: z.enum(LEDGER_ENTRY_KINDS),
  asset_address: Address,
  amount: z.string().regex(/^(0|[1-9][0-9]*)$/),
  at: DateTime.nullable(),
  clock: z.enum(["chain", "core"]),
  tx_hash: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/)
    .nullable(),
  block_number: z.int().min(0).nullable(),
  cycle_id: z.int().min(1).nullable(),
  guarantee_id: z
    .string()
    .regex(/^0x[0-9a-f]{64}$/)
    .nullable(),
  withdrawal_id: z.string().nullable(),
  status: z.string().nullable(),
});
export type LedgerEntry = z.infer<typeof LedgerEntry>;

export const Ledger = z.object({
  user_address: Address,
  entries: z.array(LedgerEntry),
  truncated: z.boolean(),
});
export type Ledger = z.infer<typeof Ledger>;

export const WebhookDeliveries = z.object({
  webhook_id: z.string(),
  deliveries: z.array(WebhookDelivery),
  next_cursor: z
    .string()
    .regex(/^[1-9][0-9]*$/)
    .nullable(),
});
export type WebhookDeliveries = z.infer<typeof WebhookDeliveries>;
