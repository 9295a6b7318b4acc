/**
 * The operator bond in Core's metrics and logs (docs/operator-api.md `GET /metrics`,
 * docs/clearing.md "Challenges, veto and bond"): the background bond monitor reads
 * `ClearingHouse.bondOf` per asset on a real chain, exports `surety_operator_bond{asset}` and warns once
 * when the bond falls below its configured floor (`SURETY_BOND_FLOORS`), then notes its recovery.
 */
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { AbiCoder, keccak256, parseEther, ZeroAddress } from "ethers";
import { captureLogs } from "../support/log-capture";
import { createBackgroundTasks } from "../../operator/background";
import { chainFixture, type CoreHarness, openCore } from "./indexer-fixtures";

const ETH = ZeroAddress;
const ONE = parseEther("1");

describe("operator bond: metrics and floor warnings (Core)", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("exports the bond per asset and warns once below the floor, then notes the recovery", async function () {
    const f = await loadFixture(chainFixture);
    const { logger, lines } = captureLogs("info");
    const before = await f.clearingHouse.bondOf(ETH);
    const floor = before + 5n * ONE;
    h = await openCore(f, {
      logger,
      config: { bondFloors: `${ETH}:${floor}`, keeperEnabled: false },
    });
    const tasks = await createBackgroundTasks({ ...h.context, provider: ethers.provider });
    try {
      await tasks.runOnce();
      await tasks.runOnce(); // still below: no second warning
      const warned = lines.filter((l) => l.msg?.toString().startsWith("operator bond below its floor"));
      expect(warned).to.have.length(1);
      expect(warned[0]).to.include({
        level: 40,
        asset: ETH,
        bond: before.toString(),
        floor: floor.toString(),
      });
      const metrics = (await h.context.metrics.render()).body;
      expect(metrics).to.include(`surety_operator_bond{asset="${ETH}"} ${Number(before)}`);

      await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 6n * ONE });
      await tasks.runOnce();
      expect(tasks.bond.values().get(ETH)).to.equal(before + 6n * ONE);
      const recovered = lines.filter((l) => l.msg === "operator bond back above its floor");
      expect(recovered).to.have.length(1);
      expect(recovered[0]).to.include({ level: 30, bond: (before + 6n * ONE).toString() });
      expect((await h.context.metrics.render()).body).to.include(
        `surety_operator_bond{asset="${ETH}"} ${Number(before + 6n * ONE)}`,
      );
      expect(lines.filter((l) => Number(l.level) >= 50)).to.deep.equal([]);
    } finally {
      await tasks.stop();
    }
  });

  it("exports what the bond owes in refunds and warns once while it is above zero (audit A2-H1)", async function () {
    const f = await loadFixture(chainFixture);
    const { logger, lines } = captureLogs("info");
    h = await openCore(f, { logger, config: { keeperEnabled: false } });
    const tasks = await createBackgroundTasks({ ...h.context, provider: ethers.provider });
    const owes = (owed: bigint) => setRefundOwed(f.clearingHouse, owed);
    try {
      expect((await h.context.health.evaluate()).checks.bond_refunds_owed).to.equal("off"); // no round yet
      await tasks.runOnce();
      expect(tasks.bond.refundsOwed().get(ETH)).to.equal(0n);
      expect((await h.context.metrics.render()).body).to.include(
        `surety_bond_refunds_owed{asset="${ETH}"} 0`,
      );
      // What a short bond leaves owed (claimDebitRefund / claimOwedRefund, test/contracts/audit2-claims.test.ts),
      // written straight into the ClearingHouse's storage here: the monitor only reads the view.
      await owes(3n * ONE);
      await tasks.runOnce();
      await tasks.runOnce(); // still owed: no second warning
      const warned = lines.filter((l) => l.msg?.toString().startsWith("operator bond owes refunds"));
      expect(warned).to.have.length(1);
      expect(warned[0]).to.include({ level: 40, asset: ETH, owed: (3n * ONE).toString() });
      expect((await h.context.metrics.render()).body).to.include(
        `surety_bond_refunds_owed{asset="${ETH}"} ${Number(3n * ONE)}`,
      );
      // Health warns too (docs/monitoring.md, `bond_refunds_owed`), naming the asset and the amount.
      const owing = await h.context.health.evaluate();
      expect(owing.checks.bond_refunds_owed).to.equal("warn");
      const warning = owing.warnings.find((w) => w.check === "bond_refunds_owed");
      expect(warning).to.include({ subject: ETH, value: Number(3n * ONE), threshold: 0 });
      expect(warning!.reason).to.include(`owes ${3n * ONE} in refunds`);
      await owes(0n);
      await tasks.runOnce();
      expect(lines.filter((l) => l.msg === "operator bond owes no refunds any more")).to.have.length(1);
      expect((await h.context.health.evaluate()).checks.bond_refunds_owed).to.equal("ok");
    } finally {
      await tasks.stop();
    }
  });
});

/**
 * Sets `ClearingHouse.totalRefundOwed(ETH)` by writing its storage slot: a mapping entry `keccak256(asset, p)` for
 * the slot `p` of its mapping, found by trying each candidate and keeping the one the view reads back (every other
 * slot written is restored at once).
 */
async function setRefundOwed(
  clearingHouse: { totalRefundOwed(asset: string): Promise<bigint>; getAddress(): Promise<string> },
  owed: bigint,
) {
  const address = await clearingHouse.getAddress();
  const word = (value: bigint) => "0x" + value.toString(16).padStart(64, "0");
  for (let p = 0n; p < 512n; p++) {
    const slot = keccak256(AbiCoder.defaultAbiCoder().encode(["address", "uint256"], [ETH, p]));
    const before = (await ethers.provider.send("eth_getStorageAt", [address, slot, "latest"])) as string;
    await ethers.provider.send("hardhat_setStorageAt", [address, slot, word(owed === 0n ? 1n : owed)]);
    if ((await clearingHouse.totalRefundOwed(ETH)) === (owed === 0n ? 1n : owed)) {
      await ethers.provider.send("hardhat_setStorageAt", [address, slot, word(owed)]);
      return;
    }
    await ethers.provider.send("hardhat_setStorageAt", [address, slot, before]);
  }
  throw new Error("totalRefundOwed's storage slot not found");
}
