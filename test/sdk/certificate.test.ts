import { expect } from "chai";
import {
  AbiCoder,
  concat,
  dataSlice,
  getAddress,
  keccak256,
  toBeHex,
  toUtf8Bytes,
  zeroPadValue,
} from "ethers";
import type { GuaranteeClaims, GuaranteeClaimsV1, GuaranteeClaimsV2 } from "../../sdk/claims";
import {
  type DecodedCertificateClaims,
  certificateMatchesRequest,
  decodeCertificateClaims,
  encodeCertificateClaims,
  parseCertificate,
} from "../../sdk/certificate";
import { WireError } from "../../sdk/errors";
import { certificateDomain, guaranteeId } from "../../sdk/ids";
import { MAX_UINT256 } from "../../sdk/wire";

const abi = AbiCoder.defaultAbiCoder();
const WORD = 32;

// Types written out again on purpose: the test must not trust the module's constants.
const CLAIMS_LAYOUT = [
  "uint64",
  "bytes32",
  "bytes32",
  "address",
  "address",
  "uint256",
  "uint256",
  "address",
  "uint64",
  "bytes",
];
const POLICY_LAYOUT = ["address", "address", "uint256", "uint8", "bytes32", "string", "uint64"];

const deployment = { chainId: 31337, vault: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const otherVault = { chainId: 31337, vault: "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512" };
const otherChain = { chainId: 1, vault: deployment.vault };

const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const TOKEN = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0";
const REGISTRY = "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9";
const VALIDATOR = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";

const v1: GuaranteeClaimsV1 = {
  version: 1,
  user: USER,
  recipient: RECIPIENT,
  reqId: 42n,
  amount: 1_000_000n,
  asset: TOKEN,
  timestamp: 1_700_000_000,
};

const v2: GuaranteeClaimsV2 = {
  version: 2,
  user: USER,
  recipient: RECIPIENT,
  reqId: MAX_UINT256,
  amount: MAX_UINT256,
  asset: "0x0000000000000000000000000000000000000000",
  timestamp: Number.MAX_SAFE_INTEGER,
  policy: {
    registry: REGISTRY,
    validator: VALIDATOR,
    agentId: MAX_UINT256,
    minScore: 100,
    jobHash: "0x" + "ab".repeat(32),
    tag: "qualité ✓ 検証 🚀",
    deadline: Number.MAX_SAFE_INTEGER,
  },
};

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

/** Head word `index` of an ABI encoding. */
function word(hex: string, index: number): string {
  return dataSlice(hex, index * WORD, (index + 1) * WORD);
}

/** `hex` with head word `index` replaced by `value`. */
function withWord(hex: string, index: number, value: string): string {
  return concat([dataSlice(hex, 0, index * WORD), value, dataSlice(hex, (index + 1) * WORD)]);
}

/** Certificate claims built field by field with the ABI coder, bypassing the module's checks. */
function rawClaims(fields: {
  version?: bigint;
  amount?: bigint;
  timestamp?: bigint;
  policy?: string;
}): string {
  return abi.encode(CLAIMS_LAYOUT, [
    fields.version ?? 1n,
    certificateDomain(deployment),
    guaranteeId(deployment, USER, 42n),
    USER,
    RECIPIENT,
    42n,
    fields.amount ?? 1n,
    TOKEN,
    fields.timestamp ?? 1_700_000_000n,
    fields.policy ?? "0x",
  ]);
}

function rawPolicy(fields: { minScore?: number; tag?: string; deadline?: bigint }): string {
  return abi.encode(POLICY_LAYOUT, [
    REGISTRY,
    VALIDATOR,
    7n,
    fields.minScore ?? 50,
    "0x" + "11".repeat(32),
    fields.tag ?? "quality",
    fields.deadline ?? 1_700_000_600n,
  ]);
}

describe("sdk/certificate: claims codec", () => {
  describe("round trips", () => {
    it("decodes a V1 encoding back to the same claims, domain and id", () => {
      const hex = encodeCertificateClaims(v1, deployment);
      const decoded = decodeCertificateClaims(hex);
      expect(decoded).to.deep.equal({
        version: 1,
        domain: certificateDomain(deployment),
        guaranteeId: guaranteeId(deployment, USER, 42n),
        claims: v1,
      });
    });

    it("decodes a V2 encoding with a unicode tag and maximal values", () => {
      const hex = encodeCertificateClaims(v2, deployment);
      const decoded = decodeCertificateClaims(hex);
      expect(decoded.version).to.equal(2);
      expect(decoded.claims).to.deep.equal(v2);
      expect(decoded.guaranteeId).to.equal(guaranteeId(deployment, USER, MAX_UINT256));
    });

    it("emits lower-case hex and accepts upper-case input", () => {
      const hex = encodeCertificateClaims(v1, deployment);
      expect(hex).to.equal(hex.toLowerCase());
      const upper = "0x" + hex.slice(2).toUpperCase();
      expect(decodeCertificateClaims(upper).claims).to.deep.equal(v1);
    });

    it("leaves the policy's optional integrity fields out of the bytes", () => {
      const withIntegrity: GuaranteeClaimsV2 = {
        ...v2,
        policy: { ...v2.policy, chainId: 31337, requestHash: "0x" + "cd".repeat(32) },
      };
      expect(encodeCertificateClaims(withIntegrity, deployment)).to.equal(
        encodeCertificateClaims(v2, deployment),
      );
    });
  });

  describe("layout (checked against an independent decode)", () => {
    it("puts every V1 field in its position", () => {
      const hex = encodeCertificateClaims(v1, deployment);
      const fields = abi.decode(CLAIMS_LAYOUT, hex);
      expect(fields[0]).to.equal(1n);
      expect(fields[1]).to.equal(certificateDomain(deployment));
      expect(fields[2]).to.equal(guaranteeId(deployment, USER, 42n));
      expect(fields[3]).to.equal(USER);
      expect(fields[4]).to.equal(RECIPIENT);
      expect(fields[5]).to.equal(42n);
      expect(fields[6]).to.equal(1_000_000n);
      expect(fields[7]).to.equal(TOKEN);
      expect(fields[8]).to.equal(1_700_000_000n);
      expect(fields[9]).to.equal("0x");
      // Head: nine static words, the policy offset (10 words), then an empty bytes tail.
      expect(word(hex, 0)).to.equal(zeroPadValue("0x01", WORD));
      expect(word(hex, 9)).to.equal(zeroPadValue(toBeHex(10 * WORD), WORD));
      expect(word(hex, 10)).to.equal(zeroPadValue("0x", WORD));
      expect(hex.length).to.equal(2 + 11 * WORD * 2);
    });

    it("puts every V2 field and policy field in its position", () => {
      const hex = encodeCertificateClaims(v2, deployment);
      const fields = abi.decode(CLAIMS_LAYOUT, hex);
      expect(fields[0]).to.equal(2n);
      expect(fields[1]).to.equal(certificateDomain(deployment));
      expect(fields[2]).to.equal(guaranteeId(deployment, USER, MAX_UINT256));
      expect(fields[3]).to.equal(USER);
      expect(fields[4]).to.equal(RECIPIENT);
      expect(fields[5]).to.equal(MAX_UINT256);
      expect(fields[6]).to.equal(MAX_UINT256);
      expect(fields[7]).to.equal(v2.asset);
      expect(fields[8]).to.equal(BigInt(Number.MAX_SAFE_INTEGER));
      const policy = abi.decode(POLICY_LAYOUT, fields[9] as string);
      expect(policy[0]).to.equal(REGISTRY);
      expect(policy[1]).to.equal(VALIDATOR);
      expect(policy[2]).to.equal(MAX_UINT256);
      expect(policy[3]).to.equal(100n);
      expect(policy[4]).to.equal(v2.policy.jobHash);
      expect(policy[5]).to.equal(v2.policy.tag);
      expect(policy[6]).to.equal(BigInt(Number.MAX_SAFE_INTEGER));
      expect(word(hex, 0)).to.equal(zeroPadValue("0x02", WORD));
    });

    it("binds the deployment through the domain and the guarantee id", () => {
      const here = abi.decode(CLAIMS_LAYOUT, encodeCertificateClaims(v1, deployment));
      const there = abi.decode(CLAIMS_LAYOUT, encodeCertificateClaims(v1, otherVault));
      const elsewhere = abi.decode(CLAIMS_LAYOUT, encodeCertificateClaims(v1, otherChain));
      expect(there[1]).to.not.equal(here[1]);
      expect(there[2]).to.not.equal(here[2]);
      expect(elsewhere[1]).to.not.equal(here[1]);
      expect(elsewhere[2]).to.not.equal(here[2]);
    });
  });

  describe("rejects", () => {
    const FIELD = "certificate.claims";
    const v1Hex = encodeCertificateClaims(v1, deployment);
    const v2Hex = encodeCertificateClaims(v2, deployment);

    it("non-hex, odd-length, empty and non-string input", () => {
      expectWireError(() => decodeCertificateClaims("0x"), FIELD, /empty/);
      expectWireError(() => decodeCertificateClaims(v1Hex.slice(2)), FIELD, /hex/);
      expectWireError(() => decodeCertificateClaims(v1Hex + "0"), FIELD, /whole bytes/);
      expectWireError(() => decodeCertificateClaims("0xzz"), FIELD, /hex/);
      expectWireError(() => decodeCertificateClaims(42), FIELD, /got number/);
      expectWireError(() => decodeCertificateClaims(null), FIELD, /got null/);
    });

    it("names the field it is given", () => {
      expectWireError(
        () => decodeCertificateClaims("0x", "settleResult.certificate.claims"),
        "settleResult.certificate.claims",
      );
    });

    it("truncated encodings and garbage bytes", () => {
      expectWireError(() => decodeCertificateClaims(dataSlice(v1Hex, 0, 10 * WORD)), FIELD, /ABI/);
      expectWireError(() => decodeCertificateClaims(dataSlice(v2Hex, 0, v2Hex.length / 2 - 20)), FIELD);
      expectWireError(() => decodeCertificateClaims("0x" + "ff".repeat(11 * WORD)), FIELD);
      expectWireError(() => decodeCertificateClaims("0xdeadbeef"), FIELD, /ABI/);
    });

    it("trailing bytes after a valid encoding", () => {
      expectWireError(() => decodeCertificateClaims(v1Hex + "00"), FIELD, /canonical/);
      expectWireError(
        () => decodeCertificateClaims(concat([v1Hex, zeroPadValue("0x", WORD)])),
        FIELD,
        /canonical/,
      );
    });

    it("versions other than 1 and 2", () => {
      for (const version of [0n, 3n, 255n]) {
        expectWireError(
          () => decodeCertificateClaims(rawClaims({ version })),
          FIELD,
          /version must be 1 or 2/,
        );
      }
    });

    it("a V1 certificate with a policy and a V2 certificate without one", () => {
      expectWireError(
        () => decodeCertificateClaims(rawClaims({ policy: rawPolicy({}) })),
        FIELD,
        /no policy/,
      );
      expectWireError(
        () => decodeCertificateClaims(rawClaims({ version: 2n })),
        FIELD,
        /must carry a policy/,
      );
    });

    it("a V2 policy that does not decode", () => {
      expectWireError(
        () => decodeCertificateClaims(rawClaims({ version: 2n, policy: "0x1234" })),
        FIELD,
        /validation policy/,
      );
    });

    it("a V2 policy with trailing bytes", () => {
      const policy = concat([rawPolicy({}), zeroPadValue("0x", WORD)]);
      expectWireError(() => decodeCertificateClaims(rawClaims({ version: 2n, policy })), FIELD, /canonical/);
    });

    it("values outside the bounds wire claims accept", () => {
      expectWireError(() => decodeCertificateClaims(rawClaims({ amount: 0n })), FIELD, /amount/);
      expectWireError(
        () => decodeCertificateClaims(rawClaims({ timestamp: BigInt(Number.MAX_SAFE_INTEGER) + 1n })),
        FIELD,
        /timestamp/,
      );
      const highScore = rawClaims({ version: 2n, policy: rawPolicy({ minScore: 101 }) });
      expectWireError(() => decodeCertificateClaims(highScore), FIELD, /min score/);
      const longTag = rawClaims({ version: 2n, policy: rawPolicy({ tag: "x".repeat(257) }) });
      expectWireError(() => decodeCertificateClaims(longTag), FIELD, /tag/);
      const lateDeadline = rawClaims({
        version: 2n,
        policy: rawPolicy({ deadline: BigInt(Number.MAX_SAFE_INTEGER) + 1n }),
      });
      expectWireError(() => decodeCertificateClaims(lateDeadline), FIELD, /deadline/);
    });

    it("accepts a well-formed raw V2 encoding (the rejections above are not accidental)", () => {
      const decoded = decodeCertificateClaims(rawClaims({ version: 2n, policy: rawPolicy({}) }));
      expect(decoded.version).to.equal(2);
    });

    it("dirty padding in address and integer words", () => {
      const dirtyUser = withWord(v1Hex, 3, concat(["0x01", dataSlice(word(v1Hex, 3), 1)]));
      expectWireError(() => decodeCertificateClaims(dirtyUser), FIELD);
      const dirtyVersion = withWord(v1Hex, 0, concat(["0x01", dataSlice(word(v1Hex, 0), 1)]));
      expectWireError(() => decodeCertificateClaims(dirtyVersion), FIELD);
      const dirtyTimestamp = withWord(v1Hex, 8, concat(["0x80", dataSlice(word(v1Hex, 8), 1)]));
      expectWireError(() => decodeCertificateClaims(dirtyTimestamp), FIELD);
    });

    it("a non-standard offset to the policy bytes", () => {
      // Offset 11 words instead of 10, with a gap word: decodes to the same values, but is not canonical.
      const head = withWord(dataSlice(v2Hex, 0, 10 * WORD), 9, zeroPadValue(toBeHex(11 * WORD), WORD));
      const shifted = concat([head, zeroPadValue("0x", WORD), dataSlice(v2Hex, 10 * WORD)]);
      expect(abi.decode(CLAIMS_LAYOUT, shifted)[9]).to.equal(abi.decode(CLAIMS_LAYOUT, v2Hex)[9]);
      expectWireError(() => decodeCertificateClaims(shifted), FIELD, /canonical/);
    });

    for (const [name, hex] of [
      ["V1", v1Hex],
      ["V2", v2Hex],
    ]) {
      it(`every one-bit tamper of a ${name} encoding is rejected or changes the decoded content`, () => {
        const original = decodeCertificateClaims(hex);
        const bytes = Buffer.from(hex.slice(2), "hex");
        for (let i = 0; i < bytes.length; i++) {
          const tampered = Buffer.from(bytes);
          // Low bit on even bytes, high bit on odd ones: both ends of every word get hit.
          tampered[i] ^= i % 2 === 0 ? 0x01 : 0x80;
          let decoded: DecodedCertificateClaims | undefined;
          try {
            decoded = decodeCertificateClaims("0x" + tampered.toString("hex"));
          } catch (error) {
            expect(error, `byte ${i}`).to.be.instanceOf(WireError);
            continue;
          }
          expect(decoded, `byte ${i}`).to.not.deep.equal(original);
        }
      });
    }
  });
});

describe("sdk/certificate: the word-by-word encoder equals an independent ethers ABI encoding", () => {
  const ID_LAYOUT = ["bytes32", "uint256", "address", "address", "uint256"];
  const DOMAIN_LAYOUT = ["bytes32", "uint256", "address"];
  const idTag = keccak256(toUtf8Bytes("SURETY_GUARANTEE_ID_V1"));
  const domainTag = keccak256(toUtf8Bytes("SURETY_CERTIFICATE_V1"));

  function referenceDomain(d: { chainId: bigint | number; vault: string }): string {
    return keccak256(abi.encode(DOMAIN_LAYOUT, [domainTag, d.chainId, d.vault]));
  }
  function referenceId(d: { chainId: bigint | number; vault: string }, user: string, reqId: bigint): string {
    return keccak256(abi.encode(ID_LAYOUT, [idTag, d.chainId, d.vault, user, reqId]));
  }
  function referenceClaims(claims: GuaranteeClaims, d: { chainId: bigint | number; vault: string }): string {
    const policy =
      claims.version === 2
        ? abi.encode(POLICY_LAYOUT, [
            claims.policy.registry,
            claims.policy.validator,
            claims.policy.agentId,
            claims.policy.minScore,
            claims.policy.jobHash,
            claims.policy.tag,
            claims.policy.deadline,
          ])
        : "0x";
    return abi.encode(CLAIMS_LAYOUT, [
      claims.version,
      referenceDomain(d),
      referenceId(d, claims.user, claims.reqId),
      claims.user,
      claims.recipient,
      claims.reqId,
      claims.amount,
      claims.asset,
      claims.timestamp,
      policy,
    ]);
  }

  const deployments = [
    deployment,
    { chainId: 2n ** 64n + 1n, vault: "0x000000000000000000000000000000000000dead" },
    { chainId: 1n, vault: "0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF" },
  ];
  const ZERO = "0x0000000000000000000000000000000000000000";
  const cases: [string, GuaranteeClaims][] = [
    ["V1", v1],
    ["V1 with zeros", { ...v1, reqId: 0n, amount: 1n, asset: ZERO, timestamp: 0 }],
    [
      "V1 with maxima",
      { ...v1, reqId: MAX_UINT256, amount: MAX_UINT256, timestamp: Number.MAX_SAFE_INTEGER },
    ],
    ["V1 with lower-case addresses", { ...v1, user: USER.toLowerCase(), recipient: RECIPIENT.toLowerCase() }],
    ["V2 with maxima and a unicode tag", v2],
    [
      "V2 with an empty tag",
      { ...v2, policy: { ...v2.policy, tag: "", agentId: 0n, minScore: 0, deadline: 0 } },
    ],
    ["V2 with a one-word tag", { ...v2, policy: { ...v2.policy, tag: "x".repeat(32) } }],
    [
      "V2 with a long unicode tag",
      { ...v2, policy: { ...v2.policy, tag: "ünïcødé ✓ — a tag longer than one word, " + "y".repeat(200) } },
    ],
  ];

  for (const d of deployments) {
    it(`chain ${d.chainId}: certificate domain and guarantee ids`, () => {
      expect(certificateDomain(d)).to.equal(referenceDomain(d));
      for (const [, claims] of cases) {
        expect(guaranteeId(d, claims.user, claims.reqId)).to.equal(referenceId(d, claims.user, claims.reqId));
      }
    });
    for (const [name, claims] of cases) {
      it(`chain ${d.chainId}: ${name} claims, from a deployment and from a precomputed binding`, () => {
        const expected = referenceClaims(claims, d);
        expect(encodeCertificateClaims(claims, d)).to.equal(expected);
        const binding = {
          domain: referenceDomain(d),
          guaranteeId: referenceId(d, claims.user, claims.reqId),
        };
        expect(encodeCertificateClaims(claims, binding)).to.equal(expected);
        expect(decodeCertificateClaims(expected).guaranteeId).to.equal(binding.guaranteeId);
      });
    }
  }

  it("throws instead of encoding a value that does not fit its ABI type", () => {
    const policy = (change: Partial<GuaranteeClaimsV2["policy"]>): GuaranteeClaims => ({
      ...v2,
      policy: { ...v2.policy, ...change },
    });
    const misfits: [string, GuaranteeClaims][] = [
      ["amount above 2^256 - 1", { ...v1, amount: MAX_UINT256 + 1n }],
      ["negative amount", { ...v1, amount: -1n }],
      ["fractional timestamp", { ...v1, timestamp: 1.5 }],
      ["unsafe timestamp", { ...v1, timestamp: 2 ** 64 }],
      ["short address", { ...v1, user: "0x1234" }],
      ["min score above 255", policy({ minScore: 256 })],
      ["job hash of 31 bytes", policy({ jobHash: "0x" + "ab".repeat(31) })],
    ];
    for (const [name, claims] of misfits) {
      expect(() => encodeCertificateClaims(claims, deployment), name).to.throw(RangeError);
    }
  });
});

describe("sdk/certificate: certificateMatchesRequest", () => {
  const decodedV1 = decodeCertificateClaims(encodeCertificateClaims(v1, deployment));
  const decodedV2 = decodeCertificateClaims(encodeCertificateClaims(v2, deployment));

  it("matches the claims it was made for", () => {
    expect(certificateMatchesRequest(decodedV1, v1, deployment)).to.equal(true);
    expect(certificateMatchesRequest(decodedV2, v2, deployment)).to.equal(true);
  });

  it("ignores the policy's optional integrity fields", () => {
    const claims: GuaranteeClaimsV2 = { ...v2, policy: { ...v2.policy, chainId: 31337 } };
    expect(certificateMatchesRequest(decodedV2, claims, deployment)).to.equal(true);
  });

  it("does not match another deployment", () => {
    expect(certificateMatchesRequest(decodedV1, v1, otherVault)).to.equal(false);
    expect(certificateMatchesRequest(decodedV1, v1, otherChain)).to.equal(false);
  });

  it("does not match a certificate made for another deployment", () => {
    const foreign = decodeCertificateClaims(encodeCertificateClaims(v1, otherVault));
    expect(certificateMatchesRequest(foreign, v1, deployment)).to.equal(false);
  });

  const OTHER = getAddress("0x" + "12".repeat(20));
  const changedV1: [string, GuaranteeClaims][] = [
    ["user", { ...v1, user: OTHER }],
    ["recipient", { ...v1, recipient: OTHER }],
    ["reqId", { ...v1, reqId: 43n }],
    ["amount", { ...v1, amount: 1_000_001n }],
    ["asset", { ...v1, asset: OTHER }],
    ["timestamp", { ...v1, timestamp: v1.timestamp + 1 }],
    ["version", { ...v1, version: 2, policy: v2.policy }],
  ];
  for (const [name, claims] of changedV1) {
    it(`does not match when ${name} differs`, () => {
      expect(certificateMatchesRequest(decodedV1, claims, deployment)).to.equal(false);
    });
  }

  const changedPolicy: [string, Partial<GuaranteeClaimsV2["policy"]>][] = [
    ["registry", { registry: OTHER }],
    ["validator", { validator: OTHER }],
    ["agentId", { agentId: 1n }],
    ["minScore", { minScore: 99 }],
    ["jobHash", { jobHash: "0x" + "ac".repeat(32) }],
    ["tag", { tag: "qualite ✓ 検証 🚀" }],
    ["deadline", { deadline: 1 }],
  ];
  for (const [name, change] of changedPolicy) {
    it(`does not match when the policy ${name} differs`, () => {
      const claims: GuaranteeClaimsV2 = { ...v2, policy: { ...v2.policy, ...change } };
      expect(certificateMatchesRequest(decodedV2, claims, deployment)).to.equal(false);
    });
  }
});

describe("sdk/certificate: parseCertificate", () => {
  const claims = encodeCertificateClaims(v1, deployment);
  const signature = "0x" + "a5".repeat(48);

  it("accepts claims hex and a 48-byte signature, normalised to lower case", () => {
    const upper = { claims: "0x" + claims.slice(2).toUpperCase(), signature: "0x" + "A5".repeat(48) };
    expect(parseCertificate(upper)).to.deep.equal({ claims, signature });
  });

  it("names each faulty field", () => {
    expectWireError(() => parseCertificate(null), "certificate", /object/);
    expectWireError(() => parseCertificate([]), "certificate", /object/);
    expectWireError(() => parseCertificate({ signature }), "certificate.claims", /got undefined/);
    expectWireError(() => parseCertificate({ claims: "0x", signature }), "certificate.claims", /empty/);
    expectWireError(() => parseCertificate({ claims: "abc", signature }), "certificate.claims");
    expectWireError(() => parseCertificate({ claims }), "certificate.signature", /got undefined/);
    expectWireError(
      () => parseCertificate({ claims, signature: "0x" + "a5".repeat(47) }),
      "certificate.signature",
      /48 bytes/,
    );
    expectWireError(
      () => parseCertificate({ claims, signature: "0x" + "a5".repeat(49) }),
      "certificate.signature",
      /48 bytes/,
    );
    expectWireError(() => parseCertificate({ claims, signature: 5 }), "certificate.signature");
  });

  it("uses the field prefix it is given", () => {
    expectWireError(
      () => parseCertificate({ claims }, "settleResult.certificate"),
      "settleResult.certificate.signature",
    );
  });
});
