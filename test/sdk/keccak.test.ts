import { expect } from "chai";
import { Wallet, getAddress, hexlify, randomBytes } from "ethers";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { fastKeccak256, keccakBackend } from "../../operator/clearing/native-keccak";
import type { GuaranteeClaims } from "../../sdk/claims";
import { GuaranteeHasher, recoverGuaranteeSigner } from "../../sdk/eip712";
import { certificateDomain, guaranteeId } from "../../sdk/ids";
import { keccak256Bytes, keccak256IsNoble, useKeccak256 } from "../../sdk/keccak";

const randomAddress = (): string => getAddress(hexlify(randomBytes(20)));
const randomUint = (bytes: number): bigint => BigInt(hexlify(randomBytes(bytes)));

function randomClaims(): GuaranteeClaims {
  const v1 = {
    version: 1 as const,
    user: randomAddress(),
    recipient: randomAddress(),
    reqId: randomUint(32),
    amount: randomUint(16),
    asset: randomAddress(),
    timestamp: Number(randomUint(4)),
  };
  if (Math.random() < 0.5) return v1;
  return {
    ...v1,
    version: 2,
    policy: {
      registry: randomAddress(),
      validator: randomAddress(),
      agentId: randomUint(32),
      minScore: Number(randomUint(1)),
      jobHash: hexlify(randomBytes(32)),
      tag: Buffer.from(randomBytes(Number(randomUint(1)) % 200)).toString("base64"),
      deadline: Number(randomUint(4)),
    },
  };
}

/** Every per-guarantee hash of the sdk for `claims`, with whichever keccak is installed. */
function hashesOf(
  hasher: GuaranteeHasher,
  claims: GuaranteeClaims,
  signature: string,
  deployment: { chainId: bigint; vault: string },
): string[] {
  return [
    Buffer.from(hasher.structHash(claims)).toString("hex"),
    hasher.digest(claims),
    Buffer.from(hasher.signedHash(claims, "eip191")).toString("hex"),
    recoverGuaranteeSigner(hasher, claims, signature, "eip712"),
    guaranteeId(deployment, claims.user, claims.reqId),
    certificateDomain(deployment),
  ];
}

describe("sdk keccak256 (sdk/keccak.ts): the native addon gives the same bytes as @noble/hashes", () => {
  afterEach(() => useKeccak256(null));

  it("is @noble/hashes until another implementation is installed", () => {
    // Core installs the native addon when it opens (operator/app/open.ts): start from the default.
    expect(useKeccak256(null)).to.equal(true);
    expect(keccak256IsNoble()).to.equal(true);
    expect(keccakBackend()).to.equal("native");
    expect(useKeccak256(fastKeccak256)).to.equal(true);
    expect(keccak256IsNoble()).to.equal(false);
    useKeccak256(null);
    expect(keccak256IsNoble()).to.equal(true);
  });

  it("refuses an implementation that differs from @noble/hashes, or throws", () => {
    const wrong = (data: Uint8Array): Uint8Array => {
      const hash = keccak_256(data);
      if (data.length === 137) hash[0] ^= 1;
      return hash;
    };
    expect(useKeccak256(wrong)).to.equal(false);
    expect(
      useKeccak256(() => {
        throw new Error("broken");
      }),
    ).to.equal(false);
    expect(useKeccak256((data) => keccak_256(data).subarray(1))).to.equal(false);
    expect(keccak256IsNoble()).to.equal(true);
  });

  it("hashes random inputs of 0 to 600 bytes identically", () => {
    expect(useKeccak256(fastKeccak256)).to.equal(true);
    for (let i = 0; i < 2000; i++) {
      const data = randomBytes(i % 601);
      expect(Buffer.from(keccak256Bytes(data)).equals(Buffer.from(keccak_256(data)))).to.equal(true);
    }
  });

  it("gives byte-identical struct hashes, digests, signers, guarantee ids and domains on random claims", () => {
    const wallet = Wallet.createRandom();
    for (let i = 0; i < 100; i++) {
      const deployment = { chainId: randomUint(6), vault: randomAddress() };
      const hasher = new GuaranteeHasher({
        name: "Surety",
        version: "1",
        chainId: deployment.chainId,
        verifyingContract: deployment.vault,
      });
      const claims = { ...randomClaims(), user: wallet.address };
      const signature = wallet.signingKey.sign(hasher.digestBytes(claims)).serialized;
      useKeccak256(null);
      const noble = hashesOf(hasher, claims, signature, deployment);
      expect(useKeccak256(fastKeccak256)).to.equal(true);
      const native = hashesOf(hasher, claims, signature, deployment);
      expect(native).to.deep.equal(noble);
      expect(native[3]).to.equal(wallet.address);
    }
  });
});
