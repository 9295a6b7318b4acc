/**
 * Errors to HTTP answers. Malformed input (a WireError from the sdk parsers,
 * and the body parser's and router's client errors of runtime/client-errors.ts)
 * is a 4xx with a message naming the problem; anything unexpected is a
 * 500 whose details go to the log only, never a stack trace to the client.
 * Shapes (interface spec "Errors", docs/protocol.md, "Wire values"): `{error, code}`
 * everywhere except `/settle`, which answers `{success: false, error, certificate: null, …}`.
 */
import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "pino";
import { type ClientErrorAnswer, clientErrorAnswer } from "../../runtime/client-errors";
import { type ErrorBody, WireError } from "../../sdk/errors";
import { INVALID_REQUEST, settleFailureBody } from "./responses";

export type ErrorAnswer = ClientErrorAnswer;

export function toErrorAnswer(error: unknown): ErrorAnswer {
  if (error instanceof WireError) return { status: 400, code: INVALID_REQUEST, message: error.message };
  const client = clientErrorAnswer(error);
  if (client !== undefined) return client;
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
