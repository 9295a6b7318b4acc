/**
 * A recipient's credit dispute (issue 25, the misdirected-credit residual; docs/clearing.md "Misdirected
 * credits"): a guarantee listed in its payer's outgoing tree must be credited to its own recipient. The
 * recipient proves the listing (certificate, payer signature, position in the payer's tree); the operator
 * answers with the guarantee's credit proof, else the bond pays the recipient, once.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther } from "ethers";

import { guaranteeLeafOf } from "../../operator/clearing/commit-plan";
import { SIGNING_SCHEME_CODES } from "../../sdk/eip712";
import {
  ETH,
  signClaims,
  signedGuarantee,
  suretyFixture,
  OTHER_BLS,
  type SignedTestGuarantee,
} from "./helpers";
import { type BuiltCycle, buildCycleOf, creditOf, listedOf } from "./model/cycles";

const ONE = parseEther("1");

type Fixture = Awaited<ReturnType<typeof suretyFixture>>;

function evidenceOf(g: SignedTestGuarantee, key = undefined as Parameters<typeof signClaims>[1]) {
  return {
    claims: g.claims,
    certificate: signClaims(g.claims, key),
    scheme: SIGNING_SCHEME_CODES[g.scheme],
    signature: g.signature,
  };
}

async function commit(f: Fixture, cycle: BuiltCycle) {
  await f.clearingHouse
    .connect(f.operator)
    .commitCycle(
      cycle.cycleId,
      { root: cycle.root, guaranteesRoot: cycle.guaranteesRoot, debitsRoot: cycle.debitsRoot },
      cycle.totals,
      cycle.debtors,
      [],
    );
}

describe("Recipient's credit disputes (issue 25, misdirected credits)", () => {
  /** bob signed 3 ETH to alice and 1 ETH to carol; `misdirect` credits alice's guarantee to mallory. */
  async function setup(f: Fixture, misdirect: boolean) {
    await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 10n * ONE });
    const g = await signedGuarantee(f, f.bob, f.alice.address, 1n, 3n * ONE);
    const other = await signedGuarantee(f, f.bob, f.carol.address, 2n, ONE);
    const leaf = guaranteeLeafOf(g.payable);
    const leaves = [leaf, guaranteeLeafOf(other.payable)];
    const cycle = buildCycleOf(1n, leaves, (l) =>
      misdirect && l.guaranteeId === leaf.guaranteeId ? f.outsider.address : l.recipient,
    );
    await commit(f, cycle);
    return { g, leaf, cycle, listed: listedOf(cycle, leaf, evidenceOf(g)) };
  }
  const misdirected = async () => {
    const f = await suretyFixture();
    return { ...f, ...(await setup(f, true)) };
  };
  const honest = async () => {
    const f = await suretyFixture();
    return { ...f, ...(await setup(f, false)) };
  };

  it("unanswered: the bond pays the recipient once, the guarantee is marked paid", async () => {
    const f = await loadFixture(misdirected);
    const ch = f.clearingHouse;
    const id = f.leaf.guaranteeId;
    const tx = ch.connect(f.alice).disputeCredit(1, ETH, f.bob.address, f.listed);
    await expect(tx)
      .to.emit(ch, "CreditDisputed")
      .withArgs(1n, id, f.alice.address, f.bob.address, ETH, 3n * ONE);
    console.log(`      disputeCredit gas: ${(await (await tx).wait())!.gasUsed}`);
    // The operator cannot prove it credited to alice: mallory's tree holds it.
    const wrong = creditOf({ ...f.cycle }, { ...f.leaf, recipient: f.outsider.address });
    await expect(ch.connect(f.operator).answerCreditDispute(1, id, wrong)).to.be.revertedWithCustomError(
      ch,
      "NotCreditedToRecipient",
    );
    // Claims wait for the dispute, as for any dispute.
    await time.increase((await f.vault.timings()).challengeWindow + 1n);
    const c = f.cycle.creditProof(ETH, f.outsider.address);
    await expect(
      ch.claimNetCredit(1, ETH, f.outsider.address, c.summary, c.proof),
    ).to.be.revertedWithCustomError(ch, "DisputesOpen");
    await expect(ch.payUnansweredCredit(1, id)).to.be.revertedWithCustomError(ch, "AnswerWindowOpen");
    await time.increaseTo((await ch.getCycle(1)).answerDeadline + 1n);
    const pay = ch.connect(f.dave).payUnansweredCredit(1, id);
    await expect(pay)
      .to.emit(ch, "CreditDisputeResolved")
      .withArgs(1n, id, 3n, 3n * ONE, 0n);
    console.log(`      payUnansweredCredit gas: ${(await (await pay).wait())!.gasUsed}`);
    expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(3n * ONE);
    expect(await ch.bondOf(ETH)).to.equal(7n * ONE);
    expect(await ch.openChallenges()).to.equal(0n);
    expect(await f.vault.consumption(id)).to.equal(1n); // Remunerated: no remunerate / reserve pays it again
    // Once only: neither the same dispute nor a second one pays again.
    await expect(ch.payUnansweredCredit(1, id)).to.be.revertedWithCustomError(ch, "CreditDisputeNotOpen");
    expect((await ch.creditDisputeOf(1, id)).status).to.equal(3n);
  });

  it("a second dispute of the same guarantee, or one already paid, is refused", async () => {
    const f = await loadFixture(misdirected);
    const ch = f.clearingHouse;
    await ch.connect(f.alice).disputeCredit(1, ETH, f.bob.address, f.listed);
    await expect(ch.connect(f.dave).disputeCredit(1, ETH, f.bob.address, f.listed))
      .to.be.revertedWithCustomError(ch, "CreditDisputeNotOpen")
      .withArgs(1n, f.leaf.guaranteeId, 1n);
  });

  it("honest operator: answered with the credit proof, the bond pays nothing", async () => {
    const f = await loadFixture(honest);
    const ch = f.clearingHouse;
    const id = f.leaf.guaranteeId;
    await ch.connect(f.alice).disputeCredit(1, ETH, f.bob.address, f.listed);
    const tx = ch.connect(f.outsider).answerCreditDispute(1, id, creditOf(f.cycle, f.leaf));
    await expect(tx).to.emit(ch, "CreditDisputeResolved").withArgs(1n, id, 2n, 0n, 0n);
    console.log(`      answerCreditDispute gas: ${(await (await tx).wait())!.gasUsed}`);
    await time.increaseTo((await ch.getCycle(1)).answerDeadline + 1n);
    await expect(ch.payUnansweredCredit(1, id)).to.be.revertedWithCustomError(ch, "CreditDisputeNotOpen");
    expect(await ch.bondOf(ETH)).to.equal(10n * ONE);
    expect(await ch.openChallenges()).to.equal(0n);
    // The honest creditors claim as usual.
    await ch.connect(f.bob).payNetDebit(1, ETH, { value: 4n * ONE });
    const c = f.cycle.creditProof(ETH, f.alice.address);
    await ch.claimNetCredit(1, ETH, f.alice.address, c.summary, c.proof);
    expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(3n * ONE);
  });

  it("griefing fails: a guarantee the cycle does not list, a forged certificate, a late or wrong-payer dispute", async () => {
    const f = await loadFixture(honest);
    const ch = f.clearingHouse;
    // Certified and signed, but never listed in this cycle: no position of bob's tree holds it.
    const unlisted = await signedGuarantee(f, f.bob, f.alice.address, 9n, 3n * ONE);
    await expect(
      ch.disputeCredit(1, ETH, f.bob.address, { ...f.listed, ...evidenceOf(unlisted) }),
    ).to.be.revertedWithCustomError(ch, "LeafNotInTree");
    // Core never certified it (another BLS key).
    await expect(
      ch.disputeCredit(1, ETH, f.bob.address, { ...f.listed, ...evidenceOf(f.g, OTHER_BLS) }),
    ).to.be.revertedWithCustomError(ch, "InvalidCertificateSignature");
    // Another payer's summary: the guarantee is not its outgoing payment.
    await expect(ch.disputeCredit(1, ETH, f.alice.address, f.listed)).to.be.revertedWithCustomError(
      ch,
      "GuaranteeNotOwed",
    );
    await time.increase((await f.vault.timings()).challengeWindow + 1n);
    await expect(ch.disputeCredit(1, ETH, f.bob.address, f.listed)).to.be.revertedWithCustomError(
      ch,
      "ChallengeWindowClosed",
    );
  });

  it("a veto ends the dispute: nothing is paid", async () => {
    const f = await loadFixture(misdirected);
    const ch = f.clearingHouse;
    await ch.connect(f.alice).disputeCredit(1, ETH, f.bob.address, f.listed);
    await ch.connect(f.guardian).vetoCycle(1);
    expect(await ch.openChallenges()).to.equal(0n);
    await time.increaseTo((await ch.getCycle(1)).answerDeadline + 1n);
    await expect(ch.payUnansweredCredit(1, f.leaf.guaranteeId)).to.be.revertedWithCustomError(
      ch,
      "CycleIsVetoed",
    );
  });
});
