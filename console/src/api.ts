/**
 * Reads of Core's public endpoints (docs/operator-api.md). The console is served by the Core it reads, so
 * every URL is same-origin and relative to the site root. Bodies are typed as the docs define them; the
 * public-params and token shapes come from the sdk, their one definition.
 */
import type { WirePublicParams, WireTokenList } from "../../sdk/public-params";

export type { WirePublicParams, WireTokenList };

/** `GET /core/health` (operator-api.md "GET /core/health"). */
export interface HealthBody {
  status: "ok" | "fail";
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
export async function getJson<T>(path: string, accept: readonly number[] = []): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, { headers: { accept: "application/json" }, cache: "no-store" });
  } catch (error) {
    throw new ApiError(
      `Core cannot be reached (${(error as Error).message}): is it running, and is this page served by it?`,
      null,
      null,
    );
  }
  const body = await readJson(response, path);
  if (response.ok || accept.includes(response.status)) return body as T;
  const { error, code } = (body ?? {}) as { error?: unknown; code?: unknown };
  throw new ApiError(
    `${path}: ${response.status} ${typeof error === "string" ? error : "error"}`,
    response.status,
    typeof code === "string" ? code : null,
  );
}

/** A cycle, or null when Core has not seen it committed (404 `cycle_not_found`). */
export async function getCycle(id: number): Promise<CycleBody | null> {
  try {
    return await getJson<CycleBody>(`/core/cycles/${id}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404 && error.code === "cycle_not_found") return null;
    throw error;
  }
}

/**
 * The highest committed cycle id, or 0 when none. Core lists no cycles, but ids are consecutive from 1
 * (ClearingHouse: `lastCycleId + 1`), so an exponential probe then a binary search finds the last one in
 * O(log n) reads. `from` is a known committed id to start above (0 when none is known).
 */
export async function findLatestCycleId(from: number): Promise<number> {
  let low = from; // known to exist (or 0)
  let step = 1;
  let high = from + step;
  while ((await getCycle(high)) !== null) {
    low = high;
    step *= 2;
    high = low + step;
  }
  // low exists (or is 0), high does not: the last id is in [low, high).
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if ((await getCycle(mid)) !== null) low = mid;
    else high = mid;
  }
  return low;
}
