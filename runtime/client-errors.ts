/**
 * Client errors raised below the routes, answered alike by Core and the
 * facilitator: by the JSON body reader (`express.json()`, i.e. body-parser
 * and raw-body, behind {@link jsonBodyParser}) and by the router, which
 * refuses a path parameter that is not valid percent-encoding.
 *
 * Why one place: these errors are typed loosely (an http-errors object with a
 * `type` string, or none at all: a zlib error for a body that does not
 * decode, a `URIError` for `%ff`), and an error mapper that only knows the
 * typed ones answers the rest as a 500 and logs a stack trace per request,
 * which any unauthenticated caller can repeat. Every such error is a 4xx
 * with a `code` and a message naming the problem (docs/operator-api.md,
 * docs/facilitator.md).
 */
import { STATUS_CODES } from "node:http";
import express, { type NextFunction, type Request, type RequestHandler } from "express";

/**
 * `Content-Encoding`s a JSON body may carry. zstd is left out on purpose:
 * body-parser decodes it only on Node versions that ship a zstd decoder, and
 * what a service accepts must not depend on the Node version it runs on.
 */
export const ACCEPTED_CONTENT_ENCODINGS: readonly string[] = ["identity", "gzip", "deflate", "br"];
const ACCEPTED = new Set(ACCEPTED_CONTENT_ENCODINGS);
const ACCEPTED_LIST = "identity, gzip, deflate or br";

/** A body that does not decode as its `Content-Encoding` says (our type; body-parser leaves these untyped). */
export const BODY_DECODE_FAILED = "entity.decode.failed";

/**
 * An error shaped like body-parser's (`type`, `status` and `statusCode`, as
 * http-errors sets them), raised by {@link jsonBodyParser} itself, so that
 * one mapping answers all of them.
 */
export class BodyError extends Error {
  override readonly name = "BodyError";
  readonly statusCode: number;
  constructor(
    readonly type: string,
    readonly status: number,
    message: string,
    /** The refused `Content-Encoding`, for `encoding.unsupported`. */
    readonly encoding?: string,
  ) {
    super(message);
    this.statusCode = status;
  }
}

export interface ClientErrorAnswer {
  status: number;
  code: string;
  message: string;
}

/** The fields body-parser, raw-body, http-errors and the router put on their errors. */
interface FrameworkError {
  status?: unknown;
  statusCode?: unknown;
  type?: unknown;
  message?: unknown;
  expose?: unknown;
  encoding?: unknown;
  charset?: unknown;
  limit?: unknown;
}

/** `"Unsupported Media Type"` → `"unsupported_media_type"`. */
function statusCodeName(status: number): string {
  return (STATUS_CODES[status] ?? "client error").toLowerCase().replace(/[^a-z0-9]+/g, "_");
}

function quoted(value: unknown): string {
  return JSON.stringify(String(value).slice(0, 64));
}

/**
 * The answer to a client error of the framework or a body/URL parser; `undefined` for anything else
 * (which the caller answers as it does today: its own errors, or a 500). Framework errors are told
 * apart from the services' own by their shape: http-errors and the router set both `status` and
 * `statusCode` (the services' own error classes carry `status` only).
 */
export function clientErrorAnswer(error: unknown): ClientErrorAnswer | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const e = error as FrameworkError;
  const status = e.status;
  if (typeof status !== "number" || e.statusCode !== status || status < 400 || status > 499) return undefined;
  switch (e.type) {
    case "entity.parse.failed":
      return { status, code: "malformed_json", message: "body: malformed JSON" };
    case "entity.too.large":
      return {
        status,
        code: "body_too_large",
        message:
          typeof e.limit === "number"
            ? `body: larger than the limit of ${e.limit} bytes (after decoding)`
            : "body: larger than the limit",
      };
    case "encoding.unsupported":
      return {
        status,
        code: "unsupported_encoding",
        message: `Content-Encoding ${quoted(e.encoding)} is not supported (use ${ACCEPTED_LIST})`,
      };
    case "charset.unsupported":
      return {
        status,
        code: "unsupported_charset",
        message: `charset ${quoted(e.charset)} is not supported (use utf-8)`,
      };
    case "request.aborted":
      return { status, code: "request_aborted", message: "request aborted before its body was read" };
    case "request.size.invalid":
      return { status, code: "body_length_mismatch", message: "body: length differs from Content-Length" };
    case BODY_DECODE_FAILED:
      return { status, code: "undecodable_body", message: String(e.message) };
  }
  // The router's path decoding (`decodeURIComponent` of a parameter): the value is not echoed.
  if (error instanceof URIError) {
    return { status, code: "malformed_path", message: "path: malformed percent-encoding" };
  }
  return {
    status,
    code: statusCodeName(status),
    message:
      e.expose === true && typeof e.message === "string"
        ? e.message
        : (STATUS_CODES[status] ?? "client error"),
  };
}

function contentEncodingOf(header: string | undefined): string {
  return (header ?? "identity").trim().toLowerCase();
}

/** `Content-Type`s (lower-cased) of the bodies {@link readPlainJson} reads; every other goes through body-parser. */
const PLAIN_JSON_TYPES: ReadonlySet<string> = new Set([
  "application/json",
  "application/json; charset=utf-8",
  "application/json;charset=utf-8",
]);
const DECIMAL_LENGTH = /^[0-9]{1,9}$/;
/** The first character after JSON's whitespace (RFC 8259 §2), as body-parser's strict mode reads it. */
const JSON_WHITESPACE_THEN = /^[ \t\n\r]*([^ \t\n\r])/;

/**
 * Reads the body almost every request carries, a JSON document of known length with no
 * `Content-Encoding` and UTF-8 (by default or by name), as `express.json()` would, without body-parser's
 * machinery (type-is and content-type parsing, raw-body with an iconv decoder, http-errors): ≈ 11 µs of CPU
 * less per request on the benchmark VM (docs/benchmarks.md, "Fifth round"). The same outcome: `req.body`
 * the parsed document, `{}` for an empty body, a leading byte-order mark skipped, and a body whose first
 * character is not `{` or `[` or that does not parse is an `entity.parse.failed` (400 `malformed_json`).
 * Returns false, having read nothing, for any other request (a body over the limit included): body-parser
 * answers those.
 */
function readPlainJson(req: Request, limitBytes: number, next: NextFunction): boolean {
  const headers = req.headers;
  if (headers["content-encoding"] !== undefined || headers["transfer-encoding"] !== undefined) return false;
  const type = headers["content-type"];
  if (type === undefined || !PLAIN_JSON_TYPES.has(type.toLowerCase())) return false;
  const length = headers["content-length"];
  if (length === undefined || !DECIMAL_LENGTH.test(length) || Number(length) > limitBytes) return false;
  // Already read (body-parser's own test: skip it, as it would).
  if (req.readableEnded || (req.complete && !req.readable)) return false;
  const chunks: Buffer[] = [];
  let settled = false;
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.once("end", () => {
    if (settled) return;
    settled = true;
    let text = (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString("utf8");
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.length === 0) {
      req.body = {};
      next();
      return;
    }
    let body: unknown;
    try {
      const first = text[0] === "{" || text[0] === "[" ? text[0] : JSON_WHITESPACE_THEN.exec(text)?.[1];
      if (first !== "{" && first !== "[") throw new SyntaxError("not an object or array");
      body = JSON.parse(text);
    } catch (error) {
      next(new BodyError("entity.parse.failed", 400, (error as Error).message));
      return;
    }
    req.body = body;
    next();
  });
  req.once("error", () => {
    if (settled) return;
    settled = true;
    next(new BodyError("request.aborted", 400, "request aborted"));
  });
  return true;
}

/**
 * `express.json({ limit })` with every client error typed: a `Content-Encoding`
 * outside {@link ACCEPTED_CONTENT_ENCODINGS} is refused (415) before a byte
 * is read, and a body that fails to decode (body-parser passes zlib's error
 * on with no `type`) becomes a {@link BODY_DECODE_FAILED} naming the encoding.
 * The limit applies to the decoded bytes. A plain JSON body (no encoding,
 * UTF-8, known length within the limit) is read by {@link readPlainJson}.
 */
export function jsonBodyParser(limitBytes: number): RequestHandler {
  const parse = express.json({ limit: limitBytes });
  return (req, res, next) => {
    if (readPlainJson(req, limitBytes, next)) return;
    const encoding = contentEncodingOf(req.headers["content-encoding"]);
    // Only bodies express.json would read: a GET or a text/plain body keeps whatever encoding it says.
    if (!ACCEPTED.has(encoding) && req.is("application/json")) {
      next(
        new BodyError("encoding.unsupported", 415, `unsupported content encoding "${encoding}"`, encoding),
      );
      return;
    }
    parse(req, res, (error?: unknown) => {
      if (error === undefined || error === null) return next();
      const e = error as FrameworkError;
      if (typeof e.type !== "string" && encoding !== "identity" && clientErrorAnswer(error) !== undefined) {
        const reason = typeof e.message === "string" ? e.message : "corrupt data";
        next(new BodyError(BODY_DECODE_FAILED, 400, `body: not valid ${encoding} data (${reason})`));
        return;
      }
      next(error);
    });
  };
}
