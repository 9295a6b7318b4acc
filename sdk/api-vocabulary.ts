/**
 * The vocabularies and limits Core's API schemas enumerate (sdk/api-*.ts), as plain constants: Core's
 * domain and store read them from here without loading the schemas (and zod) at runtime.
 */

/** The warning checks of `GET /core/health` (docs/monitoring.md). */
export const HEALTH_CHECKS = [
  "webhook_backlog",
  "clearing_cutoff",
  "clearing_commit",
  "cover_slack",
  "bond_margin",
  "bond_refunds_owed",
  "indexer_lag",
  "operator_key",
  "verdict_pins",
] as const;
export type HealthCheckName = (typeof HEALTH_CHECKS)[number];
export const HEALTH_CHECK_STATES = ["ok", "warn", "off"] as const;
export type HealthCheckState = (typeof HEALTH_CHECK_STATES)[number];

/** Shortest webhook secret accepted (characters); generated secrets are much longer. */
export const MIN_WEBHOOK_SECRET_LENGTH = 24;
export const MAX_WEBHOOK_SECRET_LENGTH = 256;
export const MAX_WEBHOOK_URL_LENGTH = 2_048;
export const MAX_DESCRIPTION_LENGTH = 200;
/** Subscribes to every type, including ones added later. */
export const ALL_EVENT_TYPES = "*";
export const WEBHOOK_DELIVERY_STATUSES = ["pending", "delivered", "failed", "cancelled"] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];
/** What a ledger line records (docs/operator-api.md "GET /console/api/users/{address}/ledger"). */
export const LEDGER_ENTRY_KINDS = [
  "deposit",
  "lock",
  "net_debit",
  "cover",
  "withdrawal",
  "remuneration",
  "payout",
  "unclaimed_credit",
] as const;
