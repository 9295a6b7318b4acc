/**
 * The guarantees root of a clearing cycle (issue 17, docs/clearing.md "Challenges"): one leaf per
 * guarantee netted in the cycle, committed with `ClearingHouse.commitCycle` so that the operator can
 * answer a payer's challenge of its debit with the payer's own signed guarantees, each proved under
 * this root. OpenZeppelin StandardMerkleTree (double-hashed leaves, sorted pairs), like the net-position
 * tree in merkle.ts; the contract's `guaranteeLeafHash` computes the same leaf.
 */
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { AbiCoder, getBytes, keccak256 } from "ethers";
import { type Keccak256Fn, compactMerkleRoot, nobleKeccak256, sortHashes } from "./compact-merkle";
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

/** A guarantee as the store holds it, for {@link GuaranteeLeafHasher} (hex strings, any letter case). */
export interface StoredGuaranteeLeaf {
  guaranteeId: string;
  payer: string;
  recipient: string;
  asset: string;
  amount: bigint;
  /** The payer's signature bytes (0x hex); null or undefined: the leaf's signature hash is zero. */
  signature?: string | null;
}

const HEX_ADDRESS = /^0[xX][0-9a-fA-F]{40}$/;
const HEX_BYTES32 = /^0[xX][0-9a-fA-F]{64}$/;
const HEX_BYTES = /^0[xX](?:[0-9a-fA-F]{2})*$/;

/**
 * The leaf hash of {@link guaranteeLeafHash} without objects in between: the ABI encoding is written
 * into one reused 192-byte buffer (six static words) and hashed with the given keccak, the result into a
 * caller's buffer. For cycles of millions of guarantees (docs/clearing.md "Netting in the database");
 * tested equal to `guaranteeLeafHash` and the tree's own hashing.
 */
export class GuaranteeLeafHasher {
  private readonly encoded = Buffer.alloc(6 * 32);

  constructor(private readonly keccak: Keccak256Fn = nobleKeccak256) {}

  /** Writes the leaf's 32-byte hash to `out` at byte `offset`. Throws WireError on a malformed field. */
  hashInto(leaf: StoredGuaranteeLeaf, out: Buffer, offset: number, field = "leaf"): void {
    const e = this.encoded;
    if (!HEX_BYTES32.test(leaf.guaranteeId)) {
      throw new WireError(`${field}.guaranteeId`, "must be a 0x-prefixed 32-byte hex string");
    }
    for (const [name, value] of [
      ["payer", leaf.payer],
      ["recipient", leaf.recipient],
      ["asset", leaf.asset],
    ] as const) {
      if (!HEX_ADDRESS.test(value))
        throw new WireError(`${field}.${name}`, "must be a 0x-prefixed 20-byte hex address");
    }
    if (typeof leaf.amount !== "bigint" || leaf.amount <= 0n || leaf.amount > MAX_UINT256) {
      throw new WireError(`${field}.amount`, "must be a bigint between 1 and 2^256 − 1");
    }
    e.write(leaf.guaranteeId.slice(2), 0, "hex");
    e.fill(0, 32, 44);
    e.write(leaf.payer.slice(2), 44, "hex");
    e.fill(0, 64, 76);
    e.write(leaf.recipient.slice(2), 76, "hex");
    e.fill(0, 96, 108);
    e.write(leaf.asset.slice(2), 108, "hex");
    e.write(leaf.amount.toString(16).padStart(64, "0"), 128, "hex");
    const signature = leaf.signature;
    if (signature === null || signature === undefined) {
      e.fill(0, 160, 192);
    } else {
      if (!HEX_BYTES.test(signature))
        throw new WireError(`${field}.signature`, "must be 0x-prefixed hex of whole bytes");
      e.set(this.keccak(Buffer.from(signature.slice(2), "hex")), 160);
    }
    out.set(this.keccak(this.keccak(e)), offset);
  }
}

/**
 * The guarantees root from the cycle's leaf hashes (`count` × 32 bytes, any order, e.g. as streamed from
 * the store): the same root as {@link buildGuaranteeTree} over the same guarantees. With `inPlace` the
 * hashes are sorted within `leafHashes` (its order is lost; no second copy of them is made). A `keccak`
 * with native bulk routines (operator/clearing/native-keccak.ts) sorts and hashes each tree level in one
 * call each.
 */
export function guaranteesRootOfHashes(
  leafHashes: Buffer,
  count = leafHashes.length / 32,
  keccak: Keccak256Fn = nobleKeccak256,
  inPlace = false,
): string {
  if (count < 1) throw new WireError("leaves", "must be a non-empty array of guarantees");
  return compactMerkleRoot(sortHashes(leafHashes, count, inPlace, keccak), keccak);
}
