/**
 * Reads of Core's endpoints (docs/operator-api.md): the public ones, and after a sign-in (session.ts) the
 * ones the signed-in wallet may read, with its bearer token. The console is served by the Core it reads, so
 * every URL is same-origin and relative to the site root. Bodies are typed as the docs define them; the
 * public-params and token shapes come from the sdk, their one definition.
 */
import { GUARANTEE_STATES, type GuaranteeState } from "../../sdk/guarantee-states";
import type { WirePublicParams, WireTokenList } from "../../sdk/public-params";

export type { WirePublicParams, WireTokenList };
// The states Core answers: the sdk holds the one list (sdk/guarantee-states.ts).
export { GUARANTEE_STATES, type GuaranteeState };

export type HealthCheckState = "ok" | "warn" | "off";

/** One of `warnings` of `GET /core/health` (docs/monitoring.md). */
export interface HealthWarning {
  check: string;
  subject: string | null;
  reason: string;
  value: number;
  threshold: number;
}

/** `GET /core/health` (operator-api.md "GET /core/health"). */
export interface HealthBody {
  status: "ok" | "fail";
  checks?: Record<string, HealthCheckState>;
  warnings?: HealthWarning[];
  db: "ok" | "fail";
  chain_rpc: "ok" | "fail";
  indexer: "ok" | "fail" | "off";
  chain_sync: {
    state: "ok" | "starting" | "lagging" | "stale" | "halted" | "off";
    reason: string | null;
    head_block: number | null;
    indexed_block: number | null;
    lag_blocks: number | null;
    max_lag_blocks: number;
    last_synced_at: string | null;
    seconds_since_sync: number | null;
    max_stale_seconds: number;
  };
  leadership?: {
    role: string;
    replica: string | null;
    leader: string | null;
    token: number | null;
    lease_expires_at: string | null;
  };
}

/** `GET /core/clearing/schedule`. */
export interface ScheduleBody {
  chain_time: string | null;
  cycle_length_seconds: number | null;
  commit_delay_seconds: number | null;
  next_cutoff: string | null;
  next_commit_by: string | null;
  seconds_to_cutoff: number | null;
  pending_cycle: {
    cycle_id: number;
    state: "PLANNED" | "SENT";
    cutoff: string;
    planned_at: string;
    commit_tx: string | null;
    sent_at: string | null;
  } | null;
  latest_committed_cycle_id: number;
}

/** `GET /core/guarantees/{id}` (and each item of the list). */
export interface GuaranteeBody {
  guarantee_id: string;
  state: GuaranteeState;
  claims: {
    version: 1 | 2;
    user_address: string;
    recipient_address: string;
    req_id: string;
    amount: string;
    asset_address: string;
    timestamp: number;
    validation_policy?: Record<string, unknown>;
  };
  scheme: string;
  signature: string;
  certificate: { claims: string; signature: string };
  created_at: string;
  updated_at: string;
  cycle_id: number | null;
  excluded_reason: string | null;
  validation_request_hash: string | null;
}

export interface GuaranteeListBody {
  guarantees: GuaranteeBody[];
  next_cursor: string | null;
}

/** `GET /console/api/guarantees` (search): the page, the total of the search, the next cursor. */
export interface GuaranteeSearchBody extends GuaranteeListBody {
  total: number;
}

/** `GET /console/api/session`. */
export interface SessionBody {
  address: string;
  admin: boolean;
  facilitator: boolean;
}

/** `GET /console/api/config`. */
export interface ConsoleConfigBody {
  explorer_url: string | null;
}

/** `GET /console/api/users/{address}/ledger`. */
export interface LedgerBody {
  user_address: string;
  entries: {
    kind:
      | "deposit"
      | "lock"
      | "net_debit"
      | "cover"
      | "withdrawal"
      | "remuneration"
      | "payout"
      | "unclaimed_credit";
    asset_address: string;
    amount: string;
    at: string | null;
    clock: "chain" | "core";
    tx_hash: string | null;
    block_number: number | null;
    cycle_id: number | null;
    guarantee_id: string | null;
    withdrawal_id: string | null;
    status: string | null;
  }[];
  truncated: boolean;
}

/** `GET /core/admin/webhooks/{id}/deliveries/{event_id}`. */
export interface DeliveryDetailBody {
  webhook_id: string;
  delivery: DeliveriesBody["deliveries"][number];
  event: {
    id: string;
    type: string;
    created_at: string;
    retracted_at: string | null;
    payload: unknown;
    payload_bytes: number;
  } | null;
  /** Every recorded attempt, oldest first. */
  attempts: {
    attempt: number;
    at: string;
    outcome: "delivered" | "pending" | "failed";
    status_code: number | null;
    error: string | null;
  }[];
}

export interface TimelineBody {
  guarantee_id: string;
  state: GuaranteeState;
  timeline: {
    kind: string;
    at: string | null;
    clock: "chain" | "core";
    tx_hash: string | null;
    block_number: number | null;
    cycle_id: number | null;
    detail: Record<string, string | number>;
  }[];
}

/** `GET /core/users/{address}/balances`. */
export interface BalancesBody {
  user_address: string;
  balances: {
    asset_address: string;
    symbol: string | null;
    decimals: number | null;
    deposited: string;
    locked: string;
    pending_withdrawal: string;
    reserve_hold: string;
    available: string;
    collateral_factor_bps: number;
  }[];
}

/** `GET /core/users` (admin wallets). */
export interface CollateralListBody {
  balances: {
    user_address: string;
    asset_address: string;
    deposited: string;
    locked: string;
    pending_withdrawal: string;
  }[];
  next_cursor: string | null;
}

/** `GET /core/users/{address}/withdrawals`. */
export interface WithdrawalsBody {
  user_address: string;
  withdrawals: {
    withdrawal_id: string;
    asset_address: string;
    amount: string;
    state: string;
    requested_at: string | null;
    finalizable_at: string | null;
    paid: string | null;
    closed_at: string | null;
  }[];
}

export interface WebhookBacklogBody {
  pending: number;
  failed: number;
  oldest_pending_at: string | null;
}

/** `GET /core/admin/webhooks`. */
export interface WebhooksBody {
  webhooks: {
    id: string;
    url: string;
    event_types: string[];
    description: string | null;
    source: "config" | "api";
    created_at: string;
    backlog: WebhookBacklogBody & { max_pending_attempts: number };
  }[];
  backlog: WebhookBacklogBody;
}

/** `GET /core/admin/webhooks/{id}/deliveries`. */
export interface DeliveriesBody {
  webhook_id: string;
  deliveries: {
    event_id: string;
    event_type: string;
    status: string;
    attempts: number;
    last_error: string | null;
    last_status_code: number | null;
    next_attempt_at: string | null;
    last_attempt_at: string | null;
    delivered_at: string | null;
    created_at: string;
  }[];
  next_cursor: string | null;
}

/** `GET /console/api/cycles`: a page of cycles (each with its cutoff) and how many there are. */
export interface CycleListBody {
  cycles: (CycleBody & { cutoff: string })[];
  total: number;
  next_cursor: string | null;
}

export type DebtorStatus = "OPEN" | "PAID" | "COVERED" | "CHALLENGED" | "ANSWERED" | "VOIDED" | "REFUNDED";

/** `GET /core/cycles/{id}` (operator-api.md "GET /core/cycles/{id}"). */
export interface CycleBody {
  cycle_id: number;
  state: "COMMITTED" | "FINALIZED" | "VETOED";
  planned_by_core: boolean;
  root: string;
  guarantees_root: string;
  challenge_deadline: string;
  answer_deadline: string;
  vetoed_at: string | null;
  committed_at: string;
  committed_block: number;
  commit_tx: string;
  payment_deadline: string;
  default_deadline: string;
  finalized_at: string | null;
  guarantee_count: number;
  totals: { asset_address: string; total_debit: string; total_credit: string }[];
  debtors: {
    asset_address: string;
    debtor: string;
    amount: string;
    status: DebtorStatus;
    covered: string | null;
  }[];
  claims: { asset_address: string; participant: string; amount: string }[];
}

/** A failed read, with what the operator can do about it. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly code: string | null,
  ) {
    super(message);
  }
}

/** Core answered, but not with what the docs promise: the page cannot be trusted to show it. */
async function readJson(response: Response, path: string): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    throw new ApiError(
      `${path} answered ${response.status} with a body that is not JSON`,
      response.status,
      null,
    );
  }
}

/**
 * GET a public JSON endpoint. `accept` lists non-2xx statuses whose body is still the endpoint's shape
 * (health answers 503 with its full body).
 */
export function getJson<T>(path: string, accept: readonly number[] = []): Promise<T> {
  return requestJson<T>(path, {}, accept);
}

/** A JSON request to Core (`init` adds a method, a body, a bearer token); a non-2xx answer throws {@link ApiError}. */
export async function requestJson<T>(
  path: string,
  init: RequestInit,
  accept: readonly number[] = [],
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      ...init,
      headers: { accept: "application/json", ...(init.headers as Record<string, string> | undefined) },
      cache: "no-store",
    });
  } catch (error) {
    throw new ApiError(
      `Core cannot be reached (${(error as Error).message}): is it running, and is this page served by it?`,
      null,
      null,
    );
  }
  if (response.status === 204) return undefined as T;
  const body = await readJson(response, path);
  if (response.ok || accept.includes(response.status)) return body as T;
  const { error, code } = (body ?? {}) as { error?: unknown; code?: unknown };
  throw new ApiError(
    `${path}: ${response.status} ${typeof error === "string" ? error : "error"}`,
    response.status,
    typeof code === "string" ? code : null,
  );
}

/** Committed cycles, newest first, below `before` when given (`GET /console/api/cycles`). */
export function listCycles(limit: number, before: string | null = null): Promise<CycleListBody> {
  return getJson<CycleListBody>(`/console/api/cycles?limit=${limit}${before ? `&before=${before}` : ""}`);
}
