import { expect } from "chai";
import { parseSignedGuarantee, toWireValidationPolicy } from "../../sdk/claims";
import type { ValidationPolicy } from "../../sdk/claims";
import { WireError } from "../../sdk/errors";
import {
  MAX_HEADER_BYTES,
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  type PaymentPayload,
  type PaymentRequired,
  SCHEME,
  type SettleResult,
  X_PAYMENT_HEADER,
  X_PAYMENT_RESPONSE_HEADER,
  decodeBase64Json,
  decodePaymentHeader,
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
  extraFromPolicy,
  parseFacilitatorRequest,
  parsePaymentPayload,
  parsePaymentRequired,
  parsePaymentRequirements,
  parseSettleResult,
  parseSupportedKinds,
  parseVerifyResult,
  payloadNetwork,
  payloadScheme,
  paymentHeaderName,
  paymentResponseHeaderName,
  policyFromExtra,
  requiredAmount,
  resolveX402Version,
  toWirePaymentPayload,
} from "../../sdk/x402";

const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const TOKEN = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0";
const REGISTRY = "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9";
const VALIDATOR = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const NETWORK = "eip155:31337";
const SIGNATURE = "0x" + "11".repeat(64) + "1b";

type Json = Record<string, unknown>;

const policy: ValidationPolicy = {
  registry: REGISTRY,
  validator: VALIDATOR,
  agentId: 7n,
  minScore: 80,
  jobHash: "0x" + "ab".repeat(32),
  tag: "qualité ✓",
  deadline: 1_700_000_600,
};

function wireClaimsV1(): Json {
  return {
    version: 1,
    user_address: USER,
    recipient_address: RECIPIENT,
    req_id: "42",
    amount: "1000000",
    asset_address: TOKEN,
    timestamp: 1_700_000_000,
    validation_policy: null,
  };
}

function wireClaimsV2(): Json {
  return { ...wireClaimsV1(), version: 2, validation_policy: toWireValidationPolicy(policy) };
}

function signed(claims: Json): Json {
  return { claims, signature: SIGNATURE, scheme: "eip712" };
}

function requirementsV1(): Json {
  return {
    scheme: SCHEME,
    network: NETWORK,
    maxAmountRequired: "1000000",
    resource: "http://127.0.0.1:3000/premium",
    description: "Premium content",
    mimeType: "application/json",
    payTo: RECIPIENT,
    maxTimeoutSeconds: 300,
    asset: TOKEN,
    extra: null,
  };
}

function requirementsV2(): Json {
  return {
    scheme: SCHEME,
    network: NETWORK,
    amount: "1000000",
    payTo: RECIPIENT,
    asset: TOKEN,
    maxTimeoutSeconds: 300,
    extra: extraFromPolicy(policy, { name: "Surety credit" }),
  };
}

function payloadV1(): Json {
  return { x402Version: 1, scheme: SCHEME, network: NETWORK, payload: signed(wireClaimsV1()) };
}

function payloadV2(): Json {
  return {
    x402Version: 2,
    accepted: requirementsV2(),
    payload: signed(wireClaimsV2()),
    resource: { url: "http://127.0.0.1:3000/premium", description: "Premium", mimeType: "application/json" },
  };
}

function expectWireError(fn: () => unknown, field: string, reason?: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected a WireError naming ${field}`).to.be.instanceOf(WireError);
  const wireError = caught as WireError;
  expect(wireError.field).to.equal(field);
  if (reason) expect(wireError.reason).to.match(reason);
}

/** A copy of `object` with the value at dotted `path` replaced (or deleted when `value` is `DELETE`). */
const DELETE = Symbol("delete");
function mutate(object: Json, path: string, value: unknown): Json {
  const copy = structuredClone(object);
  const keys = path.split(".");
  let target: Json = copy;
  for (const key of keys.slice(0, -1)) target = target[key] as Json;
  const last = keys[keys.length - 1];
  if (value === DELETE) delete target[last];
  else target[last] = value;
  return copy;
}

describe("sdk/x402: constants", () => {
  it("names the scheme and the headers", () => {
    expect(SCHEME).to.equal("svc-credit");
    expect(X_PAYMENT_HEADER).to.equal("X-PAYMENT");
    expect(PAYMENT_SIGNATURE_HEADER).to.equal("PAYMENT-SIGNATURE");
    expect(X_PAYMENT_RESPONSE_HEADER).to.equal("X-PAYMENT-RESPONSE");
    expect(PAYMENT_RESPONSE_HEADER).to.equal("PAYMENT-RESPONSE");
    expect(PAYMENT_REQUIRED_HEADER).to.equal("PAYMENT-REQUIRED");
    expect(paymentHeaderName(1)).to.equal("X-PAYMENT");
    expect(paymentHeaderName(2)).to.equal("PAYMENT-SIGNATURE");
    expect(paymentResponseHeaderName(1)).to.equal("X-PAYMENT-RESPONSE");
    expect(paymentResponseHeaderName(2)).to.equal("PAYMENT-RESPONSE");
  });
});

describe("sdk/x402: parsePaymentRequirements", () => {
  it("accepts v1-style requirements and keeps the pass-through fields", () => {
    expect(parsePaymentRequirements(requirementsV1())).to.deep.equal(requirementsV1());
  });

  it("accepts v2-style requirements with a policy in extra", () => {
    const parsed = parsePaymentRequirements(requirementsV2());
    expect(parsed).to.deep.equal(requirementsV2());
    expect(requiredAmount(parsed)).to.equal(1_000_000n);
  });

  it("accepts the minimal required set", () => {
    const minimal = { scheme: SCHEME, network: NETWORK, payTo: RECIPIENT, asset: TOKEN };
    expect(parsePaymentRequirements(minimal)).to.deep.equal(minimal);
    expect(requiredAmount(parsePaymentRequirements(minimal))).to.equal(undefined);
  });

  it("normalises addresses to EIP-55 and amounts to decimal", () => {
    const parsed = parsePaymentRequirements({
      ...requirementsV2(),
      payTo: RECIPIENT.toLowerCase(),
      asset: TOKEN.toUpperCase().replace("0X", "0x"),
      amount: "0xf4240",
      maxAmountRequired: "1000000",
    });
    expect(parsed.payTo).to.equal(RECIPIENT);
    expect(parsed.asset).to.equal(TOKEN);
    expect(parsed.amount).to.equal("1000000");
  });

  it("keeps a non-svc-credit scheme (the facilitator reports it as invalid, not malformed)", () => {
    expect(parsePaymentRequirements({ ...requirementsV1(), scheme: "exact" }).scheme).to.equal("exact");
  });

  const F = "paymentRequirements";
  const cases: [string, unknown, string, RegExp?][] = [
    ["scheme", DELETE, `${F}.scheme`, /got undefined/],
    ["scheme", "", `${F}.scheme`, /empty/],
    ["scheme", 1, `${F}.scheme`, /got number/],
    ["network", DELETE, `${F}.network`],
    ["network", "base-sepolia", `${F}.network`, /CAIP-2/],
    ["network", "eip155:031337", `${F}.network`, /CAIP-2/],
    ["payTo", DELETE, `${F}.payTo`],
    ["payTo", "0x1234", `${F}.payTo`, /20-byte/],
    ["asset", DELETE, `${F}.asset`],
    ["asset", "USDC", `${F}.asset`],
    ["maxAmountRequired", "0", `${F}.maxAmountRequired`, /greater than zero/],
    ["maxAmountRequired", "-1", `${F}.maxAmountRequired`],
    ["maxAmountRequired", 1000000, `${F}.maxAmountRequired`, /got number/],
    ["maxAmountRequired", "1.5", `${F}.maxAmountRequired`],
    ["maxAmountRequired", "2".repeat(79), `${F}.maxAmountRequired`],
    ["maxAmountRequired", "999", `${F}.maxAmountRequired`, /must equal/],
    ["amount", "abc", `${F}.amount`],
    ["extra", [], `${F}.extra`, /object/],
    ["extra", "x", `${F}.extra`, /object/],
    ["extra", { validator_address: VALIDATOR }, `${F}.extra.validation_registry_address`],
    ["resource", 5, `${F}.resource`],
    ["description", null, `${F}.description`],
    ["mimeType", {}, `${F}.mimeType`],
    ["maxTimeoutSeconds", 0, `${F}.maxTimeoutSeconds`, /greater than zero/],
    ["maxTimeoutSeconds", -5, `${F}.maxTimeoutSeconds`],
    ["maxTimeoutSeconds", 1.5, `${F}.maxTimeoutSeconds`],
    ["maxTimeoutSeconds", "300", `${F}.maxTimeoutSeconds`, /got string/],
    ["outputSchema", "schema", `${F}.outputSchema`],
  ];
  for (const [path, value, field, reason] of cases) {
    it(`rejects ${path} = ${value === DELETE ? "(missing)" : JSON.stringify(value)}`, () => {
      const base = { ...requirementsV1(), amount: "1000000" };
      expectWireError(() => parsePaymentRequirements(mutate(base, path, value)), field, reason);
    });
  }

  it("rejects a malformed policy in extra with the policy field's path", () => {
    const extra = { ...extraFromPolicy(policy), min_validation_score: 101 };
    expectWireError(
      () => parsePaymentRequirements({ ...requirementsV2(), extra }),
      `${F}.extra.min_validation_score`,
      /at most 100/,
    );
  });

  it("rejects a non-object", () => {
    expectWireError(() => parsePaymentRequirements("x"), F, /object/);
    expectWireError(() => parsePaymentRequirements(null, "accepted"), "accepted", /object/);
  });
});

describe("sdk/x402: policy in extra", () => {
  it("round-trips a policy through extra, keeping other keys", () => {
    const extra = extraFromPolicy(policy, { name: "Surety credit" });
    expect(extra.name).to.equal("Surety credit");
    expect(extra.validation_registry_address).to.equal(REGISTRY);
    expect(extra.validator_agent_id).to.equal("7");
    expect(policyFromExtra(extra)).to.deep.equal(policy);
  });

  it("uses the same field names as claims.validation_policy", () => {
    const extra = extraFromPolicy(policy);
    expect(Object.keys(extra).sort()).to.deep.equal(Object.keys(toWireValidationPolicy(policy)).sort());
  });

  it("carries the optional integrity fields", () => {
    const full = { ...policy, chainId: 31337, requestHash: "0x" + "cd".repeat(32) };
    expect(policyFromExtra(extraFromPolicy(full))).to.deep.equal(full);
  });

  it("finds no policy in absent, null or unrelated extra", () => {
    expect(policyFromExtra(undefined)).to.equal(null);
    expect(policyFromExtra(null)).to.equal(null);
    expect(policyFromExtra({})).to.equal(null);
    expect(policyFromExtra({ name: "USDC", version: "2" })).to.equal(null);
  });

  it("rejects a partial or malformed policy, naming the field", () => {
    const partial: Json = { ...extraFromPolicy(policy) };
    delete partial.job_hash;
    expectWireError(() => policyFromExtra(partial), "paymentRequirements.extra.job_hash");
    expectWireError(
      () => policyFromExtra({ validation_deadline: 5 }, "extra"),
      "extra.validation_registry_address",
    );
    expectWireError(() => policyFromExtra([], "extra"), "extra", /object/);
  });
});

describe("sdk/x402: parsePaymentPayload", () => {
  it("parses a v1 payload", () => {
    const parsed = parsePaymentPayload(payloadV1());
    expect(parsed).to.deep.equal({
      x402Version: 1,
      scheme: SCHEME,
      network: NETWORK,
      payload: parseSignedGuarantee(signed(wireClaimsV1())),
    });
    expect(payloadScheme(parsed)).to.equal(SCHEME);
    expect(payloadNetwork(parsed)).to.equal(NETWORK);
  });

  it("parses a v1 payload without the optional scheme and network", () => {
    const parsed = parsePaymentPayload({ x402Version: 1, payload: signed(wireClaimsV1()) });
    expect(parsed.scheme).to.equal(undefined);
    expect(payloadScheme(parsed)).to.equal(undefined);
  });

  it("parses a v2 payload and takes scheme and network from accepted", () => {
    const parsed = parsePaymentPayload(payloadV2());
    expect(parsed.x402Version).to.equal(2);
    if (parsed.x402Version !== 2) return;
    expect(parsed.accepted).to.deep.equal(requirementsV2());
    expect(parsed.payload.claims.version).to.equal(2);
    expect(parsed.resource).to.deep.equal(payloadV2().resource);
    expect(payloadScheme(parsed)).to.equal(SCHEME);
    expect(payloadNetwork(parsed)).to.equal(NETWORK);
  });

  it("accepts top-level scheme/network and extensions on v2", () => {
    const parsed = parsePaymentPayload({
      ...payloadV2(),
      scheme: SCHEME,
      network: NETWORK,
      extensions: { bazaar: {} },
    });
    expect(parsed.scheme).to.equal(SCHEME);
    expect(parsed.x402Version === 2 && parsed.extensions).to.deep.equal({ bazaar: {} });
  });

  it("returns to the canonical wire form", () => {
    const wire = payloadV1();
    expect(toWirePaymentPayload(parsePaymentPayload(wire))).to.deep.equal(wire);
    const v2 = payloadV2();
    expect(JSON.parse(JSON.stringify(toWirePaymentPayload(parsePaymentPayload(v2))))).to.deep.equal(v2);
  });

  const F = "paymentPayload";
  const v1Cases: [string, unknown, string, RegExp?][] = [
    ["x402Version", DELETE, `${F}.x402Version`, /1 or 2/],
    ["x402Version", 3, `${F}.x402Version`, /1 or 2/],
    ["x402Version", "1", `${F}.x402Version`, /1 or 2/],
    ["scheme", "", `${F}.scheme`, /empty/],
    ["scheme", 7, `${F}.scheme`],
    ["network", "eip155", `${F}.network`, /CAIP-2/],
    ["payload", DELETE, `${F}.payload`, /object/],
    ["payload", [], `${F}.payload`, /object/],
    ["payload.claims", DELETE, `${F}.payload.claims`, /object/],
    ["payload.signature", DELETE, `${F}.payload.signature`],
    ["payload.signature", "0x", `${F}.payload.signature`, /must not be empty/],
    ["payload.signature", "0x" + "11".repeat(2049), `${F}.payload.signature`, /at most 2048 bytes/],
    ["payload.scheme", DELETE, `${F}.payload.scheme`],
    ["payload.scheme", "eip1271", `${F}.payload.scheme`, /eip712/],
    ["payload.claims.version", 3, `${F}.payload.claims.version`],
    ["payload.claims.user_address", DELETE, `${F}.payload.claims.user_address`],
    ["payload.claims.recipient_address", "0x12", `${F}.payload.claims.recipient_address`],
    ["payload.claims.req_id", 42, `${F}.payload.claims.req_id`, /got number/],
    ["payload.claims.amount", "0", `${F}.payload.claims.amount`, /greater than zero/],
    ["payload.claims.amount", DELETE, `${F}.payload.claims.amount`],
    ["payload.claims.asset_address", "ETH", `${F}.payload.claims.asset_address`],
    ["payload.claims.timestamp", "1700000000", `${F}.payload.claims.timestamp`, /got string/],
    ["payload.claims.validation_policy", {}, `${F}.payload.claims.validation_policy`, /version 1/],
  ];
  for (const [path, value, field, reason] of v1Cases) {
    it(`v1: rejects ${path} = ${value === DELETE ? "(missing)" : JSON.stringify(value)}`, () => {
      expectWireError(() => parsePaymentPayload(mutate(payloadV1(), path, value)), field, reason);
    });
  }

  const v2Cases: [string, unknown, string, RegExp?][] = [
    ["accepted", DELETE, `${F}.accepted`, /required for x402Version 2/],
    ["accepted", "svc-credit", `${F}.accepted`, /object/],
    ["accepted.payTo", "0x00", `${F}.accepted.payTo`],
    ["accepted.network", "solana:mainnet", `${F}.accepted.network`],
    ["accepted.extra", { job_hash: "0x00" }, `${F}.accepted.extra.validation_registry_address`],
    ["payload.claims.validation_policy", null, `${F}.payload.claims.validation_policy`, /required/],
    [
      "payload.claims.validation_policy.job_hash",
      "0x1234",
      `${F}.payload.claims.validation_policy.job_hash`,
      /32-byte/,
    ],
    ["resource", "http://x", `${F}.resource`, /object/],
    ["resource", { description: "no url" }, `${F}.resource.url`],
    ["resource", { url: "" }, `${F}.resource.url`, /empty/],
    ["resource", { url: "http://x", mimeType: 1 }, `${F}.resource.mimeType`],
    ["extensions", [], `${F}.extensions`, /object/],
    ["scheme", "exact", `${F}.scheme`, /accepted.scheme/],
    ["network", "eip155:1", `${F}.network`, /accepted.network/],
  ];
  for (const [path, value, field, reason] of v2Cases) {
    it(`v2: rejects ${path} = ${value === DELETE ? "(missing)" : JSON.stringify(value)}`, () => {
      expectWireError(() => parsePaymentPayload(mutate(payloadV2(), path, value)), field, reason);
    });
  }

  it("rejects a non-object payload envelope", () => {
    expectWireError(() => parsePaymentPayload("x"), F, /object/);
    expectWireError(() => parsePaymentPayload(null), F, /null/);
  });
});

describe("sdk/x402: resolveX402Version", () => {
  const v1 = parsePaymentPayload(payloadV1());
  const v2 = parsePaymentPayload(payloadV2());

  it("takes the payload's version when the body has none", () => {
    expect(resolveX402Version(undefined, v1)).to.equal(1);
    expect(resolveX402Version(null, v2)).to.equal(2);
  });

  it("takes the body's version when it agrees", () => {
    expect(resolveX402Version(1, v1)).to.equal(1);
    expect(resolveX402Version(2, v2)).to.equal(2);
  });

  it("rejects a mismatch and a malformed version", () => {
    expectWireError(() => resolveX402Version(2, v1), "x402Version", /paymentPayload.x402Version is 1/);
    expectWireError(() => resolveX402Version(1, v2), "x402Version", /must agree/);
    expectWireError(() => resolveX402Version("2", v2), "x402Version", /1 or 2/);
    expectWireError(() => resolveX402Version(0, v2), "x402Version", /1 or 2/);
  });
});

describe("sdk/x402: parseFacilitatorRequest (/verify, /settle bodies)", () => {
  it("parses a v1 body with and without a top-level version", () => {
    const body = { x402Version: 1, paymentPayload: payloadV1(), paymentRequirements: requirementsV1() };
    const parsed = parseFacilitatorRequest(body);
    expect(parsed.x402Version).to.equal(1);
    expect(parsed.paymentRequirements).to.deep.equal(requirementsV1());
    const { x402Version: _omitted, ...withoutVersion } = body;
    expect(parseFacilitatorRequest(withoutVersion).x402Version).to.equal(1);
  });

  it("parses a v2 body", () => {
    const parsed = parseFacilitatorRequest({
      paymentPayload: payloadV2(),
      paymentRequirements: requirementsV2(),
    });
    expect(parsed.x402Version).to.equal(2);
    expect(policyFromExtra(parsed.paymentRequirements.extra)).to.deep.equal(policy);
  });

  it("names the faulty field", () => {
    const good = { paymentPayload: payloadV1(), paymentRequirements: requirementsV1() };
    expectWireError(() => parseFacilitatorRequest([]), "body", /object/);
    expectWireError(
      () => parseFacilitatorRequest({ paymentRequirements: requirementsV1() }),
      "paymentPayload",
      /required/,
    );
    expectWireError(
      () => parseFacilitatorRequest({ paymentPayload: payloadV1() }),
      "paymentRequirements",
      /required/,
    );
    expectWireError(
      () => parseFacilitatorRequest(mutate(good, "paymentPayload.payload.claims.amount", "ten")),
      "paymentPayload.payload.claims.amount",
    );
    expectWireError(
      () => parseFacilitatorRequest(mutate(good, "paymentRequirements.payTo", 5)),
      "paymentRequirements.payTo",
    );
    expectWireError(() => parseFacilitatorRequest({ ...good, x402Version: 2 }), "x402Version", /must agree/);
  });
});

describe("sdk/x402: facilitator results", () => {
  const certificate = { claims: "0x" + "00".repeat(352), signature: "0x" + "a5".repeat(48) };

  it("parses verify results", () => {
    expect(parseVerifyResult({ isValid: true, invalidReason: null, certificate: null })).to.deep.equal({
      isValid: true,
      invalidReason: null,
      certificate: null,
    });
    expect(parseVerifyResult({ isValid: false, invalidReason: "amount_mismatch" })).to.deep.equal({
      isValid: false,
      invalidReason: "amount_mismatch",
      certificate: null,
    });
    expectWireError(() => parseVerifyResult({ invalidReason: null }), "verifyResult.isValid", /boolean/);
    expectWireError(() => parseVerifyResult({ isValid: "true" }), "verifyResult.isValid", /boolean/);
    expectWireError(
      () => parseVerifyResult({ isValid: false, invalidReason: 3 }),
      "verifyResult.invalidReason",
    );
    expectWireError(
      () => parseVerifyResult({ isValid: true, certificate }),
      "verifyResult.certificate",
      /null/,
    );
  });

  it("parses settle results", () => {
    const ok = { success: true, error: null, txHash: null, networkId: NETWORK, certificate };
    expect(parseSettleResult(ok)).to.deep.equal(ok);
    const failed = { success: false, error: "Core refused: duplicate guarantee" };
    expect(parseSettleResult(failed)).to.deep.equal({
      ...failed,
      txHash: null,
      networkId: null,
      certificate: null,
    });
    expectWireError(() => parseSettleResult({ ...ok, success: 1 }), "settleResult.success", /boolean/);
    expectWireError(
      () => parseSettleResult({ ...ok, networkId: "base" }),
      "settleResult.networkId",
      /CAIP-2/,
    );
    expectWireError(() => parseSettleResult({ ...ok, error: {} }), "settleResult.error");
    expectWireError(() => parseSettleResult({ ...ok, txHash: 1 }), "settleResult.txHash");
    expectWireError(
      () => parseSettleResult({ ...ok, certificate: { ...certificate, signature: "0x00" } }),
      "settleResult.certificate.signature",
      /48 bytes/,
    );
    expectWireError(
      () => parseSettleResult({ ...ok, certificate: null }),
      "settleResult.certificate",
      /required/,
    );
  });

  it("parses supported kinds", () => {
    const supported = {
      kinds: [
        { x402Version: 1, scheme: SCHEME, network: NETWORK },
        { x402Version: 2, scheme: SCHEME, network: NETWORK, extra: null },
        { scheme: "exact", network: "solana:mainnet" },
      ],
      extensions: [],
      signers: { "eip155:*": [RECIPIENT] },
    };
    expect(parseSupportedKinds(supported)).to.deep.equal(supported);
    expectWireError(() => parseSupportedKinds({ ...supported, kinds: {} }), "supported.kinds", /array/);
    expectWireError(
      () => parseSupportedKinds({ ...supported, kinds: [{ scheme: SCHEME }] }),
      "supported.kinds[0].network",
    );
    expectWireError(
      () =>
        parseSupportedKinds({ ...supported, kinds: [{ scheme: SCHEME, network: NETWORK, x402Version: 3 }] }),
      "supported.kinds[0].x402Version",
    );
    expectWireError(
      () => parseSupportedKinds({ ...supported, extensions: undefined }),
      "supported.extensions",
    );
    expectWireError(() => parseSupportedKinds({ ...supported, signers: [] }), "supported.signers", /object/);
    expectWireError(
      () => parseSupportedKinds({ ...supported, signers: { "eip155:*": "0xabc" } }),
      "supported.signers.eip155:*",
      /array/,
    );
  });
});

describe("sdk/x402: parsePaymentRequired (402 answers)", () => {
  const v2Required = {
    x402Version: 2,
    error: "payment required",
    resource: { url: "http://127.0.0.1:3000/premium", description: "Premium", mimeType: "application/json" },
    accepts: [requirementsV2()],
  };

  it("parses a v2 answer and a v1 answer", () => {
    expect(parsePaymentRequired(v2Required)).to.deep.equal(v2Required);
    const v1Required = { x402Version: 1, error: "X-PAYMENT header is required", accepts: [requirementsV1()] };
    expect(parsePaymentRequired(v1Required)).to.deep.equal(v1Required);
  });

  it("skips options in other schemes and keeps ours", () => {
    const exact = { scheme: "exact", network: "solana:mainnet", amount: "1", asset: "USDC", payTo: "abc" };
    const parsed = parsePaymentRequired({ ...v2Required, accepts: [exact, requirementsV2()] });
    expect(parsed.accepts).to.deep.equal([requirementsV2()]);
  });

  it("names the faulty field", () => {
    expectWireError(
      () => parsePaymentRequired({ ...v2Required, accepts: [{ scheme: "exact" }] }),
      "paymentRequired.accepts",
      /svc-credit/,
    );
    expectWireError(() => parsePaymentRequired({ ...v2Required, accepts: [] }), "paymentRequired.accepts");
    expectWireError(
      () => parsePaymentRequired({ ...v2Required, accepts: undefined }),
      "paymentRequired.accepts",
    );
    expectWireError(
      () => parsePaymentRequired({ ...v2Required, accepts: [{ ...requirementsV2(), payTo: "x" }] }),
      "paymentRequired.accepts[0].payTo",
    );
    expectWireError(
      () => parsePaymentRequired({ ...v2Required, accepts: [5] }),
      "paymentRequired.accepts[0]",
    );
    expectWireError(
      () => parsePaymentRequired({ ...v2Required, x402Version: 0 }),
      "paymentRequired.x402Version",
    );
    expectWireError(
      () => parsePaymentRequired({ ...v2Required, resource: {} }),
      "paymentRequired.resource.url",
    );
  });
});

describe("sdk/x402: header encoding", () => {
  it("round-trips v1 and v2 payment headers", () => {
    for (const wire of [payloadV1(), payloadV2()]) {
      const payload: PaymentPayload = parsePaymentPayload(wire);
      const header = encodePaymentHeader(payload);
      expect(header).to.match(/^[A-Za-z0-9+/]+={0,2}$/);
      expect(decodePaymentHeader(header)).to.deep.equal(payload);
      expect(JSON.parse(Buffer.from(header, "base64").toString("utf8"))).to.deep.equal(
        JSON.parse(JSON.stringify(toWirePaymentPayload(payload))),
      );
    }
  });

  it("decodes URL-safe and unpadded base64", () => {
    // Runs of '?' and '~' encode to '/' and '+' at every alignment; asserted so the test proves something.
    const wire = mutate(payloadV2(), "resource.description", "??~~??~~??~~");
    const json = JSON.stringify(wire);
    const standard = Buffer.from(json, "utf8").toString("base64");
    expect(standard).to.match(/[+/]/);
    expect(standard).to.match(/=$/);
    const urlSafe = Buffer.from(json, "utf8").toString("base64url");
    expect(urlSafe).to.match(/[-_]/);
    const expected = parsePaymentPayload(wire);
    expect(decodePaymentHeader(urlSafe)).to.deep.equal(expected);
    expect(decodePaymentHeader(standard)).to.deep.equal(expected);
    expect(decodePaymentHeader(standard.replace(/=+$/, ""))).to.deep.equal(expected);
    expect(decodePaymentHeader(` ${standard} `)).to.deep.equal(expected);
  });

  it("rejects bad base64, UTF-8 and JSON with the header's field name", () => {
    const F = "X-PAYMENT";
    expectWireError(() => decodePaymentHeader("", F), F, /empty/);
    expectWireError(() => decodePaymentHeader("   ", F), F, /empty/);
    expectWireError(() => decodePaymentHeader(undefined, F), F, /got undefined/);
    expectWireError(() => decodePaymentHeader("@@@@", F), F, /base64/);
    expectWireError(() => decodePaymentHeader("abcde", F), F, /base64/);
    expectWireError(() => decodePaymentHeader("abc===", F), F, /base64/);
    expectWireError(() => decodePaymentHeader("ab=", F), F, /base64/);
    expectWireError(() => decodePaymentHeader("a+b_", F), F, /base64/);
    expectWireError(() => decodePaymentHeader("eyJh IjoxfQ==", F), F, /base64/);
    expectWireError(
      () => decodePaymentHeader(Buffer.from([0xff, 0xfe, 0x7b]).toString("base64"), F),
      F,
      /UTF-8/,
    );
    expectWireError(() => decodePaymentHeader(Buffer.from("not json").toString("base64"), F), F, /JSON/);
    expectWireError(() => decodePaymentHeader(Buffer.from("[1,2]").toString("base64"), F), F, /object/);
    expectWireError(
      () => decodePaymentHeader(Buffer.from(JSON.stringify({ x402Version: 1 })).toString("base64"), F),
      `${F}.payload`,
    );
  });

  it("rejects headers over 16 KiB before decoding them", () => {
    const big = Buffer.from(JSON.stringify({ ...payloadV1(), pad: "x".repeat(MAX_HEADER_BYTES) })).toString(
      "base64",
    );
    expectWireError(() => decodePaymentHeader(big), "paymentPayload", /larger than 16384 bytes/);
    expectWireError(() => decodeBase64Json("A".repeat(MAX_HEADER_BYTES + 4), "h"), "h", /larger/);
    // Exactly at the limit is fine: 12288 bytes of JSON encode to 16384 base64 characters.
    const atLimit = Buffer.from(`"${"x".repeat(12_286)}"`).toString("base64");
    expect(atLimit.length).to.equal(MAX_HEADER_BYTES);
    expect(decodeBase64Json(atLimit, "h")).to.be.a("string");
    expectWireError(() => decodeBase64Json(atLimit + "AAAA", "h"), "h", /larger/);
  });

  it("round-trips the PAYMENT-REQUIRED header", () => {
    const required: PaymentRequired = parsePaymentRequired({
      x402Version: 2,
      resource: { url: "http://127.0.0.1:3000/premium" },
      accepts: [requirementsV2()],
    });
    const header = encodePaymentRequiredHeader(required);
    expect(decodePaymentRequiredHeader(header)).to.deep.equal(required);
    expectWireError(() => decodePaymentRequiredHeader("%%%"), "paymentRequired", /base64/);
  });

  it("round-trips the settlement response header", () => {
    const result: SettleResult = {
      success: true,
      error: null,
      txHash: null,
      networkId: NETWORK,
      certificate: { claims: "0x" + "01".repeat(352), signature: "0x" + "a5".repeat(48) },
    };
    expect(decodePaymentResponseHeader(encodePaymentResponseHeader(result))).to.deep.equal(result);
    const bad = Buffer.from(JSON.stringify({ ...result, success: "yes" })).toString("base64");
    expectWireError(() => decodePaymentResponseHeader(bad, "PAYMENT-RESPONSE"), "PAYMENT-RESPONSE.success");
  });
});
