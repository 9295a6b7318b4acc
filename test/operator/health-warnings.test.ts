/**
 * Health that warns (operator/health.ts, docs/monitoring.md): each warning provoked for real and seen in
 * `GET /core/health` (HTTP 200, the spec's three fields unchanged, `checks` and `warnings` saying which and
 * why) and in `/metrics`. Webhooks against a refused connection on a Core over HTTP; the clearing, cover,
 * bond and indexer warnings on the real contracts (Hardhat), Core's own scheduler, keeper, bond monitor and
 * indexer driven by `tick()`, time moved with the network helpers and manual clocks. Every server is stopped.
 */
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { keccak256, parseEther, toUtf8Bytes, ZeroAddress } from "ethers";
import type { GuaranteeClaimsV2 } from "../../sdk/claims";
import { validationRequestHash } from "../../sdk/ids";
import type { CertifierStatus } from "../../operator/clearing/answer-certifier";
import { OperatorKeyWatch } from "../../operator/clearing/key-watch";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import pino from "pino";
import { createCoreApp } from "../../operator/api";
import { ChainIndexer } from "../../operator/chain/indexer";
import { BondMonitor } from "../../operator/clearing/bond-monitor";
import { ClearingScheduler, NEXT_CUTOFF_KEY } from "../../operator/clearing/scheduler";
import type { ManualClock } from "../../operator/clock";
import { silentLogger } from "../../operator/logger";
import { CORE_OPENAPI } from "../../operator/api/openapi-document";
import { HEALTH_CHECKS } from "../../operator/health";
import { createWebhookDispatcher } from "../../operator/webhooks";
import { OpenApiChecker } from "../openapi/validator";
import { issue, payer, recipient, signedBody, v1Claims } from "./guarantee-fixtures";
import { signIn, startTestCore, T0, type TestCore } from "./helpers";
import {
  advance,
  chainFixture,
  clearingTasks,
  type CoreHarness,
  issueGuarantee,
  mine,
  openCore,
  provider,
} from "./indexer-fixtures";

const ETH = ZeroAddress;
const ONE = parseEther("1");
const openapi = new OpenApiChecker(CORE_OPENAPI);

interface HealthBody {
  status: string;
  db: string;
  chain_rpc: string;
  checks: Record<string, string>;
  warnings: { check: string; subject: string | null; reason: string; value: number; threshold: number }[];
}

/** A loopback port nobody listens on: connecting to it is refused. */
async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function readHealth(base: string): Promise<{ status: number; body: HealthBody }> {
  const response = await fetch(`${base}/core/health`);
  const body = (await response.json()) as HealthBody;
  openapi.check("GET", "/core/health", { status: response.status, body });
  return { status: response.status, body };
}

const readMetrics = async (base: string) => (await fetch(`${base}/metrics`)).text();

/** The checks that warn, and the spec's three fields unchanged (HTTP 200: a warning is not a failure). */
function expectWarning(health: { status: number; body: HealthBody }, warning: string[]) {
  expect(health.status).to.equal(200);
  expect(health.body).to.include({ status: "ok", db: "ok", chain_rpc: "ok" });
  const warned = HEALTH_CHECKS.filter((c) => health.body.checks[c] === "warn");
  expect(warned, JSON.stringify(health.body.warnings)).to.deep.equal(warning);
  expect([...new Set(health.body.warnings.map((w) => w.check))].sort()).to.deep.equal([...warning].sort());
}

describe("health warnings: webhook backlog (Core over HTTP, a receiver that refuses connections)", function () {
  let t: TestCore | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it("warns once the oldest pending delivery is older than the threshold; clears when it is gone", async function () {
    const port = await refusedPort();
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
        done();
      },
    });
    t = await startTestCore(
      {
        backgroundTasks: false,
        healthWebhookBacklogSeconds: 120,
        webhooks: JSON.stringify([
          {
            id: "refused-hook",
            url: `http://127.0.0.1:${port}/hooks`,
            secret: "whsec_refused_receiver_0123456789",
            event_types: ["*"],
          },
        ]),
      },
      { logger: pino({ level: "info" }, sink) },
    );
    const { core, clock } = t;
    const store = core.context.store;
    await store.collateral.creditDeposit(payer.address, ETH, 10_000n, T0);
    const token = (await signIn(core.url, recipient)).access_token;
    const dispatcher = createWebhookDispatcher(core.context, { jitter: () => 0 });
    for (const reqId of [1n, 2n, 3n]) {
      expect((await issue(core.url, token, await signedBody(v1Claims({ reqId })))).status).to.equal(200);
    }
    expect(await dispatcher.tick()).to.include({ attempted: 3, retrying: 3 });

    // Pending, but young: ok.
    let health = await readHealth(core.url);
    expectWarning(health, []);
    expect(health.body.checks).to.include({
      webhook_backlog: "ok",
      indexer_lag: "off",
      clearing_cutoff: "off",
    });
    let metrics = await readMetrics(core.url);
    expect(metrics).to.include('surety_webhook_backlog_pending{subscription="refused-hook"} 3');
    expect(metrics).to.include('surety_webhook_backlog_oldest_seconds{subscription="refused-hook"} 0');

    // 121 s later (retries failing meanwhile), the oldest has waited longer than the threshold.
    (clock as ManualClock).advance(30);
    expect(await dispatcher.tick()).to.include({ retrying: 3 });
    (clock as ManualClock).advance(91);
    health = await readHealth(core.url);
    expectWarning(health, ["webhook_backlog"]);
    const [warning] = health.body.warnings;
    expect(warning).to.include({
      check: "webhook_backlog",
      subject: "refused-hook",
      value: 121,
      threshold: 120,
    });
    expect(warning.reason).to.include("3 webhook deliveries pending, the oldest for 121 s");
    expect(warning.reason).to.include("network error: ECONNREFUSED");
    metrics = await readMetrics(core.url);
    expect(metrics).to.include('surety_webhook_backlog_oldest_seconds{subscription="refused-hook"} 121');
    expect(metrics).to.include('surety_health_warnings{check="webhook_backlog"} 1');
    // Logged once when it appears, however often health is read.
    await readHealth(core.url);
    expect(lines.filter((l) => l.event === "health_warning")).to.have.length(1);
    expect(lines.find((l) => l.event === "health_warning")).to.include({
      level: 40,
      check: "webhook_backlog",
      subject: "refused-hook",
    });

    // The subscription removed (its deliveries with it): the warning clears, and says so once.
    await store.webhooks.deleteWebhookSubscription("refused-hook");
    health = await readHealth(core.url);
    expectWarning(health, []);
    expect(lines.filter((l) => l.event === "health_warning_cleared")).to.have.length(1);
  });
});

describe("health warnings on the real contracts: clearing, covers, bond, indexer", function () {
  let h: CoreHarness | undefined;
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    await h?.close();
    close = undefined;
    h = undefined;
  });

  /** Core's HTTP app on the harness's store, clocks, timings (read from the Vault) and verdicts. */
  async function serve(harness: CoreHarness): Promise<string> {
    await harness.context.timings.load(provider, harness.f.deployment.vault);
    const { app } = createCoreApp({
      ...harness.context,
      logger: silentLogger(),
      services: {
        timings: harness.context.timings,
        commitBond: harness.context.commitBond,
        chainSync: harness.context.chainSync,
        health: harness.context.health,
        metrics: harness.context.metrics,
      },
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    close = () => new Promise<void>((resolve) => server.close(() => resolve()));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it("clearing_cutoff and clearing_commit: a cutoff nobody closed, then a schedule that slipped", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const base = await serve(h);
    const { scheduler } = clearingTasks(h);
    await h.indexer.syncToHead();
    await h.syncClock();
    expect((await scheduler.tick()).action).to.equal("waiting");
    let health = await readHealth(base);
    expectWarning(health, []);
    expect(health.body.checks).to.include({ clearing_cutoff: "ok", clearing_commit: "ok" });

    // The scheduler stops: 21 s of chain time past the cutoff, nothing closed.
    await advance(h, f.timings.cycleLength + 20);
    const now = h.chainClock.nowSeconds();
    const cutoff = Number(await h.store.operatorState.getOperatorState(NEXT_CUTOFF_KEY));
    const overdue = now - cutoff;
    expect(overdue).to.be.above(10);
    health = await readHealth(base);
    // commitDelay 30: the commit of the cycle closing at the cutoff is due in 30 − overdue < 15 (half of it).
    expectWarning(health, ["clearing_cutoff", "clearing_commit"]);
    const byCheck = Object.fromEntries(health.body.warnings.map((w) => [w.check, w]));
    expect(byCheck.clearing_cutoff).to.include({ value: overdue, threshold: 10 });
    expect(byCheck.clearing_cutoff.reason).to.include("overdue: no cycle was closed");
    expect(byCheck.clearing_commit).to.include({ value: f.timings.commitDelay - overdue, threshold: 15 });
    const metrics = await readMetrics(base);
    expect(metrics).to.include(`surety_clearing_cutoff_lateness_seconds ${overdue}`);
    expect(metrics).to.include(`surety_clearing_commit_slack_seconds ${f.timings.commitDelay - overdue}`);

    // The scheduler runs again (nothing payable: the window closes empty): both clear.
    expect((await scheduler.tick()).action).to.equal("empty");
    expectWarning(await readHealth(base), []);

    // A cutoff pushed beyond one cycle length (as partial commits did, issue 26 item 1).
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(now + f.timings.cycleLength + 12));
    health = await readHealth(base);
    expectWarning(health, ["clearing_cutoff"]);
    expect(health.body.warnings[0].reason).to.include("the cutoff schedule slipped");
    expect(health.body.warnings[0].value).to.equal(12 - (h.chainClock.nowSeconds() - now));
  });

  it("cover_slack and bond_margin: an unpaid debt nobody covers, a bond just above the floor", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f, { config: { bondFloors: `${ETH}:${2n * ONE}` } });
    const base = await serve(h);
    const logger = silentLogger();
    const { sender, keeper } = clearingTasks(h);
    const scheduler = new ClearingScheduler({
      store: h.store,
      provider,
      sender,
      deployment: h.f.deployment,
      chainClock: h.chainClock,
      logger,
      cycleLengthSeconds: f.timings.cycleLength,
      gasBudget: null,
      bondGate: h.context.commitBond,
    });
    const bonds = new BondMonitor({
      provider,
      clearingHouse: f.deployment.clearingHouse,
      floors: h.config.bondFloors,
      assets: async () => [],
      logger,
    });
    h.context.metrics.observeBond(bonds);
    // Floor 50 % of a cycle's debit; the bond holds 1 ETH; alice owes 1.8 ETH: 0.9 needed, 11 % margin.
    await f.clearingHouse.connect(f.admin).setBondFloor(5_000);
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
    await f.vault.connect(f.alice).deposit({ value: parseEther("10") });
    await h.indexer.syncToHead();
    await h.syncClock();
    await issueGuarantee(h, f.alice, f.bob.address, (18n * ONE) / 10n);
    expect((await scheduler.tick()).action).to.equal("waiting");
    await advance(h, f.timings.cycleLength);
    expect(await scheduler.tick()).to.include({ action: "committed", cycleId: 1 });
    await h.indexer.syncToHead();
    await bonds.tick();

    let health = await readHealth(base);
    expectWarning(health, ["bond_margin"]);
    const margin = health.body.warnings.filter((w) => w.check === "bond_margin");
    expect(margin.map((w) => [w.subject, w.value, w.threshold])).to.deep.equal([
      [ETH, 1111, 2000], // (1 − 0.9) / 0.9 of the ClearingHouse floor
      [ETH, Number(ONE), Number(2n * ONE)], // below SURETY_BOND_FLOORS
    ]);
    let metrics = await readMetrics(base);
    expect(metrics).to.include(`surety_commit_bond_margin_ratio{asset="${ETH}"} 0.111111`);
    expect(metrics).to.include(`surety_operator_bond_floor{asset="${ETH}"} ${Number(2n * ONE)}`);
    expect(metrics).to.include("surety_keeper_debts_awaiting_cover 0");

    // Topped up to 2 ETH: no bond warning. Alice does not pay; the keeper is not run.
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
    await bonds.tick();
    await advance(h, f.timings.cycleLength); // the scheduler's next check reads the new bond
    expect((await scheduler.tick()).action).to.be.oneOf(["empty", "waiting"]);
    const cycle = (await h.store.cycles.getCycle(1))!;
    const sinceDeadline = 5;
    await advance(h, cycle.paymentDeadline! + sinceDeadline - h.chainClock.nowSeconds());
    await scheduler.tick(); // the scheduler keeps its cutoffs (nothing payable: empty windows)
    health = await readHealth(base);
    expect(health.body.checks).to.include({ cover_slack: "ok" }); // 55 s left of the 60 s window
    const late = f.timings.defaultWindow / 2 + 1 - sinceDeadline; // past half the default window
    await advance(h, late);
    await scheduler.tick();
    const slack = cycle.defaultDeadline! - h.chainClock.nowSeconds();
    expect(slack).to.be.below(f.timings.defaultWindow / 2);
    health = await readHealth(base);
    expectWarning(health, ["cover_slack"]);
    const [cover] = health.body.warnings;
    expect(cover).to.include({ check: "cover_slack", value: slack, threshold: f.timings.defaultWindow / 2 });
    expect(cover.subject).to.equal(`cycle 1 debtor ${f.alice.address} (${ETH})`);
    metrics = await readMetrics(base);
    expect(metrics).to.include(`surety_keeper_cover_slack_seconds ${slack}`);
    expect(metrics).to.include("surety_keeper_debts_awaiting_cover 1");

    // The keeper covers it: the warning clears.
    await keeper.tick();
    await mine(1);
    await h.indexer.syncToHead();
    expect((await h.store.cycles.getCycleDebt(1, ETH, f.alice.address))?.status).to.equal("COVERED");
    expectWarning(await readHealth(base), []);
  });

  it("operator_key: the keeper's check of Core's key, every round with no dispute open; counted in /metrics", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const base = await serve(h);
    await h.indexer.syncToHead();
    let status: CertifierStatus = { kind: "vault_key_not_set" };
    const watch = new OperatorKeyWatch({
      certifier: { status: async () => status },
      store: h.store,
      clock: h.clock,
      logger: silentLogger(),
    });
    // No check published yet (no keeper in this process's background work): off.
    let health = await readHealth(base);
    expectWarning(health, []);
    expect(health.body.checks).to.include({ operator_key: "off" });
    expect(await readMetrics(base)).to.not.match(/^surety_operator_key_problem\{/m);
    status = { kind: "ready", recertify: (answer) => answer };
    await watch.tick();
    health = await readHealth(base);
    expect(health.body.checks).to.include({ operator_key: "ok" });
    expect(await readMetrics(base)).to.include("surety_operator_key_problems_total 0");

    // A rotation executed before Core was restarted with the new secret: no dispute is open, health warns.
    status = { kind: "other_key", vaultKey: "0xaa", coreKey: "0xbb" };
    await watch.tick();
    h.clock.advance(7);
    await watch.tick();
    health = await readHealth(base);
    expectWarning(health, ["operator_key"]);
    expect(health.body.warnings[0]).to.include({ check: "operator_key", value: 7, threshold: 0 });
    expect(health.body.warnings[0].reason).to.include("is not the Vault's operator key 0xaa");
    let metrics = await readMetrics(base);
    expect(metrics).to.include("surety_operator_key_problems_total 2");
    expect(metrics).to.include('surety_operator_key_problem{state="other_key"} 1');
    expect(metrics).to.include('surety_health_warnings{check="operator_key"} 1');

    // Another kind of problem starts its own clock; the count goes on.
    status = { kind: "unreadable", reason: "connection refused" };
    await watch.tick();
    health = await readHealth(base);
    expect(health.body.warnings[0]).to.include({ value: 0 });
    expect(health.body.warnings[0].reason).to.include("cannot read the Vault's operator key");

    // Fixed: clears; the counter keeps its count.
    status = { kind: "ready", recertify: (answer) => answer };
    await watch.tick();
    expectWarning(await readHealth(base), []);
    metrics = await readMetrics(base);
    expect(metrics).to.include("surety_operator_key_problems_total 3");
    expect(metrics).to.include('surety_operator_key_problem{state="ready"} 0');
  });

  it("verdict_pins: a guarantee payable on its verdict waits for its pin's indexing longer than a cycle", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const base = await serve(h);
    const tasks = clearingTasks(h);
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
      .validationResponse(
        requestHash,
        90,
        "ipfs://verdict",
        keccak256(toUtf8Bytes("verdict")),
        claims.policy.tag,
      );
    await advance(h, 61);
    await mine(1);
    await h.indexer.syncToHead();
    expect((await tasks.lifecycle.tick()).finalized).to.deep.equal([g.id]);
    let health = await readHealth(base);
    expect(health.body.checks).to.include({ verdict_pins: "ok" });
    expect(await readMetrics(base)).to.include("surety_verdict_pins_waiting 1");

    // No pin lands for longer than a cycle (60 s, the Vault's cycle length): the guarantee is in no cycle.
    h.clock.advance(f.timings.cycleLength + 1);
    health = await readHealth(base);
    expectWarning(health, ["verdict_pins"]);
    expect(health.body.warnings[0]).to.include({
      value: f.timings.cycleLength + 1,
      threshold: f.timings.cycleLength,
    });
    expect(health.body.warnings[0].reason).to.include("1 V2 guarantee(s) payable on their verdict");
    expect(await readMetrics(base)).to.include(
      `surety_verdict_pin_oldest_wait_seconds ${f.timings.cycleLength + 1}`,
    );

    // Pinned and indexed: clears.
    expect((await tasks.pinner.tick()).sent).to.deep.equal([g.id]);
    await h.indexer.syncToHead();
    expectWarning(await readHealth(base), []);
    expect(await readMetrics(base)).to.include("surety_verdict_pins_waiting 0");
  });

  it("indexer_lag: behind the confirmed head by more than the warning bound, below the refusal bound", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const harness = h;
    const base = await serve(h);
    const indexer = new ChainIndexer({
      store: h.store,
      provider,
      deployment: f.deployment,
      clock: h.clock,
      logger: silentLogger(),
      confirmations: 0,
      maxBlocksPerTick: 5,
      onCursor: (cursor) => harness.chainClock.observe(cursor),
      syncStatus: h.context.chainSync,
    });
    await indexer.syncToHead();
    expectWarning(await readHealth(base), []);
    await mine(40);
    await indexer.tick(); // 5 blocks of 40: 35 behind (warn above 32, refuse above 64)
    const health = await readHealth(base);
    expectWarning(health, ["indexer_lag"]);
    expect(health.body.warnings[0]).to.include({ check: "indexer_lag", value: 35, threshold: 32 });
    expect(health.body.warnings[0].reason).to.include("issuance stops above 64");
    expect(await readMetrics(base)).to.include("surety_indexer_lag_blocks 35");
    await indexer.syncToHead();
    expectWarning(await readHealth(base), []);
  });
});
