/**
 * Core follows the Vault's timelocked timings (docs/operator-async.md, "Event → state"): a scheduled change
 * (`TimingsScheduled`) changes nothing in Core but is logged as an error for the operator, while the admin
 * can still cancel it; the executed change (`TimingsUpdated`, a second `setTimings` after the delay) becomes
 * Core's timings (V2 deadline cap, public params). Real chain, real SQLite store, real indexer.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { Writable } from "node:stream";
import pino from "pino";
import { ChainIndexer } from "../../operator/chain/indexer";
import {
  maxV2ValidationDeadline,
  parseScheduledTimings,
  ProtocolTimings,
  strictestV2ValidationDeadline,
} from "../../operator/chain/timings";
import { silentLogger } from "../../operator/logger";
import { timingsOperation } from "../contracts/helpers";
import { chainFixture, type CoreHarness, openCore, provider } from "./indexer-fixtures";

describe("Core follows the Vault's timelocked timings", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("a scheduled change is logged as an error and changes nothing; the executed one becomes Core's timings", async function () {
    const f = await loadFixture(chainFixture);
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: "info" }, sink);
    h = await openCore(f, { logger });
    const timings = new ProtocolTimings();
    const loaded = await timings.load(provider, f.vaultAddress);
    const indexer = new ChainIndexer({
      store: h.store,
      provider,
      deployment: f.deployment,
      clock: h.clock,
      logger,
      confirmations: 0,
      maxBlocksPerTick: 1_000,
      onTimings: (t) => timings.set(t),
    });
    await indexer.syncToHead();

    // A thief with CONFIG_ROLE shrinks the challenge window to one second: scheduled only.
    const shorter = { ...loaded, challengeWindow: 1 };
    const receipt = await (await f.vault.connect(f.admin).setTimings(shorter)).wait();
    const readyAt = (await time.latest()) + Number(await f.vault.timelockDelay());
    await indexer.syncToHead();
    expect(timings.get()).to.deep.equal(loaded);
    const alerts = lines.filter((l) => l.event === "timings_scheduled");
    expect(alerts).to.have.length(1);
    expect(alerts[0]).to.deep.include({
      level: 50,
      operation: timingsOperation(shorter),
      ready_at: readyAt,
      timings: shorter,
      tx_hash: receipt!.hash.toLowerCase(),
    });

    // The delay passes and the change executes: Core takes it over from the event.
    await time.increaseTo(readyAt);
    await (await f.vault.connect(f.admin).setTimings(shorter)).wait();
    await indexer.syncToHead();
    expect(timings.get()).to.deep.equal(shorter);
    expect(lines.filter((l) => l.event === "timings_scheduled")).to.have.length(1);
  });
});

describe("Core caps V2 deadlines under scheduled timings too", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const MARGIN = 30;

  it("a scheduled shorter grace period tightens the cap until it is cancelled; executed, it is the timings in force", async function () {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const timings = new ProtocolTimings();
    const loaded = await timings.load(provider, f.vaultAddress);
    const indexer = new ChainIndexer({
      store: h.store,
      provider,
      deployment: f.deployment,
      clock: h.clock,
      logger: silentLogger(),
      confirmations: 0,
      maxBlocksPerTick: 1_000,
      onTimings: (t) => timings.set(t),
      onTimingsScheduled: (change) => timings.schedule(change),
      onOperationCancelled: (operation) => timings.cancel(operation),
    });
    await indexer.syncToHead();
    const now = await time.latest();
    const capNow = () => strictestV2ValidationDeadline(timings.bounding(), now, MARGIN);
    expect(capNow()).to.equal(maxV2ValidationDeadline(loaded, now, MARGIN));

    // 20 s less grace: V2 guarantees issued from now on must hold under it once it executes.
    const shorter = { ...loaded, withdrawalGracePeriod: loaded.withdrawalGracePeriod - 20 };
    await (await f.vault.connect(f.admin).setTimings(shorter)).wait();
    await indexer.syncToHead();
    expect(timings.get()).to.deep.equal(loaded);
    expect(timings.scheduled().map((s) => s.operation)).to.deep.equal([timingsOperation(shorter)]);
    expect(capNow()).to.equal(maxV2ValidationDeadline(loaded, now, MARGIN) - 20);

    // A longer one scheduled beside it does not loosen the cap.
    const longer = { ...loaded, withdrawalGracePeriod: loaded.withdrawalGracePeriod + 50 };
    await (await f.vault.connect(f.admin).setTimings(longer)).wait();
    await indexer.syncToHead();
    expect(capNow()).to.equal(maxV2ValidationDeadline(loaded, now, MARGIN) - 20);

    // The admin cancels the shorter one: the cap is the one in force again.
    await (await f.vault.connect(f.admin).cancelOperation(timingsOperation(shorter))).wait();
    await indexer.syncToHead();
    expect(timings.scheduled().map((s) => s.operation)).to.deep.equal([timingsOperation(longer)]);
    expect(capNow()).to.equal(maxV2ValidationDeadline(loaded, now, MARGIN));

    // Scheduled again and executed after the delay: it is in force and no longer pending.
    await (await f.vault.connect(f.admin).setTimings(shorter)).wait();
    await indexer.syncToHead();
    const [pending] = timings.scheduled().filter((s) => s.operation === timingsOperation(shorter));
    await time.increaseTo(pending.readyAt);
    await (await f.vault.connect(f.admin).setTimings(shorter)).wait();
    await indexer.syncToHead();
    expect(timings.get()).to.deep.equal(shorter);
    expect(timings.scheduled().map((s) => s.operation)).to.deep.equal([timingsOperation(longer)]);
  });

  it("a restarted Core takes back the changes still scheduled on the Vault and drops the executed or cancelled ones", async function () {
    const f = await loadFixture(chainFixture);
    const loaded = await new ProtocolTimings().load(provider, f.vaultAddress);
    const shorter = { ...loaded, withdrawalGracePeriod: loaded.withdrawalGracePeriod - 20 };
    const cancelled = { ...loaded, withdrawalGracePeriod: loaded.withdrawalGracePeriod - 10 };
    await (await f.vault.connect(f.admin).setTimings(shorter)).wait();
    await (await f.vault.connect(f.admin).setTimings(cancelled)).wait();
    await (await f.vault.connect(f.admin).cancelOperation(timingsOperation(cancelled))).wait();
    const kept = [shorter, cancelled].map((t) => ({
      operation: timingsOperation(t),
      readyAt: 1,
      timings: t,
    }));
    // What the store held, as written before the restart (a malformed entry is ignored).
    const stored = parseScheduledTimings(JSON.parse(JSON.stringify([...kept, { operation: 7 }])));
    expect(stored).to.have.length(2);

    const restarted = new ProtocolTimings();
    await restarted.load(provider, f.vaultAddress);
    await restarted.restoreScheduled(provider, f.vaultAddress, stored);
    expect(restarted.scheduled().map((s) => s.operation)).to.deep.equal([timingsOperation(shorter)]);
    expect(parseScheduledTimings({ not: "a list" })).to.deep.equal([]);
  });
});
