/**
 * Core's side of the dispute game (issue 25, docs/clearing.md "Disputes"), on a real chain with a real store:
 * the keeper answers each disputed position with the payer's stored signature (or concedes it when the chain
 * refuses the proof), the indexer follows disputes and debts, and a guardian's veto returns the cycle's guarantees to the
 * pool, the keeper releases the vetoed debts and the scheduler re-commits them as the next cycle; a
 * cycle that was not vetoed never has its guarantees listed again (no double listing, docs/clearing.md).
 */
import { NO_CREDIT_PROOF } from "../../sdk/debit-tree";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { Writable } from "node:stream";
import pino from "pino";
import { expect } from "chai";
import { parseEther, ZeroAddress } from "ethers";
import type { AddressInfo } from "node:net";
import { createCoreApp } from "../../operator/api";
import {
  DisputeAnswerError,
  buildDisputeAnswer,
  debtorTreeOf,
  rebuildCycleDebitTrees,
} from "../../operator/clearing/dispute-answer";
import { silentLogger } from "../../operator/logger";
import { commitArgsFromJson } from "../../operator/clearing/cycle-json";
import { buildCommitPlan, guaranteeLeafOf, toCommitCycleCall } from "../../operator/clearing/commit-plan";
import { netCycle } from "../../operator/clearing/netting";
import type { Logger } from "../../operator/logger";
import { captureLogs } from "../support/log-capture";
import { guaranteeProof } from "../../sdk";
import { NEXT_CUTOFF_KEY } from "../../operator/clearing/scheduler";
import { OPEN_CREDIT_DISPUTES_KEY } from "../../operator/clearing/credit-disputes";
import { applyUndo, JournaledTx } from "../../operator/chain/journal";
import {
  advance,
  chainFixture,
  clearingTasks,
  type CoreHarness,
  issueGuarantee,
  openCore,
} from "./indexer-fixtures";

const ETH = ZeroAddress;
const ONE = parseEther("1");

describe("clearing: challenges, answers and vetoes (Core)", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** GET path on Core's app (a real HTTP server on a free port, stopped after the call). */
  async function getJson(path: string): Promise<Record<string, unknown>> {
    const { app } = createCoreApp({ ...h!.context, logger: silentLogger() });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return (await (await fetch(base + path)).json()) as Record<string, unknown>;
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  /** A subscription to every event type, so the events the indexer writes are queued for it. */
  async function subscribeAll(): Promise<void> {
    await h!.store.webhooks.putWebhookSubscription({
      id: "all",
      url: "http://127.0.0.1:9/unused",
      secret: "s".repeat(32),
      eventTypes: ["*"],
      description: null,
      source: "api",
      createdAt: h!.clock.nowSeconds(),
    });
  }

  /** The `data` of the events of `type` queued for {@link subscribeAll}'s subscription, oldest first. */
  async function queued(type: string): Promise<Record<string, unknown>[]> {
    const deliveries = await h!.store.webhooks.listWebhookDeliveries({ subscriptionId: "all", limit: 100 });
    const data: Record<string, unknown>[] = [];
    for (const d of deliveries.filter((x) => x.eventType === type).sort((a, b) => a.seq - b.seq)) {
      const stored = await h!.store.webhooks.getWebhookEvent(d.eventId);
      data.push((JSON.parse(stored!.payload) as { data: Record<string, unknown> }).data);
    }
    return data;
  }

  /** alice signs 3 ETH to bob (EIP-712) and 1 to carol (EIP-191), bob 1 to alice: alice owes 3 net. */
  async function committed(logger?: Logger) {
    const f = await loadFixture(chainFixture);
    h = await openCore(f, { logger });
    const tasks = clearingTasks(h);
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
    await h.indexer.syncToHead();
    await h.syncClock();
    const toBob = await issueGuarantee(h, f.alice, f.bob.address, 3n * ONE);
    const toCarol = await issueGuarantee(h, f.alice, f.carol.address, ONE, ETH, undefined, "eip191");
    const fromBob = await issueGuarantee(h, f.bob, f.alice.address, ONE);
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));
    expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 1, guarantees: 3 });
    await h.indexer.syncToHead();
    const cycle = (await h.store.cycles.getCycle(1))!;
    expect(cycle.state).to.equal("COMMITTED");
    expect(cycle.challengeDeadline).to.equal(cycle.committedAt! + f.timings.challengeWindow);
    expect(cycle.answerDeadline).to.equal(cycle.committedAt! + 2 * f.timings.challengeWindow);
    expect((await f.clearingHouse.getCycle(1)).guaranteesRoot).to.equal(
      commitArgsFromJson(JSON.parse(cycle.args)).guaranteesRoot,
    );
    return { f, tasks, ids: [toBob.id, toCarol.id, fromBob.id] };
  }

  it("answers each disputed position with the payer's own signature; the answered debit then settles", async function () {
    const { f, tasks } = await committed();
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 1);
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 5); // past the tree's end
    await h!.indexer.syncToHead();
    expect((await h!.store.cycles.getCycleDebt(1, ETH, f.alice.address))!.status).to.equal("CHALLENGED");
    expect(
      (await h!.store.cycles.listCycleDisputes({ cycleId: 1, status: "OPEN" })).map((d) => d.position),
    ).to.deep.equal([0, 1, 5]);
    const view = await getJson("/core/cycles/1");
    const stored = (await h!.store.cycles.getCycle(1))!;
    expect(view).to.include({
      state: "COMMITTED",
      guarantees_root: commitArgsFromJson(JSON.parse(stored.args)).guaranteesRoot,
      challenge_deadline: new Date(stored.challengeDeadline! * 1000).toISOString(),
      answer_deadline: new Date(stored.answerDeadline! * 1000).toISOString(),
      vetoed_at: null,
    });
    expect(view.debtors).to.deep.equal([
      {
        asset_address: ETH,
        debtor: f.alice.address,
        amount: (3n * ONE).toString(),
        status: "CHALLENGED",
        covered: null,
      },
    ]);

    const kept = await tasks.keeper.tick();
    expect(kept.answered.map((a) => [a.position, a.conceded])).to.deep.equal([
      [0, false],
      [1, false],
      [5, false],
    ]);
    await h!.indexer.syncToHead();
    expect((await h!.store.cycles.getCycleDebt(1, ETH, f.alice.address))!.status).to.equal("ANSWERED");
    const disputes = await h!.store.cycles.listCycleDisputes({ cycleId: 1 });
    expect(disputes.map((d) => d.status)).to.deep.equal(["UPHELD", "UPHELD", "DISMISSED"]);
    expect((await f.clearingHouse.debtOf(1, ETH, f.alice.address)).status).to.equal(5n);
    expect((await tasks.keeper.tick()).answered).to.deep.equal([]); // not answered twice

    await advance(h!, 2 * f.timings.challengeWindow + f.timings.paymentWindow + 1);
    await h!.indexer.syncToHead();
    const covered = await tasks.keeper.tick();
    expect(covered.covered.map((c) => c.debtor)).to.deep.equal([f.alice.address]);
    await h!.indexer.syncToHead();
    expect((await h!.store.cycles.getCycleDebt(1, ETH, f.alice.address))!.status).to.equal("COVERED");
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(0n);
  });

  it("a position it missed in its answer window: conceded at its proven amount after the deadline, the rest stays owed", async function () {
    const { f, tasks } = await committed();
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await h!.indexer.syncToHead();
    expect((await tasks.keeper.tick()).answered.map((a) => a.position)).to.deep.equal([0]); // reveals
    // A second dispute the keeper never sees before the answer deadline (Core was down).
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 1);
    await advance(h!, 2 * f.timings.challengeWindow + 1);
    await h!.indexer.syncToHead();
    const all = await h!.store.guarantees.listGuarantees({ cycleId: 1 });
    const missed = debtorTreeOf(all, f.alice.address, ETH).leaves[1].amount;
    const kept = await tasks.keeper.tick();
    // audit M-1: voidUnansweredPosition, not the whole-debt void (which the chain refuses before the
    // payment deadline once the summary is revealed).
    expect(kept.answered.map((a) => [a.cycleId, a.position, a.conceded])).to.deep.equal([[1, 1, true]]);
    expect(kept.voided).to.deep.equal([]);
    await h!.indexer.syncToHead();
    const disputes = await h!.store.cycles.listCycleDisputes({ cycleId: 1 });
    expect(disputes.map((d) => [d.position, d.status])).to.deep.equal([
      [0, "UPHELD"],
      [1, "VOIDED"],
    ]);
    expect(disputes[1].amount).to.equal(missed);
    const debt = (await h!.store.cycles.getCycleDebt(1, ETH, f.alice.address))!;
    const onChain = await f.clearingHouse.debtOf(1, ETH, f.alice.address);
    expect(debt.amount).to.equal(onChain.amount);
    expect(onChain.amount).to.equal(missed >= 3n * ONE ? 0n : 3n * ONE - missed);
    expect(debt.status).to.equal(onChain.amount === 0n ? "VOIDED" : "ANSWERED");
  });

  it("nobody proves a missed position by the payment deadline: the void concedes it, the indexer follows, the keeper covers", async function () {
    const { f, tasks } = await committed();
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await h!.indexer.syncToHead();
    await tasks.keeper.tick(); // answers position 0 (reveals the summary)
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 1);
    await advance(h!, 2 * f.timings.challengeWindow + f.timings.paymentWindow + 1);
    // Someone else voids first (the keeper was down): the unanswered rest is conceded (UnansweredConceded).
    await expect(f.clearingHouse.connect(f.carol).voidUnansweredDebit(1, ETH, f.alice.address)).to.emit(
      f.clearingHouse,
      "UnansweredConceded",
    );
    await h!.indexer.syncToHead();
    const disputes = await h!.store.cycles.listCycleDisputes({ cycleId: 1 });
    expect(disputes.map((d) => [d.position, d.status])).to.deep.equal([
      [0, "UPHELD"],
      [1, "VOIDED"],
    ]);
    const onChain = await f.clearingHouse.debtOf(1, ETH, f.alice.address);
    const debt = (await h!.store.cycles.getCycleDebt(1, ETH, f.alice.address))!;
    expect(debt.amount).to.equal(onChain.amount);
    expect(debt.status).to.equal(onChain.status === 5n ? "ANSWERED" : "VOIDED");
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(
      await f.vault.obligationOf(f.alice.address, ETH),
    );
    if (onChain.amount > 0n) {
      const kept = await tasks.keeper.tick();
      expect(kept.covered.map((c) => c.debtor)).to.deep.equal([f.alice.address]);
    }
  });

  it("concedes a position the chain refuses to see proven: only its amount comes off the debit", async function () {
    const { f, tasks, ids } = await committed();
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    // The operator key lists toBob in a cycle 2 Core never planned, where it answers a dispute first: in
    // cycle 1 the same signature can no longer prove anything (GuaranteeAlreadyUsed).
    const toBob = (await h!.store.guarantees.getClearingGuarantee(ids[0]))!;
    const dup = buildCommitPlan(netCycle(2n, [toBob]), [toBob])!;
    await f.clearingHouse.connect(f.operator).commitCycle(...toCommitCycleCall(dup.args));
    await f.clearingHouse.connect(f.alice).disputeGuarantee(2, ETH, 0);
    const answer2 = buildDisputeAnswer(
      rebuildCycleDebitTrees(dup.args.debitsRoot, [toBob]),
      debtorTreeOf([toBob], f.alice.address, ETH),
      new Map([[toBob.guaranteeId, toBob]]),
      0,
    );
    await f.clearingHouse.answerDispute(2, ETH, f.alice.address, 0, answer2);
    const all = await h!.store.guarantees.listGuarantees({ cycleId: 1 });
    const position = debtorTreeOf(all, f.alice.address, ETH).leaves.findIndex(
      (l) => l.guaranteeId.toLowerCase() === toBob.guaranteeId.toLowerCase(),
    );
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, position);
    await h!.indexer.syncToHead();
    const kept = await tasks.keeper.tick();
    expect(kept.answered.map((a) => [a.cycleId, a.position, a.conceded])).to.deep.equal([
      [1, position, true],
    ]);
    await h!.indexer.syncToHead();
    const [dispute] = await h!.store.cycles.listCycleDisputes({ cycleId: 1 });
    expect([dispute.status, dispute.amount]).to.deep.equal(["VOIDED", 3n * ONE]);
    // alice's 3-ETH debit came off entirely (the 1 ETH to carol is offset by bob's 1 ETH to her).
    const debt = (await h!.store.cycles.getCycleDebt(1, ETH, f.alice.address))!;
    expect([debt.status, debt.amount]).to.deep.equal(["VOIDED", 0n]);
    expect((await f.clearingHouse.debtOf(1, ETH, f.alice.address)).amount).to.equal(0n);
  });

  /**
   * alice disputes her 3-ETH position of cycle 1, whose signature answered a rogue cycle 2 first: the keeper can
   * only concede it (1 ETH off her debit, 2 ETH refunded above it). Bond `bond`.
   */
  async function unprovable(bond: bigint, logger?: Logger) {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const tasks = clearingTasks(h, { logger });
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.vault.connect(f.bob).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: bond });
    await h.indexer.syncToHead();
    await h.syncClock();
    // alice signs 3 to bob, bob 2 to alice: alice owes 1 net; conceding the 3-ETH position leaves 2 over.
    const toBob = await issueGuarantee(h, f.alice, f.bob.address, 3n * ONE);
    await issueGuarantee(h, f.bob, f.alice.address, 2n * ONE);
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));
    expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 1, guarantees: 2 });
    await h.indexer.syncToHead();
    // The same signature proven first in a rogue cycle 2: in cycle 1 the keeper can only concede it.
    const stored = (await h.store.guarantees.getClearingGuarantee(toBob.id))!;
    const dup = buildCommitPlan(netCycle(2n, [stored]), [stored])!;
    await f.clearingHouse.connect(f.operator).commitCycle(...toCommitCycleCall(dup.args));
    await f.clearingHouse.connect(f.alice).disputeGuarantee(2, ETH, 0);
    await f.clearingHouse.answerDispute(
      2,
      ETH,
      f.alice.address,
      0,
      buildDisputeAnswer(
        rebuildCycleDebitTrees(dup.args.debitsRoot, [stored]),
        debtorTreeOf([stored], f.alice.address, ETH),
        new Map([[stored.guaranteeId, stored]]),
        0,
      ),
    );
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await h.indexer.syncToHead();
    return { f, tasks, core: h };
  }

  /** The keeper concedes alice's 3-ETH position of cycle 1: 2 ETH held, set aside from the 5-ETH bond. */
  async function heldRefund() {
    const { f, tasks, core } = await unprovable(5n * ONE);
    expect((await tasks.keeper.tick()).answered.map((a) => [a.cycleId, a.conceded])).to.deep.equal([
      [1, true],
    ]);
    await core.indexer.syncToHead();
    expect(await f.clearingHouse.refundHeldOf(1, ETH, f.alice.address)).to.equal(2n * ONE);
    // The operator's own concession: set aside from the bond at once, never owed (audit3 A3-M2).
    expect(await f.clearingHouse.refundSetAsideOf(1, ETH, f.alice.address)).to.equal(2n * ONE);
    expect(await f.clearingHouse.bondOf(ETH)).to.equal(2n * ONE);
    return { f, tasks, core };
  }

  it("a concession the bond cannot spare: refused and logged; conceded at the answer deadline, the refund owed", async function () {
    const logs = captureLogs("info");
    // The 1-ETH bond funds the cut of alice's debit; nothing is left for the 2 ETH above it.
    const { f, tasks, core } = await unprovable(ONE, logs.logger);
    expect((await tasks.keeper.tick()).answered).to.deep.equal([]);
    expect(logs.errors().map((l) => [l.msg, l.reason])).to.deep.include([
      "answer refused: its refund above the debit exceeds the spare bond; top the bond up",
      "RefundAboveSpareBond",
    ]);
    expect(await f.clearingHouse.disputeOf(1, ETH, f.alice.address, 0)).to.equal(1n); // still open
    await advance(core, 2 * f.timings.challengeWindow + 1);
    // Nothing revealed alice's summary (the refused answers did nothing): the keeper reveals it, then voids.
    expect((await tasks.keeper.tick()).answered).to.deep.equal([]);
    await core.indexer.syncToHead();
    expect((await tasks.keeper.tick()).answered.map((a) => [a.cycleId, a.conceded])).to.deep.equal([
      [1, true],
    ]);
    expect(await f.clearingHouse.refundHeldOf(1, ETH, f.alice.address)).to.equal(2n * ONE);
    expect(await f.clearingHouse.refundSetAsideOf(1, ETH, f.alice.address)).to.equal(0n);
    expect(await f.clearingHouse.totalRefundOwed(ETH)).to.equal(2n * ONE);
  });

  it("a concession above the debit: the keeper claims the held refund for the debtor after the challenge deadline, once", async function () {
    const { f, tasks, core } = await heldRefund();
    const before = await f.clearingHouse.payoutOf(ETH, f.alice.address);

    // Held until the challenge deadline: the keeper waits, then claims it for alice, and never again.
    expect((await tasks.keeper.tick()).holdingsSettled).to.deep.equal([]);
    await advance(core, f.timings.challengeWindow + 1);
    const settled = await tasks.keeper.tick();
    expect(settled.holdingsSettled.map((s) => [s.call, s.cycleId, s.account])).to.deep.equal([
      ["claimDebitRefund", 1, f.alice.address],
    ]);
    expect(await f.clearingHouse.refundHeldOf(1, ETH, f.alice.address)).to.equal(0n);
    expect((await f.clearingHouse.payoutOf(ETH, f.alice.address)) - before).to.equal(2n * ONE);
    expect((await tasks.keeper.tick()).holdingsSettled).to.deep.equal([]);
  });

  it("a vetoed cycle's held refund: the keeper cancels it at once, what was set aside goes back to the bond", async function () {
    const { f, tasks, core } = await heldRefund();
    expect(await f.clearingHouse.totalRefundOwed(ETH)).to.equal(0n);
    await f.clearingHouse.connect(f.admin).vetoCycle(1); // the admin is the guardian in this fixture
    await core.indexer.syncToHead();
    const settled = await tasks.keeper.tick();
    expect(
      settled.holdingsSettled.filter((s) => s.call === "claimDebitRefund").map((s) => [s.cycleId, s.account]),
    ).to.deep.equal([[1, f.alice.address]]);
    expect(await f.clearingHouse.refundHeldOf(1, ETH, f.alice.address)).to.equal(0n);
    expect(await f.clearingHouse.totalRefundOwed(ETH)).to.equal(0n);
    expect(await f.clearingHouse.payoutOf(ETH, f.alice.address)).to.equal(0n);
    // The veto returned the cut (1 ETH) and the cancellation the 2 ETH set aside: the 5-ETH bond is whole.
    expect(await f.clearingHouse.bondOf(ETH)).to.equal(5n * ONE);
  });

  it("rebuilds the committed debtor trees or refuses to answer from them", async function () {
    const { f } = await committed();
    const cycle = (await h!.store.cycles.getCycle(1))!;
    const guarantees = await h!.store.guarantees.listGuarantees({ cycleId: 1 });
    const args = commitArgsFromJson(JSON.parse(cycle.args));
    const trees = rebuildCycleDebitTrees(args.debitsRoot, guarantees);
    // One summary per account with outgoing or incoming guarantees (carol is only paid).
    expect(trees.summaries.map((s) => s.debtor).sort()).to.deep.equal(
      [f.alice.address, f.bob.address, f.carol.address].sort(),
    );
    expect(() => rebuildCycleDebitTrees("0x" + "11".repeat(32), guarantees)).to.throw(
      DisputeAnswerError,
      /differs from the committed/,
    );
    expect(() => debtorTreeOf(guarantees, f.outsider.address, ETH)).to.throw(
      DisputeAnswerError,
      /no outgoing/,
    );
  });

  it("a guarantee netted in a committed cycle is never listed again (no double listing): the next cycle takes only new ones", async function () {
    const { f, tasks, ids } = await committed();
    await advance(h!, f.timings.cycleLength);
    // Nothing new yet: the netted guarantees are not payable again, so the window is empty.
    expect(await tasks.scheduler.tick()).to.include({ action: "empty" });
    const fresh = await issueGuarantee(h!, f.alice, f.carol.address, 2n * ONE);
    await advance(h!, f.timings.cycleLength);
    expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 2, guarantees: 1 });
    await h!.indexer.syncToHead();
    const second = (await h!.store.cycles.getCycle(2))!;
    expect(second.guaranteeIds).to.deep.equal([fresh.id]);
    for (const id of ids) expect(second.guaranteeIds).to.not.include(id);
    for (const id of ids) expect((await h!.store.guarantees.getClearingGuarantee(id))!.cycleId).to.equal(1);
  });

  it("a stolen operator key lists a netted guarantee again: the payer's proof refunds it, Core logs it, its books stand", async function () {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
        done();
      },
    });
    const { f, ids } = await committed(pino({ level: "info" }, sink));
    const records = (await Promise.all(ids.map((id) => h!.store.guarantees.getClearingGuarantee(id)))).map(
      (g) => g!,
    );
    const toBob = records[0];
    const first = buildCommitPlan(netCycle(1n, records), records)!; // Core's cycle 1, rebuilt
    const dup = buildCommitPlan(netCycle(2n, [toBob]), [toBob])!; // the thief's cycle 2
    await f.clearingHouse.connect(f.operator).commitCycle(...toCommitCycleCall(dup.args));
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await advance(h!, f.timings.challengeWindow + 1);
    const before = await h!.store.cycles.getCycleDebt(1, ETH, f.alice.address);
    const leaf = guaranteeLeafOf(toBob);
    const proofs = [first, dup].map((p) => guaranteeProof(p.guaranteeTree, leaf));
    await f.clearingHouse.connect(f.alice).proveDoubleListing(1, 2, leaf, leaf, proofs[0], proofs[1]);
    // The refund is a pull payment: set aside by the proof, pulled by the payer.
    await expect(f.clearingHouse.connect(f.alice).withdrawPayout(ETH, f.alice.address)).to.changeEtherBalance(
      f.alice,
      3n * ONE,
    );
    await h!.indexer.syncToHead();
    const logged = lines.filter((l) => l.msg?.toString().startsWith("double listing proven"));
    expect(logged).to.have.length(1);
    expect(logged[0]).to.include({
      level: 50,
      guarantee_id: toBob.guaranteeId.toLowerCase(),
      payer: f.alice.address,
      first_cycle_id: 1,
      later_cycle_id: 2,
      amount: (3n * ONE).toString(),
    });
    // The remedy is a refund from the bond: Core's debt, lock and guarantee states are unchanged.
    expect(await h!.store.cycles.getCycleDebt(1, ETH, f.alice.address)).to.deep.equal(before);
    expect((await h!.store.guarantees.getClearingGuarantee(toBob.guaranteeId))!.state).to.equal("NETTED");
  });

  it("after a guardian's veto: the guarantees return to the pool, debts are released, the next cycle re-commits them", async function () {
    const { f, tasks, ids } = await committed();
    await f.clearingHouse.connect(f.admin).vetoCycle(1); // the admin is the guardian in this fixture
    await h!.indexer.syncToHead();
    expect((await h!.store.cycles.getCycle(1))!.state).to.equal("VETOED");
    expect(await getJson("/core/cycles/1")).to.include({ state: "VETOED" });
    // bob's credit stays in the tree (and proves), but a vetoed cycle pays no claim: no call is offered.
    const [position] = (await getJson(`/core/cycles/1/participants/${f.bob.address}/proof`))
      .positions as Record<string, unknown>[];
    expect(position).to.include({ credit: String(2n * ONE), claim_net_credit_args: null });
    await expect(
      f.clearingHouse.claimNetCredit(1, ETH, f.bob.address, NO_CREDIT_PROOF.summary, []),
    ).to.be.revertedWithCustomError(f.clearingHouse, "CycleIsVetoed");
    for (const id of ids) {
      const g = (await h!.store.guarantees.getClearingGuarantee(id))!;
      expect([g.state, g.cycleId]).to.deep.equal(["FINALIZED_PAYABLE", null]);
    }
    // The guarantees are locked again for their re-commit (alice 4 ETH, bob 1 ETH), and alice's unpaid debt
    // (3 ETH) stays locked until the chain releases it after the grace period.
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(7n * ONE);
    expect((await h!.store.collateral.getCollateral(f.bob.address, ETH)).locked).to.equal(ONE);
    expect((await tasks.keeper.tick()).released).to.deep.equal([]); // VetoedDebtLocked
    await advance(h!, f.timings.withdrawalGracePeriod);
    await h!.indexer.syncToHead();

    const kept = await tasks.keeper.tick();
    expect(kept.released.map((r) => r.debtor)).to.deep.equal([f.alice.address]);
    await h!.indexer.syncToHead();
    expect((await h!.store.cycles.getCycleDebt(1, ETH, f.alice.address))!.status).to.equal("VOIDED");
    expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(0n);
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(4n * ONE);

    await advance(h!, f.timings.cycleLength);
    expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 2, guarantees: 3 });
    await h!.indexer.syncToHead();
    expect((await h!.store.cycles.getCycle(2))!.state).to.equal("COMMITTED");
    expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(3n * ONE);
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(3n * ONE);
  });

  /** bob, toBob's recipient, disputes its credit in cycle 1 (as if the commit had misdirected it). */
  async function disputeToBob(f: Awaited<ReturnType<typeof committed>>["f"], toBob: string) {
    const all = await h!.store.guarantees.listGuarantees({ cycleId: 1 });
    const debitsRoot = commitArgsFromJson(JSON.parse((await h!.store.cycles.getCycle(1))!.args)).debitsRoot;
    const tree = debtorTreeOf(all, f.alice.address, ETH);
    const position = tree.leaves.findIndex((l) => l.guaranteeId.toLowerCase() === toBob.toLowerCase());
    const a = buildDisputeAnswer(
      rebuildCycleDebitTrees(debitsRoot, all),
      tree,
      new Map(all.map((g) => [g.guaranteeId.toLowerCase(), g])),
      position,
    );
    const disputed = await f.clearingHouse.connect(f.bob).disputeCredit(1, ETH, f.alice.address, {
      summary: a.summary,
      summaryProof: a.summaryProof,
      index: position,
      path: a.path,
      claims: a.claims,
      certificate: a.certificate,
      scheme: a.scheme,
      signature: a.signature,
      finalization: a.finalization,
    });
    return (await disputed.wait())!;
  }

  it("answers a recipient's credit dispute with the guarantee's credit proof: the bond pays nothing", async function () {
    const { f, tasks, ids } = await committed();
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await subscribeAll();
    const receipt = await disputeToBob(f, ids[0]);
    await h!.indexer.syncToHead();
    const open = await h!.store.operatorState.getOperatorState(OPEN_CREDIT_DISPUTES_KEY);
    const openedAt = (await receipt.getBlock()).timestamp;
    expect(JSON.parse(open!)).to.deep.equal([
      {
        cycleId: 1,
        guaranteeId: ids[0].toLowerCase(),
        recipient: f.bob.address,
        payer: f.alice.address,
        asset: ETH,
        amount: (3n * ONE).toString(),
        openedAt,
        openedTx: receipt.hash.toLowerCase(),
      },
    ]);
    // The cycle view lists it; the webhook announces it.
    const answerDeadline = new Date(
      (await h!.store.cycles.getCycle(1))!.answerDeadline! * 1000,
    ).toISOString();
    const listed = {
      guarantee_id: ids[0].toLowerCase(),
      recipient: f.bob.address,
      payer: f.alice.address,
      asset_address: ETH,
      amount: (3n * ONE).toString(),
    };
    expect((await getJson("/core/cycles/1")).credit_disputes).to.deep.equal([
      {
        ...listed,
        opened_at: new Date(openedAt * 1000).toISOString(),
        opened_tx: receipt.hash.toLowerCase(),
        answer_deadline: answerDeadline,
      },
    ]);
    const event = {
      cycle_id: "1",
      guarantee_id: ids[0].toLowerCase(),
      recipient_address: f.bob.address,
      payer_address: f.alice.address,
      asset_address: ETH,
      amount: (3n * ONE).toString(),
    };
    const [opened] = await queued("cycle.credit_disputed");
    expect(opened).to.include({ ...event, answer_deadline: answerDeadline, transaction_hash: receipt.hash });
    // A reorg rewinds the journaled list exactly (the operator_state undo op).
    const now = h!.clock.nowSeconds();
    const undo = await h!.store.transaction(async (tx) => {
      const j = new JournaledTx(tx, now);
      await j.setOperatorState(OPEN_CREDIT_DISPUTES_KEY, null);
      return j.undo;
    });
    expect(await h!.store.operatorState.getOperatorState(OPEN_CREDIT_DISPUTES_KEY)).to.equal(null);
    await h!.store.transaction((tx) => applyUndo(tx, undo, now));
    expect(await h!.store.operatorState.getOperatorState(OPEN_CREDIT_DISPUTES_KEY)).to.equal(open);
    const kept = await tasks.keeper.tick();
    expect(kept.creditsAnswered.map((c) => [c.guaranteeId, c.paid])).to.deep.equal([
      [ids[0].toLowerCase(), false],
    ]);
    await h!.indexer.syncToHead();
    expect((await f.clearingHouse.creditDisputeOf(1, ids[0])).status).to.equal(2n); // Answered
    expect(await h!.store.operatorState.getOperatorState(OPEN_CREDIT_DISPUTES_KEY)).to.equal(null);
    expect((await getJson("/core/cycles/1")).credit_disputes).to.deep.equal([]);
    const resolved = await queued("cycle.credit_dispute_resolved");
    expect(resolved).to.have.length(1);
    expect(resolved[0]).to.include({ ...event, outcome: "answered", paid: "0", owed: "0" });
    expect(resolved[0].transaction_hash).to.equal(kept.creditsAnswered[0].txHash.toLowerCase());
    expect((await h!.context.metrics.render()).body).to.include(
      'surety_credit_disputes_total{outcome="answered"} 1',
    );
    expect((await tasks.keeper.tick()).creditsAnswered).to.deep.equal([]); // not answered twice
    expect(await f.clearingHouse.bondOf(ETH)).to.equal(5n * ONE);
  });

  it("a veto ends the cycle's credit disputes: announced as vetoed, gone from the cycle view", async function () {
    const { f, ids } = await committed();
    await subscribeAll();
    await disputeToBob(f, ids[0]);
    await h!.indexer.syncToHead();
    expect((await getJson("/core/cycles/1")).credit_disputes).to.have.length(1);
    const vetoed = await (await f.clearingHouse.connect(f.admin).vetoCycle(1)).wait();
    await h!.indexer.syncToHead();
    expect(await h!.store.operatorState.getOperatorState(OPEN_CREDIT_DISPUTES_KEY)).to.equal(null);
    expect((await getJson("/core/cycles/1")).credit_disputes).to.deep.equal([]);
    const resolved = await queued("cycle.credit_dispute_resolved");
    expect(resolved).to.have.length(1);
    expect(resolved[0]).to.include({
      cycle_id: "1",
      guarantee_id: ids[0].toLowerCase(),
      recipient_address: f.bob.address,
      amount: (3n * ONE).toString(),
      outcome: "vetoed",
      paid: "0",
      owed: "0",
      transaction_hash: vetoed!.hash,
    });
    const metrics = (await h!.context.metrics.render()).body;
    expect(metrics).to.include('surety_credit_disputes_total{outcome="opened"} 1');
    expect(metrics).to.include('surety_credit_disputes_total{outcome="vetoed"} 1');
  });

  it("a credit dispute left unanswered past the answer deadline: the bond pays it, announced as paid", async function () {
    const { f, tasks, ids } = await committed();
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await subscribeAll();
    await disputeToBob(f, ids[0]);
    await h!.indexer.syncToHead();
    await advance(h!, 2 * f.timings.challengeWindow + 1); // past the answer deadline, no keeper tick before
    const kept = await tasks.keeper.tick();
    expect(kept.creditsAnswered.map((c) => [c.guaranteeId, c.paid])).to.deep.equal([
      [ids[0].toLowerCase(), true],
    ]);
    await h!.indexer.syncToHead();
    expect((await getJson("/core/cycles/1")).credit_disputes).to.deep.equal([]);
    const [resolved] = await queued("cycle.credit_dispute_resolved");
    expect(resolved).to.include({
      guarantee_id: ids[0].toLowerCase(),
      outcome: "paid",
      paid: (3n * ONE).toString(),
      owed: "0",
    });
    expect((await h!.context.metrics.render()).body).to.include(
      'surety_credit_disputes_total{outcome="paid"} 1',
    );
  });
});
