/**
 * OpenAPI 3.1 description of Core's HTTP API (docs/operator-api.md, docs/operator-auth.md), generated:
 * every request and answer shape is a schema of the sdk (`sdk/api-*.ts`, collected by `sdk/core-api.ts`)
 * whose inferred type the routes answer with; this file adds what only HTTP knows (paths, parameters,
 * status codes, error codes, wording). Served at `GET /openapi.json`; test/operator/openapi.test.ts checks
 * real responses against it.
 */

import { CORE_API_SCHEMAS, type CoreSchemaName } from "../../sdk/core-api";
import { openApiComponents } from "../../sdk/openapi";
import { DEFAULT_DELIVERY_PAGE, MAX_DELIVERY_PAGE } from "./webhook-admin-routes";
import { DEFAULT_CYCLE_PAGE, MAX_CYCLE_PAGE } from "./cycle-routes";

type Schema = Record<string, unknown>;

const ref = (name: CoreSchemaName): Schema => ({ $ref: `#/components/schemas/${name}` });

/** An error answer whose `code` is one of `codes`. */
/** The common error shape, its `code` limited to `codes` when given. */
function errorSchema(codes?: readonly string[]): Schema {
  return codes
    ? {
        allOf: [ref("Error")],
        type: "object",
        properties: { code: { enum: [...codes] } },
      }
    : ref("Error");
}

function errorResponse(description: string, codes?: readonly string[]): Schema {
  return { description, content: { "application/json": { schema: errorSchema(codes) } } };
}

function jsonResponse(description: string, schema: Schema, headers?: Schema): Schema {
  return { description, content: { "application/json": { schema } }, ...(headers ? { headers } : {}) };
}

/** 400s of the body parser, before any route runs (runtime/client-errors.ts). */
const BODY_400_CODES = ["malformed_json", "undecodable_body"] as const;
/** 400 of the router for a path parameter that is not valid percent-encoding. */
const PATH_400_CODES = ["malformed_path"] as const;

const BEARER_FAILURE_CODES = ["missing_token", "invalid_token", "token_expired"] as const;
const COMMON_ERRORS = {
  "413": errorResponse("Body larger than 64 kB.", ["body_too_large"]),
  "415": errorResponse(
    "`Content-Encoding` other than identity, gzip, deflate or br; charset other than UTF-8.",
    ["unsupported_encoding", "unsupported_charset"],
  ),
  "500": jsonResponse(
    "Unexpected failure (`internal_error`, details go to the log only), or the database is unavailable " +
      "(`store_unavailable`: PostgreSQL down or restarting; retry later).",
    { oneOf: [ref("InternalError"), ref("StoreUnavailable")] },
  ),
};
/** The 500 of every route, alone (routes without a body meet no 413 / 415). */
const SERVER_ERROR = { "500": COMMON_ERRORS["500"] };
const UNAUTHORIZED = {
  ...errorResponse("Bearer token missing, invalid or expired.", BEARER_FAILURE_CODES),
  headers: {
    "WWW-Authenticate": {
      description: 'Bearer challenge, e.g. `Bearer realm="surety"`.',
      schema: { type: "string" },
    },
  },
};
const jsonBody = (schema: Schema): Schema => ({
  required: true,
  content: { "application/json": { schema } },
});

/** The one query or path parameter shapes the routes share. */
const inPath = (name: string, schema: CoreSchemaName): Schema => ({
  name,
  in: "path",
  required: true,
  schema: ref(schema),
});
const inQuery = (name: string, schema: CoreSchemaName): Schema => ({
  name,
  in: "query",
  required: false,
  schema: ref(schema),
});
const limitParameter = (maximum: number, byDefault: number): Schema => ({
  name: "limit",
  in: "query",
  required: false,
  schema: { type: "integer", minimum: 1, maximum, default: byDefault },
});
const CURSOR_PARAMETER = {
  name: "cursor",
  in: "query",
  required: false,
  schema: { type: "string" },
  description: "`next_cursor` of the previous page.",
};
const CYCLE_ID_PARAMETER = {
  name: "id",
  in: "path",
  required: true,
  schema: { type: "string", pattern: "^[1-9][0-9]*$" },
};
/** An operation that needs a bearer token. */
const BEARER = { security: [{ bearer: [] }] };

/** Admin routes: a bearer token (401) of a wallet in `SURETY_ADMIN_WALLETS` (403). */
const ADMIN_FAILURES = {
  "401": UNAUTHORIZED,
  "403": errorResponse("The caller's wallet is not in `SURETY_ADMIN_WALLETS`.", ["not_admin"]),
};
/** A route behind a bearer token: its security and the 401 of a missing, invalid or expired token. */
const authenticated = (operation: Schema & { responses: Schema }): Schema => ({
  ...BEARER,
  ...operation,
  responses: { ...operation.responses, "401": UNAUTHORIZED },
});
/** An admin route: tagged, behind a bearer token of an admin wallet, with the 500 every route has. */
const admin = (operation: Schema & { responses: Schema }): Schema => ({
  tags: ["admin"],
  ...BEARER,
  ...operation,
  responses: { ...operation.responses, ...ADMIN_FAILURES, ...SERVER_ERROR },
});
const WEBHOOK_ID_PARAMETER = {
  name: "id",
  in: "path",
  required: true,
  schema: { type: "string" },
  description: "The subscription id (`whk_…` for API-made ones, the configured id otherwise).",
};
const EVENT_ID_PARAMETER = {
  name: "event_id",
  in: "path",
  required: true,
  schema: { type: "string", pattern: "^evt_[0-9a-z_]{1,64}$" },
  description: "The event id (`evt_…`) of one of the subscription's deliveries.",
};
const WEBHOOK_NOT_FOUND = errorResponse("No subscription with that id.", ["webhook_not_found"]);
const WEBHOOK_ID_MALFORMED = errorResponse("The id is not valid percent-encoding.", PATH_400_CODES);

const ISSUANCE_400_CODES = [
  "invalid_request",
  ...BODY_400_CODES,
  "unsupported_version",
  "unsupported_asset",
  "untrusted_validation_registry",
  "validation_chain_id_mismatch",
  "validation_request_hash_mismatch",
  "invalid_signature",
  "timestamp_too_old",
  "timestamp_in_future",
  "validation_deadline_passed",
  "validation_deadline_too_far",
  "insufficient_collateral",
  "signing_key_change_pending",
] as const;

/**
 * 500 of `POST /core/guarantees` with a cause: the chain cannot be judged now, or what is issued could not
 * be committed (docs/operator-api.md).
 */
const ISSUANCE_UNAVAILABLE_CODES = [
  "chain_time_unavailable",
  "indexer_halted",
  "indexer_stale",
  "indexer_lagging",
  "indexer_starting",
  "signature_check_unavailable",
  "commit_bond_short",
  "commit_bond_unknown",
  "issuance_overloaded",
  "commit_deadline_at_risk",
] as const;

export const CORE_OPENAPI = {
  openapi: "3.1.0",
  jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
  info: {
    title: "Surety Core (operator) API",
    version: "0.1.0",
    description:
      "Collateral-backed payment guarantees: sign-in (SIWE), public parameters, guarantee issuance and reads, " +
      "V2 finalization, clearing cycles and proofs, withdrawals, webhook subscriptions (admin). " +
      "Every error body is `{error, code}`; `error` names the field at fault for bad input. " +
      "Every response carries `X-Request-Id`.",
  },
  servers: [{ url: "http://127.0.0.1:8080", description: "devnet default" }],
  tags: [
    { name: "auth" },
    { name: "public" },
    { name: "guarantees" },
    { name: "clearing" },
    { name: "admin" },
    { name: "ops" },
  ],
  components: {
    securitySchemes: {
      bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT (HS256) from POST /auth/verify" },
    },
    schemas: openApiComponents(CORE_API_SCHEMAS),
  },
  paths: {
    "/auth/nonce": {
      post: {
        tags: ["auth"],
        summary: "A single-use SIWE nonce and the EIP-4361 template to sign",
        requestBody: jsonBody(ref("NonceRequest")),
        responses: {
          "200": jsonResponse("Nonce and template.", ref("NonceResponse")),
          "400": errorResponse("`address` missing or not an address; malformed JSON.", [
            "invalid_request",
            ...BODY_400_CODES,
          ]),
          ...COMMON_ERRORS,
        },
      },
    },
    "/auth/verify": {
      post: {
        tags: ["auth"],
        summary: "Sign in: verify the signed SIWE message and issue tokens",
        requestBody: jsonBody(ref("SignInRequest")),
        responses: {
          "200": jsonResponse("Access and refresh tokens.", ref("TokenResponse")),
          "400": errorResponse("Malformed body.", ["invalid_request", ...BODY_400_CODES]),
          "401": errorResponse("Message, signature or nonce refused.", [
            "invalid_siwe_message",
            "siwe_address_mismatch",
            "siwe_domain_mismatch",
            "siwe_uri_mismatch",
            "siwe_chain_id_mismatch",
            "siwe_statement_mismatch",
            "siwe_not_yet_valid",
            "siwe_message_expired",
            "invalid_signature",
            "nonce_unknown",
            "nonce_used",
            "nonce_expired",
            "nonce_address_mismatch",
          ]),
          ...COMMON_ERRORS,
        },
      },
    },
    "/auth/refresh": {
      post: {
        tags: ["auth"],
        summary: "Rotate a refresh token into a new token pair",
        requestBody: jsonBody(ref("RefreshTokenRequest")),
        responses: {
          "200": jsonResponse(
            "A new token pair; the presented refresh token stops working.",
            ref("TokenResponse"),
          ),
          "400": errorResponse("`refresh_token` missing or not a string.", [
            "invalid_request",
            ...BODY_400_CODES,
          ]),
          "401": errorResponse("Refresh token refused (a reused one revokes its whole session).", [
            "invalid_refresh_token",
            "refresh_token_reused",
            "refresh_token_revoked",
            "refresh_token_expired",
          ]),
          ...COMMON_ERRORS,
        },
      },
    },
    "/auth/logout": {
      post: {
        tags: ["auth"],
        summary: "Revoke the refresh token's session (idempotent)",
        requestBody: jsonBody(ref("RefreshTokenRequest")),
        responses: {
          "204": { description: "Revoked (also for unknown or already revoked tokens)." },
          "400": errorResponse("`refresh_token` missing or not a string.", [
            "invalid_request",
            ...BODY_400_CODES,
          ]),
          ...COMMON_ERRORS,
        },
      },
    },
    "/core/tokens": {
      get: {
        tags: ["public"],
        summary:
          "ERC-20 collateral assets of the active deployment (ETH, the zero address, is always supported)",
        responses: { "200": jsonResponse("Tokens.", ref("Tokens")), "500": COMMON_ERRORS["500"] },
      },
    },
    "/core/public-params": {
      get: {
        tags: ["public"],
        summary: "Everything a payer signs against and a verifier checks with",
        responses: {
          "200": jsonResponse("Public parameters.", ref("PublicParams")),
          ...SERVER_ERROR,
        },
      },
    },
    "/core/health": {
      get: {
        tags: ["public"],
        summary: "Store and chain RPC probed on every call; whether the books follow the chain",
        responses: {
          "200": jsonResponse("Healthy.", {
            allOf: [ref("Health")],
            type: "object",
            properties: { status: { const: "ok" } },
          }),
          "503": jsonResponse(
            "A dependency is down, or the books cannot follow the chain (`fail` for each failing part).",
            {
              allOf: [ref("Health")],
              type: "object",
              properties: { status: { const: "fail" } },
            },
          ),
        },
      },
    },
    "/core/guarantees": {
      post: authenticated({
        tags: ["guarantees"],
        summary: "Verify a payer-signed guarantee, lock collateral, return Core's BLS certificate",
        requestBody: jsonBody(ref("SignedGuaranteeRequest")),
        responses: {
          "200": jsonResponse("Issued.", ref("Certificate")),
          "400": errorResponse("Claims, policy, signature or collateral refused.", ISSUANCE_400_CODES),
          "403": errorResponse("The caller may not issue for `recipient_address`.", [
            "not_authorized_for_recipient",
          ]),
          "409": jsonResponse(
            "The guarantee identity (user, req_id) was issued before.",
            ref("DuplicateGuarantee"),
          ),
          ...COMMON_ERRORS,
          "500": {
            description:
              "Core could not issue the guarantee: an unexpected failure (`internal_error`, details in the log " +
              "only), or Core's books cannot follow the chain now (indexer halted by a deep reorg, stale, lagging " +
              "or starting), or (V2 only, `chain_time_unavailable`) Core has not indexed a block yet to judge the " +
              "validation deadline by, or the database is unavailable (`store_unavailable`), or the operator bond " +
              "is below the ClearingHouse floor (`commit_bond_*`), or the clearing commits owed might land after " +
              "the grace-period budget (`commit_deadline_at_risk`), or the issuance was shed by admission control " +
              "(`issuance_overloaded`, with `Retry-After`: this process already runs its bound of issuances at once, " +
              "`SURETY_ISSUANCE_MAX_IN_FLIGHT`, so covers, commits and lease renewals go first). Nothing is issued or " +
              "locked (for `store_unavailable`: unless the connection broke during the commit, which a retry of the " +
              "same body tells: 409 with the stored certificate); `GET /core/health` shows why; retry later.",
            content: {
              "application/json": {
                schema: {
                  oneOf: [
                    ref("InternalError"),
                    ref("StoreUnavailable"),
                    errorSchema(ISSUANCE_UNAVAILABLE_CODES),
                  ],
                },
              },
            },
          },
        },
      }),
      get: authenticated({
        tags: ["guarantees"],
        summary: "Guarantees by payer, recipient, state and asset, newest first, paginated",
        description:
          "A caller sees the guarantees it is payer or recipient of (it must name itself in `payer` or " +
          "`recipient`); facilitators and admin wallets see all, with any filter.",
        parameters: [
          inQuery("payer", "Address"),
          inQuery("recipient", "Address"),
          inQuery("state", "GuaranteeState"),
          inQuery("asset", "Address"),
          limitParameter(500, 50),
          CURSOR_PARAMETER,
        ],
        responses: {
          "200": jsonResponse(
            "One page, newest first; `next_cursor` is null on the last.",
            ref("GuaranteeList"),
          ),
          "400": errorResponse("A parameter malformed or repeated (the message names it).", [
            "invalid_request",
          ]),
          "403": errorResponse("The caller named neither itself as payer nor as recipient.", [
            "not_authorized_for_guarantees",
          ]),
          ...SERVER_ERROR,
        },
      }),
    },
    "/core/guarantees/{id}/timeline": {
      get: authenticated({
        tags: ["guarantees"],
        summary:
          "What moved a guarantee, with the transactions (payer, recipient, facilitators, admin wallets)",
        parameters: [inPath("id", "Bytes32")],
        responses: {
          "200": jsonResponse(
            "Its steps, oldest first; the last is the state it is in.",
            ref("GuaranteeTimeline"),
          ),
          "400": errorResponse("Malformed id.", ["invalid_request", ...PATH_400_CODES]),
          "404": errorResponse("Unknown, or not visible to the caller.", ["guarantee_not_found"]),
          ...SERVER_ERROR,
        },
      }),
    },
    "/core/guarantees/{id}": {
      get: authenticated({
        tags: ["guarantees"],
        summary: "One guarantee, visible to its payer, its recipient, facilitators and admin wallets",
        parameters: [inPath("id", "Bytes32")],
        responses: {
          "200": jsonResponse("The guarantee.", ref("Guarantee")),
          "400": errorResponse("Malformed id.", ["invalid_request", ...PATH_400_CODES]),
          "404": errorResponse("Unknown, or not visible to the caller.", ["guarantee_not_found"]),
          ...SERVER_ERROR,
        },
      }),
    },
    "/core/users": {
      get: admin({
        summary: "Every payer's non-empty balances, by user then asset, paginated (admin wallets)",
        parameters: [inQuery("asset", "Address"), limitParameter(500, 100), CURSOR_PARAMETER],
        responses: {
          "200": jsonResponse("One page; `next_cursor` is null on the last.", ref("CollateralList")),
          "400": errorResponse("`asset`, `limit` or `cursor` malformed or repeated.", ["invalid_request"]),
        },
      }),
    },
    "/core/users/{address}/balances": {
      get: authenticated({
        tags: ["guarantees"],
        summary: "Core's view of a user's collateral per asset",
        parameters: [inPath("address", "Address")],
        responses: {
          "200": jsonResponse("ETH, then the deployment's tokens, then other assets.", ref("Balances")),
          "400": errorResponse("Malformed address.", ["invalid_request", ...PATH_400_CODES]),
          "403": errorResponse("Only the user, facilitators and admin wallets may read.", [
            "not_authorized_for_user",
          ]),
          ...SERVER_ERROR,
        },
      }),
    },
    "/core/recipients/{address}/guarantees": {
      get: authenticated({
        tags: ["guarantees"],
        summary: "A recipient's guarantees, oldest first, paginated",
        parameters: [inPath("address", "Address"), limitParameter(500, 50), CURSOR_PARAMETER],
        responses: {
          "200": jsonResponse("One page; `next_cursor` is null on the last.", ref("RecipientGuarantees")),
          "400": errorResponse("`limit`, `cursor` or `address` malformed.", [
            "invalid_request",
            ...PATH_400_CODES,
          ]),
          "403": errorResponse("Only the recipient and facilitators may read.", [
            "not_authorized_for_recipient",
          ]),
          ...SERVER_ERROR,
        },
      }),
    },
    "/core/guarantees/{id}/finalize": {
      post: authenticated({
        tags: ["guarantees"],
        summary: "The payer finalizes its V2 guarantee (PENDING_VALIDATION or DISPUTED → FINALIZED_PAYABLE)",
        parameters: [inPath("id", "Bytes32")],
        requestBody: jsonBody(ref("FinalizeRequest")),
        responses: {
          "200": jsonResponse(
            "The guarantee, now FINALIZED_PAYABLE (enters the next cycle).",
            ref("Guarantee"),
          ),
          "400": errorResponse(
            "Malformed id; malformed JSON body; `signature` missing or not the payer's Finalization signature.",
            ["invalid_request", "invalid_finalization_signature", ...BODY_400_CODES, ...PATH_400_CODES],
          ),
          "403": errorResponse("The caller is the recipient, not the payer.", ["not_payer"]),
          "404": errorResponse("Unknown, or the caller is neither payer nor recipient.", [
            "guarantee_not_found",
          ]),
          "409": errorResponse("A V1 guarantee, or a V2 one in another state.", ["invalid_state"]),
          ...COMMON_ERRORS,
        },
      }),
    },
    "/core/users/{address}/withdrawals": {
      get: authenticated({
        tags: ["clearing"],
        summary: "A user's withdrawals and what Core's books let it withdraw, per asset",
        parameters: [inPath("address", "Address")],
        responses: {
          "200": jsonResponse("Withdrawable amounts and withdrawal requests.", ref("Withdrawals")),
          "400": errorResponse("Malformed address.", ["invalid_request", ...PATH_400_CODES]),
          "403": errorResponse("Only the user, facilitators and admin wallets may read.", [
            "not_authorized_for_user",
          ]),
          ...SERVER_ERROR,
        },
      }),
    },
    "/core/cycles": {
      get: {
        tags: ["clearing"],
        summary: "Committed cycles (committed, finalized, vetoed), newest first, paginated",
        parameters: [
          limitParameter(50, 10),
          {
            name: "before",
            in: "query",
            required: false,
            schema: { type: "string", pattern: "^[1-9][0-9]*$" },
            description: "Only cycles with a lower id: the `next_cursor` of the previous page.",
          },
        ],
        responses: {
          "200": jsonResponse("One page of cycles, each as `GET /core/cycles/{id}`.", ref("Cycles")),
          "400": errorResponse("`limit` or `before` malformed or repeated.", ["invalid_request"]),
          ...SERVER_ERROR,
        },
      },
    },
    "/core/clearing/schedule": {
      get: {
        tags: ["clearing"],
        summary: "The clearing schedule in chain time: next cutoff, commit due, a cycle under way",
        responses: {
          "200": jsonResponse("Core's schedule now.", ref("ClearingSchedule")),
          ...SERVER_ERROR,
        },
      },
    },
    "/core/cycles/{id}": {
      get: {
        tags: ["clearing"],
        summary: "A clearing cycle seen committed on chain: root, deadlines, totals, debts, claims",
        parameters: [CYCLE_ID_PARAMETER],
        responses: {
          "200": jsonResponse("The cycle.", ref("Cycle")),
          "400": errorResponse("Malformed cycle id.", ["invalid_request", ...PATH_400_CODES]),
          "404": errorResponse("No cycle with that id was seen committed.", ["cycle_not_found"]),
          ...SERVER_ERROR,
        },
      },
    },
    "/core/cycles/{id}/participants/{address}/proof": {
      get: {
        tags: ["clearing"],
        summary: "A participant's net positions in a committed cycle, with Merkle proofs and claim arguments",
        parameters: [CYCLE_ID_PARAMETER, inPath("address", "Address")],
        responses: {
          "200": jsonResponse("One position per asset with a non-zero net.", ref("CycleProof")),
          "400": errorResponse("Malformed cycle id or address.", ["invalid_request", ...PATH_400_CODES]),
          "404": errorResponse("No such committed cycle, or no position of the participant in it.", [
            "cycle_not_found",
            "position_not_found",
          ]),
          ...SERVER_ERROR,
        },
      },
    },
    "/core/cycles/{id}/guarantees": {
      get: {
        tags: ["clearing"],
        summary:
          "A payer's leaves of a committed cycle's guarantees tree, with Merkle proofs (for proveDoubleListing " +
          "and V1 reserves)",
        parameters: [
          CYCLE_ID_PARAMETER,
          { name: "payer", in: "query", required: true, schema: ref("Address") },
        ],
        responses: {
          "200": jsonResponse("The payer's leaves and proofs.", ref("CycleGuarantees")),
          "400": errorResponse("Malformed cycle id; `payer` missing, repeated or malformed.", [
            "invalid_request",
            ...PATH_400_CODES,
          ]),
          "404": errorResponse(
            "No such committed cycle, or Core cannot serve its tree (a cycle Core did not plan, or one whose " +
              "guarantees no longer rebuild its committed root).",
            ["cycle_not_found", "guarantees_not_available"],
          ),
          ...SERVER_ERROR,
        },
      },
    },
    "/core/cycles/{id}/debits/{payer}": {
      get: {
        tags: ["clearing"],
        summary:
          "An account's sum trees in a committed cycle, outgoing and incoming: summary, positions and proofs " +
          "(what disputeGuarantee disputes, answerDispute and revealSummary prove, claimNetCredit and " +
          'Vault.releaseListedReserve take; docs/clearing.md "Disputes", "Credits bound to guarantees")',
        parameters: [CYCLE_ID_PARAMETER, inPath("payer", "Address")],
        responses: {
          "200": jsonResponse("The payer's trees.", ref("CycleDebits")),
          "400": errorResponse("Malformed cycle id or payer.", ["invalid_request", ...PATH_400_CODES]),
          "404": errorResponse(
            "No such committed cycle, or Core cannot serve its trees (a cycle Core did not plan, or one whose " +
              "guarantees no longer rebuild its committed root).",
            ["cycle_not_found", "guarantees_not_available"],
          ),
          ...SERVER_ERROR,
        },
      },
    },
    "/core/admin/webhooks": {
      post: admin({
        summary: "Add a webhook subscription (the answer shows its secret, once)",
        requestBody: jsonBody(ref("NewWebhookSubscription")),
        responses: {
          "201": jsonResponse("Created.", ref("CreatedWebhookSubscription")),
          "400": errorResponse("A field refused (the message names it); malformed JSON.", [
            "invalid_request",
            ...BODY_400_CODES,
          ]),
          ...COMMON_ERRORS,
        },
      }),
      get: admin({
        summary: "Every subscription, configured and API-made (secrets never shown), with its backlog",
        responses: {
          "200": jsonResponse("The subscriptions.", ref("WebhookSubscriptions")),
        },
      }),
    },
    "/core/admin/webhooks/{id}": {
      get: admin({
        summary: "One subscription (without its secret)",
        parameters: [WEBHOOK_ID_PARAMETER],
        responses: {
          "200": jsonResponse("The subscription.", ref("WebhookSubscription")),
          "400": WEBHOOK_ID_MALFORMED,
          "404": WEBHOOK_NOT_FOUND,
        },
      }),
      delete: admin({
        summary: "Remove an API-made subscription and its deliveries",
        parameters: [WEBHOOK_ID_PARAMETER],
        responses: {
          "204": { description: "Removed, with its pending and past deliveries." },
          "400": WEBHOOK_ID_MALFORMED,
          "404": WEBHOOK_NOT_FOUND,
          "409": errorResponse("A configured subscription: remove it from `SURETY_WEBHOOKS`.", [
            "configured_webhook",
          ]),
        },
      }),
    },
    "/core/admin/webhooks/{id}/deliveries": {
      get: admin({
        summary: "A subscription's deliveries and their status, newest first, paginated",
        parameters: [
          WEBHOOK_ID_PARAMETER,
          {
            name: "status",
            in: "query",
            required: false,
            schema: ref("WebhookDeliveryStatus"),
          },
          limitParameter(MAX_DELIVERY_PAGE, DEFAULT_DELIVERY_PAGE),
          CURSOR_PARAMETER,
        ],
        responses: {
          "200": jsonResponse("One page; `next_cursor` is null on the last.", ref("WebhookDeliveries")),
          "400": errorResponse("`status`, `limit` or `cursor` malformed (the message names it).", [
            "invalid_request",
            ...PATH_400_CODES,
          ]),
          "404": WEBHOOK_NOT_FOUND,
        },
      }),
    },
    "/core/admin/webhooks/{id}/deliveries/{event_id}": {
      get: admin({
        summary: "One delivery: its attempts so far and the event's payload",
        parameters: [WEBHOOK_ID_PARAMETER, EVENT_ID_PARAMETER],
        responses: {
          "200": jsonResponse("The delivery and its event.", ref("WebhookDeliveryDetail")),
          "400": errorResponse("Malformed event id.", ["invalid_request", ...PATH_400_CODES]),
          "404": errorResponse("No such subscription, or no delivery of that event to it.", [
            "webhook_not_found",
            "delivery_not_found",
          ]),
        },
      }),
    },
    "/core/admin/webhooks/{id}/deliveries/{event_id}/retry": {
      post: admin({
        summary: "Send a failed (or waiting) delivery again now; its attempt count is kept",
        parameters: [WEBHOOK_ID_PARAMETER, EVENT_ID_PARAMETER],
        responses: {
          "200": jsonResponse("The delivery, pending and due now.", ref("WebhookDeliveryAction")),
          "400": errorResponse("Malformed event id.", ["invalid_request", ...PATH_400_CODES]),
          "404": errorResponse("No such subscription, or no delivery of that event to it.", [
            "webhook_not_found",
            "delivery_not_found",
          ]),
          "409": errorResponse("The delivery is delivered or cancelled.", ["delivery_not_retryable"]),
        },
      }),
    },
    "/core/admin/webhooks/{id}/test": {
      post: admin({
        summary: "Queue a `webhook.test` event to this subscription alone",
        parameters: [WEBHOOK_ID_PARAMETER],
        responses: {
          "201": jsonResponse(
            "The test event's delivery, pending and due now.",
            ref("WebhookDeliveryAction"),
          ),
          "400": WEBHOOK_ID_MALFORMED,
          "404": WEBHOOK_NOT_FOUND,
        },
      }),
    },
    "/console/api/config": {
      get: {
        tags: ["console"],
        summary: "The console's settings: the block explorer it links to",
        responses: { "200": jsonResponse("The settings.", ref("ConsoleConfig")) },
      },
    },
    "/console/api/session": {
      get: authenticated({
        tags: ["console"],
        summary: "Who the bearer is: its address, whether it is an admin wallet or a facilitator",
        responses: {
          "200": jsonResponse("Answered for every signed-in wallet (no 403).", ref("ConsoleSession")),
        },
      }),
    },
    "/console/api/cycles": {
      get: {
        tags: ["console"],
        summary: "Committed cycles, newest first, with each one's cutoff and the total",
        parameters: [
          limitParameter(MAX_CYCLE_PAGE, DEFAULT_CYCLE_PAGE),
          {
            name: "before",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 1 },
            description: "Only cycles with a lower id: the `next_cursor` of the previous page.",
          },
        ],
        responses: {
          "200": jsonResponse("One page; `next_cursor` is null on the last.", ref("ConsoleCycleList")),
          "400": errorResponse("`limit` or `before` malformed or repeated.", ["invalid_request"]),
          ...SERVER_ERROR,
        },
      },
    },
    "/console/api/guarantees": {
      get: authenticated({
        tags: ["console"],
        summary: "Search guarantees, newest first, with the total and a cursor",
        parameters: [
          {
            name: "q",
            in: "query",
            required: false,
            schema: { type: "string" },
            description:
              "A guarantee id, a transaction hash (a cycle's commit, a debt's payment, cover or void, a claim: that cycle's guarantees), or an address (payer or recipient).",
          },
          inQuery("payer", "Address"),
          inQuery("recipient", "Address"),
          inQuery("state", "GuaranteeState"),
          inQuery("asset", "Address"),
          { name: "cycle", in: "query", required: false, schema: { type: "integer", minimum: 1 } },
          {
            name: "from",
            in: "query",
            required: false,
            schema: { type: "string" },
            description: "Issued at or after: ISO 8601 (UTC unless a zone is given) or unix seconds.",
          },
          {
            name: "to",
            in: "query",
            required: false,
            schema: { type: "string" },
            description: "Issued at or before (to the second), as `from`.",
          },
          limitParameter(500, 50),
          { name: "cursor", in: "query", required: false, schema: { type: "string" } },
        ],
        responses: {
          "200": jsonResponse("One page of the search.", ref("GuaranteeSearch")),
          "400": errorResponse(
            "A parameter malformed or repeated, or `from` after `to` (the message names it).",
            ["invalid_request"],
          ),
          "403": errorResponse(
            "Neither payer nor recipient is the caller (facilitators and admins excepted).",
            ["not_authorized_for_guarantees"],
          ),
          ...SERVER_ERROR,
        },
      }),
    },
    "/console/api/users/{address}/ledger": {
      get: authenticated({
        tags: ["console"],
        summary: "A payer's collateral ledger, newest first",
        parameters: [inPath("address", "Address"), inQuery("asset", "Address")],
        responses: {
          "200": jsonResponse("The ledger.", ref("Ledger")),
          "400": errorResponse("Malformed address or asset.", ["invalid_request", ...PATH_400_CODES]),
          "403": errorResponse("Only the user, facilitators and admin wallets may read.", [
            "not_authorized_for_user",
          ]),
          ...SERVER_ERROR,
        },
      }),
    },
    "/metrics": {
      get: {
        tags: ["ops"],
        summary: "Prometheus metrics (restrict by network)",
        responses: {
          "200": {
            description: "Prometheus text exposition format.",
            content: { "text/plain": { schema: { type: "string" } } },
          },
        },
      },
    },
    "/openapi.json": {
      get: {
        tags: ["ops"],
        summary: "This document",
        responses: { "200": jsonResponse("OpenAPI 3.1 document.", { type: "object" }) },
      },
    },
  },
} as const;
