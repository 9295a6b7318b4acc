/**
 * The facilitator's OpenAPI document against the facilitator itself, wired to a real Core (deployed
 * contracts, SQLite store): every documented endpoint is called for successes and failures, and each
 * answer's body is validated against the document's schema for that path and status.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import { FACILITATOR_OPENAPI } from "../../facilitator/api/openapi-document";
import { type DeploymentParams, deploymentFromPublicParams } from "../../facilitator/deployment";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { OpenApiChecker } from "../openapi/validator";
import { startTestCore, type TestCore } from "../operator/helpers";
import {
  bodyFor,
  facilitatorWallet,
  payer,
  request,
  sign,
  startTestFacilitator,
  T0,
  type TestFacilitator,
  v1Claims,
} from "./helpers";

describe("Facilitator OpenAPI document", () => {
  const checker = new OpenApiChecker(FACILITATOR_OPENAPI);
  let core: TestCore;
  let facilitator: TestFacilitator;
  let deployment: DeploymentParams;
  const stopAfter: { stop(): Promise<void> }[] = [];

  before(async () => {
    core = await startTestCore({ facilitators: [facilitatorWallet.address] });
    await core.core.context.store.collateral.creditDeposit(payer.address, ZERO_ADDRESS, 10_000n, T0);
    deployment = deploymentFromPublicParams(core.core.context.publicParams());
    facilitator = await startTestFacilitator({ coreUrl: core.core.url }, {});
  });

  after(async () => {
    for (const server of [...stopAfter, facilitator, core]) await server?.stop();
  });

  async function call(
    at: TestFacilitator,
    method: string,
    path: string,
    json?: unknown,
    raw?: string,
    headers?: Record<string, string>,
  ) {
    const response = await request(at.url + path, method, { json, raw, headers });
    checker.check(method, path, response);
    return response;
  }

  async function signedBody(changes: Parameters<typeof v1Claims>[0], version: 1 | 2 = 2) {
    const claims = v1Claims({ asset: ZERO_ADDRESS, amount: 1_000n, ...changes });
    return bodyFor(await sign(claims, "eip712", payer, deployment), version);
  }

  it("compiles: every $ref resolves and every schema is valid JSON Schema 2020-12", () => {
    expect(checker.compileAll()).to.be.greaterThan(10);
  });

  it("is served at GET /openapi.json", async () => {
    const response = await call(facilitator, "GET", "/openapi.json");
    expect(response.body).to.deep.equal(JSON.parse(JSON.stringify(FACILITATOR_OPENAPI)));
  });

  it("GET /supported and GET /health match", async () => {
    const supported = await call(facilitator, "GET", "/supported");
    expect(supported.status).to.equal(200);
    expect(supported.body.signers["eip155:*"]).to.deep.equal([facilitatorWallet.address]);
    expect((await call(facilitator, "GET", "/health")).status).to.equal(200);
  });

  it("POST /verify matches: valid, invalid, malformed", async () => {
    const body = await signedBody({});
    const valid = await call(facilitator, "POST", "/verify", body);
    expect(valid.body.isValid).to.equal(true);
    expect(checker.checkRequest("POST", "/verify", body)).to.equal(true);

    const wrongAmount = {
      ...body,
      paymentRequirements: { ...(body.paymentRequirements as object), amount: "999" },
    };
    const invalid = await call(facilitator, "POST", "/verify", wrongAmount);
    expect(invalid.status).to.equal(200);
    expect(invalid.body.isValid).to.equal(false);
    expect(invalid.body.invalidReason).to.be.a("string");

    const v1 = await call(facilitator, "POST", "/verify", await signedBody({}, 1));
    expect(v1.body.isValid).to.equal(true);

    expect((await call(facilitator, "POST", "/verify", { paymentPayload: {} })).status).to.equal(400);
    const malformed = await call(facilitator, "POST", "/verify", undefined, "{");
    expect(malformed.body.code).to.equal("malformed_json");
    const tooLarge = await call(facilitator, "POST", "/verify", { ...body, padding: "x".repeat(70_000) });
    expect(tooLarge.status).to.equal(413);
    const gzip = { "content-encoding": "gzip" };
    const undecodable = await call(facilitator, "POST", "/verify", undefined, "{}", gzip);
    expect(undecodable.body.code).to.equal("undecodable_body");
    const unsupported = await call(facilitator, "POST", "/verify", undefined, "{}", {
      "content-encoding": "zstd",
    });
    expect(unsupported.status).to.equal(415);
    expect(unsupported.body.code).to.equal("unsupported_encoding");
  });

  it("POST /settle matches: issued, replayed, refused by verification, by Core, malformed", async () => {
    const body = await signedBody({});
    const settled = await call(facilitator, "POST", "/settle", body);
    expect(settled.status, JSON.stringify(settled.body)).to.equal(200);
    expect(settled.body.success).to.equal(true);
    const replayed = await call(facilitator, "POST", "/settle", body);
    expect(replayed.status).to.equal(200);
    expect(replayed.body.certificate).to.deep.equal(settled.body.certificate);

    // x402 v1: no `accepted` copy of the requirements, so the recipient check itself answers.
    const otherRecipient = await signedBody({}, 1);
    const mismatch = {
      ...otherRecipient,
      paymentRequirements: { ...(otherRecipient.paymentRequirements as object), payTo: payer.address },
    };
    const refused = await call(facilitator, "POST", "/settle", mismatch);
    expect(refused.status).to.equal(400);
    expect(refused.body.errorReason).to.equal("recipient_mismatch");

    const tooMuch = await call(facilitator, "POST", "/settle", await signedBody({ amount: 1_000_000n }));
    expect(tooMuch.status).to.equal(400);
    expect(tooMuch.body.errorReason).to.equal("insufficient_collateral");

    const malformed = await call(facilitator, "POST", "/settle", { paymentRequirements: {} });
    expect(malformed.status).to.equal(400);
    expect(malformed.body.errorReason).to.equal("invalid_request");
    expect((await call(facilitator, "POST", "/settle", undefined, "{")).body.errorReason).to.equal(
      "malformed_json",
    );
    const tooLarge = await call(facilitator, "POST", "/settle", { ...body, padding: "x".repeat(70_000) });
    expect(tooLarge.status).to.equal(413);
    const undecodable = await call(facilitator, "POST", "/settle", undefined, "{}", {
      "content-encoding": "gzip",
    });
    expect(undecodable.body.errorReason).to.equal("undecodable_body");
    const unsupported = await call(facilitator, "POST", "/settle", undefined, "{}", {
      "content-encoding": "zstd",
    });
    expect(unsupported.status).to.equal(415);
    expect(unsupported.body.errorReason).to.equal("unsupported_encoding");
  });

  it("POST /settle matches when Core refuses the facilitator (500 core_forbidden)", async () => {
    const outsider = await startTestFacilitator(
      { coreUrl: core.core.url, privateKey: Wallet.createRandom().privateKey },
      {},
    );
    stopAfter.push(outsider);
    const response = await call(outsider, "POST", "/settle", await signedBody({}));
    expect(response.status).to.equal(500);
    expect(response.body.errorReason).to.equal("core_forbidden");
  });

  it("every endpoint matches its failure shape when Core is unreachable", async () => {
    const orphan = await startTestFacilitator({ coreUrl: "http://127.0.0.1:9", coreTimeoutMs: 500 }, {});
    stopAfter.push(orphan);
    expect((await call(orphan, "GET", "/health")).status).to.equal(503);
    expect((await call(orphan, "GET", "/supported")).status).to.equal(500);
    expect((await call(orphan, "POST", "/verify", await signedBody({}))).status).to.equal(500);
    const settle = await call(orphan, "POST", "/settle", await signedBody({}));
    expect(settle.status).to.equal(500);
    expect(settle.body.errorReason).to.equal("core_unavailable");
  });

  it("unknown routes answer the common error shape", async () => {
    const response = await request(facilitator.url + "/nothing", "GET");
    expect(response.status).to.equal(404);
    expect(Object.keys(response.body).sort()).to.deep.equal(["code", "error"]);
  });

  it("every documented operation was exercised", () => {
    const called = new Set([...checker.exercised].map((key) => key.split(" ").slice(0, 2).join(" ")));
    expect(checker.operations().filter((operation) => !called.has(operation))).to.deep.equal([]);
    const missing = checker.documentedResponses().filter((response) => !checker.exercised.has(response));
    expect(missing).to.deep.equal([]);
  });
});
