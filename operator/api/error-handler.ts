/**
 * The one place errors become HTTP responses. Every error body is
 * `{ error, code }` (docs/protocol.md, "Wire values"): HttpErrors as thrown, the domain's refusals
 * (DomainErrors) with the status of their code (errors.ts, `httpErrorOf`), WireErrors
 * as 400 naming the field, client errors of the body parser and the router
 * (runtime/client-errors.ts) as their 4xx, anything else as a 500 whose
 * details (stack included) go to the log only. Client errors log at debug
 * level without the error object: a caller cannot flood the log with them.
 */
import type { ErrorRequestHandler, Request, RequestHandler } from "express";
import { clientErrorAnswer } from "../../runtime/client-errors";
import { WireError } from "../../sdk/errors";
import { DomainError } from "../errors";
import { DuplicateGuaranteeError, StoreUnavailableError } from "../store";
import type { Logger } from "../logger";
import { type ErrorBody, HttpError, httpErrorOf, isMappedRefusal, notFound } from "./errors";

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  headers: Readonly<Record<string, string>>;
}

function response(status: number, code: string, error: string, headers = {}, extra = {}): ErrorResponse {
  return { status, body: { ...extra, error, code }, headers };
}

export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof DomainError) error = httpErrorOf(error);
  if (error instanceof HttpError) {
    return response(error.status, error.code, error.message, error.headers, error.extra);
  }
  if (error instanceof WireError) return response(400, "invalid_request", error.message);
  if (error instanceof DuplicateGuaranteeError) return response(409, "duplicate_guarantee", error.message);
  // The database is away (docs/scale-out.md, "Failure modes"): the spec's 500, with a code a client can
  // retry on (issuance is idempotent by the guarantee id). Logged where it is detected, not per request.
  if (error instanceof StoreUnavailableError)
    return response(500, "store_unavailable", "the database is unavailable");
  const client = clientErrorAnswer(error);
  if (client !== undefined) return response(client.status, client.code, client.message);
  return response(500, "internal_error", "internal error");
}

/**
 * Server faults are logged as errors (with the error); a client's bad request only at debug level, and
 * so is a 5xx Core chose to answer (an HttpError or a DomainError, e.g. 500 indexer_stale while the books cannot follow the chain):
 * its cause is logged once where it is detected, not once per refused request.
 * `fields` go into the line (e.g. the request id, for a caller with no per-request child logger).
 */
export function logErrorResponse(
  log: Logger | undefined,
  error: unknown,
  answer: ErrorResponse,
  fields: Record<string, unknown> = {},
): void {
  if (
    answer.status >= 500 &&
    !(error instanceof HttpError) &&
    !(error instanceof StoreUnavailableError) &&
    !isMappedRefusal(error)
  )
    log?.error({ ...fields, err: error }, "request failed");
  else log?.debug({ ...fields, code: answer.body.code, status: answer.status }, "request rejected");
}

export function errorHandler(): ErrorRequestHandler {
  return (error: unknown, req: Request, res, _next) => {
    const answer = toErrorResponse(error);
    const { status, body, headers } = answer;
    logErrorResponse(req.log, error, answer);
    if (res.headersSent) {
      // Too late for an error body: cut the connection so the client sees a failure, not a truncated success.
      res.destroy();
      return;
    }
    res.status(status).set(headers).json(body);
  };
}

/** Final handler: unknown routes answer 404 in the common error shape. */
export function notFoundHandler(): RequestHandler {
  return (req) => {
    throw notFound("not_found", `no route for ${req.method} ${req.path}`);
  };
}
