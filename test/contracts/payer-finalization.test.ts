/**
 * A payer-finalized V2 guarantee (docs/clearing.md "Payer-finalized V2 guarantees"): the payer finalized it
 * off chain without the validator's verdict (`POST /core/guarantees/{id}/finalize`) by signing EIP-712
 * `Finalization(bytes32 guaranteeId)` (sdk/finalization.ts). An answer to its payer's dispute carries that
 * signature in place of a verdict and is upheld; without it (or with anyone else's, or of another id) the
 * guarantee is removed as before.
 */
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { id as hashText, parseEther, type Signer } from "ethers";
import { ethers } from "hardhat";

import { signFinalization, type FinalizationSigner } from "../../sdk/finalization";
import {
  ETH,
  commitPlanned,
  disputeAnswerOf,
  signClaims,
  suretyFixture,
  unvalidatedV2,
  vaultDomain,
} from "./helpers";

const ONE = parseEther("1");
const DISPUTE = { upheld: 2n, removed: 4n };

describe("Payer-finalized V2 guarantees in disputes", () => {
  /** alice → bob 2 ETH, V2, no verdict (bob never asked the validator); committed in cycle 1. */
  async function finalizedFixture() {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    const { cert, g } = await unvalidatedV2(f);
    await commitPlanned(f, 1n, [g], [cert.guaranteeId]);
    const domain = vaultDomain(f.chainId, f.vaultAddress);
    const finalizationBy = (who: Signer, id = cert.guaranteeId) =>
      signFinalization(who as unknown as FinalizationSigner, domain, id);
    const verifier = await ethers.getContractAt("GuaranteeVerifier", await f.vault.guaranteeVerifier());
    return { ...f, cert, g, finalizationBy, verifier };
  }

  it("an answer carrying the payer's Finalization is upheld: the debit stands, the bond pays nothing", async () => {
    const f = await loadFixture(finalizedFixture);
    const ch = f.clearingHouse;
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    const finalization = await f.finalizationBy(f.alice);
    await expect(
      ch.answerDispute(
        1,
        ETH,
        f.alice.address,
        0,
        disputeAnswerOf([f.g], f.alice.address, 0, { finalization }),
      ),
    )
      .to.emit(ch, "DisputeResolved")
      .withArgs(1n, ETH, f.alice.address, 0n, DISPUTE.upheld, f.cert.guaranteeId, 2n * ONE);
    expect((await ch.debtOf(1, ETH, f.alice.address)).amount).to.equal(2n * ONE);
    expect(await ch.bondOf(ETH)).to.equal(5n * ONE);
    expect(await ch.deductedOf(1, ETH, f.bob.address)).to.equal(0n);
  });

  it("without it (Core never got one) the unvalidated guarantee is removed, as before", async () => {
    const f = await loadFixture(finalizedFixture);
    const ch = f.clearingHouse;
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    const answer = disputeAnswerOf([f.g], f.alice.address, 0);
    // Only the operator may answer "not validated" (audit H-1: the finalization is optional evidence).
    await expect(ch.connect(f.alice).answerDispute(1, ETH, f.alice.address, 0, answer))
      .to.be.revertedWithCustomError(ch, "RemovalNotAllowed")
      .withArgs(f.alice.address, f.cert.guaranteeId);
    await expect(ch.connect(f.operator).answerDispute(1, ETH, f.alice.address, 0, answer))
      .to.emit(ch, "DisputeResolved")
      .withArgs(1n, ETH, f.alice.address, 0n, DISPUTE.removed, f.cert.guaranteeId, 2n * ONE);
  });

  it("only the payer's Finalization of this very guarantee counts as validated", async () => {
    const f = await loadFixture(finalizedFixture);
    const dispute = {
      vault: f.vaultAddress,
      separator: await f.vault.guaranteeDomainSeparator(),
      key: [...(await f.vault.operatorKey())] as unknown as Awaited<ReturnType<typeof f.vault.operatorKey>>,
      debtor: f.alice.address,
      asset: ETH,
    };
    const validated = async (finalization: string) =>
      (
        await f.verifier.checkDisputedGuarantee(
          dispute,
          f.cert.claims,
          signClaims(f.cert.claims),
          0,
          f.cert.payerSignature,
          finalization,
        )
      ).validated;
    expect(await validated(await f.finalizationBy(f.alice))).to.equal(true);
    expect(await validated("0x")).to.equal(false);
    expect(await validated(await f.finalizationBy(f.bob))).to.equal(false); // the seller's own
    expect(await validated(await f.finalizationBy(f.alice, hashText("another guarantee")))).to.equal(false);
    const otherDomain = vaultDomain(f.chainId, f.clearingHouseAddress);
    const elsewhere = await signFinalization(
      f.alice as unknown as FinalizationSigner,
      otherDomain,
      f.cert.guaranteeId,
    );
    expect(await validated(elsewhere)).to.equal(false);
    expect(await validated("0x1234")).to.equal(false); // not a signature: no revert, not validated
  });
});
