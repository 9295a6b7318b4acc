/**
 * The accounts' trees of a clearing cycle (docs/clearing.md "Disputes" and "Credits bound to guarantees"):
 * for each account and asset, a Merkle sum tree over its outgoing guarantees of the cycle and one over its
 * incoming guarantees (self-payments excluded), each ordered by guarantee id, whose roots carry their totals;
 * and the cycle's `debitsRoot` over one summary per account and asset `[address account, address asset,
 * bytes32 sumRoot, uint256 total, uint256 depth, bytes32 inRoot, uint256 inTotal, uint256 inDepth]` (a side
 * without guarantees is `(0x0…0, 0, 0)`). The account's net credit is `max(inTotal − total, 0)`; a
 * creditor's claim pays it. The summaries of one asset form a sum tree of those credits (sorted-pair hashing,
 * see `SummariesTree`), whose top must add up to the cycle's committed total credit in the asset
 * (contracts/lib/CreditCheck.sol `isSummary`): no phantom credit can be proven. A payer disputes one position of its outgoing
 * tree at a time and the operator answers that position alone (proving it also in the recipient's incoming
 * tree), so a dispute costs O(depth) on chain whatever the number of guarantees.
 *
 * Same definition as contracts/lib/SumTree.sol: a leaf node is `(guaranteeLeafHash, amount)`, an empty
 * position `(0, 0)`, an inner node `(keccak256(abi.encode(l.hash, l.sum, r.hash, r.sum)), l.sum + r.sum)`;
 * the tree is complete with `2^depth` positions, `depth = ceil(log2(count))` (0 for one guarantee).
 */
import { type Keccak256Fn, nobleKeccak256 } from "./compact-merkle";
import { CompactSumTrees, MAX_DEBIT_TREE_DEPTH, isBytes32Hex, sumTreeDepth } from "./compact-sum-tree";
import { WireError } from "./errors";
import { type GuaranteeLeaf, guaranteeLeafHash } from "./guarantee-tree";
import { MAX_UINT256, ZERO_ADDRESS, formatUint, parseAddress } from "./wire";

export { MAX_DEBIT_TREE_DEPTH };

/** The summary leaf's ABI types, in order. */
export const DEBIT_SUMMARY_ENCODING: readonly string[] = Object.freeze([
  "address",
  "address",
  "bytes32",
  "uint256",
  "uint256",
  "bytes32",
  "uint256",
  "uint256",
]);

const ZERO_HASH = `0x${"0".repeat(64)}`;

/** A node of a sum tree (0x-hex hash, lower case). */
export interface SumNode {
  hash: string;
  sum: bigint;
}

/**
 * One account's summary in a cycle's `debitsRoot` (what `answerDispute` and `revealSummary` reveal, what
 * `claimNetCredit` proves): its outgoing tree (`sumRoot`, `total`, `depth`) and its incoming tree (`inRoot`,
 * `inTotal`, `inDepth`); `debtor` names the account (creditor or debtor).
 */
export interface DebitSummary {
  debtor: string;
  asset: string;
  sumRoot: string;
  total: bigint;
  depth: number;
  inRoot: string;
  inTotal: bigint;
  inDepth: number;
}

/** One side of an account's trees: its guarantees in position order and every level (leaves first). */
export interface SideTree {
  /** The guarantees at positions 0 .. count − 1. */
  leaves: GuaranteeLeaf[];
  /** levels[0] = the 2^depth positions, levels[depth] = [root]. */
  levels: SumNode[][];
}

/** An account's trees in one asset: the outgoing side (`leaves`, `levels`; empty when none) and the incoming. */
export interface DebtorTree extends SideTree {
  summary: DebitSummary;
  incoming: SideTree;
}

/** The proof of one position: its node and the siblings up to the root (leaf level first). */
export interface SumProof {
  index: number;
  leaf: SumNode;
  path: SumNode[];
}

export type DebitSummaryValues = [
  debtor: string,
  asset: string,
  sumRoot: string,
  total: string,
  depth: string,
  inRoot: string,
  inTotal: string,
  inDepth: string,
];
/** The cycle's summaries tree (`SummariesTree`). */
export type DebitsTree = SummariesTree;

/** A cycle's debtors' trees and the `debitsRoot` over their summaries. */
export interface CycleDebitTrees {
  root: string;
  tree: DebitsTree;
  summaries: DebitSummary[];
}

const word = (value: bigint): Buffer => Buffer.from(value.toString(16).padStart(64, "0"), "hex");
const hex = (bytes: Uint8Array): string => `0x${Buffer.from(bytes).toString("hex")}`;

/** The parent of two nodes, exactly as `SumTree.parent`. */
export function sumParent(left: SumNode, right: SumNode, keccak: Keccak256Fn = nobleKeccak256): SumNode {
  const sum = left.sum + right.sum;
  if (sum > MAX_UINT256) throw new WireError("amount", "the tree's total exceeds 2^256 − 1");
  const encoded = Buffer.concat([
    Buffer.from(left.hash.slice(2), "hex"),
    word(left.sum),
    Buffer.from(right.hash.slice(2), "hex"),
    word(right.sum),
  ]);
  return { hash: hex(keccak(encoded)), sum };
}

/** The depth of a tree of `count` positions (0 for one). */
export const debitTreeDepth = sumTreeDepth;

/** Every level of the sum tree over `nodes` (in position order), padded with empty positions. */
export function sumTreeLevels(nodes: readonly SumNode[], keccak: Keccak256Fn = nobleKeccak256): SumNode[][] {
  if (nodes.length === 0) throw new WireError("leaves", "must hold at least one guarantee");
  const depth = debitTreeDepth(nodes.length);
  if (depth > MAX_DEBIT_TREE_DEPTH) {
    throw new WireError("leaves", `more than 2^${MAX_DEBIT_TREE_DEPTH} guarantees of one payer and asset`);
  }
  const first = [...nodes];
  while (first.length < 1 << depth) first.push({ hash: ZERO_HASH, sum: 0n });
  const levels = [first];
  for (let level = 0; level < depth; level++) {
    const below = levels[level];
    const above: SumNode[] = [];
    for (let i = 0; i < below.length; i += 2) above.push(sumParent(below[i], below[i + 1], keccak));
    levels.push(above);
  }
  return levels;
}

/** Lower-case ids in ascending order (the order of a debtor's positions). */
function byId(a: GuaranteeLeaf, b: GuaranteeLeaf): number {
  const x = a.guaranteeId.toLowerCase();
  const y = b.guaranteeId.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Whether the guarantee belongs in its payer's tree (a self-payment nets to nothing and is left out). */
export function isOutgoing(leaf: GuaranteeLeaf): boolean {
  return leaf.payer.toLowerCase() !== leaf.recipient.toLowerCase();
}

/** The side of no guarantee: root `(0x0…0, 0)`, depth 0. */
const EMPTY_SIDE: SideTree = Object.freeze({ leaves: [], levels: [[{ hash: ZERO_HASH, sum: 0n }]] });

function sideTree(leaves: GuaranteeLeaf[], keccak: Keccak256Fn): SideTree {
  if (leaves.length === 0) return EMPTY_SIDE;
  leaves.sort(byId);
  for (let i = 1; i < leaves.length; i++) {
    if (leaves[i].guaranteeId.toLowerCase() === leaves[i - 1].guaranteeId.toLowerCase()) {
      throw new WireError("leaves", `guarantee ${leaves[i].guaranteeId} appears twice in the cycle`);
    }
  }
  const levels = sumTreeLevels(
    leaves.map((g) => ({ hash: guaranteeLeafHash(g).toLowerCase(), sum: g.amount })),
    keccak,
  );
  return { leaves, levels };
}

const top = (side: SideTree): SumNode => side.levels[side.levels.length - 1][0];

/**
 * The sum trees of `account`'s outgoing and incoming guarantees in `asset` among `guarantees` (any order;
 * others are ignored); null when it has neither. The guarantee leaf hashes are computed here
 * (guarantee-tree.ts).
 */
export function buildDebtorTree(
  guarantees: readonly GuaranteeLeaf[],
  account: string,
  asset: string,
  keccak: Keccak256Fn = nobleKeccak256,
): DebtorTree | null {
  const who = parseAddress(account, "debtor").toLowerCase();
  const what = parseAddress(asset, "asset");
  const mine = guarantees.filter((g) => g.asset.toLowerCase() === what.toLowerCase()).filter(isOutgoing);
  const out = sideTree(
    mine.filter((g) => g.payer.toLowerCase() === who),
    keccak,
  );
  const incoming = sideTree(
    mine.filter((g) => g.recipient.toLowerCase() === who),
    keccak,
  );
  if (out.leaves.length === 0 && incoming.leaves.length === 0) return null;
  const o = top(out);
  const i = top(incoming);
  return {
    summary: {
      debtor: parseAddress(account, "debtor"),
      asset: what,
      sumRoot: o.hash,
      total: o.sum,
      depth: out.levels.length - 1,
      inRoot: i.hash,
      inTotal: i.sum,
      inDepth: incoming.levels.length - 1,
    },
    leaves: out.leaves,
    levels: out.levels,
    incoming,
  };
}

/** The position of guarantee `guaranteeId` in a side tree (−1 when it is not there). */
export function positionOf(side: SideTree, guaranteeId: string): number {
  const id = guaranteeId.toLowerCase();
  return side.leaves.findIndex((l) => l.guaranteeId.toLowerCase() === id);
}

/** The proof of position `index` of a side tree (an empty position proves as `(0, 0)`). */
export function sumTreeProof(tree: SideTree, index: number): SumProof {
  const { levels } = tree;
  if (!Number.isSafeInteger(index) || index < 0 || index >= levels[0].length) {
    throw new WireError("index", `must be a position of the tree, 0 to ${levels[0].length - 1}`);
  }
  const path: SumNode[] = [];
  for (let level = 0; level < levels.length - 1; level++) path.push(levels[level][(index >> level) ^ 1]);
  return { index, leaf: levels[0][index], path };
}

/** The root a proof climbs to, as `SumTree.rootOf` computes it. */
export function sumProofRoot(proof: SumProof, keccak: Keccak256Fn = nobleKeccak256): SumNode {
  let node = proof.leaf;
  proof.path.forEach((sibling, level) => {
    node = (proof.index >> level) & 1 ? sumParent(sibling, node, keccak) : sumParent(node, sibling, keccak);
  });
  return node;
}

/** The summary's values in the `debitsRoot` tree (addresses checksummed, numbers as decimal strings). */
export function toDebitSummaryValues(s: DebitSummary): DebitSummaryValues {
  if (s.total < 0n || s.total > MAX_UINT256) throw new WireError("total", "must be a uint256");
  if (s.inTotal < 0n || s.inTotal > MAX_UINT256) throw new WireError("inTotal", "must be a uint256");
  return [
    parseAddress(s.debtor, "debtor"),
    parseAddress(s.asset, "asset"),
    s.sumRoot.toLowerCase(),
    formatUint(s.total),
    String(s.depth),
    s.inRoot.toLowerCase(),
    formatUint(s.inTotal),
    String(s.inDepth),
  ];
}

/** The placeholder summary of a cycle with no outgoing guarantee (the root must not be zero). */
export const PLACEHOLDER_DEBIT_SUMMARY: DebitSummary = Object.freeze({
  debtor: ZERO_ADDRESS,
  asset: ZERO_ADDRESS,
  sumRoot: ZERO_HASH,
  total: 0n,
  depth: 0,
  inRoot: ZERO_HASH,
  inTotal: 0n,
  inDepth: 0,
});

/** Numbers the distinct addresses it is given, by lower-case spelling (each spelling looked up once). */
class AddressIndex {
  private readonly bySpelling = new Map<string, number>();
  private readonly byLower = new Map<string, number>();
  /** Lower case, by number. */
  readonly addresses: string[] = [];

  of(address: string): number {
    let index = this.bySpelling.get(address);
    if (index === undefined) {
      const lower = address.toLowerCase();
      index = this.byLower.get(lower);
      if (index === undefined) {
        index = this.addresses.length;
        this.addresses.push(lower);
        this.byLower.set(lower, index);
      }
      this.bySpelling.set(address, index);
    }
    return index;
  }
}

/**
 * Groups a cycle's guarantees into two trees per account and asset (outgoing by payer, incoming by
 * recipient). Guarantees are added one at a time (e.g. streamed from the store) with their leaf hash when the
 * caller has it; `finish` builds every tree's root. The trees are computed over compact buffers
 * (sdk/compact-sum-tree.ts: ≈ 80 bytes per guarantee, a tree level per keccak call with a native `keccak`),
 * the same roots as {@link sumTreeLevels} over the same guarantees.
 */
export class DebitTreesBuilder {
  private readonly trees: CompactSumTrees;
  private readonly accounts = new AddressIndex();
  private readonly assets = new AddressIndex();
  /** Group number by asset, then account number. */
  private readonly groupOf: number[][] = [];
  /** Account and asset numbers by group number. */
  private readonly groups: { account: number; asset: number }[] = [];
  private readonly hash = Buffer.alloc(32);

  /** `capacity`: how many guarantees to make room for at once (more are made room for as they come). */
  constructor(
    private readonly keccak: Keccak256Fn = nobleKeccak256,
    capacity?: number,
  ) {
    this.trees = new CompactSumTrees(keccak, capacity);
  }

  private group(account: number, asset: number): number {
    let byAccount = this.groupOf[asset];
    if (byAccount === undefined) this.groupOf[asset] = byAccount = [];
    let group = byAccount[account];
    if (group === undefined) {
      group = byAccount[account] = this.groups.length;
      this.groups.push({ account, asset });
    }
    return group;
  }

  /** Adds one guarantee of the cycle (self-payments are skipped). */
  add(leaf: GuaranteeLeaf, leafHash?: string): void {
    const payer = this.accounts.of(leaf.payer);
    const recipient = this.accounts.of(leaf.recipient);
    if (payer === recipient) return;
    const hash = leafHash ?? guaranteeLeafHash(leaf);
    if (!isBytes32Hex(hash)) throw new WireError("leafHash", "must be a 0x-prefixed 32-byte hex string");
    this.hash.write(hash.slice(2), 0, "hex");
    this.addAs(payer, recipient, leaf.guaranteeId, leaf.asset, leaf.amount, this.hash, 0);
  }

  /**
   * {@link add} for a guarantee whose leaf hash is at hand as bytes (a store's row): the 32 bytes of
   * `hashes` at `offset`; no object per guarantee.
   */
  addHashed(
    guaranteeId: string,
    payer: string,
    recipient: string,
    asset: string,
    amount: bigint,
    hashes: Uint8Array,
    offset: number,
  ): void {
    const from = this.accounts.of(payer);
    const to = this.accounts.of(recipient);
    if (from !== to) this.addAs(from, to, guaranteeId, asset, amount, hashes, offset);
  }

  private addAs(
    payer: number,
    recipient: number,
    guaranteeId: string,
    asset: string,
    amount: bigint,
    hashes: Uint8Array,
    offset: number,
  ): void {
    const a = this.assets.of(asset);
    this.trees.add(this.group(payer, a), this.group(recipient, a), guaranteeId, amount, hashes, offset);
  }

  /** The summaries (sorted by account, then asset) and the `debitsRoot` over them. */
  finish(): CycleDebitTrees {
    const roots = this.trees.roots(this.groups.length);
    const keyed = this.groups.map(({ account, asset }, group) => ({
      key: `${this.accounts.addresses[account]}|${this.assets.addresses[asset]}`,
      group,
    }));
    keyed.sort((a, b) => (a.key < b.key ? -1 : 1));
    const summaries: DebitSummary[] = keyed.map(({ group }) => {
      const { account, asset } = this.groups[group];
      const [o, i] = roots[group];
      return {
        debtor: parseAddress(this.accounts.addresses[account], "debtor"),
        asset: parseAddress(this.assets.addresses[asset], "asset"),
        sumRoot: o.hash,
        total: o.sum,
        depth: o.depth,
        inRoot: i.hash,
        inTotal: i.sum,
        inDepth: i.depth,
      };
    });
    const tree = new SummariesTree(summaries, this.keccak);
    return { root: tree.root, tree, summaries };
  }
}

/** The debitsRoot and summaries of a cycle's guarantees (any order). */
export function buildDebitTrees(
  guarantees: Iterable<GuaranteeLeaf>,
  keccak: Keccak256Fn = nobleKeccak256,
): CycleDebitTrees {
  const builder = new DebitTreesBuilder(keccak);
  for (const g of guarantees) builder.add(g);
  return builder.finish();
}

/** The proof of `summary` under the cycle's `debitsRoot` tree; throws WireError if it is not in it. */
export function debitSummaryProof(tree: DebitsTree, summary: DebitSummary): string[] {
  return tree.proof(summary);
}

/** The on-chain `DebitSummary` struct of a summary (the account and asset are separate arguments). */
export function summaryStruct(s: DebitSummary) {
  return {
    sumRoot: s.sumRoot,
    total: s.total,
    depth: BigInt(s.depth),
    inRoot: s.inRoot,
    inTotal: s.inTotal,
    inDepth: BigInt(s.inDepth),
  };
}

/** The on-chain `CreditProof` of guarantee `guaranteeId` in `recipient`'s incoming tree (what an answer and
 * `Vault.releaseListedReserve` carry); null when the cycle does not credit it to that recipient. */
export function creditProofOf(trees: CycleDebitTrees, recipientTree: DebtorTree, guaranteeId: string) {
  const index = positionOf(recipientTree.incoming, guaranteeId);
  if (index < 0) return null;
  const proof = sumTreeProof(recipientTree.incoming, index);
  return {
    summary: summaryStruct(recipientTree.summary),
    summaryProof: debitSummaryProof(trees.tree, recipientTree.summary),
    index: BigInt(index),
    path: proof.path,
  };
}

/** An empty `CreditProof` (a concession or an empty position carries no credit). */
export const NO_CREDIT_PROOF = Object.freeze({
  summary: summaryStruct(PLACEHOLDER_DEBIT_SUMMARY),
  summaryProof: [] as string[],
  index: 0n,
  path: [] as SumNode[],
});

/** The net credit a summary gives its account (`CreditCheck.creditOf`): `max(inTotal − total, 0)`. */
export function summaryCredit(s: DebitSummary): bigint {
  return s.inTotal > s.total ? s.inTotal - s.total : 0n;
}

const addressWord = (address: string): Buffer =>
  Buffer.from(address.slice(2).toLowerCase().padStart(64, "0"), "hex");
const hashWord = (hash: string): Buffer => Buffer.from(hash.slice(2), "hex");
const toHex32 = (value: bigint): string => `0x${value.toString(16).padStart(64, "0")}`;

/** The summary's leaf hash (`CreditCheck.summaryLeaf`): keccak256(keccak256(abi.encode(the eight fields))). */
export function summaryLeafHash(s: DebitSummary, keccak: Keccak256Fn = nobleKeccak256): string {
  const v = toDebitSummaryValues(s);
  const encoded = Buffer.concat([
    addressWord(v[0]),
    addressWord(v[1]),
    hashWord(v[2]),
    word(s.total),
    word(BigInt(s.depth)),
    hashWord(v[5]),
    word(s.inTotal),
    word(BigInt(s.inDepth)),
  ]);
  return hex(keccak(keccak(encoded)));
}

/** The parent of two summary nodes (sorted-pair sum hashing: the lower hash first). */
function summaryParent(a: SumNode, b: SumNode, keccak: Keccak256Fn): SumNode {
  return a.hash <= b.hash ? sumParent(a, b, keccak) : sumParent(b, a, keccak);
}

/**
 * The cycle's `debitsRoot` (contracts/lib/CreditCheck.sol `isSummary`): per asset, a sum tree over its
 * summaries, each a node `(summaryLeafHash, summaryCredit)`, sorted by hash, paired level by level with the
 * lower hash first (`(keccak256(abi.encode(a.hash, a.sum, b.hash, b.sum)), a.sum + b.sum)`), an odd last node
 * carried up unchanged; the tops `(asset, hash, credit)` listed by ascending asset, and
 * `debitsRoot = keccak256(concat of their 3 words each)` (no summary: keccak256 of nothing). A summary's proof
 * is `[k, h_1, c_1, …, h_k, c_k]` (its k siblings, leaf level first, each hash and sum as 32-byte words)
 * followed by the whole list of tops (3 words per asset). Each asset's top credit equals the cycle's total
 * credit in that asset when the cycle is netted honestly.
 */
export class SummariesTree {
  readonly root: string;
  /** The asset tops, ascending by asset (addresses lower case). */
  readonly tops: { asset: string; hash: string; credit: bigint }[] = [];
  private readonly levels = new Map<string, SumNode[][]>();
  private readonly tail: string[] = [];

  constructor(
    summaries: readonly DebitSummary[],
    private readonly keccak: Keccak256Fn = nobleKeccak256,
  ) {
    const byAsset = new Map<string, SumNode[]>();
    for (const s of summaries) {
      const asset = s.asset.toLowerCase();
      let nodes = byAsset.get(asset);
      if (nodes === undefined) byAsset.set(asset, (nodes = []));
      nodes.push({ hash: summaryLeafHash(s, keccak), sum: summaryCredit(s) });
    }
    for (const asset of [...byAsset.keys()].sort()) {
      const nodes = byAsset.get(asset)!.sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
      const levels = [nodes];
      while (levels[levels.length - 1].length > 1) {
        const below = levels[levels.length - 1];
        const above: SumNode[] = [];
        for (let i = 0; i < below.length; i += 2) {
          above.push(i + 1 < below.length ? summaryParent(below[i], below[i + 1], keccak) : below[i]);
        }
        levels.push(above);
      }
      this.levels.set(asset, levels);
      const top = levels[levels.length - 1][0];
      this.tops.push({ asset, hash: top.hash, credit: top.sum });
      this.tail.push(hex(addressWord(asset)), top.hash, toHex32(top.sum));
    }
    this.root = hex(keccak(Buffer.concat(this.tail.map((w) => hashWord(w)))));
  }

  /** The proof of `summary` (throws WireError when it is not a summary of this cycle). */
  proof(summary: DebitSummary): string[] {
    const levels = this.levels.get(summary.asset.toLowerCase());
    const hash = summaryLeafHash(summary, this.keccak);
    let index = levels === undefined ? -1 : levels[0].findIndex((n) => n.hash === hash);
    if (levels === undefined || index < 0) {
      throw new WireError("summary", "is not a debtor summary of this cycle");
    }
    const siblings: string[] = [];
    for (let level = 0; level < levels.length - 1; level++) {
      const sibling = levels[level][index ^ 1];
      if (sibling !== undefined) siblings.push(sibling.hash, toHex32(sibling.sum));
      index >>= 1;
    }
    return [toHex32(BigInt(siblings.length / 2)), ...siblings, ...this.tail];
  }
}
