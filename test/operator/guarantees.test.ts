import { expect } from "chai";
import { decodeCertificateClaims, verifyCertificateSignature } from "../../sdk/certificate";
import type { GuaranteeClaims } from "../../sdk/claims";
import { guaranteeId, validationRequestHash } from "../../sdk/ids";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { signIn, startTestCore, T0, TEST_CHAIN_ID, TEST_DEPLOYMENT, type TestCore, post } from "./helpers";
import {
  DOMAIN,
  facilitator,
  highS,
  issue,
  OTHER_REGISTRY,
  payer,
  recipient,
  signedBody,
  stranger,
  TETH,
  TUSD,
  UNKNOWN_TOKEN,
  v1Claims,
  v2Claims,
} from "./guarantee-fixtures";

/** A JSON body being mutated field by field (deliberately loose: the tests write wrong types into it). */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const IDS = { chainId: TEST_CHAIN_ID, vault: TEST_DEPLOYMENT.vault };

function expectError(response: { status: number; body: unknown }, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).to.equal(status);
  expect(response.body).to.have.property("code", code);
  expect(response.body).to.have.property("error").that.is.a("string").and.not.empty;
}

describe("POST /core/guarantees", () => {
  let t: TestCore;
  let url: string;
  let recipientToken: string;
  let facilitatorToken: string;

  beforeEach(async () => {
    t = await startTestCore({
      facilitators: [facilitator.address],
      trustedValidationRegistries: [TEST_DEPLOYMENT.trustedRegistries[0], OTHER_REGISTRY],
      collateralFactorsBps: { [TETH]: 5_000 },
    });
    url = t.core.url;
    const store = t.core.context.store;
    for (const asset of [ZERO_ADDRESS, TUSD, TETH])
      await store.collateral.creditDeposit(payer.address, asset, 10_000n, T0);
    recipientToken = (await signIn(url, recipient)).access_token;
    facilitatorToken = (await signIn(url, facilitator)).access_token;
  });

  afterEach(async () => {
    await t.stop();
  });

  async function expectIssued(claims: GuaranteeClaims, scheme: "eip712" | "eip191", token = recipientToken) {
    const response = await issue(url, token, await signedBody(claims, scheme));
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(Object.keys(response.body).sort()).to.deep.equal(["claims", "signature"]);
    const certificate = response.body as { claims: string; signature: string };
    expect(certificate.claims).to.match(/^0x[0-9a-f]+$/);
    expect(certificate.signature).to.match(/^0x[0-9a-f]{96}$/);
    expect(verifyCertificateSignature(t.core.context.signer.publicKey, certificate)).to.equal(true);
    const decoded = decodeCertificateClaims(certificate.claims);
    const id = guaranteeId(IDS, claims.user, claims.reqId).toLowerCase();
    expect(decoded.guaranteeId).to.equal(id);
    expect(decoded.domain).to.equal(t.core.context.publicParams().active_guarantee_domain_separator);
    expect(decoded.claims).to.deep.include({
      amount: claims.amount,
      reqId: claims.reqId,
      version: claims.version,
    });
    const stored = await t.core.context.store.guarantees.getGuarantee(id);
    expect(stored).to.deep.include({
      state: claims.version === 1 ? "FINALIZED_PAYABLE" : "PENDING_VALIDATION",
      certificateClaims: certificate.claims,
      certificateSignature: certificate.signature,
      scheme,
      createdAt: T0,
    });
    return certificate;
  }

  describe("200", () => {
    for (const scheme of ["eip712", "eip191"] as const) {
      it(`V1 ${scheme}: certificate, FINALIZED_PAYABLE, collateral locked`, async () => {
        await expectIssued(v1Claims({ amount: 4_000n }), scheme);
        const balance = await t.core.context.store.collateral.getCollateral(payer.address, ZERO_ADDRESS);
        expect(balance.locked).to.equal(4_000n);
      });

      it(`V2 ${scheme}: certificate carries the policy, PENDING_VALIDATION`, async () => {
        const claims = v2Claims({ asset: TUSD, reqId: 2n });
        const certificate = await expectIssued(claims, scheme);
        expect(decodeCertificateClaims(certificate.claims).claims).to.deep.include({ version: 2 });
        expect((await t.core.context.store.collateral.getCollateral(payer.address, TUSD)).locked).to.equal(
          1_000n,
        );
      });
    }

    it("V2 with matching optional validation_chain_id and validation_request_hash", async () => {
      const claims = v2Claims({ reqId: 3n });
      const id = guaranteeId(IDS, claims.user, claims.reqId);
      claims.policy.chainId = TEST_CHAIN_ID;
      claims.policy.requestHash = validationRequestHash(TEST_CHAIN_ID, claims.policy, id).toLowerCase();
      await expectIssued(claims, "eip712");
    });

    it("a facilitator may issue for any recipient", async () => {
      await expectIssued(v1Claims({ reqId: 4n }), "eip712", facilitatorToken);
    });

    it("accepts timestamps at both edges of the window", async () => {
      await expectIssued(
        v1Claims({ reqId: 5n, timestamp: T0 - t.config.timestampWindowPastSeconds }),
        "eip712",
      );
      await expectIssued(
        v1Claims({ reqId: 6n, timestamp: T0 + t.config.timestampWindowFutureSeconds }),
        "eip712",
      );
    });

    it("locks exactly up to capacity (deposited × collateral factor)", async () => {
      // tETH has a 50 % factor: 10,000 deposited backs 5,000.
      await expectIssued(v1Claims({ asset: TETH, reqId: 7n, amount: 5_000n }), "eip712");
      const response = await issue(
        url,
        recipientToken,
        await signedBody(v1Claims({ asset: TETH, reqId: 8n, amount: 1n })),
      );
      expectError(response, 400, "insufficient_collateral");
    });
  });

  describe("400 malformed fields (message names the field)", () => {
    const cases: [string, (body: Json) => unknown, RegExp][] = [
      ["body", () => [], /^body: /],
      ["claims", (b) => ({ ...b, claims: undefined }), /^claims: /],
      ["claims.version", (b) => ((b.claims.version = 3), b), /^claims\.version: /],
      ["claims.user_address", (b) => ((b.claims.user_address = "0x1234"), b), /^claims\.user_address: /],
      [
        "claims.recipient_address",
        (b) => ((b.claims.recipient_address = 42), b),
        /^claims\.recipient_address: /,
      ],
      ["claims.req_id", (b) => ((b.claims.req_id = 5), b), /^claims\.req_id: /],
      ["claims.amount (zero)", (b) => ((b.claims.amount = "0"), b), /^claims\.amount: /],
      ["claims.amount (negative)", (b) => ((b.claims.amount = "-5"), b), /^claims\.amount: /],
      [
        "claims.amount (> uint256)",
        (b) => ((b.claims.amount = "0x1" + "0".repeat(64)), b),
        /^claims\.amount: /,
      ],
      ["claims.asset_address", (b) => ((b.claims.asset_address = "eth"), b), /^claims\.asset_address: /],
      ["claims.timestamp", (b) => ((b.claims.timestamp = "1750000000"), b), /^claims\.timestamp: /],
      [
        "claims.validation_policy on V1",
        (b) => ((b.claims.validation_policy = { x: 1 }), b),
        /^claims\.validation_policy: /,
      ],
      ["signature (empty)", (b) => ((b.signature = "0x"), b), /^signature: must not be empty/],
      [
        "signature (over 2048 bytes)",
        (b) => ((b.signature = "0x" + "11".repeat(2049)), b),
        /^signature: must be at most 2048 bytes/,
      ],
      ["signature (type)", (b) => ((b.signature = null), b), /^signature: /],
      ["scheme", (b) => ((b.scheme = "eip1271"), b), /^scheme: /],
    ];
    for (const [name, mutate, message] of cases) {
      it(name, async () => {
        const body = JSON.parse(JSON.stringify(await signedBody(v1Claims())));
        const response = await issue(url, recipientToken, mutate(body));
        expectError(response, 400, "invalid_request");
        expect(response.body.error).to.match(message);
      });
    }

    it("V2 without a policy, and V2 policy fields out of range", async () => {
      const body = JSON.parse(JSON.stringify(await signedBody(v2Claims())));
      const noPolicy = { ...body, claims: { ...body.claims, validation_policy: null } };
      expect((await issue(url, recipientToken, noPolicy)).body.error).to.match(
        /^claims\.validation_policy: /,
      );
      body.claims.validation_policy.min_validation_score = 101;
      const response = await issue(url, recipientToken, body);
      expectError(response, 400, "invalid_request");
      expect(response.body.error).to.match(/^claims\.validation_policy\.min_validation_score: /);
    });

    it("malformed JSON", async () => {
      const response = await fetch(url + "/core/guarantees", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${recipientToken}` },
        body: '{"claims": ',
      });
      expect(response.status).to.equal(400);
    });
  });

  describe("400 signature", () => {
    // Each claim field, changed after signing (facilitator token: authority never masks the check).
    const tampers: [string, (c: Json) => void][] = [
      ["user_address", (c) => (c.user_address = stranger.address)],
      ["recipient_address", (c) => (c.recipient_address = stranger.address)],
      ["req_id", (c) => (c.req_id = "2")],
      ["amount", (c) => (c.amount = "1001")],
      ["asset_address", (c) => (c.asset_address = TUSD)],
      ["timestamp", (c) => (c.timestamp = T0 + 1)],
      [
        "validation_registry_address",
        (c) => (c.validation_policy.validation_registry_address = OTHER_REGISTRY),
      ],
      ["validator_address", (c) => (c.validation_policy.validator_address = facilitator.address)],
      ["validator_agent_id", (c) => (c.validation_policy.validator_agent_id = "8")],
      ["min_validation_score", (c) => (c.validation_policy.min_validation_score = 79)],
      ["job_hash", (c) => (c.validation_policy.job_hash = "0x" + "ab".repeat(32))],
      ["required_validation_tag", (c) => (c.validation_policy.required_validation_tag = "speed")],
      ["validation_deadline", (c) => (c.validation_policy.validation_deadline = T0 + 3_601)],
    ];
    for (const scheme of ["eip712", "eip191"] as const) {
      for (const [field, tamper] of tampers) {
        it(`${scheme}: tampered ${field}`, async () => {
          const body = JSON.parse(JSON.stringify(await signedBody(v2Claims(), scheme)));
          tamper(body.claims);
          const response = await issue(url, facilitatorToken, body);
          expectError(response, 400, "invalid_signature");
          expect(response.body.error).to.match(/^signature: /);
        });
      }
    }

    it("version changed after signing (V2 claims presented as V1)", async () => {
      const body = JSON.parse(JSON.stringify(await signedBody(v1Claims())));
      const v2 = JSON.parse(JSON.stringify(await signedBody(v2Claims())));
      v2.signature = body.signature;
      expectError(await issue(url, recipientToken, v2), 400, "invalid_signature");
    });

    it("the other scheme's signature", async () => {
      const body = await signedBody(v1Claims(), "eip712");
      expectError(await issue(url, recipientToken, { ...body, scheme: "eip191" }), 400, "invalid_signature");
    });

    it("signed by someone other than user_address", async () => {
      const body = await signedBody(v1Claims(), "eip712", stranger);
      const response = await issue(url, recipientToken, body);
      expectError(response, 400, "invalid_signature");
      expect(response.body.error).to.match(/does not recover to user_address/);
    });

    it("high-s twin of a valid signature", async () => {
      for (const scheme of ["eip712", "eip191"] as const) {
        const body = await signedBody(v1Claims(), scheme);
        const response = await issue(url, recipientToken, { ...body, signature: highS(body.signature) });
        expectError(response, 400, "invalid_signature");
        expect(response.body.error).to.match(/high-s/);
      }
    });

    it("v byte other than 27/28/0/1", async () => {
      const body = await signedBody(v1Claims());
      const response = await issue(url, recipientToken, {
        ...body,
        signature: body.signature.slice(0, -2) + "1d",
      });
      expectError(response, 400, "invalid_signature");
    });
  });

  describe("400 policy and time", () => {
    it("timestamp too old / too far in the future", async () => {
      const old = v1Claims({ timestamp: T0 - t.config.timestampWindowPastSeconds - 1 });
      expectError(await issue(url, recipientToken, await signedBody(old)), 400, "timestamp_too_old");
      const future = v1Claims({ timestamp: T0 + t.config.timestampWindowFutureSeconds + 1 });
      expectError(await issue(url, recipientToken, await signedBody(future)), 400, "timestamp_in_future");
    });

    it("the window follows Core's clock", async () => {
      const body = await signedBody(v1Claims());
      t.clock.advance(t.config.timestampWindowPastSeconds + 1);
      expectError(await issue(url, recipientToken, body), 400, "timestamp_too_old");
    });

    it("asset that is neither ETH nor a configured token", async () => {
      const response = await issue(url, recipientToken, await signedBody(v1Claims({ asset: UNKNOWN_TOKEN })));
      expectError(response, 400, "unsupported_asset");
      expect(response.body.error).to.match(/^claims\.asset_address: /);
    });

    it("untrusted validation registry", async () => {
      const claims = v2Claims({}, { registry: stranger.address });
      const response = await issue(url, recipientToken, await signedBody(claims));
      expectError(response, 400, "untrusted_validation_registry");
      expect(response.body.error).to.match(/^claims\.validation_policy\.validation_registry_address: /);
    });

    it("validation deadline not in the future", async () => {
      const response = await issue(url, recipientToken, await signedBody(v2Claims({}, { deadline: T0 })));
      expectError(response, 400, "validation_deadline_passed");
    });

    it("validation_chain_id of another chain", async () => {
      const claims = v2Claims();
      claims.policy.chainId = 1;
      expectError(
        await issue(url, recipientToken, await signedBody(claims)),
        400,
        "validation_chain_id_mismatch",
      );
    });

    it("validation_request_hash that is not the derived one", async () => {
      const claims = v2Claims();
      claims.policy.requestHash = "0x" + "11".repeat(32);
      const response = await issue(url, recipientToken, await signedBody(claims));
      expectError(response, 400, "validation_request_hash_mismatch");
    });

    it("insufficient collateral: message carries the numbers, nothing is locked", async () => {
      const response = await issue(url, recipientToken, await signedBody(v1Claims({ amount: 10_001n })));
      expectError(response, 400, "insufficient_collateral");
      expect(response.body.error).to.include("10001").and.include("10000");
      expect(
        (await t.core.context.store.collateral.getCollateral(payer.address, ZERO_ADDRESS)).locked,
      ).to.equal(0n);
      expect(
        await t.core.context.store.guarantees.getGuarantee(guaranteeId(IDS, payer.address, 1n)),
      ).to.equal(null);
    });

    it("a pending withdrawal leaves capacity at once", async () => {
      await t.core.context.store.collateral.setPendingWithdrawal(payer.address, ZERO_ADDRESS, 9_500n, T0);
      const response = await issue(url, recipientToken, await signedBody(v1Claims({ amount: 501n })));
      expectError(response, 400, "insufficient_collateral");
      expect(response.body.error).to.include("pending withdrawal 9500");
      expect(
        (await issue(url, recipientToken, await signedBody(v1Claims({ amount: 500n })))).status,
      ).to.equal(200);
    });
  });

  describe("401 / 403", () => {
    it("401 without a token, with a malformed one and with a forged one", async () => {
      const body = await signedBody(v1Claims());
      expectError(await post(url, "/core/guarantees", body), 401, "missing_token");
      expectError(
        await post(url, "/core/guarantees", body, { authorization: "Basic abc" }),
        401,
        "invalid_token",
      );
      const forged = recipientToken.slice(0, -4) + (recipientToken.endsWith("AAAA") ? "BBBB" : "AAAA");
      expectError(await issue(url, forged, body), 401, "invalid_token");
    });

    it("401 comes before body validation", async () => {
      expectError(await post(url, "/core/guarantees", { nonsense: true }), 401, "missing_token");
    });

    it("401 once the token expired", async () => {
      t.clock.advance(t.config.accessTokenLifetimeSeconds + 1);
      expectError(await issue(url, recipientToken, await signedBody(v1Claims())), 401, "token_expired");
    });

    it("403 issuing for another recipient without facilitator authority; 200 with it", async () => {
      const strangerToken = (await signIn(url, stranger)).access_token;
      const body = await signedBody(v1Claims());
      const response = await issue(url, strangerToken, body);
      expectError(response, 403, "not_authorized_for_recipient");
      expect((await issue(url, facilitatorToken, body)).status).to.equal(200);
    });
  });

  describe("409", () => {
    it("a byte-identical retry gets the stored certificate; nothing is locked twice", async () => {
      const body = await signedBody(v1Claims());
      const first = await issue(url, recipientToken, body);
      expect(first.status).to.equal(200);
      const retry = await issue(url, facilitatorToken, body);
      expectError(retry, 409, "duplicate_guarantee");
      expect(retry.body.certificate).to.deep.equal(first.body);
      expect(
        (await t.core.context.store.collateral.getCollateral(payer.address, ZERO_ADDRESS)).locked,
      ).to.equal(1_000n);
    });

    it("a retry is idempotent even after the timestamp left the window", async () => {
      const body = await signedBody(v1Claims());
      const first = await issue(url, recipientToken, body);
      t.clock.advance(t.config.timestampWindowPastSeconds + 100); // still within the token's lifetime
      const retry = await issue(url, recipientToken, body);
      expectError(retry, 409, "duplicate_guarantee");
      expect(retry.body.certificate).to.deep.equal(first.body);
    });

    it("the same identity with other claims gets 409 without a certificate", async () => {
      expect((await issue(url, recipientToken, await signedBody(v1Claims()))).status).to.equal(200);
      for (const claims of [v1Claims({ amount: 7n }), v2Claims()]) {
        const response = await issue(url, recipientToken, await signedBody(claims));
        expectError(response, 409, "duplicate_guarantee");
        expect(response.body).to.not.have.property("certificate");
      }
      // Same claims, other scheme: a different signature, so not byte-identical either.
      const eip191 = await issue(url, recipientToken, await signedBody(v1Claims(), "eip191"));
      expectError(eip191, 409, "duplicate_guarantee");
      expect(eip191.body).to.not.have.property("certificate");
    });
  });

  describe("concurrency", () => {
    it("60 parallel requests against collateral for 25: exactly 25 issued, each req_id once", async function () {
      this.timeout(60_000);
      const store = t.core.context.store;
      const asset = TUSD; // 10,000 deposited above; lock 7,500 first so that exactly 25 × 100 remain.
      expect(
        (await issue(url, recipientToken, await signedBody(v1Claims({ asset, reqId: 999n, amount: 7_500n }))))
          .status,
      ).to.equal(200);
      // 50 distinct req_ids, the first 10 sent twice: 60 requests in flight at once.
      const bodies = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          signedBody(v1Claims({ asset, reqId: BigInt(i + 1), amount: 100n })),
        ),
      );
      const requests = [...bodies, ...bodies.slice(0, 10)];
      const responses = await Promise.all(requests.map((body) => issue(url, recipientToken, body)));
      const ok = responses.map((r, i) => ({ r, body: requests[i] })).filter(({ r }) => r.status === 200);
      expect(ok).to.have.length(25);
      const issuedIds = ok.map(({ body }) => body.claims.req_id);
      expect(new Set(issuedIds).size).to.equal(25);
      for (const r of responses.filter((r) => r.status !== 200)) {
        expect([400, 409]).to.include(r.status);
        expect(["insufficient_collateral", "duplicate_guarantee"]).to.include(r.body.code);
      }
      const balance = await store.collateral.getCollateral(payer.address, asset);
      expect(balance.locked).to.equal(7_500n + 25n * 100n);
      expect(balance.locked <= balance.deposited).to.equal(true);
      const listed = await store.guarantees.listGuaranteesByRecipient(recipient.address, { limit: 100 });
      expect(listed.items.filter((g) => g.asset === asset)).to.have.length(26);
      const lockedSum = listed.items.filter((g) => g.asset === asset).reduce((sum, g) => sum + g.amount, 0n);
      expect(lockedSum).to.equal(balance.locked);
    });
  });

  it("500 without details when the store fails", async () => {
    const body = await signedBody(v1Claims());
    await t.core.context.store.close();
    const response = await issue(url, recipientToken, body);
    expect(response.status).to.equal(500);
    expect(response.body).to.deep.equal({ error: "internal error", code: "internal_error" });
  });

  it("the hasher the tests sign with is the one Core verifies with", () => {
    expect(t.core.context.hasher.domain.verifyingContract).to.equal(DOMAIN.verifyingContract);
    expect(t.core.context.publicParams().eip712_name).to.equal(DOMAIN.name);
  });
});
