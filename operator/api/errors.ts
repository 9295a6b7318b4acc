/**
 * HTTP errors with a machine-readable code (docs/protocol.md, "Wire values"), and the one table that gives
 * each domain refusal (operator/errors.ts: auth, issuance, lifecycle) its status. Route code throws
 * HttpErrors for what only HTTP decides (an unknown path, a route's own parameters); the domain services
 * throw DomainErrors and know no status. The error middleware turns both into `{ error, code }`.
 */
import { AUTH_ERRORS, AuthError, type AuthErrorCode, BEARER_TOKEN_ERRORS } from "../auth";
import { DomainError } from "../errors";
import { ISSUANCE_ERRORS, IssuanceError, type IssuanceErrorCode } from "../guarantees/issuance";
import { LIFECYCLE_ERRORS, LifecycleError, type LifecycleErrorCode } from "../lifecycle/v2-lifecycle";

export class HttpError extends Error {
  override readonly name = "HttpError";

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra response headers, e.g. `WWW-Authenticate` on 401. */
    readonly headers: Readonly<Record<string, string>> = {},
    /** Extra body fields next to `error` and `code` (e.g. the stored `certificate` of a 409). */
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

export type { ErrorBody } from "../../sdk/errors";

export function badRequest(code: string, message: string): HttpError {
  return new HttpError(400, code, message);
}

export function forbidden(code: string, message: string): HttpError {
  return new HttpError(403, code, message);
}

export function notFound(code: string, message: string): HttpError {
  return new HttpError(404, code, message);
}

export function conflict(code: string, message: string): HttpError {
  return new HttpError(409, code, message);
}

/** The realm of Core's bearer-token challenges (RFC 6750 §3). */
export const AUTH_REALM = "surety";

/** Every authentication refusal is 401 (docs/operator-auth.md). */
const AUTH_STATUS = Object.fromEntries(Object.values(AUTH_ERRORS).map((code) => [code, 401])) as Record<
  AuthErrorCode,
  number
>;

/**
 * `POST /core/guarantees` (docs/operator-api.md). A refusal because Core cannot judge the chain now (no chain
 * time yet, books behind or halted, no ERC-1271 answer) is 500: the interface lists 500 "Core could not issue
 * the guarantee" for this endpoint and no 503; the code tells a client it is temporary and nothing was locked.
 */
const ISSUANCE_STATUS: Record<IssuanceErrorCode, number> = {
  [ISSUANCE_ERRORS.invalidRequest]: 400,
  [ISSUANCE_ERRORS.notAuthorized]: 403,
  [ISSUANCE_ERRORS.unsupportedVersion]: 400,
  [ISSUANCE_ERRORS.unsupportedAsset]: 400,
  [ISSUANCE_ERRORS.untrustedRegistry]: 400,
  [ISSUANCE_ERRORS.chainIdMismatch]: 400,
  [ISSUANCE_ERRORS.requestHashMismatch]: 400,
  [ISSUANCE_ERRORS.invalidSignature]: 400,
  [ISSUANCE_ERRORS.duplicate]: 409,
  [ISSUANCE_ERRORS.timestampTooOld]: 400,
  [ISSUANCE_ERRORS.timestampInFuture]: 400,
  [ISSUANCE_ERRORS.deadlinePassed]: 400,
  [ISSUANCE_ERRORS.deadlineTooFar]: 400,
  [ISSUANCE_ERRORS.chainTimeUnavailable]: 500,
  [ISSUANCE_ERRORS.insufficientCollateral]: 400,
  [ISSUANCE_ERRORS.signatureCheckUnavailable]: 500,
  [ISSUANCE_ERRORS.signingKeyChangePending]: 400,
  [ISSUANCE_ERRORS.indexerHalted]: 500,
  [ISSUANCE_ERRORS.indexerStale]: 500,
  [ISSUANCE_ERRORS.indexerLagging]: 500,
  [ISSUANCE_ERRORS.indexerStarting]: 500,
  [ISSUANCE_ERRORS.commitBondShort]: 500,
  [ISSUANCE_ERRORS.commitBondUnknown]: 500,
  [ISSUANCE_ERRORS.commitDeadlineAtRisk]: 500,
  // Load shed by admission control (guarantees/admission.ts): temporary by nature, with Retry-After. 500
  // because the interface lists 500 for "Core could not issue" and no 503 for this endpoint.
  [ISSUANCE_ERRORS.overloaded]: 500,
};

/** `Retry-After` of a shed issuance (500 issuance_overloaded), seconds. */
export const OVERLOAD_RETRY_AFTER_SECONDS = 1;

/** `POST /core/guarantees/{id}/finalize` (docs/operator-async.md). */
const LIFECYCLE_STATUS: Record<LifecycleErrorCode, number> = {
  [LIFECYCLE_ERRORS.guaranteeNotFound]: 404,
  [LIFECYCLE_ERRORS.notPayer]: 403,
  [LIFECYCLE_ERRORS.invalidState]: 409,
  [LIFECYCLE_ERRORS.invalidFinalization]: 400,
};

/** The codes of issuance's (or finalization's) refusals answered with `status`: what their routes declare. */
export const issuanceCodes = (status: number): IssuanceErrorCode[] => codesWith(ISSUANCE_STATUS, status);
export const lifecycleCodes = (status: number): LifecycleErrorCode[] => codesWith(LIFECYCLE_STATUS, status);
function codesWith<Code extends string>(table: Record<Code, number>, status: number): Code[] {
  return (Object.keys(table) as Code[]).filter((code) => table[code] === status);
}

/** The RFC 6750 challenge of a refused bearer token. */
function bearerChallenge(error: AuthError): Record<string, string> {
  const params = [`realm="${AUTH_REALM}"`];
  if (error.code !== AUTH_ERRORS.missingToken) {
    params.push(`error="invalid_token"`, `error_description="${error.message}"`);
  }
  return { "WWW-Authenticate": `Bearer ${params.join(", ")}` };
}

/** A refusal of a domain listed here: one Core chose to answer (a 5xx of these is not a server fault). */
export function isMappedRefusal(error: unknown): boolean {
  return error instanceof AuthError || error instanceof IssuanceError || error instanceof LifecycleError;
}

/** A domain refusal as the HttpError it is answered with: status from the tables above, details as body fields. */
export function httpErrorOf(error: DomainError): HttpError {
  if (error instanceof AuthError) {
    const headers = BEARER_TOKEN_ERRORS.includes(error.code) ? bearerChallenge(error) : {};
    return new HttpError(AUTH_STATUS[error.code], error.code, error.message, headers, error.details);
  }
  if (error instanceof IssuanceError) {
    const headers: Record<string, string> =
      error.code === ISSUANCE_ERRORS.overloaded
        ? { "Retry-After": String(OVERLOAD_RETRY_AFTER_SECONDS) }
        : {};
    return new HttpError(ISSUANCE_STATUS[error.code], error.code, error.message, headers, error.details);
  }
  if (error instanceof LifecycleError) {
    return new HttpError(LIFECYCLE_STATUS[error.code], error.code, error.message, {}, error.details);
  }
  // A DomainError of no listed domain is a programming error: answered as a 500 naming no internals.
  return new HttpError(500, "internal_error", "internal error");
}
