/**
 * The facilitator against a REAL Core (operator/server.ts on the deployed
 * test contracts): the Core client's SIWE session (sign-in, token reuse,
 * refresh before expiry, sign-in again when the session is gone), the public
 * params cache (TTL on an injected clock, stale params on failure, fresh
 * params for health), settlement end to end (certificate checked against
 * Core's key and the Vault's, idempotent retry, Core's refusals passed
 * through, Core down), plus transport deadlines. Core's clock and the
 * facilitator's are separate manual clocks, as on two machines. Settlement
 * runs on collateral deposited in the Vault and indexed into Core's store;
 * the cache tests only need Core to be there.
 */
import { createServer as createHttpServer } from "node:http";
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { ethers } from "hardhat";
import { blsKeyFromSecret, signatureToEip2537, publicKeyFromArray } from "../../sdk/bls";
import {
  type Certificate,
  certificateMatchesRequest,
  decodeCertificateClaims,
  parseCertificate,
  verifyCertificateSignature,
} from "../../sdk/certificate";
import type { GuaranteeClaims } from "../../sdk/claims";
import { guaranteeId } from "../../sdk/ids";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { BLSVerifierHarness__factory } from "../../typechain-types";
import { ChainIndexer } from "../../operator/chain/indexer";
import { silentLogger } from "../../operator/logger";
import { startTestCore, TEST_BLS_PUBLIC_KEY, TEST_DEPLOYMENT, type TestCore } from "../operator/helpers";
import { ManualClock } from "../../facilitator/clock";
import { CoreClient } from "../../facilitator/core-client";
import { type CoreFetch, CoreUnavailableError, coreFetch } from "../../facilitator/core-http";
import { CoreSession } from "../../facilitator/core-session";
import type { DeploymentParams } from "../../facilitator/deployment";
import { silentFacilitatorLogger } from "../../facilitator/logger";
import { type FacilitatorServer, startFacilitatorServer } from "../../facilitator/server";
import {
  CHAIN_ID,
  NETWORK,
  T0,
  type TestFacilitator,
  bodyFor,
  facilitatorConfig,
  facilitatorWallet,
  payer,
  post,
  request,
  sign,
  startTestFacilitator,
  stranger,
  testPolicy,
  v1Claims,
  v2Claims,
} from "./helpers";

const ACCESS_TOKEN_LIFETIME = 900;
const PUBLIC_PARAMS_TTL = 60;
/** What the payer has deposited with Core, in wei. */
const DEPOSIT = 10_000_000n;
/** The registry the test Vault trusts (the deployed ValidationRegistry). */
const REGISTRY = TEST_DEPLOYMENT.trustedRegistries[0];

/** A payment Core's deployment accepts: ETH (always supported) and, for V2, the deployed registry. */
function ethClaims(version: 1 | 2, changes: Partial<GuaranteeClaims> = {}): GuaranteeClaims {
  const claims =
    version === 1 ? v1Claims({ asset: ZERO_ADDRESS }) : v2Claims({}, testPolicy({ registry: REGISTRY }));
  return { ...claims, asset: ZERO_ADDRESS, ...changes } as GuaranteeClaims;
}

/** Core's transport with a log of the requests made through it (the real fetch, observed). */
function observedCoreFetch(url: string): { fetchCore: CoreFetch; paths: string[] } {
  const inner = coreFetch(url, 2_000);
  const paths: string[] = [];
  return {
    paths,
    fetchCore: (coreRequest) => {
      paths.push(`${coreRequest.method} ${coreRequest.path}`);
      return inner(coreRequest);
    },
  };
}

describe("facilitator Core client (real Core)", function () {
  let t: TestCore;

  before(async function () {
    t = await startTestCore({
      accessTokenLifetimeSeconds: ACCESS_TOKEN_LIFETIME,
      facilitators: [facilitatorWallet.address],
    });
  });

  after(async function () {
    await t?.stop();
  });

  function newSession(clock: ManualClock): CoreSession {
    return new CoreSession(coreFetch(t.core.url, 5000), facilitatorWallet, clock);
  }

  async function walletOf(token: string): Promise<string> {
    return (await t.core.context.accessTokens.verify(token)).wallet;
  }

  describe("SIWE session", function () {
    it("signs in with the facilitator wallet and gets a token Core accepts", async function () {
      const token = await newSession(new ManualClock(T0)).accessToken();
      expect(await walletOf(token)).to.equal(facilitatorWallet.address);
    });

    it("reuses the token while it is fresh, and concurrent callers share one sign-in", async function () {
      const session = newSession(new ManualClock(T0));
      const tokens = await Promise.all([1, 2, 3, 4, 5].map(() => session.accessToken()));
      expect(new Set(tokens).size).to.equal(1);
      expect(await session.accessToken()).to.equal(tokens[0]);
    });

    it("refreshes the token shortly before it expires", async function () {
      const clock = new ManualClock(T0);
      const session = newSession(clock);
      const first = await session.accessToken();
      clock.advance(ACCESS_TOKEN_LIFETIME - 61);
      expect(await session.accessToken()).to.equal(first);
      clock.advance(1);
      t.clock.advance(1); // a new JWT gets a new iat: Core must issue it at another second
      const refreshed = await session.accessToken();
      expect(refreshed).not.to.equal(first);
      expect(await walletOf(refreshed)).to.equal(facilitatorWallet.address);
      const concurrent = await Promise.all([session.accessToken(), session.accessToken()]);
      expect(concurrent).to.deep.equal([refreshed, refreshed]);
    });

    it("signs in again after Core rejected the token", async function () {
      const session = newSession(new ManualClock(T0));
      const first = await session.accessToken();
      session.invalidate("some-older-token");
      expect(await session.accessToken()).to.equal(first);
      session.invalidate(first);
      t.clock.advance(1);
      const second = await session.accessToken();
      expect(second).not.to.equal(first);
      expect(await walletOf(second)).to.equal(facilitatorWallet.address);
    });

    it("signs in again when the refresh token was revoked", async function () {
      const clock = new ManualClock(T0);
      const session = newSession(clock);
      const first = await session.accessToken();
      const refreshToken = (session as unknown as { tokens: { refreshToken: string } }).tokens.refreshToken;
      const logout = await fetch(`${t.core.url}/auth/logout`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ refresh_token: refreshToken }),
      });
      expect(logout.status).to.equal(204);
      clock.advance(ACCESS_TOKEN_LIFETIME);
      t.clock.advance(1);
      const second = await session.accessToken();
      expect(second).not.to.equal(first);
      expect(await walletOf(second)).to.equal(facilitatorWallet.address);
    });
  });

  describe("public params", function () {
    it("loads Core's public params into the deployment payments are checked against", async function () {
      const client = new CoreClient({
        config: facilitatorConfig({ coreUrl: t.core.url, chainId: CHAIN_ID }),
        clock: new ManualClock(T0),
      });
      const deployment = await client.getDeployment();
      expect(deployment.chainId).to.equal(CHAIN_ID);
      expect(deployment.network).to.equal(NETWORK);
      expect(deployment.vault).to.equal(TEST_DEPLOYMENT.vault);
      expect(deployment.vault).to.equal(await t.contracts.surety.vault.getAddress());
      expect(deployment.trustedRegistries).to.deep.equal([REGISTRY]);
      expect(deployment.acceptedVersions).to.deep.equal([1, 2]);
      expect(deployment.blsPublicKey).to.deep.equal(TEST_BLS_PUBLIC_KEY);
      expect(deployment.hasher.domain.verifyingContract).to.equal(TEST_DEPLOYMENT.vault);
      expect((await client.getPublicParams()).contract_address).to.equal(TEST_DEPLOYMENT.vault);
    });

    it("refuses the params of another chain than the configured one", async function () {
      const client = new CoreClient({
        config: facilitatorConfig({ coreUrl: t.core.url, chainId: 1 }),
        clock: new ManualClock(T0),
      });
      const error = await client.getDeployment().then(
        () => null,
        (thrown: unknown) => thrown,
      );
      expect((error as Error).name).to.equal("CoreProtocolError");
      expect((error as Error).message).to.match(
        /Core serves chain 31337, the facilitator is configured for chain 1/,
      );
    });
  });
});

describe("facilitator public params cache (real Core)", function () {
  let t: TestCore;
  let clock: ManualClock;
  let observed: ReturnType<typeof observedCoreFetch>;
  let client: CoreClient;
  let facilitator: FacilitatorServer;

  const paramLoads = () => observed.paths.filter((path) => path === "GET /core/public-params").length;

  beforeEach(async function () {
    t = await startTestCore({ facilitators: [facilitatorWallet.address] });
    clock = new ManualClock(T0);
    observed = observedCoreFetch(t.core.url);
    const config = facilitatorConfig({ coreUrl: t.core.url, publicParamsTtlSeconds: PUBLIC_PARAMS_TTL });
    client = new CoreClient({ config, clock, fetchCore: observed.fetchCore });
    facilitator = await startFacilitatorServer(config, {
      clock,
      core: client,
      logger: silentFacilitatorLogger(),
    });
  });

  afterEach(async function () {
    await facilitator?.close();
    await t?.stop();
  });

  async function verifyOk(claims: GuaranteeClaims, deployment: DeploymentParams): Promise<void> {
    const response = await post(
      `${facilitator.url}/verify`,
      bodyFor(await sign(claims, "eip712", payer, deployment), 2),
    );
    expect(response.status).to.equal(200);
    expect(response.body.isValid, response.body.invalidMessage).to.equal(true);
  }

  it("reuses the params for the TTL (one load for concurrent callers), then loads them again", async function () {
    const [first, ...others] = await Promise.all([1, 2, 3].map(() => client.getDeployment()));
    expect(paramLoads()).to.equal(1);
    for (const other of others) expect(other).to.equal(first);
    await verifyOk(ethClaims(1), first);
    await verifyOk(ethClaims(2), first);
    clock.advance(PUBLIC_PARAMS_TTL - 1);
    expect(await client.getDeployment()).to.equal(first);
    expect(paramLoads()).to.equal(1);

    clock.advance(1);
    const reloaded = await client.getDeployment();
    expect(paramLoads()).to.equal(2);
    expect(reloaded).not.to.equal(first); // a new load builds a new deployment …
    expect(reloaded.vault).to.equal(first.vault); // … of the same Core
    expect(await client.getDeployment()).to.equal(reloaded);
    expect(paramLoads()).to.equal(2);
  });

  it("keeps serving /verify from the last good params when a reload fails; /settle and /health report Core down", async function () {
    const deployment = await client.getDeployment();
    await t.stop();
    clock.advance(PUBLIC_PARAMS_TTL + 1);

    await verifyOk(ethClaims(1), deployment);
    expect(paramLoads()).to.equal(2); // the reload was tried
    expect(await client.getDeployment()).to.equal(deployment);
    const supported = await request(`${facilitator.url}/supported`, "GET");
    expect(supported.status).to.equal(200);

    const claims = ethClaims(1);
    const settle = await post(
      `${facilitator.url}/settle`,
      bodyFor(await sign(claims, "eip712", payer, deployment), 2),
    );
    expect(settle.status).to.equal(500);
    expect(settle.body).to.deep.equal({
      success: false,
      error: "core_unavailable",
      txHash: null,
      networkId: NETWORK,
      certificate: null,
      transaction: "",
      network: NETWORK,
      payer: payer.address,
      errorReason: "core_unavailable",
      errorMessage: settle.body.errorMessage,
    });
    expect(settle.body.errorMessage).to.match(/^Core request POST \/auth\/nonce failed/);

    const health = await request(`${facilitator.url}/health`, "GET");
    expect(health.status).to.equal(503);
    expect(health.body.status).to.equal("fail");
    expect(health.body.error).to.match(/Core request GET \/core\/public-params failed/);
    const fresh = await client.getDeployment({ fresh: true }).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(fresh).to.be.instanceOf(CoreUnavailableError);
  });

  it("/health loads fresh params on every call, and the cache takes them", async function () {
    await client.getDeployment();
    expect(paramLoads()).to.equal(1);
    for (const expected of [2, 3]) {
      const health = await request(`${facilitator.url}/health`, "GET");
      expect(health.status).to.equal(200);
      expect(health.body).to.deep.equal({ status: "ok" });
      expect(paramLoads()).to.equal(expected);
    }
    // The fresh load restarted the TTL: nothing is loaded again before it runs out.
    clock.advance(PUBLIC_PARAMS_TTL - 1);
    await client.getDeployment();
    expect(paramLoads()).to.equal(3);
  });
});

/**
 * The payer deposits `amount` wei into the Vault, and Core's chain indexer
 * (run here by hand; Core's server does not run it yet) applies the deposit
 * to Core's store.
 */
async function depositOnChain(t: TestCore, amount: bigint): Promise<void> {
  const forGas = 10n ** 18n;
  await ethers.provider.send("hardhat_setBalance", [payer.address, "0x" + (amount + forGas).toString(16)]);
  const vault = t.contracts.surety.vault.connect(payer.connect(ethers.provider));
  await (await vault.deposit({ value: amount })).wait();
  const indexer = new ChainIndexer({
    store: t.core.context.store,
    provider: ethers.provider,
    deployment: t.contracts.deployment,
    clock: t.clock,
    logger: silentLogger(),
    confirmations: 0,
    maxBlocksPerTick: 1_000,
  });
  await indexer.syncToHead();
  expect(
    (await t.core.context.store.collateral.getCollateral(payer.address, ZERO_ADDRESS)).deposited,
  ).to.equal(amount);
}

/** A settle body with the seller's `settle_attempt` beside the buyer's signed guarantee. */
function withSettleAttempt(body: Record<string, unknown>, attempt: string): Record<string, unknown> {
  const paymentPayload = body.paymentPayload as { payload: Record<string, unknown> };
  return {
    ...body,
    paymentPayload: { ...paymentPayload, payload: { ...paymentPayload.payload, settle_attempt: attempt } },
  };
}

describe("facilitator /settle against a real Core", function () {
  let t: TestCore;
  let facilitator: TestFacilitator;
  let deployment: DeploymentParams;
  let coreKey: Uint8Array;

  before(async function () {
    t = await startTestCore({ facilitators: [facilitatorWallet.address] });
    await depositOnChain(t, DEPOSIT);
    // The deployment comes from Core (not pinned): payers sign for Core's Vault.
    facilitator = await startTestFacilitator({ coreUrl: t.core.url }, {});
    deployment = await facilitator.server.context.core.getDeployment();
    const params = await request(`${t.core.url}/core/public-params`, "GET");
    coreKey = publicKeyFromArray(params.body.public_key);
  });

  after(async function () {
    await facilitator?.stop();
    await t?.stop();
  });

  async function settle(claims: GuaranteeClaims, x402Version: 1 | 2 = 2, wallet = payer) {
    const signed = await sign(claims, "eip712", wallet, deployment);
    return post(`${facilitator.url}/settle`, bodyFor(signed, x402Version));
  }

  async function locked(): Promise<bigint> {
    return (await t.core.context.store.collateral.getCollateral(payer.address, ZERO_ADDRESS)).locked;
  }

  /** The certificate verifies against Core's published key and the Vault's, and binds exactly `claims`. */
  async function expectCertificateFor(certificate: Certificate, claims: GuaranteeClaims): Promise<void> {
    expect(coreKey).to.deep.equal(TEST_BLS_PUBLIC_KEY);
    expect(verifyCertificateSignature(coreKey, certificate)).to.equal(true);
    const decoded = decodeCertificateClaims(certificate.claims);
    expect(certificateMatchesRequest(decoded, claims, deployment)).to.equal(true);
    expect(decoded.guaranteeId).to.equal(guaranteeId(deployment, claims.user, claims.reqId));
    expect(decoded.domain).to.equal(deployment.certificateDomain);
    expect(decoded.claims).to.deep.equal(claims);
    // On chain: the BLS verifier the Vault uses, with the key the Vault holds.
    const [signer] = await ethers.getSigners();
    const verifier = await new BLSVerifierHarness__factory(signer).deploy();
    const { x_c0_a, x_c0_b, x_c1_a, x_c1_b, y_c0_a, y_c0_b, y_c1_a, y_c1_b } =
      await t.contracts.surety.vault.operatorKey(); // ethers Results are read-only
    expect(
      await verifier.verify(
        { x_c0_a, x_c0_b, x_c1_a, x_c1_b, y_c0_a, y_c0_b, y_c1_a, y_c1_b },
        certificate.claims,
        signatureToEip2537(Buffer.from(certificate.signature.slice(2), "hex")),
        await verifier.popDst(),
      ),
    ).to.equal(true);
  }

  for (const [version, x402Version, state] of [
    [1, 1, "FINALIZED_PAYABLE"],
    [2, 2, "PENDING_VALIDATION"],
  ] as const) {
    it(`settles a V${version} guarantee with collateral (x402 v${x402Version}): 200 with a certificate that verifies`, async function () {
      const claims = ethClaims(version);
      const lockedBefore = await locked();
      const response = await settle(claims, x402Version);
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      const id = guaranteeId(deployment, claims.user, claims.reqId);
      expect(response.body).to.deep.equal({
        success: true,
        error: null,
        txHash: null,
        networkId: NETWORK,
        certificate: response.body.certificate,
        transaction: id,
        network: NETWORK,
        payer: payer.address,
        errorReason: null,
        errorMessage: null,
        extra: { certificate: response.body.certificate, already_issued: false },
      });
      const certificate = parseCertificate(response.body.certificate);
      await expectCertificateFor(certificate, claims);
      // Core locked the amount and stored the guarantee with this certificate.
      expect(await locked()).to.equal(lockedBefore + claims.amount);
      const stored = await t.core.context.store.guarantees.getGuarantee(id);
      expect(stored).to.deep.include({
        state,
        certificateClaims: certificate.claims,
        certificateSignature: certificate.signature,
      });
    });
  }

  it("settles a retry of the same payment again with the same certificate (Core's 409), locking nothing more", async function () {
    const claims = ethClaims(2);
    const signed = await sign(claims, "eip712", payer, deployment);
    const first = await post(`${facilitator.url}/settle`, bodyFor(signed, 2));
    expect(first.status).to.equal(200);
    const lockedOnce = await locked();
    expect(first.body.extra.already_issued).to.equal(false);
    for (const x402Version of [2, 1] as const) {
      const retry = await post(`${facilitator.url}/settle`, bodyFor(signed, x402Version));
      expect(retry.status).to.equal(200);
      // The same answer, told apart from the first settlement by extra.already_issued.
      expect(retry.body).to.deep.equal({
        ...first.body,
        extra: { ...first.body.extra, already_issued: true },
      });
      // A seller's declared retry is the same success.
      const declared = withSettleAttempt(bodyFor(signed, x402Version), "retry");
      const again = await post(`${facilitator.url}/settle`, declared);
      expect(again.status).to.equal(200);
      expect(again.body.extra.already_issued).to.equal(true);
    }
    expect(await locked()).to.equal(lockedOnce);
    await expectCertificateFor(parseCertificate(first.body.certificate), claims);
  });

  it('refuses a settlement declared "first" of a guarantee Core issued before: 400 payment_already_used, nothing locked', async function () {
    const claims = ethClaims(1);
    const signed = await sign(claims, "eip712", payer, deployment);
    const first = await post(`${facilitator.url}/settle`, withSettleAttempt(bodyFor(signed, 2), "first"));
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.extra.already_issued).to.equal(false);
    const lockedOnce = await locked();
    for (const x402Version of [2, 1] as const) {
      const replay = await post(
        `${facilitator.url}/settle`,
        withSettleAttempt(bodyFor(signed, x402Version), "first"),
      );
      expect(replay.status).to.equal(400);
      expect(replay.body).to.deep.include({
        success: false,
        error: "payment_already_used",
        errorReason: "payment_already_used",
        certificate: null,
      });
    }
    expect(await locked()).to.equal(lockedOnce);
    const bad = await post(`${facilitator.url}/settle`, withSettleAttempt(bodyFor(signed, 2), "maybe"));
    expect(bad.status).to.equal(400);
    expect(bad.body.error).to.match(/paymentPayload\.payload\.settle_attempt: must be "first" or "retry"/);
  });

  it("passes Core's refusal through: insufficient collateral is 400 with Core's code and message", async function () {
    const lockedBefore = await locked();
    const claims = ethClaims(1, { amount: DEPOSIT + 1n });
    const response = await settle(claims);
    expect(response.status).to.equal(400);
    expect(response.body).to.deep.include({
      success: false,
      error: "insufficient_collateral",
      errorReason: "insufficient_collateral",
      certificate: null,
      txHash: null,
      transaction: "",
      networkId: NETWORK,
      network: NETWORK,
      payer: payer.address,
    });
    expect(response.body.errorMessage)
      .to.include(`${DEPOSIT + 1n}`)
      .and.match(/available/);
    expect(await locked()).to.equal(lockedBefore);
    const id = guaranteeId(deployment, claims.user, claims.reqId);
    expect(await t.core.context.store.guarantees.getGuarantee(id)).to.equal(null);
  });

  it("passes Core's 409 without a certificate through as 400 duplicate_guarantee", async function () {
    const claims = ethClaims(1);
    expect((await settle(claims)).status).to.equal(200);
    const lockedOnce = await locked();
    const other = await settle({ ...claims, amount: claims.amount + 1n });
    expect(other.status).to.equal(400);
    expect(other.body.error).to.equal("duplicate_guarantee");
    expect(other.body.errorReason).to.equal("duplicate_guarantee");
    expect(other.body.errorMessage).to.match(/was already issued/);
    expect(other.body.certificate).to.equal(null);
    expect(await locked()).to.equal(lockedOnce);
  });

  it("answers 500 core_forbidden when Core does not list the facilitator wallet", async function () {
    const outsider = await startTestFacilitator({ coreUrl: t.core.url, privateKey: stranger.privateKey }, {});
    try {
      const response = await post(
        `${outsider.url}/settle`,
        bodyFor(await sign(ethClaims(1), "eip712", payer, deployment), 2),
      );
      expect(response.status).to.equal(500);
      expect(response.body.error).to.equal("core_forbidden");
      expect(response.body.errorMessage).to.match(/Core refused the facilitator/);
    } finally {
      await outsider.stop();
    }
  });

  it("never returns a certificate Core signed with another key (Core and Vault keys differ)", async function () {
    // A Core whose key is not the Vault's cannot start; pinning the facilitator to
    // another key stands for a Core that lies about its key.
    const otherKey = blsKeyFromSecret("0x" + "43".repeat(32)).publicKey;
    const pinned = await startTestFacilitator(
      { coreUrl: t.core.url },
      { deployment: { ...deployment, blsPublicKey: otherKey } },
    );
    try {
      const response = await post(
        `${pinned.url}/settle`,
        bodyFor(await sign(ethClaims(1), "eip712", payer, deployment), 2),
      );
      expect(response.status).to.equal(500);
      expect(response.body.error).to.equal("invalid_certificate");
      expect(response.body.certificate).to.equal(null);
    } finally {
      await pinned.stop();
    }
  });
});

describe("facilitator Core transport", function () {
  let blackHole: TcpServer;
  const sockets = new Set<Socket>();

  before(async function () {
    // Accepts connections and never answers: only the deadline can end a request.
    blackHole = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => blackHole.listen(0, "127.0.0.1", resolve));
  });

  after(async function () {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => blackHole.close(() => resolve()));
  });

  it("gives up after the configured deadline with CoreUnavailableError", async function () {
    const { port } = blackHole.address() as AddressInfo;
    const started = Date.now();
    const error = await coreFetch(
      `http://127.0.0.1:${port}`,
      200,
    )({ method: "GET", path: "/core/public-params" }).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).to.be.instanceOf(CoreUnavailableError);
    expect((error as Error).message).to.match(/within 200 ms/);
    expect(Date.now() - started).to.be.lessThan(5000);
  });

  it("reports a refused connection as CoreUnavailableError", async function () {
    const spare = createTcpServer();
    await new Promise<void>((resolve) => spare.listen(0, "127.0.0.1", resolve));
    const { port } = spare.address() as AddressInfo;
    await new Promise<void>((resolve) => spare.close(() => resolve()));
    const error = await coreFetch(
      `http://127.0.0.1:${port}`,
      2000,
    )({ method: "GET", path: "/x" }).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).to.be.instanceOf(CoreUnavailableError);
  });
});

describe("facilitator Core transport over node:http", function () {
  it("keeps one connection for sequential requests, sends JSON and the bearer, reads JSON, text and empty bodies", async function () {
    const seen: { method?: string; url?: string; type?: string; auth?: string; body: string }[] = [];
    let connections = 0;
    const server = createHttpServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (body += chunk));
      req.on("end", () => {
        seen.push({
          method: req.method,
          url: req.url,
          type: req.headers["content-type"],
          auth: req.headers.authorization,
          body,
        });
        if (req.url === "/core/text") return void res.writeHead(500).end("not json");
        if (req.url === "/core/empty") return void res.writeHead(204).end();
        res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ echo: body }));
      });
    });
    server.on("connection", () => connections++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      // A trailing slash in the base URL is dropped.
      const call = coreFetch(`http://127.0.0.1:${port}/`, 2000);
      expect(await call({ method: "POST", path: "/core/x", json: { a: 1 }, bearer: "tok" })).to.deep.equal({
        status: 201,
        body: { echo: '{"a":1}' },
      });
      expect(await call({ method: "GET", path: "/core/text" })).to.deep.equal({
        status: 500,
        body: "not json",
      });
      expect(await call({ method: "GET", path: "/core/empty" })).to.deep.equal({ status: 204, body: null });
      expect(seen[0]).to.deep.equal({
        method: "POST",
        url: "/core/x",
        type: "application/json",
        auth: "Bearer tok",
        body: '{"a":1}',
      });
      expect(seen[1]).to.include({
        method: "GET",
        url: "/core/text",
        type: undefined,
        auth: undefined,
        body: "",
      });
      expect(connections).to.equal(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("treats a redirect as a transport failure that may have been delivered", async function () {
    const server = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(307, { location: "http://127.0.0.1:1/elsewhere" }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const error = await coreFetch(
        `http://127.0.0.1:${port}`,
        2000,
      )({ method: "POST", path: "/core/x", json: {} }).then(
        () => null,
        (thrown: unknown) => thrown,
      );
      expect(error).to.be.instanceOf(CoreUnavailableError);
      expect((error as CoreUnavailableError).maybeDelivered).to.equal(true);
      expect((error as Error).message).to.match(/redirected \(307\)/);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("says a refused connection was not delivered", async function () {
    const spare = createTcpServer();
    await new Promise<void>((resolve) => spare.listen(0, "127.0.0.1", resolve));
    const { port } = spare.address() as AddressInfo;
    await new Promise<void>((resolve) => spare.close(() => resolve()));
    const error = await coreFetch(
      `http://127.0.0.1:${port}`,
      2000,
    )({ method: "GET", path: "/x" }).catch((thrown: unknown) => thrown);
    expect((error as CoreUnavailableError).maybeDelivered).to.equal(false);
  });
});

describe("facilitator and Core's V2 deadline cap (real Core)", function () {
  let t: TestCore;
  let facilitator: TestFacilitator;
  let deployment: DeploymentParams;

  before(async function () {
    t = await startTestCore({ facilitators: [facilitatorWallet.address] });
    await depositOnChain(t, DEPOSIT);
    // Core's cap needs the Vault's timings (read at startup by a Core running its background tasks).
    await t.core.context.timings.load(ethers.provider, await t.contracts.surety.vault.getAddress());
    facilitator = await startTestFacilitator({ coreUrl: t.core.url }, {});
    deployment = await facilitator.server.context.core.getDeployment();
  });

  after(async function () {
    await facilitator?.stop();
    await t?.stop();
  });

  async function latestValidationDeadline(): Promise<number> {
    const params = await request(`${t.core.url}/core/public-params`, "GET");
    expect(params.body.latest_validation_deadline).to.be.a("number");
    return params.body.latest_validation_deadline as number;
  }

  async function signedWithDeadline(deadline: number) {
    const claims = v2Claims({ asset: ZERO_ADDRESS }, testPolicy({ registry: REGISTRY, deadline }));
    return sign(claims, "eip712", payer, deployment);
  }

  async function locked(): Promise<bigint> {
    return (await t.core.context.store.collateral.getCollateral(payer.address, ZERO_ADDRESS)).locked;
  }

  it("/verify refuses a deadline past latest_validation_deadline (validation_deadline_too_far), as /settle does", async function () {
    const cap = await latestValidationDeadline();
    expect(deployment.latestValidationDeadline).to.equal(cap);
    const beyond = await signedWithDeadline(cap + 1);
    const verified = await post(`${facilitator.url}/verify`, bodyFor(beyond, 2));
    expect(verified.status).to.equal(200);
    expect(verified.body).to.include({ isValid: false, invalidReason: "validation_deadline_too_far" });
    expect(verified.body.invalidMessage).to.include(`latest accepted: ${cap}`);

    const lockedBefore = await locked();
    const settled = await post(`${facilitator.url}/settle`, bodyFor(beyond, 2));
    expect(settled.status).to.equal(400);
    expect(settled.body).to.include({ success: false, errorReason: "validation_deadline_too_far" });
    expect(await locked()).to.equal(lockedBefore);

    const atCap = await signedWithDeadline(cap);
    const valid = await post(`${facilitator.url}/verify`, bodyFor(atCap, 2));
    expect(valid.body, JSON.stringify(valid.body)).to.include({ isValid: true });
  });

  it("follows Core's cap as chain time moves: cached params are reloaded before the cap refuses a payment", async function () {
    const cached = (await facilitator.server.context.core.getDeployment()).latestValidationDeadline!;
    t.clock.advance(10); // this test Core's chain clock is its manual clock
    const cap = await latestValidationDeadline();
    expect(cap).to.equal(cached + 10);
    facilitator.clock.advance(1); // within the params' TTL: the cache still holds `cached`
    expect((await facilitator.server.context.core.getDeployment()).latestValidationDeadline).to.equal(cached);

    const lockedBefore = await locked();
    const atCap = await signedWithDeadline(cap);
    const verified = await post(`${facilitator.url}/verify`, bodyFor(atCap, 2));
    expect(verified.body, JSON.stringify(verified.body)).to.include({ isValid: true });
    const settled = await post(`${facilitator.url}/settle`, bodyFor(atCap, 2));
    expect(settled.status, JSON.stringify(settled.body)).to.equal(200);
    expect(await locked()).to.equal(lockedBefore + atCap.claims.amount);

    const beyond = await signedWithDeadline(cap + 1);
    const refused = await post(`${facilitator.url}/settle`, bodyFor(beyond, 2));
    expect(refused.status).to.equal(400);
    expect(refused.body.errorReason).to.equal("validation_deadline_too_far");
  });
});
