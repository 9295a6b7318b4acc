/**
 * Issue 17, "Trust-minimised custody": for each finding on the Vault / ValidationRegistry / role side, the
 * attack as the audit showed it, now failing, next to the honest path still working.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { id as hashText, parseEther } from "ethers";

import {
  ETH,
  GUARANTEES_ROOT,
  TIMINGS,
  buildCycle,
  payerSignature,
  remunerateArgs,
  signingKeyOf,
  suretyFixture,
  timingsOperation,
  transfer,
  v2Certificate,
  type PolicyFields,
  type V2Input,
} from "./helpers";

const ONE = parseEther("1");
const DAY = 86_400;

async function fixture() {
  const f = await suretyFixture();
  await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
  const deadline = BigInt((await time.latest()) + DAY);
  const policyFor = (validator: string): PolicyFields => ({
    registry: f.registryAddress,
    validator,
    agentId: 7n,
    minScore: 50,
    jobHash: hashText("job"),
    tag: "delivery",
    deadline,
  });
  const inputFor = (recipient: string, validator: string, reqId: bigint, amount = ONE): V2Input => ({
    chainId: f.chainId,
    vault: f.vaultAddress,
    user: f.alice.address,
    recipient,
    reqId,
    amount,
    asset: ETH,
    policy: policyFor(validator),
  });
  /** Opens and answers the validation request as `validator` itself. */
  const pass = async (requestHash: string, validator = f.validator) => {
    await f.validationRegistry
      .connect(validator)
      .validationRequest(validator.address, 7n, "ipfs://job", requestHash);
    await f.validationRegistry
      .connect(validator)
      .validationResponse(requestHash, 100, "ipfs://r", hashText("e"), "delivery");
  };
  return { ...f, inputFor, pass };
}

describe("Custody (issue 17)", () => {
  describe("finding 2: the BLS key alone takes nothing (remunerate checks the payer's signature)", () => {
    it("a forged V2 certificate naming the thief's own validator fails without the payer's signature", async () => {
      const f = await loadFixture(fixture);
      // The thief (outsider) holds Core's BLS key and runs its own validator on the trusted registry.
      const thief = f.outsider;
      const input = f.inputFor(thief.address, thief.address, 666n, 10n * ONE);
      const forged = v2Certificate(input); // BLS-signed with the operator key, as a thief with it would
      await f.pass(forged.requestHash, thief);
      const honest = v2Certificate(f.inputFor(f.bob.address, f.validator.address, 1n));

      const attempts: Array<[string, { scheme: 0 | 1; signature: string }]> = [
        ["no payer signature", { scheme: 0, signature: "0x" }],
        [
          "the thief's own signature",
          { scheme: 0, signature: payerSignature(input, "eip712", signingKeyOf(thief.address)) },
        ],
        ["the payer's signature of another guarantee", { scheme: 0, signature: honest.payerSignature }],
        [
          "the payer's EIP-712 signature presented as EIP-191",
          { scheme: 1, signature: forged.payerSignature },
        ],
        ["a 64-byte signature", { scheme: 0, signature: ethers.dataSlice(forged.payerSignature, 0, 64) }],
      ];
      for (const [label, payer] of attempts) {
        await expect(f.vault.connect(thief).remunerate(...remunerateArgs(forged, payer)), label)
          .to.be.revertedWithCustomError(f.vault, "InvalidPayerSignature")
          .withArgs(f.alice.address);
      }
      expect(await f.vault.balanceOf(f.alice.address, ETH)).to.equal(10n * ONE);
      expect(await f.vault.consumption(forged.guaranteeId)).to.equal(0n);
    });

    it("the honest path still pays: the payer's EIP-712 or EIP-191 signature, submitted by anyone", async () => {
      const f = await loadFixture(fixture);
      for (const [reqId, scheme] of [
        [1n, "eip712"],
        [2n, "eip191"],
      ] as const) {
        const input = f.inputFor(f.bob.address, f.validator.address, reqId);
        const cert = v2Certificate(input);
        await f.pass(cert.requestHash);
        const payer = {
          scheme: scheme === "eip712" ? 0 : 1,
          signature: payerSignature(input, scheme),
        } as const;
        await expect(f.vault.connect(f.outsider).remunerate(...remunerateArgs(cert, payer)))
          .to.emit(f.vault, "GuaranteeRemunerated")
          .withArgs(cert.guaranteeId, f.alice.address, f.bob.address, ETH, ONE);
      }
      expect(await f.vault.balanceOf(f.alice.address, ETH)).to.equal(8n * ONE);
    });

    it("a contract-wallet payer signs with the key it registered; what that key did not sign is refused", async () => {
      const f = await loadFixture(fixture);
      const wallet = await ethers.deployContract("ERC1271Wallet", [f.carol.address]);
      const walletAddress = await wallet.getAddress();
      const deposit = f.vault.interface.encodeFunctionData("deposit");
      await wallet.connect(f.carol).execute(f.vaultAddress, 3n * ONE, deposit, { value: 3n * ONE });
      const register = f.vault.interface.encodeFunctionData("setGuaranteeSigner", [f.carol.address]);
      await wallet.connect(f.carol).execute(f.vaultAddress, 0n, register);
      const input = { ...f.inputFor(f.bob.address, f.validator.address, 1n), user: walletAddress };
      const cert = v2Certificate(input);
      await f.pass(cert.requestHash);
      const byStranger = {
        scheme: 0,
        signature: payerSignature(input, "eip712", signingKeyOf(f.dave.address)),
      } as const;
      await expect(f.vault.remunerate(...remunerateArgs(cert, byStranger)))
        .to.be.revertedWithCustomError(f.vault, "InvalidPayerSignature")
        .withArgs(walletAddress);
      const byOwner = {
        scheme: 0,
        signature: payerSignature(input, "eip712", signingKeyOf(f.carol.address)),
      } as const;
      await expect(f.vault.remunerate(...remunerateArgs(cert, byOwner)))
        .to.emit(f.vault, "GuaranteeRemunerated")
        .withArgs(cert.guaranteeId, walletAddress, f.bob.address, ETH, ONE);
    });

    it("publishes the EIP-712 domain separator payers sign under", async () => {
      const f = await loadFixture(fixture);
      expect(await f.vault.guaranteeDomainSeparator()).to.equal(
        ethers.TypedDataEncoder.hashDomain({
          name: "Surety",
          version: "1",
          chainId: f.chainId,
          verifyingContract: f.vaultAddress,
        }),
      );
    });
  });
  describe("finding 4: the payer cannot squat the seller's validation request", () => {
    it("a front-run request with the right validator and a wrong agent id blocks neither the seller nor payment", async () => {
      const f = await loadFixture(fixture);
      const cert = v2Certificate(f.inputFor(f.bob.address, f.validator.address, 1n));
      // The payer front-runs the seller: right validator, wrong agent id, misleading URI.
      await f.validationRegistry
        .connect(f.alice)
        .validationRequest(f.validator.address, 666n, "ipfs://bogus", cert.requestHash);
      // The seller's own request still goes through (before the fix: RequestAlreadyExists).
      await expect(
        f.validationRegistry
          .connect(f.bob)
          .validationRequest(f.validator.address, 7n, "ipfs://job", cert.requestHash),
      )
        .to.emit(f.validationRegistry, "ValidationRequest")
        .withArgs(f.validator.address, 7n, "ipfs://job", cert.requestHash);
      await f.validationRegistry
        .connect(f.validator)
        .validationResponse(cert.requestHash, 90, "ipfs://r", hashText("e"), "delivery");
      // The record still shows the squatter's agent id, and it no longer matters (before: AgentIdMismatch).
      expect(
        (await f.validationRegistry.getValidationStatusFor(cert.requestHash, f.validator.address)).agentId,
      ).to.equal(666n);
      await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(cert)))
        .to.emit(f.vault, "GuaranteeRemunerated")
        .withArgs(cert.guaranteeId, f.alice.address, f.bob.address, ETH, ONE);
    });
  });

  describe("finding 7: no status view that anyone can point at a validator of their choice", () => {
    it("a bogus validator's 100 never stands for the real validator's 0", async () => {
      const f = await loadFixture(fixture);
      const cert = v2Certificate(f.inputFor(f.bob.address, f.validator.address, 1n));
      await f.pass(cert.requestHash, f.outsider); // named first, answers 100
      await f.validationRegistry
        .connect(f.bob)
        .validationRequest(f.validator.address, 7n, "ipfs://job", cert.requestHash);
      await f.validationRegistry
        .connect(f.validator)
        .validationResponse(cert.requestHash, 0, "", hashText("e"), "delivery");
      expect(
        f.validationRegistry.interface.fragments.some((x) => "name" in x && x.name === "getValidationStatus"),
      ).to.equal(false);
      expect((await f.validationRegistry.verdictOf(cert.requestHash, f.validator.address)).response).to.equal(
        0n,
      );
      expect((await f.validationRegistry.verdictOf(cert.requestHash, f.outsider.address)).response).to.equal(
        100n,
      );
      await expect(f.vault.remunerate(...remunerateArgs(cert)))
        .to.be.revertedWithCustomError(f.vault, "ValidationScoreTooLow")
        .withArgs(0, 50);
      // Honest path: the named validator's own pass (an update before the deadline) pays.
      await f.validationRegistry
        .connect(f.validator)
        .validationResponse(cert.requestHash, 100, "", hashText("e"), "delivery");
      await expect(f.vault.remunerate(...remunerateArgs(cert))).to.emit(f.vault, "GuaranteeRemunerated");
    });
  });
  describe("finding 3: a leaked admin key cannot hand out the roles that move funds or keys at once", () => {
    it("grants of OPERATOR_ROLE / KEY_MANAGER_ROLE are scheduled in public; payers withdraw before they execute", async () => {
      const f = await loadFixture(fixture);
      const thief = f.outsider;
      const roles = [
        [f.clearingHouse, await f.clearingHouse.OPERATOR_ROLE()],
        [f.vault, await f.vault.KEY_MANAGER_ROLE()],
        [f.vault, await f.vault.CONFIG_ROLE()],
      ] as const;
      for (const [contract, role] of roles) {
        await expect(contract.connect(f.admin).grantRole(role, thief.address)).to.be.revertedWithCustomError(
          contract,
          "RoleGrantMustBeScheduled",
        );
        await expect(contract.connect(f.admin).scheduleRoleGrant(role, thief.address)).to.emit(
          contract,
          "RoleGrantScheduled",
        );
      }
      // The schedule is public; a payer leaves at once, within the withdrawal grace period.
      const grace = (await f.vault.timings()).withdrawalGracePeriod;
      expect(grace).to.be.lessThan(await f.vault.timelockDelay());
      await f.vault.connect(f.alice).requestWithdrawal(ETH, 10n * ONE);
      await time.increase(grace);
      await expect(f.vault.connect(f.alice).finalizeWithdrawal(ETH))
        .to.emit(f.vault, "WithdrawalFinalized")
        .withArgs(1n, f.alice.address, ETH, 10n * ONE, 10n * ONE);
      for (const [contract, role] of roles) {
        expect(await contract.hasRole(role, thief.address)).to.equal(false);
        await expect(contract.executeRoleGrant(role, thief.address)).to.be.revertedWithCustomError(
          contract,
          "OperationNotReady",
        );
      }
    });

    it("CONFIG_ROLE cannot shrink the challenge window at once: scheduled in public, cancellable, cycles keep their W", async () => {
      const f = await loadFixture(fixture);
      // The thief holding CONFIG_ROLE (here the admin's key) wants W = 1 s for the cycle it will commit.
      const shrunk = { ...TIMINGS, challengeWindow: 1 };
      await expect(f.vault.connect(f.admin).setTimings(shrunk)).to.emit(f.vault, "TimingsScheduled");
      expect(await f.vault.challengeWindow()).to.equal(BigInt(TIMINGS.challengeWindow));
      // A cycle committed now still gives every payer (and the guardian) the full window.
      const c = buildCycle(1, transfer(ETH, f.alice.address, f.bob.address, 4n * ONE));
      await f.clearingHouse.connect(f.operator).commitCycle(
        1,
        {
          root: c.root,
          guaranteesRoot: GUARANTEES_ROOT,
          debitsRoot: c.debitsRoot,
        },
        c.totals,
        c.debtors,
        [],
      );
      const cycle = await f.clearingHouse.getCycle(1);
      expect(cycle.challengeDeadline - cycle.committedAt).to.equal(BigInt(TIMINGS.challengeWindow));
      // The schedule is public for the whole delay: the admin cancels it, payers could leave meanwhile.
      await expect(f.vault.connect(f.admin).cancelOperation(timingsOperation(shrunk)))
        .to.emit(f.vault, "OperationCancelled")
        .withArgs(timingsOperation(shrunk));
      await time.increase(await f.vault.timelockDelay());
      await expect(f.vault.connect(f.admin).setTimings(shrunk)).to.emit(f.vault, "TimingsScheduled");
      expect(await f.vault.challengeWindow()).to.equal(BigInt(TIMINGS.challengeWindow));
    });
  });
});
