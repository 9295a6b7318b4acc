/**
 * A cycle Core did not plan, committed with the operator key (a leaked key: docs/clearing.md "A cycle Core
 * did not plan"), on a real chain with a real store: Core indexes it from its events (marked foreign), its
 * debt enters Core's books, the keeper never answers its challenge and voids it once the answer deadline
 * has passed (chain time), and Core's own next cycle takes the next id. A reorg of the commit rewinds it.
 */
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { id as keccakText, parseEther, ZeroAddress } from "ethers";
import { network } from "hardhat";
import type { AddressInfo } from "node:net";
import { buildCycleTree } from "../../sdk/merkle";
import { DEFAULT_SCOPES } from "../../operator/auth";
import { createCoreApp } from "../../operator/api";
import { silentLogger } from "../../operator/logger";
import { NEXT_CUTOFF_KEY } from "../../operator/clearing/scheduler";
import { applyUndo, JournaledTx } from "../../operator/chain/journal";
import type { CycleRecord } from "../../operator/store";
import {
  advance,
  chainFixture,
  type ChainFixture,
  clearingTasks,
  type CoreHarness,
  finalizationOf,
  issueGuarantee,
  mine,
  openCore,
} from "./indexer-fixtures";

const ETH = ZeroAddress;
const ONE = parseEther("1");
const DEBIT = parseEther("0.01");

describe("clearing: a cycle Core did not plan (leaked operator key)", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** GET on Core's app (a real HTTP server on a free port, stopped after the call). */
  async function get(
    path: string,
    bearer?: string,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const { app } = createCoreApp({ ...h!.context, logger: silentLogger() });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const headers: Record<string, string> = bearer ? { authorization: `Bearer ${bearer}` } : {};
      const response = await fetch(base + path, { headers });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  /** Core's withdrawal view of `user`'s ETH (what its books leave free). */
  async function ethView(user: string): Promise<Record<string, unknown>> {
    const { token } = await h!.context.accessTokens.issue(user, DEFAULT_SCOPES);
    const { status, body } = await get(`/core/users/${user}/withdrawals`, token);
    expect(status).to.equal(200);
    return (body.withdrawable as Record<string, unknown>[]).find((w) => w.asset_address === ETH)!;
  }

  /**
   * The operator key commits cycle `cycleId` outside Core: alice owes 0.01 ETH to bob under a real
   * net-position tree, with a guarantees root no signed guarantee is under.
   */
  async function commitForeign(f: ChainFixture, cycleId: number, nettedV2Ids: string[] = []) {
    const tree = buildCycleTree([
      { cycleId: BigInt(cycleId), asset: ETH, participant: f.alice.address, debit: DEBIT, credit: 0n },
      { cycleId: BigInt(cycleId), asset: ETH, participant: f.bob.address, debit: 0n, credit: DEBIT },
    ]);
    const tx = await f.clearingHouse.connect(f.operator).commitCycle(
      cycleId,
      {
        root: tree.root,
        guaranteesRoot: keccakText("not a tree of signed guarantees"),
        debitsRoot: "0xdddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
      },
      [{ asset: ETH, totalDebit: DEBIT, totalCredit: DEBIT }],
      [{ asset: ETH, debtor: f.alice.address, amount: DEBIT }],
      nettedV2Ids,
    );
    return { root: tree.root, txHash: (await tx.wait())!.hash };
  }

  async function setup() {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const tasks = clearingTasks(h);
    await f.vault.connect(f.alice).deposit({ value: ONE });
    await f.vault.connect(f.bob).deposit({ value: ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, ONE, { value: ONE });
    await h.indexer.syncToHead();
    await h.syncClock();
    return { f, tasks };
  }

  it("indexes it as foreign, books its debt, voids the challenge at the answer deadline, then commits its own next id", async function () {
    const { f, tasks } = await setup();
    const { root, txHash } = await commitForeign(f, 1);
    await h!.indexer.syncToHead();

    const cycle = (await h!.store.cycles.getCycle(1))!;
    expect(cycle).to.include({ state: "COMMITTED", plannedByCore: false, root, txHash });
    const onChain = await f.clearingHouse.getCycle(1);
    expect(cycle.answerDeadline).to.equal(Number(onChain.answerDeadline));
    expect(cycle.paymentDeadline).to.equal(Number(onChain.paymentDeadline));
    const view = await get("/core/cycles/1");
    expect(view.status).to.equal(200);
    expect(view.body).to.include({
      cycle_id: 1,
      state: "COMMITTED",
      planned_by_core: false,
      root,
      guarantees_root: keccakText("not a tree of signed guarantees"),
      commit_tx: txHash,
      guarantee_count: 0,
    });
    expect(view.body.totals).to.deep.equal([
      { asset_address: ETH, total_debit: DEBIT.toString(), total_credit: DEBIT.toString() },
    ]);
    expect(view.body.debtors).to.deep.equal([
      {
        asset_address: ETH,
        debtor: f.alice.address,
        amount: DEBIT.toString(),
        status: "OPEN",
        covered: null,
      },
    ]);
    const proof = await get(`/core/cycles/1/participants/${f.bob.address}/proof`);
    expect([proof.status, proof.body.code]).to.deep.equal([404, "position_not_found"]);
    // The obligation is in Core's books: the Vault holds it, and so does Core's collateral view.
    expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(DEBIT);
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(DEBIT);
    expect(await ethView(f.alice.address)).to.include({
      locked: DEBIT.toString(),
      free: (ONE - DEBIT).toString(),
    });

    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await h!.indexer.syncToHead();
    expect((await h!.store.cycles.getCycleDebt(1, ETH, f.alice.address))!.status).to.equal("CHALLENGED");
    // Never answered (nothing signed justifies it), not voided before the answer deadline.
    const early = await tasks.keeper.tick();
    expect([early.answered, early.voided]).to.deep.equal([[], []]);
    await advance(h!, cycle.answerDeadline! - h!.chainClock.nowSeconds());
    expect(h!.chainClock.nowSeconds()).to.equal(cycle.answerDeadline);
    const atDeadline = await tasks.keeper.tick();
    expect([atDeadline.answered, atDeadline.voided]).to.deep.equal([[], []]);
    expect((await f.clearingHouse.debtOf(1, ETH, f.alice.address)).status).to.not.equal(6n);

    await advance(h!, 1);
    const after = await tasks.keeper.tick();
    expect(after.answered).to.deep.equal([]);
    expect(after.voided.map((v) => [v.cycleId, v.debtor])).to.deep.equal([[1, f.alice.address]]);
    await h!.indexer.syncToHead();
    expect((await h!.store.cycles.getCycleDebt(1, ETH, f.alice.address))!.status).to.equal("VOIDED");
    expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(0n);
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(0n);
    expect(await ethView(f.alice.address)).to.include({ locked: "0", free: ONE.toString() });
    expect(await f.clearingHouse.bondOf(ETH)).to.equal(ONE - DEBIT);

    // Core's own next cycle takes the next id.
    await issueGuarantee(h!, f.alice, f.bob.address, ONE / 2n);
    await h!.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h!.chainClock.nowSeconds()));
    expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 2, guarantees: 1 });
    await h!.indexer.syncToHead();
    expect(await h!.store.cycles.getCycle(2)).to.include({ state: "COMMITTED", plannedByCore: true });
    expect((await get("/core/cycles/2")).body).to.include({ planned_by_core: true, guarantee_count: 1 });
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(ONE / 2n);
  });

  it("announces it once with cycle.foreign_commit, in the outbox with the commit", async function () {
    const { f } = await setup();
    await h!.store.webhooks.putWebhookSubscription({
      id: "whk_security",
      url: "https://receiver.test/hook",
      secret: "s".repeat(32),
      eventTypes: ["cycle.foreign_commit"],
      description: null,
      source: "api",
      createdAt: h!.clock.nowSeconds(),
    });
    const { root, txHash } = await commitForeign(f, 1);
    await h!.indexer.syncToHead();
    const due = await h!.store.webhooks.claimDueWebhookDeliveries(
      (h!.clock.nowSeconds() + 1) * 1000,
      10,
      60_000,
    );
    expect(due.map((d) => d.eventType)).to.deep.equal(["cycle.foreign_commit"]);
    const envelope = JSON.parse(due[0].payload) as { type: string; data: Record<string, unknown> };
    expect(envelope.data).to.deep.include({
      cycle_id: "1",
      root,
      guarantees_root: keccakText("not a tree of signed guarantees"),
      debtors: [{ asset_address: ETH, debtor_address: f.alice.address, amount: DEBIT.toString() }],
      replaced_plan_guarantee_ids: [],
      netted_v2_guarantee_ids: [],
      netted_core_guarantee_ids: [],
      transaction_hash: txHash,
    });
  });

  it("names the V2 ids it netted, books Core's own ones as netted by it, and a reorg rewinds both", async function () {
    const { f } = await setup();
    await h!.store.webhooks.putWebhookSubscription({
      id: "whk_security",
      url: "https://receiver.test/hook",
      secret: "s".repeat(32),
      eventTypes: ["cycle.foreign_commit", "guarantee.settled"],
      description: null,
      source: "api",
      createdAt: h!.clock.nowSeconds(),
    });
    // Core's V2 guarantees, waiting for validation with their collateral locked: alice's (a debtor of the
    // foreign cycle) and bob's (not a debtor); and an id Core never issued.
    const ofAlice = await issueGuarantee(h!, f.alice, f.carol.address, ONE / 10n, ETH, {});
    const ofBob = await issueGuarantee(h!, f.bob, f.carol.address, ONE / 20n, ETH, {});
    const unknown = keccakText("a V2 id Core never issued");
    expect((await h!.store.guarantees.getClearingGuarantee(ofAlice.id))!.state).to.equal(
      "PENDING_VALIDATION",
    );
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(ONE / 10n);

    const snapshot = (await network.provider.send("evm_snapshot", [])) as string;
    const netted = [ofAlice.id, unknown, ofBob.id].map((id) => id.toLowerCase());
    const { txHash } = await commitForeign(f, 1, netted);
    await h!.indexer.syncToHead();

    // The store records every id the Vault marked, in log order, with the commit's transaction.
    const nettings = await h!.store.cycles.listV2Nettings(1);
    expect(nettings.map((n) => [n.guaranteeId, n.cycleId, n.txHash])).to.deep.equal(
      netted.map((id) => [id, 1, txHash.toLowerCase()]),
    );
    expect(nettings.map((n) => n.logIndex)).to.deep.equal(
      [...nettings.map((n) => n.logIndex)].sort((a, b) => a - b),
    );
    for (const id of netted) expect(await f.vault.consumptionOf([id])).to.deep.equal([2n]);
    // Core's books: both guarantees left their own lock and joined the foreign cycle; alice's waits on
    // her debit (NETTED), bob's has nothing to pay (SETTLED). alice keeps only the foreign debit locked.
    const a = (await h!.store.guarantees.getClearingGuarantee(ofAlice.id))!;
    const b = (await h!.store.guarantees.getClearingGuarantee(ofBob.id))!;
    expect([a.state, a.cycleId, b.state, b.cycleId]).to.deep.equal(["NETTED", 1, "SETTLED", 1]);
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(DEBIT);
    expect((await h!.store.collateral.getCollateral(f.bob.address, ETH)).locked).to.equal(0n);
    const cycle = (await h!.store.cycles.getCycle(1))!;
    expect(cycle.guaranteeIds).to.deep.equal([ofAlice.id.toLowerCase(), ofBob.id.toLowerCase()]);
    expect(JSON.parse(cycle.args).nettedV2Ids).to.deep.equal(netted);
    expect((await get("/core/cycles/1")).body).to.include({ planned_by_core: false, guarantee_count: 2 });

    const due = await h!.store.webhooks.claimDueWebhookDeliveries(
      (h!.clock.nowSeconds() + 1) * 1000,
      10,
      60_000,
    );
    const byType = Object.fromEntries(
      due.map((d) => [d.eventType, JSON.parse(d.payload) as { data: Record<string, unknown> }]),
    );
    expect(byType["cycle.foreign_commit"].data).to.deep.include({
      netted_v2_guarantee_ids: netted,
      netted_core_guarantee_ids: [ofAlice.id.toLowerCase(), ofBob.id.toLowerCase()],
    });
    expect(byType["guarantee.settled"].data).to.include({
      guarantee_id: ofBob.id.toLowerCase(),
      state: "SETTLED",
      reason: "net_position",
      cycle_id: "1",
    });

    // alice pays the foreign debit: her netted guarantee settles with it.
    await f.clearingHouse.connect(f.alice).payNetDebit(1, ETH, { value: DEBIT });
    await h!.indexer.syncToHead();
    expect((await h!.store.guarantees.getClearingGuarantee(ofAlice.id))!.state).to.equal("SETTLED");

    // A reorg removes the commit: the nettings, the states and the locks come back.
    await network.provider.send("evm_revert", [snapshot]);
    await mine(3);
    expect((await h!.indexer.tick()).rewoundTo).to.not.equal(null);
    await h!.indexer.syncToHead();
    expect(await h!.store.cycles.listV2Nettings(1)).to.deep.equal([]);
    expect(await h!.store.cycles.getV2Netting(unknown)).to.equal(null);
    const back = (await h!.store.guarantees.getClearingGuarantee(ofAlice.id))!;
    expect([back.state, back.cycleId]).to.deep.equal(["PENDING_VALIDATION", null]);
    expect((await h!.store.guarantees.getClearingGuarantee(ofBob.id))!.state).to.equal("PENDING_VALIDATION");
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(ONE / 10n);
    expect((await h!.store.collateral.getCollateral(f.bob.address, ETH)).locked).to.equal(ONE / 20n);
  });

  it("records the V2 ids of Core's own commits too (the Vault's netted set, skipped ids excluded)", async function () {
    const { f, tasks } = await setup();
    const issued = await issueGuarantee(h!, f.alice, f.bob.address, ONE / 10n, ETH, {});
    // The payer finalizes it: payable, so Core's scheduler nets it (a V2 id, marked in the Vault).
    await tasks.lifecycle.finalizeByPayer(
      issued.id,
      f.alice.address,
      await finalizationOf(h!.f, f.alice, issued.id),
    );
    expect((await h!.store.guarantees.getClearingGuarantee(issued.id))!.state).to.equal("FINALIZED_PAYABLE");
    await h!.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h!.chainClock.nowSeconds()));
    expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 1 });
    await h!.indexer.syncToHead();
    expect(await h!.store.cycles.getCycle(1)).to.include({ plannedByCore: true, state: "COMMITTED" });
    expect((await h!.store.cycles.listV2Nettings(1)).map((n) => n.guaranteeId)).to.deep.equal([
      issued.id.toLowerCase(),
    ]);
  });

  it("takes the place of Core's own plan whose id it took; the plan's guarantees go into Core's next cycle", async function () {
    const { f, tasks } = await setup();
    const issued = await issueGuarantee(h!, f.alice, f.bob.address, ONE / 2n);
    await h!.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h!.chainClock.nowSeconds()));
    // Core's commit of cycle 1 never reaches a block: the key's holder commits cycle 1 first.
    await network.provider.send("evm_setAutomine", [false]);
    try {
      expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 1 });
      const planned = (await h!.store.cycles.getCycle(1))!;
      expect(planned.state).to.equal("SENT");
      await network.provider.send("hardhat_dropTransaction", [planned.txHash]);
    } finally {
      await network.provider.send("evm_setAutomine", [true]);
    }
    const { root } = await commitForeign(f, 1);
    await h!.indexer.syncToHead();

    expect(await h!.store.cycles.getCycle(1)).to.include({ plannedByCore: false, root, state: "COMMITTED" });
    const g = (await h!.store.guarantees.getClearingGuarantee(issued.id))!;
    expect([g.state, g.cycleId]).to.deep.equal(["FINALIZED_PAYABLE", null]);
    // alice: her own guarantee's lock and the foreign debit.
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(ONE / 2n + DEBIT);

    await h!.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h!.chainClock.nowSeconds()));
    expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 2, guarantees: 1 });
    await h!.indexer.syncToHead();
    expect(await h!.store.cycles.getCycle(2)).to.include({ state: "COMMITTED", plannedByCore: true });
    expect((await h!.store.guarantees.getClearingGuarantee(issued.id))!.cycleId).to.equal(2);
  });

  it("a rewind of the replacement restores Core's plan exactly (journal)", async function () {
    const { f, tasks } = await setup();
    await issueGuarantee(h!, f.alice, f.bob.address, ONE / 2n);
    await h!.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h!.chainClock.nowSeconds()));
    await network.provider.send("evm_setAutomine", [false]);
    let plan: CycleRecord;
    try {
      await tasks.scheduler.tick();
      plan = (await h!.store.cycles.getCycle(1))!;
      await network.provider.send("hardhat_dropTransaction", [plan.txHash]);
    } finally {
      await network.provider.send("evm_setAutomine", [true]);
    }
    const replacement: CycleRecord = {
      ...plan,
      root: "0x" + "ab".repeat(32),
      plannedByCore: false,
      state: "COMMITTED",
    };
    const undo = await h!.store.transaction(async (tx) => {
      const j = new JournaledTx(tx, h!.clock.nowSeconds());
      await j.assignCycle(plan.guaranteeIds, null, 1);
      await j.putCycleRecord(replacement);
      return j.undo;
    });
    expect(await h!.store.cycles.getCycle(1)).to.deep.equal(replacement);
    await h!.store.transaction((tx) => applyUndo(tx, undo, h!.clock.nowSeconds()));
    expect(await h!.store.cycles.getCycle(1)).to.deep.equal(plan);
    expect((await h!.store.guarantees.getClearingGuarantee(plan.guaranteeIds[0]))!.cycleId).to.equal(1);
  });

  it("rewinds the foreign commit when a reorg removes it; Core then commits that id itself", async function () {
    const { f, tasks } = await setup();
    const snapshot = (await network.provider.send("evm_snapshot", [])) as string;
    await commitForeign(f, 1);
    await h!.indexer.syncToHead();
    expect(await h!.store.cycles.getCycle(1)).to.include({ plannedByCore: false });
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(DEBIT);

    await network.provider.send("evm_revert", [snapshot]);
    await mine(3);
    const result = await h!.indexer.tick();
    expect(result.rewoundTo).to.not.equal(null);
    await h!.indexer.syncToHead();
    expect(await h!.store.cycles.getCycle(1)).to.equal(null);
    expect(await h!.store.cycles.getCycleDebt(1, ETH, f.alice.address)).to.equal(null);
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(0n);
    expect((await get("/core/cycles/1")).status).to.equal(404);

    await h!.syncClock();
    await issueGuarantee(h!, f.alice, f.bob.address, ONE / 4n);
    await h!.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h!.chainClock.nowSeconds()));
    expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 1, guarantees: 1 });
    await h!.indexer.syncToHead();
    expect(await h!.store.cycles.getCycle(1)).to.include({ state: "COMMITTED", plannedByCore: true });
  });
});
