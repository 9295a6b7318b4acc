/**
 * Seller's V1 reserve (Vault.registerReserve with a V1 certificate, releaseListedReserve, collectReserve;
 * issue 17, finding 5): a registered V1 certificate keeps its amount of the payer's collateral until Core's
 * clearing of the guarantee is shown on chain (a commit marks it netted, or its leaf is proven in a settled
 * cycle's guarantees root), or, if Core never clears it, the seller collects it from the reserve. Nothing is
 * paid twice: each way consumes the guarantee id.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { keccak256, parseEther } from "ethers";

import type { GuaranteeClaimsV1 } from "../../sdk/claims";
import { encodeCertificateClaims } from "../../sdk/certificate";
import { SIGNING_SCHEME_CODES, signGuarantee } from "../../sdk/eip712";
import { guaranteeId as sdkGuaranteeId } from "../../sdk/ids";
import {
  NO_CREDIT_PROOF,
  buildDebtorTree,
  creditProofOf,
  sumTreeProof,
  summaryStruct,
} from "../../sdk/debit-tree";
import type { GuaranteeLeaf } from "../../sdk/guarantee-tree";
import { answerOf, buildCycleOf, key } from "./model/cycles";
import { buildCommitPlan, guaranteeLeafOf, toCommitCycleCall } from "../../operator/clearing/commit-plan";
import { netCycle } from "../../operator/clearing/netting";
import {
  ETH,
  OTHER_BLS,
  certificateDomain,
  encodeClaims,
  planCycle,
  signClaims,
  suretyFixture,
  type ClaimFields,
  type SignedTestGuarantee,
} from "./helpers";

const ONE = parseEther("1");
const NONE = 0n;
const REMUNERATED = 1n;

/** Where `leaf` sits in its recipient's incoming tree of a planned cycle (`releaseListedReserve`'s proof). */
function creditProof(plan: ReturnType<typeof planCycle>, leaf: GuaranteeLeaf) {
  const leaves: GuaranteeLeaf[] = [...plan.guaranteeTree.entries()].map(([, v]) => ({
    guaranteeId: v[0],
    payer: v[1],
    recipient: v[2],
    asset: v[3],
    amount: BigInt(v[4]),
    signatureHash: v[5],
  }));
  const recipient = buildDebtorTree(leaves, leaf.recipient, leaf.asset);
  const proof = recipient && creditProofOf(plan.debitTrees, recipient, leaf.guaranteeId);
  if (!proof) throw new Error("not credited");
  return proof;
}
const NETTED = 2n;

async function fixture() {
  const f = await suretyFixture();
  await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
  const t = await f.vault.timings();
  const deployment = { chainId: f.chainId, vault: f.vaultAddress };
  const domain = { name: "Surety", version: "1", chainId: f.chainId, verifyingContract: f.vaultAddress };
  /** A V1 certificate of alice → bob issued now (Core's timestamp = chain time), with alice's signature. */
  const issue = async (reqId: bigint, amount = 4n * ONE, timestamp?: number) => {
    const claims: GuaranteeClaimsV1 = {
      version: 1,
      user: f.alice.address,
      recipient: f.bob.address,
      reqId,
      amount,
      asset: ETH,
      timestamp: timestamp ?? (await time.latest()),
    };
    const signature = await signGuarantee(f.alice, domain, claims, "eip712");
    const encoded = encodeCertificateClaims(claims, deployment);
    const guarantee: SignedTestGuarantee = {
      payable: {
        guaranteeId: sdkGuaranteeId(deployment, f.alice.address, reqId),
        version: 1,
        user: f.alice.address,
        recipient: f.bob.address,
        asset: ETH,
        amount,
        signature,
      },
      claims: encoded,
      scheme: "eip712",
      signature,
    };
    const args = [encoded, signClaims(encoded), SIGNING_SCHEME_CODES.eip712, signature] as const;
    const registerBy = BigInt(claims.timestamp) + t.cycleLength + t.commitDelay + t.confirmationLag;
    return {
      id: guarantee.payable.guaranteeId,
      guarantee,
      args,
      registerBy,
      timestamp: claims.timestamp,
      collectableAt: registerBy + 2n * t.challengeWindow,
    };
  };
  const cert = await issue(1n);
  return { ...f, t, issue, cert };
}

async function registeredFixture() {
  const f = await fixture();
  await f.vault.connect(f.bob).registerReserve(...f.cert.args);
  return f;
}

describe("Seller's V1 reserve (issue 17, finding 5)", () => {
  it("finding 5: without a reserve the payer withdraws right after being served and the seller has no on-chain right", async () => {
    const f = await loadFixture(fixture);
    await f.vault.connect(f.alice).requestWithdrawal(ETH, 10n * ONE);
    await time.increase(f.t.withdrawalGracePeriod);
    await f.vault.connect(f.alice).finalizeWithdrawal(ETH); // takes everything
    expect(await f.vault.balanceOf(f.alice.address, ETH)).to.equal(0n);
    // Too late to register now: the seller had no on-chain right.
    await expect(f.vault.registerReserve(...f.cert.args))
      .to.be.revertedWithCustomError(f.vault, "ReserveAfterDeadline")
      .withArgs(f.cert.registerBy);
  });

  it("with a reserve: the withdrawal leaves the amount behind, Core never commits, the seller collects", async () => {
    const f = await loadFixture(fixture);
    await expect(f.vault.connect(f.bob).registerReserve(...f.cert.args))
      .to.emit(f.vault, "V1ReserveRegistered")
      .withArgs(f.cert.id, f.alice.address, f.bob.address, ETH, 4n * ONE, f.cert.collectableAt);
    expect(await f.vault.v1ReserveRecipient(f.cert.id)).to.equal(f.bob.address);
    const reserve = await f.vault.reserveOf(f.cert.id);
    expect([reserve.user, reserve.asset, reserve.amount, reserve.expiresAt]).to.deep.equal([
      f.alice.address,
      ETH,
      4n * ONE,
      f.cert.collectableAt,
    ]);
    expect(await f.vault.freeCollateralOf(f.alice.address, ETH)).to.equal(6n * ONE);
    await expect(f.vault.collectReserve(f.cert.id))
      .to.be.revertedWithCustomError(f.vault, "ReserveNotYetCollectable")
      .withArgs(f.cert.id, f.cert.collectableAt);

    // Served, the payer asks for everything; Core stops.
    await f.vault.connect(f.alice).requestWithdrawal(ETH, 10n * ONE);
    await time.increase(f.t.withdrawalGracePeriod);
    await expect(f.vault.connect(f.alice).finalizeWithdrawal(ETH))
      .to.emit(f.vault, "WithdrawalFinalized")
      .withArgs(1n, f.alice.address, ETH, 10n * ONE, 6n * ONE);
    // A V1 reserve does not expire back to the payer.
    await expect(f.vault.releaseReserve(f.cert.id))
      .to.be.revertedWithCustomError(f.vault, "ReserveStillActive")
      .withArgs(f.cert.id, f.cert.collectableAt);

    const tx = f.vault.connect(f.outsider).collectReserve(f.cert.id);
    await expect(tx)
      .to.emit(f.vault, "ReserveReleased")
      .withArgs(f.cert.id, f.alice.address, ETH, 4n * ONE)
      .and.to.emit(f.vault, "GuaranteeRemunerated")
      .withArgs(f.cert.id, f.alice.address, f.bob.address, ETH, 4n * ONE);
    await expect(tx).to.changeEtherBalance(f.bob, 4n * ONE);
    expect(await f.vault.consumption(f.cert.id)).to.equal(REMUNERATED);
    expect(await f.vault.v1ReserveRecipient(f.cert.id)).to.equal(ethers.ZeroAddress);
    expect(await f.vault.balanceOf(f.alice.address, ETH)).to.equal(0n);
    await expect(f.vault.collectReserve(f.cert.id))
      .to.be.revertedWithCustomError(f.vault, "ReserveNotFound")
      .withArgs(f.cert.id);
    await expect(f.vault.registerReserve(...f.cert.args))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeAlreadyConsumed")
      .withArgs(f.cert.id, REMUNERATED);

    // Core comes back late and lists it: the commit skips the id, and its listing cannot answer a
    // challenge of the payer's debit (it is Remunerated), so the payer is not charged twice.
    const plan = planCycle(1n, [f.cert.guarantee]);
    await expect(
      f.clearingHouse
        .connect(f.operator)
        .commitCycle(...toCommitCycleCall({ ...plan.args, nettedV2Ids: [f.cert.id] })),
    )
      .to.emit(f.vault, "GuaranteeNettingSkipped")
      .withArgs(f.cert.id, REMUNERATED);
  });

  it("honest path, Core marks the reserved id in its commit: the mark alone releases nothing, the credit proof does", async () => {
    const f = await loadFixture(registeredFixture);
    const plan = planCycle(1n, [f.cert.guarantee]);
    await expect(
      f.clearingHouse
        .connect(f.operator)
        .commitCycle(...toCommitCycleCall({ ...plan.args, nettedV2Ids: [f.cert.id] })),
    )
      .to.emit(f.vault, "GuaranteeNetted")
      .withArgs(f.cert.id);
    expect(await f.vault.consumption(f.cert.id)).to.equal(NETTED);
    const cycle = await f.clearingHouse.getCycle(1n);
    await time.increaseTo(cycle.challengeDeadline + 1n);
    // Issue 25, item 5: a V1 reserve ends only when its guarantee is proven credited to its recipient.
    await expect(f.vault.releaseReserve(f.cert.id))
      .to.be.revertedWithCustomError(f.vault, "ReserveStillActive")
      .withArgs(f.cert.id, f.cert.collectableAt);
    const leaf = guaranteeLeafOf(f.cert.guarantee.payable);
    await expect(f.vault.releaseListedReserve(f.cert.id, 1n, leaf.signatureHash, creditProof(plan, leaf)))
      .to.emit(f.vault, "ReserveReleased")
      .withArgs(f.cert.id, f.alice.address, ETH, 4n * ONE);
    // The payer's collateral now answers only for the cycle's obligation: paid once, through clearing.
    expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(4n * ONE);
    expect(await f.vault.freeCollateralOf(f.alice.address, ETH)).to.equal(6n * ONE);
    expect(await f.vault.v1ReserveRecipient(f.cert.id)).to.equal(ethers.ZeroAddress);
  });

  it("issue 25 item 5: a reserved V1 guarantee credited to another creditor releases nothing and pays the seller", async () => {
    const f = await loadFixture(registeredFixture);
    const thief = f.outsider.address;
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 10n * ONE });
    // The operator lists alice's reserved guarantee (her signature is public in bob's registerReserve
    // calldata) in her outgoing tree, credits it to itself, and marks the id netted.
    const leaf = guaranteeLeafOf(f.cert.guarantee.payable);
    const cycle = buildCycleOf(1n, [leaf], () => thief);
    await f.clearingHouse
      .connect(f.operator)
      .commitCycle(
        1,
        { root: cycle.root, guaranteesRoot: cycle.guaranteesRoot, debitsRoot: cycle.debitsRoot },
        cycle.totals,
        cycle.debtors,
        [f.cert.id],
      );
    const tree = cycle.trees.get(key(f.alice.address, ETH))!;
    const thiefTree = cycle.trees.get(key(thief, ETH))!;
    const forged = {
      summary: summaryStruct(thiefTree.summary),
      summaryProof: cycle.summaryProof(thiefTree.summary),
      index: 0n,
      path: sumTreeProof(thiefTree.incoming, 0).path,
    };
    // alice disputes; her own signature no longer answers it: the listing is not credited to bob.
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    const g = f.cert.guarantee;
    const evidence = {
      claims: g.claims,
      certificate: signClaims(g.claims),
      scheme: SIGNING_SCHEME_CODES[g.scheme],
      signature: g.signature,
    };
    await expect(
      f.clearingHouse.answerDispute(1, ETH, f.alice.address, 0, {
        ...answerOf(cycle, tree, 0, evidence),
        credit: forged,
      }),
    )
      .to.be.revertedWithCustomError(f.clearingHouse, "NotCreditedToRecipient")
      .withArgs(1n, f.bob.address, f.cert.id);
    // The operator can only concede: alice's debit comes off against the bond.
    await f.clearingHouse
      .connect(f.operator)
      .answerDispute(1, ETH, f.alice.address, 0, answerOf(cycle, tree, 0));
    expect((await f.clearingHouse.debtOf(1, ETH, f.alice.address)).amount).to.equal(0n);
    const settled = await f.clearingHouse.getCycle(1n);
    await time.increaseTo(settled.challengeDeadline + 1n);
    // Neither the listing nor the netting mark frees bob's reserve.
    await expect(f.vault.releaseListedReserve(f.cert.id, 1n, leaf.signatureHash, forged))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeNotListed")
      .withArgs(f.cert.id, 1n);
    await expect(f.vault.releaseReserve(f.cert.id)).to.be.revertedWithCustomError(
      f.vault,
      "ReserveStillActive",
    );
    // The thief's credit is the bond's money (its own fault), not alice's.
    const c = cycle.creditProof(ETH, thief);
    await f.clearingHouse.claimNetCredit(1, ETH, thief, c.summary, c.proof);
    expect(await f.clearingHouse.payoutOf(ETH, thief)).to.equal(4n * ONE);
    expect(await f.clearingHouse.bondOf(ETH)).to.equal(6n * ONE);
    // bob collects his reserve: alice pays what she signed once, to its recipient.
    await time.increaseTo(f.cert.collectableAt);
    await expect(f.vault.collectReserve(f.cert.id)).to.changeEtherBalance(f.bob, 4n * ONE);
    expect(await f.vault.balanceOf(f.alice.address, ETH)).to.equal(6n * ONE);
    expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(0n);
  });

  it("honest path, Core lists it without marking: a proof of the leaf in the settled cycle releases the reserve", async () => {
    const f = await loadFixture(registeredFixture);
    const other = await f.issue(2n, ONE);
    const plan = planCycle(1n, [f.cert.guarantee, other.guarantee]);
    expect(plan.args.nettedV2Ids).to.deep.equal([]); // Core lists V2 ids only
    await f.clearingHouse.connect(f.operator).commitCycle(...toCommitCycleCall(plan.args));
    const leaf = guaranteeLeafOf(f.cert.guarantee.payable);
    const proof = creditProof(plan, leaf);
    const cycle = await f.clearingHouse.getCycle(1n);
    await expect(f.vault.releaseListedReserve(f.cert.id, 1n, leaf.signatureHash, proof))
      .to.be.revertedWithCustomError(f.vault, "CycleNotSettled")
      .withArgs(1n, cycle.challengeDeadline);
    await time.increaseTo(cycle.challengeDeadline + 1n);
    await expect(f.vault.releaseListedReserve(f.cert.id, 1n, keccak256("0x01"), proof))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeNotListed")
      .withArgs(f.cert.id, 1n);
    await expect(f.vault.releaseListedReserve(f.cert.id, 2n, leaf.signatureHash, proof))
      .to.be.revertedWithCustomError(f.vault, "CycleNotSettled")
      .withArgs(2n, 0n);
    await expect(f.vault.releaseListedReserve(other.id, 1n, leaf.signatureHash, proof))
      .to.be.revertedWithCustomError(f.vault, "ReserveNotFound")
      .withArgs(other.id);
    await expect(f.vault.connect(f.alice).releaseListedReserve(f.cert.id, 1n, leaf.signatureHash, proof))
      .to.emit(f.vault, "GuaranteeNetted")
      .withArgs(f.cert.id)
      .and.to.emit(f.vault, "ReserveReleased")
      .withArgs(f.cert.id, f.alice.address, ETH, 4n * ONE);
    expect(await f.vault.consumption(f.cert.id)).to.equal(NETTED);
    await time.increaseTo(f.cert.collectableAt);
    await expect(f.vault.collectReserve(f.cert.id))
      .to.be.revertedWithCustomError(f.vault, "ReserveNotFound")
      .withArgs(f.cert.id);
    await expect(f.vault.registerReserve(...f.cert.args))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeAlreadyConsumed")
      .withArgs(f.cert.id, NETTED);
  });

  it("Core no longer lists reserved V1 ids (≈ 24k gas each): neither side re-registers, collects twice or releases early", async () => {
    const f = await loadFixture(registeredFixture);
    const payables = [f.cert.guarantee.payable];
    const plan = buildCommitPlan(netCycle(1n, payables, new Set([f.cert.id.toLowerCase()])), payables)!;
    expect(plan.args.nettedV2Ids).to.deep.equal([]);
    await f.clearingHouse.connect(f.operator).commitCycle(...toCommitCycleCall(plan.args));
    expect(await f.vault.consumption(f.cert.id)).to.equal(NONE);
    // While the cycle stands: the seller cannot register the guarantee again, nor collect early; the payer
    // cannot take its reserve back.
    await expect(f.vault.connect(f.bob).registerReserve(...f.cert.args))
      .to.be.revertedWithCustomError(f.vault, "ReserveAlreadyRegistered")
      .withArgs(f.cert.id);
    await expect(f.vault.connect(f.bob).collectReserve(f.cert.id))
      .to.be.revertedWithCustomError(f.vault, "ReserveNotYetCollectable")
      .withArgs(f.cert.id, f.cert.collectableAt);
    await expect(f.vault.connect(f.alice).releaseReserve(f.cert.id))
      .to.be.revertedWithCustomError(f.vault, "ReserveStillActive")
      .withArgs(f.cert.id, f.cert.collectableAt);
    await f.clearingHouse.connect(f.alice).payNetDebit(1n, ETH, { value: 4n * ONE });
    const cycle = await f.clearingHouse.getCycle(1n);
    await time.increaseTo(cycle.challengeDeadline + 1n);
    // The credit proof releases it and marks it netted (the mark the commit used to make).
    const leaf = guaranteeLeafOf(f.cert.guarantee.payable);
    await expect(
      f.vault
        .connect(f.alice)
        .releaseListedReserve(f.cert.id, 1n, leaf.signatureHash, creditProof(plan, leaf)),
    )
      .to.emit(f.vault, "GuaranteeNetted")
      .withArgs(f.cert.id);
    expect(await f.vault.consumption(f.cert.id)).to.equal(NETTED);
    await expect(f.vault.connect(f.bob).registerReserve(...f.cert.args))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeAlreadyConsumed")
      .withArgs(f.cert.id, NETTED);
    // The seller is paid once, by the cycle; its reserve is gone.
    const bob = plan.debitTrees.summaries.find((x) => x.debtor === f.bob.address)!;
    await f.clearingHouse.claimNetCredit(
      1n,
      ETH,
      f.bob.address,
      summaryStruct(bob),
      plan.debitTrees.tree.proof(bob),
    );
    expect(await f.clearingHouse.payoutOf(ETH, f.bob.address)).to.equal(4n * ONE);
    await time.increaseTo(f.cert.collectableAt);
    await expect(f.vault.connect(f.bob).collectReserve(f.cert.id))
      .to.be.revertedWithCustomError(f.vault, "ReserveNotFound")
      .withArgs(f.cert.id);
    // The payer paid the cycle (4 ETH sent) and nothing else: her collateral is whole and free again.
    expect(await f.vault.freeCollateralOf(f.alice.address, ETH)).to.equal(10n * ONE);
  });

  it("a vetoed cycle proves nothing: the reserve stays and the seller collects", async () => {
    const f = await loadFixture(registeredFixture);
    const plan = planCycle(1n, [f.cert.guarantee]);
    await f.clearingHouse.connect(f.operator).commitCycle(...toCommitCycleCall(plan.args));
    await f.clearingHouse.connect(f.guardian).vetoCycle(1n);
    const leaf = guaranteeLeafOf(f.cert.guarantee.payable);
    const cycle = await f.clearingHouse.getCycle(1n);
    await time.increaseTo(cycle.challengeDeadline + 1n);
    await expect(f.vault.releaseListedReserve(f.cert.id, 1n, leaf.signatureHash, creditProof(plan, leaf)))
      .to.be.revertedWithCustomError(f.vault, "CycleNotSettled")
      .withArgs(1n, cycle.challengeDeadline);
    await time.increaseTo(f.cert.collectableAt);
    await expect(f.vault.collectReserve(f.cert.id)).to.changeEtherBalance(f.bob, 4n * ONE);
  });

  describe("reverts", () => {
    it("registration: too late, twice, short collateral", async () => {
      const f = await loadFixture(fixture);
      await f.vault.registerReserve(...f.cert.args);
      await expect(f.vault.registerReserve(...f.cert.args))
        .to.be.revertedWithCustomError(f.vault, "ReserveAlreadyRegistered")
        .withArgs(f.cert.id);
      const big = await f.issue(3n, 7n * ONE);
      await expect(f.vault.registerReserve(...big.args))
        .to.be.revertedWithCustomError(f.vault, "InsufficientFreeCollateral")
        .withArgs(f.alice.address, ETH, 6n * ONE, 7n * ONE);
      const old = await f.issue(5n, ONE, (await time.latest()) - 200);
      await expect(f.vault.registerReserve(...old.args))
        .to.be.revertedWithCustomError(f.vault, "ReserveAfterDeadline")
        .withArgs(old.registerBy);
    });

    it("registration: the payer's signature, Core's certificate, domain, id, key", async () => {
      const f = await loadFixture(fixture);
      const [claims, signature, scheme] = f.cert.args;
      await expect(f.vault.registerReserve(claims, signature, scheme, "0x"))
        .to.be.revertedWithCustomError(f.vault, "InvalidPayerSignature")
        .withArgs(f.alice.address);
      await expect(
        f.vault.registerReserve(claims, signClaims(claims, OTHER_BLS), scheme, f.cert.args[3]),
      ).to.be.revertedWithCustomError(f.vault, "InvalidCertificateSignature");
      const fields: ClaimFields = {
        version: 1n,
        domain: certificateDomain(f.chainId, f.vaultAddress),
        guaranteeId: f.cert.id,
        user: f.alice.address,
        recipient: f.bob.address,
        reqId: 1n,
        amount: 4n * ONE,
        asset: ETH,
        timestamp: BigInt(f.cert.timestamp),
        policy: "0x",
      };
      expect(encodeClaims(fields)).to.equal(claims);
      const otherDomain = encodeClaims({ ...fields, domain: keccak256("0x02") });
      await expect(
        f.vault.registerReserve(otherDomain, signClaims(otherDomain), scheme, f.cert.args[3]),
      ).to.be.revertedWithCustomError(f.vault, "CertificateDomainMismatch");
      const otherId = encodeClaims({ ...fields, guaranteeId: keccak256("0x03") });
      await expect(f.vault.registerReserve(otherId, signClaims(otherId), scheme, f.cert.args[3]))
        .to.be.revertedWithCustomError(f.vault, "GuaranteeIdMismatch")
        .withArgs(f.cert.id, keccak256("0x03"));
      await f.vault.connect(f.admin).revokeOperatorKey();
      await expect(f.vault.registerReserve(...f.cert.args)).to.be.revertedWithCustomError(
        f.vault,
        "OperatorKeyNotSet",
      );
    });

    it("release and collection of what is not a V1 reserve", async () => {
      const f = await loadFixture(fixture);
      await expect(f.vault.collectReserve(f.cert.id))
        .to.be.revertedWithCustomError(f.vault, "ReserveNotFound")
        .withArgs(f.cert.id);
      await expect(f.vault.releaseListedReserve(f.cert.id, 1n, keccak256("0x01"), NO_CREDIT_PROOF))
        .to.be.revertedWithCustomError(f.vault, "ReserveNotFound")
        .withArgs(f.cert.id);
      expect(await f.vault.consumption(f.cert.id)).to.equal(NONE);
    });
  });
});
