/**
 * Third outside audit (docs/audit3-findings.md), A3-L2 fixed: a `Removed` answer of a listing as "not validated"
 * (the operator's call: the cycle takes the amount off the recipient's credit and pays the seller nothing for it)
 * records the removal in the Vault (`markRemoved`): a `Netted` mark carrying that cycle is undone
 * (`GuaranteeNettingUndone`), the listing can no longer be marked (`markListed` reverts `GuaranteeNotListed`), and
 * a V2 reserve is not released on a mark while its cycle has a dispute open. The seller then remunerates the
 * guarantee once the validator passes it. The inverted attack of audit3-marks.test.ts, and its variants.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { id as hashText, keccak256, parseEther, type Signer } from "ethers";

import { guaranteeLeafOf } from "../../operator/clearing/commit-plan";
import { SIGNING_SCHEME_CODES } from "../../sdk/eip712";
import { signFinalization, type FinalizationSigner } from "../../sdk/finalization";

import {
  ETH,
  commitPlanned,
  disputeAnswerOf,
  listedCreditProof,
  remunerateArgs,
  signClaims,
  suretyFixture,
  unvalidatedV2,
  vaultDomain,
} from "./helpers";
import { answerOf, buildCycleOf, key } from "./model/cycles";

const ONE = parseEther("1");
const NONE = 0n;
const NETTED = 2n;
const REMOVED = 4n;

describe("audit3 A3-L2 fixed: a removal undoes the mark of the listing it removes", () => {
  /** alice → bob 2 ETH, V2, no verdict yet (deadline in an hour), listed in cycle 1 (nettedV2Ids as given). */
  async function setUp(netted: "none" | "id") {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    const { cert, g } = await unvalidatedV2(f);
    const all = [g];
    const { plan } = await commitPlanned(f, 1n, all, netted === "id" ? [cert.guaranteeId] : []);
    const leaf = {
      guaranteeId: cert.guaranteeId,
      payer: f.alice.address,
      recipient: f.bob.address,
      asset: ETH,
      amount: 2n * ONE,
      signatureHash: keccak256(cert.payerSignature),
    };
    return { ...f, cert, g, all, plan, leaf, proof: listedCreditProof(plan, leaf) };
  }
  const unmarkedFixture = () => setUp("none");
  const markedByCommitFixture = () => setUp("id");
  type F = Awaited<ReturnType<typeof setUp>>;

  const mark = (f: F, cycleId = 1n) =>
    f.vault.connect(f.alice).markListed(cycleId, f.cert.claims, f.leaf.signatureHash, f.proof);

  /** alice disputes her position; the operator's answer removes it as not validated. */
  async function remove(f: F, cycleId = 1n) {
    const ch = f.clearingHouse;
    await ch.connect(f.alice).disputeGuarantee(cycleId, ETH, 0);
    return ch
      .connect(f.operator)
      .answerDispute(cycleId, ETH, f.alice.address, 0, disputeAnswerOf(f.all, f.alice.address, 0));
  }

  async function validate(f: F) {
    await f.validationRegistry
      .connect(f.bob)
      .validationRequest(f.validator.address, 3n, "", f.cert.requestHash);
    await f.validationRegistry
      .connect(f.validator)
      .validationResponse(f.cert.requestHash, 90, "", hashText("e"), "ok");
  }

  it("alice marks the listing, the removal undoes the mark, bob remunerates in full", async () => {
    const f = await loadFixture(unmarkedFixture);
    await expect(mark(f)).to.emit(f.vault, "GuaranteeNetted").withArgs(f.cert.guaranteeId);
    expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(NETTED);
    const removal = remove(f);
    await expect(removal)
      .to.emit(f.clearingHouse, "DisputeResolved")
      .withArgs(1n, ETH, f.alice.address, 0n, REMOVED, f.cert.guaranteeId, 2n * ONE)
      .and.to.emit(f.vault, "GuaranteeNettingUndone")
      .withArgs(f.cert.guaranteeId, 1n);
    const gas = (await (await (await removal).wait())!).gasUsed;
    console.log(
      `      answerDispute (V2 removed as not validated, first answer, undoes the mark): ${gas} gas`,
    );
    // The cycle pays bob nothing for it (his credit is deducted by the whole amount)...
    expect(await f.clearingHouse.deductedOf(1, ETH, f.bob.address)).to.equal(2n * ONE);
    expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(NONE);
    // ...and once the validator passes, the Vault does.
    await validate(f);
    await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert)))
      .to.emit(f.vault, "GuaranteeRemunerated")
      .withArgs(f.cert.guaranteeId, f.alice.address, f.bob.address, ETH, 2n * ONE);
    expect(await f.vault.balanceOf(f.alice.address, ETH)).to.equal(8n * ONE);
  });

  it("alice cannot mark the listing after its removal (GuaranteeNotListed), at any time", async () => {
    const f = await loadFixture(unmarkedFixture);
    await expect(remove(f)).to.not.emit(f.vault, "GuaranteeNettingUndone"); // nothing to undo
    await expect(mark(f))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeNotListed")
      .withArgs(f.cert.guaranteeId, 1n);
    const c = await f.clearingHouse.getCycle(1);
    await time.increaseTo(c.doubleListingDeadline + 1n);
    await expect(mark(f)).to.be.revertedWithCustomError(f.vault, "GuaranteeNotListed");
    await validate(f);
    await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert))).to.emit(
      f.vault,
      "GuaranteeRemunerated",
    );
  });

  it("the commit's own mark of the not-validated id (nettedV2Ids) is undone the same way", async () => {
    const f = await loadFixture(markedByCommitFixture);
    expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(NETTED);
    await expect(remove(f)).to.emit(f.vault, "GuaranteeNettingUndone").withArgs(f.cert.guaranteeId, 1n);
    await validate(f);
    await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert))).to.emit(
      f.vault,
      "GuaranteeRemunerated",
    );
  });

  it("a mark carrying another cycle stays: that cycle still pays bob", async () => {
    const f = await loadFixture(unmarkedFixture);
    // The same listing again in cycle 2 (a rogue commit), marked there; cycle 1's listing is removed.
    const { plan: c2 } = await commitPlanned(f, 2n, f.all);
    await f.vault
      .connect(f.alice)
      .markListed(2n, f.cert.claims, f.leaf.signatureHash, listedCreditProof(c2, f.leaf));
    await expect(remove(f, 1n)).to.not.emit(f.vault, "GuaranteeNettingUndone");
    expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(NETTED);
    await expect(mark(f, 1n)).to.be.revertedWithCustomError(f.vault, "GuaranteeNotListed");
    await validate(f);
    await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert)))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeAlreadyConsumed")
      .withArgs(f.cert.guaranteeId, NETTED);
  });

  it("a V2 reserve is not released on the mark while the cycle has a dispute open; bob is paid from it", async () => {
    const f = await loadFixture(unmarkedFixture);
    await f.vault.connect(f.bob).registerReserve(...remunerateArgs(f.cert));
    await mark(f);
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    const c = await f.clearingHouse.getCycle(1);
    await time.increaseTo(c.challengeDeadline + 1n); // past the veto window, the answer still to come
    await expect(f.vault.connect(f.alice).releaseReserve(f.cert.guaranteeId)).to.be.revertedWithCustomError(
      f.vault,
      "ReserveStillActive",
    );
    await f.clearingHouse
      .connect(f.operator)
      .answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf(f.all, f.alice.address, 0));
    await expect(f.vault.connect(f.alice).releaseReserve(f.cert.guaranteeId)).to.be.revertedWithCustomError(
      f.vault,
      "ReserveStillActive",
    );
    // The reserve still holds alice's 2 ETH for bob.
    expect((await f.vault.reserveOf(f.cert.guaranteeId)).amount).to.equal(2n * ONE);
    await validate(f);
    await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert)))
      .to.emit(f.vault, "GuaranteeRemunerated")
      .withArgs(f.cert.guaranteeId, f.alice.address, f.bob.address, ETH, 2n * ONE);
  });

  it("control: with no dispute open, a settled mark still releases the reserve", async () => {
    const f = await loadFixture(unmarkedFixture);
    await f.vault.connect(f.bob).registerReserve(...remunerateArgs(f.cert));
    await mark(f);
    const c = await f.clearingHouse.getCycle(1);
    await expect(f.vault.connect(f.alice).releaseReserve(f.cert.guaranteeId)).to.be.revertedWithCustomError(
      f.vault,
      "ReserveStillActive",
    );
    await time.increaseTo(c.challengeDeadline + 1n);
    const release = f.vault.connect(f.alice).releaseReserve(f.cert.guaranteeId);
    await expect(release).to.emit(f.vault, "ReserveReleased");
    console.log(`      releaseReserve (V2, netted for good): ${(await (await release).wait())!.gasUsed} gas`);
  });

  it("a concession leaves the mark: the bond pays the cycle and bob is credited", async () => {
    const f = await loadFixture(unmarkedFixture);
    await mark(f);
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await expect(
      f.clearingHouse
        .connect(f.operator)
        .answerDispute(
          1,
          ETH,
          f.alice.address,
          0,
          disputeAnswerOf(f.all, f.alice.address, 0, { concede: true }),
        ),
    ).to.not.emit(f.vault, "GuaranteeNettingUndone");
    expect(await f.clearingHouse.deductedOf(1, ETH, f.bob.address)).to.equal(0n);
    expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(NETTED);
  });

  it("a listing of the id upheld in the same cycle keeps the mark when its duplicate is removed", async () => {
    // A rogue cycle lists alice's payer-finalized guarantee twice. The first position is upheld with her
    // Finalization (the answer marks the id); the operator removes the second as not validated (no
    // Finalization): the cycle still pays bob once, so the mark must stay.
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    const { cert, g } = await unvalidatedV2(f);
    const leaf = guaranteeLeafOf(g.payable);
    const built = buildCycleOf(1n, [leaf, leaf]);
    const ch = f.clearingHouse;
    await ch
      .connect(f.operator)
      .commitCycle(
        1n,
        { root: built.root, guaranteesRoot: built.guaranteesRoot, debitsRoot: built.debitsRoot },
        built.totals,
        built.debtors,
        [],
      );
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 1);
    const finalization = await signFinalization(
      f.alice as Signer as unknown as FinalizationSigner,
      vaultDomain(f.chainId, f.vaultAddress),
      cert.guaranteeId,
    );
    const tree = built.trees.get(key(f.alice.address, ETH))!;
    const evidence = {
      claims: g.claims,
      certificate: signClaims(g.claims),
      scheme: SIGNING_SCHEME_CODES[g.scheme],
      signature: g.signature,
    };
    await expect(
      ch.answerDispute(1, ETH, f.alice.address, 0, answerOf(built, tree, 0, { ...evidence, finalization })),
    ).to.emit(f.vault, "GuaranteeNetted");
    await expect(
      ch.connect(f.operator).answerDispute(1, ETH, f.alice.address, 1, answerOf(built, tree, 1, evidence)),
    )
      .to.emit(ch, "DisputeResolved")
      .withArgs(1n, ETH, f.alice.address, 1n, REMOVED, cert.guaranteeId, 2n * ONE)
      .and.not.to.emit(f.vault, "GuaranteeNettingUndone");
    expect(await f.vault.consumption(cert.guaranteeId)).to.equal(NETTED);
  });

  it("only the ClearingHouse records a removal (every role and party refused)", async () => {
    const f = await loadFixture(unmarkedFixture);
    await mark(f);
    for (const who of [f.alice, f.bob, f.operator, f.guardian, f.admin, f.outsider]) {
      await expect(f.vault.connect(who).markRemoved(1n, f.cert.guaranteeId))
        .to.be.revertedWithCustomError(f.vault, "NotClearingHouse")
        .withArgs(who.address);
    }
    // Nobody but the operator removes as "not validated" (audit H-1): bob cannot strip his own listing.
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await expect(
      f.clearingHouse
        .connect(f.bob)
        .answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf(f.all, f.alice.address, 0)),
    ).to.be.revertedWithCustomError(f.clearingHouse, "RemovalNotAllowed");
    expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(NETTED);
  });
});
