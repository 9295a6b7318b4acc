/**
 * Malformed input below the routes, shared by the Core and facilitator
 * tests: bodies that do not decode as their `Content-Encoding` says,
 * encodings the services do not take, path parameters that are not valid
 * percent-encoding; a raw HTTP client (paths sent as is) and the assertions
 * on the answer and the log.
 */
import { request as httpRequest } from "node:http";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { expect } from "chai";
import type { LogCapture } from "./log-capture";

export interface RawAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** One request with the path sent as is (no client-side URL normalisation). */
export function send(
  baseUrl: string,
  method: string,
  path: string,
  body?: Buffer,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({
          status: res.statusCode!,
          body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>,
        }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

export const JSON_TYPE = { "content-type": "application/json" };
export const VALID = Buffer.from(JSON.stringify({ address: "0x0000000000000000000000000000000000000001" }));

/** [what, Content-Encoding, body, status, code, message pattern] */
export const BODY_CASES: [string, string, Buffer, number, string, RegExp][] = [
  ["gzip that is not gzip", "gzip", VALID, 400, "undecodable_body", /^body: not valid gzip data \(.+\)$/],
  [
    "truncated gzip",
    "gzip",
    gzipSync(VALID).subarray(0, 12),
    400,
    "undecodable_body",
    /^body: not valid gzip data \(/,
  ],
  ["deflate that is not deflate", "deflate", VALID, 400, "undecodable_body", /^body: not valid deflate data/],
  ["br that is not brotli", "br", VALID, 400, "undecodable_body", /^body: not valid br data/],
  ["zstd (not accepted)", "zstd", VALID, 415, "unsupported_encoding", /^Content-Encoding "zstd" is not/],
  [
    "an unknown encoding",
    "x-unknown",
    VALID,
    415,
    "unsupported_encoding",
    /^Content-Encoding "x-unknown" is not supported \(use identity, gzip, deflate or br\)$/,
  ],
  ["two encodings", "gzip, br", gzipSync(brotliCompressSync(VALID)), 415, "unsupported_encoding", /gzip, br/],
  ["identity, malformed JSON", "identity", Buffer.from("{"), 400, "malformed_json", /^body: malformed JSON$/],
  ["gzip of malformed JSON", "gzip", gzipSync("{"), 400, "malformed_json", /^body: malformed JSON$/],
  ["deflate of malformed JSON", "DEFLATE", deflateSync("{"), 400, "malformed_json", /^body: malformed JSON$/],
  [
    "gzip over the limit once decoded",
    "gzip",
    gzipSync(JSON.stringify({ pad: "x".repeat(70 * 1024) })),
    413,
    "body_too_large",
    /^body: larger than the limit of 65536 bytes/,
  ],
];

/** Malformed percent-encodings: a lone byte, a truncated sequence, an invalid continuation byte. */
export const BAD_ESCAPES = ["%ff", "%E0%A4%A", "%C3%28"];

export function expectClientError(answer: RawAnswer, status: number, code: string, message: RegExp): void {
  expect(answer.status, JSON.stringify(answer.body)).to.equal(status);
  expect(Object.keys(answer.body).sort()).to.deep.equal(["code", "error"]);
  expect(answer.body.code).to.equal(code);
  expect(answer.body.error).to.match(message);
}

/** No error-level line, and the client error lines carry no error object (no stack). */
export function expectQuietLog(logs: LogCapture): void {
  expect(logs.errors()).to.deep.equal([]);
  const rejected = logs.lines.filter((line) => line.msg === "request rejected");
  expect(rejected).to.not.be.empty;
  for (const line of rejected) {
    expect(line.level).to.be.below(30); // debug
    expect(line).to.not.have.property("err");
  }
}
