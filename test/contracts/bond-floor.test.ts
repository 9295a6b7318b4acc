/**
 * Issue 17, operator bond size: with a bond floor set, a commit whose debits the bond does not cover to the
 * floor's share is refused, so an operator key cannot commit a cycle that puts more at risk than the bond
 * answers for (every debit of a cycle can be voided by a challenge and charged to the bond).
 */
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther } from "ethers";

import { clearingHouseFactory } from "../../scripts/deploy";
import { ETH, planCycle, signedGuarantee, suretyFixture } from "./helpers";

const ONE = parseEther("1");

describe("Bond floor (issue 17)", () => {
  /** alice signed 3 ETH to bob: the cycle's total debit in ETH is 3 ETH; the bond holds 1 ETH. */
  async function fixture() {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
    const toBob = await signedGuarantee(f, f.alice, f.bob.address, 1n, 3n * ONE);
    const plan = planCycle(1n, [toBob]);
    const commit = () =>
      f.clearingHouse
        .connect(f.operator)
        .commitCycle(
          plan.args.cycleId,
          { root: plan.root, guaranteesRoot: plan.args.guaranteesRoot, debitsRoot: plan.args.debitsRoot },
          plan.args.totals,
          plan.args.debtors,
          [],
        );
    return { ...f, plan, commit };
  }

  it("is off by default: a commit needs no bond", async () => {
    const f = await loadFixture(fixture);
    expect(await f.clearingHouse.bondFloorBps()).to.equal(0n);
    await expect(f.commit()).to.emit(f.clearingHouse, "CycleCommitted");
  });

  it("the attack: a cycle putting more at risk than the bond answers for is refused", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await expect(ch.connect(f.admin).setBondFloor(5_000)).to.emit(ch, "BondFloorSet").withArgs(5_000n);
    // 50 % of 3 ETH = 1.5 ETH > the 1 ETH bond.
    await expect(f.commit())
      .to.be.revertedWithCustomError(ch, "BondBelowFloor")
      .withArgs(ETH, ONE, (3n * ONE) / 2n);
    expect(await ch.lastCycleId()).to.equal(0n); // nothing of the commit stays
    // The honest path: the operator tops the bond up to the floor, the same commit passes.
    await ch.connect(f.admin).postBond(ETH, 0, { value: ONE / 2n });
    await expect(f.commit()).to.emit(ch, "CycleCommitted");
  });

  it("rounds the floor up and allows full cover at most", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    await ch.connect(f.admin).setBondFloor(10_000);
    await expect(f.commit())
      .to.be.revertedWithCustomError(ch, "BondBelowFloor")
      .withArgs(ETH, ONE, 3n * ONE);
    await expect(ch.connect(f.admin).setBondFloor(10_001))
      .to.be.revertedWithCustomError(ch, "BondFloorTooHigh")
      .withArgs(10_001n);
    // 33.34 % of 3 ETH is 1.0002 ETH: refused; 33.33 % is 0.9999 ETH: covered.
    await ch.connect(f.admin).setBondFloor(3_334);
    await expect(f.commit())
      .to.be.revertedWithCustomError(ch, "BondBelowFloor")
      .withArgs(ETH, ONE, (3n * ONE * 3_334n + 9_999n) / 10_000n);
    await ch.connect(f.admin).setBondFloor(3_333);
    await expect(f.commit()).to.emit(ch, "CycleCommitted");
  });

  it("the constructor sets the initial floor (a deployment whose admin is not the deployer starts with it on)", async () => {
    const f = await loadFixture(fixture);
    const factory = await clearingHouseFactory(f.admin);
    const verifier = await f.vault.guaranteeVerifier();
    const args = [f.vaultAddress, f.outsider.address, f.operator.address, f.guardian.address, 0] as const;
    const ch = await factory.deploy(...args, 2_500, verifier);
    await expect(ch.deploymentTransaction()).to.emit(ch, "BondFloorSet").withArgs(2_500n);
    expect(await ch.bondFloorBps()).to.equal(2_500n);
    await expect(factory.deploy(...args, 10_001, verifier))
      .to.be.revertedWithCustomError(ch, "BondFloorTooHigh")
      .withArgs(10_001n);
  });

  it("only the default admin sets it", async () => {
    const f = await loadFixture(fixture);
    await expect(f.clearingHouse.connect(f.operator).setBondFloor(1))
      .to.be.revertedWithCustomError(f.clearingHouse, "AccessControlUnauthorizedAccount")
      .withArgs(f.operator.address, "0x" + "00".repeat(32));
  });
});
