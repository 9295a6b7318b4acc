/**
 * The console's single page: a hash router over the views, fed by one poller. Every poll reads Core's
 * public endpoints (health, public params, clearing schedule, newest cycles; tokens once) and, once a
 * wallet has signed in (session.ts), what the current view shows of its data. Polling, not SSE: Core has
 * no event stream, and a few cheap reads every 2 s are light for Core. Each view has a control part (forms:
 * rendered when the view is entered, so typing survives the polls) and a content part (rendered per poll).
 */
import "./style.css";
import {
  ApiError,
  type BalancesBody,
  type CollateralListBody,
  type ConsoleConfigBody,
  type CycleBody,
  type CycleListBody,
  type DeliveriesBody,
  type DeliveryDetailBody,
  getJson,
  type GuaranteeBody,
  type GuaranteeSearchBody,
  type HealthBody,
  type LedgerBody,
  listCycles,
  type ScheduleBody,
  type TimelineBody,
  type WebhooksBody,
  type WirePublicParams,
  type WireTokenList,
  type WithdrawalsBody,
} from "./api";
import { barChart, lineChart, metricSum } from "./charts";
import { setExplorer } from "./links";
import { type CertificateCheck, checkCertificate } from "./certificate";
import { renderAddressForm, renderCollateral, renderCollateralList } from "./collateral";
import { renderCycle, renderCycles } from "./cycles";
import { h, stateMessage } from "./dom";
import { assetTable } from "./format";
import {
  effectiveFilter,
  FILTER_FIELDS,
  filterQuery,
  GUARANTEE_PAGE,
  type GuaranteeFilter,
  guaranteesCsv,
  renderFilterForm,
  renderGuaranteeList,
  renderGuaranteePage,
} from "./guarantees";
import { renderHealth } from "./health";
import { authedJson, currentSession, type Session, signIn, signOut } from "./session";
import { renderDelivery, renderWebhooks, type WebhookActions } from "./webhooks";

/** How often the page reads Core. */
const POLL_MS = 2_000;
/** Cycles shown (the newest ones). */
const CYCLES_SHOWN = 10;
/** Deliveries shown per webhook subscription. */
const DELIVERIES_SHOWN = 10;

/** Samples kept for the line charts (one per poll: about two minutes). */
const SAMPLES_KEPT = 60;
/** Most rows a CSV export reads (pages of 500). */
const CSV_MAX_ROWS = 20_000;

const VIEWS = [
  "health",
  "cycles",
  "cycle",
  "guarantees",
  "guarantee",
  "collateral",
  "webhooks",
  "delivery",
] as const;
type ViewName = (typeof VIEWS)[number] | "not-found";

interface Route {
  view: ViewName;
  /** The id of `#/guarantee/<id>`, `#/cycle/<id>`, `#/delivery/<webhook>/<event>` (the webhook). */
  id: string | null;
  /** The event id of `#/delivery/<webhook>/<event>`. */
  sub: string | null;
  /** The hash as typed, for the not-found view. */
  hash: string;
  query: URLSearchParams;
  /** The hash itself: controls are rebuilt when it changes. */
  key: string;
}

function currentRoute(): Route {
  const hash = location.hash.replace(/^#\/?/, "");
  const [path, search = ""] = hash.split("?");
  const [head, id = null, sub = null] = path.split("/");
  // An empty hash is the default view; anything else unknown says so instead of showing Health.
  const view: ViewName =
    head === "" ? "health" : (VIEWS as readonly string[]).includes(head) ? (head as ViewName) : "not-found";
  return {
    view,
    id: id === null ? null : decodeURIComponent(id),
    sub,
    hash,
    query: new URLSearchParams(search),
    key: `${location.hash}|${currentSession()?.address ?? ""}`,
  };
}

/** What the current view read for the signed-in wallet (null: not read yet). */
type Private =
  | { view: "guarantees"; list: GuaranteeSearchBody; filter: GuaranteeFilter }
  | { view: "guarantee"; guarantee: GuaranteeBody; timeline: TimelineBody }
  | { view: "collateral"; balances: BalancesBody; withdrawals: WithdrawalsBody; ledger: LedgerBody }
  | { view: "collateral-list"; list: CollateralListBody }
  | { view: "webhooks"; list: WebhooksBody; deliveries: Map<string, DeliveriesBody> }
  | { view: "delivery"; detail: DeliveryDetailBody };

/** One poll's figures for the line charts (null: Core exports no sample of it). */
interface Sample {
  at: number;
  issued: number | null;
  backlog: number | null;
  coverSlack: number | null;
}

interface State {
  health: HealthBody | null;
  params: WirePublicParams | null;
  tokens: WireTokenList | null;
  schedule: ScheduleBody | null;
  cycles: CycleListBody["cycles"];
  cyclesTotal: number;
  cyclesNext: string | null;
  cyclesLoaded: boolean;
  /** `#/cycle/<id>`: that cycle (public), or the error reading it. */
  cycle: CycleBody | ApiError | null;
  samples: Sample[];
  /** The outcome of the operator's last action (retry, test event, export), shown above the view. */
  notice: { kind: "ok" | "error"; text: string } | null;
  /** Admin only: the webhook backlog totals for Health. */
  backlog: WebhooksBody["backlog"] | null;
  private: Private | null;
  /** For the view's own data: an error of the signed-in reads (e.g. 403, 404), kept apart from Core's reachability. */
  privateError: ApiError | Error | null;
  privateKey: string | null;
  checks: Map<string, CertificateCheck | "pending">;
  error: string | null;
  lastError: unknown;
  updatedAt: Date | null;
  signInError: string | null;
}

const state: State = {
  health: null,
  params: null,
  tokens: null,
  schedule: null,
  cycles: [],
  cyclesTotal: 0,
  cyclesNext: null,
  cyclesLoaded: false,
  cycle: null,
  samples: [],
  notice: null,
  backlog: null,
  private: null,
  privateError: null,
  privateKey: null,
  checks: new Map(),
  error: null,
  lastError: null,
  updatedAt: null,
  signInError: null,
};

function errorAdvice(error: unknown): string[] {
  if (error instanceof ApiError && error.status === null) {
    return [
      "Start Core (npm run devnet, or npm run operator) and keep this page open: it retries by itself.",
    ];
  }
  return ["Core's log (JSON, by request id) says more. This page retries every few seconds."];
}

/** The signed-in reads of the current view. */
async function readPrivate(route: Route, session: Session): Promise<Private | null> {
  switch (route.view) {
    case "guarantees": {
      const filter: GuaranteeFilter = {};
      for (const field of FILTER_FIELDS) {
        const value = route.query.get(field);
        if (value) filter[field] = value;
      }
      const applied = effectiveFilter(filter, session);
      const cursor = route.query.get("cursor");
      const list = await authedJson<GuaranteeSearchBody>(
        `/console/api/guarantees?${filterQuery(applied)}&limit=${GUARANTEE_PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      return { view: "guarantees", list, filter: applied };
    }
    case "guarantee": {
      if (!route.id) return null;
      const [guarantee, timeline] = await Promise.all([
        authedJson<GuaranteeBody>(`/core/guarantees/${route.id}`),
        authedJson<TimelineBody>(`/core/guarantees/${route.id}/timeline`),
      ]);
      return { view: "guarantee", guarantee, timeline };
    }
    case "collateral": {
      // An admin without an address to search sees every payer.
      if (session.admin && !route.query.get("address")) {
        return { view: "collateral-list", list: await authedJson<CollateralListBody>("/core/users") };
      }
      const address = route.query.get("address") || session.address;
      const [balances, withdrawals, ledger] = await Promise.all([
        authedJson<BalancesBody>(`/core/users/${address}/balances`),
        authedJson<WithdrawalsBody>(`/core/users/${address}/withdrawals`),
        authedJson<LedgerBody>(`/console/api/users/${address}/ledger`),
      ]);
      return { view: "collateral", balances, withdrawals, ledger };
    }
    case "webhooks": {
      if (!session.admin) return null;
      const list = await authedJson<WebhooksBody>("/core/admin/webhooks");
      const pages = await Promise.all(
        list.webhooks.map((w) =>
          authedJson<DeliveriesBody>(
            `/core/admin/webhooks/${encodeURIComponent(w.id)}/deliveries?limit=${DELIVERIES_SHOWN}`,
          ),
        ),
      );
      return { view: "webhooks", list, deliveries: new Map(pages.map((p) => [p.webhook_id, p])) };
    }
    case "delivery": {
      if (!session.admin || !route.id || !route.sub) return null;
      const detail = await authedJson<DeliveryDetailBody>(
        `/core/admin/webhooks/${encodeURIComponent(route.id)}/deliveries/${encodeURIComponent(route.sub)}`,
      );
      return { view: "delivery", detail };
    }
    default:
      return null;
  }
}

/** Starts the in-browser certificate check of a guarantee once per certificate. */
function startCheck(g: GuaranteeBody): void {
  const key = `${g.guarantee_id}:${g.certificate.signature}`;
  if (state.checks.has(key) || !state.params) return;
  state.checks.set(key, "pending");
  void checkCertificate(g, state.params.public_key)
    .catch((error: unknown) => ({
      ok: false,
      lines: [`The check could not run: ${(error as Error).message}`],
    }))
    .then((result) => {
      state.checks.set(key, result);
      render();
    });
}

let configRead = false;

/** Reads `/metrics` and keeps this poll's figures for the charts; a Core without metrics leaves gaps. */
async function sampleMetrics(): Promise<void> {
  let text: string | null = null;
  try {
    const response = await fetch("/metrics", { cache: "no-store" });
    if (response.ok) text = await response.text();
  } catch {
    text = null;
  }
  state.samples.push({
    at: Date.now(),
    issued: text === null ? null : metricSum(text, "surety_guarantees_issued_total"),
    backlog: text === null ? null : metricSum(text, "surety_webhook_backlog_pending"),
    // The slack has a sample only while some debt awaits a cover.
    coverSlack:
      text === null || !metricSum(text, "surety_keeper_debts_awaiting_cover")
        ? null
        : metricSum(text, "surety_keeper_cover_slack_seconds"),
  });
  if (state.samples.length > SAMPLES_KEPT) state.samples.shift();
}

/** The Health view's charts: issuance per second and the backlog from the samples, cycles from the API. */
function renderCharts(): HTMLElement {
  const rates: (number | null)[] = state.samples.slice(1).map((sample, i) => {
    const before = state.samples[i];
    if (sample.issued === null || before.issued === null) return null;
    return Math.max(0, sample.issued - before.issued) / Math.max(0.001, (sample.at - before.at) / 1000);
  });
  const newestFirst = [...state.cycles].reverse();
  return h(
    "section",
    { class: "charts", "data-testid": "charts" },
    h("h3", {}, "Trends"),
    h(
      "div",
      { class: "chart-grid" },
      lineChart("Issuance", "guarantees/s", rates, "chart-issuance", "from the second read on"),
      barChart(
        "Cycle size",
        "guarantees",
        newestFirst.map((c) => ({ label: `cycle #${c.cycle_id}`, value: c.guarantee_count })),
        "chart-cycle-size",
      ),
      barChart(
        "Time to commit",
        "s after the cutoff",
        // A cycle Core knows from its commit only has a commit time (`committed_at` null otherwise).
        newestFirst.flatMap((c) =>
          c.committed_at === null
            ? []
            : [
                {
                  label: `cycle #${c.cycle_id}`,
                  value: (Date.parse(c.committed_at) - Date.parse(c.cutoff)) / 1000,
                },
              ],
        ),
        "chart-commit-time",
      ),
      lineChart(
        "Cover slack",
        "s before the default deadline",
        state.samples.map((s) => s.coverSlack),
        "chart-cover-slack",
        "no debt awaiting a cover",
      ),
      lineChart(
        "Webhook backlog",
        "pending",
        state.samples.map((s) => s.backlog),
        "chart-backlog",
      ),
    ),
    h(
      "p",
      { class: "muted" },
      "Issuance, cover slack and backlog are sampled from /metrics at each read while this view is open (about two minutes kept); cycle size and time to commit are the newest cycles'.",
    ),
  );
}

/** The operator's webhook actions: each says what Core answered, then the page reads again. */
const webhookActions: WebhookActions = {
  retry(webhookId, eventId) {
    act(
      authedJson(
        `/core/admin/webhooks/${encodeURIComponent(webhookId)}/deliveries/${encodeURIComponent(eventId)}/retry`,
        "POST",
      ),
      `Delivery of ${eventId} to ${webhookId} queued again: it is sent on the dispatcher's next round.`,
    );
  },
  test(webhookId) {
    act(
      authedJson<{ delivery: { event_id: string } }>(
        `/core/admin/webhooks/${encodeURIComponent(webhookId)}/test`,
        "POST",
      ),
      (body) => `Test event ${body.delivery.event_id} queued for ${webhookId}.`,
    );
  },
};

function act<T>(work: Promise<T>, done: string | ((body: T) => string)): void {
  work
    .then((body) => {
      state.notice = { kind: "ok", text: typeof done === "string" ? done : done(body) };
    })
    .catch((error: unknown) => {
      state.notice = { kind: "error", text: (error as Error).message };
    })
    .finally(() => {
      controlsKey = null;
      kick();
    });
}

/** Every guarantee the current search finds (pages of 500, at most {@link CSV_MAX_ROWS}), as a CSV download. */
async function exportGuarantees(route: Route, session: Session): Promise<void> {
  const filter: GuaranteeFilter = {};
  for (const field of FILTER_FIELDS) {
    const value = route.query.get(field);
    if (value) filter[field] = value;
  }
  const query = filterQuery(effectiveFilter(filter, session));
  const rows: GuaranteeBody[] = [];
  let cursor: string | null = null;
  do {
    const page: GuaranteeSearchBody = await authedJson<GuaranteeSearchBody>(
      `/console/api/guarantees?${query}&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    rows.push(...page.guarantees);
    cursor = page.next_cursor;
  } while (cursor && rows.length < CSV_MAX_ROWS);
  const blob = new Blob([guaranteesCsv(rows)], { type: "text/csv" });
  const link = h("a", {
    href: URL.createObjectURL(blob),
    download: `surety-guarantees-${new Date().toISOString().replace(/[:.]/g, "-")}.csv`,
  });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  state.notice = {
    kind: "ok",
    text: `Exported ${rows.length} guarantee${rows.length === 1 ? "" : "s"}${cursor ? ` (the first ${rows.length}: narrow the search for the rest)` : ""}.`,
  };
  render();
}

async function refresh(): Promise<void> {
  const route = currentRoute();
  try {
    // Health answers 503 with its full body when a dependency fails: that is data, not an error.
    const [health, params, schedule, cycles] = await Promise.all([
      getJson<HealthBody>("/core/health", [503]),
      getJson<WirePublicParams>("/core/public-params"),
      getJson<ScheduleBody>("/core/clearing/schedule"),
      listCycles(CYCLES_SHOWN, route.view === "cycles" ? route.query.get("before") : null),
    ]);
    state.tokens ??= await getJson<WireTokenList>("/core/tokens");
    if (!configRead) {
      setExplorer((await getJson<ConsoleConfigBody>("/console/api/config")).explorer_url);
      configRead = true;
    }
    Object.assign(state, {
      health,
      params,
      schedule,
      cycles: cycles.cycles,
      cyclesTotal: cycles.total,
      cyclesNext: cycles.next_cursor,
      cyclesLoaded: true,
    });
    if (route.view === "cycle" && route.id) {
      state.cycle = await getJson<CycleBody>(`/core/cycles/${encodeURIComponent(route.id)}`).catch(
        (error: unknown) =>
          error instanceof ApiError && error.status !== null ? error : Promise.reject(error),
      );
    }
    if (route.view === "health") await sampleMetrics();
    state.error = null;
    state.lastError = null;
    state.updatedAt = new Date();
  } catch (error) {
    state.error = error instanceof Error ? error.message : String(error);
    state.lastError = error;
    render();
    return;
  }
  const session = currentSession();
  try {
    state.backlog =
      session?.admin && route.view === "health"
        ? (await authedJson<WebhooksBody>("/core/admin/webhooks")).backlog
        : session?.admin
          ? state.backlog
          : null;
    const data = session ? await readPrivate(route, session) : null;
    if (route.key === currentRoute().key) {
      state.private = data;
      state.privateError = null;
      state.privateKey = route.key;
      if (data?.view === "guarantee") startCheck(data.guarantee);
    }
  } catch (error) {
    if (route.key === currentRoute().key) {
      state.private = null;
      state.privateError = error instanceof Error ? error : new Error(String(error));
      state.privateKey = route.key;
    }
  }
  render();
}

function renderSession(): void {
  const box = document.getElementById("session");
  if (!box) return;
  const session = currentSession();
  if (!session) {
    const button = h("button", { type: "button", "data-testid": "sign-in" }, "Sign in with wallet");
    button.addEventListener("click", () => {
      state.signInError = null;
      signIn()
        .then(() => kick())
        .catch((error: unknown) => {
          state.signInError =
            error instanceof ApiError ? `Sign-in refused: ${error.message}` : (error as Error).message;
          render();
        });
    });
    box.replaceChildren(button);
    return;
  }
  const out = h("button", { type: "button", "data-testid": "sign-out" }, "Sign out");
  out.addEventListener("click", () => {
    void signOut().then(() => {
      state.private = null;
      state.backlog = null;
      kick();
    });
  });
  box.replaceChildren(
    h(
      "span",
      { "data-testid": "signed-in-as", title: session.address },
      `${session.address.slice(0, 6)}…${session.address.slice(-4)}`,
      session.admin ? " (admin)" : "",
    ),
    " ",
    out,
  );
}

const PRIVATE_VIEWS: Partial<Record<ViewName, string>> = {
  guarantees: "guarantees",
  guarantee: "this guarantee",
  collateral: "collateral",
  webhooks: "webhook subscriptions",
  delivery: "this webhook delivery",
};

let controlsKey: string | null = null;

/** Titles of the views whose heading sits above their controls. */
const TITLES: Partial<Record<ViewName, string>> = {
  guarantees: "Guarantees",
  collateral: "Collateral",
  webhooks: "Webhooks",
};

function renderControls(route: Route, session: Session | null): Node[] {
  const title = TITLES[route.view];
  return [...(title ? [h("h2", {}, title)] : []), ...renderForms(route, session)];
}

function renderForms(route: Route, session: Session | null): Node[] {
  if (!session) return [];
  if (route.view === "guarantees") {
    const filter: GuaranteeFilter = {};
    for (const field of FILTER_FIELDS) filter[field] = route.query.get(field) ?? undefined;
    return [
      renderFilterForm(
        filter,
        session,
        (next) => (location.hash = `#/guarantees?${filterQuery(next)}`),
        () => {
          exportGuarantees(route, session).catch((error: unknown) => {
            state.notice = { kind: "error", text: `Export failed: ${(error as Error).message}` };
            render();
          });
        },
      ),
    ];
  }
  if (route.view === "collateral") {
    const address = route.query.get("address") || (session.admin ? "" : session.address);
    return [renderAddressForm(address, session, (next) => (location.hash = `#/collateral?address=${next}`))];
  }
  return [];
}

function privateContent(route: Route, session: Session | null): Node[] {
  const what = PRIVATE_VIEWS[route.view]!;
  if (!session) {
    return [
      stateMessage(
        "empty",
        `Sign in to see ${what}.`,
        "Public data (health, cycles, roots, proofs) needs no sign-in. A payer or recipient signs in with its wallet (Sign-In with Ethereum) and sees its own data; an admin wallet (SURETY_ADMIN_WALLETS) sees everything.",
      ),
    ];
  }
  if ((route.view === "webhooks" || route.view === "delivery") && !session.admin) {
    return [
      stateMessage(
        "empty",
        "Webhook subscriptions are visible to admin wallets only.",
        "Sign in with a wallet listed in SURETY_ADMIN_WALLETS.",
      ),
    ];
  }
  if (state.privateKey !== route.key) return [stateMessage("loading", `Loading ${what}…`)];
  const failure = state.privateError;
  if (failure) {
    const status = failure instanceof ApiError ? failure.status : null;
    const advice =
      status === 403
        ? "Your wallet may read only its own data: search your own address, or sign in with an admin wallet."
        : status === 404
          ? "Either no such guarantee exists, or your wallet is neither its payer nor its recipient."
          : status === 400
            ? "Check the value the message names (above), then apply the filters again."
            : status === 401
              ? "Sign in again."
              : "Core's log says more; this page retries every few seconds.";
    return [stateMessage("error", failure.message, advice)];
  }
  const assets = assetTable(state.tokens);
  const data = state.private;
  if (!data) return [];
  switch (data.view) {
    case "guarantees": {
      const page = Number(route.query.get("page") ?? "1");
      const position = {
        cursor: route.query.get("cursor"),
        page: Number.isInteger(page) && page > 0 ? page : 1,
      };
      const base = filterQuery(data.filter);
      return [
        renderGuaranteeList(data.list, data.filter, position, assets, (cursor, n) =>
          cursor === null
            ? `#/guarantees?${base}`
            : `#/guarantees?${base}${base ? "&" : ""}cursor=${encodeURIComponent(cursor)}&page=${n}`,
        ),
      ];
    }
    case "guarantee": {
      const g = data.guarantee;
      const check = state.checks.get(`${g.guarantee_id}:${g.certificate.signature}`) ?? "pending";
      return [renderGuaranteePage(g, data.timeline, check, state.params, assets)];
    }
    case "collateral":
      return [renderCollateral(data.balances, data.withdrawals, data.ledger, assets)];
    case "collateral-list":
      return [renderCollateralList(data.list, assets)];
    case "webhooks":
      return [renderWebhooks(data.list, data.deliveries, webhookActions)];
    case "delivery":
      return [renderDelivery(data.detail, webhookActions)];
  }
}

function render(): void {
  const route = currentRoute();
  const session = currentSession();
  for (const link of document.querySelectorAll<HTMLAnchorElement>("nav a")) {
    link.classList.toggle(
      "active",
      link.dataset.view === route.view ||
        (route.view === "guarantee" && link.dataset.view === "guarantees") ||
        (route.view === "cycle" && link.dataset.view === "cycles") ||
        (route.view === "delivery" && link.dataset.view === "webhooks"),
    );
  }
  renderSession();
  const updated = document.getElementById("updated");
  if (updated) updated.textContent = state.updatedAt ? `updated ${state.updatedAt.toLocaleTimeString()}` : "";
  const main = document.getElementById("view");
  const controls = document.getElementById("controls");
  const content = document.getElementById("content");
  if (!main || !controls || !content) return;
  if (controlsKey !== route.key) {
    controlsKey = route.key;
    controls.replaceChildren(...renderControls(route, session));
  }
  const parts: Node[] = [];
  if (state.notice) {
    parts.push(
      h(
        "div",
        {
          class: `state ${state.notice.kind === "ok" ? "ok" : "error"}`,
          role: "status",
          "data-testid": "notice",
        },
        h("p", {}, state.notice.text),
      ),
    );
  }
  if (state.signInError)
    parts.push(stateMessage("error", state.signInError, "Unlock the wallet and try again."));
  if (state.error) {
    const stale = state.updatedAt
      ? [`Below: the last data read, at ${state.updatedAt.toLocaleTimeString()}; it may be out of date.`]
      : [];
    parts.push(
      stateMessage("error", `Cannot read Core: ${state.error}`, ...errorAdvice(state.lastError), ...stale),
    );
  }
  const latest = state.cycles[0] ?? null;
  if (route.view === "health") {
    if (state.health && state.params) {
      parts.push(
        renderHealth({
          health: state.health,
          params: state.params,
          schedule: state.schedule,
          latestCycle: latest,
          backlog: state.backlog,
          signedIn: session !== null,
          charts: renderCharts(),
        }),
      );
    } else if (!state.error) parts.push(stateMessage("loading", "Loading Core's health…"));
  } else if (route.view === "cycles") {
    if (state.cyclesLoaded) {
      const page = Number(route.query.get("page") ?? "1");
      parts.push(
        renderCycles(
          state.cycles,
          state.cyclesTotal,
          state.cyclesNext,
          { before: route.query.get("before"), page: Number.isInteger(page) && page > 0 ? page : 1 },
          assetTable(state.tokens),
          state.params?.protocol_timings?.cycle_length_seconds ?? null,
        ),
      );
    } else if (!state.error) parts.push(stateMessage("loading", "Looking for committed cycles…"));
  } else if (route.view === "cycle") {
    const cycle = state.cycle;
    if (cycle instanceof ApiError) {
      parts.push(
        stateMessage(
          "error",
          cycle.message,
          cycle.status === 404
            ? "No committed cycle has this id (a planned one shows once its commit is indexed)."
            : "Check the cycle id in the address.",
        ),
      );
    } else if (cycle && String(cycle.cycle_id) === route.id) {
      parts.push(
        h(
          "section",
          { "data-view": "cycle" },
          h("p", {}, h("a", { href: "#/cycles" }, "« Cycles")),
          renderCycle(cycle, assetTable(state.tokens)),
        ),
      );
    } else if (!state.error) parts.push(stateMessage("loading", `Reading cycle #${route.id ?? ""}…`));
  } else if (route.view === "not-found") {
    parts.push(
      h(
        "section",
        { "data-view": "not-found" },
        stateMessage(
          "error",
          `No page "#/${route.hash}" in this console.`,
          "The views are Health, Cycles, Guarantees, Collateral and Webhooks (the links above).",
        ),
      ),
    );
  } else {
    parts.push(h("section", { "data-view": route.view }, ...privateContent(route, session)));
  }
  // Last known data under an error is dimmed, so a stale "ok" does not read as current.
  main.classList.toggle("stale", state.error !== null);
  content.replaceChildren(...(parts.length ? parts : [h("p", {}, "")]));
}

let timer: ReturnType<typeof setTimeout> | null = null;
let running = false;
let again = false;

/** Reads now (a view changed, a sign-in), or right after the read under way. */
function kick(): void {
  render();
  if (running) {
    again = true;
    return;
  }
  if (timer) clearTimeout(timer);
  void loop();
}

async function loop(): Promise<void> {
  running = true;
  await refresh();
  running = false;
  if (again) {
    again = false;
    void loop();
    return;
  }
  // Next read after this one finished: a slow Core never gets overlapping polls.
  timer = setTimeout(() => void loop(), POLL_MS);
}

window.addEventListener("hashchange", () => {
  state.notice = null;
  kick();
});
render();
void loop();
