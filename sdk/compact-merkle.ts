/**
 * OpenZeppelin's StandardMerkleTree (`@openzeppelin/merkle-tree`, the tree of merkle.ts and
 * guarantee-tree.ts) computed over a compact buffer of 32-byte leaf hashes instead of one JS object per
 * leaf, for trees of millions of leaves (a clearing cycle's guarantees root, docs/clearing.md).
 *
 * Same definition, bit for bit, as `StandardMerkleTree.of(values, encoding)` (default options):
 * 1. leaves are hashed (`keccak256(keccak256(abi.encode(...)))`, the caller's job) and sorted ascending by
 *    hash (bytewise), so the input order never matters;
 * 2. the tree is the complete binary tree of `makeMerkleTree` in heap layout: `2n − 1` nodes, sorted leaf
 *    `i` at heap index `2n − 2 − i`, node `j` = `keccak256(sort(child 2j+1, child 2j+2))`;
 * 3. the root is node 0; a proof is the siblings from the leaf's heap index up to the root.
 *
 * Built level by level (the deepest level holds only leaves, the one above it internal nodes then leaves),
 * so the memory is the sorted leaf buffer plus one level (≤ n × 32 bytes), never 2n − 1 strings.
 * Tested equal to `StandardMerkleTree` (root and every proof) in test/sdk/compact-merkle.test.ts.
 */
import { keccak_256 } from "@noble/hashes/sha3.js";

/**
 * A keccak256 implementation (the default is @noble/hashes; Core passes a native one,
 * operator/clearing/native-keccak.ts). It may carry bulk routines of the same implementation; without
 * them the functions below do the same work in JavaScript, with the same bytes out.
 */
export interface Keccak256Fn {
  (data: Uint8Array): Uint8Array;
  /**
   * One tree level: for k < count, `dst` node k (32 bytes at 32k) = keccak256 of the 64-byte pair j of
   * `src` (bytes 64j..64j + 64) with its two halves in ascending order, j = k, or count − 1 − k when
   * `reversed`. `dst` may be `src` itself when not reversed.
   */
  hashPairs?(src: Uint8Array, dst: Uint8Array, count: number, reversed: boolean): void;
  /** Sorts the first `count` 32-byte hashes of `hashes` ascending (bytewise), in place. */
  sortHashes?(hashes: Uint8Array, count: number): void;
  /**
   * One level of a sum tree (sdk/compact-sum-tree.ts `sumPairs`): for k < count, the 64-byte node k of
   * `dst` (hash, big-endian uint256 sum) = the parent of the nodes 2k and 2k + 1 of `src`; false when a sum
   * exceeds 2^256 − 1. `dst` may be `src` itself.
   */
  sumPairs?(src: Uint8Array, dst: Uint8Array, count: number): boolean;
}

const HASH = 32;
/** Leaves the sort can order (24 bits of index in its 64-bit sort key). */
export const MAX_COMPACT_LEAVES = 1 << 24;

export const nobleKeccak256: Keccak256Fn = (data) => keccak_256(data);

function compare32(a: Buffer, ai: number, b: Buffer, bi: number): number {
  return a.compare(b, bi * HASH, bi * HASH + HASH, ai * HASH, ai * HASH + HASH);
}

/**
 * Sorts `count` 32-byte hashes ascending (bytewise), as StandardMerkleTree sorts leaves. Returns a new
 * buffer, or with `inPlace` the input buffer itself, reordered (no second copy of the hashes: the
 * permutation is applied cycle by cycle). With a `keccak` that has a native `sortHashes`, that sorts;
 * otherwise {@link sortOrder}.
 */
export function sortHashes(
  hashes: Buffer,
  count = hashes.length / HASH,
  inPlace = false,
  keccak?: Keccak256Fn,
): Buffer {
  if (!Number.isInteger(count) || count < 0 || hashes.length < count * HASH) {
    throw new RangeError("hashes must hold count × 32 bytes");
  }
  if (count > MAX_COMPACT_LEAVES) throw new RangeError(`at most ${MAX_COMPACT_LEAVES} leaves`);
  if (keccak?.sortHashes !== undefined) {
    // The native sort (an in-place radix sort): equal hashes are equal bytes, so the order is the same.
    const target = inPlace ? hashes : Buffer.from(hashes.subarray(0, count * HASH));
    keccak.sortHashes(target, count);
    return target;
  }
  const order = sortOrder(hashes, count);
  if (inPlace) {
    permuteInPlace(hashes, order);
    return hashes;
  }
  const sorted = Buffer.allocUnsafe(count * HASH);
  for (let i = 0; i < count; i++) hashes.copy(sorted, i * HASH, order[i] * HASH, order[i] * HASH + HASH);
  return sorted;
}

/**
 * The ascending (bytewise) order of the first `count` 32-byte values of `values`: `order[i]` is the index
 * of the i-th smallest; equal values keep their index order. One numeric sort of 64-bit keys (40 bits of
 * value prefix, 24 bits of index), then the rare runs with an equal prefix are ordered by their full value;
 * beyond {@link MAX_COMPACT_LEAVES} values, one comparison sort.
 */
export function sortOrder(values: Buffer, count = values.length / HASH): Uint32Array {
  if (!Number.isInteger(count) || count < 0 || values.length < count * HASH) {
    throw new RangeError("values must hold count × 32 bytes");
  }
  if (count > MAX_COMPACT_LEAVES) {
    const all = Array.from({ length: count }, (_, i) => i);
    return Uint32Array.from(all.sort((a, b) => compare32(values, a, values, b) || a - b));
  }
  const keys = new BigUint64Array(count);
  const view = new DataView(keys.buffer);
  for (let i = 0; i < count; i++) {
    const at = i * HASH;
    // Little-endian u64 = lo word then hi word: hi = value bytes 0..3, lo = byte 4 then the 24-bit index.
    view.setUint32(i * 8, ((values[at + 4] << 24) | i) >>> 0, true);
    view.setUint32(i * 8 + 4, values.readUInt32BE(at), true);
  }
  keys.sort();
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = view.getUint32(i * 8, true) & 0xffffff;
  // Equal 40-bit prefixes: order each such run by the full value (only the key's low bits differ).
  let start = 0;
  for (let i = 1; i <= count; i++) {
    const samePrefix =
      i < count &&
      view.getUint32(i * 8 + 4, true) === view.getUint32(start * 8 + 4, true) &&
      view.getUint32(i * 8, true) >>> 24 === view.getUint32(start * 8, true) >>> 24;
    if (samePrefix) continue;
    if (i - start > 1) {
      const run = Array.from(order.subarray(start, i)).sort((a, b) => compare32(values, a, values, b));
      order.set(run, start);
    }
    start = i;
  }
  return order;
}

/** Moves hash `order[i]` to position `i` for every i, within `hashes` (consumes `order`). */
function permuteInPlace(hashes: Buffer, order: Uint32Array): void {
  const saved = Buffer.allocUnsafe(HASH);
  for (let i = 0; i < order.length; i++) {
    if (order[i] === i) continue; // in place already, or placed by an earlier cycle
    hashes.copy(saved, 0, i * HASH, i * HASH + HASH);
    let j = i;
    for (;;) {
      const k = order[j];
      order[j] = j;
      if (k === i) {
        saved.copy(hashes, j * HASH);
        break;
      }
      hashes.copy(hashes, j * HASH, k * HASH, k * HASH + HASH);
      j = k;
    }
  }
}

/**
 * {@link Keccak256Fn.hashPairs} with `keccak`'s own bulk routine when it has one, else in JavaScript
 * (one `keccak` call per pair; same bytes).
 */
export function hashPairs(
  keccak: Keccak256Fn,
  src: Buffer,
  dst: Buffer,
  count: number,
  reversed: boolean,
): void {
  if (src.length < count * 2 * HASH || dst.length < count * HASH) {
    throw new RangeError("hashPairs: src needs count × 64 bytes, dst count × 32");
  }
  if (keccak.hashPairs !== undefined) {
    keccak.hashPairs(src, dst, count, reversed);
    return;
  }
  const overlap = src.buffer === dst.buffer && reversed && count > 1;
  const input = overlap ? Buffer.from(src.subarray(0, count * 2 * HASH)) : src;
  const scratch = Buffer.allocUnsafe(2 * HASH);
  for (let k = 0; k < count; k++) {
    const a = (reversed ? count - 1 - k : k) * 2 * HASH;
    const b = a + HASH;
    const aFirst = input.compare(input, b, b + HASH, a, a + HASH) <= 0;
    input.copy(scratch, 0, aFirst ? a : b, (aFirst ? a : b) + HASH);
    input.copy(scratch, HASH, aFirst ? b : a, (aFirst ? b : a) + HASH);
    dst.set(keccak(scratch), k * HASH);
  }
}

/** The levels' geometry for `n` leaves: deepest depth D and how many nodes it holds. */
function geometry(n: number): { depth: number; deepest: number } {
  const total = 2 * n - 1;
  const depth = 31 - Math.clz32(total);
  return { depth, deepest: total - (2 ** depth - 1) };
}

/**
 * Node values of every level, deepest first (level k is a buffer of 32-byte nodes in heap order), from
 * leaf hashes already sorted ascending. Calls `visit(level, nodes)` for each level; used for the root
 * and for proofs.
 */
function forEachLevel(
  sorted: Buffer,
  n: number,
  keccak: Keccak256Fn,
  visit: (depth: number, nodes: Buffer, count: number) => void,
): Buffer {
  const { depth, deepest } = geometry(n);
  // Deepest level: heap indices 2^D − 1 .. 2n − 2, i.e. sorted leaves L[2n − 2^D − 1] down to L[0].
  let level = Buffer.allocUnsafe(deepest * HASH);
  for (let k = 0; k < deepest; k++) {
    const leaf = deepest - 1 - k;
    sorted.copy(level, k * HASH, leaf * HASH, leaf * HASH + HASH);
  }
  let count = deepest;
  visit(depth, level, count);
  for (let d = depth - 1; d >= 0; d--) {
    const width = 2 ** d;
    const internal = count / 2;
    const next = Buffer.allocUnsafe(width * HASH);
    hashPairs(keccak, level, next, internal, false);
    // The rest of this level are leaves (only at depth D − 1): heap index j holds L[2n − 2 − j].
    const first = width - 1;
    for (let k = internal; k < width; k++) {
      const leaf = 2 * n - 2 - (first + k);
      sorted.copy(next, k * HASH, leaf * HASH, leaf * HASH + HASH);
    }
    level = next;
    count = width;
    visit(d, level, count);
  }
  return level;
}

function checkLeaves(sortedLeafHashes: Buffer): number {
  const n = sortedLeafHashes.length / HASH;
  if (!Number.isInteger(n) || n < 1) throw new RangeError("a tree needs at least one 32-byte leaf hash");
  return n;
}

/**
 * The StandardMerkleTree root (0x hex) of leaf hashes already sorted with {@link sortHashes}. Same levels
 * as {@link forEachLevel}, but the level above the deepest is computed straight from the sorted leaves
 * into one buffer and every level above it in place there (node k of a level only reads nodes 2k and
 * 2k + 1 of the one below), so the memory beyond the leaves is one level, allocated once.
 */
export function compactMerkleRoot(sortedLeafHashes: Buffer, keccak: Keccak256Fn = nobleKeccak256): string {
  const n = checkLeaves(sortedLeafHashes);
  if (n === 1) return "0x" + sortedLeafHashes.toString("hex", 0, HASH);
  const { depth, deepest } = geometry(n);
  const sorted = sortedLeafHashes;
  // Depth D − 1: its first `deepest / 2` nodes hash the pairs of depth D — heap indices 2^D − 1 + 2k and
  // 2^D + 2k, i.e. sorted leaves deepest − 1 − 2k and deepest − 2 − 2k — the rest are leaves.
  const width = 2 ** (depth - 1);
  const internal = deepest / 2;
  // Pair k is the 64 contiguous bytes of leaves deepest − 2 − 2k and deepest − 1 − 2k (the pair's order
  // does not matter: it is hashed sorted), i.e. pair (internal − 1 − k) of the sorted buffer.
  const level = Buffer.allocUnsafe(width * HASH);
  hashPairs(keccak, sorted, level, internal, true);
  const first = width - 1;
  for (let k = internal; k < width; k++) {
    const leaf = 2 * n - 2 - (first + k);
    sorted.copy(level, k * HASH, leaf * HASH, leaf * HASH + HASH);
  }
  for (let count = width; count > 1; count /= 2) hashPairs(keccak, level, level, count / 2, false);
  return "0x" + level.toString("hex", 0, HASH);
}

/**
 * The proofs (sibling hashes, leaf to root, 0x hex) of the sorted leaves at `indices` (positions in the
 * sorted buffer): what `StandardMerkleTree.getProof` returns for those leaves. One pass over the levels.
 */
export function compactMerkleProofs(
  sortedLeafHashes: Buffer,
  indices: readonly number[],
  keccak: Keccak256Fn = nobleKeccak256,
): string[][] {
  const n = checkLeaves(sortedLeafHashes);
  for (const i of indices) {
    if (!Number.isInteger(i) || i < 0 || i >= n) throw new RangeError(`leaf index ${i} out of range`);
  }
  const proofs = indices.map(() => [] as string[]);
  if (n === 1) return proofs;
  // Current heap index of each requested node, climbing one level per visit.
  const heap = indices.map((i) => 2 * n - 2 - i);
  const levels = new Map<number, Buffer>();
  forEachLevel(sortedLeafHashes, n, keccak, (d, nodes) => levels.set(d, nodes));
  const depthOf = (j: number): number => 31 - Math.clz32(j + 1);
  const nodeAt = (j: number): string => {
    const d = depthOf(j);
    const at = j - (2 ** d - 1);
    return "0x" + (levels.get(d) as Buffer).toString("hex", at * HASH, at * HASH + HASH);
  };
  for (let p = 0; p < heap.length; p++) {
    let j = heap[p];
    while (j > 0) {
      const sibling = j % 2 === 1 ? j + 1 : j - 1;
      proofs[p].push(nodeAt(sibling));
      j = Math.floor((j - 1) / 2);
    }
  }
  return proofs;
}
