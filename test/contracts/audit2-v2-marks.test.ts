/**
 * Second outside audit (docs/audit2-findings.md), the fixes of A2-M2, A2-I2 and A2-I1 as regression tests: each
 * attack the auditor's test showed working now fails.
 *
 *  A2-M2  A V2 guarantee a commit lists but leaves out of `nettedV2Ids` is consumed by an `Upheld` answer of
 *         its payer's dispute, or by anyone's proof that the cycle credits it (`Vault.markListed`): its seller
 *         cannot `remunerate` it after the cycle paid it. A veto undoes either mark.
 *  A2-I2  `remunerate` reads the pin before the registry: a pinned verdict pays while its trusted registry reverts.
 *  A2-I1  An answer to a dispute an earlier void closed reverts `DisputeNotOpen(…, Voided)`, not panic 0x11,
 *         also when a rotation after the deadline reopened the answer window.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { id as hashText, keccak256, parseEther } from "ethers";
import { ethers } from "hardhat";

import { publicKeyToEip2537 } from "../../sdk/bls";

import {
  ETH,
  OTHER_BLS,
  commitPlanned,
  creditProofOf,
  disputeAnswerOf,
  listedCreditProof,
  remunerateArgs,
  signedGuarantee,
  suretyFixture,
  v2Certificate,
  validatedV2Fixture,
  validatedV2Guarantee,
} from "./helpers";

const ONE = parseEther("1");
const NEW_KEY = publicKeyToEip2537(OTHER_BLS.publicKey);
const NONE = 0n;
const REMUNERATED = 1n;
const NETTED = 2n;
const UPHELD = 2n;
const VOIDED = 3n;

describe("audit2 A2-M2: a listed V2 guarantee left out of nettedV2Ids is consumed once", () => {
  /** alice → bob 2 ETH (validated V2) committed as cycle 1 with `nettedV2Ids = []`. */
  async function unmarkedFixture() {
    const f = await validatedV2Fixture();
    const all = [validatedV2Guarantee(f)];
    const { plan } = await commitPlanned(f, 1n, all, []);
    const leaf = {
      guaranteeId: f.cert.guaranteeId,
      payer: f.alice.address,
      recipient: f.bob.address,
      asset: ETH,
      amount: 2n * ONE,
      signatureHash: keccak256(f.cert.payerSignature),
    };
    return { ...f, all, plan, leaf, proof: listedCreditProof(plan, leaf) };
  }

  it("the Upheld answer marks the id netted: paid by the cycle, bob's remunerate reverts", async () => {
    const f = await loadFixture(unmarkedFixture);
    const ch = f.clearingHouse;
    expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(NONE);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await expect(
      ch
        .connect(f.operator)
        .answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf(f.all, f.alice.address, 0)),
    )
      .to.emit(ch, "DisputeResolved")
      .withArgs(1n, ETH, f.alice.address, 0n, UPHELD, f.cert.guaranteeId, 2n * ONE)
      .and.to.emit(f.vault, "GuaranteeNetted")
      .withArgs(f.cert.guaranteeId);
    expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(NETTED);
    await ch.connect(f.alice).payNetDebit(1, ETH, { value: 2n * ONE });
    await time.increaseTo((await ch.getCycle(1)).answerDeadline + 1n);
    const bobs = creditProofOf(f.plan, f.bob.address);
    await ch.claimNetCredit(1, ETH, f.bob.address, bobs.summary, bobs.proof);
    expect(await ch.payoutOf(ETH, f.bob.address)).to.equal(2n * ONE);
    await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert)))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeAlreadyConsumed")
      .withArgs(f.cert.guaranteeId, NETTED);
    expect(await f.vault.balanceOf(f.alice.address, ETH)).to.equal(10n * ONE);
  });

  it("an answer of an id the commit marked nets nothing again (no GuaranteeNettingSkipped)", async () => {
    const f = await loadFixture(validatedV2Fixture);
    const ch = f.clearingHouse;
    const all = [validatedV2Guarantee(f)];
    await commitPlanned(f, 1n, all, [f.cert.guaranteeId]);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await expect(
      ch
        .connect(f.operator)
        .answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf(all, f.alice.address, 0)),
    )
      .to.emit(ch, "DisputeResolved")
      .and.not.to.emit(f.vault, "GuaranteeNettingSkipped");
    expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(NETTED);
  });

  it("an Upheld V1 guarantee is not marked in the Vault", async () => {
    const f = await loadFixture(suretyFixture);
    const ch = f.clearingHouse;
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    const all = [await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE)];
    await commitPlanned(f, 1n, all);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await expect(
      ch
        .connect(f.operator)
        .answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf(all, f.alice.address, 0)),
    ).not.to.emit(f.vault, "GuaranteeNetted");
    expect(await f.vault.consumption(all[0].payable.guaranteeId)).to.equal(NONE);
  });

  it("markListed: anyone proves the credit from the commit on; bob's remunerate reverts", async () => {
    const f = await loadFixture(unmarkedFixture);
    // In the challenge window already: the seller cannot wait the payer's dispute out.
    await expect(f.vault.connect(f.carol).markListed(1n, f.cert.claims, f.leaf.signatureHash, f.proof))
      .to.emit(f.vault, "GuaranteeNetted")
      .withArgs(f.cert.guaranteeId);
    expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(NETTED);
    await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert)))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeAlreadyConsumed")
      .withArgs(f.cert.guaranteeId, NETTED);
    await expect(f.vault.markListed(1n, f.cert.claims, f.leaf.signatureHash, f.proof))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeAlreadyConsumed")
      .withArgs(f.cert.guaranteeId, NETTED);
  });

  it("markListed refuses a wrong signature hash, another cycle, V1 claims, and an id remunerated first", async () => {
    const f = await loadFixture(unmarkedFixture);
    await expect(f.vault.markListed(1n, f.cert.claims, keccak256("0x01"), f.proof))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeNotListed")
      .withArgs(f.cert.guaranteeId, 1n);
    await expect(f.vault.markListed(2n, f.cert.claims, f.leaf.signatureHash, f.proof))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeNotListed")
      .withArgs(f.cert.guaranteeId, 2n);
    const v1 = await signedGuarantee(f, f.alice, f.bob.address, 5n, ONE);
    await expect(f.vault.markListed(1n, v1.claims, f.leaf.signatureHash, f.proof))
      .to.be.revertedWithCustomError(f.vault, "NotV2Certificate")
      .withArgs(1n);
    // The seller front-runs: remunerated, the listing is answered `Removed` as before (skipped ids).
    await f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert));
    await expect(f.vault.markListed(1n, f.cert.claims, f.leaf.signatureHash, f.proof))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeAlreadyConsumed")
      .withArgs(f.cert.guaranteeId, REMUNERATED);
  });

  it("a veto undoes the mark: the vetoed cycle pays nothing, the guarantee is remunerable again", async () => {
    const f = await loadFixture(unmarkedFixture);
    await f.vault.markListed(1n, f.cert.claims, f.leaf.signatureHash, f.proof);
    await f.clearingHouse.connect(f.guardian).vetoCycle(1);
    expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(NONE);
    await expect(f.vault.markListed(1n, f.cert.claims, f.leaf.signatureHash, f.proof))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeNotListed")
      .withArgs(f.cert.guaranteeId, 1n);
    await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert))).to.changeEtherBalance(
      f.bob,
      2n * ONE,
    );
  });
});

describe("audit2 A2-I2: a pinned verdict pays while its trusted registry reverts", () => {
  it("remunerate reads the pin first", async () => {
    const f = await loadFixture(suretyFixture);
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    const registry = await (await ethers.getContractFactory("Audit2SwitchableRegistry")).deploy();
    const registryAddress = await registry.getAddress();
    await f.vault.connect(f.admin).setTrustedRegistry(registryAddress, true); // scheduled
    await time.increase(await f.vault.timelockDelay());
    await f.vault.connect(f.admin).setTrustedRegistry(registryAddress, true);
    const deadline = BigInt(await time.latest()) + 3600n;
    const policy = {
      registry: registryAddress,
      validator: f.validator.address,
      agentId: 3n,
      minScore: 50,
      jobHash: hashText("job"),
      tag: "ok",
      deadline,
    };
    const input = {
      chainId: f.chainId,
      vault: f.vaultAddress,
      user: f.alice.address,
      recipient: f.bob.address,
    };
    const pinned = v2Certificate({ ...input, reqId: 9n, amount: ONE, asset: ETH, policy });
    const unpinned = v2Certificate({ ...input, reqId: 10n, amount: ONE, asset: ETH, policy });
    await registry.setVerdict(90, "ok", deadline - 10n);
    await time.increaseTo(deadline + 1n);
    await expect(f.vault.pinVerdicts([pinned.claims])).to.emit(f.vault, "VerdictPinned");
    await registry.setBroken(true);
    // The registry stays trusted and reverts: the pin decides without it.
    expect(await f.vault.isTrustedRegistry(registryAddress)).to.equal(true);
    await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(pinned))).to.changeEtherBalance(
      f.bob,
      ONE,
    );
    // An unpinned verdict still needs the registry's answer.
    await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(unpinned))).to.be.revertedWith(
      "registry unavailable",
    );
  });
});

describe("audit2 A2-I1: an answer to a dispute a void closed is refused by name", () => {
  /** alice → bob 3 ETH and carol → bob 1 ETH; a rotation scheduled just before the commit. Bond 5 ETH. */
  async function fixture() {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.vault.connect(f.carol).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await f.vault.connect(f.admin).setOperatorKey(NEW_KEY); // routine rotation, scheduled
    const readyAt = BigInt(await time.latest()) + (await f.vault.timelockDelay());
    const all = [
      await signedGuarantee(f, f.alice, f.bob.address, 1n, 3n * ONE),
      await signedGuarantee(f, f.carol, f.bob.address, 2n, ONE),
    ];
    await commitPlanned(f, 1n, all);
    return { ...f, all, readyAt };
  }

  it("a rotation after the deadline reopens the window (a documented trade-off), not alice's voided game", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await ch.connect(f.carol).disputeGuarantee(1, ETH, 0);
    const cycle = await ch.getCycle(1);
    await time.increaseTo(cycle.answerDeadline + 1n);
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address)).to.emit(ch, "DebitVoided");
    await time.increaseTo(f.readyAt);
    await f.vault.connect(f.admin).setOperatorKey(NEW_KEY);
    // The reopened window: carol's late answer is accepted (docs/clearing.md "Operator key gaps").
    await expect(
      ch
        .connect(f.operator)
        .answerDispute(
          1,
          ETH,
          f.carol.address,
          0,
          disputeAnswerOf(f.all, f.carol.address, 0, { key: OTHER_BLS }),
        ),
    ).to.emit(ch, "DisputeResolved");
    // alice's position still reads Open, but her game was closed by the void.
    expect(await ch.disputeOf(1, ETH, f.alice.address, 0)).to.equal(1n);
    await expect(
      ch
        .connect(f.operator)
        .answerDispute(
          1,
          ETH,
          f.alice.address,
          0,
          disputeAnswerOf(f.all, f.alice.address, 0, { key: OTHER_BLS }),
        ),
    )
      .to.be.revertedWithCustomError(ch, "DisputeNotOpen")
      .withArgs(1n, ETH, f.alice.address, 0n, VOIDED);
    expect((await ch.debtOf(1, ETH, f.alice.address)).status).to.equal(6n); // DebtStatus.Voided
  });
});
