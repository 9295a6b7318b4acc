import { readFileSync } from "node:fs";
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import {
  type GuaranteeClaims,
  GuaranteeHasher,
  SECP256K1_N,
  SIGNING_SCHEMES,
  SIGNING_SCHEME_CODES,
  WireError,
  encodeCertificateClaims,
  parseClaims,
  signGuarantee,
  toPayerSignatureArgs,
} from "../../sdk";
import type { VectorFile } from "../../scripts/vectors";

// GuaranteeSignature.sol checked against the SDK's own vectors (test/vectors/sdk-vectors.json):
// what the SDK signs and Core accepts, the contract accepts, and nothing else.
const vectors = JSON.parse(readFileSync("test/vectors/sdk-vectors.json", "utf8")) as VectorFile;
const { chainId, vault, eip712Name, eip712Version } = vectors.deployment;
const DOMAIN = { name: eip712Name, version: eip712Version, chainId, verifyingContract: vault };
const hasher = new GuaranteeHasher(DOMAIN);
const deployment = { chainId, vault };

async function deployHarness() {
  const harness = await ethers.deployContract("GuaranteeSignatureHarness");
  const [, owner, stranger] = await ethers.getSigners();
  const wallet = await ethers.deployContract("ERC1271Wallet", [owner.address]);
  return { harness, owner, stranger, wallet };
}

function flipByte(hex: string, index: number): string {
  const bytes = ethers.getBytes(hex);
  bytes[index] ^= 1;
  return ethers.hexlify(bytes);
}

/** The same signature with v as a raw recovery id (0 / 1), as some signers return it. */
function withRecoveryIdV(signature: string): string {
  const bytes = ethers.getBytes(signature);
  bytes[64] -= 27;
  return ethers.hexlify(bytes);
}

/** The malleable twin (r, n − s, flipped v): valid secp256k1, refused as high-s by SDK and contract. */
function highSTwin(signature: string): string {
  const sig = ethers.Signature.from(signature);
  const s = SECP256K1_N - BigInt(sig.s);
  const v = sig.v === 27 ? 28 : 27;
  return ethers.concat([sig.r, ethers.toBeHex(s, 32), ethers.toBeHex(v, 1)]);
}

describe("GuaranteeSignature (payer signatures on chain)", () => {
  it("computes the SDK's EIP-712 domain separator", async () => {
    const { harness } = await loadFixture(deployHarness);
    expect(await harness.domainSeparator(eip712Name, eip712Version, chainId, vault)).to.equal(
      hasher.domainSeparator,
    );
  });

  it("numbers the schemes as the SDK does", async () => {
    const { harness } = await loadFixture(deployHarness);
    const digest = vectors.guarantees[0].typed_data_digest;
    const claims = parseClaims(vectors.guarantees[0].claims);
    for (const scheme of SIGNING_SCHEMES) {
      expect(await harness.signedHash(digest, SIGNING_SCHEME_CODES[scheme])).to.equal(
        ethers.hexlify(hasher.signedHash(claims, scheme)),
      );
    }
    // The ABI decoder refuses a scheme code outside the enum.
    await expect(harness.signedHash(digest, 2)).to.be.reverted;
  });

  for (const vector of vectors.guarantees) {
    describe(vector.name, () => {
      const claims = parseClaims(vector.claims);

      it("hashes the certificate claims to the typed-data digest", async () => {
        const { harness } = await loadFixture(deployHarness);
        expect(await harness.digest(hasher.domainSeparator, vector.certificate.claims)).to.equal(
          vector.typed_data_digest,
        );
      });

      for (const { scheme, signature } of vector.signatures) {
        it(`accepts the payer's ${scheme} signature, with v as 27/28 or 0/1, under its own scheme only`, async () => {
          const { harness } = await loadFixture(deployHarness);
          const { claims: message } = vector.certificate;
          const code = SIGNING_SCHEME_CODES[scheme];
          const other = code === 0 ? 1 : 0;
          expect(await harness.verify(hasher.domainSeparator, message, code, signature)).to.equal(true);
          expect(
            await harness.verify(hasher.domainSeparator, message, code, withRecoveryIdV(signature)),
          ).to.equal(true);
          expect(await harness.verify(hasher.domainSeparator, message, other, signature)).to.equal(false);
        });

        it(`refuses the ${scheme} signature tampered, high-s, mis-sized, or over other claims or another domain`, async () => {
          const { harness } = await loadFixture(deployHarness);
          const { claims: message } = vector.certificate;
          const code = SIGNING_SCHEME_CODES[scheme];
          const refused = [
            flipByte(signature, 10), // r
            flipByte(signature, 40), // s
            highSTwin(signature),
            ethers.concat([signature, "0x00"]),
            ethers.dataSlice(signature, 0, 64),
            ethers.concat([ethers.dataSlice(signature, 0, 64), "0x1d"]), // v = 29
            "0x",
          ];
          for (const bad of refused) {
            expect(await harness.verify(hasher.domainSeparator, message, code, bad), bad).to.equal(false);
          }
          const otherAmount = encodeCertificateClaims({ ...claims, amount: claims.amount ^ 1n }, deployment);
          expect(await harness.verify(hasher.domainSeparator, otherAmount, code, signature)).to.equal(false);
          const otherDomain = new GuaranteeHasher({ ...DOMAIN, version: "2" }).domainSeparator;
          expect(await harness.verify(otherDomain, message, code, signature)).to.equal(false);
        });
      }
    });
  }

  describe("contract wallets: the key registered for the guarantee's timestamp, never ERC-1271", () => {
    function walletClaims(user: string, timestamp = 1_767_225_600): GuaranteeClaims {
      const base = parseClaims(vectors.guarantees[2].claims);
      return { ...base, user, timestamp };
    }

    for (const scheme of SIGNING_SCHEMES) {
      it(`accepts the registered key's signature (${scheme}) and refuses any other`, async () => {
        const { harness, owner, stranger, wallet } = await loadFixture(deployHarness);
        const walletAddress = await wallet.getAddress();
        await harness.setSigner(walletAddress, owner.address, 0);
        const claims = walletClaims(walletAddress);
        const message = encodeCertificateClaims(claims, deployment);
        const code = SIGNING_SCHEME_CODES[scheme];
        const byOwner = await signGuarantee(owner, hasher, claims, scheme);
        const byStranger = await signGuarantee(stranger, hasher, claims, scheme);
        expect(await harness.verify(hasher.domainSeparator, message, code, byOwner)).to.equal(true);
        expect(await harness.verify(hasher.domainSeparator, message, code, byStranger)).to.equal(false);
      });
    }

    it("picks the key by the claims' timestamp", async () => {
      const { harness, owner, stranger, wallet } = await loadFixture(deployHarness);
      const walletAddress = await wallet.getAddress();
      await harness.setSigner(walletAddress, owner.address, 0);
      await harness.setSigner(walletAddress, stranger.address, 2_000);
      for (const [timestamp, signer, valid] of [
        [1_999, owner, true],
        [1_999, stranger, false],
        [2_000, owner, false],
        [2_000, stranger, true],
      ] as const) {
        const claims = walletClaims(walletAddress, timestamp);
        const message = encodeCertificateClaims(claims, deployment);
        const signature = await signGuarantee(signer, hasher, claims, "eip712");
        expect(
          await harness.verify(hasher.domainSeparator, message, 0, signature),
          String(timestamp),
        ).to.equal(valid);
      }
    });

    it("does not ask the wallet (ERC-1271): without a registered key its owner's signature is refused", async () => {
      const { harness, owner, wallet } = await loadFixture(deployHarness);
      const claims = walletClaims(await wallet.getAddress());
      const message = encodeCertificateClaims(claims, deployment);
      const byOwner = await signGuarantee(owner, hasher, claims, "eip712");
      expect(await harness.verify(hasher.domainSeparator, message, 0, byOwner)).to.equal(false);
    });

    it("an EOA payer signs itself; a key registered for it does not replace its own", async () => {
      const { harness, owner, stranger } = await loadFixture(deployHarness);
      const claims = walletClaims(stranger.address);
      const message = encodeCertificateClaims(claims, deployment);
      const byOwner = await signGuarantee(owner, hasher, claims, "eip712");
      const byItself = await signGuarantee(stranger, hasher, claims, "eip712");
      expect(await harness.verify(hasher.domainSeparator, message, 0, byOwner)).to.equal(false);
      expect(await harness.verify(hasher.domainSeparator, message, 0, byItself)).to.equal(true);
      await harness.setSigner(stranger.address, owner.address, 0);
      expect(await harness.verify(hasher.domainSeparator, message, 0, byItself)).to.equal(true);
    });

    it("recovers nothing from a signature that is not 65 bytes (a multisig's concatenation)", async () => {
      const { harness, owner, stranger } = await loadFixture(deployHarness);
      const claims = walletClaims(owner.address);
      const hash = ethers.hexlify(hasher.signedHash(claims, "eip712"));
      const one = await signGuarantee(owner, hasher, claims, "eip712");
      const two = ethers.concat([one, await signGuarantee(stranger, hasher, claims, "eip712")]);
      expect(await harness.recover(hash, one)).to.equal(owner.address);
      expect(await harness.recover(hash, two)).to.equal(ethers.ZeroAddress);
      expect(await harness.recover(hash, highSTwin(one))).to.equal(ethers.ZeroAddress);
    });
  });

  describe("sdk toPayerSignatureArgs", () => {
    it("maps the scheme to its code and lower-cases the signature", () => {
      const { signature } = vectors.guarantees[0].signatures[0];
      expect(toPayerSignatureArgs("eip191", signature.toUpperCase().replace("0X", "0x"))).to.deep.equal({
        scheme: 1,
        signature: signature.toLowerCase(),
      });
    });

    it("refuses an unknown scheme and empty or malformed signature hex", () => {
      expect(() => toPayerSignatureArgs("eip1271" as never, "0x00")).to.throw(WireError, /scheme/);
      for (const bad of ["0x", "0x0", "00", "0xzz", 7 as never]) {
        expect(() => toPayerSignatureArgs("eip712", bad)).to.throw(WireError, /signature/);
      }
    });
  });
});
