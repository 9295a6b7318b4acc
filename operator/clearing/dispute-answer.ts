/**
 * Core's answer to a disputed position of a debtor's sum tree (docs/clearing.md "Disputes"): the debtor's
 * summary with its proof under the cycle's `debitsRoot`, the position's node with its sum-tree proof, and
 * the guarantee there as the chain checks it (claims, Core's certificate, the payer's signature). Pure: the
 * keeper passes the cycle's stored guarantees. A position Core cannot prove is conceded (empty claims):
 * only its own amount comes off the debit.
 *
 * The trees are rebuilt from the same records the plan was built from, and their roots must equal the
 * committed ones, or nothing is answered.
 */
import { getBytes } from "ethers";
import { signatureToEip2537, type Eip2537G1Point } from "../../sdk/bls";
import {
  buildDebitTrees,
  buildDebtorTree,
  NO_CREDIT_PROOF,
  creditProofOf,
  debitSummaryProof,
  summaryStruct,
  sumTreeProof,
  type CycleDebitTrees,
  type DebtorTree,
} from "../../sdk/debit-tree";
import { SIGNING_SCHEME_CODES } from "../../sdk/eip712";
import { buildGuaranteeTree, type GuaranteeTree } from "../../sdk/guarantee-tree";
import { guaranteeLeafOf } from "./commit-plan";
import type { PayableGuarantee } from "./netting";

/** A stored guarantee of the cycle: what an answer needs of it. */
export interface AnswerableGuarantee extends PayableGuarantee {
  signature: string;
  scheme: "eip712" | "eip191";
  /** CertificateCodec encoding of the claims (the store's `certificateClaims`). */
  certificateClaims: string;
  /** Core's BLS certificate over them (compressed G1, 0x hex; the store's `certificateSignature`). */
  certificateSignature: string;
  /** The payer's `Finalization` signature of a V2 guarantee it finalized (sdk/finalization.ts); else null. */
  finalizationSignature?: string | null;
}

/** `answerDispute`'s `answer` argument (IClearingHouse.DisputeAnswer). */
/** An account's summary as `answerDispute` / `claimNetCredit` take it (sdk/debit-tree.ts `summaryStruct`). */
export type SummaryArg = ReturnType<typeof summaryStruct>;

export interface DisputeAnswerArg {
  summary: SummaryArg;
  summaryProof: string[];
  leaf: { hash: string; sum: bigint };
  path: { hash: string; sum: bigint }[];
  claims: string;
  certificate: Eip2537G1Point;
  scheme: number;
  signature: string;
  /** The payer's `Finalization` signature, or "0x". */
  finalization: string;
  /** Where the guarantee sits in its recipient's incoming tree (empty for a concession or empty position). */
  credit: {
    summary: SummaryArg;
    summaryProof: string[];
    index: bigint;
    path: { hash: string; sum: bigint }[];
  };
}

const NO_CERTIFICATE: Eip2537G1Point = {
  x_a: `0x${"0".repeat(64)}`,
  x_b: `0x${"0".repeat(64)}`,
  y_a: `0x${"0".repeat(64)}`,
  y_b: `0x${"0".repeat(64)}`,
};

export class DisputeAnswerError extends Error {
  override readonly name = "DisputeAnswerError";
}

/**
 * The guarantees tree of a cycle Core planned, rebuilt from the guarantees it was planned from (the
 * store's records of the cycle): the keeper's answers and the guarantees endpoint both prove against it.
 * Throws {@link DisputeAnswerError} when its root is not the committed `guaranteesRoot` (the records
 * changed since the plan): a proof from it would not verify on chain.
 */
export function rebuildCycleGuaranteeTree(
  cycleId: bigint,
  guaranteesRoot: string,
  guarantees: readonly PayableGuarantee[],
): GuaranteeTree {
  // One leaf per guarantee (buildGuaranteeTree refuses an empty list or an id listed twice, WireError).
  if (cycleId < 1n) throw new DisputeAnswerError(`cycle id ${cycleId} is not a cycle`);
  const tree = buildGuaranteeTree(guarantees.map(guaranteeLeafOf));
  if (tree.root.toLowerCase() !== guaranteesRoot.toLowerCase()) {
    throw new DisputeAnswerError(
      `rebuilt guarantees root ${tree.root} differs from the committed ${guaranteesRoot}`,
    );
  }
  return tree;
}

/** The debtors' trees of a cycle Core planned, rebuilt; throws unless their root is the committed `debitsRoot`. */
export function rebuildCycleDebitTrees(
  debitsRoot: string,
  guarantees: readonly PayableGuarantee[],
): CycleDebitTrees {
  const trees = buildDebitTrees(guarantees.map(guaranteeLeafOf));
  if (trees.root.toLowerCase() !== debitsRoot.toLowerCase()) {
    throw new DisputeAnswerError(
      `rebuilt debits root ${trees.root} differs from the committed ${debitsRoot}`,
    );
  }
  return trees;
}

/** `debtor`'s tree in `asset` among the cycle's guarantees; throws when it has none (nothing to answer from). */
export function debtorTreeOf(
  guarantees: readonly PayableGuarantee[],
  debtor: string,
  asset: string,
): DebtorTree {
  const tree = buildDebtorTree(guarantees.map(guaranteeLeafOf), debtor, asset);
  if (tree === null)
    throw new DisputeAnswerError(`${debtor} has no outgoing guarantee in ${asset} in this cycle`);
  return tree;
}

/**
 * The answer to the dispute of `position` of the debtor's `tree` (from `trees`): the guarantee there with
 * its claims, certificate and signature, or, with `concede`, empty claims (the position's amount comes off
 * the debit against the bond). A position past the tree's end is answered with its summary alone (dismissed).
 */
export function buildDisputeAnswer(
  trees: CycleDebitTrees,
  tree: DebtorTree,
  guarantees: ReadonlyMap<string, AnswerableGuarantee>,
  position: number,
  concede = false,
): DisputeAnswerArg {
  const { summary } = tree;
  const base = {
    summary: summaryStruct(summary),
    summaryProof: debitSummaryProof(trees.tree, summary),
  };
  const empty = {
    claims: "0x",
    certificate: NO_CERTIFICATE,
    scheme: 0,
    signature: "0x",
    finalization: "0x",
    credit: NO_CREDIT_PROOF,
  };
  if (position >= tree.levels[0].length) {
    return { ...base, leaf: { hash: `0x${"0".repeat(64)}`, sum: 0n }, path: [], ...empty };
  }
  const proof = sumTreeProof(tree, position);
  const at = { ...base, leaf: proof.leaf, path: proof.path };
  const leaf = tree.leaves[position];
  const g = leaf === undefined ? undefined : guarantees.get(leaf.guaranteeId.toLowerCase());
  if (concede || g === undefined) return { ...at, ...empty };
  // The same guarantee in its recipient's incoming tree (a listing stands only where it is credited).
  const recipient = buildDebtorTree(
    [...guarantees.values()].map(guaranteeLeafOf),
    leaf.recipient,
    leaf.asset,
  );
  const credit = recipient === null ? null : creditProofOf(trees, recipient, leaf.guaranteeId);
  if (credit === null) return { ...at, ...empty };
  return {
    ...at,
    claims: g.certificateClaims,
    certificate: signatureToEip2537(getBytes(g.certificateSignature)),
    scheme: SIGNING_SCHEME_CODES[g.scheme],
    signature: g.signature,
    // A V2 guarantee its payer finalized proves with the payer's waiver in place of a verdict.
    finalization: g.finalizationSignature ?? "0x",
    credit,
  };
}
