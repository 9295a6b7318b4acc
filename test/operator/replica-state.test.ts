/**
 * What a follower replica takes from the leader's published view (operator/leadership/replica-state.ts):
 * the leader's clearing scheduler's bond-floor verdict crosses over with the chain-sync snapshot, so a
 * follower refuses issuance while the leader holds commits back; a publication older than the staleness
 * bound reads `unknown` (refused), never `ok`. Two stores on one SQLite file
 * stand for the leader's and the follower's database connections.
 */
import { expect } from "chai";
import { join } from "node:path";
import { ChainSyncMonitor } from "../../operator/chain/sync-status";
import { ProtocolTimings } from "../../operator/chain/timings";
import { CommitBondGate } from "../../operator/clearing/bond-floor";
import { ChainClock, ManualClock, systemClock } from "../../operator/clock";
import { commitBondRefusal } from "../../operator/guarantees/issuance";
import { publishReplicaState, ReplicaStateFollower } from "../../operator/leadership";
import { silentLogger } from "../../operator/logger";
import { SqliteStore } from "../../operator/store";
import { tempDir } from "./helpers";

const LIMITS = { maxLagBlocks: 5, maxStaleSeconds: 30 };
const ETH = "0x0000000000000000000000000000000000000000";

describe("replica state: the leader's commit-bond verdict on followers", function () {
  it("a follower refuses issuance while the leader's bond is short, resumes after the top-up, and reads a stale view as unknown", async function () {
    const dir = tempDir();
    const file = join(dir.path, "core.sqlite");
    const leaderStore = SqliteStore.open(file);
    const followerStore = SqliteStore.open(file);
    try {
      const logger = silentLogger();
      // The leader stamps its publication with the system clock; the follower judges it on its own clock.
      const followerWall = new ManualClock(systemClock.nowSeconds());
      const leaderGate = new CommitBondGate({ logger, clock: systemClock });
      const leader = {
        chainClock: new ChainClock(),
        chainSync: new ChainSyncMonitor({ limits: LIMITS, clock: systemClock, logger }),
        timings: new ProtocolTimings(),
        commitBond: leaderGate,
        logger,
        intervalMs: 60_000,
      };
      const followerGate = new CommitBondGate({ logger, clock: followerWall });
      const follower = new ReplicaStateFollower({
        chainClock: new ChainClock(),
        chainSync: new ChainSyncMonitor({ limits: LIMITS, clock: followerWall, logger }),
        timings: new ProtocolTimings(),
        commitBond: followerGate,
        logger,
        intervalMs: 60_000,
        store: followerStore,
        ownership: { isLeader: () => false },
      });
      /** One publication by the leader's term (the loop publishes at once; stopped before the next). */
      const publish = async () =>
        publishReplicaState({ ...leader, store: leaderStore, self: "leader", token: 1 }).stop();
      const code = () => commitBondRefusal(followerGate.status())?.code ?? null;

      // No leader has published (a fresh database): the follower's own gate stays as it is (off), like its
      // chain-sync monitor; the leader publishes at the start of its term.
      await follower.tick();
      expect(followerGate.status().state).to.equal("off");

      // The leader's scheduler attaches and publishes: ok.
      leaderGate.attach();
      await publish();
      await follower.tick();
      expect(followerGate.status().state).to.equal("ok");
      expect(code()).to.equal(null);

      // The leader's bond falls below the floor.
      const short = { bondFloorBps: async () => 10_000n, bondOf: async () => 1n };
      await leaderGate.check(3, [{ asset: ETH, totalDebit: 5n }], short);
      await publish();
      await follower.tick();
      expect(followerGate.status()).to.deep.include({
        state: "short",
        cycleId: 3,
        assets: [{ asset: ETH, bond: 1n, required: 5n }],
      });
      expect(code()).to.equal("commit_bond_short");

      // Topped up.
      await leaderGate.check(3, [{ asset: ETH, totalDebit: 5n }], { ...short, bondOf: async () => 5n });
      await publish();
      await follower.tick();
      expect(code()).to.equal(null);

      // The leader stops publishing (it died): past the bound its last "ok" is unknown on the follower.
      followerWall.advance(LIMITS.maxStaleSeconds + 2);
      await follower.tick();
      expect(followerGate.status().state).to.equal("unknown");
      expect(code()).to.equal("commit_bond_unknown");
    } finally {
      await followerStore.close();
      await leaderStore.close();
      dir.remove();
    }
  });
});
