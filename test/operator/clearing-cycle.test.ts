import type { IClearingHouse } from "../../typechain-types/contracts/ClearingHouse";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther, ZeroAddress } from "ethers";
import type { AddressInfo } from "node:net";
import { createCoreApp } from "../../operator/api";
import { type BroadcastOutcome, OperatorSender } from "../../operator/chain/sender";
import { MAX_ASSETS_PER_COMMIT, MAX_DEBTORS_PER_COMMIT } from "../../operator/clearing/commit-plan";
import { ClearingScheduler, NEXT_CUTOFF_KEY } from "../../operator/clearing/scheduler";
import { silentLogger } from "../../operator/logger";
import {
  advance,
  chainFixture,
  clearingTasks,
  type CoreHarness,
  issueGuarantee,
  OPERATOR_KEY,
  openCore,
  provider,
} from "./indexer-fixtures";

/** Persists the signed commit, then "crashes" before broadcasting it. */
class CrashingSender extends OperatorSender {
  protected override async broadcast(): Promise<BroadcastOutcome> {
    throw new Error("crashed before broadcast");
  }
}

const ETH = ZeroAddress;

describe("clearing cycles: scheduler, commit, payment, default cover, claims", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  async function states(ids: string[]) {
    return Promise.all(ids.map(async (id) => (await h!.store.guarantees.getClearingGuarantee(id))!.state));
  }

  it("nets several payers, recipients and two assets, commits, and follows payment and default to the end", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const { scheduler, keeper } = clearingTasks(h);
    const [alice, bob, carol, dave] = [f.alice, f.bob, f.carol, f.dave];
    await f.vault.connect(alice).deposit({ value: parseEther("10") });
    await f.vault.connect(bob).deposit({ value: parseEther("10") });
    await f.vault.connect(alice).depositToken(f.usdAddress, 1_000n);
    await f.vault.connect(carol).depositToken(f.usdAddress, 1_000n);
    await h.indexer.syncToHead();
    await h.syncClock();

    // ETH: alice −3 +2 = −1 (debtor), bob +3 −1 −2 = 0, carol +1 (creditor).
    // USD: alice +100 −300 = −200 (debtor), carol −100 (debtor), dave +300 (creditor).
    const g1 = await issueGuarantee(h, alice, bob.address, parseEther("3"));
    const g2 = await issueGuarantee(h, bob, carol.address, parseEther("1"));
    const g3 = await issueGuarantee(h, bob, alice.address, parseEther("2"));
    const g4 = await issueGuarantee(h, carol, alice.address, 100n, f.usdAddress);
    const g5 = await issueGuarantee(h, alice, dave.address, 300n, f.usdAddress);
    const ids = [g1, g2, g3, g4, g5].map((g) => g.id);
    expect((await h.store.collateral.getCollateral(alice.address, ETH)).locked).to.equal(parseEther("3"));

    expect((await scheduler.tick()).action).to.equal("waiting"); // the first cutoff is a cycle length away
    await advance(h, f.timings.cycleLength);
    const committed = await scheduler.tick();
    expect(committed).to.include({ action: "committed", cycleId: 1, guarantees: 5 });
    expect(await f.clearingHouse.lastCycleId()).to.equal(1n);
    // Not applied until the indexer sees the commit.
    expect(await states(ids)).to.deep.equal(Array(5).fill("FINALIZED_PAYABLE"));
    await h.indexer.syncToHead();
    expect(await states(ids)).to.deep.equal(["NETTED", "SETTLED", "SETTLED", "NETTED", "NETTED"]);
    expect((await h.store.collateral.getCollateral(alice.address, ETH)).locked).to.equal(parseEther("1"));
    expect((await h.store.collateral.getCollateral(alice.address, f.usdAddress)).locked).to.equal(200n);
    expect((await h.store.collateral.getCollateral(carol.address, f.usdAddress)).locked).to.equal(100n);
    expect((await h.store.collateral.getCollateral(bob.address, ETH)).locked).to.equal(0n);
    const debts = await h.store.cycles.listCycleDebts({ cycleId: 1 });
    expect(debts.map((d) => [d.asset, d.debtor, d.amount, d.status])).to.have.deep.members([
      [ETH, alice.address, parseEther("1"), "OPEN"],
      [f.usdAddress, alice.address, 200n, "OPEN"],
      [f.usdAddress, carol.address, 100n, "OPEN"],
    ]);

    // The proof endpoint serves the creditors' exact claimNetCredit arguments.
    const { app } = createCoreApp({ ...h.context, logger: silentLogger() });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    let daveProof: {
      claim_net_credit_args: [string, string, string, IClearingHouse.DebitSummaryStruct, string[]];
    };
    try {
      const cycle = (await (await fetch(`${base}/core/cycles/1`)).json()) as { totals: unknown[] };
      expect(cycle).to.include({ cycle_id: 1, state: "COMMITTED", guarantee_count: 5 });
      expect(cycle.totals).to.have.length(2);
      const proof = (await (
        await fetch(`${base}/core/cycles/1/participants/${dave.address.toLowerCase()}/proof`)
      ).json()) as { positions: (typeof daveProof)[] };
      expect(proof.positions).to.have.length(1);
      daveProof = proof.positions[0];
      expect(daveProof).to.include({ credit: "300", debit: "0", claimed: false });
      expect((await fetch(`${base}/core/cycles/2`)).status).to.equal(404);
      expect((await fetch(`${base}/core/cycles/1/participants/${f.outsider.address}/proof`)).status).to.equal(
        404,
      );
      expect((await fetch(`${base}/core/cycles/x`)).status).to.equal(400);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }

    // Alice pays both debits; carol does not.
    await f.clearingHouse.connect(alice).payNetDebit(1, ETH, { value: parseEther("1") });
    await f.clearingHouse.connect(alice).payNetDebit(1, f.usdAddress);
    await h.indexer.syncToHead();
    expect(await states(ids)).to.deep.equal(["SETTLED", "SETTLED", "SETTLED", "NETTED", "SETTLED"]);
    expect((await h.store.collateral.getCollateral(alice.address, ETH)).locked).to.equal(0n);
    expect((await h.store.collateral.getCollateral(alice.address, ETH)).deposited).to.equal(parseEther("10"));

    // Before the payment deadline the keeper does nothing; after it, it covers carol from her collateral.
    expect((await keeper.tick()).covered).to.have.length(0);
    await advance(h, 2 * f.timings.challengeWindow + f.timings.paymentWindow + 1);
    const kept = await keeper.tick();
    expect(kept.covered.map((c) => c.debtor)).to.deep.equal([carol.address]);
    expect((await keeper.tick()).covered).to.have.length(0); // resolved on chain: not sent twice
    await h.indexer.syncToHead();
    expect(await states(ids)).to.deep.equal([
      "SETTLED",
      "SETTLED",
      "SETTLED",
      "DEFAULT_REMUNERATED",
      "SETTLED",
    ]);
    const carolUsd = await h.store.collateral.getCollateral(carol.address, f.usdAddress);
    expect([carolUsd.deposited, carolUsd.locked]).to.deep.equal([900n, 0n]);
    expect(await f.vault.balanceOf(carol.address, f.usdAddress)).to.equal(900n);
    expect((await h.store.cycles.getCycle(1))?.state).to.equal("FINALIZED");

    // Creditors claim with the served proof; Core records the claims.
    const [cycleId, asset, participant, credit, proof] = daveProof!.claim_net_credit_args;
    await f.clearingHouse.connect(f.outsider).claimNetCredit(cycleId, asset, participant, credit, proof);
    const { keeper: claimer } = clearingTasks(h, { claimCredits: true });
    const claimedByKeeper = await claimer.tick();
    expect(claimedByKeeper.claimed.map((c) => c.participant)).to.deep.equal([carol.address]);
    await h.indexer.syncToHead();
    expect(
      (await h.store.cycles.listCycleClaims(1)).map((c) => [c.participant, c.amount]),
    ).to.have.deep.members([
      [dave.address, 300n],
      [carol.address, parseEther("1")],
    ]);
    expect((await claimer.tick()).claimed).to.have.length(0);
    // The keeper's claim set carol's credit aside (pull payment): she withdraws it, to any address.
    expect(await f.clearingHouse.payoutOf(ETH, carol.address)).to.equal(parseEther("1"));
    await expect(
      f.clearingHouse.connect(carol).withdrawPayout(ETH, f.outsider.address),
    ).to.changeEtherBalance(f.outsider, parseEther("1"));
  });

  it("skips an empty window without using a cycle id", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const { scheduler } = clearingTasks(h);
    await h.indexer.syncToHead(); // Core's chain time starts with the first indexed block
    await scheduler.tick();
    await advance(h, f.timings.cycleLength);
    expect((await scheduler.tick()).action).to.equal("empty");
    expect(await f.clearingHouse.lastCycleId()).to.equal(0n);
    expect(await h.store.cycles.latestCycle()).to.equal(null);
  });

  it("never commits one cycle twice across restarts: a stored plan is sent once, a sent one is not re-planned", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    await f.vault.connect(f.alice).deposit({ value: 1_000n });
    await h.indexer.syncToHead();
    await h.syncClock();
    await issueGuarantee(h, f.alice, f.bob.address, 400n);
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));

    const first = clearingTasks(h).scheduler;
    const result = await first.tick();
    expect(result).to.include({ action: "committed", cycleId: 1 });
    const stored = (await h.store.cycles.getCycle(1))!;
    expect(stored.state).to.equal("SENT");
    expect(stored.rawTx).to.match(/^0x/);

    // Restart: a new scheduler sees the chain has cycle 1; it neither resends nor re-plans those guarantees.
    const restarted = clearingTasks(h).scheduler;
    await advance(h, f.timings.cycleLength);
    expect((await restarted.tick()).action).to.equal("empty");
    expect(await f.clearingHouse.lastCycleId()).to.equal(1n);

    // A crash after the signed commit was stored but before it was broadcast: the next scheduler
    // rebroadcasts exactly that transaction (same nonce, same hash) instead of signing another.
    await issueGuarantee(h, f.alice, f.carol.address, 100n);
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));
    const crashing = new ClearingScheduler({
      store: h.store,
      provider,
      sender: new CrashingSender({ privateKey: OPERATOR_KEY, provider, chainId: 31337n, store: h.store }),
      deployment: f.deployment,
      chainClock: h.chainClock,
      logger: silentLogger(),
      cycleLengthSeconds: f.timings.cycleLength,
      gasBudget: null,
    });
    const crash = await crashing.tick().then(
      () => null,
      (error: Error) => error.message,
    );
    expect(crash).to.equal("crashed before broadcast");
    const sent = (await h.store.cycles.getCycle(2))!;
    expect(sent.state).to.equal("SENT");
    expect(await f.clearingHouse.lastCycleId()).to.equal(1n);
    const resumed = await clearingTasks(h).scheduler.tick();
    expect(resumed).to.deep.equal({ action: "pending", cycleId: 2, txHash: sent.txHash });
    expect(await f.clearingHouse.lastCycleId()).to.equal(2n);
    expect((await clearingTasks(h).scheduler.tick()).action).to.equal("waiting");
    await h.indexer.syncToHead();
    expect((await h.store.cycles.getCycle(2))?.state).to.equal("COMMITTED"); // alice owes 100: open debt
    expect((await h.store.cycles.getCycle(2))?.txHash).to.equal(sent.txHash);
  });

  it("a guarantee issued while a cycle is sent joins the next cycle, never the sent one (key ranges)", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    await f.vault.connect(f.alice).deposit({ value: 1_000n });
    await h.indexer.syncToHead();
    await h.syncClock();
    const first = await issueGuarantee(h, f.alice, f.bob.address, 300n);
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));
    expect(await clearingTasks(h).scheduler.tick()).to.include({
      action: "committed",
      cycleId: 1,
      guarantees: 1,
    });
    // Sent (mined, not yet indexed): the reservation wrote no guarantee.
    expect((await h.store.guarantees.getClearingGuarantee(first.id))!.cycleId).to.equal(null);
    const second = await issueGuarantee(h, f.alice, f.carol.address, 200n);
    expect(await h.store.netting.hasUnreservedPayable()).to.equal(true);
    expect((await clearingTasks(h).scheduler.tick()).action).to.equal("waiting");
    await h.indexer.syncToHead();
    expect(await h.store.guarantees.getClearingGuarantee(first.id)).to.deep.include({
      cycleId: 1,
      state: "NETTED",
    });
    expect(await h.store.guarantees.getClearingGuarantee(second.id)).to.deep.include({
      cycleId: null,
      state: "FINALIZED_PAYABLE",
    });
    await advance(h, f.timings.cycleLength);
    expect(await clearingTasks(h).scheduler.tick()).to.include({
      action: "committed",
      cycleId: 2,
      guarantees: 1,
    });
    expect((await h.store.cycles.getCycle(2))!.guaranteeIds.map((id) => id.toLowerCase())).to.deep.equal([
      second.id.toLowerCase(),
    ]);
    await h.indexer.syncToHead();
    expect(await h.store.guarantees.getClearingGuarantee(second.id)).to.deep.include({
      cycleId: 2,
      state: "NETTED",
    });
    expect((await h.store.guarantees.getClearingGuarantee(first.id))!.cycleId).to.equal(1);
  });

  it("a crash between reserving and storing the plan loses no guarantee and lists none twice", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    await f.vault.connect(f.alice).deposit({ value: 1_000n });
    await f.vault.connect(f.bob).deposit({ value: 1_000n });
    await h.indexer.syncToHead();
    await h.syncClock();
    const issued = [
      await issueGuarantee(h, f.alice, f.bob.address, 300n),
      await issueGuarantee(h, f.bob, f.carol.address, 200n),
      await issueGuarantee(h, f.alice, f.carol.address, 100n),
    ];
    const ids = issued.map((g) => g.id.toLowerCase());
    // What a Core that crashed after reserving cycle 1 (two of the three) leaves: assigned, no cycle row.
    expect(await h.store.netting.reservePayableGuarantees(1, 2)).to.equal(2);
    expect(await h.store.cycles.getCycle(1)).to.equal(null);
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));

    const result = await clearingTasks(h).scheduler.tick();
    expect(result).to.include({ action: "committed", cycleId: 1, guarantees: 3 });
    const cycle = (await h.store.cycles.getCycle(1))!;
    expect([...cycle.guaranteeIds].map((id) => id.toLowerCase()).sort()).to.deep.equal([...ids].sort());
    expect(await h.store.netting.listCycleGuaranteeIds(1)).to.have.length(3);
    await h.indexer.syncToHead();
    expect((await h.store.cycles.getCycle(1))?.state).to.equal("COMMITTED");
    const after = await Promise.all(ids.map((id) => h!.store.guarantees.getClearingGuarantee(id)));
    expect(after.map((g) => g!.cycleId)).to.deep.equal([1, 1, 1]);
    expect(after.every((g) => g!.state === "NETTED" || g!.state === "SETTLED")).to.equal(true);
    // Nothing is left to net, and the next window is empty.
    await advance(h, f.timings.cycleLength);
    expect((await clearingTasks(h).scheduler.tick()).action).to.equal("empty");
  });

  it("splits a cycle that would exceed the gas budget and commits the rest at once", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const { scheduler } = clearingTasks(h, { gasBudget: 250_000n });
    for (const payer of [f.alice, f.bob, f.carol, f.dave])
      await f.vault.connect(payer).deposit({ value: 1_000n });
    await h.indexer.syncToHead();
    await h.syncClock();
    for (const payer of [f.alice, f.bob, f.carol, f.dave])
      await issueGuarantee(h, payer, f.outsider.address, 10n);
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));
    const first = await scheduler.tick();
    expect(first.action).to.equal("committed");
    const firstCount = first.action === "committed" ? first.guarantees : 0;
    expect(firstCount).to.be.lessThan(4);
    let total = firstCount;
    for (let i = 0; i < 4 && total < 4; i++) {
      const next = await scheduler.tick();
      if (next.action === "committed") total += next.guarantees;
    }
    expect(total).to.equal(4);
    await h.indexer.syncToHead();
    const all = await h.store.guarantees.listGuarantees({});
    expect(all.every((g) => g.state === "NETTED")).to.equal(true);
  });

  it("splits a cycle with more debtors than one commit may record; each guarantee is netted once (A2-L3)", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    // Core's copy of the chain's bound is the chain's; two here, so four payers need several commits.
    expect(await f.clearingHouse.MAX_DEBTORS_PER_COMMIT()).to.equal(BigInt(MAX_DEBTORS_PER_COMMIT));
    const { scheduler } = clearingTasks(h, { maxDebtorsPerCommit: 2 });
    const payers = [f.alice, f.bob, f.carol, f.dave];
    for (const payer of payers) await f.vault.connect(payer).deposit({ value: 1_000n });
    await h.indexer.syncToHead();
    await h.syncClock();
    const ids: string[] = [];
    for (let round = 0; round < 2; round++) {
      for (const payer of payers) ids.push((await issueGuarantee(h, payer, f.outsider.address, 10n)).id);
    }
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));
    let committed = 0;
    for (let i = 0; i < 8 && committed < ids.length; i++) {
      const result = await scheduler.tick();
      if (result.action === "committed") committed += result.guarantees;
    }
    expect(committed).to.equal(ids.length);
    await h.indexer.syncToHead();
    const cycles = Number(await f.clearingHouse.lastCycleId());
    expect(cycles).to.equal(4); // two payers' guarantees per commit (issued alice, bob, carol, dave, twice)
    const seen: string[] = [];
    for (let cycleId = 1; cycleId <= cycles; cycleId++) {
      const debts = await h.store.cycles.listCycleDebts({ cycleId });
      expect(debts.length).to.be.within(1, 2);
      seen.push(...(await h.store.cycles.getCycle(cycleId))!.guaranteeIds.map((id) => id.toLowerCase()));
    }
    expect(seen.sort()).to.deep.equal(ids.map((id) => id.toLowerCase()).sort()); // each exactly once
    const all = await h.store.guarantees.listGuarantees({});
    expect(all.every((g) => g.state === "NETTED")).to.equal(true);
    const owed = await Promise.all(payers.map((p) => h!.store.collateral.getCollateral(p.address, ETH)));
    expect(owed.map((c) => c.locked)).to.deep.equal([20n, 20n, 20n, 20n]);
    expect(() => clearingTasks(h!, { maxDebtorsPerCommit: 201 })).to.throw(RangeError);
  });

  it("splits a cycle over more assets than one commit may list; each guarantee is netted once (A3-I1)", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    // Core's copy of the chain's bound is the chain's; one here, so three assets need three commits.
    expect(await f.clearingHouse.MAX_ASSETS_PER_COMMIT()).to.equal(BigInt(MAX_ASSETS_PER_COMMIT));
    const { scheduler } = clearingTasks(h, { maxAssetsPerCommit: 1 });
    await f.vault.connect(f.alice).deposit({ value: 1_000n });
    for (const token of [f.usdAddress, f.tethAddress])
      await f.vault.connect(f.alice).depositToken(token, 1_000n);
    await h.indexer.syncToHead();
    await h.syncClock();
    const ids: string[] = [];
    for (let round = 0; round < 2; round++) {
      for (const asset of [ETH, f.usdAddress, f.tethAddress]) {
        ids.push((await issueGuarantee(h, f.alice, f.outsider.address, 10n, asset)).id);
      }
    }
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));
    let committed = 0;
    for (let i = 0; i < 16 && committed < ids.length; i++) {
      const result = await scheduler.tick();
      if (result.action === "committed") committed += result.guarantees;
    }
    expect(committed).to.equal(ids.length);
    await h.indexer.syncToHead();
    const cycles = Number(await f.clearingHouse.lastCycleId());
    expect(cycles).to.be.within(3, 6);
    const seen: string[] = [];
    for (let cycleId = 1; cycleId <= cycles; cycleId++) {
      const debts = await h.store.cycles.listCycleDebts({ cycleId });
      expect(new Set(debts.map((d) => d.asset.toLowerCase())).size).to.equal(1);
      seen.push(...(await h.store.cycles.getCycle(cycleId))!.guaranteeIds.map((id) => id.toLowerCase()));
    }
    expect(seen.sort()).to.deep.equal(ids.map((id) => id.toLowerCase()).sort()); // each exactly once
    expect(() => clearingTasks(h!, { maxAssetsPerCommit: MAX_ASSETS_PER_COMMIT + 1 })).to.throw(RangeError);
  });
});
