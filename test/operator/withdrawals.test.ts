import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ZeroAddress } from "ethers";
import type { IssuanceError } from "../../operator/guarantees";
import { NEXT_CUTOFF_KEY } from "../../operator/clearing/scheduler";
import {
  advance,
  chainFixture,
  clearingTasks,
  type CoreHarness,
  issueGuarantee,
  openCore,
} from "./indexer-fixtures";

const ETH = ZeroAddress;

describe("withdrawals against open guarantees", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("drops capacity at the request and never lets the payer escape the obligation", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const { scheduler, keeper } = clearingTasks(h);
    await f.vault.connect(f.alice).deposit({ value: 1_000n });
    await h.indexer.syncToHead();
    await h.syncClock();
    const g = await issueGuarantee(h, f.alice, f.bob.address, 600n);

    // Alice asks for everything back at once.
    await f.vault.connect(f.alice).requestWithdrawal(ETH, 1_000n);
    await h.indexer.syncToHead();
    const pending = await h.store.collateral.getCollateral(f.alice.address, ETH);
    expect([pending.deposited, pending.locked, pending.pendingWithdrawal]).to.deep.equal([
      1_000n,
      600n,
      1_000n,
    ]);
    // No new guarantee can use collateral on its way out.
    try {
      await issueGuarantee(h, f.alice, f.bob.address, 1n);
      expect.fail("expected insufficient collateral");
    } catch (error) {
      expect((error as IssuanceError).code).to.equal("insufficient_collateral");
    }

    // The open guarantee is committed within the cycle, long before the grace period ends.
    await advance(h, f.timings.cycleLength);
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));
    expect((await scheduler.tick()).action).to.equal("committed");
    await h.indexer.syncToHead();
    expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(600n);

    // After the grace period the withdrawal pays only what is free of the obligation.
    const [request] = await h.store.collateral.listWithdrawals(f.alice.address, ["PENDING"]);
    await advance(h, request.finalizableAt - h.clock.nowSeconds());
    await f.vault.connect(f.alice).finalizeWithdrawal(ETH);
    await h.indexer.syncToHead();
    expect(await h.store.collateral.getWithdrawal(request.withdrawalId)).to.include({
      state: "FINALIZED",
      paid: 400n,
    });
    const after = await h.store.collateral.getCollateral(f.alice.address, ETH);
    expect([after.deposited, after.locked, after.pendingWithdrawal]).to.deep.equal([600n, 600n, 0n]);

    // Alice never pays: the keeper covers the debit from what stayed in the Vault; bob is paid in full.
    await advance(h, 2 * f.timings.challengeWindow + f.timings.paymentWindow + 1);
    expect((await keeper.tick()).covered).to.have.length(1);
    await h.indexer.syncToHead();
    expect((await h.store.guarantees.getClearingGuarantee(g.id))?.state).to.equal("DEFAULT_REMUNERATED");
    const end = await h.store.collateral.getCollateral(f.alice.address, ETH);
    expect([end.deposited, end.locked]).to.deep.equal([0n, 0n]);
    const [position] = (await h.store.cycles.getCycle(1))!.guaranteeIds;
    expect(position).to.equal(g.id);
    const cycleAsset = await f.clearingHouse.getCycleAsset(1, ETH);
    expect(cycleAsset.funded).to.equal(600n);
    expect(cycleAsset.shortfall).to.equal(0n);
  });
});
