/**
 * The devnet's shortest cycle runs the whole protocol (scripts/devnet/options.ts,
 * DEVNET_MIN_CYCLE_SECONDS): the contracts get exactly the timings the devnet deploys at that cycle and
 * Core exactly the settings the devnet gives it, and time moves at the devnet's cadence (a block and a
 * Core round every second). Every component is real (test/e2e/protocol-fixtures.ts).
 */
import { expect } from "chai";
import { keccak256, toUtf8Bytes } from "ethers";
import { ethers } from "hardhat";
import { remunerateCallArgs, toRemunerateArgs } from "../../sdk/certificate";
import type { GuaranteeClaimsV2 } from "../../sdk/claims";
import { validationRequestHash } from "../../sdk/ids";
import {
  DEVNET_MIN_CYCLE_SECONDS,
  DEVNET_MIN_V2_WINDOW_SECONDS,
  DEVNET_POLL_INTERVAL_MS,
  devnetOptionsFromEnv,
  devnetV2Window,
} from "../../scripts/devnet/options";
import { chainFixture } from "../operator/indexer-fixtures";
import { DEVNET_BOND_FLOOR_BPS } from "../../scripts/devnet/contracts";
import {
  CHAIN_ID,
  type Issued,
  type ProtocolStack,
  cycleOf,
  expectBooksAgree,
  proofOf,
  startProtocolStack,
} from "./protocol-fixtures";

/** What `SURETY_DEVNET_CYCLE_SECONDS=<minimum> npm run devnet` deploys and configures. */
const devnet = devnetOptionsFromEnv({ SURETY_DEVNET_CYCLE_SECONDS: String(DEVNET_MIN_CYCLE_SECONDS) });

function minimumCycleDeployment() {
  // As the devnet deploys: its timings, its bond floor and bonds.
  return chainFixture(devnet.timings, { bondFloorBps: DEVNET_BOND_FLOOR_BPS });
}

const coreSettings = {
  cycleLengthSeconds: devnet.timings.cycleLength,
  pollIntervalMs: DEVNET_POLL_INTERVAL_MS,
  v2DeadlineMarginSeconds: devnet.v2DeadlineMarginSeconds,
};

describe(`protocol end to end at the devnet's shortest cycle (${DEVNET_MIN_CYCLE_SECONDS} s)`, function () {
  let s: ProtocolStack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  async function start(): Promise<ProtocolStack> {
    s = await startProtocolStack({ fixture: minimumCycleDeployment, config: coreSettings });
    expect(s.f.timings).to.deep.equal(devnet.timings);
    return s;
  }

  /** One devnet second: a block one second later, then a Core round. */
  async function second(stack: ProtocolStack) {
    await stack.advance(1);
    return stack.round();
  }

  async function blockTime(txHash: string): Promise<number> {
    const receipt = (await ethers.provider.getTransactionReceipt(txHash))!;
    return (await ethers.provider.getBlock(receipt.blockNumber))!.timestamp;
  }

  it("takes a V2 guarantee to REMUNERATED (Core's 30 s default margin would leave under the devnet's minimum)", async function () {
    const stack = await start();
    const { f, w } = stack;
    const usd = f.usdAddress;
    const window = devnetV2Window(devnet.timings, devnet.v2DeadlineMarginSeconds);
    expect(window).to.be.at.least(DEVNET_MIN_V2_WINDOW_SECONDS);
    // With the public-chain margin the window would be 4 s: below the minimum a V2 validation needs.
    expect(devnetV2Window(devnet.timings, 30)).to.be.lessThan(DEVNET_MIN_V2_WINDOW_SECONDS);

    await f.vault.connect(w.alice).depositToken(usd, 1_000n);
    await stack.round();
    const latest = stack.core.context.chainClock.nowSeconds() + window;
    const tooFar = await stack.settleRaw(
      stack.claimsFor("alice", "bob", 400n, usd, { deadline: latest + 1 }),
    );
    expect([tooFar.status, tooFar.body.errorReason]).to.deep.equal([400, "validation_deadline_too_far"]);
    const g: Issued = await stack.settle("alice", "bob", 400n, usd, { policy: { deadline: latest } });
    expect(await stack.stateOf("alice", g.id)).to.equal("PENDING_VALIDATION");

    // bob asks for validation, the validator answers 90 ≥ 80 a second later, bob remunerates.
    const { policy } = g.claims as GuaranteeClaimsV2;
    const requestHash = validationRequestHash(CHAIN_ID, policy, g.id);
    await f.validationRegistry
      .connect(w.bob)
      .validationRequest(policy.validator, policy.agentId, "ipfs://job", requestHash);
    await second(stack);
    await f.validationRegistry
      .connect(w.validator)
      .validationResponse(requestHash, 90, "ipfs://verdict", keccak256(toUtf8Bytes("verdict")), policy.tag);
    await second(stack);
    expect(await stack.stateOf("alice", g.id)).to.equal("PENDING_VALIDATION");
    const args = remunerateCallArgs(toRemunerateArgs(g.certificate, g.payer));
    const paid = await f.vault.connect(w.bob).remunerate(...args);
    expect(await blockTime(paid.hash)).to.be.at.most(policy.deadline);
    await stack.round();
    expect(await stack.stateOf("alice", g.id)).to.equal("REMUNERATED");
    await expectBooksAgree(stack, "alice", usd, 0n);
    expect(await stack.balanceOf("alice", usd)).to.include({ deposited: "600", locked: "0" });
  });

  it("nets a validated V2 guarantee nobody remunerates before the payer's withdrawal can finalize; cancels a failed one", async function () {
    const stack = await start();
    const { f, w } = stack;
    const usd = f.usdAddress;
    await f.vault.connect(w.alice).depositToken(usd, 1_000n);
    await stack.round();
    const latest = stack.core.context.chainClock.nowSeconds() + devnetV2Window(devnet.timings);
    const passed = await stack.settle("alice", "bob", 600n, usd, { policy: { deadline: latest } });
    const failed = await stack.settle("alice", "bob", 300n, usd, { policy: { deadline: latest } });
    for (const [g, score] of [
      [passed, 90],
      [failed, 50],
    ] as const) {
      const { policy } = g.claims as GuaranteeClaimsV2;
      const requestHash = validationRequestHash(CHAIN_ID, policy, g.id);
      await f.validationRegistry
        .connect(w.bob)
        .validationRequest(policy.validator, policy.agentId, "ipfs://job", requestHash);
      await f.validationRegistry
        .connect(w.validator)
        .validationResponse(requestHash, score, "ipfs://v", keccak256(toUtf8Bytes(`v${score}`)), policy.tag);
    }
    // The payer asks for everything back at once; the recipient never remunerates.
    await f.vault.connect(w.alice).requestWithdrawal(usd, 1_000n);
    const readyAt = Number(await f.vault.withdrawalFinalizableAt(w.alice.address, usd));
    await stack.round();
    expect(await stack.stateOf("alice", failed.id)).to.equal("DISPUTED");

    // A block and a round a second: at its deadline the passed one is netted, the failed one cancelled,
    // and the netted one's obligation is on chain before the withdrawal can finalize.
    let obligedAt: number | null = null;
    while ((await ethers.provider.getBlock("latest"))!.timestamp < readyAt) {
      await second(stack);
      if (obligedAt === null && (await f.vault.obligationOf(w.alice.address, usd)) > 0n) {
        obligedAt = (await ethers.provider.getBlock("latest"))!.timestamp;
      }
    }
    expect(obligedAt, "obligation recorded before the withdrawal is ready").to.not.equal(null);
    expect(obligedAt!).to.be.greaterThan(latest).and.lessThan(readyAt);
    expect(await stack.stateOf("alice", failed.id)).to.equal("CANCELLED");
    expect(await stack.stateOf("alice", passed.id)).to.be.oneOf(["NETTED", "DEFAULT_REMUNERATED"]);
    const walletBefore = await f.usd.balanceOf(w.alice.address);
    await f.vault.connect(w.alice).finalizeWithdrawal(usd);
    // Only what backs nothing leaves: the 600 stay owed to bob (or already went to him, covered).
    expect((await f.usd.balanceOf(w.alice.address)) - walletBefore).to.equal(400n);
  });

  it("nets, commits within the commit delay, and covers an unpaid debit inside the default window", async function () {
    const stack = await start();
    const { f, w } = stack;
    const usd = f.usdAddress;
    const t = devnet.timings;
    await f.vault.connect(w.alice).depositToken(usd, 1_000n);
    await f.vault.connect(w.carol).depositToken(usd, 1_000n);
    await stack.round();
    // alice −300 and carol −100 to dave; alice will pay, carol will not.
    const g1 = await stack.settle("alice", "dave", 300n, usd);
    const g2 = await stack.settle("carol", "dave", 100n, usd);

    let seconds = 0;
    while ((await f.clearingHouse.lastCycleId()) === 0n) {
      expect(++seconds, "the first cycle commits within two cycle lengths").to.be.at.most(2 * t.cycleLength);
      await second(stack);
    }
    await stack.round();
    const cycle = (await stack.core.context.store.cycles.getCycle(1))!;
    expect(cycle.committedAt! - cycle.cutoff).to.be.at.most(t.commitDelay);
    expect(await stack.stateOf("alice", g1.id)).to.equal("NETTED");
    await f.clearingHouse.connect(w.alice).payNetDebit(1, usd);

    seconds = 0;
    while ((await stack.stateOf("carol", g2.id)) !== "DEFAULT_REMUNERATED") {
      expect(++seconds, "covered within the challenge, answer, payment and default windows").to.be.at.most(
        2 * t.challengeWindow + t.paymentWindow + t.defaultWindow,
      );
      await second(stack);
    }
    const view = await cycleOf(stack, 1);
    const carol = view.debtors.find((d) => d.debtor === w.carol.address)!;
    expect(carol).to.include({ status: "COVERED", covered: "100" });
    const covers = await f.clearingHouse.queryFilter(f.clearingHouse.filters.DefaultCovered());
    expect(covers).to.have.length(1);
    const coveredAt = (await covers[0].getBlock()).timestamp;
    const stored = (await stack.core.context.store.cycles.getCycle(1))!;
    expect(view.payment_deadline).to.equal(new Date(stored.paymentDeadline! * 1000).toISOString());
    expect(coveredAt).to.be.greaterThan(stored.paymentDeadline!);
    expect(coveredAt).to.be.at.most(stored.defaultDeadline!);
    expect(await stack.stateOf("alice", g1.id)).to.equal("SETTLED");

    // dave claims his credit with the proof Core serves.
    const [position] = (await proofOf(stack, 1, "dave")).positions;
    const [cycleId, asset, participant, credit, proof] = position.claim_net_credit_args!;
    await f.clearingHouse.connect(w.dave).claimNetCredit(cycleId, asset, participant, credit, proof);
    await stack.round();
    // Pull payment: the credit waits in dave's ClearingHouse payout until he withdraws it.
    expect(await f.clearingHouse.payoutOf(asset, w.dave.address)).to.equal(400n);
    const before = await f.usd.balanceOf(w.dave.address);
    await f.clearingHouse.connect(w.dave).withdrawPayout(asset, w.dave.address);
    expect((await f.usd.balanceOf(w.dave.address)) - before).to.equal(400n);
    expect((await proofOf(stack, 1, "dave")).positions[0]).to.include({ credit: "400", claimed: true });
    await expectBooksAgree(stack, "alice", usd, 0n);
    await expectBooksAgree(stack, "carol", usd, 0n);
  });
});
