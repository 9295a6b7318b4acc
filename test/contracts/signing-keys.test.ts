/**
 * Contract-wallet payers sign with an EOA key registered in the Vault (`setGuaranteeSigner`), never through
 * ERC-1271 (issue 25, item 3, "revocable signatures checked late"; docs/contracts.md "Payer signatures on
 * chain"). The attack: a wallet whose ERC-1271 signer changes after it was served made every answer to its
 * disputes fail `InvalidGuaranteeSignature` (its debit voided against the bond) and a V2 seller's
 * `remunerate` fail `InvalidPayerSignature`. Now the key in effect at the guarantee's timestamp decides, and a
 * change reaches only guarantees timestamped a grace period after it: both still verify.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { id as hashText, parseEther, type Signer, ZeroAddress } from "ethers";

import { encodeCertificateClaims } from "../../sdk/certificate";
import type { GuaranteeClaimsV1 } from "../../sdk/claims";
import { signGuarantee } from "../../sdk/eip712";
import { guaranteeId as sdkGuaranteeId } from "../../sdk/ids";
import {
  ETH,
  TIMINGS,
  disputeAnswerOf,
  payerSignature,
  planCycle,
  positionOf,
  remunerateArgs,
  signingKeyOf,
  suretyFixture,
  v2Certificate,
  type SignedTestGuarantee,
  type V2Input,
} from "./helpers";

const ONE = parseEther("1");
const GRACE = TIMINGS.withdrawalGracePeriod;
/** ClearingHouse.DisputeStatus / DebtStatus */
const UPHELD = 2n;
const ANSWERED = 5n;

async function walletFixture() {
  const f = await suretyFixture();
  // carol drives the wallet and is its first signing key; the wallet, not carol, is the payer.
  const wallet = await ethers.deployContract("ERC1271Wallet", [f.carol.address]);
  const walletAddress = await wallet.getAddress();
  const call = (target: string, data: string, value = 0n) =>
    wallet.connect(f.carol).execute(target, value, data, { value });
  const register = (key: string) =>
    call(f.vaultAddress, f.vault.interface.encodeFunctionData("setGuaranteeSigner", [key]));
  await call(f.vaultAddress, f.vault.interface.encodeFunctionData("deposit"), 10n * ONE);
  return { f, wallet, walletAddress, call, register };
}

/** A V1 guarantee of `payer` (a wallet) signed by `key`, timestamped `timestamp`. */
async function walletGuarantee(
  f: Awaited<ReturnType<typeof suretyFixture>>,
  payer: string,
  key: Signer,
  reqId: bigint,
  amount: bigint,
  timestamp: number,
): Promise<SignedTestGuarantee> {
  const claims: GuaranteeClaimsV1 = {
    version: 1,
    user: payer,
    recipient: f.bob.address,
    reqId,
    amount,
    asset: ETH,
    timestamp,
  };
  const deployment = { chainId: f.chainId, vault: f.vaultAddress };
  const domain = { name: "Surety", version: "1", chainId: f.chainId, verifyingContract: f.vaultAddress };
  const signature = await signGuarantee(key, domain, claims, "eip712");
  return {
    payable: {
      guaranteeId: sdkGuaranteeId(deployment, payer, reqId),
      version: 1,
      user: payer,
      recipient: f.bob.address,
      asset: ETH,
      amount,
      signature,
    },
    claims: encodeCertificateClaims(claims, deployment),
    scheme: "eip712",
    signature,
  };
}

describe("Guarantee signing keys of contract wallets (issue 25, item 3)", () => {
  describe("setGuaranteeSigner", () => {
    it("the first key signs at once, for every timestamp", async () => {
      const { f, walletAddress, register } = await loadFixture(walletFixture);
      expect(await f.vault.guaranteeSignerAt(walletAddress, 0)).to.equal(ZeroAddress);
      await expect(register(f.carol.address))
        .to.emit(f.vault, "GuaranteeSignerSet")
        .withArgs(walletAddress, f.carol.address, 0n);
      expect(await f.vault.guaranteeSigner(walletAddress)).to.deep.equal([f.carol.address, 0n]);
      expect(await f.vault.guaranteeSignerAt(walletAddress, 0)).to.equal(f.carol.address);
      expect(await f.vault.guaranteeSignerAt(walletAddress, 2n ** 64n - 1n)).to.equal(f.carol.address);
      // Another payer's keys are its own.
      expect(await f.vault.guaranteeSignerAt(f.alice.address, 0)).to.equal(ZeroAddress);
    });

    it("a change signs only guarantees timestamped a grace period later; one change at a time", async () => {
      const { f, walletAddress, register } = await loadFixture(walletFixture);
      await register(f.carol.address);
      const tx = await register(f.dave.address);
      const at = (await ethers.provider.getBlock(tx.blockNumber!))!.timestamp;
      const from = BigInt(at + GRACE);
      await expect(tx).to.emit(f.vault, "GuaranteeSignerSet").withArgs(walletAddress, f.dave.address, from);
      expect(await f.vault.guaranteeSigner(walletAddress)).to.deep.equal([f.dave.address, from]);
      expect(await f.vault.guaranteeSignerAt(walletAddress, from - 1n)).to.equal(f.carol.address);
      expect(await f.vault.guaranteeSignerAt(walletAddress, from)).to.equal(f.dave.address);
      await expect(register(f.outsider.address))
        .to.be.revertedWithCustomError(f.vault, "GuaranteeSignerChangePending")
        .withArgs(walletAddress, from);
      await time.increaseTo(from);
      const next = await register(f.outsider.address);
      const nextFrom = BigInt((await ethers.provider.getBlock(next.blockNumber!))!.timestamp + GRACE);
      // Three keys, each for its own span of timestamps; none of the earlier spans moved.
      expect(await f.vault.guaranteeSignerAt(walletAddress, from - 1n)).to.equal(f.carol.address);
      expect(await f.vault.guaranteeSignerAt(walletAddress, nextFrom - 1n)).to.equal(f.dave.address);
      expect(await f.vault.guaranteeSignerAt(walletAddress, nextFrom)).to.equal(f.outsider.address);
    });

    it("refuses the zero address", async () => {
      const { f, register } = await loadFixture(walletFixture);
      await expect(register(ZeroAddress))
        .to.be.revertedWithCustomError(f.vault, "InvalidGuaranteeSigner")
        .withArgs(ZeroAddress);
    });
  });

  describe("attack: the wallet changes its ERC-1271 signer after being served", () => {
    it("the dispute answer and the V2 remuneration still verify, with the key in effect when signed", async () => {
      const { f, wallet, walletAddress, call, register } = await loadFixture(walletFixture);
      await register(f.carol.address);
      const servedAt = await time.latest();

      // Served twice under carol's key: a V1 guarantee Core nets, a V2 one whose validation passes.
      const v1 = await walletGuarantee(f, walletAddress, f.carol, 1n, 2n * ONE, servedAt);
      const input: V2Input = {
        chainId: f.chainId,
        vault: f.vaultAddress,
        user: walletAddress,
        recipient: f.bob.address,
        reqId: 2n,
        amount: ONE,
        asset: ETH,
        timestamp: BigInt(servedAt),
        policy: {
          registry: f.registryAddress,
          validator: f.validator.address,
          agentId: 7n,
          minScore: 50,
          jobHash: hashText("job"),
          tag: "delivery",
          deadline: BigInt(servedAt + 3_600),
        },
      };
      const cert = v2Certificate(input);
      const byCarol = {
        scheme: 0,
        signature: payerSignature(input, "eip712", signingKeyOf(f.carol.address)),
      } as const;
      await f.validationRegistry
        .connect(f.validator)
        .validationRequest(f.validator.address, 7n, "ipfs://job", cert.requestHash);
      await f.validationRegistry
        .connect(f.validator)
        .validationResponse(cert.requestHash, 100, "ipfs://r", hashText("e"), "delivery");
      await f.vault.connect(f.bob).registerReserve(...remunerateArgs(cert, byCarol));

      const plan = planCycle(1n, [v1]);
      await f.clearingHouse
        .connect(f.operator)
        .commitCycle(
          1n,
          { root: plan.root, guaranteesRoot: plan.args.guaranteesRoot, debitsRoot: plan.args.debitsRoot },
          plan.args.totals,
          plan.args.debtors,
          [],
        );

      // The attack: the wallet now accepts only dave's signatures (ERC-1271), and moves its Vault key too.
      await wallet.connect(f.carol).setSigner(f.dave.address);
      await register(f.dave.address);
      const position = positionOf([v1], v1);
      await call(
        f.clearingHouseAddress,
        f.clearingHouse.interface.encodeFunctionData("disputeGuarantee", [1n, ETH, position]),
      );

      // Before: InvalidGuaranteeSignature, and the debit was voided against the bond at the answer deadline.
      await expect(
        f.clearingHouse
          .connect(f.outsider)
          .answerDispute(1n, ETH, walletAddress, position, disputeAnswerOf([v1], walletAddress, position)),
      )
        .to.emit(f.clearingHouse, "DisputeResolved")
        .withArgs(1n, ETH, walletAddress, position, UPHELD, v1.payable.guaranteeId, 2n * ONE);
      expect((await f.clearingHouse.debtOf(1n, ETH, walletAddress)).status).to.equal(ANSWERED);

      // Long after the change took effect, the seller is still paid on carol's signature (before:
      // InvalidPayerSignature until the reserve expired back to the payer).
      await time.increase(2 * GRACE);
      await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(cert, byCarol)))
        .to.emit(f.vault, "GuaranteeRemunerated")
        .withArgs(cert.guaranteeId, walletAddress, f.bob.address, ETH, ONE);
    });

    it("guarantees timestamped after the change need the new key; the old one no longer signs", async () => {
      const { f, walletAddress, register } = await loadFixture(walletFixture);
      await register(f.carol.address);
      await register(f.dave.address);
      const from = (await f.vault.guaranteeSigner(walletAddress)).effectiveFrom;
      await time.increaseTo(from);
      const input: V2Input = {
        chainId: f.chainId,
        vault: f.vaultAddress,
        user: walletAddress,
        recipient: f.bob.address,
        reqId: 4n,
        amount: ONE,
        asset: ETH,
        timestamp: from,
        policy: {
          registry: f.registryAddress,
          validator: f.validator.address,
          agentId: 7n,
          minScore: 50,
          jobHash: hashText("job"),
          tag: "delivery",
          deadline: from + 3_600n,
        },
      };
      const cert = v2Certificate(input);
      const sign = (who: string) =>
        ({ scheme: 0, signature: payerSignature(input, "eip712", signingKeyOf(who)) }) as const;
      await expect(f.vault.registerReserve(...remunerateArgs(cert, sign(f.carol.address))))
        .to.be.revertedWithCustomError(f.vault, "InvalidPayerSignature")
        .withArgs(walletAddress);
      await expect(f.vault.registerReserve(...remunerateArgs(cert, sign(f.dave.address)))).to.emit(
        f.vault,
        "ReserveRegistered",
      );
    });

    it("a wallet without a registered key cannot pay through ERC-1271 alone", async () => {
      const { f, walletAddress } = await loadFixture(walletFixture);
      const now = await time.latest();
      const input: V2Input = {
        chainId: f.chainId,
        vault: f.vaultAddress,
        user: walletAddress,
        recipient: f.bob.address,
        reqId: 5n,
        amount: ONE,
        asset: ETH,
        timestamp: BigInt(now),
        policy: {
          registry: f.registryAddress,
          validator: f.validator.address,
          agentId: 7n,
          minScore: 50,
          jobHash: hashText("job"),
          tag: "delivery",
          deadline: BigInt(now + 3_600),
        },
      };
      const cert = v2Certificate(input);
      // carol's signature is what the wallet's isValidSignature accepts; the Vault no longer asks it.
      const byCarol = {
        scheme: 0,
        signature: payerSignature(input, "eip712", signingKeyOf(f.carol.address)),
      } as const;
      await expect(f.vault.registerReserve(...remunerateArgs(cert, byCarol)))
        .to.be.revertedWithCustomError(f.vault, "InvalidPayerSignature")
        .withArgs(walletAddress);
    });
  });
});
