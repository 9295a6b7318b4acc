import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { keccak256, parseEther, toUtf8Bytes, Wallet, ZeroAddress } from "ethers";
import { ethers, network } from "hardhat";
import { remunerateCallArgs, toRemunerateArgs } from "../../sdk/certificate";
import type { GuaranteeClaimsV2 } from "../../sdk/claims";
import { validationRequestHash } from "../../sdk/ids";
import { silentLogger } from "../../operator/logger";
import { WebhookDispatcher } from "../../operator/webhooks";
import {
  advance,
  chainFixture,
  clearingTasks,
  type CoreHarness,
  issueGuarantee,
  mine,
  openCore,
} from "./indexer-fixtures";
import { RECEIVER_SECRET, WebhookReceiver } from "./webhook-receiver";

const ETH = ZeroAddress;
/** Hardhat account #2 (the fixture's alice): its key signs a raw transaction that is sent twice. */
const ALICE_KEY = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a";
const CHAIN_FIELDS = ["network", "transaction_hash", "block_number"];

describe("webhooks from chain events (indexer → outbox → receiver)", function () {
  let h: CoreHarness | undefined;
  let receiver: WebhookReceiver | undefined;
  afterEach(async () => {
    await h?.close();
    await receiver?.close();
    h = undefined;
    receiver = undefined;
  });

  async function setup(options: { confirmations?: number } = {}) {
    const f = await loadFixture(chainFixture);
    h = await openCore(f, options);
    const core = h;
    receiver = await WebhookReceiver.start({ now: () => core.clock.nowSeconds() });
    await h.store.webhooks.putWebhookSubscription({
      id: "hook",
      url: receiver.url,
      secret: RECEIVER_SECRET,
      eventTypes: ["*"],
      description: null,
      source: "api",
      createdAt: h.clock.nowSeconds(),
    });
    const dispatcher = new WebhookDispatcher({
      store: h.store,
      clock: h.clock,
      logger: silentLogger(),
      timeoutMs: 5_000,
      maxAttempts: 5,
      backoffBaseSeconds: 10,
      backoffMaxSeconds: 100,
      jitter: () => 0,
    });
    return { f, h, receiver, dispatcher };
  }

  it("collateral.deposited: exactly the spec's fields, once the deposit has its confirmations", async function () {
    const { f, h, receiver, dispatcher } = await setup({ confirmations: 2 });
    const tx = await f.vault.connect(f.bob).deposit({ value: parseEther("1.5") });
    const receipt = (await tx.wait())!;
    await h.indexer.syncToHead();
    await dispatcher.tick();
    expect(receiver.events).to.have.length(0); // not yet final
    await mine(2);
    await h.indexer.syncToHead();
    await dispatcher.tick();
    expect(receiver.events).to.have.length(1);
    const [event] = receiver.events;
    expect(event.type).to.equal("collateral.deposited");
    expect(Object.keys(event.data)).to.have.members([
      "user_address",
      "asset_address",
      "amount",
      "network",
      "transaction_hash",
      "block_number",
      "status",
    ]);
    expect(event.data).to.deep.equal({
      user_address: f.bob.address,
      asset_address: ETH,
      amount: parseEther("1.5").toString(),
      network: "eip155:31337",
      transaction_hash: receipt.hash.toLowerCase(),
      block_number: receipt.blockNumber,
      status: "finalized",
    });
    // More ticks: no second event for the same log.
    await mine(3);
    await h.indexer.syncToHead();
    await dispatcher.tick();
    expect(receiver.events).to.have.length(1);
  });

  it("withdrawal.requested, withdrawal.cancelled and withdrawal.finalized carry withdrawal_id", async function () {
    const { f, h, receiver, dispatcher } = await setup();
    await f.vault.connect(f.bob).depositToken(f.usdAddress, 1_000n);
    await f.vault.connect(f.bob).requestWithdrawal(f.usdAddress, 400n);
    await f.vault.connect(f.bob).cancelWithdrawal(f.usdAddress);
    const request = await (await f.vault.connect(f.bob).requestWithdrawal(f.usdAddress, 300n)).wait();
    await advance(h, f.timings.withdrawalGracePeriod);
    const final = await (await f.vault.connect(f.bob).finalizeWithdrawal(f.usdAddress)).wait();
    await h.indexer.syncToHead();
    await dispatcher.tick();
    expect(receiver.events.map((e) => [e.type, e.data.withdrawal_id ?? null])).to.deep.equal([
      ["collateral.deposited", null],
      ["withdrawal.requested", "1"],
      ["withdrawal.cancelled", "1"],
      ["withdrawal.requested", "2"],
      ["withdrawal.finalized", "2"],
    ]);
    const requested = receiver.events[3].data;
    expect(requested).to.include({
      user_address: f.bob.address,
      asset_address: f.usdAddress,
      amount: "300",
      state: "PENDING",
      paid: null,
      transaction_hash: request!.hash.toLowerCase(),
      block_number: request!.blockNumber,
    });
    expect(requested.finalizable_at).to.match(/^\d{4}-\d\d-\d\dT/);
    expect(receiver.events[4].data).to.include({
      withdrawal_id: "2",
      amount: "300",
      paid: "300",
      state: "FINALIZED",
      transaction_hash: final!.hash.toLowerCase(),
    });
    for (const key of CHAIN_FIELDS) expect(receiver.events[4].data).to.have.property(key);
  });

  it("cycle.challenge_opened, cycle.challenge_answered and cycle.vetoed", async function () {
    const { f, h, receiver, dispatcher } = await setup();
    const { scheduler, keeper } = clearingTasks(h);
    await f.vault.connect(f.alice).deposit({ value: parseEther("10") });
    await h.indexer.syncToHead();
    await h.syncClock();
    const g1 = await issueGuarantee(h, f.alice, f.bob.address, parseEther("2"));
    expect((await scheduler.tick()).action).to.equal("waiting");
    await advance(h, f.timings.cycleLength);
    expect(await scheduler.tick()).to.include({ action: "committed", cycleId: 1 });
    await h.indexer.syncToHead();
    const challenged = await (await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0)).wait();
    await h.indexer.syncToHead();
    expect((await keeper.tick()).answered).to.have.length(1);
    await h.indexer.syncToHead();
    const vetoed = await (await f.clearingHouse.connect(f.admin).vetoCycle(1)).wait();
    await h.indexer.syncToHead();
    await dispatcher.tick();
    const debt = {
      cycle_id: "1",
      asset_address: ETH,
      debtor_address: f.alice.address,
      amount: parseEther("2").toString(),
    };
    const [opened] = receiver.ofType("cycle.challenge_opened");
    expect(opened.data).to.include({
      ...debt,
      position: "0",
      transaction_hash: challenged!.hash,
      network: "eip155:31337",
    });
    const [answered] = receiver.ofType("cycle.challenge_answered");
    expect(answered.data).to.include({
      ...debt,
      position: "0",
      outcome: "upheld",
      guarantee_id: g1.id.toLowerCase(),
      guarantee_amount: parseEther("2").toString(),
    });
    const [veto] = receiver.ofType("cycle.vetoed");
    expect(veto.data).to.include({
      cycle_id: "1",
      guardian_address: f.admin.address,
      transaction_hash: vetoed!.hash,
    });
    expect(veto.data.guarantee_ids).to.deep.equal([g1.id]);
  });

  it("cycle.committed, guarantee.settled (net position and paid debit) and default.covered", async function () {
    const { f, h, receiver, dispatcher } = await setup();
    const { scheduler, keeper } = clearingTasks(h);
    const { alice, bob, carol, dave } = f;
    await f.vault.connect(alice).deposit({ value: parseEther("10") });
    await f.vault.connect(bob).deposit({ value: parseEther("10") });
    await f.vault.connect(carol).depositToken(f.usdAddress, 1_000n);
    await h.indexer.syncToHead();
    await h.syncClock();
    // ETH: alice −3 +1 = −2 (debtor), bob +2. USD: carol −100 (debtor, will default), dave +100.
    const g1 = await issueGuarantee(h, alice, bob.address, parseEther("3"));
    const g2 = await issueGuarantee(h, bob, alice.address, parseEther("1"));
    const g3 = await issueGuarantee(h, carol, dave.address, 100n, f.usdAddress);
    await dispatcher.tick();
    expect(receiver.ofType("guarantee.issued").map((e) => e.data.guarantee_id)).to.deep.equal([
      g1.id,
      g2.id,
      g3.id,
    ]);

    expect((await scheduler.tick()).action).to.equal("waiting"); // the first cutoff is a cycle away
    await advance(h, f.timings.cycleLength);
    expect(await scheduler.tick()).to.include({ action: "committed", cycleId: 1 });
    await h.indexer.syncToHead();
    await dispatcher.tick();
    const [committed] = receiver.ofType("cycle.committed");
    const cycle = (await h.store.cycles.getCycle(1))!;
    expect(committed.data).to.include({
      cycle_id: "1",
      root: cycle.root,
      guarantee_count: 3,
      payment_deadline: new Date(cycle.paymentDeadline! * 1000).toISOString(),
      network: "eip155:31337",
      transaction_hash: cycle.txHash,
    });
    expect(committed.data.debtors).to.have.deep.members([
      { asset_address: ETH, debtor_address: alice.address, amount: parseEther("2").toString() },
      { asset_address: f.usdAddress, debtor_address: carol.address, amount: "100" },
    ]);
    // bob is not a debtor: his guarantee is settled at the commit.
    let settled = receiver.ofType("guarantee.settled");
    expect(settled.map((e) => [e.data.guarantee_id, e.data.reason])).to.deep.equal([[g2.id, "net_position"]]);
    expect(settled[0].data).to.include({
      state: "SETTLED",
      cycle_id: "1",
      user_address: bob.address,
      recipient_address: alice.address,
      amount: parseEther("1").toString(),
      asset_address: ETH,
    });

    await f.clearingHouse.connect(alice).payNetDebit(1, ETH, { value: parseEther("2") });
    await h.indexer.syncToHead();
    await dispatcher.tick();
    settled = receiver.ofType("guarantee.settled");
    expect(settled.map((e) => [e.data.guarantee_id, e.data.reason])).to.deep.equal([
      [g2.id, "net_position"],
      [g1.id, "net_debit_paid"],
    ]);

    await advance(h, 2 * f.timings.challengeWindow + f.timings.paymentWindow + 1);
    expect((await keeper.tick()).covered).to.have.length(1);
    await h.indexer.syncToHead();
    await dispatcher.tick();
    const [covered] = receiver.ofType("default.covered");
    expect(covered.data).to.include({
      cycle_id: "1",
      asset_address: f.usdAddress,
      debtor_address: carol.address,
      amount: "100",
      covered: "100",
    });
    expect(covered.data.guarantee_ids).to.deep.equal([g3.id]);
    expect(receiver.ofType("guarantee.settled")).to.have.length(2); // a covered default is not "settled"
    // Every id is unique.
    expect(new Set(receiver.events.map((e) => e.id)).size).to.equal(receiver.events.length);
  });

  it("guarantee.remunerated when the recipient is paid on chain (V2)", async function () {
    const { f, h, receiver, dispatcher } = await setup();
    await f.vault.connect(f.alice).deposit({ value: 10_000n });
    await h.indexer.syncToHead();
    await h.syncClock();
    const g = await issueGuarantee(h, f.alice, f.bob.address, 400n, ETH, {});
    const claims = g.claims as GuaranteeClaimsV2;
    const requestHash = validationRequestHash(31337, claims.policy, g.id);
    await f.validationRegistry
      .connect(f.bob)
      .validationRequest(claims.policy.validator, claims.policy.agentId, "ipfs://job", requestHash);
    await f.validationRegistry
      .connect(f.validator)
      .validationResponse(requestHash, 95, "ipfs://verdict", keccak256(toUtf8Bytes("v")), "quality");
    const args = remunerateCallArgs(toRemunerateArgs(g.certificate, g.payer));
    const paid = await (await f.vault.connect(f.bob).remunerate(...args)).wait();
    await h.indexer.syncToHead();
    await dispatcher.tick();
    expect(receiver.ofType("guarantee.issued")[0].data).to.include({
      version: 2,
      state: "PENDING_VALIDATION",
    });
    const [event] = receiver.ofType("guarantee.remunerated");
    expect(event.data).to.deep.equal({
      guarantee_id: g.id,
      state: "REMUNERATED",
      user_address: f.alice.address,
      recipient_address: f.bob.address,
      asset_address: ETH,
      amount: "400",
      network: "eip155:31337",
      transaction_hash: paid!.hash.toLowerCase(),
      block_number: paid!.blockNumber,
    });
  });

  describe("reorgs", function () {
    it("drops the undelivered events of rewound logs", async function () {
      const { f, h, receiver, dispatcher } = await setup();
      const snapshot = await network.provider.send("evm_snapshot");
      await f.vault.connect(f.bob).deposit({ value: 777n });
      await h.indexer.syncToHead();
      const [pending] = await h.store.webhooks.listWebhookDeliveries({ subscriptionId: "hook", limit: 10 });
      expect(pending).to.include({ eventType: "collateral.deposited", status: "pending" });

      await network.provider.send("evm_revert", [snapshot]);
      await mine(3);
      expect((await h.indexer.tick()).rewoundTo).to.not.equal(null);
      expect(await h.store.webhooks.getWebhookDelivery(pending.eventId, "hook")).to.include({
        status: "cancelled",
        nextAttemptAtMs: null,
      });
      expect((await dispatcher.tick()).attempted).to.equal(0);
      expect(receiver.requests).to.have.length(0);
    });

    it("at 0 confirmations (the devnet's depth) a deposit is final when mined: `finalized`, the only status", async function () {
      const { f, h, receiver, dispatcher } = await setup({ confirmations: 0 });
      const snapshot = await network.provider.send("evm_snapshot");
      const receipt = (await (await f.vault.connect(f.bob).deposit({ value: 999n })).wait())!;
      await h.indexer.syncToHead();
      await dispatcher.tick();
      expect(
        receiver
          .ofType("collateral.deposited")
          .map((e) => [e.data.amount, e.data.status, e.data.block_number]),
      ).to.deep.equal([["999", "finalized", receipt.blockNumber]]);

      // Core's finality assumption is its configured depth: a reorg below it takes the deposit out of
      // the books; a delivery already made cannot be unsent (docs/webhooks.md, "Event ids, retries and reorgs").
      await network.provider.send("evm_revert", [snapshot]);
      await mine(3);
      expect((await h.indexer.tick()).rewoundTo).to.not.equal(null);
      expect((await h.store.collateral.getCollateral(f.bob.address, ETH)).deposited).to.equal(0n);
      expect(receiver.events).to.have.length(1);
    });

    it("re-applying the same log after a rewind re-uses the event id: delivered once", async function () {
      const { f, h, receiver, dispatcher } = await setup();
      const wallet = new Wallet(ALICE_KEY, ethers.provider);
      const unsigned = await wallet.populateTransaction(
        await f.vault.connect(wallet).deposit.populateTransaction({ value: 555n }),
      );
      const raw = await wallet.signTransaction(unsigned);
      const snapshot = await network.provider.send("evm_snapshot");
      await (await ethers.provider.broadcastTransaction(raw)).wait();
      await h.indexer.syncToHead();
      await dispatcher.tick();
      expect(receiver.events).to.have.length(1);

      await network.provider.send("evm_revert", [snapshot]);
      await mine(2);
      await h.indexer.tick(); // rewinds: the delivered event cannot be unsent
      await (await ethers.provider.broadcastTransaction(raw)).wait(); // the same transaction mined again
      await h.indexer.syncToHead();
      expect((await h.store.collateral.getCollateral(f.alice.address, ETH)).deposited).to.equal(555n);
      await dispatcher.tick();
      expect(receiver.requests).to.have.length(1); // same id, already delivered: not sent again
      const rows = await h.store.webhooks.listWebhookDeliveries({ subscriptionId: "hook", limit: 10 });
      expect(rows.map((d) => [d.eventId, d.status])).to.deep.equal([[receiver.events[0].id, "delivered"]]);
    });
  });
});
