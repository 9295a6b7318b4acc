/**
 * Time source for the facilitator. The claim timestamp window, policy
 * deadlines and access-token expiry all compare against "now"; taking a Clock
 * lets tests move time instead of sleeping.
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
  constructor(private seconds: number) {
    assertWholeSeconds(seconds);
  }

  nowSeconds(): number {
    return this.seconds;
  }

  advance(seconds: number): void {
    assertWholeSeconds(seconds);
    this.seconds += seconds;
  }

  set(seconds: number): void {
    assertWholeSeconds(seconds);
    this.seconds = seconds;
  }
}

function assertWholeSeconds(seconds: number): void {
  if (!Number.isSafeInteger(seconds) || seconds < 0) {
    throw new RangeError(`clock seconds must be a non-negative integer, got ${seconds}`);
  }
}
