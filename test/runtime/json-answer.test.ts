/**
 * sendJson (runtime/json-answer.ts) writes the bytes `res.status(status).json(body)` writes on an app
 * configured as Core and the facilitator are (x-powered-by and ETag off): status line, every header in
 * order but `Date`, and the body.
 */
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import express from "express";
import { createExpressServer } from "../../runtime/express-server";
import { sendJson } from "../../runtime/json-answer";

const BODIES: [number, unknown][] = [
  [200, { isValid: true, invalidReason: null, payer: "0x" + "ab".repeat(20), certificate: null }],
  [400, { error: "claims.amount: must be a decimal string", code: "invalid_request" }],
  [409, { error: "é ü — ✓ 🙂", code: "conflict", nested: [1, 2.5, "x", { deep: [] }] }],
  [500, []],
  [201, "a string"],
];

/** The raw answer to a POST on a fresh connection, `Date` left out. */
function rawAnswer(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () =>
      resolve(
        Buffer.concat(chunks)
          .toString()
          .replace(/\r\nDate: [^\r]*/, ""),
      ),
    );
    socket.on("error", reject);
    socket.end(`POST ${path} HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  });
}

describe("sendJson writes what res.status().json() writes", function () {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.post("/express/:i", (req, res) => {
    const [status, body] = BODIES[Number(req.params.i)];
    res.setHeader("X-Request-Id", "id-1");
    res.status(status).json(body);
  });
  app.post("/ours/:i", (req, res) => {
    const [status, body] = BODIES[Number(req.params.i)];
    res.setHeader("X-Request-Id", "id-1");
    sendJson(res, status, body);
  });
  const server = createExpressServer(app);

  before(async function () {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });

  after(async function () {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  BODIES.forEach(([status], i) => {
    it(`${status} ${JSON.stringify(BODIES[i][1]).slice(0, 40)}`, async function () {
      const port = (server.address() as AddressInfo).port;
      const expected = await rawAnswer(port, `/express/${i}`);
      expect(expected).to.match(new RegExp(`^HTTP/1.1 ${status} `));
      expect(await rawAnswer(port, `/ours/${i}`)).to.equal(expected);
    });
  });
});
