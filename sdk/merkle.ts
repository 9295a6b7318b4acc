/**
 * Clearing-cycle Merkle leaves (docs/protocol.md, "Clearing leaves"). One leaf per (asset, participant) net
 * position of a cycle; the ClearingHouse checks creditors' claims against the root with
 * OpenZeppelin's MerkleProof, so the tree is OpenZeppelin's StandardMerkleTree (double-hashed
 * leaves, sorted pairs).
 */
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { AbiCoder, keccak256 } from "ethers";
import { WireError } from "./errors";
import { MAX_UINT256, formatUint, parseAddress } from "./wire";

/** Solidity: `keccak256(bytes.concat(keccak256(abi.encode(cycleId, asset, participant, debit, credit))))`. */
export const MERKLE_LEAF_ENCODING: readonly string[] = Object.freeze([
  "uint256",
  "address",
  "address",
  "uint256",
  "uint256",
]);

/** A participant's net position in one asset for one cycle; at most one of debit/credit is non-zero. */
export interface NetPositionLeaf {
  cycleId: bigint;
  asset: string;
  participant: string;
  /** What the participant owes (paid − received when positive). */
  debit: bigint;
  /** What the participant is owed (received − paid when positive). */
  credit: bigint;
}

/**
 * Leaf values as the tree stores them: numbers as decimal strings and checksummed addresses, so
 * that `tree.dump()` is plain JSON that can be persisted and reloaded with `StandardMerkleTree.load`.
 */
export type NetPositionLeafValues = [
  cycleId: string,
  asset: string,
  participant: string,
  debit: string,
  credit: string,
];

export type CycleTree = StandardMerkleTree<NetPositionLeafValues>;

const abi = AbiCoder.defaultAbiCoder();

function checkUint256(value: unknown, field: string): bigint {
  if (typeof value !== "bigint") throw new WireError(field, `must be a bigint, got ${typeof value}`);
  if (value < 0n || value > MAX_UINT256) throw new WireError(field, "must be between 0 and 2^256 − 1");
  return value;
}

/** Validates a leaf and normalises its addresses; errors name `${field}.<property>`. */
export function normaliseLeaf(leaf: NetPositionLeaf, field = "leaf"): NetPositionLeaf {
  const normalised: NetPositionLeaf = {
    cycleId: checkUint256(leaf.cycleId, `${field}.cycleId`),
    asset: parseAddress(leaf.asset, `${field}.asset`),
    participant: parseAddress(leaf.participant, `${field}.participant`),
    debit: checkUint256(leaf.debit, `${field}.debit`),
    credit: checkUint256(leaf.credit, `${field}.credit`),
  };
  // Netting leaves one side per participant; both sides set means the netting went wrong.
  if (normalised.debit !== 0n && normalised.credit !== 0n) {
    throw new WireError(field, "a net position cannot have both a debit and a credit");
  }
  return normalised;
}

/** The tree's value tuple for a leaf, in {@link MERKLE_LEAF_ENCODING} order. */
export function toLeafValues(leaf: NetPositionLeaf): NetPositionLeafValues {
  const checked = normaliseLeaf(leaf);
  return [
    formatUint(checked.cycleId),
    checked.asset,
    checked.participant,
    formatUint(checked.debit),
    formatUint(checked.credit),
  ];
}

/** The leaf's hash exactly as the tree (and the contract) computes it. */
export function leafHash(leaf: NetPositionLeaf): string {
  const checked = normaliseLeaf(leaf);
  const encoded = abi.encode(MERKLE_LEAF_ENCODING, [
    checked.cycleId,
    checked.asset,
    checked.participant,
    checked.debit,
    checked.credit,
  ]);
  return keccak256(keccak256(encoded));
}

/**
 * Builds the tree of one cycle. Rejects an empty list, leaves of different cycles and a second
 * leaf for the same (asset, participant): a duplicate would let a creditor pick the larger claim.
 */
export function buildCycleTree(leaves: readonly NetPositionLeaf[]): CycleTree {
  if (!Array.isArray(leaves) || leaves.length === 0) {
    throw new WireError("leaves", "must be a non-empty array of net positions");
  }
  const seen = new Set<string>();
  const cycleId = leaves[0].cycleId;
  const values = leaves.map((leaf, index) => {
    const field = `leaves[${index}]`;
    const checked = normaliseLeaf(leaf, field);
    if (checked.cycleId !== cycleId) throw new WireError(`${field}.cycleId`, `must equal leaves[0].cycleId`);
    const key = `${checked.asset}/${checked.participant}`;
    if (seen.has(key)) throw new WireError(field, "duplicate (asset, participant) position in the cycle");
    seen.add(key);
    return toLeafValues(checked);
  });
  return StandardMerkleTree.of(values, [...MERKLE_LEAF_ENCODING]);
}

/** The proof of a leaf (0x-hex sibling hashes); throws WireError if the leaf is not in the tree. */
export function proofFor(tree: CycleTree, leaf: NetPositionLeaf): string[] {
  const values = toLeafValues(leaf);
  try {
    return tree.getProof(values);
  } catch {
    throw new WireError("leaf", "is not a leaf of this cycle's tree");
  }
}

/** Whether `leaf` with `proof` belongs to the tree with `root`. */
export function verifyLeafProof(root: string, leaf: NetPositionLeaf, proof: readonly string[]): boolean {
  return StandardMerkleTree.verify(root, [...MERKLE_LEAF_ENCODING], toLeafValues(leaf), [...proof]);
}
