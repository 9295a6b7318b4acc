/**
 * Time sources shared by both services. Everything that compares against "now" takes a Clock so that
 * tests can move time deterministically instead of sleeping: the facilitator's claim timestamp window
 * and token expiry, Core's nonce expiry, token lifetimes and webhook timing. Core's chain clock
 * (operator/clock.ts) implements the same interface.
 */
export interface Clock {
  /** Current unix time in whole seconds. */
  nowSeconds(): number;
  /**
   * Current unix time in milliseconds, for schedules finer than a second (webhook retries). Optional:
   * a clock without it reads as its whole seconds ({@link nowMilliseconds}).
   */
  nowMilliseconds?(): number;
}

/** `clock`'s time in milliseconds: its own reading when it has one, else its whole seconds × 1000. */
export function nowMilliseconds(clock: Clock): number {
  return clock.nowMilliseconds?.() ?? clock.nowSeconds() * 1000;
}

/** The wall clock. */
export const systemClock: Clock = {
  nowSeconds: () => Math.floor(Date.now() / 1000),
  nowMilliseconds: () => Date.now(),
};

/** A clock that moves only when told to (tests); it keeps milliseconds, and reads whole seconds rounded down. */
export class ManualClock implements Clock {
  private milliseconds: number;

  constructor(seconds: number = Math.floor(Date.now() / 1000)) {
    assertWholeSeconds(seconds);
    this.milliseconds = seconds * 1000;
  }

  nowSeconds(): number {
    return Math.floor(this.milliseconds / 1000);
  }

  nowMilliseconds(): number {
    return this.milliseconds;
  }

  /** Moves the clock forward by `seconds` (must be ≥ 0: time does not run backwards). */
  advance(seconds: number): void {
    assertWholeSeconds(seconds);
    this.milliseconds += seconds * 1000;
  }

  /** Moves the clock forward by `milliseconds` (a non-negative integer). */
  advanceMilliseconds(milliseconds: number): void {
    if (!Number.isSafeInteger(milliseconds) || milliseconds < 0) {
      throw new RangeError(`clock milliseconds must be a non-negative integer, got ${milliseconds}`);
    }
    this.milliseconds += milliseconds;
  }

  /** Jumps to an absolute unix time (tests that need a specific instant). */
  set(seconds: number): void {
    assertWholeSeconds(seconds);
    this.milliseconds = seconds * 1000;
  }
}

export function assertWholeSeconds(seconds: number): void {
  if (!Number.isSafeInteger(seconds) || seconds < 0) {
    throw new RangeError(`clock seconds must be a non-negative integer, got ${seconds}`);
  }
}
