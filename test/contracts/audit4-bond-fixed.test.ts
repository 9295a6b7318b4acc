/**
 * Fourth outside audit (docs/audit4-findings.md), the two Low findings fixed:
 *
 *  A4-L1  `withdrawBond` takes at most the spare bond (above the floor's share of `bondAtRisk`): the floor's
 *         share of a cycle not yet finalized stays for the default it may still fund.
 *  A4-L2  An operator's set-aside (A3-M2) counts the refunds the bond already owes: a top-up meant for them is
 *         not spare to the next concession.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther } from "ethers";

import { guaranteeLeafOf } from "../../operator/clearing/commit-plan";
import { guaranteeProof } from "../../sdk";

import {
  ETH,
  commitPlanned,
  creditProofOf,
  disputeAnswerOf,
  signedGuarantee,
  suretyFixture,
} from "./helpers";

const ONE = parseEther("1");

describe("audit4 A4-L1 (fixed): the bond never leaves with the floor's share of a cycle still counted", () => {
  /** Floor 10,000 bps, bond 1 ETH. Cycle 1: outsider (no collateral) → bob 1 ETH; nobody covers in time. */
  async function phantom() {
    const f = await suretyFixture();
    await f.clearingHouse.connect(f.admin).setBondFloor(10_000);
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
    const all = [await signedGuarantee(f, f.outsider, f.bob.address, 1n, ONE)];
    const { plan } = await commitPlanned(f, 1n, all);
    return { ...f, plan, bobs: creditProofOf(plan, f.bob.address) };
  }

  it("refused while the cycle is counted (BondTooSmall names what is spare); bob is paid in full", async () => {
    const f = await loadFixture(phantom);
    const ch = f.clearingHouse;
    await time.increaseTo((await ch.getCycle(1)).doubleListingDeadline + 1n);
    expect(await ch.bondAtRisk(ETH)).to.equal(ONE);
    await expect(ch.connect(f.admin).withdrawBond(ETH, ONE, f.admin.address))
      .to.be.revertedWithCustomError(ch, "BondTooSmall")
      .withArgs(ETH, 0n, ONE);
    await expect(ch.coverDefault(1, ETH, f.outsider.address))
      .to.emit(ch, "DefaultFundedFromBond")
      .withArgs(1n, ETH, f.outsider.address, ONE);
    await ch.claimNetCredit(1, ETH, f.bob.address, f.bobs.summary, f.bobs.proof);
    expect(await ch.payoutOf(ETH, f.bob.address)).to.equal(ONE);
  });

  it("a top-up above the floor's share can leave; once the cycle is released, the whole bond can", async () => {
    const f = await loadFixture(phantom);
    const ch = f.clearingHouse;
    await ch.connect(f.admin).postBond(ETH, 0, { value: ONE });
    await time.increaseTo((await ch.getCycle(1)).doubleListingDeadline + 1n);
    await expect(ch.connect(f.admin).withdrawBond(ETH, ONE + 1n, f.admin.address))
      .to.be.revertedWithCustomError(ch, "BondTooSmall")
      .withArgs(ETH, ONE, ONE + 1n);
    await expect(ch.connect(f.admin).withdrawBond(ETH, ONE, f.admin.address)).to.changeEtherBalance(
      f.admin,
      ONE,
    );
    // Covered (from the bond) and released: nothing is at risk, the rest may leave.
    await ch.coverDefault(1, ETH, f.outsider.address);
    await ch.releaseSettledRisk(8);
    expect(await ch.bondAtRisk(ETH)).to.equal(0n);
    expect(await ch.bondOf(ETH)).to.equal(0n); // the cover took the 1 ETH the floor had kept for it
  });

  it("with the floor off the whole bond is spare, as before", async () => {
    const f = await loadFixture(phantom);
    const ch = f.clearingHouse;
    await ch.connect(f.admin).setBondFloor(0);
    await time.increaseTo((await ch.getCycle(1)).doubleListingDeadline + 1n);
    await expect(ch.connect(f.admin).withdrawBond(ETH, ONE, f.admin.address)).to.changeEtherBalance(
      f.admin,
      ONE,
    );
  });
});

/**
 * No bond yet (floor off). Cycle 1: alice → bob 1 ETH. Cycle 2 lists alice's guarantee again, and carol ↔ dave
 * 1 ETH each (a colluding pair); dave reveals and disputes his position. alice pays both cycles; her double listing
 * is proven: 1 ETH owed (the bond is empty).
 */
async function owedAlice() {
  const f = await suretyFixture();
  const ch = f.clearingHouse;
  await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
  const toBob = await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE);
  const { plan: c1 } = await commitPlanned(f, 1n, [toBob]);
  await ch.connect(f.alice).payNetDebit(1, ETH, { value: ONE });
  const all2 = [
    toBob,
    await signedGuarantee(f, f.carol, f.dave.address, 2n, ONE),
    await signedGuarantee(f, f.dave, f.carol.address, 3n, ONE),
  ];
  const { plan: c2 } = await commitPlanned(f, 2n, all2);
  await ch.connect(f.alice).payNetDebit(2, ETH, { value: ONE });
  const daves = disputeAnswerOf(all2, f.dave.address, 0, { concede: true });
  await ch.revealSummary(2, ETH, f.dave.address, daves.summary, daves.summaryProof);
  await ch.connect(f.dave).disputeGuarantee(2, ETH, 0);
  await time.increaseTo((await ch.getCycle(2)).challengeDeadline + 1n);
  const leaf = guaranteeLeafOf(toBob.payable);
  await ch.proveDoubleListing(
    1,
    2,
    leaf,
    leaf,
    guaranteeProof(c1.guaranteeTree, leaf),
    guaranteeProof(c2.guaranteeTree, leaf),
  );
  expect(await ch.totalRefundOwed(ETH)).to.equal(ONE);
  return { ...f, daves };
}

describe("audit4 A4-L2 (fixed): a set-aside never takes a top-up meant for refunds already owed", () => {
  it("the operator posts 1 ETH for alice; the stolen key's concession is refused, alice is paid", async () => {
    const f = await loadFixture(owedAlice);
    const ch = f.clearingHouse;
    await ch.connect(f.admin).postBond(ETH, 0, { value: ONE });
    await expect(ch.connect(f.operator).answerDispute(2, ETH, f.dave.address, 0, f.daves))
      .to.be.revertedWithCustomError(ch, "RefundAboveSpareBond")
      .withArgs(2n, ETH, f.dave.address, ONE, 0n);
    await expect(ch.claimOwedRefund(ETH, f.alice.address))
      .to.emit(ch, "OwedRefundPaid")
      .withArgs(ETH, f.alice.address, ONE, 0n);
  });

  it("a bond above what it owes spares only the surplus: 2 ETH posted, 1 owed, a 1-ETH concession is set aside", async () => {
    const f = await loadFixture(owedAlice);
    const ch = f.clearingHouse;
    await ch.connect(f.admin).postBond(ETH, 0, { value: 2n * ONE });
    await expect(ch.connect(f.operator).answerDispute(2, ETH, f.dave.address, 0, f.daves))
      .to.emit(ch, "DebitReduced")
      .withArgs(2n, ETH, f.dave.address, 0n, 0n, ONE);
    expect(await ch.refundSetAsideOf(2, ETH, f.dave.address)).to.equal(ONE);
    // alice's 1 ETH is still there for her.
    await expect(ch.claimOwedRefund(ETH, f.alice.address))
      .to.emit(ch, "OwedRefundPaid")
      .withArgs(ETH, f.alice.address, ONE, 0n);
    expect(await ch.bondOf(ETH)).to.equal(0n);
  });
});
