/**
 * Wire shapes of Core's clearing endpoints (docs/operator-api.md, docs/clearing.md): cycles, the schedule,
 * proofs and the trees disputes are answered with. Components of Core's OpenAPI document (`core-api.ts`).
 */
import { z } from "zod/v4";
import { Bytes32, DateTime, Address, Uint } from "./api-common";

/** The states a committed cycle is read in (a planned or sent one is not a cycle of the API yet). */
export const CycleState = z.enum(["COMMITTED", "FINALIZED", "VETOED"]);
export type CycleState = z.infer<typeof CycleState>;

export const Cycle = z.object({
  cycle_id: z.int().min(1),
  state: CycleState.describe(
    "VETOED: the guardian vetoed it; its guarantees are re-committed in a later cycle.",
  ),
  planned_by_core: z
    .boolean()
    .describe(
      "False for a cycle committed on chain with the operator key that Core did not plan (a security event): built from its events, guarantee_count 0, no proofs; its disputed debits are voided against the bond at the answer deadline (docs/clearing.md).",
    ),
  root: Bytes32.describe("Merkle root committed on chain."),
  guarantees_root: Bytes32.describe(
    "Root of the cycle's guarantees (sdk/guarantee-tree.ts): what double listings and V1 reserves prove against.",
  ),
  debits_root: Bytes32.describe(
    "Root over the accounts' summaries (sdk/debit-tree.ts `SummariesTree`: per asset a sum tree of their net credits, then the list of asset tops): what claims and dispute answers prove against (zero for a cycle whose commit Core has not seen announce it).",
  ),
  challenge_deadline: DateTime.nullable().describe(
    "Debtors may dispute their debit's guarantees, and the guardian veto the cycle, until then; claims open after it once the cycle's disputes are answered (or after answer_deadline).",
  ),
  answer_deadline: DateTime.nullable().describe(
    "Challenges are answered until then; an unanswered one is voided after it.",
  ),
  vetoed_at: DateTime.nullable(),
  committed_at: DateTime.nullable(),
  committed_block: z.int().min(0).nullable(),
  commit_tx: Bytes32.nullable(),
  payment_deadline: DateTime.nullable(),
  default_deadline: DateTime.nullable(),
  finalized_at: DateTime.nullable(),
  guarantee_count: z.int().min(0),
  totals: z.array(
    z.object({
      asset_address: Address,
      total_debit: Uint,
      total_credit: Uint,
    }),
  ),
  debtors: z.array(
    z.object({
      asset_address: Address,
      debtor: Address,
      amount: Uint,
      status: z.enum(["OPEN", "PAID", "COVERED", "CHALLENGED", "ANSWERED", "VOIDED", "REFUNDED"]),
      covered: Uint.nullable().describe(
        "What arrived at the ClearingHouse for a COVERED debt; null otherwise.",
      ),
    }),
  ),
  claims: z.array(
    z.object({
      asset_address: Address,
      participant: Address,
      amount: Uint,
    }),
  ),
  credit_disputes: z
    .array(
      z.object({
        guarantee_id: Bytes32,
        recipient: Address.nullable().describe("Who disputed (the guarantee's recipient)."),
        payer: Address.nullable().describe("The payer whose outgoing tree lists the guarantee."),
        asset_address: Address.nullable(),
        amount: Uint.nullable().describe(
          "The guarantee's amount: what the bond pays the recipient if unanswered.",
        ),
        opened_at: DateTime.nullable().describe("Block time of the `CreditDisputed` event."),
        opened_tx: Bytes32.nullable().describe("The `disputeCredit` transaction."),
        answer_deadline: DateTime.nullable().describe(
          "The cycle's answer_deadline: Core answers before it; after it anyone can have the bond pay the recipient (`payUnansweredCredit`).",
        ),
      }),
    )
    .describe(
      'Recipients\' open credit disputes of this cycle (docs/clearing.md "Misdirected credits"), oldest first: a dispute leaves the list when it is answered, paid, lapsed or the cycle vetoed (webhook `cycle.credit_dispute_resolved`). The details are null only for a dispute Core recorded before it kept them.',
    ),
});
export type Cycle = z.infer<typeof Cycle>;

export const Cycles = z.object({
  cycles: z.array(Cycle),
  next_cursor: z
    .string()
    .regex(/^[1-9][0-9]*$/)
    .nullable()
    .describe("Pass as `before` for the next (older) page; null on the last."),
});
export type Cycles = z.infer<typeof Cycles>;

export const ClearingSchedule = z.object({
  chain_time: DateTime.nullable().describe(
    "The newest indexed block's timestamp; null before Core indexed a block.",
  ),
  cycle_length_seconds: z.int().min(1).nullable(),
  commit_delay_seconds: z.int().min(0).nullable(),
  next_cutoff: DateTime.nullable().describe(
    "Chain time at which the next cycle closes; null before the scheduler's first run.",
  ),
  next_commit_by: DateTime.nullable().describe(
    "`next_cutoff + commit_delay_seconds`: that cycle's commit is due on chain by then.",
  ),
  seconds_to_cutoff: z
    .int()
    .nullable()
    .describe("`next_cutoff − chain_time` (negative: the cutoff has passed, the commit is under way)."),
  pending_cycle: z
    .object({
      cycle_id: z.int().min(1),
      state: z.enum(["PLANNED", "SENT"]),
      cutoff: DateTime,
      planned_at: DateTime,
      commit_tx: Bytes32.nullable(),
      sent_at: DateTime.nullable(),
    })
    .nullable(),
  latest_committed_cycle_id: z.int().min(0),
});
export type ClearingSchedule = z.infer<typeof ClearingSchedule>;

export const GuaranteeLeafView = z.object({
  guarantee_id: Bytes32,
  payer: Address,
  recipient: Address,
  asset_address: Address,
  amount: Uint,
  signature_hash: Bytes32.describe("keccak256 of the payer's signature bytes."),
  leaf_hash: Bytes32.describe(
    "`ClearingHouse.guaranteeLeafHash(guarantee_id, payer, recipient, asset, amount, signature_hash)`.",
  ),
  proof: z.array(Bytes32).describe("Sibling hashes under `guarantees_root`."),
});
export type GuaranteeLeafView = z.infer<typeof GuaranteeLeafView>;

export const CycleGuarantees = z.object({
  cycle_id: z.int().min(1),
  state: CycleState,
  guarantees_root: Bytes32,
  payer: Address,
  guarantees: z
    .array(GuaranteeLeafView)
    .describe("The payer's leaves in increasing guarantee id order; empty if it has none in the cycle."),
});
export type CycleGuarantees = z.infer<typeof CycleGuarantees>;

export const SumNode = z.object({
  hash: Bytes32,
  sum: Uint,
});
export type SumNode = z.infer<typeof SumNode>;

/** A guarantee's leaf in one of an account's sum trees, with the path that proves it. */
const TreePosition = z.object({
  position: z.int().min(0),
  guarantee_id: Bytes32,
  amount: Uint,
  signature_hash: Bytes32,
  leaf: SumNode,
});

export const DebtorTreePosition = TreePosition.extend({
  recipient: Address,
  path: z
    .array(SumNode)
    .describe("Sibling nodes from the leaf level up (`answerDispute`'s `path`); `depth` of them."),
});
export type DebtorTreePosition = z.infer<typeof DebtorTreePosition>;

export const CreditTreePosition = TreePosition.extend({
  payer: Address,
  path: z
    .array(SumNode)
    .describe(
      "Sibling nodes from the leaf level up under `in_root` (a `CreditProof`'s `path`); `in_depth` of them.",
    ),
});
export type CreditTreePosition = z.infer<typeof CreditTreePosition>;

export const DebtorTree = z.object({
  asset_address: Address,
  sum_root: Bytes32,
  total: Uint,
  depth: z.int().min(0).max(24),
  in_root: Bytes32,
  in_total: Uint,
  in_depth: z.int().min(0).max(24),
  incoming: z
    .array(CreditTreePosition)
    .describe(
      "The account's incoming tree (issue 25, item 5): each guarantee credited to it, in increasing id order, with the proof a `CreditProof` carries (`answerDispute`'s `credit`, `Vault.releaseListedReserve`). The net position is `in_total − total`.",
    ),
  credit: Uint.describe(
    "The summary's net credit, `max(in_total − total, 0)`: its sum in the asset's summaries tree.",
  ),
  asset_credit: Uint.describe(
    "The top of the asset's summaries tree: the sum of every summary's credit, equal to the cycle's committed total credit in the asset (the contracts refuse a summary proof otherwise).",
  ),
  summary_proof: z
    .array(Bytes32)
    .describe(
      "Proof of the summary under `debits_root` (contracts/lib/CreditCheck.sol `isSummary`): `[k, h_1, c_1, …, h_k, c_k]` (its k siblings in the asset's summaries sum tree, leaf level first) followed by every asset's top `(asset, hash, credit)`, ascending by asset.",
    ),
  positions: z
    .array(DebtorTreePosition)
    .describe("Positions 0 .. count − 1 in increasing guarantee id order (higher ones are empty)."),
});
export type DebtorTree = z.infer<typeof DebtorTree>;

export const CycleDebits = z.object({
  cycle_id: z.int().min(1),
  state: CycleState,
  debits_root: Bytes32,
  payer: Address,
  trees: z
    .array(DebtorTree)
    .describe(
      "One per asset the account has outgoing or incoming guarantees in (a net creditor too); empty if none.",
    ),
});
export type CycleDebits = z.infer<typeof CycleDebits>;

export const CyclePosition = z.object({
  asset_address: Address,
  debit: Uint,
  credit: Uint,
  proof: z.array(Bytes32),
  claimed: z
    .boolean()
    .describe(
      "The credit was claimed on chain (set aside for the participant; withdrawn or not, see `ClearingHouse.payoutOf`).",
    ),
  claim_net_credit_args: z
    .tuple([
      Uint,
      Address,
      Address,
      z.object({
        sumRoot: Bytes32,
        total: Uint,
        depth: Uint,
        inRoot: Bytes32,
        inTotal: Uint,
        inDepth: Uint,
      }),
      z.array(Bytes32),
    ])
    .nullable()
    .describe(
      "`ClearingHouse.claimNetCredit(cycleId, asset, participant, summary, summaryProof)` arguments: the participant's summary under the cycle's `debitsRoot` (credit = `inTotal − total`) and its proof; null for a debtor and in a VETOED cycle (the claim would revert `CycleIsVetoed`). The claim sends nothing: it sets the credit aside for the participant, who then calls `ClearingHouse.withdrawPayout(asset, to)` (pull payment).",
    ),
});
export type CyclePosition = z.infer<typeof CyclePosition>;

export const CycleProof = z.object({
  cycle_id: z.int().min(1),
  root: Bytes32,
  participant: Address,
  positions: z.array(CyclePosition).min(1),
});
export type CycleProof = z.infer<typeof CycleProof>;
