/**
 * The one place errors become HTTP responses. Every error body is
 * `{ error, code }` (ARCHITECTURE.md §13): HttpErrors as thrown, WireErrors
 * as 400 naming the field, body-parser failures as 400/413/415, anything
 * else as a 500 whose details (stack included) go to the log only.
 */
import type { ErrorRequestHandler, Request, RequestHandler } from "express";
import { WireError } from "../../sdk/errors";
import { DuplicateGuaranteeError } from "../store";
import type { Logger } from "../logger";
import { type ErrorBody, HttpError, notFound } from "./errors";

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  headers: Readonly<Record<string, string>>;
}

/** Errors raised by express.json (body-parser) carry a `type` and an HTTP `status`. */
interface BodyParserError {
  type: string;
  status?: number;
  expose?: boolean;
  message: string;
}

const BODY_PARSER_ERRORS: Record<string, [status: number, code: string, message: string]> = {
  "entity.parse.failed": [400, "malformed_json", "malformed JSON body"],
  "entity.too.large": [413, "body_too_large", "request body is too large"],
  "encoding.unsupported": [415, "unsupported_encoding", "unsupported content encoding"],
  "charset.unsupported": [415, "unsupported_charset", "unsupported charset"],
  "request.aborted": [400, "request_aborted", "request was aborted"],
};

function isBodyParserError(error: unknown): error is BodyParserError {
  return (
    typeof error === "object" && error !== null && typeof (error as { type?: unknown }).type === "string"
  );
}

function response(status: number, code: string, error: string, headers = {}, extra = {}): ErrorResponse {
  return { status, body: { ...extra, error, code }, headers };
}

export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof HttpError) {
    return response(error.status, error.code, error.message, error.headers, error.extra);
  }
  if (error instanceof WireError) return response(400, "invalid_request", error.message);
  if (error instanceof DuplicateGuaranteeError) return response(409, "duplicate_guarantee", error.message);
  if (isBodyParserError(error)) {
    const known = BODY_PARSER_ERRORS[error.type];
    if (known) return response(...known);
    if (error.status !== undefined && error.status >= 400 && error.status < 500) {
      return response(error.status, "bad_request", error.expose ? error.message : "bad request");
    }
  }
  return response(500, "internal_error", "internal error");
}

/**
 * Server faults are logged as errors (with the error); a client's bad request only at debug level, and
 * so is a 5xx Core chose to answer (an HttpError, e.g. 503 while the books cannot follow the chain):
 * its cause is logged once where it is detected, not once per refused request.
 * `fields` go into the line (e.g. the request id, for a caller with no per-request child logger).
 */
export function logErrorResponse(
  log: Logger | undefined,
  error: unknown,
  answer: ErrorResponse,
  fields: Record<string, unknown> = {},
): void {
  if (answer.status >= 500 && !(error instanceof HttpError))
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
