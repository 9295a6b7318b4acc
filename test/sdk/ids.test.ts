import { expect } from "chai";
import { concat, keccak256, toBeHex, toUtf8Bytes, zeroPadValue } from "ethers";
import type { ValidationPolicy } from "../../sdk/claims";
import {
  CERTIFICATE_DOMAIN_TAG,
  GUARANTEE_ID_TAG,
  VALIDATION_HASH_CANONICALIZATION_VERSION,
  VALIDATION_REQUEST_TAG,
  certificateDomain,
  guaranteeId,
  validationRequestHash,
} from "../../sdk/ids";

const VAULT = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0";
const OTHER_VAULT = "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9";
const USER = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const OTHER_USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const deployment = { chainId: 31337, vault: VAULT };

const policy: ValidationPolicy = {
  registry: "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
  validator: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
  agentId: 7n,
  minScore: 80,
  jobHash: "0x" + "ab".repeat(32),
  tag: "quality",
  deadline: 1_700_003_600,
};

/** One ABI word, built independently of AbiCoder. */
function word(value: bigint | number | string): string {
  return typeof value === "string" ? zeroPadValue(value, 32) : toBeHex(value, 32);
}

describe("sdk/ids", () => {
  it("derives the tags from their names", () => {
    expect(GUARANTEE_ID_TAG).to.equal(keccak256(toUtf8Bytes("SURETY_GUARANTEE_ID_V1")));
    expect(CERTIFICATE_DOMAIN_TAG).to.equal(keccak256(toUtf8Bytes("SURETY_CERTIFICATE_V1")));
    expect(VALIDATION_REQUEST_TAG).to.equal(keccak256(toUtf8Bytes("SURETY_VALIDATION_REQUEST_V1")));
    expect(VALIDATION_HASH_CANONICALIZATION_VERSION).to.equal("surety-validation-request-v1");
  });

  describe("guaranteeId", () => {
    const id = guaranteeId(deployment, USER, 42n);

    it("is keccak256(abi.encode(tag, chainId, vault, user, reqId))", () => {
      expect(id).to.equal(
        keccak256(concat([GUARANTEE_ID_TAG, word(31337), word(VAULT), word(USER), word(42n)])),
      );
    });

    it("changes with each input", () => {
      const variants = [
        guaranteeId({ ...deployment, chainId: 1 }, USER, 42n),
        guaranteeId({ ...deployment, vault: OTHER_VAULT }, USER, 42n),
        guaranteeId(deployment, OTHER_USER, 42n),
        guaranteeId(deployment, USER, 43n),
      ];
      expect(new Set([id, ...variants]).size).to.equal(5);
    });

    it("does not depend on the chain id's type or the addresses' case", () => {
      expect(guaranteeId({ chainId: 31337n, vault: VAULT.toLowerCase() }, USER.toLowerCase(), 42n)).to.equal(
        id,
      );
    });

    it("handles the extremes of reqId", () => {
      expect(guaranteeId(deployment, USER, 0n)).to.not.equal(guaranteeId(deployment, USER, 2n ** 256n - 1n));
    });
  });

  describe("certificateDomain", () => {
    const domain = certificateDomain(deployment);

    it("is keccak256(abi.encode(tag, chainId, vault))", () => {
      expect(domain).to.equal(keccak256(concat([CERTIFICATE_DOMAIN_TAG, word(31337), word(VAULT)])));
    });

    it("changes with the chain and the vault", () => {
      const variants = [
        certificateDomain({ ...deployment, chainId: 1n }),
        certificateDomain({ ...deployment, vault: OTHER_VAULT }),
      ];
      expect(new Set([domain, ...variants]).size).to.equal(3);
    });
  });

  describe("validationRequestHash", () => {
    const gid = guaranteeId(deployment, USER, 42n);
    const hash = validationRequestHash(31337, policy, gid);

    it("is keccak256(abi.encode(tag, chainId, registry, validator, agentId, id, minScore, keccak256(tag), jobHash, deadline))", () => {
      const expected = keccak256(
        concat([
          VALIDATION_REQUEST_TAG,
          word(31337),
          word(policy.registry),
          word(policy.validator),
          word(policy.agentId),
          gid,
          word(policy.minScore),
          keccak256(toUtf8Bytes(policy.tag)),
          policy.jobHash,
          word(policy.deadline),
        ]),
      );
      expect(hash).to.equal(expected);
    });

    it("changes with each policy field, the chain and the guarantee id", () => {
      const variants = [
        validationRequestHash(1, policy, gid),
        validationRequestHash(31337, policy, guaranteeId(deployment, USER, 43n)),
        validationRequestHash(31337, { ...policy, registry: OTHER_VAULT }, gid),
        validationRequestHash(31337, { ...policy, validator: OTHER_USER }, gid),
        validationRequestHash(31337, { ...policy, agentId: 8n }, gid),
        validationRequestHash(31337, { ...policy, minScore: 79 }, gid),
        validationRequestHash(31337, { ...policy, tag: "quality2" }, gid),
        validationRequestHash(31337, { ...policy, tag: "" }, gid),
        validationRequestHash(31337, { ...policy, jobHash: "0x" + "ac".repeat(32) }, gid),
        validationRequestHash(31337, { ...policy, deadline: policy.deadline + 1 }, gid),
      ];
      expect(new Set([hash, ...variants]).size).to.equal(variants.length + 1);
    });

    it("hashes unicode tags by their UTF-8 bytes", () => {
      const unicode = validationRequestHash(31337, { ...policy, tag: "検証 ✓" }, gid);
      const nfd = validationRequestHash(31337, { ...policy, tag: "e\u0301" }, gid);
      const nfc = validationRequestHash(31337, { ...policy, tag: "\u00e9" }, gid);
      expect(unicode).to.not.equal(hash);
      // No normalisation: what the payer signed is what is hashed.
      expect(nfd).to.not.equal(nfc);
    });

    it("ignores the optional integrity fields of the policy", () => {
      const withIntegrity: ValidationPolicy = { ...policy, chainId: 1, requestHash: "0x" + "00".repeat(32) };
      expect(validationRequestHash(31337, withIntegrity, gid)).to.equal(hash);
    });
  });
});
