/**
 * Core while its books cannot follow the chain (operator/chain/sync-status.ts): after a real reorg
 * deeper than the kept history (evm_snapshot / evm_revert on the Hardhat chain, more than
 * REORG_HISTORY_BLOCKS mined), with the indexer lagging more blocks than the bound, with its last
 * successful tick too old, and before its first. Each time `GET /core/health` answers 503 naming the
 * cause and the lag, `POST /core/guarantees` answers 500 (the interface's "Core could not issue") with the cause's code,
 * `/metrics` shows the lag, and the failure is logged once, not per tick.
 * A real Core on a free port over a SQLite file, the indexer driven by hand with a manual wall clock.
 */
import { Writable } from "node:stream";
import { mine } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther, Wallet } from "ethers";
import { ethers, network } from "hardhat";
import { CORE_OPENAPI } from "../../operator/api/openapi-document";
import { type BackgroundTasks, createBackgroundTasks } from "../../operator/background";
import { JOURNAL_PRUNED_BELOW_KEY, REORG_HISTORY_BLOCKS } from "../../operator/chain/indexer";
import { ChainSyncMonitor } from "../../operator/chain/sync-status";
import { ManualClock } from "../../operator/clock";
import type { OperatorConfigInput } from "../../operator/config";
import { createLogger } from "../../operator/logger";
import { type CoreServer, startCoreServer } from "../../operator/server";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { OpenApiChecker } from "../openapi/validator";
import { facilitator, payer, recipient, signedBody, v1Claims } from "./guarantee-fixtures";
import {
  deployTestContracts,
  hardhatChain,
  request,
  signIn,
  T0,
  tempDir,
  type TestContracts,
  testConfig,
} from "./helpers";

const MAX_LAG_BLOCKS = 10;
const MAX_STALE_SECONDS = 30;

/** Log lines as parsed JSON objects (pino writes one per line). */
class LogLines extends Writable {
  readonly lines: { level: number; msg: string; [field: string]: unknown }[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString("utf8").split("\n")) if (line) this.lines.push(JSON.parse(line));
    done();
  }
  errors(): string[] {
    return this.lines.filter((line) => line.level >= 50).map((line) => line.msg);
  }
}

interface Harness {
  core: CoreServer;
  contracts: TestContracts;
  wall: ManualClock;
  logs: LogLines;
  tasks: BackgroundTasks;
  token: string;
  stop(): Promise<void>;
}

async function startHarness(overrides: OperatorConfigInput = {}): Promise<Harness> {
  const contracts = await deployTestContracts();
  const dir = tempDir();
  const config = testConfig(dir.path, {
    facilitators: [facilitator.address],
    backgroundTasks: false,
    indexerMaxLagBlocks: MAX_LAG_BLOCKS,
    indexerMaxStaleSeconds: MAX_STALE_SECONDS,
    ...overrides,
  });
  const logs = new LogLines();
  const logger = createLogger("info", logs);
  const wall = new ManualClock(T0);
  const chainSync = new ChainSyncMonitor({
    limits: { maxLagBlocks: config.indexerMaxLagBlocks, maxStaleSeconds: config.indexerMaxStaleSeconds },
    clock: wall,
    logger,
  });
  const core = await startCoreServer(config, {
    clock: new ManualClock(T0),
    logger,
    deployment: contracts.deployment,
    chain: hardhatChain(),
    services: { chainSync },
  });
  const tasks = await createBackgroundTasks({ ...core.context, provider: ethers.provider, wallClock: wall });
  const token = (await signIn(core.url, recipient)).access_token;
  return {
    core,
    contracts,
    wall,
    logs,
    tasks,
    token,
    stop: async () => {
      await core.close();
      dir.remove();
    },
  };
}

const openapi = new OpenApiChecker(CORE_OPENAPI);

let nextReqId = 1n;

/** One issuance request; the answer is checked against the OpenAPI document. */
async function issue(h: Harness, amount: bigint): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await request(h.core.url, "POST", "/core/guarantees", {
    json: await signedBody(v1Claims({ reqId: nextReqId++, amount })),
    headers: { authorization: `Bearer ${h.token}` },
  });
  openapi.check("POST", "/core/guarantees", response);
  return { status: response.status, body: response.body as Record<string, unknown> };
}

/** `GET /core/health`, checked against the OpenAPI document. */
async function health(h: Harness) {
  const response = await request(h.core.url, "GET", "/core/health");
  openapi.check("GET", "/core/health", response);
  return { status: response.status, body: response.body };
}

async function metrics(h: Harness): Promise<string> {
  return (await fetch(`${h.core.url}/metrics`)).text();
}

async function deposit(h: Harness, amount: bigint): Promise<void> {
  const vault = h.contracts.surety.vault.connect(new Wallet(payer.privateKey, ethers.provider));
  await (await vault.deposit({ value: amount })).wait();
}

describe("Core while its books cannot follow the chain", function () {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("halts after a reorg deeper than the kept history: health and issuance say so, logs do not flood", async function () {
    this.timeout(120_000);
    h = await startHarness();
    const snapshot = (await network.provider.send("evm_snapshot", [])) as string;
    await deposit(h, parseEther("1"));
    await mine(REORG_HISTORY_BLOCKS + 10);
    await h.tasks.indexer.syncToHead();
    expect(await h.core.context.store.operatorState.getOperatorState(JOURNAL_PRUNED_BELOW_KEY)).to.not.equal(
      null,
    );
    expect((await health(h)).status).to.equal(200);
    expect((await issue(h, parseEther("0.1"))).status).to.equal(200);

    // Another history from before the deposit, longer than everything Core remembers: on chain the
    // payer has no collateral at all, in Core's books still 1 ETH.
    await network.provider.send("evm_revert", [snapshot]);
    await mine(REORG_HISTORY_BLOCKS + 20);
    const vault = h.contracts.surety.vault;
    expect(await vault.balanceOf(payer.address, ZERO_ADDRESS)).to.equal(0n);
    for (let round = 0; round < 5; round++) await h.tasks.runOnce();
    expect(
      (await h.core.context.store.collateral.getCollateral(payer.address, ZERO_ADDRESS)).deposited,
    ).to.equal(parseEther("1"));

    const { status, body } = await health(h);
    expect(status).to.equal(503);
    expect(body).to.include({ status: "fail", db: "ok", chain_rpc: "ok", indexer: "fail" });
    expect(body.chain_sync).to.include({ state: "halted", max_lag_blocks: MAX_LAG_BLOCKS });
    expect(body.chain_sync.reason).to.match(/below the kept history/);
    const head = await ethers.provider.getBlockNumber();
    expect(body.chain_sync.head_block).to.equal(head);
    expect(body.chain_sync.lag_blocks).to.equal(Math.max(0, head - body.chain_sync.indexed_block));

    // Core's books would still cover it (0.9 ETH available): only the gate stands in the way.
    const refused = await issue(h, parseEther("0.5"));
    expect(refused.status).to.equal(500);
    expect(refused.body.code).to.equal("indexer_halted");
    expect(refused.body.error).to.match(/cannot check collateral against the chain now: the indexer halted/);
    expect(Object.keys(refused.body)).to.deep.equal(["error", "code"]);
    const viaFetch = await request(h.core.url, "POST", "/core/guarantees", {
      json: await signedBody(v1Claims({ reqId: nextReqId++, amount: 1n })),
      headers: { authorization: `Bearer ${h.token}` },
    });
    openapi.check("POST", "/core/guarantees", viaFetch);
    expect(viaFetch.status).to.equal(500);
    // Nothing was locked or stored by the refusals.
    expect(
      (await h.core.context.store.collateral.getCollateral(payer.address, ZERO_ADDRESS)).locked,
    ).to.equal(parseEther("0.1"));

    const text = await metrics(h);
    expect(text).to.include('surety_indexer_state{state="halted"} 1');
    expect(text).to.include('surety_indexer_state{state="ok"} 0');
    expect(text).to.match(/^surety_indexer_lag_blocks \d+$/m);
    expect(text).to.match(/surety_guarantees_rejected_total\{reason="indexer_halted"\} 2/);

    // Five failing rounds: one line for the state change, one for the task failure; no refusal logged.
    const [changed, failed, ...more] = h.logs.errors();
    expect(changed).to.match(
      /^chain sync halted, issuance refused until an operator acts: the indexer halted/,
    );
    expect(failed).to.equal("background task failed; retrying next round");
    expect(more).to.deep.equal([]);
    // Then at a bounded rate while it repeats.
    h.wall.advance(59);
    await h.tasks.runOnce();
    expect(h.logs.errors()).to.have.length(2);
    h.wall.advance(1);
    await h.tasks.runOnce();
    expect(h.logs.errors()).to.have.length(3);
    expect(h.logs.lines.filter((line) => line.level >= 50).at(-1)).to.include({
      task: "indexer",
      failures: 7,
      suppressed: 5,
    });
  });

  it("refuses while the books lag more blocks than the bound, and resumes once caught up", async function () {
    h = await startHarness({ indexerMaxBlocksPerTick: 5 });
    await deposit(h, 10_000n);
    await h.tasks.indexer.syncToHead();
    expect((await issue(h, 100n)).status).to.equal(200);

    await mine(30);
    await h.tasks.indexer.tick(); // 5 of the 30 blocks: 25 behind
    const { status, body } = await health(h);
    expect(status).to.equal(503);
    expect(body).to.include({ status: "fail", indexer: "fail" });
    expect(body.chain_sync).to.include({ state: "lagging", lag_blocks: 25, max_lag_blocks: MAX_LAG_BLOCKS });
    expect(body.chain_sync.reason).to.equal("the books are 25 blocks behind the confirmed head (bound 10)");
    const refused = await issue(h, 100n);
    expect(refused).to.deep.include({ status: 500 });
    expect(refused.body.code).to.equal("indexer_lagging");
    expect(await metrics(h)).to.match(/^surety_indexer_lag_blocks 25$/m);

    await h.tasks.indexer.tick();
    await h.tasks.indexer.tick();
    await h.tasks.indexer.tick(); // 10 behind: within the bound
    expect((await health(h)).body.chain_sync).to.include({ state: "ok", lag_blocks: 10 });
    expect((await issue(h, 100n)).status).to.equal(200);
    await h.tasks.indexer.syncToHead();
    expect((await health(h)).body).to.include({ status: "ok", indexer: "ok" });
    expect(h.logs.lines.map((line) => line.msg)).to.include.members([
      "chain sync lagging, issuance refused: the books are 25 blocks behind the confirmed head (bound 10)",
      "chain sync recovered: issuance resumed",
    ]);
  });

  it("refuses before the first tick and when the last successful tick is too old", async function () {
    h = await startHarness();
    await deposit(h, 10_000n);
    const starting = await health(h);
    expect(starting.status).to.equal(503);
    expect(starting.body.chain_sync).to.include({ state: "starting", last_synced_at: null });
    expect((await issue(h, 100n)).body.code).to.equal("indexer_starting");

    await h.tasks.indexer.syncToHead();
    expect((await issue(h, 100n)).status).to.equal(200);
    h.wall.advance(MAX_STALE_SECONDS);
    expect((await health(h)).status).to.equal(200);
    h.wall.advance(1);
    const stale = await health(h);
    expect(stale.status).to.equal(503);
    expect(stale.body.chain_sync).to.include({
      state: "stale",
      seconds_since_sync: MAX_STALE_SECONDS + 1,
      last_synced_at: new Date(T0 * 1000).toISOString(),
    });
    expect((await issue(h, 100n)).body.code).to.equal("indexer_stale");
    expect(await metrics(h)).to.match(/^surety_indexer_seconds_since_sync 31$/m);

    await h.tasks.indexer.tick();
    expect((await health(h)).status).to.equal(200);
    expect((await issue(h, 100n)).status).to.equal(200);
  });

  it("a retry of an issued guarantee gets its 409 and certificate while issuance is refused", async function () {
    h = await startHarness();
    await deposit(h, 10_000n);
    await h.tasks.indexer.syncToHead();
    const post = async (json: unknown) =>
      request(h!.core.url, "POST", "/core/guarantees", {
        json,
        headers: { authorization: `Bearer ${h!.token}` },
      });
    const body = await signedBody(v1Claims({ reqId: nextReqId++, amount: 100n }));
    const first = await post(body);
    expect(first.status).to.equal(200);
    h.wall.advance(MAX_STALE_SECONDS + 1);
    expect((await issue(h, 100n)).body.code).to.equal("indexer_stale");
    // The identity is answered before the refusal (operator/guarantees/issuance.ts, step 5).
    const retry = await post(body);
    openapi.check("POST", "/core/guarantees", retry);
    expect(retry.status).to.equal(409);
    expect(retry.body).to.deep.include({ code: "duplicate_guarantee", certificate: first.body });
  });

  it("a Core that runs no indexer reports it off and does not gate issuance", async function () {
    const contracts = await deployTestContracts();
    const dir = tempDir();
    const core = await startCoreServer(testConfig(dir.path, { facilitators: [facilitator.address] }), {
      logger: createLogger("silent"),
      deployment: contracts.deployment,
      chain: hardhatChain(),
    });
    try {
      const response = await request(core.url, "GET", "/core/health");
      expect(response.status).to.equal(200);
      expect(response.body).to.include({ status: "ok", indexer: "off" });
      expect(response.body.chain_sync).to.include({ state: "off", reason: null });
    } finally {
      await core.close();
      dir.remove();
    }
  });
});
