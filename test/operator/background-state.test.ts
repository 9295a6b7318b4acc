/**
 * What Core's HTTP workers know of background work running in another process
 * (operator/background-state.ts): two stores on one SQLite file stand for the two processes. The
 * worker's chain clock follows the indexer's stored cursor, its chain-sync verdict the published
 * one, judged on its own wall clock (a background process that stops publishing turns it stale),
 * and the Vault timings come across too.
 */
import { expect } from "chai";
import { join } from "node:path";
import { BackgroundStateMirror, BackgroundStatePublisher } from "../../operator/background-state";
import { ChainSyncMonitor } from "../../operator/chain/sync-status";
import { ProtocolTimings } from "../../operator/chain/timings";
import { ChainClock, ManualClock } from "../../operator/clock";
import { CommitBondGate } from "../../operator/clearing/bond-floor";
import { commitBondRefusal } from "../../operator/guarantees/issuance";
import { silentLogger } from "../../operator/logger";
import { SqliteStore } from "../../operator/store";
import { T0, tempDir } from "./helpers";

const LIMITS = { maxLagBlocks: 5, maxStaleSeconds: 30 };
const TIMINGS = {
  cycleLength: 3_600,
  commitDelay: 600,
  challengeWindow: 600,
  paymentWindow: 3_600,
  defaultWindow: 3_600,
  withdrawalGracePeriod: 86_400,
  confirmationLag: 1,
};

describe("background state shared through the store (Core workers)", function () {
  it("a worker mirrors chain time, the chain-sync verdict, the timings in force and scheduled, and goes stale when publishing stops", async function () {
    const dir = tempDir();
    const file = join(dir.path, "core.sqlite");
    const primaryStore = SqliteStore.open(file);
    const workerStore = SqliteStore.open(file);
    try {
      const wall = new ManualClock(T0);
      const logger = silentLogger();
      const primarySync = new ChainSyncMonitor({ limits: LIMITS, clock: wall, logger });
      const primaryTimings = new ProtocolTimings(TIMINGS);
      const publisher = new BackgroundStatePublisher({
        store: primaryStore,
        chainSync: primarySync,
        timings: primaryTimings,
        commitBond: new CommitBondGate({ logger, clock: wall }),
        wallClock: wall,
      });
      const workerSync = new ChainSyncMonitor({ limits: LIMITS, clock: wall, logger });
      const workerClock = new ChainClock();
      const workerTimings = new ProtocolTimings();
      const mirror = new BackgroundStateMirror({
        store: workerStore,
        chainSync: workerSync,
        chainClock: workerClock,
        timings: workerTimings,
        commitBond: new CommitBondGate({ logger, clock: wall }),
        logger,
        intervalMs: 1_000,
      });

      // Nothing published yet: the worker is not "off" (an indexer runs elsewhere) but starting, not ready.
      expect(workerSync.status().state).to.equal("off");
      await mirror.refresh();
      expect(workerSync.status()).to.include({ state: "starting", ready: false });
      expect(workerClock.current()).to.equal(null);

      // The indexer ticks in the primary: cursor stored, verdict published.
      await primaryStore.chainJournal.setChainCursor(
        { blockNumber: 42, blockHash: "0x" + "ab".repeat(32), blockTimestamp: T0 - 12 },
        T0,
      );
      primarySync.tickSucceeded({ head: 44, confirmations: 0, cursorBlock: 42 });
      await publisher.tick();
      await mirror.refresh();
      expect(workerSync.status()).to.include({ state: "ok", ready: true, indexedBlock: 42, lagBlocks: 2 });
      expect(workerClock.nowSeconds()).to.equal(T0 - 12);
      expect(workerTimings.get()).to.deep.equal(TIMINGS);
      expect(workerTimings.scheduled()).to.deep.equal([]);

      // A timings change scheduled on the Vault (the indexer's TimingsScheduled) crosses over: the worker's
      // V2 deadline cap counts it too; once cancelled (or executed) it is gone from the worker as well.
      const change = {
        operation: "0x" + "cd".repeat(32),
        readyAt: T0 + 86_400,
        timings: { ...TIMINGS, withdrawalGracePeriod: TIMINGS.withdrawalGracePeriod - 20 },
      };
      primaryTimings.schedule(change);
      await publisher.tick();
      await mirror.refresh();
      expect(workerTimings.scheduled()).to.deep.equal([change]);
      expect(workerTimings.bounding()).to.deep.equal([TIMINGS, change.timings]);
      primaryTimings.cancel(change.operation);
      await publisher.tick();
      await mirror.refresh();
      expect(workerTimings.scheduled()).to.deep.equal([]);

      // A lagging verdict crosses over as well.
      primarySync.tickSucceeded({ head: 60, confirmations: 0, cursorBlock: 42 });
      await publisher.tick();
      await mirror.refresh();
      expect(workerSync.status()).to.include({ state: "lagging", ready: false, lagBlocks: 18 });
      primarySync.tickSucceeded({ head: 60, confirmations: 0, cursorBlock: 60 });
      await publisher.tick();

      // The primary stops publishing: on the worker's own wall clock the verdict ages into stale.
      await mirror.refresh();
      expect(workerSync.status().state).to.equal("ok");
      wall.advance(LIMITS.maxStaleSeconds + 1);
      await mirror.refresh();
      expect(workerSync.status()).to.include({ state: "stale", ready: false });
    } finally {
      await workerStore.close();
      await primaryStore.close();
      dir.remove();
    }
  });

  it("a worker refuses issuance while the primary's scheduler holds commits back; a missing or stale publication reads unknown, never ok", async function () {
    const dir = tempDir();
    const file = join(dir.path, "core.sqlite");
    const primaryStore = SqliteStore.open(file);
    const workerStore = SqliteStore.open(file);
    try {
      const wall = new ManualClock(T0);
      const logger = silentLogger();
      const primaryGate = new CommitBondGate({ logger, clock: wall });
      const primarySync = new ChainSyncMonitor({ limits: LIMITS, clock: wall, logger });
      const publisher = new BackgroundStatePublisher({
        store: primaryStore,
        chainSync: primarySync,
        timings: new ProtocolTimings(TIMINGS),
        commitBond: primaryGate,
        wallClock: wall,
      });
      const workerGate = new CommitBondGate({ logger, clock: wall });
      const mirror = new BackgroundStateMirror({
        store: workerStore,
        chainSync: new ChainSyncMonitor({ limits: LIMITS, clock: wall, logger }),
        chainClock: new ChainClock(),
        timings: new ProtocolTimings(),
        commitBond: workerGate,
        logger,
        intervalMs: 1_000,
      });
      const refusalCode = () => commitBondRefusal(workerGate.status())?.code ?? null;

      // Nothing published: the worker cannot know whether commits go out.
      expect(workerGate.status().state).to.equal("off");
      await mirror.refresh();
      expect(workerGate.status().state).to.equal("unknown");
      expect(refusalCode()).to.equal("commit_bond_unknown");

      // The primary's scheduler commits through its gate: ok crosses over.
      primaryGate.attach();
      await publisher.tick();
      await mirror.refresh();
      expect(workerGate.status().state).to.equal("ok");
      expect(refusalCode()).to.equal(null);

      // The bond falls below the floor: the worker refuses with the primary's figures.
      const asset = "0x0000000000000000000000000000000000000000";
      const short = { bondFloorBps: async () => 5_000n, bondOf: async () => 10n };
      expect(await primaryGate.check(7, [{ asset, totalDebit: 100n }], short)).to.equal(false);
      await publisher.tick();
      await mirror.refresh();
      expect(workerGate.status()).to.deep.include({
        state: "short",
        cycleId: 7,
        floorBps: 5_000,
        assets: [{ asset, bond: 10n, required: 50n }],
      });
      const refusal = commitBondRefusal(workerGate.status());
      expect(refusal?.code).to.equal("commit_bond_short");
      expect(refusal?.message).to.include("bond 10 < required 50");

      // Topped up: issuance resumes on the worker after the next publication.
      const topped = { bondFloorBps: async () => 5_000n, bondOf: async () => 50n };
      expect(await primaryGate.check(7, [{ asset, totalDebit: 100n }], topped)).to.equal(true);
      await publisher.tick();
      await mirror.refresh();
      expect(refusalCode()).to.equal(null);

      // The primary stops publishing: its last "ok" ages into unknown on the worker's wall clock.
      wall.advance(LIMITS.maxStaleSeconds);
      await mirror.refresh();
      expect(workerGate.status().state).to.equal("ok");
      wall.advance(1);
      await mirror.refresh();
      expect(workerGate.status().state).to.equal("unknown");
      expect(refusalCode()).to.equal("commit_bond_unknown");

      // A worker whose own process starts committing (attach) judges by itself again.
      workerGate.attach();
      expect(workerGate.status().state).to.equal("ok");
    } finally {
      await workerStore.close();
      await primaryStore.close();
      dir.remove();
    }
  });
});
