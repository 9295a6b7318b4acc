/**
 * Cycles for the randomized model of the clearing game (test/contracts/game-model.test.ts): the three roots,
 * the commit arguments and every proof (net positions, debtor sum trees, guarantee leaves) of a list of
 * guarantee leaves, built the way Core builds them but without Core's refusals, so that a rogue operator's
 * cycle (a fabricated leaf, a guarantee listed twice, a remunerated guarantee listed) can be committed too.
 * For an honest list the roots are those of Core's `buildCommitPlan` (the test checks it).
 */
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { ZeroAddress, ZeroHash, getAddress } from "ethers";

import {
  SummariesTree,
  NO_CREDIT_PROOF,
  positionOf,
  sumTreeLevels,
  sumTreeProof,
  summaryStruct,
  type DebitSummary,
  type DebtorTree,
  type SideTree,
} from "../../../sdk/debit-tree";
import {
  GUARANTEE_LEAF_ENCODING,
  guaranteeLeafHash,
  toGuaranteeLeafValues,
  type GuaranteeLeaf,
} from "../../../sdk/guarantee-tree";
import { MERKLE_LEAF_ENCODING } from "../../../sdk/merkle";

/** A commit's arguments and everything needed to play its game. */
export interface BuiltCycle {
  cycleId: bigint;
  root: string;
  guaranteesRoot: string;
  debitsRoot: string;
  totals: { asset: string; totalDebit: bigint; totalCredit: bigint }[];
  debtors: { asset: string; debtor: string; amount: bigint }[];
  /** Net credits by `asset|participant` (lower case). */
  credits: Map<string, bigint>;
  /** Account sum trees (outgoing and incoming) by `account|asset` (lower case). */
  trees: Map<string, DebtorTree>;
  /** The leaves as listed (duplicates kept). */
  leaves: GuaranteeLeaf[];
  /** `claimNetCredit`'s summary and proof of `participant` (any account with a summary). */
  creditProof(
    asset: string,
    participant: string,
  ): { summary: ReturnType<typeof summaryStruct>; proof: string[] };
  summaryProof(summary: DebitSummary): string[];
  guaranteeProof(leaf: GuaranteeLeaf): string[];
}

export const key = (...parts: (string | number | bigint)[]): string =>
  parts.map((p) => String(p).toLowerCase()).join("|");

function byId(a: GuaranteeLeaf, b: GuaranteeLeaf): number {
  const x = a.guaranteeId.toLowerCase();
  const y = b.guaranteeId.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Builds a cycle over `leaves` (any order; a duplicate id is kept at two positions of its payer's tree).
 * `creditTo` lets a rogue operator credit a leaf to another account than its recipient (issue 25, item 5);
 * `phantom` marks leaves left out of their payer's outgoing tree (a phantom credit: an incoming guarantee no
 * payer's tree lists), while the nets (debtors, totals) still count both sides.
 */
export function buildCycleOf(
  cycleId: bigint,
  leaves: readonly GuaranteeLeaf[],
  creditTo: (leaf: GuaranteeLeaf) => string = (l) => l.recipient,
  phantom: (leaf: GuaranteeLeaf) => boolean = () => false,
): BuiltCycle {
  const nets = new Map<string, { asset: string; participant: string; net: bigint }>();
  const bump = (asset: string, participant: string, by: bigint) => {
    const k = key(asset, participant);
    const n = nets.get(k) ?? { asset: getAddress(asset), participant: getAddress(participant), net: 0n };
    n.net += by;
    nets.set(k, n);
  };
  // Per account and asset: [outgoing, incoming] (duplicates kept).
  const groups = new Map<string, [GuaranteeLeaf[], GuaranteeLeaf[]]>();
  const group = (account: string, asset: string) => {
    const k = key(account, asset);
    let g = groups.get(k);
    if (g === undefined) groups.set(k, (g = [[], []]));
    return g;
  };
  for (const l of leaves) {
    if (l.payer.toLowerCase() === l.recipient.toLowerCase()) continue;
    bump(l.asset, creditTo(l), l.amount);
    bump(l.asset, l.payer, -l.amount);
    if (!phantom(l)) group(l.payer, l.asset)[0].push(l);
    group(creditTo(l), l.asset)[1].push(l);
  }
  const values: [bigint, string, string, bigint, bigint][] = [];
  const totals = new Map<string, { asset: string; totalDebit: bigint; totalCredit: bigint }>();
  const debtors: BuiltCycle["debtors"] = [];
  const credits = new Map<string, bigint>();
  for (const [k, n] of [...nets.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (n.net === 0n) continue;
    const debit = n.net < 0n ? -n.net : 0n;
    const credit = n.net > 0n ? n.net : 0n;
    values.push([cycleId, n.asset, n.participant, debit, credit]);
    const t = totals.get(n.asset) ?? { asset: n.asset, totalDebit: 0n, totalCredit: 0n };
    t.totalDebit += debit;
    t.totalCredit += credit;
    totals.set(n.asset, t);
    if (debit > 0n) debtors.push({ asset: n.asset, debtor: n.participant, amount: debit });
    else credits.set(k, credit);
  }
  const positions = StandardMerkleTree.of(
    values.length > 0 ? values : [[cycleId, ZeroAddress, ZeroAddress, 0n, 0n]],
    [...MERKLE_LEAF_ENCODING],
  );
  const guaranteeTree = StandardMerkleTree.of(
    leaves.map((l) => toGuaranteeLeafValues(l)),
    [...GUARANTEE_LEAF_ENCODING],
  );
  const trees = new Map<string, DebtorTree>();
  const summaries: DebitSummary[] = [];
  const side = (list: GuaranteeLeaf[]): SideTree => {
    if (list.length === 0) return { leaves: [], levels: [[{ hash: ZeroHash, sum: 0n }]] };
    const sorted = [...list].sort(byId);
    const levels = sumTreeLevels(
      sorted.map((g) => ({ hash: guaranteeLeafHash(g).toLowerCase(), sum: g.amount })),
    );
    return { leaves: sorted, levels };
  };
  for (const [k, [outList, inList]] of [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const out = side(outList);
    const incoming = side(inList);
    const o = out.levels[out.levels.length - 1][0];
    const i = incoming.levels[incoming.levels.length - 1][0];
    const any = outList[0] ?? inList[0];
    const summary: DebitSummary = {
      debtor: getAddress(outList.length > 0 ? any.payer : creditTo(any)),
      asset: getAddress(any.asset),
      sumRoot: o.hash,
      total: o.sum,
      depth: out.levels.length - 1,
      inRoot: i.hash,
      inTotal: i.sum,
      inDepth: incoming.levels.length - 1,
    };
    summaries.push(summary);
    trees.set(k, { summary, leaves: out.leaves, levels: out.levels, incoming });
  }
  const debits = new SummariesTree(summaries);
  return {
    cycleId,
    root: positions.root,
    guaranteesRoot: guaranteeTree.root,
    debitsRoot: debits.root,
    totals: [...totals.values()],
    debtors,
    credits,
    trees,
    leaves: [...leaves],
    creditProof(asset, participant) {
      const tree = trees.get(key(participant, asset));
      if (tree === undefined) throw new Error(`no summary of ${participant} in ${asset}`);
      return {
        summary: summaryStruct(tree.summary),
        proof: debits.proof(tree.summary),
      };
    },
    summaryProof(summary) {
      return debits.proof(summary);
    },
    guaranteeProof(leaf) {
      return guaranteeTree.getProof(toGuaranteeLeafValues(leaf));
    },
  };
}

const ZERO_G1 = { x_a: ZeroHash, x_b: ZeroHash, y_a: ZeroHash, y_b: ZeroHash };

/** What proves a guarantee in an answer: its claims, Core's certificate and the payer's signature. */
export interface AnswerEvidence {
  claims: string;
  certificate: { x_a: string; x_b: string; y_a: string; y_b: string };
  scheme: number;
  signature: string;
  /** The payer's Finalization signature (a payer-finalized V2 guarantee), when the answer carries it. */
  finalization?: string;
}

/**
 * `answerDispute`'s answer for `index` of `tree`: the summary and its proof, the node there and its path,
 * and `evidence` (none: a concession, or an empty position / one past the tree's end).
 */
export function answerOf(cycle: BuiltCycle, tree: DebtorTree, index: number, evidence?: AnswerEvidence) {
  const base = {
    summary: summaryStruct(tree.summary),
    summaryProof: cycle.summaryProof(tree.summary),
  };
  const empty = {
    claims: "0x",
    certificate: ZERO_G1,
    scheme: 0,
    signature: "0x",
    finalization: "0x",
    credit: NO_CREDIT_PROOF,
  };
  if (index >= tree.levels[0].length)
    return { ...base, leaf: { hash: ZeroHash, sum: 0n }, path: [], ...empty };
  const proof = sumTreeProof(tree, index);
  if (evidence === undefined) return { ...base, leaf: proof.leaf, path: proof.path, ...empty };
  return {
    ...base,
    leaf: proof.leaf,
    path: proof.path,
    ...evidence,
    finalization: evidence.finalization ?? "0x",
    credit: creditOf(cycle, tree.leaves[index]),
  };
}

/** Where `leaf` sits in its recipient's incoming tree (an empty proof when the cycle does not credit it). */
export function creditOf(cycle: BuiltCycle, leaf: GuaranteeLeaf | undefined) {
  if (leaf === undefined) return NO_CREDIT_PROOF;
  const recipient = cycle.trees.get(key(leaf.recipient, leaf.asset));
  if (recipient === undefined) return NO_CREDIT_PROOF;
  const index = positionOf(recipient.incoming, leaf.guaranteeId);
  if (index < 0) return NO_CREDIT_PROOF;
  return {
    summary: summaryStruct(recipient.summary),
    summaryProof: cycle.summaryProof(recipient.summary),
    index: BigInt(index),
    path: sumTreeProof(recipient.incoming, index).path,
  };
}

/**
 * `disputeCredit`'s `ListedGuarantee` for `leaf` (a recipient's credit dispute): the payer's summary and its
 * proof, the leaf's position and path in the payer's outgoing tree, and the guarantee's `evidence`.
 */
export function listedOf(cycle: BuiltCycle, leaf: GuaranteeLeaf, evidence: AnswerEvidence) {
  const tree = cycle.trees.get(key(leaf.payer, leaf.asset));
  if (tree === undefined) throw new Error(`no summary of ${leaf.payer}`);
  const index = positionOf(tree, leaf.guaranteeId);
  if (index < 0) throw new Error(`${leaf.guaranteeId} is not in its payer's tree`);
  return {
    summary: summaryStruct(tree.summary),
    summaryProof: cycle.summaryProof(tree.summary),
    index: BigInt(index),
    path: sumTreeProof(tree, index).path,
    ...evidence,
    finalization: "0x",
  };
}
