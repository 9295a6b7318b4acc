/**
 * The PostgreSQL server restarted under a running Core (docs/scale-out.md, "Failure modes"), every part
 * real: an embedded PostgreSQL 18 server stopped (fast shutdown: sessions terminated, transactions in
 * flight rolled back) and started again on the same data directory and port, the contracts on the
 * in-process Hardhat chain, one Core HTTP server with its pool and its background work under the leader
 * lease.
 *
 * While the database is away Core must stay up, answer health 503 (`db: fail`) and refuse issuance with
 * the spec's 500, writing nothing; once it is back Core must recover by itself (the pool reconnects, the
 * lease is taken again, the background work runs again) and every certificate it acknowledged must still
 * be there. The lease and the pool are about real time, so the test waits for them, bounded; chain time
 * moves only with hardhat-network-helpers.
 */
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { keccak256, toUtf8Bytes, Wallet } from "ethers";
import { ethers } from "hardhat";
import { type GuaranteeClaims, toWireSignedGuarantee } from "../../sdk/claims";
import { devAccount } from "../../scripts/devnet/accounts";
import { signGuarantee } from "../../sdk/eip712";
import { guaranteeId } from "../../sdk/ids";
import { parseCertificate } from "../../sdk/certificate";
import { LeaderLease } from "../../operator/leadership";
import { silentLogger } from "../../operator/logger";
import { type CoreServer, startCoreServer } from "../../operator/server";
import { PostgresStore } from "../../operator/store";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { asyncConfig, chainFixture, provider, tempDir } from "../operator/indexer-fixtures";
import { hardhatChain, type JsonResponse, request, signIn } from "../operator/helpers";
import { startTestPostgres, type TestPostgres } from "../support/embedded-postgres";

const CHAIN_ID = 31337;
/** Renewed every 100 ms: the leader keeps it unless a renewal is held up 3.9 s (a loaded CI host). */
const LEASE_MS = 4_000;
const RENEW_EVERY_MS = 100;
const POLL_MS = 100;
const FACILITATOR = new Wallet(keccak256(toUtf8Bytes("surety postgres restart test: facilitator wallet")));

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

describe("PostgreSQL restarted under a running Core", function () {
  this.timeout(180_000);
  let pg: TestPostgres;
  const cleanup: (() => Promise<void>)[] = [];

  before(async () => {
    pg = await startTestPostgres();
  });
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
  });
  after(async () => {
    await pg.stop();
  });

  it("a transaction whose connection the server terminates fails; the process lives on and the pool reconnects", async () => {
    const url = await pg.createDatabase("restart_store");
    const store = await PostgresStore.open(url, { poolSize: 2 });
    cleanup.push(() => store.close());
    await store.collateral.creditDeposit(FACILITATOR.address, ZERO_ADDRESS, 500n, 1);

    // A transaction holding its connection between two statements (no query running on it) when the
    // server goes away: the client's 'error' event must not go unhandled (it would end the process).
    let resume!: () => void;
    const paused = new Promise<void>((resolve) => (resume = resolve));
    let inBody!: () => void;
    const entered = new Promise<void>((resolve) => (inBody = resolve));
    const body = store.transaction(async (tx) => {
      await tx.collateral.creditDeposit(FACILITATOR.address, ZERO_ADDRESS, 100n, 2);
      inBody();
      await paused;
      await tx.collateral.creditDeposit(FACILITATOR.address, ZERO_ADDRESS, 100n, 3);
    });
    const outcome = body.then(
      () => "committed",
      (error: Error) => error,
    );
    await entered;
    await pg.stopServer();
    // Give the terminated connection's error event a turn of the event loop before the body goes on.
    await new Promise((resolve) => setTimeout(resolve, 50));
    resume();
    expect(await outcome).to.be.instanceOf(Error);
    await expectRejected(store.ping());

    await pg.restartServer();
    await until(
      () =>
        store.ping().then(
          () => true,
          () => false,
        ),
      10_000,
      "the pool to reconnect",
    );
    // Nothing of the failed transaction is stored; the store works as before.
    expect((await store.collateral.getCollateral(FACILITATOR.address, ZERO_ADDRESS)).deposited).to.equal(
      500n,
    );
    await store.collateral.creditDeposit(FACILITATOR.address, ZERO_ADDRESS, 1n, 4);
    expect((await store.collateral.getCollateral(FACILITATOR.address, ZERO_ADDRESS)).deposited).to.equal(
      501n,
    );
  });

  it("Core: 503 and clean refusals while the database is down, then recovers by itself; acknowledged certificates stay", async () => {
    const f = await loadFixture(chainFixture);
    const url = await pg.createDatabase("restart_core");
    const dir = tempDir();
    const store = await PostgresStore.open(url, { poolSize: 4 });
    const lease = new LeaderLease({
      store,
      self: "replica-a",
      leaseMs: LEASE_MS,
      renewEveryMs: RENEW_EVERY_MS,
      logger: silentLogger(),
    });
    const core: CoreServer = await startCoreServer(
      asyncConfig(dir.path, {
        databaseUrl: url,
        pollIntervalMs: POLL_MS,
        leaderLeaseMs: LEASE_MS,
        facilitators: [FACILITATOR.address],
        cycleLengthSeconds: f.timings.cycleLength,
        blsSigningWorker: false,
      }),
      {
        store,
        ownership: lease,
        logger: silentLogger(),
        deployment: f.deployment,
        chain: hardhatChain(),
        chainProvider: provider,
      },
    );
    cleanup.push(async () => {
      await core.close();
      await store.close();
      dir.remove();
    });
    const health = () => request(core.url, "GET", "/core/health");
    const alice = new Wallet(devAccount(2).privateKey, ethers.provider);
    expect(alice.address).to.equal(f.alice.address);
    const aliceToken = (await signIn(core.url, alice)).access_token;
    const facilitatorToken = (await signIn(core.url, FACILITATOR)).access_token;

    const balance = async (): Promise<{ deposited: bigint; locked: bigint } | null> => {
      const answer = await request(core.url, "GET", `/core/users/${alice.address}/balances`, {
        headers: { authorization: `Bearer ${aliceToken}` },
      });
      if (answer.status !== 200) return null;
      const row = (answer.body.balances as Record<string, string>[]).find(
        (x) => x.asset_address.toLowerCase() === f.usdAddress.toLowerCase(),
      );
      return row ? { deposited: BigInt(row.deposited), locked: BigInt(row.locked) } : null;
    };
    const depositAndWait = async (amount: bigint, total: bigint) => {
      await f.vault.connect(f.alice).depositToken(f.usdAddress, amount);
      await until(async () => (await balance())?.deposited === total, 15_000, `Core to index ${total}`);
    };

    let nextReqId = 1n;
    const signed = async (amount: bigint) => {
      const claims: GuaranteeClaims = {
        version: 1,
        user: alice.address,
        recipient: f.bob.address,
        reqId: nextReqId++,
        amount,
        asset: f.usdAddress,
        timestamp: Math.floor(Date.now() / 1000),
      };
      const signature = await signGuarantee(
        alice,
        { name: "Surety", version: "1", chainId: CHAIN_ID, verifyingContract: f.vaultAddress },
        claims,
        "eip712",
      );
      const id = guaranteeId({ chainId: CHAIN_ID, vault: f.vaultAddress }, claims.user, claims.reqId);
      return { id, amount, wire: toWireSignedGuarantee({ claims, signature, scheme: "eip712" }) };
    };
    type Signed = Awaited<ReturnType<typeof signed>>;
    const issue = (g: Signed) =>
      request(core.url, "POST", "/core/guarantees", {
        json: g.wire,
        headers: { authorization: `Bearer ${facilitatorToken}` },
      });
    const read = (id: string) =>
      request(core.url, "GET", `/core/guarantees/${id}`, {
        headers: { authorization: `Bearer ${aliceToken}` },
      });

    await depositAndWait(10_000n, 10_000n);
    await until(async () => (await health()).status === 200, 10_000, "Core to be healthy");
    expect((await health()).body.leadership).to.include({ role: "leader", token: 1 });

    // Acknowledged before the stop.
    const acknowledged: { g: Signed; certificate: unknown }[] = [];
    for (const amount of [100n, 200n, 300n]) {
      const g = await signed(amount);
      const answer = await issue(g);
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      acknowledged.push({ g, certificate: answer.body });
    }

    // Issuances in flight while the server shuts down: each is acknowledged (200) or refused (500).
    const inFlight = await Promise.all([50n, 60n, 70n, 80n, 90n, 110n].map((amount) => signed(amount)));
    const racing = inFlight.map((g) => issue(g).then((answer) => ({ g, answer })));
    await pg.stopServer();
    const raced = await Promise.all(racing);
    for (const { answer } of raced) expect([200, 500], JSON.stringify(answer.body)).to.include(answer.status);

    // The database is down: health 503 naming it, issuance refused with the spec's 500, Core alive.
    const down = await health();
    expect(down.status).to.equal(503);
    expect(down.body).to.include({ status: "fail", db: "fail", chain_rpc: "ok" });
    const refused = await signed(40n);
    const whileDown: JsonResponse = await issue(refused);
    expect(whileDown.status, JSON.stringify(whileDown.body)).to.equal(500);
    expect(whileDown.body).to.have.property("code", "store_unavailable");
    expect((await read(acknowledged[0].g.id)).status).to.equal(500);

    // The leader cannot renew: it counts itself deposed once its lease time has passed.
    await until(
      async () => (await health()).body.leadership.role === "follower",
      4 * LEASE_MS,
      "the leader to count itself deposed",
    );

    // Same data directory, same port: Core reconnects on its own and leads again (a new term).
    await pg.restartServer();
    await until(async () => (await health()).status === 200, 20_000, "health to be 200 again");
    await until(
      async () => (await health()).body.leadership.role === "leader",
      4 * LEASE_MS,
      "Core to lead again",
    );
    expect((await health()).body.leadership.token).to.equal(2);

    // Every certificate acknowledged before or during the stop is served unchanged.
    const acked = [
      ...acknowledged,
      ...raced.filter((r) => r.answer.status === 200).map((r) => ({ g: r.g, certificate: r.answer.body })),
    ];
    for (const { g, certificate } of acked) {
      const answer = await read(g.id);
      expect(answer.status, g.id).to.equal(200);
      expect(parseCertificate(answer.body.certificate)).to.deep.equal(parseCertificate(certificate));
    }
    // The one refused while the database was down left nothing behind: a retry issues it now.
    expect((await read(refused.id)).status).to.equal(404);
    const retried = await issue(refused);
    expect(retried.status, JSON.stringify(retried.body)).to.equal(200);
    // A refusal during the stop may have committed or not (its COMMIT's answer was lost): a retry tells,
    // 409 with the stored certificate if it had, 200 if not; never a second lock.
    for (const { g, answer } of raced.filter((r) => r.answer.status === 500)) {
      const again = await issue(g);
      expect([200, 409], JSON.stringify(again.body)).to.include(again.status);
      if (again.status === 409) expect(again.body.code).to.equal("duplicate_guarantee");
      expect(answer.body.code).to.be.oneOf(["store_unavailable", "internal_error"]);
    }
    // Money: locked is exactly the sum of the guarantees stored, each once.
    const all = [...acknowledged.map((a) => a.g), ...inFlight, refused];
    let sum = 0n;
    for (const g of all) {
      const answer = await read(g.id);
      expect(answer.status, g.id).to.equal(200);
      sum += g.amount;
    }
    expect((await balance())?.locked).to.equal(sum);

    // The background work runs again in the new term: a new deposit is indexed.
    await depositAndWait(1_000n, 11_000n);
  });
});

async function expectRejected(promise: Promise<unknown>): Promise<void> {
  const outcome = await promise.then(
    () => "resolved",
    () => "rejected",
  );
  expect(outcome).to.equal("rejected");
}
