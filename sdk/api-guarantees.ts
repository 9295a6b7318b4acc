/**
 * Wire shapes of Core's guarantee endpoints (docs/operator-api.md): the signed request, the certificate,
 * guarantee reads, balances, withdrawals. Components of Core's OpenAPI document (`core-api.ts`).
 */
import { z } from "zod/v4";
import { GUARANTEE_STATES } from "./guarantee-states";
import {
  HexBytes,
  Address,
  UintInput,
  Bytes32,
  UnixSeconds,
  Uint,
  PayerSignature,
  DateTime,
} from "./api-common";

export const Certificate = z.object({
  claims: HexBytes.describe("ABI-encoded certificate claims (docs/protocol.md)."),
  signature: z
    .string()
    .regex(/^0x[0-9a-fA-F]{96}$/)
    .describe("48-byte BLS G1 signature."),
});
export type Certificate = z.infer<typeof Certificate>;

export const ValidationPolicy = z.object({
  validation_registry_address: Address,
  validator_address: Address,
  validator_agent_id: UintInput,
  min_validation_score: z.int().min(0).max(100),
  job_hash: Bytes32,
  required_validation_tag: z.string().max(256),
  validation_deadline: UnixSeconds,
  validation_chain_id: z.int().min(1).optional(),
  validation_request_hash: Bytes32.optional(),
});
export type ValidationPolicy = z.infer<typeof ValidationPolicy>;

export const ClaimsInput = z
  .object({
    version: z.literal([1, 2, "1", "2", "v1", "v2"]),
    user_address: Address,
    recipient_address: Address,
    req_id: UintInput,
    amount: UintInput,
    asset_address: Address,
    timestamp: UnixSeconds,
    validation_policy: ValidationPolicy.nullable().optional(),
  })
  .describe("V2 requires `validation_policy`; V1 takes null or nothing.");
export type ClaimsInput = z.infer<typeof ClaimsInput>;

export const Claims = z.object({
  version: z.literal([1, 2]),
  user_address: Address,
  recipient_address: Address,
  req_id: Uint,
  amount: Uint,
  asset_address: Address,
  timestamp: UnixSeconds,
  validation_policy: ValidationPolicy.nullable(),
});
export type Claims = z.infer<typeof Claims>;

export const SignedGuaranteeRequest = z.object({
  claims: ClaimsInput,
  signature: PayerSignature,
  scheme: z.enum(["eip712", "eip191"]),
});
export type SignedGuaranteeRequest = z.infer<typeof SignedGuaranteeRequest>;

export const DuplicateGuarantee = z
  .object({
    error: z.string(),
    code: z.literal("duplicate_guarantee"),
    certificate: Certificate.optional(),
  })
  .describe("`certificate` is present only when the request is byte-identical to the stored one.");
export type DuplicateGuarantee = z.infer<typeof DuplicateGuarantee>;

export const GuaranteeState = z.enum(GUARANTEE_STATES);
export type GuaranteeState = z.infer<typeof GuaranteeState>;

export const Guarantee = z.object({
  guarantee_id: Bytes32,
  state: GuaranteeState,
  claims: Claims,
  scheme: z.enum(["eip712", "eip191"]),
  signature: PayerSignature,
  certificate: Certificate,
  created_at: DateTime,
  updated_at: DateTime,
  cycle_id: z
    .int()
    .min(1)
    .describe("The clearing cycle it is planned or netted in (GET /core/cycles/{id}); null until then")
    .nullable(),
  excluded_reason: z
    .string()
    .describe("Why clearing will not net it (e.g. consumed on chain before its cycle); null normally")
    .nullable(),
  validation_request_hash: Bytes32.describe(
    "V2: the ERC-8004 request hash the validator responds to on the ValidationRegistry; null for V1",
  ).nullable(),
  finalization_signature: PayerSignature.describe(
    "V2: the payer's EIP-712 `Finalization(bytes32 guaranteeId)` signature once it finalized (POST /core/guarantees/{id}/finalize); the `finalization` argument of `disputeCredit` and of dispute answers; null otherwise",
  ).nullable(),
});
export type Guarantee = z.infer<typeof Guarantee>;

export const Balance = z.object({
  asset_address: Address,
  symbol: z.string().nullable(),
  decimals: z.int().min(0).max(255).nullable(),
  deposited: Uint,
  locked: Uint,
  pending_withdrawal: Uint,
  reserve_hold: Uint.describe(
    "What the payer's on-chain seller reserves hold beyond `locked`: Σ max(0, reserve − Core's lock of its guarantee), i.e. reserves of guarantees Core no longer locks (cancelled, remunerated, netted).",
  ),
  available: Uint.describe(
    "(deposited − pending_withdrawal) × collateral factor − locked − reserve_hold (0 if negative).",
  ),
  collateral_factor_bps: z.int().min(0).max(10000),
});
export type Balance = z.infer<typeof Balance>;

export const Balances = z.object({
  user_address: Address,
  balances: z.array(Balance),
});
export type Balances = z.infer<typeof Balances>;

export const RecipientGuarantees = z.object({
  recipient_address: Address,
  guarantees: z.array(Guarantee),
  next_cursor: z.string().min(1).nullable(),
});
export type RecipientGuarantees = z.infer<typeof RecipientGuarantees>;

export const FinalizeRequest = z
  .object({
    signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/),
  })
  .describe(
    "The payer's EIP-712 signature of `Finalization(bytes32 guaranteeId)` under the guarantees' domain (docs/protocol.md \"Payer finalization\"); a dispute answer carries it on chain in place of the verdict.",
  );
export type FinalizeRequest = z.infer<typeof FinalizeRequest>;

export const CollateralList = z.object({
  balances: z.array(
    z.object({
      user_address: Address,
      asset_address: Address,
      deposited: Uint,
      locked: Uint,
      pending_withdrawal: Uint,
    }),
  ),
  next_cursor: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}:0x[0-9a-fA-F]{40}$/)
    .nullable()
    .describe("Pass as `cursor` for the next page; null on the last."),
});
export type CollateralList = z.infer<typeof CollateralList>;

export const GuaranteeList = z.object({
  guarantees: z.array(Guarantee),
  next_cursor: z.string().nullable(),
});
export type GuaranteeList = z.infer<typeof GuaranteeList>;

export const TimelineEntry = z.object({
  kind: z.enum([
    "issued",
    "reserve_registered",
    "validation_response",
    "cycle_planned",
    "netted",
    "debt_paid",
    "debt_covered",
    "debt_voided",
    "debt_refunded",
    "credit_claimed",
    "cycle_finalized",
    "cycle_vetoed",
    "state",
  ]),
  at: DateTime.nullable().describe("Null when Core keeps no time for the step."),
  clock: z.enum(["chain", "core"]).describe("A block's timestamp, or Core's own clock."),
  tx_hash: Bytes32.nullable(),
  block_number: z.int().min(0).nullable(),
  cycle_id: z.int().min(1).nullable(),
  detail: z.record(z.string(), z.union([z.string(), z.int()])),
});
export type TimelineEntry = z.infer<typeof TimelineEntry>;

export const GuaranteeTimeline = z.object({
  guarantee_id: Bytes32,
  state: GuaranteeState,
  timeline: z.array(TimelineEntry),
});
export type GuaranteeTimeline = z.infer<typeof GuaranteeTimeline>;

export const Withdrawals = z.object({
  user_address: Address,
  withdrawable: z.array(
    z.object({
      asset_address: Address,
      deposited: Uint,
      locked: Uint,
      pending_withdrawal: Uint,
      reserve_hold: Uint.describe("As in `Balance`."),
      free: Uint.describe("deposited − locked − reserve_hold (0 if negative): the Vault's free collateral."),
      finalizable_amount: Uint.nullable().describe(
        "min(requested, free) of the open request; null without one.",
      ),
      finalizable_at: DateTime.nullable().describe(
        "As `Vault.withdrawalFinalizableAt`; null without an open request.",
      ),
    }),
  ),
  withdrawals: z.array(
    z.object({
      withdrawal_id: Uint,
      asset_address: Address,
      amount: Uint,
      state: z.enum(["PENDING", "CANCELLED", "FINALIZED"]),
      requested_at: DateTime,
      finalizable_at: DateTime,
      paid: Uint.nullable(),
      closed_at: DateTime.nullable(),
    }),
  ),
});
export type Withdrawals = z.infer<typeof Withdrawals>;
