import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers, network } from "hardhat";
import { keccak256, toUtf8Bytes, Wallet, ZeroAddress } from "ethers";
import { remunerateCallArgs, toRemunerateArgs } from "../../sdk/certificate";
import type { GuaranteeClaimsV2 } from "../../sdk/claims";
import { validationRequestHash } from "../../sdk/ids";
import { toErrorResponse } from "../../operator/api/error-handler";
import { IssuanceError } from "../../operator/guarantees";
import { NEXT_CUTOFF_KEY } from "../../operator/clearing/scheduler";
import { debtorTreeOf } from "../../operator/clearing/dispute-answer";
import { JournaledTx, applyUndo } from "../../operator/chain/journal";
import { DEFAULT_PIN_RESEND_SECONDS } from "../../operator/lifecycle/verdict-pins";
import {
  advance,
  chainFixture,
  clearingTasks,
  type CoreHarness,
  finalizationOf,
  issueGuarantee,
  mine,
  OPERATOR_KEY,
  openCore,
  provider,
  time,
} from "./indexer-fixtures";

const ETH = ZeroAddress;

describe("V2 lifecycle", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  async function setup() {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    await f.vault.connect(f.alice).deposit({ value: 10_000n });
    await h.indexer.syncToHead();
    await h.syncClock();
    return { f, h, tasks: clearingTasks(h) };
  }

  /** The recipient opens the validation request, the validator answers `score`. */
  async function validate(
    h: CoreHarness,
    claims: GuaranteeClaimsV2,
    id: string,
    score: number,
    tag = "quality",
  ) {
    const requestHash = validationRequestHash(31337, claims.policy, id);
    const { f } = h;
    await f.validationRegistry
      .connect(f.bob)
      .validationRequest(claims.policy.validator, claims.policy.agentId, "ipfs://job", requestHash);
    await f.validationRegistry
      .connect(f.validator)
      .validationResponse(requestHash, score, "ipfs://verdict", keccak256(toUtf8Bytes("verdict")), tag);
  }

  async function stateOf(id: string) {
    return (await h!.store.guarantees.getClearingGuarantee(id))!.state;
  }

  it("lets only the payer finalize a pending or disputed V2 guarantee", async function () {
    const { f, tasks } = await setup();
    const v2 = await issueGuarantee(h!, f.alice, f.bob.address, 100n, ETH, {});
    const v1 = await issueGuarantee(h!, f.alice, f.bob.address, 100n);
    const signature = await finalizationOf(h!.f, f.alice, v2.id);
    const reject = async (id: string, wallet: string, by: unknown = signature) => {
      try {
        await tasks.lifecycle.finalizeByPayer(id, wallet, by);
      } catch (error) {
        const { status, body } = toErrorResponse(error);
        return [status, body.code];
      }
      throw new Error("expected a rejection");
    };
    expect(await reject(v2.id, f.bob.address)).to.deep.equal([403, "not_payer"]);
    expect(await reject(v2.id, f.outsider.address)).to.deep.equal([404, "guarantee_not_found"]);
    expect(await reject(v1.id, f.alice.address)).to.deep.equal([409, "invalid_state"]);
    // The payer's Finalization signature is required, and must be the payer's, of this guarantee.
    const invalid = [400, "invalid_finalization_signature"];
    expect(await reject(v2.id, f.alice.address, null)).to.deep.equal(invalid); // no signature
    expect(await reject(v2.id, f.alice.address, "0x1234")).to.deep.equal(invalid);
    expect(await reject(v2.id, f.alice.address, await finalizationOf(h!.f, f.bob, v2.id))).to.deep.equal(
      invalid,
    );
    expect(await reject(v2.id, f.alice.address, await finalizationOf(h!.f, f.alice, v1.id))).to.deep.equal(
      invalid,
    );
    expect(await stateOf(v2.id)).to.equal("PENDING_VALIDATION");
    const finalized = await tasks.lifecycle.finalizeByPayer(
      v2.id.toUpperCase().replace("0X", "0x"),
      f.alice.address,
      signature,
    );
    expect(finalized.finalizationSignature).to.equal(signature.toLowerCase());
    expect(finalized.state).to.equal("FINALIZED_PAYABLE");
    expect(await reject(v2.id, f.alice.address)).to.deep.equal([409, "invalid_state"]);
  });

  it("disputes on a failing response; the payer may still finalize", async function () {
    const { f, tasks } = await setup();
    const g = await issueGuarantee(h!, f.alice, f.bob.address, 100n, ETH, {});
    await validate(h!, g.claims as GuaranteeClaimsV2, g.id, 50);
    await tasks.lifecycle.tick();
    expect(await stateOf(g.id)).to.equal("PENDING_VALIDATION"); // not indexed yet
    await h!.indexer.syncToHead();
    expect((await tasks.lifecycle.tick()).disputed).to.deep.equal([g.id]);
    expect(await stateOf(g.id)).to.equal("DISPUTED");
    await tasks.lifecycle.finalizeByPayer(g.id, f.alice.address, await finalizationOf(h!.f, f.alice, g.id));
    expect(await stateOf(g.id)).to.equal("FINALIZED_PAYABLE");
  });

  it("cancels at the deadline without a passing response and releases the lock", async function () {
    const { f, tasks } = await setup();
    const g = await issueGuarantee(h!, f.alice, f.bob.address, 700n, ETH, {});
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(700n);
    const deadline = (g.claims as GuaranteeClaimsV2).policy.deadline;
    // Past the deadline on Core's wall clock only: the chain has not reached it, nothing is decided.
    h!.clock.set(deadline + 1);
    expect((await tasks.lifecycle.tick()).cancelled).to.deep.equal([]);
    // Past it on chain, but Core has not indexed a later block yet: wait.
    await time.increaseTo(deadline + 1);
    expect((await tasks.lifecycle.tick()).cancelled).to.deep.equal([]);
    await h!.indexer.syncToHead();
    expect((await tasks.lifecycle.tick()).cancelled).to.deep.equal([g.id]);
    expect(await stateOf(g.id)).to.equal("CANCELLED");
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(0n);
  });

  it("nets a guarantee that passed validation but was not remunerated by the deadline", async function () {
    const { f, tasks } = await setup();
    const g = await issueGuarantee(h!, f.alice, f.bob.address, 300n, ETH, {});
    await validate(h!, g.claims as GuaranteeClaimsV2, g.id, 90);
    await advance(h!, 61);
    await mine(1);
    await h!.indexer.syncToHead();
    expect((await tasks.lifecycle.tick()).finalized).to.deep.equal([g.id]);
    expect(await stateOf(g.id)).to.equal("FINALIZED_PAYABLE");
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(300n);
  });

  it("a request squatted by the payer with a wrong agent id still lets the seller be paid (issue 17, finding 4)", async function () {
    const { f, tasks } = await setup();
    const g = await issueGuarantee(h!, f.alice, f.bob.address, 400n, ETH, {});
    const claims = g.claims as GuaranteeClaimsV2;
    const requestHash = validationRequestHash(31337, claims.policy, g.id);
    await f.validationRegistry
      .connect(f.alice)
      .validationRequest(claims.policy.validator, 666n, "bogus", requestHash);
    await validate(h!, claims, g.id, 95); // the seller's request no longer reverts; the validator answers
    await h!.indexer.syncToHead();
    // Core reads the verdict as the Vault does: the record's (squatted) agent id is not a dispute.
    expect((await tasks.lifecycle.tick()).disputed).to.deep.equal([]);
    expect(await stateOf(g.id)).to.equal("PENDING_VALIDATION");
    await f.vault.connect(f.bob).remunerate(...remunerateCallArgs(toRemunerateArgs(g.certificate, g.payer)));
    await h!.indexer.syncToHead();
    expect(await stateOf(g.id)).to.equal("REMUNERATED");
  });

  it("follows an on-chain remuneration: REMUNERATED, lock released, deposit reduced", async function () {
    const { f } = await setup();
    const g = await issueGuarantee(h!, f.alice, f.bob.address, 400n, ETH, {});
    await validate(h!, g.claims as GuaranteeClaimsV2, g.id, 95);
    await f.vault.connect(f.bob).remunerate(...remunerateCallArgs(toRemunerateArgs(g.certificate, g.payer)));
    await h!.indexer.syncToHead();
    expect(await stateOf(g.id)).to.equal("REMUNERATED");
    const alice = await h!.store.collateral.getCollateral(f.alice.address, ETH);
    expect([alice.deposited, alice.locked]).to.deep.equal([9_600n, 0n]);
  });

  it("drops a guarantee remunerated between cutoff and commit and commits the rest", async function () {
    const { f, tasks } = await setup();
    const g = await issueGuarantee(h!, f.alice, f.bob.address, 400n, ETH, {});
    const v1 = await issueGuarantee(h!, f.alice, f.carol.address, 100n);
    await validate(h!, g.claims as GuaranteeClaimsV2, g.id, 95);
    await tasks.lifecycle.finalizeByPayer(g.id, f.alice.address, await finalizationOf(h!.f, f.alice, g.id)); // the payer also decided to pay
    // ... and the recipient remunerated first
    await f.vault.connect(f.bob).remunerate(...remunerateCallArgs(toRemunerateArgs(g.certificate, g.payer)));
    await h!.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h!.clock.nowSeconds()));
    const result = await tasks.scheduler.tick();
    expect(result).to.include({ action: "committed", cycleId: 1, guarantees: 1 });
    expect((await h!.store.guarantees.getClearingGuarantee(g.id))?.excludedReason).to.match(
      /remunerated on chain/,
    );
    await h!.indexer.syncToHead();
    expect(await stateOf(g.id)).to.equal("REMUNERATED");
    expect(await stateOf(v1.id)).to.equal("NETTED");
    const alice = await h!.store.collateral.getCollateral(f.alice.address, ETH);
    expect([alice.deposited, alice.locked]).to.deep.equal([9_600n, 100n]);
  });

  it("a V2 guarantee remunerated in its commit's own block: the dispute removes it, the keeper recovers the deduction", async function () {
    const { f, tasks } = await setup();
    await f.vault.connect(f.bob).deposit({ value: 10_000n });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 10_000n });
    await h!.indexer.syncToHead();
    const g = await issueGuarantee(h!, f.alice, f.bob.address, 400n, ETH, {});
    await issueGuarantee(h!, f.alice, f.carol.address, 100n);
    await validate(h!, g.claims as GuaranteeClaimsV2, g.id, 95);
    await tasks.lifecycle.finalizeByPayer(g.id, f.alice.address, await finalizationOf(h!.f, f.alice, g.id));
    await h!.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h!.clock.nowSeconds()));
    // The race Core cannot see: bob's remuneration lands in the commit's block, ahead of it (higher tip).
    await network.provider.send("evm_setAutomine", [false]);
    try {
      expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 1, guarantees: 2 });
      await f.vault
        .connect(f.bob)
        .remunerate(...remunerateCallArgs(toRemunerateArgs(g.certificate, g.payer)), {
          maxPriorityFeePerGas: 50n * 10n ** 9n,
          maxFeePerGas: 100n * 10n ** 9n,
        });
      await mine(1);
    } finally {
      await network.provider.send("evm_setAutomine", [true]);
    }
    await h!.indexer.syncToHead();
    expect(await stateOf(g.id)).to.equal("REMUNERATED");
    expect((await f.clearingHouse.debtOf(1, ETH, f.alice.address)).amount).to.equal(500n);

    // alice disputes the remunerated position: removed from her debit and from bob's credit.
    const planned = await Promise.all(
      (await h!.store.cycles.getCycle(1))!.guaranteeIds.map(
        async (id) => (await h!.store.guarantees.getClearingGuarantee(id))!,
      ),
    );
    const position = debtorTreeOf(planned, f.alice.address, ETH).leaves.findIndex(
      (l) => l.guaranteeId.toLowerCase() === g.id.toLowerCase(),
    );
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, position);
    await h!.indexer.syncToHead();
    expect((await tasks.keeper.tick()).answered.map((a) => a.conceded)).to.deep.equal([false]);
    await h!.indexer.syncToHead();
    expect((await h!.store.cycles.listCycleDisputes({ cycleId: 1 })).map((d) => d.status)).to.deep.equal([
      "REMOVED",
    ]);
    expect(await f.clearingHouse.deductedOf(1, ETH, f.bob.address)).to.equal(400n);
    expect((await h!.store.collateral.getCollateral(f.bob.address, ETH)).locked).to.equal(400n);

    // Past the payment deadline (no claim by bob returned it): the keeper takes it back into the bond, once.
    const cycle = (await h!.store.cycles.getCycle(1))!;
    await advance(h!, cycle.paymentDeadline! - h!.clock.nowSeconds() + 1);
    const bond = await f.clearingHouse.bondOf(ETH);
    const kept = await tasks.keeper.tick();
    expect(kept.holdingsSettled.map((s) => [s.call, s.account])).to.deep.include([
      "recoverDeduction",
      f.bob.address,
    ]);
    await h!.indexer.syncToHead();
    expect(await f.clearingHouse.deductedOf(1, ETH, f.bob.address)).to.equal(0n);
    expect((await f.clearingHouse.bondOf(ETH)) - bond).to.be.at.least(400n);
    const bob = await h!.store.collateral.getCollateral(f.bob.address, ETH);
    expect([bob.deposited, bob.locked]).to.deep.equal([10_000n - 400n, 0n]);
    expect((await tasks.keeper.tick()).holdingsSettled).to.deep.equal([]);
  });

  it("nets a verdict-based V2 only once its pin is indexed: a validator's later re-post voids nothing (audit H-2)", async function () {
    const { f, tasks } = await setup();
    await f.vault.connect(f.bob).deposit({ value: 10_000n });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 10_000n });
    await h!.indexer.syncToHead();
    const g = await issueGuarantee(h!, f.alice, f.bob.address, 400n, ETH, {});
    const finalized = await issueGuarantee(h!, f.alice, f.carol.address, 100n, ETH, {});
    const claims = g.claims as GuaranteeClaimsV2;
    const requestHash = validationRequestHash(31337, claims.policy, g.id);
    await validate(h!, claims, g.id, 90);
    // The payer's finalization answers disputes in place of the verdict: no pin is needed for it.
    await tasks.lifecycle.finalizeByPayer(
      finalized.id,
      f.alice.address,
      await finalizationOf(h!.f, f.alice, finalized.id),
    );
    expect((await tasks.pinner.tick()).sent).to.deep.equal([]); // before the deadline: nothing to pin
    await advance(h!, 61);
    await mine(1);
    await h!.indexer.syncToHead();
    expect((await tasks.lifecycle.tick()).finalized).to.deep.equal([g.id]);
    expect(await stateOf(g.id)).to.equal("FINALIZED_PAYABLE");
    // The round's order (background.ts): lifecycle → verdict pins → … → scheduler. The pin is not mined yet.
    await network.provider.send("evm_setAutomine", [false]);
    let pinned: Awaited<ReturnType<typeof tasks.pinner.tick>>;
    try {
      pinned = await tasks.pinner.tick();
      expect(pinned.sent).to.deep.equal([g.id]);
      expect(await h!.store.guarantees.verdictPinOf(g.id)).to.equal("sent");
      expect((await tasks.pinner.tick()).sent).to.deep.equal([]); // sent once
      // Cycle 1 nets only the payer-finalized guarantee: the verdict's pin is sent, not indexed.
      expect(await h!.store.netting.countUnreservedPayable(10)).to.equal(1);
      await h!.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h!.clock.nowSeconds()));
      expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 1, guarantees: 1 });
    } finally {
      await network.provider.send("evm_setAutomine", [true]);
    }
    await mine(1);
    const pinReceipt = await provider.getTransactionReceipt(pinned.transactions[0]);
    expect(pinReceipt!.status).to.equal(1);
    expect((await h!.store.cycles.getCycle(1))!.guaranteeIds).to.deep.equal([finalized.id.toLowerCase()]);
    // Mined, not indexed: still waiting outside the pool.
    expect(await h!.store.netting.countUnreservedPayable(10)).to.equal(0);
    await h!.indexer.syncToHead();
    expect(await h!.store.guarantees.verdictPinOf(g.id)).to.equal("pinned");
    expect(await h!.store.guarantees.verdictPinOf(finalized.id)).to.equal(null);
    expect(await f.vault.isVerdictPinned(requestHash)).to.equal(true);
    // Indexed: payable; the next cycle nets it.
    expect(await h!.store.netting.countUnreservedPayable(10)).to.equal(1);
    await advance(h!, 61);
    await h!.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h!.clock.nowSeconds()));
    expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 2, guarantees: 1 });
    await h!.indexer.syncToHead();
    expect((await h!.store.cycles.getCycle(2))!.guaranteeIds).to.deep.equal([g.id.toLowerCase()]);
    expect(await stateOf(g.id)).to.equal("NETTED");

    // The validator posts again after the deadline (the audit's attack); alice disputes bob's guarantee.
    await f.validationRegistry
      .connect(f.validator)
      .validationResponse(requestHash, 90, "ipfs://again", keccak256(toUtf8Bytes("again")), "quality");
    const planned = await Promise.all(
      (await h!.store.cycles.getCycle(2))!.guaranteeIds.map(
        async (id) => (await h!.store.guarantees.getClearingGuarantee(id))!,
      ),
    );
    const position = debtorTreeOf(planned, f.alice.address, ETH).leaves.findIndex(
      (l) => l.guaranteeId.toLowerCase() === g.id.toLowerCase(),
    );
    await f.clearingHouse.connect(f.alice).disputeGuarantee(2, ETH, position);
    await h!.indexer.syncToHead();
    expect((await tasks.keeper.tick()).answered.map((a) => a.conceded)).to.deep.equal([false]);
    await h!.indexer.syncToHead();
    expect((await h!.store.cycles.listCycleDisputes({ cycleId: 2 })).map((d) => d.status)).to.deep.equal([
      "UPHELD",
    ]);
    expect(await f.clearingHouse.deductedOf(2, ETH, f.bob.address)).to.equal(0n);

    // A reorg that drops the VerdictPinned restores what the store held before it ('sent').
    const undo = await h!.store.transaction(async (tx) => {
      const j = new JournaledTx(tx, h!.clock.nowSeconds());
      expect(await j.setVerdictPinned(g.id, requestHash)).to.equal(true);
      expect(await j.setVerdictPinned("0x" + "ee".repeat(32), requestHash)).to.equal(false); // not Core's
      // A pin of a made-up policy under the real id pins nothing for the real policy.
      expect(await j.setVerdictPinned(g.id, "0x" + "dd".repeat(32))).to.equal(false);
      return j.undo;
    });
    await h!.store.transaction((tx) => applyUndo(tx, undo, h!.clock.nowSeconds()));
    expect(await h!.store.guarantees.verdictPinOf(g.id)).to.equal("pinned"); // it was 'pinned' before this event
    await h!.store.guarantees.setVerdictPin(g.id, "sent");
    const again = await h!.store.transaction(async (tx) => {
      const j = new JournaledTx(tx, h!.clock.nowSeconds());
      await j.setVerdictPinned(g.id, requestHash);
      return j.undo;
    });
    await h!.store.transaction((tx) => applyUndo(tx, again, h!.clock.nowSeconds()));
    expect(await h!.store.guarantees.verdictPinOf(g.id)).to.equal("sent");
  });

  it("sends a verdict's pin again once it stayed unindexed past the resend period (its nonce taken by another transaction)", async function () {
    const { f, tasks } = await setup();
    const g = await issueGuarantee(h!, f.alice, f.bob.address, 400n, ETH, {});
    const claims = g.claims as GuaranteeClaimsV2;
    const requestHash = validationRequestHash(31337, claims.policy, g.id);
    await validate(h!, claims, g.id, 90);
    await advance(h!, 61);
    await mine(1);
    await h!.indexer.syncToHead();
    expect((await tasks.lifecycle.tick()).finalized).to.deep.equal([g.id]);
    // The pin is sent but never mined: another transaction of the operator account takes its nonce.
    await network.provider.send("evm_setAutomine", [false]);
    let first: Awaited<ReturnType<typeof tasks.pinner.tick>>;
    try {
      first = await tasks.pinner.tick();
      expect(first.sent).to.deep.equal([g.id]);
      expect(first.resent).to.deep.equal([]);
      const pin = await provider.getTransaction(first.transactions[0]);
      await network.provider.send("hardhat_dropTransaction", [first.transactions[0]]);
      const operator = new Wallet(OPERATOR_KEY, ethers.provider);
      await operator.sendTransaction({ to: operator.address, value: 0n, nonce: pin!.nonce });
      await mine(1);
    } finally {
      await network.provider.send("evm_setAutomine", [true]);
    }
    expect((await tasks.sender.tick()).map((s) => s.state)).to.deep.equal(["consumed"]);
    await h!.indexer.syncToHead();
    expect(await h!.store.guarantees.verdictPinOf(g.id)).to.equal("sent");
    expect(await f.vault.isVerdictPinned(requestHash)).to.equal(false);
    expect(await h!.store.netting.countUnreservedPayable(10)).to.equal(0);
    // Not before the resend period (wall clock)...
    h!.clock.advance(DEFAULT_PIN_RESEND_SECONDS - 1);
    expect((await tasks.pinner.tick()).sent).to.deep.equal([]);
    // ... then once; mined and indexed, the guarantee is payable.
    h!.clock.advance(1);
    const again = await tasks.pinner.tick();
    expect([again.sent, again.resent]).to.deep.equal([[g.id], [g.id]]);
    expect(again.transactions[0]).to.not.equal(first.transactions[0]);
    expect((await tasks.pinner.tick()).sent).to.deep.equal([]);
    await h!.indexer.syncToHead();
    expect(await f.vault.isVerdictPinned(requestHash)).to.equal(true);
    expect(await h!.store.guarantees.verdictPinOf(g.id)).to.equal("pinned");
    expect(await h!.store.netting.countUnreservedPayable(10)).to.equal(1);
  });

  it("a verdict a late response voided is never pinned: its resends back off (R, 2R, 4R), not every period", async function () {
    const { f, tasks } = await setup();
    const g = await issueGuarantee(h!, f.alice, f.bob.address, 400n, ETH, {});
    const claims = g.claims as GuaranteeClaimsV2;
    const requestHash = validationRequestHash(31337, claims.policy, g.id);
    await validate(h!, claims, g.id, 90);
    await advance(h!, 61);
    await mine(1);
    await h!.indexer.syncToHead();
    expect((await tasks.lifecycle.tick()).finalized).to.deep.equal([g.id]);
    // The validator re-posts a failing score after the deadline, before the pin: the Vault skips the verdict.
    await f.validationRegistry
      .connect(f.validator)
      .validationResponse(requestHash, 0, "ipfs://late", keccak256(toUtf8Bytes("late")), "quality");
    const R = DEFAULT_PIN_RESEND_SECONDS;
    const sentAt = async (after: number) => {
      h!.clock.advance(after);
      const { sent } = await tasks.pinner.tick();
      await h!.indexer.syncToHead();
      return sent;
    };
    expect(await sentAt(0)).to.deep.equal([g.id]);
    expect(await f.vault.isVerdictPinned(requestHash)).to.equal(false);
    expect(await h!.store.guarantees.verdictPinOf(g.id)).to.equal("sent");
    expect(await sentAt(R)).to.deep.equal([g.id]); // t + R
    expect(await sentAt(R)).to.deep.equal([g.id]); // t + 2R: it had waited R at the last send
    expect(await sentAt(R)).to.deep.equal([]); // t + 3R: it had waited 2R
    expect(await sentAt(R)).to.deep.equal([g.id]); // t + 4R
    expect(await sentAt(3 * R)).to.deep.equal([]); // t + 7R
    expect(await sentAt(R)).to.deep.equal([g.id]); // t + 8R
    expect(await f.vault.isVerdictPinned(requestHash)).to.equal(false);
    expect(await h!.store.netting.countUnreservedPayable(10)).to.equal(0);
  });

  it("a verdict a late response voided is cancelled in the lifecycle's next round, its lock released; a pinned one is kept", async function () {
    const { f, tasks } = await setup();
    const voided = await issueGuarantee(h!, f.alice, f.bob.address, 400n, ETH, {});
    const kept = await issueGuarantee(h!, f.alice, f.carol.address, 100n, ETH, {});
    const hashOf = (g: typeof voided) =>
      validationRequestHash(31337, (g.claims as GuaranteeClaimsV2).policy, g.id);
    await validate(h!, voided.claims as GuaranteeClaimsV2, voided.id, 90);
    await validate(h!, kept.claims as GuaranteeClaimsV2, kept.id, 90);
    await advance(h!, 61);
    await mine(1);
    await h!.indexer.syncToHead();
    expect((await tasks.lifecycle.tick()).finalized).to.have.members([voided.id, kept.id]);
    // `kept` is pinned first (a seller's own pin, mined and indexed); then the validator posts again after the
    // deadline for both (the audit's H-2 window): the Vault keeps the pinned verdict, `voided` is not validated
    // for good (its record's lastUpdate is past the deadline).
    const keptClaims = (await h!.store.guarantees.getClearingGuarantee(kept.id))!.certificateClaims;
    await f.vault.connect(f.carol).pinVerdicts([keptClaims]);
    for (const g of [voided, kept]) {
      await f.validationRegistry
        .connect(f.validator)
        .validationResponse(hashOf(g), 90, "ipfs://late", keccak256(toUtf8Bytes("late")), "quality");
    }
    await h!.indexer.syncToHead();
    expect(await h!.store.guarantees.verdictPinOf(kept.id)).to.equal("pinned");
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(500n);
    const round = await tasks.lifecycle.tick();
    expect(round.voided).to.deep.equal([voided.id]);
    expect(await stateOf(voided.id)).to.equal("CANCELLED");
    expect(await stateOf(kept.id)).to.equal("FINALIZED_PAYABLE");
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(100n);
    // Nothing left to pin or cancel; the chain agrees: the voided verdict cannot be pinned, the kept one is.
    expect((await tasks.pinner.tick()).sent).to.deep.equal([]);
    expect((await tasks.lifecycle.tick()).voided).to.deep.equal([]);
    expect(await f.vault.isVerdictPinned(hashOf(voided))).to.equal(false);
    expect(await f.vault.isVerdictPinned(hashOf(kept))).to.equal(true);
    expect(await h!.store.netting.countUnreservedPayable(10)).to.equal(1);
  });

  it("a late response indexed before Core judges the deadline cancels at once: no pin sent", async function () {
    const { f, tasks } = await setup();
    const g = await issueGuarantee(h!, f.alice, f.bob.address, 400n, ETH, {});
    const claims = g.claims as GuaranteeClaimsV2;
    await validate(h!, claims, g.id, 90);
    await time.increaseTo(claims.policy.deadline + 1);
    await f.validationRegistry
      .connect(f.validator)
      .validationResponse(
        validationRequestHash(31337, claims.policy, g.id),
        90,
        "ipfs://late",
        keccak256(toUtf8Bytes("late")),
        "quality",
      );
    await h!.syncClock();
    await h!.indexer.syncToHead();
    const round = await tasks.lifecycle.tick();
    expect([round.finalized, round.cancelled, round.voided]).to.deep.equal([[], [g.id], []]);
    expect(await stateOf(g.id)).to.equal("CANCELLED");
    expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(0n);
    expect((await tasks.pinner.tick()).sent).to.deep.equal([]);
  });

  it("a resent pin of a verdict already pinned on chain is skipped, not reverted (idempotent)", async function () {
    const { f, tasks } = await setup();
    const g = await issueGuarantee(h!, f.alice, f.bob.address, 400n, ETH, {});
    await validate(h!, g.claims as GuaranteeClaimsV2, g.id, 90);
    await advance(h!, 61);
    await mine(1);
    await h!.indexer.syncToHead();
    await tasks.lifecycle.tick();
    const first = await tasks.pinner.tick();
    expect(first.sent).to.deep.equal([g.id]);
    h!.clock.advance(DEFAULT_PIN_RESEND_SECONDS);
    // Still in the sender's journal: the identical call is answered with the transaction in flight.
    expect((await tasks.pinner.tick()).transactions).to.deep.equal(first.transactions);
    // Mined (the sender finished it), its event not indexed yet: a new transaction, which the Vault skips.
    expect((await tasks.sender.tick()).map((t) => t.state)).to.deep.equal(["mined"]);
    h!.clock.advance(DEFAULT_PIN_RESEND_SECONDS);
    const again = await tasks.pinner.tick();
    expect(again.resent).to.deep.equal([g.id]);
    expect(again.transactions).to.not.deep.equal(first.transactions);
    const receipt = await provider.getTransactionReceipt(again.transactions[0]);
    expect(receipt!.status).to.equal(1);
    const pinnedLogs = receipt!.logs.filter((l) => {
      try {
        return f.vault.interface.parseLog(l)?.name === "VerdictPinned";
      } catch {
        return false;
      }
    });
    expect(pinnedLogs).to.deep.equal([]); // skipped: already pinned
    await h!.indexer.syncToHead();
    expect(await h!.store.guarantees.verdictPinOf(g.id)).to.equal("pinned");
    h!.clock.advance(DEFAULT_PIN_RESEND_SECONDS);
    expect((await tasks.pinner.tick()).sent).to.deep.equal([]); // pinned: never again
  });

  it("refuses at issuance a V2 deadline the withdrawal grace period could not cover", async function () {
    const { f } = await setup();
    await h!.context.timings.load(provider, f.vaultAddress);
    const t = f.timings;
    const now = h!.clock.nowSeconds();
    const cap =
      now +
      t.withdrawalGracePeriod -
      t.cycleLength -
      t.commitDelay -
      t.confirmationLag -
      h!.config.v2DeadlineMarginSeconds -
      1;
    await issueGuarantee(h!, f.alice, f.bob.address, 1n, ETH, { deadline: cap });
    try {
      await issueGuarantee(h!, f.alice, f.bob.address, 1n, ETH, { deadline: cap + 1 });
      expect.fail("expected a 400");
    } catch (error) {
      expect(error).to.be.instanceOf(IssuanceError);
      expect(toErrorResponse(error).status).to.equal(400);
      expect((error as IssuanceError).code).to.equal("validation_deadline_too_far");
      expect((error as IssuanceError).message).to.match(/^claims\.validation_policy\.validation_deadline: /);
    }
  });
});
