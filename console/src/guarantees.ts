/**
 * Guarantees view (filtered list) and one guarantee's page: its claims, its certificate with the BLS
 * signature checked in this browser against Core's public key (certificate.ts), and its lifecycle
 * timeline with the transactions that moved it (`GET /core/guarantees/{id}/timeline`).
 */
import {
  GUARANTEE_STATES,
  type GuaranteeBody,
  type GuaranteeSearchBody,
  type GuaranteeState,
  type TimelineBody,
  type WirePublicParams,
} from "./api";
import type { CertificateCheck } from "./certificate";
import { h, row, stateMessage } from "./dom";
import { type AssetInfo, formatAmount } from "./format";
import { addressCode, cycleLink, time, txCode } from "./links";
import type { Session } from "./session";

/** The search of the list, as the hash carries it (`#/guarantees?q=…&payer=…&state=…&from=…`). */
export interface GuaranteeFilter {
  q?: string;
  payer?: string;
  recipient?: string;
  state?: string;
  asset?: string;
  cycle?: string;
  /** ISO 8601 (UTC) bounds of the issue time, inclusive. */
  from?: string;
  to?: string;
}

export const FILTER_FIELDS = ["q", "payer", "recipient", "state", "asset", "cycle", "from", "to"] as const;

/** Rows per page of the list. */
export const GUARANTEE_PAGE = 50;

/** What the signed-in wallet asks for when the hash gives no party: its own guarantees as payer. */
export function effectiveFilter(filter: GuaranteeFilter, session: Session): GuaranteeFilter {
  if (session.admin || filter.payer || filter.recipient) return filter;
  return { ...filter, payer: session.address };
}

export function filterQuery(filter: GuaranteeFilter): string {
  const query = new URLSearchParams();
  for (const field of FILTER_FIELDS) if (filter[field]) query.set(field, filter[field]!);
  return query.toString();
}

/** Each state its own colour: settled green, remunerated from collateral red-brown, waiting amber … */
const STATE_CLASS: Record<GuaranteeState, string> = {
  PENDING_VALIDATION: "committed",
  FINALIZED_PAYABLE: "committed",
  DISPUTED: "open",
  CANCELLED: "off",
  NETTED: "covered",
  SETTLED: "paid",
  REMUNERATED: "paid",
  DEFAULT_REMUNERATED: "defaulted",
};

export const stateBadge = (state: string) =>
  h(
    "span",
    { class: `badge ${STATE_CLASS[state as GuaranteeState] ?? "off"}`, "data-testid": "guarantee-state" },
    state,
  );

/** `2025-06-15T15:06` in the viewer's zone (a datetime-local value) of an ISO time; "" when absent. */
function localInput(iso: string | undefined): string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/** The filter form (rendered when the view is entered, so typing survives the polls). */
export function renderFilterForm(
  filter: GuaranteeFilter,
  session: Session,
  apply: (filter: GuaranteeFilter) => void,
  exportCsv: () => void,
): HTMLElement {
  const input = (name: "q" | "payer" | "recipient" | "asset" | "cycle", placeholder: string, size = "44") =>
    h("input", { name, placeholder, value: filter[name] ?? "", size, spellcheck: "false" });
  const when = (name: "from" | "to") =>
    h("input", { name, type: "datetime-local", step: "1", value: localInput(filter[name]) });
  const state = h(
    "select",
    { name: "state" },
    h("option", { value: "" }, "any state"),
    GUARANTEE_STATES.map((s) => {
      const option = h("option", { value: s }, s);
      option.selected = filter.state === s;
      return option;
    }),
  );
  const form = h(
    "form",
    { class: "filters", "data-testid": "guarantee-filters" },
    h(
      "label",
      { class: "wide" },
      "Search ",
      input("q", "guarantee id, tx hash, payer or recipient address", "66"),
    ),
    h("label", {}, "Payer ", input("payer", session.admin ? "any payer" : session.address)),
    h("label", {}, "Recipient ", input("recipient", "any recipient")),
    h("label", {}, "State ", state),
    h("label", {}, "Asset ", input("asset", "any asset (address)")),
    h("label", {}, "Cycle ", input("cycle", "any", "6")),
    h("label", {}, "Issued from ", when("from")),
    h("label", {}, "to ", when("to")),
    h("button", { type: "submit" }, "Apply"),
    h("button", { type: "button", "data-role": "mine-as-recipient" }, "As recipient"),
    h("button", { type: "button", "data-role": "export-csv", "data-testid": "export-csv" }, "Export CSV"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const next: GuaranteeFilter = {};
    for (const field of FILTER_FIELDS) {
      const value = String(data.get(field) ?? "").trim();
      if (!value) continue;
      // datetime-local is the viewer's zone: the hash and Core take UTC.
      next[field] = field === "from" || field === "to" ? new Date(value).toISOString() : value;
    }
    apply(next);
  });
  form.querySelector("[data-role=mine-as-recipient]")?.addEventListener("click", () => {
    apply({ recipient: session.address });
  });
  form.querySelector("[data-role=export-csv]")?.addEventListener("click", exportCsv);
  return form;
}

/** Where the list is: the cursor of this page and its number (1 = newest). */
export interface ListPosition {
  cursor: string | null;
  page: number;
}

export function renderGuaranteeList(
  list: GuaranteeSearchBody,
  filter: GuaranteeFilter,
  position: ListPosition,
  assets: Map<string, AssetInfo>,
  pageHref: (cursor: string | null, page: number) => string,
): HTMLElement {
  if (list.guarantees.length === 0) {
    return stateMessage(
      "empty",
      "No guarantee matches.",
      filter.payer || filter.recipient
        ? "A guarantee appears here once Core issues it (a purchase through the facilitator); change the filters to widen the search."
        : "Change the filters to widen the search.",
    );
  }
  const first = (position.page - 1) * GUARANTEE_PAGE + 1;
  const last = first + list.guarantees.length - 1;
  const pages = Math.max(1, Math.ceil(list.total / GUARANTEE_PAGE));
  const pager = h(
    "p",
    { class: "pager", "data-testid": "guarantee-pager" },
    position.page > 1 ? h("a", { href: pageHref(null, 1), "data-testid": "page-newest" }, "« Newest") : null,
    " ",
    h(
      "span",
      { "data-testid": "guarantee-range" },
      `${first}–${last} of ${list.total} (page ${position.page} of ${pages})`,
    ),
    " ",
    list.next_cursor
      ? h(
          "a",
          { href: pageHref(list.next_cursor, position.page + 1), "data-testid": "page-older" },
          "Older »",
        )
      : null,
  );
  return h(
    "div",
    {},
    pager,
    h(
      "table",
      { "data-testid": "guarantee-list" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ["Guarantee", "State", "Amount", "Payer", "Recipient", "Cycle", "Issued"].map((label) =>
            h("th", {}, label),
          ),
        ),
      ),
      h(
        "tbody",
        {},
        list.guarantees.map((g) =>
          h(
            "tr",
            { "data-testid": "guarantee-row", "data-guarantee-id": g.guarantee_id },
            h(
              "td",
              {},
              h("a", { href: `#/guarantee/${g.guarantee_id}` }, h("code", {}, shortId(g.guarantee_id))),
            ),
            h("td", {}, stateBadge(g.state)),
            h("td", { class: "num" }, formatAmount(g.claims.amount, g.claims.asset_address, assets)),
            h("td", {}, addressCode(g.claims.user_address)),
            h("td", {}, addressCode(g.claims.recipient_address)),
            h("td", {}, g.cycle_id === null ? "—" : cycleLink(g.cycle_id)),
            h("td", {}, time(g.created_at)),
          ),
        ),
      ),
    ),
    list.next_cursor || position.page > 1 ? pager.cloneNode(true) : null,
  );
}

/** The CSV of guarantees (RFC 4180: every field quoted), one row per guarantee, amounts in base units. */
export function guaranteesCsv(guarantees: GuaranteeBody[]): string {
  const header = [
    "guarantee_id",
    "state",
    "version",
    "payer",
    "recipient",
    "asset",
    "amount",
    "req_id",
    "cycle_id",
    "created_at",
    "updated_at",
  ];
  const quote = (value: string | number | null) => `"${String(value ?? "").replace(/"/g, '""')}"`;
  const rows = guarantees.map((g) =>
    [
      g.guarantee_id,
      g.state,
      g.claims.version,
      g.claims.user_address,
      g.claims.recipient_address,
      g.claims.asset_address,
      g.claims.amount,
      g.claims.req_id,
      g.cycle_id,
      g.created_at,
      g.updated_at,
    ]
      .map(quote)
      .join(","),
  );
  return [header.map(quote).join(","), ...rows].join("\r\n") + "\r\n";
}

const shortId = (id: string) => `${id.slice(0, 10)}…${id.slice(-6)}`;

const KIND_LABEL: Record<string, string> = {
  issued: "Issued (certificate signed)",
  reserve_registered: "Seller's reserve registered",
  validation_response: "Validator answered",
  cycle_planned: "Planned in a cycle",
  netted: "Netted (cycle committed)",
  debt_paid: "Payer's net debit paid",
  debt_covered: "Payer's net debit covered from collateral",
  debt_voided: "Payer's net debit voided",
  debt_refunded: "Payer's net debit refunded",
  credit_claimed: "Recipient claimed its net credit",
  cycle_vetoed: "Cycle vetoed",
  cycle_finalized: "Cycle finalized",
  state: "Current state",
};

function renderTimeline(timeline: TimelineBody): HTMLElement {
  return h(
    "ol",
    { class: "timeline", "data-testid": "timeline" },
    timeline.timeline.map((step) =>
      h(
        "li",
        { "data-kind": step.kind },
        h("strong", {}, KIND_LABEL[step.kind] ?? step.kind),
        step.kind === "state" ? [" ", stateBadge(String(step.detail.state))] : null,
        step.cycle_id !== null && step.kind !== "state" ? [" · cycle ", cycleLink(step.cycle_id)] : null,
        h(
          "div",
          {},
          step.at === null ? h("span", { class: "muted" }, "time: see the transaction") : time(step.at),
          step.clock === "core" && step.at !== null ? h("span", { class: "muted" }, " (Core's clock)") : null,
        ),
        step.tx_hash
          ? h(
              "div",
              {},
              "tx ",
              h("span", { "data-testid": "timeline-tx" }, txCode(step.tx_hash, true)),
              step.block_number === null ? null : ` in block ${step.block_number}`,
            )
          : null,
      ),
    ),
  );
}

function renderCheck(check: CertificateCheck | "pending"): HTMLElement {
  if (check === "pending") return h("p", { class: "muted", "data-testid": "certificate-check" }, "Checking…");
  return h(
    "div",
    {
      class: `state ${check.ok ? "ok" : "error"}`,
      role: check.ok ? "status" : "alert",
      "data-testid": "certificate-check",
      "data-result": check.ok ? "pass" : "fail",
    },
    h("p", { class: "title" }, check.ok ? "Certificate check: pass" : "Certificate check: FAIL"),
    check.lines.map((line) => h("p", {}, line)),
  );
}

export function renderGuaranteePage(
  g: GuaranteeBody,
  timeline: TimelineBody | null,
  check: CertificateCheck | "pending",
  params: WirePublicParams | null,
  assets: Map<string, AssetInfo>,
): HTMLElement {
  const c = g.claims;
  return h(
    "section",
    { class: "guarantee", "data-view": "guarantee" },
    h("h2", {}, "Guarantee ", stateBadge(g.state)),
    h("p", {}, h("code", { "data-testid": "guarantee-id" }, g.guarantee_id)),
    h(
      "div",
      { class: "cards" },
      h(
        "article",
        {},
        h("h3", {}, "Claims"),
        h(
          "dl",
          {},
          row("Version", `V${c.version}`),
          row("Amount", h("strong", {}, formatAmount(c.amount, c.asset_address, assets))),
          row("Payer", addressCode(c.user_address, { full: true, collateral: true })),
          row("Recipient", addressCode(c.recipient_address, { full: true })),
          row("Request id", c.req_id),
          row("Claim time", time(new Date(c.timestamp * 1000).toISOString())),
          row("Payer signature", `${g.scheme} `, h("code", {}, shortId(g.signature))),
          row(
            "Cycle",
            g.cycle_id === null
              ? "not in a cycle yet"
              : h("span", { "data-testid": "guarantee-cycle" }, cycleLink(g.cycle_id)),
          ),
          g.excluded_reason ? row("Excluded", g.excluded_reason) : [],
          g.validation_request_hash
            ? row("Validation request", h("code", {}, g.validation_request_hash))
            : [],
          row("Issued", time(g.created_at)),
          row("Last change", time(g.updated_at)),
        ),
      ),
      h(
        "article",
        {},
        h("h3", {}, "Certificate"),
        renderCheck(check),
        h(
          "dl",
          {},
          row("BLS signature (G1)", h("code", { class: "wrap" }, g.certificate.signature)),
          row("Claims bytes", `${(g.certificate.claims.length - 2) / 2} bytes`),
          row(
            "Core's key (G2)",
            params
              ? h(
                  "code",
                  { class: "wrap" },
                  `0x${params.public_key.map((b) => b.toString(16).padStart(2, "0")).join("")}`,
                )
              : "—",
          ),
        ),
      ),
      h(
        "article",
        {},
        h("h3", {}, "Lifecycle"),
        timeline ? renderTimeline(timeline) : h("p", { class: "muted" }, "Loading the timeline…"),
      ),
    ),
  );
}
