/**
 * Webhooks view (admin wallets only): every subscription with its backlog (pending, failed, oldest pending,
 * retries) and its newest deliveries (`GET /core/admin/webhooks`, `…/{id}/deliveries`).
 */
import type { DeliveriesBody, WebhooksBody } from "./api";
import { h, row, stateMessage } from "./dom";
import { time } from "./health";

export function renderWebhooks(list: WebhooksBody, deliveries: Map<string, DeliveriesBody>): HTMLElement {
  if (list.webhooks.length === 0) {
    return stateMessage(
      "empty",
      "No webhook subscription.",
      "Add one with POST /core/admin/webhooks or SURETY_WEBHOOKS (docs/webhooks.md).",
    );
  }
  return h(
    "div",
    {},
    h(
      "p",
      { "data-testid": "webhook-backlog-total" },
      `Backlog: ${list.backlog.pending} pending, ${list.backlog.failed} failed`,
      list.backlog.oldest_pending_at
        ? [" · oldest pending since ", time(list.backlog.oldest_pending_at)]
        : null,
    ),
    list.webhooks.map((w) =>
      h(
        "article",
        { "data-testid": "webhook", "data-webhook-id": w.id },
        h("h3", {}, w.id, " ", h("span", { class: "badge off" }, w.source)),
        h(
          "dl",
          {},
          row("URL", h("code", {}, w.url)),
          row("Events", w.event_types.join(", ")),
          w.description ? row("Description", w.description) : [],
          row(
            "Backlog",
            h(
              "span",
              { "data-testid": "webhook-backlog" },
              `${w.backlog.pending} pending, ${w.backlog.failed} failed`,
              w.backlog.pending ? `, up to ${w.backlog.max_pending_attempts} attempts so far` : "",
            ),
          ),
          row("Oldest pending", time(w.backlog.oldest_pending_at)),
          row("Created", time(w.created_at)),
        ),
        renderDeliveries(deliveries.get(w.id)),
      ),
    ),
  );
}

function renderDeliveries(page: DeliveriesBody | undefined): HTMLElement {
  if (!page) return h("p", { class: "muted" }, "Loading deliveries…");
  if (page.deliveries.length === 0) return h("p", { class: "muted" }, "No delivery yet.");
  return h(
    "table",
    {},
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Event", "Type", "Status", "Attempts", "Last error", "Next attempt"].map((l) => h("th", {}, l)),
      ),
    ),
    h(
      "tbody",
      {},
      page.deliveries.map((d) =>
        h(
          "tr",
          {},
          h("td", {}, h("code", {}, d.event_id.slice(0, 14) + "…")),
          h("td", {}, d.event_type),
          h(
            "td",
            {},
            h(
              "span",
              {
                class: `badge ${d.status === "delivered" ? "ok" : d.status === "failed" ? "fail" : "committed"}`,
              },
              d.status,
            ),
          ),
          h("td", { class: "num" }, d.attempts),
          h("td", {}, d.last_error ?? "—"),
          h("td", {}, time(d.next_attempt_at)),
        ),
      ),
    ),
  );
}
