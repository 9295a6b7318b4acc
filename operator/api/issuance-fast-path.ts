/**
 * `POST /core/guarantees` straight on `node:http`, in front of the Express app.
 *
 * Why: issuance is Core's hot route, and Express's per-request dispatch was
 * the largest single source of its young-generation garbage (≈ 20 % of the
 * bytes allocated per guarantee; docs/benchmarks.md), whose scavenges make
 * the latency tail. The fast path does what the Express stack does for this
 * route, in the same order, through the same functions:
 *
 * 1. request id ({@link requestIdFrom}) and the one log line when the response closes;
 * 2. the request metrics, labelled with the route (or "unmatched" for a body
 *    the JSON parser refuses, as Express labels it);
 * 3. the JSON body, parsed as `express.json()` parses it;
 * 4. the bearer token ({@link authenticate});
 * 5. {@link GuaranteeIssuer.issue}, or the error mapping of the error
 *    middleware ({@link toErrorResponse});
 *
 * and writes the bytes Express writes (`X-Request-Id`, any error headers,
 * `Content-Type`, `Content-Length`, body; Core's app sends no ETag). Which
 * requests it takes is runtime/json-fast-path.ts's rule; Express answers the rest.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { isPlainJsonPost, readJsonBody, writeJson } from "../../runtime/json-fast-path";
import { authenticate } from "../auth";
import { UNMATCHED_ROUTE } from "../metrics";
import type { CoreContext } from "./context";
import { logErrorResponse, toErrorResponse } from "./error-handler";
import { JSON_BODY_LIMIT_BYTES } from "./app";
import { logRequestLine, REQUEST_ID_HEADER, requestIdFrom } from "./request-context";

export const ISSUANCE_PATH = "/core/guarantees";

function flatHeaders(headers: Readonly<Record<string, string>>): string[] {
  const flat: string[] = [];
  for (const name of Object.keys(headers)) flat.push(name, headers[name]);
  return flat;
}

function handleIssuance(context: CoreContext, req: IncomingMessage, res: ServerResponse): void {
  const started = process.hrtime.bigint();
  const id = requestIdFrom(req.headers["x-request-id"] as string | undefined);
  const { logger, metrics } = context;
  let route = UNMATCHED_ROUTE;
  res.on("close", () => logRequestLine(logger, id, req.method, ISSUANCE_PATH, res, started));
  res.on("finish", () => metrics.httpRequestFinished("POST", route, res.statusCode, started));

  const send = (status: number, value: unknown, headers: readonly string[] = []) =>
    writeJson(res, status, Buffer.from(JSON.stringify(value), "utf8"), [REQUEST_ID_HEADER, id, ...headers]);
  const fail = (error: unknown) => {
    const answer = toErrorResponse(error);
    // The request id as a field: no child logger is built for a line the level may drop.
    logErrorResponse(logger, error, answer, { req_id: id });
    if (res.headersSent) {
      // Too late for an error body: cut the connection so the client sees a failure, not a truncated success.
      res.destroy();
      return;
    }
    send(answer.status, answer.body, flatHeaders(answer.headers));
  };

  readJsonBody(
    req,
    (body) => {
      route = ISSUANCE_PATH;
      authenticate(context.accessTokens, req.headers.authorization)
        .then((principal) => context.issuer.issue(principal, body))
        .then((certificate) => send(200, certificate), fail);
    },
    fail,
  );
}

/** A request listener answering plain `POST /core/guarantees` itself and handing every other request to `fallback`. */
export function issuanceFastPath(context: CoreContext, fallback: RequestListener): RequestListener {
  return (req, res) => {
    if (isPlainJsonPost(req, ISSUANCE_PATH, JSON_BODY_LIMIT_BYTES)) handleIssuance(context, req, res);
    else fallback(req, res);
  };
}
