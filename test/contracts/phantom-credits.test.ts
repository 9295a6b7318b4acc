/**
 * Phantom credits (issue 25, the residual): an incoming guarantee in a recipient's tree that no payer's
 * outgoing tree lists. The summaries of an asset form a sum tree of their net credits, and a summary proves
 * only when its asset's credits add up to the cycle's committed total credit (contracts/lib/CreditCheck.sol
 * `isSummary`, docs/clearing.md "Phantom credits"). So a phantom needs a committed debit somewhere to back it:
 * its account disputes it (the bond pays), or its collateral and then the bond cover it; a late honest
 * creditor always finds its credit funded. A misdirected credit (a listed guarantee credited to another
 * account) is the recipient's to dispute (`disputeCredit`, test/contracts/credit-disputes.test.ts).
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { ZeroHash, concat, keccak256, parseEther, toBeHex, zeroPadValue } from "ethers";

import { guaranteeLeafOf } from "../../operator/clearing/commit-plan";
import { SummariesTree, summaryStruct, type DebitSummary } from "../../sdk/debit-tree";
import type { GuaranteeLeaf } from "../../sdk/guarantee-tree";
import { SIGNING_SCHEME_CODES } from "../../sdk/eip712";
import { ETH, buildCycle, signClaims, signedGuarantee, suretyFixture, transfer } from "./helpers";
import { type BuiltCycle, buildCycleOf, listedOf } from "./model/cycles";

const ONE = parseEther("1");

type Fixture = Awaited<ReturnType<typeof suretyFixture>>;

async function commit(f: Fixture, cycle: BuiltCycle) {
  await f.clearingHouse
    .connect(f.operator)
    .commitCycle(
      1,
      { root: cycle.root, guaranteesRoot: cycle.guaranteesRoot, debitsRoot: cycle.debitsRoot },
      cycle.totals,
      cycle.debtors,
      [],
    );
}

describe("Phantom credits (issue 25)", () => {
  /**
   * bob signed 3 ETH to alice; the operator credits mallory (outsider) 2 ETH "from" dave, in no outgoing
   * tree. dave has no collateral (an account the operator made up, or controls).
   */
  async function phantomFixture() {
    const f = await suretyFixture();
    await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 10n * ONE });
    const real = guaranteeLeafOf((await signedGuarantee(f, f.bob, f.alice.address, 1n, 3n * ONE)).payable);
    const phantom: GuaranteeLeaf = {
      guaranteeId: keccak256(ethers.toUtf8Bytes("phantom")),
      payer: f.dave.address,
      recipient: f.outsider.address,
      asset: ETH,
      amount: 2n * ONE,
      signatureHash: keccak256("0x01"),
    };
    const cycle = buildCycleOf(1n, [real, phantom], undefined, (l) => l.guaranteeId === phantom.guaranteeId);
    return { ...f, cycle };
  }

  async function claim(f: Fixture & { cycle: BuiltCycle }, who: string) {
    const c = f.cycle.creditProof(ETH, who);
    return f.clearingHouse.claimNetCredit(1, ETH, who, c.summary, c.proof);
  }

  it("a phantom no committed debit backs proves nothing: the summaries' credits exceed the total", async () => {
    const f = await loadFixture(phantomFixture);
    // The operator leaves dave's debit out (totals 3 = bob's debit): the tree's credits add up to 5.
    const cycle: BuiltCycle = {
      ...f.cycle,
      totals: [{ asset: ETH, totalDebit: 3n * ONE, totalCredit: 3n * ONE }],
      debtors: f.cycle.debtors.filter((d) => d.debtor === f.bob.address),
    };
    await commit(f, cycle);
    await f.clearingHouse.connect(f.bob).payNetDebit(1, ETH, { value: 3n * ONE });
    await time.increase((await f.vault.timings()).challengeWindow + 1n);
    // Before: mallory claimed her 2 ETH first and alice found 1 ETH for her 3 (CreditNotYetFunded).
    await expect(claim(f, f.outsider.address)).to.be.revertedWithCustomError(
      f.clearingHouse,
      "InvalidMerkleProof",
    );
    // Such a tree is garbage for the whole asset, like a made-up root: no summary of it proves (the honest
    // creditor's neither; the guardian vetoes such a commit, and a debtor's dispute of it is voided against
    // the bond, as no answer can reveal its summary).
    await expect(claim(f, f.alice.address)).to.be.revertedWithCustomError(
      f.clearingHouse,
      "InvalidMerkleProof",
    );
    expect(await f.clearingHouse.isCreditClaimed(1, ETH, f.outsider.address)).to.equal(false);
  });

  it("backed by a debit on an account without collateral: the bond covers it, every creditor is paid", async () => {
    const f = await loadFixture(phantomFixture);
    await commit(f, f.cycle); // dave owes 2 ETH; totals 5 = the tree's credits
    expect(f.cycle.debtors.map((d) => [d.debtor, d.amount])).to.deep.include([f.dave.address, 2n * ONE]);
    await f.clearingHouse.connect(f.bob).payNetDebit(1, ETH, { value: 3n * ONE });
    const c = await f.clearingHouse.getCycle(1);
    await time.increaseTo(c.paymentDeadline + 1n);
    // The phantom's creditor claims first: 2 of the 3 ETH funded so far.
    await claim(f, f.outsider.address);
    // dave's default: his collateral is empty, the bond funds the 2 ETH (before: a shortfall, alice short).
    await expect(f.clearingHouse.coverDefault(1, ETH, f.dave.address))
      .to.emit(f.clearingHouse, "DefaultFundedFromBond")
      .withArgs(1n, ETH, f.dave.address, 2n * ONE);
    await claim(f, f.alice.address);
    expect(await f.clearingHouse.payoutOf(ETH, f.alice.address)).to.equal(3n * ONE);
    expect(await f.clearingHouse.bondOf(ETH)).to.equal(8n * ONE);
    expect((await f.clearingHouse.getCycleAsset(1, ETH)).shortfall).to.equal(0n);
  });

  it("an account's collateral covers a phantom's debit first, then the bond", async () => {
    const f = await loadFixture(phantomFixture);
    await f.vault.connect(f.dave).deposit({ value: ONE }); // 1 of the 2 ETH
    await commit(f, f.cycle);
    await f.clearingHouse.connect(f.bob).payNetDebit(1, ETH, { value: 3n * ONE });
    await time.increaseTo((await f.clearingHouse.getCycle(1)).paymentDeadline + 1n);
    await expect(f.clearingHouse.coverDefault(1, ETH, f.dave.address))
      .to.emit(f.clearingHouse, "DefaultCovered")
      .withArgs(1n, ETH, f.dave.address, 2n * ONE, ONE)
      .and.to.emit(f.clearingHouse, "DefaultFundedFromBond")
      .withArgs(1n, ETH, f.dave.address, ONE);
    await claim(f, f.outsider.address);
    await claim(f, f.alice.address);
    expect(await f.clearingHouse.bondOf(ETH)).to.equal(9n * ONE);
  });

  it("an asset's top is listed once, as a clean address word: a second tree for the asset proves nothing", async () => {
    const f = await loadFixture(suretyFixture);
    await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
    const c = buildCycle(1, transfer(ETH, f.bob.address, f.alice.address, 3n * ONE));
    const side = (account: string, out: bigint, inc: bigint): DebitSummary => ({
      debtor: account,
      asset: ETH,
      sumRoot: out > 0n ? keccak256(ethers.toUtf8Bytes(`out ${account}`)) : ZeroHash,
      total: out,
      depth: 0,
      inRoot: inc > 0n ? keccak256(ethers.toUtf8Bytes(`in ${account}`)) : ZeroHash,
      inTotal: inc,
      inDepth: 0,
    });
    const honest = new SummariesTree([
      side(f.bob.address, 3n * ONE, 0n),
      side(f.alice.address, 0n, 3n * ONE),
    ]);
    const mallory = side(f.outsider.address, 0n, 3n * ONE);
    const second = new SummariesTree([mallory]); // a second ETH tree, also adding up to the total (3)
    const top = (t: SummariesTree) => [t.tops[0].hash, toBeHex(t.tops[0].credit, 32)];
    for (const assetWord of [
      zeroPadValue(ETH, 32), // the same asset twice: not strictly ascending
      toBeHex(1n << 160n, 32), // ETH with a dirty high bit
    ]) {
      const tops = [zeroPadValue(ETH, 32), ...top(honest), assetWord, ...top(second)];
      const snapshot = await ethers.provider.send("evm_snapshot", []);
      await f.clearingHouse
        .connect(f.operator)
        .commitCycle(
          1,
          { root: c.root, guaranteesRoot: c.root, debitsRoot: keccak256(concat(tops)) },
          c.totals,
          c.debtors,
          [],
        );
      await f.clearingHouse.connect(f.bob).payNetDebit(1, ETH, { value: 3n * ONE });
      await time.increase((await f.vault.timings()).challengeWindow * 2n + 1n);
      await expect(
        f.clearingHouse.claimNetCredit(1, ETH, f.outsider.address, summaryStruct(mallory), [
          toBeHex(0n, 32),
          ...tops,
        ]),
      ).to.be.revertedWithCustomError(f.clearingHouse, "InvalidMerkleProof");
      await ethers.provider.send("evm_revert", [snapshot]);
    }
  });

  it("a misdirected credit keeps every sum right; the recipient's credit dispute makes the bond pay it", async () => {
    const f = await loadFixture(suretyFixture);
    await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 10n * ONE });
    const g = await signedGuarantee(f, f.bob, f.alice.address, 1n, 3n * ONE);
    const real = guaranteeLeafOf(g.payable);
    // The operator credits bob's guarantee to mallory instead of alice: the summaries add up (3 = 3).
    const cycle = buildCycleOf(1n, [real], () => f.outsider.address);
    await commit(f, cycle);
    // alice has no summary in the cycle, but her guarantee is listed in bob's tree: she disputes her credit
    // (docs/clearing.md "Misdirected credits"); the operator cannot prove it in her incoming tree.
    const evidence = {
      claims: g.claims,
      certificate: signClaims(g.claims),
      scheme: SIGNING_SCHEME_CODES[g.scheme],
      signature: g.signature,
    };
    await f.clearingHouse
      .connect(f.alice)
      .disputeCredit(1, ETH, f.bob.address, listedOf(cycle, real, evidence));
    await f.clearingHouse.connect(f.bob).payNetDebit(1, ETH, { value: 3n * ONE });
    await time.increaseTo((await f.clearingHouse.getCycle(1)).answerDeadline + 1n);
    await f.clearingHouse.payUnansweredCredit(1, real.guaranteeId);
    await claim({ ...f, cycle }, f.outsider.address);
    expect(await f.clearingHouse.payoutOf(ETH, f.outsider.address)).to.equal(3n * ONE);
    // alice is paid once, from the bond; the guarantee is marked paid in the Vault.
    expect(await f.clearingHouse.payoutOf(ETH, f.alice.address)).to.equal(3n * ONE);
    expect(await f.clearingHouse.bondOf(ETH)).to.equal(7n * ONE);
    expect(await f.vault.consumption(real.guaranteeId)).to.equal(1n);
  });
});
