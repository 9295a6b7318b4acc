/**
 * Seller's on-chain reserve (Vault.registerReserve / releaseReserve; issue 17, finding 5): a registered V2
 * certificate keeps its amount of the payer's collateral from being withdrawn until the guarantee is
 * remunerated or netted, or the reserve expires, so the seller is paid even if Core stops.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { id as hashText, parseEther } from "ethers";

import {
  GUARANTEES_ROOT,
  ETH,
  buildCycle,
  encodeClaims,
  remunerateArgs,
  signClaims,
  suretyFixture,
  transfer,
  v2Certificate,
  type V2Input,
} from "./helpers";

const ONE = parseEther("1");
const HOUR = 3_600;

async function fixture() {
  const f = await suretyFixture();
  await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
  const deadline = BigInt((await time.latest()) + HOUR);
  const inputFor = (reqId: bigint, amount = 4n * ONE): V2Input => ({
    chainId: f.chainId,
    vault: f.vaultAddress,
    user: f.alice.address,
    recipient: f.bob.address,
    reqId,
    amount,
    asset: ETH,
    policy: {
      registry: f.registryAddress,
      validator: f.validator.address,
      agentId: 7n,
      minScore: 50,
      jobHash: hashText("job"),
      tag: "delivery",
      deadline,
    },
  });
  const cert = v2Certificate(inputFor(1n));
  const pass = async (requestHash: string) => {
    await f.validationRegistry
      .connect(f.bob)
      .validationRequest(f.validator.address, 7n, "ipfs://job", requestHash);
    await f.validationRegistry
      .connect(f.validator)
      .validationResponse(requestHash, 90, "ipfs://r", hashText("e"), "delivery");
  };
  const grace = (await f.vault.timings()).withdrawalGracePeriod;
  return { ...f, deadline, inputFor, cert, pass, grace, expiresAt: deadline + grace };
}

async function registeredFixture() {
  const f = await fixture();
  await f.vault.connect(f.bob).registerReserve(...remunerateArgs(f.cert));
  return f;
}

describe("Seller's reserve (issue 17, finding 5)", () => {
  it("Core stops and the payer withdraws right after being served: without a reserve the seller is not paid", async () => {
    const f = await loadFixture(fixture);
    await f.vault.connect(f.alice).requestWithdrawal(ETH, 10n * ONE);
    await f.pass(f.cert.requestHash);
    await time.increase(f.grace);
    await f.vault.connect(f.alice).finalizeWithdrawal(ETH); // takes everything
    await expect(f.vault.remunerate(...remunerateArgs(f.cert)))
      .to.be.revertedWithCustomError(f.vault, "InsufficientFreeCollateral")
      .withArgs(f.alice.address, ETH, 0n, 4n * ONE);
  });

  it("with a reserve the payer's withdrawal leaves the amount behind and the seller remunerates on its own", async () => {
    const f = await loadFixture(fixture);
    await expect(f.vault.connect(f.bob).registerReserve(...remunerateArgs(f.cert)))
      .to.emit(f.vault, "ReserveRegistered")
      .withArgs(f.cert.guaranteeId, f.alice.address, f.bob.address, ETH, 4n * ONE, f.expiresAt);
    expect(await f.vault.freeCollateralOf(f.alice.address, ETH)).to.equal(6n * ONE);
    expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(0n);
    const reserve = await f.vault.reserveOf(f.cert.guaranteeId);
    expect([reserve.user, reserve.asset, reserve.amount, reserve.expiresAt]).to.deep.equal([
      f.alice.address,
      ETH,
      4n * ONE,
      f.expiresAt,
    ]);

    // Served, the payer asks for everything at once; Core never commits anything again.
    await f.vault.connect(f.alice).requestWithdrawal(ETH, 10n * ONE);
    await f.pass(f.cert.requestHash);
    await time.increase(f.grace);
    await expect(f.vault.connect(f.alice).finalizeWithdrawal(ETH))
      .to.emit(f.vault, "WithdrawalFinalized")
      .withArgs(1n, f.alice.address, ETH, 10n * ONE, 6n * ONE);

    const tx = f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert));
    await expect(tx)
      .to.emit(f.vault, "ReserveReleased")
      .withArgs(f.cert.guaranteeId, f.alice.address, ETH, 4n * ONE)
      .and.to.emit(f.vault, "GuaranteeRemunerated")
      .withArgs(f.cert.guaranteeId, f.alice.address, f.bob.address, ETH, 4n * ONE);
    await expect(tx).to.changeEtherBalance(f.bob, 4n * ONE);
    expect(await f.vault.balanceOf(f.alice.address, ETH)).to.equal(0n);
    expect(await f.vault.freeCollateralOf(f.alice.address, ETH)).to.equal(0n);
    expect((await f.vault.reserveOf(f.cert.guaranteeId)).user).to.equal(ethers.ZeroAddress);
  });

  it("no double payment: remunerated, a later commit cannot net it; netted, it cannot be remunerated", async () => {
    const f = await loadFixture(registeredFixture);
    const cycle = buildCycle(2, transfer(ETH, f.alice.address, f.bob.address, 4n * ONE));
    await f.pass(f.cert.requestHash);
    await f.vault.remunerate(...remunerateArgs(f.cert));
    // A remuneration with enough free collateral leaves the reserve behind; anyone releases it.
    await expect(f.vault.releaseReserve(f.cert.guaranteeId)).to.emit(f.vault, "ReserveReleased");
    // Listed in a commit anyway, it is skipped and reported, never netted (issue 17 finding 6).
    await expect(
      f.clearingHouse.connect(f.operator).commitCycle(
        1,
        {
          root: cycle.root,
          guaranteesRoot: GUARANTEES_ROOT,
          debitsRoot: cycle.debitsRoot,
        },
        [],
        [],
        [f.cert.guaranteeId],
      ),
    )
      .to.emit(f.vault, "GuaranteeNettingSkipped")
      .withArgs(f.cert.guaranteeId, 1n);

    // The other order: a second guarantee netted first.
    const other = v2Certificate(f.inputFor(2n));
    await f.vault.connect(f.bob).registerReserve(...remunerateArgs(other));
    await f.clearingHouse.connect(f.operator).commitCycle(
      2,
      {
        root: cycle.root,
        guaranteesRoot: GUARANTEES_ROOT,
        debitsRoot: cycle.debitsRoot,
      },
      cycle.totals,
      cycle.debtors,
      [other.guaranteeId],
    );
    await f.pass(other.requestHash);
    await expect(f.vault.remunerate(...remunerateArgs(other)))
      .to.be.revertedWithCustomError(f.vault, "GuaranteeAlreadyConsumed")
      .withArgs(other.guaranteeId, 2n);
    // Netted: the reserve is released before its expiry, once no veto can undo the netting (the cycle is
    // past its challenge deadline); the cycle's obligation holds the amount instead.
    await expect(f.vault.releaseReserve(other.guaranteeId)).to.be.revertedWithCustomError(
      f.vault,
      "ReserveStillActive",
    );
    await time.increaseTo((await f.clearingHouse.getCycle(2)).challengeDeadline + 1n);
    await expect(f.vault.releaseReserve(other.guaranteeId))
      .to.emit(f.vault, "ReserveReleased")
      .withArgs(other.guaranteeId, f.alice.address, ETH, 4n * ONE);
    expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(4n * ONE);
    expect(await f.vault.freeCollateralOf(f.alice.address, ETH)).to.equal(2n * ONE);
  });

  it("expires: held until validationDeadline + withdrawalGracePeriod, then anyone releases it", async () => {
    const f = await loadFixture(registeredFixture);
    await expect(f.vault.releaseReserve(f.cert.guaranteeId))
      .to.be.revertedWithCustomError(f.vault, "ReserveStillActive")
      .withArgs(f.cert.guaranteeId, f.expiresAt);
    await time.increaseTo(f.expiresAt);
    await expect(f.vault.connect(f.outsider).releaseReserve(f.cert.guaranteeId))
      .to.emit(f.vault, "ReserveReleased")
      .withArgs(f.cert.guaranteeId, f.alice.address, ETH, 4n * ONE);
    expect(await f.vault.freeCollateralOf(f.alice.address, ETH)).to.equal(10n * ONE);
    await expect(f.vault.releaseReserve(f.cert.guaranteeId))
      .to.be.revertedWithCustomError(f.vault, "ReserveNotFound")
      .withArgs(f.cert.guaranteeId);
  });

  it("obligations and reserves add up: neither releases the other", async () => {
    const f = await loadFixture(registeredFixture);
    const cycle = buildCycle(1, transfer(ETH, f.alice.address, f.carol.address, 3n * ONE));
    await f.clearingHouse.connect(f.operator).commitCycle(
      1,
      {
        root: cycle.root,
        guaranteesRoot: GUARANTEES_ROOT,
        debitsRoot: cycle.debitsRoot,
      },
      cycle.totals,
      cycle.debtors,
      [],
    );
    expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(3n * ONE);
    expect(await f.vault.freeCollateralOf(f.alice.address, ETH)).to.equal(3n * ONE);
    await f.clearingHouse.connect(f.alice).payNetDebit(1, ETH, { value: 3n * ONE });
    expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(0n);
    expect(await f.vault.freeCollateralOf(f.alice.address, ETH)).to.equal(6n * ONE);
  });

  describe("registerReserve reverts", () => {
    it("when already registered, consumed, after the deadline, or not covered by free collateral", async () => {
      const f = await loadFixture(registeredFixture);
      await expect(f.vault.registerReserve(...remunerateArgs(f.cert)))
        .to.be.revertedWithCustomError(f.vault, "ReserveAlreadyRegistered")
        .withArgs(f.cert.guaranteeId);
      const big = v2Certificate(f.inputFor(2n, 7n * ONE));
      await expect(f.vault.registerReserve(...remunerateArgs(big)))
        .to.be.revertedWithCustomError(f.vault, "InsufficientFreeCollateral")
        .withArgs(f.alice.address, ETH, 6n * ONE, 7n * ONE);
      await f.pass(f.cert.requestHash);
      const other = v2Certificate(f.inputFor(3n, ONE));
      await f.pass(other.requestHash);
      await f.vault.remunerate(...remunerateArgs(other));
      await expect(f.vault.registerReserve(...remunerateArgs(other)))
        .to.be.revertedWithCustomError(f.vault, "GuaranteeAlreadyConsumed")
        .withArgs(other.guaranteeId, 1n);
      await time.increaseTo(f.deadline + 1n);
      const late = v2Certificate(f.inputFor(4n, ONE));
      await expect(f.vault.registerReserve(...remunerateArgs(late)))
        .to.be.revertedWithCustomError(f.vault, "ReserveAfterDeadline")
        .withArgs(f.deadline);
    });

    it("without the payer's signature or Core's certificate", async () => {
      const f = await loadFixture(fixture);
      await expect(f.vault.registerReserve(...remunerateArgs(f.cert, { scheme: 0, signature: "0x" })))
        .to.be.revertedWithCustomError(f.vault, "InvalidPayerSignature")
        .withArgs(f.alice.address);
      const inflated = encodeClaims({ ...f.cert.fields, amount: 9n * ONE });
      await expect(
        f.vault.registerReserve(inflated, f.cert.signature, f.cert.payerScheme, f.cert.payerSignature),
      ).to.be.revertedWithCustomError(f.vault, "InvalidCertificateSignature");
      // V1 claims take the V1 path (test/contracts/reserve-v1.test.ts), with its own checks.
      const v1 = encodeClaims({ ...f.cert.fields, version: 1n, policy: "0x" });
      await expect(f.vault.registerReserve(v1, signClaims(v1), 0, "0x"))
        .to.be.revertedWithCustomError(f.vault, "InvalidPayerSignature")
        .withArgs(f.alice.address);
      const zero = v2Certificate(f.inputFor(5n, 0n));
      await expect(f.vault.registerReserve(...remunerateArgs(zero))).to.be.revertedWithCustomError(
        f.vault,
        "ZeroAmount",
      );
    });
  });
});
