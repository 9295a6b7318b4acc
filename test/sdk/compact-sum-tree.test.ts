import { expect } from "chai";
import { randomBytes } from "ethers";
import { type Keccak256Fn, nobleKeccak256 } from "../../sdk/compact-merkle";
import { CompactSumTrees, sumPairs } from "../../sdk/compact-sum-tree";
import {
  type DebitSummary,
  DebitTreesBuilder,
  SummariesTree,
  buildDebitTrees,
  sumParent,
  sumTreeLevels,
  type SumNode,
} from "../../sdk/debit-tree";
import { WireError } from "../../sdk/errors";
import { type GuaranteeLeaf, guaranteeLeafHash } from "../../sdk/guarantee-tree";
import { MAX_UINT256, parseAddress } from "../../sdk/wire";
import { fastKeccak256 } from "../../operator/clearing/native-keccak";

const hex = (bytes: number): string => "0x" + Buffer.from(randomBytes(bytes)).toString("hex");
const int = (below: number): number => Math.floor(Math.random() * below);

/** The JavaScript path: the same hash without bulk routines. */
const plain: Keccak256Fn = (data) => fastKeccak256(data);

/**
 * The accounts' trees as the builder computed them before the compact buffers: one object per node,
 * `sumTreeLevels` per side, the summaries sorted by `account|asset` (the reference the compact builder
 * must equal).
 */
function referenceTrees(leaves: readonly GuaranteeLeaf[]): { root: string; summaries: DebitSummary[] } {
  const groups = new Map<string, { id: string; hash: string; amount: bigint }[][]>();
  const side = (account: string, asset: string, s: 0 | 1) => {
    const key = `${account.toLowerCase()}|${asset.toLowerCase()}`;
    if (!groups.has(key)) groups.set(key, [[], []]);
    return groups.get(key)![s];
  };
  for (const leaf of leaves) {
    if (leaf.payer.toLowerCase() === leaf.recipient.toLowerCase()) continue;
    const entry = { id: leaf.guaranteeId.toLowerCase(), hash: guaranteeLeafHash(leaf), amount: leaf.amount };
    side(leaf.payer, leaf.asset, 0).push(entry);
    side(leaf.recipient, leaf.asset, 1).push(entry);
  }
  const root = (group: { id: string; hash: string; amount: bigint }[]) => {
    if (group.length === 0) return { node: { hash: `0x${"0".repeat(64)}`, sum: 0n }, depth: 0 };
    group.sort((a, b) => (a.id < b.id ? -1 : 1));
    const levels = sumTreeLevels(group.map((g) => ({ hash: g.hash, sum: g.amount })));
    return { node: levels[levels.length - 1][0], depth: levels.length - 1 };
  };
  const summaries = [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, [out, incoming]]) => {
      const [debtor, asset] = key.split("|");
      const o = root(out);
      const i = root(incoming);
      return {
        debtor: parseAddress(debtor, "debtor"),
        asset: parseAddress(asset, "asset"),
        sumRoot: o.node.hash,
        total: o.node.sum,
        depth: o.depth,
        inRoot: i.node.hash,
        inTotal: i.node.sum,
        inDepth: i.depth,
      };
    });
  return { root: new SummariesTree(summaries).root, summaries };
}

/** Letter case changed at random (the trees must not depend on it). */
const anyCase = (value: string): string =>
  value.slice(0, 2) + [...value.slice(2)].map((c) => (Math.random() < 0.5 ? c.toUpperCase() : c)).join("");

/** A random cycle: `accounts` accounts, `assets` assets, self-payments, amounts small and large. */
function randomCycle(size: number, accounts: number, assets: number): GuaranteeLeaf[] {
  const who = Array.from({ length: accounts }, () => hex(20));
  const what = Array.from({ length: assets }, () => hex(20));
  return Array.from({ length: size }, () => {
    const roll = Math.random();
    const amount =
      roll < 0.1
        ? BigInt(hex(31)) + 1n // above 2^53: the big-amount path
        : roll < 0.15
          ? 9007199254740991n - BigInt(int(3)) // around 2^53 − 1
          : BigInt(1 + int(1e12));
    return {
      guaranteeId: anyCase(hex(32)),
      payer: anyCase(who[int(accounts)]),
      recipient: anyCase(who[int(accounts)]),
      asset: anyCase(what[int(assets)]),
      amount,
      signatureHash: hex(32),
    };
  });
}

describe("compact sum trees (sdk/compact-sum-tree.ts)", () => {
  it("hashes a level like sumParent, native and in JavaScript, apart and in place", () => {
    for (const count of [0, 1, 2, 5, 64, 301]) {
      const nodes: SumNode[] = Array.from({ length: 2 * count }, () => ({
        hash: hex(32),
        sum: BigInt(hex(1 + int(32))) >> 2n, // any width, pairs below 2^256
      }));
      const src = Buffer.concat(
        nodes.map((n) => Buffer.from(n.hash.slice(2) + n.sum.toString(16).padStart(64, "0"), "hex")),
      );
      const expected = Buffer.concat(
        Array.from({ length: count }, (_, k) => {
          const p = sumParent(nodes[2 * k], nodes[2 * k + 1]);
          return Buffer.from(p.hash.slice(2) + p.sum.toString(16).padStart(64, "0"), "hex");
        }),
      );
      for (const keccak of [fastKeccak256, plain, nobleKeccak256]) {
        const dst = Buffer.alloc(count * 64);
        expect(sumPairs(keccak, src, dst, count)).to.equal(true);
        expect(dst.equals(expected), `${count} pairs`).to.equal(true);
        const inPlace = Buffer.from(src);
        expect(sumPairs(keccak, inPlace, inPlace, count)).to.equal(true);
        expect(inPlace.subarray(0, count * 64).equals(expected), `${count} pairs in place`).to.equal(true);
      }
    }
  });

  it("reports a sum above 2^256 − 1, native and in JavaScript", () => {
    const max = MAX_UINT256.toString(16);
    const pair = Buffer.from(`${"11".repeat(32)}${max}${"22".repeat(32)}${"0".repeat(63)}1`, "hex");
    for (const keccak of [fastKeccak256, plain])
      expect(sumPairs(keccak, pair, Buffer.alloc(64), 1)).to.equal(false);
    const fits = Buffer.from(`${"11".repeat(32)}${max}${"22".repeat(32)}${"0".repeat(64)}`, "hex");
    for (const keccak of [fastKeccak256, plain])
      expect(sumPairs(keccak, fits, Buffer.alloc(64), 1)).to.equal(true);
  });

  it("refuses a destination that overlaps its source from inside (native)", () => {
    const buf = Buffer.alloc(4 * 128);
    expect(() => fastKeccak256.sumPairs!(buf, buf.subarray(64), 2)).to.throw(RangeError);
    expect(() => fastKeccak256.sumPairs!(buf, buf, 5)).to.throw(RangeError);
  });

  it("gives the accounts' trees of the object-per-node builder on random cycles, native and in JavaScript", () => {
    const shapes = [
      [1, 2, 1],
      [2, 2, 1],
      [3, 3, 2],
      [40, 4, 2],
      [300, 30, 3],
      [400, 50, 2],
      [300, 3, 1], // large groups: deep trees
    ];
    for (const [size, accounts, assets] of shapes) {
      const leaves = randomCycle(size, accounts, assets);
      const reference = referenceTrees(leaves);
      for (const keccak of [fastKeccak256, plain]) {
        const built = buildDebitTrees(leaves, keccak);
        expect(built.summaries, `${size} guarantees`).to.deep.equal(reference.summaries);
        expect(built.root).to.equal(reference.root);
        // The store's way in: leaf hashes as bytes, no object per guarantee; a small first capacity.
        const builder = new DebitTreesBuilder(keccak, 1);
        const hashes = Buffer.concat(leaves.map((l) => Buffer.from(guaranteeLeafHash(l).slice(2), "hex")));
        leaves.forEach((l, i) =>
          builder.addHashed(l.guaranteeId, l.payer, l.recipient, l.asset, l.amount, hashes, i * 32),
        );
        expect(builder.finish().root).to.equal(reference.root);
      }
    }
  });

  it("a cycle of self-payments only has no summary", () => {
    const [leaf] = randomCycle(1, 1, 1);
    const built = buildDebitTrees([leaf, { ...leaf, guaranteeId: hex(32), payer: leaf.payer.toUpperCase() }]);
    expect(built.summaries).to.deep.equal([]);
    expect(built.root).to.equal(referenceTrees([leaf]).root);
  });

  it("rejects an id twice in one tree, a malformed id or amount, and a total above 2^256 − 1", () => {
    const a = { ...randomCycle(1, 1, 1)[0], recipient: hex(20) };
    const twice = { ...a, guaranteeId: a.guaranteeId.toUpperCase().replace("0X", "0x"), amount: 7n };
    expect(() => buildDebitTrees([a, twice])).to.throw(WireError, "appears twice in the cycle");
    const hash = guaranteeLeafHash(a);
    for (const guaranteeId of ["0x12", `${a.guaranteeId.slice(0, 65)}g`, `1x${a.guaranteeId.slice(2)}`]) {
      expect(() => new DebitTreesBuilder().add({ ...a, guaranteeId }, hash)).to.throw(WireError, "32-byte");
    }
    expect(() => new DebitTreesBuilder().add({ ...a, amount: -1n }, hash)).to.throw(WireError, "uint256");
    expect(() => new DebitTreesBuilder().add(a, "0x1234")).to.throw(WireError, "32-byte");
    const half = (MAX_UINT256 >> 1n) + 1n;
    const big = [
      a,
      { ...a, guaranteeId: hex(32), amount: half },
      { ...a, guaranteeId: hex(32), amount: half },
    ];
    for (const keccak of [fastKeccak256, plain]) {
      expect(() => buildDebitTrees(big, keccak)).to.throw(WireError, "exceeds 2^256");
    }
  });

  it("groups are numbered by the caller; an unknown group is refused", () => {
    const trees = new CompactSumTrees(nobleKeccak256, 1);
    trees.add(0, 3, hex(32), 5n, Buffer.alloc(32), 0);
    expect(() => trees.roots(2)).to.throw(RangeError);
    const roots = trees.roots(4);
    expect(roots[0][0]).to.deep.equal({ hash: `0x${"0".repeat(64)}`, sum: 5n, depth: 0 });
    expect(roots[3][1].sum).to.equal(5n);
    expect(roots[1][0].sum).to.equal(0n);
  });
});
