/**
 * `POST /verify` straight on `node:http`, in front of the Express app.
 *
 * Why: `/verify` is the facilitator's hot route, and Express plus its JSON
 * body parser cost more CPU per request here than the whole verification
 * (docs/x402-integration.md, "Benchmark"). The fast path reads the body,
 * parses it once and answers through the same {@link answerVerify} and the
 * same error mapping as the Express route, writing the same bytes Express
 * writes (status, `Content-Type`, `Content-Length`, weak `ETag`, body).
 *
 * It takes only the plain case, decided from the headers before any byte of
 * the body is read: `POST` to exactly `/verify`, `Content-Type:
 * application/json` (optionally `; charset=utf-8`), a `Content-Length` from 1
 * to the body limit, no `Content-Encoding` and no `Transfer-Encoding`.
 * Everything else (other routes, a query string, other media types or
 * charsets, compressed, chunked or oversized bodies) goes to Express
 * untouched, which answers it as it always has.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { JSON_BODY_LIMIT_BYTES } from "./app";
import type { FacilitatorContext } from "./context";
import { errorBody, logFailure, toErrorAnswer } from "./errors";
import { answerVerify } from "./routes";

const VERIFY_PATH = "/verify";
/** Content types taken by the fast path (compared in lower case); Express handles any other spelling. */
const FAST_CONTENT_TYPES = new Set(["application/json", "application/json; charset=utf-8"]);
const CONTENT_LENGTH = /^[0-9]{1,9}$/;
/** What Express sends for a JSON answer (`res.json` sets the type, `res.send` adds the charset). */
const JSON_CONTENT_TYPE = "application/json; charset=utf-8";
const BYTE_ORDER_MARK = 0xfeff;
/** JSON's whitespace (RFC 8259) then the first other character, as body-parser finds it. */
const FIRST_NON_WHITESPACE = /^[ \t\n\r]*([^ \t\n\r]|$)/;

/**
 * An error shaped like body-parser's (`type` + `status`), so that
 * {@link toErrorAnswer} maps fast-path body failures exactly as it maps
 * Express's: `entity.parse.failed` → 400 malformed_json, `request.aborted` → 400.
 */
class BodyError extends Error {
  override readonly name = "BodyError";
  constructor(
    readonly type: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Whether the request can be answered without Express (headers only; the body is not read yet). */
function takesFastPath(req: IncomingMessage): boolean {
  if (req.method !== "POST" || req.url !== VERIFY_PATH) return false;
  const headers = req.headers;
  if (headers["content-encoding"] !== undefined || headers["transfer-encoding"] !== undefined) return false;
  const type = headers["content-type"];
  if (type === undefined || !FAST_CONTENT_TYPES.has(type.toLowerCase())) return false;
  const length = headers["content-length"];
  if (length === undefined || !CONTENT_LENGTH.test(length)) return false;
  const bytes = Number(length);
  return bytes > 0 && bytes <= JSON_BODY_LIMIT_BYTES;
}

/**
 * body-parser's strict JSON parsing: an empty body is `{}`, the first
 * non-whitespace character must open an object or an array, and a leading
 * byte order mark is dropped (its UTF-8 decoder strips it).
 */
function parseJsonBody(raw: Buffer): unknown {
  let text = raw.toString("utf8");
  if (text.charCodeAt(0) === BYTE_ORDER_MARK) text = text.slice(1);
  if (text.length === 0) return {};
  if (text[0] !== "{" && text[0] !== "[") {
    const first = FIRST_NON_WHITESPACE.exec(text)![1];
    if (first !== "{" && first !== "[") {
      throw new BodyError("entity.parse.failed", 400, "body does not start with an object or array");
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new BodyError("entity.parse.failed", 400, (error as Error).message);
  }
}

/** Express's weak ETag of a body (the `etag` package: length in hex and 27 characters of base64 SHA-1). */
function weakEtag(body: Buffer): string {
  const hash = createHash("sha1").update(body).digest("base64").substring(0, 27);
  return `W/"${body.length.toString(16)}-${hash}"`;
}

/** The bytes and headers Express's `res.status(status).json(value)` writes. */
function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = Buffer.from(JSON.stringify(value), "utf8");
  // Flat [name, value, …] headers: written in this order, without the per-call header map.
  res.writeHead(status, [
    "Content-Type",
    JSON_CONTENT_TYPE,
    "Content-Length",
    String(body.length),
    "ETag",
    weakEtag(body),
  ]);
  res.end(body);
}

function fail(context: FacilitatorContext, res: ServerResponse, error: unknown): void {
  const answer = toErrorAnswer(error);
  logFailure(context.logger, VERIFY_PATH, error, answer);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, answer.status, errorBody(answer));
}

function handleVerify(context: FacilitatorContext, req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  let settled = false;
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("error", () => {
    // The client went away mid-body: answered as body-parser answers it (nobody reads it).
    if (settled) return;
    settled = true;
    fail(context, res, new BodyError("request.aborted", 400, "request aborted"));
  });
  req.on("end", () => {
    if (settled) return;
    settled = true;
    let body: unknown;
    try {
      body = parseJsonBody(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    } catch (error) {
      fail(context, res, error);
      return;
    }
    answerVerify(context, body).then(
      (answer) => sendJson(res, answer.status, answer.body),
      (error: unknown) => fail(context, res, error),
    );
  });
}

/** A request listener answering plain `POST /verify` itself and handing every other request to `fallback`. */
export function verifyFastPath(context: FacilitatorContext, fallback: RequestListener): RequestListener {
  return (req, res) => {
    if (takesFastPath(req)) handleVerify(context, req, res);
    else fallback(req, res);
  };
}
