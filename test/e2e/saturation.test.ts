/**
 * Deadline work wins over issuance (issue 26, item 1b; docs/clearing.md "Deadline work before issuance"):
 * issuance saturated over HTTP on one Core (SQLite) and on two replicas (PostgreSQL, leader lease), while
 * an unpaid debt reaches its payment deadline and cycles close. Checked: the keeper's cover lands before
 * the default deadline, no change of leader (fencing token 1 throughout), and every acknowledged guarantee
 * is committed within cycleLength + commitDelay + confirmationLag + one block of its acknowledgement
 * (chain time). Chain time follows the wall clock throughout (a block a second), never jumps. Shed requests (503 issuance_overloaded, 500 commit_deadline_at_risk) are allowed: that is
 * the design. Chain time follows the wall clock here (the load is real), so the timings are short; no
 * assertion is on speed, and the figures are logged (SURETY_SATURATION_REPORT=1) for docs/clearing.md.
 */
import { loadFixture, mine, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { keccak256, toUtf8Bytes, Wallet } from "ethers";
import { ethers } from "hardhat";
import { type GuaranteeClaims, toWireSignedGuarantee } from "../../sdk/claims";
import { signGuarantee } from "../../sdk/eip712";
import { guaranteeId } from "../../sdk/ids";
import { devAccount } from "../../scripts/devnet/accounts";
import { LeaderLease } from "../../operator/leadership";
import { silentLogger } from "../../operator/logger";
import { type CoreServer, startCoreServer } from "../../operator/server";
import { PostgresStore, SqliteStore, type Store } from "../../operator/store";
import {
  asyncConfig,
  chainFixture,
  provider,
  tempDir,
  type ChainFixture,
} from "../operator/indexer-fixtures";
import { hardhatChain, request, signIn } from "../operator/helpers";
import { startTestPostgres, type TestPostgres } from "../support/embedded-postgres";
import { join } from "node:path";

const CHAIN_ID = 31337;
const FACILITATOR = new Wallet(keccak256(toUtf8Bytes("surety saturation test: facilitator wallet")));
/**
 * Short timings: a few cycles and a default window fit in seconds of real time. The two budgets Core must
 * meet under the load, the commit's (commitDelay after a cutoff) and the cover's (defaultWindow after the
 * payment deadline), are 12 s and 18 s: Core meets them in 2–5 s (the commit) and 2–6 s (the cover; 6 s with
 * two replicas on PostgreSQL on an idle host, before and after the audit-3 fixes), and with 4 s a host loaded
 * by other work (load 15 on 2 cores) missed them by 1–6 s; a CI run missed a 12-s cover budget by 1 s (two
 * replicas). Only a stall of several seconds, not issuance, can flip the verdict now;
 * Core starts each of them at once, so they cost the test no time. The load lasts longer than a budget
 * ({@link LOAD_SECONDS}): a commit held back until the load ends would still break its bound, and the
 * debt's payment deadline passes while issuance is still saturated.
 */
const TIMINGS = {
  cycleLength: 4,
  commitDelay: 12,
  challengeWindow: 1,
  paymentWindow: 2,
  defaultWindow: 18,
  withdrawalGracePeriod: 60,
  confirmationLag: 1,
};
/** Renewed every 250 ms: the leader keeps its lease unless a renewal is held up for 3.75 s. */
const LEASE_MS = 4_000;
const RENEW_EVERY_MS = 250;
/** > cycleLength + commitDelay + confirmationLag + 1 (18 s), so that starving the commit fails the bound. */
const LOAD_SECONDS = Number(process.env.SURETY_SATURATION_SECONDS ?? 20);
const CONCURRENCY = 24;
const REPORT = process.env.SURETY_SATURATION_REPORT === "1";

async function until<T>(check: () => Promise<T | null | false>, timeoutMs: number, what: string): Promise<T> {
  const start = performance.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (performance.now() - start > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface Replica {
  core: CoreServer;
  store: Store;
  lease: LeaderLease | null;
}

describe("deadline work under saturated issuance (issue 26 item 1b)", function () {
  this.timeout(300_000);
  let pg: TestPostgres | undefined;
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
  });
  after(async () => {
    await pg?.stop();
  });

  const fixture = () => chainFixture(TIMINGS);

  async function startReplica(f: ChainFixture, name: string, url: string | null): Promise<Replica> {
    const dir = tempDir();
    const store: Store =
      url === null ? SqliteStore.open(join(dir.path, "core.sqlite")) : await PostgresStore.open(url);
    const lease =
      store instanceof PostgresStore
        ? new LeaderLease({
            store,
            self: name,
            leaseMs: LEASE_MS,
            renewEveryMs: RENEW_EVERY_MS,
            logger: silentLogger(),
          })
        : null;
    const config = asyncConfig(dir.path, {
      ...(url === null ? {} : { databaseUrl: url }),
      pollIntervalMs: 100,
      leaderLeaseMs: LEASE_MS,
      facilitators: [FACILITATOR.address],
      cycleLengthSeconds: TIMINGS.cycleLength,
      blsSigningWorker: false,
      timestampWindowPastSeconds: 600,
      timestampWindowFutureSeconds: 600,
      ...(process.env.SURETY_SATURATION_NO_ADMISSION === "1"
        ? { issuanceMaxInFlight: 0, issuanceMaxLoopDelayMs: 0 }
        : {}),
    });
    const core = await startCoreServer(config, {
      store,
      ...(lease ? { ownership: lease } : {}),
      logger: silentLogger(),
      deployment: f.deployment,
      chain: hardhatChain(),
      chainProvider: provider,
    });
    cleanup.push(async () => {
      await core.close();
      await store.close();
      dir.remove();
    });
    return { core, store, lease };
  }

  let nextReqId = 1n;
  async function body(f: ChainFixture, payer: Wallet, recipient: string) {
    const claims: GuaranteeClaims = {
      version: 1,
      user: payer.address,
      recipient,
      reqId: nextReqId++,
      amount: 1n,
      asset: f.usdAddress,
      timestamp: Math.floor(Date.now() / 1000),
    };
    const domain = { name: "Surety", version: "1", chainId: CHAIN_ID, verifyingContract: f.vaultAddress };
    const signature = await signGuarantee(payer, domain, claims, "eip712");
    const id = guaranteeId({ chainId: CHAIN_ID, vault: f.vaultAddress }, claims.user, claims.reqId);
    return { id: id.toLowerCase(), wire: toWireSignedGuarantee({ claims, signature, scheme: "eip712" }) };
  }

  async function run(replicas: Replica[], f: ChainFixture, observer: Store) {
    const alice = new Wallet(devAccount(2).privateKey, ethers.provider);
    const carol = new Wallet(devAccount(4).privateKey, ethers.provider);
    expect(alice.address).to.equal(f.alice.address);
    await f.vault.connect(f.alice).depositToken(f.usdAddress, 10n ** 12n);
    await f.vault.connect(f.carol).depositToken(f.usdAddress, 10n ** 12n);
    const leader = replicas[0];
    await until(
      async () =>
        (await observer.collateral.getCollateral(alice.address, f.usdAddress)).deposited > 0n &&
        (await observer.collateral.getCollateral(carol.address, f.usdAddress)).deposited > 0n,
      20_000,
      "both deposits indexed",
    );
    const tokens = await Promise.all(
      replicas.map(async (r) => (await signIn(r.core.url, FACILITATOR)).access_token),
    );
    // The debt the keeper must cover during the load: carol owes dave, nobody pays.
    const debt = await body(f, carol, f.dave.address);
    const first = await request(leader.core.url, "POST", "/core/guarantees", {
      json: debt.wire,
      headers: { authorization: `Bearer ${tokens[0]}` },
    });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);

    // Chain time follows the wall clock (a block per second when nothing else mines: Hardhat stamps each block ≥ 1 s after the last).
    let chainNow = await time.latest();
    let loading = true;
    const ticker = (async () => {
      while (loading) {
        await mine(1);
        chainNow = Math.max(chainNow, await time.latest());
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    })();
    // A failed wait below stops the ticker too (cleanup runs before the servers close).
    cleanup.push(async () => {
      loading = false;
      await ticker;
    });
    const acks = new Map<string, number>();
    const statuses = new Map<string, number>();
    const deadline = performance.now() + LOAD_SECONDS * 1000;
    const loops = Array.from({ length: CONCURRENCY }, async (_, i) => {
      const r = i % replicas.length;
      while (performance.now() < deadline) {
        const b = await body(f, alice, f.bob.address);
        const answer = await request(replicas[r].core.url, "POST", "/core/guarantees", {
          json: b.wire,
          headers: { authorization: `Bearer ${tokens[r]}` },
        });
        const key = answer.status === 200 ? "200" : `${answer.status} ${String(answer.body.code)}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        if (answer.status === 200) acks.set(b.id, chainNow);
        else if (answer.status === 503) await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    await Promise.all(loops);
    // The last cycles close and commit, and the debt's deadlines pass, with chain time still following the
    // wall clock: a jump (time.increase) would pass a deadline in chain time that Core had no wall time to
    // meet.
    await until(
      async () => {
        for (const id of acks.keys()) {
          const g = await observer.guarantees.getClearingGuarantee(id);
          if (g?.cycleId === null || g?.cycleId === undefined) return false;
        }
        return true;
      },
      60_000,
      "every acknowledged guarantee committed",
    );

    // Every acknowledged guarantee committed in time (chain time).
    const bound = TIMINGS.cycleLength + TIMINGS.commitDelay + TIMINGS.confirmationLag + 1;
    const cycles = new Map<number, number>();
    let worst = -Infinity;
    for (const [id, ack] of acks) {
      const g = (await observer.guarantees.getClearingGuarantee(id))!;
      if (!cycles.has(g.cycleId!))
        cycles.set(g.cycleId!, (await observer.cycles.getCycle(g.cycleId!))!.committedAt!);
      worst = Math.max(worst, cycles.get(g.cycleId!)! - ack);
    }
    // The debt's cycle: its cover landed before its default deadline.
    const debtGuarantee = (await observer.guarantees.getClearingGuarantee(debt.id))!;
    const debtCycle = (await observer.cycles.getCycle(debtGuarantee.cycleId!))!;
    const covered = await until(
      async () => {
        const row = (await observer.cycles.listCycleDebts({ cycleId: debtCycle.cycleId })).find(
          (d) => d.debtor === carol.address,
        );
        return row?.status === "COVERED" ? row : null;
      },
      30_000,
      "the keeper's cover",
    );
    loading = false;
    await ticker;
    const events = await f.clearingHouse.queryFilter(f.clearingHouse.filters.DefaultCovered());
    const coverBlock = await ethers.provider.getBlock(events[0].blockNumber);
    const tokensSeen = replicas.map((r) => r.lease?.view().token ?? 1);
    const report = {
      replicas: replicas.length,
      statuses: Object.fromEntries(statuses),
      acknowledged: acks.size,
      cycles: cycles.size,
      worst_ack_to_commit_s: worst,
      bound_s: bound,
      cover_slack_s: debtCycle.defaultDeadline! - coverBlock!.timestamp,
      tokens: tokensSeen,
      shed: replicas.map((r) => r.core.context.admission.counts),
      cycle_table: await Promise.all(
        [...cycles.keys()]
          .sort((x, y) => x - y)
          .map(async (id) => {
            const c = (await observer.cycles.getCycle(id))!;
            return [id, c.cutoff, c.plannedAt, c.committedAt, c.guaranteeIds.length];
          }),
      ),
    };
    if (REPORT) console.log(JSON.stringify(report));
    expect(acks.size, "some guarantees acknowledged").to.be.above(0);
    expect(worst, `ack → commit (bound ${bound} s)`).to.be.at.most(bound);
    expect(covered.status).to.equal("COVERED");
    expect(coverBlock!.timestamp, "covered before the default deadline").to.be.at.most(
      debtCycle.defaultDeadline!,
    );
    expect(tokensSeen, "no change of leader").to.deep.equal(replicas.map(() => 1));
    for (const r of replicas) expect(r.lease?.isLeader() ?? true).to.equal(r === leader);
  }

  it("one Core on SQLite", async () => {
    const f = await loadFixture(fixture);
    const core = await startReplica(f, "sole", null);
    await run([core], f, core.store);
  });

  it("two replicas on PostgreSQL", async () => {
    const f = await loadFixture(fixture);
    pg ??= await startTestPostgres();
    const url = await pg.createDatabase(`saturation_${process.pid}_${Date.now()}`);
    const a = await startReplica(f, "replica-a", url);
    const b = await startReplica(f, "replica-b", url);
    const observer = await PostgresStore.open(url, { poolSize: 2 });
    cleanup.push(() => observer.close());
    await run([a, b], f, observer);
  });
});
