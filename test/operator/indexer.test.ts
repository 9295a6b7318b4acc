import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther, ZeroAddress } from "ethers";
import { ethers, network } from "hardhat";
import {
  JOURNAL_PRUNED_BELOW_KEY,
  REORG_HISTORY_BLOCKS,
  ReorgTooDeepError,
} from "../../operator/chain/indexer";
import { chainFixture, type CoreHarness, mine, openCore, time } from "./indexer-fixtures";

const ETH = ZeroAddress;

async function balance(h: CoreHarness, user: string, asset = ETH) {
  return h.store.collateral.getCollateral(user, asset);
}

describe("chain indexer", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("credits a deposit only once it has the configured confirmations", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f, { confirmations: 3 });
    await f.vault.connect(f.alice).deposit({ value: parseEther("2") });
    await h.indexer.tick();
    expect((await balance(h, f.alice.address)).deposited).to.equal(0n);
    await mine(2);
    await h.indexer.syncToHead();
    expect((await balance(h, f.alice.address)).deposited).to.equal(0n);
    await mine(1);
    await h.indexer.syncToHead();
    expect((await balance(h, f.alice.address)).deposited).to.equal(parseEther("2"));
    // Idempotent: more ticks change nothing.
    await mine(5);
    await h.indexer.syncToHead();
    await h.indexer.tick();
    expect((await balance(h, f.alice.address)).deposited).to.equal(parseEther("2"));
  });

  it("tracks token deposits and withdrawals: request, cancel, finalize", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    await f.vault.connect(f.bob).depositToken(f.usdAddress, 1_000n);
    await f.vault.connect(f.bob).requestWithdrawal(f.usdAddress, 400n);
    await h.indexer.syncToHead();
    let b = await balance(h, f.bob.address, f.usdAddress);
    expect([b.deposited, b.pendingWithdrawal]).to.deep.equal([1_000n, 400n]);
    const [w] = await h.store.collateral.listWithdrawals(f.bob.address);
    expect(w).to.include({ withdrawalId: 1, state: "PENDING", amount: 400n });

    await f.vault.connect(f.bob).cancelWithdrawal(f.usdAddress);
    await h.indexer.syncToHead();
    b = await balance(h, f.bob.address, f.usdAddress);
    expect(b.pendingWithdrawal).to.equal(0n);
    expect((await h.store.collateral.getWithdrawal(1))?.state).to.equal("CANCELLED");

    await f.vault.connect(f.bob).requestWithdrawal(f.usdAddress, 300n);
    await time.increase(f.timings.withdrawalGracePeriod);
    await f.vault.connect(f.bob).finalizeWithdrawal(f.usdAddress);
    await h.indexer.syncToHead();
    b = await balance(h, f.bob.address, f.usdAddress);
    expect([b.deposited, b.pendingWithdrawal]).to.deep.equal([700n, 0n]);
    expect(await h.store.collateral.getWithdrawal(2)).to.include({ state: "FINALIZED", paid: 300n });
  });

  it("never credits a deposit that a reorg removed before its confirmation", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f, { confirmations: 2 });
    await h.indexer.syncToHead();
    const snapshot = (await network.provider.send("evm_snapshot", [])) as string;
    await f.vault.connect(f.alice).deposit({ value: 1_000n });
    await mine(1);
    await h.indexer.syncToHead(); // the deposit block is confirmed by 1 only: not applied
    expect((await balance(h, f.alice.address)).deposited).to.equal(0n);
    await network.provider.send("evm_revert", [snapshot]);
    await f.vault.connect(f.bob).deposit({ value: 7n }); // a different chain
    await mine(3);
    await h.indexer.syncToHead();
    expect((await balance(h, f.alice.address)).deposited).to.equal(0n);
    expect((await balance(h, f.bob.address)).deposited).to.equal(7n);
  });

  it("rewinds applied events when the chain reorganises under its cursor", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f, { confirmations: 0 });
    await f.vault.connect(f.carol).deposit({ value: 50n });
    await h.indexer.syncToHead();
    const snapshot = (await network.provider.send("evm_snapshot", [])) as string;
    await f.vault.connect(f.alice).deposit({ value: 1_000n });
    await f.vault.connect(f.alice).requestWithdrawal(ETH, 600n);
    await h.indexer.syncToHead();
    let alice = await balance(h, f.alice.address);
    expect([alice.deposited, alice.pendingWithdrawal]).to.deep.equal([1_000n, 600n]);

    await network.provider.send("evm_revert", [snapshot]);
    await f.vault.connect(f.bob).deposit({ value: 9n });
    await mine(2);
    const result = await h.indexer.tick();
    expect(result.rewoundTo).to.not.equal(null);
    expect(result.undone).to.equal(2);
    await h.indexer.syncToHead();
    alice = await balance(h, f.alice.address);
    expect([alice.deposited, alice.pendingWithdrawal]).to.deep.equal([0n, 0n]);
    expect(await h.store.collateral.getWithdrawal(1)).to.equal(null);
    expect((await balance(h, f.bob.address)).deposited).to.equal(9n);
    expect((await balance(h, f.carol.address)).deposited).to.equal(50n);
  });

  it("prunes the journal below the kept reorg history as the cursor advances", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f, { confirmations: 0, maxBlocksPerTick: 5_000 });
    const receipt = (await (await f.vault.connect(f.alice).deposit({ value: 1_000n })).wait())!;
    const depositLog = { txHash: receipt.hash, logIndex: receipt.logs[0].index };
    await h.indexer.syncToHead();
    expect(await h.store.chainJournal.getChainEvent(depositLog.txHash, depositLog.logIndex)).to.not.equal(
      null,
    );
    expect(await h.store.operatorState.getOperatorState(JOURNAL_PRUNED_BELOW_KEY)).to.equal(null);

    await mine(REORG_HISTORY_BLOCKS + 10);
    const cursor = (await h.indexer.syncToHead())!;
    expect(await h.store.chainJournal.getChainEvent(depositLog.txHash, depositLog.logIndex)).to.equal(null);
    const prunedBelow = Number(await h.store.operatorState.getOperatorState(JOURNAL_PRUNED_BELOW_KEY));
    expect(prunedBelow).to.be.greaterThan(receipt.blockNumber);
    expect(prunedBelow).to.be.at.most(cursor.blockNumber - REORG_HISTORY_BLOCKS);
    // Pruning forgets how to undo the event, not its effect.
    expect((await balance(h, f.alice.address)).deposited).to.equal(1_000n);
  });

  it("refuses to rewind a reorg deeper than the kept history once the journal is pruned", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f, { confirmations: 0, maxBlocksPerTick: 5_000 });
    const snapshot = (await network.provider.send("evm_snapshot", [])) as string;
    await f.vault.connect(f.alice).deposit({ value: 1_000n });
    await mine(REORG_HISTORY_BLOCKS + 10);
    const cursor = (await h.indexer.syncToHead())!;
    expect(await h.store.operatorState.getOperatorState(JOURNAL_PRUNED_BELOW_KEY)).to.not.equal(null);

    // Another history from before the deposit, longer than everything Core remembers.
    await network.provider.send("evm_revert", [snapshot]);
    await f.vault.connect(f.bob).deposit({ value: 9n });
    await mine(REORG_HISTORY_BLOCKS + 20);
    let caught: unknown;
    await h.indexer.tick().catch((error: unknown) => (caught = error));
    expect(caught).to.be.instanceOf(ReorgTooDeepError);
    expect(String(caught)).to.match(/below the kept history/);
    // Nothing was undone or applied: the operator decides (snapshot restore or re-index).
    expect(await h.store.chainJournal.getChainCursor()).to.deep.equal(cursor);
    expect((await balance(h, f.alice.address)).deposited).to.equal(1_000n);
    expect((await balance(h, f.bob.address)).deposited).to.equal(0n);
  });

  it("keeps locks taken after a rewound deposit (inverse deltas, not snapshots)", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    await f.vault.connect(f.alice).deposit({ value: 1_000n });
    await h.indexer.syncToHead();
    const snapshot = (await network.provider.send("evm_snapshot", [])) as string;
    await f.vault.connect(f.alice).deposit({ value: 500n });
    await h.indexer.syncToHead();
    await h.store.collateral.lockIfAvailable(f.alice.address, ETH, 300n, (b) => b.deposited, 0);
    await network.provider.send("evm_revert", [snapshot]);
    await mine(2);
    await h.indexer.syncToHead();
    const alice = await balance(h, f.alice.address);
    expect([alice.deposited, alice.locked]).to.deep.equal([1_000n, 300n]);
  });

  it("resumes after a restart mid-way without losing or double-applying", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f, { maxBlocksPerTick: 2 });
    for (let i = 1n; i <= 5n; i++) await f.vault.connect(f.dave).deposit({ value: i });
    await h.indexer.tick(); // part of the way
    const partial = (await balance(h, f.dave.address)).deposited;
    expect(partial < 15n).to.equal(true);
    // Restart: a new indexer instance over the same store; the old one is dropped.
    const restarted = h.newIndexer();
    await restarted.syncToHead();
    await h.indexer.tick(); // a stale instance ticking again applies nothing twice
    expect((await balance(h, f.dave.address)).deposited).to.equal(15n);
  });

  it("starts from the Vault's deployment block and ignores other contracts' logs", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    await f.usd.connect(f.alice).transfer(f.bob.address, 5n); // a token Transfer: not ours
    const result = await h.indexer.tick();
    expect(result.range?.from).to.equal(f.deployment.vaultDeployBlock);
    expect(result.cursor?.blockNumber).to.equal(await ethers.provider.getBlockNumber());
  });
});
