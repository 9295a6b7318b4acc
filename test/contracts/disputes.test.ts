/**
 * The dispute game (issue 25, docs/clearing.md "Disputes"): a debtor disputes one position of its sum tree
 * of outgoing guarantees at a time; the operator answers that position alone. Honest paths next to every
 * refusal, and each attack of the review shown failing:
 *  1. all-or-nothing answers: a guarantee the payer remunerated before the commit is removed from the debit
 *     (and from its recipient's credit), the rest of the debit stands;
 *  2. answers that grow with the number of guarantees: one position costs O(depth) (gas.test.ts measures it);
 *  4. a veto undoes what the commit marked, and unpaid obligations stay locked for the grace period;
 *  6. answers prove what `remunerate` would: Core's certificate and, for V2, a passed validation;
 *  7. the bond floor counts every cycle still inside its dispute windows.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { anyValue } from "@nomicfoundation/hardhat-chai-matchers/withArgs";
import { expect } from "chai";
import { ethers } from "hardhat";
import { parseEther } from "ethers";

import {
  ETH,
  OTHER_BLS,
  PAYMENT_DELAY,
  TIMINGS,
  buildCycle,
  disputeAnswerOf,
  planCycle,
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
/** ClearingHouse.DebtStatus */
const DEBT = { open: 1n, paid: 2n, covered: 3n, challenged: 4n, answered: 5n, voided: 6n, refunded: 7n };
/** ClearingHouse.DisputeStatus */
const DISPUTE = { none: 0n, open: 1n, upheld: 2n, voided: 3n, removed: 4n, dismissed: 5n };

describe("Dispute game (issue 25)", () => {
  /** alice signed 3 ETH to bob and 1 to carol, bob 1 ETH to alice: alice owes 3 net, bob is owed 2. */
  async function honestFixture() {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    const toBob = await signedGuarantee(f, f.alice, f.bob.address, 1n, 3n * ONE);
    const toCarol = await signedGuarantee(f, f.alice, f.carol.address, 2n, ONE, ETH, "eip191");
    const fromBob = await signedGuarantee(f, f.bob, f.alice.address, 3n, ONE);
    const self = await signedGuarantee(f, f.alice, f.alice.address, 4n, 9n * ONE);
    const all = [toBob, toCarol, fromBob, self];
    const { plan, tx } = await commitPlanned(f, 1n, all);
    return { ...f, plan, tx, all, toBob, toCarol, fromBob, self };
  }

  describe("honest paths", () => {
    it("a commit announces its roots and window; claims wait for it to close", async () => {
      const f = await loadFixture(honestFixture);
      const at = BigInt(await time.latest());
      await expect(f.tx)
        .to.emit(f.clearingHouse, "CycleChallengeWindow")
        .withArgs(
          1n,
          f.plan.args.guaranteesRoot,
          f.plan.args.debitsRoot,
          at + BigInt(W),
          at + 2n * BigInt(W),
        );
      expect((await f.clearingHouse.getCycle(1)).debitsRoot).to.equal(f.plan.args.debitsRoot);
      await f.clearingHouse.connect(f.alice).payNetDebit(1, ETH, { value: 3n * ONE }); // paying early is fine
      const bob = creditProofOf(f.plan, f.bob.address);
      await expect(f.clearingHouse.claimNetCredit(1, ETH, f.bob.address, bob.summary, bob.proof))
        .to.be.revertedWithCustomError(f.clearingHouse, "ChallengeWindowOpen")
        .withArgs(1n, at + BigInt(W));
      await time.increase(W);
      await expect(f.clearingHouse.claimNetCredit(1, ETH, f.bob.address, bob.summary, bob.proof)).to.emit(
        f.clearingHouse,
        "NetCreditClaimed",
      );
    });

    it("each disputed position is proven on its own (EIP-712 and EIP-191); then the debit settles", async () => {
      const f = await loadFixture(honestFixture);
      const ch = f.clearingHouse;
      const [p0, p1] = [positionOf(f.all, f.toBob), positionOf(f.all, f.toCarol)];
      await expect(ch.connect(f.alice).disputeGuarantee(1, ETH, p0))
        .to.emit(ch, "GuaranteeDisputed")
        .withArgs(1n, ETH, f.alice.address, p0);
      await ch.connect(f.alice).disputeGuarantee(1, ETH, p1);
      expect(await ch.openChallenges()).to.equal(2n);
      await expect(ch.connect(f.alice).payNetDebit(1, ETH, { value: 3n * ONE }))
        .to.be.revertedWithCustomError(ch, "DebtAlreadyResolved")
        .withArgs(1n, ETH, f.alice.address, DEBT.challenged);
      const first = ch
        .connect(f.outsider)
        .answerDispute(1, ETH, f.alice.address, p0, disputeAnswerOf(f.all, f.alice.address, p0));
      await expect(first)
        .to.emit(ch, "DebitSummaryRevealed")
        .withArgs(1n, ETH, f.alice.address, anyValue, 4n * ONE, 1n)
        .and.to.emit(ch, "DisputeResolved")
        .withArgs(1n, ETH, f.alice.address, p0, DISPUTE.upheld, f.toBob.payable.guaranteeId, 3n * ONE);
      expect((await ch.debtOf(1, ETH, f.alice.address)).status).to.equal(DEBT.challenged);
      await ch.answerDispute(1, ETH, f.alice.address, p1, disputeAnswerOf(f.all, f.alice.address, p1));
      expect(await ch.disputeOf(1, ETH, f.alice.address, p1)).to.equal(DISPUTE.upheld);
      const debt = await ch.debtOf(1, ETH, f.alice.address);
      expect([debt.status, debt.amount]).to.deep.equal([DEBT.answered, 3n * ONE]);
      expect(await ch.openChallenges()).to.equal(0n);
      expect(await ch.answeredIn(f.toCarol.payable.guaranteeId)).to.equal(1n);
      await expect(ch.connect(f.alice).disputeGuarantee(1, ETH, p0))
        .to.be.revertedWithCustomError(ch, "DisputeNotOpen")
        .withArgs(1n, ETH, f.alice.address, p0, DISPUTE.upheld);
      await time.increase(PAYMENT_DELAY + 1);
      await expect(ch.coverDefault(1, ETH, f.alice.address))
        .to.emit(ch, "DefaultCovered")
        .withArgs(1n, ETH, f.alice.address, 3n * ONE, 3n * ONE);
    });

    it("a position past the tree's end is dismissed with the summary alone", async () => {
      const f = await loadFixture(honestFixture);
      await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 7);
      await expect(
        f.clearingHouse.answerDispute(1, ETH, f.alice.address, 7, disputeAnswerOf(f.all, f.alice.address, 7)),
      )
        .to.emit(f.clearingHouse, "DisputeResolved")
        .withArgs(1n, ETH, f.alice.address, 7n, DISPUTE.dismissed, ethers.ZeroHash, 0n);
      expect((await f.clearingHouse.debtOf(1, ETH, f.alice.address)).amount).to.equal(3n * ONE);
    });
  });

  describe("refusals", () => {
    it("disputes: only the debtor, once per position, inside the window, within the deepest tree", async () => {
      const f = await loadFixture(honestFixture);
      const ch = f.clearingHouse;
      await expect(ch.connect(f.bob).disputeGuarantee(1, ETH, 0))
        .to.be.revertedWithCustomError(ch, "NoDebt")
        .withArgs(1n, ETH, f.bob.address);
      await expect(ch.connect(f.alice).disputeGuarantee(2, ETH, 0)).to.be.revertedWithCustomError(
        ch,
        "UnknownCycle",
      );
      await expect(ch.connect(f.alice).disputeGuarantee(1, ETH, 1n << 24n))
        .to.be.revertedWithCustomError(ch, "InvalidSumPath")
        .withArgs(1n << 24n, 24n);
      await expect(ch.answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf(f.all, f.alice.address, 0)))
        .to.be.revertedWithCustomError(ch, "DisputeNotOpen")
        .withArgs(1n, ETH, f.alice.address, 0n, DISPUTE.none);
      await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
      await expect(ch.connect(f.alice).disputeGuarantee(1, ETH, 0))
        .to.be.revertedWithCustomError(ch, "DisputeNotOpen")
        .withArgs(1n, ETH, f.alice.address, 0n, DISPUTE.open);
      await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address)).to.be.revertedWithCustomError(
        ch,
        "AnswerWindowOpen",
      );
      await time.increase(W);
      await expect(ch.connect(f.alice).disputeGuarantee(1, ETH, 1)).to.be.revertedWithCustomError(
        ch,
        "ChallengeWindowClosed",
      );
      await time.increase(W + 1);
      await expect(ch.answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf(f.all, f.alice.address, 0)))
        .to.be.revertedWithCustomError(ch, "AnswerWindowClosed")
        .withArgs(1n, anyValue);
    });

    it("answers: the committed summary, the node at the position, the guarantee there, certified and signed", async () => {
      const f = await loadFixture(honestFixture);
      const ch = f.clearingHouse;
      const p = positionOf(f.all, f.toBob);
      await ch.connect(f.alice).disputeGuarantee(1, ETH, p);
      const good = disputeAnswerOf(f.all, f.alice.address, p);
      const answer = (a: typeof good) => ch.answerDispute(1, ETH, f.alice.address, p, a);
      await expect(answer({ ...good, summary: { ...good.summary, total: 9n * ONE } }))
        .to.be.revertedWithCustomError(ch, "InvalidDebitSummary")
        .withArgs(1n, ETH, f.alice.address);
      await expect(answer({ ...good, leaf: { ...good.leaf, sum: BigInt(good.leaf.sum) + 1n } }))
        .to.be.revertedWithCustomError(ch, "LeafNotInTree")
        .withArgs(p);
      // Another guarantee's claims at this position; an incoming one; a signature under another scheme.
      const other = disputeAnswerOf(f.all, f.alice.address, 1 - p);
      await expect(
        answer({
          ...good,
          claims: other.claims,
          certificate: other.certificate,
          signature: other.signature,
          scheme: other.scheme,
        }),
      )
        .to.be.revertedWithCustomError(ch, "AnswerLeafMismatch")
        .withArgs(f.toCarol.payable.guaranteeId);
      const incoming = disputeAnswerOf(f.all, f.alice.address, p, { guarantee: f.fromBob });
      await expect(answer(incoming))
        .to.be.revertedWithCustomError(ch, "GuaranteeNotOwed")
        .withArgs(f.fromBob.payable.guaranteeId, f.alice.address, ETH);
      await expect(answer({ ...good, scheme: 1 }))
        .to.be.revertedWithCustomError(ch, "InvalidGuaranteeSignature")
        .withArgs(f.toBob.payable.guaranteeId);
      // Item 6: a guarantee Core never certified (another key) proves nothing.
      await expect(
        answer(disputeAnswerOf(f.all, f.alice.address, p, { key: OTHER_BLS })),
      ).to.be.revertedWithCustomError(ch, "InvalidCertificateSignature");
      await expect(answer(good)).to.emit(ch, "DisputeResolved");
    });
  });

  describe("edges", () => {
    it("a paid debit cannot be disputed; an empty position inside the tree is dismissed; views", async () => {
      const f = await suretyFixture();
      await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
      await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
      // alice: three outgoing guarantees (a 4-position tree, position 3 empty); bob pays his own debit.
      const gs = [
        await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE),
        await signedGuarantee(f, f.alice, f.carol.address, 2n, ONE),
        await signedGuarantee(f, f.alice, f.dave.address, 3n, ONE),
        await signedGuarantee(f, f.bob, f.carol.address, 4n, 2n * ONE),
      ];
      await commitPlanned(f, 1n, gs);
      const ch = f.clearingHouse;
      await ch.connect(f.bob).payNetDebit(1, ETH, { value: ONE });
      await expect(ch.connect(f.bob).disputeGuarantee(1, ETH, 0))
        .to.be.revertedWithCustomError(ch, "DebtAlreadyResolved")
        .withArgs(1n, ETH, f.bob.address, DEBT.paid);
      await ch.connect(f.alice).disputeGuarantee(1, ETH, 3);
      expect((await ch.debtGameOf(1, ETH, f.alice.address)).openDisputes).to.equal(1n);
      await expect(ch.answerDispute(1, ETH, f.alice.address, 3, disputeAnswerOf(gs, f.alice.address, 3)))
        .to.emit(ch, "DisputeResolved")
        .withArgs(1n, ETH, f.alice.address, 3n, DISPUTE.dismissed, ethers.ZeroHash, 0n);
      const game = await ch.debtGameOf(1, ETH, f.alice.address);
      expect([game.revealed, game.depth, game.total, game.openDisputes]).to.deep.equal([
        true,
        2n,
        3n * ONE,
        0n,
      ]);
      expect(await ch.deductedOf(1, ETH, f.bob.address)).to.equal(0n);
      expect(await ch.isSettled(1)).to.equal(false);
      await time.increase(2 * W + 1);
      expect(await ch.isSettled(1)).to.equal(true);
      await expect(ch.voidUnansweredDebit(1, ETH, f.carol.address))
        .to.be.revertedWithCustomError(ch, "NoDebt")
        .withArgs(1n, ETH, f.carol.address);
    });

    it("a released vetoed debt cannot be released again", async () => {
      const f = await loadFixture(honestFixture);
      await f.clearingHouse.connect(f.guardian).vetoCycle(1);
      await time.increase(TIMINGS.withdrawalGracePeriod + 1);
      await f.clearingHouse.releaseVetoedDebt(1, ETH, f.alice.address);
      await expect(f.clearingHouse.releaseVetoedDebt(1, ETH, f.alice.address))
        .to.be.revertedWithCustomError(f.clearingHouse, "DebtAlreadyResolved")
        .withArgs(1n, ETH, f.alice.address, DEBT.voided);
    });
  });

  describe("void only what is unproven", () => {
    it("a conceded position takes only its own amount off the debit, against the bond", async () => {
      const f = await loadFixture(honestFixture);
      const ch = f.clearingHouse;
      const p = positionOf(f.all, f.toCarol);
      await ch.connect(f.alice).disputeGuarantee(1, ETH, p);
      // Only the operator concedes: the debtor (or anyone) conceding would void an honest debit (audit H-1).
      const concession = disputeAnswerOf(f.all, f.alice.address, p, { concede: true });
      for (const who of [f.alice, f.outsider]) {
        await expect(ch.connect(who).answerDispute(1, ETH, f.alice.address, p, concession))
          .to.be.revertedWithCustomError(ch, "ConcessionNotAllowed")
          .withArgs(who.address);
      }
      await expect(ch.connect(f.operator).answerDispute(1, ETH, f.alice.address, p, concession))
        .to.emit(ch, "DisputeResolved")
        .withArgs(1n, ETH, f.alice.address, p, DISPUTE.voided, ethers.ZeroHash, ONE)
        .and.to.emit(ch, "DebitReduced")
        .withArgs(1n, ETH, f.alice.address, ONE, ONE, 0n)
        .and.to.emit(f.vault, "ObligationReleased");
      const debt = await ch.debtOf(1, ETH, f.alice.address);
      expect([debt.status, debt.amount]).to.deep.equal([DEBT.answered, 2n * ONE]);
      expect(await ch.bondOf(ETH)).to.equal(4n * ONE);
      await ch.connect(f.alice).payNetDebit(1, ETH, { value: 2n * ONE });
      // The cycle is whole: bob claims his 2 ETH (alice's 2 + the bond's 1 cover bob 2 and carol 1).
      await time.increase(W);
      const bob = creditProofOf(f.plan, f.bob.address);
      await ch.claimNetCredit(1, ETH, f.bob.address, bob.summary, bob.proof);
      const carol = creditProofOf(f.plan, f.carol.address);
      await ch.claimNetCredit(1, ETH, f.carol.address, carol.summary, carol.proof);
      expect((await ch.getCycleAsset(1, ETH)).shortfall).to.equal(0n);
    });

    it("a removed guarantee larger than what is left of the debit holds the rest from the bond for the debtor", async () => {
      const f = await loadFixture(honestFixture);
      const ch = f.clearingHouse;
      // alice signed neither: her real position is +1 (bob's guarantee to her).
      for (const g of [f.toBob, f.toCarol])
        await ch.connect(f.alice).disputeGuarantee(1, ETH, positionOf(f.all, g));
      for (const g of [f.toBob, f.toCarol]) {
        const p = positionOf(f.all, g);
        await ch
          .connect(f.operator)
          .answerDispute(
            1,
            ETH,
            f.alice.address,
            p,
            disputeAnswerOf(f.all, f.alice.address, p, { concede: true }),
          );
      }
      const debt = await ch.debtOf(1, ETH, f.alice.address);
      expect([debt.status, debt.amount]).to.deep.equal([DEBT.voided, 0n]);
      // The excess is held for alice (audit A2-H1: not paid into the cycle), taken from the bond at the
      // operator's concession (audit3 A3-M2), until the challenge deadline (audit M-3); then it is hers.
      expect(await ch.refundHeldOf(1, ETH, f.alice.address)).to.equal(ONE);
      expect(await ch.refundSetAsideOf(1, ETH, f.alice.address)).to.equal(ONE);
      expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(0n);
      expect(await ch.bondOf(ETH)).to.equal(ONE);
      expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(0n);
      await time.increase(W + 1);
      await ch.claimDebitRefund(1, ETH, f.alice.address);
      expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(ONE);
      expect(await ch.bondOf(ETH)).to.equal(ONE);
    });

    it("a dispute left unanswered voids the whole remaining debit (the operator withheld its tree)", async () => {
      const f = await suretyFixture();
      const victims = [f.alice, f.bob];
      for (const v of victims) await f.vault.connect(v).deposit({ value: 5n * ONE });
      await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 20n * ONE });
      const cycle = buildCycle(1, [
        ...victims.map((v) => ({ asset: ETH, participant: v.address, debit: 5n * ONE, credit: 0n })),
        { asset: ETH, participant: f.dave.address, debit: 0n, credit: 10n * ONE },
      ]);
      // A rogue commit: roots with nothing behind them.
      const roots = { root: cycle.root, guaranteesRoot: ethers.id("g"), debitsRoot: ethers.id("d") };
      await f.clearingHouse.connect(f.operator).commitCycle(1, roots, cycle.totals, cycle.debtors, []);
      for (const v of victims) await f.clearingHouse.connect(v).disputeGuarantee(1, ETH, 0);
      await time.increase(PAYMENT_DELAY + 1);
      for (const v of victims) {
        await expect(f.clearingHouse.coverDefault(1, ETH, v.address))
          .to.be.revertedWithCustomError(f.clearingHouse, "DebtAlreadyResolved")
          .withArgs(1n, ETH, v.address, DEBT.challenged);
        await expect(f.clearingHouse.voidUnansweredDebit(1, ETH, v.address))
          .to.emit(f.clearingHouse, "DebitVoided")
          .withArgs(1n, ETH, v.address, 5n * ONE, 5n * ONE);
        expect(await f.vault.obligationOf(v.address, ETH)).to.equal(0n);
      }
      expect(await f.clearingHouse.openChallenges()).to.equal(0n);
      expect((await f.clearingHouse.getCycle(1)).finalized).to.equal(true);
    });
  });

  describe("attack 1: a guarantee paid before the commit", () => {
    it("is removed from the debit and from its recipient's credit; the rest of the debit stands", async () => {
      const f = await loadFixture(validatedV2Fixture);
      await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
      // alice's V2 guarantee to bob (2 ETH, req 77) and a V1 one to carol (1 ETH); bob owes carol nothing.
      const v2 = validatedV2Guarantee(f);
      const toCarol = await signedGuarantee(f, f.alice, f.carol.address, 5n, ONE);
      const all = [v2, toCarol];
      // The payer remunerates its own V2 guarantee just before the commit: the commit skips the id.
      await f.vault.connect(f.alice).remunerate(...remunerateArgs(f.cert));
      const { plan } = await commitPlanned(f, 1n, all, [f.cert.guaranteeId]);
      const ch = f.clearingHouse;
      const p = positionOf(all, v2);
      await ch.connect(f.alice).disputeGuarantee(1, ETH, p);
      await ch.connect(f.alice).disputeGuarantee(1, ETH, 1 - p);
      await expect(ch.answerDispute(1, ETH, f.alice.address, p, disputeAnswerOf(all, f.alice.address, p)))
        .to.emit(ch, "DisputeResolved")
        .withArgs(1n, ETH, f.alice.address, p, DISPUTE.removed, f.cert.guaranteeId, 2n * ONE)
        .and.to.emit(ch, "CreditDeducted")
        .withArgs(1n, ETH, f.bob.address, f.cert.guaranteeId, 2n * ONE);
      await ch.answerDispute(1, ETH, f.alice.address, 1 - p, disputeAnswerOf(all, f.alice.address, 1 - p));
      // alice still owes the guarantee she did not pay on chain; bob's credit pays nothing twice.
      const debt = await ch.debtOf(1, ETH, f.alice.address);
      expect([debt.status, debt.amount]).to.deep.equal([DEBT.answered, ONE]);
      await ch.connect(f.alice).payNetDebit(1, ETH, { value: ONE });
      await time.increase(W);
      const bob = creditProofOf(plan, f.bob.address);
      await expect(ch.claimNetCredit(1, ETH, f.bob.address, bob.summary, bob.proof))
        .to.emit(ch, "NetCreditClaimed")
        .withArgs(1n, ETH, f.bob.address, 0n);
      const carol = creditProofOf(plan, f.carol.address);
      await ch.claimNetCredit(1, ETH, f.carol.address, carol.summary, carol.proof);
      // The bond fronted bob's 2 ETH and got them back from his claim.
      expect(await ch.bondOf(ETH)).to.equal(5n * ONE);
      expect(await ch.payoutOf(ETH, f.bob.address)).to.equal(0n);
      expect(await ch.payoutOf(ETH, f.carol.address)).to.equal(ONE);
    });

    it("claims wait for the cycle's open disputes (a deduction is known before anyone claims)", async () => {
      const f = await loadFixture(honestFixture);
      await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
      await time.increase(W);
      const bob = creditProofOf(f.plan, f.bob.address);
      const { answerDeadline } = await f.clearingHouse.getCycle(1);
      await expect(f.clearingHouse.claimNetCredit(1, ETH, f.bob.address, bob.summary, bob.proof))
        .to.be.revertedWithCustomError(f.clearingHouse, "DisputesOpen")
        .withArgs(1n, answerDeadline);
      await f.clearingHouse.answerDispute(
        1,
        ETH,
        f.alice.address,
        0,
        disputeAnswerOf(f.all, f.alice.address, 0),
      );
      await f.clearingHouse.connect(f.alice).payNetDebit(1, ETH, { value: 3n * ONE });
      await expect(f.clearingHouse.claimNetCredit(1, ETH, f.bob.address, bob.summary, bob.proof)).to.emit(
        f.clearingHouse,
        "NetCreditClaimed",
      );
    });
  });

  describe("attack 6: answers prove what remunerate would accept", () => {
    it("a V2 guarantee whose validation failed is removed, not upheld", async () => {
      const f = await loadFixture(validatedV2Fixture);
      await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
      // The validator changes its verdict to 0 before the deadline.
      await f.validationRegistry
        .connect(f.validator)
        .validationResponse(f.cert.requestHash, 0, "", ethers.id("e2"), "ok");
      const v2 = validatedV2Guarantee(f);
      await commitPlanned(f, 1n, [v2], [f.cert.guaranteeId]);
      await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
      // The operator's call (audit H-1: anyone else's "not validated" answer is refused, RemovalNotAllowed).
      await expect(
        f.clearingHouse
          .connect(f.operator)
          .answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf([v2], f.alice.address, 0)),
      )
        .to.emit(f.clearingHouse, "DisputeResolved")
        .withArgs(1n, ETH, f.alice.address, 0n, DISPUTE.removed, f.cert.guaranteeId, 2n * ONE);
      expect((await f.clearingHouse.debtOf(1, ETH, f.alice.address)).status).to.equal(DEBT.voided);
    });
  });

  describe("attack 4: a veto undoes what the vetoed commit consumed", () => {
    it("its V2 marks take no effect: the seller remunerates after the veto", async () => {
      const f = await loadFixture(validatedV2Fixture);
      const v2 = validatedV2Guarantee(f);
      await commitPlanned(f, 1n, [v2], [f.cert.guaranteeId]);
      expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(2n); // Netted
      await expect(
        f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert)),
      ).to.be.revertedWithCustomError(f.vault, "GuaranteeAlreadyConsumed");
      await f.clearingHouse.connect(f.guardian).vetoCycle(1);
      expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(0n);
      await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert))).to.emit(
        f.vault,
        "GuaranteeRemunerated",
      );
    });

    it("unpaid debts of a vetoed cycle stay locked for the grace period; paid ones are refunded at once", async () => {
      const f = await loadFixture(honestFixture);
      await f.vault.connect(f.alice).requestWithdrawal(ETH, 10n * ONE);
      await f.clearingHouse.connect(f.guardian).vetoCycle(1);
      const c = await f.clearingHouse.getCycle(1);
      const releasableAt = c.committedAt + (c.doubleListingDeadline - c.defaultDeadline);
      await expect(f.clearingHouse.releaseVetoedDebt(1, ETH, f.alice.address))
        .to.be.revertedWithCustomError(f.clearingHouse, "VetoedDebtLocked")
        .withArgs(1n, releasableAt);
      // The payer cannot withdraw what it owed before the re-commit.
      await time.increaseTo((await f.vault.withdrawalFinalizableAt(f.alice.address, ETH)) + 1n);
      await expect(f.vault.connect(f.alice).finalizeWithdrawal(ETH))
        .to.emit(f.vault, "WithdrawalFinalized")
        .withArgs(anyValue, f.alice.address, ETH, 10n * ONE, 7n * ONE);
      await expect(f.clearingHouse.releaseVetoedDebt(1, ETH, f.alice.address))
        .to.emit(f.clearingHouse, "VetoedDebtReleased")
        .withArgs(1n, ETH, f.alice.address, 3n * ONE, false);
    });

    it("the guardian role is granted through the timelock", async () => {
      const f = await loadFixture(honestFixture);
      const role = await f.clearingHouse.GUARDIAN_ROLE();
      await expect(f.clearingHouse.connect(f.admin).grantRole(role, f.outsider.address))
        .to.be.revertedWithCustomError(f.clearingHouse, "RoleGrantMustBeScheduled")
        .withArgs(role);
      await expect(f.clearingHouse.connect(f.admin).scheduleRoleGrant(role, f.outsider.address)).to.emit(
        f.clearingHouse,
        "RoleGrantScheduled",
      );
    });
  });

  describe("attack 7: the bond floor counts every cycle still at risk", () => {
    it("a second overlapping cycle needs the bond to cover both; a settled one stops counting", async () => {
      const f = await suretyFixture();
      await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
      await f.clearingHouse.connect(f.admin).setBondFloor(10_000);
      await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 3n * ONE });
      const first = await signedGuarantee(f, f.alice, f.bob.address, 1n, 3n * ONE);
      await commitPlanned(f, 1n, [first]);
      expect(await f.clearingHouse.bondAtRisk(ETH)).to.equal(3n * ONE);
      const second = await signedGuarantee(f, f.alice, f.bob.address, 2n, 3n * ONE);
      const plan = planCycle(2n, [second]);
      const roots = {
        root: plan.root,
        guaranteesRoot: plan.args.guaranteesRoot,
        debitsRoot: plan.args.debitsRoot,
      };
      const commit2 = () =>
        f.clearingHouse.connect(f.operator).commitCycle(2, roots, plan.args.totals, plan.args.debtors, []);
      await expect(commit2())
        .to.be.revertedWithCustomError(f.clearingHouse, "BondBelowFloor")
        .withArgs(ETH, 3n * ONE, 6n * ONE);
      // Past its answer deadline with no dispute, cycle 1's debt is still open: its default could still be
      // funded from the bond, so it is still counted (audit3 A3-M1).
      await time.increase(2 * W + 1);
      await expect(commit2())
        .to.be.revertedWithCustomError(f.clearingHouse, "BondBelowFloor")
        .withArgs(ETH, 3n * ONE, 6n * ONE);
      // Paid, cycle 1 is finalized: no longer at risk, the commit releases it.
      await f.clearingHouse.connect(f.alice).payNetDebit(1, ETH, { value: 3n * ONE });
      await expect(commit2()).to.emit(f.clearingHouse, "CycleRiskReleased").withArgs(1n);
      expect(await f.clearingHouse.bondAtRisk(ETH)).to.equal(3n * ONE);
    });
  });
  describe("the bond", () => {
    /** honestFixture's bond is 5 ETH. */
    it("the bond: anyone posts, only the admin withdraws, never while a debit could be voided", async () => {
      const f = await loadFixture(honestFixture);
      const ch = f.clearingHouse;
      await expect(ch.connect(f.outsider).postBond(ETH, 0, { value: ONE }))
        .to.emit(ch, "BondPosted")
        .withArgs(ETH, f.outsider.address, ONE, 6n * ONE);
      await expect(ch.postBond(ETH, 0)).to.be.revertedWithCustomError(ch, "ZeroAmount");
      await expect(ch.postBond(f.usdAddress, 1, { value: 1 }))
        .to.be.revertedWithCustomError(ch, "UnexpectedEth")
        .withArgs(1n);
      await expect(ch.connect(f.dave).postBond(f.usdAddress, 1_000n))
        .to.emit(ch, "BondPosted")
        .withArgs(f.usdAddress, f.dave.address, 1_000n, 1_000n);
      await expect(ch.connect(f.operator).withdrawBond(ETH, ONE, f.operator.address))
        .to.be.revertedWithCustomError(ch, "AccessControlUnauthorizedAccount")
        .withArgs(f.operator.address, ethers.ZeroHash);
      await expect(ch.withdrawBond(ETH, ONE, f.admin.address)).to.be.revertedWithCustomError(ch, "BondInUse");
      await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
      await time.increase(2 * W + 1);
      await expect(ch.withdrawBond(ETH, ONE, f.admin.address))
        .to.be.revertedWithCustomError(ch, "BondInUse")
        .withArgs(1n, anyValue);
      await ch.voidUnansweredDebit(1, ETH, f.alice.address); // takes 3 ETH of the bond (6 → 3)
      // Still locked: a double listing of cycle 1 could be proven until its doubleListingDeadline.
      const { doubleListingDeadline } = await ch.getCycle(1);
      await expect(ch.withdrawBond(ETH, ONE, f.admin.address))
        .to.be.revertedWithCustomError(ch, "BondInUse")
        .withArgs(0n, doubleListingDeadline);
      await time.increaseTo(doubleListingDeadline + 1n);
      await expect(ch.withdrawBond(ETH, 4n * ONE, f.admin.address))
        .to.be.revertedWithCustomError(ch, "BondTooSmall")
        .withArgs(ETH, 3n * ONE, 4n * ONE);
      await expect(ch.withdrawBond(f.usdAddress, 1_000n, f.admin.address))
        .to.emit(ch, "BondWithdrawn")
        .withArgs(f.usdAddress, f.admin.address, 1_000n, 0n);
    });
  });
});
