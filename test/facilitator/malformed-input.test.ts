/**
 * Malformed input below the routes, on a real facilitator: a body that does
 * not decode as its `Content-Encoding` says, or an encoding the facilitator
 * does not take, is the 4xx of docs/facilitator.md ("Malformed input") on
 * both POST routes, `/verify` in `{error, code}` and `/settle` in settle's
 * failure shape, and writes no error-level log line. Nothing here reaches
 * Core: the body is refused before any route runs.
 */
import { gzipSync } from "node:zlib";
import { expect } from "chai";
import { captureLogs } from "../support/log-capture";
import {
  BAD_ESCAPES,
  BODY_CASES,
  expectClientError,
  expectQuietLog,
  JSON_TYPE,
  send,
} from "../support/malformed-input";
import { startTestFacilitator, type TestFacilitator } from "./helpers";
import { closeUnreachableServices, unreachableUrl } from "../support/unreachable";

describe("facilitator: malformed input is a 4xx, never a 500", function () {
  let facilitator: TestFacilitator;
  const logs = captureLogs();

  before(async function () {
    // Core is down: a body refused by the parser must not depend on it.
    facilitator = await startTestFacilitator({ coreUrl: await unreachableUrl() }, { logger: logs.logger });
  });

  after(async function () {
    await facilitator?.stop();
    await closeUnreachableServices();
  });

  beforeEach(() => logs.clear());

  for (const [what, encoding, body, status, code, message] of BODY_CASES) {
    it(`a body of ${what}: ${status} ${code} on /verify and /settle`, async function () {
      const headers = { ...JSON_TYPE, "content-encoding": encoding };
      expectClientError(await send(facilitator.url, "POST", "/verify", body, headers), status, code, message);

      const settled = await send(facilitator.url, "POST", "/settle", body, headers);
      expect(settled.status).to.equal(status);
      expect(settled.body).to.include({ success: false, certificate: null, errorReason: code });
      expect(settled.body.error).to.match(message);
      expect(settled.body.errorMessage).to.equal(settled.body.error);
      expectQuietLog(logs);
    });
  }

  it("a correct gzip body is decoded and reaches the route", async function () {
    const body = gzipSync(JSON.stringify({ paymentRequirements: {} }));
    const headers = { ...JSON_TYPE, "content-encoding": "gzip" };
    const verified = await send(facilitator.url, "POST", "/verify", body, headers);
    expect(verified.status).to.equal(400);
    expect(verified.body.code).to.equal("invalid_request");
    const settled = await send(facilitator.url, "POST", "/settle", body, headers);
    expect(settled.status).to.equal(400);
    expect(settled.body.errorReason).to.equal("invalid_request");
  });

  it("no route takes a path parameter: a malformed escape is a 404, not a 500", async function () {
    for (const escape of BAD_ESCAPES) {
      for (const path of [`/verify/${escape}`, `/supported${escape}`, `/${escape}`]) {
        expectClientError(await send(facilitator.url, "GET", path), 404, "not_found", /^no route for GET /);
      }
    }
    expect(logs.errors()).to.deep.equal([]);
  });
});
