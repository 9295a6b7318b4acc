/**
 * Core's answer to a debit challenge (docs/clearing.md "Challenges, veto and bond"): the debtor's own
 * signed outgoing guarantees of the cycle and asset, each with its proof under the cycle's guarantees
 * root, summing to at least the debit. Pure: the keeper passes the cycle's stored guarantees.
 *
 * Fewest guarantees first (largest amounts), because each one costs ≈ 46k gas on chain; the chosen ones
 * are then sorted by id, as `answerChallenge` requires. The tree is rebuilt from the same records the
 * plan was built from (guarantees root = keccak of each stored signature), and its root must equal the
 * committed one, or nothing is answered.
 */
import { SIGNING_SCHEME_CODES } from "../../sdk/eip712";
import { buildGuaranteeTree, guaranteeProof, type GuaranteeTree } from "../../sdk/guarantee-tree";
import { guaranteeLeafOf } from "./commit-plan";
import type { PayableGuarantee } from "./netting";

/** A stored guarantee of the cycle: what the answer needs of it. */
export interface AnswerableGuarantee extends PayableGuarantee {
  signature: string;
  scheme: "eip712" | "eip191";
  /** CertificateCodec encoding of the claims (the store's `certificateClaims`). */
  certificateClaims: string;
  /** REMUNERATED ones cannot answer (the contract refuses them). */
  state: string;
}

/** One element of `answerChallenge`'s `guarantees` argument. */
export interface AnswerGuarantee {
  claims: string;
  scheme: number;
  signature: string;
  proof: string[];
}

export class ChallengeAnswerError extends Error {
  override readonly name = "ChallengeAnswerError";
}

/**
 * The guarantees tree of a cycle Core planned, rebuilt from the guarantees it was planned from (the
 * store's records of the cycle): the keeper's answers and the guarantees endpoint both prove against it.
 * Throws {@link ChallengeAnswerError} when its root is not the committed `guaranteesRoot` (the records
 * changed since the plan): a proof from it would not verify on chain.
 */
export function rebuildCycleGuaranteeTree(
  cycleId: bigint,
  guaranteesRoot: string,
  guarantees: readonly PayableGuarantee[],
): GuaranteeTree {
  // One leaf per guarantee (buildGuaranteeTree refuses an empty list or an id listed twice, WireError).
  if (cycleId < 1n) throw new ChallengeAnswerError(`cycle id ${cycleId} is not a cycle`);
  const tree = buildGuaranteeTree(guarantees.map(guaranteeLeafOf));
  if (tree.root.toLowerCase() !== guaranteesRoot.toLowerCase()) {
    throw new ChallengeAnswerError(
      `rebuilt guarantees root ${tree.root} differs from the committed ${guaranteesRoot}`,
    );
  }
  return tree;
}

/**
 * The `answerChallenge` argument for `debtor`'s `debit` in `asset`, from every guarantee of the cycle
 * (`guarantees`, the list the cycle was planned from). Throws {@link ChallengeAnswerError} when the rebuilt
 * root differs from `guaranteesRoot` or the debtor's signed outgoing guarantees do not reach the debit.
 */
export function buildChallengeAnswer(
  cycleId: bigint,
  guaranteesRoot: string,
  guarantees: readonly AnswerableGuarantee[],
  asset: string,
  debtor: string,
  debit: bigint,
): { guarantees: AnswerGuarantee[]; signed: bigint } {
  const tree = rebuildCycleGuaranteeTree(cycleId, guaranteesRoot, guarantees);
  const who = debtor.toLowerCase();
  const what = asset.toLowerCase();
  const outgoing = guarantees
    .filter(
      (g) =>
        g.user.toLowerCase() === who &&
        g.asset.toLowerCase() === what &&
        g.recipient.toLowerCase() !== who &&
        g.state !== "REMUNERATED",
    )
    .sort((a, b) => (a.amount > b.amount ? -1 : a.amount < b.amount ? 1 : 0));
  const chosen: AnswerableGuarantee[] = [];
  let signed = 0n;
  for (const g of outgoing) {
    if (signed >= debit) break;
    chosen.push(g);
    signed += g.amount;
  }
  if (signed < debit) {
    throw new ChallengeAnswerError(`signed outgoing guarantees total ${signed}, below the debit ${debit}`);
  }
  chosen.sort((a, b) => (BigInt(a.guaranteeId) < BigInt(b.guaranteeId) ? -1 : 1));
  return {
    signed,
    guarantees: chosen.map((g) => ({
      claims: g.certificateClaims,
      scheme: SIGNING_SCHEME_CODES[g.scheme],
      signature: g.signature,
      proof: guaranteeProof(tree, guaranteeLeafOf(g)),
    })),
  };
}
