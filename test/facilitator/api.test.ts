/**
 * The facilitator over real HTTP: /verify, /settle (the paths that need no
 * issuing Core), /supported, /health, error shapes. The deployment is pinned
 * through DI so that these run without a Core; "Core down" is a closed port,
 * so no fake Core is involved. Settlement against a real Core, the public
 * params cache and Core going away mid-run are in core-client.test.ts.
 */
import { expect } from "chai";
import { SCHEME, extraFromDomain } from "../../sdk/x402";
import {
  NETWORK,
  T0,
  testDeployment,
  bodyFor,
  facilitatorWallet,
  payer,
  post,
  request,
  sign,
  startTestFacilitator,
  stranger,
  testPolicy,
  type TestFacilitator,
  v1Claims,
  v2Claims,
} from "./helpers";
import { closeUnreachableServices, unreachableUrl } from "../support/unreachable";

function expectErrorShape(body: Record<string, unknown>): void {
  expect(Object.keys(body).sort()).to.deep.equal(["code", "error"]);
  expect(body.error).to.be.a("string");
  expect(String(body.error)).not.to.match(/\n\s+at /); // no stack trace
}

function expectSettleFailureShape(body: Record<string, unknown>): void {
  expect(body.success).to.equal(false);
  expect(body.certificate).to.equal(null);
  expect(body.txHash).to.equal(null);
  expect(body.error).to.be.a("string").and.not.equal("");
  expect(body.errorReason).to.be.a("string").and.not.equal("");
  expect(body.transaction).to.equal("");
  expect(JSON.stringify(body)).not.to.match(/\n\s+at /);
}

describe("facilitator HTTP API", function () {
  let facilitator: TestFacilitator;
  let coreDownUrl: string;

  before(async function () {
    coreDownUrl = await unreachableUrl();
    facilitator = await startTestFacilitator({ coreUrl: coreDownUrl });
  });

  after(async function () {
    await facilitator?.stop();
    await closeUnreachableServices();
  });

  describe("POST /verify", function () {
    for (const x402Version of [1, 2] as const) {
      it(`answers 200 isValid for a good payment (x402 v${x402Version})`, async function () {
        const signed = await sign(x402Version === 1 ? v1Claims() : v2Claims());
        const response = await post(`${facilitator.url}/verify`, bodyFor(signed, x402Version));
        expect(response.status).to.equal(200);
        expect(response.body).to.deep.equal({
          isValid: true,
          invalidReason: null,
          invalidMessage: null,
          payer: payer.address,
          certificate: null,
        });
      });
    }

    it("answers 200 with isValid false and the reason for a bad payment", async function () {
      const signed = await sign(v1Claims());
      const response = await post(`${facilitator.url}/verify`, bodyFor(signed, 2, { amount: "1" }));
      expect(response.status).to.equal(200);
      expect(response.body.isValid).to.equal(false);
      expect(response.body.invalidReason).to.equal("amount_mismatch");
      expect(response.body.invalidMessage).to.be.a("string");
      expect(response.body.certificate).to.equal(null);
    });

    it("answers isValid false domain_mismatch when extra names another chain or Vault than the deployment's", async function () {
      const signed = await sign(v1Claims());
      const domain = testDeployment().hasher.domain;
      for (const [field, other] of [
        ["chain_id", { ...domain, chainId: 1n }],
        ["contract_address", { ...domain, verifyingContract: stranger.address }],
      ] as const) {
        const body = bodyFor(signed, 2, { extra: extraFromDomain(other) });
        const response = await post(`${facilitator.url}/verify`, body);
        expect(response.status).to.equal(200);
        expect(response.body).to.include({ isValid: false, invalidReason: "domain_mismatch" });
        expect(response.body.invalidMessage).to.match(
          new RegExp(`^paymentRequirements\\.extra\\.${field}: `),
        );
      }
      const own = await post(
        `${facilitator.url}/verify`,
        bodyFor(signed, 2, { extra: extraFromDomain(domain) }),
      );
      expect(own.body).to.include({ isValid: true });
    });

    it("answers isValid false validation_deadline_too_far past Core's latest_validation_deadline, as /settle refuses it", async function () {
      const capped = await startTestFacilitator(
        { coreUrl: coreDownUrl },
        { deployment: testDeployment({ latest_validation_deadline: T0 + 100 }) },
      );
      try {
        const beyond = await sign(v2Claims({}, testPolicy({ deadline: T0 + 101 })));
        const verified = await post(`${capped.url}/verify`, bodyFor(beyond, 2));
        expect(verified.status).to.equal(200);
        expect(verified.body).to.include({ isValid: false, invalidReason: "validation_deadline_too_far" });
        expect(verified.body.invalidMessage).to.include(`latest accepted: ${T0 + 100}`);
        // /settle refuses it under the same code before any Core round trip (Core is down here).
        const settled = await post(`${capped.url}/settle`, bodyFor(beyond, 2));
        expect(settled.status).to.equal(400);
        expectSettleFailureShape(settled.body);
        expect(settled.body).to.include({
          error: "validation_deadline_too_far",
          errorReason: "validation_deadline_too_far",
        });
        const atCap = await sign(v2Claims({}, testPolicy({ deadline: T0 + 100 })));
        expect((await post(`${capped.url}/verify`, bodyFor(atCap, 2))).body.isValid).to.equal(true);
      } finally {
        await capped.stop();
      }
    });

    it("resolves the x402 version from the payload when the body omits it", async function () {
      const body = bodyFor(await sign(v1Claims()), 1);
      delete body.x402Version;
      const response = await post(`${facilitator.url}/verify`, body);
      expect(response.status).to.equal(200);
      expect(response.body.isValid).to.equal(true);
    });

    it("answers 400 naming x402Version when the body and payload disagree", async function () {
      const body = { ...bodyFor(await sign(v1Claims()), 2), x402Version: 1 };
      const response = await post(`${facilitator.url}/verify`, body);
      expect(response.status).to.equal(400);
      expectErrorShape(response.body);
      expect(response.body.error).to.match(/^x402Version: /);
      expect(response.body.code).to.equal("invalid_request");
    });

    const malformed: [string, () => Promise<unknown>, RegExp][] = [
      ["an array body", async () => [], /^body: must be an object/],
      ["a missing paymentPayload", async () => ({ paymentRequirements: {} }), /^paymentPayload: is required/],
      [
        "a missing paymentRequirements",
        async () => ({ paymentPayload: {} }),
        /^paymentRequirements: is required/,
      ],
      [
        "an x402Version 3 payload",
        async () => ({
          ...bodyFor(await sign(v1Claims()), 2),
          x402Version: undefined,
          paymentPayload: { x402Version: 3 },
        }),
        /^paymentPayload\.x402Version: must be 1 or 2/,
      ],
      [
        "a v2 payload without accepted",
        async () => {
          const body = bodyFor(await sign(v1Claims()), 2);
          delete (body.paymentPayload as Record<string, unknown>).accepted;
          return body;
        },
        /^paymentPayload\.accepted: is required/,
      ],
      [
        "a bad claims amount",
        async () => {
          const body = bodyFor(await sign(v1Claims()), 1);
          (body.paymentPayload as { payload: { claims: Record<string, unknown> } }).payload.claims.amount = 5;
          return body;
        },
        /^paymentPayload\.payload\.claims\.amount: /,
      ],
      [
        "an empty signature",
        async () => {
          const body = bodyFor(await sign(v1Claims()), 1);
          (body.paymentPayload as { payload: Record<string, unknown> }).payload.signature = "0x";
          return body;
        },
        /^paymentPayload\.payload\.signature: must not be empty/,
      ],
      [
        "a signature over 2048 bytes",
        async () => {
          const body = bodyFor(await sign(v1Claims()), 1);
          (body.paymentPayload as { payload: Record<string, unknown> }).payload.signature =
            "0x" + "11".repeat(2049);
          return body;
        },
        /^paymentPayload\.payload\.signature: must be at most 2048 bytes/,
      ],
      [
        "an unknown signing scheme",
        async () => {
          const body = bodyFor(await sign(v1Claims()), 1);
          (body.paymentPayload as { payload: Record<string, unknown> }).payload.scheme = "eip1271";
          return body;
        },
        /^paymentPayload\.payload\.scheme: /,
      ],
      [
        "a bad payTo",
        async () => bodyFor(await sign(v1Claims()), 1, { payTo: "0x1234" }),
        /^paymentRequirements\.payTo: /,
      ],
      [
        "a non-CAIP-2 network",
        async () => bodyFor(await sign(v1Claims()), 1, { network: "base-sepolia" }),
        /^paymentRequirements\.network: /,
      ],
      [
        "requirements without any amount",
        async () => bodyFor(await sign(v1Claims()), 1, { maxAmountRequired: undefined }),
        /^paymentRequirements\.amount: is required/,
      ],
      [
        "a partial V2 policy in extra",
        async () => bodyFor(await sign(v1Claims()), 1, { extra: { job_hash: "0x" + "00".repeat(32) } }),
        /^paymentRequirements\.extra\./,
      ],
    ];
    for (const [what, build, message] of malformed) {
      it(`answers 400 naming the field for ${what}`, async function () {
        const response = await post(`${facilitator.url}/verify`, await build());
        expect(response.status).to.equal(400);
        expectErrorShape(response.body);
        expect(response.body.error).to.match(message);
      });
    }

    it("answers 400 malformed_json for a body that is not JSON", async function () {
      const response = await request(`${facilitator.url}/verify`, "POST", { raw: '{"x402Version":' });
      expect(response.status).to.equal(400);
      expectErrorShape(response.body);
      expect(response.body.code).to.equal("malformed_json");
    });

    it("answers 400 when the body is not sent as JSON", async function () {
      const response = await request(`${facilitator.url}/verify`, "POST", {
        raw: "x=1",
        contentType: "text/plain",
      });
      expect(response.status).to.equal(400);
      expect(response.body.error).to.match(/^body: must be an object/);
    });

    it("answers 413 for an oversized body", async function () {
      const response = await request(`${facilitator.url}/verify`, "POST", {
        raw: JSON.stringify({ pad: "x".repeat(70 * 1024) }),
      });
      expect(response.status).to.equal(413);
      expectErrorShape(response.body);
    });
  });

  describe("POST /settle (without an issuing Core)", function () {
    it("answers 400 with the invalidReason as error when the payment is invalid", async function () {
      const signed = await sign(v1Claims({ timestamp: T0 - 601 }));
      const response = await post(`${facilitator.url}/settle`, bodyFor(signed, 2));
      expect(response.status).to.equal(400);
      expectSettleFailureShape(response.body);
      expect(response.body.error).to.equal("timestamp_too_old");
      expect(response.body.errorReason).to.equal("timestamp_too_old");
      expect(response.body.networkId).to.equal(NETWORK);
      expect(response.body.network).to.equal(NETWORK);
      expect(response.body.payer).to.equal(payer.address);
    });

    it("answers 400 in settle's shape, naming the field, for a malformed body", async function () {
      const body = bodyFor(await sign(v1Claims()), 1, { asset: 42 });
      const response = await post(`${facilitator.url}/settle`, body);
      expect(response.status).to.equal(400);
      expectSettleFailureShape(response.body);
      expect(response.body.error).to.match(/^paymentRequirements\.asset: /);
      expect(response.body.errorReason).to.equal("invalid_request");
    });

    it("answers 400 in settle's shape for malformed JSON", async function () {
      const response = await request(`${facilitator.url}/settle`, "POST", { raw: "{nope" });
      expect(response.status).to.equal(400);
      expectSettleFailureShape(response.body);
      expect(response.body.errorReason).to.equal("malformed_json");
    });

    it("answers 500 core_unavailable for a valid payment when Core cannot be reached", async function () {
      const signed = await sign(v1Claims());
      const response = await post(`${facilitator.url}/settle`, bodyFor(signed, 1));
      expect(response.status).to.equal(500);
      expectSettleFailureShape(response.body);
      expect(response.body).to.deep.equal({
        success: false,
        error: "core_unavailable",
        txHash: null,
        networkId: NETWORK,
        certificate: null,
        transaction: "",
        network: NETWORK,
        payer: payer.address,
        errorReason: "core_unavailable",
        errorMessage: response.body.errorMessage,
      });
      expect(response.body.errorMessage).to.match(/^Core request POST \/auth\/nonce failed/);
    });
  });

  describe("GET /supported", function () {
    it("lists svc-credit on the deployment's network once per x402 version with its signing domain, and the facilitator signer", async function () {
      const DEPLOYMENT = testDeployment();
      const response = await request(`${facilitator.url}/supported`, "GET");
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({
        kinds: [1, 2].map((x402Version) => ({
          x402Version,
          scheme: SCHEME,
          network: NETWORK,
          extra: {
            contract_address: DEPLOYMENT.vault,
            chain_id: DEPLOYMENT.chainId,
            eip712_name: DEPLOYMENT.hasher.domain.name,
            eip712_version: DEPLOYMENT.hasher.domain.version,
          },
        })),
        extensions: [],
        signers: { "eip155:*": [facilitatorWallet.address] },
      });
    });
  });

  describe("GET /health and unknown routes", function () {
    it("answers 503 fail when Core cannot be reached", async function () {
      const response = await request(`${facilitator.url}/health`, "GET");
      expect(response.status).to.equal(503);
      expect(response.body.status).to.equal("fail");
      expect(response.body.error).to.be.a("string");
    });

    it("answers 404 in the error shape for an unknown route", async function () {
      const response = await request(`${facilitator.url}/nope`, "GET");
      expect(response.status).to.equal(404);
      expectErrorShape(response.body);
    });
  });

  describe("deployment from Core's public params, Core down", function () {
    let unpinned: TestFacilitator;

    before(async function () {
      unpinned = await startTestFacilitator({ coreUrl: coreDownUrl }, {});
    });

    after(async function () {
      await unpinned?.stop();
    });

    it("/verify still answers 400 for malformed input", async function () {
      const response = await post(`${unpinned.url}/verify`, { paymentPayload: 1, paymentRequirements: {} });
      expect(response.status).to.equal(400);
    });

    it("/verify answers 500 core_unavailable for a well-formed request", async function () {
      const response = await post(`${unpinned.url}/verify`, bodyFor(await sign(v1Claims()), 2));
      expect(response.status).to.equal(500);
      expectErrorShape(response.body);
      expect(response.body.code).to.equal("core_unavailable");
    });

    it("/settle answers 500 core_unavailable in settle's shape", async function () {
      const response = await post(`${unpinned.url}/settle`, bodyFor(await sign(v1Claims()), 2));
      expect(response.status).to.equal(500);
      expectSettleFailureShape(response.body);
      // No params were ever loaded: the network is unknown.
      expect(response.body).to.deep.equal({
        success: false,
        error: "core_unavailable",
        txHash: null,
        networkId: null,
        certificate: null,
        transaction: "",
        network: "",
        payer: payer.address,
        errorReason: "core_unavailable",
        errorMessage: response.body.errorMessage,
      });
      expect(response.body.errorMessage).to.match(/^deployment parameters unavailable: /);
    });

    it("/supported answers 500", async function () {
      const response = await request(`${unpinned.url}/supported`, "GET");
      expect(response.status).to.equal(500);
      expectErrorShape(response.body);
    });
  });
});
