import { impersonateAccount, loadFixture, setBalance, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { id as hashText, parseEther } from "ethers";

import { deploySurety } from "../../scripts/deploy";
import { ValidationRegistry__factory } from "../../typechain-types";
import {
  ETH,
  OTHER_BLS,
  encodeClaims,
  remunerateArgs,
  signClaims,
  suretyFixture,
  v2Certificate,
  type PolicyFields,
  type V2Input,
} from "./helpers";

const ONE = parseEther("1");
const USD = 1_000_000n;
const AGENT = 7n;
const MIN_SCORE = 70;
const TAG = "delivery";
const DAY = 86_400;

describe("Vault.remunerate (V2 validation path)", () => {
  async function fixture() {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.vault.connect(f.alice).depositToken(f.usdAddress, 500n * USD);
    const policy: PolicyFields = {
      registry: f.registryAddress,
      validator: f.validator.address,
      agentId: AGENT,
      minScore: MIN_SCORE,
      jobHash: hashText("job"),
      tag: TAG,
      deadline: BigInt((await time.latest()) + DAY),
    };
    const input: V2Input = {
      chainId: f.chainId,
      vault: f.vaultAddress,
      user: f.alice.address,
      recipient: f.bob.address,
      reqId: 1n,
      amount: 2n * ONE,
      asset: ETH,
      policy,
    };
    const cert = v2Certificate(input);
    /** Opens the request (as the recipient) and answers it (as the validator). */
    const validate = async (hash: string, score = 80, tag = TAG) => {
      await f.validationRegistry
        .connect(f.bob)
        .validationRequest(f.validator.address, AGENT, "ipfs://job", hash);
      await f.validationRegistry
        .connect(f.validator)
        .validationResponse(hash, score, "ipfs://r", hashText("e"), tag);
    };
    return { ...f, policy, input, cert, validate };
  }

  async function validatedFixture() {
    const f = await fixture();
    await f.validate(f.cert.requestHash);
    return f;
  }

  describe("success", () => {
    it("pays ETH from the payer's collateral to the recipient and emits GuaranteeRemunerated", async () => {
      const { vault, cert, alice, bob, outsider } = await loadFixture(validatedFixture);
      const tx = vault.connect(outsider).remunerate(...remunerateArgs(cert));
      await expect(tx)
        .to.emit(vault, "GuaranteeRemunerated")
        .withArgs(cert.guaranteeId, alice.address, bob.address, ETH, 2n * ONE);
      await expect(tx).to.changeEtherBalances([bob, vault, outsider], [2n * ONE, -2n * ONE, 0n]);
      expect(await vault.balanceOf(alice.address, ETH)).to.equal(8n * ONE);
      expect(await ethers.provider.getBalance(vault)).to.equal(8n * ONE);
      expect(await vault.consumption(cert.guaranteeId)).to.equal(1n); // Remunerated
    });

    it("pays tokens, at exactly the minimum score and a response exactly at the deadline", async () => {
      const { vault, usd, usdAddress, input, policy, validate, alice, bob } = await loadFixture(fixture);
      const deadline = BigInt((await time.latest()) + 100);
      const p = { ...policy, deadline };
      const cert = v2Certificate({ ...input, policy: p, reqId: 2n, asset: usdAddress, amount: 50n * USD });
      await validationRequestAt(deadline, async () => validate(cert.requestHash, MIN_SCORE));
      const tx = vault.remunerate(...remunerateArgs(cert));
      await expect(tx)
        .to.emit(vault, "GuaranteeRemunerated")
        .withArgs(cert.guaranteeId, alice.address, bob.address, usdAddress, 50n * USD);
      await expect(tx).to.changeTokenBalances(usd, [bob, vault], [50n * USD, -50n * USD]);
    });

    it("works while the Vault is paused", async () => {
      const { vault, cert } = await loadFixture(validatedFixture);
      await vault.pause();
      await expect(vault.remunerate(...remunerateArgs(cert))).to.emit(vault, "GuaranteeRemunerated");
    });
  });

  describe("reverts without payment", () => {
    it("when the guarantee was already remunerated", async () => {
      const { vault, cert } = await loadFixture(validatedFixture);
      await vault.remunerate(...remunerateArgs(cert));
      await expect(vault.remunerate(...remunerateArgs(cert)))
        .to.be.revertedWithCustomError(vault, "GuaranteeAlreadyConsumed")
        .withArgs(cert.guaranteeId, 1n);
    });

    it("when the claims are V1", async () => {
      const { vault, cert } = await loadFixture(validatedFixture);
      const claims = encodeClaims({ ...cert.fields, version: 1n, policy: "0x" });
      await expect(vault.remunerate(claims, signClaims(claims), 0, "0x"))
        .to.be.revertedWithCustomError(vault, "NotV2Certificate")
        .withArgs(1n);
    });

    it("when the claims do not decode (codec errors surface)", async () => {
      const { vault, cert } = await loadFixture(validatedFixture);
      const claims = encodeClaims({ ...cert.fields, version: 3n });
      await expect(vault.remunerate(claims, signClaims(claims), 0, "0x"))
        .to.be.revertedWithCustomError(vault, "UnsupportedClaimsVersion")
        .withArgs(3n);
      await expect(vault.remunerate("0x1234", cert.signature, 0, "0x")).to.be.reverted;
    });

    it("when the domain belongs to another deployment", async () => {
      const { vault, cert, input, vaultAddress, chainId } = await loadFixture(validatedFixture);
      const other = v2Certificate({ ...input, vault: ethers.Wallet.createRandom().address });
      const claims = encodeClaims({ ...cert.fields, domain: other.fields.domain });
      const { fields } = v2Certificate({ ...input, chainId, vault: vaultAddress });
      await expect(vault.remunerate(claims, signClaims(claims), 0, "0x"))
        .to.be.revertedWithCustomError(vault, "CertificateDomainMismatch")
        .withArgs(fields.domain, other.fields.domain);
    });

    it("when the guarantee id does not match the claims", async () => {
      const { vault, cert } = await loadFixture(validatedFixture);
      const claims = encodeClaims({ ...cert.fields, guaranteeId: hashText("forged") });
      await expect(vault.remunerate(claims, signClaims(claims), 0, "0x"))
        .to.be.revertedWithCustomError(vault, "GuaranteeIdMismatch")
        .withArgs(cert.guaranteeId, hashText("forged"));
    });

    it("when the signature is not the operator's", async () => {
      const { vault, cert } = await loadFixture(validatedFixture);
      await expect(
        vault.remunerate(
          cert.claims,
          signClaims(cert.claims, OTHER_BLS),
          cert.payerScheme,
          cert.payerSignature,
        ),
      ).to.be.revertedWithCustomError(vault, "InvalidCertificateSignature");
      // A valid signature over different claims (amount raised by the recipient).
      const inflated = encodeClaims({ ...cert.fields, amount: 9n * ONE });
      await expect(vault.remunerate(inflated, cert.signature, 0, "0x")).to.be.revertedWithCustomError(
        vault,
        "InvalidCertificateSignature",
      );
    });

    it("when no operator key is set", async () => {
      const { admin, cert, input } = await loadFixture(validatedFixture);
      const bare = await deploySurety(admin, {});
      const vaultAddress = await bare.vault.getAddress();
      const c = v2Certificate({ ...input, vault: vaultAddress });
      expect(c.guaranteeId).not.to.equal(cert.guaranteeId);
      await expect(bare.vault.remunerate(...remunerateArgs(c))).to.be.revertedWithCustomError(
        bare.vault,
        "OperatorKeyNotSet",
      );
    });

    it("when the amount is zero", async () => {
      const { vault, input } = await loadFixture(validatedFixture);
      const c = v2Certificate({ ...input, reqId: 5n, amount: 0n });
      await expect(vault.remunerate(...remunerateArgs(c))).to.be.revertedWithCustomError(vault, "ZeroAmount");
    });

    it("when the registry is not trusted", async () => {
      const { vault, input, policy, admin } = await loadFixture(fixture);
      const rogue = await new ValidationRegistry__factory(admin).deploy();
      const rogueAddress = await rogue.getAddress();
      const c = v2Certificate({ ...input, policy: { ...policy, registry: rogueAddress } });
      await expect(vault.remunerate(...remunerateArgs(c)))
        .to.be.revertedWithCustomError(vault, "UntrustedRegistry")
        .withArgs(rogueAddress);
    });

    it("when no request was addressed to the policy's validator", async () => {
      const { vault, cert } = await loadFixture(fixture);
      await expect(vault.remunerate(...remunerateArgs(cert)))
        .to.be.revertedWithCustomError(vault, "ValidationResponseMissing")
        .withArgs(cert.requestHash);
    });

    it("when only another validator answered the same request hash", async () => {
      const { vault, cert, validationRegistry, outsider } = await loadFixture(fixture);
      await validationRegistry
        .connect(outsider)
        .validationRequest(outsider.address, AGENT, "", cert.requestHash);
      await validationRegistry
        .connect(outsider)
        .validationResponse(cert.requestHash, 100, "", hashText("e"), TAG);
      await expect(vault.remunerate(...remunerateArgs(cert)))
        .to.be.revertedWithCustomError(vault, "ValidationResponseMissing")
        .withArgs(cert.requestHash);
    });

    it("when the validator has not answered", async () => {
      const { vault, cert, validationRegistry, validator, bob } = await loadFixture(fixture);
      await validationRegistry.connect(bob).validationRequest(validator.address, AGENT, "", cert.requestHash);
      await expect(vault.remunerate(...remunerateArgs(cert)))
        .to.be.revertedWithCustomError(vault, "ValidationResponseMissing")
        .withArgs(cert.requestHash);
    });

    it("when the score is below the minimum", async () => {
      const { vault, cert, validate } = await loadFixture(fixture);
      await validate(cert.requestHash, MIN_SCORE - 1);
      await expect(vault.remunerate(...remunerateArgs(cert)))
        .to.be.revertedWithCustomError(vault, "ValidationScoreTooLow")
        .withArgs(MIN_SCORE - 1, MIN_SCORE);
    });

    it("when the tag differs", async () => {
      const { vault, cert, validate } = await loadFixture(fixture);
      await validate(cert.requestHash, 90, "other");
      await expect(vault.remunerate(...remunerateArgs(cert)))
        .to.be.revertedWithCustomError(vault, "ValidationTagMismatch")
        .withArgs(TAG, hashText("other"));
    });

    it("when the answer came (or was updated) after the deadline", async () => {
      const { vault, cert, policy, validate, validationRegistry, validator } = await loadFixture(fixture);
      await validate(cert.requestHash);
      await time.setNextBlockTimestamp(policy.deadline + 1n);
      await validationRegistry
        .connect(validator)
        .validationResponse(cert.requestHash, 95, "", hashText("e"), TAG);
      await expect(vault.remunerate(...remunerateArgs(cert)))
        .to.be.revertedWithCustomError(vault, "ValidationAfterDeadline")
        .withArgs(policy.deadline + 1n, policy.deadline);
    });

    it("when the payer's free collateral does not cover the amount", async () => {
      const { vault, cert, alice, clearingHouseAddress } = await loadFixture(validatedFixture);
      await impersonateAccount(clearingHouseAddress);
      await setBalance(clearingHouseAddress, ONE);
      const ch = await ethers.getSigner(clearingHouseAddress);
      await vault.connect(ch).recordObligations([{ asset: ETH, debtor: alice.address, amount: 9n * ONE }]);
      await expect(vault.remunerate(...remunerateArgs(cert)))
        .to.be.revertedWithCustomError(vault, "InsufficientFreeCollateral")
        .withArgs(alice.address, ETH, ONE, 2n * ONE);
      expect(await vault.consumption(cert.guaranteeId)).to.equal(0n);
    });
  });
});

/** Runs `fn` so that its last transaction is mined exactly at `timestamp`. */
async function validationRequestAt(timestamp: bigint, fn: () => Promise<void>): Promise<void> {
  await time.setNextBlockTimestamp(timestamp - 1n);
  await fn();
  // fn mined two transactions (request, response) at timestamp - 1 and timestamp.
  const latest = BigInt(await time.latest());
  if (latest !== timestamp) throw new Error(`expected the response at ${timestamp}, got ${latest}`);
}
