/**
 * An audit of the dispute game (docs/clearing.md "Disputes"), each finding as a deterministic scenario.
 *  H-1 (fixed): a concession (an answer with empty claims) from anyone but the operator is refused
 *  (`ConcessionNotAllowed`): a debtor could otherwise void its own honest debit against the bond.
 *  M-2, M-3 (open, issue 25): these tests pin today's behaviour and assert the harmful outcome; their
 *  "today" assertions flip when the contracts are fixed.
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

  it("M-2: a seller that is a net debtor remunerates its V2 guarantee before the commit; the removal's deduction is never recovered (paid twice from the bond)", async () => {
    const f = await loadFixture(validatedV2Fixture); // alice -> bob V2 2 ETH, validated
    const ch = f.clearingHouse;
    await ch.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
    const v2 = validatedV2Guarantee(f);
    // bob also bought 3 ETH from carol: in this cycle bob is a net DEBTOR (+2 - 3 = -1).
    const bobToCarol = await signedGuarantee(f, f.bob, f.carol.address, 9n, 3n * ONE);
    const all = [v2, bobToCarol];
    // Core planned the cycle; bob remunerates the V2 guarantee (from alice's collateral) before the commit lands.
    await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert))).to.emit(
      f.vault,
      "GuaranteeRemunerated",
    ); // bob is paid 2 ETH out of alice's collateral
    const { plan: plan } = await commitPlanned(f, 1n, all, [f.cert.guaranteeId]); // the mark is skipped, the debits stand
    expect((await ch.debtOf(1, ETH, f.bob.address)).amount).to.equal(ONE);
    // alice disputes the guarantee she already paid: Removed, deduction booked on bob, bond fronts 2 ETH.
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await expect(ch.answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf(all, f.alice.address, 0)))
      .to.emit(ch, "CreditDeducted")
      .withArgs(1n, ETH, f.bob.address, f.cert.guaranteeId, 2n * ONE);
    // bob pays only his NET debit (1 ETH): the 2 ETH already remunerated to him offset it again.
    await ch.connect(f.bob).payNetDebit(1, ETH, { value: ONE });
    await time.increase(W + 1);
    const carol = creditProofOf(plan, f.carol.address);
    await ch.claimNetCredit(1, ETH, f.carol.address, carol.summary, carol.proof);
    // bob has no credit leaf: deductedOf(bob) = 2 can never be returned to the bond.
    expect(await ch.deductedOf(1, ETH, f.bob.address)).to.equal(2n * ONE);
    expect(() => creditProofOf(plan, f.bob.address)).to.throw("no credit");
    expect(await ch.bondOf(ETH)).to.equal(3n * ONE); // bond permanently lost 2 ETH
    // alice paid 2 once (remunerate) and nothing in the cycle; carol got 3; bob got 2 and paid only 1 for the
    // 3 he signed out: he is +1 instead of -1, the 2 ETH gap is the bond's.
    const alice = await ch.debtOf(1, ETH, f.alice.address);
    expect([alice.status, alice.amount]).to.deep.equal([DEBT.voided, 0n]);
    expect(await ch.payoutOf(ETH, f.carol.address)).to.equal(3n * ONE);
  });

  it("M-3: a removal's excess refund (DebitReduced.refunded) survives a veto, and the re-commit pays the offset again", async () => {
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
    // alice: -2 (V2, already paid) -2 +3 = -1. Dispute the V2 position -> Removed 2: cut 1, excess 1 refunded.
    const p = positionOf(all, v2);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, p);
    await expect(ch.answerDispute(1, ETH, f.alice.address, p, disputeAnswerOf(all, f.alice.address, p)))
      .to.emit(ch, "DebitReduced")
      .withArgs(1n, ETH, f.alice.address, ONE, ONE, ONE);
    expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(ONE);
    // The guardian vetoes the cycle (for any reason). The cut goes back to the bond, the excess does not.
    await ch.connect(f.guardian).vetoCycle(1);
    expect(await ch.bondOf(ETH)).to.equal(4n * ONE);
    expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(ONE);
    // Core re-commits the same guarantees without the remunerated one: alice is now a +1 creditor and is paid
    // the 1 ETH offset a second time.
    const recommit = [aliceToCarol, daveToAlice];
    const { plan: plan2 } = await commitPlanned(f, 2n, recommit);
    await ch.connect(f.dave).payNetDebit(2, ETH, { value: 3n * ONE });
    await time.increase(W + 1);
    const c = creditProofOf(plan2, f.alice.address);
    expect(c.credit).to.equal(ONE);
    await ch.claimNetCredit(2, ETH, f.alice.address, c.summary, c.proof);
    expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(2n * ONE); // owed 1, holds 2
    expect(await ch.bondOf(ETH)).to.equal(4n * ONE); // the bond lost 1 ETH to a cycle that settled nothing
  });
});
