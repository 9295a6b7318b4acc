/**
 * What Core's route modules declare their operations with (runtime/api-operations.ts): schema
 * references checked against the sdk's names (a type-only import: no zod is loaded), the answers every
 * route shares, the bearer-token and admin guards' answers, the parameters several routes take.
 */
import type { CoreSchemaName } from "../../sdk/core-api";
import { type ApiOperation, errorAnswer, jsonAnswer, schemaRef } from "../../runtime/api-operations";

export {
  errorAnswer,
  errorSchema,
  jsonAnswer,
  jsonBody,
  mount,
  operation,
} from "../../runtime/api-operations";

type Json = Record<string, unknown>;
type Doc = ApiOperation["doc"];

export const ref = (name: CoreSchemaName): Json => schemaRef(name);

/** Refusals of a read the route code throws (403) and the declarations list, in more than one module. */
export const NOT_AUTHORIZED_FOR_USER = "not_authorized_for_user";
export const NOT_AUTHORIZED_FOR_GUARANTEES = "not_authorized_for_guarantees";

/** 400s of the body parser, before any route runs (runtime/client-errors.ts). */
export const BODY_400_CODES = ["malformed_json", "undecodable_body"] as const;
/** 400 of the router for a path parameter that is not valid percent-encoding. */
export const PATH_400_CODES = ["malformed_path"] as const;

const BEARER_FAILURE_CODES = ["missing_token", "invalid_token", "token_expired"] as const;
/** The 413, 415 and 500 of every route with a body. */
export const COMMON_ERRORS = {
  "413": errorAnswer("Body larger than 64 kB.", ["body_too_large"]),
  "415": errorAnswer(
    "`Content-Encoding` other than identity, gzip, deflate or br; charset other than UTF-8.",
    ["unsupported_encoding", "unsupported_charset"],
  ),
  "500": jsonAnswer(
    "Unexpected failure (`internal_error`, details go to the log only), or the database is unavailable " +
      "(`store_unavailable`: PostgreSQL down or restarting; retry later).",
    { oneOf: [ref("InternalError"), ref("StoreUnavailable")] },
  ),
};
/** The 500 of every route, alone (routes without a body meet no 413 / 415). */
export const SERVER_ERROR = { "500": COMMON_ERRORS["500"] };
const UNAUTHORIZED = {
  ...errorAnswer("Bearer token missing, invalid or expired.", BEARER_FAILURE_CODES),
  headers: {
    "WWW-Authenticate": {
      description: 'Bearer challenge, e.g. `Bearer realm="surety"`.',
      schema: { type: "string" },
    },
  },
};
/** An operation that needs a bearer token. */
const BEARER = { security: [{ bearer: [] }] };
/** Admin routes: a bearer token (401) of a wallet in `SURETY_ADMIN_WALLETS` (403). */
const ADMIN_FAILURES = {
  "401": UNAUTHORIZED,
  "403": errorAnswer("The caller's wallet is not in `SURETY_ADMIN_WALLETS`.", ["not_admin"]),
};

/** A route behind a bearer token: its security and the 401 of a missing, invalid or expired token. */
export const needsToken = (doc: Doc): Doc => ({
  ...BEARER,
  ...doc,
  responses: { ...doc.responses, "401": UNAUTHORIZED },
});
/** An admin route: tagged, behind a bearer token of an admin wallet, with the 500 every route has. */
export const adminOnly = (doc: Doc): Doc => ({
  tags: ["admin"],
  ...BEARER,
  ...doc,
  responses: { ...doc.responses, ...ADMIN_FAILURES, ...SERVER_ERROR },
});

/** The query and path parameter shapes the routes share. */
export const inPath = (name: string, schema: CoreSchemaName): Json => ({
  name,
  in: "path",
  required: true,
  schema: ref(schema),
});
export const inQuery = (name: string, schema: CoreSchemaName): Json => ({
  name,
  in: "query",
  required: false,
  schema: ref(schema),
});
export const limitParameter = (maximum: number, byDefault: number): Json => ({
  name: "limit",
  in: "query",
  required: false,
  schema: { type: "integer", minimum: 1, maximum, default: byDefault },
});
export const CURSOR_PARAMETER = {
  name: "cursor",
  in: "query",
  required: false,
  schema: { type: "string" },
  description: "`next_cursor` of the previous page.",
};

/** The 403 of a user's balances, withdrawals or ledger read by someone else than the user, a facilitator or an admin. */
export const USER_READ_FORBIDDEN = errorAnswer("Only the user, facilitators and admin wallets may read.", [
  NOT_AUTHORIZED_FOR_USER,
]);
