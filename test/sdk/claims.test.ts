import { expect } from "chai";
import {
  MAX_VALIDATION_TAG_BYTES,
  parseClaims,
  MAX_PAYER_SIGNATURE_BYTES,
  parseSignatureHex,
  parseSignedGuarantee,
  parseSigningScheme,
  parseValidationPolicy,
  toWireClaims,
  toWireSignedGuarantee,
  type GuaranteeClaims,
  type WireClaims,
  type WireValidationPolicy,
} from "../../sdk/claims";
import { WireError } from "../../sdk/errors";
import { MAX_UINT256 } from "../../sdk/wire";

const USER = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const ASSET = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const REGISTRY = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
const VALIDATOR = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const JOB_HASH = "0x" + "ab".repeat(32);
const SIGNATURE = "0x" + "11".repeat(65);

const wireV1: WireClaims = {
  version: 1,
  user_address: USER,
  recipient_address: RECIPIENT,
  req_id: "42",
  amount: "1000000",
  asset_address: ASSET,
  timestamp: 1_700_000_000,
};

const wirePolicy: WireValidationPolicy = {
  validation_registry_address: REGISTRY,
  validator_address: VALIDATOR,
  validator_agent_id: "7",
  min_validation_score: 80,
  job_hash: JOB_HASH,
  required_validation_tag: "quality",
  validation_deadline: 1_700_003_600,
};

const wireV2: WireClaims = { ...wireV1, version: 2, validation_policy: wirePolicy };

function expectWireError(fn: () => unknown, field: string, reason?: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected a WireError for ${field}`).to.be.instanceOf(WireError);
  expect((caught as WireError).field).to.equal(field);
  if (reason) expect((caught as WireError).reason).to.match(reason);
}

function without<T extends object>(value: T, key: keyof T): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  delete copy[key as string];
  return copy;
}

describe("sdk/claims", () => {
  describe("parseClaims", () => {
    it("parses V1 claims", () => {
      expect(parseClaims(wireV1)).to.deep.equal({
        version: 1,
        user: USER,
        recipient: RECIPIENT,
        reqId: 42n,
        amount: 1_000_000n,
        asset: ASSET,
        timestamp: 1_700_000_000,
      });
    });

    it("parses V2 claims with their policy", () => {
      const claims = parseClaims(wireV2);
      expect(claims.version).to.equal(2);
      expect(claims.version === 2 && claims.policy).to.deep.equal({
        registry: REGISTRY,
        validator: VALIDATOR,
        agentId: 7n,
        minScore: 80,
        jobHash: JOB_HASH,
        tag: "quality",
        deadline: 1_700_003_600,
      });
    });

    it("accepts every version spelling", () => {
      for (const version of [1, "1", "v1"]) expect(parseClaims({ ...wireV1, version }).version).to.equal(1);
      for (const version of [2, "2", "v2"]) expect(parseClaims({ ...wireV2, version }).version).to.equal(2);
    });

    it("normalises addresses of any case to EIP-55 and hex numbers to bigint", () => {
      const claims = parseClaims({
        ...wireV2,
        user_address: USER.toLowerCase(),
        recipient_address: "0x" + RECIPIENT.slice(2).toUpperCase(),
        asset_address: ASSET.toLowerCase(),
        req_id: "0x2a",
        amount: "0xF4240",
        validation_policy: {
          ...wirePolicy,
          validation_registry_address: REGISTRY.toLowerCase(),
          validator_address: VALIDATOR.toLowerCase(),
          validator_agent_id: "0x07",
          job_hash: JOB_HASH.toUpperCase().replace("0X", "0x"),
        },
      });
      expect(claims).to.deep.include({
        user: USER,
        recipient: RECIPIENT,
        asset: ASSET,
        reqId: 42n,
        amount: 1_000_000n,
      });
      expect(claims.version === 2 && claims.policy).to.deep.include({
        registry: REGISTRY,
        validator: VALIDATOR,
        agentId: 7n,
        jobHash: JOB_HASH,
      });
    });

    it("accepts req_id 0 and the maximum uint256 values", () => {
      const max = MAX_UINT256.toString();
      const claims = parseClaims({ ...wireV1, req_id: "0", amount: max });
      expect(claims.reqId).to.equal(0n);
      expect(claims.amount).to.equal(MAX_UINT256);
    });

    it("accepts a null policy on V1", () => {
      expect(parseClaims({ ...wireV1, validation_policy: null }).version).to.equal(1);
    });

    it("rejects a V1 with a policy and a V2 without", () => {
      expectWireError(
        () => parseClaims({ ...wireV1, validation_policy: wirePolicy }),
        "claims.validation_policy",
        /version 1/,
      );
      expectWireError(
        () => parseClaims({ ...wireV1, validation_policy: {} }),
        "claims.validation_policy",
        /version 1/,
      );
      expectWireError(
        () => parseClaims({ ...wireV2, validation_policy: null }),
        "claims.validation_policy",
        /required/,
      );
      expectWireError(
        () => parseClaims(without(wireV2, "validation_policy")),
        "claims.validation_policy",
        /required/,
      );
      expectWireError(
        () => parseClaims({ ...wireV2, validation_policy: "x" }),
        "claims.validation_policy",
        /object/,
      );
      expectWireError(
        () => parseClaims({ ...wireV2, validation_policy: [] }),
        "claims.validation_policy",
        /object/,
      );
    });

    it("rejects a body that is not an object", () => {
      for (const value of [null, [], "claims", 1, undefined])
        expectWireError(() => parseClaims(value), "claims");
    });

    it("names the field under a custom prefix", () => {
      expectWireError(
        () => parseClaims({ ...wireV1, amount: "0" }, "payload.claims"),
        "payload.claims.amount",
      );
    });

    const addressFields = ["user_address", "recipient_address", "asset_address"] as const;
    const badAddresses: unknown[] = [
      undefined,
      null,
      1,
      "",
      "0x1234",
      USER.slice(2),
      "0x" + "g".repeat(40),
      USER + "00",
    ];
    for (const key of addressFields) {
      it(`rejects a malformed ${key}`, () => {
        for (const value of badAddresses)
          expectWireError(() => parseClaims({ ...wireV1, [key]: value }), `claims.${key}`);
      });
    }

    it("rejects the zero address as payer or recipient (ETH sent there is burnt)", () => {
      const zero = "0x0000000000000000000000000000000000000000";
      for (const key of ["user_address", "recipient_address"] as const) {
        expectWireError(() => parseClaims({ ...wireV1, [key]: zero }), `claims.${key}`);
      }
    });

    it("rejects a malformed req_id", () => {
      for (const value of [
        undefined,
        null,
        42,
        "",
        "-1",
        "1.0",
        "0x",
        "0xzz",
        "1".repeat(81),
        (MAX_UINT256 + 1n).toString(),
      ]) {
        expectWireError(() => parseClaims({ ...wireV1, req_id: value }), "claims.req_id");
      }
    });

    it("rejects a malformed or zero amount", () => {
      for (const value of [undefined, null, 5, "", "0", "0x0", "-5", "5.5", "1e6", "0x1" + "0".repeat(64)]) {
        expectWireError(() => parseClaims({ ...wireV1, amount: value }), "claims.amount");
      }
    });

    it("rejects a malformed timestamp", () => {
      for (const value of [undefined, null, "1700000000", -1, 1.5, NaN, 2 ** 53]) {
        expectWireError(() => parseClaims({ ...wireV1, timestamp: value }), "claims.timestamp");
      }
    });

    it("rejects a malformed version", () => {
      for (const value of [undefined, null, 0, 3, "V1", "v3", "", true]) {
        expectWireError(() => parseClaims({ ...wireV1, version: value }), "claims.version");
      }
    });
  });

  describe("parseValidationPolicy", () => {
    const field = "claims.validation_policy";
    const cases: [keyof WireValidationPolicy, unknown[]][] = [
      ["validation_registry_address", [undefined, null, 1, "", "0x12", "0x" + "z".repeat(40)]],
      ["validator_address", [undefined, null, 1, "", "0x12", REGISTRY + "0"]],
      ["validator_agent_id", [undefined, null, 7, "", "-1", "0x", "abc", (MAX_UINT256 + 1n).toString()]],
      ["min_validation_score", [undefined, null, "80", -1, 101, 80.5, NaN]],
      [
        "job_hash",
        [
          undefined,
          null,
          1,
          "",
          "0x" + "ab".repeat(31),
          "0x" + "ab".repeat(33),
          "ab".repeat(32),
          "0x" + "zz".repeat(32),
        ],
      ],
      [
        "required_validation_tag",
        [undefined, null, 1, ["quality"], "x".repeat(MAX_VALIDATION_TAG_BYTES + 1)],
      ],
      ["validation_deadline", [undefined, null, "1700003600", -1, 1.5, 2 ** 53]],
      ["validation_chain_id", [null, "31337", -1, 1.5]],
      ["validation_request_hash", [null, 1, "", "0x" + "ab".repeat(31)]],
    ];
    for (const [key, values] of cases) {
      it(`rejects a malformed ${key}`, () => {
        for (const value of values) {
          const policy = value === undefined ? without(wirePolicy, key) : { ...wirePolicy, [key]: value };
          expectWireError(() => parseClaims({ ...wireV2, validation_policy: policy }), `${field}.${key}`);
        }
      });
    }

    it("accepts score bounds 0 and 100, agent id 0, an empty tag and a unicode tag at the byte limit", () => {
      expect(
        parseValidationPolicy({ ...wirePolicy, min_validation_score: 0, validator_agent_id: "0" }),
      ).to.deep.include({
        minScore: 0,
        agentId: 0n,
      });
      expect(parseValidationPolicy({ ...wirePolicy, min_validation_score: 100 }).minScore).to.equal(100);
      expect(parseValidationPolicy({ ...wirePolicy, required_validation_tag: "" }).tag).to.equal("");
      const tag = "✓".repeat(MAX_VALIDATION_TAG_BYTES / 4) + "ab".repeat(MAX_VALIDATION_TAG_BYTES / 8);
      expect(Buffer.byteLength(tag)).to.be.at.most(MAX_VALIDATION_TAG_BYTES);
      expect(parseValidationPolicy({ ...wirePolicy, required_validation_tag: tag }).tag).to.equal(tag);
      expectWireError(
        () => parseValidationPolicy({ ...wirePolicy, required_validation_tag: "✓".repeat(86) }),
        "validation_policy.required_validation_tag",
        /at most 256 bytes/,
      );
    });

    it("keeps the optional integrity fields when given", () => {
      const hash = "0x" + "CD".repeat(32);
      const policy = parseValidationPolicy({
        ...wirePolicy,
        validation_chain_id: 31337,
        validation_request_hash: hash,
      });
      expect(policy.chainId).to.equal(31337);
      expect(policy.requestHash).to.equal(hash.toLowerCase());
      expect(parseValidationPolicy(wirePolicy)).to.not.have.any.keys("chainId", "requestHash");
    });
  });

  describe("signed guarantees", () => {
    it("parses claims, signature and scheme", () => {
      const signed = parseSignedGuarantee({
        claims: wireV1,
        signature: SIGNATURE.toUpperCase().replace("0X", "0x"),
        scheme: "eip191",
      });
      expect(signed.signature).to.equal(SIGNATURE);
      expect(signed.scheme).to.equal("eip191");
      expect(signed.claims.user).to.equal(USER);
      expect(toWireSignedGuarantee(signed)).to.deep.equal({
        claims: toWireClaims(signed.claims),
        signature: SIGNATURE,
        scheme: "eip191",
      });
    });

    it("names the field of each malformed part", () => {
      expectWireError(() => parseSignedGuarantee(null), "body");
      expectWireError(() => parseSignedGuarantee({ signature: SIGNATURE, scheme: "eip712" }), "claims");
      expectWireError(() => parseSignedGuarantee({ claims: wireV1, scheme: "eip712" }), "signature");
      expectWireError(() => parseSignedGuarantee({ claims: wireV1, signature: SIGNATURE }), "scheme");
      expectWireError(
        () =>
          parseSignedGuarantee(
            { claims: { ...wireV1, amount: "0" }, signature: SIGNATURE, scheme: "eip712" },
            "payload",
          ),
        "payload.claims.amount",
      );
      expectWireError(
        () => parseSignedGuarantee({ claims: wireV1, signature: SIGNATURE, scheme: "x" }, "payload"),
        "payload.scheme",
      );
    });

    it("accepts only the two schemes", () => {
      expect(parseSigningScheme("eip712")).to.equal("eip712");
      expect(parseSigningScheme("eip191")).to.equal("eip191");
      for (const value of ["EIP712", "eth_sign", "", null, undefined, 712]) {
        expectWireError(() => parseSigningScheme(value), "scheme", /eip712/);
      }
    });

    it("takes a payer signature of 1 to MAX_PAYER_SIGNATURE_BYTES bytes (contract wallets sign other lengths)", () => {
      expect(parseSignatureHex(SIGNATURE)).to.equal(SIGNATURE);
      for (const length of [1, 64, 66, 130, MAX_PAYER_SIGNATURE_BYTES]) {
        const value = "0x" + "Ab".repeat(length);
        expect(parseSignatureHex(value)).to.equal(value.toLowerCase());
      }
      expectWireError(
        () => parseSignatureHex("0x" + "11".repeat(MAX_PAYER_SIGNATURE_BYTES + 1)),
        "signature",
        new RegExp(`at most ${MAX_PAYER_SIGNATURE_BYTES} bytes`),
      );
      expectWireError(() => parseSignatureHex("0x"), "signature", /must not be empty/);
      for (const value of ["11".repeat(65), "0x" + "1".repeat(129), "0x", 1, null]) {
        expectWireError(() => parseSignatureHex(value), "signature");
      }
    });
  });

  describe("round trip", () => {
    const cases: [string, WireClaims][] = [
      ["V1", wireV1],
      ["V2", wireV2],
      [
        "V2 with integrity fields and a unicode tag",
        {
          ...wireV2,
          validation_policy: {
            ...wirePolicy,
            required_validation_tag: "検証 🚀",
            validation_chain_id: 31337,
            validation_request_hash: "0x" + "cd".repeat(32),
          },
        },
      ],
    ];
    for (const [label, wire] of cases) {
      it(`parseClaims(toWireClaims(c)) returns c for ${label}`, () => {
        const claims: GuaranteeClaims = parseClaims(wire);
        const emitted = toWireClaims(claims);
        expect(parseClaims(emitted)).to.deep.equal(claims);
        expect(parseClaims(JSON.parse(JSON.stringify(emitted)))).to.deep.equal(claims);
      });
    }

    it("emits the canonical wire form", () => {
      const emitted = toWireClaims(
        parseClaims({
          ...wireV1,
          version: "v1",
          user_address: USER.toLowerCase(),
          req_id: "0x2a",
          amount: "0xf4240",
        }),
      );
      expect(emitted).to.deep.equal({ ...wireV1, validation_policy: null });
      const v2 = toWireClaims(parseClaims({ ...wireV2, version: "v2" }));
      expect(v2.version).to.equal(2);
      expect(v2.validation_policy).to.deep.equal(wirePolicy);
    });
  });
});
