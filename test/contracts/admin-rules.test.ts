/**
 * The default admin of the Vault and the ClearingHouse changes in two delayed steps
 * (OpenZeppelin AccessControlDefaultAdminRules; contracts security review, "custody lies with the
 * roles"): it cannot be granted, revoked or handed over at once, the new admin must accept after the
 * delay, and the current admin can cancel in the meantime. Grants of the roles that move funds or keys are
 * timelocked as well (test/contracts/timelock.test.ts).
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { clearingHouseFactory, deployVault } from "../../scripts/deploy";
import { TIMINGS } from "./helpers";

const DELAY = 3_600;

async function fixture() {
  const [admin, next, outsider, operator] = await ethers.getSigners();
  const vault = await deployVault(admin, {
    admin: admin.address,
    adminTransferDelay: DELAY,
    timings: TIMINGS,
  });
  const clearingHouse = await (
    await clearingHouseFactory(admin)
  ).deploy(
    await vault.getAddress(),
    admin.address,
    operator.address,
    outsider.address,
    DELAY,
    0,
    await vault.guaranteeVerifier(),
  );
  return { admin, next, outsider, operator, vault, clearingHouse };
}

for (const name of ["Vault", "ClearingHouse"] as const) {
  describe(`${name}: default admin in two delayed steps`, () => {
    async function contract() {
      const f = await loadFixture(fixture);
      return { ...f, target: name === "Vault" ? f.vault : f.clearingHouse };
    }

    it("starts with the constructor's admin and delay", async () => {
      const { admin, target } = await contract();
      expect(await target.defaultAdmin()).to.equal(admin.address);
      expect(await target.defaultAdminDelay()).to.equal(BigInt(DELAY));
      expect(await target.hasRole(await target.DEFAULT_ADMIN_ROLE(), admin.address)).to.equal(true);
    });

    it("refuses to grant or revoke the default admin role directly", async () => {
      const { admin, next, target } = await contract();
      const role = await target.DEFAULT_ADMIN_ROLE();
      await expect(target.connect(admin).grantRole(role, next.address)).to.be.revertedWithCustomError(
        target,
        "AccessControlEnforcedDefaultAdminRules",
      );
      await expect(target.connect(admin).revokeRole(role, admin.address)).to.be.revertedWithCustomError(
        target,
        "AccessControlEnforcedDefaultAdminRules",
      );
    });

    it("hands over only when the new admin accepts after the delay", async () => {
      const { admin, next, outsider, target } = await contract();
      await expect(target.connect(outsider).beginDefaultAdminTransfer(next.address))
        .to.be.revertedWithCustomError(target, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, await target.DEFAULT_ADMIN_ROLE());
      const begun = await target.connect(admin).beginDefaultAdminTransfer(next.address);
      const acceptableAfter = (await time.latest()) + DELAY;
      await expect(begun)
        .to.emit(target, "DefaultAdminTransferScheduled")
        .withArgs(next.address, acceptableAfter);
      await expect(target.connect(outsider).acceptDefaultAdminTransfer())
        .to.be.revertedWithCustomError(target, "AccessControlInvalidDefaultAdmin")
        .withArgs(outsider.address);
      await expect(target.connect(next).acceptDefaultAdminTransfer())
        .to.be.revertedWithCustomError(target, "AccessControlEnforcedDefaultAdminDelay")
        .withArgs(acceptableAfter);
      // Until accepted, the current admin still administers.
      expect(await target.defaultAdmin()).to.equal(admin.address);

      await time.increaseTo(acceptableAfter + 1);
      const role = await target.DEFAULT_ADMIN_ROLE();
      await expect(target.connect(next).acceptDefaultAdminTransfer())
        .to.emit(target, "RoleRevoked")
        .withArgs(role, admin.address, next.address)
        .and.to.emit(target, "RoleGranted")
        .withArgs(role, next.address, next.address);
      expect(await target.defaultAdmin()).to.equal(next.address);
      // The old admin has lost the power to manage roles.
      await expect(target.connect(admin).grantRole(ethers.id("ANY_ROLE"), admin.address))
        .to.be.revertedWithCustomError(target, "AccessControlUnauthorizedAccount")
        .withArgs(admin.address, role);
    });

    it("lets the current admin cancel a transfer before it is accepted", async () => {
      const { admin, next, target } = await contract();
      await target.connect(admin).beginDefaultAdminTransfer(next.address);
      await expect(target.connect(admin).cancelDefaultAdminTransfer()).to.emit(
        target,
        "DefaultAdminTransferCanceled",
      );
      await time.increase(DELAY + 1);
      await expect(target.connect(next).acceptDefaultAdminTransfer())
        .to.be.revertedWithCustomError(target, "AccessControlInvalidDefaultAdmin")
        .withArgs(next.address);
      expect(await target.defaultAdmin()).to.equal(admin.address);
    });

    it("keeps the roles under the admin: plain grants for the untimelocked ones, immediate revocation", async () => {
      const { admin, outsider, operator, vault, clearingHouse } = await contract();
      if (name === "Vault") {
        await vault.finishSetup();
        const role = await vault.PAUSER_ROLE();
        await expect(vault.connect(admin).grantRole(role, outsider.address))
          .to.emit(vault, "RoleGranted")
          .withArgs(role, outsider.address, admin.address);
        await expect(vault.connect(admin).revokeRole(role, outsider.address)).to.emit(vault, "RoleRevoked");
      } else {
        // OPERATOR_ROLE grants are timelocked (test/contracts/timelock.test.ts); revocation is immediate.
        const role = await clearingHouse.OPERATOR_ROLE();
        await expect(clearingHouse.connect(admin).revokeRole(role, operator.address)).to.emit(
          clearingHouse,
          "RoleRevoked",
        );
        expect(await clearingHouse.hasRole(role, operator.address)).to.equal(false);
      }
    });
  });
}
