/**
 * Collateral view: one payer's balances per asset as Core's books hold them (deposited, locked, pending
 * withdrawal, held by sellers' reserves, available) and its withdrawal requests. A wallet reads its own;
 * admin wallets see every payer's balances (`GET /core/users`) and search any address
 * (`GET /core/users/{address}/balances` and `/withdrawals`).
 */
import type { BalancesBody, CollateralListBody, LedgerBody, WithdrawalsBody } from "./api";
import { h, stateMessage } from "./dom";
import { type AssetInfo, formatAmount } from "./format";
import { addressCode, cycleLink, time, txCode } from "./links";
import type { Session } from "./session";

export function renderAddressForm(address: string, session: Session, apply: (address: string) => void) {
  const input = h("input", {
    name: "address",
    value: address,
    size: "44",
    spellcheck: "false",
    placeholder: session.admin ? "every payer" : session.address,
  });
  const form = h(
    "form",
    { class: "filters", "data-testid": "collateral-search" },
    h("label", {}, "Payer address ", input),
    h("button", { type: "submit" }, "Show"),
    session.admin ? null : h("span", { class: "muted" }, "Only your own collateral is visible to you."),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    apply(input.value.trim());
  });
  return form;
}

const LEDGER_KIND: Record<LedgerBody["entries"][number]["kind"], string> = {
  deposit: "Deposit",
  lock: "Lock (open guarantee)",
  net_debit: "Net debit",
  cover: "Cover from collateral",
  withdrawal: "Withdrawal",
  remuneration: "Remuneration paid",
  payout: "Payout (credit claimed)",
  unclaimed_credit: "Unclaimed credit",
};

/** The payer's ledger: every movement Core's books record, newest first. */
function renderLedger(ledger: LedgerBody, assets: Map<string, AssetInfo>): HTMLElement[] {
  return [
    h("h3", {}, "Ledger"),
    ledger.entries.length === 0
      ? h("p", { class: "muted" }, "Nothing recorded yet.")
      : h(
          "table",
          { "data-testid": "ledger" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["When", "What", "Amount", "Status", "Cycle", "Guarantee / request", "Transaction"].map((l) =>
                h("th", {}, l),
              ),
            ),
          ),
          h(
            "tbody",
            {},
            ledger.entries.map((e) =>
              h(
                "tr",
                { "data-testid": "ledger-entry", "data-kind": e.kind },
                h(
                  "td",
                  {},
                  time(e.at),
                  e.clock === "core" && e.at ? h("span", { class: "muted" }, " (Core)") : null,
                ),
                h("td", {}, LEDGER_KIND[e.kind] ?? e.kind),
                h("td", { class: "num" }, formatAmount(e.amount, e.asset_address, assets)),
                h("td", {}, e.status ?? "—"),
                h("td", {}, e.cycle_id === null ? "—" : cycleLink(e.cycle_id)),
                h(
                  "td",
                  {},
                  e.guarantee_id
                    ? h(
                        "a",
                        { href: `#/guarantee/${e.guarantee_id}` },
                        h("code", {}, `${e.guarantee_id.slice(0, 10)}…`),
                      )
                    : e.withdrawal_id
                      ? `withdrawal ${e.withdrawal_id}`
                      : "—",
                ),
                h("td", {}, e.tx_hash ? txCode(e.tx_hash) : "—"),
              ),
            ),
          ),
        ),
    h(
      "p",
      { class: "muted" },
      "Deposits are those still in the indexer's journal (recent blocks; the balance's Deposited is the total). ",
      ledger.truncated ? "Only the newest 500 locks and remunerations are listed." : "",
    ),
  ];
}

export function renderCollateral(
  balances: BalancesBody,
  withdrawals: WithdrawalsBody,
  ledger: LedgerBody | null,
  assets: Map<string, AssetInfo>,
): HTMLElement {
  const held = balances.balances.filter(
    (b) => b.deposited !== "0" || b.locked !== "0" || b.pending_withdrawal !== "0",
  );
  const amount = (value: string, asset: string) =>
    h("td", { class: "num" }, formatAmount(value, asset, assets));
  return h(
    "div",
    {},
    h("h3", {}, "Balances of ", addressCode(balances.user_address, { full: true })),
    held.length === 0
      ? stateMessage(
          "empty",
          "No collateral in the Vault for this address.",
          "A payer deposits with Vault.deposit (ETH) or Vault.depositToken; Core shows it once its indexer has seen the deposit confirmed.",
        )
      : h(
          "table",
          { "data-testid": "collateral-table" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              [
                "Asset",
                "Deposited",
                "Locked",
                "Pending withdrawal",
                "Reserve hold",
                "Available",
                "Factor",
              ].map((l) => h("th", {}, l)),
            ),
          ),
          h(
            "tbody",
            {},
            held.map((b) =>
              h(
                "tr",
                { "data-asset": b.asset_address },
                h("td", {}, b.symbol ?? h("code", {}, b.asset_address)),
                amount(b.deposited, b.asset_address),
                amount(b.locked, b.asset_address),
                amount(b.pending_withdrawal, b.asset_address),
                amount(b.reserve_hold, b.asset_address),
                h(
                  "td",
                  { class: "num", "data-testid": "available" },
                  formatAmount(b.available, b.asset_address, assets),
                ),
                h("td", { class: "num" }, `${b.collateral_factor_bps / 100} %`),
              ),
            ),
          ),
        ),
    h("h3", {}, "Withdrawal requests"),
    withdrawals.withdrawals.length === 0
      ? h("p", { class: "muted" }, "None.")
      : h(
          "table",
          {},
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["Id", "Amount", "State", "Requested", "Finalizable", "Paid"].map((l) => h("th", {}, l)),
            ),
          ),
          h(
            "tbody",
            {},
            withdrawals.withdrawals.map((w) =>
              h(
                "tr",
                {},
                h("td", {}, w.withdrawal_id),
                amount(w.amount, w.asset_address),
                h("td", {}, w.state),
                h("td", {}, time(w.requested_at)),
                h("td", {}, time(w.finalizable_at)),
                w.paid === null ? h("td", {}, "—") : amount(w.paid, w.asset_address),
              ),
            ),
          ),
        ),
    ledger ? renderLedger(ledger, assets) : null,
  );
}

/** The admin's list: every payer's non-empty balance per asset, each payer linking to its details. */
export function renderCollateralList(list: CollateralListBody, assets: Map<string, AssetInfo>): HTMLElement {
  if (list.balances.length === 0) {
    return stateMessage(
      "empty",
      "Core holds no collateral yet.",
      "Payers deposit with Vault.deposit (ETH) or Vault.depositToken; each shows here once Core has indexed it.",
    );
  }
  const amount = (value: string, asset: string) =>
    h("td", { class: "num" }, formatAmount(value, asset, assets));
  return h(
    "div",
    {},
    h(
      "table",
      { "data-testid": "collateral-list" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ["Payer", "Asset", "Deposited", "Locked", "Pending withdrawal"].map((l) => h("th", {}, l)),
        ),
      ),
      h(
        "tbody",
        {},
        list.balances.map((b) =>
          h(
            "tr",
            { "data-user": b.user_address },
            h("td", {}, addressCode(b.user_address, { full: true, collateral: true })),
            h("td", {}, assets.get(b.asset_address.toLowerCase())?.symbol ?? h("code", {}, b.asset_address)),
            amount(b.deposited, b.asset_address),
            amount(b.locked, b.asset_address),
            amount(b.pending_withdrawal, b.asset_address),
          ),
        ),
      ),
    ),
    list.next_cursor
      ? h("p", { class: "muted" }, "First 100 rows shown: search an address for the others.")
      : null,
  );
}
