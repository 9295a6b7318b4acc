/**
 * What the randomized model of the clearing game (game-model.test.ts) found, each reduced to a deterministic
 * scenario (docs/clearing.md "Randomized model"). These tests pin today's behaviour: each states what goes
 * wrong, and its assertions marked "today" flip when the contracts are fixed (1 is fixed).
 *  1. (Fixed: the veto returns it, `VetoedBondReturned`.) Bond money paid into a cycle by a concession stayed
 *     in `heldLiquidity` for good once the guardian vetoed the cycle.
 *  2. A participant that stays a net creditor cannot dispute a fabricated outgoing guarantee (`NoDebt`): its
 *     credit is lowered and the fabricated creditor paid; only a veto stops it.
 *  3. A debtor whose disputed fabricated guarantee exceeds its debit loses its incoming payments the
 *     fabrication offset when the operator withholds its tree: `voidUnansweredDebit` voids the remaining
 *     debit only, while a concession would refund the excess from the bond.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { getAddress, keccak256, parseEther } from "ethers";

import { guaranteeLeafOf } from "../../operator/clearing/commit-plan";
import type { GuaranteeLeaf } from "../../sdk/guarantee-tree";
import { ETH, PAYMENT_DELAY, TIMINGS, signedGuarantee, suretyFixture } from "./helpers";
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
      f.clearingHouse.claimNetCredit(1, ETH, f.bob.address, 3n * ONE, cycle.creditProof(ETH, f.bob.address)),
    ).to.be.revertedWithCustomError(f.clearingHouse, "CycleIsVetoed");
    // Fixed: the veto returned the conceded 1 ETH to the bond (VetoedBondReturned); nothing is stranded.
    expect(await f.clearingHouse.heldLiquidity(ETH)).to.equal(0n);
    expect(await f.clearingHouse.bondOf(ETH)).to.equal(5n * ONE);
    expect((await f.clearingHouse.getCycleAsset(1, ETH)).funded).to.equal(0n);
  });

  it("2. a net creditor cannot dispute a fabricated outgoing guarantee (its credit pays the fabrication)", async () => {
    const f = await loadFixture(creditorFixture);
    // alice's net position is +1 ETH (3 in, 2 fabricated out): she has no debt, so no dispute.
    await expect(f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0))
      .to.be.revertedWithCustomError(f.clearingHouse, "NoDebt")
      .withArgs(1n, ETH, f.alice.address);
    await f.clearingHouse.connect(f.bob).payNetDebit(1, ETH, { value: 3n * ONE });
    await time.increase(W);
    for (const who of [f.alice.address, f.outsider.address]) {
      await f.clearingHouse.claimNetCredit(
        1,
        ETH,
        who,
        f.cycle.credits.get(key(ETH, who))!,
        f.cycle.creditProof(ETH, who),
      );
    }
    // Today: alice gets 1 ETH of the 3 bob paid her; the 2 she never signed go to the fabricated creditor.
    expect(await f.clearingHouse.payoutOf(ETH, f.alice.address)).to.equal(ONE);
    expect(await f.clearingHouse.payoutOf(ETH, f.outsider.address)).to.equal(2n * ONE);
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

    it("left unanswered: only the debit is voided, her 3 ETH of incoming payments are lost", async () => {
      const f = await loadFixture(disputed);
      await time.increase(2 * W + 1);
      await expect(f.clearingHouse.voidUnansweredDebit(1, ETH, f.alice.address))
        .to.emit(f.clearingHouse, "DebitVoided")
        .withArgs(1n, ETH, getAddress(f.alice.address), 2n * ONE, 2n * ONE);
      // Today: nothing comes back to alice; the fabricated creditor claims bob's 3 ETH plus the bond's 2.
      expect(await f.clearingHouse.payoutOf(ETH, f.alice.address)).to.equal(0n);
      const mallory = f.outsider.address;
      await f.clearingHouse.claimNetCredit(1, ETH, mallory, 5n * ONE, f.cycle.creditProof(ETH, mallory));
      expect(await f.clearingHouse.payoutOf(ETH, mallory)).to.equal(5n * ONE);
    });
  });
});
