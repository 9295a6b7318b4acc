import { expect } from "chai";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ethers } from "hardhat";
import { publicKeyFromArray, blsKeyFromSecret } from "../../sdk/bls";
import { certificateDomain, VALIDATION_HASH_CANONICALIZATION_VERSION } from "../../sdk/ids";
import { RpcChainGateway } from "../../operator/chain";
import { DeploymentError, loadDeployment, parseDeployment } from "../../operator/deployment";
import { silentLogger } from "../../operator/logger";
import { startCoreServer } from "../../operator/server";
import { StartupError } from "../../operator/startup";
import { ZERO_ADDRESS } from "../../sdk/wire";
import {
  hardhatChain,
  request,
  signIn,
  startTestCore,
  T0,
  TEST_CHAIN_ID,
  TEST_DEPLOYMENT,
  TEST_DEPLOYMENT_JSON,
  tempDir,
  testConfig,
  type TestCore,
} from "./helpers";
import { issue, payer, recipient, signedBody, v1Claims } from "./guarantee-fixtures";

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
      tokens: TEST_DEPLOYMENT_JSON.tokens.map(({ symbol, address, decimals }) => ({
        symbol,
        address,
        decimals,
      })),
    });
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
      ].sort(),
    );
    expect(p.public_key).to.be.an("array").with.length(48);
    expect(
      p.public_key.every((b: unknown) => Number.isInteger(b) && (b as number) >= 0 && (b as number) <= 255),
    ).to.be.true;
    const expectedKey = blsKeyFromSecret(t.config.blsSecret).publicKey;
    expect(publicKeyFromArray(p.public_key)).to.deep.equal(expectedKey);
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

  describe("GET /core/health", () => {
    it("200 when the store and the chain answer", async () => {
      const response = await request(url, "GET", "/core/health");
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ status: "ok", db: "ok", chain_rpc: "ok" });
      expect(response.headers.get("cache-control")).to.equal("no-store");
    });

    it("503 with db fail when the store is down", async () => {
      await t.core.context.store.close();
      const response = await request(url, "GET", "/core/health");
      expect(response.status).to.equal(503);
      expect(response.body).to.deep.equal({ status: "fail", db: "fail", chain_rpc: "ok" });
    });
  });

  it("GET /metrics: request, issuance and locked-collateral series", async () => {
    const store = t.core.context.store;
    await store.creditDeposit(payer.address, ZERO_ADDRESS, 5_000n, T0);
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

describe("Core health against a JSON-RPC URL", () => {
  it("503 with chain_rpc fail once the RPC endpoint is unreachable, within the bound", async function () {
    this.timeout(20_000);
    const rpc = await startRpcProxy();
    const dir = tempDir();
    const config = testConfig(dir.path, { rpcUrl: rpc.url, rpcTimeoutMs: 1_000 });
    const core = await startCoreServer(config, {
      logger: silentLogger(),
      deployment: TEST_DEPLOYMENT,
      vaultKeyCheck: "skip",
    });
    try {
      const healthy = await request(core.url, "GET", "/core/health");
      expect(healthy.body).to.deep.equal({ status: "ok", db: "ok", chain_rpc: "ok" });
      await rpc.stop();
      const started = Date.now();
      const response = await request(core.url, "GET", "/core/health");
      expect(response.status).to.equal(503);
      expect(response.body).to.deep.equal({ status: "fail", db: "ok", chain_rpc: "fail" });
      expect(Date.now() - started).to.be.below(2_500);
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
    const config = testConfig(dir.path, { rpcUrl: rpc.url, rpcTimeoutMs: 500 });
    const core = await startCoreServer(config, {
      logger: silentLogger(),
      deployment: TEST_DEPLOYMENT,
      vaultKeyCheck: "skip",
    });
    try {
      rpc.server.removeAllListeners("request");
      rpc.server.on("request", () => undefined); // accepts, never answers
      const started = Date.now();
      const response = await request(core.url, "GET", "/core/health");
      expect(response.body).to.deep.equal({ status: "fail", db: "ok", chain_rpc: "fail" });
      expect(Date.now() - started).to.be.within(400, 2_000);
    } finally {
      await core.close();
      await rpc.stop();
      dir.remove();
    }
  });
});

describe("Core startup", () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir.remove());

  async function startupError(run: () => Promise<unknown>): Promise<Error> {
    let caught: unknown;
    await run().catch((error) => (caught = error));
    expect(caught, "expected startup to fail").to.be.instanceOf(Error);
    return caught as Error;
  }

  it("loads deployments/<network>.json as written by scripts/deploy.ts", async () => {
    const file = join(dir.path, "hardhat.json");
    writeFileSync(file, JSON.stringify(TEST_DEPLOYMENT_JSON));
    const core = await startCoreServer(testConfig(dir.path, { deploymentFile: file }), {
      logger: silentLogger(),
      chain: hardhatChain(),
      vaultKeyCheck: "skip",
    });
    try {
      expect((await request(core.url, "GET", "/core/tokens")).body.tokens).to.have.length(2);
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
    const cases: [unknown, RegExp][] = [
      [{ ...TEST_DEPLOYMENT_JSON, contracts: {} }, /contracts\.Vault: must be an object/],
      [{ ...TEST_DEPLOYMENT_JSON, chainId: "31337" }, /chainId: must be a number/],
      [
        { ...TEST_DEPLOYMENT_JSON, tokens: [{ address: "0x12", symbol: "X", decimals: 6 }] },
        /tokens\[0\]\.address/,
      ],
      [
        { ...TEST_DEPLOYMENT_JSON, tokens: [{ ...TEST_DEPLOYMENT_JSON.tokens[0], decimals: 300 }] },
        /tokens\[0\]\.decimals/,
      ],
      [
        { ...TEST_DEPLOYMENT_JSON, tokens: [{ ...TEST_DEPLOYMENT_JSON.tokens[0], address: ZERO_ADDRESS }] },
        /zero address/,
      ],
      [
        { ...TEST_DEPLOYMENT_JSON, tokens: [TEST_DEPLOYMENT_JSON.tokens[0], TEST_DEPLOYMENT_JSON.tokens[0]] },
        /listed twice/,
      ],
    ];
    for (const [json, message] of cases) {
      writeFileSync(file, JSON.stringify(json));
      expect(() => loadDeployment(file)).to.throw(DeploymentError, message);
    }
    expect(parseDeployment(TEST_DEPLOYMENT_JSON).vault).to.equal(
      TEST_DEPLOYMENT_JSON.contracts.Vault.address,
    );
  });

  it("refuses a deployment file of another chain", async () => {
    const deployment = { ...TEST_DEPLOYMENT, chainId: 1 };
    const error = await startupError(() =>
      startCoreServer(testConfig(dir.path), { deployment, chain: hardhatChain(), vaultKeyCheck: "skip" }),
    );
    expect(error).to.be.instanceOf(StartupError);
    expect(error.message).to.match(/is for chain 1, but SURETY_CHAIN_ID is 31337/);
  });

  it("refuses a node on another chain", async () => {
    const config = testConfig(dir.path, { chainId: 5 });
    const error = await startupError(() =>
      startCoreServer(config, { deployment: { ...TEST_DEPLOYMENT, chainId: 5 }, chain: hardhatChain() }),
    );
    expect(error).to.be.instanceOf(StartupError);
    expect(error.message).to.match(/is on chain 31337, but SURETY_CHAIN_ID is 5/);
  });

  it("refuses an unreachable RPC", async () => {
    const rpc = await startRpcProxy();
    await rpc.stop();
    const config = testConfig(dir.path, { rpcUrl: rpc.url, rpcTimeoutMs: 500 });
    const error = await startupError(() => startCoreServer(config, { deployment: TEST_DEPLOYMENT }));
    expect(error).to.be.instanceOf(StartupError);
    expect(error.message).to.include(`cannot read the chain id from ${rpc.url}`);
  });

  it("with the Vault key check enforced, refuses a Vault address without a contract", async () => {
    // TODO(contracts merge): deploy the Vault (deploySurety) and cover "key not set", "key differs" and "key equal".
    const error = await startupError(() =>
      startCoreServer(testConfig(dir.path), { deployment: TEST_DEPLOYMENT, chain: hardhatChain() }),
    );
    expect(error).to.be.instanceOf(StartupError);
    expect(error.message).to.match(/no contract at the Vault address/);
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
