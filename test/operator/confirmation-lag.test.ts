/**
 * Core's checks of the Vault's confirmation lag (issue 17, finding 5): the V2 deadline cap subtracts it, and
 * a lag shorter than Core's confirmations can take is reported at startup.
 */
import { expect } from "chai";

import { confirmationLagProblem, maxV2ValidationDeadline } from "../../operator/chain/timings";
import { DEFAULT_TIMINGS } from "../../scripts/deploy";

describe("operator/chain/timings: confirmation lag", () => {
  it("the V2 deadline cap leaves room for the lag", () => {
    const t = { ...DEFAULT_TIMINGS, confirmationLag: 0 };
    const without = maxV2ValidationDeadline(t, 1_000, 4);
    expect(maxV2ValidationDeadline({ ...t, confirmationLag: 25 }, 1_000, 4)).to.equal(without - 25);
  });

  it("reports a lag below one second per confirmation, and nothing otherwise", () => {
    expect(confirmationLagProblem({ ...DEFAULT_TIMINGS, confirmationLag: 1 }, 0)).to.equal(null);
    expect(confirmationLagProblem({ ...DEFAULT_TIMINGS, confirmationLag: 156 }, 12)).to.equal(null);
    expect(confirmationLagProblem({ ...DEFAULT_TIMINGS, confirmationLag: 1 }, 12)).to.match(
      /confirmationLag \(1 s\) is shorter than Core's 12 confirmations/,
    );
  });
});
