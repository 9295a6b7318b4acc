/**
 * The operator sender on a real Hardhat chain: one nonce source (several sends in one tick, through
 * Core's own JSON-RPC provider over HTTP), a dropped transaction re-sent, a stuck one replaced with
 * higher fees, the nonce reconciled after a transaction sent from the same key outside Core, and a
 * restart that resumes from the journal. Mining is switched to manual (`evm_setAutomine`) where a test
 * needs transactions to wait in the mempool; it is switched back whatever happens.
 */
import {
  dropTransaction,
  loadFixture,
  mine,
  setNextBlockBaseFeePerGas,
} from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { type JsonRpcProvider, Transaction, Wallet, ZeroAddress, hexlify, randomBytes } from "ethers";
import { network } from "hardhat";
import { JsonRpcServer } from "hardhat/internal/hardhat-network/jsonrpc/server";
import { rpcProvider } from "../../operator/background";
import { commitErrorsInterface } from "../../operator/chain/abi";
import type { ChainProvider } from "../../operator/chain/indexer";
import {
  OperatorSender,
  SENDER_JOURNAL_KEY_PREFIX,
  type SenderPolicy,
  type SignedTransaction,
} from "../../operator/chain/sender";
import { ClearingKeeper } from "../../operator/clearing/keeper";
import { ClearingScheduler, NEXT_CUTOFF_KEY } from "../../operator/clearing/scheduler";
import { CoreMetrics } from "../../operator/metrics";
import { captureLogs } from "../support/log-capture";
import {
  advance,
  chainFixture,
  type CoreHarness,
  issueGuarantee,
  OPERATOR_KEY,
  openCore,
  provider,
} from "./indexer-fixtures";

/** The sender's structured log lines, parsed; `named(msg)` picks one message. */
function capturedLogger() {
  const { logger, lines } = captureLogs("debug");
  return { logger, lines, named: (msg: string) => lines.filter((l) => l.msg === msg) };
}

async function setAutomine(on: boolean): Promise<void> {
  await network.provider.send("evm_setAutomine", [on]);
}

/** Runs `body` with manual mining; automine is back on afterwards whatever happens. */
async function withManualMining<T>(body: () => Promise<T>): Promise<T> {
  await setAutomine(false);
  try {
    return await body();
  } finally {
    await setAutomine(true);
  }
}

describe("operator sender: nonces, re-sends, fee replacement", function () {
  let h: CoreHarness | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await h?.close();
    h = undefined;
  });

  function newSender(p: ChainProvider, logger = capturedLogger().logger, policy: Partial<SenderPolicy> = {}) {
    return new OperatorSender({
      privateKey: OPERATOR_KEY,
      provider: p,
      chainId: 31337n,
      store: h!.store,
      logger,
      policy,
      clock: h!.clock,
    });
  }

  /** A real transaction the operator can always send: calldata to an account without code. */
  function plainCall(to: string) {
    return { to, data: hexlify(randomBytes(8)), errors: commitErrorsInterface };
  }

  /** Core's production provider (ethers JsonRpcProvider, `rpcProvider`) over HTTP to the test chain. */
  async function coreProvider(): Promise<JsonRpcProvider> {
    const server = new JsonRpcServer({ hostname: "127.0.0.1", port: 0, provider: network.provider });
    const { port } = await server.listen();
    const p = rpcProvider({ rpcUrl: `http://127.0.0.1:${port}`, chainId: 31337, rpcTimeoutMs: 5_000 });
    cleanups.push(async () => {
      p.destroy();
      await server.close();
    });
    return p;
  }

  async function receiptOf(hash: string) {
    const receipt = await provider.getTransactionReceipt(hash);
    expect(receipt, `receipt of ${hash}`).to.not.equal(null);
    return receipt!;
  }

  it("gives several keeper covers and a commit sent in one round distinct nonces, and all of them mine", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const rpc = await coreProvider();
    const { logger, named } = capturedLogger();
    const sender = newSender(rpc as unknown as ChainProvider, logger);
    const scheduler = new ClearingScheduler({
      store: h.store,
      provider: rpc as unknown as ChainProvider,
      sender,
      deployment: f.deployment,
      chainClock: h.chainClock,
      logger,
      cycleLengthSeconds: f.timings.cycleLength,
      gasBudget: null,
    });
    const keeper = new ClearingKeeper({
      store: h.store,
      sender,
      deployment: f.deployment,
      chainClock: h.chainClock,
      logger,
      claimCredits: false,
    });

    // Cycle 1: alice, bob and carol each owe dave, and none of them pays.
    for (const payer of [f.alice, f.bob, f.carol]) await f.vault.connect(payer).deposit({ value: 1_000n });
    await h.indexer.syncToHead();
    await h.syncClock();
    for (const payer of [f.alice, f.bob, f.carol]) await issueGuarantee(h, payer, f.dave.address, 100n);
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));
    expect(await scheduler.tick()).to.include({ action: "committed", cycleId: 1 });
    await h.indexer.syncToHead();
    expect(await h.store.cycles.listCycleDebts({ status: "OPEN" })).to.have.length(3);

    // Past the payment deadline, with a second cycle due: one round commits and covers three debts.
    await advance(h, 2 * f.timings.challengeWindow + f.timings.paymentWindow + 1);
    await issueGuarantee(h, f.alice, f.bob.address, 10n);
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));
    const committed = await scheduler.tick();
    const kept = await keeper.tick();
    expect(committed).to.include({ action: "committed", cycleId: 2 });
    expect(kept.covered.map((c) => c.debtor)).to.have.members([
      f.alice.address,
      f.bob.address,
      f.carol.address,
    ]);

    const hashes = [
      committed.action === "committed" ? committed.txHash : "",
      ...kept.covered.map((c) => c.txHash),
    ];
    const receipts = await Promise.all(hashes.map(receiptOf));
    expect(receipts.map((r) => r.status)).to.deep.equal([1, 1, 1, 1]);
    const nonces = await Promise.all(
      hashes.map(async (hash) => (await provider.getTransaction(hash))!.nonce),
    );
    expect(new Set(nonces).size).to.equal(4);
    expect(Math.max(...nonces) - Math.min(...nonces)).to.equal(3);
    expect(await f.clearingHouse.lastCycleId()).to.equal(2n);
    await h.indexer.syncToHead();
    expect(await h.store.cycles.listCycleDebts({ cycleId: 1, status: "COVERED" })).to.have.length(3);

    // Sends started concurrently are serialised too.
    const concurrent = await Promise.all(
      [1, 2, 3, 4, 5].map(() => sender.send(plainCall(f.outsider.address))),
    );
    expect(new Set(concurrent.map((t) => t.nonce)).size).to.equal(5);
    for (const t of concurrent) expect((await receiptOf(t.hash)).status).to.equal(1);

    // The sender's own structured lines: each send with its nonce and hash, then mined.
    expect(named("operator transaction sent").map((l) => l.nonce)).to.include.members([...nonces]);
    await sender.tick();
    const mined = named("operator transaction mined");
    expect(mined.map((l) => l.tx)).to.include.members(concurrent.map((t) => t.hash));
    expect(await sender.unfinished()).to.deep.equal([]);
  });

  it("does not send a call again while the same call is in flight", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const sender = newSender(provider);
    const call = plainCall(f.outsider.address);
    await withManualMining(async () => {
      const first = await sender.send(call);
      const again = await sender.send(call);
      expect(again).to.deep.include({ hash: first.hash, nonce: first.nonce, alreadyInFlight: true });
      await mine(1);
      const [status] = await sender.tick();
      expect(status).to.include({ state: "mined", hash: first.hash });
    });
    expect((await sender.send(call)).alreadyInFlight).to.equal(false); // finished: a new send
  });

  it("shows unfinished operator transactions and the oldest one's age in the metrics", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const sender = newSender(provider);
    const metrics = new CoreMetrics(h.store, undefined, { address: sender.address, clock: h.clock });
    const sample = async (name: string) => {
      const line = (await metrics.render()).body.split("\n").find((l) => l.startsWith(`${name} `));
      return line === undefined ? null : Number(line.split(" ")[1]);
    };
    expect(await sample("surety_operator_transactions_unfinished")).to.equal(0);
    expect(await sample("surety_operator_transaction_oldest_seconds")).to.equal(0);
    await withManualMining(async () => {
      await sender.send(plainCall(f.outsider.address));
      h!.clock.advance(30);
      await sender.send(plainCall(f.outsider.address));
      expect(await sample("surety_operator_transactions_unfinished")).to.equal(2);
      expect(await sample("surety_operator_transaction_oldest_seconds")).to.equal(30);
      await mine(1);
      await sender.tick();
    });
    expect(await sample("surety_operator_transactions_unfinished")).to.equal(0);
    expect(await sample("surety_operator_transaction_oldest_seconds")).to.equal(0);
  });

  it("re-sends a transaction dropped from the mempool and completes when it mines", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const { logger, named } = capturedLogger();
    const sender = newSender(provider, logger, { replaceAfterBlocks: 100 });
    await withManualMining(async () => {
      const sent = await sender.send(plainCall(f.outsider.address));
      expect(await dropTransaction(sent.hash)).to.equal(true);
      expect(await provider.getTransaction(sent.hash)).to.equal(null);

      const [status] = await sender.tick();
      expect(status).to.include({ state: "pending", hash: sent.hash, nonce: sent.nonce });
      expect(named("operator transaction re-sent (not known to the node)")).to.have.length(1);
      expect(named("operator transaction re-sent (not known to the node)")[0]).to.include({
        nonce: sent.nonce,
        tx: sent.hash,
      });
      expect(await provider.getTransaction(sent.hash)).to.not.equal(null);

      await mine(1);
      const [done] = await sender.tick();
      expect(done).to.include({ state: "mined", hash: sent.hash });
      expect((await receiptOf(sent.hash)).status).to.equal(1);
    });
    expect(await sender.unfinished()).to.deep.equal([]);
    expect(
      await h.store.operatorState.getOperatorState(SENDER_JOURNAL_KEY_PREFIX + sender.address.toLowerCase()),
    ).to.equal(null);
  });

  it("replaces a stuck transaction with both fees raised; the replacement's mining completes the send", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const { logger, named } = capturedLogger();
    const sender = newSender(provider, logger, { replaceAfterBlocks: 2, feeBumpBps: 1_250 });
    const persisted: SignedTransaction[] = [];
    await withManualMining(async () => {
      const sent = await sender.send({
        ...plainCall(f.outsider.address),
        persist: async (tx) => void persisted.push(tx),
      });
      const original = Transaction.from(sent.raw);
      // The market moves above its fee cap: blocks go by without it.
      const high = original.maxFeePerGas! * 4n;
      for (let i = 0; i < 2; i++) {
        await setNextBlockBaseFeePerGas(high);
        await mine(1);
      }
      expect(await provider.getTransactionReceipt(sent.hash)).to.equal(null);

      const [status] = await sender.tick();
      expect(status.state).to.equal("pending");
      expect(status.hash).to.not.equal(sent.hash);
      const replacement = Transaction.from(persisted[persisted.length - 1].raw);
      expect(persisted.map((t) => t.hash)).to.deep.equal([sent.hash, status.hash]);
      expect(replacement.nonce).to.equal(sent.nonce);
      expect(replacement.data).to.equal(original.data);
      expect(replacement.maxFeePerGas! * 8n).to.be.gte(original.maxFeePerGas! * 9n);
      expect(replacement.maxPriorityFeePerGas! * 8n).to.be.gte(original.maxPriorityFeePerGas! * 9n);
      expect(replacement.maxFeePerGas!).to.be.gt(high); // at least the market now
      expect(named("operator transaction replaced with higher fees")[0]).to.include({
        nonce: sent.nonce,
        tx: status.hash,
        replaces: sent.hash,
      });

      await mine(1);
      const [done] = await sender.tick();
      expect(done).to.include({ state: "mined", hash: status.hash, nonce: sent.nonce });
      expect(await provider.getTransactionReceipt(sent.hash)).to.equal(null);
      expect(named("operator transaction mined")[0]).to.include({ tx: status.hash, replacement: true });
    });
  });

  it("leaves a stuck transaction at the fee ceiling as it is", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const { logger, named } = capturedLogger();
    const market = await provider.getFeeData();
    const sender = newSender(provider, logger, { replaceAfterBlocks: 1, maxFeePerGas: market.maxFeePerGas! });
    await withManualMining(async () => {
      const sent = await sender.send(plainCall(f.outsider.address));
      expect(Transaction.from(sent.raw).maxFeePerGas).to.be.lte(market.maxFeePerGas!);
      await setNextBlockBaseFeePerGas(market.maxFeePerGas! * 4n);
      await mine(1);
      const [status] = await sender.tick();
      expect(status).to.include({ state: "pending", hash: sent.hash });
      expect(named("operator transaction stuck at the fee ceiling; not replaced")[0]).to.include({
        nonce: sent.nonce,
        tx: sent.hash,
      });
      await dropTransaction(sent.hash); // leave no stuck transaction to later tests
    });
  });

  it("holds a send above a lost lower nonce until that one is re-sent (a node that will not queue)", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const { logger, named } = capturedLogger();
    const sender = newSender(provider, logger);
    const lost = await withManualMining(async () => {
      const tx = await sender.send(plainCall(f.outsider.address));
      await dropTransaction(tx.hash);
      return tx;
    });
    // Automine again: Hardhat refuses a nonce above the account's next one ("can't be queued").
    const above = await sender.send(plainCall(f.outsider.address));
    expect(above.nonce).to.equal(lost.nonce + 1);
    expect(named("operator transaction waits for lower nonces")[0]).to.include({ nonce: above.nonce });
    expect(await provider.getTransaction(above.hash)).to.equal(null);
    // Re-sends the lost one (mined at once), then the waiting one (now accepted and mined).
    expect((await sender.tick()).map((s) => s.state)).to.deep.equal(["pending", "pending"]);
    expect((await sender.tick()).map((s) => s.state)).to.deep.equal(["mined", "mined"]);
    expect(await sender.unfinished()).to.deep.equal([]);
    expect((await receiptOf(lost.hash)).status).to.equal(1);
    expect((await receiptOf(above.hash)).status).to.equal(1);
  });

  it("follows a mined transaction until it is confirmed, and again when a reorg takes it out", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const { logger, named } = capturedLogger();
    const sender = newSender(provider, logger, { confirmations: 2 });
    const snapshot = (await network.provider.send("evm_snapshot", [])) as string;
    const sent = await sender.send(plainCall(f.outsider.address));
    expect((await sender.tick())[0]).to.include({ state: "mined", hash: sent.hash });
    expect(await sender.unfinished()).to.have.length(1); // not yet 2 blocks deep
    // A reorg: the block with it is gone, and so is the node's copy.
    await network.provider.send("evm_revert", [snapshot]);
    expect(await provider.getTransactionReceipt(sent.hash)).to.equal(null);
    const [status] = await withManualMining(() => sender.tick());
    expect(status).to.include({ state: "pending", hash: sent.hash });
    expect(named("operator transaction reorged out; following it again")).to.have.length(1);
    await mine(3);
    expect((await sender.tick())[0]).to.include({ state: "mined", hash: sent.hash });
    expect(await sender.unfinished()).to.deep.equal([]);
  });

  it("raises the fees of a transaction the node refused as too cheap", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const { logger, named } = capturedLogger();
    const sender = newSender(provider, logger, { replaceAfterBlocks: 1 });
    const market = await provider.getFeeData();
    await setNextBlockBaseFeePerGas(market.maxFeePerGas! * 2n); // the market jumps after the fee read
    const sent = await sender.send(plainCall(f.outsider.address));
    expect(named("operator transaction refused: fees too low")[0]).to.include({
      nonce: sent.nonce,
      tx: sent.hash,
    });
    expect(await provider.getTransaction(sent.hash)).to.equal(null);
    await mine(1);
    const [status] = await sender.tick();
    expect(status.hash).to.not.equal(sent.hash);
    expect(named("operator transaction replaced with higher fees")[0]).to.include({ replaces: sent.hash });
    const [done] = await sender.tick();
    expect(done).to.include({ state: "mined", hash: status.hash, nonce: sent.nonce });
  });

  it("cancels a call no node accepts, so the nonces behind it are not blocked", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const { logger, named } = capturedLogger();
    const sender = newSender(provider, logger, { replaceAfterBlocks: 2 });
    // Above the block gas limit: refused whatever the fees.
    const refused = await sender.send({ ...plainCall(f.outsider.address), gasLimit: 100_000_000n }).then(
      () => null,
      (error: Error) => error.message,
    );
    expect(refused).to.match(/gas limit/i);
    const [stuck] = await sender.unfinished();
    await mine(2);
    const [status] = await sender.tick();
    expect(status.hash).to.not.equal(stuck.hash);
    expect(named("operator transaction cancelled: refused by the node")[0]).to.include({
      nonce: stuck.nonce,
      replaces: stuck.hash,
    });
    const cancel = (await provider.getTransaction(status.hash))!;
    expect([cancel.to, cancel.value, cancel.data]).to.deep.equal([sender.address, 0n, "0x"]);
    const [done] = await sender.tick();
    expect(done).to.include({ state: "consumed", nonce: stuck.nonce, cancelled: true });
    const next = await sender.send(plainCall(f.outsider.address));
    expect(next.nonce).to.equal(stuck.nonce + 1);
    expect((await receiptOf(next.hash)).status).to.equal(1);
  });

  it("reconciles its nonce after a transaction from the same key outside Core, and reports a nonce taken from it", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const { logger, named } = capturedLogger();
    const sender = newSender(provider, logger);
    const outside = new Wallet(OPERATOR_KEY, provider as never);

    const first = await sender.send(plainCall(f.outsider.address));
    // Someone uses the operator key elsewhere: the nonce the sender would take next is gone.
    const external = await outside.sendTransaction({ to: f.outsider.address, nonce: first.nonce + 1 });
    await external.wait();
    const second = await sender.send(plainCall(f.outsider.address));
    expect(second.nonce).to.equal(first.nonce + 2);
    expect((await receiptOf(second.hash)).status).to.equal(1);
    expect(named("operator nonce reconciled with the chain")[0]).to.include({
      reason: "nonce_too_low",
      nonce: first.nonce + 1,
    });

    // An outside transaction takes the nonce of one of ours still in the mempool: never executed.
    await withManualMining(async () => {
      const ours = await sender.send(plainCall(f.outsider.address));
      const fees = Transaction.from(ours.raw);
      await outside.sendTransaction({
        to: ZeroAddress,
        nonce: ours.nonce,
        maxFeePerGas: fees.maxFeePerGas! * 2n,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas! * 2n + 1n,
      });
      await mine(1);
      const statuses = await sender.tick();
      expect(statuses.find((s) => s.nonce === ours.nonce)).to.include({ state: "consumed", hash: ours.hash });
      expect(
        named("operator transaction's nonce used by another transaction; it was never executed"),
      ).to.have.length(1);
    });
    const after = await sender.send(plainCall(f.outsider.address));
    expect((await receiptOf(after.hash)).status).to.equal(1);
  });

  it("resumes from its journal after a restart: a lost transaction is re-sent as the same bytes", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    await withManualMining(async () => {
      const before = newSender(provider);
      const a = await before.send(plainCall(f.outsider.address));
      const b = await before.send(plainCall(f.outsider.address));
      // The node restarts with an empty mempool, and so does Core.
      await dropTransaction(a.hash);
      await dropTransaction(b.hash);
      const { logger, named } = capturedLogger();
      const after = newSender(provider, logger);
      expect((await after.unfinished()).map((t) => t.hash)).to.deep.equal([a.hash, b.hash]);
      const statuses = await after.tick();
      expect(statuses.map((s) => s.state)).to.deep.equal(["pending", "pending"]);
      expect(named("operator transaction re-sent (not known to the node)").map((l) => l.tx)).to.deep.equal([
        a.hash,
        b.hash,
      ]);
      // New sends go above the resumed nonces.
      const c = await after.send(plainCall(f.outsider.address));
      expect(c.nonce).to.equal(b.nonce + 1);
      await mine(1);
      expect((await after.tick()).map((s) => s.state)).to.deep.equal(["mined", "mined", "mined"]);
    });
  });

  it("stores a commit's fee replacement with its cycle, so a restarted scheduler follows the replacement", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const harness = h;
    await f.vault.connect(f.alice).deposit({ value: 1_000n });
    await h.indexer.syncToHead();
    await h.syncClock();
    await issueGuarantee(h, f.alice, f.bob.address, 400n);
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));
    const schedulerWith = (sender: OperatorSender) =>
      new ClearingScheduler({
        store: harness.store,
        provider,
        sender,
        deployment: f.deployment,
        chainClock: harness.chainClock,
        logger: capturedLogger().logger,
        cycleLengthSeconds: f.timings.cycleLength,
        gasBudget: null,
      });
    await withManualMining(async () => {
      const sender = newSender(provider, undefined, { replaceAfterBlocks: 1 });
      const scheduler = schedulerWith(sender);
      const sent = await scheduler.tick();
      expect(sent).to.include({ action: "committed", cycleId: 1 });
      const original = (await harness.store.cycles.getCycle(1))!;
      await setNextBlockBaseFeePerGas(Transaction.from(original.rawTx!).maxFeePerGas! * 4n);
      await mine(1);
      const [replaced] = await sender.tick();
      const stored = (await harness.store.cycles.getCycle(1))!;
      expect(stored.txHash).to.equal(replaced.hash).and.to.not.equal(original.txHash);
      expect(stored.txNonce).to.equal(original.txNonce);
      expect(Transaction.from(stored.rawTx!).hash).to.equal(stored.txHash);

      // Restart with an empty mempool: the new scheduler re-sends the stored replacement.
      await dropTransaction(replaced.hash);
      const restarted = schedulerWith(newSender(provider));
      expect(await restarted.tick()).to.deep.equal({ action: "pending", cycleId: 1, txHash: stored.txHash });
      await mine(1);
    });
    expect(await f.clearingHouse.lastCycleId()).to.equal(1n);
    await h.indexer.syncToHead();
    expect((await h.store.cycles.getCycle(1))?.state).to.equal("COMMITTED");
  });
});
