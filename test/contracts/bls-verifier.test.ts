import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { bls12_381 } from "@noble/curves/bls12-381.js";
import {
  CERTIFICATE_DST,
  blsKeyFromSecret,
  blsSign,
  publicKeyToEip2537,
  signatureToEip2537,
} from "../../sdk/bls";
import type { Eip2537G1Point, Eip2537G2Point } from "../../sdk/bls";

const NUL_DST = "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_";
const RFC_DST = "QUUX-V01-CS02-with-BLS12381G1_XMD:SHA-256_SSWU_RO_";
const Fp = bls12_381.fields.Fp;
const Fp2 = bls12_381.fields.Fp2;

type Fp2Value = { c0: bigint; c1: bigint };

const utf8 = (text: string): Uint8Array => ethers.toUtf8Bytes(text);
const word = (value: bigint, half: "hi" | "lo"): string => {
  const hex = value.toString(16).padStart(128, "0");
  return "0x" + (half === "hi" ? hex.slice(0, 64) : hex.slice(64));
};

/** Affine G1 coordinates → solady G1Point words, computed here without the SDK. */
function g1Words(x: bigint, y: bigint): Eip2537G1Point {
  return { x_a: word(x, "hi"), x_b: word(x, "lo"), y_a: word(y, "hi"), y_b: word(y, "lo") };
}

/** Affine G2 coordinates → solady G2Point words, computed here without the SDK. */
function g2Words(x: Fp2Value, y: Fp2Value): Eip2537G2Point {
  return {
    x_c0_a: word(x.c0, "hi"),
    x_c0_b: word(x.c0, "lo"),
    x_c1_a: word(x.c1, "hi"),
    x_c1_b: word(x.c1, "lo"),
    y_c0_a: word(y.c0, "hi"),
    y_c0_b: word(y.c0, "lo"),
    y_c1_a: word(y.c1, "hi"),
    y_c1_b: word(y.c1, "lo"),
  };
}

/** A G1Point result from the contract (ethers Result) as a plain object of its four words. */
function g1Of(result: Eip2537G1Point): Eip2537G1Point {
  return { x_a: result.x_a, x_b: result.x_b, y_a: result.y_a, y_b: result.y_b };
}

function nobleHashToG1(message: Uint8Array, dst: string | Uint8Array): Eip2537G1Point {
  const { x, y } = bls12_381.G1.hashToCurve(message, { DST: dst }).toAffine();
  return g1Words(x, y);
}

/** A point on E1 (y² = x³ + 4) outside the prime-order subgroup. */
function g1OutsideSubgroup(): Eip2537G1Point {
  const x = 4n;
  const y = Fp.sqrt(Fp.add(Fp.pow(x, 3n), 4n));
  expect(() => bls12_381.G1.Point.fromAffine({ x, y }).assertValidity()).to.throw(/subgroup/);
  return g1Words(x, y);
}

/** A point on E2 (y² = x³ + 4(1 + i)) outside the prime-order subgroup. */
function g2OutsideSubgroup(): Eip2537G2Point {
  const b = Fp2.fromBigTuple([4n, 4n]);
  for (let k = 1n; ; k++) {
    const x = Fp2.fromBigTuple([k, 0n]);
    let y: Fp2Value;
    try {
      y = Fp2.sqrt(Fp2.add(Fp2.pow(x, 3n), b));
    } catch {
      continue; // not a square: no point with this x
    }
    const point = bls12_381.G2.Point.fromAffine({ x, y });
    try {
      point.assertValidity();
    } catch {
      return g2Words(x, y); // on the curve (we built it so) but not in G2
    }
  }
}

describe("BLSVerifier", () => {
  async function deploy() {
    const harness = await ethers.deployContract("BLSVerifierHarness");
    return { harness };
  }

  describe("hashToG1", () => {
    const lengths = [0, 1, 32, 192, 300, 640];

    it("exposes the certificates' POP tag (signatures in G1)", async () => {
      const { harness } = await loadFixture(deploy);
      expect(ethers.toUtf8String(await harness.popDst())).to.equal(CERTIFICATE_DST);
      expect(CERTIFICATE_DST).to.equal("BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_POP_");
    });

    for (const length of lengths) {
      it(`equals noble's hash_to_curve with the POP tag for a ${length}-byte message`, async () => {
        const { harness } = await loadFixture(deploy);
        const message = Uint8Array.from({ length }, (_, i) => (i * 7 + length) & 0xff);
        const onChain = await harness.hashToG1(message, utf8(CERTIFICATE_DST));
        expect(g1Of(onChain)).to.deep.equal(nobleHashToG1(message, CERTIFICATE_DST));
      });
    }

    // RFC 9380 Appendix J.9.1, suite BLS12381G1_XMD:SHA-256_SSWU_RO_, three of the published messages
    // (as reproduced in independent public test suites that agree digit for digit); the test also
    // checks that noble computes the same points.
    const RFC_9380_J_9_1 = [
      {
        msg: "",
        x: "0x052926add2207b76ca4fa57a8734416c8dc95e24501772c814278700eed6d1e4e8cf62d9c09db0fac349612b759e79a1",
        y: "0x08ba738453bfed09cb546dbb0783dbb3a5f1f566ed67bb6be0e8c67e2e81a4cc68ee29813bb7994998f3eae0c9c6a265",
      },
      {
        msg: "abc",
        x: "0x03567bc5ef9c690c2ab2ecdf6a96ef1c139cc0b2f284dca0a9a7943388a49a3aee664ba5379a7655d3c68900be2f6903",
        y: "0x0b9c15f3fe6e5cf4211f346271d7b01c8f3b28be689c8429c85b67af215533311f0b8dfaaa154fa6b88176c229f2885d",
      },
      {
        msg: "abcdef0123456789",
        x: "0x11e0b079dea29a68f0383ee94fed1b940995272407e3bb916bbf268c263ddd57a6a27200a784cbc248e84f357ce82d98",
        y: "0x03a87ae2caf14e8ee52e51fa2ed8eefe80f02457004ba4d486d6aa1f517c0889501dc7413753f9599b099ebcbbd2d709",
      },
    ];

    for (const vector of RFC_9380_J_9_1) {
      it(`matches RFC 9380 J.9.1 for msg "${vector.msg}"`, async () => {
        const { harness } = await loadFixture(deploy);
        const expected = g1Words(BigInt(vector.x), BigInt(vector.y));
        expect(nobleHashToG1(utf8(vector.msg), RFC_DST)).to.deep.equal(expected);
        expect(g1Of(await harness.hashToG1(utf8(vector.msg), utf8(RFC_DST)))).to.deep.equal(expected);
      });
    }

    it("accepts tags of 1 and 255 bytes", async () => {
      const { harness } = await loadFixture(deploy);
      const message = utf8("tag lengths");
      for (const dst of [utf8("X"), new Uint8Array(255).fill(0x41)]) {
        expect(g1Of(await harness.hashToG1(message, dst))).to.deep.equal(nobleHashToG1(message, dst));
      }
    });

    it("reverts with InvalidDstLength for an empty tag or one longer than 255 bytes", async () => {
      const { harness } = await loadFixture(deploy);
      await expect(harness.hashToG1("0x01", "0x"))
        .to.be.revertedWithCustomError(harness, "InvalidDstLength")
        .withArgs(0);
      await expect(harness.hashToG1("0x01", new Uint8Array(256).fill(0x41)))
        .to.be.revertedWithCustomError(harness, "InvalidDstLength")
        .withArgs(256);
    });
  });

  describe("verify", () => {
    const keys = blsKeyFromSecret("0x" + "5a".repeat(32));
    const other = blsKeyFromSecret("0x" + "a5".repeat(32));
    const message = Uint8Array.from({ length: 400 }, (_, i) => (i * 31) & 0xff); // ~ a V2 claims blob
    const signature = blsSign(keys.secretKey, message);
    const pk = publicKeyToEip2537(keys.publicKey);
    const sig = signatureToEip2537(signature);
    const pop = utf8(CERTIFICATE_DST);

    it("accepts a blst signature with the POP tag", async () => {
      const { harness } = await loadFixture(deploy);
      expect(await harness.verify(pk, message, sig, pop)).to.be.true;
    });

    it("accepts signatures over short messages and the empty message", async () => {
      const { harness } = await loadFixture(deploy);
      for (const msg of [new Uint8Array(0), utf8("a"), new Uint8Array(32).fill(9)]) {
        const s = signatureToEip2537(blsSign(keys.secretKey, msg));
        expect(await harness.verify(pk, msg, s, pop)).to.be.true;
      }
    });

    it("verifies with whatever tag the signer used (noble, NUL tag)", async () => {
      const { harness } = await loadFixture(deploy);
      const noble = bls12_381.shortSignatures;
      const nulSig = noble.sign(noble.hash(message, NUL_DST), keys.secretKey).toBytes(true);
      expect(await harness.verify(pk, message, signatureToEip2537(nulSig), utf8(NUL_DST))).to.be.true;
      expect(await harness.verify(pk, message, signatureToEip2537(nulSig), pop)).to.be.false;
    });

    it("rejects a flipped bit in the message", async () => {
      const { harness } = await loadFixture(deploy);
      for (const index of [0, 199, 399]) {
        const tampered = Uint8Array.from(message);
        tampered[index] ^= 0x01;
        expect(await harness.verify(pk, tampered, sig, pop)).to.be.false;
      }
      expect(await harness.verify(pk, message.subarray(0, 399), sig, pop)).to.be.false;
    });

    it("rejects a valid signature over another message and a bit-flipped signature", async () => {
      const { harness } = await loadFixture(deploy);
      const otherMessageSig = signatureToEip2537(blsSign(keys.secretKey, utf8("another message")));
      expect(await harness.verify(pk, message, otherMessageSig, pop)).to.be.false;
      // A flipped low bit of a coordinate leaves an off-curve point: the pairing precompile fails.
      const flipped = { ...sig, y_b: ethers.toBeHex(BigInt(sig.y_b) ^ 1n, 32) };
      expect(await harness.verify(pk, message, flipped, pop)).to.be.false;
    });

    it("rejects the wrong key and the wrong tag", async () => {
      const { harness } = await loadFixture(deploy);
      expect(await harness.verify(publicKeyToEip2537(other.publicKey), message, sig, pop)).to.be.false;
      expect(await harness.verify(pk, message, sig, utf8(NUL_DST))).to.be.false;
      expect(await harness.verify(pk, message, sig, utf8(CERTIFICATE_DST.slice(0, -1)))).to.be.false;
    });

    describe("invalid points: false, never a revert", () => {
      const zero = ethers.ZeroHash;
      const g1Infinity = { x_a: zero, x_b: zero, y_a: zero, y_b: zero };
      const g2Infinity = g2Words({ c0: 0n, c1: 0n }, { c0: 0n, c1: 0n });

      it("rejects the identity key with the identity signature (it would pass any pairing check)", async () => {
        const { harness } = await loadFixture(deploy);
        expect(await harness.verify(g2Infinity, message, g1Infinity, pop)).to.be.false;
        expect(await harness.verify(g2Infinity, message, sig, pop)).to.be.false;
        expect(await harness.verify(pk, message, g1Infinity, pop)).to.be.false;
      });

      it("rejects off-curve and out-of-subgroup keys", async () => {
        const { harness } = await loadFixture(deploy);
        const offCurve = { ...pk, y_c1_b: ethers.toBeHex(BigInt(pk.y_c1_b) ^ 1n, 32) };
        expect(await harness.verify(offCurve, message, sig, pop)).to.be.false;
        expect(await harness.verify(g2OutsideSubgroup(), message, sig, pop)).to.be.false;
      });

      it("rejects an out-of-subgroup signature", async () => {
        const { harness } = await loadFixture(deploy);
        expect(await harness.verify(pk, message, g1OutsideSubgroup(), pop)).to.be.false;
      });

      it("rejects non-canonical field elements (top 16 bytes set, or >= p)", async () => {
        const { harness } = await loadFixture(deploy);
        const topBitSet = { ...pk, x_c0_a: ethers.toBeHex(BigInt(pk.x_c0_a) | (1n << 255n), 32) };
        expect(await harness.verify(topBitSet, message, sig, pop)).to.be.false;
        // x + p encodes the same residue as x but is not canonical
        const xPlusP = BigInt(sig.x_a + sig.x_b.slice(2)) + Fp.ORDER;
        const nonCanonical = { ...sig, x_a: word(xPlusP, "hi"), x_b: word(xPlusP, "lo") };
        expect(await harness.verify(pk, message, nonCanonical, pop)).to.be.false;
      });

      it("returns false inside a transaction with gas to spare (the failed precompile burns what it was given)", async () => {
        const { harness } = await loadFixture(deploy);
        const tx = await harness.verifyCertificateTx(pk, message, g1OutsideSubgroup(), {
          gasLimit: 1_000_000,
        });
        await expect(tx).to.emit(harness, "Verified").withArgs(false);
      });
    });

    it("isValidPublicKey accepts a real key and refuses infinity, off-curve and out-of-subgroup keys", async () => {
      const { harness } = await loadFixture(deploy);
      expect(await harness.isValidPublicKey(pk)).to.be.true;
      expect(await harness.isValidPublicKey(publicKeyToEip2537(other.publicKey))).to.be.true;
      expect(await harness.isValidPublicKey(g2Words({ c0: 0n, c1: 0n }, { c0: 0n, c1: 0n }))).to.be.false;
      const offCurve = { ...pk, y_c1_b: ethers.toBeHex(BigInt(pk.y_c1_b) ^ 1n, 32) };
      expect(await harness.isValidPublicKey(offCurve)).to.be.false;
      expect(await harness.isValidPublicKey(g2OutsideSubgroup())).to.be.false;
      const topBitSet = { ...pk, x_c0_a: ethers.toBeHex(BigInt(pk.x_c0_a) | (1n << 255n), 32) };
      expect(await harness.isValidPublicKey(topBitSet)).to.be.false;
    });

    it("costs under 250k gas for a 400-byte message (whole transaction)", async () => {
      const { harness } = await loadFixture(deploy);
      const tx = await harness.verifyCertificateTx(pk, message, sig);
      await expect(tx).to.emit(harness, "Verified").withArgs(true);
      const receipt = await tx.wait();
      const gasUsed = receipt!.gasUsed;
      // Recorded in the report: calldata + 21k base included.
      console.log(`      gas: verifyCertificateTx(400-byte message) = ${gasUsed}`);
      expect(gasUsed).to.be.lessThan(250_000n);
    });
  });
});
