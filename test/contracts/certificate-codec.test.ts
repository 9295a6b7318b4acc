import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";

// The wire formats of docs/protocol.md ("Identities", "Certificates"), encoded here with ethers exactly as written
// there, so that the Solidity codec is checked against the document rather than against itself.
const abi = ethers.AbiCoder.defaultAbiCoder();
const CLAIMS_TYPES = [
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
const POLICY_TYPES = ["address", "address", "uint256", "uint8", "bytes32", "string", "uint64"];
const MAX_UINT64 = 2n ** 64n - 1n;

interface Claims {
  version: bigint;
  domain: string;
  guaranteeId: string;
  user: string;
  recipient: string;
  reqId: bigint;
  amount: bigint;
  asset: string;
  timestamp: bigint;
  policy: string;
}

interface Policy {
  registry: string;
  validator: string;
  agentId: bigint;
  minScore: bigint;
  jobHash: string;
  tag: string;
  deadline: bigint;
}

const encodeClaims = (c: Claims): string =>
  abi.encode(CLAIMS_TYPES, [
    c.version,
    c.domain,
    c.guaranteeId,
    c.user,
    c.recipient,
    c.reqId,
    c.amount,
    c.asset,
    c.timestamp,
    c.policy,
  ]);

const encodePolicy = (p: Policy): string =>
  abi.encode(POLICY_TYPES, [p.registry, p.validator, p.agentId, p.minScore, p.jobHash, p.tag, p.deadline]);

const certificateDomain = (chainId: bigint, vault: string): string =>
  ethers.keccak256(
    abi.encode(["bytes32", "uint256", "address"], [ethers.id("SURETY_CERTIFICATE_V1"), chainId, vault]),
  );

const guaranteeId = (chainId: bigint, vault: string, user: string, reqId: bigint): string =>
  ethers.keccak256(
    abi.encode(
      ["bytes32", "uint256", "address", "address", "uint256"],
      [ethers.id("SURETY_GUARANTEE_ID_V1"), chainId, vault, user, reqId],
    ),
  );

const validationRequestHash = (chainId: bigint, p: Policy, id: string): string =>
  ethers.keccak256(
    abi.encode(
      [
        "bytes32",
        "uint256",
        "address",
        "address",
        "uint256",
        "bytes32",
        "uint8",
        "bytes32",
        "bytes32",
        "uint64",
      ],
      [
        ethers.id("SURETY_VALIDATION_REQUEST_V1"),
        chainId,
        p.registry,
        p.validator,
        p.agentId,
        id,
        p.minScore,
        ethers.id(p.tag),
        p.jobHash,
        p.deadline,
      ],
    ),
  );

const addr = (n: number): string => ethers.getAddress("0x" + n.toString(16).padStart(40, "0"));

describe("CertificateCodec", () => {
  async function deploy() {
    const harness = await ethers.deployContract("CertificateCodecHarness");
    const chainId = (await ethers.provider.getNetwork()).chainId;
    const vault = addr(0xa11ce);
    const user = ethers.getAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
    const recipient = ethers.getAddress("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC");
    const reqId = 42n;
    const v1: Claims = {
      version: 1n,
      domain: certificateDomain(chainId, vault),
      guaranteeId: guaranteeId(chainId, vault, user, reqId),
      user,
      recipient,
      reqId,
      amount: 1_000_000n,
      asset: ethers.ZeroAddress, // ETH
      timestamp: 1_700_000_000n,
      policy: "0x",
    };
    const policy: Policy = {
      registry: addr(0x5e9),
      validator: addr(0x7a1),
      agentId: 7n,
      minScore: 80n,
      jobHash: ethers.id("job #1"),
      tag: "quality-check ✓",
      deadline: 1_700_003_600n,
    };
    const v2: Claims = { ...v1, version: 2n, asset: addr(0x70c), policy: encodePolicy(policy) };
    return { harness, chainId, vault, v1, v2, policy };
  }

  const claimsOf = (r: Claims): Claims => ({
    version: r.version,
    domain: r.domain,
    guaranteeId: r.guaranteeId,
    user: r.user,
    recipient: r.recipient,
    reqId: r.reqId,
    amount: r.amount,
    asset: r.asset,
    timestamp: r.timestamp,
    policy: r.policy,
  });

  const policyOf = (r: Policy): Policy => ({
    registry: r.registry,
    validator: r.validator,
    agentId: r.agentId,
    minScore: r.minScore,
    jobHash: r.jobHash,
    tag: r.tag,
    deadline: r.deadline,
  });

  describe("decodeClaims", () => {
    it("decodes V1 claims (empty policy) field for field", async () => {
      const { harness, v1 } = await loadFixture(deploy);
      expect(claimsOf(await harness.decodeClaims(encodeClaims(v1)))).to.deep.equal(v1);
    });

    it("decodes V2 claims and their policy field for field", async () => {
      const { harness, v2, policy } = await loadFixture(deploy);
      const decoded = claimsOf(await harness.decodeClaims(encodeClaims(v2)));
      expect(decoded).to.deep.equal(v2);
      expect(policyOf(await harness.decodePolicy(decoded.policy))).to.deep.equal(policy);
    });

    it("decodes extreme values", async () => {
      const { harness, v2, policy } = await loadFixture(deploy);
      const extremePolicy: Policy = {
        ...policy,
        agentId: ethers.MaxUint256,
        minScore: 255n,
        tag: "",
        deadline: MAX_UINT64,
        jobHash: ethers.ZeroHash,
      };
      const extreme: Claims = {
        ...v2,
        reqId: ethers.MaxUint256,
        amount: ethers.MaxUint256,
        timestamp: MAX_UINT64,
        user: addr(0xffff),
        recipient: ethers.getAddress("0x" + "ff".repeat(20)),
        policy: encodePolicy(extremePolicy),
      };
      expect(claimsOf(await harness.decodeClaims(encodeClaims(extreme)))).to.deep.equal(extreme);
      expect(policyOf(await harness.decodePolicy(extreme.policy))).to.deep.equal(extremePolicy);
      const longTag: Policy = { ...policy, tag: "t".repeat(300) };
      expect(policyOf(await harness.decodePolicy(encodePolicy(longTag)))).to.deep.equal(longTag);
    });

    it("reverts with UnsupportedClaimsVersion for versions other than 1 and 2", async () => {
      const { harness, v1 } = await loadFixture(deploy);
      for (const version of [0n, 3n, MAX_UINT64]) {
        await expect(harness.decodeClaims(encodeClaims({ ...v1, version })))
          .to.be.revertedWithCustomError(harness, "UnsupportedClaimsVersion")
          .withArgs(version);
      }
    });

    it("reverts with PolicyMismatch for a V1 claim with a policy or a V2 claim without one", async () => {
      const { harness, v1, v2 } = await loadFixture(deploy);
      await expect(harness.decodeClaims(encodeClaims({ ...v1, policy: v2.policy })))
        .to.be.revertedWithCustomError(harness, "PolicyMismatch")
        .withArgs(1, ethers.dataLength(v2.policy));
      await expect(harness.decodeClaims(encodeClaims({ ...v2, policy: "0x" })))
        .to.be.revertedWithCustomError(harness, "PolicyMismatch")
        .withArgs(2, 0);
    });

    it("reverts with NonCanonicalEncoding for trailing bytes or a relocated policy", async () => {
      const { harness, v1, v2 } = await loadFixture(deploy);
      const trailing = ethers.concat([encodeClaims(v1), ethers.ZeroHash]);
      await expect(harness.decodeClaims(trailing)).to.be.revertedWithCustomError(
        harness,
        "NonCanonicalEncoding",
      );
      // Same values, but the policy's offset points one word further, past a gap word.
      const canonical = ethers.getBytes(encodeClaims(v2));
      const offsetWord = 9 * 32;
      const relocated = ethers.concat([
        canonical.slice(0, offsetWord),
        ethers.toBeHex(BigInt(ethers.hexlify(canonical.slice(offsetWord, offsetWord + 32))) + 32n, 32),
        canonical.slice(offsetWord + 32, 10 * 32),
        ethers.ZeroHash,
        canonical.slice(10 * 32),
      ]);
      expect(claimsOf(await harness.decodeClaims(canonical))).to.deep.equal(v2); // sanity
      await expect(harness.decodeClaims(relocated)).to.be.revertedWithCustomError(
        harness,
        "NonCanonicalEncoding",
      );
    });

    it("reverts on malformed ABI data (truncated, out-of-range uint64)", async () => {
      const { harness, v1 } = await loadFixture(deploy);
      const encoded = encodeClaims(v1);
      await expect(harness.decodeClaims(ethers.dataSlice(encoded, 0, 200))).to.be.reverted;
      await expect(harness.decodeClaims("0x")).to.be.reverted;
      // version word with a bit above uint64 set
      const dirty = ethers.concat([ethers.toBeHex((1n << 64n) + 1n, 32), ethers.dataSlice(encoded, 32)]);
      await expect(harness.decodeClaims(dirty)).to.be.reverted;
    });
  });

  describe("decodeV2Calldata (the Vault's decoder)", () => {
    /** Claims hex with word `index` (0-based, after 0x) replaced by `word` (32-byte hex without 0x). */
    const withWord = (hex: string, index: number, word: string): string =>
      "0x" + hex.slice(2, 2 + index * 64) + word + hex.slice(2 + (index + 1) * 64);
    const words = (hex: string) => (hex.length - 2) / 64;

    it("agrees with decodeClaims + decodePolicy (policy left empty, returned apart)", async () => {
      const { harness, v2, policy } = await loadFixture(deploy);
      for (const tag of ["quality-check ✓", "", "x".repeat(32), "y".repeat(33)]) {
        const claims = { ...v2, policy: encodePolicy({ ...policy, tag }) };
        const [c, p] = await harness.decodeV2Calldata(encodeClaims(claims));
        expect(claimsOf(c)).to.deep.equal({ ...claims, policy: "0x" });
        expect(policyOf(p)).to.deep.equal({ ...policy, tag });
      }
    });

    it("refuses every non-canonical variant the strict decoder refuses, and other versions", async () => {
      const { harness, v1, v2, policy } = await loadFixture(deploy);
      const good = encodeClaims(v2);
      const dirty = "f".repeat(24);
      const n = words(good);
      const nonCanonical = [
        withWord(good, 3, dirty + good.slice(2 + 3 * 64 + 24, 2 + 4 * 64)), // user with high bits
        withWord(good, 8, "01" + "0".repeat(62)), // timestamp above uint64
        withWord(good, 9, (0x160).toString(16).padStart(64, "0")), // relocated policy
        withWord(good, 10, (n * 32).toString(16).padStart(64, "0")), // policy length past the end
        withWord(good, 14, (256).toString(16).padStart(64, "0")), // minScore above uint8
        withWord(good, 16, (0x100).toString(16).padStart(64, "0")), // relocated tag
        withWord(good, 18, "f".repeat(64)), // huge tag length
        withWord(good, n - 1, good.slice(2 + (n - 1) * 64, 2 + n * 64 - 2) + "01"), // dirty tag padding
        good + "00".repeat(32), // trailing word
        good.slice(0, -64), // truncated
        "0x1234",
        withWord(good, 0, "f".repeat(64)), // version above uint64
      ];
      for (const bad of nonCanonical) {
        await expect(harness.decodeV2Calldata(bad), bad.slice(0, 20)).to.be.revertedWithCustomError(
          harness,
          "NonCanonicalEncoding",
        );
      }
      await expect(harness.decodeV2Calldata(encodeClaims({ ...v2, version: 3n })))
        .to.be.revertedWithCustomError(harness, "UnsupportedClaimsVersion")
        .withArgs(3n);
      const v1AsV2Layout = encodeClaims({ ...v1, policy: encodePolicy(policy) });
      await expect(harness.decodeV2Calldata(v1AsV2Layout))
        .to.be.revertedWithCustomError(harness, "UnsupportedClaimsVersion")
        .withArgs(1n);
      // An empty policy padded to the fixed size still reads as a V2 claim without a policy.
      const empty = encodeClaims({ ...v2, policy: "0x" }) + "00".repeat(8 * 32);
      await expect(harness.decodeV2Calldata(empty))
        .to.be.revertedWithCustomError(harness, "PolicyMismatch")
        .withArgs(2n, 0n);
    });
  });

  describe("decodePolicy", () => {
    it("reverts with NonCanonicalEncoding for trailing bytes", async () => {
      const { harness, v2 } = await loadFixture(deploy);
      const trailing = ethers.concat([v2.policy, ethers.ZeroHash]);
      await expect(harness.decodePolicy(trailing)).to.be.revertedWithCustomError(
        harness,
        "NonCanonicalEncoding",
      );
    });

    it("reverts on malformed ABI data (truncated, minScore above uint8)", async () => {
      const { harness, v2 } = await loadFixture(deploy);
      await expect(harness.decodePolicy(ethers.dataSlice(v2.policy, 0, 100))).to.be.reverted;
      const minScoreWord = 3 * 32;
      const dirty = ethers.concat([
        ethers.dataSlice(v2.policy, 0, minScoreWord),
        ethers.toBeHex(256, 32),
        ethers.dataSlice(v2.policy, minScoreWord + 32),
      ]);
      await expect(harness.decodePolicy(dirty)).to.be.reverted;
    });
  });

  describe("hashes", () => {
    it("certificateDomain equals the TypeScript value", async () => {
      const { harness, chainId, vault } = await loadFixture(deploy);
      expect(await harness.certificateDomain(chainId, vault)).to.equal(certificateDomain(chainId, vault));
      expect(await harness.certificateDomain(1n, vault)).to.equal(certificateDomain(1n, vault));
      expect(certificateDomain(1n, vault)).to.not.equal(certificateDomain(chainId, vault));
    });

    it("guaranteeId equals the TypeScript value", async () => {
      const { harness, chainId, vault, v1 } = await loadFixture(deploy);
      expect(await harness.guaranteeId(chainId, vault, v1.user, v1.reqId)).to.equal(v1.guaranteeId);
      const maxId = guaranteeId(chainId, vault, v1.user, ethers.MaxUint256);
      expect(await harness.guaranteeId(chainId, vault, v1.user, ethers.MaxUint256)).to.equal(maxId);
    });

    it("validationRequestHash equals the TypeScript value", async () => {
      const { harness, chainId, v2, policy } = await loadFixture(deploy);
      const expected = validationRequestHash(chainId, policy, v2.guaranteeId);
      expect(await harness.validationRequestHash(chainId, policy, v2.guaranteeId)).to.equal(expected);
      const otherTag = { ...policy, tag: "other" };
      const otherExpected = validationRequestHash(chainId, otherTag, v2.guaranteeId);
      expect(otherExpected).to.not.equal(expected);
      expect(await harness.validationRequestHash(chainId, otherTag, v2.guaranteeId)).to.equal(otherExpected);
    });
  });
});
