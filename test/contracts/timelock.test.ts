/**
 * TimelockedRoles (contracts/access/TimelockedRoles.sol) on the Vault and the ClearingHouse, and the Vault's
 * timelocked operator key and trusted registries (issue 17, finding 3): every schedule / cancel / execute
 * path, its events and its reverts.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { AbiCoder, keccak256 } from "ethers";

import { publicKeyToEip2537 } from "../../sdk/bls";
import { deployVault } from "../../scripts/deploy";
import { ValidationRegistry__factory } from "../../typechain-types";
import { OPERATOR_BLS, OTHER_BLS, TIMINGS, suretyFixture, timingsOperation } from "./helpers";

const DELAY = 3n * 86_400n; // deploySurety's default (DEFAULT_ADMIN_TRANSFER_DELAY)

function keyHash(key: ReturnType<typeof publicKeyToEip2537>): string {
  return keccak256(
    AbiCoder.defaultAbiCoder().encode(
      ["bytes32", "bytes32", "bytes32", "bytes32", "bytes32", "bytes32", "bytes32", "bytes32"],
      [key.x_c0_a, key.x_c0_b, key.x_c1_a, key.x_c1_b, key.y_c0_a, key.y_c0_b, key.y_c1_a, key.y_c1_b],
    ),
  );
}

describe("Timelocked roles and changes", () => {
  it("deploySurety finishes the Vault's setup and uses the admin delay as the timelock delay", async () => {
    const { vault, clearingHouse } = await loadFixture(suretyFixture);
    expect(await vault.setupFinished()).to.equal(true);
    expect(await vault.timelockDelay()).to.equal(DELAY);
    expect(await clearingHouse.timelockDelay()).to.equal(DELAY);
  });

  for (const target of [
    "Vault CONFIG_ROLE",
    "Vault KEY_MANAGER_ROLE",
    "ClearingHouse OPERATOR_ROLE",
  ] as const) {
    describe(target, () => {
      async function fixture() {
        const f = await loadFixture(suretyFixture);
        const contract = target.startsWith("Vault") ? f.vault : f.clearingHouse;
        const role =
          target === "Vault CONFIG_ROLE"
            ? await f.vault.CONFIG_ROLE()
            : target === "Vault KEY_MANAGER_ROLE"
              ? await f.vault.KEY_MANAGER_ROLE()
              : await f.clearingHouse.OPERATOR_ROLE();
        const op = keccak256(
          AbiCoder.defaultAbiCoder().encode(
            ["bytes32", "bytes32", "address"],
            [ethers.id("TIMELOCKED_ROLE_GRANT"), role, f.outsider.address],
          ),
        );
        return { ...f, contract, role, op };
      }

      it("cannot be granted at once; a schedule executes after the delay, by anyone; revocation is immediate", async () => {
        const { contract, role, op, admin, outsider, carol } = await fixture();
        await expect(contract.connect(admin).grantRole(role, outsider.address))
          .to.be.revertedWithCustomError(contract, "RoleGrantMustBeScheduled")
          .withArgs(role);
        const scheduledAt = (await time.latest()) + 1;
        await time.setNextBlockTimestamp(scheduledAt); // independent of earlier files' time offset
        const tx = contract.connect(admin).scheduleRoleGrant(role, outsider.address);
        const readyAt = BigInt(scheduledAt) + DELAY;
        await expect(tx)
          .to.emit(contract, "RoleGrantScheduled")
          .withArgs(role, outsider.address, op, readyAt);
        expect(await contract.operationReadyAt(op)).to.equal(readyAt);
        await expect(contract.connect(carol).executeRoleGrant(role, outsider.address))
          .to.be.revertedWithCustomError(contract, "OperationNotReady")
          .withArgs(op, readyAt);
        await expect(contract.connect(admin).scheduleRoleGrant(role, outsider.address))
          .to.be.revertedWithCustomError(contract, "OperationAlreadyScheduled")
          .withArgs(op, readyAt);
        await time.increaseTo(readyAt);
        await expect(contract.connect(carol).executeRoleGrant(role, outsider.address))
          .to.emit(contract, "RoleGrantExecuted")
          .withArgs(role, outsider.address)
          .and.to.emit(contract, "RoleGranted")
          .withArgs(role, outsider.address, carol.address);
        expect(await contract.hasRole(role, outsider.address)).to.equal(true);
        expect(await contract.operationReadyAt(op)).to.equal(0n);
        await expect(contract.executeRoleGrant(role, outsider.address))
          .to.be.revertedWithCustomError(contract, "OperationNotScheduled")
          .withArgs(op);
        await expect(contract.connect(admin).revokeRole(role, outsider.address)).to.emit(
          contract,
          "RoleRevoked",
        );
        expect(await contract.hasRole(role, outsider.address)).to.equal(false);
      });

      it("a scheduled grant can be cancelled by the default admin only; then it cannot execute", async () => {
        const { contract, role, op, admin, outsider } = await fixture();
        await contract.connect(admin).scheduleRoleGrant(role, outsider.address);
        await expect(contract.connect(outsider).cancelOperation(op))
          .to.be.revertedWithCustomError(contract, "AccessControlUnauthorizedAccount")
          .withArgs(outsider.address, ethers.ZeroHash);
        await expect(contract.connect(outsider).scheduleRoleGrant(role, outsider.address))
          .to.be.revertedWithCustomError(contract, "AccessControlUnauthorizedAccount")
          .withArgs(outsider.address, ethers.ZeroHash);
        await expect(contract.connect(admin).cancelOperation(op))
          .to.emit(contract, "OperationCancelled")
          .withArgs(op);
        await expect(contract.connect(admin).cancelOperation(op))
          .to.be.revertedWithCustomError(contract, "OperationNotScheduled")
          .withArgs(op);
        await time.increase(DELAY);
        await expect(contract.executeRoleGrant(role, outsider.address)).to.be.revertedWithCustomError(
          contract,
          "OperationNotScheduled",
        );
      });
    });
  }

  it("an untimelocked role cannot be scheduled (grant it directly)", async () => {
    const { vault, outsider } = await loadFixture(suretyFixture);
    const role = await vault.PAUSER_ROLE();
    await expect(vault.scheduleRoleGrant(role, outsider.address))
      .to.be.revertedWithCustomError(vault, "RoleNotTimelocked")
      .withArgs(role);
    await expect(vault.grantRole(role, outsider.address)).to.emit(vault, "RoleGranted");
  });

  it("setup: grants, key and registries are immediate until finishSetup (once, admin only)", async () => {
    const [admin, outsider] = await ethers.getSigners();
    const vault = await deployVault(admin, {
      admin: admin.address,
      adminTransferDelay: Number(DELAY),
      timings: TIMINGS,
    });
    const registry = await new ValidationRegistry__factory(admin).deploy();
    await expect(vault.grantRole(await vault.KEY_MANAGER_ROLE(), outsider.address)).to.emit(
      vault,
      "RoleGranted",
    );
    await expect(vault.setTrustedRegistry(registry, true)).to.emit(vault, "TrustedRegistryUpdated");
    await expect(vault.connect(outsider).setOperatorKey(publicKeyToEip2537(OPERATOR_BLS.publicKey))).to.emit(
      vault,
      "OperatorKeyRotated",
    );
    await expect(vault.connect(outsider).finishSetup())
      .to.be.revertedWithCustomError(vault, "AccessControlUnauthorizedAccount")
      .withArgs(outsider.address, ethers.ZeroHash);
    await expect(vault.finishSetup()).to.emit(vault, "SetupFinished");
    await expect(vault.finishSetup()).to.be.revertedWithCustomError(vault, "SetupAlreadyFinished");
    await expect(vault.grantRole(await vault.CONFIG_ROLE(), outsider.address)).to.be.revertedWithCustomError(
      vault,
      "RoleGrantMustBeScheduled",
    );
    // After setup the first call only schedules.
    await expect(vault.setTrustedRegistry(registry, false)).to.emit(vault, "TrustedRegistryUpdated");
    await expect(vault.setTrustedRegistry(registry, true)).to.emit(vault, "TrustedRegistryScheduled");
    expect(await vault.isTrustedRegistry(registry)).to.equal(false);
    await expect(vault.connect(outsider).setOperatorKey(publicKeyToEip2537(OTHER_BLS.publicKey))).to.emit(
      vault,
      "OperatorKeyScheduled",
    );
  });

  describe("operator key", () => {
    const keyOperation = (key: ReturnType<typeof publicKeyToEip2537>) =>
      keccak256(
        AbiCoder.defaultAbiCoder().encode(
          [
            "bytes32",
            ...["bytes32", "bytes32", "bytes32", "bytes32", "bytes32", "bytes32", "bytes32", "bytes32"],
          ],
          [
            ethers.id("VAULT_OPERATOR_KEY"),
            ...[
              key.x_c0_a,
              key.x_c0_b,
              key.x_c1_a,
              key.x_c1_b,
              key.y_c0_a,
              key.y_c0_b,
              key.y_c1_a,
              key.y_c1_b,
            ],
          ],
        ),
      );

    it("a first call schedules, a second one after the delay sets it; the old key verifies until then", async () => {
      const { vault, admin, outsider } = await loadFixture(suretyFixture);
      const next = publicKeyToEip2537(OTHER_BLS.publicKey);
      const op = keyOperation(next);
      const scheduledAt = (await time.latest()) + 1;
      await time.setNextBlockTimestamp(scheduledAt); // independent of earlier files' time offset
      const tx = await vault.connect(admin).setOperatorKey(next);
      const readyAt = BigInt(scheduledAt) + DELAY;
      await expect(tx)
        .to.emit(vault, "OperatorKeyScheduled")
        .withArgs(
          keyHash(next),
          [
            next.x_c0_a,
            next.x_c0_b,
            next.x_c1_a,
            next.x_c1_b,
            next.y_c0_a,
            next.y_c0_b,
            next.y_c1_a,
            next.y_c1_b,
          ],
          op,
          readyAt,
        );
      expect(await vault.operationReadyAt(op)).to.equal(readyAt);
      await expect(vault.setOperatorKey(next))
        .to.be.revertedWithCustomError(vault, "OperationNotReady")
        .withArgs(op, readyAt);
      expect((await vault.operatorKey()).x_c0_b).to.equal(publicKeyToEip2537(OPERATOR_BLS.publicKey).x_c0_b);
      await expect(vault.connect(outsider).setOperatorKey(next))
        .to.be.revertedWithCustomError(vault, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, await vault.KEY_MANAGER_ROLE());
      await time.increaseTo(readyAt);
      await expect(vault.setOperatorKey(next))
        .to.emit(vault, "OperatorKeyRotated")
        .withArgs(keyHash(next), [
          next.x_c0_a,
          next.x_c0_b,
          next.x_c1_a,
          next.x_c1_b,
          next.y_c0_a,
          next.y_c0_b,
          next.y_c1_a,
          next.y_c1_b,
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
        next.x_c0_a,
        next.x_c0_b,
        next.x_c1_a,
        next.x_c1_b,
        next.y_c0_a,
        next.y_c0_b,
        next.y_c1_a,
        next.y_c1_b,
      ]);
      expect(await vault.operationReadyAt(op)).to.equal(0n);
    });

    it("cancel (default admin), invalid keys refused at scheduling, revoke at once", async () => {
      const { vault, outsider } = await loadFixture(suretyFixture);
      const next = publicKeyToEip2537(OTHER_BLS.publicKey);
      const offCurve = { ...next, y_c1_b: ethers.toBeHex(BigInt(next.y_c1_b) ^ 1n, 32) };
      await expect(vault.setOperatorKey(offCurve)).to.be.revertedWithCustomError(vault, "InvalidOperatorKey");
      await vault.setOperatorKey(next);
      await expect(vault.cancelOperation(keyOperation(next)))
        .to.emit(vault, "OperationCancelled")
        .withArgs(keyOperation(next));
      await time.increase(DELAY);
      // Cancelled: the next call schedules afresh instead of setting the key.
      await expect(vault.setOperatorKey(next)).to.emit(vault, "OperatorKeyScheduled");

      const current = publicKeyToEip2537(OPERATOR_BLS.publicKey);
      await expect(vault.connect(outsider).revokeOperatorKey()).to.be.revertedWithCustomError(
        vault,
        "AccessControlUnauthorizedAccount",
      );
      await expect(vault.revokeOperatorKey()).to.emit(vault, "OperatorKeyRevoked").withArgs(keyHash(current));
      expect(await vault.operatorKeySet()).to.equal(false);
    });
  });

  describe("timings (issue 17: no immediate shrinking of the challenge window)", () => {
    // Every window shorter (the challenge window to a single second); the grace period still exceeds the path.
    const shorter = { ...TIMINGS, challengeWindow: 1, cycleLength: 10, withdrawalGracePeriod: 300 };
    const asTuple = (t: typeof TIMINGS) => [
      t.cycleLength,
      t.commitDelay,
      t.challengeWindow,
      t.paymentWindow,
      t.defaultWindow,
      t.withdrawalGracePeriod,
      t.confirmationLag,
    ];

    it("a first call schedules, a second one after the delay sets them; the old timings hold until then", async () => {
      const { vault, admin, outsider, carol } = await loadFixture(suretyFixture);
      const op = timingsOperation(shorter);
      const scheduledAt = (await time.latest()) + 1;
      await time.setNextBlockTimestamp(scheduledAt); // independent of earlier files' time offset
      const readyAt = BigInt(scheduledAt) + DELAY;
      await expect(vault.connect(admin).setTimings(shorter))
        .to.emit(vault, "TimingsScheduled")
        .withArgs(asTuple(shorter), op, readyAt)
        .and.not.to.emit(vault, "TimingsUpdated");
      expect(await vault.operationReadyAt(op)).to.equal(readyAt);
      expect(await vault.challengeWindow()).to.equal(BigInt(TIMINGS.challengeWindow));
      await expect(vault.setTimings(shorter))
        .to.be.revertedWithCustomError(vault, "OperationNotReady")
        .withArgs(op, readyAt);
      // Only CONFIG_ROLE may execute it, too (unlike a role grant, the caller's intent is the change).
      await expect(vault.connect(carol).setTimings(shorter))
        .to.be.revertedWithCustomError(vault, "AccessControlUnauthorizedAccount")
        .withArgs(carol.address, await vault.CONFIG_ROLE());
      await expect(vault.connect(outsider).setTimings(shorter))
        .to.be.revertedWithCustomError(vault, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, await vault.CONFIG_ROLE());
      await time.setNextBlockTimestamp(readyAt - 1n);
      await expect(vault.setTimings(shorter))
        .to.be.revertedWithCustomError(vault, "OperationNotReady")
        .withArgs(op, readyAt);
      await time.setNextBlockTimestamp(readyAt);
      await expect(vault.setTimings(shorter))
        .to.emit(vault, "TimingsUpdated")
        .withArgs(asTuple(shorter))
        .and.not.to.emit(vault, "TimingsScheduled");
      expect(await vault.challengeWindow()).to.equal(1n);
      expect((await vault.timings()).withdrawalGracePeriod).to.equal(300n);
      expect(await vault.operationReadyAt(op)).to.equal(0n);
      // Consumed: the next call with the same timings schedules afresh.
      await expect(vault.setTimings(shorter)).to.emit(vault, "TimingsScheduled");
    });

    it("the default admin cancels a schedule (then it cannot execute); a duplicate schedule reverts", async () => {
      const { vault, outsider } = await loadFixture(suretyFixture);
      const op = timingsOperation(shorter);
      await vault.setTimings(shorter);
      const readyAt = await vault.operationReadyAt(op);
      await vault.setTimings(TIMINGS); // another operation: scheduling the current timings is allowed too
      await expect(vault.connect(outsider).cancelOperation(op))
        .to.be.revertedWithCustomError(vault, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, ethers.ZeroHash);
      await expect(vault.cancelOperation(op)).to.emit(vault, "OperationCancelled").withArgs(op);
      expect(await vault.operationReadyAt(op)).to.equal(0n);
      await time.increaseTo(readyAt);
      // Cancelled: the call schedules again instead of changing the timings.
      await expect(vault.setTimings(shorter))
        .to.emit(vault, "TimingsScheduled")
        .and.not.to.emit(vault, "TimingsUpdated");
      expect(await vault.challengeWindow()).to.equal(BigInt(TIMINGS.challengeWindow));
      const again = await vault.operationReadyAt(op);
      await expect(vault.connect(outsider).setTimings(shorter)).to.be.revertedWithCustomError(
        vault,
        "AccessControlUnauthorizedAccount",
      );
      // Scheduling the same timings while scheduled is refused (it is the execution call until due).
      await expect(vault.setTimings(shorter))
        .to.be.revertedWithCustomError(vault, "OperationNotReady")
        .withArgs(op, again);
    });

    it("timings that break the invariant cannot even be scheduled", async () => {
      const { vault } = await loadFixture(suretyFixture);
      await expect(vault.setTimings({ ...TIMINGS, challengeWindow: 0 })).to.be.revertedWithCustomError(
        vault,
        "ZeroChallengeWindow",
      );
      await expect(vault.setTimings({ ...TIMINGS, withdrawalGracePeriod: 10 }))
        .to.be.revertedWithCustomError(vault, "GracePeriodTooShort")
        .withArgs(10, 331); // the clearing path of the deployed timings (scripts/deploy.ts)
      const max = await vault.MAX_WITHDRAWAL_GRACE_PERIOD();
      await expect(vault.setTimings({ ...TIMINGS, withdrawalGracePeriod: max + 1n }))
        .to.be.revertedWithCustomError(vault, "GracePeriodTooLong")
        .withArgs(max + 1n, max);
      expect(await vault.operationReadyAt(timingsOperation({ ...TIMINGS, challengeWindow: 0 }))).to.equal(0n);
    });

    it("a longer window is timelocked too (a longer grace period would hold open withdrawals at once)", async () => {
      const { vault } = await loadFixture(suretyFixture);
      const longer = {
        ...TIMINGS,
        challengeWindow: TIMINGS.challengeWindow * 2,
        withdrawalGracePeriod: 30 * 86_400,
      };
      await expect(vault.setTimings(longer)).to.emit(vault, "TimingsScheduled");
      expect((await vault.timings()).withdrawalGracePeriod).to.equal(BigInt(TIMINGS.withdrawalGracePeriod));
    });

    it("during setup a change applies at once", async () => {
      const [admin, outsider] = await ethers.getSigners();
      const vault = await deployVault(admin, {
        admin: admin.address,
        adminTransferDelay: Number(DELAY),
        timings: TIMINGS,
      });
      await expect(vault.setTimings(shorter))
        .to.emit(vault, "TimingsUpdated")
        .withArgs(asTuple(shorter))
        .and.not.to.emit(vault, "TimingsScheduled");
      expect(await vault.challengeWindow()).to.equal(1n);
      expect(await vault.operationReadyAt(timingsOperation(shorter))).to.equal(0n);
      await expect(vault.connect(outsider).setTimings(TIMINGS))
        .to.be.revertedWithCustomError(vault, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, await vault.CONFIG_ROLE());
      await expect(vault.setTimings({ ...TIMINGS, challengeWindow: 0 })).to.be.revertedWithCustomError(
        vault,
        "ZeroChallengeWindow",
      );
      await vault.finishSetup();
      await expect(vault.setTimings(TIMINGS)).to.emit(vault, "TimingsScheduled");
      expect(await vault.challengeWindow()).to.equal(1n);
    });
  });

  describe("trusted registries", () => {
    it("adding one is scheduled then executed (cancellable); removing one is immediate", async () => {
      const { vault, admin, outsider, registryAddress } = await loadFixture(suretyFixture);
      const rogue = await (await new ValidationRegistry__factory(admin).deploy()).getAddress();
      const op = keccak256(
        AbiCoder.defaultAbiCoder().encode(
          ["bytes32", "address"],
          [ethers.id("VAULT_TRUSTED_REGISTRY"), rogue],
        ),
      );
      await expect(vault.setTrustedRegistry(outsider.address, true))
        .to.be.revertedWithCustomError(vault, "InvalidRegistry")
        .withArgs(outsider.address);
      await expect(vault.connect(outsider).setTrustedRegistry(rogue, true))
        .to.be.revertedWithCustomError(vault, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, await vault.CONFIG_ROLE());
      const scheduledAt = (await time.latest()) + 1;
      await time.setNextBlockTimestamp(scheduledAt); // independent of earlier files' time offset
      const tx = vault.setTrustedRegistry(rogue, true);
      const readyAt = BigInt(scheduledAt) + DELAY;
      await expect(tx).to.emit(vault, "TrustedRegistryScheduled").withArgs(rogue, op, readyAt);
      expect(await vault.isTrustedRegistry(rogue)).to.equal(false);
      await expect(vault.connect(outsider).cancelOperation(op)).to.be.revertedWithCustomError(
        vault,
        "AccessControlUnauthorizedAccount",
      );
      await expect(vault.setTrustedRegistry(rogue, true))
        .to.be.revertedWithCustomError(vault, "OperationNotReady")
        .withArgs(op, readyAt);
      await time.increaseTo(readyAt);
      await expect(vault.setTrustedRegistry(rogue, true))
        .to.emit(vault, "TrustedRegistryUpdated")
        .withArgs(rogue, true);
      expect(await vault.isTrustedRegistry(rogue)).to.equal(true);
      await expect(vault.setTrustedRegistry(registryAddress, false))
        .to.emit(vault, "TrustedRegistryUpdated")
        .withArgs(registryAddress, false);
    });
  });
});
