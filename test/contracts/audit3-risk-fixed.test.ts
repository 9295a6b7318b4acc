/**
 * Third outside audit (docs/audit3-findings.md), fixed: when a cycle's floor share leaves `bondAtRisk`.
 *
 *  A3-M1  A cycle stays counted in `bondAtRisk` until it can no longer draw on the bond (finalized: every debt
 *         paid, covered or voided; or vetoed), no longer only until its answer deadline: a refund above a debit
 *         cannot take the floor's share a phantom default is still to be funded from. The audit's attack,
 *         inverted: the 1-wei commit is refused, carol's refund waits, the bond funds the phantom's gap and
 *         bob is paid in full; what the colluders take is the bond's money, never bob's.
 *  A3-M3  Settled cycles are released without a commit: `releaseSettledRisk(maxCycles)` (anyone), and
 *         `claimOwedRefund` / `withdrawPayout` release up to 8 settled cycles themselves when the bond cannot
 *         spare an owed refund; the newest cycle too. A year after every deadline the refund is paid in full.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther } from "ethers";

import { guaranteeLeafOf } from "../../operator/clearing/commit-plan";
import { guaranteeProof } from "../../sdk";

import {
  ETH,
  type SignedTestGuarantee,
  commitPlanned,
  creditProofOf,
  disputeAnswerOf,
  planCycle,
  signedGuarantee,
  suretyFixture,
} from "./helpers";

const ONE = parseEther("1");
const DAY = 86_400n;

type Fixture = Awaited<ReturnType<typeof suretyFixture>>;

/** `commitCycle` of Core's plan of `guarantees` (the transaction, not awaited: for revert matchers). */
function commitOf(f: Fixture, cycleId: bigint, guarantees: SignedTestGuarantee[]) {
  const plan = planCycle(cycleId, guarantees);
  const roots = {
    root: plan.root,
    guaranteesRoot: plan.args.guaranteesRoot,
    debitsRoot: plan.args.debitsRoot,
  };
  return f.clearingHouse
    .connect(f.operator)
    .commitCycle(cycleId, roots, plan.args.totals, plan.args.debtors, []);
}

describe("audit3 A3-M1 (fixed): a cycle's floor share stays counted until its defaults are covered", () => {
  /**
   * The audit's setup. Floor 10,000 bps, bond 2 ETH = the cycle's total debit. Honest alice signs bob 1 ETH; the
   * colluders: outsider (no Vault collateral) "signs" dave 1 ETH (the phantom a rogue commit lists), carol and
   * dave sign each other 2 ETH (net zero). carol's disputed position is voided unanswered after the answer
   * deadline (2 ETH held for her: since A3-M2 the operator's concession is refused, no spare bond); alice pays
   * and dave claims first, from alice's payment.
   */
  async function fixture() {
    const f = await suretyFixture();
    await f.clearingHouse.connect(f.admin).setBondFloor(10_000);
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 2n * ONE });
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    const all = [
      await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE),
      await signedGuarantee(f, f.outsider, f.dave.address, 2n, ONE),
      await signedGuarantee(f, f.carol, f.dave.address, 3n, 2n * ONE),
      await signedGuarantee(f, f.dave, f.carol.address, 4n, 2n * ONE),
    ];
    const { plan } = await commitPlanned(f, 1n, all);
    const ch = f.clearingHouse;
    const carols = disputeAnswerOf(all, f.carol.address, 0, { concede: true });
    await ch.revealSummary(1, ETH, f.carol.address, carols.summary, carols.summaryProof);
    await ch.connect(f.carol).disputeGuarantee(1, ETH, 0);
    // Since A3-M2 an operator's concession needs its 2 ETH above the debit spare (the bond is the floor's
    // share): it is refused. The refund the bond owes comes from the unanswered dispute, voided.
    await expect(
      ch.connect(f.operator).answerDispute(1, ETH, f.carol.address, 0, carols),
    ).to.be.revertedWithCustomError(ch, "RefundAboveSpareBond");
    await ch.connect(f.alice).payNetDebit(1, ETH, { value: ONE });
    const cycle = await ch.getCycle(1);
    await time.increaseTo(cycle.answerDeadline + 1n);
    await ch.voidUnansweredPosition(1, ETH, f.carol.address, 0, carols.leaf, carols.path);
    const daves = creditProofOf(plan, f.dave.address);
    await ch.claimNetCredit(1, ETH, f.dave.address, daves.summary, daves.proof);
    return { ...f, all, plan, cycle };
  }

  /** After the payment deadline the phantom's default is covered, from the bond; bob then claims in full. */
  async function coverAndPayBob(f: Awaited<ReturnType<typeof fixture>>, fromBond: bigint) {
    const ch = f.clearingHouse;
    await time.increaseTo(f.cycle.paymentDeadline + 1n);
    await expect(ch.coverDefault(1, ETH, f.outsider.address))
      .to.emit(ch, "DefaultFundedFromBond")
      .withArgs(1n, ETH, f.outsider.address, fromBond)
      .and.to.emit(ch, "CycleFinalized")
      .withArgs(1n);
    expect((await ch.getCycleAsset(1, ETH)).shortfall).to.equal(0n);
    const bobs = creditProofOf(f.plan, f.bob.address);
    await ch.connect(f.bob).claimNetCredit(1, ETH, f.bob.address, bobs.summary, bobs.proof);
    await expect(ch.connect(f.bob).withdrawPayout(ETH, f.bob.address)).to.changeEtherBalance(f.bob, ONE);
  }

  it("bob is paid in full at a full floor: the 1-wei commit is refused, carol's refund waits for the default", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    // Past the answer deadline, cycle 1 is still counted: its phantom debt is open until covered.
    expect(await ch.bondAtRisk(ETH)).to.equal(2n * ONE);
    await expect(commitOf(f, 2n, [await signedGuarantee(f, f.alice, f.bob.address, 9n, 1n)]))
      .to.be.revertedWithCustomError(ch, "BondBelowFloor")
      .withArgs(ETH, 2n * ONE, 2n * ONE + 1n);
    await expect(ch.connect(f.outsider).releaseSettledRisk(8))
      .to.be.revertedWithCustomError(ch, "NoSettledRisk")
      .withArgs(1n);
    // carol's refund: nothing of the bond is spare, all of it is owed.
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address))
      .to.emit(ch, "DebitRefundClaimed")
      .withArgs(1n, ETH, f.carol.address, 0n, 2n * ONE);
    await expect(ch.claimOwedRefund(ETH, f.carol.address))
      .to.be.revertedWithCustomError(ch, "NoRefundPayable")
      .withArgs(ETH, f.carol.address, 2n * ONE, 2n * ONE);
    expect(await ch.bondOf(ETH)).to.equal(2n * ONE);
    // The bond funds the phantom's whole gap; bob is paid in full.
    await coverAndPayBob(f, ONE);
    // Cycle 1 is finalized: carol's withdrawal releases it and takes what is left of the bond, nothing more.
    const carols = ch.connect(f.carol).withdrawPayout(ETH, f.carol.address);
    await expect(carols).to.changeEtherBalance(f.carol, ONE);
    await expect(carols)
      .to.emit(ch, "CycleRiskReleased")
      .withArgs(1n)
      .and.to.emit(ch, "OwedRefundPaid")
      .withArgs(ETH, f.carol.address, ONE, ONE);
    expect(await ch.bondAtRisk(ETH)).to.equal(0n);
    expect(await ch.bondOf(ETH)).to.equal(0n);
    // The colluders got the bond (dave 1 ETH of alice's payment that the phantom's cover replaced, carol 1 ETH),
    // never bob's money; carol's last 1 ETH stays owed by the bond.
    expect(await ch.refundOwed(ETH, f.carol.address)).to.equal(ONE);
    expect(await ch.totalRefundOwed(ETH)).to.equal(ONE);
  });

  it("a commit with the bond topped up by 1 wei does not release cycle 1 either: the refund still waits", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await ch.connect(f.admin).postBond(ETH, 0, { value: 1n });
    await commitPlanned(f, 2n, [await signedGuarantee(f, f.alice, f.bob.address, 9n, 1n)]);
    expect(await ch.bondAtRisk(ETH)).to.equal(2n * ONE + 1n);
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address))
      .to.emit(ch, "DebitRefundClaimed")
      .withArgs(1n, ETH, f.carol.address, 0n, 2n * ONE);
    await coverAndPayBob(f, ONE);
    // Cycle 2 (alice's 1 wei, unpaid) is still open: cycle 1 is released, cycle 2's share is kept.
    await expect(ch.connect(f.outsider).releaseSettledRisk(8)).to.emit(ch, "CycleRiskReleased").withArgs(1n);
    expect(await ch.bondAtRisk(ETH)).to.equal(1n);
    await expect(ch.claimOwedRefund(ETH, f.carol.address))
      .to.emit(ch, "OwedRefundPaid")
      .withArgs(ETH, f.carol.address, ONE, ONE);
    expect(await ch.bondOf(ETH)).to.equal(1n);
  });

  it("carol claims after the cover: the same, whichever order", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await coverAndPayBob(f, ONE);
    // Finalized but not released yet: claimDebitRefund does not release (owed), her withdrawal does.
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address))
      .to.emit(ch, "DebitRefundClaimed")
      .withArgs(1n, ETH, f.carol.address, 0n, 2n * ONE);
    await expect(ch.connect(f.carol).withdrawPayout(ETH, f.carol.address)).to.changeEtherBalance(
      f.carol,
      ONE,
    );
    expect(await ch.refundOwed(ETH, f.carol.address)).to.equal(ONE);
  });

  it("released once the keeper (anyone) calls releaseSettledRisk: the refund is then paid at its claim", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await coverAndPayBob(f, ONE);
    await expect(ch.connect(f.outsider).releaseSettledRisk(8)).to.emit(ch, "CycleRiskReleased").withArgs(1n);
    await expect(ch.connect(f.outsider).releaseSettledRisk(8))
      .to.be.revertedWithCustomError(ch, "NoSettledRisk")
      .withArgs(2n);
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address))
      .to.emit(ch, "DebitRefundClaimed")
      .withArgs(1n, ETH, f.carol.address, ONE, ONE);
  });
});

describe("audit3 A3-M3 (fixed): settled risk is released without a commit", () => {
  /** The audit's setup: floor 10,000 bps, bond 1 ETH; alice's 1 ETH to bob listed in cycles 1 and 2, both paid. */
  async function fixture() {
    const f = await suretyFixture();
    await f.clearingHouse.connect(f.admin).setBondFloor(10_000);
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    const toBob = await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE);
    const { plan: c1 } = await commitPlanned(f, 1n, [toBob]);
    await f.clearingHouse.connect(f.alice).payNetDebit(1, ETH, { value: ONE });
    await time.increaseTo((await f.clearingHouse.getCycle(1)).answerDeadline + 1n);
    const { plan: c2 } = await commitPlanned(f, 2n, [toBob]);
    return { ...f, toBob, c1, c2 };
  }

  /** alice pays cycle 2 too, bob claims both, and the double listing is proven: `paid` set aside, the rest owed. */
  async function proven(f: Awaited<ReturnType<typeof fixture>>, paid = 0n) {
    const ch = f.clearingHouse;
    await ch.connect(f.alice).payNetDebit(2, ETH, { value: ONE });
    await time.increaseTo((await ch.getCycle(2)).answerDeadline + 1n);
    for (const [id, plan] of [
      [1, f.c1],
      [2, f.c2],
    ] as const) {
      const bobs = creditProofOf(plan, f.bob.address);
      await ch.claimNetCredit(id, ETH, f.bob.address, bobs.summary, bobs.proof);
    }
    const leaf = guaranteeLeafOf(f.toBob.payable);
    await expect(
      ch.proveDoubleListing(
        1,
        2,
        leaf,
        leaf,
        guaranteeProof(f.c1.guaranteeTree, leaf),
        guaranteeProof(f.c2.guaranteeTree, leaf),
      ),
    )
      .to.emit(ch, "DoubleListingRefunded")
      .withArgs(ETH, f.alice.address, paid, ONE - paid);
  }

  it("a year after every deadline, with no commit, anyone's claimOwedRefund pays alice in full", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await proven(f);
    const c2 = await ch.getCycle(2);
    await time.increaseTo(c2.doubleListingDeadline + 365n * DAY);
    expect(await ch.bondAtRisk(ETH)).to.equal(ONE); // the newest cycle, finalized, not released yet
    const claim = ch.connect(f.outsider).claimOwedRefund(ETH, f.alice.address);
    await expect(claim)
      .to.emit(ch, "CycleRiskReleased")
      .withArgs(2n)
      .and.to.emit(ch, "OwedRefundPaid")
      .withArgs(ETH, f.alice.address, ONE, 0n);
    console.log(`      claimOwedRefund releasing 1 cycle: ${(await (await claim).wait())!.gasUsed} gas`);
    expect(await ch.bondAtRisk(ETH)).to.equal(0n);
    expect(await ch.totalRefundOwed(ETH)).to.equal(0n);
    await expect(ch.connect(f.alice).withdrawPayout(ETH, f.alice.address)).to.changeEtherBalance(
      f.alice,
      ONE,
    );
  });

  it("alice's own withdrawPayout releases and pays; then the bond can leave", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await ch.connect(f.admin).postBond(ETH, 0, { value: ONE });
    // With 2 ETH of bond and 1 ETH at risk, 1 ETH is spare at the proof: paid at once.
    await proven(f, ONE);
    expect(await ch.refundOwed(ETH, f.alice.address)).to.equal(0n);
    await time.increaseTo((await ch.getCycle(2)).doubleListingDeadline + 1n);
    await expect(ch.connect(f.alice).withdrawPayout(ETH, f.alice.address)).to.changeEtherBalance(
      f.alice,
      ONE,
    );
    await expect(ch.connect(f.admin).withdrawBond(ETH, ONE, f.admin.address)).to.changeEtherBalance(
      f.admin,
      ONE,
    );
  });

  it("the bond stays 1 ETH, owed 1 ETH: withdrawPayout releases cycle 2 and pays it; the bond is then free", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await proven(f);
    await time.increaseTo((await ch.getCycle(2)).doubleListingDeadline + 1n);
    await expect(ch.connect(f.admin).withdrawBond(ETH, 1n, f.admin.address))
      .to.be.revertedWithCustomError(ch, "RefundsOwed")
      .withArgs(ETH, ONE);
    const alices = ch.connect(f.alice).withdrawPayout(ETH, f.alice.address);
    await expect(alices).to.changeEtherBalance(f.alice, ONE);
    await expect(alices).to.emit(ch, "CycleRiskReleased").withArgs(2n);
    expect(await ch.totalRefundOwed(ETH)).to.equal(0n);
    await ch.connect(f.admin).postBond(ETH, 0, { value: 1n });
    await expect(ch.connect(f.admin).withdrawBond(ETH, 1n, f.admin.address)).to.changeEtherBalance(
      f.admin,
      1n,
    );
  });

  it("an unsettled cycle keeps its share: nothing is released before alice pays cycle 2 (or it is covered)", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    // Cycle 1 was released by commit 2 (alice had paid it); cycle 2 is open.
    expect(await ch.bondAtRisk(ETH)).to.equal(ONE);
    await expect(ch.releaseSettledRisk(8)).to.be.revertedWithCustomError(ch, "NoSettledRisk").withArgs(2n);
    const c2 = await ch.getCycle(2);
    // Past the answer deadline and the payment deadline: still counted until the debt is resolved.
    await time.increaseTo(c2.paymentDeadline + 1n);
    await expect(ch.releaseSettledRisk(8)).to.be.revertedWithCustomError(ch, "NoSettledRisk").withArgs(2n);
    await ch.coverDefault(2, ETH, f.alice.address);
    await expect(ch.releaseSettledRisk(8)).to.emit(ch, "CycleRiskReleased").withArgs(2n);
    expect(await ch.bondAtRisk(ETH)).to.equal(0n);
  });

  it("a refund above a debit held when commits stopped: claimed (owed), then paid by the debtor's withdrawal", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    // Cycle 3: carol and dave sign each other 2 ETH, alice signs bob 1 ETH; cycle 2 is still open at the commit.
    await ch.connect(f.admin).postBond(ETH, 0, { value: ONE });
    const all = [
      await signedGuarantee(f, f.carol, f.dave.address, 3n, 2n * ONE),
      await signedGuarantee(f, f.dave, f.carol.address, 4n, 2n * ONE),
      await signedGuarantee(f, f.alice, f.bob.address, 5n, ONE),
    ];
    await commitPlanned(f, 3n, all);
    expect(await ch.bondAtRisk(ETH)).to.equal(2n * ONE);
    // carol's position is voided unanswered (the operator's concession would need a spare bond since A3-M2):
    // 2 ETH held for her. alice pays both cycles: every cycle is finalized.
    const carols = disputeAnswerOf(all, f.carol.address, 0, { concede: true });
    await ch.revealSummary(3, ETH, f.carol.address, carols.summary, carols.summaryProof);
    await ch.connect(f.carol).disputeGuarantee(3, ETH, 0);
    await ch.connect(f.alice).payNetDebit(2, ETH, { value: ONE });
    await ch.connect(f.alice).payNetDebit(3, ETH, { value: ONE });
    // No commit follows: bondAtRisk still counts cycles 2 and 3, the whole 2 ETH bond.
    await time.increaseTo((await ch.getCycle(3)).answerDeadline + 1n);
    await ch.voidUnansweredPosition(3, ETH, f.carol.address, 0, carols.leaf, carols.path);
    expect(await ch.bondAtRisk(ETH)).to.equal(2n * ONE);
    await expect(ch.claimDebitRefund(3, ETH, f.carol.address))
      .to.emit(ch, "DebitRefundClaimed")
      .withArgs(3n, ETH, f.carol.address, 0n, 2n * ONE);
    const withdrawal = ch.connect(f.carol).withdrawPayout(ETH, f.carol.address);
    await expect(withdrawal).to.changeEtherBalance(f.carol, 2n * ONE);
    await expect(withdrawal)
      .to.emit(ch, "CycleRiskReleased")
      .withArgs(2n)
      .and.to.emit(ch, "CycleRiskReleased")
      .withArgs(3n);
    expect(await ch.totalRefundOwed(ETH)).to.equal(0n);
    expect(await ch.bondAtRisk(ETH)).to.equal(0n);
  });
});

describe("audit3 releaseSettledRisk: order, bounds, veto, no griefing", () => {
  async function fixture() {
    const f = await suretyFixture();
    await f.clearingHouse.connect(f.admin).setBondFloor(10_000);
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 10n * ONE });
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.vault.connect(f.carol).deposit({ value: 10n * ONE });
    return f;
  }

  it("in cycle order: an open older cycle holds a finalized newer one; maxCycles bounds the work", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await commitPlanned(f, 1n, [await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE)]);
    await commitPlanned(f, 2n, [await signedGuarantee(f, f.carol, f.bob.address, 2n, 2n * ONE)]);
    await commitPlanned(f, 3n, [await signedGuarantee(f, f.carol, f.bob.address, 3n, 3n * ONE)]);
    await ch.connect(f.carol).payNetDebit(2, ETH, { value: 2n * ONE });
    await ch.connect(f.carol).payNetDebit(3, ETH, { value: 3n * ONE });
    expect(await ch.bondAtRisk(ETH)).to.equal(6n * ONE);
    await expect(ch.releaseSettledRisk(8)).to.be.revertedWithCustomError(ch, "NoSettledRisk").withArgs(1n);
    // Finalized before its challenge deadline: released at once (it can no longer draw on the bond).
    await ch.connect(f.alice).payNetDebit(1, ETH, { value: ONE });
    const one = ch.releaseSettledRisk(1);
    await expect(one).to.emit(ch, "CycleRiskReleased").withArgs(1n);
    expect(await ch.bondAtRisk(ETH)).to.equal(5n * ONE);
    expect(await ch.releaseSettledRisk.staticCall(100)).to.equal(2n);
    const two = ch.releaseSettledRisk(100);
    await expect(two).to.emit(ch, "CycleRiskReleased").withArgs(3n);
    const gas = async (tx: typeof one) => (await (await tx).wait())!.gasUsed;
    console.log(
      `      releaseSettledRisk: 1 cycle ${await gas(one)} gas, 2 cycles ${await gas(two)} gas (1 asset)`,
    );
    expect(await ch.bondAtRisk(ETH)).to.equal(0n);
    await expect(ch.releaseSettledRisk(0)).to.be.revertedWithCustomError(ch, "NoSettledRisk").withArgs(4n);
    // The next commit is counted from the new head, and released once settled.
    await commitPlanned(f, 4n, [await signedGuarantee(f, f.alice, f.bob.address, 4n, ONE)]);
    expect(await ch.bondAtRisk(ETH)).to.equal(ONE);
    await ch.connect(f.alice).payNetDebit(4, ETH, { value: ONE });
    await commitPlanned(f, 5n, [await signedGuarantee(f, f.alice, f.bob.address, 5n, 2n * ONE)]);
    // The commit released cycle 4 itself.
    expect(await ch.bondAtRisk(ETH)).to.equal(2n * ONE);
  });

  it("a vetoed cycle is released at once; a late veto attempt changes nothing", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await commitPlanned(f, 1n, [await signedGuarantee(f, f.alice, f.bob.address, 1n, 4n * ONE)]);
    await ch.connect(f.guardian).vetoCycle(1);
    await expect(ch.releaseSettledRisk(8)).to.emit(ch, "CycleRiskReleased").withArgs(1n);
    expect(await ch.bondAtRisk(ETH)).to.equal(0n);
    await expect(ch.connect(f.guardian).vetoCycle(1)).to.be.revertedWithCustomError(ch, "CycleIsVetoed");
    expect(await ch.bondAtRisk(ETH)).to.equal(0n);
  });

  it("a net creditor's open dispute does not hold a finalized cycle: it draws only on the spare bond", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    // alice signs bob 1 ETH; carol and dave sign each other 2 ETH (net zero: no debt).
    const all = [
      await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE),
      await signedGuarantee(f, f.carol, f.dave.address, 2n, 2n * ONE),
      await signedGuarantee(f, f.dave, f.carol.address, 3n, 2n * ONE),
    ];
    await commitPlanned(f, 1n, all);
    await ch.connect(f.alice).payNetDebit(1, ETH, { value: ONE });
    const carols = disputeAnswerOf(all, f.carol.address, 0, { concede: true });
    await ch.revealSummary(1, ETH, f.carol.address, carols.summary, carols.summaryProof);
    await ch.connect(f.carol).disputeGuarantee(1, ETH, 0);
    expect((await ch.getCycle(1)).openChallenges).to.equal(1n);
    // Every debt is paid: nothing of the cycle can draw on the floor's share any more.
    await expect(ch.releaseSettledRisk(8)).to.emit(ch, "CycleRiskReleased").withArgs(1n);
    expect(await ch.bondAtRisk(ETH)).to.equal(0n);
    // Unanswered, carol's position is conceded after the deadlines: a refund held, paid from the spare bond.
    await time.increaseTo((await ch.getCycle(1)).paymentDeadline + 1n);
    await ch.voidUnansweredDebit(1, ETH, f.carol.address);
    await expect(ch.claimDebitRefund(1, ETH, f.carol.address))
      .to.emit(ch, "DebitRefundClaimed")
      .withArgs(1n, ETH, f.carol.address, 2n * ONE, 0n);
    expect(await ch.bondOf(ETH)).to.equal(8n * ONE);
  });

  it("a key revocation holds a disputed cycle's share until its void, then anyone releases it", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await commitPlanned(f, 1n, [await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE)]);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await f.vault.connect(f.admin).revokeOperatorKey();
    const cycle = await ch.getCycle(1);
    const extended = await f.vault.answerDeadlineAfterKeyGap(cycle.answerDeadline);
    // The void waits for the payment deadline moved as far as the answer deadline (audit A2-L1).
    const due = cycle.paymentDeadline + (extended - cycle.answerDeadline);
    await time.increaseTo(due - 1n);
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address)).to.be.revertedWithCustomError(
      ch,
      "PaymentWindowOpen",
    );
    await expect(ch.releaseSettledRisk(8)).to.be.revertedWithCustomError(ch, "NoSettledRisk").withArgs(1n);
    expect(await ch.bondAtRisk(ETH)).to.equal(ONE);
    await ch.voidUnansweredDebit(1, ETH, f.alice.address);
    await expect(ch.releaseSettledRisk(8)).to.emit(ch, "CycleRiskReleased").withArgs(1n);
  });

  it("a voided debit's cycle is released only once its last debt is resolved; gas of one release", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    // carol disputes her position and nobody answers: her debit is voided against the bond.
    const all = [
      await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE),
      await signedGuarantee(f, f.carol, f.bob.address, 2n, ONE),
    ];
    await commitPlanned(f, 1n, all);
    await ch.connect(f.carol).disputeGuarantee(1, ETH, 0);
    const cycle = await ch.getCycle(1);
    await time.increaseTo(cycle.answerDeadline + 1n);
    await ch.voidUnansweredDebit(1, ETH, f.carol.address);
    await expect(ch.releaseSettledRisk(8)).to.be.revertedWithCustomError(ch, "NoSettledRisk").withArgs(1n);
    await ch.connect(f.alice).payNetDebit(1, ETH, { value: ONE });
    const tx = ch.connect(f.outsider).releaseSettledRisk(8);
    await expect(tx).to.emit(ch, "CycleRiskReleased").withArgs(1n);
    console.log(`      releaseSettledRisk, 1 cycle of 1 asset: ${(await (await tx).wait())!.gasUsed} gas`);
    expect(await ch.bondAtRisk(ETH)).to.equal(0n);
  });
});
