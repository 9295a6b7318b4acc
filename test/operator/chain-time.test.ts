/**
 * Core judges every deadline a contract also judges by chain time (the indexed head's timestamp), never
 * by its wall clock (docs/operator-async.md, "Which clock"). Each scenario moves one clock and leaves
 * the other alone: the chain with `time.increase` (Core's ManualClock wall clock stays put), or the
 * wall clock (the chain stays put).
 */
import { Writable } from "node:stream";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { keccak256, parseEther, toUtf8Bytes, Wallet, ZeroAddress } from "ethers";
import { remunerateCallArgs, toRemunerateArgs } from "../../sdk/certificate";
import type { GuaranteeClaimsV2 } from "../../sdk/claims";
import { validationRequestHash } from "../../sdk/ids";
import pino from "pino";
import { toErrorResponse } from "../../operator/api/error-handler";
import { DomainError } from "../../operator/errors";
import { createBackgroundTasks } from "../../operator/background";
import { ChainClock, ChainTimeUnavailableError } from "../../operator/clock";
import {
  chainFixture,
  clearingTasks,
  type CoreHarness,
  issueGuarantee,
  mine,
  OPERATOR_KEY,
  openCore,
  provider,
  time,
} from "./indexer-fixtures";

const ETH = ZeroAddress;
const MINUTES = 60;

describe("chain time: Core decides chain deadlines by the indexed head, not its wall clock", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  describe("ChainClock", function () {
    it("has no time before a block is indexed, then follows the indexed head, backwards too", function () {
      const clock = new ChainClock();
      expect(clock.current()).to.equal(null);
      expect(() => clock.nowSeconds()).to.throw(ChainTimeUnavailableError, /not indexed any block/);
      clock.observe({ blockNumber: 5, blockTimestamp: 1_000 });
      expect(clock.nowSeconds()).to.equal(1_000);
      clock.observe({ blockNumber: 3, blockTimestamp: 990 }); // a reorg rewound the cursor
      expect(clock.nowSeconds()).to.equal(990);
      clock.observe(null);
      expect(() => clock.nowSeconds()).to.throw(ChainTimeUnavailableError);
      expect(() => clock.observe({ blockNumber: 1, blockTimestamp: 1.5 })).to.throw(RangeError);
    });

    it("is fed by the indexer with the confirmed head it applied", async function () {
      const f = await loadFixture(chainFixture);
      h = await openCore(f, { confirmations: 2 });
      await time.increase(30);
      await h.indexer.syncToHead();
      const head = await provider.getBlockNumber();
      const confirmed = (await provider.getBlock(head - 2))!;
      expect(h.chainClock.current()).to.deep.equal({
        blockNumber: confirmed.number,
        blockTimestamp: confirmed.timestamp,
      });
      expect(h.chainClock.nowSeconds()).to.equal(confirmed.timestamp);
    });
  });

  it("background rounds wait for the first indexed block without an error, then follow the chain", async function () {
    const f = await loadFixture(chainFixture);
    // One block short of confirming the Vault's deployment block: nothing is indexed yet.
    const confirmations = (await provider.getBlockNumber()) - f.deployment.vaultDeployBlock + 1;
    h = await openCore(f, { config: { confirmations } });
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
        done();
      },
    });
    const chainClock = new ChainClock();
    const tasks = await createBackgroundTasks({
      ...h.context,
      chainClock,
      logger: pino({ level: "debug" }, sink),
      provider,
    });
    await tasks.runOnce();
    expect(chainClock.current()).to.equal(null);
    expect(lines.filter((l) => Number(l.level) >= 50)).to.deep.equal([]);
    expect(
      lines
        .filter((l) => l.msg === "waiting for the first indexed block (no chain time yet)")
        .map((l) => l.task),
    ).to.deep.equal(["lifecycle", "verdict pins", "keeper", "scheduler"]); // deadline work first (docs/clearing.md)
    await mine(1);
    await tasks.runOnce();
    const confirmed = (await provider.getBlock((await provider.getBlockNumber()) - confirmations))!;
    expect(chainClock.nowSeconds()).to.equal(confirmed.timestamp);
    expect(lines.filter((l) => Number(l.level) >= 50)).to.deep.equal([]);
  });

  /** A cycle in which alice owes bob 1 ETH, committed and indexed; Core's wall clock never moved. */
  async function openDebt() {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const wallStart = h.clock.nowSeconds();
    const { scheduler, keeper } = clearingTasks(h);
    await f.vault.connect(f.alice).deposit({ value: parseEther("5") });
    await h.indexer.syncToHead();
    await issueGuarantee(h, f.alice, f.bob.address, parseEther("1"));
    expect((await scheduler.tick()).action).to.equal("waiting");
    // The cycle closes by chain time: the wall clock has not moved at all.
    await time.increase(f.timings.cycleLength);
    await h.indexer.syncToHead();
    expect((await scheduler.tick()).action).to.equal("committed");
    await h.indexer.syncToHead();
    const cycle = (await h.store.cycles.getCycle(1))!;
    const [debt] = await h.store.cycles.listCycleDebts({ cycleId: 1 });
    expect([debt.debtor, debt.status]).to.deep.equal([f.alice.address, "OPEN"]);
    expect(h.clock.nowSeconds()).to.equal(wallStart);
    const operator = new Wallet(OPERATOR_KEY).address;
    return { f, h, keeper, cycle, operator };
  }

  it("keeper: covers inside the default window when the chain is minutes AHEAD of the wall clock", async function () {
    const { f, keeper, cycle, operator } = await openDebt();
    const h1 = h!;
    const sent = await provider.getTransactionCount(operator);
    expect((await keeper.tick()).covered).to.have.length(0); // payment window still open on chain
    await time.increaseTo(cycle.paymentDeadline! + 1);
    await h1.indexer.syncToHead();
    // Core's wall clock is minutes behind the deadline the chain has passed.
    expect(cycle.paymentDeadline! - h1.clock.nowSeconds()).to.be.greaterThan(2 * MINUTES);
    const kept = await keeper.tick();
    expect(kept.covered.map((c) => c.debtor)).to.deep.equal([f.alice.address]);
    const receipt = (await provider.getTransactionReceipt(kept.covered[0].txHash))!;
    const coveredAt = (await provider.getBlock(receipt.blockNumber))!.timestamp;
    expect(coveredAt).to.be.greaterThan(cycle.paymentDeadline!).and.at.most(cycle.defaultDeadline!);
    await h1.indexer.syncToHead();
    expect((await h1.store.cycles.listCycleDebts({ cycleId: 1 }))[0].status).to.equal("COVERED");
    expect(await provider.getTransactionCount(operator)).to.equal(sent + 1); // one cover, sent once
  });

  it("keeper: waits for the chain when the wall clock is minutes AHEAD of it, then covers in the window", async function () {
    const { f, keeper, cycle, operator } = await openDebt();
    const h1 = h!;
    const sent = await provider.getTransactionCount(operator);
    // The wall clock passes the payment deadline and the whole default window; the chain does not.
    h1.clock.set(cycle.defaultDeadline! + 10 * MINUTES);
    expect((await keeper.tick()).covered).to.have.length(0);
    expect(await provider.getTransactionCount(operator)).to.equal(sent); // not even attempted
    await time.increaseTo(cycle.paymentDeadline! + 1);
    await h1.indexer.syncToHead();
    const kept = await keeper.tick();
    expect(kept.covered.map((c) => c.debtor)).to.deep.equal([f.alice.address]);
    const receipt = (await provider.getTransactionReceipt(kept.covered[0].txHash))!;
    const coveredAt = (await provider.getBlock(receipt.blockNumber))!.timestamp;
    expect(coveredAt).to.be.greaterThan(cycle.paymentDeadline!).and.at.most(cycle.defaultDeadline!);
  });

  describe("V2 lifecycle", function () {
    async function setupV2() {
      const f = await loadFixture(chainFixture);
      h = await openCore(f);
      await f.vault.connect(f.alice).deposit({ value: 10_000n });
      await h.indexer.syncToHead();
      await h.syncClock();
      return { f, h, tasks: clearingTasks(h) };
    }

    async function validate(h: CoreHarness, claims: GuaranteeClaimsV2, id: string, score: number) {
      const requestHash = validationRequestHash(31337, claims.policy, id);
      await h.f.validationRegistry
        .connect(h.f.bob)
        .validationRequest(claims.policy.validator, claims.policy.agentId, "ipfs://job", requestHash);
      await h.f.validationRegistry
        .connect(h.f.validator)
        .validationResponse(
          requestHash,
          score,
          "ipfs://verdict",
          keccak256(toUtf8Bytes("verdict")),
          "quality",
        );
    }

    const stateOf = async (id: string) => (await h!.store.guarantees.getClearingGuarantee(id))!.state;

    it("a response mined before the deadline in chain time counts, though the wall clock says the deadline passed", async function () {
      const { f, tasks } = await setupV2();
      const deadline = h!.chainClock.nowSeconds() + 60;
      const passing = await issueGuarantee(h!, f.alice, f.bob.address, 100n, ETH, { deadline });
      const failing = await issueGuarantee(h!, f.alice, f.bob.address, 200n, ETH, { deadline });
      // The wall clock runs an hour ahead; the chain is still before the deadline.
      h!.clock.set(deadline + 60 * MINUTES);
      await validate(h!, passing.claims as GuaranteeClaimsV2, passing.id, 90);
      await validate(h!, failing.claims as GuaranteeClaimsV2, failing.id, 50);
      await h!.indexer.syncToHead();
      expect(h!.chainClock.nowSeconds()).to.be.at.most(deadline);
      const first = await tasks.lifecycle.tick();
      expect(first).to.deep.equal({ disputed: [failing.id], cancelled: [], finalized: [], voided: [] });
      expect([await stateOf(passing.id), await stateOf(failing.id)]).to.deep.equal([
        "PENDING_VALIDATION",
        "DISPUTED",
      ]);
      // The recipient could still remunerate the passing one: the Vault agrees the deadline is ahead.
      const args = remunerateCallArgs(toRemunerateArgs(passing.certificate, passing.payer));
      await f.vault.connect(f.bob).remunerate.staticCall(...args);

      // Once the chain is indexed past the deadline the verdicts are final.
      await time.increaseTo(deadline + 1);
      await h!.indexer.syncToHead();
      const final = await tasks.lifecycle.tick();
      expect(final).to.deep.equal({
        disputed: [],
        cancelled: [failing.id],
        finalized: [passing.id],
        voided: [],
      });
      expect(await stateOf(passing.id)).to.equal("FINALIZED_PAYABLE");
    });

    it("a response mined after the deadline in chain time does not count, though the wall clock says the deadline is ahead", async function () {
      const { f, tasks } = await setupV2();
      const deadline = h!.chainClock.nowSeconds() + 60;
      const late = await issueGuarantee(h!, f.alice, f.bob.address, 300n, ETH, { deadline });
      const wall = h!.clock.nowSeconds();
      // The chain runs minutes ahead: the validator answers (passing) after the deadline on chain.
      await time.increaseTo(deadline + 5 * MINUTES);
      await validate(h!, late.claims as GuaranteeClaimsV2, late.id, 90);
      const args = remunerateCallArgs(toRemunerateArgs(late.certificate, late.payer));
      await expect(f.vault.connect(f.bob).remunerate(...args)).to.be.reverted;
      await h!.indexer.syncToHead();
      expect(h!.clock.nowSeconds()).to.equal(wall);
      expect(wall).to.be.lessThan(deadline);
      expect(await tasks.lifecycle.tick()).to.deep.equal({
        disputed: [],
        cancelled: [late.id],
        finalized: [],
        voided: [],
      });
      expect(await stateOf(late.id)).to.equal("CANCELLED");
      expect((await h!.store.collateral.getCollateral(f.alice.address, ETH)).locked).to.equal(0n);
    });
  });

  describe("V2 issuance", function () {
    async function setupIssuance() {
      const f = await loadFixture(chainFixture);
      h = await openCore(f);
      await f.vault.connect(f.alice).deposit({ value: 10_000n });
      await h.context.timings.load(provider, f.vaultAddress); // the cap needs the Vault's timings
      return f;
    }

    async function refusal(run: () => Promise<unknown>): Promise<[number, string]> {
      try {
        await run();
      } catch (error) {
        if (error instanceof DomainError) return [toErrorResponse(error).status, error.code];
        throw error;
      }
      return [200, "issued"];
    }

    it("answers 500 chain_time_unavailable before Core has indexed a block (V1 is unaffected)", async function () {
      const f = await setupIssuance();
      // A minute after the deposit's block, which is what Core's chain time will be once indexed.
      const deadline = (await time.latest()) + 60;
      const v2 = () => issueGuarantee(h!, f.alice, f.bob.address, 1n, ETH, { deadline });
      expect(await refusal(v2)).to.deep.equal([500, "chain_time_unavailable"]);
      await h!.indexer.syncToHead();
      // The default deadline is Core's clock + 60 s: put that clock on the indexed chain time. After
      // loadFixture's revert Hardhat stamps the next block (the deposit) with the wall clock, which is as
      // far ahead of the snapshot as the fixture is old (minutes into a full run).
      await h!.syncClock();
      expect(await refusal(v2)).to.deep.equal([200, "issued"]);
      expect(await refusal(() => issueGuarantee(h!, f.alice, f.bob.address, 1n))).to.deep.equal([
        200,
        "issued",
      ]);
    });

    it("judges the deadline and its cap by chain time, whichever clock runs ahead", async function () {
      const f = await setupIssuance();
      await h!.indexer.syncToHead();
      const margin = h!.config.v2DeadlineMarginSeconds;
      const t = f.timings;
      const window = t.withdrawalGracePeriod - t.cycleLength - t.commitDelay - t.confirmationLag - margin - 1;
      const issue = (deadline: number) => () =>
        issueGuarantee(h!, f.alice, f.bob.address, 1n, ETH, { deadline });

      // Wall clock 10 minutes ahead of the chain: a deadline already passed by the wall clock is fine.
      let chainNow = h!.chainClock.nowSeconds();
      h!.clock.set(chainNow + 10 * MINUTES);
      expect(await refusal(issue(chainNow + 30))).to.deep.equal([200, "issued"]);
      expect(await refusal(issue(chainNow + window))).to.deep.equal([200, "issued"]);
      expect(await refusal(issue(chainNow + window + 1))).to.deep.equal([400, "validation_deadline_too_far"]);

      // Chain 10 minutes ahead of the wall clock: a deadline the wall clock finds ahead has passed.
      const wall = h!.clock.nowSeconds();
      await time.increaseTo(wall + 20 * MINUTES);
      await h!.indexer.syncToHead();
      chainNow = h!.chainClock.nowSeconds();
      expect(chainNow - wall).to.be.at.least(10 * MINUTES);
      expect(await refusal(issue(wall + 60))).to.deep.equal([400, "validation_deadline_passed"]);
      expect(await refusal(issue(chainNow + window))).to.deep.equal([200, "issued"]);
      expect(await refusal(issue(chainNow + window + 1))).to.deep.equal([400, "validation_deadline_too_far"]);
    });
  });
});
