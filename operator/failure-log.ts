/**
 * Logging of a task that fails every round (a halted indexer, an RPC that is down) without flooding:
 * the first failure is logged at error level at once, and so is a failure whose message differs from
 * the last one logged; the same failure again is logged at most once per `intervalSeconds`, with how
 * many were left out; the first success after failures is logged once at info level.
 */
import type { Clock } from "./clock";
import type { Logger } from "./logger";

/** Default pause between two log lines of the same repeated failure. */
export const REPEATED_FAILURE_LOG_INTERVAL_SECONDS = 60;

interface Failing {
  message: string;
  loggedAt: number;
  /** Failures since the last line. */
  suppressed: number;
  /** Failures since the last success. */
  total: number;
}

export class FailureLog {
  private readonly failing = new Map<string, Failing>();

  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly intervalSeconds = REPEATED_FAILURE_LOG_INTERVAL_SECONDS,
  ) {}

  failed(task: string, error: unknown): void {
    const now = this.clock.nowSeconds();
    const message = error instanceof Error ? error.message : String(error);
    const previous = this.failing.get(task);
    if (previous && previous.message === message && now - previous.loggedAt < this.intervalSeconds) {
      previous.suppressed++;
      previous.total++;
      return;
    }
    const suppressed = previous?.suppressed ?? 0;
    const total = (previous?.total ?? 0) + 1;
    this.failing.set(task, { message, loggedAt: now, suppressed: 0, total });
    this.logger.error(
      { err: error, task, failures: total, ...(suppressed > 0 ? { suppressed } : {}) },
      previous
        ? `background task still failing (${total} rounds; repeats are logged every ${this.intervalSeconds} s)`
        : "background task failed; retrying next round",
    );
  }

  succeeded(task: string): void {
    const previous = this.failing.get(task);
    if (!previous) return;
    this.failing.delete(task);
    this.logger.info({ task, failures: previous.total }, "background task recovered");
  }
}
