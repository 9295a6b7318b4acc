/**
 * The on-chain bond floor, on Core's side (docs/clearing.md "Bond floor, enforced on chain";
 * operator/clearing/bond-floor.ts): on a real chain with `bondFloorBps` set, Core checks its bond before a
 * commit, sends nothing while it is short (the operator account's nonce does not move), logs one structured
 * error, shows it in `GET /core/health` and `/metrics`, and commits on the first tick after the bond is
 * topped up. Meanwhile issuance is refused (500 `commit_bond_short`, nothing locked): a guarantee issued
 * while no commit can go out would let its payer's withdrawal finalize before it is committed.
 */
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther, Wallet, ZeroAddress } from "ethers";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import pino from "pino";
import { createCoreApp } from "../../operator/api";
import { OperatorSender, type SendRequest, type SentTransaction } from "../../operator/chain/sender";
import { CommitBondGate, requiredBond } from "../../operator/clearing/bond-floor";
import { ClearingKeeper } from "../../operator/clearing/keeper";
import { ClearingScheduler, NEXT_CUTOFF_KEY } from "../../operator/clearing/scheduler";
import { ManualClock } from "../../operator/clock";
import { silentLogger } from "../../operator/logger";
import { commitBondRefusal, IssuanceError } from "../../operator/guarantees/issuance";
import { DEFAULT_SCOPES } from "../../operator/auth";
import { CORE_OPENAPI } from "../../operator/api/openapi-document";
import { signGuarantee } from "../../sdk/eip712";
import { toWireSignedGuarantee, type GuaranteeClaims } from "../../sdk/claims";
import { guaranteeId } from "../../sdk/ids";
import { OpenApiChecker } from "../openapi/validator";
import {
  advance,
  chainFixture,
  domainOf,
  type CoreHarness,
  issueGuarantee,
  OPERATOR_KEY,
  openCore,
  provider,
} from "./indexer-fixtures";

const ETH = ZeroAddress;
const ONE = parseEther("1");
const openapi = new OpenApiChecker(CORE_OPENAPI);
let nextReqId = 1_000_000n;

/** A sender that fails before signing (the node is unreachable): the plan stays PLANNED, as after a crash. */
class UnreachableSender extends OperatorSender {
  override send(_request: SendRequest): Promise<SentTransaction> {
    return Promise.reject(new Error("node unreachable"));
  }
}

function schedulerOf(h: CoreHarness, sender: OperatorSender): ClearingScheduler {
  return new ClearingScheduler({
    store: h.store,
    provider,
    sender,
    deployment: h.f.deployment,
    chainClock: h.chainClock,
    logger: silentLogger(),
    cycleLengthSeconds: h.f.timings.cycleLength,
    gasBudget: null,
    bondGate: h.context.commitBond,
  });
}

function senderOf(h: CoreHarness, Sender: typeof OperatorSender = OperatorSender): OperatorSender {
  return new Sender({
    privateKey: OPERATOR_KEY,
    provider,
    chainId: 31337n,
    store: h.store,
    logger: silentLogger(),
  });
}

describe("commit bond floor (Core checks its bond before committing)", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("requiredBond rounds up like the contract, and is zero with the floor off", () => {
    expect(requiredBond(3n * ONE, 5_000n)).to.equal((3n * ONE) / 2n);
    expect(requiredBond(3n, 3_334n)).to.equal(2n); // 1.0002 → 2
    expect(requiredBond(10_000n, 1n)).to.equal(1n);
    expect(requiredBond(1n, 1n)).to.equal(1n);
    expect(requiredBond(5n * ONE, 0n)).to.equal(0n);
    expect(requiredBond(0n, 10_000n)).to.equal(0n);
  });

  it("a gate with no scheduler is off; attaching it makes it ok until a check says otherwise", () => {
    const gate = new CommitBondGate({ logger: silentLogger(), clock: new ManualClock(1_000) });
    expect(gate.status()).to.deep.include({ state: "off", since: null });
    gate.attach();
    expect(gate.status()).to.deep.include({ state: "ok", since: 1_000 });
  });

  it("the issuance gate: refused while short (naming each short asset) or unknown, not while ok or off", () => {
    const gate = new CommitBondGate({ logger: silentLogger(), clock: new ManualClock(1_000) });
    expect(commitBondRefusal(gate.status())).to.equal(null); // off: nothing is committed anywhere
    gate.attach();
    expect(commitBondRefusal(gate.status())).to.equal(null);
    const short = commitBondRefusal({
      state: "short",
      floorBps: 5_000,
      cycleId: 4,
      assets: [
        { asset: ETH, bond: 1n, required: 3n },
        { asset: "0x00000000000000000000000000000000000000aa", bond: 9n, required: 9n },
      ],
      since: 1_000,
    });
    expect(short).to.be.instanceOf(IssuanceError);
    expect(short).to.include({ code: "commit_bond_short" });
    expect(short!.message)
      .to.include(`${ETH} bond 1 < required 3`)
      .and.not.include("0x00000000000000000000000000000000000000aa");
    expect(commitBondRefusal({ ...gate.status(), state: "unknown" })).to.include({
      code: "commit_bond_unknown",
    });
  });

  it("short bond: no commit is sent; logged once, in health and metrics; committed after the top-up", async function () {
    const f = await loadFixture(chainFixture);
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
        done();
      },
    });
    h = await openCore(f, { logger: pino({ level: "info" }, sink) });
    const operatorAddress = new Wallet(OPERATOR_KEY).address;
    const scheduler = schedulerOf(h, senderOf(h));
    const { app } = createCoreApp({
      ...h.context,
      logger: silentLogger(),
      services: { commitBond: h.context.commitBond },
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const health = async () => {
      const response = await fetch(`${base}/core/health`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const metrics = async () => (await fetch(`${base}/metrics`)).text();
    try {
      // Floor 50 %; the bond holds 1 ETH; alice owes 4 ETH in the cycle: 2 ETH needed.
      await f.clearingHouse.connect(f.admin).setBondFloor(5_000);
      await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
      await f.vault.connect(f.alice).deposit({ value: parseEther("10") });
      await h.indexer.syncToHead();
      await h.syncClock();
      const g = await issueGuarantee(h, f.alice, f.bob.address, 4n * ONE);
      expect((await health()).body.commit_bond).to.include({ state: "ok", cycle_id: null });
      expect(await metrics()).to.include("surety_commit_bond_short 0");

      expect((await scheduler.tick()).action).to.equal("waiting");
      await advance(h, f.timings.cycleLength);
      const nonce = await provider.getTransactionCount(operatorAddress);
      expect(await scheduler.tick()).to.deep.equal({ action: "bond_short", cycleId: 1 });
      expect(await scheduler.tick()).to.deep.equal({ action: "bond_short", cycleId: 1 });
      // Nothing was sent, nothing planned: the guarantee waits in the pool.
      expect(await provider.getTransactionCount(operatorAddress)).to.equal(nonce);
      expect(await f.clearingHouse.lastCycleId()).to.equal(0n);
      expect(await h.store.cycles.getCycle(1)).to.equal(null);
      expect((await h.store.guarantees.getClearingGuarantee(g.id))!).to.include({
        state: "FINALIZED_PAYABLE",
        cycleId: null,
      });
      // One structured error for the two ticks.
      const errors = lines.filter((l) => l.event === "commit_bond_below_floor");
      expect(errors).to.have.length(1);
      expect(errors[0]).to.deep.include({
        level: 50,
        cycle_id: 1,
        floor_bps: 5_000,
        short: [
          {
            asset: ETH,
            bond: ONE.toString(),
            required: (2n * ONE).toString(),
            missing: ONE.toString(),
          },
        ],
      });
      const held = await health();
      expect(held.status).to.equal(200); // informational: reads still work (issuance is refused: below)
      expect(held.body.commit_bond).to.deep.include({
        state: "short",
        floor_bps: 5_000,
        cycle_id: 1,
        assets: [{ asset: ETH, bond: ONE.toString(), required: (2n * ONE).toString(), short: true }],
      });
      expect((held.body.commit_bond as { since: unknown }).since).to.be.a("string");
      const scraped = await metrics();
      expect(scraped).to.include("surety_commit_bond_short 1");
      expect(scraped).to.include(`surety_commit_bond_required{asset="${ETH}"} ${Number(2n * ONE)}`);

      // The top-up: the next tick commits.
      await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
      expect(await scheduler.tick()).to.include({ action: "committed", cycleId: 1, guarantees: 1 });
      expect(await f.clearingHouse.lastCycleId()).to.equal(1n);
      expect(lines.filter((l) => l.event === "commit_bond_restored")).to.have.length(1);
      expect((await health()).body.commit_bond).to.deep.include({ state: "ok", cycle_id: 1 });
      expect(await metrics()).to.include("surety_commit_bond_short 0");
      expect(lines.filter((l) => l.event === "commit_bond_below_floor")).to.have.length(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("a stored plan re-sent after a restart is held back while the bond is short, and stays planned", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const operatorAddress = new Wallet(OPERATOR_KEY).address;
    await f.clearingHouse.connect(f.admin).setBondFloor(5_000);
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 2n * ONE });
    await f.vault.connect(f.alice).deposit({ value: parseEther("10") });
    await h.indexer.syncToHead();
    await h.syncClock();
    const g = await issueGuarantee(h, f.alice, f.bob.address, 4n * ONE);
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));
    // Planned while the bond covered it (2 ETH for 4 ETH at 50 %), then the node was unreachable.
    const failed = await schedulerOf(h, senderOf(h, UnreachableSender))
      .tick()
      .then(
        () => null,
        (error: Error) => error.message,
      );
    expect(failed).to.equal("node unreachable");
    expect((await h.store.cycles.getCycle(1))!.state).to.equal("PLANNED");
    // Meanwhile the admin withdraws half the bond (allowed: no cycle committed yet).
    await f.clearingHouse.connect(f.admin).withdrawBond(ETH, ONE, f.admin.address);
    const nonce = await provider.getTransactionCount(operatorAddress);
    const restarted = schedulerOf(h, senderOf(h));
    expect(await restarted.tick()).to.deep.equal({ action: "bond_short", cycleId: 1 });
    expect(await provider.getTransactionCount(operatorAddress)).to.equal(nonce);
    expect((await h.store.cycles.getCycle(1))!.state).to.equal("PLANNED"); // kept, with its guarantees
    // Its guarantee stays reserved for it (the cycle's key range; cycle_id is written at indexing).
    expect((await h.store.cycles.getCycle(1))!.guaranteeIds.map((id) => id.toLowerCase())).to.deep.equal([
      g.id.toLowerCase(),
    ]);
    expect((await h.store.netting.listCycleGuaranteeIds(1)).map((id) => id.toLowerCase())).to.deep.equal([
      g.id.toLowerCase(),
    ]);
    expect(await h.store.netting.hasUnreservedPayable()).to.equal(false);
    expect(h.context.commitBond.status()).to.deep.include({ state: "short", cycleId: 1 });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
    expect(await restarted.tick()).to.include({ action: "committed", cycleId: 1, guarantees: 1 });
    expect(await f.clearingHouse.lastCycleId()).to.equal(1n);
    await h.indexer.syncToHead();
    expect((await h.store.guarantees.getClearingGuarantee(g.id))!.cycleId).to.equal(1);
  });

  it("issuance answers 500 commit_bond_short while commits are held back, locks nothing, and resumes after the top-up", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const harness = h;
    const scheduler = schedulerOf(harness, senderOf(harness));
    const { app } = createCoreApp({
      ...harness.context,
      logger: silentLogger(),
      services: { commitBond: harness.context.commitBond },
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { token } = await harness.context.accessTokens.issue(f.bob.address, DEFAULT_SCOPES);
    /** POST /core/guarantees of a V1 guarantee of alice to bob, checked against the OpenAPI document. */
    const post = async (amount: bigint) => {
      const claims: GuaranteeClaims = {
        version: 1,
        user: f.alice.address,
        recipient: f.bob.address,
        reqId: nextReqId++,
        amount,
        asset: ETH,
        timestamp: harness.clock.nowSeconds(),
      };
      const signature = await signGuarantee(f.alice as unknown as Wallet, domainOf(f), claims, "eip712");
      const response = await fetch(`${base}/core/guarantees`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify(
          toWireSignedGuarantee({ claims, signature: signature.toLowerCase(), scheme: "eip712" }),
        ),
      });
      const result = {
        status: response.status,
        headers: response.headers,
        body: (await response.json()) as Record<string, unknown>,
      };
      openapi.check("POST", "/core/guarantees", result);
      const id = guaranteeId({ chainId: 31337n, vault: f.vaultAddress }, f.alice.address, claims.reqId);
      return { ...result, id };
    };
    const locked = async () => (await harness.store.collateral.getCollateral(f.alice.address, ETH)).locked;
    try {
      // Floor 50 %; the bond holds 1 ETH; alice owes 4 ETH in the first cycle: 2 ETH needed.
      await f.clearingHouse.connect(f.admin).setBondFloor(5_000);
      await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
      await f.vault.connect(f.alice).deposit({ value: parseEther("10") });
      await harness.indexer.syncToHead();
      await harness.syncClock();
      expect((await post(4n * ONE)).status).to.equal(200);
      const lockedBefore = await locked();
      expect(lockedBefore).to.equal(4n * ONE);

      expect((await scheduler.tick()).action).to.equal("waiting");
      await advance(harness, f.timings.cycleLength);
      expect(await scheduler.tick()).to.deep.equal({ action: "bond_short", cycleId: 1 });
      const refused = await post(ONE);
      expect(refused.status).to.equal(500);
      expect(refused.body.code).to.equal("commit_bond_short");
      expect(refused.body.error).to.include("operator bond is below the ClearingHouse floor");
      expect(refused.body.error).to.include(`${ETH} bond ${ONE} < required ${2n * ONE}`);
      // Nothing locked, nothing stored for the refused guarantee.
      expect(await locked()).to.equal(lockedBefore);
      expect(await harness.store.guarantees.getGuarantee(refused.id)).to.equal(null);

      // The top-up: the next tick commits, and issuance resumes.
      await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
      expect(await scheduler.tick()).to.include({ action: "committed", cycleId: 1, guarantees: 1 });
      expect(harness.context.commitBond.status().state).to.equal("ok");
      expect((await post(ONE)).status).to.equal(200);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
  it("an earlier cycle still counted: the gate adds bondAtRisk; the keeper releases it once settled, then commits go", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const harness = h;
    const operatorAddress = new Wallet(OPERATOR_KEY).address;
    const scheduler = schedulerOf(harness, senderOf(harness));
    let wanted = false;
    const keeper = new ClearingKeeper({
      store: harness.store,
      sender: senderOf(harness),
      deployment: f.deployment,
      chainClock: harness.chainClock,
      logger: silentLogger(),
      claimCredits: false,
      releaseRisk: () => wanted,
    });
    // Full floor; the bond holds 4 ETH; cycle 1 is alice's 4 ETH to bob.
    await f.clearingHouse.connect(f.admin).setBondFloor(10_000);
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 4n * ONE });
    await f.vault.connect(f.alice).deposit({ value: parseEther("10") });
    await harness.indexer.syncToHead();
    await harness.syncClock();
    await issueGuarantee(harness, f.alice, f.bob.address, 4n * ONE);
    expect((await scheduler.tick()).action).to.equal("waiting");
    await advance(harness, f.timings.cycleLength);
    expect(await scheduler.tick()).to.include({ action: "committed", cycleId: 1 });
    expect(await f.clearingHouse.bondAtRisk(ETH)).to.equal(4n * ONE);
    // Cycle 2 (1 ETH) needs 5 ETH while cycle 1 is open: held back, naming the whole requirement.
    await advance(harness, 1);
    await issueGuarantee(harness, f.alice, f.bob.address, ONE);
    await advance(harness, f.timings.cycleLength);
    expect(await scheduler.tick()).to.deep.equal({ action: "bond_short", cycleId: 2 });
    expect(harness.context.commitBond.status().assets).to.deep.equal([
      { asset: ETH, bond: 4n * ONE, required: 5n * ONE },
    ]);
    // Nothing settled yet: the keeper's estimate reverts NoSettledRisk and nothing is sent.
    wanted = true;
    const nonce = await provider.getTransactionCount(operatorAddress);
    expect((await keeper.tick()).riskReleased).to.equal(null);
    expect(await provider.getTransactionCount(operatorAddress)).to.equal(nonce);
    // alice pays cycle 1: finalized. Not wanted: not released; wanted: released, and cycle 2 commits.
    await f.clearingHouse.connect(f.alice).payNetDebit(1, ETH, { value: 4n * ONE });
    await harness.indexer.syncToHead();
    wanted = false;
    expect((await keeper.tick()).riskReleased).to.equal(null);
    wanted = true;
    expect((await keeper.tick()).riskReleased).to.match(/^0x[0-9a-f]{64}$/);
    expect(await f.clearingHouse.bondAtRisk(ETH)).to.equal(0n);
    expect(await scheduler.tick()).to.include({ action: "committed", cycleId: 2 });
    expect(await f.clearingHouse.bondAtRisk(ETH)).to.equal(ONE);
  });
});
