/**
 * Core as a node:cluster (`SURETY_WORKERS` = 3, operator/main.ts), as an operator runs it: a child
 * process on a free port over one SQLite file, its chain the in-process Hardhat network served over
 * JSON-RPC. The background work runs once (in the primary, which serves no HTTP); the workers learn
 * chain sync and chain time from the store (health turns ok, a deposit the primary's indexer applied
 * is visible); several workers hammered at once for one payer lock no more than the deposit, and
 * each duplicate of one guarantee is a 409 carrying the one certificate. SIGTERM stops every process.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import { ethers } from "hardhat";
import { ZERO_ADDRESS } from "../../sdk/wire";
import {
  coreOnTestChain,
  killCore,
  type CoreRun,
  START_TIMEOUT_MS,
  startCore,
  stopCore,
  until,
} from "./core-process";
import { facilitator, payer, recipient, signedBody, v1Claims } from "./guarantee-fixtures";
import { request, signIn } from "./helpers";

const WORKERS = 3;
const AMOUNT = 1_000n;
/** Covers exactly this many guarantees of AMOUNT. */
const COVERED = 10;
const ATTEMPTS = 40;
const DUPLICATES = 12;

describe("Core with SURETY_WORKERS = 3 (node:cluster over one SQLite file)", function () {
  this.timeout(3 * START_TIMEOUT_MS);
  let run: CoreRun | undefined;
  let chain: Awaited<ReturnType<typeof coreOnTestChain>> | undefined;

  after(async () => {
    await killCore(run);
    await chain?.close();
  });

  it("runs the background work once, shares chain state through the store, never over-locks, 409s every duplicate", async function () {
    chain = await coreOnTestChain();
    const { contracts, url } = chain;
    run = startCore(["-r", "ts-node/register/transpile-only", "operator/main.ts"], {
      ...chain.env,
      SURETY_WORKERS: String(WORKERS),
    });

    // Health is ok only once a worker has read the primary's indexer verdict from the store.
    await until("healthy", run, async () => {
      const response = await fetch(`${url}/core/health`);
      return response.status === 200 ? true : undefined;
    });
    const vault = contracts.surety.vault.connect(new Wallet(payer.privateKey, ethers.provider));
    await (await vault.deposit({ value: AMOUNT * BigInt(COVERED) })).wait();
    const { access_token: token } = await signIn(url, facilitator);
    const auth = { authorization: `Bearer ${token}` };
    const deposited = await until("deposit indexed", run, async () => {
      const response = await request(url, "GET", `/core/users/${payer.address}/balances`, { headers: auth });
      const eth = (
        response.body as { balances: { asset_address: string; deposited: string }[] }
      ).balances.find((b) => b.asset_address === ZERO_ADDRESS);
      return eth !== undefined && eth.deposited !== "0" ? eth.deposited : undefined;
    });
    expect(deposited).to.equal((AMOUNT * BigInt(COVERED)).toString());

    // Many distinct guarantees for one payer at once, spread over the workers: exactly the covered ones lock.
    const now = Math.floor(Date.now() / 1000);
    const bodies = await Promise.all(
      Array.from({ length: ATTEMPTS }, (_, i) =>
        signedBody(v1Claims({ reqId: BigInt(1_000 + i), amount: AMOUNT, timestamp: now })),
      ),
    );
    const answers = await Promise.all(
      bodies.map((json) => request(url, "POST", "/core/guarantees", { json, headers: auth })),
    );
    const issued = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    expect(issued).to.have.length(COVERED);
    for (const answer of refused) {
      expect(answer.status).to.equal(400);
      expect((answer.body as { code: string }).code).to.equal("insufficient_collateral");
    }
    const balances = await request(url, "GET", `/core/users/${payer.address}/balances`, { headers: auth });
    const eth = (balances.body as { balances: { asset_address: string; locked: string }[] }).balances.find(
      (b) => b.asset_address === ZERO_ADDRESS,
    )!;
    expect(eth.locked).to.equal((AMOUNT * BigInt(COVERED)).toString());

    // An issued guarantee sent again, many times at once: each copy is a 409 carrying its certificate.
    const duplicate = bodies[answers.indexOf(issued[0])];
    const again = await Promise.all(
      Array.from({ length: DUPLICATES }, () =>
        request(url, "POST", "/core/guarantees", { json: duplicate, headers: auth }),
      ),
    );
    for (const answer of again) {
      expect(answer.status).to.equal(409);
      expect(answer.body).to.deep.include({ code: "duplicate_guarantee", certificate: issued[0].body });
    }

    // A new guarantee raced by many copies at once: one issues, every other copy is a 409 with its certificate.
    await (await vault.deposit({ value: AMOUNT })).wait();
    await until("second deposit indexed", run, async () => {
      const response = await request(url, "GET", `/core/users/${payer.address}/balances`, { headers: auth });
      const row = (
        response.body as { balances: { asset_address: string; deposited: string }[] }
      ).balances.find((b) => b.asset_address === ZERO_ADDRESS);
      return row?.deposited === (AMOUNT * BigInt(COVERED + 1)).toString() ? true : undefined;
    });
    const raced = await signedBody(
      v1Claims({ reqId: 99_999n, amount: AMOUNT, timestamp: now, recipient: recipient.address }),
    );
    const race = await Promise.all(
      Array.from({ length: DUPLICATES }, () =>
        request(url, "POST", "/core/guarantees", { json: raced, headers: auth }),
      ),
    );
    const winners = race.filter((a) => a.status === 200);
    expect(winners).to.have.length(1);
    const won = winners[0].body;
    for (const answer of race.filter((a) => a.status !== 200)) {
      expect(answer.status).to.equal(409);
      expect(answer.body).to.deep.include({ code: "duplicate_guarantee", certificate: won });
    }

    const lines = run.lines();
    const primary = run.child.pid;
    const requestPids = new Set(lines.filter((l) => l.msg === "request").map((l) => l.pid));
    // Which worker accepts a connection is the kernel's and the cluster's choice (and kept-alive connections
    // stay on one worker), so only "never the primary" is asserted, not a spread.
    expect(requestPids.size, "requests were served").to.be.greaterThan(0);
    expect(requestPids.has(primary!), "the primary serves no HTTP").to.equal(false);
    const background = lines.filter((l) => l.msg === "background work started");
    expect(background.map((l) => l.pid)).to.deep.equal([primary]);
    expect(background[0]).to.include({ role: "background" });
    // Every worker comes up, each in its own time (a loaded machine starts the last one well after the first
    // answered): wait for all of them rather than read the lines once.
    const core = run;
    await until("every worker listening", core, async () =>
      core.lines().filter((l) => l.msg === "Core listening").length >= WORKERS ? true : undefined,
    );
    expect(
      core
        .lines()
        .filter((l) => l.msg === "Core listening")
        .map((l) => l.pid),
    ).to.have.length(WORKERS);

    expect(await stopCore(run)).to.equal(0);
    expect(run.lines().filter((l) => l.msg === "Core stopped")).to.have.length(WORKERS);
    expect(run.lines().some((l) => l.msg === "Core background work stopped")).to.equal(true);
  });
});
