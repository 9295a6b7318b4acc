/**
 * OpenAPI 3.1 description of Core's HTTP API (docs/operator-api.md,
 * docs/operator-auth.md). Served at `GET /openapi.json`; the tests in
 * test/operator/openapi.test.ts check real responses against it, so a
 * change of a response shape must change this document too.
 */

import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE } from "../../sdk/webhooks";
import { LEDGER_ENTRY_KINDS } from "./console-api-routes";
import { WEBHOOK_DELIVERY_STATUSES } from "../store/repositories/webhooks";
import {
  ALL_EVENT_TYPES,
  MAX_DESCRIPTION_LENGTH,
  MAX_WEBHOOK_SECRET_LENGTH,
  MAX_WEBHOOK_URL_LENGTH,
  MIN_WEBHOOK_SECRET_LENGTH,
} from "../webhooks/subscriptions";
import { DEFAULT_DELIVERY_PAGE, MAX_DELIVERY_PAGE } from "./webhook-admin-routes";
import { DEFAULT_CYCLE_PAGE, MAX_CYCLE_PAGE } from "./cycle-routes";
import { GUARANTEE_STATES } from "../../sdk/guarantee-states";
import { HEALTH_CHECKS } from "../health";

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: "null" }] });
const object = (properties: Record<string, Schema>, required = Object.keys(properties)): Schema => ({
  type: "object",
  properties,
  required,
  additionalProperties: false,
});

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

/** Admin routes: a bearer token (401) of a wallet in `SURETY_ADMIN_WALLETS` (403). */
const ADMIN_FAILURES = {
  "401": UNAUTHORIZED,
  "403": errorResponse("The caller's wallet is not in `SURETY_ADMIN_WALLETS`.", ["not_admin"]),
};
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

/** `GET /core/cycles/{id}` (also each item of the cycle lists). */
const CYCLE_SCHEMA = object({
  cycle_id: { type: "integer", minimum: 1 },
  state: {
    enum: ["COMMITTED", "FINALIZED", "VETOED"],
    description: "VETOED: the guardian vetoed it; its guarantees are re-committed in a later cycle.",
  },
  planned_by_core: {
    type: "boolean",
    description:
      "False for a cycle committed on chain with the operator key that Core did not plan (a security " +
      "event): built from its events, guarantee_count 0, no proofs; its disputed debits are voided " +
      "against the bond at the answer deadline (docs/clearing.md).",
  },
  root: { ...ref("Bytes32"), description: "Merkle root committed on chain." },
  guarantees_root: {
    ...ref("Bytes32"),
    description:
      "Root of the cycle's guarantees (sdk/guarantee-tree.ts): what double listings and V1 reserves prove against.",
  },
  debits_root: {
    ...ref("Bytes32"),
    description:
      "Root over the accounts' summaries (sdk/debit-tree.ts `SummariesTree`: per asset a sum tree of their " +
      "net credits, then the list of asset tops): what claims and dispute answers prove against " +
      "(zero for a cycle whose commit Core has not seen announce it).",
  },
  challenge_deadline: {
    ...nullable(ref("DateTime")),
    description:
      "Debtors may dispute their debit's guarantees, and the guardian veto the cycle, until then; claims open " +
      "after it once the cycle's disputes are answered (or after answer_deadline).",
  },
  answer_deadline: {
    ...nullable(ref("DateTime")),
    description: "Challenges are answered until then; an unanswered one is voided after it.",
  },
  vetoed_at: nullable(ref("DateTime")),
  committed_at: nullable(ref("DateTime")),
  committed_block: nullable({ type: "integer", minimum: 0 }),
  commit_tx: nullable(ref("Bytes32")),
  payment_deadline: nullable(ref("DateTime")),
  default_deadline: nullable(ref("DateTime")),
  finalized_at: nullable(ref("DateTime")),
  guarantee_count: { type: "integer", minimum: 0 },
  totals: {
    type: "array",
    items: object({
      asset_address: ref("Address"),
      total_debit: ref("Uint"),
      total_credit: ref("Uint"),
    }),
  },
  debtors: {
    type: "array",
    items: object({
      asset_address: ref("Address"),
      debtor: ref("Address"),
      amount: ref("Uint"),
      status: { enum: ["OPEN", "PAID", "COVERED", "CHALLENGED", "ANSWERED", "VOIDED", "REFUNDED"] },
      covered: {
        ...nullable(ref("Uint")),
        description: "What arrived at the ClearingHouse for a COVERED debt; null otherwise.",
      },
    }),
  },
  claims: {
    type: "array",
    items: object({ asset_address: ref("Address"), participant: ref("Address"), amount: ref("Uint") }),
  },
});

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
    schemas: {
      Error: {
        type: "object",
        properties: { error: { type: "string" }, code: { type: "string" } },
        required: ["error", "code"],
        additionalProperties: false,
      },
      InternalError: object({ error: { const: "internal error" }, code: { const: "internal_error" } }),
      StoreUnavailable: object({
        error: { const: "the database is unavailable" },
        code: { const: "store_unavailable" },
      }),
      Address: { type: "string", pattern: "^0x[0-9a-fA-F]{40}$", description: "Any case in; EIP-55 out." },
      Uint: {
        type: "string",
        pattern: "^(0|[1-9][0-9]*)$",
        description: "Unsigned integer < 2^256, decimal.",
      },
      UintInput: {
        type: "string",
        pattern: "^([0-9]+|0x[0-9a-fA-F]+)$",
        description: "Unsigned integer < 2^256, decimal or 0x hex.",
      },
      Bytes32: { type: "string", pattern: "^0x[0-9a-fA-F]{64}$" },
      HexBytes: { type: "string", pattern: "^0x([0-9a-fA-F]{2})+$" },
      PayerSignature: {
        type: "string",
        pattern: "^0x([0-9a-fA-F]{2}){1,2048}$",
        description:
          "1 to 2048 bytes on the wire; only 65 bytes r‖s‖v verify: the payer's own signature, or for a contract wallet the EOA key it registered in the Vault (setGuaranteeSigner).",
      },
      UnixSeconds: { type: "integer", minimum: 0 },
      Certificate: object({
        claims: { ...ref("HexBytes"), description: "ABI-encoded certificate claims (docs/protocol.md)." },
        signature: {
          type: "string",
          pattern: "^0x[0-9a-fA-F]{96}$",
          description: "48-byte BLS G1 signature.",
        },
      }),
      ValidationPolicy: object(
        {
          validation_registry_address: ref("Address"),
          validator_address: ref("Address"),
          validator_agent_id: ref("UintInput"),
          min_validation_score: { type: "integer", minimum: 0, maximum: 100 },
          job_hash: ref("Bytes32"),
          required_validation_tag: { type: "string", maxLength: 256 },
          validation_deadline: ref("UnixSeconds"),
          validation_chain_id: { type: "integer", minimum: 1 },
          validation_request_hash: ref("Bytes32"),
        },
        [
          "validation_registry_address",
          "validator_address",
          "validator_agent_id",
          "min_validation_score",
          "job_hash",
          "required_validation_tag",
          "validation_deadline",
        ],
      ),
      ClaimsInput: {
        ...object(
          {
            version: { enum: [1, 2, "1", "2", "v1", "v2"] },
            user_address: ref("Address"),
            recipient_address: ref("Address"),
            req_id: ref("UintInput"),
            amount: ref("UintInput"),
            asset_address: ref("Address"),
            timestamp: ref("UnixSeconds"),
            validation_policy: nullable(ref("ValidationPolicy")),
          },
          ["version", "user_address", "recipient_address", "req_id", "amount", "asset_address", "timestamp"],
        ),
        description: "V2 requires `validation_policy`; V1 takes null or nothing.",
      },
      Claims: object({
        version: { enum: [1, 2] },
        user_address: ref("Address"),
        recipient_address: ref("Address"),
        req_id: ref("Uint"),
        amount: ref("Uint"),
        asset_address: ref("Address"),
        timestamp: ref("UnixSeconds"),
        validation_policy: nullable(ref("ValidationPolicy")),
      }),
      SignedGuaranteeRequest: object({
        claims: ref("ClaimsInput"),
        signature: ref("PayerSignature"),
        scheme: { enum: ["eip712", "eip191"] },
      }),
      DuplicateGuarantee: {
        type: "object",
        properties: {
          error: { type: "string" },
          code: { const: "duplicate_guarantee" },
          certificate: ref("Certificate"),
        },
        required: ["error", "code"],
        additionalProperties: false,
        description: "`certificate` is present only when the request is byte-identical to the stored one.",
      },
      GuaranteeState: {
        enum: [
          "PENDING_VALIDATION",
          "FINALIZED_PAYABLE",
          "DISPUTED",
          "CANCELLED",
          "NETTED",
          "SETTLED",
          "REMUNERATED",
          "DEFAULT_REMUNERATED",
        ],
      },
      Guarantee: object({
        guarantee_id: ref("Bytes32"),
        state: ref("GuaranteeState"),
        claims: ref("Claims"),
        scheme: { enum: ["eip712", "eip191"] },
        signature: ref("PayerSignature"),
        certificate: ref("Certificate"),
        created_at: { type: "string", format: "date-time" },
        updated_at: { type: "string", format: "date-time" },
        cycle_id: nullable({
          type: "integer",
          minimum: 1,
          description:
            "The clearing cycle it is planned or netted in (GET /core/cycles/{id}); null until then",
        }),
        excluded_reason: nullable({
          type: "string",
          description:
            "Why clearing will not net it (e.g. consumed on chain before its cycle); null normally",
        }),
        validation_request_hash: nullable({
          ...ref("Bytes32"),
          description:
            "V2: the ERC-8004 request hash the validator responds to on the ValidationRegistry; null for V1",
        }),
      }),
      Balance: object({
        asset_address: ref("Address"),
        symbol: nullable({ type: "string" }),
        decimals: nullable({ type: "integer", minimum: 0, maximum: 255 }),
        deposited: ref("Uint"),
        locked: ref("Uint"),
        pending_withdrawal: ref("Uint"),
        reserve_hold: {
          ...ref("Uint"),
          description:
            "What the payer's on-chain seller reserves hold beyond `locked`: Σ max(0, reserve − Core's lock of " +
            "its guarantee), i.e. reserves of guarantees Core no longer locks (cancelled, remunerated, netted).",
        },
        available: {
          ...ref("Uint"),
          description:
            "(deposited − pending_withdrawal) × collateral factor − locked − reserve_hold (0 if negative).",
        },
        collateral_factor_bps: { type: "integer", minimum: 0, maximum: 10000 },
      }),
      Balances: object({ user_address: ref("Address"), balances: { type: "array", items: ref("Balance") } }),
      RecipientGuarantees: object({
        recipient_address: ref("Address"),
        guarantees: { type: "array", items: ref("Guarantee") },
        next_cursor: nullable({ type: "string", minLength: 1 }),
      }),
      Tokens: object({
        chain_id: { type: "integer", minimum: 1 },
        tokens: {
          type: "array",
          items: object({
            symbol: { type: "string", minLength: 1 },
            address: ref("Address"),
            decimals: { type: "integer", minimum: 0, maximum: 255 },
          }),
        },
      }),
      PublicParams: object({
        public_key: {
          type: "array",
          items: { type: "integer", minimum: 0, maximum: 255 },
          minItems: 96,
          maxItems: 96,
          description: "Core's BLS12-381 G2 key, 96 compressed bytes.",
        },
        contract_address: ref("Address"),
        ethereum_http_rpc_url: { type: "string", format: "uri" },
        eip712_name: { type: "string" },
        eip712_version: { type: "string" },
        chain_id: { type: "integer", minimum: 1 },
        max_accepted_guarantee_version: { enum: [1, 2] },
        accepted_guarantee_versions: { type: "array", items: { enum: [1, 2] }, minItems: 1 },
        active_guarantee_domain_separator: ref("Bytes32"),
        trusted_validation_registries: { type: "array", items: ref("Address") },
        validation_hash_canonicalization_version: { const: "surety-validation-request-v1" },
        clearing_house_address: {
          ...ref("Address"),
          description: "The ClearingHouse (added to the spec's fields).",
        },
        protocol_timings: nullable({
          ...object({
            cycle_length_seconds: { type: "integer", minimum: 1 },
            commit_delay_seconds: { type: "integer", minimum: 0 },
            challenge_window_seconds: {
              type: "integer",
              minimum: 1,
              description: "W: challenges (and veto) until commit + W, answers until commit + 2W.",
            },
            payment_window_seconds: {
              type: "integer",
              minimum: 0,
              description: "P: the payment deadline is commit + 2W + P (it starts after the answer window).",
            },
            default_window_seconds: { type: "integer", minimum: 0 },
            withdrawal_grace_period_seconds: { type: "integer", minimum: 0 },
            confirmation_lag_seconds: {
              type: "integer",
              minimum: 0,
              description:
                "How far Core's view trails the chain head; counted in the grace-period invariant.",
            },
          }),
          description: "The Vault's `timings()` as Core knows them now; null before Core has read them.",
        }),
        latest_validation_deadline: nullable({
          ...ref("UnixSeconds"),
          description:
            "The latest V2 `validation_deadline` issuance accepts at the time of this response, counted from the " +
            "chain time Core has indexed (it moves forward as Core indexes blocks); null: no cap, or no block indexed yet.",
        }),
      }),
      Health: object(
        {
          status: { enum: ["ok", "fail"] },
          db: { enum: ["ok", "fail"] },
          chain_rpc: { enum: ["ok", "fail"] },
          indexer: {
            enum: ["ok", "fail", "off"],
            description:
              "`fail` while issuance is refused (see `chain_sync`); `off`: no indexer runs in this process.",
          },
          chain_sync: ref("ChainSync"),
          commit_bond: ref("CommitBond"),
          commit_deadline: ref("CommitDeadline"),
          leadership: ref("Leadership"),
          checks: {
            ...object(Object.fromEntries(HEALTH_CHECKS.map((c) => [c, { enum: ["ok", "warn", "off"] }]))),
            description:
              "Added, optional (docs/monitoring.md): each warning check, `warn` while it raises a warning, `off` " +
              "when this process has nothing to judge it by. A warning never changes `status` nor the HTTP status.",
          },
          warnings: {
            type: "array",
            description: "Added, optional: which checks warn and why; empty when none does.",
            items: ref("HealthWarning"),
          },
          bls_signer: {
            enum: ["blst", "noble"],
            description:
              "The BLS implementation signing certificates: `blst` (the native addon native/blst-minsig) or `noble` " +
              "(the pure-JavaScript fallback, about 40 certificates/s; Core starts on it only with SURETY_ALLOW_SLOW_BLS).",
          },
        },
        ["status", "db", "chain_rpc", "indexer", "chain_sync", "commit_bond", "leadership", "bls_signer"],
      ),
      HealthWarning: object({
        check: { enum: [...HEALTH_CHECKS] },
        subject: nullable({
          type: "string",
          description:
            "What it is about: a webhook subscription id, an asset, a cycle; null for Core as a whole.",
        }),
        reason: { type: "string", description: "Why, in words, with the figure and the threshold." },
        value: {
          type: "number",
          description: "The figure judged (seconds, blocks, basis points, base units).",
        },
        threshold: { type: "number", description: "The threshold it was judged against." },
      }),
      CommitBond: object({
        state: {
          enum: ["off", "ok", "short", "unknown"],
          description:
            "`short`: the clearing scheduler holds the next commit back because the operator bond is below the " +
            "ClearingHouse's floor (nothing is sent until `ClearingHouse.postBond` tops it up); `off`: nothing " +
            "is committed; `unknown`: the verdict published by the process or replica that runs the scheduler " +
            "is missing or stale. Issuance is refused while `short` (`commit_bond_short`) or `unknown` " +
            "(`commit_bond_unknown`); it does not change `status`.",
        },
        floor_bps: nullable({
          type: "integer",
          minimum: 0,
          maximum: 10000,
          description: "`ClearingHouse.bondFloorBps()` at the last check; null before one.",
        }),
        cycle_id: nullable({ type: "integer", minimum: 1, description: "The cycle last checked." }),
        assets: {
          type: "array",
          description: "Each asset of that cycle with a non-zero requirement.",
          items: object({
            asset: ref("Address"),
            bond: { ...ref("Uint"), description: "`ClearingHouse.bondOf(asset)` at the check, base units." },
            required: { ...ref("Uint"), description: "ceil(total debit × floor_bps / 10000), base units." },
            short: { type: "boolean" },
          }),
        },
        since: nullable({ ...ref("DateTime"), description: "Since when the state holds (wall clock)." }),
      }),
      CommitDeadline: {
        ...object({
          state: {
            enum: ["off", "ok", "at_risk"],
            description:
              "`at_risk`: the clearing commits Core owes might land after cutoff + commitDelay + " +
              "confirmationLag (the grace-period budget), or the guarantees waiting exceed what the commits " +
              "after the next cutoff take in time; issuance is refused (`commit_deadline_at_risk`) until it " +
              "clears. `off`: not judged here (no scheduler, no timings yet, or the published verdict is " +
              "stale: then `commit_bond` reads `unknown`).",
          },
          deadline: nullable({
            ...ref("DateTime"),
            description: "Chain time by which the earliest owed commit must land; null: none owed.",
          }),
          cutoff: nullable({ ...ref("DateTime"), description: "The cutoff of that owed work." }),
          commits_owed: { type: "integer", minimum: 0 },
          waiting: {
            type: "integer",
            minimum: 0,
            description: "Guarantees waiting for the next cutoff (counted up to capacity + 1).",
          },
          capacity: nullable({
            type: "integer",
            minimum: 0,
            description: "Guarantees the commits after one cutoff take in time.",
          }),
          seconds_per_commit: {
            type: "integer",
            minimum: 0,
            description: "Chain seconds one commit takes, as estimated from the recent ones.",
          },
          reason: nullable({ type: "string" }),
          since: nullable({ ...ref("DateTime"), description: "Since when the state holds (wall clock)." }),
        }),
        description: 'Added, optional (docs/clearing.md, "Cadence and the commit deadline").',
      },
      Leadership: object({
        role: {
          enum: ["sole", "leader", "follower", "never"],
          description:
            "This replica's part in the background work (indexer, clearing, keeper, V2 lifecycle, webhooks): " +
            "`sole` on a store nobody else shares (SQLite), `leader` / `follower` among replicas on one PostgreSQL " +
            "database (docs/scale-out.md), `never` for a process that only serves the API.",
        },
        replica: { type: "string", description: "This replica's id (name/pid/random, unique per start)." },
        leader: nullable({
          type: "string",
          description: "The leading replica's id as last seen; null: none now.",
        }),
        token: nullable({ type: "integer", minimum: 1, description: "Fencing token of the current term." }),
        lease_expires_at: nullable({
          ...ref("DateTime"),
          description: "When the current term's lease runs out unless renewed (the database's clock).",
        }),
      }),
      ChainSync: object({
        state: { enum: ["off", "starting", "ok", "lagging", "stale", "halted"] },
        reason: nullable({ type: "string", description: "Why the state is not ok, in words." }),
        head_block: nullable({ type: "integer", minimum: 0, description: "Latest head the indexer read." }),
        indexed_block: nullable({ type: "integer", minimum: -1, description: "The indexer's cursor block." }),
        lag_blocks: nullable({
          type: "integer",
          minimum: 0,
          description: "Confirmed head − indexed block at the last tick.",
        }),
        max_lag_blocks: { type: "integer", minimum: 0, description: "`SURETY_INDEXER_MAX_LAG_BLOCKS`." },
        last_synced_at: nullable(ref("DateTime")),
        seconds_since_sync: nullable({ type: "integer", minimum: 0 }),
        max_stale_seconds: {
          type: "integer",
          minimum: 1,
          description: "`SURETY_INDEXER_MAX_STALE_SECONDS`.",
        },
      }),
      NonceRequest: object({ address: ref("Address") }),
      FinalizeRequest: {
        ...object({ signature: { type: "string", pattern: "^0x[0-9a-fA-F]{130}$" } }),
        description:
          "The payer's EIP-712 signature of `Finalization(bytes32 guaranteeId)` under the guarantees' domain " +
          '(docs/protocol.md "Payer finalization"); a dispute answer carries it on chain in place of the verdict.',
      },
      NonceResponse: object({
        nonce: { type: "string", pattern: "^[0-9a-f]{32}$" },
        siwe: object({
          domain: { type: "string" },
          uri: { type: "string" },
          chain_id: { type: "integer", minimum: 1 },
          statement: { type: "string" },
          issued_at: { type: "string", format: "date-time" },
          expiration: { type: "string", format: "date-time" },
        }),
      }),
      SignInRequest: object({
        address: ref("Address"),
        message: { type: "string", maxLength: 4096, description: "The complete EIP-4361 message." },
        signature: { type: "string", pattern: "^0x([0-9a-fA-F]{128}|[0-9a-fA-F]{130})$" },
      }),
      TokenResponse: object({
        access_token: { type: "string", minLength: 1 },
        refresh_token: { type: "string", pattern: "^[A-Za-z0-9_-]{43}$" },
        expires_in: { type: "integer", minimum: 1 },
      }),
      RefreshTokenRequest: object({ refresh_token: { type: "string" } }),
      DateTime: { type: "string", format: "date-time" },
      Cycle: CYCLE_SCHEMA,
      Cycles: object({
        cycles: { type: "array", items: ref("Cycle") },
        next_cursor: {
          ...nullable({ type: "string", pattern: "^[1-9][0-9]*$" }),
          description: "Pass as `before` for the next (older) page; null on the last.",
        },
      }),
      ClearingSchedule: object({
        chain_time: {
          ...nullable(ref("DateTime")),
          description: "The newest indexed block's timestamp; null before Core indexed a block.",
        },
        cycle_length_seconds: nullable({ type: "integer", minimum: 1 }),
        commit_delay_seconds: nullable({ type: "integer", minimum: 0 }),
        next_cutoff: {
          ...nullable(ref("DateTime")),
          description: "Chain time at which the next cycle closes; null before the scheduler's first run.",
        },
        next_commit_by: {
          ...nullable(ref("DateTime")),
          description: "`next_cutoff + commit_delay_seconds`: that cycle's commit is due on chain by then.",
        },
        seconds_to_cutoff: {
          ...nullable({ type: "integer" }),
          description:
            "`next_cutoff − chain_time` (negative: the cutoff has passed, the commit is under way).",
        },
        pending_cycle: nullable(
          object({
            cycle_id: { type: "integer", minimum: 1 },
            state: { enum: ["PLANNED", "SENT"] },
            cutoff: ref("DateTime"),
            planned_at: ref("DateTime"),
            commit_tx: nullable(ref("Bytes32")),
            sent_at: nullable(ref("DateTime")),
          }),
        ),
        latest_committed_cycle_id: { type: "integer", minimum: 0 },
      }),
      CollateralList: object({
        balances: {
          type: "array",
          items: object({
            user_address: ref("Address"),
            asset_address: ref("Address"),
            deposited: ref("Uint"),
            locked: ref("Uint"),
            pending_withdrawal: ref("Uint"),
          }),
        },
        next_cursor: {
          ...nullable({ type: "string", pattern: "^0x[0-9a-fA-F]{40}:0x[0-9a-fA-F]{40}$" }),
          description: "Pass as `cursor` for the next page; null on the last.",
        },
      }),
      GuaranteeList: object({
        guarantees: { type: "array", items: ref("Guarantee") },
        next_cursor: nullable({ type: "string" }),
      }),
      TimelineEntry: object({
        kind: {
          enum: [
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
          ],
        },
        at: { ...nullable(ref("DateTime")), description: "Null when Core keeps no time for the step." },
        clock: { enum: ["chain", "core"], description: "A block's timestamp, or Core's own clock." },
        tx_hash: nullable(ref("Bytes32")),
        block_number: nullable({ type: "integer", minimum: 0 }),
        cycle_id: nullable({ type: "integer", minimum: 1 }),
        detail: {
          type: "object",
          additionalProperties: { anyOf: [{ type: "string" }, { type: "integer" }] },
        },
      }),
      GuaranteeTimeline: object({
        guarantee_id: ref("Bytes32"),
        state: ref("GuaranteeState"),
        timeline: { type: "array", items: ref("TimelineEntry") },
      }),
      GuaranteeLeafView: object({
        guarantee_id: ref("Bytes32"),
        payer: ref("Address"),
        recipient: ref("Address"),
        asset_address: ref("Address"),
        amount: ref("Uint"),
        signature_hash: { ...ref("Bytes32"), description: "keccak256 of the payer's signature bytes." },
        leaf_hash: {
          ...ref("Bytes32"),
          description:
            "`ClearingHouse.guaranteeLeafHash(guarantee_id, payer, recipient, asset, amount, signature_hash)`.",
        },
        proof: {
          type: "array",
          items: ref("Bytes32"),
          description: "Sibling hashes under `guarantees_root`.",
        },
      }),
      CycleGuarantees: object({
        cycle_id: { type: "integer", minimum: 1 },
        state: { enum: ["COMMITTED", "FINALIZED", "VETOED"] },
        guarantees_root: ref("Bytes32"),
        payer: ref("Address"),
        guarantees: {
          type: "array",
          items: ref("GuaranteeLeafView"),
          description:
            "The payer's leaves in increasing guarantee id order; empty if it has none in the cycle.",
        },
      }),
      SumNode: object({
        hash: ref("Bytes32"),
        sum: ref("Uint"),
      }),
      DebtorTreePosition: object({
        position: { type: "integer", minimum: 0 },
        guarantee_id: ref("Bytes32"),
        recipient: ref("Address"),
        amount: ref("Uint"),
        signature_hash: ref("Bytes32"),
        leaf: ref("SumNode"),
        path: {
          type: "array",
          items: ref("SumNode"),
          description: "Sibling nodes from the leaf level up (`answerDispute`'s `path`); `depth` of them.",
        },
      }),
      CreditTreePosition: object({
        position: { type: "integer", minimum: 0 },
        guarantee_id: ref("Bytes32"),
        payer: ref("Address"),
        amount: ref("Uint"),
        signature_hash: ref("Bytes32"),
        leaf: ref("SumNode"),
        path: {
          type: "array",
          items: ref("SumNode"),
          description:
            "Sibling nodes from the leaf level up under `in_root` (a `CreditProof`'s `path`); `in_depth` of them.",
        },
      }),
      DebtorTree: object({
        asset_address: ref("Address"),
        sum_root: ref("Bytes32"),
        total: ref("Uint"),
        depth: { type: "integer", minimum: 0, maximum: 24 },
        in_root: ref("Bytes32"),
        in_total: ref("Uint"),
        in_depth: { type: "integer", minimum: 0, maximum: 24 },
        incoming: {
          type: "array",
          items: ref("CreditTreePosition"),
          description:
            "The account's incoming tree (issue 25, item 5): each guarantee credited to it, in increasing id " +
            "order, with the proof a `CreditProof` carries (`answerDispute`'s `credit`, " +
            "`Vault.releaseListedReserve`). The net position is `in_total − total`.",
        },
        credit: {
          ...ref("Uint"),
          description:
            "The summary's net credit, `max(in_total − total, 0)`: its sum in the asset's summaries tree.",
        },
        asset_credit: {
          ...ref("Uint"),
          description:
            "The top of the asset's summaries tree: the sum of every summary's credit, equal to the cycle's " +
            "committed total credit in the asset (the contracts refuse a summary proof otherwise).",
        },
        summary_proof: {
          type: "array",
          items: ref("Bytes32"),
          description:
            "Proof of the summary under `debits_root` (contracts/lib/CreditCheck.sol `isSummary`): " +
            "`[k, h_1, c_1, …, h_k, c_k]` (its k siblings in the asset's summaries sum tree, leaf level first) " +
            "followed by every asset's top `(asset, hash, credit)`, ascending by asset.",
        },
        positions: {
          type: "array",
          items: ref("DebtorTreePosition"),
          description: "Positions 0 .. count − 1 in increasing guarantee id order (higher ones are empty).",
        },
      }),
      CycleDebits: object({
        cycle_id: { type: "integer", minimum: 1 },
        state: { enum: ["COMMITTED", "FINALIZED", "VETOED"] },
        debits_root: ref("Bytes32"),
        payer: ref("Address"),
        trees: {
          type: "array",
          items: ref("DebtorTree"),
          description:
            "One per asset the account has outgoing or incoming guarantees in (a net creditor too); empty if none.",
        },
      }),
      CyclePosition: object({
        asset_address: ref("Address"),
        debit: ref("Uint"),
        credit: ref("Uint"),
        proof: { type: "array", items: ref("Bytes32") },
        claimed: {
          type: "boolean",
          description:
            "The credit was claimed on chain (set aside for the participant; withdrawn or not, see " +
            "`ClearingHouse.payoutOf`).",
        },
        claim_net_credit_args: {
          ...nullable({
            type: "array",
            prefixItems: [
              ref("Uint"),
              ref("Address"),
              ref("Address"),
              object({
                sumRoot: ref("Bytes32"),
                total: ref("Uint"),
                depth: ref("Uint"),
                inRoot: ref("Bytes32"),
                inTotal: ref("Uint"),
                inDepth: ref("Uint"),
              }),
              { type: "array", items: ref("Bytes32") },
            ],
            items: false,
            minItems: 5,
          }),
          description:
            "`ClearingHouse.claimNetCredit(cycleId, asset, participant, summary, summaryProof)` arguments: the " +
            "participant's summary under the cycle's `debitsRoot` (credit = `inTotal − total`) and its proof; null for a debtor " +
            "and in a VETOED cycle (the claim would revert `CycleIsVetoed`). The claim sends nothing: it sets the " +
            "credit aside for the participant, who then calls `ClearingHouse.withdrawPayout(asset, to)` (pull payment).",
        },
      }),
      CycleProof: object({
        cycle_id: { type: "integer", minimum: 1 },
        root: ref("Bytes32"),
        participant: ref("Address"),
        positions: { type: "array", items: ref("CyclePosition"), minItems: 1 },
      }),
      Withdrawals: object({
        user_address: ref("Address"),
        withdrawable: {
          type: "array",
          items: object({
            asset_address: ref("Address"),
            deposited: ref("Uint"),
            locked: ref("Uint"),
            pending_withdrawal: ref("Uint"),
            reserve_hold: { ...ref("Uint"), description: "As in `Balance`." },
            free: {
              ...ref("Uint"),
              description: "deposited − locked − reserve_hold (0 if negative): the Vault's free collateral.",
            },
            finalizable_amount: {
              ...nullable(ref("Uint")),
              description: "min(requested, free) of the open request; null without one.",
            },
            finalizable_at: {
              ...nullable(ref("DateTime")),
              description: "As `Vault.withdrawalFinalizableAt`; null without an open request.",
            },
          }),
        },
        withdrawals: {
          type: "array",
          items: object({
            withdrawal_id: ref("Uint"),
            asset_address: ref("Address"),
            amount: ref("Uint"),
            state: { enum: ["PENDING", "CANCELLED", "FINALIZED"] },
            requested_at: ref("DateTime"),
            finalizable_at: ref("DateTime"),
            paid: nullable(ref("Uint")),
            closed_at: nullable(ref("DateTime")),
          }),
        },
      }),
      WebhookEventTypes: {
        type: "array",
        items: { enum: [...WEBHOOK_EVENT_TYPES, ALL_EVENT_TYPES] },
        minItems: 1,
        uniqueItems: true,
        description: '`["*"]`: every type, including ones added later (docs/webhooks.md).',
      },
      NewWebhookSubscription: object(
        {
          url: {
            type: "string",
            format: "uri",
            maxLength: MAX_WEBHOOK_URL_LENGTH,
            description: "`https://` (plain `http://` only for loopback hosts); no credentials, no fragment.",
          },
          event_types: {
            anyOf: [
              { type: "array", items: { enum: [...WEBHOOK_EVENT_TYPES, ALL_EVENT_TYPES] }, minItems: 1 },
              { const: ALL_EVENT_TYPES },
            ],
            description: "Event types to deliver; `*` (or a list containing it) for all.",
          },
          secret: {
            type: "string",
            minLength: MIN_WEBHOOK_SECRET_LENGTH,
            maxLength: MAX_WEBHOOK_SECRET_LENGTH,
            pattern: "^[!-~]+$",
            description: "HMAC key of `Surety-Signature`; generated (`whsec_` + 64 hex) when absent.",
          },
          description: nullable({ type: "string", maxLength: MAX_DESCRIPTION_LENGTH }),
        },
        ["url", "event_types"],
      ),
      WebhookSubscription: object({
        id: { type: "string", pattern: "^[A-Za-z0-9_-]{1,64}$" },
        url: { type: "string", format: "uri" },
        event_types: ref("WebhookEventTypes"),
        description: nullable({ type: "string", maxLength: MAX_DESCRIPTION_LENGTH }),
        source: {
          enum: ["config", "api"],
          description: "`config`: from `SURETY_WEBHOOKS` (removable only there); `api`: made here.",
        },
        created_at: ref("DateTime"),
      }),
      CreatedWebhookSubscription: {
        ...object({
          id: { type: "string", pattern: "^whk_[0-9a-f]{24}$" },
          url: { type: "string", format: "uri" },
          event_types: ref("WebhookEventTypes"),
          description: nullable({ type: "string", maxLength: MAX_DESCRIPTION_LENGTH }),
          source: { const: "api" },
          created_at: ref("DateTime"),
          secret: {
            type: "string",
            minLength: MIN_WEBHOOK_SECRET_LENGTH,
            maxLength: MAX_WEBHOOK_SECRET_LENGTH,
            pattern: "^[!-~]+$",
          },
        }),
        description: "The only answer that shows the secret.",
      },
      WebhookBacklog: object({
        pending: { type: "integer", minimum: 0, description: "Deliveries still to be sent (incl. retries)." },
        failed: {
          type: "integer",
          minimum: 0,
          description: "Deliveries that gave up after their last attempt.",
        },
        oldest_pending_at: {
          ...nullable(ref("DateTime")),
          description: "When the oldest pending delivery was created; null when none is pending.",
        },
        max_pending_attempts: {
          type: "integer",
          minimum: 0,
          description: "Most attempts among the pending deliveries (how far into the retries).",
        },
      }),
      ListedWebhookSubscription: object({
        id: { type: "string", pattern: "^[A-Za-z0-9_-]{1,64}$" },
        url: { type: "string", format: "uri" },
        event_types: ref("WebhookEventTypes"),
        description: nullable({ type: "string", maxLength: MAX_DESCRIPTION_LENGTH }),
        source: { enum: ["config", "api"] },
        created_at: ref("DateTime"),
        backlog: ref("WebhookBacklog"),
      }),
      WebhookSubscriptions: object({
        webhooks: { type: "array", items: ref("ListedWebhookSubscription") },
        backlog: object({
          pending: { type: "integer", minimum: 0 },
          failed: { type: "integer", minimum: 0 },
          oldest_pending_at: nullable(ref("DateTime")),
        }),
      }),
      WebhookDelivery: object({
        event_id: { type: "string", pattern: "^evt_[0-9a-f]{32}$" },
        event_type: {
          enum: [...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE],
          description: "`webhook.test`: an operator's test event (`POST /core/admin/webhooks/{id}/test`).",
        },
        status: { enum: [...WEBHOOK_DELIVERY_STATUSES] },
        attempts: { type: "integer", minimum: 0, description: "Attempts started so far." },
        last_error: {
          ...nullable({ type: "string" }),
          description: "e.g. `HTTP 503: <first 200 bytes>`, `timeout after 10000 ms`, `network error: …`.",
        },
        last_status_code: {
          ...nullable({ type: "integer", minimum: 100, maximum: 999 }),
          description: "HTTP status of the last answer; null before any answer or after a network error.",
        },
        next_attempt_at: {
          ...nullable(ref("DateTime")),
          description:
            "When the next attempt may start, to the millisecond; null once delivered, failed or cancelled.",
        },
        last_attempt_at: nullable(ref("DateTime")),
        delivered_at: nullable(ref("DateTime")),
        created_at: ref("DateTime"),
      }),
      WebhookDeliveryDetail: object({
        webhook_id: { type: "string" },
        delivery: ref("WebhookDelivery"),
        event: nullable(
          object({
            id: { type: "string" },
            type: { type: "string" },
            created_at: ref("DateTime"),
            retracted_at: nullable(ref("DateTime")),
            payload: {
              type: "object",
              description: "The event's envelope, parsed: every attempt sends (and signs) its exact bytes.",
            },
            payload_bytes: { type: "integer", minimum: 2 },
          }),
        ),
        attempts: {
          type: "array",
          description: "Every recorded attempt, oldest first (one cut by a restart has no record).",
          items: object({
            attempt: { type: "integer", minimum: 1 },
            at: ref("DateTime"),
            outcome: {
              enum: ["delivered", "pending", "failed"],
              description: "`pending`: it failed and another attempt is scheduled; `failed`: the last one.",
            },
            status_code: nullable({ type: "integer" }),
            error: nullable({ type: "string" }),
          }),
        },
      }),
      WebhookDeliveryAction: object({ webhook_id: { type: "string" }, delivery: ref("WebhookDelivery") }),
      ConsoleCycle: {
        ...CYCLE_SCHEMA,
        properties: {
          ...(CYCLE_SCHEMA.properties as Record<string, Schema>),
          cutoff: { ...ref("DateTime"), description: "The cutoff the cycle closed at." },
        },
        required: [...(CYCLE_SCHEMA.required as string[]), "cutoff"],
      },
      ConsoleCycleList: object({
        cycles: { type: "array", items: ref("ConsoleCycle") },
        total: {
          type: "integer",
          minimum: 0,
          description: "Committed cycles in all (COMMITTED, FINALIZED, VETOED).",
        },
        next_cursor: nullable({ type: "string", pattern: "^[1-9][0-9]*$" }),
      }),
      GuaranteeSearch: object({
        guarantees: { type: "array", items: ref("Guarantee") },
        total: { type: "integer", minimum: 0, description: "Guarantees the search matches in all." },
        next_cursor: nullable({ type: "string" }),
      }),
      ConsoleSession: object({
        address: ref("Address"),
        admin: { type: "boolean" },
        facilitator: { type: "boolean" },
      }),
      ConsoleConfig: object({
        explorer_url: {
          ...nullable({ type: "string", format: "uri" }),
          description: "`SURETY_EXPLORER_URL`: links are `<url>/tx/<hash>` and `<url>/address/<address>`.",
        },
      }),
      LedgerEntry: object({
        kind: { enum: [...LEDGER_ENTRY_KINDS] },
        asset_address: ref("Address"),
        amount: { type: "string", pattern: "^(0|[1-9][0-9]*)$" },
        at: nullable(ref("DateTime")),
        clock: { enum: ["chain", "core"] },
        tx_hash: nullable({ type: "string", pattern: "^0x[0-9a-fA-F]{64}$" }),
        block_number: nullable({ type: "integer", minimum: 0 }),
        cycle_id: nullable({ type: "integer", minimum: 1 }),
        guarantee_id: nullable({ type: "string", pattern: "^0x[0-9a-f]{64}$" }),
        withdrawal_id: nullable({ type: "string" }),
        status: nullable({ type: "string" }),
      }),
      Ledger: object({
        user_address: ref("Address"),
        entries: { type: "array", items: ref("LedgerEntry") },
        truncated: { type: "boolean" },
      }),
      WebhookDeliveries: object({
        webhook_id: { type: "string" },
        deliveries: { type: "array", items: ref("WebhookDelivery") },
        next_cursor: nullable({ type: "string", pattern: "^[1-9][0-9]*$" }),
      }),
    },
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
          "500": COMMON_ERRORS["500"],
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
      post: {
        tags: ["guarantees"],
        summary: "Verify a payer-signed guarantee, lock collateral, return Core's BLS certificate",
        security: [{ bearer: [] }],
        requestBody: jsonBody(ref("SignedGuaranteeRequest")),
        responses: {
          "200": jsonResponse("Issued.", ref("Certificate")),
          "400": errorResponse("Claims, policy, signature or collateral refused.", ISSUANCE_400_CODES),
          "401": UNAUTHORIZED,
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
      },
      get: {
        tags: ["guarantees"],
        summary: "Guarantees by payer, recipient, state and asset, newest first, paginated",
        description:
          "A caller sees the guarantees it is payer or recipient of (it must name itself in `payer` or " +
          "`recipient`); facilitators and admin wallets see all, with any filter.",
        security: [{ bearer: [] }],
        parameters: [
          { name: "payer", in: "query", required: false, schema: ref("Address") },
          { name: "recipient", in: "query", required: false, schema: ref("Address") },
          { name: "state", in: "query", required: false, schema: ref("GuaranteeState") },
          { name: "asset", in: "query", required: false, schema: ref("Address") },
          {
            name: "limit",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 1, maximum: 500, default: 50 },
          },
          {
            name: "cursor",
            in: "query",
            required: false,
            schema: { type: "string" },
            description: "`next_cursor` of the previous page.",
          },
        ],
        responses: {
          "200": jsonResponse(
            "One page, newest first; `next_cursor` is null on the last.",
            ref("GuaranteeList"),
          ),
          "400": errorResponse("A parameter malformed or repeated (the message names it).", [
            "invalid_request",
          ]),
          "401": UNAUTHORIZED,
          "403": errorResponse("The caller named neither itself as payer nor as recipient.", [
            "not_authorized_for_guarantees",
          ]),
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/guarantees/{id}/timeline": {
      get: {
        tags: ["guarantees"],
        summary:
          "What moved a guarantee, with the transactions (payer, recipient, facilitators, admin wallets)",
        security: [{ bearer: [] }],
        parameters: [{ name: "id", in: "path", required: true, schema: ref("Bytes32") }],
        responses: {
          "200": jsonResponse(
            "Its steps, oldest first; the last is the state it is in.",
            ref("GuaranteeTimeline"),
          ),
          "400": errorResponse("Malformed id.", ["invalid_request", ...PATH_400_CODES]),
          "401": UNAUTHORIZED,
          "404": errorResponse("Unknown, or not visible to the caller.", ["guarantee_not_found"]),
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/guarantees/{id}": {
      get: {
        tags: ["guarantees"],
        summary: "One guarantee, visible to its payer, its recipient, facilitators and admin wallets",
        security: [{ bearer: [] }],
        parameters: [{ name: "id", in: "path", required: true, schema: ref("Bytes32") }],
        responses: {
          "200": jsonResponse("The guarantee.", ref("Guarantee")),
          "400": errorResponse("Malformed id.", ["invalid_request", ...PATH_400_CODES]),
          "401": UNAUTHORIZED,
          "404": errorResponse("Unknown, or not visible to the caller.", ["guarantee_not_found"]),
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/users": {
      get: {
        tags: ["admin"],
        summary: "Every payer's non-empty balances, by user then asset, paginated (admin wallets)",
        security: [{ bearer: [] }],
        parameters: [
          { name: "asset", in: "query", required: false, schema: ref("Address") },
          {
            name: "limit",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 1, maximum: 500, default: 100 },
          },
          {
            name: "cursor",
            in: "query",
            required: false,
            schema: { type: "string" },
            description: "`next_cursor` of the previous page.",
          },
        ],
        responses: {
          "200": jsonResponse("One page; `next_cursor` is null on the last.", ref("CollateralList")),
          "400": errorResponse("`asset`, `limit` or `cursor` malformed or repeated.", ["invalid_request"]),
          ...ADMIN_FAILURES,
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/users/{address}/balances": {
      get: {
        tags: ["guarantees"],
        summary: "Core's view of a user's collateral per asset",
        security: [{ bearer: [] }],
        parameters: [{ name: "address", in: "path", required: true, schema: ref("Address") }],
        responses: {
          "200": jsonResponse("ETH, then the deployment's tokens, then other assets.", ref("Balances")),
          "400": errorResponse("Malformed address.", ["invalid_request", ...PATH_400_CODES]),
          "401": UNAUTHORIZED,
          "403": errorResponse("Only the user, facilitators and admin wallets may read.", [
            "not_authorized_for_user",
          ]),
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/recipients/{address}/guarantees": {
      get: {
        tags: ["guarantees"],
        summary: "A recipient's guarantees, oldest first, paginated",
        security: [{ bearer: [] }],
        parameters: [
          { name: "address", in: "path", required: true, schema: ref("Address") },
          {
            name: "limit",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 1, maximum: 500, default: 50 },
          },
          {
            name: "cursor",
            in: "query",
            required: false,
            schema: { type: "string" },
            description: "`next_cursor` of the previous page.",
          },
        ],
        responses: {
          "200": jsonResponse("One page; `next_cursor` is null on the last.", ref("RecipientGuarantees")),
          "400": errorResponse("`limit`, `cursor` or `address` malformed.", [
            "invalid_request",
            ...PATH_400_CODES,
          ]),
          "401": UNAUTHORIZED,
          "403": errorResponse("Only the recipient and facilitators may read.", [
            "not_authorized_for_recipient",
          ]),
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/guarantees/{id}/finalize": {
      post: {
        tags: ["guarantees"],
        summary: "The payer finalizes its V2 guarantee (PENDING_VALIDATION or DISPUTED → FINALIZED_PAYABLE)",
        security: [{ bearer: [] }],
        parameters: [{ name: "id", in: "path", required: true, schema: ref("Bytes32") }],
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
          "401": UNAUTHORIZED,
          "403": errorResponse("The caller is the recipient, not the payer.", ["not_payer"]),
          "404": errorResponse("Unknown, or the caller is neither payer nor recipient.", [
            "guarantee_not_found",
          ]),
          "409": errorResponse("A V1 guarantee, or a V2 one in another state.", ["invalid_state"]),
          ...COMMON_ERRORS,
        },
      },
    },
    "/core/users/{address}/withdrawals": {
      get: {
        tags: ["clearing"],
        summary: "A user's withdrawals and what Core's books let it withdraw, per asset",
        security: [{ bearer: [] }],
        parameters: [{ name: "address", in: "path", required: true, schema: ref("Address") }],
        responses: {
          "200": jsonResponse("Withdrawable amounts and withdrawal requests.", ref("Withdrawals")),
          "400": errorResponse("Malformed address.", ["invalid_request", ...PATH_400_CODES]),
          "401": UNAUTHORIZED,
          "403": errorResponse("Only the user, facilitators and admin wallets may read.", [
            "not_authorized_for_user",
          ]),
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/cycles": {
      get: {
        tags: ["clearing"],
        summary: "Committed cycles (committed, finalized, vetoed), newest first, paginated",
        parameters: [
          {
            name: "limit",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 1, maximum: 50, default: 10 },
          },
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
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/clearing/schedule": {
      get: {
        tags: ["clearing"],
        summary: "The clearing schedule in chain time: next cutoff, commit due, a cycle under way",
        responses: {
          "200": jsonResponse("Core's schedule now.", ref("ClearingSchedule")),
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/cycles/{id}": {
      get: {
        tags: ["clearing"],
        summary: "A clearing cycle seen committed on chain: root, deadlines, totals, debts, claims",
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string", pattern: "^[1-9][0-9]*$" } },
        ],
        responses: {
          "200": jsonResponse("The cycle.", ref("Cycle")),
          "400": errorResponse("Malformed cycle id.", ["invalid_request", ...PATH_400_CODES]),
          "404": errorResponse("No cycle with that id was seen committed.", ["cycle_not_found"]),
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/cycles/{id}/participants/{address}/proof": {
      get: {
        tags: ["clearing"],
        summary: "A participant's net positions in a committed cycle, with Merkle proofs and claim arguments",
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string", pattern: "^[1-9][0-9]*$" } },
          { name: "address", in: "path", required: true, schema: ref("Address") },
        ],
        responses: {
          "200": jsonResponse("One position per asset with a non-zero net.", ref("CycleProof")),
          "400": errorResponse("Malformed cycle id or address.", ["invalid_request", ...PATH_400_CODES]),
          "404": errorResponse("No such committed cycle, or no position of the participant in it.", [
            "cycle_not_found",
            "position_not_found",
          ]),
          "500": COMMON_ERRORS["500"],
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
          { name: "id", in: "path", required: true, schema: { type: "string", pattern: "^[1-9][0-9]*$" } },
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
          "500": COMMON_ERRORS["500"],
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
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string", pattern: "^[1-9][0-9]*$" } },
          { name: "payer", in: "path", required: true, schema: ref("Address") },
        ],
        responses: {
          "200": jsonResponse("The payer's trees.", ref("CycleDebits")),
          "400": errorResponse("Malformed cycle id or payer.", ["invalid_request", ...PATH_400_CODES]),
          "404": errorResponse(
            "No such committed cycle, or Core cannot serve its trees (a cycle Core did not plan, or one whose " +
              "guarantees no longer rebuild its committed root).",
            ["cycle_not_found", "guarantees_not_available"],
          ),
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/admin/webhooks": {
      post: {
        tags: ["admin"],
        summary: "Add a webhook subscription (the answer shows its secret, once)",
        security: [{ bearer: [] }],
        requestBody: jsonBody(ref("NewWebhookSubscription")),
        responses: {
          "201": jsonResponse("Created.", ref("CreatedWebhookSubscription")),
          "400": errorResponse("A field refused (the message names it); malformed JSON.", [
            "invalid_request",
            ...BODY_400_CODES,
          ]),
          ...ADMIN_FAILURES,
          ...COMMON_ERRORS,
        },
      },
      get: {
        tags: ["admin"],
        summary: "Every subscription, configured and API-made (secrets never shown), with its backlog",
        security: [{ bearer: [] }],
        responses: {
          "200": jsonResponse("The subscriptions.", ref("WebhookSubscriptions")),
          ...ADMIN_FAILURES,
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/admin/webhooks/{id}": {
      get: {
        tags: ["admin"],
        summary: "One subscription (without its secret)",
        security: [{ bearer: [] }],
        parameters: [WEBHOOK_ID_PARAMETER],
        responses: {
          "200": jsonResponse("The subscription.", ref("WebhookSubscription")),
          "400": WEBHOOK_ID_MALFORMED,
          ...ADMIN_FAILURES,
          "404": WEBHOOK_NOT_FOUND,
          "500": COMMON_ERRORS["500"],
        },
      },
      delete: {
        tags: ["admin"],
        summary: "Remove an API-made subscription and its deliveries",
        security: [{ bearer: [] }],
        parameters: [WEBHOOK_ID_PARAMETER],
        responses: {
          "204": { description: "Removed, with its pending and past deliveries." },
          "400": WEBHOOK_ID_MALFORMED,
          ...ADMIN_FAILURES,
          "404": WEBHOOK_NOT_FOUND,
          "409": errorResponse("A configured subscription: remove it from `SURETY_WEBHOOKS`.", [
            "configured_webhook",
          ]),
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/admin/webhooks/{id}/deliveries": {
      get: {
        tags: ["admin"],
        summary: "A subscription's deliveries and their status, newest first, paginated",
        security: [{ bearer: [] }],
        parameters: [
          WEBHOOK_ID_PARAMETER,
          {
            name: "status",
            in: "query",
            required: false,
            schema: { enum: [...WEBHOOK_DELIVERY_STATUSES] },
          },
          {
            name: "limit",
            in: "query",
            required: false,
            schema: {
              type: "integer",
              minimum: 1,
              maximum: MAX_DELIVERY_PAGE,
              default: DEFAULT_DELIVERY_PAGE,
            },
          },
          {
            name: "cursor",
            in: "query",
            required: false,
            schema: { type: "string" },
            description: "`next_cursor` of the previous page.",
          },
        ],
        responses: {
          "200": jsonResponse("One page; `next_cursor` is null on the last.", ref("WebhookDeliveries")),
          "400": errorResponse("`status`, `limit` or `cursor` malformed (the message names it).", [
            "invalid_request",
            ...PATH_400_CODES,
          ]),
          ...ADMIN_FAILURES,
          "404": WEBHOOK_NOT_FOUND,
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/admin/webhooks/{id}/deliveries/{event_id}": {
      get: {
        tags: ["admin"],
        summary: "One delivery: its attempts so far and the event's payload",
        security: [{ bearer: [] }],
        parameters: [WEBHOOK_ID_PARAMETER, EVENT_ID_PARAMETER],
        responses: {
          "200": jsonResponse("The delivery and its event.", ref("WebhookDeliveryDetail")),
          "400": errorResponse("Malformed event id.", ["invalid_request", ...PATH_400_CODES]),
          ...ADMIN_FAILURES,
          "404": errorResponse("No such subscription, or no delivery of that event to it.", [
            "webhook_not_found",
            "delivery_not_found",
          ]),
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/admin/webhooks/{id}/deliveries/{event_id}/retry": {
      post: {
        tags: ["admin"],
        summary: "Send a failed (or waiting) delivery again now; its attempt count is kept",
        security: [{ bearer: [] }],
        parameters: [WEBHOOK_ID_PARAMETER, EVENT_ID_PARAMETER],
        responses: {
          "200": jsonResponse("The delivery, pending and due now.", ref("WebhookDeliveryAction")),
          "400": errorResponse("Malformed event id.", ["invalid_request", ...PATH_400_CODES]),
          ...ADMIN_FAILURES,
          "404": errorResponse("No such subscription, or no delivery of that event to it.", [
            "webhook_not_found",
            "delivery_not_found",
          ]),
          "409": errorResponse("The delivery is delivered or cancelled.", ["delivery_not_retryable"]),
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/core/admin/webhooks/{id}/test": {
      post: {
        tags: ["admin"],
        summary: "Queue a `webhook.test` event to this subscription alone",
        security: [{ bearer: [] }],
        parameters: [WEBHOOK_ID_PARAMETER],
        responses: {
          "201": jsonResponse(
            "The test event's delivery, pending and due now.",
            ref("WebhookDeliveryAction"),
          ),
          "400": WEBHOOK_ID_MALFORMED,
          ...ADMIN_FAILURES,
          "404": WEBHOOK_NOT_FOUND,
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/console/api/config": {
      get: {
        tags: ["console"],
        summary: "The console's settings: the block explorer it links to",
        responses: { "200": jsonResponse("The settings.", ref("ConsoleConfig")) },
      },
    },
    "/console/api/session": {
      get: {
        tags: ["console"],
        summary: "Who the bearer is: its address, whether it is an admin wallet or a facilitator",
        security: [{ bearer: [] }],
        responses: {
          "200": jsonResponse("Answered for every signed-in wallet (no 403).", ref("ConsoleSession")),
          "401": UNAUTHORIZED,
        },
      },
    },
    "/console/api/cycles": {
      get: {
        tags: ["console"],
        summary: "Committed cycles, newest first, with each one's cutoff and the total",
        parameters: [
          {
            name: "limit",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 1, maximum: MAX_CYCLE_PAGE, default: DEFAULT_CYCLE_PAGE },
          },
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
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/console/api/guarantees": {
      get: {
        tags: ["console"],
        summary: "Search guarantees, newest first, with the total and a cursor",
        security: [{ bearer: [] }],
        parameters: [
          {
            name: "q",
            in: "query",
            required: false,
            schema: { type: "string" },
            description:
              "A guarantee id, a transaction hash (a cycle's commit, a debt's payment, cover or void, a claim: that cycle's guarantees), or an address (payer or recipient).",
          },
          { name: "payer", in: "query", required: false, schema: ref("Address") },
          { name: "recipient", in: "query", required: false, schema: ref("Address") },
          { name: "state", in: "query", required: false, schema: { enum: [...GUARANTEE_STATES] } },
          { name: "asset", in: "query", required: false, schema: ref("Address") },
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
          {
            name: "limit",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 1, maximum: 500, default: 50 },
          },
          { name: "cursor", in: "query", required: false, schema: { type: "string" } },
        ],
        responses: {
          "200": jsonResponse("One page of the search.", ref("GuaranteeSearch")),
          "400": errorResponse(
            "A parameter malformed or repeated, or `from` after `to` (the message names it).",
            ["invalid_request"],
          ),
          "401": UNAUTHORIZED,
          "403": errorResponse(
            "Neither payer nor recipient is the caller (facilitators and admins excepted).",
            ["not_authorized_for_guarantees"],
          ),
          "500": COMMON_ERRORS["500"],
        },
      },
    },
    "/console/api/users/{address}/ledger": {
      get: {
        tags: ["console"],
        summary: "A payer's collateral ledger, newest first",
        security: [{ bearer: [] }],
        parameters: [
          { name: "address", in: "path", required: true, schema: ref("Address") },
          { name: "asset", in: "query", required: false, schema: ref("Address") },
        ],
        responses: {
          "200": jsonResponse("The ledger.", ref("Ledger")),
          "400": errorResponse("Malformed address or asset.", ["invalid_request", ...PATH_400_CODES]),
          "401": UNAUTHORIZED,
          "403": errorResponse("Only the user, facilitators and admin wallets may read.", [
            "not_authorized_for_user",
          ]),
          "500": COMMON_ERRORS["500"],
        },
      },
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
