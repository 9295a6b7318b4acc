/**
 * OpenAPI 3.1 description of the facilitator's HTTP API (docs/facilitator.md).
 * Served at `GET /openapi.json`; test/facilitator/openapi.test.ts checks real
 * responses against it, so a change of a response shape must change this too.
 */
import { INVALID_REASONS } from "../invalid-reasons";

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: "null" }] });
const object = (properties: Record<string, Schema>, required = Object.keys(properties)): Schema => ({
  type: "object",
  properties,
  required,
  additionalProperties: false,
});
const json = (description: string, schema: Schema): Schema => ({
  description,
  content: { "application/json": { schema } },
});
const error = (description: string, codes?: readonly string[]): Schema =>
  json(
    description,
    codes
      ? { allOf: [ref("Error")], type: "object", properties: { code: { enum: [...codes] } } }
      : ref("Error"),
  );

const UNSUPPORTED_MEDIA =
  "`Content-Encoding` other than identity, gzip, deflate or br; charset other than UTF-8.";

/** Failure codes of /settle besides the verification reasons (docs/facilitator.md, "Settle errors"). */
const SETTLE_ERROR_CODES = [
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

const FACILITATOR_REQUEST = {
  ...object(
    {
      x402Version: {
        enum: [1, 2],
        description: "Optional; when present it must equal paymentPayload.x402Version.",
      },
      paymentPayload: ref("PaymentPayload"),
      paymentRequirements: ref("PaymentRequirements"),
    },
    ["paymentPayload", "paymentRequirements"],
  ),
  additionalProperties: true,
};

export const FACILITATOR_OPENAPI = {
  openapi: "3.1.0",
  jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
  info: {
    title: "Surety facilitator API",
    version: "0.1.0",
    description:
      "x402 facilitator for the `svc-credit` scheme: `/verify` checks a payment without contacting Core, " +
      "`/settle` turns it into Core's BLS certificate. x402 v1 and v2 envelopes are both accepted.",
  },
  servers: [{ url: "http://127.0.0.1:8402", description: "devnet default" }],
  components: {
    schemas: {
      Error: {
        type: "object",
        properties: { error: { type: "string" }, code: { type: "string" } },
        required: ["error", "code"],
        additionalProperties: false,
      },
      Address: { type: "string", pattern: "^0x[0-9a-fA-F]{40}$" },
      Network: { type: "string", pattern: "^eip155:[0-9]+$", description: "CAIP-2." },
      Certificate: object({
        claims: { type: "string", pattern: "^0x([0-9a-fA-F]{2})+$" },
        signature: { type: "string", pattern: "^0x[0-9a-fA-F]{96}$" },
      }),
      SignedGuarantee: {
        type: "object",
        description: "Core's signed request: `claims` (see Core's ClaimsInput), `signature`, `scheme`.",
        properties: {
          claims: { type: "object" },
          signature: { type: "string" },
          scheme: { enum: ["eip712", "eip191"] },
          settle_attempt: {
            enum: ["first", "retry"],
            description:
              "Settle only, set by the seller (not signed by the payer): `first` when the seller never submitted " +
              "this payment before (a guarantee Core issued already is then refused as `payment_already_used`), " +
              "`retry` when it did and never learnt the outcome. Absent: as `retry`.",
          },
        },
        required: ["claims", "signature", "scheme"],
      },
      PaymentPayload: {
        oneOf: [
          {
            type: "object",
            title: "x402 v1",
            properties: {
              x402Version: { const: 1 },
              scheme: { const: "svc-credit" },
              network: ref("Network"),
              payload: ref("SignedGuarantee"),
            },
            required: ["x402Version", "payload"],
          },
          {
            type: "object",
            title: "x402 v2",
            properties: {
              x402Version: { const: 2 },
              accepted: ref("PaymentRequirements"),
              payload: ref("SignedGuarantee"),
              resource: { type: "object" },
            },
            required: ["x402Version", "payload"],
          },
        ],
      },
      PaymentRequirements: {
        type: "object",
        description:
          "`amount` (v2 name) or `maxAmountRequired` (v1 name) is required. A V2 validation policy goes in `extra` " +
          "under the snake_case names of `claims.validation_policy`.",
        properties: {
          scheme: { const: "svc-credit" },
          network: ref("Network"),
          amount: { type: "string" },
          maxAmountRequired: { type: "string" },
          payTo: ref("Address"),
          asset: ref("Address"),
          extra: nullable({ type: "object" }),
        },
        required: ["scheme", "network", "payTo", "asset"],
      },
      VerifyRequest: FACILITATOR_REQUEST,
      SettleRequest: FACILITATOR_REQUEST,
      VerifyResponse: object({
        isValid: { type: "boolean" },
        invalidReason: nullable({ enum: [...INVALID_REASONS] }),
        invalidMessage: nullable({ type: "string" }),
        payer: ref("Address"),
        certificate: { type: "null" },
      }),
      SettleSuccess: object({
        success: { const: true },
        error: { type: "null" },
        txHash: { type: "null" },
        networkId: ref("Network"),
        certificate: ref("Certificate"),
        transaction: { type: "string", pattern: "^0x[0-9a-fA-F]{64}$", description: "The guarantee id." },
        network: ref("Network"),
        payer: ref("Address"),
        errorReason: { type: "null" },
        errorMessage: { type: "null" },
        extra: {
          ...object({
            certificate: ref("Certificate"),
            already_issued: {
              type: "boolean",
              description:
                "Core had issued this guarantee before this settlement (a retry, or a replay the seller did not " +
                'declare as its first attempt with `paymentPayload.payload.settle_attempt: "first"`).',
            },
          }),
          description:
            "The certificate again (the reference x402 client keeps `extra`, not `certificate`) and whether it was issued before.",
        },
      }),
      SettleFailure: object({
        success: { const: false },
        error: {
          type: "string",
          description: "The failure code; for a malformed body, the message naming the field.",
        },
        txHash: { type: "null" },
        networkId: nullable(ref("Network")),
        certificate: { type: "null" },
        transaction: { const: "" },
        network: { anyOf: [ref("Network"), { const: "" }] },
        payer: nullable(ref("Address")),
        errorReason: {
          type: "string",
          minLength: 1,
          description:
            "An invalidReason, a settle error code (" +
            SETTLE_ERROR_CODES.join(", ") +
            "), or the `code` of Core's refusal passed through (e.g. `insufficient_collateral`).",
          examples: [...INVALID_REASONS.slice(0, 3), "insufficient_collateral", "core_unavailable"],
        },
        errorMessage: { type: "string" },
      }),
      Supported: object({
        kinds: {
          type: "array",
          items: {
            ...object(
              {
                x402Version: { enum: [1, 2] },
                scheme: { const: "svc-credit" },
                network: ref("Network"),
                extra: {
                  ...object({
                    contract_address: ref("Address"),
                    chain_id: { type: "integer", minimum: 1 },
                    eip712_name: { type: "string", minLength: 1 },
                    eip712_version: { type: "string", minLength: 1 },
                  }),
                  description: "The EIP-712 domain buyers sign guarantees under (Vault = contract_address).",
                },
              },
              ["x402Version", "scheme", "network", "extra"],
            ),
          },
        },
        extensions: { type: "array" },
        signers: {
          type: "object",
          additionalProperties: { type: "array", items: ref("Address") },
        },
      }),
    },
  },
  paths: {
    "/verify": {
      post: {
        summary: "Check a payment against the requirements and the deployment (no Core round trip)",
        requestBody: { required: true, content: { "application/json": { schema: ref("VerifyRequest") } } },
        responses: {
          "200": json("Checked: `isValid` false comes with an `invalidReason`.", ref("VerifyResponse")),
          "400": error("Malformed body or envelope; `error` starts with the field path.", [
            "invalid_request",
            "malformed_json",
            "undecodable_body",
          ]),
          "413": error("Body larger than 64 KiB (after decoding).", ["body_too_large"]),
          "415": error(UNSUPPORTED_MEDIA, ["unsupported_encoding", "unsupported_charset"]),
          "500": error(
            "Core's public params cannot be loaded, the chain cannot be asked for a contract-wallet payer's registered signing key, or an unexpected failure.",
            ["core_unavailable", "signature_check_unavailable", "internal_error"],
          ),
        },
      },
    },
    "/settle": {
      post: {
        summary: "Re-verify, submit the guarantee to Core, check and return Core's certificate",
        requestBody: { required: true, content: { "application/json": { schema: ref("SettleRequest") } } },
        responses: {
          "200": json("Settled (a retry of the same signed guarantee is idempotent).", ref("SettleSuccess")),
          "400": json("The payment cannot succeed as sent (seller answers 402).", ref("SettleFailure")),
          "413": json("Body larger than 64 KiB (after decoding).", ref("SettleFailure")),
          "415": json(UNSUPPORTED_MEDIA, ref("SettleFailure")),
          "500": json(
            "Facilitator or Core at fault; the same payment may succeed later.",
            ref("SettleFailure"),
          ),
        },
      },
    },
    "/supported": {
      get: {
        summary: "Payment kinds: `svc-credit` on Core's network, once per x402 version",
        responses: {
          "200": json("Supported kinds.", ref("Supported")),
          "500": error("Core's public params cannot be loaded.", ["core_unavailable", "internal_error"]),
        },
      },
    },
    "/health": {
      get: {
        summary: "Core answers now and its public params load",
        responses: {
          "200": json("Available.", object({ status: { const: "ok" } })),
          "503": json(
            "Core or its params unavailable.",
            object({ status: { const: "fail" }, error: { type: "string" } }),
          ),
        },
      },
    },
    "/openapi.json": {
      get: {
        summary: "This document",
        responses: { "200": json("OpenAPI 3.1 document.", { type: "object" }) },
      },
    },
  },
} as const;
