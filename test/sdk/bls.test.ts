import { expect } from "chai";
import { bls12_381 } from "@noble/curves/bls12-381.js";
import {
  BlsError,
  CERTIFICATE_DST,
  blsKeyFromSecret,
  blsKeyFromSecretKeyBytes,
  blsSign,
  blsVerify,
  blsVerifyBatch,
  createBlsSigner,
  blsBackend,
  g1FromEip2537Bytes,
  g1ToEip2537Bytes,
  g2FromEip2537Bytes,
  g2ToEip2537Bytes,
  ietfKeygen,
  publicKeyFromArray,
  publicKeyFromEip2537,
  publicKeyToArray,
  publicKeyToEip2537,
  signatureFromEip2537,
  signatureToEip2537,
} from "../../sdk/bls";
import { verifyCertificateSignature } from "../../sdk/bls-verify";

const IKM = "0x" + "11".repeat(32);
const OTHER_IKM = "0x" + "22".repeat(32);
const MESSAGE = new TextEncoder().encode("surety certificate claims");
const EXPECTED_SECRET_KEY = "344dc8b38c3d76ded943ea518dfcd0184c8730f1d1a9a444e0bdd6ecc9742825";

function flipBit(bytes: Uint8Array, index: number, bit = 0): Uint8Array {
  const copy = Uint8Array.from(bytes);
  copy[index] ^= 1 << bit;
  return copy;
}

function expectBlsError(fn: () => unknown, field: string, reason: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught, "expected a BlsError").to.be.instanceOf(BlsError);
  expect((caught as BlsError).field).to.equal(field);
  expect((caught as BlsError).message).to.match(reason);
}

/** A point on the G1 curve that is not in the prime-order subgroup (x = 4 has y² = x³ + 4 square). */
function nonSubgroupG1(): { x: bigint; y: bigint } {
  const Fp = bls12_381.fields.Fp;
  const x = 4n;
  return { x, y: Fp.sqrt(Fp.add(Fp.pow(x, 3n), 4n)) };
}

/** ZCash-style compression without noble's validity check (flags: compressed, sign of y). */
function compressG1Unchecked({ x, y }: { x: bigint; y: bigint }): Uint8Array {
  const bytes = Uint8Array.from(Buffer.from(x.toString(16).padStart(96, "0"), "hex"));
  const p = bls12_381.fields.Fp.ORDER;
  bytes[0] |= 0x80 | (y > (p - 1n) / 2n ? 0x20 : 0);
  return bytes;
}

type Fp2Value = { c0: bigint; c1: bigint };

/** A point on the G2 curve (y² = x³ + 4(1 + i)) outside the prime-order subgroup. */
function nonSubgroupG2(): { x: Fp2Value; y: Fp2Value } {
  const Fp2 = bls12_381.fields.Fp2;
  const b = Fp2.fromBigTuple([4n, 4n]);
  for (let k = 1n; ; k++) {
    const x = Fp2.fromBigTuple([k, 0n]);
    let y: Fp2Value;
    try {
      y = Fp2.sqrt(Fp2.add(Fp2.pow(x, 3n), b));
    } catch {
      continue; // not a square: no point with this x
    }
    try {
      bls12_381.G2.Point.fromAffine({ x, y }).assertValidity();
    } catch {
      return { x, y };
    }
  }
}

/** Compressed G2 (x.c1 ‖ x.c0, flags on the first byte) without noble's validity check. */
function compressG2Unchecked({ x, y }: { x: Fp2Value; y: Fp2Value }): Uint8Array {
  const hex = (v: bigint) => v.toString(16).padStart(96, "0");
  const bytes = Uint8Array.from(Buffer.from(hex(x.c1) + hex(x.c0), "hex"));
  const half = (bls12_381.fields.Fp.ORDER - 1n) / 2n;
  const larger = y.c1 !== 0n ? y.c1 > half : y.c0 > half;
  bytes[0] |= 0x80 | (larger ? 0x20 : 0);
  return bytes;
}

describe("sdk/bls", () => {
  const keys = blsKeyFromSecret(IKM);

  describe("keys", () => {
    it("derives the same key pair from the same key material, hex or bytes", () => {
      const again = blsKeyFromSecret(Uint8Array.from(Buffer.from("11".repeat(32), "hex")));
      expect(keys.secretKey).to.have.length(32);
      expect(keys.publicKey).to.have.length(96);
      expect(again.secretKey).to.deep.equal(keys.secretKey);
      expect(again.publicKey).to.deep.equal(keys.publicKey);
      expect(blsKeyFromSecret(OTHER_IKM).publicKey).to.not.deep.equal(keys.publicKey);
    });

    it("derives the public key noble derives from the same secret key (G2)", () => {
      const noblePk = bls12_381.shortSignatures.getPublicKey(keys.secretKey).toBytes(true);
      expect(keys.publicKey).to.deep.equal(noblePk);
    });

    it("signs with the native addon here; its KeyGen equals the fallback's pure-JS IETF KeyGen", () => {
      expect(blsBackend()).to.equal("blst");
      for (const ikm of [IKM, OTHER_IKM, "0x" + "00".repeat(32), "0x" + "ab".repeat(64)]) {
        const bytes = Uint8Array.from(Buffer.from(ikm.slice(2), "hex"));
        expect(ietfKeygen(bytes)).to.deep.equal(blsKeyFromSecret(ikm).secretKey);
      }
      // The secret key of IKM 0x11…11, the same scalar as @chainsafe/blst's SecretKey.fromKeygen gave
      // when certificates were signed in G2: Core's SURETY_BLS_SECRET keeps its scalar.
      expect(Buffer.from(keys.secretKey).toString("hex")).to.equal(EXPECTED_SECRET_KEY);
    });

    it("rebuilds a key pair from the raw secret key", () => {
      const rebuilt = blsKeyFromSecretKeyBytes(keys.secretKey);
      expect(rebuilt.publicKey).to.deep.equal(keys.publicKey);
      const fromHex = blsKeyFromSecretKeyBytes("0x" + Buffer.from(keys.secretKey).toString("hex"));
      expect(fromHex.publicKey).to.deep.equal(keys.publicKey);
    });

    it("rejects short or malformed key material with a clear error", () => {
      expectBlsError(() => blsKeyFromSecret(new Uint8Array(31)), "ikm", /at least 32 bytes.*got 31/);
      expectBlsError(() => blsKeyFromSecret("0x1234"), "ikm", /at least 32 bytes/);
      expectBlsError(() => blsKeyFromSecret("0xzz" + "00".repeat(32)), "ikm", /hex string/);
      expectBlsError(() => blsKeyFromSecret("0x" + "0".repeat(65)), "ikm", /even number of digits/);
    });

    it("rejects invalid raw secret keys", () => {
      expectBlsError(() => blsKeyFromSecretKeyBytes(new Uint8Array(31)), "secretKey", /32 bytes, got 31/);
      expectBlsError(
        () => blsKeyFromSecretKeyBytes(new Uint8Array(32)),
        "secretKey",
        /not a valid secret key/,
      );
      const aboveOrder = new Uint8Array(32).fill(0xff);
      expectBlsError(() => blsKeyFromSecretKeyBytes(aboveOrder), "secretKey", /not a valid secret key/);
      expectBlsError(() => blsSign(new Uint8Array(32), MESSAGE), "secretKey", /not a valid secret key/);
    });
  });

  describe("sign and verify", () => {
    const signature = blsSign(keys.secretKey, MESSAGE);

    it("signs deterministically and verifies", () => {
      expect(signature).to.have.length(48);
      expect(blsSign(keys.secretKey, MESSAGE)).to.deep.equal(signature);
      expect(blsVerify(keys.publicKey, MESSAGE, signature)).to.be.true;
    });

    it("signs the same with a cached signer", () => {
      const signer = createBlsSigner(keys.secretKey);
      expect(signer.publicKey).to.deep.equal(keys.publicKey);
      expect(signer.sign(MESSAGE)).to.deep.equal(signature);
    });

    it("signs with the POP tag: noble verifies with CERTIFICATE_DST and not with the NUL tag", () => {
      const noble = bls12_381.shortSignatures;
      expect(noble.verify(signature, noble.hash(MESSAGE, CERTIFICATE_DST), keys.publicKey)).to.be.true;
      const nulDst = "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_";
      expect(noble.verify(signature, noble.hash(MESSAGE, nulDst), keys.publicKey)).to.be.false;
      // and noble's own signature with that tag is byte-identical (BLS signing is deterministic)
      const nobleSig = noble.sign(noble.hash(MESSAGE, CERTIFICATE_DST), keys.secretKey).toBytes(true);
      expect(nobleSig).to.deep.equal(signature);
    });

    it("signs and verifies the empty message and a long one", () => {
      for (const message of [new Uint8Array(0), new Uint8Array(1000).fill(7)]) {
        expect(blsVerify(keys.publicKey, message, blsSign(keys.secretKey, message))).to.be.true;
      }
    });

    it("returns false for a tampered message, signature or the wrong key", () => {
      expect(blsVerify(keys.publicKey, flipBit(MESSAGE, 0), signature)).to.be.false;
      expect(blsVerify(keys.publicKey, MESSAGE.subarray(1), signature)).to.be.false;
      expect(blsVerify(keys.publicKey, MESSAGE, flipBit(signature, 47))).to.be.false;
      expect(blsVerify(keys.publicKey, MESSAGE, flipBit(signature, 40))).to.be.false;
      expect(blsVerify(blsKeyFromSecret(OTHER_IKM).publicKey, MESSAGE, signature)).to.be.false;
      const otherSig = blsSign(blsKeyFromSecret(OTHER_IKM).secretKey, MESSAGE);
      expect(blsVerify(keys.publicKey, MESSAGE, otherSig)).to.be.false;
    });

    it("the pure verifier (the console's, in the browser) agrees with blsVerify on good and bad input", () => {
      const infinitySig = Uint8Array.from([0xc0, ...new Array(47).fill(0)]);
      const cases: [Uint8Array, Uint8Array, Uint8Array][] = [
        [keys.publicKey, MESSAGE, signature],
        [keys.publicKey, flipBit(MESSAGE, 0), signature],
        [keys.publicKey, MESSAGE, flipBit(signature, 47)],
        [blsKeyFromSecret(OTHER_IKM).publicKey, MESSAGE, signature],
        [keys.publicKey, MESSAGE, infinitySig],
        [keys.publicKey.subarray(1), MESSAGE, signature],
        [keys.publicKey, MESSAGE, signature.subarray(1)],
      ];
      for (const [pk, message, sig] of cases) {
        expect(verifyCertificateSignature(pk, message, sig)).to.equal(blsVerify(pk, message, sig));
      }
      expect(verifyCertificateSignature(keys.publicKey, MESSAGE, signature)).to.be.true;
    });

    it("verifies against a prepared key (the addon) as the addon's one-shot verify does", function () {
      if (blsBackend() !== "blst") this.skip();
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const addon = require("../../native/blst-minsig") as {
        verify(pk: Uint8Array, m: Uint8Array, s: Uint8Array, dst: Uint8Array): boolean;
        prepareKey(pk: Uint8Array): object | null;
        verifyPrepared(key: unknown, m: Uint8Array, s: Uint8Array, dst: Uint8Array): boolean;
      };
      const dst = new TextEncoder().encode(CERTIFICATE_DST);
      // More keys than blsVerify keeps prepared, each used twice: evicted keys are prepared again.
      const pairs = Array.from({ length: 10 }, (_, i) =>
        blsKeyFromSecret("0x" + (i + 1).toString(16).padStart(64, "0")),
      );
      for (const round of [0, 1]) {
        for (const [i, pair] of pairs.entries()) {
          const message = new TextEncoder().encode(`claims ${round} ${i}`);
          const sig = blsSign(pair.secretKey, message);
          const other = pairs[(i + 1) % pairs.length].publicKey;
          for (const [pk, m, s] of [
            [pair.publicKey, message, sig],
            [other, message, sig],
            [pair.publicKey, flipBit(message, 3), sig],
          ] as const) {
            expect(blsVerify(pk, m, s)).to.equal(addon.verify(pk, m, s, dst));
            expect(addon.verifyPrepared(addon.prepareKey(pk), m, s, dst)).to.equal(
              addon.verify(pk, m, s, dst),
            );
          }
          expect(blsVerify(pair.publicKey, message, sig)).to.be.true;
        }
      }
      expect(addon.prepareKey(Uint8Array.from([0xc0, ...new Array(95).fill(0)]))).to.be.null;
      expect(addon.prepareKey(compressG2Unchecked(nonSubgroupG2()))).to.be.null;
      expect(() => addon.verifyPrepared({}, MESSAGE, signature, dst)).to.throw(TypeError, /prepareKey/);
      expect(() => addon.verifyPrepared(keys.publicKey, MESSAGE, signature, dst)).to.throw(
        TypeError,
        /prepareKey/,
      );
    });

    it("verifies a batch as each alone: all valid, and a bad one anywhere fails alone", () => {
      const messages = Array.from({ length: 6 }, (_, i) => new TextEncoder().encode(`claims ${i}`));
      const sigs = messages.map((m) => blsSign(keys.secretKey, m));
      expect(blsVerifyBatch(keys.publicKey, messages, sigs)).to.deep.equal(messages.map(() => true));
      expect(blsVerifyBatch(keys.publicKey, [], [])).to.deep.equal([]);
      const infinitySig = Uint8Array.from([0xc0, ...new Array(47).fill(0)]);
      const bad: Uint8Array[] = [
        sigs[0], // another message's signature
        flipBit(sigs[1], 47),
        infinitySig,
        compressG1Unchecked(nonSubgroupG1()),
        sigs[1].subarray(1),
        blsSign(blsKeyFromSecret(OTHER_IKM).secretKey, messages[5]),
      ];
      for (const [at, wrong] of bad.entries()) {
        const position = (at + 1) % messages.length;
        const mixed = sigs.slice();
        mixed[position] = wrong;
        const expected = messages.map((m, i) => blsVerify(keys.publicKey, m, mixed[i]));
        expect(expected[position]).to.be.false;
        expect(blsVerifyBatch(keys.publicKey, messages, mixed)).to.deep.equal(expected);
      }
      // Two bad signatures whose errors cancel out without the random coefficients (s0 + d, s1 - d) fail.
      const twisted = sigs.slice();
      [twisted[0], twisted[1]] = [sigs[1], sigs[0]];
      expect(blsVerifyBatch(keys.publicKey, messages.slice(0, 2), twisted.slice(0, 2))).to.deep.equal([
        false,
        false,
      ]);
      expect(blsVerifyBatch(blsKeyFromSecret(OTHER_IKM).publicKey, messages, sigs)).to.deep.equal(
        messages.map(() => false),
      );
      expect(blsVerifyBatch(new Uint8Array(96), messages, sigs)).to.deep.equal(messages.map(() => false));
      expect(() => blsVerifyBatch(keys.publicKey, messages, sigs.slice(1))).to.throw(RangeError);
    });

    it("returns false, never throws, for malformed keys and signatures", () => {
      const infinityPk = Uint8Array.from([0xc0, ...new Array(95).fill(0)]);
      const infinitySig = Uint8Array.from([0xc0, ...new Array(47).fill(0)]);
      const badPk = compressG2Unchecked(nonSubgroupG2());
      const badSig = compressG1Unchecked(nonSubgroupG1());
      const uncompressedPk = bls12_381.G2.Point.fromBytes(keys.publicKey).toBytes(false);
      const cases: [unknown, unknown, unknown][] = [
        [new Uint8Array(0), MESSAGE, signature],
        [keys.publicKey.subarray(1), MESSAGE, signature],
        [uncompressedPk, MESSAGE, signature],
        [infinityPk, MESSAGE, infinitySig],
        [keys.publicKey, MESSAGE, infinitySig],
        [badPk, MESSAGE, signature],
        [keys.publicKey, MESSAGE, badSig],
        [new Uint8Array(96).fill(0xff), MESSAGE, signature],
        [keys.publicKey, MESSAGE, new Uint8Array(48)],
        [keys.publicKey, MESSAGE, signature.subarray(0, 47)],
        ["0x1234", MESSAGE, signature],
        [keys.publicKey, "hello", signature],
        [keys.publicKey, MESSAGE, null],
      ];
      for (const [pk, message, sig] of cases) {
        expect(blsVerify(pk as Uint8Array, message as Uint8Array, sig as Uint8Array)).to.be.false;
      }
    });
  });

  describe("public_key array form", () => {
    it("round-trips", () => {
      const array = publicKeyToArray(keys.publicKey);
      expect(array).to.have.length(96);
      expect(array.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)).to.be.true;
      expect(JSON.parse(JSON.stringify(array))).to.deep.equal(array);
      expect(publicKeyFromArray(JSON.parse(JSON.stringify(array)))).to.deep.equal(keys.publicKey);
    });

    it("rejects malformed arrays with the offending field", () => {
      const array = publicKeyToArray(keys.publicKey);
      expectBlsError(() => publicKeyFromArray("0x12"), "public_key", /array of 96/);
      expectBlsError(() => publicKeyFromArray(array.slice(1)), "public_key", /96 elements, got 95/);
      expectBlsError(() => publicKeyFromArray([...array.slice(0, 95), 256]), "public_key[95]", /0\.\.255/);
      expectBlsError(() => publicKeyFromArray([-1, ...array.slice(1)]), "public_key[0]", /0\.\.255/);
      expectBlsError(() => publicKeyFromArray([1.5, ...array.slice(1)]), "public_key[0]", /integer/);
      expectBlsError(() => publicKeyFromArray(["1", ...array.slice(1)]), "public_key[0]", /integer/);
      const infinity = [0xc0, ...new Array(95).fill(0)];
      expectBlsError(() => publicKeyFromArray(infinity), "public_key", /infinity/);
      const offCurve = new Array(96).fill(0xaa);
      expectBlsError(() => publicKeyFromArray(offCurve), "public_key", /not a valid BLS12-381 point/);
      const outOfSubgroup = Array.from(compressG2Unchecked(nonSubgroupG2()));
      expectBlsError(() => publicKeyFromArray(outOfSubgroup), "public_key", /subgroup/);
      expectBlsError(() => publicKeyFromArray(array.slice(1), "params.pk"), "params.pk", /96 elements/);
      expectBlsError(() => publicKeyToArray(new Uint8Array(95)), "publicKey", /96 bytes, got 95/);
    });
  });

  describe("EIP-2537 conversions", () => {
    const signature = blsSign(keys.secretKey, MESSAGE);
    const fp = (hi: string, lo: string): bigint => BigInt(hi + lo.slice(2));
    const TOP_16_ZERO = /^0x0{32}[0-9a-f]{32}$/;

    it("encodes G1 as solady's G1Point: 16 zero bytes + 48-byte big-endian x, then y", () => {
      const point = signatureToEip2537(signature);
      expect(Object.keys(point)).to.deep.equal(["x_a", "x_b", "y_a", "y_b"]);
      const { x, y } = bls12_381.G1.Point.fromBytes(signature).toAffine();
      expect(fp(point.x_a, point.x_b)).to.equal(x);
      expect(fp(point.y_a, point.y_b)).to.equal(y);
      expect(point.x_a).to.match(TOP_16_ZERO);
      expect(point.y_a).to.match(TOP_16_ZERO);
      for (const word of Object.values(point)) expect(word).to.match(/^0x[0-9a-f]{64}$/);
    });

    it("encodes G2 as solady's G2Point: x.c0, x.c1, y.c0, y.c1", () => {
      const point = publicKeyToEip2537(keys.publicKey);
      expect(Object.keys(point)).to.deep.equal([
        "x_c0_a",
        "x_c0_b",
        "x_c1_a",
        "x_c1_b",
        "y_c0_a",
        "y_c0_b",
        "y_c1_a",
        "y_c1_b",
      ]);
      const { x, y } = bls12_381.G2.Point.fromBytes(keys.publicKey).toAffine();
      expect(fp(point.x_c0_a, point.x_c0_b)).to.equal(x.c0);
      expect(fp(point.x_c1_a, point.x_c1_b)).to.equal(x.c1);
      expect(fp(point.y_c0_a, point.y_c0_b)).to.equal(y.c0);
      expect(fp(point.y_c1_a, point.y_c1_b)).to.equal(y.c1);
    });

    it("round-trips structs and raw encodings", () => {
      expect(signatureFromEip2537(signatureToEip2537(signature))).to.deep.equal(signature);
      expect(publicKeyFromEip2537(publicKeyToEip2537(keys.publicKey))).to.deep.equal(keys.publicKey);
      const g1Bytes = g1ToEip2537Bytes(signature);
      const g2Bytes = g2ToEip2537Bytes(keys.publicKey);
      expect(g1Bytes).to.have.length(128);
      expect(g2Bytes).to.have.length(256);
      expect(g1FromEip2537Bytes(g1Bytes)).to.deep.equal(signature);
      expect(g2FromEip2537Bytes(g2Bytes)).to.deep.equal(keys.publicKey);
      expect("0x" + Buffer.from(g1Bytes).toString("hex")).to.equal(
        "0x" +
          Object.values(signatureToEip2537(signature))
            .map((w) => w.slice(2))
            .join(""),
      );
      for (let i = 0; i < 5; i++) {
        const msg = new Uint8Array([i]);
        const sig = blsSign(keys.secretKey, msg);
        expect(signatureFromEip2537(signatureToEip2537(sig))).to.deep.equal(sig);
      }
    });

    it("rejects malformed compressed points", () => {
      expectBlsError(() => signatureToEip2537(new Uint8Array(47)), "signature", /48 bytes, got 47/);
      expectBlsError(() => signatureToEip2537(new Uint8Array(48).fill(0xaa)), "signature", /not a valid/);
      expectBlsError(
        () => signatureToEip2537(Uint8Array.from([0xc0, ...new Array(47).fill(0)])),
        "signature",
        /infinity/,
      );
      expectBlsError(() => publicKeyToEip2537(keys.publicKey.subarray(1)), "publicKey", /96 bytes, got 95/);
      expectBlsError(
        () => publicKeyToEip2537(Uint8Array.from([0xc0, ...new Array(95).fill(0)])),
        "publicKey",
        /infinity/,
      );
      expectBlsError(() => publicKeyToEip2537(new Uint8Array(96).fill(0xaa)), "publicKey", /not a valid/);
    });

    it("rejects malformed EIP-2537 points, naming the field", () => {
      const g1 = signatureToEip2537(signature);
      const g2 = publicKeyToEip2537(keys.publicKey);
      expectBlsError(
        () => signatureFromEip2537({ ...g1, y_b: "0x1234" }),
        "signature.y_b",
        /32 bytes, got 2/,
      );
      expectBlsError(() => signatureFromEip2537({ ...g1, x_a: "nope" }), "signature.x_a", /hex string/);
      const missing = { ...g1 } as Partial<typeof g1>;
      delete missing.y_a;
      expectBlsError(() => signatureFromEip2537(missing as typeof g1), "signature.y_a", /bytes32 hex string/);
      // y + 1 is off the curve
      const yPlusOne = "0x" + (BigInt(g1.y_b) + 1n).toString(16).padStart(64, "0");
      expectBlsError(() => signatureFromEip2537({ ...g1, y_b: yPlusOne }), "signature", /not a valid/);
      // x = p is not canonical
      const p = bls12_381.fields.Fp.ORDER.toString(16).padStart(128, "0");
      const atP = { ...g1, x_a: "0x" + p.slice(0, 64), x_b: "0x" + p.slice(64) };
      expectBlsError(() => signatureFromEip2537(atP), "signature.x", /below p/);
      const zeros = "0x" + "00".repeat(32);
      const g1Zero = { x_a: zeros, x_b: zeros, y_a: zeros, y_b: zeros };
      expectBlsError(() => signatureFromEip2537(g1Zero), "signature", /infinity/);
      const offSubgroup = nonSubgroupG1();
      const offBytes = Buffer.concat([
        Buffer.from(offSubgroup.x.toString(16).padStart(128, "0"), "hex"),
        Buffer.from(offSubgroup.y.toString(16).padStart(128, "0"), "hex"),
      ]);
      expectBlsError(() => g1FromEip2537Bytes(offBytes), "point", /subgroup/);
      expectBlsError(() => g1FromEip2537Bytes(new Uint8Array(127)), "point", /128 bytes, got 127/);
      expectBlsError(() => g2FromEip2537Bytes(new Uint8Array(255)), "point", /256 bytes, got 255/);
      const yc1PlusOne = "0x" + (BigInt(g2.y_c1_b) + 1n).toString(16).padStart(64, "0");
      expectBlsError(() => publicKeyFromEip2537({ ...g2, y_c1_b: yc1PlusOne }), "publicKey", /not a valid/);
      expectBlsError(
        () => publicKeyFromEip2537({ ...g2, x_c1_a: "0x" + "ff".repeat(32) }),
        "publicKey.x.c1",
        /below p/,
      );
    });
  });
});
