/**
 * OpenAPI 3.1 description of the facilitator's HTTP API (docs/facilitator.md), generated: its shapes are
 * the sdk's schemas (`sdk/api-facilitator.ts`), this file adds the paths, status codes and wording.
 * Served at `GET /openapi.json`; test/facilitator/openapi.test.ts checks real responses against it.
 */
import { FACILITATOR_API_SCHEMAS } from "../../sdk/api-facilitator";
import { openApiComponents } from "../../sdk/openapi";

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
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
    schemas: openApiComponents(FACILITATOR_API_SCHEMAS),
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
