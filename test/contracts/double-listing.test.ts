/**
 * Issue 17, guarantee reuse across cycles: the operator lists one signed guarantee in cycle 1 (the payer
 * accepts and pays without disputing) and again in cycle 2, where the same signature answers a dispute.
 * `proveDoubleListing` turns the operator's two commits into a refund of the duplicate from the operator
 * bond. Also: one id listed twice in one debtor's tree answers one position only.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { expect } from "chai";
import { ZeroHash, id as hashText, parseEther } from "ethers";
import { ethers } from "hardhat";

import { guaranteeLeafOf } from "../../operator/clearing/commit-plan";
import {
  GUARANTEE_LEAF_ENCODING,
  guaranteeLeafHash,
  guaranteeProof,
  toGuaranteeLeafValues,
  type GuaranteeLeaf,
} from "../../sdk";
import { SummariesTree, sumTreeLevels, summaryStruct } from "../../sdk/debit-tree";
import {
  ETH,
  TIMINGS,
  buildCycle,
  disputeAnswerOf,
  positionOf,
  signClaims,
  planCycle,
  signedGuarantee,
  suretyFixture,
  transfer,
  creditProofOf,
} from "./helpers";

const ONE = parseEther("1");
const W = TIMINGS.challengeWindow;

type Plan = ReturnType<typeof planCycle>;

describe("Double listing of a guarantee across cycles (issue 17)", () => {
  /**
   * alice signed 3 ETH to bob (toBob) and 1 ETH to carol; bob signed 1 ETH to alice. Cycle 1 nets them;
   * alice pays her 3 ETH without challenging. The operator then lists toBob again in cycle 2.
   */
  async function attack(bond: bigint) {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: bond });
    const toBob = await signedGuarantee(f, f.alice, f.bob.address, 1n, 3n * ONE);
    const toCarol = await signedGuarantee(f, f.alice, f.carol.address, 2n, ONE);
    const fromBob = await signedGuarantee(f, f.bob, f.alice.address, 3n, ONE);
    const self = await signedGuarantee(f, f.alice, f.alice.address, 4n, ONE);
    const commit = async (plan: Plan) =>
      f.clearingHouse
        .connect(f.operator)
        .commitCycle(
          plan.args.cycleId,
          { root: plan.root, guaranteesRoot: plan.args.guaranteesRoot, debitsRoot: plan.args.debitsRoot },
          plan.args.totals,
          plan.args.debtors,
          [],
        );
    const c1 = planCycle(1n, [toBob, toCarol, fromBob, self]);
    await commit(c1);
    await f.clearingHouse.connect(f.alice).payNetDebit(1, ETH, { value: 3n * ONE });
    const c2 = planCycle(2n, [toBob, self]); // the duplicate (and a self-payment, also listed twice)
    await commit(c2);
    const leaf = guaranteeLeafOf(toBob.payable);
    const listing = (plan: Plan, l: GuaranteeLeaf = leaf) => guaranteeProof(plan.guaranteeTree, l);
    const prove = (
      first: bigint,
      later: bigint,
      a: GuaranteeLeaf = leaf,
      b: GuaranteeLeaf = leaf,
      pa: string[] = listing(c1, a),
      pb: string[] = listing(c2, b),
    ) => f.clearingHouse.connect(f.outsider).proveDoubleListing(first, later, a, b, pa, pb);
    return { ...f, toBob, toCarol, fromBob, self, c1, c2, leaf, listing, prove, commit };
  }
  const attackFixture = () => attack(10n * ONE);
  const smallBondFixture = () => attack(ONE);

  it("the attack: the duplicate still answers a challenge, but its proof refunds the payer from the bond", async () => {
    const f = await loadFixture(attackFixture);
    const ch = f.clearingHouse;
    // The hole: toBob never answered in cycle 1, so it answers alice's dispute in cycle 2.
    const c2 = [f.toBob, f.self];
    const p = positionOf(c2, f.toBob);
    await ch.connect(f.alice).disputeGuarantee(2, ETH, p);
    await expect(ch.answerDispute(2, ETH, f.alice.address, p, disputeAnswerOf(c2, f.alice.address, p)))
      .to.emit(ch, "DisputeResolved")
      .withArgs(2n, ETH, f.alice.address, p, 2n, f.toBob.payable.guaranteeId, 3n * ONE); // Upheld
    // Cycle 1's window has closed, cycle 2's not yet: a veto could still undo it.
    await time.increaseTo((await ch.getCycle(1)).challengeDeadline + 1n);
    await expect(f.prove(1n, 2n))
      .to.be.revertedWithCustomError(ch, "ChallengeWindowOpen")
      .withArgs(2n, (await ch.getCycle(2)).challengeDeadline);
    await time.increase(W + 1);
    await ch.connect(f.alice).payNetDebit(2, ETH, { value: 3n * ONE }); // charged a second time...
    const tx = f.prove(1n, 2n);
    await expect(tx)
      .to.emit(ch, "DoubleListingProven")
      .withArgs(f.toBob.payable.guaranteeId, f.alice.address, ETH, 1n, 2n, 3n * ONE)
      .and.to.emit(ch, "DoubleListingRefunded")
      .withArgs(ETH, f.alice.address, 3n * ONE, 0n);
    // Pull payment: the proof sends nothing, it sets the refund aside from the bond for alice...
    await expect(tx).to.changeEtherBalances([f.alice, ch], [0n, 0n]);
    expect(await ch.bondOf(ETH)).to.equal(7n * ONE);
    expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(3n * ONE);
    // ...who pulls it (only she can, to the address she names).
    await expect(ch.connect(f.outsider).withdrawPayout(ETH, f.outsider.address))
      .to.be.revertedWithCustomError(ch, "NoPayout")
      .withArgs(ETH, f.outsider.address);
    const pull = ch.connect(f.alice).withdrawPayout(ETH, f.alice.address);
    await expect(pull)
      .to.emit(ch, "PayoutWithdrawn")
      .withArgs(ETH, f.alice.address, f.alice.address, 3n * ONE);
    await expect(pull).to.changeEtherBalances([f.alice, ch], [3n * ONE, -3n * ONE]);
    expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(0n);
    expect(await ch.doubleListingProven(f.toBob.payable.guaranteeId, 2)).to.equal(true);
    // Cycle 2's creditors are untouched: bob claims his 3 ETH (paid by alice), the refund came from the bond.
    const bob = creditProofOf(f.c2, f.bob.address);
    await expect(ch.claimNetCredit(2, ETH, f.bob.address, bob.summary, bob.proof)).to.emit(
      ch,
      "NetCreditClaimed",
    );
    // Replaying the proof pays nothing twice.
    await expect(f.prove(1n, 2n))
      .to.be.revertedWithCustomError(ch, "DoubleListingAlreadyProven")
      .withArgs(f.toBob.payable.guaranteeId, 2n);
  });

  it("each later listing is remedied once: three listings, two refunds", async () => {
    const f = await loadFixture(attackFixture);
    const c3 = planCycle(3n, [f.toBob]);
    await f.commit(c3);
    await time.increase(W + 1);
    const ch = f.clearingHouse;
    const p = (plan: Plan) => f.listing(plan);
    await expect(ch.proveDoubleListing(1, 3, f.leaf, f.leaf, p(f.c1), p(c3)))
      .to.emit(ch, "DoubleListingProven")
      .withArgs(f.toBob.payable.guaranteeId, f.alice.address, ETH, 1n, 3n, 3n * ONE);
    await expect(ch.proveDoubleListing(2, 3, f.leaf, f.leaf, p(f.c2), p(c3)))
      .to.be.revertedWithCustomError(ch, "DoubleListingAlreadyProven")
      .withArgs(f.toBob.payable.guaranteeId, 3n);
    await expect(ch.proveDoubleListing(1, 2, f.leaf, f.leaf, p(f.c1), p(f.c2))).to.emit(
      ch,
      "DoubleListingProven",
    );
    expect(await ch.bondOf(ETH)).to.equal(4n * ONE);
  });

  it("a variant listing (other signature hash, other amount) is the same guarantee: the smaller amount is refunded", async () => {
    const f = await loadFixture(attackFixture);
    // Cycle 3 lists toBob with a signature hash that proves nothing and a larger amount.
    const variant: GuaranteeLeaf = { ...f.leaf, amount: 5n * ONE, signatureHash: hashText("garbage") };
    const tree = StandardMerkleTree.of([toGuaranteeLeafValues(variant)], [...GUARANTEE_LEAF_ENCODING]);
    const c3 = buildCycle(3, transfer(ETH, f.alice.address, f.bob.address, 5n * ONE));
    await f.clearingHouse.connect(f.operator).commitCycle(
      3,
      {
        root: c3.root,
        guaranteesRoot: tree.root,
        debitsRoot: c3.debitsRoot,
      },
      c3.totals,
      c3.debtors,
      [],
    );
    await time.increase(W + 1);
    await expect(f.clearingHouse.proveDoubleListing(1, 3, f.leaf, variant, f.listing(f.c1), tree.getProof(0)))
      .to.emit(f.clearingHouse, "DoubleListingProven")
      .withArgs(f.toBob.payable.guaranteeId, f.alice.address, ETH, 1n, 3n, 3n * ONE);
  });

  it("refuses proofs that show no double charge", async () => {
    const f = await loadFixture(attackFixture);
    const ch = f.clearingHouse;
    await time.increase(W + 1);
    await expect(f.prove(2n, 1n)).to.be.revertedWithCustomError(ch, "ListingsNotOrdered").withArgs(2n, 1n);
    await expect(f.prove(1n, 1n, f.leaf, f.leaf, f.listing(f.c1), f.listing(f.c1)))
      .to.be.revertedWithCustomError(ch, "ListingsNotOrdered")
      .withArgs(1n, 1n);
    await expect(f.prove(1n, 3n)).to.be.revertedWithCustomError(ch, "UnknownCycle").withArgs(3n);
    // A leaf of another payer (bob's guarantee to alice), and the same id claimed in another asset.
    const bobs = guaranteeLeafOf(f.fromBob.payable);
    await expect(f.prove(1n, 2n, bobs, f.leaf, f.listing(f.c1, bobs)))
      .to.be.revertedWithCustomError(ch, "ListingsDiffer")
      .withArgs(f.fromBob.payable.guaranteeId, f.toBob.payable.guaranteeId);
    const otherPayer = { ...f.leaf, payer: f.bob.address };
    await expect(f.prove(1n, 2n, otherPayer, f.leaf, [], []))
      .to.be.revertedWithCustomError(ch, "ListingsDiffer")
      .withArgs(f.toBob.payable.guaranteeId, f.toBob.payable.guaranteeId);
    const otherAsset = { ...f.leaf, asset: f.usdAddress };
    await expect(f.prove(1n, 2n, f.leaf, otherAsset, [], [])).to.be.revertedWithCustomError(
      ch,
      "ListingsDiffer",
    );
    // A self-payment listed twice charges nobody.
    const self = guaranteeLeafOf(f.self.payable);
    await expect(f.prove(1n, 2n, self, self, f.listing(f.c1, self), f.listing(f.c2, self)))
      .to.be.revertedWithCustomError(ch, "UnchargedListing")
      .withArgs(f.self.payable.guaranteeId);
    await expect(f.prove(1n, 2n, { ...f.leaf, amount: 0n }, f.leaf, [], []))
      .to.be.revertedWithCustomError(ch, "UnchargedListing")
      .withArgs(f.toBob.payable.guaranteeId);
    // A leaf not in the cycle's root (another guarantee's proof, or a leaf the root does not hold).
    const carol = guaranteeLeafOf(f.toCarol.payable);
    await expect(f.prove(1n, 2n, carol, carol, f.listing(f.c1, carol), f.listing(f.c2, self)))
      .to.be.revertedWithCustomError(ch, "ListingNotInCycle")
      .withArgs(f.toCarol.payable.guaranteeId, 2n);
    await expect(f.prove(1n, 2n, f.leaf, f.leaf, f.listing(f.c1), f.listing(f.c1)))
      .to.be.revertedWithCustomError(ch, "ListingNotInCycle")
      .withArgs(f.toBob.payable.guaranteeId, 2n);
    // Too late: the later cycle's doubleListingDeadline has passed.
    const { doubleListingDeadline } = await ch.getCycle(2);
    await time.increaseTo(doubleListingDeadline + 1n);
    await expect(f.prove(1n, 2n))
      .to.be.revertedWithCustomError(ch, "DoubleListingProofClosed")
      .withArgs(2n, doubleListingDeadline);
  });

  it("a vetoed cycle proves nothing: the honest re-commit of a vetoed cycle lists its guarantees again", async () => {
    const f = await loadFixture(suretyFixture);
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 10n * ONE });
    const toBob = await signedGuarantee(f, f.alice, f.bob.address, 1n, 3n * ONE);
    const c1 = planCycle(1n, [toBob]);
    const c2 = planCycle(2n, [toBob]);
    const ch = f.clearingHouse.connect(f.operator);
    await ch.commitCycle(
      1,
      { root: c1.root, guaranteesRoot: c1.args.guaranteesRoot, debitsRoot: c1.args.debitsRoot },
      c1.args.totals,
      c1.args.debtors,
      [],
    );
    await f.clearingHouse.connect(f.guardian).vetoCycle(1);
    await ch.commitCycle(
      2,
      { root: c2.root, guaranteesRoot: c2.args.guaranteesRoot, debitsRoot: c2.args.debitsRoot },
      c2.args.totals,
      c2.args.debtors,
      [],
    );
    await time.increase(W + 1);
    const leaf = guaranteeLeafOf(toBob.payable);
    await expect(
      f.clearingHouse.proveDoubleListing(
        1,
        2,
        leaf,
        leaf,
        guaranteeProof(c1.guaranteeTree, leaf),
        guaranteeProof(c2.guaranteeTree, leaf),
      ),
    )
      .to.be.revertedWithCustomError(f.clearingHouse, "CycleIsVetoed")
      .withArgs(1n);
    // The re-commit settles as before.
    await f.clearingHouse.connect(f.alice).payNetDebit(2, ETH, { value: 3n * ONE });
    expect((await f.clearingHouse.getCycle(2)).finalized).to.equal(true);
  });

  it("bond too small: the payer gets what the bond holds now, the rest is owed before any withdrawal", async () => {
    const f = await loadFixture(smallBondFixture);
    const ch = f.clearingHouse;
    await time.increase(W + 1);
    const tx = f.prove(1n, 2n);
    await expect(tx)
      .to.emit(ch, "DoubleListingRefunded")
      .withArgs(ETH, f.alice.address, ONE, 2n * ONE);
    expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(ONE);
    expect(await ch.refundOwed(ETH, f.alice.address)).to.equal(2n * ONE);
    expect(await ch.totalRefundOwed(ETH)).to.equal(2n * ONE);
    await expect(ch.claimOwedRefund(ETH, f.alice.address))
      .to.be.revertedWithCustomError(ch, "NoRefundPayable")
      .withArgs(ETH, f.alice.address, 2n * ONE, 0n);
    await expect(ch.claimOwedRefund(ETH, f.bob.address))
      .to.be.revertedWithCustomError(ch, "NoRefundPayable")
      .withArgs(ETH, f.bob.address, 0n, 0n);
    const { doubleListingDeadline } = await ch.getCycle(2);
    await expect(ch.connect(f.admin).withdrawBond(ETH, ONE, f.admin.address))
      .to.be.revertedWithCustomError(ch, "BondInUse")
      .withArgs(0n, doubleListingDeadline);
    await time.increaseTo(doubleListingDeadline + 1n);
    await ch.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await expect(ch.connect(f.admin).withdrawBond(ETH, ONE, f.admin.address))
      .to.be.revertedWithCustomError(ch, "RefundsOwed")
      .withArgs(ETH, 2n * ONE);
    // The owed refund survives the proof deadline; anyone secures it from the bond (nothing is sent)...
    const claim = ch.connect(f.outsider).claimOwedRefund(ETH, f.alice.address);
    await expect(claim)
      .to.emit(ch, "OwedRefundPaid")
      .withArgs(ETH, f.alice.address, 2n * ONE, 0n);
    await expect(claim).to.changeEtherBalance(f.alice, 0n);
    expect(await ch.totalRefundOwed(ETH)).to.equal(0n);
    // ...and the payer pulls all of it, here to another address of hers.
    const pull = ch.connect(f.alice).withdrawPayout(ETH, f.carol.address);
    await expect(pull)
      .to.emit(ch, "PayoutWithdrawn")
      .withArgs(ETH, f.alice.address, f.carol.address, 3n * ONE);
    await expect(pull).to.changeEtherBalances([f.carol, ch], [3n * ONE, -3n * ONE]);
    await expect(ch.connect(f.alice).withdrawPayout(ETH, ethers.ZeroAddress))
      .to.be.revertedWithCustomError(ch, "InvalidRecipient")
      .withArgs(ethers.ZeroAddress);
    await expect(ch.connect(f.admin).withdrawBond(ETH, 3n * ONE, f.admin.address))
      .to.emit(ch, "BondWithdrawn")
      .withArgs(ETH, f.admin.address, 3n * ONE, 0n);
  });

  it("withdrawPayout takes what a topped-up bond can cover of the owed part, in the same call", async () => {
    const f = await loadFixture(smallBondFixture);
    const ch = f.clearingHouse;
    await time.increase(W + 1);
    await f.prove(1n, 2n); // 1 ETH set aside, 2 ETH owed
    await ch.connect(f.admin).postBond(ETH, 0, { value: ONE });
    const pull = ch.connect(f.alice).withdrawPayout(ETH, f.alice.address);
    await expect(pull)
      .to.emit(ch, "OwedRefundPaid")
      .withArgs(ETH, f.alice.address, ONE, ONE)
      .and.to.emit(ch, "PayoutWithdrawn")
      .withArgs(ETH, f.alice.address, f.alice.address, 2n * ONE);
    await expect(pull).to.changeEtherBalance(f.alice, 2n * ONE);
    expect(await ch.refundOwed(ETH, f.alice.address)).to.equal(ONE);
    await expect(ch.connect(f.alice).withdrawPayout(ETH, f.alice.address))
      .to.be.revertedWithCustomError(ch, "NoPayout")
      .withArgs(ETH, f.alice.address);
  });

  it("the proof never sends to the payer; the pull goes to the named address and cannot be re-entered", async () => {
    const f = await loadFixture(attackFixture);
    const ch = f.clearingHouse;
    await time.increase(W + 1);
    // The proof transfers nothing (first test), so a payer wallet that rejects ETH cannot make it revert; the
    // payer pulls to an address it names. That address re-enters withdrawPayout on receipt: refused.
    const Receiver = await ethers.getContractFactory("ReentrantReceiver");
    const wallet = await Receiver.deploy();
    const reenter = ch.interface.encodeFunctionData("withdrawPayout", [ETH, await wallet.getAddress()]);
    await wallet.arm(await ch.getAddress(), reenter);
    await expect(f.prove(1n, 2n)).to.emit(ch, "DoubleListingRefunded");
    await expect(ch.connect(f.alice).withdrawPayout(ETH, await wallet.getAddress())).to.changeEtherBalance(
      wallet,
      3n * ONE,
    );
    expect(await wallet.reentrySucceeded()).to.equal(false);
  });

  it("one id listed twice in one debtor's tree is proven once; the copy is conceded", async () => {
    const f = await loadFixture(suretyFixture);
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    const toBob = await signedGuarantee(f, f.alice, f.bob.address, 1n, 3n * ONE);
    const values = toGuaranteeLeafValues(guaranteeLeafOf(toBob.payable));
    const leafHash = guaranteeLeafHash(guaranteeLeafOf(toBob.payable));
    // A dishonest tree with the same leaf at two positions; the debit counts it twice (6 ETH).
    const tree = StandardMerkleTree.of([values, values], [...GUARANTEE_LEAF_ENCODING]);
    const levels = sumTreeLevels([
      { hash: leafHash, sum: 3n * ONE },
      { hash: leafHash, sum: 3n * ONE },
    ]);
    const none = { inRoot: ZeroHash, inTotal: 0n, inDepth: 0 };
    const summary = {
      debtor: f.alice.address,
      asset: ETH,
      sumRoot: levels[1][0].hash,
      total: 6n * ONE,
      depth: 1,
      ...none,
    };
    // bob's incoming tree lists it twice too (what his credit is made of).
    const bobs = {
      debtor: f.bob.address,
      asset: ETH,
      sumRoot: ZeroHash,
      total: 0n,
      depth: 0,
      inRoot: levels[1][0].hash,
      inTotal: 6n * ONE,
      inDepth: 1,
    };
    const debits = new SummariesTree([summary, bobs]);
    const c1 = buildCycle(1, transfer(ETH, f.alice.address, f.bob.address, 6n * ONE));
    const ch = f.clearingHouse;
    await ch
      .connect(f.operator)
      .commitCycle(
        1,
        { root: c1.root, guaranteesRoot: tree.root, debitsRoot: debits.root },
        c1.totals,
        c1.debtors,
        [],
      );
    const answer = (position: number, concede = false) => ({
      summary: summaryStruct(summary),
      summaryProof: debits.proof(summary),
      leaf: levels[0][position],
      path: [levels[0][1 - position]],
      claims: concede ? "0x" : toBob.claims,
      certificate: signClaims(toBob.claims),
      scheme: 0,
      signature: concede ? "0x" : toBob.signature,
      finalization: "0x",
      credit: {
        summary: summaryStruct(bobs),
        summaryProof: debits.proof(bobs),
        index: BigInt(position),
        path: [levels[0][1 - position]],
      },
    });
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 1);
    await ch.answerDispute(1, ETH, f.alice.address, 0, answer(0));
    await expect(ch.answerDispute(1, ETH, f.alice.address, 1, answer(1)))
      .to.be.revertedWithCustomError(ch, "GuaranteeAlreadyUsed")
      .withArgs(toBob.payable.guaranteeId, 1n);
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.alice.address, 1, answer(1, true)))
      .to.emit(ch, "DebitReduced")
      .withArgs(1n, ETH, f.alice.address, 3n * ONE, 3n * ONE, 0n);
    expect((await ch.debtOf(1, ETH, f.alice.address)).amount).to.equal(3n * ONE);
  });
});
