/**
 * The `node:http` fast path of `POST /core/guarantees`
 * (operator/api/issuance-fast-path.ts) must answer byte for byte what the
 * Express route answers, and count and log the request the same way. Each
 * case is sent over a raw socket to two servers built on one running Core's
 * context: one through the fast path (counting what it hands to Express),
 * one through Express alone. Requests carry a fixed `X-Request-Id`, so only
 * the `Date` header may differ.
 */
import { gzipSync } from "node:zlib";
import { expect } from "chai";
import { verifyCertificateSignature } from "../../sdk/certificate";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { issuanceFastPath } from "../../operator/api/issuance-fast-path";
import {
  exchange,
  type FastPathPair,
  jsonOf,
  startFastPathPair,
  statusOf,
  stopFastPathPair,
} from "../support/fast-path-pair";
import { signIn, startTestCore, T0, type TestCore } from "./helpers";
import { facilitator, payer, recipient, signedBody, stranger, v1Claims } from "./guarantee-fixtures";

interface Case {
  body: string | Buffer;
  token?: string;
  authorization?: string;
  contentType?: string;
  path?: string;
  method?: string;
  requestId?: string | null;
  chunked?: boolean;
  /** A `Content-Encoding` header. */
  encoding?: string;
}

function rawRequest(c: Case): Buffer {
  const body = typeof c.body === "string" ? Buffer.from(c.body, "utf8") : c.body;
  const lines = [
    `${c.method ?? "POST"} ${c.path ?? "/core/guarantees"} HTTP/1.1`,
    "Host: 127.0.0.1",
    "Connection: close",
  ];
  const contentType = "contentType" in c ? c.contentType : "application/json";
  if (contentType !== undefined) lines.push(`Content-Type: ${contentType}`);
  const authorization = c.authorization ?? (c.token === undefined ? undefined : `Bearer ${c.token}`);
  if (authorization !== undefined) lines.push(`Authorization: ${authorization}`);
  if (c.encoding !== undefined) lines.push(`Content-Encoding: ${c.encoding}`);
  const requestId = c.requestId === undefined ? "fast-path-test" : c.requestId;
  if (requestId !== null) lines.push(`X-Request-Id: ${requestId}`);
  if (c.chunked) {
    lines.push("Transfer-Encoding: chunked");
    const chunk = Buffer.concat([
      Buffer.from(`${body.length.toString(16)}\r\n`),
      body,
      Buffer.from("\r\n0\r\n\r\n"),
    ]);
    return Buffer.concat([Buffer.from(lines.join("\r\n") + "\r\n\r\n", "latin1"), chunk]);
  }
  lines.push(`Content-Length: ${body.length}`);
  return Buffer.concat([Buffer.from(lines.join("\r\n") + "\r\n\r\n", "latin1"), body]);
}

function headOf(response: string): string {
  return response.slice(0, response.indexOf("\r\n\r\n"));
}

describe("Core POST /core/guarantees fast path", function () {
  let t: TestCore;
  let pair: FastPathPair;
  let recipientToken: string;
  let strangerToken: string;
  let nextReqId = 1n;

  const json = (value: unknown) => JSON.stringify(value);
  const issuable = async () => json(await signedBody(v1Claims({ reqId: 1_000n + nextReqId++, amount: 10n })));

  before(async function () {
    t = await startTestCore({ facilitators: [facilitator.address] });
    await t.core.context.store.creditDeposit(payer.address, ZERO_ADDRESS, 1_000n, T0);
    recipientToken = (await signIn(t.core.url, recipient)).access_token;
    strangerToken = (await signIn(t.core.url, stranger)).access_token;
    const { context, app } = t.core;
    pair = await startFastPathPair(app, (fallback) => issuanceFastPath(context, fallback));
  });

  after(async function () {
    await stopFastPathPair(pair);
    await t?.stop();
  });

  /** Sends the case to both servers; returns the (identical) response and whether Express answered it. */
  async function compare(c: Case): Promise<{ response: string; viaExpress: boolean }> {
    const raw = rawRequest(c);
    const before = pair.fallbacks;
    const fast = await exchange(pair.fast, raw);
    const viaExpress = pair.fallbacks > before;
    const express = await exchange(pair.express, raw);
    expect(fast).to.equal(express);
    return { response: fast, viaExpress };
  }

  it("issues as Express does: same status line and headers, a valid certificate", async function () {
    const fast = await exchange(pair.fast, rawRequest({ body: await issuable(), token: recipientToken }));
    const express = await exchange(
      pair.express,
      rawRequest({ body: await issuable(), token: recipientToken }),
    );
    expect(pair.fallbacks).to.equal(0);
    expect(statusOf(fast)).to.equal(200);
    // Same claims shape and length, different reqId: the heads (Content-Length included) are equal.
    expect(headOf(fast)).to.equal(headOf(express));
    expect(headOf(fast)).to.match(
      /\r\nX-Request-Id: fast-path-test\r\nContent-Type: application\/json; charset=utf-8\r\n/,
    );
    for (const response of [fast, express]) {
      const certificate = jsonOf(response) as { claims: string; signature: string };
      expect(Object.keys(certificate)).to.deep.equal(["claims", "signature"]);
      expect(verifyCertificateSignature(t.core.context.signer.publicKey, certificate)).to.equal(true);
    }
  });

  it("answers a byte-identical retry with the same 409 and stored certificate", async function () {
    const body = await issuable();
    const first = await exchange(pair.fast, rawRequest({ body, token: recipientToken }));
    expect(statusOf(first)).to.equal(200);
    const { response, viaExpress } = await compare({ body, token: recipientToken });
    expect(viaExpress).to.equal(false);
    expect(statusOf(response)).to.equal(409);
    expect(jsonOf(response)).to.deep.include({ code: "duplicate_guarantee", certificate: jsonOf(first) });
  });

  const errorCases: [string, () => Promise<Case>, number, string][] = [
    ["no Authorization header", async () => ({ body: await issuable() }), 401, "missing_token"],
    [
      "a malformed Authorization header",
      async () => ({ body: await issuable(), authorization: "Basic abc" }),
      401,
      "invalid_token",
    ],
    [
      "an invalid token",
      async () => ({ body: await issuable(), token: "abc.def.ghi" }),
      401,
      "invalid_token",
    ],
    [
      "a caller who may not issue for the recipient",
      async () => ({ body: await issuable(), token: strangerToken }),
      403,
      "not_authorized_for_recipient",
    ],
    [
      "malformed JSON (before the token is looked at)",
      async () => ({ body: '{"claims":' }),
      400,
      "malformed_json",
    ],
    ["a JSON string", async () => ({ body: '"hello"', token: recipientToken }), 400, "malformed_json"],
    ["a JSON array", async () => ({ body: "[]", token: recipientToken }), 400, "invalid_request"],
    [
      "a claim field of the wrong shape",
      async () => ({
        body: (await issuable()).replace(/"amount":"[^"]*"/, '"amount":"-1"'),
        token: recipientToken,
      }),
      400,
      "invalid_request",
    ],
    [
      "more than the collateral covers",
      async () => ({
        body: json(await signedBody(v1Claims({ reqId: 9_999n, amount: 10n ** 18n }))),
        token: recipientToken,
      }),
      400,
      "insufficient_collateral",
    ],
  ];
  for (const [name, make, status, code] of errorCases) {
    it(`answers ${name} as Express does (${status} ${code})`, async function () {
      const { response, viaExpress } = await compare(await make());
      expect(viaExpress).to.equal(false);
      expect(statusOf(response)).to.equal(status);
      expect(jsonOf(response)).to.have.property("code", code);
    });
  }

  it("keeps the byte order mark and whitespace rules of express.json", async function () {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(" \n" + (await issuable()))]);
    const { response, viaExpress } = await compare({ body, token: strangerToken });
    expect(viaExpress).to.equal(false);
    expect(statusOf(response)).to.equal(403);
  });

  it("generates a request id when the caller's is missing or not a sane token", async function () {
    for (const requestId of [null, "has spaces"]) {
      const response = await exchange(pair.fast, rawRequest({ body: "{}", requestId }));
      expect(headOf(response)).to.match(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/);
    }
  });

  const fallbackCases: [string, () => Promise<Case>][] = [
    [
      "a query string",
      async () => ({ body: await issuable(), token: strangerToken, path: "/core/guarantees?x=1" }),
    ],
    [
      "a trailing slash",
      async () => ({ body: await issuable(), token: strangerToken, path: "/core/guarantees/" }),
    ],
    [
      "another media type",
      async () => ({ body: await issuable(), token: strangerToken, contentType: "text/plain" }),
    ],
    ["no media type", async () => ({ body: await issuable(), token: strangerToken, contentType: undefined })],
    [
      "a charset other than utf-8",
      async () => ({
        body: await issuable(),
        token: strangerToken,
        contentType: "application/json; charset=latin1",
      }),
    ],
    ["a chunked body", async () => ({ body: await issuable(), token: strangerToken, chunked: true })],
    ["an empty body", async () => ({ body: "", token: strangerToken })],
    ["a body over the limit", async () => ({ body: " ".repeat(64 * 1024 + 1), token: strangerToken })],
    ["another method", async () => ({ body: "", method: "PUT", token: strangerToken })],
  ];
  for (const [name, make] of fallbackCases) {
    it(`hands ${name} to Express`, async function () {
      const { viaExpress } = await compare(await make());
      expect(viaExpress).to.equal(true);
    });
  }

  // Malformed input the fast path leaves to Express: both servers answer the same 4xx, never a 500.
  const malformedCases: [string, () => Promise<Case>, number, string][] = [
    [
      "a gzip body that does not decode",
      async () => ({ body: await issuable(), token: recipientToken, encoding: "gzip" }),
      400,
      "undecodable_body",
    ],
    [
      "a deflate body that does not decode",
      async () => ({ body: await issuable(), token: recipientToken, encoding: "deflate" }),
      400,
      "undecodable_body",
    ],
    [
      "a truncated gzip body",
      async () => ({
        body: gzipSync(await issuable()).subarray(0, 20),
        token: recipientToken,
        encoding: "gzip",
      }),
      400,
      "undecodable_body",
    ],
    [
      "an unknown content encoding",
      async () => ({ body: await issuable(), token: recipientToken, encoding: "x-unknown" }),
      415,
      "unsupported_encoding",
    ],
    [
      "zstd",
      async () => ({ body: await issuable(), token: recipientToken, encoding: "zstd" }),
      415,
      "unsupported_encoding",
    ],
    [
      "a correct gzip body (issued by Express)",
      async () => ({ body: gzipSync(await issuable()), token: strangerToken, encoding: "gzip" }),
      403,
      "not_authorized_for_recipient",
    ],
    [
      "identity encoding (issued by Express)",
      async () => ({ body: await issuable(), token: strangerToken, encoding: "identity" }),
      403,
      "not_authorized_for_recipient",
    ],
    ...["%ff", "%E0%A4%A", "%C3%28"].map((escape): [string, () => Promise<Case>, number, string] => [
      `a malformed path parameter ${escape}`,
      async () => ({ body: "{}", token: recipientToken, path: `/core/guarantees/${escape}/finalize` }),
      400,
      "malformed_path",
    ]),
    [
      "a malformed escape right after the path",
      async () => ({ body: await issuable(), token: recipientToken, path: "/core/guarantees%ff" }),
      404,
      "not_found",
    ],
  ];
  for (const [name, make, status, code] of malformedCases) {
    it(`hands ${name} to Express, which answers ${status} ${code}`, async function () {
      const { response, viaExpress } = await compare(await make());
      expect(viaExpress).to.equal(true);
      expect(statusOf(response)).to.equal(status);
      expect(jsonOf(response)).to.have.property("code", code);
    });
  }

  it("counts its requests in the metrics under the route, and refused bodies as unmatched", async function () {
    const metric = t.core.context.metrics.registry.getSingleMetric("surety_http_requests_total")!;
    const count = async (route: string, status: string) =>
      (await metric.get()).values.find(
        (v) => v.labels.method === "POST" && v.labels.route === route && v.labels.status === status,
      )?.value ?? 0;
    const before = {
      issued: await count("/core/guarantees", "200"),
      refused: await count("unmatched", "400"),
    };
    await exchange(pair.fast, rawRequest({ body: await issuable(), token: recipientToken }));
    await exchange(pair.fast, rawRequest({ body: "{", token: recipientToken }));
    expect(await count("/core/guarantees", "200")).to.equal(before.issued + 1);
    expect(await count("unmatched", "400")).to.equal(before.refused + 1);
  });
});
