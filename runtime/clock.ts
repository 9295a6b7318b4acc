/**
 * Time sources shared by both services. Everything that compares against "now" takes a Clock so that
 * tests can move time deterministically instead of sleeping: the facilitator's claim timestamp window
 * and token expiry, Core's nonce expiry, token lifetimes and webhook timing. Core's chain clock
 * (operator/clock.ts) implements the same interface.
 */
export interface Clock {
  /** Current unix time in whole seconds. */
  nowSeconds(): number;
}

/** The wall clock. */
export const systemClock: Clock = {
  nowSeconds: () => Math.floor(Date.now() / 1000),
};

/** A clock that moves only when told to (tests). */
export class ManualClock implements Clock {
  constructor(private seconds: number = Math.floor(Date.now() / 1000)) {
    assertWholeSeconds(seconds);
  }

  nowSeconds(): number {
    return this.seconds;
  }

  /** Moves the clock forward by `seconds` (must be ≥ 0: time does not run backwards). */
  advance(seconds: number): void {
    assertWholeSeconds(seconds);
    this.seconds += seconds;
  }

  /** Jumps to an absolute unix time (tests that need a specific instant). */
  set(seconds: number): void {
    assertWholeSeconds(seconds);
    this.seconds = seconds;
  }
}

export function assertWholeSeconds(seconds: number): void {
  if (!Number.isSafeInteger(seconds) || seconds < 0) {
    throw new RangeError(`clock seconds must be a non-negative integer, got ${seconds}`);
  }
}
