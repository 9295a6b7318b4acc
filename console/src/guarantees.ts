/**
 * Guarantees view (filtered list) and one guarantee's page: its claims, its certificate with the BLS
 * signature checked in this browser against Core's public key (certificate.ts), and its lifecycle
 * timeline with the transactions that moved it (`GET /core/guarantees/{id}/timeline`).
 */
import {
  GUARANTEE_STATES,
  type GuaranteeBody,
  type GuaranteeListBody,
  type TimelineBody,
  type WirePublicParams,
} from "./api";
import type { CertificateCheck } from "./certificate";
import { h, row, stateMessage } from "./dom";
import { type AssetInfo, formatAmount, shortAddress } from "./format";
import { time } from "./health";
import type { Session } from "./session";

/** The filters of the list, as the hash carries them (`#/guarantees?payer=…&state=…`). */
export interface GuaranteeFilter {
  payer?: string;
  recipient?: string;
  state?: string;
  asset?: string;
}

export const FILTER_FIELDS = ["payer", "recipient", "state", "asset"] as const;

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

const STATE_CLASS: Record<string, string> = {
  PENDING_VALIDATION: "committed",
  FINALIZED_PAYABLE: "committed",
  DISPUTED: "open",
  CANCELLED: "off",
  NETTED: "covered",
  SETTLED: "paid",
  REMUNERATED: "paid",
  DEFAULT_REMUNERATED: "covered",
};

export const stateBadge = (state: string) =>
  h("span", { class: `badge ${STATE_CLASS[state] ?? "off"}`, "data-testid": "guarantee-state" }, state);

/** The filter form (rendered when the view is entered, so typing survives the polls). */
export function renderFilterForm(
  filter: GuaranteeFilter,
  session: Session,
  apply: (filter: GuaranteeFilter) => void,
): HTMLElement {
  const input = (name: "payer" | "recipient" | "asset", placeholder: string) =>
    h("input", { name, placeholder, value: filter[name] ?? "", size: "44", spellcheck: "false" });
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
    h("label", {}, "Payer ", input("payer", session.admin ? "any payer" : session.address)),
    h("label", {}, "Recipient ", input("recipient", "any recipient")),
    h("label", {}, "State ", state),
    h("label", {}, "Asset ", input("asset", "any asset (address)")),
    h("button", { type: "submit" }, "Apply"),
    h("button", { type: "button", "data-role": "mine-as-recipient" }, "As recipient"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const next: GuaranteeFilter = {};
    for (const field of FILTER_FIELDS) {
      const value = String(data.get(field) ?? "").trim();
      if (value) next[field] = value;
    }
    apply(next);
  });
  form.querySelector("[data-role=mine-as-recipient]")?.addEventListener("click", () => {
    apply({ recipient: session.address });
  });
  return form;
}

export function renderGuaranteeList(
  list: GuaranteeListBody,
  filter: GuaranteeFilter,
  assets: Map<string, AssetInfo>,
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
  return h(
    "div",
    {},
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
            h("td", {}, h("code", { title: g.claims.user_address }, shortAddress(g.claims.user_address))),
            h(
              "td",
              {},
              h("code", { title: g.claims.recipient_address }, shortAddress(g.claims.recipient_address)),
            ),
            h("td", {}, g.cycle_id === null ? "—" : h("a", { href: "#/cycles" }, `#${g.cycle_id}`)),
            h("td", {}, time(g.created_at)),
          ),
        ),
      ),
    ),
    list.next_cursor
      ? h("p", { class: "muted" }, "Newest 50 shown: narrow the filters to see older ones.")
      : null,
  );
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
        step.cycle_id !== null && step.kind !== "state" ? ` · cycle #${step.cycle_id}` : null,
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
              h("code", { "data-testid": "timeline-tx" }, step.tx_hash),
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
          row("Payer", h("code", {}, c.user_address)),
          row("Recipient", h("code", {}, c.recipient_address)),
          row("Request id", c.req_id),
          row("Claim time", time(new Date(c.timestamp * 1000).toISOString())),
          row("Payer signature", `${g.scheme} `, h("code", {}, shortId(g.signature))),
          row("Cycle", g.cycle_id === null ? "not in a cycle yet" : `#${g.cycle_id}`),
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
