/**
 * The guarantees root of a clearing cycle (issue 17, docs/clearing.md "Challenges"): one leaf per
 * guarantee netted in the cycle, committed with `ClearingHouse.commitCycle` so that the operator can
 * answer a payer's challenge of its debit with the payer's own signed guarantees, each proved under
 * this root. OpenZeppelin StandardMerkleTree (double-hashed leaves, sorted pairs), like the net-position
 * tree in merkle.ts; the contract's `guaranteeLeafHash` computes the same leaf.
 */
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { AbiCoder, getBytes, keccak256 } from "ethers";
import { WireError } from "./errors";
import { MAX_UINT256, formatUint, parseAddress } from "./wire";

/**
 * Solidity: `keccak256(bytes.concat(keccak256(abi.encode(guaranteeId, payer, recipient, asset, amount,
 * signatureHash))))` with `signatureHash = keccak256(payer signature bytes)`.
 */
export const GUARANTEE_LEAF_ENCODING: readonly string[] = Object.freeze([
  "bytes32",
  "address",
  "address",
  "address",
  "uint256",
  "bytes32",
]);

/** One guarantee of a cycle as the guarantees root commits it. */
export interface GuaranteeLeaf {
  /** 0x-hex bytes32 (any letter case in, lower case out). */
  guaranteeId: string;
  payer: string;
  recipient: string;
  /** ERC-20 address, or the zero address for ETH. */
  asset: string;
  amount: bigint;
  /** keccak256 of the payer's signature bytes (0x-hex bytes32). */
  signatureHash: string;
}

export type GuaranteeLeafValues = [
  guaranteeId: string,
  payer: string,
  recipient: string,
  asset: string,
  amount: string,
  signatureHash: string,
];

export type GuaranteeTree = StandardMerkleTree<GuaranteeLeafValues>;

const BYTES32 = /^0x[0-9a-f]{64}$/;
const abi = AbiCoder.defaultAbiCoder();

function bytes32(value: unknown, field: string): string {
  const lower = typeof value === "string" ? value.toLowerCase() : "";
  if (!BYTES32.test(lower)) throw new WireError(field, "must be a 0x-prefixed 32-byte hex string");
  return lower;
}

/** keccak256 of a payer signature given as 0x-hex bytes: the leaf's `signatureHash`. */
export function signatureHash(signature: string): string {
  try {
    return keccak256(getBytes(signature));
  } catch {
    throw new WireError("signature", "must be 0x-prefixed hex of whole bytes");
  }
}

/** The tree's value tuple for a leaf (validated; addresses checksummed, amount as a decimal string). */
export function toGuaranteeLeafValues(leaf: GuaranteeLeaf, field = "leaf"): GuaranteeLeafValues {
  if (typeof leaf.amount !== "bigint" || leaf.amount <= 0n || leaf.amount > MAX_UINT256) {
    throw new WireError(`${field}.amount`, "must be a bigint between 1 and 2^256 − 1");
  }
  return [
    bytes32(leaf.guaranteeId, `${field}.guaranteeId`),
    parseAddress(leaf.payer, `${field}.payer`),
    parseAddress(leaf.recipient, `${field}.recipient`),
    parseAddress(leaf.asset, `${field}.asset`),
    formatUint(leaf.amount),
    bytes32(leaf.signatureHash, `${field}.signatureHash`),
  ];
}

/** The leaf's hash exactly as the tree and `ClearingHouse.guaranteeLeafHash` compute it. */
export function guaranteeLeafHash(leaf: GuaranteeLeaf): string {
  const values = toGuaranteeLeafValues(leaf);
  return keccak256(keccak256(abi.encode(GUARANTEE_LEAF_ENCODING, values)));
}

/**
 * The guarantees tree of one cycle. Rejects an empty list and a guarantee id listed twice (the
 * contract counts an id at most once per answer anyway; a duplicate means the netting went wrong).
 * Leaves are sorted by hash inside the tree, so the root does not depend on the input order.
 */
export function buildGuaranteeTree(leaves: readonly GuaranteeLeaf[]): GuaranteeTree {
  if (!Array.isArray(leaves) || leaves.length === 0) {
    throw new WireError("leaves", "must be a non-empty array of guarantees");
  }
  const seen = new Set<string>();
  const values = leaves.map((leaf, index) => {
    const v = toGuaranteeLeafValues(leaf, `leaves[${index}]`);
    if (seen.has(v[0])) throw new WireError(`leaves[${index}].guaranteeId`, "appears twice in the cycle");
    seen.add(v[0]);
    return v;
  });
  return StandardMerkleTree.of(values, [...GUARANTEE_LEAF_ENCODING]);
}

/** The proof of a leaf (0x-hex sibling hashes); throws WireError if it is not in the tree. */
export function guaranteeProof(tree: GuaranteeTree, leaf: GuaranteeLeaf): string[] {
  try {
    return tree.getProof(toGuaranteeLeafValues(leaf));
  } catch {
    throw new WireError("leaf", "is not a guarantee of this cycle's tree");
  }
}

/** Whether `leaf` with `proof` belongs to the guarantees tree with `root`. */
export function verifyGuaranteeProof(root: string, leaf: GuaranteeLeaf, proof: readonly string[]): boolean {
  return StandardMerkleTree.verify(root, [...GUARANTEE_LEAF_ENCODING], toGuaranteeLeafValues(leaf), [
    ...proof,
  ]);
}
