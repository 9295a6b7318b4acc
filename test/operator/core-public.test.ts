import { expect } from "chai";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ethers } from "hardhat";
import { captureLogs } from "../support/log-capture";
import { time } from "@nomicfoundation/hardhat-network-helpers";
import { DEFAULT_TIMINGS, deployVault, writeDeployment } from "../../scripts/deploy";
import {
  blsKeyFromSecret,
  publicKeyFromEip2537,
  publicKeyToEip2537,
  publicKeyFromArray,
} from "../../sdk/bls";
import { certificateDomain, VALIDATION_HASH_CANONICALIZATION_VERSION } from "../../sdk/ids";
import { RpcChainGateway } from "../../operator/chain";
import { DeploymentError, loadDeployment, parseDeployment } from "../../operator/deployment";
import { silentLogger } from "../../operator/logger";
import { startCoreServer } from "../../operator/server";
import { StartupError } from "../../operator/startup";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { NEXT_CUTOFF_KEY } from "../../operator/clearing/scheduler";
import {
  deployTestContracts,
  hardhatChain,
  request,
  signIn,
  startTestCore,
  T0,
  TEST_BLS_PUBLIC_KEY,
  TEST_CHAIN_ID,
  TEST_DEPLOYMENT,
  type TestContracts,
  tempDir,
  testConfig,
  type TestCore,
} from "./helpers";
import { issue, payer, recipient, signedBody, v1Claims, v2Claims } from "./guarantee-fixtures";

/** A real JSON-RPC endpoint over HTTP, answered by the in-process Hardhat network; stop it to make the RPC unreachable. */
async function startRpcProxy(): Promise<{ url: string; server: Server; stop(): Promise<void> }> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", async () => {
      const call = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      const result = await ethers.provider.send(call.method, call.params);
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("Core public endpoints", () => {
  let t: TestCore;
  let url: string;

  beforeEach(async () => {
    t = await startTestCore();
    url = t.core.url;
  });

  afterEach(async () => {
    await t.stop();
  });

  it("GET /core/tokens: 200 {chain_id, tokens[{symbol, address, decimals}]}", async () => {
    const response = await request(url, "GET", "/core/tokens");
    expect(response.status).to.equal(200);
    expect(response.body).to.deep.equal({
      chain_id: TEST_CHAIN_ID,
      tokens: [
        { symbol: "tUSD", address: TEST_DEPLOYMENT.tokens[0].address, decimals: 6 },
        { symbol: "tETH", address: TEST_DEPLOYMENT.tokens[1].address, decimals: 18 },
      ],
    });
    const [usd, teth] = t.contracts.surety.testTokens;
    expect([await usd.getAddress(), await usd.symbol(), await usd.decimals()]).to.deep.equal([
      TEST_DEPLOYMENT.tokens[0].address,
      "tUSD",
      6n,
    ]);
    expect(await t.contracts.surety.vault.isTokenAllowed(await teth.getAddress())).to.equal(true);
  });

  it("GET /core/public-params: 200 with every field of the spec, typed", async () => {
    const response = await request(url, "GET", "/core/public-params");
    expect(response.status).to.equal(200);
    const p = response.body;
    expect(Object.keys(p).sort()).to.deep.equal(
      [
        "public_key",
        "contract_address",
        "ethereum_http_rpc_url",
        "eip712_name",
        "eip712_version",
        "chain_id",
        "max_accepted_guarantee_version",
        "accepted_guarantee_versions",
        "active_guarantee_domain_separator",
        "trusted_validation_registries",
        "validation_hash_canonicalization_version",
        // Additions (docs/operator-api.md)
        "clearing_house_address",
        "protocol_timings",
        "latest_validation_deadline",
      ].sort(),
    );
    expect(response.headers.get("cache-control")).to.equal("no-store");
    expect(p.public_key).to.be.an("array").with.length(96);
    expect(
      p.public_key.every((b: unknown) => Number.isInteger(b) && (b as number) >= 0 && (b as number) <= 255),
    ).to.be.true;
    const expectedKey = blsKeyFromSecret(t.config.blsSecret).publicKey;
    expect(publicKeyFromArray(p.public_key)).to.deep.equal(expectedKey);
    expect(expectedKey).to.deep.equal(TEST_BLS_PUBLIC_KEY); // the key the Vault holds
    expect(p.contract_address).to.equal(TEST_DEPLOYMENT.vault);
    expect(p.ethereum_http_rpc_url).to.equal(t.config.rpcUrl);
    expect(p.eip712_name).to.equal("Surety");
    expect(p.eip712_version).to.equal("1");
    expect(p.chain_id).to.equal(TEST_CHAIN_ID);
    expect(p.max_accepted_guarantee_version).to.equal(2);
    expect(p.accepted_guarantee_versions).to.deep.equal([1, 2]);
    expect(p.active_guarantee_domain_separator).to.equal(
      certificateDomain({ chainId: TEST_CHAIN_ID, vault: TEST_DEPLOYMENT.vault }),
    );
    expect(p.trusted_validation_registries).to.deep.equal(TEST_DEPLOYMENT.trustedRegistries);
    expect(p.validation_hash_canonicalization_version).to.equal(VALIDATION_HASH_CANONICALIZATION_VERSION);
  });

  it("GET /core/public-params: the ClearingHouse, the Vault's timings and the V2 deadline cap issuance applies", async () => {
    // No background tasks in this Core: the timings are not read until asked (then there is no cap).
    const unloaded = (await request(url, "GET", "/core/public-params")).body;
    expect(unloaded).to.include({ protocol_timings: null, latest_validation_deadline: null });
    expect(unloaded.clearing_house_address).to.equal(TEST_DEPLOYMENT.clearingHouse);

    const vault = t.contracts.surety.vault;
    await t.core.context.timings.load(ethers.provider, await vault.getAddress());
    const onChain = await vault.timings();
    const p = (await request(url, "GET", "/core/public-params")).body;
    expect(p.protocol_timings).to.deep.equal({
      cycle_length_seconds: Number(onChain.cycleLength),
      commit_delay_seconds: Number(onChain.commitDelay),
      challenge_window_seconds: Number(onChain.challengeWindow),
      payment_window_seconds: Number(onChain.paymentWindow),
      default_window_seconds: Number(onChain.defaultWindow),
      withdrawal_grace_period_seconds: Number(onChain.withdrawalGracePeriod),
      confirmation_lag_seconds: Number(onChain.confirmationLag),
    });
    const latest = p.latest_validation_deadline as number;
    expect(latest).to.be.a("number").greaterThan(T0);

    // What is published is exactly what issuance accepts: the latest itself passes, one second more not.
    await t.core.context.store.collateral.creditDeposit(payer.address, ZERO_ADDRESS, 10_000n, T0);
    const token = (await signIn(url, recipient)).access_token;
    const atCap = await issue(url, token, await signedBody(v2Claims({ reqId: 71n }, { deadline: latest })));
    expect(atCap.status).to.equal(200);
    const beyond = await issue(
      url,
      token,
      await signedBody(v2Claims({ reqId: 72n }, { deadline: latest + 1 })),
    );
    expect(beyond.status).to.equal(400);
    expect(beyond.body.code).to.equal("validation_deadline_too_far");
    expect(beyond.body.error).to.include(`latest accepted: ${latest}`);
    // It moves with the chain time Core has indexed (this test Core's chain clock is its manual clock).
    t.clock.advance(10);
    expect((await request(url, "GET", "/core/public-params")).body.latest_validation_deadline).to.equal(
      latest + 10,
    );
  });

  it("GET /core/clearing/schedule: chain time, the stored next cutoff, the commit due after it, a cycle under way", async () => {
    const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
    // Before the scheduler's first run and before the timings are read: what is unknown is null.
    const first = await request(url, "GET", "/core/clearing/schedule");
    expect(first.status).to.equal(200);
    expect(first.headers.get("cache-control")).to.equal("no-store");
    expect(first.body).to.deep.equal({
      chain_time: iso(T0),
      cycle_length_seconds: null,
      commit_delay_seconds: null,
      next_cutoff: null,
      next_commit_by: null,
      seconds_to_cutoff: null,
      pending_cycle: null,
      latest_committed_cycle_id: 0,
    });

    const vault = t.contracts.surety.vault;
    const timings = await t.core.context.timings.load(ethers.provider, await vault.getAddress());
    const store = t.core.context.store;
    await store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(T0 + 40));
    await store.cycles.insertCycle({
      cycleId: 1,
      state: "SENT",
      root: "0x" + "11".repeat(32),
      treeDump: "null",
      args: "[]",
      guaranteeIds: [],
      cutoff: T0 - 20,
      plannedAt: T0 - 19,
      txHash: "0x" + "ab".repeat(32),
      txNonce: 0,
      rawTx: null,
      sentAt: T0 - 18,
      committedBlock: null,
      committedAt: null,
      paymentDeadline: null,
      defaultDeadline: null,
      finalizedAt: null,
      challengeDeadline: null,
      answerDeadline: null,
      vetoedAt: null,
      plannedByCore: true,
    });
    t.clock.advance(10); // chain time (this Core's chain clock is its manual clock)
    const later = (await request(url, "GET", "/core/clearing/schedule")).body;
    expect(later).to.deep.equal({
      chain_time: iso(T0 + 10),
      cycle_length_seconds: timings.cycleLength,
      commit_delay_seconds: timings.commitDelay,
      next_cutoff: iso(T0 + 40),
      next_commit_by: iso(T0 + 40 + timings.commitDelay),
      seconds_to_cutoff: 30,
      pending_cycle: {
        cycle_id: 1,
        state: "SENT",
        cutoff: iso(T0 - 20),
        planned_at: iso(T0 - 19),
        commit_tx: "0x" + "ab".repeat(32),
        sent_at: iso(T0 - 18),
      },
      latest_committed_cycle_id: 0,
    });
    // Seen committed: no longer under way, and the latest committed id.
    await store.cycles.updateCycle(1, { state: "COMMITTED", committedAt: T0 + 5, committedBlock: 9 });
    expect((await request(url, "GET", "/core/clearing/schedule")).body).to.include({
      pending_cycle: null,
      latest_committed_cycle_id: 1,
    });
  });

  describe("GET /core/health", () => {
    it("200 when the store and the chain answer", async () => {
      const response = await request(url, "GET", "/core/health");
      expect(response.status).to.equal(200);
      expect(response.body).to.include({ status: "ok", db: "ok", chain_rpc: "ok", indexer: "off" });
      expect(response.headers.get("cache-control")).to.equal("no-store");
    });

    it("503 with db fail when the store is down", async () => {
      await t.core.context.store.close();
      const response = await request(url, "GET", "/core/health");
      expect(response.status).to.equal(503);
      expect(response.body).to.include({ status: "fail", db: "fail", chain_rpc: "ok", indexer: "off" });
    });
  });

  it("GET /metrics: request, issuance and locked-collateral series", async () => {
    const store = t.core.context.store;
    await store.collateral.creditDeposit(payer.address, ZERO_ADDRESS, 5_000n, T0);
    const token = (await signIn(url, recipient)).access_token;
    expect((await issue(url, token, await signedBody(v1Claims({ amount: 1_234n })))).status).to.equal(200);
    expect(
      (await issue(url, token, await signedBody(v1Claims({ reqId: 2n, amount: 9_999n })))).status,
    ).to.equal(400);
    await request(url, "GET", "/core/tokens");
    const response = await fetch(url + "/metrics");
    expect(response.status).to.equal(200);
    expect(response.headers.get("content-type")).to.match(/^text\/plain/);
    const text = await response.text();
    expect(text).to.match(
      /surety_http_requests_total\{method="POST",route="\/core\/guarantees",status="200"\} 1/,
    );
    expect(text).to.match(/surety_http_requests_total\{method="GET",route="\/core\/tokens",status="200"\} 1/);
    expect(text).to.match(
      /surety_http_request_duration_seconds_bucket\{le="0.025",method="POST",route="\/core\/guarantees"/,
    );
    expect(text).to.match(/surety_guarantees_issued_total\{version="1",scheme="eip712"\} 1/);
    expect(text).to.match(/surety_guarantees_rejected_total\{reason="insufficient_collateral"\} 1/);
    expect(text).to.include(`surety_collateral_locked{asset="${ZERO_ADDRESS}"} 1234`);
    expect(text).to.include("surety_core_process_cpu_seconds_total");
  });
});

/** What a loaded CI host may add to a real-time bound without the test changing its verdict. */
const STALL_MARGIN_MS = 3_000;

describe("Core health against a JSON-RPC URL", () => {
  let deployment: TestContracts["deployment"];
  before(async () => {
    ({ deployment } = await deployTestContracts());
  });

  it("503 with chain_rpc fail once the RPC endpoint is unreachable, within the bound", async function () {
    this.timeout(20_000);
    const rpc = await startRpcProxy();
    const dir = tempDir();
    // The probes' longest bound (HEALTH_PROBE_TIMEOUT_MS): the first, healthy, answer survives a stalled host.
    const config = testConfig(dir.path, { rpcUrl: rpc.url, rpcTimeoutMs: 2_000, backgroundTasks: false });
    const core = await startCoreServer(config, { logger: silentLogger(), deployment });
    try {
      const healthy = await request(core.url, "GET", "/core/health");
      expect(healthy.body).to.include({ status: "ok", db: "ok", chain_rpc: "ok" });
      await rpc.stop();
      const started = Date.now();
      const response = await request(core.url, "GET", "/core/health");
      expect(response.status).to.equal(503);
      expect(response.body).to.include({ status: "fail", db: "ok", chain_rpc: "fail" });
      // A refused connection answers at once; never later than the 2 s bound, give or take a stalled host.
      expect(Date.now() - started).to.be.below(2_000 + STALL_MARGIN_MS);
    } finally {
      await core.close();
      await rpc.stop();
      dir.remove();
    }
  });

  it("a hung RPC endpoint answers fail after the timeout", async function () {
    this.timeout(20_000);
    const rpc = await startRpcProxy();
    const dir = tempDir();
    const config = testConfig(dir.path, { rpcUrl: rpc.url, rpcTimeoutMs: 500, backgroundTasks: false });
    const { logger, lines } = captureLogs("warn");
    const core = await startCoreServer(config, { logger, deployment });
    try {
      rpc.server.removeAllListeners("request");
      rpc.server.on("request", () => undefined); // accepts, never answers
      const started = Date.now();
      const response = await request(core.url, "GET", "/core/health");
      expect(response.body).to.include({ status: "fail", db: "ok", chain_rpc: "fail" });
      // It waited for the configured timeout (a stalled host only makes it longer) and gave up on it, not on the
      // 2 s cap: the failure's reason names the timeout (judged by what Core says, not by the wall clock).
      expect(Date.now() - started).to.be.at.least(400);
      const failed = lines.find((l) => l.msg === "health check failed");
      expect(failed?.reasons).to.have.length(1);
      expect(String((failed!.reasons as string[])[0])).to.match(/within 500 ms/);
    } finally {
      await core.close();
      await rpc.stop();
      dir.remove();
    }
  });
});

describe("Core startup", () => {
  let dir: ReturnType<typeof tempDir>;
  let contracts: TestContracts;
  before(async () => {
    contracts = await deployTestContracts();
  });
  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir.remove());

  async function startupError(run: () => Promise<unknown>): Promise<Error> {
    let caught: unknown;
    await run().catch((error) => (caught = error));
    expect(caught, "expected startup to fail").to.be.instanceOf(Error);
    return caught as Error;
  }

  it("loads deployments/<network>.json as written by scripts/deploy.ts", async () => {
    const file = writeDeployment("hardhat", contracts.surety.record, dir.path);
    expect(loadDeployment(file)).to.deep.equal(contracts.deployment);
    expect(contracts.deployment.vaultDeployBlock).to.equal(
      contracts.surety.record.contracts.Vault.blockNumber,
    );
    const core = await startCoreServer(testConfig(dir.path, { deploymentFile: file }), {
      logger: silentLogger(),
      chain: hardhatChain(),
    });
    try {
      expect((await request(core.url, "GET", "/core/tokens")).body.tokens).to.have.length(2);
      expect((await request(core.url, "GET", "/core/public-params")).body.contract_address).to.equal(
        await contracts.surety.vault.getAddress(),
      );
    } finally {
      await core.close();
    }
  });

  it("refuses to start without a readable, valid deployment file, naming file and field", async () => {
    const missing = join(dir.path, "nope.json");
    const error = await startupError(() =>
      startCoreServer(testConfig(dir.path, { deploymentFile: missing }), {}),
    );
    expect(error).to.be.instanceOf(DeploymentError);
    expect(error.message).to.include(missing).and.include("ENOENT");

    const file = join(dir.path, "bad.json");
    writeFileSync(file, "{not json");
    expect(() => loadDeployment(file)).to.throw(DeploymentError, /not valid JSON/);
    const json = contracts.json;
    const [usd] = json.tokens as Record<string, unknown>[];
    const cases: [unknown, RegExp][] = [
      [{ ...json, contracts: {} }, /contracts\.Vault: must be an object/],
      [{ ...json, chainId: "31337" }, /chainId: must be a number/],
      [{ ...json, tokens: [{ address: "0x12", symbol: "X", decimals: 6 }] }, /tokens\[0\]\.address/],
      [{ ...json, tokens: [{ ...usd, decimals: 300 }] }, /tokens\[0\]\.decimals/],
      [{ ...json, tokens: [{ ...usd, address: ZERO_ADDRESS }] }, /zero address/],
      [{ ...json, tokens: [usd, usd] }, /listed twice/],
    ];
    for (const [value, message] of cases) {
      writeFileSync(file, JSON.stringify(value));
      expect(() => loadDeployment(file)).to.throw(DeploymentError, message);
    }
    expect(parseDeployment(json).vault).to.equal(TEST_DEPLOYMENT.vault);
  });

  it("refuses a deployment file of another chain", async () => {
    const deployment = { ...contracts.deployment, chainId: 1 };
    const error = await startupError(() =>
      startCoreServer(testConfig(dir.path), { deployment, chain: hardhatChain() }),
    );
    expect(error).to.be.instanceOf(StartupError);
    expect(error.message).to.match(/is for chain 1, but SURETY_CHAIN_ID is 31337/);
  });

  it("refuses a node on another chain", async () => {
    const config = testConfig(dir.path, { chainId: 5 });
    const error = await startupError(() =>
      startCoreServer(config, { deployment: { ...contracts.deployment, chainId: 5 }, chain: hardhatChain() }),
    );
    expect(error).to.be.instanceOf(StartupError);
    expect(error.message).to.match(/is on chain 31337, but SURETY_CHAIN_ID is 5/);
  });

  it("refuses an unreachable RPC", async () => {
    const rpc = await startRpcProxy();
    await rpc.stop();
    const config = testConfig(dir.path, { rpcUrl: rpc.url, rpcTimeoutMs: 500 });
    const error = await startupError(() => startCoreServer(config, { deployment: contracts.deployment }));
    expect(error).to.be.instanceOf(StartupError);
    expect(error.message).to.include(`cannot read the chain id from ${rpc.url}`);
  });

  describe("Vault key check", () => {
    it("starts when the Vault's operator key is Core's key", async () => {
      const onChain = await contracts.surety.vault.operatorKey();
      expect(await contracts.surety.vault.operatorKeySet()).to.equal(true);
      expect(publicKeyFromEip2537(onChain)).to.deep.equal(TEST_BLS_PUBLIC_KEY);
      const core = await startCoreServer(testConfig(dir.path), {
        logger: silentLogger(),
        deployment: contracts.deployment,
        chain: hardhatChain(),
      });
      try {
        const params = await request(core.url, "GET", "/core/public-params");
        expect(publicKeyFromArray(params.body.public_key)).to.deep.equal(TEST_BLS_PUBLIC_KEY);
      } finally {
        await core.close();
      }
    });

    it("refuses a Vault without an operator key, naming Core's key to set", async () => {
      const [admin] = await ethers.getSigners();
      const keyless = await deployVault(admin, {
        admin: admin.address,
        adminTransferDelay: 0,
        timings: DEFAULT_TIMINGS,
      });
      const vault = await keyless.getAddress();
      const error = await startupError(() =>
        startCoreServer(testConfig(dir.path), {
          deployment: { ...contracts.deployment, vault },
          chain: hardhatChain(),
        }),
      );
      expect(error).to.be.instanceOf(StartupError);
      expect(error.message).to.include(`the Vault at ${vault} has no operator BLS key`);
      expect(error.message).to.include("0x" + Buffer.from(TEST_BLS_PUBLIC_KEY).toString("hex"));
    });

    it("refuses when Core's key (SURETY_BLS_SECRET) is not the Vault's", async () => {
      const config = testConfig(dir.path, { blsSecret: "0x" + "43".repeat(32) });
      const error = await startupError(() =>
        startCoreServer(config, { deployment: contracts.deployment, chain: hardhatChain() }),
      );
      expect(error).to.be.instanceOf(StartupError);
      expect(error.message).to.match(/is not the Vault's operator key/);
      expect(error.message).to.include("0x" + Buffer.from(TEST_BLS_PUBLIC_KEY).toString("hex"));
    });

    it("refuses an EIP-712 name or version other than the Vault's (payer signatures would not verify on chain)", async () => {
      for (const overrides of [{ eip712Name: "Other" }, { eip712Version: "2" }]) {
        const error = await startupError(() =>
          startCoreServer(testConfig(dir.path, overrides), {
            deployment: contracts.deployment,
            chain: hardhatChain(),
          }),
        );
        expect(error).to.be.instanceOf(StartupError);
        expect(error.message).to.match(/is not the Vault's .*name "Surety", version "1"/);
      }
    });

    it("refuses a Vault still in setup (grants and key changes would be immediate)", async () => {
      const [admin] = await ethers.getSigners();
      const open = await deployVault(admin, {
        admin: admin.address,
        adminTransferDelay: 0,
        timings: DEFAULT_TIMINGS,
      });
      await (await open.setOperatorKey(publicKeyToEip2537(TEST_BLS_PUBLIC_KEY))).wait();
      const vault = await open.getAddress();
      const error = await startupError(() =>
        startCoreServer(testConfig(dir.path), {
          deployment: { ...contracts.deployment, vault },
          chain: hardhatChain(),
        }),
      );
      expect(error).to.be.instanceOf(StartupError);
      expect(error.message).to.include(`the Vault at ${vault} is still in setup`);
    });

    it("refuses once the Vault's key was rotated away from Core's", async () => {
      const rotated = blsKeyFromSecret("0x" + "44".repeat(32)).publicKey;
      // After setup a new key is scheduled and executed once the Vault's timelock delay has passed.
      const { vault } = contracts.surety;
      await (await vault.setOperatorKey(publicKeyToEip2537(rotated))).wait(); // schedules
      await time.increase(await vault.timelockDelay());
      await (await vault.setOperatorKey(publicKeyToEip2537(rotated))).wait(); // executes
      try {
        const error = await startupError(() =>
          startCoreServer(testConfig(dir.path), { deployment: contracts.deployment, chain: hardhatChain() }),
        );
        expect(error).to.be.instanceOf(StartupError);
        expect(error.message).to.include(
          `is not the Vault's operator key 0x${Buffer.from(rotated).toString("hex")}`,
        );
      } finally {
        await deployTestContracts(); // back to Core's key for the tests after this one
      }
    });

    it("refuses a Vault address without a contract", async () => {
      const deployment = { ...contracts.deployment, vault: "0x" + "11".repeat(20) };
      const error = await startupError(() =>
        startCoreServer(testConfig(dir.path), { deployment, chain: hardhatChain() }),
      );
      expect(error).to.be.instanceOf(StartupError);
      expect(error.message).to.match(/no contract at the Vault address/);
    });
  });

  it("RpcChainGateway reads chain id and block number from a real node", async () => {
    const gateway = new RpcChainGateway(ethers.provider, { timeoutMs: 1_000 });
    expect(await gateway.chainId()).to.equal(TEST_CHAIN_ID);
    expect(await gateway.blockNumber()).to.equal(await ethers.provider.getBlockNumber());
    await gateway.close();
    let caught: unknown;
    await gateway.chainId().catch((error) => (caught = error));
    expect(String(caught)).to.match(/closed/);
  });
});
