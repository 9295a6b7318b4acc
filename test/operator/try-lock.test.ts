/** The capacity check of every check-and-lock (operator/guarantees/try-lock.ts). */
import { expect } from "chai";
import { tryLock } from "../../operator/guarantees/try-lock";
import type { CollateralBalance } from "../../operator/store";

const BALANCE: CollateralBalance = {
  user: "0x1111111111111111111111111111111111111111",
  asset: "0x3333333333333333333333333333333333333333",
  deposited: 1_000n,
  locked: 600n,
  pendingWithdrawal: 0n,
};

describe("tryLock", () => {
  it("locks up to the capacity exactly, and refuses one unit beyond", () => {
    expect(tryLock(BALANCE, 400n, 1_000n)).to.deep.equal({ ...BALANCE, locked: 1_000n });
    expect(tryLock(BALANCE, 401n, 1_000n)).to.equal(null);
  });

  it("refuses everything once the balance already carries more than the capacity (e.g. after a withdrawal)", () => {
    expect(tryLock(BALANCE, 1n, 500n)).to.equal(null);
  });

  it("is pure: the balance it is given is not changed", () => {
    const before = { ...BALANCE };
    tryLock(BALANCE, 10n, 1_000n);
    expect(BALANCE).to.deep.equal(before);
  });
});
