/**
 * Per-request id and logger. `X-Request-Id` is taken from the caller when it
 * is a sane token (so a facilitator's id follows the request into our logs)
 * and generated otherwise; it is echoed on every response. One log line per
 * request when the response ends; no bodies, no headers.
 */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { Logger } from "../logger";

declare module "express-serve-static-core" {
  interface Request {
    /** Request id (the `X-Request-Id` echoed on the response). */
    id: string;
    /** Logger bound to this request's id. */
    log: Logger;
  }
}

export const REQUEST_ID_HEADER = "X-Request-Id";
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `X-Request-Id` when it is a sane token, a fresh UUID otherwise. */
export function requestIdFrom(incoming: string | undefined): string {
  return incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** The one log line of a request, written when its response closes. */
export function logRequestLine(
  logger: Logger,
  id: string,
  method: string | undefined,
  url: string,
  res: ServerResponse,
  started: bigint,
): void {
  const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
  const query = url.indexOf("?");
  const line: Record<string, unknown> = {
    req_id: id,
    method,
    path: query < 0 ? url : url.slice(0, query),
    status: res.statusCode,
    duration_ms: Math.round(durationMs * 100) / 100,
  };
  if (!res.writableFinished) line.aborted = true;
  logger.info(line, "request");
}

export function requestContext(logger: Logger): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    req.id = requestIdFrom(req.get(REQUEST_ID_HEADER));
    // The bound child logger is built only if something logs for this request (most requests log one line).
    let child: Logger | undefined;
    Object.defineProperty(req, "log", {
      configurable: true,
      enumerable: true,
      get: () => (child ??= logger.child({ req_id: req.id })),
    });
    res.setHeader(REQUEST_ID_HEADER, req.id);
    const started = process.hrtime.bigint();
    res.on("close", () => logRequestLine(logger, req.id, req.method, req.originalUrl, res, started));
    next();
  };
}
