/**
 * What the randomized model of the clearing game (game-model.test.ts) found, each reduced to a deterministic
 * scenario (docs/clearing.md "Randomized model"). All three are fixed; each test shows the attack failing
 * and the honest path working.
 *  1. (Fixed: the veto returns it, `VetoedBondReturned`.) Bond money paid into a cycle by a concession stayed
 *     in `heldLiquidity` for good once the guardian vetoed the cycle.
 *  2. (Fixed, issue 25 item 5: every account has a summary and disputes its outgoing tree.) A participant
 *     that stays a net creditor could not dispute a fabricated outgoing guarantee (`NoDebt`): its credit was
 *     lowered and the fabricated creditor paid.
 *  3. (Fixed: `revealSummary` + `voidUnansweredDebit` concede every unanswered position.) A debtor whose
 *     disputed fabricated guarantee exceeded its debit lost its incoming payments the fabrication offset
 *     when the operator withheld its tree, while a concession refunded the excess from the bond.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { getAddress, keccak256, parseEther } from "ethers";

import { guaranteeLeafOf } from "../../operator/clearing/commit-plan";
import type { GuaranteeLeaf } from "../../sdk/guarantee-tree";
import { SIGNING_SCHEME_CODES } from "../../sdk/eip712";
import { ETH, PAYMENT_DELAY, TIMINGS, signClaims, signedGuarantee, suretyFixture } from "./helpers";
import { answerOf, buildCycleOf, key } from "./model/cycles";

const ONE = parseEther("1");
const W = TIMINGS.challengeWindow;

type Fixture = Awaited<ReturnType<typeof suretyFixture>>;

/** A leaf the payer never signed (the operator made it up). */
function fabricated(payer: string, recipient: string, amount: bigint): GuaranteeLeaf {
  return {
    guaranteeId: keccak256(ethers.toUtf8Bytes(`fabricated ${payer} ${amount}`)),
    payer,
    recipient,
    asset: ETH,
    amount,
    signatureHash: keccak256("0x01"),
  };
}

async function commitLeaves(f: Fixture, leaves: GuaranteeLeaf[]) {
  const cycle = buildCycleOf(1n, leaves);
  await f.clearingHouse
    .connect(f.operator)
    .commitCycle(
      1,
      { root: cycle.root, guaranteesRoot: cycle.guaranteesRoot, debitsRoot: cycle.debitsRoot },
      cycle.totals,
      cycle.debtors,
      [],
    );
  return cycle;
}

describe("Found by the randomized model of the clearing game", () => {
  /** bob signed 3 ETH to alice; the operator adds alice → mallory (outsider) for `fake` ETH. */
  async function fabricatedFixture(fake: bigint) {
    const f = await suretyFixture();
    for (const who of [f.alice, f.bob]) await f.vault.connect(who).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 10n * ONE });
    const real = await signedGuarantee(f, f.bob, f.alice.address, 1n, 3n * ONE);
    const fake_ = fabricated(f.alice.address, f.outsider.address, fake);
    const cycle = await commitLeaves(f, [guaranteeLeafOf(real.payable), fake_]);
    return { ...f, cycle };
  }

  /** alice stays a net creditor: 3 ETH in, 2 fabricated out. */
  async function creditorFixture() {
    return fabricatedFixture(2n * ONE);
  }

  it("1. a concession's bond money returns to the bond when the guardian vetoes the cycle", async () => {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    const toBob = await signedGuarantee(f, f.alice, f.bob.address, 1n, 3n * ONE);
    const toCarol = await signedGuarantee(f, f.alice, f.carol.address, 2n, ONE);
    const cycle = await commitLeaves(f, [guaranteeLeafOf(toBob.payable), guaranteeLeafOf(toCarol.payable)]);
    const tree = cycle.trees.get(key(f.alice.address, ETH))!;
    const p = tree.leaves.findIndex((l) => l.recipient === f.carol.address);
    // alice disputes one position, the operator concedes it (1 ETH from the bond into the cycle), she pays
    // the rest, then the guardian vetoes the cycle.
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, p);
    await f.clearingHouse
      .connect(f.operator)
      .answerDispute(1, ETH, f.alice.address, p, answerOf(cycle, tree, p));
    await f.clearingHouse.connect(f.alice).payNetDebit(1, ETH, { value: 3n * ONE });
    await f.clearingHouse.connect(f.guardian).vetoCycle(1);
    await f.clearingHouse.releaseVetoedDebt(1, ETH, f.alice.address); // her 3 ETH, refunded
    expect(await f.clearingHouse.payoutOf(ETH, f.alice.address)).to.equal(3n * ONE);
    await time.increase(PAYMENT_DELAY + TIMINGS.withdrawalGracePeriod);
    await expect(
      f.clearingHouse.claimNetCredit(
        1,
        ETH,
        f.bob.address,
        cycle.creditProof(ETH, f.bob.address).summary,
        cycle.creditProof(ETH, f.bob.address).proof,
      ),
    ).to.be.revertedWithCustomError(f.clearingHouse, "CycleIsVetoed");
    // Fixed: the veto returned the conceded 1 ETH to the bond (VetoedBondReturned); nothing is stranded.
    expect(await f.clearingHouse.heldLiquidity(ETH)).to.equal(0n);
    expect(await f.clearingHouse.bondOf(ETH)).to.equal(5n * ONE);
    expect((await f.clearingHouse.getCycleAsset(1, ETH)).funded).to.equal(0n);
  });

  it("2. a net creditor disputes a fabricated outgoing guarantee: conceded, the bond makes its credit whole", async () => {
    const f = await loadFixture(creditorFixture);
    // alice's net position is +1 ETH (3 in, 2 fabricated out): no debt, yet once her summary is revealed
    // she disputes her outgoing tree (an account with nothing in the cycle cannot: NoDebt).
    const tree = f.cycle.trees.get(key(f.alice.address, ETH))!;
    await expect(f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0))
      .to.be.revertedWithCustomError(f.clearingHouse, "NoDebt")
      .withArgs(1n, ETH, f.alice.address);
    const mine = f.cycle.creditProof(ETH, f.alice.address);
    await f.clearingHouse.connect(f.alice).revealSummary(1, ETH, f.alice.address, mine.summary, mine.proof);
    await expect(f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0))
      .to.emit(f.clearingHouse, "GuaranteeDisputed")
      .withArgs(1n, ETH, f.alice.address, 0n);
    expect((await f.clearingHouse.debtOf(1, ETH, f.alice.address)).status).to.equal(0n); // still no debt
    await f.clearingHouse.connect(f.bob).payNetDebit(1, ETH, { value: 3n * ONE });
    await time.increase(W);
    // Claims wait for the open dispute.
    const alice = f.cycle.creditProof(ETH, f.alice.address);
    await expect(
      f.clearingHouse.claimNetCredit(1, ETH, f.alice.address, alice.summary, alice.proof),
    ).to.be.revertedWithCustomError(f.clearingHouse, "DisputesOpen");
    // Nobody can prove a signature alice never gave: the operator concedes; the bond pays her the 2 ETH.
    await expect(
      f.clearingHouse
        .connect(f.operator)
        .answerDispute(1, ETH, f.alice.address, 0, answerOf(f.cycle, tree, 0)),
    )
      .to.emit(f.clearingHouse, "DebitReduced")
      .withArgs(1n, ETH, f.alice.address, 0n, 0n, 2n * ONE);
    for (const who of [f.alice.address, f.outsider.address]) {
      const c = f.cycle.creditProof(ETH, who);
      await f.clearingHouse.claimNetCredit(1, ETH, who, c.summary, c.proof);
    }
    // The conceded 2 ETH is held in the cycle like any refund above a debit (audit M-3): a veto would return
    // it to the bond; past the challenge deadline it is hers.
    expect(await f.clearingHouse.refundHeldOf(1, ETH, f.alice.address)).to.equal(2n * ONE);
    await f.clearingHouse.claimDebitRefund(1, ETH, f.alice.address);
    // Fixed: alice gets the 3 ETH bob paid her (1 claimed + 2 from the bond); the bond pays the fabrication.
    expect(await f.clearingHouse.payoutOf(ETH, f.alice.address)).to.equal(3n * ONE);
    expect(await f.clearingHouse.payoutOf(ETH, f.outsider.address)).to.equal(2n * ONE);
    expect(await f.clearingHouse.bondOf(ETH)).to.equal(8n * ONE);
  });

  it("2. honest path: a net creditor's real outgoing guarantee is upheld and its credit stands", async () => {
    const f = await suretyFixture();
    for (const who of [f.alice, f.bob]) await f.vault.connect(who).deposit({ value: 10n * ONE });
    const toAlice = await signedGuarantee(f, f.bob, f.alice.address, 1n, 3n * ONE);
    const toCarol = await signedGuarantee(f, f.alice, f.carol.address, 2n, ONE);
    const cycle = await commitLeaves(f, [guaranteeLeafOf(toAlice.payable), guaranteeLeafOf(toCarol.payable)]);
    const tree = cycle.trees.get(key(f.alice.address, ETH))!;
    const mine = cycle.creditProof(ETH, f.alice.address);
    await f.clearingHouse.revealSummary(1, ETH, f.alice.address, mine.summary, mine.proof);
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    const evidence = {
      claims: toCarol.claims,
      certificate: signClaims(toCarol.claims),
      scheme: SIGNING_SCHEME_CODES[toCarol.scheme],
      signature: toCarol.signature,
    };
    await expect(
      f.clearingHouse.answerDispute(1, ETH, f.alice.address, 0, answerOf(cycle, tree, 0, evidence)),
    )
      .to.emit(f.clearingHouse, "DisputeResolved")
      .withArgs(1n, ETH, f.alice.address, 0n, 2n, toCarol.payable.guaranteeId, ONE);
    await f.clearingHouse.connect(f.bob).payNetDebit(1, ETH, { value: 3n * ONE });
    await time.increase(W);
    const c = cycle.creditProof(ETH, f.alice.address);
    await expect(f.clearingHouse.claimNetCredit(1, ETH, f.alice.address, c.summary, c.proof))
      .to.emit(f.clearingHouse, "NetCreditClaimed")
      .withArgs(1n, ETH, f.alice.address, 2n * ONE);
  });

  it("revealSummary: only the account's own summary, once, while its debt is unresolved", async () => {
    const f = await loadFixture(creditorFixture);
    const mine = f.cycle.creditProof(ETH, f.alice.address);
    const bobs = f.cycle.creditProof(ETH, f.bob.address);
    await expect(f.clearingHouse.revealSummary(1, ETH, f.alice.address, bobs.summary, bobs.proof))
      .to.be.revertedWithCustomError(f.clearingHouse, "InvalidDebitSummary")
      .withArgs(1n, ETH, f.alice.address);
    await f.clearingHouse.revealSummary(1, ETH, f.alice.address, mine.summary, mine.proof);
    await expect(f.clearingHouse.revealSummary(1, ETH, f.alice.address, mine.summary, mine.proof))
      .to.be.revertedWithCustomError(f.clearingHouse, "SummaryNotRevealable")
      .withArgs(1n, ETH, f.alice.address);
    // bob pays: his summary can no longer be revealed (nothing left to cut or refund).
    await f.clearingHouse.connect(f.bob).payNetDebit(1, ETH, { value: 3n * ONE });
    await expect(f.clearingHouse.revealSummary(1, ETH, f.bob.address, bobs.summary, bobs.proof))
      .to.be.revertedWithCustomError(f.clearingHouse, "SummaryNotRevealable")
      .withArgs(1n, ETH, f.bob.address);
    // An account with nothing in the cycle cannot open a dispute (its claims hold-up would be free).
    await expect(f.clearingHouse.connect(f.carol).disputeGuarantee(1, ETH, 0))
      .to.be.revertedWithCustomError(f.clearingHouse, "NoDebt")
      .withArgs(1n, ETH, f.carol.address);
  });

  describe("3. a fabricated guarantee above the debit, disputed", () => {
    /** alice: 3 ETH in, 5 fabricated out: a 2 ETH debit, which she disputes. */
    async function disputed() {
      const f = await fabricatedFixture(5n * ONE);
      const tree = f.cycle.trees.get(key(f.alice.address, ETH))!;
      await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
      await f.clearingHouse.connect(f.bob).payNetDebit(1, ETH, { value: 3n * ONE });
      return { ...f, tree };
    }

    it("conceded: the excess over the debit is held, then refunded to the debtor (she is whole)", async () => {
      const f = await loadFixture(disputed);
      await expect(
        f.clearingHouse
          .connect(f.operator)
          .answerDispute(1, ETH, f.alice.address, 0, answerOf(f.cycle, f.tree, 0)),
      )
        .to.emit(f.clearingHouse, "DebitReduced")
        .withArgs(1n, ETH, f.alice.address, 2n * ONE, 2n * ONE, 3n * ONE);
      // Held in the cycle until the challenge deadline (audit M-3), then set aside for her.
      expect(await f.clearingHouse.refundHeldOf(1, ETH, f.alice.address)).to.equal(3n * ONE);
      await time.increase(W + 1);
      await f.clearingHouse.claimDebitRefund(1, ETH, f.alice.address);
      expect(await f.clearingHouse.payoutOf(ETH, f.alice.address)).to.equal(3n * ONE);
    });

    it("left unanswered: her revealed summary makes the void concede everything unanswered (she is whole)", async () => {
      const f = await loadFixture(disputed);
      // Nobody proves the open position by the payment deadline (audit M-1: before it, only proven amounts).
      await time.increase(2 * W + TIMINGS.paymentWindow + 1);
      const mine = f.cycle.creditProof(ETH, f.alice.address);
      await expect(f.clearingHouse.revealSummary(1, ETH, f.alice.address, mine.summary, mine.proof))
        .to.emit(f.clearingHouse, "DebitSummaryRevealed")
        .withArgs(1n, ETH, f.alice.address, f.tree.summary.sumRoot, 5n * ONE, 0n);
      await expect(f.clearingHouse.voidUnansweredDebit(1, ETH, f.alice.address))
        .to.emit(f.clearingHouse, "DebitReduced")
        .withArgs(1n, ETH, f.alice.address, 2n * ONE, 2n * ONE, 3n * ONE)
        .and.to.emit(f.clearingHouse, "DebitVoided")
        .withArgs(1n, ETH, getAddress(f.alice.address), 0n, 0n);
      // Fixed: withholding the tree costs the operator what conceding would have (the refund held like a
      // conceded one's, audit M-3).
      expect(await f.clearingHouse.refundHeldOf(1, ETH, f.alice.address)).to.equal(3n * ONE);
      await f.clearingHouse.claimDebitRefund(1, ETH, f.alice.address);
      expect(await f.clearingHouse.payoutOf(ETH, f.alice.address)).to.equal(3n * ONE);
      const mallory = f.outsider.address;
      const c = f.cycle.creditProof(ETH, mallory);
      await f.clearingHouse.claimNetCredit(1, ETH, mallory, c.summary, c.proof);
      expect(await f.clearingHouse.payoutOf(ETH, mallory)).to.equal(5n * ONE);
      expect(await f.clearingHouse.bondOf(ETH)).to.equal(5n * ONE); // 2 funded the cycle, 3 refunded
    });

    it("left unanswered, no summary revealed: only the debit is voided (the summary is the debtor's proof)", async () => {
      const f = await loadFixture(disputed);
      await time.increase(2 * W + 1);
      await expect(f.clearingHouse.voidUnansweredDebit(1, ETH, f.alice.address))
        .to.emit(f.clearingHouse, "DebitVoided")
        .withArgs(1n, ETH, getAddress(f.alice.address), 2n * ONE, 2n * ONE);
      const mine = f.cycle.creditProof(ETH, f.alice.address);
      await expect(
        f.clearingHouse.revealSummary(1, ETH, f.alice.address, mine.summary, mine.proof),
      ).to.be.revertedWithCustomError(f.clearingHouse, "SummaryNotRevealable");
    });
  });
});
