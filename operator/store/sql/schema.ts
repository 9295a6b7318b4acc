/**
 * The tables the single store implementation (this folder) reads and writes, as the query builder sees
 * them: one schema for both engines (migrations.ts). Column types are what a row holds once read: times,
 * block numbers and sequence numbers are numbers on both engines (PostgreSQL's BIGINT is parsed to a safe
 * JS number, postgres-store.ts), amounts are decimal strings (SQLite TEXT, PostgreSQL NUMERIC read as
 * text), booleans are SQLite's 0/1 or PostgreSQL's true/false ({@link SqlEngine.bool} writes them).
 *
 * Every area is written once over these tables (docs/store.md); engine-only columns are marked.
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

/**
 * The issued guarantees (sql/guarantees.ts). `seq`: SQLite takes MAX + 1 in the insert, PostgreSQL an
 * identity. The payable key (sql/payable-keys.ts) is `payable_seq` on SQLite and (`payable_xid`,
 * `payable_seq`) on PostgreSQL; `payable_xid` and `ins_xid` exist on PostgreSQL only.
 */
export interface GuaranteesTable {
  guarantee_id: string;
  seq: Generated<number>;
  version: number;
  user_address: string;
  recipient_address: string;
  req_id: string;
  amount: string;
  asset_address: string;
  timestamp: number;
  /** JSON, null for V1. */
  policy: string | null;
  scheme: string;
  signature: string;
  certificate_claims: string;
  certificate_signature: string;
  state: string;
  created_at: number;
  updated_at: number;
  cycle_id: number | null;
  excluded_reason: string | null;
  validation_request_hash: string | null;
  finalization_signature: Generated<string | null>;
  verdict_pin: Generated<string | null>;
  /** When the V2 lifecycle made it payable on its verdict (wall clock, unix seconds; migration 17). */
  verdict_payable_at: Generated<number | null>;
  /** When Core last sent the verdict's pin (wall clock, unix seconds; migration 18). */
  verdict_pin_at: Generated<number | null>;
  leaf_hash: Buffer | null;
  payable_seq: Generated<number | null>;
  /** PostgreSQL only (xid8, read as text). */
  payable_xid: Generated<string | null>;
  /** PostgreSQL only (xid8, read as text). */
  ins_xid: Generated<string>;
}

export interface ValidationResponsesTable {
  tx_hash: string;
  log_index: number;
  request_hash: string;
  validator: string;
  agent_id: string;
  response: number;
  tag: string;
  block_number: number;
  block_timestamp: number;
}

export interface CyclesTable {
  cycle_id: number;
  state: string;
  root: string;
  tree_dump: string;
  args: string;
  /** JSON array of ids. */
  guarantee_ids: string;
  cutoff: number;
  planned_at: number;
  tx_hash: string | null;
  tx_nonce: number | null;
  raw_tx: string | null;
  sent_at: number | null;
  committed_block: number | null;
  committed_at: number | null;
  payment_deadline: number | null;
  default_deadline: number | null;
  finalized_at: number | null;
  challenge_deadline: number | null;
  answer_deadline: number | null;
  vetoed_at: number | null;
  planned_by_core: SqlBoolean;
}

export interface CycleDebtsTable {
  cycle_id: number;
  asset: string;
  debtor: string;
  amount: string;
  status: string;
  covered: string | null;
  resolved_tx: string | null;
}

export interface CycleClaimsTable {
  cycle_id: number;
  asset: string;
  participant: string;
  amount: string;
  tx_hash: string;
}

export interface CycleDisputesTable {
  cycle_id: number;
  asset: string;
  debtor: string;
  position: number;
  status: string;
  guarantee_id: string | null;
  amount: string | null;
  opened_tx: string;
  resolved_tx: string | null;
}

export interface V2NettingsTable {
  guarantee_id: string;
  cycle_id: number;
  tx_hash: string;
  log_index: number;
  block_number: number;
}

/** A cycle's range of payable keys, (after, upto] (`*_xid`: PostgreSQL only; sql/payable-keys.ts). */
export interface CycleReservationsTable {
  cycle_id: number;
  after_seq: number;
  upto_seq: number;
  after_xid: string;
  upto_xid: string;
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
  validation_responses: ValidationResponsesTable;
  cycles: CyclesTable;
  cycle_debts: CycleDebtsTable;
  cycle_claims: CycleClaimsTable;
  cycle_disputes: CycleDisputesTable;
  v2_nettings: V2NettingsTable;
  cycle_reservations: CycleReservationsTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
