/**
 * Operator key gaps (audit M-2, docs/clearing.md "Operator key gaps"): while no operator key is set no
 * answer verifies, so the clock of unanswered disputes waits for the key. `Vault.answerDeadlineAfterKeyGap`
 * gives every open cycle at least a full answer window W under the current key (a key replacing a revoked
 * one counts from the revocation + timelockDelay), never more than timelockDelay + W past the committed
 * answer deadline: a key manager that revokes and never sets a key (or keeps rotating) delays the voids by
 * that much at most.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ZeroHash, parseEther } from "ethers";
import { ethers } from "hardhat";

import { publicKeyToEip2537 } from "../../sdk/bls";

import {
  ETH,
  OTHER_BLS,
  TIMINGS,
  commitPlanned,
  disputeAnswerOf,
  signedGuarantee,
  suretyFixture,
} from "./helpers";

const ONE = parseEther("1");
const W = BigInt(TIMINGS.challengeWindow);
const NEW_KEY = publicKeyToEip2537(OTHER_BLS.publicKey);

describe("operator key gaps: unanswered disputes wait for a working key", () => {
  async function fixture() {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    const all = [await signedGuarantee(f, f.alice, f.bob.address, 1n, 3n * ONE)];
    await commitPlanned(f, 1n, all);
    const cycle = await f.clearingHouse.getCycle(1);
    const delay = await f.vault.timelockDelay();
    const verifier = await ethers.getContractAt("GuaranteeVerifier", await f.vault.guaranteeVerifier());
    return { ...f, all, deadline: cycle.answerDeadline, delay, verifier };
  }

  type F = Awaited<ReturnType<typeof fixture>>;

  /** The key manager revokes the key and schedules its replacement in the same block time; alice disputes. */
  async function revokeAndDispute(f: F): Promise<bigint> {
    await f.vault.connect(f.admin).revokeOperatorKey();
    const revokedAt = BigInt(await time.latest());
    await f.vault.connect(f.admin).setOperatorKey(NEW_KEY); // scheduled: ready at revokedAt + 1 + delay
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    return revokedAt;
  }

  const answer = (f: F, options: { key?: typeof OTHER_BLS } = {}) =>
    f.clearingHouse
      .connect(f.operator)
      .answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf(f.all, f.alice.address, 0, options));

  /**
   * After a key gap ending at `until` a whole-debit void waits until the payment deadline moved as far
   * (audit A2-L1: the per-position phase first, unrevealed trees too): refused at the next block, then the
   * clock is set to the block after that moved deadline.
   */
  async function voidWaitsPaymentWindow(f: Awaited<ReturnType<typeof fixture>>, until: bigint) {
    const ch = f.clearingHouse;
    const cycle = await ch.getCycle(1);
    const due = cycle.paymentDeadline + (until - cycle.answerDeadline);
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address))
      .to.be.revertedWithCustomError(ch, "PaymentWindowOpen")
      .withArgs(1n, due);
    await time.setNextBlockTimestamp(due + 1n);
  }

  it("records when the key took effect and, on a revocation, when a replacement can", async () => {
    const f = await loadFixture(fixture);
    const setAt = await f.vault.operatorKeySince();
    expect(setAt).to.be.greaterThan(0n);
    await f.vault.connect(f.admin).revokeOperatorKey();
    const revokedAt = BigInt(await time.latest());
    expect(await f.vault.operatorKeySince()).to.equal(revokedAt + f.delay);
    // Revoking no key moves nothing (repeated revocations cannot hold disputes open).
    await time.increase(100);
    await f.vault.connect(f.admin).revokeOperatorKey();
    expect(await f.vault.operatorKeySince()).to.equal(revokedAt + f.delay);
  });

  it("a revocation: voids wait, the new key answers for W after the earliest replacement time", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    const revokedAt = await revokeAndDispute(f);
    await expect(answer(f)).to.be.revertedWithCustomError(f.verifier, "OperatorKeyNotSet");
    const until = revokedAt + f.delay + W;
    expect(until).to.be.greaterThan(f.deadline);
    expect(await f.vault.answerDeadlineAfterKeyGap(f.deadline)).to.equal(until);
    // Past the committed deadline the void is refused with the extended one.
    await time.increaseTo(f.deadline + 1n);
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address))
      .to.be.revertedWithCustomError(ch, "AnswerWindowExtended")
      .withArgs(1n, until);
    // The per-position void (audit M-1) waits for the same window.
    await expect(ch.voidUnansweredPosition(1, ETH, f.alice.address, 0, { hash: ZeroHash, sum: 0n }, []))
      .to.be.revertedWithCustomError(ch, "AnswerWindowExtended")
      .withArgs(1n, until);
    // The replacement executes; Core answers under the new key, past the committed deadline.
    await time.increaseTo(revokedAt + 1n + f.delay);
    await f.vault.connect(f.admin).setOperatorKey(NEW_KEY);
    expect(await f.vault.operatorKeySince()).to.equal(revokedAt + f.delay);
    await time.setNextBlockTimestamp(until);
    await expect(answer(f, { key: OTHER_BLS })).to.emit(ch, "DisputeResolved");
    expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(3n * ONE);
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address)).to.be.reverted;
    expect(await ch.bondOf(ETH)).to.equal(5n * ONE);
  });

  it("a dispute left unanswered under the new key is voided after that window, not before", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    const revokedAt = await revokeAndDispute(f);
    // Executed late: the window still counts from the earliest replacement time.
    await time.increaseTo(revokedAt + f.delay + W / 2n);
    await f.vault.connect(f.admin).setOperatorKey(NEW_KEY);
    const until = revokedAt + f.delay + W;
    await time.setNextBlockTimestamp(until);
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address))
      .to.be.revertedWithCustomError(ch, "AnswerWindowExtended")
      .withArgs(1n, until);
    await time.setNextBlockTimestamp(until + 1n);
    await expect(answer(f, { key: OTHER_BLS }))
      .to.be.revertedWithCustomError(ch, "AnswerWindowClosed")
      .withArgs(1n, until);
    await voidWaitsPaymentWindow(f, until); // the per-position phase after the gap (audit A2-L1)
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address))
      .to.emit(ch, "DebitVoided")
      .withArgs(1n, ETH, f.alice.address, 3n * ONE, 3n * ONE);
  });

  it("griefing bound: revoked and never replaced, voids proceed timelockDelay + W after the revocation", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await f.vault.connect(f.admin).revokeOperatorKey();
    const revokedAt = BigInt(await time.latest());
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    const until = revokedAt + f.delay + W;
    await time.setNextBlockTimestamp(until);
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address)).to.be.revertedWithCustomError(
      ch,
      "AnswerWindowExtended",
    );
    expect(await f.vault.operatorKeySet()).to.equal(false);
    await voidWaitsPaymentWindow(f, until); // the per-position phase after the gap (audit A2-L1)
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address)).to.emit(ch, "DebitVoided");
    expect(await ch.bondOf(ETH)).to.equal(2n * ONE);
  });

  it("griefing bound: rotating keys never extends a cycle past timelockDelay + W after its deadline", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    // A key scheduled long ago, executed well past the cycle's deadline.
    await f.vault.connect(f.admin).setOperatorKey(NEW_KEY);
    const bound = f.deadline + f.delay + W;
    await time.increaseTo(bound - W / 2n);
    await f.vault.connect(f.admin).setOperatorKey(NEW_KEY);
    expect(await f.vault.answerDeadlineAfterKeyGap(f.deadline)).to.equal(bound);
    await time.setNextBlockTimestamp(bound + 1n);
    await voidWaitsPaymentWindow(f, bound); // the per-position phase after the gap (audit A2-L1)
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address)).to.emit(ch, "DebitVoided");
  });

  it("a routine rotation inside the window: the new key answers for a full W after it", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await f.vault.connect(f.admin).setOperatorKey(NEW_KEY); // scheduled before cycle 2's commit
    await time.increase(f.delay - 10n);
    const all = [await signedGuarantee(f, f.alice, f.bob.address, 2n, ONE)];
    await commitPlanned(f, 2n, all);
    await ch.connect(f.alice).disputeGuarantee(2, ETH, 0);
    const deadline = (await ch.getCycle(2)).answerDeadline;
    const rotateAt = deadline - W / 2n;
    await time.setNextBlockTimestamp(rotateAt);
    await f.vault.connect(f.admin).setOperatorKey(NEW_KEY); // in effect half a window before the deadline
    const answer2 = (key?: typeof OTHER_BLS) =>
      ch
        .connect(f.operator)
        .answerDispute(2, ETH, f.alice.address, 0, disputeAnswerOf(all, f.alice.address, 0, { key }));
    // The stored (old-key) certificate no longer verifies; re-signed under the new key it does, after the
    // committed deadline.
    await time.setNextBlockTimestamp(deadline + 1n);
    await expect(answer2()).to.be.revertedWithCustomError(f.verifier, "InvalidCertificateSignature");
    await time.setNextBlockTimestamp(rotateAt + W);
    await expect(answer2(OTHER_BLS)).to.emit(ch, "DisputeResolved");
  });

  it("a vetoed cycle is refused as vetoed during a key gap", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await revokeAndDispute(f);
    await ch.connect(f.guardian).vetoCycle(1);
    await time.increaseTo(f.deadline + 1n);
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address)).to.be.revertedWithCustomError(
      ch,
      "CycleIsVetoed",
    );
  });

  it("no key change: the committed deadline holds for answers and voids", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    expect(await f.vault.answerDeadlineAfterKeyGap(f.deadline)).to.equal(f.deadline);
    await time.setNextBlockTimestamp(f.deadline + 1n);
    await expect(answer(f)).to.be.revertedWithCustomError(ch, "AnswerWindowClosed").withArgs(1n, f.deadline);
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address)).to.emit(ch, "DebitVoided");
  });
});
