/**
 * Malformed input below the routes, on a real Core: a body that does not
 * decode as its `Content-Encoding` says, an encoding Core does not take, a
 * path parameter that is not valid percent-encoding. Every POST endpoint and
 * every route with a path parameter answers the 4xx of docs/operator-api.md
 * ("Malformed input") in the `{error, code}` shape, and none of it writes an
 * error-level log line (a caller could otherwise flood the log).
 */
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { expect } from "chai";
import { captureLogs } from "../support/log-capture";
import {
  BAD_ESCAPES,
  BODY_CASES,
  expectClientError,
  expectQuietLog,
  JSON_TYPE,
  send,
  VALID,
} from "../support/malformed-input";
import { startTestCore, type TestCore } from "./helpers";

describe("Core: malformed input is a 4xx, never a 500", function () {
  let t: TestCore;
  const logs = captureLogs();

  before(async function () {
    t = await startTestCore({}, { logger: logs.logger });
  });

  after(async function () {
    await t?.stop();
  });

  beforeEach(() => logs.clear());

  const ID = "0x" + "ab".repeat(32);
  const POSTS = [
    "/auth/nonce",
    "/auth/verify",
    "/auth/refresh",
    "/auth/logout",
    "/core/guarantees",
    `/core/guarantees/${ID}/finalize`,
    "/core/admin/webhooks",
  ];

  for (const [what, encoding, body, status, code, message] of BODY_CASES) {
    it(`a body of ${what}: ${status} ${code} on every POST`, async function () {
      for (const path of POSTS) {
        const answer = await send(t.core.url, "POST", path, body, {
          ...JSON_TYPE,
          "content-encoding": encoding,
        });
        expectClientError(answer, status, code, message);
      }
      expectQuietLog(logs);
    });
  }

  it("a correct gzip, deflate or br body is decoded and read", async function () {
    for (const [encoding, compress] of [
      ["gzip", gzipSync],
      ["deflate", deflateSync],
      ["br", brotliCompressSync],
    ] as const) {
      const answer = await send(t.core.url, "POST", "/auth/nonce", compress(VALID), {
        ...JSON_TYPE,
        "content-encoding": encoding,
      });
      expect(answer.status, encoding).to.equal(200);
      expect(answer.body).to.have.property("nonce");
    }
  });

  const PATHS: [method: string, template: string][] = [
    ["GET", "/core/guarantees/{}"],
    ["POST", "/core/guarantees/{}/finalize"],
    ["GET", "/core/users/{}/balances"],
    ["GET", "/core/users/{}/withdrawals"],
    ["GET", "/core/recipients/{}/guarantees"],
    ["GET", "/core/cycles/{}"],
    ["GET", "/core/cycles/{}/participants/0x0000000000000000000000000000000000000001/proof"],
    ["GET", "/core/cycles/1/participants/{}/proof"],
    ["GET", "/core/admin/webhooks/{}"],
    ["DELETE", "/core/admin/webhooks/{}"],
    ["GET", "/core/admin/webhooks/{}/deliveries"],
  ];
  for (const escape of BAD_ESCAPES) {
    it(`a path parameter ${escape}: 400 malformed_path on every route with a parameter`, async function () {
      for (const [method, template] of PATHS) {
        const path = template.replace("{}", escape);
        const answer = await send(t.core.url, method, path);
        expectClientError(answer, 400, "malformed_path", /^path: malformed percent-encoding$/);
      }
      expectQuietLog(logs);
    });
  }

  it("a malformed escape outside a parameter is an unknown route (404), not a 500", async function () {
    const answer = await send(t.core.url, "GET", "/core/tokens%ff");
    expectClientError(answer, 404, "not_found", /^no route for GET /);
    expect(logs.errors()).to.deep.equal([]);
  });
});
