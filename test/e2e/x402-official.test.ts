/**
 * Surety's `svc-credit` scheme inside the official x402 packages, end to
 * end, every component real and on its own port:
 * buyer (`@x402/fetch` or `@x402/axios` with `SuretyClientScheme`, an ethers
 * Wallet) → seller (`@x402/express` or `@x402/hono` `paymentMiddleware`,
 * `x402ResourceServer` + `HTTPFacilitatorClient` + `SuretyServerScheme`) →
 * facilitator (`startFacilitatorServer`, deployment read from Core) → Core
 * (`startCoreServer`, SQLite file in a temp dir, contracts deployed on the
 * Hardhat chain). x402 v1 has no seller in the official 2.x packages: the v1
 * seller is sdk/kits/paywall, the buyer still the official client.
 *
 * Collateral is credited in Core's store directly (this file is about the
 * HTTP purchase path; test/e2e/protocol*.test.ts deposit on chain). All
 * clocks are the wall clock; nothing here waits on time.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { wrapAxiosWithPaymentFromConfig } from "@x402/axios";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { HTTPFacilitatorClient, type RoutesConfig, x402ResourceServer } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { paymentMiddleware as expressPaymentMiddleware } from "@x402/express";
import { wrapFetchWithPaymentFromConfig } from "@x402/fetch";
import { paymentMiddleware as honoPaymentMiddleware } from "@x402/hono";
import axios from "axios";
import { expect } from "chai";
import { Wallet } from "ethers";
import express from "express";
import { Hono } from "hono";
import { publicKeyFromArray } from "../../sdk/bls";
import { type Certificate, decodeCertificateClaims, verifyCertificateSignature } from "../../sdk/certificate";
import { toWireValidationPolicy } from "../../sdk/claims";
import { guaranteeId } from "../../sdk/ids";
import { paywall } from "../../sdk/kits/paywall";
import { SuretyFacilitatorClient } from "../../sdk/kits/x402-scheme/facilitator-client";
import { ZERO_ADDRESS, formatNetwork } from "../../sdk/wire";
import { decodeBase64Json, parsePaymentPayload } from "../../sdk/x402";
import {
  PAYMENT_ALREADY_USED,
  SCHEME,
  SuretyClientScheme,
  SuretyServerScheme,
  PaymentError,
  certificateOfSettlement,
  domainFromPublicParams,
  suretyClientSchemeFromCore,
  suretyPrice,
} from "../../sdk/kits/x402-scheme";
import { closeUnreachableServices, unreachableUrl } from "../support/unreachable";
import { facilitatorConfigFromObject } from "../../facilitator/config";
import { silentFacilitatorLogger } from "../../facilitator/logger";
import { type FacilitatorServer, startFacilitatorServer } from "../../facilitator/server";
import { systemClock } from "../../operator/clock";
import { silentLogger } from "../../operator/logger";
import { type CoreServer, startCoreServer } from "../../operator/server";
import {
  TEST_CHAIN_ID,
  TEST_DEPLOYMENT,
  deployTestContracts,
  tempDir,
  testConfig,
  testCoreDeps,
} from "../operator/helpers";

const payer = new Wallet("0x" + "b1".repeat(32));
const poorPayer = new Wallet("0x" + "b2".repeat(32));
const sellerWallet = new Wallet("0x" + "b3".repeat(32));
const facilitatorWallet = new Wallet("0x" + "b4".repeat(32));
const TUSD = TEST_DEPLOYMENT.tokens[0].address;
const REGISTRY = TEST_DEPLOYMENT.trustedRegistries[0];
const VALIDATOR = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65";
const NETWORK = formatNetwork(TEST_CHAIN_ID) as Network;
const PRICE = 1_000n;
const DEPOSIT = 1_000_000n;

type SellerKind = "express" | "hono" | "paywall-v1";

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

describe("svc-credit in the official x402 packages: @x402/fetch|axios → @x402/express|hono → facilitator → Core", function () {
  let dir: ReturnType<typeof tempDir>;
  let core: CoreServer;
  let facilitator: FacilitatorServer;
  const sellers = {} as Record<SellerKind, { url: string; server: Server }>;
  const persisted: Certificate[] = [];
  let corePublicKey: Uint8Array;
  let domain: ReturnType<typeof domainFromPublicParams>;

  /** The express seller reaches the facilitator with the official client, the hono one with the kit's node:http one. */
  function resourceServer(client: "official" | "node:http" = "official"): x402ResourceServer {
    const server = new x402ResourceServer(
      client === "official"
        ? new HTTPFacilitatorClient({ url: facilitator.url })
        : new SuretyFacilitatorClient({ url: facilitator.url }),
    );
    server.register(NETWORK, new SuretyServerScheme());
    server.onAfterSettle(async ({ result }) => {
      const certificate = certificateOfSettlement(result);
      if (certificate !== null) persisted.push(certificate);
    });
    return server;
  }

  before(async function () {
    const contracts = await deployTestContracts();
    dir = tempDir();
    core = await startCoreServer(testConfig(dir.path, { facilitators: [facilitatorWallet.address] }), {
      logger: silentLogger(),
      // No indexer here (deposits are credited by hand below): the wall clock stands for chain time.
      chainClock: systemClock,
      ...testCoreDeps(contracts.deployment),
    });
    const now = Math.floor(Date.now() / 1000);
    for (const asset of [ZERO_ADDRESS, TUSD]) {
      await core.context.store.collateral.creditDeposit(payer.address, asset, DEPOSIT, now);
    }
    facilitator = await startFacilitatorServer(
      facilitatorConfigFromObject({
        host: "127.0.0.1",
        port: 0,
        logLevel: "silent",
        privateKey: facilitatorWallet.privateKey,
        coreUrl: core.url,
      }),
      { logger: silentFacilitatorLogger() },
    );
    const params = (await (await fetch(`${core.url}/core/public-params`)).json()) as { public_key: unknown };
    corePublicKey = publicKeyFromArray(params.public_key, "public_key");
    domain = domainFromPublicParams(params);

    const policy = toWireValidationPolicy({
      registry: REGISTRY,
      validator: VALIDATOR,
      agentId: 7n,
      minScore: 80,
      jobHash: "0x" + "cd".repeat(32),
      tag: "translation-quality",
      deadline: now + 86_400,
    });
    const routes: RoutesConfig = {
      "GET /weather": {
        accepts: {
          scheme: SCHEME,
          network: NETWORK,
          payTo: sellerWallet.address,
          price: suretyPrice({ asset: TUSD, amount: PRICE }),
        },
        description: "Weather report",
      },
      "GET /translate": {
        accepts: {
          scheme: SCHEME,
          network: NETWORK,
          payTo: sellerWallet.address,
          price: suretyPrice({ asset: ZERO_ADDRESS, amount: PRICE, validationPolicy: policy }),
        },
        description: "Translation, paid once validated",
      },
    };

    const expressApp = express();
    expressApp.use(expressPaymentMiddleware(routes, resourceServer()));
    expressApp.get(["/weather", "/translate"], (req, res) => {
      res.json({ path: req.path, served: "express" });
    });
    const expressServer = createServer(expressApp);
    sellers.express = { url: await listen(expressServer), server: expressServer };

    const honoApp = new Hono();
    honoApp.use(honoPaymentMiddleware(routes, resourceServer("node:http")));
    honoApp.get("/weather", (c) => c.json({ path: "/weather", served: "hono" }));
    honoApp.get("/translate", (c) => c.json({ path: "/translate", served: "hono" }));
    const honoServer = await new Promise<Server>((resolve) => {
      const server = serve({ fetch: honoApp.fetch, port: 0, hostname: "127.0.0.1" }, () =>
        resolve(server as Server),
      );
    });
    sellers.hono = {
      url: `http://127.0.0.1:${(honoServer.address() as AddressInfo).port}`,
      server: honoServer,
    };

    const v1App = express();
    v1App.use(
      paywall({
        facilitatorUrl: facilitator.url,
        payTo: sellerWallet.address,
        network: NETWORK,
        x402Version: 1,
        routes: {
          "GET /weather": { price: PRICE, asset: TUSD, description: "Weather report" },
          "GET /translate": {
            price: PRICE,
            asset: ZERO_ADDRESS,
            description: "Translation, paid once validated",
            validationPolicy: policy,
          },
        },
        onSettled: (settlement) => void persisted.push(settlement.certificate),
      }),
    );
    v1App.get(["/weather", "/translate"], (req, res) => {
      res.json({ path: req.path, served: "paywall-v1" });
    });
    const v1Server = createServer(v1App);
    sellers["paywall-v1"] = { url: await listen(v1Server), server: v1Server };
  });

  after(async function () {
    for (const seller of Object.values(sellers)) await close(seller.server);
    await facilitator?.close();
    await core?.close();
    await closeUnreachableServices();
    dir?.remove();
  });

  function clientScheme(signer: Wallet = payer, limit: bigint = PRICE): SuretyClientScheme {
    return new SuretyClientScheme({
      signer,
      domain,
      maxAmountPerRequest: { [TUSD]: limit, [ZERO_ADDRESS]: limit },
    });
  }

  function clientConfig(scheme: SuretyClientScheme) {
    return {
      schemes: [
        { network: NETWORK, client: scheme },
        { network: NETWORK, client: scheme, x402Version: 1 },
      ],
      spendControls: scheme.spendControls(),
    };
  }

  /** A paying fetch that also records the payment header it sent (to replay it). */
  function fetchBuyer(scheme = clientScheme()) {
    const sent: Headers[] = [];
    const recording = (input: string | URL | Request, init?: RequestInit) => {
      const request = new Request(input, init);
      sent.push(request.headers);
      return fetch(request);
    };
    return { pay: wrapFetchWithPaymentFromConfig(recording, clientConfig(scheme)), sent };
  }

  async function locked(user: string, asset: string): Promise<bigint> {
    return (await core.context.store.collateral.getCollateral(user, asset)).locked;
  }

  /** Checks a settlement header: Core's BLS certificate over exactly this payment, recorded and locked. */
  async function expectSettled(
    settlementHeader: string | null,
    paymentHeader: string,
    expected: { version: 1 | 2; asset: string; state: string },
  ): Promise<void> {
    expect(settlementHeader, "settlement header").to.be.a("string");
    const settlement = decodePaymentResponseHeader(settlementHeader!);
    expect(settlement.success).to.equal(true);
    const certificate = certificateOfSettlement(settlement)!;
    expect(verifyCertificateSignature(corePublicKey, certificate)).to.equal(true);
    const payment = parsePaymentPayload(decodeBase64Json(paymentHeader, "payment"));
    const { claims } = payment.payload;
    const decoded = decodeCertificateClaims(certificate.claims);
    expect(decoded.claims).to.deep.include({
      version: expected.version,
      user: payer.address,
      recipient: sellerWallet.address,
      amount: PRICE,
      asset: expected.asset,
      reqId: claims.reqId,
    });
    const id = guaranteeId(
      { chainId: TEST_CHAIN_ID, vault: TEST_DEPLOYMENT.vault },
      payer.address,
      claims.reqId,
    ).toLowerCase();
    expect(decoded.guaranteeId).to.equal(id);
    expect(settlement.transaction.toLowerCase()).to.equal(id);
    expect(persisted.at(-1)).to.deep.equal(certificate);
    expect(await core.context.store.guarantees.getGuarantee(id)).to.deep.include({
      state: expected.state,
      certificateClaims: certificate.claims,
    });
  }

  const ROUTES = [
    ["/weather", 1, "FINALIZED_PAYABLE", TUSD],
    ["/translate", 2, "PENDING_VALIDATION", ZERO_ADDRESS],
  ] as const;

  for (const seller of ["express", "hono", "paywall-v1"] as const) {
    const x402Version = seller === "paywall-v1" ? 1 : 2;
    const paymentHeaderName = x402Version === 1 ? "X-PAYMENT" : "PAYMENT-SIGNATURE";
    const settlementHeaderName = x402Version === 1 ? "X-PAYMENT-RESPONSE" : "PAYMENT-RESPONSE";
    for (const [path, version, state, asset] of ROUTES) {
      it(`@x402/fetch → ${seller} (x402 v${x402Version}), guarantee V${version}: 200, certificate verifies, collateral locked`, async function () {
        const lockedBefore = await locked(payer.address, asset);
        const buyer = fetchBuyer();
        const response = await buyer.pay(`${sellers[seller].url}${path}?q=1`);
        const refusal = response.headers.get(settlementHeaderName) ?? "";
        expect(
          response.status,
          `${await response.clone().text()} ${Buffer.from(refusal, "base64")}`,
        ).to.equal(200);
        expect(await response.json()).to.deep.equal({ path, served: seller });
        const paymentHeader = buyer.sent.at(-1)!.get(paymentHeaderName);
        expect(paymentHeader, "payment header").to.be.a("string");
        await expectSettled(response.headers.get(settlementHeaderName), paymentHeader!, {
          version,
          asset,
          state,
        });
        expect(await locked(payer.address, asset)).to.equal(lockedBefore + PRICE);
      });

      it(`@x402/axios → ${seller} (x402 v${x402Version}), guarantee V${version}: 200, certificate verifies, collateral locked`, async function () {
        const lockedBefore = await locked(payer.address, asset);
        const instance = axios.create();
        const sent: string[] = [];
        instance.interceptors.request.use((config) => {
          const header = config.headers.get(paymentHeaderName);
          if (typeof header === "string") sent.push(header);
          return config;
        });
        const paying = wrapAxiosWithPaymentFromConfig(instance, clientConfig(clientScheme()) as never);
        const response = await paying.get(`${sellers[seller].url}${path}`);
        expect(response.status).to.equal(200);
        expect(response.data).to.deep.equal({ path, served: seller });
        expect(sent).to.have.length(1);
        await expectSettled(response.headers[settlementHeaderName.toLowerCase()] as string, sent[0], {
          version,
          asset,
          state,
        });
        expect(await locked(payer.address, asset)).to.equal(lockedBefore + PRICE);
      });
    }
  }

  for (const seller of ["express", "hono"] as const) {
    it(`${seller}: a payer without collateral gets 402 with Core's reason in PAYMENT-RESPONSE, nothing locked`, async function () {
      const buyer = fetchBuyer(clientScheme(poorPayer));
      const response = await buyer.pay(`${sellers[seller].url}/weather`);
      expect(response.status).to.equal(402);
      expect(buyer.sent.at(-1)!.get("PAYMENT-SIGNATURE")).to.be.a("string"); // it did pay
      const settlement = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE")!);
      expect(settlement).to.include({ success: false, errorReason: "insufficient_collateral" });
      expect(certificateOfSettlement(settlement)).to.equal(null);
      expect(await locked(poorPayer.address, TUSD)).to.equal(0n);
    });

    it(`${seller}: a price over the buyer's limit is refused by the client before anything is signed`, async function () {
      const buyer = fetchBuyer(clientScheme(payer, PRICE - 1n));
      const lockedBefore = await locked(payer.address, TUSD);
      let failure: Error | undefined;
      try {
        await buyer.pay(`${sellers[seller].url}/weather`);
      } catch (error) {
        failure = error as Error;
      }
      expect(failure?.message).to.match(/Failed to create payment payload/);
      expect(buyer.sent.every((headers) => !headers.has("PAYMENT-SIGNATURE"))).to.equal(true);

      // Without the x402 client's spend controls, the scheme's own limit still refuses.
      const bare = wrapFetchWithPaymentFromConfig(fetch, {
        ...clientConfig(clientScheme(payer, PRICE - 1n)),
        spendControls: false,
      });
      failure = undefined;
      try {
        await bare(`${sellers[seller].url}/weather`);
      } catch (error) {
        failure = error as Error;
      }
      expect(failure?.message).to.match(/amount 1000 exceeds the limit 999/);
      expect(await locked(payer.address, TUSD)).to.equal(lockedBefore);
    });

    it(`${seller}: a replayed PAYMENT-SIGNATURE is refused (402 ${PAYMENT_ALREADY_USED}) and not locked twice`, async function () {
      const buyer = fetchBuyer();
      const first = await buyer.pay(`${sellers[seller].url}/weather`);
      expect(first.status).to.equal(200);
      const header = buyer.sent.at(-1)!.get("PAYMENT-SIGNATURE")!;
      const lockedAfterFirst = await locked(payer.address, TUSD);
      const replay = await fetch(`${sellers[seller].url}/weather`, {
        headers: { "PAYMENT-SIGNATURE": header },
      });
      expect(replay.status).to.equal(402);
      const settlement = decodePaymentResponseHeader(replay.headers.get("PAYMENT-RESPONSE")!);
      expect(settlement).to.include({ success: false, errorReason: PAYMENT_ALREADY_USED });
      expect(await locked(payer.address, TUSD)).to.equal(lockedAfterFirst);
    });
  }

  it("suretyClientSchemeFromCore signs under Core's domain, or fails with domain_unavailable", async function () {
    const limits = { maxAmountPerRequest: { [TUSD]: PRICE } };
    const scheme = await suretyClientSchemeFromCore(core.url, { signer: payer, ...limits });
    expect(scheme.network).to.equal(NETWORK);
    const response = await wrapFetchWithPaymentFromConfig(
      fetch,
      clientConfig(scheme),
    )(`${sellers.express.url}/weather`);
    expect(response.status).to.equal(200);
    let failure: unknown;
    try {
      await suretyClientSchemeFromCore(await unreachableUrl(), { signer: payer, ...limits });
    } catch (error) {
      failure = error;
    }
    expect(failure).to.be.instanceOf(PaymentError);
    expect((failure as PaymentError).code).to.equal("domain_unavailable");
  });

  it("the client refuses a seller whose requirements name another Vault", async function () {
    const scheme = clientScheme();
    const requirements = {
      scheme: SCHEME,
      network: NETWORK,
      asset: TUSD,
      amount: PRICE.toString(),
      payTo: sellerWallet.address,
      maxTimeoutSeconds: 60,
      extra: {
        contract_address: sellerWallet.address,
        chain_id: TEST_CHAIN_ID,
        eip712_name: domain.name,
        eip712_version: domain.version,
      },
    };
    let failure: { code?: string } | undefined;
    try {
      await scheme.createPaymentPayload(2, requirements);
    } catch (error) {
      failure = error as { code?: string };
    }
    expect(failure?.code).to.equal("domain_mismatch");
  });
});
