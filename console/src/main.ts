/**
 * The console's single page: a hash router over two views, fed by one poller of Core's public endpoints
 * (health, public params, tokens, cycles). Polling, not SSE: Core has no event stream, and a read every
 * few seconds of endpoints that are cheap to serve is light for Core.
 */
import "./style.css";
import {
  ApiError,
  type CycleBody,
  findLatestCycleId,
  getCycle,
  getJson,
  type HealthBody,
  type WirePublicParams,
  type WireTokenList,
} from "./api";
import { h, stateMessage } from "./dom";
import { assetTable } from "./format";
import { renderCycles } from "./cycles";
import { renderHealth } from "./health";

/** How often the page reads Core. */
const POLL_MS = 2_000;
/** Cycles shown (the newest ones): each is one read per poll until it is final. */
const CYCLES_SHOWN = 10;

type ViewName = "health" | "cycles";

interface State {
  health: HealthBody | null;
  params: WirePublicParams | null;
  tokens: WireTokenList | null;
  latestCycleId: number;
  cycles: Map<number, CycleBody>;
  cyclesLoaded: boolean;
  error: string | null;
  updatedAt: Date | null;
}

const state: State = {
  health: null,
  params: null,
  tokens: null,
  latestCycleId: 0,
  cycles: new Map(),
  cyclesLoaded: false,
  error: null,
  updatedAt: null,
};

function currentView(): ViewName {
  return location.hash === "#/cycles" ? "cycles" : "health";
}

function errorAdvice(error: unknown): string[] {
  if (error instanceof ApiError && error.status === null) {
    return [
      "Start Core (npm run devnet, or npm run operator) and keep this page open: it retries by itself.",
    ];
  }
  return ["Core's log (JSON, by request id) says more. This page retries every few seconds."];
}

let lastError: unknown = null;

async function refresh(): Promise<void> {
  try {
    // Health answers 503 with its full body when a dependency fails: that is data, not an error.
    const [health, params] = await Promise.all([
      getJson<HealthBody>("/core/health", [503]),
      getJson<WirePublicParams>("/core/public-params"),
    ]);
    state.tokens ??= await getJson<WireTokenList>("/core/tokens");
    state.health = health;
    state.params = params;
    state.latestCycleId = await findLatestCycleId(state.latestCycleId);
    const first = Math.max(1, state.latestCycleId - CYCLES_SHOWN + 1);
    for (const id of [...state.cycles.keys()]) if (id < first) state.cycles.delete(id);
    const reads: Promise<void>[] = [];
    for (let id = first; id <= state.latestCycleId; id++) {
      // A finalized cycle no longer changes; everything else (debtors paid, claims, a veto) still can.
      if (state.cycles.get(id)?.state === "FINALIZED") continue;
      reads.push(
        getCycle(id).then((cycle) => {
          if (cycle) state.cycles.set(id, cycle);
        }),
      );
    }
    await Promise.all(reads);
    state.cyclesLoaded = true;
    state.error = null;
    lastError = null;
    state.updatedAt = new Date();
  } catch (error) {
    state.error = error instanceof Error ? error.message : String(error);
    lastError = error;
  }
  render();
}

function render(): void {
  const view = currentView();
  for (const link of document.querySelectorAll<HTMLAnchorElement>("nav a")) {
    link.classList.toggle("active", link.dataset.view === view);
  }
  const updated = document.getElementById("updated");
  if (updated) updated.textContent = state.updatedAt ? `updated ${state.updatedAt.toLocaleTimeString()}` : "";
  const main = document.getElementById("view");
  if (!main) return;
  const parts: Node[] = [];
  if (state.error) {
    const stale = state.updatedAt
      ? [`Below: the last data read, at ${state.updatedAt.toLocaleTimeString()}; it may be out of date.`]
      : [];
    parts.push(
      stateMessage("error", `Cannot read Core: ${state.error}`, ...errorAdvice(lastError), ...stale),
    );
  }
  const latest = state.cycles.get(state.latestCycleId) ?? null;
  if (view === "health") {
    if (state.health && state.params)
      parts.push(renderHealth({ health: state.health, params: state.params, latestCycle: latest }));
    else if (!state.error) parts.push(stateMessage("loading", "Loading Core's health…"));
  } else if (state.cyclesLoaded) {
    const cycles = [...state.cycles.values()].sort((a, b) => b.cycle_id - a.cycle_id);
    parts.push(
      renderCycles(
        cycles,
        assetTable(state.tokens),
        state.params?.protocol_timings?.cycle_length_seconds ?? null,
      ),
    );
  } else if (!state.error) {
    parts.push(stateMessage("loading", "Looking for committed cycles…"));
  }
  // Last known data under an error is dimmed, so a stale "ok" does not read as current.
  main.classList.toggle("stale", state.error !== null);
  main.replaceChildren(...(parts.length ? parts : [h("p", {}, "")]));
}

window.addEventListener("hashchange", render);

async function loop(): Promise<void> {
  await refresh();
  // Next read after this one finished: a slow Core never gets overlapping polls.
  setTimeout(() => void loop(), POLL_MS);
}

render();
void loop();
