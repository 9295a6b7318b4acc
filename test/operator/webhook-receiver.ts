/**
 * A real webhook receiver for tests: a node:http server on a free loopback port that verifies every
 * delivery with the sdk's `createWebhookHandler` (signature, timestamp, duplicates) and records what
 * arrived. It can be told to refuse the next N deliveries (503) or to process one and then "lose"
 * the answer (503 after the handler ran), so Core's retries and the receiver's dedup can be tested,
 * or to hold every answer until released (a receiver that hangs). Tests wait for arrivals with
 * {@link WebhookReceiver.arrivals} / {@link WebhookReceiver.accepted}, never with sleeps.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createWebhookHandler } from "../../sdk/kits/webhook-receiver";
import { WebhookDeduplicator, type WebhookEnvelope } from "../../sdk/webhooks";

export const RECEIVER_SECRET = "whsec_test_receiver_secret_0123456789";

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

export class WebhookReceiver {
  /** Events the handler accepted (verified, not duplicates), in arrival order. */
  readonly events: WebhookEnvelope[] = [];
  /** Every request, whatever the answer. */
  readonly requests: ReceivedRequest[] = [];
  readonly dedup = new WebhookDeduplicator(100);
  /** Answer the next N deliveries with 503 without looking at them. */
  refuseNext = 0;
  /** Process the next N deliveries, then answer 503 anyway (the answer was "lost"). */
  loseAnswerOfNext = 0;
  /** Hold every delivery unanswered (the receiver hangs) until {@link release}. */
  hold = false;
  /** Deliveries held unanswered, oldest first. */
  private held: (() => Promise<void>)[] = [];
  private waiters: { ready: () => boolean; resolve: () => void }[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(options: {
    secret?: string;
    now: () => number;
    path?: string;
  }): Promise<WebhookReceiver> {
    const secret = options.secret ?? RECEIVER_SECRET;
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const receiver = new WebhookReceiver(server, `http://127.0.0.1:${port}${options.path ?? "/hooks"}`);
    const handler = createWebhookHandler({
      secret,
      deduplicator: receiver.dedup,
      now: options.now,
      onEvent: (envelope) => {
        receiver.events.push(envelope);
      },
    });
    server.on("request", (req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const body = Buffer.concat(chunks);
        const record: ReceivedRequest = { headers: req.headers, body: body.toString("utf8"), status: 0 };
        receiver.requests.push(record);
        res.on("finish", () => {
          record.status = res.statusCode;
          receiver.wake();
        });
        receiver.wake();
        if (receiver.hold) {
          receiver.held.push(() => handler(Object.assign(req, { body }), res));
          return;
        }
        if (receiver.refuseNext > 0) {
          receiver.refuseNext--;
          res.writeHead(503).end("busy");
          return;
        }
        if (receiver.loseAnswerOfNext > 0) {
          receiver.loseAnswerOfNext--;
          // The handler answers into a sink; the real answer is a 503.
          const sink = { statusCode: 0, setHeader: () => undefined, end: () => undefined };
          await handler(Object.assign(req, { body }), sink as unknown as ServerResponse);
          res.writeHead(503).end("answer lost");
          return;
        }
        await handler(Object.assign(req, { body }), res);
      })();
    });
    return receiver;
  }

  /** Requests held unanswered now. */
  get heldCount(): number {
    return this.held.length;
  }

  /** Stops holding and answers every held delivery (through the handler), oldest first. */
  async release(): Promise<void> {
    this.hold = false;
    const held = this.held;
    this.held = [];
    for (const answer of held) await answer();
  }

  /** Resolves once `n` requests have arrived (answered or not). */
  arrivals(n: number): Promise<void> {
    return this.until(() => this.requests.length >= n);
  }

  /** Resolves once `n` events have been accepted and answered. */
  accepted(n: number): Promise<void> {
    return this.until(() => this.requests.filter((r) => r.status >= 200 && r.status < 300).length >= n);
  }

  private until(ready: () => boolean): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ ready, resolve }));
  }

  private wake(): void {
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.ready()) return true;
      waiter.resolve();
      return false;
    });
  }

  /** Accepted events of one type. */
  ofType(type: string): WebhookEnvelope[] {
    return this.events.filter((e) => e.type === type);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
