import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { expect } from "chai";
import { keccak256, randomBytes } from "ethers";
import {
  type Keccak256Fn,
  compactMerkleProofs,
  compactMerkleRoot,
  hashPairs,
  nobleKeccak256,
  sortHashes,
} from "../../sdk/compact-merkle";
import { guaranteesRootOfHashes } from "../../sdk/guarantee-tree";
import {
  NATIVE_KECCAK_ADDON,
  fastKeccak256,
  keccakBackend,
  loadKeccak,
} from "../../operator/clearing/native-keccak";

const random = (bytes: number): Buffer => Buffer.from(randomBytes(bytes));
const native = loadKeccak(NATIVE_KECCAK_ADDON);
const keccakPackage = loadKeccak(null);
const missingAddon = loadKeccak(require.resolve("./native-keccak.test") + ".missing");

/** The JavaScript-only path: the same hash without bulk routines. */
const plain =
  (keccak: Keccak256Fn): Keccak256Fn =>
  (data) =>
    keccak(data);

describe("native keccak and tree routines (operator/clearing/native-keccak.ts, native/keccak-tree)", () => {
  it("Core uses the native addon (built by npm ci)", () => {
    expect(native.backend).to.equal("native");
    expect(keccakBackend()).to.equal("native");
    expect(fastKeccak256.hashPairs).to.be.a("function");
    expect(fastKeccak256.sortHashes).to.be.a("function");
    expect(fastKeccak256.sumPairs).to.be.a("function");
  });

  it("falls back to the keccak package without the addon, with no bulk routines", () => {
    for (const loaded of [missingAddon, keccakPackage]) {
      expect(loaded.backend).to.equal("keccak");
      expect(loaded.keccak256.hashPairs).to.equal(undefined);
      expect(loaded.keccak256.sortHashes).to.equal(undefined);
      expect(loaded.keccak256.sumPairs).to.equal(undefined);
    }
  });

  it("hashes like @noble/hashes and ethers for every length from 0 to 600 bytes (rate boundaries included)", () => {
    for (let length = 0; length <= 600; length++) {
      const data = random(length);
      const expected = keccak256(data);
      for (const { keccak256: hash } of [native, keccakPackage]) {
        expect("0x" + Buffer.from(hash(data)).toString("hex"), `${length} bytes`).to.equal(expected);
      }
      expect("0x" + Buffer.from(nobleKeccak256(data)).toString("hex")).to.equal(expected);
    }
  });

  it("hashes sorted pairs like the JavaScript path, forwards, reversed and in place", () => {
    for (const count of [0, 1, 2, 3, 17, 256, 1001]) {
      const src = random(count * 64);
      // Some pairs with equal halves and some already in order.
      if (count > 2) src.copy(src, 32, 0, 32);
      for (const reversed of [false, true]) {
        const js = Buffer.alloc(count * 32);
        const fast = Buffer.alloc(count * 32);
        hashPairs(nobleKeccak256, src, js, count, reversed);
        hashPairs(native.keccak256, src, fast, count, reversed);
        expect(fast.equals(js), `count ${count}, reversed ${reversed}`).to.equal(true);
        for (const k of count > 0 ? [0, count - 1] : []) {
          const j = reversed ? count - 1 - k : k;
          const [a, b] = [src.subarray(64 * j, 64 * j + 32), src.subarray(64 * j + 32, 64 * j + 64)];
          const pair = Buffer.compare(a, b) <= 0 ? Buffer.concat([a, b]) : Buffer.concat([b, a]);
          expect("0x" + js.toString("hex", 32 * k, 32 * k + 32)).to.equal(keccak256(pair));
        }
      }
      const inPlaceJs = Buffer.from(src);
      const inPlaceNative = Buffer.from(src);
      hashPairs(nobleKeccak256, inPlaceJs, inPlaceJs, count, false);
      hashPairs(native.keccak256, inPlaceNative, inPlaceNative, count, false);
      const forwards = Buffer.alloc(count * 32);
      hashPairs(nobleKeccak256, src, forwards, count, false);
      expect(inPlaceJs.subarray(0, count * 32).equals(forwards)).to.equal(true);
      expect(inPlaceNative.subarray(0, count * 32).equals(forwards)).to.equal(true);
    }
  });

  it("rejects short buffers, reversed pairs in place and non-byte arrays", () => {
    const buf = Buffer.alloc(64 * 4);
    expect(() => hashPairs(native.keccak256, buf, Buffer.alloc(32), 2, false)).to.throw(RangeError);
    expect(() => hashPairs(nobleKeccak256, buf.subarray(0, 64), Buffer.alloc(64), 2, false)).to.throw(
      RangeError,
    );
    expect(() => native.keccak256.hashPairs!(buf, buf, 4, true)).to.throw(RangeError, /in place/);
    expect(() => native.keccak256.sortHashes!(buf, 9)).to.throw(RangeError);
    expect(() => native.keccak256.sortHashes!(new Uint32Array(8) as unknown as Uint8Array, 1)).to.throw(
      TypeError,
    );
    expect(() => native.keccak256.sortHashes!(buf, -1)).to.throw(RangeError);
    expect(() => native.keccak256.sortHashes!(buf, 1.5)).to.throw(RangeError);
  });

  it("sorts like the JavaScript sort: random, shared prefixes, duplicates, presorted, every size to 300", () => {
    const cases: Buffer[] = [];
    for (let n = 0; n <= 300; n++) cases.push(random(n * 32));
    const shared = random(5000 * 32);
    for (let i = 0; i < 5000; i += 2) shared.fill(0xab, i * 32, i * 32 + 6 + (i % 20)); // long equal prefixes
    for (let i = 0; i < 5000; i += 7) shared.copy(shared, i * 32, 0, 32); // duplicates
    cases.push(shared, sortHashes(random(20000 * 32)), Buffer.alloc(1000 * 32), random(100_000 * 32));
    for (const input of cases) {
      const n = input.length / 32;
      const expected = sortHashes(input, n, false);
      const copy = sortHashes(input, n, false, native.keccak256);
      expect(copy.equals(expected), `n = ${n}`).to.equal(true);
      const inPlace = Buffer.from(input);
      expect(sortHashes(inPlace, n, true, native.keccak256)).to.equal(inPlace);
      expect(inPlace.equals(expected), `in place, n = ${n}`).to.equal(true);
    }
  });

  it("gives StandardMerkleTree's root and proofs with the native routines, and the JS path the same root", () => {
    for (const n of [1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 100, 1023, 1024, 1025, 5000]) {
      const values: [string][] = Array.from({ length: n }, () => ["0x" + random(32).toString("hex")]);
      const tree = StandardMerkleTree.of(values, ["bytes32"]);
      const hashes = Buffer.concat(values.map((v) => Buffer.from(tree.leafHash(v).slice(2), "hex")));
      const sorted = sortHashes(hashes, n, false, native.keccak256);
      expect(compactMerkleRoot(sorted, native.keccak256), `n = ${n}`).to.equal(tree.root);
      expect(compactMerkleRoot(sorted, plain(native.keccak256)), `n = ${n}, JS levels`).to.equal(tree.root);
      expect(guaranteesRootOfHashes(Buffer.from(hashes), n, missingAddon.keccak256, true)).to.equal(
        tree.root,
      );
      const indices = [0, n >> 1, n - 1];
      expect(compactMerkleProofs(sorted, indices, native.keccak256)).to.deep.equal(
        compactMerkleProofs(sorted, indices, nobleKeccak256),
      );
    }
  });
});
