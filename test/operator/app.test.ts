import { expect } from "chai";
import { Router } from "express";
import { Writable } from "node:stream";
import pino from "pino";
import { WireError } from "../../sdk/errors";
import type { RouteModule } from "../../operator/api";
import { startCoreServer } from "../../operator/server";
import {
  deployTestContracts,
  post,
  request,
  startTestCore,
  type TestCore,
  tempDir,
  testConfig,
  testCoreDeps,
} from "./helpers";

/** Routes that fail in each way the error middleware must handle. */
const failing: RouteModule = () =>
  Router()
    .get("/test/wire-error", () => {
      throw new WireError("claims.amount", "must be greater than zero");
    })
    .get("/test/crash", async () => {
      throw new Error("secret internal detail");
    })
    // Shaped as http-errors shapes the framework's client errors (status and statusCode, expose).
    .get("/test/framework-4xx", () => {
      throw Object.assign(new Error("range not satisfiable: bytes=9-"), {
        status: 416,
        statusCode: 416,
        expose: true,
      });
    })
    .get("/test/framework-4xx-hidden", () => {
      throw Object.assign(new Error("secret detail"), { status: 403, statusCode: 403, expose: false });
    })
    // An error of our own that happens to carry a `status` (e.g. a status Core got from elsewhere).
    .get("/test/own-status", () => {
      throw Object.assign(new Error("upstream said 401"), { status: 401 });
    });

describe("operator Core app (errors, request ids, server)", () => {
  let t: TestCore;
  let url: string;

  beforeEach(async () => {
    t = await startTestCore({}, { routes: [failing] });
    url = t.core.url;
  });

  afterEach(async () => {
    await t.stop();
  });

  it("malformed JSON is 400 malformed_json", async () => {
    const response = await request(url, "POST", "/auth/nonce", { rawBody: '{"address": ' });
    expect(response.status).to.equal(400);
    expect(response.body).to.deep.equal({ error: "body: malformed JSON", code: "malformed_json" });
  });

  it("a body over 64 kB is 413 body_too_large", async () => {
    const response = await post(url, "/auth/nonce", { address: "0x" + "0".repeat(70_000) });
    expect(response.status).to.equal(413);
    expect(response.body).to.have.property("code", "body_too_large");
  });

  it("any other framework client error answers its 4xx, named by status; an own `status` stays a 500", async () => {
    expect(await request(url, "GET", "/test/framework-4xx")).to.deep.include({
      status: 416,
      body: { error: "range not satisfiable: bytes=9-", code: "range_not_satisfiable" },
    });
    expect(await request(url, "GET", "/test/framework-4xx-hidden")).to.deep.include({
      status: 403,
      body: { error: "Forbidden", code: "forbidden" },
    });
    expect(await request(url, "GET", "/test/own-status")).to.deep.include({
      status: 500,
      body: { error: "internal error", code: "internal_error" },
    });
  });

  it("a WireError is 400 with the field in the message", async () => {
    const response = await request(url, "GET", "/test/wire-error");
    expect(response.status).to.equal(400);
    expect(response.body).to.deep.equal({
      error: "claims.amount: must be greater than zero",
      code: "invalid_request",
    });
  });

  it("an unexpected error is 500 without details or stack", async () => {
    const response = await request(url, "GET", "/test/crash");
    expect(response.status).to.equal(500);
    expect(response.body).to.deep.equal({ error: "internal error", code: "internal_error" });
  });

  it("unknown routes are 404 in the same shape", async () => {
    const response = await request(url, "GET", "/core/nothing-here");
    expect(response.status).to.equal(404);
    expect(response.body).to.deep.equal({ error: "no route for GET /core/nothing-here", code: "not_found" });
  });

  it("echoes a sane X-Request-Id and generates one otherwise", async () => {
    const echoed = await request(url, "GET", "/nope", { headers: { "x-request-id": "facilitator-42" } });
    expect(echoed.headers.get("x-request-id")).to.equal("facilitator-42");
    const generated = await request(url, "GET", "/nope", {
      headers: { "x-request-id": "bad id with spaces" },
    });
    expect(generated.headers.get("x-request-id")).to.match(/^[0-9a-f-]{36}$/);
  });
});

describe("startCoreServer", () => {
  before(async () => {
    await deployTestContracts();
  });

  it("logs one structured line per request, with the request id and no body", async () => {
    const dir = tempDir();
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
        done();
      },
    });
    const core = await startCoreServer(testConfig(dir.path), {
      ...testCoreDeps(),
      logger: pino({ level: "info" }, sink),
    });
    try {
      await post(core.url, "/auth/nonce", { address: "0x1234" }, { "x-request-id": "req-1" });
      await post(core.url, "/core/guarantees", { user_address: "0x5678" }, { "x-request-id": "req-2" });
    } finally {
      await core.close();
      dir.remove();
    }
    const requestLines = lines.filter((l) => l.msg === "request");
    expect(requestLines[0]).to.deep.include({
      req_id: "req-1",
      method: "POST",
      path: "/auth/nonce",
      status: 400,
    });
    expect(requestLines[1]).to.deep.include({
      req_id: "req-2",
      method: "POST",
      path: "/core/guarantees",
      status: 401,
    });
    expect(requestLines[1].duration_ms).to.be.a("number");
    expect(JSON.stringify(lines)).to.not.include("0x1234").and.to.not.include("0x5678");
  });

  it("close() drains, is idempotent, and frees the port", async () => {
    const dir = tempDir();
    const core = await startCoreServer(testConfig(dir.path), testCoreDeps());
    const before = await request(core.url, "GET", "/nope");
    expect(before.status).to.equal(404);
    await Promise.all([core.close(), core.close()]);
    let refused = false;
    await fetch(core.url + "/nope").catch(() => (refused = true));
    expect(refused).to.equal(true);
    dir.remove();
  });

  it("fails to start on a busy port and closes the store it opened", async () => {
    const first = tempDir();
    const second = tempDir();
    const core = await startCoreServer(testConfig(first.path), testCoreDeps());
    try {
      let caught: unknown;
      await startCoreServer(testConfig(second.path, { port: core.port }), testCoreDeps()).catch(
        (error) => (caught = error),
      );
      expect(String(caught)).to.match(/EADDRINUSE/);
    } finally {
      await core.close();
      first.remove();
      second.remove();
    }
  });
});
