/**
 * jsonBodyParser (runtime/client-errors.ts) reads plain JSON bodies itself and leaves every other to
 * body-parser: for each body below, the parsed `req.body` or the client error (status, code, message)
 * is the one `express.json()` gives through the same error mapping.
 */
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import express, { type ErrorRequestHandler, type RequestHandler } from "express";
import { clientErrorAnswer, jsonBodyParser } from "../../runtime/client-errors";
import { createExpressServer } from "../../runtime/express-server";

const LIMIT = 256;

function serve(parser: RequestHandler) {
  const app = express();
  app.use(parser);
  app.post("/", (req, res) => {
    res.json({ body: req.body as unknown, defined: req.body !== undefined });
  });
  app.use(((error: unknown, _req, res, _next) => {
    const answer = clientErrorAnswer(error) ?? {
      status: 500,
      code: "internal_error",
      message: String(error),
    };
    res.status(answer.status).json(answer);
  }) as ErrorRequestHandler);
  return createExpressServer(app);
}

/** Raw request: exact headers (no client-added Content-Type or encoding). */
function post(port: number, headers: Record<string, string>, body: Buffer | string) {
  return new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    const request = httpRequest(
      { host: "127.0.0.1", port, method: "POST", path: "/", headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

const JSON_TYPE = { "content-type": "application/json" };
const CASES: [string, Record<string, string>, Buffer | string][] = [
  ["an object", JSON_TYPE, '{"a":[1,"é",null]}'],
  ["an array", JSON_TYPE, "[1,2]"],
  ["an empty body", JSON_TYPE, ""],
  ["whitespace first", JSON_TYPE, ' \n\t{"a":1}'],
  ["a byte-order mark first", JSON_TYPE, '\ufeff{"a":1}'],
  ["a bare number (strict)", JSON_TYPE, "123"],
  ["null (strict)", JSON_TYPE, "null"],
  ["a non-JSON space first", JSON_TYPE, '\u00a0{"a":1}'],
  ["malformed JSON", JSON_TYPE, '{"a":'],
  ["only whitespace", JSON_TYPE, "   "],
  ["invalid UTF-8", JSON_TYPE, Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])],
  ["charset utf-8", { "content-type": "application/json; charset=utf-8" }, '{"a":1}'],
  ["upper-case type", { "content-type": "Application/JSON; Charset=UTF-8" }, '{"a":1}'],
  ["charset latin1", { "content-type": "application/json; charset=latin1" }, '{"a":1}'],
  ["another type", { "content-type": "text/plain" }, '{"a":1}'],
  ["over the limit", JSON_TYPE, JSON.stringify({ a: "x".repeat(LIMIT) })],
  ["exactly the limit", JSON_TYPE, JSON.stringify({ a: "x".repeat(LIMIT - 8) })],
  ["identity encoding named", { ...JSON_TYPE, "content-encoding": "identity" }, '{"a":1}'],
  ["chunked", { ...JSON_TYPE, "transfer-encoding": "chunked" }, '{"a":1}'],
];

describe("jsonBodyParser: plain JSON bodies read as express.json() reads them", function () {
  const ours = serve(jsonBodyParser(LIMIT));
  const reference = serve(express.json({ limit: LIMIT }));
  const port = (server: typeof ours) => (server.address() as AddressInfo).port;

  before(async function () {
    for (const server of [ours, reference]) {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    }
  });

  after(async function () {
    for (const server of [ours, reference]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  for (const [name, headers, body] of CASES) {
    it(name, async function () {
      const expected = await post(port(reference), headers, body);
      const actual = await post(port(ours), headers, body);
      expect(actual).to.deep.equal(expected);
    });
  }
});
