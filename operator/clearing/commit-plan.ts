/**
 * Turns a netting result into what goes on chain (docs/protocol.md, "Clearing cycles"): the cycle's StandardMerkleTree
 * (built by sdk/merkle.ts, the one definition of the leaf encoding) and the exact arguments of
 * `ClearingHouse.commitCycle(cycleId, (root, guaranteesRoot, debitsRoot), AssetTotal[], Obligation[],
 * bytes32[] nettedV2Ids)`, the guarantees tree (sdk/guarantee-tree.ts) behind `guaranteesRoot`, the debtors'
 * sum trees (sdk/debit-tree.ts) behind `debitsRoot`, plus the
 * tree's JSON dump so Core can store it and serve each creditor its proof later. Pure.
 *
 * Empty cycles (docs/clearing.md):
 * - no guarantee at all: nothing to commit (`buildCommitPlan` returns null); the cycle id is not used,
 *   since on-chain ids must be consecutive.
 * - guarantees that all net to zero: still committed, so that every NETTED guarantee belongs to a cycle
 *   on chain and its V2 ids are marked consumed (otherwise a netted V2 guarantee could still be
 *   remunerated, i.e. paid twice). The contract needs a non-zero root, so the tree holds a single
 *   placeholder leaf `(cycleId, 0x0, 0x0, 0, 0)`; it can never be claimed (`claimNetCredit` rejects a
 *   zero credit and the zero asset is not listed in the cycle).
 */
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import {
  MERKLE_LEAF_ENCODING,
  buildCycleTree,
  proofFor,
  type CycleTree,
  type NetPositionLeaf,
} from "../../sdk/merkle";
import { WireError } from "../../sdk/errors";
import {
  buildGuaranteeTree,
  signatureHash,
  type GuaranteeLeaf,
  type GuaranteeTree,
} from "../../sdk/guarantee-tree";
import { type CycleDebitTrees, buildDebitTrees } from "../../sdk/debit-tree";
import { ZERO_ADDRESS, parseAddress } from "../../sdk/wire";
import type { AssetTotal, DebtorObligation, NettingResult, PayableGuarantee } from "./netting";

/** `StandardMerkleTree.dump()` of a cycle tree (the package does not export its data type). */
export type CycleTreeDump = ReturnType<CycleTree["dump"]>;

/** commitCycle's arguments, named; `toCommitCycleCall` gives them in call order. */
export interface CommitCycleArgs {
  cycleId: bigint;
  /** 0x-hex bytes32. */
  root: string;
  /** 0x-hex bytes32: root of the cycle's guarantees tree (sdk/guarantee-tree.ts). */
  guaranteesRoot: string;
  /** 0x-hex bytes32: root over the debtors' sum-tree summaries (sdk/debit-tree.ts). */
  debitsRoot: string;
  totals: AssetTotal[];
  debtors: DebtorObligation[];
  /** 0x-hex bytes32, lower case. */
  nettedV2Ids: string[];
}

/**
 * `ClearingHouse.MAX_DEBTORS_PER_COMMIT`: the most debtors one commit may record, a netted V2 id counting
 * half a debtor ({@link commitWeight}); a larger commit reverts `CommitTooLarge`. At the bound a commit
 * stays under EIP-7825's 2^24 gas per transaction (docs/gas.md); the scheduler splits larger cycles.
 */
export const MAX_DEBTORS_PER_COMMIT = 200;

/**
 * `ClearingHouse.MAX_ASSETS_PER_COMMIT`: the most assets (`totals`) one commit may list; a larger commit reverts
 * `CommitTooManyAssets` (audit3 A3-I1: each asset adds its records and a lookup per debtor, so the debtor bound
 * alone does not keep a commit under 2^24 gas). The scheduler splits a cycle over more assets.
 */
export const MAX_ASSETS_PER_COMMIT = 16;

/** What `commitCycle` checks against {@link MAX_DEBTORS_PER_COMMIT}: debtors + ceil(V2 ids / 2). */
export function commitWeight(args: Pick<CommitCycleArgs, "debtors" | "nettedV2Ids">): number {
  return args.debtors.length + Math.ceil(args.nettedV2Ids.length / 2);
}

export type CommitCycleCall = [
  cycleId: bigint,
  roots: { root: string; guaranteesRoot: string; debitsRoot: string },
  totals: AssetTotal[],
  debtors: DebtorObligation[],
  nettedV2Ids: string[],
];

export interface CommitPlan {
  cycleId: bigint;
  root: string;
  /** Net positions in (asset, participant) order; empty when the tree holds only the placeholder. */
  leaves: NetPositionLeaf[];
  /** True when no position is non-zero and the tree is the single placeholder leaf. */
  placeholder: boolean;
  args: CommitCycleArgs;
  tree: CycleTree;
  /** One leaf per netted guarantee; Core rebuilds it from the stored guarantees to answer challenges. */
  guaranteeTree: GuaranteeTree;
  /** `tree.dump()`: plain JSON, reload with `loadCycleTree`. */
  treeDump: CycleTreeDump;
  /** The accounts' summaries behind `debitsRoot` (claims and answers prove them). */
  debitTrees: CycleDebitTrees;
}

/** A creditor's claim: the arguments of `claimNetCredit(cycleId, asset, participant, credit, proof)`. */
export interface ParticipantPosition {
  cycleId: bigint;
  asset: string;
  participant: string;
  debit: bigint;
  credit: bigint;
  /** Proof of the leaf; only a creditor needs it (debtors are recorded by commitCycle, not proven). */
  proof: string[];
}

/** The leaf an empty (all net-zero) cycle is committed with. */
export function placeholderLeaf(cycleId: bigint): NetPositionLeaf {
  return { cycleId, asset: ZERO_ADDRESS, participant: ZERO_ADDRESS, debit: 0n, credit: 0n };
}

/** The Merkle leaves of a cycle in deterministic (asset, participant) order; netting already sorts. */
export function cycleLeaves(netting: Pick<NettingResult, "cycleId" | "assets">): NetPositionLeaf[] {
  const leaves: NetPositionLeaf[] = [];
  for (const asset of netting.assets) {
    for (const p of asset.positions) {
      leaves.push({
        cycleId: netting.cycleId,
        asset: asset.asset,
        participant: p.participant,
        debit: p.debit,
        credit: p.credit,
      });
    }
  }
  return leaves;
}

const ZERO_HASH = "0x" + "00".repeat(32);

/** The guarantees-root leaf of a netted guarantee (a missing signature hashes to zero: unanswerable). */
export function guaranteeLeafOf(g: PayableGuarantee): GuaranteeLeaf {
  return {
    guaranteeId: g.guaranteeId,
    payer: g.user,
    recipient: g.recipient,
    asset: g.asset,
    amount: g.amount,
    signatureHash: g.signature === undefined ? ZERO_HASH : signatureHash(g.signature),
  };
}

/** The leaves of the guarantees `netting` included (the same list it was computed from). */
export function includedLeaves(
  netting: Pick<NettingResult, "includedIds">,
  guarantees: Iterable<PayableGuarantee>,
): GuaranteeLeaf[] {
  const included = new Set(netting.includedIds);
  const leaves: GuaranteeLeaf[] = [];
  for (const g of guarantees) {
    if (included.has(g.guaranteeId.toLowerCase())) leaves.push(guaranteeLeafOf(g));
  }
  if (leaves.length !== included.size) {
    throw new WireError("guarantees", "must be the guarantees the netting was computed from");
  }
  return leaves;
}

/** The guarantees tree of the guarantees `netting` included (the same list it was computed from). */
export function buildCycleGuaranteeTree(
  netting: NettingResult,
  guarantees: Iterable<PayableGuarantee>,
): GuaranteeTree {
  return buildGuaranteeTree(includedLeaves(netting, guarantees));
}

/**
 * The trees and commitCycle arguments of a netted cycle; null when the cycle has no guarantee (nothing to
 * commit). `guarantees` is the list `netting` was computed from (for the guarantees root). The same set
 * of guarantees always yields the same roots and arguments, whatever their order.
 */
export function buildCommitPlan(
  netting: NettingResult,
  guarantees: Iterable<PayableGuarantee>,
): CommitPlan | null {
  if (netting.includedIds.length === 0) return null;
  const leaves = cycleLeaves(netting);
  const placeholder = leaves.length === 0;
  const tree = buildCycleTree(placeholder ? [placeholderLeaf(netting.cycleId)] : leaves);
  const guaranteeTree = buildCycleGuaranteeTree(netting, guarantees);
  const debitTrees = buildDebitTrees(includedLeaves(netting, guarantees));
  const args: CommitCycleArgs = {
    cycleId: netting.cycleId,
    root: tree.root,
    guaranteesRoot: guaranteeTree.root,
    debitsRoot: debitTrees.root,
    totals: netting.totals.map((t) => ({ ...t })),
    debtors: netting.obligations.map((o) => ({ ...o })),
    nettedV2Ids: [...netting.nettedV2Ids],
  };
  return {
    cycleId: netting.cycleId,
    root: tree.root,
    leaves,
    placeholder,
    args,
    tree,
    guaranteeTree,
    treeDump: tree.dump(),
    debitTrees,
  };
}

/** commitCycle's arguments in call order: `clearingHouse.commitCycle(...toCommitCycleCall(plan.args))`. */
export function toCommitCycleCall(args: CommitCycleArgs): CommitCycleCall {
  const roots = { root: args.root, guaranteesRoot: args.guaranteesRoot, debitsRoot: args.debitsRoot };
  return [args.cycleId, roots, args.totals, args.debtors, args.nettedV2Ids];
}

/**
 * Reloads a stored tree dump. `StandardMerkleTree.load` re-hashes every node; the leaf encoding and, when
 * given, the root are checked too, so a tampered or foreign dump never serves proofs.
 */
export function loadCycleTree(dump: CycleTreeDump, expectedRoot?: string): CycleTree {
  const encoding = dump?.leafEncoding;
  if (
    !Array.isArray(encoding) ||
    encoding.length !== MERKLE_LEAF_ENCODING.length ||
    encoding.some((type, i) => type !== MERKLE_LEAF_ENCODING[i])
  ) {
    throw new WireError("dump.leafEncoding", `must be [${MERKLE_LEAF_ENCODING.join(", ")}]`);
  }
  let tree: CycleTree;
  try {
    tree = StandardMerkleTree.load(dump);
  } catch (error) {
    throw new WireError("dump", `is not a valid Merkle tree dump (${(error as Error).message})`);
  }
  if (expectedRoot !== undefined && tree.root.toLowerCase() !== expectedRoot.toLowerCase()) {
    throw new WireError("dump", `has root ${tree.root}, expected ${expectedRoot}`);
  }
  return tree;
}

/**
 * A participant's positions in a cycle (one per asset it has a non-zero net in), each with its proof;
 * empty if it has none. `participant` may be in any letter case.
 */
export function participantPositions(tree: CycleTree, participant: string): ParticipantPosition[] {
  const wanted = parseAddress(participant, "participant");
  const positions: ParticipantPosition[] = [];
  for (const [, [cycleId, asset, leafParticipant, debit, credit]] of tree.entries()) {
    // The placeholder leaf of an empty cycle (all zero) is nobody's position.
    if (leafParticipant !== wanted || (debit === "0" && credit === "0")) continue;
    const leaf: NetPositionLeaf = {
      cycleId: BigInt(cycleId),
      asset,
      participant: leafParticipant,
      debit: BigInt(debit),
      credit: BigInt(credit),
    };
    positions.push({ ...leaf, proof: proofFor(tree, leaf) });
  }
  return positions.sort((a, b) => (a.asset.toLowerCase() < b.asset.toLowerCase() ? -1 : 1));
}
