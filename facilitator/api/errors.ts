/**
 * Errors to HTTP answers. Malformed input (bad JSON, a WireError from the sdk
 * parsers) is 400 with a message naming the field; anything unexpected is a
 * 500 whose details go to the log only, never a stack trace to the client.
 * Shapes (interface spec "Errors", ARCHITECTURE.md §13): `{error, code}`
 * everywhere except `/settle`, which answers `{success: false, error, certificate: null, …}`.
 */
import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "pino";
import { type ErrorBody, WireError } from "../../sdk/errors";
import { INVALID_REQUEST, settleFailureBody } from "./responses";

export interface ErrorAnswer {
  status: number;
  code: string;
  message: string;
}

/** Errors raised by express.json (body-parser) carry a `type` and an HTTP `status`. */
interface BodyParserError {
  type: string;
  status?: number;
}

const BODY_PARSER_ERRORS: Record<string, ErrorAnswer> = {
  "entity.parse.failed": { status: 400, code: "malformed_json", message: "body: malformed JSON" },
  "entity.too.large": { status: 413, code: "body_too_large", message: "body: request body is too large" },
  "encoding.unsupported": {
    status: 415,
    code: "unsupported_encoding",
    message: "unsupported content encoding",
  },
  "charset.unsupported": { status: 415, code: "unsupported_charset", message: "unsupported charset" },
  "request.aborted": { status: 400, code: "request_aborted", message: "request was aborted" },
};

function isBodyParserError(error: unknown): error is BodyParserError {
  return (
    typeof error === "object" && error !== null && typeof (error as { type?: unknown }).type === "string"
  );
}

export function toErrorAnswer(error: unknown): ErrorAnswer {
  if (error instanceof WireError) return { status: 400, code: INVALID_REQUEST, message: error.message };
  if (isBodyParserError(error)) {
    const known = BODY_PARSER_ERRORS[error.type];
    if (known) return known;
    if (error.status !== undefined && error.status >= 400 && error.status < 500) {
      return { status: error.status, code: "bad_request", message: "bad request" };
    }
  }
  return { status: 500, code: "internal_error", message: "internal error" };
}

/** Server faults are logged as errors (with the error); a client's bad request only at debug level. */
export function logFailure(logger: Logger, path: string, error: unknown, answer: ErrorAnswer): void {
  if (answer.status >= 500) logger.error({ err: error, path }, "request failed");
  else logger.debug({ code: answer.code, status: answer.status, path }, "request rejected");
}

/** The common error body `{error, code}`. */
export function errorBody(answer: ErrorAnswer): ErrorBody {
  return { error: answer.message, code: answer.code };
}

/** `{error, code}` for every route but `/settle`. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const answer = toErrorAnswer(error);
    logFailure(logger, req.path, error, answer);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(answer.status).json(errorBody(answer));
  };
}

/** `/settle`'s failure shape: malformed input is 400 with `error` naming the field. */
export function settleErrorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const answer = toErrorAnswer(error);
    logFailure(logger, req.path, error, answer);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res
      .status(answer.status)
      .json(settleFailureBody(answer.message, answer.code, answer.message, null, null));
  };
}

/** Unknown routes: 404 in the common error shape. */
export function notFoundHandler(): RequestHandler {
  return (req, res) => {
    res
      .status(404)
      .json({ error: `no route for ${req.method} ${req.path}`, code: "not_found" } satisfies ErrorBody);
  };
}
