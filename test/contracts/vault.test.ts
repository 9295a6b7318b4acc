import { impersonateAccount, loadFixture, setBalance, time } from "@nomicfoundation/hardhat-network-helpers";
import { anyValue } from "@nomicfoundation/hardhat-chai-matchers/withArgs";
import { expect } from "chai";
import { ethers } from "hardhat";
import { ZeroAddress, id as hashText, keccak256, AbiCoder, parseEther } from "ethers";

import { publicKeyToEip2537 } from "../../sdk/bls";
import { deployVault, vaultFactory, deployGuaranteeVerifier } from "../../scripts/deploy";
import { FeeOnTransferToken__factory } from "../../typechain-types";
import { ETH, OPERATOR_BLS, OTHER_BLS, TIMINGS, applyTimings, suretyFixture } from "./helpers";

const ONE = parseEther("1");
const USD = 1_000_000n; // 1 tUSD (6 decimals)

describe("Vault", () => {
  async function fundedFixture() {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.vault.connect(f.alice).depositToken(f.usdAddress, 500n * USD);
    return f;
  }

  /** The ClearingHouse's address as a signer, to drive the hooks directly (its own logic never over-releases). */
  async function asClearingHouse(address: string) {
    await impersonateAccount(address);
    await setBalance(address, ONE);
    return ethers.getSigner(address);
  }

  describe("deposit", () => {
    it("credits ETH and emits Deposited", async () => {
      const { vault, alice } = await loadFixture(suretyFixture);
      await expect(vault.connect(alice).deposit({ value: ONE }))
        .to.emit(vault, "Deposited")
        .withArgs(alice.address, ETH, ONE, ONE);
      await expect(vault.connect(alice).deposit({ value: ONE }))
        .to.emit(vault, "Deposited")
        .withArgs(alice.address, ETH, ONE, 2n * ONE);
      expect(await vault.balanceOf(alice.address, ETH)).to.equal(2n * ONE);
      expect(await ethers.provider.getBalance(vault)).to.equal(2n * ONE);
      expect(await ethers.provider.getBalance(await vault.getAddress())).to.equal(2n * ONE);
    });

    it("rejects zero", async () => {
      const { vault, alice } = await loadFixture(suretyFixture);
      await expect(vault.connect(alice).deposit()).to.be.revertedWithCustomError(vault, "ZeroAmount");
    });

    it("is blocked while paused", async () => {
      const { vault, alice } = await loadFixture(suretyFixture);
      await vault.pause();
      await expect(vault.connect(alice).deposit({ value: ONE })).to.be.revertedWithCustomError(
        vault,
        "EnforcedPause",
      );
    });
  });

  describe("depositToken", () => {
    it("pulls allow-listed tokens and emits Deposited", async () => {
      const { vault, usd, usdAddress, alice, vaultAddress } = await loadFixture(suretyFixture);
      await expect(vault.connect(alice).depositToken(usdAddress, 5n * USD))
        .to.emit(vault, "Deposited")
        .withArgs(alice.address, usdAddress, 5n * USD, 5n * USD);
      expect(await vault.balanceOf(alice.address, usdAddress)).to.equal(5n * USD);
      expect(await usd.balanceOf(vaultAddress)).to.equal(5n * USD);
    });

    it("credits only what arrives from a fee-on-transfer token", async () => {
      const { vault, feeToken, alice, vaultAddress } = await loadFixture(suretyFixture);
      const fee = await feeToken.getAddress();
      await vault.setTokenAllowed(fee, true);
      await expect(vault.connect(alice).depositToken(fee, 10_000n))
        .to.emit(vault, "Deposited")
        .withArgs(alice.address, fee, 9_900n, 9_900n);
      expect(await vault.balanceOf(alice.address, fee)).to.equal(9_900n);
      expect(await feeToken.balanceOf(vaultAddress)).to.equal(await vault.balanceOf(alice.address, fee));
    });

    it("rejects a transfer that delivers nothing", async () => {
      const { vault, alice, admin } = await loadFixture(suretyFixture);
      const burner = await new FeeOnTransferToken__factory(admin).deploy(10_000);
      const address = await burner.getAddress();
      await burner.mint(alice.address, 100n);
      await burner.connect(alice).approve(await vault.getAddress(), 100n);
      await vault.setTokenAllowed(address, true);
      await expect(vault.connect(alice).depositToken(address, 100n))
        .to.be.revertedWithCustomError(vault, "NothingReceived")
        .withArgs(address);
    });

    it("rejects zero, tokens off the allow-list, and pauses", async () => {
      const { vault, usdAddress, feeToken, alice } = await loadFixture(suretyFixture);
      await expect(vault.connect(alice).depositToken(usdAddress, 0)).to.be.revertedWithCustomError(
        vault,
        "ZeroAmount",
      );
      const fee = await feeToken.getAddress();
      await expect(vault.connect(alice).depositToken(fee, 1))
        .to.be.revertedWithCustomError(vault, "TokenNotAllowed")
        .withArgs(fee);
      await expect(vault.connect(alice).depositToken(ETH, 1))
        .to.be.revertedWithCustomError(vault, "TokenNotAllowed")
        .withArgs(ETH);
      await vault.pause();
      await expect(vault.connect(alice).depositToken(usdAddress, 1)).to.be.revertedWithCustomError(
        vault,
        "EnforcedPause",
      );
    });
  });

  describe("withdrawals", () => {
    it("requestWithdrawal opens a request with an id and a finalisation time", async () => {
      const { vault, alice } = await loadFixture(fundedFixture);
      const next = (await time.latest()) + 1;
      await time.setNextBlockTimestamp(next);
      const finalizableAt = BigInt(next + TIMINGS.withdrawalGracePeriod);
      await expect(vault.connect(alice).requestWithdrawal(ETH, ONE))
        .to.emit(vault, "WithdrawalRequested")
        .withArgs(1n, alice.address, ETH, ONE, finalizableAt);
      const pending = await vault.pendingWithdrawal(alice.address, ETH);
      expect(pending.id).to.equal(1n);
      expect(pending.amount).to.equal(ONE);
      expect(pending.requestedAt).to.equal(BigInt(next));
      expect(pending.finalizableAt).to.equal(finalizableAt);
      expect(await vault.nextWithdrawalId()).to.equal(2n);
    });

    it("requestWithdrawal rejects zero, a second open request, more than the balance, and pauses", async () => {
      const { vault, alice, bob } = await loadFixture(fundedFixture);
      await expect(vault.connect(alice).requestWithdrawal(ETH, 0)).to.be.revertedWithCustomError(
        vault,
        "ZeroAmount",
      );
      await expect(vault.connect(alice).requestWithdrawal(ETH, 11n * ONE))
        .to.be.revertedWithCustomError(vault, "WithdrawalExceedsBalance")
        .withArgs(alice.address, ETH, 10n * ONE, 11n * ONE);
      await expect(vault.connect(bob).requestWithdrawal(ETH, 1))
        .to.be.revertedWithCustomError(vault, "WithdrawalExceedsBalance")
        .withArgs(bob.address, ETH, 0, 1);
      await vault.connect(alice).requestWithdrawal(ETH, ONE);
      await expect(vault.connect(alice).requestWithdrawal(ETH, ONE))
        .to.be.revertedWithCustomError(vault, "WithdrawalAlreadyPending")
        .withArgs(alice.address, ETH, 1n);
      await vault.pause();
      await expect(vault.connect(alice).requestWithdrawal(ETH, ONE)).to.be.revertedWithCustomError(
        vault,
        "EnforcedPause",
      );
    });

    it("cancelWithdrawal closes the request (also while paused)", async () => {
      const { vault, alice } = await loadFixture(fundedFixture);
      await vault.connect(alice).requestWithdrawal(ETH, ONE);
      await vault.pause();
      await expect(vault.connect(alice).cancelWithdrawal(ETH))
        .to.emit(vault, "WithdrawalCancelled")
        .withArgs(1n, alice.address, ETH);
      expect((await vault.pendingWithdrawal(alice.address, ETH)).id).to.equal(0n);
      await expect(vault.connect(alice).cancelWithdrawal(ETH))
        .to.be.revertedWithCustomError(vault, "NoPendingWithdrawal")
        .withArgs(alice.address, ETH);
    });

    it("finalizeWithdrawal pays ETH after the grace period", async () => {
      const { vault, alice } = await loadFixture(fundedFixture);
      await vault.connect(alice).requestWithdrawal(ETH, 3n * ONE);
      const { finalizableAt } = await vault.pendingWithdrawal(alice.address, ETH);
      await time.setNextBlockTimestamp(finalizableAt - 1n);
      await expect(vault.connect(alice).finalizeWithdrawal(ETH))
        .to.be.revertedWithCustomError(vault, "WithdrawalNotReady")
        .withArgs(1n, finalizableAt);
      const tx = vault.connect(alice).finalizeWithdrawal(ETH);
      await expect(tx)
        .to.emit(vault, "WithdrawalFinalized")
        .withArgs(1n, alice.address, ETH, 3n * ONE, 3n * ONE);
      await expect(tx).to.changeEtherBalances([alice, vault], [3n * ONE, -3n * ONE]);
      expect(await vault.balanceOf(alice.address, ETH)).to.equal(7n * ONE);
      expect(await ethers.provider.getBalance(vault)).to.equal(7n * ONE);
      expect((await vault.pendingWithdrawal(alice.address, ETH)).id).to.equal(0n);
    });

    it("finalizeWithdrawal pays tokens and caps at the current balance", async () => {
      const { vault, usd, usdAddress, alice, clearingHouseAddress } = await loadFixture(fundedFixture);
      await vault.connect(alice).requestWithdrawal(usdAddress, 500n * USD);
      // Half of the balance becomes an obligation meanwhile: only the free half is paid.
      const ch = await asClearingHouse(clearingHouseAddress);
      await vault
        .connect(ch)
        .recordObligations([{ asset: usdAddress, debtor: alice.address, amount: 200n * USD }]);
      await time.increase(TIMINGS.withdrawalGracePeriod);
      const tx = vault.connect(alice).finalizeWithdrawal(usdAddress);
      await expect(tx)
        .to.emit(vault, "WithdrawalFinalized")
        .withArgs(1n, alice.address, usdAddress, 500n * USD, 300n * USD);
      await expect(tx).to.changeTokenBalances(usd, [alice, vault], [300n * USD, -300n * USD]);
      expect(await vault.balanceOf(alice.address, usdAddress)).to.equal(200n * USD);
    });

    it("finalizeWithdrawal closes with zero when everything is reserved", async () => {
      const { vault, alice, clearingHouseAddress } = await loadFixture(fundedFixture);
      await vault.connect(alice).requestWithdrawal(ETH, ONE);
      const ch = await asClearingHouse(clearingHouseAddress);
      await vault.connect(ch).recordObligations([{ asset: ETH, debtor: alice.address, amount: 12n * ONE }]);
      expect(await vault.freeCollateralOf(alice.address, ETH)).to.equal(0n);
      await time.increase(TIMINGS.withdrawalGracePeriod);
      await expect(vault.connect(alice).finalizeWithdrawal(ETH))
        .to.emit(vault, "WithdrawalFinalized")
        .withArgs(1n, alice.address, ETH, ONE, 0n);
      expect(await vault.balanceOf(alice.address, ETH)).to.equal(10n * ONE);
    });

    it("finalizeWithdrawal rejects a missing request and pauses", async () => {
      const { vault, alice } = await loadFixture(fundedFixture);
      await expect(vault.connect(alice).finalizeWithdrawal(ETH))
        .to.be.revertedWithCustomError(vault, "NoPendingWithdrawal")
        .withArgs(alice.address, ETH);
      await vault.connect(alice).requestWithdrawal(ETH, ONE);
      await time.increase(TIMINGS.withdrawalGracePeriod);
      await vault.pause();
      await expect(vault.connect(alice).finalizeWithdrawal(ETH)).to.be.revertedWithCustomError(
        vault,
        "EnforcedPause",
      );
      await vault.unpause();
      await expect(vault.connect(alice).finalizeWithdrawal(ETH)).to.emit(vault, "WithdrawalFinalized");
    });

    it("withdrawal ids are global and increasing", async () => {
      const { vault, alice, usdAddress } = await loadFixture(fundedFixture);
      await expect(vault.connect(alice).requestWithdrawal(ETH, 1))
        .to.emit(vault, "WithdrawalRequested")
        .withArgs(1n, alice.address, ETH, 1, anyValue);
      await expect(vault.connect(alice).requestWithdrawal(usdAddress, 1))
        .to.emit(vault, "WithdrawalRequested")
        .withArgs(2n, alice.address, usdAddress, 1, anyValue);
    });
  });

  describe("clearing hooks", () => {
    it("only the ClearingHouse may call them", async () => {
      const { vault, outsider, alice } = await loadFixture(fundedFixture);
      const v = vault.connect(outsider);
      for (const call of [
        () => v.recordObligations([{ asset: ETH, debtor: alice.address, amount: 1 }]),
        () => v.releaseObligation(alice.address, ETH, 1),
        () => v.coverDefault(alice.address, ETH, 1),
        () => v.markNetted(1, [hashText("g")]),
        () => v.markPaid(hashText("g")),
      ]) {
        await expect(call())
          .to.be.revertedWithCustomError(vault, "NotClearingHouse")
          .withArgs(outsider.address);
      }
    });

    it("record, release and cover obligations with events; never beyond what was recorded", async () => {
      const { vault, alice, clearingHouseAddress } = await loadFixture(fundedFixture);
      const ch = await asClearingHouse(clearingHouseAddress);
      const v = vault.connect(ch);
      await expect(v.recordObligations([{ asset: ETH, debtor: alice.address, amount: 4n * ONE }]))
        .to.emit(vault, "ObligationRecorded")
        .withArgs(alice.address, ETH, 4n * ONE, 4n * ONE);
      expect(await vault.obligationOf(alice.address, ETH)).to.equal(4n * ONE);
      expect(await vault.freeCollateralOf(alice.address, ETH)).to.equal(6n * ONE);
      await expect(v.releaseObligation(alice.address, ETH, ONE))
        .to.emit(vault, "ObligationReleased")
        .withArgs(alice.address, ETH, ONE, 3n * ONE);
      await expect(v.releaseObligation(alice.address, ETH, 4n * ONE))
        .to.be.revertedWithCustomError(vault, "ObligationExceeded")
        .withArgs(alice.address, ETH, 3n * ONE, 4n * ONE);
      await expect(v.coverDefault(alice.address, ETH, 4n * ONE))
        .to.be.revertedWithCustomError(vault, "ObligationExceeded")
        .withArgs(alice.address, ETH, 3n * ONE, 4n * ONE);
      const tx = v.coverDefault(alice.address, ETH, 3n * ONE);
      await expect(tx)
        .to.emit(vault, "DefaultCovered")
        .withArgs(alice.address, ETH, 3n * ONE, 3n * ONE);
      await expect(tx).to.changeEtherBalances([vault, ch], [-3n * ONE, 3n * ONE]);
      expect(await vault.obligationOf(alice.address, ETH)).to.equal(0n);
      expect(await vault.balanceOf(alice.address, ETH)).to.equal(7n * ONE);
      expect(await ethers.provider.getBalance(vault)).to.equal(7n * ONE);
    });

    it("markNetted marks ids once and skips (reports) any id already consumed", async () => {
      const { vault, clearingHouseAddress } = await loadFixture(fundedFixture);
      const ch = await asClearingHouse(clearingHouseAddress);
      const [a, b] = [hashText("a"), hashText("b")];
      await expect(vault.connect(ch).markNetted(1, [a, b]))
        .to.emit(vault, "GuaranteeNetted")
        .withArgs(a)
        .and.to.emit(vault, "GuaranteeNetted")
        .withArgs(b);
      expect(await vault.consumption(a)).to.equal(2n); // Netted
      const c = hashText("c");
      expect(await vault.connect(ch).markNetted.staticCall(2, [c, a])).to.equal(1n);
      await expect(vault.connect(ch).markNetted(2, [c, a]))
        .to.emit(vault, "GuaranteeNettingSkipped")
        .withArgs(a, 2n)
        .and.to.emit(vault, "GuaranteeNetted")
        .withArgs(c);
      expect(await vault.consumption(c)).to.equal(2n);
      expect(await vault.consumptionOf([a, c, hashText("d")])).to.deep.equal([2n, 2n, 0n]);
    });
  });

  describe("admin", () => {
    it("setClearingHouse: once, to a contract, by the admin", async () => {
      const { admin, outsider, clearingHouseAddress, vault } = await loadFixture(suretyFixture);
      await expect(vault.setClearingHouse(clearingHouseAddress))
        .to.be.revertedWithCustomError(vault, "ClearingHouseAlreadySet")
        .withArgs(clearingHouseAddress);
      const fresh = await deployVault(admin, {
        admin: admin.address,
        adminTransferDelay: 0,
        timings: TIMINGS,
      });
      await expect(fresh.setClearingHouse(outsider.address))
        .to.be.revertedWithCustomError(fresh, "InvalidClearingHouse")
        .withArgs(outsider.address);
      await expect(fresh.connect(outsider).setClearingHouse(clearingHouseAddress))
        .to.be.revertedWithCustomError(fresh, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, ethers.ZeroHash);
      await expect(fresh.setClearingHouse(clearingHouseAddress))
        .to.emit(fresh, "ClearingHouseSet")
        .withArgs(clearingHouseAddress);
      expect(await fresh.clearingHouse()).to.equal(clearingHouseAddress);
    });

    it("setOperatorKey stores a valid G1 key and emits its hash (setup phase only)", async () => {
      const { admin, vault: wired } = await loadFixture(suretyFixture);
      // After setup the first call only schedules (test/contracts/timelock.test.ts).
      await expect(wired.setOperatorKey(publicKeyToEip2537(OTHER_BLS.publicKey))).to.emit(
        wired,
        "OperatorKeyScheduled",
      );
      const vault = await deployVault(admin, {
        admin: admin.address,
        adminTransferDelay: 0,
        timings: TIMINGS,
      });
      expect(await vault.operatorKeySet()).to.equal(false);
      const key = publicKeyToEip2537(OTHER_BLS.publicKey);
      const encoded = AbiCoder.defaultAbiCoder().encode(
        ["bytes32", "bytes32", "bytes32", "bytes32", "bytes32", "bytes32", "bytes32", "bytes32"],
        [key.x_c0_a, key.x_c0_b, key.x_c1_a, key.x_c1_b, key.y_c0_a, key.y_c0_b, key.y_c1_a, key.y_c1_b],
      );
      await expect(vault.setOperatorKey(key))
        .to.emit(vault, "OperatorKeyRotated")
        .withArgs(keccak256(encoded), [
          key.x_c0_a,
          key.x_c0_b,
          key.x_c1_a,
          key.x_c1_b,
          key.y_c0_a,
          key.y_c0_b,
          key.y_c1_a,
          key.y_c1_b,
        ]);
      const stored = await vault.operatorKey();
      expect([
        stored.x_c0_a,
        stored.x_c0_b,
        stored.x_c1_a,
        stored.x_c1_b,
        stored.y_c0_a,
        stored.y_c0_b,
        stored.y_c1_a,
        stored.y_c1_b,
      ]).to.deep.equal([
        key.x_c0_a,
        key.x_c0_b,
        key.x_c1_a,
        key.x_c1_b,
        key.y_c0_a,
        key.y_c0_b,
        key.y_c1_a,
        key.y_c1_b,
      ]);
      expect(await vault.operatorKeySet()).to.equal(true);
    });

    it("setOperatorKey rejects the identity, off-curve points, and other callers", async () => {
      const { admin, outsider } = await loadFixture(suretyFixture);
      const vault = await deployVault(admin, {
        admin: admin.address,
        adminTransferDelay: 0,
        timings: TIMINGS,
      });
      const zero = ethers.ZeroHash;
      await expect(
        vault.setOperatorKey({
          x_c0_a: zero,
          x_c0_b: zero,
          x_c1_a: zero,
          x_c1_b: zero,
          y_c0_a: zero,
          y_c0_b: zero,
          y_c1_a: zero,
          y_c1_b: zero,
        }),
      ).to.be.revertedWithCustomError(vault, "InvalidOperatorKey");
      const key = publicKeyToEip2537(OPERATOR_BLS.publicKey);
      const offCurve = { ...key, y_c1_b: ethers.toBeHex(BigInt(key.y_c1_b) ^ 1n, 32) };
      await expect(vault.setOperatorKey(offCurve)).to.be.revertedWithCustomError(vault, "InvalidOperatorKey");
      await expect(vault.connect(outsider).setOperatorKey(key))
        .to.be.revertedWithCustomError(vault, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, await vault.KEY_MANAGER_ROLE());
    });

    it("setTokenAllowed toggles the allow-list; rejects ETH, EOAs and other callers", async () => {
      const { vault, usdAddress, alice, outsider } = await loadFixture(fundedFixture);
      await expect(vault.setTokenAllowed(usdAddress, false))
        .to.emit(vault, "TokenAllowListUpdated")
        .withArgs(usdAddress, false);
      expect(await vault.isTokenAllowed(usdAddress)).to.equal(false);
      await expect(vault.connect(alice).depositToken(usdAddress, 1)).to.be.revertedWithCustomError(
        vault,
        "TokenNotAllowed",
      );
      // De-listing never traps existing balances.
      await vault.connect(alice).requestWithdrawal(usdAddress, 500n * USD);
      await time.increase(TIMINGS.withdrawalGracePeriod);
      await expect(vault.connect(alice).finalizeWithdrawal(usdAddress))
        .to.emit(vault, "WithdrawalFinalized")
        .withArgs(1n, alice.address, usdAddress, 500n * USD, 500n * USD);
      await expect(vault.setTokenAllowed(ZeroAddress, true)).to.be.revertedWithCustomError(
        vault,
        "InvalidToken",
      );
      await expect(vault.setTokenAllowed(outsider.address, true))
        .to.be.revertedWithCustomError(vault, "InvalidToken")
        .withArgs(outsider.address);
      await expect(vault.connect(outsider).setTokenAllowed(usdAddress, true))
        .to.be.revertedWithCustomError(vault, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, await vault.CONFIG_ROLE());
    });

    it("setTrustedRegistry toggles trust; rejects EOAs and other callers", async () => {
      const { vault, registryAddress, outsider } = await loadFixture(suretyFixture);
      expect(await vault.isTrustedRegistry(registryAddress)).to.equal(true);
      await expect(vault.setTrustedRegistry(registryAddress, false))
        .to.emit(vault, "TrustedRegistryUpdated")
        .withArgs(registryAddress, false);
      expect(await vault.isTrustedRegistry(registryAddress)).to.equal(false);
      await expect(vault.setTrustedRegistry(outsider.address, true))
        .to.be.revertedWithCustomError(vault, "InvalidRegistry")
        .withArgs(outsider.address);
      await expect(vault.connect(outsider).setTrustedRegistry(registryAddress, true))
        .to.be.revertedWithCustomError(vault, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, await vault.CONFIG_ROLE());
    });

    it("setTimings enforces grace > cycle + commit + confirmation lag + 2 × challenge + payment + default windows (docs/protocol.md, grace-period invariant)", async () => {
      const { vault, outsider } = await loadFixture(suretyFixture);
      const t = {
        cycleLength: 10,
        commitDelay: 5,
        challengeWindow: 3,
        paymentWindow: 20,
        defaultWindow: 15,
        withdrawalGracePeriod: 57,
        confirmationLag: 0,
      };
      await expect(vault.setTimings(t)).to.emit(vault, "TimingsScheduled");
      await time.increase(await vault.timelockDelay());
      await expect(vault.setTimings(t)).to.emit(vault, "TimingsUpdated").withArgs([10, 5, 3, 20, 15, 57, 0]);
      expect(await vault.challengeWindow()).to.equal(3n);
      expect(await vault.paymentWindow()).to.equal(20n);
      expect(await vault.defaultWindow()).to.equal(15n);
      expect((await vault.timings()).withdrawalGracePeriod).to.equal(57n);
      expect((await vault.timings()).cycleLength).to.equal(10n);
      await expect(vault.setTimings({ ...t, withdrawalGracePeriod: 56 }))
        .to.be.revertedWithCustomError(vault, "GracePeriodTooShort")
        .withArgs(56, 56);
      // Core's confirmation lag lengthens the clearing path (issue 17, finding 5): 57 no longer exceeds it.
      await expect(vault.setTimings({ ...t, confirmationLag: 4 }))
        .to.be.revertedWithCustomError(vault, "GracePeriodTooShort")
        .withArgs(57, 60);
      await vault.setTimings({ ...t, confirmationLag: 4, withdrawalGracePeriod: 61 });
      await time.increase(await vault.timelockDelay());
      await expect(vault.setTimings({ ...t, confirmationLag: 4, withdrawalGracePeriod: 61 }))
        .to.emit(vault, "TimingsUpdated")
        .withArgs([10, 5, 3, 20, 15, 61, 4]);
      expect((await vault.timings()).confirmationLag).to.equal(4n);
      await expect(vault.setTimings({ ...t, challengeWindow: 0 })).to.be.revertedWithCustomError(
        vault,
        "ZeroChallengeWindow",
      );
      await expect(vault.setTimings({ ...t, cycleLength: 0 })).to.be.revertedWithCustomError(
        vault,
        "ZeroCycleLength",
      );
      await expect(vault.setTimings({ ...t, paymentWindow: 0 })).to.be.revertedWithCustomError(
        vault,
        "ZeroPaymentWindow",
      );
      const max = await vault.MAX_WITHDRAWAL_GRACE_PERIOD();
      await expect(vault.setTimings({ ...t, withdrawalGracePeriod: max + 1n }))
        .to.be.revertedWithCustomError(vault, "GracePeriodTooLong")
        .withArgs(max + 1n, max);
      await expect(vault.connect(outsider).setTimings(t))
        .to.be.revertedWithCustomError(vault, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, await vault.CONFIG_ROLE());
    });

    it("the constructor checks timings too", async () => {
      const { admin, vault } = await loadFixture(suretyFixture);
      await expect(
        (await vaultFactory(admin)).deploy(
          admin.address,
          0,
          { ...TIMINGS, withdrawalGracePeriod: 1 },
          await deployGuaranteeVerifier(admin),
        ),
      ).to.be.revertedWithCustomError(vault, "GracePeriodTooShort");
    });

    it("an open request keeps the time it was given, and a longer grace period also applies to it", async () => {
      const { vault, alice } = await loadFixture(fundedFixture);
      await vault.connect(alice).requestWithdrawal(ETH, ONE);
      const { requestedAt, finalizableAt } = await vault.pendingWithdrawal(alice.address, ETH);
      expect(finalizableAt).to.equal(requestedAt + BigInt(TIMINGS.withdrawalGracePeriod));
      await applyTimings(vault, { ...TIMINGS, withdrawalGracePeriod: TIMINGS.withdrawalGracePeriod * 10 });
      expect((await vault.pendingWithdrawal(alice.address, ETH)).finalizableAt).to.equal(finalizableAt);
      expect(await vault.withdrawalFinalizableAt(alice.address, ETH)).to.equal(
        requestedAt + BigInt(TIMINGS.withdrawalGracePeriod * 10),
      );
    });

    it("pause and unpause: pauser only, with events", async () => {
      const { vault, admin, outsider } = await loadFixture(suretyFixture);
      await expect(vault.pause()).to.emit(vault, "Paused").withArgs(admin.address);
      expect(await vault.paused()).to.equal(true);
      await expect(vault.unpause()).to.emit(vault, "Unpaused").withArgs(admin.address);
      for (const call of [() => vault.connect(outsider).pause(), () => vault.connect(outsider).unpause()]) {
        await expect(call())
          .to.be.revertedWithCustomError(vault, "AccessControlUnauthorizedAccount")
          .withArgs(outsider.address, await vault.PAUSER_ROLE());
      }
    });

    it("rejects plain ETH transfers (deposits go through deposit())", async () => {
      const { vault, alice } = await loadFixture(suretyFixture);
      await expect(alice.sendTransaction({ to: await vault.getAddress(), value: 1 })).to.be.reverted;
    });
  });
});
