/**
 * Second outside audit (docs/clearing.md "Audit 2: refunds and claims"), inverted: the attacks now fail.
 *
 *  A2-H1  A refund above a debit (a conceded or removed position's excess) is owed by the bond, never paid
 *         into the cycle: it waits for the cycle's disputes like a claim (`DisputesOpen`), is paid from the bond
 *         above the floor's share of the debits at risk only (`spareBond`), and the rest is owed (`refundOwed`,
 *         the bond cannot be withdrawn meanwhile). Honest creditors keep the honest payments; an honest debtor
 *         gets its refund once the bond can spare it; a veto cancels the refund.
 *  A2-M1  Claims (and refunds) wait for open disputes until the key-gap-extended answer deadline, so a removal
 *         answered in the extension is returned by the creditor's claim.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther } from "ethers";

import { publicKeyToEip2537 } from "../../sdk/bls";

import {
  ETH,
  OTHER_BLS,
  commitPlanned,
  creditProofOf,
  disputeAnswerOf,
  positionOf,
  remunerateArgs,
  signedGuarantee,
  suretyFixture,
  validatedV2Fixture,
  validatedV2Guarantee,
} from "./helpers";

const ONE = parseEther("1");
const NEW_KEY = publicKeyToEip2537(OTHER_BLS.publicKey);
const REMOVED = 4n;

/**
 * Honest alice signed 1 ETH to bob. carol and dave signed 2 ETH to each other (net zero: nothing in the total
 * debit the floor counts). The operator concedes carol's position: her excess over her (zero) debit is 2 ETH.
 */
async function crossedFixture(floorBps: number) {
  const f = await suretyFixture();
  if (floorBps !== 0) await f.clearingHouse.connect(f.admin).setBondFloor(floorBps);
  await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
  await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
  const all = [
    await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE),
    await signedGuarantee(f, f.carol, f.dave.address, 2n, 2n * ONE),
    await signedGuarantee(f, f.dave, f.carol.address, 3n, 2n * ONE),
  ];
  const { plan } = await commitPlanned(f, 1n, all);
  const ch = f.clearingHouse;
  const carols = disputeAnswerOf(all, f.carol.address, 0, { concede: true });
  await ch.revealSummary(1, ETH, f.carol.address, carols.summary, carols.summaryProof);
  await ch.connect(f.carol).disputeGuarantee(1, ETH, 0);
  return { ...f, all, plan, carols };
}

const fullFloor = () => crossedFixture(10_000);
const noFloor = () => crossedFixture(0);

/**
 * Since audit3 A3-M2 the operator's concession of carol's position is refused when the bond cannot spare her
 * 2 ETH above her debit (it would be set aside at once): the refund these tests follow is the one the bond owes
 * when nobody answered, carol's position conceded after the answer deadline (`voidUnansweredPosition`).
 */
async function voidCarols(f: Awaited<ReturnType<typeof crossedFixture>>): Promise<void> {
  await time.increaseTo((await f.clearingHouse.getCycle(1)).answerDeadline + 1n);
  await expect(
    f.clearingHouse.voidUnansweredPosition(1, ETH, f.carol.address, 0, f.carols.leaf, f.carols.path),
  )
    .to.emit(f.clearingHouse, "DebitReduced")
    .withArgs(1n, ETH, f.carol.address, 0n, 0n, 2n * ONE);
}

describe("audit2 A2-H1 fixed: refunds above a debit are owed by the bond, never paid from the cycle", () => {
  it("colluders at a full floor: the refund waits for the disputes, takes nothing of bob's, only the bond", async () => {
    const f = await loadFixture(fullFloor);
    const ch = f.clearingHouse;
    // The operator's concession would need 2 ETH of spare bond: the bond's 1 ETH is the floor's share.
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.carol.address, 0, f.carols))
      .to.be.revertedWithCustomError(ch, "RefundAboveSpareBond")
      .withArgs(1n, ETH, f.carol.address, 2n * ONE, 0n);
    await ch.connect(f.alice).payNetDebit(1, ETH, { value: ONE });

    // carol's dispute is open: the claims wait for it, and nothing is held for her yet.
    const cycle = await ch.getCycle(1);
    await time.increaseTo(cycle.challengeDeadline + 1n);
    const bobs = creditProofOf(f.plan, f.bob.address);
    await expect(ch.claimNetCredit(1, ETH, f.bob.address, bobs.summary, bobs.proof))
      .to.be.revertedWithCustomError(ch, "DisputesOpen")
      .withArgs(1n, cycle.answerDeadline);
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address))
      .to.be.revertedWithCustomError(ch, "NoRefundHeld")
      .withArgs(1n, ETH, f.carol.address);

    // Unanswered: conceded after the answer deadline; 2 ETH held for carol, nothing taken from the bond
    // or paid into the cycle.
    await voidCarols(f);
    expect(await ch.refundHeldOf(1, ETH, f.carol.address)).to.equal(2n * ONE);
    expect(await ch.bondOf(ETH)).to.equal(ONE);
    const asset = await ch.getCycleAsset(1, ETH);
    expect([asset.funded, asset.shortfall]).to.deep.equal([ONE, 0n]); // alice's payment only
    expect(await ch.totalRefundOwed(ETH)).to.equal(2n * ONE); // counted from the reduction on
    // Either order: carol first, then bob, who gets alice's payment in full.
    // The bond's 1 ETH is the floor's share of the 1 ETH debit still counted (cycle 1 is finalized, alice
    // paid, but nothing released it yet): nothing spare, all owed.
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address))
      .to.emit(ch, "DebitRefundClaimed")
      .withArgs(1n, ETH, f.carol.address, 0n, 2n * ONE);
    expect(await ch.payoutOf(ETH, f.carol.address)).to.equal(0n);
    expect(await ch.refundOwed(ETH, f.carol.address)).to.equal(2n * ONE);
    await expect(ch.claimNetCredit(1, ETH, f.bob.address, bobs.summary, bobs.proof))
      .to.emit(ch, "NetCreditClaimed")
      .withArgs(1n, ETH, f.bob.address, ONE);
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address))
      .to.be.revertedWithCustomError(ch, "NoRefundHeld")
      .withArgs(1n, ETH, f.carol.address);
    // The owed refund is the bond's debt. Cycle 1 can no longer draw on the bond (finalized): the claim
    // releases its share (audit3 A3-M3) and takes the bond, never bob's money; the rest after a top-up.
    await expect(ch.claimOwedRefund(ETH, f.carol.address))
      .to.emit(ch, "CycleRiskReleased")
      .withArgs(1n)
      .and.to.emit(ch, "OwedRefundPaid")
      .withArgs(ETH, f.carol.address, ONE, ONE);
    await expect(ch.claimOwedRefund(ETH, f.carol.address)).to.be.revertedWithCustomError(
      ch,
      "NoRefundPayable",
    );
    await ch.connect(f.admin).postBond(ETH, 0, { value: ONE });
    await expect(ch.claimOwedRefund(ETH, f.carol.address))
      .to.emit(ch, "OwedRefundPaid")
      .withArgs(ETH, f.carol.address, ONE, 0n);
    expect(await ch.bondOf(ETH)).to.equal(0n);
  });

  it("the floor's share backs a later cycle: carol's refund waits, cycle 2's voided debit is still funded", async () => {
    const f = await loadFixture(fullFloor);
    const ch = f.clearingHouse;
    await ch.connect(f.alice).payNetDebit(1, ETH, { value: ONE });
    await voidCarols(f);
    // Cycle 2 (alice signs bob 1 ETH more) passes the floor with the same 1 ETH bond: cycle 1 is released.
    const second = [await signedGuarantee(f, f.alice, f.bob.address, 4n, ONE)];
    const { plan: plan2 } = await commitPlanned(f, 2n, second);
    expect(await ch.bondAtRisk(ETH)).to.equal(ONE);
    // carol's refund is due now, but the bond's 1 ETH is cycle 2's floor share: all of it is owed.
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address))
      .to.emit(ch, "DebitRefundClaimed")
      .withArgs(1n, ETH, f.carol.address, 0n, 2n * ONE);
    // alice disputes cycle 2 and nobody answers: her debit is voided and the bond still funds bob.
    await ch.connect(f.alice).disputeGuarantee(2, ETH, 0);
    await time.increaseTo((await ch.getCycle(2)).answerDeadline + 1n);
    await expect(ch.voidUnansweredDebit(2, ETH, f.alice.address))
      .to.emit(ch, "DebitVoided")
      .withArgs(2n, ETH, f.alice.address, ONE, ONE);
    const bobs = creditProofOf(plan2, f.bob.address);
    await expect(ch.claimNetCredit(2, ETH, f.bob.address, bobs.summary, bobs.proof))
      .to.emit(ch, "NetCreditClaimed")
      .withArgs(2n, ETH, f.bob.address, ONE);
    expect(await ch.refundOwed(ETH, f.carol.address)).to.equal(2n * ONE);
  });

  it("short bond, floor off, no collusion: carol's refund gets the bond only, bob keeps alice's payment", async () => {
    const f = await loadFixture(noFloor);
    const ch = f.clearingHouse;
    // The whole bond is spare but short of the 2 ETH: the concession is refused (audit3 A3-M2) and the
    // position conceded after the answer deadline, its refund owed by the bond.
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.carol.address, 0, f.carols))
      .to.be.revertedWithCustomError(ch, "RefundAboveSpareBond")
      .withArgs(1n, ETH, f.carol.address, 2n * ONE, ONE);
    await ch.connect(f.alice).payNetDebit(1, ETH, { value: ONE });
    await voidCarols(f);
    // Nothing open: carol claims first. Before the fix she took the bond's 1 ETH and alice's 1 ETH.
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address))
      .to.emit(ch, "DebitRefundClaimed")
      .withArgs(1n, ETH, f.carol.address, ONE, ONE);
    expect(await ch.bondOf(ETH)).to.equal(0n);
    const bobs = creditProofOf(f.plan, f.bob.address);
    await expect(ch.claimNetCredit(1, ETH, f.bob.address, bobs.summary, bobs.proof))
      .to.emit(ch, "NetCreditClaimed")
      .withArgs(1n, ETH, f.bob.address, ONE);
    // The bond cannot leave while it owes the rest; the honest debtor gets it once the bond is topped up
    // (withdrawPayout covers it in the same call).
    await time.increaseTo((await ch.getCycle(1)).doubleListingDeadline + 1n);
    await expect(ch.connect(f.admin).withdrawBond(ETH, 1n, f.admin.address))
      .to.be.revertedWithCustomError(ch, "RefundsOwed")
      .withArgs(ETH, ONE);
    await ch.connect(f.admin).postBond(ETH, 0, { value: 3n * ONE });
    await expect(ch.connect(f.carol).withdrawPayout(ETH, f.carol.address)).to.changeEtherBalance(
      f.carol,
      2n * ONE,
    );
    expect(await ch.totalRefundOwed(ETH)).to.equal(0n);
    expect(await ch.bondOf(ETH)).to.equal(2n * ONE);
  });

  it("a veto cancels a held refund: what was set aside returns to the bond, and nothing is owed", async () => {
    const f = await loadFixture(noFloor);
    const ch = f.clearingHouse;
    // A 2-ETH bond spares the concession: set aside at once (audit3 A3-M2).
    await ch.connect(f.admin).postBond(ETH, 0, { value: ONE });
    await ch.connect(f.operator).answerDispute(1, ETH, f.carol.address, 0, f.carols);
    expect(await ch.bondOf(ETH)).to.equal(0n);
    await ch.connect(f.guardian).vetoCycle(1);
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address))
      .to.emit(ch, "DebitRefundCancelled")
      .withArgs(1n, ETH, f.carol.address, 2n * ONE);
    expect(await ch.totalRefundOwed(ETH)).to.equal(0n);
    expect(await ch.refundHeldOf(1, ETH, f.carol.address)).to.equal(0n);
    expect(await ch.bondOf(ETH)).to.equal(2n * ONE);
    expect(await ch.payoutOf(ETH, f.carol.address)).to.equal(0n);
  });
});

describe("audit2 A2-M1 fixed: claims wait for open disputes through an operator key gap", () => {
  /** As the audit's test: bob remunerated alice's 2 ETH V2 guarantee before the commit listed it; bond 5 ETH. */
  async function fixture() {
    const f = await validatedV2Fixture();
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await f.vault.connect(f.carol).deposit({ value: 10n * ONE });
    const v2 = validatedV2Guarantee(f);
    const all = [v2, await signedGuarantee(f, f.carol, f.dave.address, 1n, 3n * ONE)];
    await f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert));
    const { plan } = await commitPlanned(f, 1n, all, [f.cert.guaranteeId]);
    return { ...f, all, plan, v2 };
  }

  it("bob's claim waits for the extended deadline; the removal answered in it is returned by the claim", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    const position = positionOf(f.all, f.v2);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, position);
    await f.vault.connect(f.admin).revokeOperatorKey();
    const revokedAt = BigInt(await time.latest());
    await f.vault.connect(f.admin).setOperatorKey(NEW_KEY);
    await ch.connect(f.carol).payNetDebit(1, ETH, { value: 3n * ONE });

    const cycle = await ch.getCycle(1);
    const until = await f.vault.answerDeadlineAfterKeyGap(cycle.answerDeadline);
    expect(until).to.be.greaterThan(cycle.answerDeadline);
    await time.increaseTo(cycle.answerDeadline + 1n);
    const bobs = creditProofOf(f.plan, f.bob.address);
    await expect(ch.claimNetCredit(1, ETH, f.bob.address, bobs.summary, bobs.proof))
      .to.be.revertedWithCustomError(ch, "DisputesOpen")
      .withArgs(1n, until);

    await time.increaseTo(revokedAt + (await f.vault.timelockDelay()) + 1n);
    await f.vault.connect(f.admin).setOperatorKey(NEW_KEY);
    const answer = disputeAnswerOf(f.all, f.alice.address, position, { key: OTHER_BLS });
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.alice.address, position, answer))
      .to.emit(ch, "DisputeResolved")
      .withArgs(1n, ETH, f.alice.address, BigInt(position), REMOVED, f.cert.guaranteeId, 2n * ONE);
    // Nothing open any more: bob claims, and his claim returns the deduction to the bond (he is paid once).
    await expect(ch.claimNetCredit(1, ETH, f.bob.address, bobs.summary, bobs.proof))
      .to.emit(ch, "DeductionRecovered")
      .withArgs(1n, ETH, f.bob.address, 2n * ONE, 0n);
    expect(await ch.payoutOf(ETH, f.bob.address)).to.equal(0n);
    expect(await ch.bondOf(ETH)).to.equal(5n * ONE);
    expect(await ch.deductedOf(1, ETH, f.bob.address)).to.equal(0n);
  });

  it("an open dispute left unanswered holds claims until the extended deadline, not longer", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await ch.connect(f.alice).disputeGuarantee(1, ETH, positionOf(f.all, f.v2));
    await f.vault.connect(f.admin).revokeOperatorKey();
    await ch.connect(f.carol).payNetDebit(1, ETH, { value: 3n * ONE });
    const cycle = await ch.getCycle(1);
    const until = await f.vault.answerDeadlineAfterKeyGap(cycle.answerDeadline);
    const daves = creditProofOf(f.plan, f.dave.address);
    await time.increaseTo(until - 1n); // the claim is mined at `until`
    await expect(ch.claimNetCredit(1, ETH, f.dave.address, daves.summary, daves.proof))
      .to.be.revertedWithCustomError(ch, "DisputesOpen")
      .withArgs(1n, until);
    await expect(ch.claimNetCredit(1, ETH, f.dave.address, daves.summary, daves.proof))
      .to.emit(ch, "NetCreditClaimed")
      .withArgs(1n, ETH, f.dave.address, 3n * ONE);
  });
});
