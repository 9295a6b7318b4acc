/**
 * Reads of Core's endpoints (docs/operator-api.md): the public ones, and after a sign-in (session.ts) the
 * ones the signed-in wallet may read, with its bearer token. The console is served by the Core it reads, so
 * every URL is same-origin and relative to the site root. Every body's type is inferred from the sdk's
 * schema of it (sdk/api-*.ts), the one definition Core answers with and its OpenAPI document is generated
 * from; only types are imported, so the bundle carries no schema code.
 */
import type {
  Balances,
  Guarantee,
  GuaranteeList,
  GuaranteeTimeline,
  Withdrawals,
  CollateralList,
} from "../../sdk/api-guarantees";
import type { Cycle, ClearingSchedule } from "../../sdk/api-clearing";
import type { Health, HealthWarning } from "../../sdk/api-public";
import type { HealthCheckState } from "../../sdk/api-vocabulary";
import type {
  ConsoleConfig,
  ConsoleCycleList,
  ConsoleSession,
  GuaranteeSearch,
  Ledger,
  WebhookDeliveries,
  WebhookDeliveryDetail,
  WebhookSubscriptions,
} from "../../sdk/api-admin";
import { GUARANTEE_STATES, type GuaranteeState } from "../../sdk/guarantee-states";
import type { WirePublicParams, WireTokenList } from "../../sdk/public-params";

export type { WirePublicParams, WireTokenList, HealthCheckState, HealthWarning };
// The states Core answers: the sdk holds the one list (sdk/guarantee-states.ts).
export { GUARANTEE_STATES, type GuaranteeState };

/** `GET /core/health` (operator-api.md "GET /core/health"). */
export type HealthBody = Health;
/** `GET /core/clearing/schedule`. */
export type ScheduleBody = ClearingSchedule;
/** `GET /core/guarantees/{id}` (and each item of the list). */
export type GuaranteeBody = Guarantee;
export type GuaranteeListBody = GuaranteeList;
/** `GET /console/api/guarantees` (search): the page, the total of the search, the next cursor. */
export type GuaranteeSearchBody = GuaranteeSearch;
/** `GET /console/api/session`. */
export type SessionBody = ConsoleSession;
/** `GET /console/api/config`. */
export type ConsoleConfigBody = ConsoleConfig;
/** `GET /console/api/users/{address}/ledger`. */
export type LedgerBody = Ledger;
/** `GET /core/admin/webhooks/{id}/deliveries/{event_id}`. */
export type DeliveryDetailBody = WebhookDeliveryDetail;
/** `GET /core/guarantees/{id}/timeline`. */
export type TimelineBody = GuaranteeTimeline;
/** `GET /core/users/{address}/balances`. */
export type BalancesBody = Balances;
/** `GET /core/users` (admin wallets). */
export type CollateralListBody = CollateralList;
/** `GET /core/users/{address}/withdrawals`. */
export type WithdrawalsBody = Withdrawals;
export type WebhookBacklogBody = WebhookSubscriptions["backlog"];
/** `GET /core/admin/webhooks`. */
export type WebhooksBody = WebhookSubscriptions;
/** `GET /core/admin/webhooks/{id}/deliveries`. */
export type DeliveriesBody = WebhookDeliveries;
/** `GET /console/api/cycles`: a page of cycles (each with its cutoff) and how many there are. */
export type CycleListBody = ConsoleCycleList;
/** `GET /core/cycles/{id}` (operator-api.md "GET /core/cycles/{id}"). */
export type CycleBody = Cycle;
export type DebtorStatus = Cycle["debtors"][number]["status"];

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
