/**
 * Wire shapes of the facilitator's HTTP API (docs/facilitator.md): the x402 envelopes it accepts and the
 * answers of `/verify`, `/settle` and `/supported`, whose fields are the interface specification's and
 * x402 v2's at once (`@x402/core/types`: `VerifyResponse`, `SettleResponse`, `SupportedResponse`).
 * `FACILITATOR_API_SCHEMAS` names them: the components of the facilitator's OpenAPI document.
 */
import { z } from "zod/v4";
import { Address, ApiError } from "./api-common";
import { Certificate } from "./api-guarantees";
import { INVALID_REASONS } from "./invalid-reasons";

/** Failure codes of /settle besides the verification reasons (docs/facilitator.md, "Settle errors"). */
export const SETTLE_ERROR_CODES = [
  "invalid_request",
  "malformed_json",
  "undecodable_body",
  "body_too_large",
  "unsupported_encoding",
  "unsupported_charset",
  "core_rejected",
  "duplicate_guarantee",
  "core_unauthorized",
  "core_forbidden",
  "core_error",
  "core_unavailable",
  "invalid_core_response",
  "invalid_certificate",
  "signature_check_unavailable",
  "internal_error",
] as const;

export const Network = z
  .string()
  .regex(/^eip155:[0-9]+$/)
  .describe("CAIP-2.");

export const SignedGuarantee = z
  .looseObject({
    claims: z.record(z.string(), z.unknown()),
    signature: z.string(),
    scheme: z.enum(["eip712", "eip191"]),
    settle_attempt: z
      .enum(["first", "retry"])
      .describe(
        "Settle only, set by the seller (not signed by the payer): `first` when the seller never submitted this payment before (a guarantee Core issued already is then refused as `payment_already_used`), `retry` when it did and never learnt the outcome. Absent: as `retry`.",
      )
      .optional(),
  })
  .describe("Core's signed request: `claims` (see Core's ClaimsInput), `signature`, `scheme`.");

export const PaymentRequirements = z
  .looseObject({
    scheme: z.literal("svc-credit"),
    network: Network,
    amount: z.string().optional(),
    maxAmountRequired: z.string().optional(),
    payTo: Address,
    asset: Address,
    extra: z.record(z.string(), z.unknown()).nullable().optional(),
  })
  .describe(
    "`amount` (v2 name) or `maxAmountRequired` (v1 name) is required. A V2 validation policy goes in `extra` under the snake_case names of `claims.validation_policy`.",
  );

export const PaymentPayload = z.union([
  z
    .looseObject({
      x402Version: z.literal(1),
      scheme: z.literal("svc-credit").optional(),
      network: Network.optional(),
      payload: SignedGuarantee,
    })
    .meta({ title: "x402 v1" }),
  z
    .looseObject({
      x402Version: z.literal(2),
      accepted: PaymentRequirements.optional(),
      payload: SignedGuarantee,
      resource: z.record(z.string(), z.unknown()).optional(),
    })
    .meta({ title: "x402 v2" }),
]);

/** The body of `POST /verify` and `POST /settle`. */
export const FacilitatorRequest = z.looseObject({
  x402Version: z
    .literal([1, 2])
    .describe("Optional; when present it must equal paymentPayload.x402Version.")
    .optional(),
  paymentPayload: PaymentPayload,
  paymentRequirements: PaymentRequirements,
});

export const VerifyResponse = z.object({
  isValid: z.boolean(),
  invalidReason: z.enum(INVALID_REASONS).nullable(),
  invalidMessage: z.string().nullable(),
  payer: Address,
  certificate: z.null(),
});
export type VerifyResponse = z.infer<typeof VerifyResponse>;

export const SettleSuccess = z.object({
  success: z.literal(true),
  error: z.null(),
  txHash: z.null(),
  networkId: Network,
  certificate: Certificate,
  transaction: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/)
    .describe("The guarantee id."),
  network: Network,
  payer: Address,
  errorReason: z.null(),
  errorMessage: z.null(),
  extra: z
    .object({
      certificate: Certificate,
      already_issued: z
        .boolean()
        .describe(
          'Core had issued this guarantee before this settlement (a retry, or a replay the seller did not declare as its first attempt with `paymentPayload.payload.settle_attempt: "first"`).',
        ),
    })
    .describe(
      "The certificate again (the reference x402 client keeps `extra`, not `certificate`) and whether it was issued before.",
    ),
});
export type SettleSuccess = z.infer<typeof SettleSuccess>;

export const SettleFailure = z.object({
  success: z.literal(false),
  error: z.string().describe("The failure code; for a malformed body, the message naming the field."),
  txHash: z.null(),
  networkId: Network.nullable(),
  certificate: z.null(),
  transaction: z.literal(""),
  network: z.union([Network, z.literal("")]),
  payer: Address.nullable(),
  errorReason: z
    .string()
    .min(1)
    .describe(
      `An invalidReason, a settle error code (${SETTLE_ERROR_CODES.join(", ")}), or the \`code\` of Core's refusal passed through (e.g. \`insufficient_collateral\`).`,
    )
    .meta({ examples: [...INVALID_REASONS.slice(0, 3), "insufficient_collateral", "core_unavailable"] }),
  errorMessage: z.string(),
});
export type SettleFailure = z.infer<typeof SettleFailure>;

/** Every `/settle` answer. */
export type SettleResponse = SettleSuccess | SettleFailure;

export const Supported = z.object({
  kinds: z.array(
    z.object({
      x402Version: z.literal([1, 2]),
      scheme: z.literal("svc-credit"),
      network: Network,
      extra: z
        .object({
          contract_address: Address,
          chain_id: z.int().min(1),
          eip712_name: z.string().min(1),
          eip712_version: z.string().min(1),
        })
        .describe("The EIP-712 domain buyers sign guarantees under (Vault = contract_address)."),
    }),
  ),
  extensions: z.array(z.string()),
  signers: z.record(z.string(), z.array(Address)),
});
export type Supported = z.infer<typeof Supported>;

/** The components of the facilitator's OpenAPI document, by name. */
export const FACILITATOR_API_SCHEMAS: ReadonlyMap<string, z.ZodType> = new Map<string, z.ZodType>([
  ["Error", ApiError],
  ["Address", Address],
  ["Network", Network],
  ["Certificate", Certificate],
  ["SignedGuarantee", SignedGuarantee],
  ["PaymentPayload", PaymentPayload],
  ["PaymentRequirements", PaymentRequirements],
  // Two names of one shape: each component needs a schema of its own.
  ["VerifyRequest", FacilitatorRequest.describe("The body of `POST /verify`.")],
  ["SettleRequest", FacilitatorRequest.describe("The body of `POST /settle`.")],
  ["VerifyResponse", VerifyResponse],
  ["SettleSuccess", SettleSuccess],
  ["SettleFailure", SettleFailure],
  ["Supported", Supported],
]);
