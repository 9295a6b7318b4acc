/**
 * Admin API for webhook subscriptions (docs/webhooks.md):
 *
 *   POST   /core/admin/webhooks                  create (answers the secret, once)
 *   GET    /core/admin/webhooks                  list (secrets never shown), with each one's backlog
 *   GET    /core/admin/webhooks/:id              one subscription
 *   DELETE /core/admin/webhooks/:id              remove it and its deliveries (API-made ones only)
 *   GET    /core/admin/webhooks/:id/deliveries   delivery status, newest first (?status=&limit=&cursor=)
 *   GET    /core/admin/webhooks/:id/deliveries/:event_id         one delivery, its attempts and payload
 *   POST   /core/admin/webhooks/:id/deliveries/:event_id/retry   send a failed (or waiting) one now
 *   POST   /core/admin/webhooks/:id/test                         queue a `webhook.test` event to it alone
 *
 * Every route needs a bearer token (401 otherwise) of a wallet in `SURETY_ADMIN_WALLETS` (403).
 */
import { type RequestHandler, Router } from "express";
import type {
  CreatedWebhookSubscription,
  ListedWebhookSubscription,
  WebhookDeliveries,
  WebhookDelivery,
  WebhookDeliveryAction,
  WebhookDeliveryDetail,
  WebhookSubscription,
  WebhookSubscriptions,
} from "../../sdk/api-admin";
import { body } from "express-validator";
import { randomBytes } from "node:crypto";
import { nowMilliseconds } from "../clock";
import { WireError } from "../../sdk/errors";
import { WEBHOOK_API_VERSION, WEBHOOK_TEST_EVENT_TYPE, type WebhookEnvelope } from "../../sdk/webhooks";
import { principalOf, requireAccessToken } from "./access-middleware";
import { isAdmin } from "../auth";
import {
  WEBHOOK_DELIVERY_STATUSES,
  type WebhookBacklog,
  type WebhookDeliveryRecord,
  type WebhookDeliveryStatus,
  type WebhookSubscriptionRecord,
} from "../store";
import {
  type NewSubscription,
  newSubscription,
  parseDescription,
  parseEventTypes,
  parseNewSubscriptionBody,
  parseWebhookSecret,
  parseWebhookUrl,
} from "../webhooks/subscriptions";
import type { StoreAreas } from "../store";
import type { RouteModule } from "./context";
import { conflict, forbidden, notFound } from "./errors";
import { bodyField, parsedBy, pathParam, queryParam, validate, validated, wholeBody } from "./validation";
import {
  BODY_400_CODES,
  COMMON_ERRORS,
  CURSOR_PARAMETER,
  PATH_400_CODES,
  adminOnly,
  errorAnswer,
  jsonAnswer,
  jsonBody,
  limitParameter,
  mount,
  operation,
  ref,
} from "./operations";

/** The body of `POST /core/admin/webhooks`: an object of known fields, each parsed as the configuration's are. */
const newSubscriptionBody = validate(
  wholeBody(parseNewSubscriptionBody),
  bodyField("url", parseWebhookUrl),
  parsedBy(body("secret").optional(), (value) => parseWebhookSecret(value, "secret")),
  bodyField("event_types", parseEventTypes),
  bodyField("description", parseDescription),
);

/** `?limit=&status=&cursor=` of a subscription's deliveries. */
const deliveryPage = validate(
  queryParam("limit", parseLimit),
  queryParam("status", parseStatus),
  queryParam("cursor", parseCursor),
);

export const DEFAULT_DELIVERY_PAGE = 50;
export const MAX_DELIVERY_PAGE = 500;

const WEBHOOK_ID_PARAMETER = {
  name: "id",
  in: "path",
  required: true,
  schema: { type: "string" },
  description: "The subscription id (`whk_…` for API-made ones, the configured id otherwise).",
};
const EVENT_ID_PARAMETER = {
  name: "event_id",
  in: "path",
  required: true,
  schema: { type: "string", pattern: "^evt_[0-9a-z_]{1,64}$" },
  description: "The event id (`evt_…`) of one of the subscription's deliveries.",
};
/** The 404 of an unknown subscription id, answered by `subscription()` below. */
const WEBHOOK_NOT_FOUND = "webhook_not_found";
const WEBHOOK_NOT_FOUND_ANSWER = errorAnswer("No subscription with that id.", [WEBHOOK_NOT_FOUND]);
const WEBHOOK_ID_MALFORMED = errorAnswer("The id is not valid percent-encoding.", PATH_400_CODES);
const EVENT_ID_MALFORMED = errorAnswer("Malformed event id.", ["invalid_request", ...PATH_400_CODES]);
const DELIVERY_NOT_FOUND = errorAnswer("No such subscription, or no delivery of that event to it.", [
  WEBHOOK_NOT_FOUND,
  "delivery_not_found",
]);

/** The webhook admin operations: mounted below, described in Core's OpenAPI document. */
export const WEBHOOK_ADMIN_OPERATIONS = {
  create: operation(
    "post",
    "/core/admin/webhooks",
    adminOnly({
      summary: "Add a webhook subscription (the answer shows its secret, once)",
      requestBody: jsonBody(ref("NewWebhookSubscription")),
      responses: {
        "201": jsonAnswer("Created.", ref("CreatedWebhookSubscription")),
        "400": errorAnswer("A field refused (the message names it); malformed JSON.", [
          "invalid_request",
          ...BODY_400_CODES,
        ]),
        ...COMMON_ERRORS,
      },
    }),
  ),
  list: operation(
    "get",
    "/core/admin/webhooks",
    adminOnly({
      summary: "Every subscription, configured and API-made (secrets never shown), with its backlog",
      responses: { "200": jsonAnswer("The subscriptions.", ref("WebhookSubscriptions")) },
    }),
  ),
  one: operation(
    "get",
    "/core/admin/webhooks/{id}",
    adminOnly({
      summary: "One subscription (without its secret)",
      parameters: [WEBHOOK_ID_PARAMETER],
      responses: {
        "200": jsonAnswer("The subscription.", ref("WebhookSubscription")),
        "400": WEBHOOK_ID_MALFORMED,
        "404": WEBHOOK_NOT_FOUND_ANSWER,
      },
    }),
  ),
  remove: operation(
    "delete",
    "/core/admin/webhooks/{id}",
    adminOnly({
      summary: "Remove an API-made subscription and its deliveries",
      parameters: [WEBHOOK_ID_PARAMETER],
      responses: {
        "204": { description: "Removed, with its pending and past deliveries." },
        "400": WEBHOOK_ID_MALFORMED,
        "404": WEBHOOK_NOT_FOUND_ANSWER,
        "409": errorAnswer("A configured subscription: remove it from `SURETY_WEBHOOKS`.", [
          "configured_webhook",
        ]),
      },
    }),
  ),
  deliveries: operation(
    "get",
    "/core/admin/webhooks/{id}/deliveries",
    adminOnly({
      summary: "A subscription's deliveries and their status, newest first, paginated",
      parameters: [
        WEBHOOK_ID_PARAMETER,
        { name: "status", in: "query", required: false, schema: ref("WebhookDeliveryStatus") },
        limitParameter(MAX_DELIVERY_PAGE, DEFAULT_DELIVERY_PAGE),
        CURSOR_PARAMETER,
      ],
      responses: {
        "200": jsonAnswer("One page; `next_cursor` is null on the last.", ref("WebhookDeliveries")),
        "400": errorAnswer("`status`, `limit` or `cursor` malformed (the message names it).", [
          "invalid_request",
          ...PATH_400_CODES,
        ]),
        "404": WEBHOOK_NOT_FOUND_ANSWER,
      },
    }),
  ),
  delivery: operation(
    "get",
    "/core/admin/webhooks/{id}/deliveries/{event_id}",
    adminOnly({
      summary: "One delivery: its attempts so far and the event's payload",
      parameters: [WEBHOOK_ID_PARAMETER, EVENT_ID_PARAMETER],
      responses: {
        "200": jsonAnswer("The delivery and its event.", ref("WebhookDeliveryDetail")),
        "400": EVENT_ID_MALFORMED,
        "404": DELIVERY_NOT_FOUND,
      },
    }),
  ),
  retry: operation(
    "post",
    "/core/admin/webhooks/{id}/deliveries/{event_id}/retry",
    adminOnly({
      summary: "Send a failed (or waiting) delivery again now; its attempt count is kept",
      parameters: [WEBHOOK_ID_PARAMETER, EVENT_ID_PARAMETER],
      responses: {
        "200": jsonAnswer("The delivery, pending and due now.", ref("WebhookDeliveryAction")),
        "400": EVENT_ID_MALFORMED,
        "404": DELIVERY_NOT_FOUND,
        "409": errorAnswer("The delivery is delivered or cancelled.", ["delivery_not_retryable"]),
      },
    }),
  ),
  test: operation(
    "post",
    "/core/admin/webhooks/{id}/test",
    adminOnly({
      summary: "Queue a `webhook.test` event to this subscription alone",
      parameters: [WEBHOOK_ID_PARAMETER],
      responses: {
        "201": jsonAnswer("The test event's delivery, pending and due now.", ref("WebhookDeliveryAction")),
        "400": WEBHOOK_ID_MALFORMED,
        "404": WEBHOOK_NOT_FOUND_ANSWER,
      },
    }),
  ),
};

const isoAt = (seconds: number) => new Date(seconds * 1000).toISOString();
const iso = (seconds: number | null) => (seconds === null ? null : isoAt(seconds));
// The store keeps event types as strings; it writes only known ones (and the test event).
type EventTypes = WebhookSubscription["event_types"];
type DeliveredEventType = WebhookDelivery["event_type"];

function subscriptionView(s: WebhookSubscriptionRecord): WebhookSubscription {
  return {
    id: s.id,
    url: s.url,
    event_types: [...s.eventTypes] as EventTypes,
    description: s.description,
    source: s.source,
    created_at: isoAt(s.createdAt),
  };
}

/** `backlog` of a subscription: what is still to be sent and what gave up (zeros when nothing is). */
function backlogView(
  subscriptionId: string,
  all: readonly WebhookBacklog[],
): ListedWebhookSubscription["backlog"] {
  const b = all.find((item) => item.subscriptionId === subscriptionId);
  return {
    pending: b?.pending ?? 0,
    failed: b?.failed ?? 0,
    oldest_pending_at: iso(b?.oldestPendingAt ?? null),
    max_pending_attempts: b?.maxPendingAttempts ?? 0,
  };
}

function deliveryView(d: WebhookDeliveryRecord): WebhookDelivery {
  return {
    event_id: d.eventId,
    event_type: d.eventType as DeliveredEventType,
    status: d.status,
    attempts: d.attempts,
    last_error: d.lastError,
    last_status_code: d.lastStatusCode,
    // To the millisecond: when the retry may start, never rounded down.
    next_attempt_at: d.nextAttemptAtMs === null ? null : new Date(d.nextAttemptAtMs).toISOString(),
    last_attempt_at: iso(d.lastAttemptAt),
    delivered_at: iso(d.deliveredAt),
    created_at: isoAt(d.createdAt),
  };
}

function parseLimit(raw: string): number {
  const n = /^[0-9]{1,4}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= MAX_DELIVERY_PAGE)) {
    throw new WireError("limit", `must be an integer from 1 to ${MAX_DELIVERY_PAGE}`);
  }
  return n;
}

function parseCursor(raw: string): number | undefined {
  if (raw === "") return undefined;
  if (!/^[1-9][0-9]{0,15}$/.test(raw)) throw new WireError("cursor", "is not a cursor this API issued");
  return Number(raw);
}

function parseStatus(raw: string): WebhookDeliveryStatus {
  if (!(WEBHOOK_DELIVERY_STATUSES as readonly string[]).includes(raw)) {
    throw new WireError("status", `must be one of ${WEBHOOK_DELIVERY_STATUSES.join(", ")}`);
  }
  return raw as WebhookDeliveryStatus;
}

export const webhookAdminRoutes: RouteModule<StoreAreas<"webhooks">> = (context) => {
  const { store, config, clock, logger } = context;
  const router = Router();
  const authenticated = requireAccessToken(context.accessTokens);
  const admin: RequestHandler = (req, _res, next) => {
    const { wallet } = principalOf(req);
    if (!isAdmin(config, wallet)) {
      throw forbidden("not_admin", `${wallet} is not an admin wallet (SURETY_ADMIN_WALLETS)`);
    }
    next();
  };
  const guarded = [authenticated, admin];

  const subscription = async (id: string) => {
    const found = await store.webhooks.getWebhookSubscription(id);
    if (!found) throw notFound(WEBHOOK_NOT_FOUND, `no webhook subscription ${id}`);
    return found;
  };

  mount(router, WEBHOOK_ADMIN_OPERATIONS.create, ...guarded, ...newSubscriptionBody, async (req, res) => {
    const record = newSubscription(
      validated<NewSubscription & Record<string, unknown>>(req),
      clock.nowSeconds(),
    );
    await store.webhooks.putWebhookSubscription(record);
    logger.info(
      { subscription_id: record.id, url: record.url, by: principalOf(req).wallet },
      "webhook added",
    );
    // A subscription made here is always `api` (newSubscription); the answer's type says so.
    res.status(201).json({
      ...subscriptionView(record),
      source: "api",
      secret: record.secret,
    } satisfies CreatedWebhookSubscription);
  });

  mount(router, WEBHOOK_ADMIN_OPERATIONS.list, ...guarded, async (_req, res) => {
    const [all, backlog] = await Promise.all([
      store.webhooks.listWebhookSubscriptions(),
      store.webhooks.webhookBacklog(),
    ]);
    const oldest = backlog.reduce<number | null>(
      (min, b) =>
        b.oldestPendingAt !== null && (min === null || b.oldestPendingAt < min) ? b.oldestPendingAt : min,
      null,
    );
    res.json({
      webhooks: all.map((s) => ({ ...subscriptionView(s), backlog: backlogView(s.id, backlog) })),
      backlog: {
        pending: backlog.reduce((sum, b) => sum + b.pending, 0),
        failed: backlog.reduce((sum, b) => sum + b.failed, 0),
        oldest_pending_at: iso(oldest),
      },
    } satisfies WebhookSubscriptions);
  });

  mount(router, WEBHOOK_ADMIN_OPERATIONS.one, ...guarded, async (req, res) => {
    res.json(subscriptionView(await subscription(String(req.params.id))));
  });

  mount(router, WEBHOOK_ADMIN_OPERATIONS.remove, ...guarded, async (req, res) => {
    const found = await subscription(String(req.params.id));
    if (found.source === "config") {
      throw conflict(
        "configured_webhook",
        `webhook ${found.id} comes from the operator's configuration (SURETY_WEBHOOKS); remove it there`,
      );
    }
    await store.webhooks.deleteWebhookSubscription(found.id);
    logger.info({ subscription_id: found.id, by: principalOf(req).wallet }, "webhook removed");
    res.status(204).end();
  });

  mount(router, WEBHOOK_ADMIN_OPERATIONS.deliveries, ...guarded, ...deliveryPage, async (req, res) => {
    const found = await subscription(String(req.params.id));
    const query = validated<{ limit?: number; status?: WebhookDeliveryStatus; cursor?: number }>(req);
    const limit = query.limit ?? DEFAULT_DELIVERY_PAGE;
    const rows = await store.webhooks.listWebhookDeliveries({
      subscriptionId: found.id,
      status: query.status,
      beforeSeq: query.cursor,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    res.json({
      webhook_id: found.id,
      deliveries: page.map(deliveryView),
      next_cursor: rows.length > limit ? String(page[page.length - 1].seq) : null,
    } satisfies WebhookDeliveries);
  });

  /** A delivery of the subscription, or 404 `delivery_not_found`. */
  const delivery = async (subscriptionId: string, eventId: string) => {
    const found = await store.webhooks.getWebhookDelivery(eventId, subscriptionId);
    if (!found) {
      throw notFound("delivery_not_found", `no delivery of event ${eventId} to webhook ${subscriptionId}`);
    }
    return found;
  };
  const eventIdParam = validate(pathParam("event_id", parseEventId));

  mount(router, WEBHOOK_ADMIN_OPERATIONS.delivery, ...guarded, ...eventIdParam, async (req, res) => {
    const found = await subscription(String(req.params.id));
    const { event_id: eventId } = validated<{ event_id: string }>(req);
    const [record, event, attempts] = await Promise.all([
      delivery(found.id, eventId),
      store.webhooks.getWebhookEvent(eventId),
      store.webhooks.listWebhookAttempts(eventId, found.id),
    ]);
    res.json({
      webhook_id: found.id,
      delivery: deliveryView(record),
      event: event && {
        id: event.id,
        type: event.type,
        created_at: isoAt(event.createdAt),
        retracted_at: iso(event.retractedAt),
        // The exact bytes every attempt sends (and signs), and the same parsed.
        payload: JSON.parse(event.payload) as Record<string, unknown>,
        payload_bytes: Buffer.byteLength(event.payload, "utf8"),
      },
      attempts: attempts.map((a) => ({
        attempt: a.attempt,
        at: isoAt(a.at),
        outcome: a.outcome,
        status_code: a.statusCode,
        error: a.error,
      })),
    } satisfies WebhookDeliveryDetail);
  });

  mount(router, WEBHOOK_ADMIN_OPERATIONS.retry, ...guarded, ...eventIdParam, async (req, res) => {
    const found = await subscription(String(req.params.id));
    const { event_id: eventId } = validated<{ event_id: string }>(req);
    const before = await delivery(found.id, eventId);
    const retried = await store.webhooks.retryWebhookDelivery(eventId, found.id, nowMilliseconds(clock));
    if (!retried) {
      throw conflict(
        "delivery_not_retryable",
        `the delivery of ${eventId} to ${found.id} is ${before.status}: only failed or pending deliveries are retried`,
      );
    }
    logger.info(
      { subscription_id: found.id, event_id: eventId, by: principalOf(req).wallet, was: before.status },
      "webhook delivery retried by an operator",
    );
    res.json({ webhook_id: found.id, delivery: deliveryView(retried) } satisfies WebhookDeliveryAction);
  });

  mount(router, WEBHOOK_ADMIN_OPERATIONS.test, ...guarded, async (req, res) => {
    const found = await subscription(String(req.params.id));
    const now = clock.nowSeconds();
    const id = `evt_${randomBytes(16).toString("hex")}`;
    const envelope: WebhookEnvelope = {
      id,
      type: WEBHOOK_TEST_EVENT_TYPE,
      created_at: iso(now)!,
      api_version: WEBHOOK_API_VERSION,
      data: { webhook_id: found.id, test: true, requested_by: principalOf(req).wallet },
    };
    await store.webhooks.insertWebhookEventFor(
      { id, type: WEBHOOK_TEST_EVENT_TYPE, createdAt: now, payload: JSON.stringify(envelope) },
      found.id,
      now,
    );
    logger.info(
      { subscription_id: found.id, event_id: id, by: principalOf(req).wallet },
      "webhook test event",
    );
    res.status(201).json({
      webhook_id: found.id,
      delivery: deliveryView(await delivery(found.id, id)),
    } satisfies WebhookDeliveryAction);
  });

  return router;
};

/** `evt_` and up to 64 characters of the id alphabet (what Core issues: hex, `test_`). */
function parseEventId(raw: string): string {
  if (!/^evt_[0-9a-z_]{1,64}$/.test(raw)) throw new WireError("event_id", "must be an event id (evt_…)");
  return raw;
}
