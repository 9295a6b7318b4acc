/**
 * The pieces of a `node:http` fast path for one hot `POST` route, in front of
 * an Express app: which requests it may take, reading and parsing their JSON
 * body exactly as `express.json()` (body-parser) does, and writing a JSON
 * answer with the bytes Express's `res.json` writes.
 *
 * Why: Express's dispatch and body-parser cost more CPU and garbage per
 * request than the work of the hot routes themselves (docs/benchmarks.md,
 * docs/x402-integration.md). Used by the facilitator (`POST /verify`) and
 * Core (`POST /core/guarantees`).
 *
 * Only the plain case is taken, decided from the headers before any byte of
 * the body is read: `POST` to exactly the route's path, `Content-Type:
 * application/json` (optionally `; charset=utf-8`), a `Content-Length` from 1
 * to the body limit, no `Content-Encoding` and no `Transfer-Encoding`.
 * Everything else (other routes, a query string, other media types or
 * charsets, compressed, chunked or oversized bodies) goes to Express
 * untouched, which answers it as it always has.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { BodyError } from "./client-errors";

/** Content types taken by a fast path (compared in lower case); Express handles any other spelling. */
const FAST_CONTENT_TYPES = new Set(["application/json", "application/json; charset=utf-8"]);
const CONTENT_LENGTH = /^[0-9]{1,9}$/;
/** What Express sends for a JSON answer (`res.json` sets the type, `res.send` adds the charset). */
export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";
const BYTE_ORDER_MARK = 0xfeff;
/** JSON's whitespace (RFC 8259) then the first other character, as body-parser finds it. */
const FIRST_NON_WHITESPACE = /^[ \t\n\r]*([^ \t\n\r]|$)/;

/** Whether a request to `path` can be answered without Express (headers only; the body is not read yet). */
export function isPlainJsonPost(req: IncomingMessage, path: string, bodyLimitBytes: number): boolean {
  if (req.method !== "POST" || req.url !== path) return false;
  const headers = req.headers;
  if (headers["content-encoding"] !== undefined || headers["transfer-encoding"] !== undefined) return false;
  const type = headers["content-type"];
  if (type === undefined || !FAST_CONTENT_TYPES.has(type.toLowerCase())) return false;
  const length = headers["content-length"];
  if (length === undefined || !CONTENT_LENGTH.test(length)) return false;
  const bytes = Number(length);
  return bytes > 0 && bytes <= bodyLimitBytes;
}

/**
 * body-parser's strict JSON parsing: an empty body is `{}`, the first
 * non-whitespace character must open an object or an array, and a leading
 * byte order mark is dropped (its UTF-8 decoder strips it).
 */
export function parseJsonBody(raw: Buffer): unknown {
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

/**
 * Reads the whole body and hands it, parsed, to `onBody`; a body that is not
 * JSON, or a client that goes away mid-body, goes to `onError` as a
 * {@link BodyError}. Exactly one of the two is called.
 */
export function readJsonBody(
  req: IncomingMessage,
  onBody: (body: unknown) => void,
  onError: (error: BodyError) => void,
): void {
  const chunks: Buffer[] = [];
  let settled = false;
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("error", () => {
    // The client went away mid-body: answered as body-parser answers it (nobody reads it).
    if (settled) return;
    settled = true;
    onError(new BodyError("request.aborted", 400, "request aborted"));
  });
  req.on("end", () => {
    if (settled) return;
    settled = true;
    let body: unknown;
    try {
      body = parseJsonBody(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    } catch (error) {
      onError(error as BodyError);
      return;
    }
    onBody(body);
  });
}

/**
 * Writes `body` (already serialised JSON) as Express's `res.status(status).json()` does:
 * `headersBefore`, then `Content-Type` and `Content-Length`, then `headersAfter`, in that
 * order (flat `[name, value, …]` lists, written without building a header map).
 */
export function writeJson(
  res: ServerResponse,
  status: number,
  body: Buffer,
  headersBefore: readonly string[] = [],
  headersAfter: readonly string[] = [],
): void {
  res.writeHead(status, [
    ...headersBefore,
    "Content-Type",
    JSON_CONTENT_TYPE,
    "Content-Length",
    String(body.length),
    ...headersAfter,
  ]);
  res.end(body);
}
