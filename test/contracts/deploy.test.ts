import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ethers } from "hardhat";

import {
  bondFloorFromEnv,
  DEFAULT_ADMIN_TRANSFER_DELAY,
  DEFAULT_BOND_FLOOR_BPS,
  DEFAULT_TIMINGS,
  deploySurety,
  writeDeployment,
} from "../../scripts/deploy";
import { publicKeyToEip2537 } from "../../sdk/bls";
import { TestToken__factory } from "../../typechain-types";
import { OPERATOR_BLS } from "./helpers";

describe("scripts/deploy.ts", () => {
  async function fixture() {
    const [deployer, admin, operator] = await ethers.getSigners();
    const token = await new TestToken__factory(deployer).deploy("Existing", "EXT", 8);
    const deployment = await deploySurety(deployer, {
      admin: admin.address,
      operator: operator.address,
      operatorBlsPublicKey: "0x" + Buffer.from(OPERATOR_BLS.publicKey).toString("hex"),
      timings: { withdrawalGracePeriod: 1000 },
      tokens: [await token.getAddress()],
      testTokens: [{ name: "Six", symbol: "SIX", decimals: 6 }],
      bondFloorBps: 2_000,
    });
    return { deployer, admin, operator, token, deployment };
  }

  it("wires the contracts and hands every admin role to `admin`", async () => {
    const { deployer, admin, operator, deployment } = await loadFixture(fixture);
    const { vault, clearingHouse, validationRegistry } = deployment;
    expect(await vault.clearingHouse()).to.equal(await clearingHouse.getAddress());
    expect(await clearingHouse.vault()).to.equal(await vault.getAddress());
    expect(await vault.isTrustedRegistry(await validationRegistry.getAddress())).to.equal(true);
    expect(await clearingHouse.hasRole(await clearingHouse.OPERATOR_ROLE(), operator.address)).to.equal(true);
    for (const role of [
      await vault.CONFIG_ROLE(),
      await vault.KEY_MANAGER_ROLE(),
      await vault.PAUSER_ROLE(),
    ]) {
      expect(await vault.hasRole(role, admin.address)).to.equal(true);
      expect(await vault.hasRole(role, deployer.address)).to.equal(false);
    }
    expect(await clearingHouse.defaultAdmin()).to.equal(admin.address);
    expect(await clearingHouse.defaultAdminDelay()).to.equal(BigInt(DEFAULT_ADMIN_TRANSFER_DELAY));
    // The Vault's default admin moves in two steps: begun by the deployer, accepted by `admin` after the delay.
    const pending = deployment.record.config.pendingAdminTransfer!;
    expect(pending.newAdmin).to.equal(admin.address);
    expect(await vault.defaultAdmin()).to.equal(deployer.address);
    await expect(vault.connect(admin).acceptDefaultAdminTransfer()).to.be.revertedWithCustomError(
      vault,
      "AccessControlEnforcedDefaultAdminDelay",
    );
    await time.increaseTo(pending.acceptableAfter + 1);
    await expect(vault.connect(admin).acceptDefaultAdminTransfer())
      .to.emit(vault, "RoleGranted")
      .withArgs(await vault.DEFAULT_ADMIN_ROLE(), admin.address, admin.address);
    expect(await vault.defaultAdmin()).to.equal(admin.address);
    expect(await vault.hasRole(await vault.DEFAULT_ADMIN_ROLE(), deployer.address)).to.equal(false);
    const key = publicKeyToEip2537(OPERATOR_BLS.publicKey);
    expect((await vault.operatorKey()).x_c0_b).to.equal(key.x_c0_b);
    expect((await vault.timings()).withdrawalGracePeriod).to.equal(1000n);
    expect((await vault.timings()).cycleLength).to.equal(BigInt(DEFAULT_TIMINGS.cycleLength));
  });

  it("allow-lists existing and test tokens and records them with their metadata", async () => {
    const { token, deployment } = await loadFixture(fixture);
    const { record, vault } = deployment;
    expect(record.tokens.map((t) => [t.symbol, t.decimals, t.testToken])).to.deep.equal([
      ["SIX", 6, true],
      ["EXT", 8, false],
    ]);
    for (const t of record.tokens) expect(await vault.isTokenAllowed(t.address)).to.equal(true);
    expect(record.tokens[1].address).to.equal(await token.getAddress());
  });

  it("sets the bond floor even though the admin is not the deployer; production defaults to full cover", async () => {
    const { deployment } = await loadFixture(fixture);
    expect(await deployment.clearingHouse.bondFloorBps()).to.equal(2_000n);
    expect(deployment.record.config.bondFloorBps).to.equal(2_000);
    const [deployer] = await ethers.getSigners();
    const plain = await deploySurety(deployer);
    expect(await plain.clearingHouse.bondFloorBps()).to.equal(0n); // the library's default: off
    // SURETY_BOND_FLOOR_BPS of the deploy script: full cover on a real network, off on dev networks.
    expect(DEFAULT_BOND_FLOOR_BPS).to.equal(10_000);
    expect(bondFloorFromEnv("mainnet", undefined)).to.equal(DEFAULT_BOND_FLOOR_BPS);
    expect(bondFloorFromEnv("custom", " ")).to.equal(DEFAULT_BOND_FLOOR_BPS);
    expect(bondFloorFromEnv("localhost", undefined)).to.equal(0);
    expect(bondFloorFromEnv("custom", "2500")).to.equal(2_500);
    expect(bondFloorFromEnv("localhost", "0")).to.equal(0);
    for (const bad of ["10001", "-1", "1.5", "ten"]) {
      expect(() => bondFloorFromEnv("custom", bad)).to.throw(/SURETY_BOND_FLOOR_BPS/);
    }
  });

  it("writes deployments/<network>.json", async () => {
    const { deployment } = await loadFixture(fixture);
    const dir = mkdtempSync(path.join(tmpdir(), "surety-deploy-"));
    try {
      const file = writeDeployment("testnet", deployment.record, dir);
      const written = JSON.parse(readFileSync(file, "utf8"));
      expect(written.network).to.equal("testnet");
      expect(written.chainId).to.equal(31337);
      expect(written.contracts.Vault.address).to.equal(await deployment.vault.getAddress());
      expect(written.contracts.Vault.blockNumber).to.be.a("number");
      expect(written.config.timings.withdrawalGracePeriod).to.equal(1000);
      expect(written.config.bondFloorBps).to.equal(2_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
