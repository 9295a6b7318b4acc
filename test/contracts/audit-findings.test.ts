/**
 * An audit of the dispute game (docs/clearing.md "Disputes"), each finding as a deterministic scenario.
 *  H-1 (fixed): a concession (an answer with empty claims) from anyone but the operator is refused
 *  (`ConcessionNotAllowed`): a debtor could otherwise void its own honest debit against the bond.
 *  M-2 (fixed): a removal's deduction that no claim returns is locked on the recipient's collateral and
 *  recovered from it (`recoverDeduction`): the bond never pays a seller twice.
 *  M-3 (fixed): a removal's excess over the debit is held in the cycle until the challenge deadline
 *  (`claimDebitRefund`); a veto returns it to the bond.
 *  Info (fixed): a returned deduction refills the cycle's shortfall before the bond (the bond gets back only
 *  what it fronted).
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther } from "ethers";

import {
  ETH,
  TIMINGS,
  disputeAnswerOf,
  positionOf,
  remunerateArgs,
  signedGuarantee,
  suretyFixture,
  validatedV2Fixture,
  commitPlanned,
  creditProofOf,
  validatedV2Guarantee,
} from "./helpers";

const ONE = parseEther("1");
const W = TIMINGS.challengeWindow;
const DEBT = { open: 1n, paid: 2n, covered: 3n, challenged: 4n, answered: 5n, voided: 6n, refunded: 7n };
const DISPUTE = { none: 0n, open: 1n, upheld: 2n, voided: 3n, removed: 4n, dismissed: 5n };

describe("Audit findings on the dispute game (issue 25)", () => {
  /** alice signed 3 ETH to bob and 1 to carol, bob 1 ETH to alice: alice owes 3 net, bob +2, carol +1. */
  async function honestFixture() {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    const toBob = await signedGuarantee(f, f.alice, f.bob.address, 1n, 3n * ONE);
    const toCarol = await signedGuarantee(f, f.alice, f.carol.address, 2n, ONE);
    const fromBob = await signedGuarantee(f, f.bob, f.alice.address, 3n, ONE);
    const all = [toBob, toCarol, fromBob];
    const { plan: plan } = await commitPlanned(f, 1n, all);
    return { ...f, plan, all, toBob, toCarol, fromBob };
  }

  it("H-1 (fixed): neither the debtor nor a third party can concede; the operator can", async () => {
    const f = await loadFixture(honestFixture);
    const ch = f.clearingHouse;
    const a = f.alice.address;
    const p = positionOf(f.all, f.toBob);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, p);
    const concession = disputeAnswerOf(f.all, a, p, { concede: true });
    for (const who of [f.alice, f.outsider]) {
      await expect(ch.connect(who).answerDispute(1, ETH, a, p, concession))
        .to.be.revertedWithCustomError(ch, "ConcessionNotAllowed")
        .withArgs(who.address);
    }
    // Anyone may still prove the position (the honest answer), which upholds it.
    await expect(ch.connect(f.outsider).answerDispute(1, ETH, a, p, disputeAnswerOf(f.all, a, p)))
      .to.emit(ch, "DisputeResolved")
      .withArgs(1n, ETH, a, p, DISPUTE.upheld, f.toBob.payable.guaranteeId, 3n * ONE);
    expect(await ch.bondOf(ETH)).to.equal(5n * ONE);
    expect((await ch.debtOf(1, ETH, a)).amount).to.equal(3n * ONE);
  });

  it("M-2 (fixed): a net-debtor seller that remunerated its V2 guarantee before the commit pays the removal back from its collateral", async () => {
    const f = await loadFixture(validatedV2Fixture); // alice -> bob V2 2 ETH, validated
    const ch = f.clearingHouse;
    await ch.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
    const v2 = validatedV2Guarantee(f);
    // bob also bought 3 ETH from carol: in this cycle bob is a net DEBTOR (+2 - 3 = -1).
    const bobToCarol = await signedGuarantee(f, f.bob, f.carol.address, 9n, 3n * ONE);
    const all = [v2, bobToCarol];
    // Core planned the cycle; bob remunerates the V2 guarantee (from alice's collateral) before the commit lands.
    await f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert)); // bob is paid 2 ETH
    const { plan } = await commitPlanned(f, 1n, all, [f.cert.guaranteeId]); // the mark is skipped
    expect((await ch.debtOf(1, ETH, f.bob.address)).amount).to.equal(ONE);
    // alice disputes the guarantee she already paid: Removed; the bond fronts 2 ETH and bob owes them back,
    // locked on his collateral at once (he cannot withdraw them).
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await expect(ch.answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf(all, f.alice.address, 0)))
      .to.emit(ch, "CreditDeducted")
      .withArgs(1n, ETH, f.bob.address, f.cert.guaranteeId, 2n * ONE)
      .and.to.emit(f.vault, "ObligationRecorded")
      .withArgs(f.bob.address, ETH, 2n * ONE, 3n * ONE);
    expect(await f.vault.obligationOf(f.bob.address, ETH)).to.equal(3n * ONE);
    expect(await f.vault.freeCollateralOf(f.bob.address, ETH)).to.equal(7n * ONE);
    await ch.connect(f.bob).payNetDebit(1, ETH, { value: ONE });
    await time.increase(W + 1);
    const carol = creditProofOf(plan, f.carol.address);
    await ch.claimNetCredit(1, ETH, f.carol.address, carol.summary, carol.proof);
    expect(() => creditProofOf(plan, f.bob.address)).to.throw("no credit"); // no claim can return it
    // The deduction is recovered from bob's collateral after the payment deadline, like a covered debt.
    await expect(ch.recoverDeduction(1, ETH, f.bob.address)).to.be.revertedWithCustomError(
      ch,
      "PaymentWindowOpen",
    );
    await time.increaseTo((await ch.getCycle(1)).paymentDeadline + 1n);
    await expect(ch.connect(f.outsider).recoverDeduction(1, ETH, f.bob.address))
      .to.emit(ch, "DeductionRecovered")
      .withArgs(1n, ETH, f.bob.address, 2n * ONE, 2n * ONE);
    expect(await ch.bondOf(ETH)).to.equal(5n * ONE); // the bond paid nothing for bob's double payment
    expect(await ch.deductedOf(1, ETH, f.bob.address)).to.equal(0n);
    expect(await f.vault.balanceOf(f.bob.address, ETH)).to.equal(8n * ONE);
    expect(await f.vault.obligationOf(f.bob.address, ETH)).to.equal(0n);
    await expect(ch.recoverDeduction(1, ETH, f.bob.address))
      .to.be.revertedWithCustomError(ch, "NoDeduction")
      .withArgs(1n, ETH, f.bob.address);
    // alice paid 2 once (remunerate); carol got 3; bob received 2 and paid 1 + 2 for the 3 he signed out.
    const alice = await ch.debtOf(1, ETH, f.alice.address);
    expect([alice.status, alice.amount]).to.deep.equal([DEBT.voided, 0n]);
    expect(await ch.payoutOf(ETH, f.carol.address)).to.equal(3n * ONE);
  });

  it("Info (fixed): a deduction recovered while the cycle is short refills the cycle before the bond", async () => {
    const f = await loadFixture(validatedV2Fixture); // alice -> bob V2 2 ETH, validated; no bond posted
    const ch = f.clearingHouse;
    await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
    const v2 = validatedV2Guarantee(f);
    const bobToCarol = await signedGuarantee(f, f.bob, f.carol.address, 9n, 3n * ONE);
    const all = [v2, bobToCarol];
    await f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert));
    const { plan } = await commitPlanned(f, 1n, all, [f.cert.guaranteeId]);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await ch.answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf(all, f.alice.address, 0)); // Removed
    // The empty bond fronted nothing: the cycle is 2 ETH short and carol's 3 ETH cannot be claimed.
    expect((await ch.getCycleAsset(1, ETH)).shortfall).to.equal(2n * ONE);
    await ch.connect(f.bob).payNetDebit(1, ETH, { value: ONE });
    await time.increaseTo((await ch.getCycle(1)).paymentDeadline + 1n);
    const carol = creditProofOf(plan, f.carol.address);
    await expect(ch.claimNetCredit(1, ETH, f.carol.address, carol.summary, carol.proof))
      .to.be.revertedWithCustomError(ch, "CreditNotYetFunded")
      .withArgs(1n, ETH, ONE, 3n * ONE);
    // Before: the 2 ETH recovered from bob went to the bond, which had fronted nothing, and carol stayed short.
    await ch.recoverDeduction(1, ETH, f.bob.address);
    expect(await ch.bondOf(ETH)).to.equal(0n);
    expect((await ch.getCycleAsset(1, ETH)).shortfall).to.equal(0n);
    await ch.claimNetCredit(1, ETH, f.carol.address, carol.summary, carol.proof);
    expect(await ch.payoutOf(ETH, f.carol.address)).to.equal(3n * ONE);
  });

  it("M-2 (fixed): a creditor recipient's claim returns the deduction and lifts its lock", async () => {
    const f = await loadFixture(validatedV2Fixture); // alice -> bob V2 2 ETH, validated
    const ch = f.clearingHouse;
    await ch.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await f.vault.connect(f.dave).deposit({ value: 10n * ONE });
    const v2 = validatedV2Guarantee(f);
    const daveToBob = await signedGuarantee(f, f.dave, f.bob.address, 9n, 3n * ONE);
    const all = [v2, daveToBob];
    await f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert));
    const { plan } = await commitPlanned(f, 1n, all, [f.cert.guaranteeId]); // bob +5
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await ch.answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf(all, f.alice.address, 0));
    expect(await f.vault.obligationOf(f.bob.address, ETH)).to.equal(2n * ONE);
    await ch.connect(f.dave).payNetDebit(1, ETH, { value: 3n * ONE });
    await time.increase(W + 1);
    const bob = creditProofOf(plan, f.bob.address);
    await expect(ch.claimNetCredit(1, ETH, f.bob.address, bob.summary, bob.proof))
      .to.emit(ch, "NetCreditClaimed")
      .withArgs(1n, ETH, f.bob.address, 3n * ONE)
      .and.to.emit(ch, "DeductionRecovered")
      .withArgs(1n, ETH, f.bob.address, 2n * ONE, 0n)
      .and.to.emit(f.vault, "ObligationReleased")
      .withArgs(f.bob.address, ETH, 2n * ONE, 0n);
    expect(await ch.bondOf(ETH)).to.equal(5n * ONE);
    expect(await ch.deductedOf(1, ETH, f.bob.address)).to.equal(0n);
    await time.increaseTo((await ch.getCycle(1)).paymentDeadline + 1n);
    await expect(ch.recoverDeduction(1, ETH, f.bob.address)).to.be.revertedWithCustomError(ch, "NoDeduction");
  });

  it("M-3 (fixed): a removal's excess refund is held until the challenge deadline; a veto cancels it", async () => {
    const f = await loadFixture(validatedV2Fixture); // alice -> bob V2 2 ETH, validated
    const ch = f.clearingHouse;
    await ch.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await f.vault.connect(f.dave).deposit({ value: 10n * ONE });
    const v2 = validatedV2Guarantee(f);
    const aliceToCarol = await signedGuarantee(f, f.alice, f.carol.address, 5n, 2n * ONE);
    const daveToAlice = await signedGuarantee(f, f.dave, f.alice.address, 6n, 3n * ONE);
    const all = [v2, aliceToCarol, daveToAlice];
    await f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert)); // race with the commit
    await commitPlanned(f, 1n, all, [f.cert.guaranteeId]);
    // alice: -2 (V2, already paid) -2 +3 = -1. Dispute the V2 position -> Removed 2: cut 1, excess 1 held.
    const p = positionOf(all, v2);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, p);
    await expect(ch.answerDispute(1, ETH, f.alice.address, p, disputeAnswerOf(all, f.alice.address, p)))
      .to.emit(ch, "DebitReduced")
      .withArgs(1n, ETH, f.alice.address, ONE, ONE, ONE);
    expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(0n);
    expect(await ch.refundHeldOf(1, ETH, f.alice.address)).to.equal(ONE);
    expect(await ch.bondOf(ETH)).to.equal(4n * ONE); // the cut paid into the cycle; the excess owed (A2-H1)
    await expect(ch.claimDebitRefund(1, ETH, f.alice.address)).to.be.revertedWithCustomError(
      ch,
      "ChallengeWindowOpen",
    );
    // The guardian vetoes the cycle (for any reason): the cut goes back to the bond, the held excess is
    // cancelled (it never left the bond), nothing was paid out.
    await expect(ch.connect(f.guardian).vetoCycle(1))
      .to.emit(ch, "VetoedBondReturned")
      .withArgs(1n, ETH, ONE);
    expect(await ch.bondOf(ETH)).to.equal(5n * ONE);
    await time.increase(W + 1);
    await expect(ch.claimDebitRefund(1, ETH, f.alice.address))
      .to.emit(ch, "DebitRefundCancelled")
      .withArgs(1n, ETH, f.alice.address, ONE);
    expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(0n);
    expect(await ch.totalRefundOwed(ETH)).to.equal(0n);
    // bob's lock (the removal's deduction) is lifted, nothing taken: the vetoed cycle paid nothing twice.
    await expect(ch.recoverDeduction(1, ETH, f.bob.address))
      .to.emit(ch, "DeductionRecovered")
      .withArgs(1n, ETH, f.bob.address, 2n * ONE, 0n);
    expect(await f.vault.obligationOf(f.bob.address, ETH)).to.equal(0n);
    // Core re-commits the same guarantees without the remunerated one: alice is a +1 creditor, paid once.
    const recommit = [aliceToCarol, daveToAlice];
    const { plan: plan2 } = await commitPlanned(f, 2n, recommit);
    await ch.connect(f.dave).payNetDebit(2, ETH, { value: 3n * ONE });
    await time.increase(W + 1);
    const c = creditProofOf(plan2, f.alice.address);
    expect(c.credit).to.equal(ONE);
    await ch.claimNetCredit(2, ETH, f.alice.address, c.summary, c.proof);
    expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(ONE); // owed 1, holds 1
    expect(await ch.bondOf(ETH)).to.equal(5n * ONE);
  });

  it("M-3 (fixed): without a veto the held refund is claimable after the challenge deadline, once", async () => {
    const f = await loadFixture(validatedV2Fixture);
    const ch = f.clearingHouse;
    await ch.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await f.vault.connect(f.dave).deposit({ value: 10n * ONE });
    const v2 = validatedV2Guarantee(f);
    const aliceToCarol = await signedGuarantee(f, f.alice, f.carol.address, 5n, 2n * ONE);
    const daveToAlice = await signedGuarantee(f, f.dave, f.alice.address, 6n, 3n * ONE);
    const all = [v2, aliceToCarol, daveToAlice];
    await f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert));
    const { plan } = await commitPlanned(f, 1n, all, [f.cert.guaranteeId]);
    const p = positionOf(all, v2);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, p);
    await ch.answerDispute(1, ETH, f.alice.address, p, disputeAnswerOf(all, f.alice.address, p));
    await ch.connect(f.dave).payNetDebit(1, ETH, { value: 3n * ONE });
    await time.increase(W + 1);
    await expect(ch.connect(f.outsider).claimDebitRefund(1, ETH, f.alice.address))
      .to.emit(ch, "DebitRefundClaimed")
      .withArgs(1n, ETH, f.alice.address, ONE, 0n);
    expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(ONE);
    await expect(ch.claimDebitRefund(1, ETH, f.alice.address))
      .to.be.revertedWithCustomError(ch, "NoRefundHeld")
      .withArgs(1n, ETH, f.alice.address);
    // carol 2, bob 5 - 2 (its claim returns the removed guarantee to the bond): the cycle pays out exactly
    // dave's 3 plus what the bond fronted, and the bond gets back what bob owed.
    for (const who of [f.carol.address, f.bob.address]) {
      const c = creditProofOf(plan, who);
      await ch.claimNetCredit(1, ETH, who, c.summary, c.proof);
    }
    expect(await ch.payoutOf(ETH, f.bob.address)).to.equal(0n);
    expect(await ch.bondOf(ETH)).to.equal(5n * ONE);
    expect(await ch.heldLiquidity(ETH)).to.equal(0n);
  });
});
