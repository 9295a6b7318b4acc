/** Cycles view: each committed cycle's roots, deadlines, totals per asset, debtors and claimed credits. */
import type { CycleBody, DebtorStatus } from "./api";
import { h, row, stateMessage } from "./dom";
import { type AssetInfo, formatAmount } from "./format";
import { addressCode, time, txCode } from "./links";

/** Debtor statuses grouped as the operator reads them: settled, covered from collateral, still owed. */
const GROUP: Record<DebtorStatus, "paid" | "covered" | "open" | "voided"> = {
  PAID: "paid",
  COVERED: "covered",
  OPEN: "open",
  CHALLENGED: "open",
  ANSWERED: "open",
  VOIDED: "voided",
  REFUNDED: "voided",
};

function debtorSummary(cycle: CycleBody): string {
  const counts = { paid: 0, covered: 0, open: 0, voided: 0 };
  for (const debtor of cycle.debtors) counts[GROUP[debtor.status]] += 1;
  const parts = [`${counts.paid} paid`, `${counts.covered} covered`, `${counts.open} open`];
  if (counts.voided) parts.push(`${counts.voided} voided/refunded`);
  return parts.join(" · ");
}

/**
 * A link that downloads the participant's positions and Merkle proofs (public endpoint). None for a cycle
 * Core did not plan: Core holds no tree for it (the endpoint answers 404 `position_not_found`).
 */
function proofLink(cycle: CycleBody, participant: string): Node {
  if (!cycle.planned_by_core) return h("span", { class: "muted" }, "—");
  return h(
    "a",
    {
      href: `/core/cycles/${cycle.cycle_id}/participants/${participant}/proof`,
      download: `surety-cycle-${cycle.cycle_id}-${participant}-proof.json`,
      "data-testid": "proof-link",
    },
    "proof (JSON)",
  );
}

export function renderCycle(cycle: CycleBody, assets: Map<string, AssetInfo>): HTMLElement {
  return h(
    "article",
    { class: "cycle", "data-testid": "cycle", "data-cycle-id": String(cycle.cycle_id) },
    h(
      "h3",
      {},
      h("a", { href: `#/cycle/${cycle.cycle_id}`, "data-testid": "cycle-link" }, `Cycle #${cycle.cycle_id}`),
      " ",
      h("span", { class: `badge ${cycle.state.toLowerCase()}` }, cycle.state),
    ),
    cycle.planned_by_core
      ? null
      : h(
          "div",
          { class: "state error", role: "alert" },
          h("p", { class: "title" }, "Not planned by Core"),
          h(
            "p",
            {},
            "This cycle was committed with the operator key outside Core: treat the key as compromised (docs/clearing.md).",
          ),
        ),
    h(
      "dl",
      {},
      row("Root", h("code", { "data-testid": "cycle-root" }, cycle.root)),
      row("Guarantees root", h("code", {}, cycle.guarantees_root)),
      row(
        "Guarantees",
        `${cycle.guarantee_count} `,
        cycle.guarantee_count > 0
          ? h(
              "a",
              { href: `#/guarantees?cycle=${cycle.cycle_id}`, "data-testid": "cycle-guarantees" },
              "list them",
            )
          : null,
      ),
      row("Committed", time(cycle.committed_at), ` in block ${cycle.committed_block}`),
      cycle.commit_tx ? row("Commit tx", txCode(cycle.commit_tx, true)) : [],
      row("Challenges until", time(cycle.challenge_deadline)),
      row("Answers until", time(cycle.answer_deadline)),
      row("Payment deadline", time(cycle.payment_deadline)),
      row("Default deadline", time(cycle.default_deadline)),
      cycle.vetoed_at ? row("Vetoed", time(cycle.vetoed_at)) : [],
      cycle.finalized_at ? row("Finalized", time(cycle.finalized_at)) : [],
      row("Debtors", h("span", { "data-testid": "debtor-summary" }, debtorSummary(cycle))),
    ),
    h("h4", {}, "Totals per asset"),
    cycle.totals.length === 0
      ? h("p", { class: "muted" }, "No net positions.")
      : h(
          "table",
          { "data-testid": "cycle-totals" },
          h(
            "thead",
            {},
            h("tr", {}, h("th", {}, "Asset"), h("th", {}, "Total debit"), h("th", {}, "Total credit")),
          ),
          h(
            "tbody",
            {},
            cycle.totals.map((total) =>
              h(
                "tr",
                {},
                h("td", {}, assets.get(total.asset_address.toLowerCase())?.symbol ?? total.asset_address),
                h("td", { class: "num" }, formatAmount(total.total_debit, total.asset_address, assets)),
                h("td", { class: "num" }, formatAmount(total.total_credit, total.asset_address, assets)),
              ),
            ),
          ),
        ),
    h("h4", {}, "Debtors"),
    cycle.debtors.length === 0
      ? h("p", { class: "muted" }, "No debtor.")
      : h(
          "table",
          {},
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              h("th", {}, "Debtor"),
              h("th", {}, "Owes"),
              h("th", {}, "Status"),
              h("th", {}, "Covered"),
              h("th", {}, "Proof"),
            ),
          ),
          h(
            "tbody",
            {},
            cycle.debtors.map((debtor) =>
              h(
                "tr",
                {},
                h(
                  "td",
                  { "data-testid": "debtor" },
                  addressCode(debtor.debtor, { full: true, collateral: true }),
                ),
                h("td", { class: "num" }, formatAmount(debtor.amount, debtor.asset_address, assets)),
                h("td", {}, h("span", { class: `badge ${GROUP[debtor.status]}` }, debtor.status)),
                h(
                  "td",
                  { class: "num" },
                  debtor.covered === null ? "—" : formatAmount(debtor.covered, debtor.asset_address, assets),
                ),
                h("td", {}, proofLink(cycle, debtor.debtor)),
              ),
            ),
          ),
        ),
    h("h4", {}, "Credits claimed"),
    cycle.claims.length === 0
      ? h(
          "p",
          { class: "muted" },
          "None claimed yet (creditors claim with their proof after the challenge deadline).",
        )
      : h(
          "table",
          {},
          h("thead", {}, h("tr", {}, h("th", {}, "Creditor"), h("th", {}, "Claimed"), h("th", {}, "Proof"))),
          h(
            "tbody",
            {},
            cycle.claims.map((claim) =>
              h(
                "tr",
                {},
                h("td", {}, addressCode(claim.participant, { full: true, collateral: true })),
                h("td", { class: "num" }, formatAmount(claim.amount, claim.asset_address, assets)),
                h("td", {}, proofLink(cycle, claim.participant)),
              ),
            ),
          ),
        ),
  );
}

/** Where the cycle list is: `before` of this page (null: the newest) and its number. */
export interface CyclePosition {
  before: string | null;
  page: number;
}

export function renderCycles(
  cycles: CycleBody[],
  total: number,
  nextCursor: string | null,
  position: CyclePosition,
  assets: Map<string, AssetInfo>,
  cycleLength: number | null,
): HTMLElement {
  const pager =
    cycles.length === 0
      ? null
      : h(
          "p",
          { class: "pager", "data-testid": "cycle-pager" },
          position.page > 1 ? h("a", { href: "#/cycles", "data-testid": "page-newest" }, "« Newest") : null,
          " ",
          `cycles #${cycles[0].cycle_id}–#${cycles[cycles.length - 1].cycle_id} of ${total} committed`,
          " ",
          nextCursor
            ? h(
                "a",
                {
                  href: `#/cycles?before=${nextCursor}&page=${position.page + 1}`,
                  "data-testid": "page-older",
                },
                "Older »",
              )
            : null,
        );
  return h(
    "section",
    { class: "cycles", "data-view": "cycles" },
    h("h2", {}, "Cycles"),
    pager,
    cycles.length === 0
      ? stateMessage(
          "empty",
          "No cycle committed yet.",
          `Core commits a cycle at each cutoff${cycleLength ? ` (every ${cycleLength} s of chain time)` : ""} when guarantees are payable, if it runs with SURETY_OPERATOR_PRIVATE_KEY.`,
          "On the devnet: buy something through the facilitator (examples/ or npm run smoke), then wait for the next cutoff; this page updates by itself.",
        )
      : cycles.map((cycle) => renderCycle(cycle, assets)),
  );
}
