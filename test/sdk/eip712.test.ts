import { expect } from "chai";
import {
  Signature,
  TypedDataEncoder,
  Wallet,
  getBytes,
  hashMessage,
  keccak256,
  toUtf8Bytes,
  verifyMessage,
  verifyTypedData,
} from "ethers";
import { ethers } from "hardhat";
import type { GuaranteeClaims, GuaranteeClaimsV1, GuaranteeClaimsV2, SigningScheme } from "../../sdk/claims";
import {
  GUARANTEE_V1_TYPE,
  GUARANTEE_V2_TYPE,
  GUARANTEE_V1_TYPEHASH_HEX,
  GUARANTEE_V2_TYPEHASH_HEX,
  GuaranteeHasher,
  SECP256K1_N,
  guaranteeDigest,
  guaranteeHasher,
  guaranteePrimaryType,
  guaranteeTypedDataDomain,
  guaranteeTypedDataMessage,
  guaranteeTypedDataTypes,
  parseGuaranteeSignature,
  recoverGuaranteeSigner,
  signGuarantee,
  verifyGuaranteeSignature,
  type GuaranteeDomainParams,
} from "../../sdk/eip712";
import { SignatureError, WireError } from "../../sdk/errors";
import { MAX_UINT256 } from "../../sdk/wire";

const payer = new Wallet("0x" + "11".repeat(32));
const stranger = new Wallet("0x" + "22".repeat(32));
const RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const ASSET = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const REGISTRY = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
const VALIDATOR = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const VAULT = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0";

const domain: GuaranteeDomainParams = {
  name: "Surety",
  version: "1",
  chainId: 31337,
  verifyingContract: VAULT,
};

const claimsV1: GuaranteeClaimsV1 = {
  version: 1,
  user: payer.address,
  recipient: RECIPIENT,
  reqId: 42n,
  amount: 1_000_000n,
  asset: ASSET,
  timestamp: 1_700_000_000,
};

const claimsV2: GuaranteeClaimsV2 = {
  ...claimsV1,
  version: 2,
  policy: {
    registry: REGISTRY,
    validator: VALIDATOR,
    agentId: 7n,
    minScore: 80,
    jobHash: keccak256(toUtf8Bytes("job-1")),
    tag: "quality",
    deadline: 1_700_003_600,
  },
};

const SCHEMES: SigningScheme[] = ["eip712", "eip191"];

function ethersDigest(params: GuaranteeDomainParams, claims: GuaranteeClaims): string {
  return TypedDataEncoder.hash(
    params,
    guaranteeTypedDataTypes(claims.version),
    guaranteeTypedDataMessage(claims),
  );
}

function sigBytes(signature: string): Uint8Array {
  return getBytes(signature);
}

function toHexSig(bytes: Uint8Array): string {
  return "0x" + Buffer.from(bytes).toString("hex");
}

function withWord(signature: string, offset: number, value: bigint): string {
  const bytes = sigBytes(signature);
  bytes.set(getBytes("0x" + value.toString(16).padStart(64, "0")), offset);
  return toHexSig(bytes);
}

function withV(signature: string, v: number): string {
  const bytes = sigBytes(signature);
  bytes[64] = v;
  return toHexSig(bytes);
}

function expectSignatureError(fn: () => unknown, message: string | RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught, "expected a SignatureError").to.be.instanceOf(SignatureError);
  if (typeof message === "string") expect((caught as Error).message).to.equal(message);
  else expect((caught as Error).message).to.match(message);
}

function expectWireError(fn: () => unknown, field: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught, "expected a WireError").to.be.instanceOf(WireError);
  expect((caught as WireError).field).to.equal(field);
}

describe("sdk/eip712", () => {
  describe("typed data", () => {
    it("declares the docs/protocol.md types with ethers' canonical encoding", () => {
      expect(GUARANTEE_V1_TYPE).to.equal(
        "GuaranteeV1(address user,address recipient,uint256 reqId,uint256 amount,address asset,uint64 timestamp)",
      );
      expect(GUARANTEE_V2_TYPE).to.equal(
        "GuaranteeV2(address user,address recipient,uint256 reqId,uint256 amount,address asset,uint64 timestamp," +
          "address validationRegistry,address validator,uint256 validatorAgentId,uint8 minValidationScore," +
          "bytes32 jobHash,string requiredValidationTag,uint64 validationDeadline)",
      );
      expect(TypedDataEncoder.from(guaranteeTypedDataTypes(1)).encodeType("GuaranteeV1")).to.equal(
        GUARANTEE_V1_TYPE,
      );
      expect(TypedDataEncoder.from(guaranteeTypedDataTypes(2)).encodeType("GuaranteeV2")).to.equal(
        GUARANTEE_V2_TYPE,
      );
      expect(GUARANTEE_V1_TYPEHASH_HEX).to.equal(keccak256(toUtf8Bytes(GUARANTEE_V1_TYPE)));
      expect(GUARANTEE_V2_TYPEHASH_HEX).to.equal(keccak256(toUtf8Bytes(GUARANTEE_V2_TYPE)));
      expect(guaranteePrimaryType(1)).to.equal("GuaranteeV1");
      expect(guaranteePrimaryType(2)).to.equal("GuaranteeV2");
    });

    it("hands out fresh copies of the types", () => {
      const types = guaranteeTypedDataTypes(1);
      types.GuaranteeV1[0].name = "mutated";
      expect(guaranteeTypedDataTypes(1).GuaranteeV1[0].name).to.equal("user");
    });

    it("maps claims to the message field names", () => {
      expect(guaranteeTypedDataMessage(claimsV1)).to.deep.equal({
        user: claimsV1.user,
        recipient: RECIPIENT,
        reqId: 42n,
        amount: 1_000_000n,
        asset: ASSET,
        timestamp: 1_700_000_000,
      });
      expect(guaranteeTypedDataMessage(claimsV2)).to.include({
        validationRegistry: REGISTRY,
        validator: VALIDATOR,
        validatorAgentId: 7n,
        minValidationScore: 80,
        jobHash: claimsV2.policy.jobHash,
        requiredValidationTag: "quality",
        validationDeadline: 1_700_003_600,
      });
    });

    it("validates and normalises the domain", () => {
      const normalised = guaranteeTypedDataDomain({ ...domain, verifyingContract: VAULT.toLowerCase() });
      expect(normalised).to.deep.equal({
        name: "Surety",
        version: "1",
        chainId: 31337n,
        verifyingContract: VAULT,
      });
      expect(Object.isFrozen(normalised)).to.be.true;
      expectWireError(() => guaranteeTypedDataDomain({ ...domain, name: "" }), "domain.name");
      expectWireError(() => guaranteeTypedDataDomain({ ...domain, version: "" }), "domain.version");
      expectWireError(() => guaranteeTypedDataDomain({ ...domain, chainId: 0 }), "domain.chainId");
      expectWireError(() => guaranteeTypedDataDomain({ ...domain, chainId: -1n }), "domain.chainId");
      expectWireError(() => guaranteeTypedDataDomain({ ...domain, chainId: 1.5 }), "domain.chainId");
      expectWireError(
        () => guaranteeTypedDataDomain({ ...domain, verifyingContract: "0x1234" }),
        "domain.verifyingContract",
      );
    });
  });

  describe("fast digest", () => {
    const maxV1: GuaranteeClaimsV1 = {
      ...claimsV1,
      reqId: MAX_UINT256,
      amount: MAX_UINT256,
      timestamp: Number.MAX_SAFE_INTEGER,
      recipient: "0xFFfFfFffFFfffFFfFFfFFFFFffFFFffffFfFFFfF",
    };
    const edgeV2: GuaranteeClaimsV2 = {
      ...claimsV2,
      reqId: 0n,
      amount: 1n,
      timestamp: 0,
      policy: {
        ...claimsV2.policy,
        agentId: MAX_UINT256,
        minScore: 255,
        jobHash: "0x" + "ff".repeat(32),
        tag: "検証 ✓ — émoji 🚀",
        deadline: Number.MAX_SAFE_INTEGER,
      },
    };
    const cases: [string, GuaranteeClaims][] = [
      ["V1", claimsV1],
      ["V1 at maximum values", maxV1],
      ["V2", claimsV2],
      ["V2 with a unicode tag and edge values", edgeV2],
      [
        "V2 with an empty tag and zero policy values",
        {
          ...claimsV2,
          policy: {
            ...claimsV2.policy,
            agentId: 0n,
            minScore: 0,
            tag: "",
            deadline: 0,
            jobHash: "0x" + "00".repeat(32),
          },
        },
      ],
      ["V1 with odd-length hex numbers", { ...claimsV1, reqId: 0xabcn, amount: 0x1n, timestamp: 0xfff }],
    ];
    for (const [label, claims] of cases) {
      it(`equals ethers' TypedDataEncoder.hash for ${label}`, () => {
        const hasher = new GuaranteeHasher(domain);
        expect(hasher.digest(claims)).to.equal(ethersDigest(domain, claims));
        expect(guaranteeDigest(domain, claims)).to.equal(ethersDigest(domain, claims));
        expect(hasher.domainSeparator).to.equal(TypedDataEncoder.hashDomain(domain));
      });
    }

    it("equals ethers under other domains (big chain id, unicode name)", () => {
      const other = { name: "Surety ✓", version: "2.0", chainId: 2n ** 64n + 5n, verifyingContract: ASSET };
      expect(guaranteeDigest(other, claimsV2)).to.equal(ethersDigest(other, claimsV2));
    });

    it("caches hashers by domain content, not object identity", () => {
      const mutable = { ...domain };
      const first = guaranteeDigest(mutable, claimsV1);
      mutable.chainId = 1;
      expect(guaranteeDigest(mutable, claimsV1)).to.not.equal(first);
      expect(guaranteeDigest(mutable, claimsV1)).to.equal(ethersDigest(mutable, claimsV1));
      expect(guaranteeHasher({ ...domain })).to.equal(
        guaranteeHasher({ ...domain, verifyingContract: VAULT.toLowerCase() }),
      );
      const hasher = new GuaranteeHasher(domain);
      expect(guaranteeHasher(hasher)).to.equal(hasher);
    });

    it("rejects values outside their ABI types, naming the field", () => {
      const hasher = new GuaranteeHasher(domain);
      expectWireError(() => hasher.digest({ ...claimsV1, amount: MAX_UINT256 + 1n }), "claims.amount");
      expectWireError(() => hasher.digest({ ...claimsV1, reqId: -1n }), "claims.req_id");
      expectWireError(() => hasher.digest({ ...claimsV1, timestamp: -1 }), "claims.timestamp");
      expectWireError(() => hasher.digest({ ...claimsV1, timestamp: 1.5 }), "claims.timestamp");
      expectWireError(() => hasher.digest({ ...claimsV1, user: "0x1234" }), "claims.user_address");
      expectWireError(() => hasher.digest({ ...claimsV1, recipient: "nope" }), "claims.recipient_address");
      expectWireError(
        () => hasher.digest({ ...claimsV1, asset: "0x" + "zz".repeat(20) }),
        "claims.asset_address",
      );
      const policy = claimsV2.policy;
      const p = "claims.validation_policy";
      expectWireError(
        () => hasher.digest({ ...claimsV2, policy: { ...policy, minScore: 256 } }),
        `${p}.min_validation_score`,
      );
      expectWireError(
        () => hasher.digest({ ...claimsV2, policy: { ...policy, agentId: -1n } }),
        `${p}.validator_agent_id`,
      );
      expectWireError(
        () => hasher.digest({ ...claimsV2, policy: { ...policy, jobHash: "0x12" } }),
        `${p}.job_hash`,
      );
      expectWireError(
        () => hasher.digest({ ...claimsV2, policy: { ...policy, registry: "0x" } }),
        `${p}.validation_registry_address`,
      );
      expectWireError(
        () => hasher.digest({ ...claimsV2, policy: { ...policy, validator: "0x" } }),
        `${p}.validator_address`,
      );
      expectWireError(
        () => hasher.digest({ ...claimsV2, policy: { ...policy, deadline: -5 } }),
        `${p}.validation_deadline`,
      );
      expectWireError(
        () => hasher.digest({ ...claimsV2, policy: { ...policy, tag: 5 as unknown as string } }),
        `${p}.required_validation_tag`,
      );
      expectWireError(() => hasher.digest({ ...claimsV1, version: 2 } as unknown as GuaranteeClaims), p);
      expectWireError(
        () => hasher.digest({ ...claimsV1, version: 3 } as unknown as GuaranteeClaims),
        "claims.version",
      );
    });
  });

  describe("sign and recover", () => {
    for (const claims of [claimsV1, claimsV2]) {
      for (const scheme of SCHEMES) {
        it(`round-trips V${claims.version} with ${scheme}`, async () => {
          const signature = await signGuarantee(payer, domain, claims, scheme);
          expect(recoverGuaranteeSigner(domain, claims, signature, scheme)).to.equal(payer.address);
          verifyGuaranteeSignature(domain, claims, signature, scheme);
          verifyGuaranteeSignature(
            new GuaranteeHasher(domain),
            claims,
            signature,
            scheme,
            payer.address.toLowerCase(),
          );
          verifyGuaranteeSignature(domain, claims, getBytes(signature), scheme);
          // The other scheme signs a different hash, so it cannot be swapped.
          const other = scheme === "eip712" ? "eip191" : "eip712";
          expectSignatureError(
            () => verifyGuaranteeSignature(domain, claims, signature, other),
            /does not recover/,
          );
        });
      }
    }

    it("signs with an in-process key what the wallet itself returns, byte for byte", async () => {
      // signGuarantee signs an ethers Wallet's digest natively; the same wallet behind an object without
      // `signingKey` is asked to sign (ethers' typed-data encoder and signer). RFC 6979 + low-s: equal bytes.
      const asked = {
        signTypedData: payer.signTypedData.bind(payer),
        signMessage: payer.signMessage.bind(payer),
      };
      for (const base of [claimsV1, claimsV2]) {
        for (const scheme of SCHEMES) {
          for (const reqId of [0n, 1n, 2n ** 128n - 1n, 2n ** 256n - 1n]) {
            const claims = { ...base, reqId } as GuaranteeClaims;
            expect(await signGuarantee(payer, domain, claims, scheme)).to.equal(
              await signGuarantee(asked, domain, claims, scheme),
            );
          }
        }
      }
    });

    it("agrees with ethers' own verification for both schemes", async () => {
      const typed = await signGuarantee(payer, domain, claimsV2, "eip712");
      expect(
        verifyTypedData(domain, guaranteeTypedDataTypes(2), guaranteeTypedDataMessage(claimsV2), typed),
      ).to.equal(payer.address);
      const personal = await signGuarantee(payer, domain, claimsV2, "eip191");
      const digest = guaranteeDigest(domain, claimsV2);
      expect(verifyMessage(getBytes(digest), personal)).to.equal(payer.address);
      expect(hashMessage(getBytes(digest))).to.equal(
        "0x" + Buffer.from(new GuaranteeHasher(domain).signedHash(claimsV2, "eip191")).toString("hex"),
      );
    });

    it("verifies signatures of a JSON-RPC wallet (hardhat account) for both schemes", async () => {
      const [account] = await ethers.getSigners();
      const claims: GuaranteeClaimsV2 = { ...claimsV2, user: account.address };
      for (const scheme of SCHEMES) {
        const signature = await signGuarantee(account, domain, claims, scheme);
        verifyGuaranteeSignature(domain, claims, signature, scheme);
      }
    });

    it("accepts v as 27/28 and as 0/1", async () => {
      const signature = await signGuarantee(payer, domain, claimsV1, "eip712");
      const v = getBytes(signature)[64];
      expect([27, 28]).to.include(v);
      verifyGuaranteeSignature(domain, claimsV1, withV(signature, v - 27), "eip712");
      expect(parseGuaranteeSignature(withV(signature, v - 27)).recoveryId).to.equal(v - 27);
    });

    it("rejects an unknown scheme", async () => {
      const signature = await signGuarantee(payer, domain, claimsV1, "eip712");
      expectWireError(
        () => verifyGuaranteeSignature(domain, claimsV1, signature, "eth_sign" as SigningScheme),
        "scheme",
      );
      let caught: unknown;
      await signGuarantee(payer, domain, claimsV1, "eth_sign" as SigningScheme).catch(
        (error) => (caught = error),
      );
      expect(caught).to.be.instanceOf(WireError);
    });
  });

  describe("tampering", () => {
    const policy = claimsV2.policy;
    const claimTampers: [string, (c: GuaranteeClaims) => GuaranteeClaims][] = [
      ["user", (c) => ({ ...c, user: stranger.address })],
      ["recipient", (c) => ({ ...c, recipient: VALIDATOR })],
      ["reqId", (c) => ({ ...c, reqId: c.reqId + 1n })],
      ["amount", (c) => ({ ...c, amount: c.amount + 1n })],
      ["asset", (c) => ({ ...c, asset: REGISTRY })],
      ["timestamp", (c) => ({ ...c, timestamp: c.timestamp + 1 })],
    ];
    const policyTampers: [string, (c: GuaranteeClaimsV2) => GuaranteeClaimsV2][] = [
      ["validationRegistry", (c) => ({ ...c, policy: { ...policy, registry: ASSET } })],
      ["validator", (c) => ({ ...c, policy: { ...policy, validator: RECIPIENT } })],
      ["validatorAgentId", (c) => ({ ...c, policy: { ...policy, agentId: policy.agentId + 1n } })],
      ["minValidationScore", (c) => ({ ...c, policy: { ...policy, minScore: policy.minScore - 1 } })],
      ["jobHash", (c) => ({ ...c, policy: { ...policy, jobHash: keccak256(toUtf8Bytes("job-2")) } })],
      ["requiredValidationTag", (c) => ({ ...c, policy: { ...policy, tag: "quality " } })],
      ["validationDeadline", (c) => ({ ...c, policy: { ...policy, deadline: policy.deadline + 1 } })],
    ];
    const domainTampers: [string, GuaranteeDomainParams][] = [
      ["name", { ...domain, name: "Surety2" }],
      ["version", { ...domain, version: "2" }],
      ["chainId", { ...domain, chainId: 1 }],
      ["verifyingContract", { ...domain, verifyingContract: ASSET }],
    ];

    for (const scheme of SCHEMES) {
      for (const [field, tamper] of claimTampers) {
        for (const version of [1, 2] as const) {
          it(`V${version} ${scheme}: changing ${field} fails verification`, async () => {
            const base: GuaranteeClaims = version === 1 ? claimsV1 : claimsV2;
            const signature = await signGuarantee(payer, domain, base, scheme);
            const changed = tamper(base);
            expect(guaranteeDigest(domain, changed)).to.not.equal(guaranteeDigest(domain, base));
            expectSignatureError(
              () => verifyGuaranteeSignature(domain, changed, signature, scheme),
              "signature does not recover to user_address",
            );
          });
        }
      }
      for (const [field, tamper] of policyTampers) {
        it(`V2 ${scheme}: changing ${field} fails verification`, async () => {
          const signature = await signGuarantee(payer, domain, claimsV2, scheme);
          expectSignatureError(
            () => verifyGuaranteeSignature(domain, tamper(claimsV2), signature, scheme),
            "signature does not recover to user_address",
          );
        });
      }
      for (const [field, otherDomain] of domainTampers) {
        it(`${scheme}: changing domain ${field} fails verification`, async () => {
          const signature = await signGuarantee(payer, domain, claimsV2, scheme);
          expectSignatureError(
            () => verifyGuaranteeSignature(otherDomain, claimsV2, signature, scheme),
            "signature does not recover to user_address",
          );
        });
      }
      it(`${scheme}: changing the version (V2 signature presented as V1) fails verification`, async () => {
        const signature = await signGuarantee(payer, domain, claimsV2, scheme);
        const asV1: GuaranteeClaimsV1 = { ...claimsV1 };
        expectSignatureError(
          () => verifyGuaranteeSignature(domain, asV1, signature, scheme),
          "signature does not recover to user_address",
        );
      });
      it(`${scheme}: a signature by another wallet fails verification`, async () => {
        const signature = await signGuarantee(stranger, domain, claimsV1, scheme);
        expect(recoverGuaranteeSigner(domain, claimsV1, signature, scheme)).to.equal(stranger.address);
        expectSignatureError(
          () => verifyGuaranteeSignature(domain, claimsV1, signature, scheme),
          "signature does not recover to user_address",
        );
      });
    }
  });

  describe("malformed signatures", () => {
    let signature: string;
    before(async () => {
      signature = await signGuarantee(payer, domain, claimsV1, "eip712");
    });

    it("rejects the high-s twin (s' = n − s, v flipped) of a valid signature", () => {
      const parsed = Signature.from(signature);
      const highS = withV(withWord(signature, 32, SECP256K1_N - BigInt(parsed.s)), parsed.v === 27 ? 28 : 27);
      expectSignatureError(() => verifyGuaranteeSignature(domain, claimsV1, highS, "eip712"), /high-s/);
      expectSignatureError(() => recoverGuaranteeSigner(domain, claimsV1, highS, "eip712"), /high-s/);
    });

    it("rejects wrong lengths and non-hex", () => {
      expectSignatureError(
        () => verifyGuaranteeSignature(domain, claimsV1, signature.slice(0, -2), "eip712"),
        "signature must be 65 bytes (r ‖ s ‖ v), got 64",
      );
      expectSignatureError(
        () => verifyGuaranteeSignature(domain, claimsV1, signature + "00", "eip712"),
        "signature must be 65 bytes (r ‖ s ‖ v), got 66",
      );
      expectSignatureError(() => parseGuaranteeSignature("0x"), /got 0/);
      expectSignatureError(() => parseGuaranteeSignature(signature.slice(2)), /hex/);
      expectSignatureError(() => parseGuaranteeSignature(signature.slice(0, -1)), /whole bytes/);
      expectSignatureError(() => parseGuaranteeSignature("0x" + "zz".repeat(65)), /hex/);
      expectSignatureError(() => parseGuaranteeSignature(42 as unknown as string), /got number/);
    });

    it("rejects v outside {27, 28, 0, 1}", () => {
      for (const v of [29, 2, 26, 35, 255]) {
        expectSignatureError(
          () => verifyGuaranteeSignature(domain, claimsV1, withV(signature, v), "eip712"),
          `signature v must be 27, 28, 0 or 1, got ${v}`,
        );
      }
    });

    it("rejects r or s of zero or not below the order", () => {
      const check = (sig: string, message: string) =>
        expectSignatureError(() => verifyGuaranteeSignature(domain, claimsV1, sig, "eip712"), message);
      check(withWord(signature, 0, 0n), "signature r is zero");
      check(withWord(signature, 0, SECP256K1_N), "signature r is not below the secp256k1 order");
      check(withWord(signature, 0, 2n ** 256n - 1n), "signature r is not below the secp256k1 order");
      check(withWord(signature, 32, 0n), "signature s is zero");
      check(withWord(signature, 32, SECP256K1_N), "signature s is not below the secp256k1 order");
    });

    it("rejects an r that is not the x-coordinate of a curve point", () => {
      // About half of all x have no point; among r = 1..64 some must fail recovery.
      const messages = new Set<string>();
      for (let r = 1n; r <= 64n; r++) {
        try {
          recoverGuaranteeSigner(domain, claimsV1, withWord(signature, 0, r), "eip712");
        } catch (error) {
          expect(error).to.be.instanceOf(SignatureError);
          messages.add((error as Error).message);
        }
      }
      expect([...messages]).to.deep.equal(["signature does not recover to a public key"]);
    });
  });

  it("loads the native libsecp256k1 binding, not the elliptic fallback", () => {
    const cached = Object.keys(require.cache);
    const bindings = require.resolve("secp256k1/bindings.js");
    expect(cached).to.include(bindings);
    expect(cached).to.not.include(bindings.replace(/bindings\.js$/, "elliptic.js"));
    expect(cached.some((path) => /secp256k1.*\.node$/.test(path))).to.be.true;
  });
});
