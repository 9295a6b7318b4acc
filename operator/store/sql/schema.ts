/**
 * The tables the single store implementation (this folder) reads and writes, as the query builder sees
 * them: one schema for both engines (migrations.ts). Column types are what a row holds once read: times,
 * block numbers and sequence numbers are numbers on both engines (PostgreSQL's BIGINT is parsed to a safe
 * JS number, postgres-store.ts), amounts are decimal strings (SQLite TEXT, PostgreSQL NUMERIC read as
 * text), booleans are SQLite's 0/1 or PostgreSQL's true/false ({@link SqlEngine.bool} writes them).
 *
 * Tables of the areas still written per engine (guarantees, cycles, netting;
 * docs/store.md "What remains per engine") are listed with the columns this folder reads only.
 */
import type { Generated } from "kysely";

/** SQLite INTEGER 0/1 or PostgreSQL BOOLEAN. */
export type SqlBoolean = number | boolean;

export interface SiweNoncesTable {
  nonce: string;
  address: string;
  issued_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface RefreshTokensTable {
  token_hash: string;
  family_id: string;
  wallet: string;
  /** JSON array of scope strings. */
  scopes: string;
  issued_at: number;
  expires_at: number;
  rotated_from: string | null;
  rotated_at: number | null;
  revoked_at: number | null;
}

export interface OperatorStateTable {
  key: string;
  value: string;
}

export interface ChainCursorTable {
  id: number;
  block_number: number;
  block_hash: string;
  block_timestamp: number;
  updated_at: number;
}

export interface ChainBlocksTable {
  block_number: number;
  block_hash: string;
  block_timestamp: number;
}

export interface ChainEventsTable {
  tx_hash: string;
  log_index: number;
  block_number: number;
  block_hash: string;
  block_timestamp: number;
  contract: string;
  name: string;
  /** JSON. */
  args: string;
  /** JSON. */
  undo: string;
  applied_at: number;
}

export interface ReservesTable {
  guarantee_id: string;
  user_address: string;
  asset_address: string;
  recipient: string;
  amount: string;
  expires_at: number;
  tx_hash: string;
  block_number: number;
  v1: SqlBoolean;
}

export interface WebhookSubscriptionsTable {
  id: string;
  url: string;
  secret: string;
  /** JSON array of event types (`["*"]`: all). */
  event_types: string;
  description: string | null;
  source: string;
  created_at: number;
}

export interface WebhookEventsTable {
  id: string;
  type: string;
  created_at: number;
  payload: string;
  retracted_at: number | null;
}

export interface WebhookDeliveriesTable {
  /** Assigned by the database (SQLite AUTOINCREMENT, PostgreSQL identity). */
  seq: Generated<number>;
  event_id: string;
  subscription_id: string;
  status: string;
  attempts: Generated<number>;
  next_attempt_at_ms: number | null;
  last_attempt_at: number | null;
  last_error: string | null;
  last_status_code: number | null;
  delivered_at: number | null;
  created_at: number;
}

/** One attempt of a delivery (migration 15). */
export interface WebhookAttemptsTable {
  event_id: string;
  subscription_id: string;
  attempt: number;
  /** Unix seconds when its outcome was recorded. */
  at: number;
  outcome: string;
  status_code: number | null;
  error: string | null;
}

/** A payer's (user, asset) balance; amounts are decimal strings (migration 1). */
export interface CollateralTable {
  user_address: string;
  asset_address: string;
  deposited: string;
  locked: string;
  pending_withdrawal: string;
  updated_at: number;
}

/** The Vault's withdrawal requests as the indexer saw them. */
export interface WithdrawalsTable {
  withdrawal_id: number;
  user_address: string;
  asset_address: string;
  amount: string;
  finalizable_at: number;
  requested_at: number;
  state: string;
  paid: string | null;
  closed_at: number | null;
}

/** The columns of `guarantees` this folder reads (the reserves' join). */
export interface GuaranteesTable {
  guarantee_id: string;
  state: string;
  user_address: string;
  asset_address: string;
  amount: string;
}

export interface Schema {
  siwe_nonces: SiweNoncesTable;
  refresh_tokens: RefreshTokensTable;
  operator_state: OperatorStateTable;
  chain_cursor: ChainCursorTable;
  chain_blocks: ChainBlocksTable;
  chain_events: ChainEventsTable;
  reserves: ReservesTable;
  guarantees: GuaranteesTable;
  collateral: CollateralTable;
  withdrawals: WithdrawalsTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
