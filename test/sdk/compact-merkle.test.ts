import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { expect } from "chai";
import { keccak256, randomBytes } from "ethers";
import { compactMerkleProofs, compactMerkleRoot, nobleKeccak256, sortHashes } from "../../sdk/compact-merkle";
import {
  GUARANTEE_LEAF_ENCODING,
  GuaranteeLeafHasher,
  buildGuaranteeTree,
  guaranteeLeafHash,
  guaranteesRootOfHashes,
  signatureHash,
  type GuaranteeLeaf,
} from "../../sdk/guarantee-tree";
import { WireError } from "../../sdk/errors";
import { fastKeccak256 } from "../../operator/clearing/native-keccak";

const hex = (bytes: number): string => "0x" + Buffer.from(randomBytes(bytes)).toString("hex");

/** A tree whose leaves are random bytes32 values, as StandardMerkleTree builds it, and the leaf hashes. */
function randomTree(n: number): { tree: StandardMerkleTree<[string]>; hashes: Buffer } {
  const values: [string][] = Array.from({ length: n }, () => [hex(32)]);
  const tree = StandardMerkleTree.of(values, ["bytes32"]);
  const hashes = Buffer.concat(values.map((v) => Buffer.from(tree.leafHash(v).slice(2), "hex")));
  return { tree, hashes };
}

describe("compact StandardMerkleTree (sdk/compact-merkle.ts)", () => {
  it("gives StandardMerkleTree's root and proofs for every size from 1 to 70 and a few larger ones", () => {
    for (const n of [...Array.from({ length: 70 }, (_, i) => i + 1), 127, 128, 129, 1000, 4097]) {
      const { tree, hashes } = randomTree(n);
      const sorted = sortHashes(hashes);
      expect(compactMerkleRoot(sorted), `n = ${n}`).to.equal(tree.root);
      const indices = n <= 70 ? Array.from({ length: n }, (_, i) => i) : [0, 1, n >> 1, n - 2, n - 1];
      const proofs = compactMerkleProofs(sorted, indices);
      const treeIndex = new Map([...tree.entries()].map(([index, v]) => [tree.leafHash(v), index]));
      indices.forEach((i, k) => {
        const index = treeIndex.get("0x" + sorted.toString("hex", i * 32, i * 32 + 32));
        expect(index, `leaf ${i} of ${n}`).to.not.equal(undefined);
        expect(proofs[k], `proof of leaf ${i} of ${n}`).to.deep.equal(tree.getProof(index!));
      });
    }
  });

  it("sorts hashes bytewise, including hashes sharing a 40-bit prefix", () => {
    const prefix = Buffer.from("aabbccddee", "hex");
    const parts: Buffer[] = [];
    for (let i = 0; i < 50; i++) {
      const h = Buffer.from(randomBytes(32));
      if (i % 2 === 0) prefix.copy(h, 0);
      parts.push(h);
    }
    const sorted = sortHashes(Buffer.concat(parts));
    const expected = [...parts].sort(Buffer.compare);
    expect(sorted.equals(Buffer.concat(expected))).to.equal(true);
  });

  it("sorts in place (the input buffer reordered, same result) for every size from 1 to 300 and a few larger ones", () => {
    for (const n of [...Array.from({ length: 300 }, (_, i) => i + 1), 1000, 4097, 20000]) {
      const input = Buffer.from(randomBytes(n * 32));
      // Some duplicates and shared prefixes, some already-placed hashes.
      if (n > 4) input.copy(input, 0, 32, 64);
      if (n > 8) input.copy(input, 96, 128, 133);
      const copy = sortHashes(input, n);
      const inPlace = sortHashes(input, n, true);
      expect(inPlace, `n = ${n}`).to.equal(input);
      expect(inPlace.equals(copy), `n = ${n}`).to.equal(true);
      // Sorting sorted hashes in place leaves them as they are.
      expect(sortHashes(input, n, true).equals(copy), `n = ${n}, sorted input`).to.equal(true);
    }
  });

  it("the native keccak equals @noble/hashes", () => {
    for (const size of [0, 1, 31, 32, 64, 135, 136, 137, 192, 1000]) {
      const data = Buffer.from(randomBytes(size));
      expect(Buffer.from(fastKeccak256(data)).toString("hex")).to.equal(
        Buffer.from(nobleKeccak256(data)).toString("hex"),
      );
      expect("0x" + Buffer.from(fastKeccak256(data)).toString("hex")).to.equal(keccak256(data));
    }
  });

  it("rejects an empty tree and an out-of-range proof index", () => {
    expect(() => compactMerkleRoot(Buffer.alloc(0))).to.throw(RangeError);
    expect(() => compactMerkleProofs(Buffer.alloc(64), [2])).to.throw(RangeError);
    expect(() => guaranteesRootOfHashes(Buffer.alloc(0))).to.throw(WireError);
  });
});

describe("guarantee leaves without objects (GuaranteeLeafHasher, guaranteesRootOfHashes)", () => {
  function randomLeaf(): GuaranteeLeaf & { signature: string } {
    const signature = hex(65);
    return {
      guaranteeId: hex(32),
      payer: hex(20),
      recipient: hex(20),
      asset: Math.random() < 0.3 ? "0x" + "00".repeat(20) : hex(20).toUpperCase().replace("0X", "0x"),
      amount: BigInt(hex(Math.random() < 0.5 ? 6 : 32)) + 1n,
      signatureHash: signatureHash(signature),
      signature,
    };
  }

  it("hashes each leaf as guaranteeLeafHash does, with either keccak", () => {
    for (const keccak of [nobleKeccak256, fastKeccak256]) {
      const hasher = new GuaranteeLeafHasher(keccak);
      const out = Buffer.alloc(64);
      for (let i = 0; i < 50; i++) {
        const leaf = randomLeaf();
        hasher.hashInto({ ...leaf, signature: leaf.signature }, out, 32);
        expect("0x" + out.toString("hex", 32, 64)).to.equal(guaranteeLeafHash(leaf));
      }
      // No signature: a zero signature hash.
      const leaf = randomLeaf();
      hasher.hashInto({ ...leaf, signature: null }, out, 0);
      expect("0x" + out.toString("hex", 0, 32)).to.equal(
        guaranteeLeafHash({ ...leaf, signatureHash: "0x" + "00".repeat(32) }),
      );
    }
  });

  it("the root of the streamed hashes is buildGuaranteeTree's root, in any order", () => {
    for (const n of [1, 2, 3, 10, 333]) {
      const leaves = Array.from({ length: n }, randomLeaf);
      const hasher = new GuaranteeLeafHasher(fastKeccak256);
      const hashes = Buffer.alloc(n * 32);
      [...leaves].reverse().forEach((leaf, i) => hasher.hashInto(leaf, hashes, i * 32));
      expect(guaranteesRootOfHashes(hashes, n, fastKeccak256)).to.equal(buildGuaranteeTree(leaves).root);
      expect(GUARANTEE_LEAF_ENCODING.length).to.equal(6);
    }
  });

  it("names the malformed field", () => {
    const hasher = new GuaranteeLeafHasher();
    const leaf = randomLeaf();
    const out = Buffer.alloc(32);
    expect(() => hasher.hashInto({ ...leaf, guaranteeId: "0x12" }, out, 0, "g")).to.throw(
      WireError,
      "g.guaranteeId",
    );
    expect(() => hasher.hashInto({ ...leaf, payer: "0xzz" }, out, 0, "g")).to.throw(WireError, "g.payer");
    expect(() => hasher.hashInto({ ...leaf, amount: 0n }, out, 0, "g")).to.throw(WireError, "g.amount");
    expect(() => hasher.hashInto({ ...leaf, signature: "0x123" }, out, 0, "g")).to.throw(
      WireError,
      "g.signature",
    );
  });
});
