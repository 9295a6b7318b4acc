import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { expect } from "chai";
import { AbiCoder, getAddress, keccak256, randomBytes } from "ethers";
import { WireError } from "../../sdk/errors";
import {
  MERKLE_LEAF_ENCODING,
  buildCycleTree,
  leafHash,
  proofFor,
  toLeafValues,
  verifyLeafProof,
  type NetPositionLeaf,
} from "../../sdk/merkle";
import { MAX_UINT256, ZERO_ADDRESS } from "../../sdk/wire";

const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const CAROL = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";

// One cycle, two assets: each asset's net positions sum to zero (credits = debits).
const leaves: NetPositionLeaf[] = [
  { cycleId: 3n, asset: ZERO_ADDRESS, participant: ALICE, debit: 150n, credit: 0n },
  { cycleId: 3n, asset: ZERO_ADDRESS, participant: BOB, debit: 0n, credit: 100n },
  { cycleId: 3n, asset: ZERO_ADDRESS, participant: CAROL, debit: 0n, credit: 50n },
  { cycleId: 3n, asset: TOKEN, participant: ALICE, debit: 0n, credit: 7n },
  { cycleId: 3n, asset: TOKEN, participant: BOB, debit: 7n, credit: 0n },
];

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

describe("sdk/merkle", () => {
  it("uses the documented leaf encoding", () => {
    expect(MERKLE_LEAF_ENCODING).to.deep.equal(["uint256", "address", "address", "uint256", "uint256"]);
  });

  it("turns a leaf into decimal strings and checksummed addresses", () => {
    expect(
      toLeafValues({ ...leaves[0], participant: ALICE.toLowerCase(), debit: MAX_UINT256 }),
    ).to.deep.equal(["3", ZERO_ADDRESS, ALICE, MAX_UINT256.toString(), "0"]);
  });

  it("gives proofs that StandardMerkleTree.verify accepts for every leaf", () => {
    const tree = buildCycleTree(leaves);
    for (const leaf of leaves) {
      const proof = proofFor(tree, leaf);
      expect(StandardMerkleTree.verify(tree.root, [...MERKLE_LEAF_ENCODING], toLeafValues(leaf), proof)).to.be
        .true;
      expect(verifyLeafProof(tree.root, leaf, proof)).to.be.true;
    }
  });

  it("finds leaves whatever the address case", () => {
    const tree = buildCycleTree(leaves);
    const lower = { ...leaves[1], participant: BOB.toLowerCase() };
    expect(proofFor(tree, lower)).to.deep.equal(proofFor(tree, leaves[1]));
  });

  it("rejects a proof for a changed amount, participant, asset or cycle", () => {
    const tree = buildCycleTree(leaves);
    const proof = proofFor(tree, leaves[1]);
    expect(verifyLeafProof(tree.root, { ...leaves[1], credit: 101n }, proof)).to.be.false;
    expect(verifyLeafProof(tree.root, { ...leaves[1], participant: CAROL }, proof)).to.be.false;
    expect(verifyLeafProof(tree.root, { ...leaves[1], asset: TOKEN }, proof)).to.be.false;
    expect(verifyLeafProof(tree.root, { ...leaves[1], cycleId: 4n }, proof)).to.be.false;
    expect(verifyLeafProof(tree.root, { ...leaves[1], credit: 0n, debit: 100n }, proof)).to.be.false;
  });

  it("computes the tree's leaf hash: keccak256(bytes.concat(keccak256(abi.encode(...))))", () => {
    const tree = buildCycleTree(leaves);
    for (const leaf of leaves) {
      expect(leafHash(leaf)).to.equal(tree.leafHash(toLeafValues(leaf)));
      const encoded = AbiCoder.defaultAbiCoder().encode(
        ["uint256", "address", "address", "uint256", "uint256"],
        [leaf.cycleId, leaf.asset, leaf.participant, leaf.debit, leaf.credit],
      );
      expect(leafHash(leaf)).to.equal(keccak256(keccak256(encoded)));
    }
  });

  it("builds a tree of a single leaf (proof is empty, root is the leaf hash)", () => {
    const tree = buildCycleTree([leaves[0]]);
    expect(tree.root).to.equal(leafHash(leaves[0]));
    expect(proofFor(tree, leaves[0])).to.deep.equal([]);
  });

  it("dumps to JSON and reloads to the same root", () => {
    const tree = buildCycleTree(leaves);
    const reloaded = StandardMerkleTree.load(JSON.parse(JSON.stringify(tree.dump())));
    expect(reloaded.root).to.equal(tree.root);
  });

  it("does not depend on the caller's leaf objects after building", () => {
    const copy = leaves.map((leaf) => ({ ...leaf }));
    const tree = buildCycleTree(copy);
    copy[0].debit = 1n;
    expect(tree.root).to.equal(buildCycleTree(leaves).root);
  });

  it("refuses a leaf that is not in the tree", () => {
    const tree = buildCycleTree(leaves);
    expectWireError(() => proofFor(tree, { ...leaves[0], debit: 151n }), "leaf");
  });

  it("rejects malformed leaves, naming the field", () => {
    expectWireError(() => buildCycleTree([]), "leaves");
    expectWireError(() => buildCycleTree([{ ...leaves[0], debit: -1n }]), "leaves[0].debit");
    expectWireError(
      () => buildCycleTree([{ ...leaves[0], credit: MAX_UINT256 + 1n, debit: 0n }]),
      "leaves[0].credit",
    );
    expectWireError(
      () => buildCycleTree([{ ...leaves[0], cycleId: 1 as unknown as bigint }]),
      "leaves[0].cycleId",
    );
    expectWireError(() => buildCycleTree([leaves[0], { ...leaves[1], asset: "0x12" }]), "leaves[1].asset");
    expectWireError(() => buildCycleTree([{ ...leaves[0], participant: "alice" }]), "leaves[0].participant");
    expectWireError(() => buildCycleTree([{ ...leaves[0], credit: 1n }]), "leaves[0]");
    expectWireError(() => leafHash({ ...leaves[0], debit: -5n }), "leaf.debit");
    expectWireError(() => toLeafValues({ ...leaves[0], asset: "" }), "leaf.asset");
  });

  it("rejects mixed cycles and duplicate (asset, participant) positions", () => {
    expectWireError(() => buildCycleTree([leaves[0], { ...leaves[1], cycleId: 4n }]), "leaves[1].cycleId");
    expectWireError(
      () => buildCycleTree([...leaves, { ...leaves[1], participant: BOB.toLowerCase(), credit: 1n }]),
      "leaves[5]",
    );
  });

  it("builds the tree StandardMerkleTree.of builds (dump, root, every proof) for random cycles of 1 to 40 and 2,000 leaves", () => {
    const word = (): bigint =>
      BigInt("0x" + Buffer.from(randomBytes(1 + (randomBytes(1)[0] % 32))).toString("hex"));
    const address = (): string => getAddress("0x" + Buffer.from(randomBytes(20)).toString("hex"));
    for (const n of [...Array.from({ length: 40 }, (_, i) => i + 1), 2000]) {
      const cycleId = word();
      const random: NetPositionLeaf[] = Array.from({ length: n }, (_, i) => ({
        cycleId,
        asset: i % 3 === 0 ? ZERO_ADDRESS : address(),
        participant: i % 5 === 0 ? address().toLowerCase() : address(),
        debit: i % 2 === 0 ? word() : 0n,
        credit: i % 2 === 0 ? 0n : i % 7 === 0 ? MAX_UINT256 : word(),
      }));
      const tree = buildCycleTree(random);
      const reference = StandardMerkleTree.of(random.map(toLeafValues), [...MERKLE_LEAF_ENCODING]);
      expect(tree.dump(), `n = ${n}`).to.deep.equal(reference.dump());
      expect(tree.root).to.equal(reference.root);
      for (const [i, leaf] of random.entries()) {
        if (n === 2000 && i % 97 !== 0) continue;
        expect(proofFor(tree, leaf), `proof ${i} of ${n}`).to.deep.equal(reference.getProof(i));
        expect(tree.leafHash(toLeafValues(leaf))).to.equal(leafHash(leaf));
      }
      expect(() => tree.validate()).to.not.throw();
    }
  });
});
