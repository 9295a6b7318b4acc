/**
 * Core as a node:cluster (`SURETY_WORKERS` = 3, operator/main.ts), as an operator runs it: a child
 * process on a free port over one SQLite file, its chain the in-process Hardhat network served over
 * JSON-RPC. The background work runs once (in the primary, which serves no HTTP); the workers learn
 * chain sync and chain time from the store (health turns ok, a deposit the primary's indexer applied
 * is visible); several workers hammered at once for one payer lock no more than the deposit, and
 * each duplicate of one guarantee is a 409 carrying the one certificate. SIGTERM stops every process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { expect } from "chai";
import { Wallet } from "ethers";
import { ethers, network } from "hardhat";
import { JsonRpcServer } from "hardhat/internal/hardhat-network/jsonrpc/server";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { facilitator, payer, recipient, signedBody, v1Claims } from "./guarantee-fixtures";
import {
  deployTestContracts,
  request,
  signIn,
  TEST_BLS_SECRET,
  TEST_CHAIN_ID,
  TEST_DOMAIN,
  TEST_URI,
  tempDir,
} from "./helpers";

const ROOT = resolve(__dirname, "../..");
const WORKERS = 3;
const START_TIMEOUT_MS = 240_000;
const STOP_TIMEOUT_MS = 30_000;
const AMOUNT = 1_000n;
/** Covers exactly this many guarantees of AMOUNT. */
const COVERED = 10;
const ATTEMPTS = 40;
const DUPLICATES = 12;

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

interface LogLine {
  pid: number;
  msg: string;
  [field: string]: unknown;
}

interface Run {
  child: ChildProcess;
  lines: () => LogLine[];
  output: () => string;
  exited: Promise<number | null>;
}

function startCore(env: Record<string, string>): Run {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("SURETY_")),
  );
  const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", "operator/main.ts"], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const lines = () =>
    output
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as LogLine);
  return { child, lines, output: () => output, exited };
}

async function until<T>(what: string, run: Run, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (run.child.exitCode !== null) throw new Error(`Core exited (${run.child.exitCode}):\n${run.output()}`);
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${START_TIMEOUT_MS} ms:\n${run.output()}`);
    await new Promise((done) => setTimeout(done, 250));
  }
}

describe("Core with SURETY_WORKERS = 3 (node:cluster over one SQLite file)", function () {
  this.timeout(3 * START_TIMEOUT_MS);
  let run: Run | undefined;
  let rpc: JsonRpcServer | undefined;
  let dir: ReturnType<typeof tempDir> | undefined;

  after(async () => {
    if (run && run.child.exitCode === null) {
      run.child.kill("SIGKILL");
      await run.exited;
    }
    await rpc?.close();
    dir?.remove();
  });

  it("runs the background work once, shares chain state through the store, never over-locks, 409s every duplicate", async function () {
    const contracts = await deployTestContracts();
    rpc = new JsonRpcServer({ hostname: "127.0.0.1", port: 0, provider: network.provider });
    const { port: rpcPort } = await rpc.listen();
    dir = tempDir();
    const deploymentFile = join(dir.path, "hardhat.json");
    writeFileSync(deploymentFile, JSON.stringify(contracts.json));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    run = startCore({
      SURETY_WORKERS: String(WORKERS),
      SURETY_HOST: "127.0.0.1",
      SURETY_PORT: String(port),
      SURETY_LOG_LEVEL: "info",
      SURETY_DATA_DIR: dir.path,
      SURETY_NETWORK: "hardhat",
      SURETY_DEPLOYMENT_FILE: deploymentFile,
      SURETY_RPC_URL: `http://127.0.0.1:${rpcPort}`,
      SURETY_CHAIN_ID: String(TEST_CHAIN_ID),
      SURETY_BLS_SECRET: TEST_BLS_SECRET,
      SURETY_JWT_SECRET: "test-jwt-secret-of-at-least-32-bytes!!",
      SURETY_SIWE_DOMAIN: TEST_DOMAIN,
      SURETY_SIWE_URI: TEST_URI,
      SURETY_FACILITATORS: facilitator.address,
      SURETY_POLL_INTERVAL_MS: "100",
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
    await until("every worker listening", run, async () =>
      run!.lines().filter((l) => l.msg === "Core listening").length >= WORKERS ? true : undefined,
    );
    expect(
      run
        .lines()
        .filter((l) => l.msg === "Core listening")
        .map((l) => l.pid),
    ).to.have.length(WORKERS);

    run.child.kill("SIGTERM");
    const code = await Promise.race([
      run.exited,
      new Promise<string>((done) => setTimeout(() => done("timeout"), STOP_TIMEOUT_MS)),
    ]);
    expect(code).to.equal(0);
    expect(run.lines().filter((l) => l.msg === "Core stopped")).to.have.length(WORKERS);
    expect(run.lines().some((l) => l.msg === "Core background work stopped")).to.equal(true);
  });
});
