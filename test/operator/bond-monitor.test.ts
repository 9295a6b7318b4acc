/**
 * The operator bond in Core's metrics and logs (docs/operator-api.md `GET /metrics`,
 * docs/clearing.md "Challenges, veto and bond"): the background bond monitor reads
 * `ClearingHouse.bondOf` per asset on a real chain, exports `surety_operator_bond{asset}` and warns once
 * when the bond falls below its configured floor (`SURETY_BOND_FLOORS`), then notes its recovery.
 */
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { parseEther, ZeroAddress } from "ethers";
import { Writable } from "node:stream";
import pino from "pino";
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
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
        done();
      },
    });
    const before = await f.clearingHouse.bondOf(ETH);
    const floor = before + 5n * ONE;
    h = await openCore(f, {
      logger: pino({ level: "info" }, sink),
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
});
