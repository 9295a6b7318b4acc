/**
 * A webhook receiver's HTTP request handler (docs/webhooks.md), for `node:http` or Express: reads the raw
 * body, checks it with the pure protocol's {@link verifyWebhook} (sdk/webhooks.ts), drops duplicates and
 * answers. An I/O kit: it reads the request stream and writes the response.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  SIGNATURE_HEADER,
  type WebhookEnvelope,
  WebhookDeduplicator,
  WebhookVerificationError,
  verifyWebhook,
} from "../webhooks";

export interface WebhookHandlerOptions {
  secret: string;
  /** Called once per verified, not-yet-seen event; throw (or reject) to answer 500 so Core retries. */
  onEvent(envelope: WebhookEnvelope): void | Promise<void>;
  deduplicator?: WebhookDeduplicator;
  toleranceSeconds?: number;
  /** Receiver clock in unix seconds (tests). */
  now?: () => number;
  /** Largest body read when the request body was not already buffered (default 1 MiB). */
  maxBodyBytes?: number;
}

type WebhookRequest = IncomingMessage & { body?: unknown };

const DEFAULT_MAX_BODY_BYTES = 1 << 20;

async function readRawBody(req: WebhookRequest, limit: number): Promise<Buffer> {
  if (Buffer.isBuffer(req.body)) return req.body;
  if (typeof req.body === "string") return Buffer.from(req.body, "utf8");
  if (req.body !== undefined && req.body !== null && typeof req.body === "object" && req.readableEnded) {
    throw new Error(
      "webhook handler needs the raw request body: mount it before any JSON parser, or use express.raw()",
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new WebhookVerificationError("malformed_body", `body exceeds ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function answer(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json");
  res.end(JSON.stringify(body));
}

/**
 * A request handler for `node:http` or Express (mount it with no JSON parser in front, or behind
 * `express.raw({ type: "application/json" })`): verifies the signature over the raw body, drops
 * duplicates (200), hands new events to `onEvent` and answers 200 once it returned. A bad delivery
 * gets 400 (Core retries it, then gives up); an `onEvent` failure gets 500 and the event is not
 * marked seen, so Core's retry is processed.
 */
export function createWebhookHandler(
  options: WebhookHandlerOptions,
): (req: WebhookRequest, res: ServerResponse) => Promise<void> {
  const dedup = options.deduplicator ?? new WebhookDeduplicator();
  return async (req, res) => {
    let envelope: WebhookEnvelope;
    try {
      const raw = await readRawBody(req, options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
      const header = req.headers[SIGNATURE_HEADER.toLowerCase()];
      envelope = verifyWebhook(raw, Array.isArray(header) ? header[0] : header, options.secret, {
        now: options.now?.(),
        toleranceSeconds: options.toleranceSeconds,
      });
    } catch (error) {
      if (error instanceof WebhookVerificationError) {
        answer(res, 400, { error: error.message, code: error.reason });
        return;
      }
      answer(res, 500, { error: "could not read the webhook", code: "internal_error" });
      return;
    }
    if (dedup.has(envelope.id)) {
      answer(res, 200, { received: true, duplicate: true });
      return;
    }
    try {
      await options.onEvent(envelope);
    } catch {
      answer(res, 500, { error: "event handler failed", code: "handler_failed" });
      return;
    }
    dedup.markSeen(envelope.id);
    answer(res, 200, { received: true, duplicate: false });
  };
}
