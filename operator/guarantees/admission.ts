/**
 * Admission control of issuance (docs/clearing.md "Deadline work before issuance"): Core's deadline work
 * (default covers, clearing commits, leader-lease renewals) shares the process's event loop with
 * `POST /core/guarantees`. Issuance is the one load Core can refuse without harm (the facilitator moves a
 * refused settle to another replica, a buyer retries), so under saturation it is shed before the
 * deadline work starves:
 *
 * - **in-flight bound**: at most `maxInFlight` issuances run at once in this process (signature check, BLS
 *   signing, the store's group commit); one more is refused at once. This bounds the work queued ahead of
 *   any timer or I/O callback of the background tasks and the lease;
 * - **event-loop delay** (off by default, docs/clearing.md has the measurement): a probe timer measures how
 *   late the loop runs it; while the delay of the last probe window exceeds `maxLoopDelayMs`, issuance is
 *   refused, so timers (lease renewal every lease/3, the background round) keep firing within that delay.
 *
 * A refusal is 500 `issuance_overloaded` with `Retry-After` (api/errors.ts): nothing was checked, locked
 * or stored. Both bounds are per process; `0` turns one off.
 */
import { performance } from "node:perf_hooks";
import type { Logger } from "../logger";

export interface IssuanceAdmissionOptions {
  /** Issuances allowed at once (0: no bound). */
  maxInFlight: number;
  /** Event-loop delay above which issuance is shed, ms (0: not judged). */
  maxLoopDelayMs: number;
  /** Probe period of the event-loop delay, ms (default 50). */
  probeIntervalMs?: number;
  logger: Logger;
}

export type AdmissionVerdict = { admitted: true; release: () => void } | { admitted: false; reason: string };

export class IssuanceAdmission {
  private inFlight = 0;
  /** Largest delay seen in the current and the previous probe window (ms). */
  private delayMs = 0;
  private windowMax = 0;
  private windowProbes = 0;
  private timer: NodeJS.Timeout | undefined;
  private shedding = false;
  /** Counters since start (logs and tests). */
  readonly counts = { admitted: 0, shedInFlight: 0, shedDelay: 0 };

  constructor(private readonly options: IssuanceAdmissionOptions) {
    if (options.maxLoopDelayMs > 0) this.startProbe();
  }

  /** The event-loop delay judged now (ms): the largest of the last window of probes. */
  loopDelayMs(): number {
    return Math.max(this.delayMs, this.windowMax);
  }

  inFlightNow(): number {
    return this.inFlight;
  }

  /** Admits one issuance (call `release` when it ends, whatever the outcome) or says why not. */
  admit(): AdmissionVerdict {
    const { maxInFlight, maxLoopDelayMs } = this.options;
    let reason: string | null = null;
    if (maxInFlight > 0 && this.inFlight >= maxInFlight) {
      this.counts.shedInFlight++;
      reason = `${this.inFlight} issuances already in progress in this process (bound ${maxInFlight})`;
    } else if (maxLoopDelayMs > 0 && this.loopDelayMs() > maxLoopDelayMs) {
      this.counts.shedDelay++;
      reason =
        `this process's event loop runs ${Math.round(this.loopDelayMs())} ms late (bound ${maxLoopDelayMs} ms): ` +
        "covers, commits and lease renewals go first";
    }
    if (reason !== null) {
      if (!this.shedding) {
        this.shedding = true;
        this.options.logger.warn(
          { event: "issuance_shed", in_flight: this.inFlight, loop_delay_ms: Math.round(this.loopDelayMs()) },
          `issuance shed: ${reason}`,
        );
      }
      return { admitted: false, reason };
    }
    if (this.shedding) {
      this.shedding = false;
      this.options.logger.info(
        { event: "issuance_admitted_again", shed: this.counts.shedInFlight + this.counts.shedDelay },
        "issuance admitted again",
      );
    }
    this.inFlight++;
    this.counts.admitted++;
    let released = false;
    return {
      admitted: true,
      release: () => {
        if (released) return;
        released = true;
        this.inFlight--;
      },
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private startProbe(): void {
    const period = this.options.probeIntervalMs ?? 50;
    // Judged over ~1 s of probes: one long task raises the delay for a second, not for one probe only.
    const perWindow = Math.max(1, Math.round(1000 / period));
    let expected = performance.now() + period;
    this.timer = setInterval(() => {
      const now = performance.now();
      const late = Math.max(0, now - expected);
      expected = now + period;
      this.windowMax = Math.max(this.windowMax, late);
      if (++this.windowProbes >= perWindow) {
        this.delayMs = this.windowMax;
        this.windowMax = 0;
        this.windowProbes = 0;
      }
    }, period);
    this.timer.unref();
  }
}
