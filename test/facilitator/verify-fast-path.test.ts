/**
 * The `node:http` fast path of `POST /verify` (facilitator/api/verify-fast-path.ts)
 * must answer byte for byte what the Express route answers. Each case is sent
 * over a raw socket to two servers built on the same context: one through
 * the fast path (counting what it hands to Express), one through Express
 * alone. Only the `Date` header may differ.
 */
import { gzipSync } from "node:zlib";
import { expect } from "chai";
import { verifyFastPath } from "../../facilitator/api/verify-fast-path";
import type { RequestListener } from "node:http";
import type { FacilitatorContext } from "../../facilitator/api/context";
import {
  bodyFor,
  payer,
  sign,
  startTestFacilitator,
  type TestFacilitator,
  stranger,
  v1Claims,
  v2Claims,
} from "./helpers";
import { closeUnreachableServices, unreachableUrl } from "../support/unreachable";
import {
  exchange,
  type FastPathPair,
  jsonOf,
  startFastPathPair,
  statusOf,
  stopFastPathPair,
} from "../support/fast-path-pair";

interface Case {
  body: string | Buffer;
  contentType?: string;
  path?: string;
  /** A `Content-Encoding` header. */
  encoding?: string;
}

function requestHead(
  path: string,
  contentType: string | undefined,
  length: number,
  encoding?: string,
): string {
  const type = contentType === undefined ? "" : `Content-Type: ${contentType}\r\n`;
  const coding = encoding === undefined ? "" : `Content-Encoding: ${encoding}\r\n`;
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${type}${coding}Content-Length: ${length}\r\n\r\n`;
}

/** The fast path and Express alone, on one running facilitator's context and app. */
function startPairFor(facilitator: { server: { context: FacilitatorContext; app: RequestListener } }) {
  const { context, app } = facilitator.server;
  return startFastPathPair(app, (fallback) => verifyFastPath(context, fallback));
}

/** Sends the case to both servers; returns the (identical) response and whether Express answered it. */
async function compare(pair: FastPathPair, c: Case): Promise<{ response: string; viaExpress: boolean }> {
  const body = typeof c.body === "string" ? Buffer.from(c.body, "utf8") : c.body;
  const head = requestHead(
    c.path ?? "/verify",
    "contentType" in c ? c.contentType : "application/json",
    body.length,
    c.encoding,
  );
  const before = pair.fallbacks;
  const fast = await exchange(pair.fast, Buffer.concat([Buffer.from(head, "latin1"), body]));
  const viaExpress = pair.fallbacks > before;
  const express = await exchange(pair.express, Buffer.concat([Buffer.from(head, "latin1"), body]));
  expect(fast).to.equal(express);
  return { response: fast, viaExpress };
}

describe("facilitator POST /verify fast path", function () {
  let facilitator: TestFacilitator;
  let pair: FastPathPair;

  before(async function () {
    facilitator = await startTestFacilitator();
    pair = await startPairFor(facilitator);
  });

  after(async function () {
    await stopFastPathPair(pair);
    await facilitator?.stop();
  });

  const json = (value: unknown) => JSON.stringify(value);
  const fastCases: [string, () => Promise<Case>, number][] = [
    ["a valid x402 v1 payment", async () => ({ body: json(bodyFor(await sign(v1Claims()), 1)) }), 200],
    ["a valid x402 v2 V2 payment", async () => ({ body: json(bodyFor(await sign(v2Claims()), 2)) }), 200],
    [
      "an invalid payment (amount)",
      async () => ({ body: json(bodyFor(await sign(v1Claims()), 2, { amount: "1" })) }),
      200,
    ],
    [
      "a payment signed by another wallet",
      async () => ({ body: json(bodyFor(await sign(v1Claims(), "eip712", stranger), 1)) }),
      200,
    ],
    [
      "a malformed envelope",
      async () => ({ body: json(bodyFor(await sign(v1Claims()), 1, { payTo: "0x1234" })) }),
      400,
    ],
    ["malformed JSON", async () => ({ body: '{"x402Version":' }), 400],
    ["a JSON string", async () => ({ body: '"hello"' }), 400],
    ["a JSON number", async () => ({ body: "42" }), 400],
    ["JSON null", async () => ({ body: "null" }), 400],
    ["a JSON array", async () => ({ body: "[]" }), 400],
    ["whitespace only", async () => ({ body: " \n\t" }), 400],
    [
      "a valid payment after whitespace",
      async () => ({ body: "\r\n \t" + json(bodyFor(await sign(v1Claims()), 1)) }),
      200,
    ],
    [
      "a valid payment after a byte order mark",
      async () => ({ body: "\ufeff" + json(bodyFor(await sign(v1Claims()), 1)) }),
      200,
    ],
    ["a byte order mark alone", async () => ({ body: "\ufeff" }), 400],
    [
      "invalid UTF-8 inside a string",
      async () => ({
        body: Buffer.concat([
          Buffer.from('{"paymentPayload":"'),
          Buffer.from([0xff, 0xc3]),
          Buffer.from('"}'),
        ]),
      }),
      400,
    ],
    [
      "charset=utf-8 in any letter case",
      async () => ({
        body: json(bodyFor(await sign(v1Claims()), 1)),
        contentType: "Application/JSON; Charset=UTF-8",
      }),
      200,
    ],
  ];
  for (const [what, build, status] of fastCases) {
    it(`answers ${what} itself, byte for byte as Express (${status})`, async function () {
      const { response, viaExpress } = await compare(pair, await build());
      expect(viaExpress).to.equal(false);
      expect(statusOf(response)).to.equal(status);
    });
  }

  it("checksums the recovered signer in a signer_mismatch message", async function () {
    const { response } = await compare(pair, {
      body: json(bodyFor(await sign(v1Claims(), "eip712", stranger), 1)),
    });
    const body = jsonOf(response);
    expect(body.invalidReason).to.equal("signer_mismatch");
    expect(body.invalidMessage).to.equal(
      `signature was made by ${stranger.address}, not by user_address ${payer.address}`,
    );
  });

  const expressCases: [string, () => Promise<Case>, number][] = [
    [
      "a query string",
      async () => ({ body: json(bodyFor(await sign(v1Claims()), 1)), path: "/verify?x=1" }),
      200,
    ],
    [
      "a trailing slash",
      async () => ({ body: json(bodyFor(await sign(v1Claims()), 1)), path: "/verify/" }),
      200,
    ],
    ["a text/plain body", async () => ({ body: "x=1", contentType: "text/plain" }), 400],
    ["no content type", async () => ({ body: "{}", contentType: undefined }), 400],
    [
      "an unsupported charset",
      async () => ({ body: "{}", contentType: "application/json; charset=latin1" }),
      415,
    ],
    ["an oversized body", async () => ({ body: json({ pad: "x".repeat(70 * 1024) }) }), 413],
    ["an empty body", async () => ({ body: "" }), 400],
    [
      "a gzip body that does not decode",
      async () => ({ body: json(bodyFor(await sign(v1Claims()), 1)), encoding: "gzip" }),
      400,
    ],
    [
      "a deflate body that does not decode",
      async () => ({ body: json(bodyFor(await sign(v1Claims()), 1)), encoding: "deflate" }),
      400,
    ],
    [
      "a truncated gzip body",
      async () => ({
        body: gzipSync(json(bodyFor(await sign(v1Claims()), 1))).subarray(0, 20),
        encoding: "gzip",
      }),
      400,
    ],
    ["an unknown content encoding", async () => ({ body: "{}", encoding: "x-unknown" }), 415],
    ["zstd", async () => ({ body: "{}", encoding: "zstd" }), 415],
    [
      "a correct gzip body",
      async () => ({ body: gzipSync(json(bodyFor(await sign(v1Claims()), 1))), encoding: "gzip" }),
      200,
    ],
    [
      "identity encoding",
      async () => ({ body: json(bodyFor(await sign(v1Claims()), 1)), encoding: "identity" }),
      200,
    ],
    ...["%ff", "%E0%A4%A", "%C3%28"].map((escape): [string, () => Promise<Case>, number] => [
      `a malformed escape ${escape} after the path`,
      async () => ({ body: "{}", path: `/verify/${escape}` }),
      404,
    ]),
  ];
  for (const [what, build, status] of expressCases) {
    it(`leaves ${what} to Express (${status})`, async function () {
      const { response, viaExpress } = await compare(pair, await build());
      expect(viaExpress).to.equal(true);
      expect(statusOf(response)).to.equal(status);
    });
  }

  it("hands every other route to Express", async function () {
    const { response, viaExpress } = await compare(pair, { body: "{}", path: "/nowhere" });
    expect(viaExpress).to.equal(true);
    expect(statusOf(response)).to.equal(404);
  });

  describe("when Core's public params cannot be loaded", function () {
    let unpinned: TestFacilitator;
    let unpinnedPair: FastPathPair;

    before(async function () {
      unpinned = await startTestFacilitator({ coreUrl: await unreachableUrl() }, {});
      unpinnedPair = await startPairFor(unpinned);
    });

    after(async function () {
      await stopFastPathPair(unpinnedPair);
      await unpinned?.stop();
      await closeUnreachableServices();
    });

    it("answers 500 core_unavailable as Express does", async function () {
      // Why Core is unreachable varies between attempts (refused, timed out), so only the message differs.
      const body = Buffer.from(json(bodyFor(await sign(v1Claims()), 2)));
      const head = requestHead("/verify", "application/json", body.length);
      const before = unpinnedPair.fallbacks;
      const answers = [
        await exchange(unpinnedPair.fast, Buffer.concat([Buffer.from(head, "latin1"), body])),
        await exchange(unpinnedPair.express, Buffer.concat([Buffer.from(head, "latin1"), body])),
      ];
      expect(unpinnedPair.fallbacks).to.equal(before);
      const [fast, express] = answers.map((response) => {
        const parsed = jsonOf(response);
        const headers = response
          .slice(0, response.indexOf("\r\n\r\n"))
          .replace(/^(Content-Length|ETag): .*$/gim, "");
        return {
          status: statusOf(response),
          headers,
          keys: Object.keys(parsed),
          code: parsed.code,
          error: parsed.error,
        };
      });
      expect(fast.status).to.equal(500);
      expect(fast.code).to.equal("core_unavailable");
      expect(String(fast.error)).to.match(/^deployment parameters unavailable: /);
      expect({ ...fast, error: undefined }).to.deep.equal({ ...express, error: undefined });
    });

    it("still answers 400 for a malformed body first", async function () {
      const { response } = await compare(unpinnedPair, {
        body: json({ paymentPayload: 1, paymentRequirements: {} }),
      });
      expect(statusOf(response)).to.equal(400);
    });
  });
});
