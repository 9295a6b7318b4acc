/**
 * The accounts' sum trees of a clearing cycle (sdk/debit-tree.ts, contracts/lib/SumTree.sol) over compact
 * buffers instead of one JS object per node, for cycles of millions of guarantees (docs/clearing.md
 * "Netting in the database"). Same definition, bit for bit: a leaf node is `(guaranteeLeafHash, amount)`,
 * an empty position `(0, 0)`, an inner node `(keccak256(abi.encode(l.hash, l.sum, r.hash, r.sum)),
 * l.sum + r.sum)`, the tree complete with `2^depth` positions ordered by guarantee id. A node is 64 bytes
 * here (its hash, then its sum as a big-endian uint256 word), so a pair of nodes is exactly the 128 bytes
 * its parent hashes and a whole level is hashed in one call ({@link sumPairs}; native in
 * native/keccak-tree, JavaScript otherwise). Tested equal to `sumTreeLevels` in
 * test/sdk/compact-sum-tree.test.ts.
 */
import { type Keccak256Fn, nobleKeccak256, sortOrder } from "./compact-merkle";
import { WireError } from "./errors";

/** Deepest tree the contract accepts (`SumTree.MAX_DEPTH`): 2^24 guarantees per payer, asset and cycle. */
export const MAX_DEBIT_TREE_DEPTH = 24;

const HASH = 32;
const NODE = 2 * HASH;
const PAIR = 2 * NODE;
const TWO_32 = 2 ** 32;
const MAX_UINT256 = (1n << 256n) - 1n;
const ZERO_HASH = `0x${"0".repeat(64)}`;
const BYTES32_HEX = /^0[xX][0-9a-fA-F]{64}$/;

/** A tree's root node and depth (hash 0x hex, lower case). */
export interface SumTreeRoot {
  hash: string;
  sum: bigint;
  depth: number;
}

/** The root of a side without guarantees: `(0x0…0, 0)`, depth 0. */
export const EMPTY_SUM_TREE_ROOT: Readonly<SumTreeRoot> = Object.freeze({
  hash: ZERO_HASH,
  sum: 0n,
  depth: 0,
});

const wordOf = (bytes: Uint8Array, offset: number): bigint =>
  BigInt(`0x${Buffer.from(bytes.buffer, bytes.byteOffset + offset, HASH).toString("hex")}`);

function writeWord(out: Uint8Array, offset: number, value: bigint): void {
  out.set(Buffer.from(value.toString(16).padStart(2 * HASH, "0"), "hex"), offset);
}

/**
 * One level of a sum tree: for k < count, the 64-byte node k of `dst` = the parent of the nodes 2k and
 * 2k + 1 of `src` (`SumTree.parent`). `dst` may be `src` itself (node k lies at or before pair k, read
 * before node k is written). Returns false, at the first pair whose sum exceeds 2^256 − 1. With
 * `keccak`'s own bulk routine when it has one (native/keccak-tree), else one `keccak` call per pair.
 */
export function sumPairs(keccak: Keccak256Fn, src: Uint8Array, dst: Uint8Array, count: number): boolean {
  if (src.length < count * PAIR || dst.length < count * NODE) {
    throw new RangeError("sumPairs: src needs count × 128 bytes, dst count × 64");
  }
  if (keccak.sumPairs !== undefined) return keccak.sumPairs(src, dst, count);
  for (let k = 0; k < count; k++) {
    const at = k * PAIR;
    const sum = wordOf(src, at + HASH) + wordOf(src, at + HASH + NODE);
    if (sum > MAX_UINT256) return false;
    const hash = keccak(src.subarray(at, at + PAIR));
    dst.set(hash, k * NODE);
    writeWord(dst, k * NODE + HASH, sum);
  }
  return true;
}

/** The depth of a tree of `count` positions (0 for one). */
export function sumTreeDepth(count: number): number {
  let depth = 0;
  while (2 ** depth < count) depth++;
  return depth;
}

/** Hex digit values by character code (−1: not a hex digit). */
const HEX_DIGIT = new Int8Array(128).fill(-1);
for (let c = 0; c < 16; c++) {
  HEX_DIGIT[c.toString(16).charCodeAt(0)] = c;
  HEX_DIGIT[c.toString(16).toUpperCase().charCodeAt(0)] = c;
}

/**
 * Writes the 32 bytes of a 0x-hex bytes32 (any letter case) to `out` at `offset`; false, with `out`
 * partly written, when `value` is not one. A loop over the characters: cheaper per id than
 * `Buffer#write` (a native call on a sliced string) at millions of ids.
 */
function writeBytes32(value: string, out: Uint8Array, offset: number): boolean {
  if (
    value.length !== 2 + 2 * HASH ||
    value.charCodeAt(0) !== 0x30 ||
    (value.charCodeAt(1) | 0x20) !== 0x78
  ) {
    return false;
  }
  for (let i = 0; i < HASH; i++) {
    const hi = value.charCodeAt(2 + 2 * i);
    const lo = value.charCodeAt(3 + 2 * i);
    const h = hi < 128 ? HEX_DIGIT[hi] : -1;
    const l = lo < 128 ? HEX_DIGIT[lo] : -1;
    if ((h | l) < 0) return false;
    out[offset + i] = (h << 4) | l;
  }
  return true;
}

/** A buffer of `bytes` bytes on an ArrayBuffer of its own (word views need its offset 0), zeroed. */
const ownBuffer = (bytes: number): Buffer => Buffer.from(new ArrayBuffer(bytes));
const wordsOf = (buffer: Buffer): Uint32Array =>
  new Uint32Array(buffer.buffer, buffer.byteOffset, buffer.byteLength >>> 2);

/**
 * A cycle's sum trees in groups: each guarantee is a leaf of side 0 (outgoing) of one group and of side 1
 * (incoming) of another, positioned by guarantee id within each side. The caller numbers the groups
 * (sdk/debit-tree.ts: one per account and asset). Per guarantee it keeps 32 bytes of id, 32 of leaf hash,
 * 8 of amount (a larger amount than 2^53 − 1 in a map) and 8 of group numbers; ids and hashes are copied
 * and compared as 32-bit words.
 */
export class CompactSumTrees {
  private count = 0;
  private capacity: number;
  private ids: Buffer;
  private idWords: Uint32Array;
  private hashes: Buffer;
  private hashWords: Uint32Array;
  private amounts: Float64Array;
  private readonly bigAmounts = new Map<number, bigint>();
  private groups: Int32Array;

  constructor(
    private readonly keccak: Keccak256Fn = nobleKeccak256,
    capacity = 1024,
  ) {
    this.capacity = Math.max(1, capacity);
    this.ids = ownBuffer(this.capacity * HASH);
    this.idWords = wordsOf(this.ids);
    this.hashes = ownBuffer(this.capacity * HASH);
    this.hashWords = wordsOf(this.hashes);
    this.amounts = new Float64Array(this.capacity);
    this.groups = new Int32Array(2 * this.capacity);
  }

  /** How many guarantees were added. */
  get size(): number {
    return this.count;
  }

  /**
   * Adds a guarantee to side 0 of group `outGroup` and side 1 of group `inGroup`: `guaranteeId` 0x-hex
   * bytes32 (any letter case), `amount` a uint256, its leaf hash the 32 bytes of `hashes` at `offset`.
   */
  add(
    outGroup: number,
    inGroup: number,
    guaranteeId: string,
    amount: bigint,
    hashes: Uint8Array,
    offset: number,
  ): void {
    const row = this.count;
    if (row === this.capacity) this.grow();
    const at = row * HASH;
    if (!writeBytes32(guaranteeId, this.ids, at)) {
      throw new WireError("guaranteeId", "must be a 0x-prefixed 32-byte hex string");
    }
    if (typeof amount !== "bigint" || amount < 0n || amount > MAX_UINT256) {
      throw new WireError("amount", "must be a uint256");
    }
    if (!(offset >= 0 && offset + HASH <= hashes.length)) throw new RangeError("a leaf hash is 32 bytes");
    const target = this.hashes;
    for (let b = 0; b < HASH; b++) target[at + b] = hashes[offset + b];
    if (amount <= 9007199254740991n) {
      this.amounts[row] = Number(amount);
    } else {
      this.amounts[row] = NaN;
      this.bigAmounts.set(row, amount);
    }
    this.groups[2 * row] = outGroup;
    this.groups[2 * row + 1] = inGroup;
    this.count = row + 1;
  }

  private grow(): void {
    this.capacity *= 2;
    const ids = ownBuffer(this.capacity * HASH);
    ids.set(this.ids);
    const hashes = ownBuffer(this.capacity * HASH);
    hashes.set(this.hashes);
    const amounts = new Float64Array(this.capacity);
    amounts.set(this.amounts);
    const groups = new Int32Array(2 * this.capacity);
    groups.set(this.groups);
    this.ids = ids;
    this.idWords = wordsOf(ids);
    this.hashes = hashes;
    this.hashWords = wordsOf(hashes);
    this.amounts = amounts;
    this.groups = groups;
  }

  /**
   * The roots of groups 0 .. groupCount − 1: `[group][side]`, an empty side {@link EMPTY_SUM_TREE_ROOT}.
   * Throws WireError when a guarantee id is twice in one side, a side holds more than
   * 2^{@link MAX_DEBIT_TREE_DEPTH} guarantees, or a sum exceeds 2^256 − 1.
   */
  roots(groupCount: number): [SumTreeRoot, SumTreeRoot][] {
    const n = this.count;
    const { groups } = this;
    // Each side's guarantees in id order: one sort of all ids, then a counting sort by group (stable).
    const order = sortOrder(this.ids, n);
    const start = new Int32Array(2 * groupCount + 1);
    for (let i = 0; i < 2 * n; i++) {
      const slot = 2 * groups[i] + (i & 1);
      if (!(slot >= 0 && slot < 2 * groupCount)) throw new RangeError(`group ${groups[i]} out of range`);
      start[slot + 1]++;
    }
    for (let s = 0; s < 2 * groupCount; s++) start[s + 1] += start[s];
    const next = start.slice(0, 2 * groupCount);
    const positions = new Int32Array(2 * n);
    for (let i = 0; i < n; i++) {
      const row = order[i];
      positions[next[2 * groups[2 * row]]++] = row;
      positions[next[2 * groups[2 * row + 1] + 1]++] = row;
    }
    const result: [SumTreeRoot, SumTreeRoot][] = [];
    let scratch = ownBuffer(0);
    for (let g = 0; g < groupCount; g++) {
      const sides: [SumTreeRoot, SumTreeRoot] = [EMPTY_SUM_TREE_ROOT, EMPTY_SUM_TREE_ROOT];
      for (let side = 0; side < 2; side++) {
        const from = start[2 * g + side];
        const leaves = start[2 * g + side + 1] - from;
        if (leaves === 0) continue;
        const depth = sumTreeDepth(leaves);
        if (depth > MAX_DEBIT_TREE_DEPTH) {
          throw new WireError(
            "leaves",
            `more than 2^${MAX_DEBIT_TREE_DEPTH} guarantees of one payer and asset`,
          );
        }
        const width = 2 ** depth;
        if (scratch.length < width * NODE) scratch = ownBuffer(Math.max(width * NODE, 2 * scratch.length));
        else scratch.fill(0, 0, width * NODE);
        this.writeLeaves(positions, from, leaves, scratch);
        for (let pairs = width / 2; pairs >= 1; pairs /= 2) {
          if (!sumPairs(this.keccak, scratch, scratch, pairs)) {
            throw new WireError("amount", "the tree's total exceeds 2^256 − 1");
          }
        }
        sides[side] = { hash: `0x${scratch.toString("hex", 0, HASH)}`, sum: wordOf(scratch, HASH), depth };
      }
      result.push(sides);
    }
    return result;
  }

  /** Writes the leaf nodes of rows `positions[from .. from + leaves)` (in id order) into a zeroed `out`. */
  private writeLeaves(positions: Int32Array, from: number, leaves: number, out: Buffer): void {
    const { idWords, hashWords, amounts } = this;
    const words = wordsOf(out);
    const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
    const W = HASH / 4;
    for (let i = 0; i < leaves; i++) {
      const row = positions[from + i];
      if (i > 0) {
        const before = positions[from + i - 1] * W;
        let w = 0;
        while (w < W && idWords[before + w] === idWords[row * W + w]) w++;
        if (w === W) {
          const id = this.ids.toString("hex", row * HASH, row * HASH + HASH);
          throw new WireError("leaves", `guarantee 0x${id} appears twice in the cycle`);
        }
      }
      const at = i * NODE;
      for (let w = 0; w < W; w++) words[at / 4 + w] = hashWords[row * W + w];
      const amount = amounts[row];
      if (amount === amount) {
        // A safe integer: its high 21 bits and low 32 bits, the word's last 8 bytes (big-endian).
        view.setUint32(at + NODE - 8, Math.floor(amount / TWO_32));
        view.setUint32(at + NODE - 4, amount >>> 0);
      } else {
        writeWord(out, at + HASH, this.bigAmounts.get(row) as bigint);
      }
    }
  }
}

/** Whether `hash` is a 0x-hex 32-byte string (any letter case). */
export function isBytes32Hex(hash: string): boolean {
  return BYTES32_HEX.test(hash);
}
