/**
 * The devnet's settings (scripts/devnet/options.ts): every cycle it accepts runs the whole protocol,
 * V2 included, and every other is refused before anything starts, with a message naming the minimum.
 */
import { expect } from "chai";
import {
  DEVNET_MIN_CYCLE_SECONDS,
  DEVNET_MIN_V2_WINDOW_SECONDS,
  DEVNET_REACTION_SECONDS,
  DEVNET_V2_DEADLINE_MARGIN_SECONDS,
  DevnetOptionsError,
  devnetOptionsFromEnv,
  devnetTimingProblems,
  devnetTimings,
  devnetV2Window,
} from "../../scripts/devnet/options";

function refusal(env: Record<string, string>): string {
  try {
    devnetOptionsFromEnv(env);
  } catch (error) {
    expect(error).to.be.instanceOf(DevnetOptionsError);
    return (error as Error).message;
  }
  throw new Error("accepted");
}

describe("devnet options: cycle lengths and timings", function () {
  it("refuses a cycle below the minimum, naming it", function () {
    for (const cycle of [1, 5, DEVNET_MIN_CYCLE_SECONDS - 1]) {
      expect(refusal({ SURETY_DEVNET_CYCLE_SECONDS: String(cycle) })).to.equal(
        "invalid devnet settings:\n  - SURETY_DEVNET_CYCLE_SECONDS: must be at least " +
          `${DEVNET_MIN_CYCLE_SECONDS}, the shortest cycle with which the devnet runs the whole protocol ` +
          `(V2 included), got ${cycle}`,
      );
    }
    expect(refusal({ SURETY_DEVNET_CYCLE_SECONDS: "0" })).to.match(/must be an integer from 1 to 86400/);
  });

  it("derives, for every accepted cycle, windows Core can act within and room for V2 guarantees", function () {
    const cycles = [DEVNET_MIN_CYCLE_SECONDS, 11, 12, 13, 17, 20, 30, 59, 60, 61, 600, 3_600, 86_400];
    for (let c = DEVNET_MIN_CYCLE_SECONDS; c <= 72; c++) cycles.push(c); // every rounding of c/6 and c/2
    for (const cycle of cycles) {
      const options = devnetOptionsFromEnv({ SURETY_DEVNET_CYCLE_SECONDS: String(cycle) });
      const t = options.timings;
      expect(t).to.deep.equal(devnetTimings(cycle));
      expect(devnetTimingProblems(t), `cycle ${cycle}`).to.deep.equal([]);
      expect(options.v2DeadlineMarginSeconds).to.equal(DEVNET_V2_DEADLINE_MARGIN_SECONDS);
      for (const window of [t.commitDelay, t.paymentWindow, t.defaultWindow]) {
        expect(window, `cycle ${cycle}`).to.be.at.least(DEVNET_REACTION_SECONDS);
      }
      expect(t.withdrawalGracePeriod).to.be.greaterThan(
        t.cycleLength +
          t.commitDelay +
          t.confirmationLag +
          2 * t.challengeWindow +
          t.paymentWindow +
          t.defaultWindow,
      );
      expect(devnetV2Window(t), `cycle ${cycle}`).to.be.at.least(DEVNET_MIN_V2_WINDOW_SECONDS);
    }
    expect(devnetTimings(60)).to.deep.equal({
      cycleLength: 60,
      commitDelay: 10,
      challengeWindow: 30,
      paymentWindow: 60,
      defaultWindow: 30,
      withdrawalGracePeriod: 251,
      confirmationLag: 1,
    });
    expect(devnetTimings(DEVNET_MIN_CYCLE_SECONDS)).to.deep.equal({
      cycleLength: 10,
      commitDelay: 4,
      challengeWindow: 5,
      paymentWindow: 10,
      defaultWindow: 5,
      withdrawalGracePeriod: 50,
      confirmationLag: 1,
    });
    expect(devnetV2Window(devnetTimings(60))).to.equal(175);
    expect(devnetV2Window(devnetTimings(10))).to.equal(30);
  });

  it("refuses timing overrides that would break a part of the protocol, naming each", function () {
    const message = refusal({
      SURETY_DEVNET_CYCLE_SECONDS: "20",
      SURETY_DEVNET_TIMINGS: JSON.stringify({ cycleLength: 5, defaultWindow: 2, withdrawalGracePeriod: 40 }),
    });
    expect(message).to.include(
      `cycleLength 5 s is below the devnet's minimum of ${DEVNET_MIN_CYCLE_SECONDS} s`,
    );
    expect(message).to.include(
      `defaultWindow 2 s is shorter than Core's reaction time on the devnet (${DEVNET_REACTION_SECONDS} s)`,
    );
    expect(refusal({ SURETY_DEVNET_TIMINGS: JSON.stringify({ withdrawalGracePeriod: 100 }) })).to.include(
      "withdrawalGracePeriod 100 s must exceed cycleLength + commitDelay + confirmationLag + " +
        "2 × challengeWindow + paymentWindow + defaultWindow = 221 s",
    );
    expect(() =>
      devnetOptionsFromEnv({ SURETY_DEVNET_TIMINGS: JSON.stringify({ withdrawalGracePeriod: 222 }) }),
    ).to.not.throw();
    // Core's lag behind the chain cannot be assumed away.
    expect(refusal({ SURETY_DEVNET_TIMINGS: JSON.stringify({ confirmationLag: 0 }) })).to.include(
      "confirmationLag 0 s is shorter than Core's lag behind the chain on the devnet",
    );
    // A challenge window Core could not answer within is refused too.
    expect(refusal({ SURETY_DEVNET_TIMINGS: JSON.stringify({ challengeWindow: 3 }) })).to.include(
      `challengeWindow 3 s is shorter than Core's reaction time on the devnet (${DEVNET_REACTION_SECONDS} s)`,
    );
  });
});
