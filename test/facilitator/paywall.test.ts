/**
 * The seller paywall over real HTTP: an Express seller on a free port in
 * front of a real facilitator (pinned deployment, manual clock). Paths that
 * need an issuing Core (a served, paid request) are in
 * test/e2e/x402-purchase.test.ts; here Core is a closed port, which is what
 * "Core down" looks like.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import express from "express";
import { PaymentRequiredV1Schema, PaymentRequiredV2Schema } from "@x402/core/schemas";
import { wrapFetchWithPayment } from "@x402/fetch";
import { SuretyClientScheme, domainFromPublicParams } from "../../sdk/kits/x402-scheme";
import { WireError } from "../../sdk/errors";
import { type PaywallOptions, paywall } from "../../sdk/kits/paywall";
import {
  PAYMENT_REQUIRED_HEADER,
  SCHEME,
  decodeBase64Json,
  encodeBase64Json,
  encodePaymentHeader,
  extraFromPolicy,
} from "../../sdk/x402";
import { toWireValidationPolicy } from "../../sdk/claims";
import { ManualClock } from "../../facilitator/clock";
import {
  NETWORK,
  T0,
  TOKEN,
  payer,
  publicParams,
  seller,
  startTestFacilitator,
  testPolicy,
  type TestFacilitator,
} from "./helpers";
import { closeUnreachableServices, unreachableUrl } from "../support/unreachable";
import { type OfficialPayment, officialClient, officialPayment } from "../support/x402-buyer";

const domain = domainFromPublicParams(publicParams());
const maxAmountPerRequest = { [TOKEN]: 1_000_000n };
const clock = new ManualClock(T0);

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

interface Seller {
  url: string;
  stop(): Promise<void>;
}

/** An Express seller: /weather (1000 tokens), /premium (2000), /report (V2 policy), /free. */
async function startSeller(overrides: Partial<PaywallOptions> & { facilitatorUrl: string }): Promise<Seller> {
  const app = express();
  app.use(
    paywall({
      payTo: seller.address,
      network: NETWORK,
      routes: {
        "GET /weather": { price: "1000", asset: TOKEN, description: "Weather report" },
        "GET /premium": { price: 2000n, asset: TOKEN },
        "GET /report": { price: 1000, asset: TOKEN, validationPolicy: toWireValidationPolicy(testPolicy()) },
      },
      clock,
      ...overrides,
    }),
  );
  app.get(["/weather", "/premium", "/report"], (_req, res) => {
    res.json({ paid: true, guarantee: res.locals.surety?.guaranteeId ?? null });
  });
  app.get("/free", (_req, res) => {
    res.json({ free: true });
  });
  const server = createServer(app);
  const url = await listen(server);
  return { url, stop: () => close(server) };
}

/** A payment the official x402 client (svc-credit scheme) builds from the seller's own 402 for `path`. */
async function paymentFor(sellerUrl: string, path: string, signingDomain = domain): Promise<OfficialPayment> {
  const response = await fetch(sellerUrl + path);
  expect(response.status).to.equal(402);
  return officialPayment(response, { signer: payer, domain: signingDomain, maxAmountPerRequest, clock });
}

async function get(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  const text = await response.text();
  let body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, headers: response.headers, body };
}

describe("seller paywall", function () {
  let facilitator: TestFacilitator;
  let v2Seller: Seller;
  let v1Seller: Seller;

  before(async function () {
    facilitator = await startTestFacilitator({ coreUrl: await unreachableUrl() });
    v2Seller = await startSeller({ facilitatorUrl: facilitator.url });
    v1Seller = await startSeller({ facilitatorUrl: facilitator.url, x402Version: 1 });
  });

  after(async function () {
    await v2Seller?.stop();
    await v1Seller?.stop();
    await facilitator?.stop();
    await closeUnreachableServices();
  });

  describe("402 without payment", function () {
    it("v2: PAYMENT-REQUIRED header with resource and accepts (amount, maxTimeoutSeconds, extra object)", async function () {
      const response = await get(`${v2Seller.url}/weather?city=Paris`);
      expect(response.status).to.equal(402);
      expect(response.headers.get("cache-control")).to.equal("no-store");
      const required = decodeBase64Json(response.headers.get(PAYMENT_REQUIRED_HEADER), "header");
      expect(required).to.deep.equal({
        x402Version: 2,
        error: "payment required",
        resource: {
          url: `${v2Seller.url}/weather`,
          description: "Weather report",
          mimeType: "application/json",
        },
        accepts: [
          {
            scheme: SCHEME,
            network: NETWORK,
            payTo: seller.address,
            asset: TOKEN,
            maxTimeoutSeconds: 60,
            extra: {},
            amount: "1000",
          },
        ],
      });
      expect(response.body).to.deep.equal(required);
      expect(PaymentRequiredV2Schema.safeParse(required).success).to.equal(true);
    });

    it("v1: the JSON body with maxAmountRequired, resource, description, mimeType, maxTimeoutSeconds", async function () {
      const response = await get(`${v1Seller.url}/weather`);
      expect(response.status).to.equal(402);
      expect(response.headers.get(PAYMENT_REQUIRED_HEADER)).to.equal(null);
      expect(response.body).to.deep.equal({
        x402Version: 1,
        error: "payment required",
        accepts: [
          {
            scheme: SCHEME,
            network: NETWORK,
            payTo: seller.address,
            asset: TOKEN,
            maxTimeoutSeconds: 60,
            extra: {},
            maxAmountRequired: "1000",
            resource: `${v1Seller.url}/weather`,
            description: "Weather report",
            mimeType: "application/json",
          },
        ],
      });
      expect(PaymentRequiredV1Schema.safeParse(response.body).success).to.equal(true);
    });

    it("a route with a validation policy publishes it flat in extra", async function () {
      const response = await get(`${v2Seller.url}/report`);
      expect(response.body.accepts[0].extra).to.deep.equal(extraFromPolicy(testPolicy()));
    });

    it("leaves unprotected routes and methods alone", async function () {
      expect((await get(`${v2Seller.url}/free`)).body).to.deep.equal({ free: true });
      const post = await fetch(`${v2Seller.url}/weather`, { method: "POST" });
      expect(post.status).to.equal(404);
    });
  });

  describe("malformed payments → 400 naming the problem", function () {
    for (const [what, headers, message] of [
      ["garbage X-PAYMENT", { "X-PAYMENT": "not base64!" }, "X-PAYMENT: is not valid base64"],
      [
        "JSON that is no payload",
        { "PAYMENT-SIGNATURE": encodeBase64Json({ x402Version: 2 }) },
        "PAYMENT-SIGNATURE.accepted",
      ],
      ["both headers", { "X-PAYMENT": "e30=", "PAYMENT-SIGNATURE": "e30=" }, "not both"],
    ] as const) {
      it(what, async function () {
        const response = await get(`${v2Seller.url}/weather`, headers);
        expect(response.status).to.equal(400);
        expect(response.body.code).to.equal("malformed_payment");
        expect(response.body.error).to.include(message);
      });
    }

    it("a v2 payload in X-PAYMENT", async function () {
      const payment = await paymentFor(v2Seller.url, "/weather");
      const response = await get(`${v2Seller.url}/weather`, { "X-PAYMENT": payment.header.value });
      expect(response.status).to.equal(400);
      expect(response.body.error).to.include("X-PAYMENT: carries an x402Version 2 payload");
    });
  });

  describe("invalid payments → 402 with the facilitator's invalidReason", function () {
    for (const [version, sellerOf] of [
      [1, () => v1Seller],
      [2, () => v2Seller],
    ] as const) {
      it(`x402 v${version}: a payment for /weather presented to /premium (v1 amount_mismatch, v2 accepted_mismatch)`, async function () {
        const payment = await paymentFor(sellerOf().url, "/weather");
        const response = await get(`${sellerOf().url}/premium`, {
          [payment.header.name]: payment.header.value,
        });
        expect(response.status).to.equal(402);
        expect(response.body).to.include({
          x402Version: version,
          invalidReason: version === 1 ? "amount_mismatch" : "accepted_mismatch",
        });
        expect(response.body.error).to.equal(response.body.invalidReason);
        expect(response.body.invalidMessage).to.be.a("string").and.not.equal("");
        expect(response.body.accepts[0]).to.include({ payTo: seller.address });
        if (version === 2) {
          const header = decodeBase64Json(response.headers.get(PAYMENT_REQUIRED_HEADER), "h") as {
            error: string;
          };
          expect(header.error).to.equal(response.body.invalidReason);
        }
      });
    }

    it("a payment signed under another Vault's domain is signer_mismatch", async function () {
      const foreign = { ...domain, verifyingContract: "0x000000000000000000000000000000000000bEEF" };
      const payment = await paymentFor(v1Seller.url, "/weather", foreign);
      const response = await get(`${v1Seller.url}/weather`, { [payment.header.name]: payment.header.value });
      expect(response.status).to.equal(402);
      expect(response.body.invalidReason).to.equal("signer_mismatch");
    });

    it("a V1 guarantee for a route that demands validation is policy_required", async function () {
      const payment = await paymentFor(v1Seller.url, "/weather");
      // Same price and recipient, but /report's requirements carry a policy.
      const response = await get(`${v1Seller.url}/report`, { "X-PAYMENT": payment.header.value });
      expect(response.body.invalidReason).to.equal("policy_required");
    });
  });

  describe("facilitator or Core failing → 5xx, the payment may be presented again", function () {
    it("facilitator unreachable → 502 facilitator_unavailable", async function () {
      const orphan = await startSeller({ facilitatorUrl: await unreachableUrl() });
      try {
        const payment = await paymentFor(orphan.url, "/weather");
        const response = await get(`${orphan.url}/weather`, { [payment.header.name]: payment.header.value });
        expect(response.status).to.equal(502);
        expect(response.body.code).to.equal("facilitator_unavailable");
        expect(response.body.error).to.match(/^POST http:\/\/127\.0\.0\.1:\d+\/verify failed/);
      } finally {
        await orphan.stop();
      }
    });

    it("a valid payment while Core is down → 502 core_unavailable, twice (the reservation is released)", async function () {
      const payment = await paymentFor(v2Seller.url, "/weather");
      for (let attempt = 0; attempt < 2; attempt++) {
        const response = await get(`${v2Seller.url}/weather`, {
          [payment.header.name]: payment.header.value,
        });
        expect(response.status).to.equal(502);
        expect(response.body.code).to.equal("core_unavailable");
        expect(response.body.error).to.match(/^settlement failed/);
      }
    });
  });

  it("@x402/fetch pays once per request: a refused payment's 402 is returned, not paid again", async function () {
    let payments = 0;
    const foreign = { ...domain, verifyingContract: "0x000000000000000000000000000000000000bEEF" };
    const client = officialClient(
      new SuretyClientScheme({
        signer: payer,
        domain: foreign,
        maxAmountPerRequest: { [TOKEN]: 1_000n },
        clock,
      }),
    ).onAfterPaymentCreation(async () => void payments++);
    const paidFetch = wrapFetchWithPayment(fetch, client);
    const response = await paidFetch(`${v2Seller.url}/weather`);
    expect(response.status).to.equal(402);
    expect(payments).to.equal(1);
    expect(((await response.json()) as { invalidReason: string }).invalidReason).to.equal("signer_mismatch");
    expect((await paidFetch(`${v2Seller.url}/free`)).status).to.equal(200);
    expect(payments).to.equal(1);
  });

  it("@x402/fetch with the svc-credit scheme does not pay above the limit", async function () {
    const client = officialClient(
      new SuretyClientScheme({ signer: payer, domain, maxAmountPerRequest: { [TOKEN]: 999n }, clock }),
    );
    await wrapFetchWithPayment(
      fetch,
      client,
    )(`${v2Seller.url}/weather`).then(
      () => expect.fail("should refuse"),
      (error: Error) => expect(error.message).to.match(/^Failed to create payment payload/),
    );
  });

  describe("configuration is checked when the middleware is built", function () {
    const base = { facilitatorUrl: "http://127.0.0.1:1", payTo: seller.address, network: NETWORK };
    for (const [what, options, field] of [
      ["route key", { routes: { "/weather": { price: "1", asset: TOKEN } } }, 'routes["/weather"]'],
      ["zero price", { routes: { "GET /a": { price: "0", asset: TOKEN } } }, 'routes["GET /a"].price'],
      ["asset", { routes: { "GET /a": { price: "1", asset: "0x1" } } }, 'routes["GET /a"].asset'],
      ["network", { network: "mainnet", routes: { "GET /a": { price: "1", asset: TOKEN } } }, "network"],
      ["payTo", { payTo: "me", routes: { "GET /a": { price: "1", asset: TOKEN } } }, "payTo"],
      [
        "policy",
        { routes: { "GET /a": { price: "1", asset: TOKEN, extra: { job_hash: "0x00" } } } },
        'routes["GET /a"].extra',
      ],
      ["no routes", { routes: {} }, "routes"],
    ] as const) {
      it(`refuses a bad ${what}`, function () {
        expect(() =>
          paywall({ ...base, ...(options as Partial<PaywallOptions>) } as PaywallOptions),
        ).to.throw(WireError, field);
      });
    }
  });

  it("encodes the same payload the sdk encoder does (v1)", async function () {
    const payment = await paymentFor(v1Seller.url, "/weather");
    expect(payment.header.value).to.equal(
      encodePaymentHeader({ x402Version: 1, scheme: SCHEME, network: NETWORK, payload: payment.signed }),
    );
  });
});
