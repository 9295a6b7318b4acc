/**
 * The collateral rule of operator/guarantees/capacity.ts with sellers' reserves (docs/operator-async.md,
 * "Sellers' reserves"): a reserve counts only beyond Core's own lock of the guarantee it backs.
 * The end-to-end behaviour (indexing, issuance, views, reorgs) is in test/e2e/protocol-reserve.test.ts.
 */
import { expect } from "chai";
import { getAddress, ZeroAddress } from "ethers";
import {
  availableCollateral,
  freeCollateral,
  lockLimit,
  reserveHold,
} from "../../operator/guarantees/capacity";
import type { ActiveReserve, CollateralBalance, GuaranteeState } from "../../operator/store";

const USER = getAddress("0x" + "11".repeat(20));
const OTHER = getAddress("0x" + "22".repeat(20));
const TOKEN = getAddress("0x" + "33".repeat(20));

const balance = (over: Partial<CollateralBalance> = {}): CollateralBalance => ({
  user: USER,
  asset: ZeroAddress,
  deposited: 100n,
  locked: 0n,
  pendingWithdrawal: 0n,
  ...over,
});

let nextId = 1;
function reserve(
  amount: bigint,
  guarantee: { state: GuaranteeState; user?: string; asset?: string; amount?: bigint } | null,
  over: Partial<ActiveReserve> = {},
): ActiveReserve {
  return {
    guaranteeId: "0x" + (nextId++).toString(16).padStart(64, "0"),
    user: USER,
    asset: ZeroAddress,
    recipient: OTHER,
    amount,
    expiresAt: 0,
    txHash: "0x" + "00".repeat(32),
    blockNumber: 1,
    guarantee:
      guarantee === null
        ? null
        : {
            state: guarantee.state,
            user: guarantee.user ?? USER,
            asset: guarantee.asset ?? ZeroAddress,
            amount: guarantee.amount ?? amount,
          },
    ...over,
  };
}

describe("collateral capacity with sellers' reserves", () => {
  it("counts a reserve once while Core locks its guarantee", () => {
    for (const state of ["PENDING_VALIDATION", "FINALIZED_PAYABLE", "DISPUTED"] as const) {
      const b = balance({ locked: 30n });
      const r = [reserve(30n, { state })];
      expect(reserveHold(b, r), state).to.equal(0n);
      expect(availableCollateral(b, r, 10_000)).to.equal(70n);
      expect(freeCollateral(b, r)).to.equal(70n);
    }
  });

  it("holds the whole reserve once Core's lock is gone, or Core does not know the guarantee", () => {
    for (const state of ["CANCELLED", "REMUNERATED", "NETTED", "SETTLED", "DEFAULT_REMUNERATED"] as const) {
      const r = [reserve(30n, { state })];
      expect(reserveHold(balance(), r), state).to.equal(30n);
      expect(availableCollateral(balance(), r, 10_000)).to.equal(70n);
      expect(freeCollateral(balance(), r)).to.equal(70n);
      expect(lockLimit(balance(), r, 10_000)).to.equal(70n);
    }
    expect(reserveHold(balance(), [reserve(30n, null)])).to.equal(30n);
  });

  it("does not take another payer's or asset's lock for the reserve's, and ignores other balances' reserves", () => {
    expect(reserveHold(balance(), [reserve(30n, { state: "PENDING_VALIDATION", user: OTHER })])).to.equal(
      30n,
    );
    expect(reserveHold(balance(), [reserve(30n, { state: "PENDING_VALIDATION", asset: TOKEN })])).to.equal(
      30n,
    );
    expect(reserveHold(balance(), [reserve(30n, null, { asset: TOKEN })])).to.equal(0n);
    expect(reserveHold(balance(), [reserve(30n, null, { user: OTHER })])).to.equal(0n);
  });

  it("takes the max of lock and reserve per guarantee and sums over guarantees", () => {
    const r = [
      reserve(30n, { state: "PENDING_VALIDATION", amount: 20n }), // 10 beyond the lock
      reserve(5n, { state: "CANCELLED" }),
      reserve(7n, { state: "DISPUTED" }),
    ];
    const b = balance({ locked: 27n, pendingWithdrawal: 10n });
    expect(reserveHold(b, r)).to.equal(15n);
    // capacity (100 − 10) × 50 % = 45; held 27 + 15.
    expect(availableCollateral(b, r, 5_000)).to.equal(3n);
    expect(freeCollateral(b, r)).to.equal(58n);
    expect(availableCollateral(balance({ locked: 90n }), r, 10_000)).to.equal(0n);
    expect(freeCollateral(balance({ locked: 90n }), r)).to.equal(0n);
  });
});
