/**
 * Issue 17, ClearingHouse side: the attacks of the custody review, each shown failing now, with the
 * honest path next to it.
 *  - Finding 6 (cheap griefing): a `remunerate` front-running a commit no longer reverts it; V2
 *    self-payment spam no longer fills the commit.
 *  - Finding 1 (operator key drains every depositor): the guardian vetoes the cycle; and even without
 *    the guardian, each victim challenges its debit, the operator cannot answer with signatures the
 *    victim never gave, and the debit is voided against the operator bond.
 *  - The challenge game's honest path (answered with the payer's own signed guarantees) and every
 *    revert of challenge, answer, void, veto, release and bond.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { anyValue } from "@nomicfoundation/hardhat-chai-matchers/withArgs";
import { expect } from "chai";
import { ethers } from "hardhat";
import { id as hashText, parseEther } from "ethers";

import { buildCommitPlan, toCommitCycleCall } from "../../operator/clearing/commit-plan";
import { netCycle, type PayableGuarantee } from "../../operator/clearing/netting";
import {
  ETH,
  GUARANTEES_ROOT,
  PAYMENT_DELAY,
  TIMINGS,
  answerOf,
  buildCycle,
  planCycle,
  remunerateArgs,
  signedGuarantee,
  suretyFixture,
  transfer,
  validatedV2Fixture,
  type Position,
} from "./helpers";

const ONE = parseEther("1");
const REMUNERATED = 1n;
const W = TIMINGS.challengeWindow;
/** ClearingHouse.DebtStatus */
const DEBT = { open: 1n, paid: 2n, covered: 3n, challenged: 4n, answered: 5n, voided: 6n, refunded: 7n };

describe("Custody review (issue 17), ClearingHouse side", () => {
  describe("finding 6: cheap griefing of commits", () => {
    it("a remunerate front-running a 60-debtor commit no longer reverts it: the id is skipped and reported", async () => {
      const f = await loadFixture(validatedV2Fixture);
      // Core planned the cycle (alice's V2 guarantee to bob among 60 debtors) before the remunerate landed.
      const positions: Position[] = [...transfer(ETH, f.alice.address, f.bob.address, 2n * ONE)];
      for (let i = 1; i < 60; i++) {
        positions.push(
          ...transfer(ETH, ethers.Wallet.createRandom().address, ethers.Wallet.createRandom().address, ONE),
        );
      }
      const cycle = buildCycle(1, positions);
      const fresh = hashText("another netted V2 id");
      await f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert)); // the front-runner

      const tx = f.clearingHouse
        .connect(f.operator)
        .commitCycle(1, cycle.root, GUARANTEES_ROOT, cycle.totals, cycle.debtors, [
          f.cert.guaranteeId,
          fresh,
        ]);
      await expect(tx)
        .to.emit(f.vault, "GuaranteeNettingSkipped")
        .withArgs(f.cert.guaranteeId, REMUNERATED)
        .and.to.emit(f.clearingHouse, "CycleCommitted");
      expect(await f.clearingHouse.lastCycleId()).to.equal(1n);
      expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(REMUNERATED); // paid once, by remunerate
      expect(await f.vault.consumption(fresh)).to.equal(2n);
      expect((await f.clearingHouse.getCycle(1)).openDebts).to.equal(60n);
    });

    it("1-wei V2 self-payments are not listed: 1,237 of them cost the commit nothing", async () => {
      const f = await loadFixture(suretyFixture);
      const spam: PayableGuarantee[] = Array.from({ length: 1_237 }, (_, i) => ({
        guaranteeId: hashText(`spam ${i}`),
        version: 2,
        user: f.carol.address,
        recipient: f.carol.address,
        asset: ETH,
        amount: 1n,
      }));
      const honest: PayableGuarantee = {
        guaranteeId: hashText("honest"),
        version: 2,
        user: f.alice.address,
        recipient: f.bob.address,
        asset: ETH,
        amount: ONE,
      };
      const commitGas = async (guarantees: PayableGuarantee[]) => {
        const g = await loadFixture(suretyFixture);
        const plan = buildCommitPlan(netCycle(1n, guarantees), guarantees)!;
        expect(plan.args.nettedV2Ids).to.deep.equal([honest.guaranteeId.toLowerCase()]);
        const tx = await g.clearingHouse.connect(g.operator).commitCycle(...toCommitCycleCall(plan.args));
        return (await tx.wait())!.gasUsed;
      };
      const alone = await commitGas([honest]);
      const withSpam = await commitGas([...spam, honest]);
      // One debtor and one listed id either way: the spam adds no per-id cost (it would be ≈ 30M gas
      // listed). Compared with the same commit without it, so it holds under coverage instrumentation too.
      // (The two guarantees roots differ, so their calldata bytes may cost a few gas apart.)
      expect(Number(withSpam)).to.be.closeTo(Number(alone), 200);
      expect(await f.vault.consumption(spam[0].guaranteeId)).to.equal(0n);
    });
  });

  describe("finding 1: one operator key commits a cycle draining every depositor", () => {
    /** alice, bob and carol deposited; the operator key commits a cycle where each owes all of it to dave. */
    async function drainFixture() {
      const f = await suretyFixture();
      const victims = [f.alice, f.bob, f.carol];
      for (const v of victims) await f.vault.connect(v).deposit({ value: 5n * ONE });
      await f.vault.connect(f.alice).requestWithdrawal(ETH, 5n * ONE); // an open withdrawal too
      await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 20n * ONE });
      const positions: Position[] = [
        ...victims.map((v) => ({ asset: ETH, participant: v.address, debit: 5n * ONE, credit: 0n })),
        { asset: ETH, participant: f.dave.address, debit: 0n, credit: 15n * ONE },
      ];
      const cycle = buildCycle(1, positions);
      await f.clearingHouse
        .connect(f.operator)
        .commitCycle(1, cycle.root, GUARANTEES_ROOT, cycle.totals, cycle.debtors, []);
      return { ...f, victims, cycle };
    }

    it("the guardian vetoes it: nothing is covered or claimed, every victim keeps its collateral", async () => {
      const f = await loadFixture(drainFixture);
      await expect(f.clearingHouse.connect(f.operator).vetoCycle(1))
        .to.be.revertedWithCustomError(f.clearingHouse, "AccessControlUnauthorizedAccount")
        .withArgs(f.operator.address, await f.clearingHouse.GUARDIAN_ROLE());
      await expect(f.clearingHouse.connect(f.guardian).vetoCycle(1))
        .to.emit(f.clearingHouse, "CycleVetoed")
        .withArgs(1n, f.guardian.address);
      await time.increase(PAYMENT_DELAY + 1);
      for (const v of f.victims) {
        await expect(f.clearingHouse.coverDefault(1, ETH, v.address))
          .to.be.revertedWithCustomError(f.clearingHouse, "CycleIsVetoed")
          .withArgs(1n);
        await expect(f.clearingHouse.releaseVetoedDebt(1, ETH, v.address))
          .to.emit(f.clearingHouse, "VetoedDebtReleased")
          .withArgs(1n, ETH, v.address, 5n * ONE, false)
          .and.to.emit(f.vault, "ObligationReleased");
        expect(await f.vault.freeCollateralOf(v.address, ETH)).to.equal(5n * ONE);
      }
      await expect(
        f.clearingHouse.claimNetCredit(
          1,
          ETH,
          f.dave.address,
          15n * ONE,
          f.cycle.proofOf(ETH, f.dave.address),
        ),
      )
        .to.be.revertedWithCustomError(f.clearingHouse, "CycleIsVetoed")
        .withArgs(1n);
      await time.increase(TIMINGS.withdrawalGracePeriod);
      await expect(f.vault.connect(f.alice).finalizeWithdrawal(ETH))
        .to.emit(f.vault, "WithdrawalFinalized")
        .withArgs(anyValue, f.alice.address, ETH, 5n * ONE, 5n * ONE); // the open withdrawal pays in full
      expect(await ethers.provider.getBalance(f.clearingHouseAddress)).to.equal(20n * ONE); // only the bond
    });

    it("without the guardian: each victim challenges, no answer is possible, the debits are voided", async () => {
      const f = await loadFixture(drainFixture);
      for (const v of f.victims) {
        await expect(f.clearingHouse.connect(v).challengeDebit(1, ETH))
          .to.emit(f.clearingHouse, "DebitChallenged")
          .withArgs(1n, ETH, v.address, 5n * ONE);
      }
      // The operator has no signature of the victims to show: an empty answer proves nothing.
      await expect(f.clearingHouse.connect(f.operator).answerChallenge(1, ETH, f.alice.address, []))
        .to.be.revertedWithCustomError(f.clearingHouse, "InsufficientSignedAmount")
        .withArgs(0n, 5n * ONE);
      await time.increase(PAYMENT_DELAY + 1);
      for (const v of f.victims) {
        await expect(f.clearingHouse.coverDefault(1, ETH, v.address))
          .to.be.revertedWithCustomError(f.clearingHouse, "DebtAlreadyResolved")
          .withArgs(1n, ETH, v.address, DEBT.challenged);
        await expect(f.clearingHouse.voidUnansweredDebit(1, ETH, v.address))
          .to.emit(f.clearingHouse, "DebitVoided")
          .withArgs(1n, ETH, v.address, 5n * ONE, 5n * ONE);
        expect(await f.vault.balanceOf(v.address, ETH)).to.equal(5n * ONE);
        expect(await f.vault.obligationOf(v.address, ETH)).to.equal(0n);
      }
      // What dave can still claim is the operator's own bond, never a depositor's collateral.
      expect(await f.clearingHouse.bondOf(ETH)).to.equal(5n * ONE);
      expect(await ethers.provider.getBalance(f.vaultAddress)).to.equal(15n * ONE);
      expect((await f.clearingHouse.getCycle(1)).finalized).to.equal(true);
    });
  });

  describe("challenge game", () => {
    /** alice signed 3 ETH to bob and 1 to carol, bob 1 ETH to alice: alice owes 3 net, bob is owed 2. */
    async function honestFixture() {
      const f = await suretyFixture();
      await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
      await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
      await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 2n * ONE });
      const toBob = await signedGuarantee(f, f.alice, f.bob.address, 1n, 3n * ONE);
      const toCarol = await signedGuarantee(f, f.alice, f.carol.address, 2n, ONE, ETH, "eip191");
      const fromBob = await signedGuarantee(f, f.bob, f.alice.address, 3n, ONE);
      const self = await signedGuarantee(f, f.alice, f.alice.address, 4n, 9n * ONE);
      const plan = planCycle(1n, [toBob, toCarol, fromBob, self]);
      const tx = f.clearingHouse
        .connect(f.operator)
        .commitCycle(
          plan.args.cycleId,
          plan.root,
          plan.args.guaranteesRoot,
          plan.args.totals,
          plan.args.debtors,
          [],
        );
      await (await tx).wait();
      return { ...f, plan, toBob, toCarol, fromBob, self, tx };
    }

    it("commit announces the window; claims wait for it to close", async () => {
      const f = await loadFixture(honestFixture);
      const committedAt = BigInt(await time.latest());
      await expect(f.tx)
        .to.emit(f.clearingHouse, "CycleChallengeWindow")
        .withArgs(1n, f.plan.args.guaranteesRoot, committedAt + BigInt(W), committedAt + 2n * BigInt(W));
      const cycle = await f.clearingHouse.getCycle(1);
      expect(cycle.guaranteesRoot).to.equal(f.plan.args.guaranteesRoot);
      expect(cycle.paymentDeadline).to.equal(committedAt + BigInt(PAYMENT_DELAY));
      await f.clearingHouse.connect(f.alice).payNetDebit(1, ETH, { value: 3n * ONE }); // paying early is fine
      const [bob] = f.plan.leaves.filter((l) => l.participant === f.bob.address);
      const proof = f.plan.tree.getProof([1n.toString(), ETH, f.bob.address, "0", bob.credit.toString()]);
      await expect(f.clearingHouse.claimNetCredit(1, ETH, f.bob.address, bob.credit, proof))
        .to.be.revertedWithCustomError(f.clearingHouse, "ChallengeWindowOpen")
        .withArgs(1n, committedAt + BigInt(W));
      await time.increase(W);
      await expect(f.clearingHouse.claimNetCredit(1, ETH, f.bob.address, bob.credit, proof)).to.emit(
        f.clearingHouse,
        "NetCreditClaimed",
      );
      await expect(f.clearingHouse.connect(f.guardian).vetoCycle(1))
        .to.be.revertedWithCustomError(f.clearingHouse, "ChallengeWindowClosed")
        .withArgs(1n, committedAt + BigInt(W));
    });

    it("an honest debit is answered with the payer's own signatures (EIP-712 and EIP-191), then settles", async () => {
      const f = await loadFixture(honestFixture);
      await f.clearingHouse.connect(f.alice).challengeDebit(1, ETH);
      expect(await f.clearingHouse.openChallenges()).to.equal(1n);
      await expect(f.clearingHouse.connect(f.alice).payNetDebit(1, ETH, { value: 3n * ONE }))
        .to.be.revertedWithCustomError(f.clearingHouse, "DebtAlreadyResolved")
        .withArgs(1n, ETH, f.alice.address, DEBT.challenged);
      const answer = answerOf(f.plan, [f.toBob, f.toCarol]);
      await expect(f.clearingHouse.connect(f.outsider).answerChallenge(1, ETH, f.alice.address, answer))
        .to.emit(f.clearingHouse, "ChallengeAnswered")
        .withArgs(1n, ETH, f.alice.address, 2n, 4n * ONE);
      expect((await f.clearingHouse.debtOf(1, ETH, f.alice.address)).status).to.equal(DEBT.answered);
      expect(await f.clearingHouse.answeredIn(f.toBob.payable.guaranteeId)).to.equal(1n);
      expect(await f.clearingHouse.openChallenges()).to.equal(0n);
      await expect(f.clearingHouse.connect(f.alice).challengeDebit(1, ETH))
        .to.be.revertedWithCustomError(f.clearingHouse, "DebtAlreadyResolved")
        .withArgs(1n, ETH, f.alice.address, DEBT.answered);
      await time.increase(PAYMENT_DELAY + 1);
      await expect(f.clearingHouse.coverDefault(1, ETH, f.alice.address)).to.emit(
        f.clearingHouse,
        "DefaultCovered",
      );
    });

    it("refuses answers that do not prove the debit", async () => {
      const f = await loadFixture(honestFixture);
      await f.clearingHouse.connect(f.alice).challengeDebit(1, ETH);
      const ch = f.clearingHouse;
      const answer = (gs: (typeof f.toBob)[]) =>
        ch.answerChallenge(1, ETH, f.alice.address, answerOf(f.plan, gs));
      await expect(answer([f.toCarol]))
        .to.be.revertedWithCustomError(ch, "InsufficientSignedAmount")
        .withArgs(ONE, 3n * ONE);
      // A self-payment adds nothing to a debit; incoming guarantees are someone else's.
      await expect(answer([f.toBob, f.self]))
        .to.be.revertedWithCustomError(ch, "GuaranteeNotOwed")
        .withArgs(f.self.payable.guaranteeId, f.alice.address, ETH);
      await expect(answer([f.fromBob]))
        .to.be.revertedWithCustomError(ch, "GuaranteeNotOwed")
        .withArgs(f.fromBob.payable.guaranteeId, f.alice.address, ETH);
      const sorted = answerOf(f.plan, [f.toBob, f.toCarol]);
      const [lower] = [f.toBob, f.toCarol]
        .map((g) => g.payable.guaranteeId)
        .sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
      await expect(ch.answerChallenge(1, ETH, f.alice.address, [sorted[1], sorted[0]]))
        .to.be.revertedWithCustomError(ch, "GuaranteesNotSorted")
        .withArgs(lower);
      // The same guarantee twice: its first use already marked it.
      await expect(ch.answerChallenge(1, ETH, f.alice.address, [sorted[0], sorted[0]]))
        .to.be.revertedWithCustomError(ch, "GuaranteeAlreadyUsed")
        .withArgs(lower, 1n);
      // A signature the tree does not hold, or a forged one under the tree's hash.
      const [good] = answerOf(f.plan, [f.toBob]);
      const forged = await f.bob.signMessage("not alice");
      await expect(ch.answerChallenge(1, ETH, f.alice.address, [{ ...good, signature: forged }]))
        .to.be.revertedWithCustomError(ch, "GuaranteeNotInCycle")
        .withArgs(f.toBob.payable.guaranteeId);
      await expect(ch.answerChallenge(1, ETH, f.alice.address, [{ ...good, scheme: 1 }]))
        .to.be.revertedWithCustomError(ch, "InvalidGuaranteeSignature")
        .withArgs(f.toBob.payable.guaranteeId);
      // Another asset's debit: the guarantee is ETH.
      await expect(ch.answerChallenge(1, f.usdAddress, f.alice.address, [good]))
        .to.be.revertedWithCustomError(ch, "NoDebt")
        .withArgs(1n, f.usdAddress, f.alice.address);
      // Claims whose id does not match their payer and reqId.
      const other = await signedGuarantee(f, f.alice, f.bob.address, 99n, 3n * ONE);
      const tampered = other.claims.replace(
        other.payable.guaranteeId.slice(2),
        f.toBob.payable.guaranteeId.slice(2),
      );
      await expect(ch.answerChallenge(1, ETH, f.alice.address, [{ ...good, claims: tampered }]))
        .to.be.revertedWithCustomError(ch, "GuaranteeIdMismatch")
        .withArgs(other.payable.guaranteeId, f.toBob.payable.guaranteeId);
      await time.increase(2 * W + 1);
      await expect(answer([f.toBob]))
        .to.be.revertedWithCustomError(ch, "AnswerWindowClosed")
        .withArgs(1n, anyValue);
    });

    it("a signed guarantee answers one challenge only, ever (not a second cycle's)", async () => {
      const f = await loadFixture(honestFixture);
      await f.clearingHouse.connect(f.alice).challengeDebit(1, ETH);
      await f.clearingHouse.answerChallenge(1, ETH, f.alice.address, answerOf(f.plan, [f.toBob]));
      // The operator lists toBob again in cycle 2 and charges alice for it a second time.
      const again = planCycle(2n, [f.toBob]);
      await f.clearingHouse
        .connect(f.operator)
        .commitCycle(2, again.root, again.args.guaranteesRoot, again.args.totals, again.args.debtors, []);
      await f.clearingHouse.connect(f.alice).challengeDebit(2, ETH);
      await expect(f.clearingHouse.answerChallenge(2, ETH, f.alice.address, answerOf(again, [f.toBob])))
        .to.be.revertedWithCustomError(f.clearingHouse, "GuaranteeAlreadyUsed")
        .withArgs(f.toBob.payable.guaranteeId, 1n);
    });

    it("a remunerated guarantee cannot justify a netted debit", async () => {
      const f = await loadFixture(validatedV2Fixture);
      // alice's V2 guarantee (remunerated by bob) is also listed in a cycle; its V1 twin is not signed.
      const plan = planCycle(1n, [await signedGuarantee(f, f.alice, f.bob.address, 77n, 2n * ONE)]);
      await f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert));
      await f.clearingHouse
        .connect(f.operator)
        .commitCycle(1, plan.root, plan.args.guaranteesRoot, plan.args.totals, plan.args.debtors, []);
      await f.clearingHouse.connect(f.alice).challengeDebit(1, ETH);
      const g = await signedGuarantee(f, f.alice, f.bob.address, 77n, 2n * ONE);
      await expect(f.clearingHouse.answerChallenge(1, ETH, f.alice.address, answerOf(plan, [g])))
        .to.be.revertedWithCustomError(f.clearingHouse, "GuaranteeRemunerated")
        .withArgs(f.cert.guaranteeId);
    });

    it("challenge, void and release refuse the wrong moment, the wrong caller and the wrong state", async () => {
      const f = await loadFixture(honestFixture);
      const ch = f.clearingHouse;
      await expect(ch.connect(f.bob).challengeDebit(1, ETH))
        .to.be.revertedWithCustomError(ch, "NoDebt")
        .withArgs(1n, ETH, f.bob.address);
      await expect(ch.connect(f.alice).challengeDebit(2, ETH)).to.be.revertedWithCustomError(
        ch,
        "UnknownCycle",
      );
      await expect(ch.answerChallenge(1, ETH, f.alice.address, answerOf(f.plan, [f.toBob])))
        .to.be.revertedWithCustomError(ch, "DebtAlreadyResolved")
        .withArgs(1n, ETH, f.alice.address, DEBT.open);
      await ch.connect(f.alice).challengeDebit(1, ETH);
      await expect(ch.connect(f.alice).challengeDebit(1, ETH))
        .to.be.revertedWithCustomError(ch, "DebtAlreadyResolved")
        .withArgs(1n, ETH, f.alice.address, DEBT.challenged);
      await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address)).to.be.revertedWithCustomError(
        ch,
        "AnswerWindowOpen",
      );
      await expect(ch.releaseVetoedDebt(1, ETH, f.alice.address))
        .to.be.revertedWithCustomError(ch, "CycleNotVetoed")
        .withArgs(1n);
      await time.increase(W);
      await expect(ch.connect(f.alice).challengeDebit(1, ETH)).to.be.revertedWithCustomError(
        ch,
        "ChallengeWindowClosed",
      );
      await time.increase(W + 1);
      // The bond (2 ETH) covers only part of alice's 3 ETH: the rest is the cycle's shortfall.
      await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address))
        .to.emit(ch, "DebitVoided")
        .withArgs(1n, ETH, f.alice.address, 3n * ONE, 2n * ONE);
      expect((await ch.getCycleAsset(1, ETH)).shortfall).to.equal(ONE);
      await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address))
        .to.be.revertedWithCustomError(ch, "DebtAlreadyResolved")
        .withArgs(1n, ETH, f.alice.address, DEBT.voided);
    });

    it("a veto refunds debits already paid and releases the others; the re-commit settles", async () => {
      const f = await loadFixture(honestFixture);
      await f.clearingHouse.connect(f.alice).payNetDebit(1, ETH, { value: 3n * ONE });
      await f.clearingHouse.connect(f.guardian).vetoCycle(1);
      await expect(f.clearingHouse.connect(f.guardian).vetoCycle(1))
        .to.be.revertedWithCustomError(f.clearingHouse, "CycleIsVetoed")
        .withArgs(1n);
      await expect(f.clearingHouse.connect(f.alice).challengeDebit(1, ETH)).to.be.revertedWithCustomError(
        f.clearingHouse,
        "CycleIsVetoed",
      );
      const refund = f.clearingHouse.releaseVetoedDebt(1, ETH, f.alice.address);
      await expect(refund)
        .to.emit(f.clearingHouse, "VetoedDebtReleased")
        .withArgs(1n, ETH, f.alice.address, 3n * ONE, true);
      // Pull payment: the refund is set aside for alice, who pulls it.
      await expect(refund).to.changeEtherBalances([f.alice, f.clearingHouse], [0n, 0n]);
      expect(await f.clearingHouse.payoutOf(ETH, f.alice.address)).to.equal(3n * ONE);
      const pull = f.clearingHouse.connect(f.alice).withdrawPayout(ETH, f.alice.address);
      await expect(pull)
        .to.emit(f.clearingHouse, "PayoutWithdrawn")
        .withArgs(ETH, f.alice.address, f.alice.address, 3n * ONE);
      await expect(pull).to.changeEtherBalances([f.alice, f.clearingHouse], [3n * ONE, -3n * ONE]);
      expect((await f.clearingHouse.debtOf(1, ETH, f.alice.address)).status).to.equal(DEBT.refunded);
      await expect(f.clearingHouse.releaseVetoedDebt(1, ETH, f.alice.address))
        .to.be.revertedWithCustomError(f.clearingHouse, "DebtAlreadyResolved")
        .withArgs(1n, ETH, f.alice.address, DEBT.refunded);
      await expect(f.clearingHouse.releaseVetoedDebt(1, ETH, f.bob.address))
        .to.be.revertedWithCustomError(f.clearingHouse, "NoDebt")
        .withArgs(1n, ETH, f.bob.address);
      expect(await f.clearingHouse.heldLiquidity(ETH)).to.equal(0n);
      // Core re-commits the same guarantees as cycle 2; it settles normally.
      const again = planCycle(2n, [f.toBob, f.toCarol, f.fromBob, f.self]);
      await f.clearingHouse
        .connect(f.operator)
        .commitCycle(2, again.root, again.args.guaranteesRoot, again.args.totals, again.args.debtors, []);
      await f.clearingHouse.connect(f.alice).payNetDebit(2, ETH, { value: 3n * ONE });
      expect((await f.clearingHouse.getCycle(2)).finalized).to.equal(true);
    });

    it("guarantees used to answer in a vetoed cycle can answer again in its re-commit", async () => {
      const f = await loadFixture(honestFixture);
      await f.clearingHouse.connect(f.alice).challengeDebit(1, ETH);
      await f.clearingHouse.answerChallenge(1, ETH, f.alice.address, answerOf(f.plan, [f.toBob]));
      await f.clearingHouse.connect(f.guardian).vetoCycle(1);
      const again = planCycle(2n, [f.toBob, f.toCarol, f.fromBob, f.self]);
      await f.clearingHouse
        .connect(f.operator)
        .commitCycle(2, again.root, again.args.guaranteesRoot, again.args.totals, again.args.debtors, []);
      await f.clearingHouse.connect(f.alice).challengeDebit(2, ETH);
      await expect(f.clearingHouse.answerChallenge(2, ETH, f.alice.address, answerOf(again, [f.toBob])))
        .to.emit(f.clearingHouse, "ChallengeAnswered")
        .withArgs(2n, ETH, f.alice.address, 1n, 3n * ONE);
      expect(await f.clearingHouse.answeredIn(f.toBob.payable.guaranteeId)).to.equal(2n);
    });

    it("the bond: anyone posts, only the admin withdraws, never while a debit could be voided", async () => {
      const f = await loadFixture(honestFixture);
      const ch = f.clearingHouse;
      await expect(ch.connect(f.outsider).postBond(ETH, 0, { value: ONE }))
        .to.emit(ch, "BondPosted")
        .withArgs(ETH, f.outsider.address, ONE, 3n * ONE);
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
      await ch.connect(f.alice).challengeDebit(1, ETH);
      await time.increase(2 * W + 1);
      await expect(ch.withdrawBond(ETH, ONE, f.admin.address))
        .to.be.revertedWithCustomError(ch, "BondInUse")
        .withArgs(1n, anyValue);
      await ch.voidUnansweredDebit(1, ETH, f.alice.address); // takes 3 ETH of the bond
      // Still locked: a double listing of cycle 1 could be proven until its doubleListingDeadline.
      const { doubleListingDeadline } = await ch.getCycle(1);
      await expect(ch.withdrawBond(ETH, ONE, f.admin.address))
        .to.be.revertedWithCustomError(ch, "BondInUse")
        .withArgs(0n, doubleListingDeadline);
      await time.increaseTo(doubleListingDeadline + 1n);
      await expect(ch.withdrawBond(ETH, ONE, f.admin.address))
        .to.be.revertedWithCustomError(ch, "BondTooSmall")
        .withArgs(ETH, 0n, ONE);
      await expect(ch.withdrawBond(f.usdAddress, 1_000n, f.admin.address))
        .to.emit(ch, "BondWithdrawn")
        .withArgs(f.usdAddress, f.admin.address, 1_000n, 0n);
    });
  });
});
