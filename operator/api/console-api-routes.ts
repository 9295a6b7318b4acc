/**
 * Reads the operator console needs beyond the protocol's endpoints (docs/console.md, docs/operator-api.md
 * "Console reads"), under the console's own prefix `/console/api/`:
 *
 *   GET /console/api/config                     the block explorer the page links to (public)
 *   GET /console/api/cycles?limit&before        committed cycles, newest first, with the total (public)
 *   GET /console/api/session                    who the bearer is: admin, facilitator (bearer)
 *   GET /console/api/guarantees?q&…             search with the total and a cursor (bearer)
 *   GET /console/api/users/:address/ledger      a payer's collateral ledger (bearer)
 *
 * Authority is the protocol endpoints': a wallet reads its own guarantees and collateral, facilitators
 * and admin wallets everything (docs/operator-auth.md "Authority to read").
 */
import type {
  ConsoleConfig,
  ConsoleCycleList,
  ConsoleSession,
  GuaranteeSearch,
  Ledger,
  LedgerEntry,
} from "../../sdk/api-admin";
import { type Request, Router } from "express";
import { WireError } from "../../sdk/errors";
import { formatUint, parseAddress, sameAddress } from "../../sdk/wire";
import { isAdmin, isFacilitator } from "../auth";
import { COMMITTED_CYCLE_STATES } from "../clearing/schedule";
import { isoFromSeconds } from "../clock";
import { guaranteeView } from "../guarantees";
import { GUARANTEE_STATES, type GuaranteeState, PRE_CYCLE_LOCKED_STATES } from "../guarantees/states";
import type { CycleRecord, GuaranteeQuery, Repositories, StoreAreas } from "../store";
import { decodeCursor, encodeCursor, pageSize } from "../store/guarantee-paging";
import { principalOf, requireAccessToken } from "./access-middleware";
import type { RouteModule } from "./context";
import { cycleViews, DEFAULT_CYCLE_PAGE, MAX_CYCLE_PAGE } from "./cycle-routes";
import { forbidden } from "./errors";
import { pathParam, queryParam, validate, validated } from "./validation";
import {
  NOT_AUTHORIZED_FOR_GUARANTEES,
  NOT_AUTHORIZED_FOR_USER,
  PATH_400_CODES,
  SERVER_ERROR,
  USER_READ_FORBIDDEN,
  errorAnswer,
  inPath,
  inQuery,
  jsonAnswer,
  limitParameter,
  mount,
  needsToken,
  operation,
  ref,
} from "./operations";

export const CONSOLE_API_PATH = "/console/api";

/** The console's reads: mounted below, described in Core's OpenAPI document. */
export const CONSOLE_API_OPERATIONS = {
  config: operation("get", `${CONSOLE_API_PATH}/config`, {
    tags: ["console"],
    summary: "The console's settings: the block explorer it links to",
    responses: { "200": jsonAnswer("The settings.", ref("ConsoleConfig")) },
  }),
  session: operation(
    "get",
    `${CONSOLE_API_PATH}/session`,
    needsToken({
      tags: ["console"],
      summary: "Who the bearer is: its address, whether it is an admin wallet or a facilitator",
      responses: {
        "200": jsonAnswer("Answered for every signed-in wallet (no 403).", ref("ConsoleSession")),
      },
    }),
  ),
  cycles: operation("get", `${CONSOLE_API_PATH}/cycles`, {
    tags: ["console"],
    summary: "Committed cycles, newest first, with each one's cutoff and the total",
    parameters: [
      limitParameter(MAX_CYCLE_PAGE, DEFAULT_CYCLE_PAGE),
      {
        name: "before",
        in: "query",
        required: false,
        schema: { type: "integer", minimum: 1 },
        description: "Only cycles with a lower id: the `next_cursor` of the previous page.",
      },
    ],
    responses: {
      "200": jsonAnswer("One page; `next_cursor` is null on the last.", ref("ConsoleCycleList")),
      "400": errorAnswer("`limit` or `before` malformed or repeated.", ["invalid_request"]),
      ...SERVER_ERROR,
    },
  }),
  guarantees: operation(
    "get",
    `${CONSOLE_API_PATH}/guarantees`,
    needsToken({
      tags: ["console"],
      summary: "Search guarantees, newest first, with the total and a cursor",
      parameters: [
        {
          name: "q",
          in: "query",
          required: false,
          schema: { type: "string" },
          description:
            "A guarantee id, a transaction hash (a cycle's commit, a debt's payment, cover or void, a claim: that cycle's guarantees), or an address (payer or recipient).",
        },
        inQuery("payer", "Address"),
        inQuery("recipient", "Address"),
        inQuery("state", "GuaranteeState"),
        inQuery("asset", "Address"),
        { name: "cycle", in: "query", required: false, schema: { type: "integer", minimum: 1 } },
        {
          name: "from",
          in: "query",
          required: false,
          schema: { type: "string" },
          description: "Issued at or after: ISO 8601 (UTC unless a zone is given) or unix seconds.",
        },
        {
          name: "to",
          in: "query",
          required: false,
          schema: { type: "string" },
          description: "Issued at or before (to the second), as `from`.",
        },
        limitParameter(500, 50),
        { name: "cursor", in: "query", required: false, schema: { type: "string" } },
      ],
      responses: {
        "200": jsonAnswer("One page of the search.", ref("GuaranteeSearch")),
        "400": errorAnswer(
          "A parameter malformed or repeated, or `from` after `to` (the message names it).",
          ["invalid_request"],
        ),
        "403": errorAnswer("Neither payer nor recipient is the caller (facilitators and admins excepted).", [
          NOT_AUTHORIZED_FOR_GUARANTEES,
        ]),
        ...SERVER_ERROR,
      },
    }),
  ),
  ledger: operation(
    "get",
    `${CONSOLE_API_PATH}/users/{address}/ledger`,
    needsToken({
      tags: ["console"],
      summary: "A payer's collateral ledger, newest first",
      parameters: [inPath("address", "Address"), inQuery("asset", "Address")],
      responses: {
        "200": jsonAnswer("The ledger.", ref("Ledger")),
        "400": errorAnswer("Malformed address or asset.", ["invalid_request", ...PATH_400_CODES]),
        "403": USER_READ_FORBIDDEN,
        ...SERVER_ERROR,
      },
    }),
  ),
};

/** Most entries of each kind a ledger lists (newest first); `truncated` says when some were left out. */
export const LEDGER_ENTRIES_PER_KIND = 500;

const iso = (seconds: number | null) => (seconds === null ? null : new Date(seconds * 1000).toISOString());

function parseLimit(raw: string): number {
  if (!/^[1-9][0-9]{0,5}$/.test(raw)) throw new WireError("limit", "must be a positive integer");
  return pageSize(Number(raw));
}

function parseCyclePage(raw: string): number {
  const n = /^[0-9]{1,3}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= MAX_CYCLE_PAGE))
    throw new WireError("limit", `must be an integer from 1 to ${MAX_CYCLE_PAGE}`);
  return n;
}

function parsePositiveId(field: string, what: string) {
  return (raw: string): number => {
    if (!/^[1-9][0-9]{0,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
      throw new WireError(field, `must be a positive integer ${what}`);
    }
    return Number(raw);
  };
}

function parseState(raw: string): GuaranteeState {
  if (!(GUARANTEE_STATES as readonly string[]).includes(raw)) {
    throw new WireError("state", `must be one of ${GUARANTEE_STATES.join(", ")}`);
  }
  return raw as GuaranteeState;
}

/** `from` / `to`: ISO 8601 (with a time zone, or UTC) or unix seconds. */
function parseInstant(field: string) {
  return (raw: string): number => {
    if (/^[0-9]{1,12}$/.test(raw)) return Number(raw);
    const ms = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/.test(raw)
      ? Date.parse(/T.*(Z|[+-]\d{2}:\d{2})$/.test(raw) || !raw.includes("T") ? raw : `${raw}Z`)
      : NaN;
    if (Number.isNaN(ms)) {
      throw new WireError(field, "must be an ISO 8601 time (2025-06-15T15:06:40Z) or unix seconds");
    }
    return Math.floor(ms / 1000);
  };
}

/** What `q` searches: a guarantee id or a transaction hash (32 bytes), or a party (an address). */
export type SearchTerm = { kind: "hash"; value: string } | { kind: "address"; value: string };

export function parseSearch(raw: string): SearchTerm {
  const text = raw.trim();
  if (/^0x[0-9a-fA-F]{64}$/.test(text)) return { kind: "hash", value: text.toLowerCase() };
  if (/^0x[0-9a-fA-F]{40}$/.test(text)) return { kind: "address", value: parseAddress(text, "q") };
  throw new WireError(
    "q",
    "must be a guarantee id or a transaction hash (0x and 64 hex digits), or a payer's or recipient's address (0x and 40 hex digits)",
  );
}

const guaranteeSearch = validate(
  queryParam("q", parseSearch),
  queryParam("payer", parseAddress),
  queryParam("recipient", parseAddress),
  queryParam("state", parseState),
  queryParam("asset", parseAddress),
  queryParam("cycle", parsePositiveId("cycle", "cycle id")),
  queryParam("from", parseInstant("from")),
  queryParam("to", parseInstant("to")),
  queryParam("limit", parseLimit),
  queryParam("cursor", decodeCursor),
);

interface SearchQuery {
  q?: SearchTerm;
  payer?: string;
  recipient?: string;
  state?: GuaranteeState;
  asset?: string;
  cycle?: number;
  from?: number;
  to?: number;
  limit?: number;
  cursor?: number;
}

const entry = (fields: Partial<LedgerEntry> & Pick<LedgerEntry, "kind" | "asset_address" | "amount">) =>
  ({
    at: null,
    clock: "chain",
    tx_hash: null,
    block_number: null,
    cycle_id: null,
    guarantee_id: null,
    withdrawal_id: null,
    status: null,
    ...fields,
  }) satisfies LedgerEntry;

export const consoleApiRoutes: RouteModule<
  StoreAreas<"chainJournal" | "collateral" | "cycles" | "guarantees" | "operatorState">
> = (context) => {
  const { store, config } = context;
  const router = Router();
  const authenticated = requireAccessToken(context.accessTokens);
  const readsAll = (req: Request) => {
    const { wallet } = principalOf(req);
    return isFacilitator(config, wallet) || isAdmin(config, wallet);
  };

  mount(router, CONSOLE_API_OPERATIONS.config, (_req, res) => {
    res.json({ explorer_url: config.explorerUrl } satisfies ConsoleConfig);
  });

  mount(router, CONSOLE_API_OPERATIONS.session, authenticated, (req, res) => {
    const { wallet } = principalOf(req);
    res.json({
      address: wallet,
      admin: isAdmin(config, wallet),
      facilitator: isFacilitator(config, wallet),
    } satisfies ConsoleSession);
  });

  mount(
    router,
    CONSOLE_API_OPERATIONS.cycles,
    ...validate(
      queryParam("limit", parseCyclePage),
      queryParam("before", parsePositiveId("before", "cycle id (the next_cursor of the previous page)")),
    ),
    async (req, res) => {
      const { limit = DEFAULT_CYCLE_PAGE, before } = validated<{ limit?: number; before?: number }>(req);
      const page = await store.transaction(async (tx) => {
        const ids = await tx.cycles.listCycleIds(COMMITTED_CYCLE_STATES, {
          beforeId: before,
          limit: limit + 1,
        });
        const shown = ids.slice(0, limit);
        const cycles = await Promise.all(shown.map((id) => tx.cycles.getCycle(id)));
        // Each with its cutoff (Core's clock): the console charts the time from cutoff to commit.
        const shownCycles = cycles.filter((c): c is CycleRecord => c !== null);
        const views = (await cycleViews(tx, shownCycles)).map((view, i) => ({
          ...view,
          cutoff: isoFromSeconds(shownCycles[i].cutoff),
        }));
        const total = await tx.cycles.countCycles(COMMITTED_CYCLE_STATES);
        return { views, total, more: ids.length > limit, last: shown[shown.length - 1] };
      });
      res.json({
        cycles: page.views,
        total: page.total,
        next_cursor: page.more ? String(page.last) : null,
      } satisfies ConsoleCycleList);
    },
  );

  mount(router, CONSOLE_API_OPERATIONS.guarantees, authenticated, ...guaranteeSearch, async (req, res) => {
    const search = validated<SearchQuery & Record<string, unknown>>(req);
    const { wallet } = principalOf(req);
    const own =
      (search.payer !== undefined && sameAddress(search.payer, wallet)) ||
      (search.recipient !== undefined && sameAddress(search.recipient, wallet));
    if (!own && !readsAll(req)) {
      throw forbidden(
        NOT_AUTHORIZED_FOR_GUARANTEES,
        `give payer=${wallet} or recipient=${wallet}: other guarantees are visible to facilitators and admin wallets only`,
      );
    }
    if (search.from !== undefined && search.to !== undefined && search.from > search.to) {
      throw new WireError("from", "must not be later than to");
    }
    const limit = search.limit ?? pageSize(undefined);
    const page = await store.transaction(async (tx) => {
      const query: GuaranteeQuery = {
        user: search.payer,
        recipient: search.recipient,
        states: search.state === undefined ? undefined : [search.state],
        asset: search.asset,
        cycleId: search.cycle,
        createdFrom: search.from,
        // `to` is inclusive to the second.
        createdTo: search.to === undefined ? undefined : search.to + 1,
      };
      if (search.q?.kind === "address") query.party = search.q.value;
      if (search.q?.kind === "hash") {
        // A guarantee id, else a transaction that touched cycles (a commit, a payment, a cover, a claim).
        const byId = { ...query, guaranteeId: search.q.value };
        query.guaranteeId = search.q.value;
        if ((await tx.guarantees.countGuarantees(byId)) === 0) {
          delete query.guaranteeId;
          query.cycleIds = await tx.cycles.cycleIdsOfTx(search.q.value);
        }
      }
      const rows = await tx.guarantees.listGuarantees({
        ...query,
        beforeSeq: search.cursor,
        newestFirst: true,
        limit: limit + 1,
      });
      return { rows, total: await tx.guarantees.countGuarantees(query) };
    });
    const shown = page.rows.slice(0, limit);
    res.json({
      guarantees: shown.map((g) => guaranteeView(g, config.chainId)),
      total: page.total,
      next_cursor: page.rows.length > limit ? encodeCursor(shown[shown.length - 1].seq) : null,
    } satisfies GuaranteeSearch);
  });

  mount(
    router,
    CONSOLE_API_OPERATIONS.ledger,
    authenticated,
    ...validate(pathParam("address", parseAddress), queryParam("asset", parseAddress)),
    async (req, res) => {
      const { address: user, asset } = validated<{ address: string; asset?: string }>(req);
      const { wallet } = principalOf(req);
      if (!sameAddress(wallet, user) && !readsAll(req)) {
        throw forbidden(NOT_AUTHORIZED_FOR_USER, `${wallet} may read only its own collateral`);
      }
      const ledger = await store.transaction((tx) => ledgerOf(tx, user));
      const shown =
        asset === undefined
          ? ledger.entries
          : ledger.entries.filter((e) => sameAddress(e.asset_address, asset));
      res.json({ user_address: user, entries: shown, truncated: ledger.truncated } satisfies Ledger);
    },
  );

  return router;
};

/**
 * A payer's ledger from what the store records: deposits still in the indexer's journal, open locks
 * (guarantees not yet in a cycle), net debits per cycle (paid, open, covered from collateral, voided),
 * withdrawal requests, remunerations paid from its collateral, credits it claimed (payouts) and credits
 * of committed cycles it has not claimed. Newest first; times are chain time except a guarantee's (Core's).
 */
async function ledgerOf(
  tx: Pick<Repositories, "chainJournal" | "collateral" | "cycles" | "guarantees">,
  user: string,
): Promise<{ entries: LedgerEntry[]; truncated: boolean }> {
  const cap = LEDGER_ENTRIES_PER_KIND;
  const [deposits, locks, debts, withdrawals, remunerated, claims, legs] = await Promise.all([
    tx.chainJournal.listChainEventsNamed("Vault", "Deposited"),
    tx.guarantees.listGuarantees({
      user,
      states: PRE_CYCLE_LOCKED_STATES,
      newestFirst: true,
      limit: cap + 1,
    }),
    tx.cycles.listCycleDebts({ debtor: user }),
    tx.collateral.listWithdrawals(user),
    tx.guarantees.listGuarantees({
      user,
      states: ["REMUNERATED", "DEFAULT_REMUNERATED"],
      newestFirst: true,
      limit: cap + 1,
    }),
    tx.cycles.listCycleClaimsOf(user),
    tx.guarantees.listGuarantees({ party: user, inCycle: true, newestFirst: true }),
  ]);
  const entries: LedgerEntry[] = [];
  for (const e of deposits) {
    if (!sameAddress(String(e.args.user), user)) continue;
    entries.push(
      entry({
        kind: "deposit",
        asset_address: parseAddress(String(e.args.asset), "asset"),
        amount: String(e.args.amount),
        at: iso(e.blockTimestamp),
        tx_hash: e.txHash,
        block_number: e.blockNumber,
      }),
    );
  }
  for (const g of locks.slice(0, cap)) {
    entries.push(
      entry({
        kind: "lock",
        asset_address: g.asset,
        amount: formatUint(g.amount),
        at: iso(g.createdAt),
        clock: "core",
        guarantee_id: g.guaranteeId,
        status: g.state,
      }),
    );
  }
  const cycles = new Map<number, CycleRecord | null>();
  const cycleOf = async (id: number) => {
    if (!cycles.has(id)) cycles.set(id, await tx.cycles.getCycle(id));
    return cycles.get(id) ?? null;
  };
  for (const d of debts) {
    const cycle = await cycleOf(d.cycleId);
    entries.push(
      entry({
        kind: d.status === "COVERED" ? "cover" : "net_debit",
        asset_address: d.asset,
        amount: formatUint(d.status === "COVERED" && d.covered !== null ? d.covered : d.amount),
        at: iso(cycle?.committedAt ?? null),
        tx_hash: d.resolvedTx,
        block_number: cycle?.committedBlock ?? null,
        cycle_id: d.cycleId,
        status: d.status,
      }),
    );
  }
  for (const w of withdrawals) {
    entries.push(
      entry({
        kind: "withdrawal",
        asset_address: w.asset,
        amount: formatUint(w.paid ?? w.amount),
        at: iso(w.closedAt ?? w.requestedAt),
        withdrawal_id: String(w.withdrawalId),
        status: w.state,
      }),
    );
  }
  for (const g of remunerated.slice(0, cap)) {
    entries.push(
      entry({
        kind: "remuneration",
        asset_address: g.asset,
        amount: formatUint(g.amount),
        at: iso(g.updatedAt),
        clock: "core",
        guarantee_id: g.guaranteeId,
        status: g.state,
      }),
    );
  }
  for (const c of claims) {
    const cycle = await cycleOf(c.cycleId);
    entries.push(
      entry({
        kind: "payout",
        asset_address: c.asset,
        amount: formatUint(c.amount),
        at: iso(cycle?.committedAt ?? null),
        tx_hash: c.txHash,
        cycle_id: c.cycleId,
        status: "CLAIMED",
      }),
    );
  }
  // Net credit per (cycle, asset): what it received minus what it paid in the cycle's guarantees.
  const net = new Map<string, { cycleId: number; asset: string; amount: bigint }>();
  for (const g of legs) {
    const key = `${g.cycleId}:${g.asset}`;
    const position = net.get(key) ?? { cycleId: g.cycleId!, asset: g.asset, amount: 0n };
    if (sameAddress(g.recipient, user)) position.amount += g.amount;
    if (sameAddress(g.user, user)) position.amount -= g.amount;
    net.set(key, position);
  }
  for (const p of net.values()) {
    if (p.amount <= 0n || claims.some((c) => c.cycleId === p.cycleId && sameAddress(c.asset, p.asset)))
      continue;
    const cycle = await cycleOf(p.cycleId);
    if (!cycle || (cycle.state !== "COMMITTED" && cycle.state !== "FINALIZED")) continue;
    entries.push(
      entry({
        kind: "unclaimed_credit",
        asset_address: p.asset,
        amount: formatUint(p.amount),
        at: iso(cycle.committedAt),
        tx_hash: cycle.txHash,
        block_number: cycle.committedBlock,
        cycle_id: p.cycleId,
        status: "UNCLAIMED",
      }),
    );
  }
  entries.sort((a, b) => (b.at ?? "").localeCompare(a.at ?? ""));
  return { entries, truncated: locks.length > cap || remunerated.length > cap };
}
