/**
 * Webhooks view (admin wallets only): every subscription with its backlog (pending, failed, oldest pending,
 * retries) and its newest deliveries (`GET /core/admin/webhooks`, `…/{id}/deliveries`).
 */
import type { DeliveriesBody, DeliveryDetailBody, WebhooksBody } from "./api";
import { h, row, stateMessage } from "./dom";
import { time } from "./links";

/** What the page does for the operator: each returns once Core has answered (the page re-reads then). */
export interface WebhookActions {
  retry(webhookId: string, eventId: string): void;
  test(webhookId: string): void;
}

export function renderWebhooks(
  list: WebhooksBody,
  deliveries: Map<string, DeliveriesBody>,
  actions: WebhookActions,
): HTMLElement {
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
          "p",
          { class: "actions" },
          button("Send a test event", "send-test", () => actions.test(w.id)),
        ),
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
        h("h4", {}, "Newest deliveries"),
        renderDeliveries(w.id, deliveries.get(w.id), actions),
      ),
    ),
  );
}

function button(label: string, testId: string, onClick: () => void): HTMLElement {
  const element = h("button", { type: "button", "data-testid": testId }, label);
  element.addEventListener("click", () => {
    element.setAttribute("disabled", "");
    onClick();
  });
  return element;
}

const statusBadge = (status: string) =>
  h(
    "span",
    {
      class: `badge ${status === "delivered" ? "ok" : status === "failed" ? "fail" : status === "cancelled" ? "off" : "committed"}`,
    },
    status,
  );

const retryable = (status: string) => status === "failed" || status === "pending";

function renderDeliveries(
  webhookId: string,
  page: DeliveriesBody | undefined,
  actions: WebhookActions,
): HTMLElement {
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
        ["Event", "Type", "Status", "Attempts", "Last error", "Next attempt", ""].map((l) => h("th", {}, l)),
      ),
    ),
    h(
      "tbody",
      {},
      page.deliveries.map((d) =>
        h(
          "tr",
          { "data-testid": "delivery", "data-event-id": d.event_id, "data-status": d.status },
          h(
            "td",
            {},
            h(
              "a",
              {
                href: `#/delivery/${encodeURIComponent(webhookId)}/${d.event_id}`,
                "data-testid": "delivery-link",
              },
              h("code", {}, d.event_id.slice(0, 14) + "…"),
            ),
          ),
          h("td", {}, d.event_type),
          h("td", {}, statusBadge(d.status)),
          h("td", { class: "num" }, d.attempts),
          h("td", {}, d.last_error ?? "—"),
          h("td", {}, time(d.next_attempt_at)),
          h(
            "td",
            {},
            retryable(d.status)
              ? button("Retry now", "retry", () => actions.retry(webhookId, d.event_id))
              : null,
          ),
        ),
      ),
    ),
  );
}

/** One delivery: its attempts so far, and the exact payload every attempt sends (and signs). */
export function renderDelivery(detail: DeliveryDetailBody, actions: WebhookActions): HTMLElement {
  const d = detail.delivery;
  return h(
    "section",
    { "data-view": "delivery" },
    h("p", {}, h("a", { href: "#/webhooks" }, "« Webhooks")),
    h("h2", {}, `Delivery of ${d.event_type} to ${detail.webhook_id} `, statusBadge(d.status)),
    retryable(d.status)
      ? button("Retry now", "retry", () => actions.retry(detail.webhook_id, d.event_id))
      : null,
    h(
      "div",
      { class: "cards" },
      h(
        "article",
        {},
        h("h3", {}, "Attempts"),
        h(
          "dl",
          { "data-testid": "delivery-attempts" },
          row("Event", h("code", {}, d.event_id)),
          row("Attempts", String(d.attempts)),
          row("Last attempt", time(d.last_attempt_at)),
          row("Last answer", d.last_status_code === null ? "—" : `HTTP ${d.last_status_code}`),
          row("Last error", d.last_error ?? "—"),
          row("Next attempt", time(d.next_attempt_at)),
          row("Delivered", time(d.delivered_at)),
          row("Created", time(d.created_at)),
        ),
        detail.attempts.length === 0
          ? h("p", { class: "muted" }, "No attempt has finished yet.")
          : h(
              "table",
              { "data-testid": "attempt-history" },
              h(
                "thead",
                {},
                h(
                  "tr",
                  {},
                  ["#", "At", "Outcome", "Answer", "Error"].map((l) => h("th", {}, l)),
                ),
              ),
              h(
                "tbody",
                {},
                detail.attempts.map((a) =>
                  h(
                    "tr",
                    { "data-testid": "attempt", "data-outcome": a.outcome },
                    h("td", { class: "num" }, String(a.attempt)),
                    h("td", {}, time(a.at)),
                    h(
                      "td",
                      {},
                      h(
                        "span",
                        { class: `badge ${a.outcome === "delivered" ? "ok" : "fail"}` },
                        a.outcome === "delivered"
                          ? "delivered"
                          : a.outcome === "pending"
                            ? "failed, retried"
                            : "failed, given up",
                      ),
                    ),
                    h("td", {}, a.status_code === null ? "—" : `HTTP ${a.status_code}`),
                    h("td", {}, a.error ?? "—"),
                  ),
                ),
              ),
            ),
      ),
      h(
        "article",
        {},
        h("h3", {}, "Payload"),
        detail.event
          ? [
              h(
                "p",
                { class: "muted" },
                `${detail.event.payload_bytes} bytes, created `,
                time(detail.event.created_at),
              ),
              detail.event.retracted_at
                ? h(
                    "p",
                    { class: "state warn" },
                    "Retracted (a reorganisation undid its source) at ",
                    time(detail.event.retracted_at),
                  )
                : null,
              h(
                "pre",
                { class: "payload", "data-testid": "delivery-payload" },
                JSON.stringify(detail.event.payload, null, 2),
              ),
            ]
          : h("p", { class: "muted" }, "The event is no longer stored."),
      ),
    ),
  );
}
