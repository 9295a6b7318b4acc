/**
 * Audit H-1 (regression): anyone may answer a payer's dispute, and `DisputeAnswer.finalization` is optional
 * evidence. A payer that finalized its V2 guarantee used to dispute it and answer itself (or front-run Core's
 * keeper) with `finalization = 0x`: "not validated", `Removed`, and Core's answer then reverted
 * `DisputeNotOpen`. Now a removal for "not validated" is the operator's call only (`RemovalNotAllowed`, the
 * dispute stays open); anyone still answers with the evidence that upholds it.
 */
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther, type Signer } from "ethers";

import { signFinalization, type FinalizationSigner } from "../../sdk/finalization";
import { ETH, commitPlanned, disputeAnswerOf, suretyFixture, unvalidatedV2, vaultDomain } from "./helpers";

const ONE = parseEther("1");
const OPEN = 1n;
const UPHELD = 2n;
const REMOVED = 4n;
const CHALLENGED = 4n;

describe("audit H-1: a payer cannot strip its Finalization from the answer to its dispute", () => {
  /** alice → bob 2 ETH, V2, no verdict; alice finalized it (Core holds the signature); cycle 1 nets it. */
  async function finalizedFixture() {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    const { cert, g } = await unvalidatedV2(f);
    const { plan } = await commitPlanned(f, 1n, [g], [cert.guaranteeId]);
    const finalization = await signFinalization(
      f.alice as Signer as unknown as FinalizationSigner,
      vaultDomain(f.chainId, f.vaultAddress),
      cert.guaranteeId,
    );
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    const honest = disputeAnswerOf([g], f.alice.address, 0, { finalization });
    return { ...f, cert, g, plan, finalization, honest, stripped: { ...honest, finalization: "0x" } };
  }

  it("the payer's answer without the finalization reverts RemovalNotAllowed; the dispute stays open", async () => {
    const f = await loadFixture(finalizedFixture);
    const ch = f.clearingHouse;
    await expect(ch.connect(f.alice).answerDispute(1, ETH, f.alice.address, 0, f.stripped))
      .to.be.revertedWithCustomError(ch, "RemovalNotAllowed")
      .withArgs(f.alice.address, f.cert.guaranteeId);
    // A bystander (a front-runner of Core's keeper) is refused the same way.
    await expect(
      ch.connect(f.carol).answerDispute(1, ETH, f.alice.address, 0, f.stripped),
    ).to.be.revertedWithCustomError(ch, "RemovalNotAllowed");
    expect(await ch.disputeOf(1, ETH, f.alice.address, 0)).to.equal(OPEN);
    expect((await ch.debtOf(1, ETH, f.alice.address)).status).to.equal(CHALLENGED);
    // Core's keeper's answer (with the finalization) still lands: upheld, the debit stands.
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.alice.address, 0, f.honest))
      .to.emit(ch, "DisputeResolved")
      .withArgs(1n, ETH, f.alice.address, 0n, UPHELD, f.cert.guaranteeId, 2n * ONE);
    expect((await ch.debtOf(1, ETH, f.alice.address)).amount).to.equal(2n * ONE);
    expect(await ch.deductedOf(1, ETH, f.bob.address)).to.equal(0n);
  });

  it("anyone may answer with the evidence: a bystander's answer with the finalization is upheld", async () => {
    const f = await loadFixture(finalizedFixture);
    const ch = f.clearingHouse;
    await expect(ch.connect(f.carol).answerDispute(1, ETH, f.alice.address, 0, f.honest))
      .to.emit(ch, "DisputeResolved")
      .withArgs(1n, ETH, f.alice.address, 0n, UPHELD, f.cert.guaranteeId, 2n * ONE);
  });

  it("the operator may still remove a V2 position that is not validated", async () => {
    const f = await loadFixture(finalizedFixture);
    const ch = f.clearingHouse;
    // (Without the finalization the verifier sees no verdict: the operator's answer removes it.)
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.alice.address, 0, f.stripped))
      .to.emit(ch, "DisputeResolved")
      .withArgs(1n, ETH, f.alice.address, 0n, REMOVED, f.cert.guaranteeId, 2n * ONE);
    expect(await ch.deductedOf(1, ETH, f.bob.address)).to.equal(2n * ONE);
  });
});
