/**
 * `POST /verify` straight on `node:http`, in front of the Express app.
 *
 * Why: `/verify` is the facilitator's hot route, and Express plus its JSON
 * body parser cost more CPU per request here than the whole verification
 * (docs/x402-integration.md, "Benchmark"). The fast path reads the body,
 * parses it once and answers through the same {@link answerVerify} and the
 * same error mapping as the Express route, writing the same bytes Express
 * writes (status, `Content-Type`, `Content-Length`, weak `ETag`, body).
 * Which requests it takes (the plain case only; Express gets the rest) is
 * runtime/json-fast-path.ts's rule.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { isPlainJsonPost, readJsonBody, writeJson } from "../../runtime/json-fast-path";
import { JSON_BODY_LIMIT_BYTES } from "./app";
import type { FacilitatorContext } from "./context";
import { errorBody, logFailure, toErrorAnswer } from "./errors";
import { answerVerify } from "./routes";

const VERIFY_PATH = "/verify";

/** Express's weak ETag of a body (the `etag` package: length in hex and 27 characters of base64 SHA-1). */
function weakEtag(body: Buffer): string {
  const hash = createHash("sha1").update(body).digest("base64").substring(0, 27);
  return `W/"${body.length.toString(16)}-${hash}"`;
}

/** The bytes and headers Express's `res.status(status).json(value)` writes (this app keeps ETags on). */
function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = Buffer.from(JSON.stringify(value), "utf8");
  writeJson(res, status, body, [], ["ETag", weakEtag(body)]);
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
  readJsonBody(
    req,
    (body) =>
      answerVerify(context, body).then(
        (answer) => sendJson(res, answer.status, answer.body),
        (error: unknown) => fail(context, res, error),
      ),
    (error) => fail(context, res, error),
  );
}

/** A request listener answering plain `POST /verify` itself and handing every other request to `fallback`. */
export function verifyFastPath(context: FacilitatorContext, fallback: RequestListener): RequestListener {
  return (req, res) => {
    if (isPlainJsonPost(req, VERIFY_PATH, JSON_BODY_LIMIT_BYTES)) handleVerify(context, req, res);
    else fallback(req, res);
  };
}
