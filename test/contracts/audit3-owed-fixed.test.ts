/**
 * Audit3 A3-M2 (regression): a stolen operator key conceded, after the challenge deadline of an honest commit (no
 * veto possible), a position between two colluding accounts: an owed refund of any size, paid first come first
 * served against every honest refund the bond owes, and holding the bond for good. Now what the operator's own
 * answer (a concession, a removal as not validated) refunds above the debit is set aside from the spare bond at
 * the answer, or the answer reverts `RefundAboveSpareBond`: the key's damage is bounded by the bond, and it never
 * becomes an owed refund that queues ahead of honest ones. Voids (the operator left a dispute unanswered) still
 * owe their refund, so an honest overpaid debtor is refunded whatever the bond held at the answer.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther } from "ethers";

import { guaranteeLeafOf } from "../../operator/clearing/commit-plan";
import { guaranteeProof } from "../../sdk";

import {
  ETH,
  commitPlanned,
  disputeAnswerOf,
  signedGuarantee,
  suretyFixture,
  unvalidatedV2,
  type SignedTestGuarantee,
} from "./helpers";

const ONE = parseEther("1");
const UPHELD = 2n;
const VOIDED = 3n;
const REMOVED = 4n;

/**
 * Floor off, bond 1 ETH. Cycle 1 is an honest commit (Core planned it): alice → bob 1 ETH, carol and dave sign each
 * other `pair` each. alice pays; carol reveals her summary and disputes her position inside the challenge window.
 */
async function colluders(pair: bigint) {
  const f = await suretyFixture();
  await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
  await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
  const toBob = await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE);
  const all = [
    toBob,
    await signedGuarantee(f, f.carol, f.dave.address, 2n, pair),
    await signedGuarantee(f, f.dave, f.carol.address, 3n, pair),
  ];
  const { plan: c1 } = await commitPlanned(f, 1n, all);
  await f.clearingHouse.connect(f.alice).payNetDebit(1, ETH, { value: ONE });
  const carols = disputeAnswerOf(all, f.carol.address, 0, { concede: true });
  await f.clearingHouse.revealSummary(1, ETH, f.carol.address, carols.summary, carols.summaryProof);
  await f.clearingHouse.connect(f.carol).disputeGuarantee(1, ETH, 0);
  return { ...f, all, toBob, c1, carols, proof: disputeAnswerOf(all, f.carol.address, 0) };
}

const fifty = () => colluders(50n * ONE);
const one = () => colluders(ONE);

/** alice's guarantee to bob listed again in cycle 2 (she pays it again) and proven double-listed. */
async function doubleListAlice(
  f: Awaited<ReturnType<typeof colluders>>,
  paid: bigint,
  owed: bigint,
): Promise<void> {
  const ch = f.clearingHouse;
  const { plan: c2 } = await commitPlanned(f, 2n, [f.toBob]);
  await ch.connect(f.alice).payNetDebit(2, ETH, { value: ONE });
  await time.increaseTo((await ch.getCycle(2)).challengeDeadline + 1n);
  const leaf = guaranteeLeafOf(f.toBob.payable);
  await expect(
    ch.proveDoubleListing(
      1,
      2,
      leaf,
      leaf,
      guaranteeProof(f.c1.guaranteeTree, leaf),
      guaranteeProof(c2.guaranteeTree, leaf),
    ),
  )
    .to.emit(ch, "DoubleListingRefunded")
    .withArgs(ETH, f.alice.address, paid, owed);
}

describe("audit3 A3-M2 (fixed): the operator's own answers cannot make the bond owe more than it holds", () => {
  it("conceded after the veto window: refused above the spare bond; Core upholds; alice is paid at once", async () => {
    const f = await loadFixture(fifty);
    const ch = f.clearingHouse;
    const cycle = await ch.getCycle(1);
    await time.increaseTo(cycle.challengeDeadline + 1n);
    await expect(ch.connect(f.guardian).vetoCycle(1)).to.be.revertedWithCustomError(
      ch,
      "ChallengeWindowClosed",
    );
    // The stolen key's concession would refund carol 50 ETH above her (zero) debit: the bond spares 1 ETH.
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.carol.address, 0, f.carols))
      .to.be.revertedWithCustomError(ch, "RefundAboveSpareBond")
      .withArgs(1n, ETH, f.carol.address, 50n * ONE, ONE);
    // Nothing moved: no refund held, none owed.
    expect(await ch.bondOf(ETH)).to.equal(ONE);
    expect(await ch.totalRefundOwed(ETH)).to.equal(0n);
    // Core's keeper answers with the evidence: upheld, nothing refunded.
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.carol.address, 0, f.proof))
      .to.emit(ch, "DisputeResolved")
      .withArgs(1n, ETH, f.carol.address, 0n, UPHELD, f.all[1].payable.guaranteeId, 50n * ONE);
    expect(await ch.refundHeldOf(1, ETH, f.carol.address)).to.equal(0n);
    // The honest victim of the bond is paid from it at once, and the bond can leave after the last deadline.
    await doubleListAlice(f, ONE, 0n);
    expect(await ch.refundOwed(ETH, f.carol.address)).to.equal(0n);
    expect(await ch.totalRefundOwed(ETH)).to.equal(0n);
    await ch.connect(f.admin).postBond(ETH, 0, { value: ONE });
    await time.increaseTo((await ch.getCycle(2)).doubleListingDeadline + 1n);
    await expect(ch.connect(f.admin).withdrawBond(ETH, ONE, f.admin.address)).to.changeEtherBalance(
      f.admin,
      ONE,
    );
  });

  it("inside the challenge window the same concession is refused too (the bound does not wait for a veto)", async () => {
    const f = await loadFixture(fifty);
    const ch = f.clearingHouse;
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.carol.address, 0, f.carols))
      .to.be.revertedWithCustomError(ch, "RefundAboveSpareBond")
      .withArgs(1n, ETH, f.carol.address, 50n * ONE, ONE);
    // A larger bond spares it: the refund is set aside at once, so the bond never owes it.
    await ch.connect(f.admin).postBond(ETH, 0, { value: 49n * ONE });
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.carol.address, 0, f.carols))
      .to.emit(ch, "DebitReduced")
      .withArgs(1n, ETH, f.carol.address, 0n, 0n, 50n * ONE);
    expect(await ch.bondOf(ETH)).to.equal(0n);
    expect(await ch.refundSetAsideOf(1, ETH, f.carol.address)).to.equal(50n * ONE);
    expect(await ch.totalRefundOwed(ETH)).to.equal(0n);
  });

  it("a concession the spare bond covers: set aside at once, the colluders take at most the bond, alice is paid first", async () => {
    const f = await loadFixture(one);
    const ch = f.clearingHouse;
    const cycle = await ch.getCycle(1);
    await time.increaseTo(cycle.challengeDeadline + 1n);
    const held = await ch.heldLiquidity(ETH);
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.carol.address, 0, f.carols))
      .to.emit(ch, "DebitReduced")
      .withArgs(1n, ETH, f.carol.address, 0n, 0n, ONE);
    // Taken from the bond now, held until settled; not owed by the bond.
    expect(await ch.bondOf(ETH)).to.equal(0n);
    expect(await ch.heldLiquidity(ETH)).to.equal(held + ONE);
    expect(await ch.refundHeldOf(1, ETH, f.carol.address)).to.equal(ONE);
    expect(await ch.refundSetAsideOf(1, ETH, f.carol.address)).to.equal(ONE);
    expect(await ch.totalRefundOwed(ETH)).to.equal(0n);
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address))
      .to.emit(ch, "DebitRefundClaimed")
      .withArgs(1n, ETH, f.carol.address, ONE, 0n);
    expect(await ch.heldLiquidity(ETH)).to.equal(held);
    expect(await ch.payoutOf(ETH, f.carol.address)).to.equal(ONE);
    // An honest victim: owed (the bond is empty), and the next top-up is hers; carol has nothing to race for.
    await doubleListAlice(f, 0n, ONE);
    await ch.connect(f.admin).postBond(ETH, 0, { value: ONE });
    await expect(ch.claimOwedRefund(ETH, f.carol.address))
      .to.be.revertedWithCustomError(ch, "NoRefundPayable")
      .withArgs(ETH, f.carol.address, 0n, ONE);
    await expect(ch.claimOwedRefund(ETH, f.alice.address))
      .to.emit(ch, "OwedRefundPaid")
      .withArgs(ETH, f.alice.address, ONE, 0n);
    expect(await ch.totalRefundOwed(ETH)).to.equal(0n);
  });

  it("a second concession finds nothing spare once the first took the bond", async () => {
    const f = await suretyFixture();
    const ch = f.clearingHouse;
    await ch.connect(f.admin).postBond(ETH, 0, { value: ONE });
    const all: SignedTestGuarantee[] = [
      await signedGuarantee(f, f.carol, f.dave.address, 2n, ONE),
      await signedGuarantee(f, f.dave, f.carol.address, 3n, ONE),
    ];
    await commitPlanned(f, 1n, all);
    for (const who of [f.carol, f.dave]) {
      const a = disputeAnswerOf(all, who.address, 0, { concede: true });
      await ch.revealSummary(1, ETH, who.address, a.summary, a.summaryProof);
      await ch.connect(who).disputeGuarantee(1, ETH, 0);
    }
    await ch
      .connect(f.operator)
      .answerDispute(1, ETH, f.carol.address, 0, disputeAnswerOf(all, f.carol.address, 0, { concede: true }));
    await expect(
      ch
        .connect(f.operator)
        .answerDispute(1, ETH, f.dave.address, 0, disputeAnswerOf(all, f.dave.address, 0, { concede: true })),
    )
      .to.be.revertedWithCustomError(ch, "RefundAboveSpareBond")
      .withArgs(1n, ETH, f.dave.address, ONE, 0n);
  });

  it("conceded inside the window and vetoed: what was set aside goes back to the bond", async () => {
    const f = await loadFixture(one);
    const ch = f.clearingHouse;
    await ch.connect(f.operator).answerDispute(1, ETH, f.carol.address, 0, f.carols);
    expect(await ch.bondOf(ETH)).to.equal(0n);
    await ch.connect(f.guardian).vetoCycle(1);
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address))
      .to.emit(ch, "DebitRefundCancelled")
      .withArgs(1n, ETH, f.carol.address, ONE);
    expect(await ch.bondOf(ETH)).to.equal(ONE);
    expect(await ch.refundSetAsideOf(1, ETH, f.carol.address)).to.equal(0n);
    expect(await ch.payoutOf(ETH, f.carol.address)).to.equal(0n);
    expect(await ch.totalRefundOwed(ETH)).to.equal(0n);
    // alice's payment is hers again; nothing of the cycle is held.
    await ch.releaseVetoedDebt(1, ETH, f.alice.address);
    expect(await ch.heldLiquidity(ETH)).to.equal(0n);
  });

  it("conceded inside the window, not vetoed: carol is paid what was set aside, in full", async () => {
    const f = await loadFixture(one);
    const ch = f.clearingHouse;
    await ch.connect(f.operator).answerDispute(1, ETH, f.carol.address, 0, f.carols);
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address)).to.be.revertedWithCustomError(
      ch,
      "ChallengeWindowOpen",
    );
    await time.increaseTo((await ch.getCycle(1)).challengeDeadline + 1n);
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address))
      .to.emit(ch, "DebitRefundClaimed")
      .withArgs(1n, ETH, f.carol.address, ONE, 0n);
    await expect(ch.connect(f.carol).withdrawPayout(ETH, f.carol.address)).to.changeEtherBalance(
      f.carol,
      ONE,
    );
  });
});

describe("audit3 A3-M2 (fixed): an honest payer's overpayment is still refunded", () => {
  /**
   * alice → bob 2 ETH (a position the operator cannot prove: it concedes), bob → alice 1 ETH: alice's debit is
   * 1 ETH, the concession takes it off and refunds the other 1 ETH above it. Bond `bond`.
   */
  async function overpaid(bond: bigint) {
    const f = await suretyFixture();
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: bond });
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
    const all = [
      await signedGuarantee(f, f.alice, f.bob.address, 1n, 2n * ONE),
      await signedGuarantee(f, f.bob, f.alice.address, 2n, ONE),
    ];
    await commitPlanned(f, 1n, all);
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    return { ...f, all, conceded: disputeAnswerOf(all, f.alice.address, 0, { concede: true }) };
  }
  const spare = () => overpaid(5n * ONE);
  const short = () => overpaid(ONE);

  it("with the bond to spare: the excess is set aside at the concession and paid in full", async () => {
    const f = await loadFixture(spare);
    const ch = f.clearingHouse;
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.alice.address, 0, f.conceded))
      .to.emit(ch, "DebitReduced")
      .withArgs(1n, ETH, f.alice.address, ONE, ONE, ONE);
    expect(await ch.disputeOf(1, ETH, f.alice.address, 0)).to.equal(VOIDED);
    expect(await ch.bondOf(ETH)).to.equal(3n * ONE);
    await time.increaseTo((await ch.getCycle(1)).challengeDeadline + 1n);
    await expect(ch.claimDebitRefund(1, ETH, f.alice.address))
      .to.emit(ch, "DebitRefundClaimed")
      .withArgs(1n, ETH, f.alice.address, ONE, 0n);
  });

  it("with a short bond: the concession is refused, the position is voided at the deadline, the refund owed", async () => {
    const f = await loadFixture(short);
    const ch = f.clearingHouse;
    // The cut (1 ETH) takes the whole bond: nothing is left to set the 1 ETH refund aside from.
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.alice.address, 0, f.conceded))
      .to.be.revertedWithCustomError(ch, "RefundAboveSpareBond")
      .withArgs(1n, ETH, f.alice.address, ONE, 0n);
    const cycle = await ch.getCycle(1);
    await time.increaseTo(cycle.answerDeadline + 1n);
    await ch.revealSummary(1, ETH, f.alice.address, f.conceded.summary, f.conceded.summaryProof);
    await expect(ch.voidUnansweredPosition(1, ETH, f.alice.address, 0, f.conceded.leaf, f.conceded.path))
      .to.emit(ch, "DebitReduced")
      .withArgs(1n, ETH, f.alice.address, ONE, ONE, ONE);
    expect(await ch.totalRefundOwed(ETH)).to.equal(ONE);
    await expect(ch.claimDebitRefund(1, ETH, f.alice.address))
      .to.emit(ch, "DebitRefundClaimed")
      .withArgs(1n, ETH, f.alice.address, 0n, ONE);
    // Eventually: the next top-up pays her.
    await ch.connect(f.admin).postBond(ETH, 0, { value: ONE });
    await expect(ch.claimOwedRefund(ETH, f.alice.address))
      .to.emit(ch, "OwedRefundPaid")
      .withArgs(ETH, f.alice.address, ONE, 0n);
  });
});

describe("audit3 A3-M2 (fixed): a removal as not validated is bounded the same way", () => {
  /** alice → bob 2 ETH V2 without a verdict, bob → alice 2 ETH: alice nets to zero; she disputes her position. */
  async function unvalidated(bond: bigint) {
    const f = await suretyFixture();
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: bond });
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
    const { g } = await unvalidatedV2(f);
    const all = [g, await signedGuarantee(f, f.bob, f.alice.address, 5n, 2n * ONE)];
    await commitPlanned(f, 1n, all);
    const answer = disputeAnswerOf(all, f.alice.address, 0);
    await f.clearingHouse.revealSummary(1, ETH, f.alice.address, answer.summary, answer.summaryProof);
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    return { ...f, g, answer };
  }

  it("above the spare bond it reverts; within it the refund is set aside and the recipient still owes it back", async () => {
    const f = await unvalidated(ONE);
    const ch = f.clearingHouse;
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.alice.address, 0, f.answer))
      .to.be.revertedWithCustomError(ch, "RefundAboveSpareBond")
      .withArgs(1n, ETH, f.alice.address, 2n * ONE, ONE);
    await ch.connect(f.admin).postBond(ETH, 0, { value: ONE });
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.alice.address, 0, f.answer))
      .to.emit(ch, "DisputeResolved")
      .withArgs(1n, ETH, f.alice.address, 0n, REMOVED, f.g.payable.guaranteeId, 2n * ONE);
    expect(await ch.refundSetAsideOf(1, ETH, f.alice.address)).to.equal(2n * ONE);
    expect(await ch.deductedOf(1, ETH, f.bob.address)).to.equal(2n * ONE);
    expect(await ch.bondOf(ETH)).to.equal(0n);
  });
});
