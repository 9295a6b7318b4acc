/**
 * A fixture resumes at its snapshot's time (test/support/snapshot-clock.ts): without the wrapper EDR stamps
 * the first block after a revert twice the seconds elapsed since the snapshot later, so a short on-chain
 * window (a 30 s challenge window) opened by a fixture closed whenever the host was slow in between.
 * The waits below only create that condition; every assertion is an exact timestamp, whatever the load.
 */
import { loadFixture, mine, takeSnapshot, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { network } from "hardhat";

/** More than one whole second: EDR counts the time since a snapshot in whole seconds. */
const PAUSE_MS = 1_100;
const pause = () => new Promise((resolve) => setTimeout(resolve, PAUSE_MS));

async function pendingTimestamp(): Promise<number> {
  const block = (await network.provider.send("eth_getBlockByNumber", ["pending", false])) as {
    timestamp: string;
  };
  return Number(block.timestamp);
}

describe("Chain time across fixtures (snapshot clock)", () => {
  it("the first block after a revert has the timestamp it would have had at the snapshot", async () => {
    const snapshot = await takeSnapshot();
    const next = await pendingTimestamp();
    await pause();
    await snapshot.restore();
    await mine();
    expect(await time.latest()).to.equal(next);
  });

  it("loadFixture: a later load sees the fixture's time, not the time spent meanwhile", async () => {
    async function startedAt() {
      await mine();
      return time.latest();
    }
    const first = await loadFixture(startedAt);
    await pause();
    await loadFixture(startedAt);
    await mine();
    expect(await time.latest()).to.equal(first + 1);
  });

  it("keeps a next-block timestamp set before the snapshot, and lets a test move time after the revert", async () => {
    const base = await time.latest();
    const at = base + 1_000;
    await time.setNextBlockTimestamp(at);
    const snapshot = await takeSnapshot();
    await pause();
    await snapshot.restore();
    await mine();
    expect(await time.latest()).to.equal(at);

    await snapshot.restore();
    await time.increase(500);
    expect(await time.latest()).to.equal(base + 500);
  });
});
