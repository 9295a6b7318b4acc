/**
 * The webhook dispatcher (docs/webhooks.md): each round claims the outbox's due deliveries and
 * POSTs each event's stored JSON body, signed with the subscription's secret. A 2xx answer marks it
 * delivered; anything else (other status, redirect, network error, timeout) schedules a retry with
 * exponential backoff, until `maxAttempts`, then the delivery is `failed`. All state is in the store,
 * so a restarted operator carries on where it stopped; an attempt cut short by a crash is retried
 * once its lease runs out (at-least-once delivery: receivers deduplicate by event id).
 *
 * Lanes: each subscription has its own lane of at most `laneWidth` attempts under way. A round
 * claims only what the lanes have room for and does not wait for the attempts it starts, so a
 * receiver that hangs until the timeout holds its own lane and nobody else's: the next round
 * (the loop's next poll, or the one an attempt's end triggers) serves the other subscriptions.
 */
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from "../../sdk/webhooks";
import { type Clock, nowMilliseconds } from "../clock";
import type { Logger } from "../logger";
import type { DueWebhookDelivery, StoreAreas, WebhookAttemptOutcome } from "../store";

export const WEBHOOK_USER_AGENT = "Surety-Webhooks/1";
/** Most deliveries claimed by one round (across all lanes). */
export const DEFAULT_BATCH_SIZE = 20;
/** Most attempts under way at once to one subscription's endpoint. */
export const DEFAULT_LANE_WIDTH = 8;
/** Lease beyond the attempt timeout before a claimed delivery is due again (crash recovery). */
const LEASE_MARGIN_MS = 30_000;
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
  store: StoreAreas<"webhooks">;
  clock: Clock;
  logger: Logger;
  /** Per-attempt limit on connecting, sending and receiving the answer. */
  timeoutMs: number;
  batchSize?: number;
  /** Most attempts under way at once per subscription (default {@link DEFAULT_LANE_WIDTH}). */
  laneWidth?: number;
  /**
   * Extra delay in milliseconds added to a backoff delay of `delayMs` milliseconds (default: a random
   * whole number of milliseconds in [0, 10 % of it)); `() => 0` in tests.
   */
  jitter?: (delayMs: number) => number;
  fetch?: WebhookFetch;
}

export interface DispatchTickResult {
  attempted: number;
  delivered: number;
  retrying: number;
  failed: number;
}

/** One attempt a round started. */
export interface StartedAttempt {
  eventId: string;
  subscriptionId: string;
  /** The recorded outcome; rejects only if the store could not record it (the lease then retries it). */
  outcome: Promise<WebhookAttemptOutcome>;
}

export interface DispatchRound {
  /** The attempts this round started, under way. */
  attempts: readonly StartedAttempt[];
  /** The round's counts, once all of its attempts are recorded. */
  done: Promise<DispatchTickResult>;
}

type SendResult =
  | { ok: true; statusCode: number }
  | { ok: false; message: string; statusCode: number | null };

/** Up to 10 % of the delay, to the millisecond (below 1 % of a second it would vanish into rounding). */
export const defaultJitter = (delayMs: number): number => Math.floor(Math.random() * (delayMs / 10));

/**
 * When the retry after the `attempts`-th failed attempt may start, unix milliseconds: the attempt's end
 * plus the backoff and the jitter, never rounded down (docs/webhooks.md, "Delivery model").
 */
export function retryAtMs(
  policy: RetryPolicy,
  attempts: number,
  failedAtMs: number,
  jitter: (delayMs: number) => number = defaultJitter,
): number {
  const delayMs = backoffSeconds(policy, attempts) * 1000;
  return failedAtMs + delayMs + Math.max(0, Math.floor(jitter(delayMs)));
}

export class WebhookDispatcher {
  /** The claim of the latest round: claims run one at a time, so lane counts are exact. */
  private claiming: Promise<unknown> = Promise.resolve();
  /** Attempts under way per subscription id. */
  private readonly inFlight = new Map<string, number>();
  /** Every attempt under way (settles once recorded, never rejects). */
  private readonly running = new Set<Promise<void>>();
  private readonly fetch: WebhookFetch;
  private readonly jitter: (delayMs: number) => number;
  private readonly leaseMs: number;
  private readonly laneWidth: number;

  constructor(private readonly options: WebhookDispatcherOptions) {
    for (const key of ["maxAttempts", "backoffBaseSeconds", "backoffMaxSeconds", "timeoutMs"] as const) {
      if (!Number.isSafeInteger(options[key]) || options[key] < 1) {
        throw new RangeError(`${key} must be a positive integer`);
      }
    }
    this.laneWidth = options.laneWidth ?? DEFAULT_LANE_WIDTH;
    if (!Number.isSafeInteger(this.laneWidth) || this.laneWidth < 1) {
      throw new RangeError("laneWidth must be a positive integer");
    }
    this.fetch = options.fetch ?? ((url, init) => fetch(url, init));
    this.jitter = options.jitter ?? defaultJitter;
    this.leaseMs = options.timeoutMs + LEASE_MARGIN_MS;
  }

  /**
   * One round: claims the due deliveries the lanes have room for and starts them. Resolves once
   * they are started (not finished): attempts still under way from earlier rounds keep their lane
   * slots, and nothing here waits for them.
   */
  dispatch(): Promise<DispatchRound> {
    const round = this.claiming.then(() => this.claimAndStart());
    this.claiming = round.catch(() => undefined);
    return round;
  }

  /** One round, resolved once the attempts it started are recorded (tests and tools drive it by hand). */
  async tick(): Promise<DispatchTickResult> {
    return (await this.dispatch()).done;
  }

  /** Attempts under way, all subscriptions. */
  get attemptsInFlight(): number {
    return this.running.size;
  }

  /** Resolves once no attempt is under way (each ends within the timeout). */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  private async claimAndStart(): Promise<DispatchRound> {
    const { store, clock, logger } = this.options;
    const due = await store.webhooks.claimDueWebhookDeliveries(
      nowMilliseconds(clock),
      this.options.batchSize ?? DEFAULT_BATCH_SIZE,
      this.leaseMs,
      // A copy: the store may run the claim later than this call (its queue), by when the map has moved.
      { perSubscription: this.laneWidth, inFlight: new Map(this.inFlight) },
    );
    const attempts = due.map((delivery): StartedAttempt => {
      const { eventId, subscriptionId } = delivery;
      this.inFlight.set(subscriptionId, (this.inFlight.get(subscriptionId) ?? 0) + 1);
      const outcome = this.attempt(delivery);
      const settled = outcome.then(
        () => undefined,
        (error: unknown) => {
          logger.error(
            { err: error, event_id: eventId, subscription_id: subscriptionId },
            "webhook attempt could not be recorded; sent again once its lease runs out",
          );
        },
      );
      const tracked = settled.finally(() => {
        const left = (this.inFlight.get(subscriptionId) ?? 1) - 1;
        if (left > 0) this.inFlight.set(subscriptionId, left);
        else this.inFlight.delete(subscriptionId);
        this.running.delete(tracked);
      });
      this.running.add(tracked);
      return { eventId, subscriptionId, outcome };
    });
    const done = Promise.all(attempts.map((a) => a.outcome)).then((outcomes) => {
      const result: DispatchTickResult = { attempted: outcomes.length, delivered: 0, retrying: 0, failed: 0 };
      for (const outcome of outcomes) {
        if (outcome.status === "delivered") result.delivered++;
        else if (outcome.status === "pending") result.retrying++;
        else result.failed++;
      }
      return result;
    });
    // Logged per attempt above; a caller that ignores `done` must not see an unhandled rejection.
    done.catch(() => undefined);
    return { attempts, done };
  }

  private async attempt(delivery: DueWebhookDelivery): Promise<WebhookAttemptOutcome> {
    const { store, clock, logger } = this.options;
    const sent = await this.send(delivery);
    const nowMs = nowMilliseconds(clock);
    let outcome: WebhookAttemptOutcome;
    if (sent.ok) {
      outcome = { status: "delivered", statusCode: sent.statusCode };
    } else if (delivery.attempts >= this.options.maxAttempts) {
      outcome = { status: "failed", error: sent.message, statusCode: sent.statusCode };
    } else {
      // Counted from the attempt's end, in milliseconds: the retry never starts before its delay has run.
      const next = retryAtMs(this.options, delivery.attempts, nowMs, this.jitter);
      outcome = {
        status: "pending",
        nextAttemptAtMs: next,
        error: sent.message,
        statusCode: sent.statusCode,
      };
    }
    await store.webhooks.recordWebhookAttempt(
      delivery.eventId,
      delivery.subscriptionId,
      outcome,
      Math.floor(nowMs / 1000),
    );
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

/**
 * Runs a round every `intervalMs` until stopped, and another as soon as an attempt ends (its lane
 * has room again and more may be due): a healthy endpoint's backlog flows at its own pace, however
 * long another endpoint takes. A failing round is logged and retried. `stop()` waits for the
 * attempts under way (each ends within the timeout).
 */
export function startDispatcherLoop(
  dispatcher: WebhookDispatcher,
  intervalMs: number,
  logger: Logger,
): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let round: Promise<void> = Promise.resolve();
  /** A round is claiming now: rounds never pile up. */
  let pending = false;
  /** An attempt ended while a round was claiming: run another right after it. */
  let again = false;
  const run = () => {
    if (stopped) return;
    if (pending) {
      again = true;
      return;
    }
    pending = true;
    again = false;
    clearTimeout(timer);
    round = dispatcher
      .dispatch()
      .then(
        ({ attempts }) => {
          for (const attempt of attempts) void attempt.outcome.then(run, run);
        },
        (error: unknown) => logger.error({ err: error }, "webhook dispatch failed; retrying next round"),
      )
      .finally(() => {
        pending = false;
        if (again) run();
        else schedule();
      });
  };
  const schedule = () => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(run, intervalMs);
    timer.unref();
  };
  schedule();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await round;
      await dispatcher.drain();
    },
  };
}
