/**
 * The webhook dispatcher (docs/webhooks.md): each `tick()` claims the outbox's due deliveries and
 * POSTs each event's stored JSON body, signed with the subscription's secret. A 2xx answer marks it
 * delivered; anything else (other status, redirect, network error, timeout) schedules a retry with
 * exponential backoff, until `maxAttempts`, then the delivery is `failed`. All state is in the store,
 * so a restarted operator carries on where it stopped; an attempt cut short by a crash is retried
 * once its lease runs out (at-least-once delivery: receivers deduplicate by event id).
 */
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from "../../sdk/webhooks";
import type { Clock } from "../clock";
import type { Logger } from "../logger";
import type { DueWebhookDelivery, Store, WebhookAttemptOutcome } from "../store";

export const WEBHOOK_USER_AGENT = "Surety-Webhooks/1";
/** Deliveries claimed per tick (sent concurrently). */
export const DEFAULT_BATCH_SIZE = 20;
/** Lease beyond the attempt timeout before a claimed delivery is due again (crash recovery). */
const LEASE_MARGIN_SECONDS = 30;
/** Response bytes read from a receiver (for the error message); the rest is discarded. */
const MAX_ERROR_BODY = 200;

export interface RetryPolicy {
  /** Attempts in total (the first one included) before a delivery is `failed`. */
  maxAttempts: number;
  /** Delay after the first failed attempt, seconds; doubled after each further failure. */
  backoffBaseSeconds: number;
  /** Largest delay between attempts, seconds. */
  backoffMaxSeconds: number;
}

/** Delay after the `attempts`-th failed attempt: min(max, base · 2^(attempts − 1)) (before jitter). */
export function backoffSeconds(policy: RetryPolicy, attempts: number): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 30);
  return Math.min(policy.backoffMaxSeconds, policy.backoffBaseSeconds * 2 ** exponent);
}

export type WebhookFetch = (url: string, init: RequestInit) => Promise<Response>;

export interface WebhookDispatcherOptions extends RetryPolicy {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** Per-attempt limit on connecting, sending and receiving the answer. */
  timeoutMs: number;
  batchSize?: number;
  /** Extra delay added to a backoff delay (default: up to 10% of it, random); `() => 0` in tests. */
  jitter?: (delaySeconds: number) => number;
  fetch?: WebhookFetch;
}

export interface DispatchTickResult {
  attempted: number;
  delivered: number;
  retrying: number;
  failed: number;
}

type SendResult =
  | { ok: true; statusCode: number }
  | { ok: false; message: string; statusCode: number | null };

const defaultJitter = (delay: number) => Math.floor(Math.random() * (delay / 10));

export class WebhookDispatcher {
  private running: Promise<DispatchTickResult> | null = null;
  private readonly fetch: WebhookFetch;
  private readonly jitter: (delaySeconds: number) => number;
  private readonly leaseSeconds: number;

  constructor(private readonly options: WebhookDispatcherOptions) {
    for (const key of ["maxAttempts", "backoffBaseSeconds", "backoffMaxSeconds", "timeoutMs"] as const) {
      if (!Number.isSafeInteger(options[key]) || options[key] < 1) {
        throw new RangeError(`${key} must be a positive integer`);
      }
    }
    this.fetch = options.fetch ?? ((url, init) => fetch(url, init));
    this.jitter = options.jitter ?? defaultJitter;
    this.leaseSeconds = Math.ceil(options.timeoutMs / 1000) + LEASE_MARGIN_SECONDS;
  }

  /** One round; concurrent calls share the running round (rounds never overlap). */
  tick(): Promise<DispatchTickResult> {
    this.running ??= this.step().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async step(): Promise<DispatchTickResult> {
    const { store, clock } = this.options;
    const due = await store.claimDueWebhookDeliveries(
      clock.nowSeconds(),
      this.options.batchSize ?? DEFAULT_BATCH_SIZE,
      this.leaseSeconds,
    );
    const result: DispatchTickResult = { attempted: due.length, delivered: 0, retrying: 0, failed: 0 };
    const outcomes = await Promise.all(due.map((delivery) => this.attempt(delivery)));
    for (const outcome of outcomes) {
      if (outcome.status === "delivered") result.delivered++;
      else if (outcome.status === "pending") result.retrying++;
      else result.failed++;
    }
    return result;
  }

  private async attempt(delivery: DueWebhookDelivery): Promise<WebhookAttemptOutcome> {
    const { store, clock, logger } = this.options;
    const sent = await this.send(delivery);
    const now = clock.nowSeconds();
    let outcome: WebhookAttemptOutcome;
    if (sent.ok) {
      outcome = { status: "delivered", statusCode: sent.statusCode };
    } else if (delivery.attempts >= this.options.maxAttempts) {
      outcome = { status: "failed", error: sent.message, statusCode: sent.statusCode };
    } else {
      const delay = backoffSeconds(this.options, delivery.attempts);
      const next = now + delay + Math.max(0, Math.floor(this.jitter(delay)));
      outcome = { status: "pending", nextAttemptAt: next, error: sent.message, statusCode: sent.statusCode };
    }
    await store.recordWebhookAttempt(delivery.eventId, delivery.subscriptionId, outcome, now);
    if (outcome.status !== "delivered") {
      const log = outcome.status === "failed" ? logger.warn.bind(logger) : logger.debug.bind(logger);
      log(
        {
          event_id: delivery.eventId,
          subscription_id: delivery.subscriptionId,
          attempts: delivery.attempts,
          status: outcome.status,
          error: outcome.error,
        },
        outcome.status === "failed"
          ? "webhook delivery failed for good"
          : "webhook delivery failed; will retry",
      );
    }
    return outcome;
  }

  /** One POST; `ok` when the receiver accepted the event (2xx). */
  private async send(delivery: DueWebhookDelivery): Promise<SendResult> {
    const timestamp = this.options.clock.nowSeconds();
    try {
      const response = await this.fetch(delivery.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "User-Agent": WEBHOOK_USER_AGENT,
          [SIGNATURE_HEADER]: signWebhook(delivery.payload, delivery.secret, timestamp),
          [EVENT_ID_HEADER]: delivery.eventId,
        },
        body: delivery.payload,
        // A redirect is not an acceptance; following it could send the event somewhere unvetted.
        redirect: "manual",
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const text = await response.text().catch(() => "");
      if (response.status >= 200 && response.status < 300) return { ok: true, statusCode: response.status };
      const snippet = text.slice(0, MAX_ERROR_BODY);
      return {
        ok: false,
        message: `HTTP ${response.status}${snippet ? `: ${snippet}` : ""}`,
        statusCode: response.status,
      };
    } catch (error) {
      const name = (error as Error).name;
      if (name === "TimeoutError" || name === "AbortError") {
        return { ok: false, message: `timeout after ${this.options.timeoutMs} ms`, statusCode: null };
      }
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return {
        ok: false,
        message: `network error: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
        statusCode: null,
      };
    }
  }
}

/** Runs `dispatcher.tick()` every `intervalMs` until stopped; a failing tick is logged and retried. */
export function startDispatcherLoop(
  dispatcher: WebhookDispatcher,
  intervalMs: number,
  logger: Logger,
): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let round: Promise<void> = Promise.resolve();
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      round = dispatcher
        .tick()
        .then(
          () => undefined,
          (error: unknown) => logger.error({ err: error }, "webhook dispatch failed; retrying next round"),
        )
        .finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  schedule();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}
