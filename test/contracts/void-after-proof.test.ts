/**
 * Audit M-1 (regression): once a summary was revealed, `voidUnansweredDebit` conceded every position not
 * answered yet (`total − settled`, real positions nobody disputed included) and then still voided the rest of
 * the debit, which the operator had proven: one missed dispute of an empty position made the bond pay the
 * whole debit. Now a position past the revealed tree's end cannot be disputed (`PositionPastTreeEnd`); an
 * open position is conceded at its proven amount (`voidUnansweredPosition`, anyone, after the answer
 * deadline; empty or past the end: dismissed); only after the payment deadline does the void concede the
 * unanswered rest for a tree nobody proves, and what answers proved stays owed.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther } from "ethers";

import {
  ETH,
  TIMINGS,
  commitPlanned,
  creditProofOf,
  disputeAnswerOf,
  signedGuarantee,
  suretyFixture,
} from "./helpers";

const ONE = parseEther("1");
const W = TIMINGS.challengeWindow;
const P = TIMINGS.paymentWindow;
const UPHELD = 2n;
const VOIDED = 3n;
const DISMISSED = 5n;
const ANSWERED_DEBT = 5n;
const EMPTY = { hash: "0x" + "00".repeat(32), sum: 0n };

describe("audit M-1: an unanswered dispute voids only what is unproven", () => {
  /** alice signed 3 ETH to bob and 1 ETH to carol: her debit is 4, both positions real (depth 1). */
  async function fixture() {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    const toBob = await signedGuarantee(f, f.alice, f.bob.address, 1n, 3n * ONE);
    const toCarol = await signedGuarantee(f, f.alice, f.carol.address, 2n, ONE);
    const all = [toBob, toCarol];
    await commitPlanned(f, 1n, all);
    return { ...f, all };
  }

  async function answer(f: Awaited<ReturnType<typeof fixture>>, position: number) {
    await expect(
      f.clearingHouse
        .connect(f.operator)
        .answerDispute(1, ETH, f.alice.address, position, disputeAnswerOf(f.all, f.alice.address, position)),
    )
      .to.emit(f.clearingHouse, "DisputeResolved")
      .withArgs(
        1n,
        ETH,
        f.alice.address,
        BigInt(position),
        UPHELD,
        (id: string) => id.length === 66,
        (a: bigint) => a > 0n,
      );
  }

  it("both real positions upheld, the past-the-end one dismissed by anyone: the proven debit stays owed", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    // Disputed before the reveal (a blind dispute may land past the end).
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 1);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 1000);
    await answer(f, 0);
    await answer(f, 1);
    await time.increase(2 * W + 1); // Core misses the dismissal of position 1000
    // The whole-debt void waits for the payment deadline once the summary is revealed.
    const cycle = await ch.getCycle(1);
    await expect(ch.connect(f.alice).voidUnansweredDebit(1, ETH, f.alice.address))
      .to.be.revertedWithCustomError(ch, "PaymentWindowOpen")
      .withArgs(1n, cycle.paymentDeadline);
    // Anyone dismisses the past-the-end position (no proof needed); the debt is Answered, 4 ETH owed.
    await expect(ch.connect(f.carol).voidUnansweredPosition(1, ETH, f.alice.address, 1000, EMPTY, []))
      .to.emit(ch, "DisputeResolved")
      .withArgs(1n, ETH, f.alice.address, 1000n, DISMISSED, "0x" + "00".repeat(32), 0n);
    const debt = await ch.debtOf(1, ETH, f.alice.address);
    expect([debt.amount, debt.status]).to.deep.equal([4n * ONE, ANSWERED_DEBT]);
    expect(await ch.bondOf(ETH)).to.equal(5n * ONE);
    expect(await ch.openChallenges()).to.equal(0n);
    await expect(ch.connect(f.alice).voidUnansweredDebit(1, ETH, f.alice.address))
      .to.be.revertedWithCustomError(ch, "DebtAlreadyResolved")
      .withArgs(1n, ETH, f.alice.address, ANSWERED_DEBT);
    await ch.connect(f.alice).payNetDebit(1, ETH, { value: 4n * ONE });
  });

  it("left open until after the payment deadline: the void concedes nothing proven, the debit stays owed", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 1);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 1000);
    await answer(f, 0);
    await answer(f, 1);
    await time.increase(2 * W + P + 1);
    await expect(ch.connect(f.alice).voidUnansweredDebit(1, ETH, f.alice.address))
      .to.emit(ch, "UnansweredConceded")
      .withArgs(1n, ETH, f.alice.address, 0n, 1)
      .and.not.to.emit(ch, "DebitVoided");
    const debt = await ch.debtOf(1, ETH, f.alice.address);
    expect([debt.amount, debt.status]).to.deep.equal([4n * ONE, ANSWERED_DEBT]);
    expect(await ch.bondOf(ETH)).to.equal(5n * ONE);
    // The void closed the open dispute: no position can be conceded after it (its mark stays Open).
    await expect(ch.voidUnansweredPosition(1, ETH, f.alice.address, 1000, EMPTY, []))
      .to.be.revertedWithCustomError(ch, "DisputeNotOpen")
      .withArgs(1n, ETH, f.alice.address, 1000n, VOIDED);
    await expect(ch.coverDefault(1, ETH, f.alice.address)).to.emit(ch, "DefaultCovered");
    expect(await f.vault.balanceOf(f.alice.address, ETH)).to.equal(6n * ONE);
  });

  it("a real position missed: conceded at its proven amount only, the undisputed one stays owed", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 1); // one of her two positions; the other undisputed
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 1000);
    const s = disputeAnswerOf(f.all, f.alice.address, 1);
    await ch.revealSummary(1, ETH, f.alice.address, s.summary, s.summaryProof);
    await time.increase(2 * W + 1); // Core missed both
    const missed = BigInt(s.leaf.sum);
    expect([ONE, 3n * ONE]).to.deep.include(missed);
    await expect(
      ch.voidUnansweredPosition(1, ETH, f.alice.address, 1, s.leaf, [
        { hash: "0x" + "12".repeat(32), sum: 0n },
      ]),
    ).to.be.revertedWithCustomError(ch, "LeafNotInTree");
    await expect(ch.voidUnansweredPosition(1, ETH, f.alice.address, 1, s.leaf, s.path))
      .to.emit(ch, "DisputeResolved")
      .withArgs(1n, ETH, f.alice.address, 1n, VOIDED, "0x" + "00".repeat(32), missed)
      .and.to.emit(ch, "DebitReduced");
    await ch.voidUnansweredPosition(1, ETH, f.alice.address, 1000, EMPTY, []);
    const debt = await ch.debtOf(1, ETH, f.alice.address);
    expect([debt.amount, debt.status]).to.deep.equal([4n * ONE - missed, ANSWERED_DEBT]);
    expect(await ch.bondOf(ETH)).to.equal(5n * ONE - missed); // the bond paid the missed position only
    expect((await ch.debtGameOf(1, ETH, f.alice.address)).settled).to.equal(missed);
  });

  it("guards: not before the answer deadline, not without a reveal, only open positions", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    const s = disputeAnswerOf(f.all, f.alice.address, 0);
    await expect(
      ch.voidUnansweredPosition(1, ETH, f.alice.address, 0, s.leaf, s.path),
    ).to.be.revertedWithCustomError(ch, "AnswerWindowOpen");
    await time.increase(2 * W + 1);
    await expect(ch.voidUnansweredPosition(1, ETH, f.alice.address, 0, s.leaf, s.path))
      .to.be.revertedWithCustomError(ch, "SummaryNotRevealed")
      .withArgs(1n, ETH, f.alice.address);
    await expect(
      ch.voidUnansweredPosition(1, ETH, f.alice.address, 1, s.leaf, s.path),
    ).to.be.revertedWithCustomError(ch, "DisputeNotOpen");
    // Never revealed: the whole-debt void is the data-availability fallback, at once.
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address))
      .to.emit(ch, "DebitVoided")
      .withArgs(1n, ETH, f.alice.address, 4n * ONE, 4n * ONE);
  });

  it("after the reveal a position past the tree's end cannot be disputed", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    const s = disputeAnswerOf(f.all, f.alice.address, 0);
    await ch.revealSummary(1, ETH, f.alice.address, s.summary, s.summaryProof);
    await expect(ch.connect(f.alice).disputeGuarantee(1, ETH, 2))
      .to.be.revertedWithCustomError(ch, "PositionPastTreeEnd")
      .withArgs(1n, ETH, f.alice.address, 2n, 1);
    await expect(ch.connect(f.alice).disputeGuarantee(1, ETH, 1)).to.emit(ch, "GuaranteeDisputed");
  });

  it("a net creditor cannot dispute an empty slot past its revealed tree's end", async () => {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    // alice signed 3 ETH to bob, bob 4 ETH to alice: alice is owed 1 net, her outgoing tree holds 3.
    const toBob = await signedGuarantee(f, f.alice, f.bob.address, 1n, 3n * ONE);
    const toAlice = await signedGuarantee(f, f.bob, f.alice.address, 2n, 4n * ONE);
    const all = [toBob, toAlice];
    const { plan } = await commitPlanned(f, 1n, all);
    const ch = f.clearingHouse;
    const mine = disputeAnswerOf(all, f.alice.address, 0);
    await ch.connect(f.alice).revealSummary(1, ETH, f.alice.address, mine.summary, mine.summaryProof);
    await expect(ch.connect(f.alice).disputeGuarantee(1, ETH, 1000))
      .to.be.revertedWithCustomError(ch, "PositionPastTreeEnd")
      .withArgs(1n, ETH, f.alice.address, 1000n, 0);
    // Her own (real) position: disputed and missed, it is conceded at its proven 3 ETH only.
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await time.increase(2 * W + 1);
    await ch.voidUnansweredPosition(1, ETH, f.alice.address, 0, mine.leaf, mine.path);
    expect(await ch.refundHeldOf(1, ETH, f.alice.address)).to.equal(3n * ONE);
    await ch.connect(f.bob).payNetDebit(1, ETH, { value: ONE });
    const credit = creditProofOf(plan, f.alice.address);
    await ch.claimNetCredit(1, ETH, f.alice.address, credit.summary, credit.proof);
    await ch.claimDebitRefund(1, ETH, f.alice.address);
    expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(4n * ONE);
    expect(await ch.bondOf(ETH)).to.equal(2n * ONE);
  });
});
