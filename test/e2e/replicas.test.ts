/**
 * Several Core replicas on one PostgreSQL database (docs/scale-out.md), every part real: an embedded
 * PostgreSQL 18 server, the contracts on the in-process Hardhat chain, two Core HTTP servers on their own
 * ports, each with its own pool on the database and its background work under the leader lease, and a
 * facilitator given both URLs.
 *
 * The lease is about real time (a leader that stops renewing is replaced once its lease has run out), so
 * these tests run a short lease (LEASE_MS) and wait for the takeover, bounded; chain time still moves only
 * with hardhat-network-helpers.
 */
import { mine, time } from "@nomicfoundation/hardhat-network-helpers";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { keccak256, toUtf8Bytes, Wallet } from "ethers";
import { ethers, network } from "hardhat";
import { facilitatorConfigFromObject } from "../../facilitator/config";
import { silentFacilitatorLogger } from "../../facilitator/logger";
import { type FacilitatorServer, startFacilitatorServer } from "../../facilitator/server";
import { type GuaranteeClaims, toWireSignedGuarantee } from "../../sdk/claims";
import { devAccount } from "../../scripts/devnet/accounts";
import { signGuarantee } from "../../sdk/eip712";
import { guaranteeId } from "../../sdk/ids";
import { parseCertificate } from "../../sdk/certificate";
import { LeaderLease } from "../../operator/leadership";
import { silentLogger } from "../../operator/logger";
import { type CoreServer, startCoreServer } from "../../operator/server";
import { PostgresStore } from "../../operator/store";
import { bodyFor } from "../facilitator/helpers";
import {
  asyncConfig,
  chainFixture,
  provider,
  tempDir,
  type ChainFixture,
} from "../operator/indexer-fixtures";
import { hardhatChain, type JsonResponse, request, signIn } from "../operator/helpers";
import { startTestPostgres, type TestPostgres } from "../support/embedded-postgres";

const CHAIN_ID = 31337;
// Long enough that a loaded machine (the chain, both Cores and the test share one event loop) does not
// cost the leader its lease between renewals (tried every 100 ms, a renewal must be held up 3.9 s); short
// enough to wait for a takeover, which the frequent tries make about one lease period (bound: two).
const LEASE_MS = 4_000;
const RENEW_EVERY_MS = 100;
const POLL_MS = 100;
const FACILITATOR = new Wallet(keccak256(toUtf8Bytes("surety replicas test: facilitator wallet")));

/** Polls `check` every 25 ms until it answers truthy; fails after `timeoutMs`. */
async function until<T>(check: () => Promise<T | null | false>, timeoutMs: number, what: string): Promise<T> {
  const start = performance.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (performance.now() - start > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

interface Replica {
  name: string;
  core: CoreServer;
  store: PostgresStore;
  lease: LeaderLease;
  /** Hard stop: no lease release, its work not stopped, its HTTP connections cut, its pool ended. */
  kill(): Promise<void>;
  close(): Promise<void>;
}

describe("Core replicas on one PostgreSQL database", function () {
  this.timeout(180_000);
  let pg: TestPostgres;
  let databases = 0;
  const cleanup: (() => Promise<void>)[] = [];

  before(async () => {
    pg = await startTestPostgres();
  });
  afterEach(async () => {
    await network.provider.send("evm_setAutomine", [true]);
    for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
  });
  after(async () => {
    await pg.stop();
  });

  async function startReplica(f: ChainFixture, url: string, name: string): Promise<Replica> {
    const dir = tempDir();
    const store = await PostgresStore.open(url, { poolSize: 4 });
    const lease = new LeaderLease({
      store,
      self: name,
      leaseMs: LEASE_MS,
      renewEveryMs: RENEW_EVERY_MS,
      logger: silentLogger(),
    });
    const config = asyncConfig(dir.path, {
      databaseUrl: url,
      pollIntervalMs: POLL_MS,
      leaderLeaseMs: LEASE_MS,
      facilitators: [FACILITATOR.address],
      cycleLengthSeconds: f.timings.cycleLength,
      blsSigningWorker: false,
    });
    const core = await startCoreServer(config, {
      store,
      ownership: lease,
      logger: silentLogger(),
      deployment: f.deployment,
      chain: hardhatChain(),
      chainProvider: provider,
    });
    let killed = false;
    const replica: Replica = {
      name,
      core,
      store,
      lease,
      kill: async () => {
        killed = true;
        lease.abandon();
        core.server.closeAllConnections();
        await new Promise((resolve) => core.server.close(resolve));
        await store.close();
      },
      close: async () => {
        if (!killed) await core.close();
        else await core.close().catch(() => undefined); // stops the orphaned work
        await store.close();
        dir.remove();
      },
    };
    cleanup.push(() => replica.close());
    return replica;
  }

  async function startFacilitator(urls: string[]): Promise<FacilitatorServer> {
    const facilitator = await startFacilitatorServer(
      facilitatorConfigFromObject({
        host: "127.0.0.1",
        port: 0,
        logLevel: "silent",
        privateKey: FACILITATOR.privateKey,
        coreUrl: urls.join(","),
        chainId: CHAIN_ID,
        coreTimeoutMs: 5_000,
      }),
      { logger: silentFacilitatorLogger() },
    );
    cleanup.push(() => facilitator.close());
    return facilitator;
  }

  async function setup() {
    const f = await loadFixture(chainFixture);
    const url = await pg.createDatabase(`replicas_${process.pid}_${++databases}`);
    const a = await startReplica(f, url, "replica-a");
    const b = await startReplica(f, url, "replica-b");
    const observer = await PostgresStore.open(url, { poolSize: 2 });
    cleanup.push(() => observer.close());
    return { f, url, a, b, observer };
  }

  let nextReqId = 1n;
  function claimsFor(f: ChainFixture, payer: Wallet | { address: string }, amount: bigint): GuaranteeClaims {
    return {
      version: 1,
      user: payer.address,
      recipient: f.bob.address,
      reqId: nextReqId++,
      amount,
      asset: f.usdAddress,
      timestamp: Math.floor(Date.now() / 1000),
    };
  }
  const domainOf = (f: ChainFixture) => ({
    name: "Surety",
    version: "1",
    chainId: CHAIN_ID,
    verifyingContract: f.vaultAddress,
  });

  async function balance(r: Replica, who: Wallet, asset: string): Promise<Record<string, string>> {
    const token = (await signIn(r.core.url, who)).access_token;
    const answer = await request(r.core.url, "GET", `/core/users/${who.address}/balances`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (answer.status !== 200) throw new Error(`balances: ${answer.status} ${JSON.stringify(answer.body)}`);
    const row = (answer.body.balances as Record<string, string>[]).find(
      (x) => x.asset_address.toLowerCase() === asset.toLowerCase(),
    );
    return row ?? { deposited: "0", locked: "0" };
  }

  const health = async (r: Replica) => (await request(r.core.url, "GET", "/core/health")).body;

  /** Alice deposits `amount` tUSD; resolves once both replicas serve it (the leader indexed it). */
  async function deposit(f: ChainFixture, replicas: Replica[], amount: bigint): Promise<Wallet> {
    const alice = new Wallet(devAccount(2).privateKey, ethers.provider);
    expect(alice.address).to.equal(f.alice.address);
    await f.vault.connect(f.alice).depositToken(f.usdAddress, amount);
    for (const r of replicas) {
      await until(
        async () => BigInt((await balance(r, alice, f.usdAddress)).deposited) === amount,
        10_000,
        `${r.name} to serve the deposit`,
      );
    }
    return alice;
  }

  it("elects one leader; the follower serves the leader's chain view and says who leads", async () => {
    const { a, b } = await setup();
    const [ha, hb] = [await health(a), await health(b)];
    expect(ha.leadership).to.include({ role: "leader", replica: "replica-a", leader: "replica-a", token: 1 });
    expect(hb.leadership).to.include({
      role: "follower",
      replica: "replica-b",
      leader: "replica-a",
      token: 1,
    });
    // The follower's issuance gate and health judge by the leader's indexer (published in the database).
    await until(async () => (await health(b)).chain_sync.state === "ok", 10_000, "the follower's chain sync");
    const params = (await request(b.core.url, "GET", "/core/public-params")).body;
    expect(params.timings, "timings published by the leader").to.not.equal(null);
    expect(b.core.context.chainClock.nowSeconds()).to.be.a("number");
  });

  it("two replicas hammered for one payer: 0 over-locks, each duplicate 409 with the one certificate", async () => {
    const { f, a, b, observer } = await setup();
    const alice = await deposit(f, [a, b], 1_000n);
    const tokens = new Map<Replica, string>();
    for (const r of [a, b]) tokens.set(r, (await signIn(r.core.url, FACILITATOR)).access_token);

    // 30 guarantees of 100 against capacity for 10; each sent twice to each replica, all at once.
    const bodies = await Promise.all(
      Array.from({ length: 30 }, async () => {
        const claims = claimsFor(f, alice, 100n);
        const signature = await signGuarantee(alice, domainOf(f), claims, "eip712");
        const id = guaranteeId({ chainId: CHAIN_ID, vault: f.vaultAddress }, claims.user, claims.reqId);
        return { id, wire: toWireSignedGuarantee({ claims, signature, scheme: "eip712" }) };
      }),
    );
    const sends: Promise<{ id: string; answer: JsonResponse }>[] = [];
    for (const { id, wire } of bodies) {
      for (const r of [a, b, a, b]) {
        sends.push(
          request(r.core.url, "POST", "/core/guarantees", {
            json: wire,
            headers: { authorization: `Bearer ${tokens.get(r)}` },
          }).then((answer) => ({ id, answer })),
        );
      }
    }
    const answers = await Promise.all(sends);
    const byId = new Map<string, JsonResponse[]>();
    for (const { id, answer } of answers) byId.set(id, [...(byId.get(id) ?? []), answer]);
    let issued = 0;
    for (const [id, list] of byId) {
      const statuses = list.map((x) => x.status).sort();
      const ok = list.filter((x) => x.status === 200);
      if (ok.length === 0) {
        expect(statuses, id).to.deep.equal([400, 400, 400, 400]);
        continue;
      }
      issued++;
      expect(statuses, id).to.deep.equal([200, 409, 409, 409]);
      for (const dup of list.filter((x) => x.status === 409)) {
        expect(dup.body.code).to.equal("duplicate_guarantee");
        expect(dup.body.certificate, "the stored certificate").to.deep.equal(ok[0].body);
      }
    }
    expect(issued).to.equal(10);
    const stored = await observer.collateral.getCollateral(alice.address, f.usdAddress);
    expect(stored.locked).to.equal(1_000n);
    expect(stored.locked <= stored.deposited).to.equal(true);
  });

  it("the leader killed mid-cycle: the other replica takes over, commits the cycle once, its keeper covers a default on time, every certificate stays readable", async () => {
    const { f, a, b, observer } = await setup();
    const facilitator = await startFacilitator([a.core.url, b.core.url]);
    const alice = await deposit(f, [a, b], 1_000n);

    // Three guarantees settled through the facilitator, which spreads them over both replicas.
    const settled: { id: string; certificate: unknown }[] = [];
    for (const amount of [100n, 200n, 300n]) {
      const claims = claimsFor(f, alice, amount);
      const signature = await signGuarantee(alice, domainOf(f), claims, "eip712");
      const answer = await request(facilitator.url, "POST", "/settle", {
        json: bodyFor({ claims, signature, scheme: "eip712" }, 2),
      });
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      settled.push({ id: answer.body.transaction, certificate: answer.body.certificate });
    }

    // The cutoff passes; blocks are no longer mined on their own, so the leader's commit stays in the pool.
    await network.provider.send("evm_setAutomine", [false]);
    await time.increase(f.timings.cycleLength + 1);
    const sent = await until(
      async () => {
        const cycle = await observer.cycles.latestCycle();
        return cycle?.state === "SENT" ? cycle : null;
      },
      15_000,
      "the leader to send the commit",
    );
    expect(sent.guaranteeIds.sort()).to.deep.equal(settled.map((s) => s.id.toLowerCase()).sort());

    const killedAt = performance.now();
    await a.kill();
    await network.provider.send("evm_setAutomine", [true]);
    await mine(1);

    const leadsAfter = await until(
      async () => ((await health(b)).leadership.role === "leader" ? performance.now() - killedAt : null),
      4 * LEASE_MS,
      "replica b to lead",
    );
    expect(leadsAfter, `took over after ${Math.round(leadsAfter)} ms`).to.be.below(2 * LEASE_MS);
    expect((await health(b)).leadership.token).to.equal(2);

    const committed = await until(
      async () => {
        const cycle = await observer.cycles.getCycle(sent.cycleId);
        return cycle?.state === "COMMITTED" ? cycle : null;
      },
      15_000,
      "replica b to index the commit",
    );
    expect(committed.txHash).to.equal(sent.txHash);
    const events = await f.clearingHouse.queryFilter(f.clearingHouse.filters.CycleCommitted());
    expect(events.map((e) => Number(e.args[0]))).to.deep.equal([sent.cycleId]);
    expect(Number(await f.clearingHouse.lastCycleId())).to.equal(sent.cycleId);

    // Every acknowledged certificate is served by the surviving replica, netted in the committed cycle.
    const token = (await signIn(b.core.url, alice)).access_token;
    for (const { id, certificate } of settled) {
      const answer = await request(b.core.url, "GET", `/core/guarantees/${id}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(answer.status).to.equal(200);
      expect(answer.body.state).to.equal("NETTED");
      expect(parseCertificate(answer.body.certificate)).to.deep.equal(parseCertificate(certificate));
    }

    // The keeper covers on time: alice never pays her debit. Once the chain passes the payment deadline,
    // the new leader's keeper covers it from her collateral (coverDefault), before the default deadline.
    const [debt] = await observer.cycles.listCycleDebts({ cycleId: sent.cycleId });
    expect(debt).to.include({ debtor: alice.address, status: "OPEN", amount: 600n });
    expect(committed.paymentDeadline).to.be.a("number");
    expect(committed.defaultDeadline).to.be.a("number");
    // Not before the deadline: the debtor may still pay.
    await mine(1);
    expect(await f.clearingHouse.queryFilter(f.clearingHouse.filters.DefaultCovered())).to.deep.equal([]);
    await time.increaseTo(committed.paymentDeadline! + 1);
    const coveredAt = performance.now();
    const covered = await until(
      async () => {
        const [row] = await observer.cycles.listCycleDebts({ cycleId: sent.cycleId });
        return row?.status === "COVERED" ? row : null;
      },
      15_000,
      "replica b's keeper to cover alice's debit",
    );
    expect(covered.covered).to.equal(600n);
    const defaults = await f.clearingHouse.queryFilter(f.clearingHouse.filters.DefaultCovered());
    expect(defaults, "covered once, by one keeper").to.have.length(1);
    const coverBlock = await ethers.provider.getBlock(defaults[0].blockNumber);
    expect(coverBlock!.timestamp, "covered before the default deadline").to.be.at.most(
      committed.defaultDeadline!,
    );
    const coverTx = await ethers.provider.getTransaction(defaults[0].transactionHash);
    expect(coverTx!.from, "sent by the operator account").to.equal(f.operator.address);
    // Covered within a few keeper ticks of the deadline passing (wall clock, for the report only).
    expect(performance.now() - coveredAt).to.be.below(15_000);
    for (const { id } of settled) {
      const answer = await request(b.core.url, "GET", `/core/guarantees/${id}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(answer.status).to.equal(200);
      expect(answer.body.state).to.equal("DEFAULT_REMUNERATED");
    }
    expect(await f.clearingHouse.queryFilter(f.clearingHouse.filters.CycleCommitted())).to.have.length(1);

    // The facilitator still settles with replica a down: its connection error moves the call to b.
    for (let i = 0; i < 2; i++) {
      const claims = claimsFor(f, alice, 10n);
      const signature = await signGuarantee(alice, domainOf(f), claims, "eip712");
      const answer = await request(facilitator.url, "POST", "/settle", {
        json: bodyFor({ claims, signature, scheme: "eip712" }, 2),
      });
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      expect(answer.body.success).to.equal(true);
    }
  });
});
