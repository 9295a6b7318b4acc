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
  type CycleBody,
  type DeliveriesBody,
  getJson,
  type GuaranteeBody,
  type GuaranteeListBody,
  type HealthBody,
  listCycles,
  type ScheduleBody,
  type TimelineBody,
  type WebhooksBody,
  type WirePublicParams,
  type WireTokenList,
  type WithdrawalsBody,
} from "./api";
import { type CertificateCheck, checkCertificate } from "./certificate";
import { renderAddressForm, renderCollateral, renderCollateralList } from "./collateral";
import { renderCycles } from "./cycles";
import { h, stateMessage } from "./dom";
import { assetTable } from "./format";
import {
  effectiveFilter,
  FILTER_FIELDS,
  filterQuery,
  type GuaranteeFilter,
  renderFilterForm,
  renderGuaranteeList,
  renderGuaranteePage,
} from "./guarantees";
import { renderHealth } from "./health";
import { authedJson, currentSession, type Session, signIn, signOut } from "./session";
import { renderWebhooks } from "./webhooks";

/** How often the page reads Core. */
const POLL_MS = 2_000;
/** Cycles shown (the newest ones). */
const CYCLES_SHOWN = 10;
/** Deliveries shown per webhook subscription. */
const DELIVERIES_SHOWN = 10;

type ViewName = "health" | "cycles" | "guarantees" | "guarantee" | "collateral" | "webhooks";

interface Route {
  view: ViewName;
  /** The guarantee id of `#/guarantee/<id>`. */
  id: string | null;
  query: URLSearchParams;
  /** The hash itself: controls are rebuilt when it changes. */
  key: string;
}

function currentRoute(): Route {
  const hash = location.hash.replace(/^#\/?/, "");
  const [path, search = ""] = hash.split("?");
  const [head, id = null] = path.split("/");
  const views: ViewName[] = ["health", "cycles", "guarantees", "guarantee", "collateral", "webhooks"];
  const view = (views as string[]).includes(head) ? (head as ViewName) : "health";
  return {
    view,
    id,
    query: new URLSearchParams(search),
    key: `${location.hash}|${currentSession()?.address ?? ""}`,
  };
}

/** What the current view read for the signed-in wallet (null: not read yet). */
type Private =
  | { view: "guarantees"; list: GuaranteeListBody; filter: GuaranteeFilter }
  | { view: "guarantee"; guarantee: GuaranteeBody; timeline: TimelineBody }
  | { view: "collateral"; balances: BalancesBody; withdrawals: WithdrawalsBody }
  | { view: "collateral-list"; list: CollateralListBody }
  | { view: "webhooks"; list: WebhooksBody; deliveries: Map<string, DeliveriesBody> };

interface State {
  health: HealthBody | null;
  params: WirePublicParams | null;
  tokens: WireTokenList | null;
  schedule: ScheduleBody | null;
  cycles: CycleBody[];
  cyclesLoaded: boolean;
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
  cyclesLoaded: false,
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
      const list = await authedJson<GuaranteeListBody>(`/core/guarantees?${filterQuery(applied)}`);
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
      const [balances, withdrawals] = await Promise.all([
        authedJson<BalancesBody>(`/core/users/${address}/balances`),
        authedJson<WithdrawalsBody>(`/core/users/${address}/withdrawals`),
      ]);
      return { view: "collateral", balances, withdrawals };
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

async function refresh(): Promise<void> {
  const route = currentRoute();
  try {
    // Health answers 503 with its full body when a dependency fails: that is data, not an error.
    const [health, params, schedule, cycles] = await Promise.all([
      getJson<HealthBody>("/core/health", [503]),
      getJson<WirePublicParams>("/core/public-params"),
      getJson<ScheduleBody>("/core/clearing/schedule"),
      listCycles(CYCLES_SHOWN),
    ]);
    state.tokens ??= await getJson<WireTokenList>("/core/tokens");
    Object.assign(state, { health, params, schedule, cycles: cycles.cycles, cyclesLoaded: true });
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
      renderFilterForm(filter, session, (next) => (location.hash = `#/guarantees?${filterQuery(next)}`)),
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
  if (route.view === "webhooks" && !session.admin) {
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
            ? "Check the values entered (addresses are 0x and 40 hex digits)."
            : status === 401
              ? "Sign in again."
              : "Core's log says more; this page retries every few seconds.";
    return [stateMessage("error", failure.message, advice)];
  }
  const assets = assetTable(state.tokens);
  const data = state.private;
  if (!data) return [];
  switch (data.view) {
    case "guarantees":
      return [renderGuaranteeList(data.list, data.filter, assets)];
    case "guarantee": {
      const g = data.guarantee;
      const check = state.checks.get(`${g.guarantee_id}:${g.certificate.signature}`) ?? "pending";
      return [renderGuaranteePage(g, data.timeline, check, state.params, assets)];
    }
    case "collateral":
      return [renderCollateral(data.balances, data.withdrawals, assets)];
    case "collateral-list":
      return [renderCollateralList(data.list, assets)];
    case "webhooks":
      return [renderWebhooks(data.list, data.deliveries)];
  }
}

function render(): void {
  const route = currentRoute();
  const session = currentSession();
  for (const link of document.querySelectorAll<HTMLAnchorElement>("nav a")) {
    link.classList.toggle(
      "active",
      link.dataset.view === route.view || (route.view === "guarantee" && link.dataset.view === "guarantees"),
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
        }),
      );
    } else if (!state.error) parts.push(stateMessage("loading", "Loading Core's health…"));
  } else if (route.view === "cycles") {
    if (state.cyclesLoaded) {
      parts.push(
        renderCycles(
          state.cycles,
          assetTable(state.tokens),
          state.params?.protocol_timings?.cycle_length_seconds ?? null,
        ),
      );
    } else if (!state.error) parts.push(stateMessage("loading", "Looking for committed cycles…"));
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

window.addEventListener("hashchange", kick);
render();
void loop();
