/**
 * createExpressServer (runtime/express-server.ts): requests and responses are born with the app's
 * prototypes, so Express's per-request prototype swap changes nothing, and every answer is the one
 * `http.createServer(app)` gives for the same app (status, headers but `Date`, body).
 */
import { createServer, IncomingMessage, type Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import express, { type ErrorRequestHandler, type Express } from "express";
import { createExpressServer } from "../../runtime/express-server";

interface Seen {
  atArrival: { req: object | null; res: object | null };
  inRoute: { req: object | null; res: object | null };
  instances: boolean;
}

function appUnderTest(seen: Seen): Express {
  const app = express();
  app.disable("x-powered-by");
  app.use(express.json({ limit: 64 }));
  app.post("/echo", (req, res) => {
    seen.inRoute = { req: Object.getPrototypeOf(req) as object, res: Object.getPrototypeOf(res) as object };
    seen.instances = req instanceof IncomingMessage && res instanceof ServerResponse;
    res
      .status(201)
      .set("X-Seen", req.get("x-probe") ?? "none")
      .json({ body: req.body as unknown, json: req.is("application/json"), path: req.path });
  });
  app.get("/fail", () => {
    throw new Error("boom");
  });
  app.get("/text", (_req, res) => {
    res.type("text/plain").send("plain text");
  });
  app.use(((error: { status?: number; message: string }, _req, res, _next) => {
    res.status(error.status ?? 500).json({ error: error.message });
  }) as ErrorRequestHandler);
  return app;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

async function ask(base: string, path: string, init?: RequestInit): Promise<Answer> {
  const response = await fetch(base + path, init);
  const headers = Object.fromEntries(response.headers);
  delete headers.date;
  return { status: response.status, headers, body: await response.text() };
}

const REQUESTS: [string, RequestInit | undefined][] = [
  [
    "/echo",
    {
      method: "POST",
      headers: { "content-type": "application/json", "x-probe": "p1" },
      body: '{"a":[1,2]}',
    },
  ],
  ["/echo", { method: "POST", headers: { "content-type": "application/json" }, body: "{bad" }],
  ["/echo", { method: "POST", headers: { "content-type": "application/json" }, body: "x".repeat(100) }],
  ["/echo", { method: "POST", headers: { "content-type": "text/plain" }, body: "hello" }],
  ["/fail", undefined],
  ["/text", undefined],
  ["/nowhere?x=1", undefined],
  ["/echo", { method: "DELETE" }],
];

describe("createExpressServer", function () {
  const empty = (): Seen => ({
    atArrival: { req: null, res: null },
    inRoute: { req: null, res: null },
    instances: false,
  });

  it("builds requests and responses with the app's prototypes before Express sees them", async function () {
    const seen = empty();
    const app = appUnderTest(seen);
    const server = createExpressServer(app);
    server.prependListener("request", (req, res) => {
      seen.atArrival = {
        req: Object.getPrototypeOf(req) as object,
        res: Object.getPrototypeOf(res) as object,
      };
    });
    const base = await listen(server);
    try {
      const answer = await ask(base, ...REQUESTS[0]);
      expect(answer.status).to.equal(201);
      expect(seen.atArrival.req).to.equal(app.request);
      expect(seen.atArrival.res).to.equal(app.response);
      expect(seen.inRoute).to.deep.equal(seen.atArrival);
      expect(seen.instances).to.equal(true);
    } finally {
      await close(server);
    }
  });

  it("gives each app its own prototypes", async function () {
    const first = appUnderTest(empty());
    const second = appUnderTest(empty());
    const seen: object[] = [];
    const servers = [createExpressServer(first), createExpressServer(second)];
    for (const server of servers) {
      server.prependListener("request", (req) => seen.push(Object.getPrototypeOf(req) as object));
    }
    try {
      for (const server of servers) await ask(await listen(server), "/text");
      expect(seen).to.deep.equal([first.request, second.request]);
    } finally {
      for (const server of servers) await close(server);
    }
  });

  it("answers every request as http.createServer(app) does", async function () {
    const ours = createExpressServer(appUnderTest(empty()));
    const plain = createServer(appUnderTest(empty()));
    const [oursUrl, plainUrl] = [await listen(ours), await listen(plain)];
    try {
      for (const [path, init] of REQUESTS) {
        const expected = await ask(plainUrl, path, init);
        const actual = await ask(oursUrl, path, init);
        expect(actual, `${init?.method ?? "GET"} ${path}`).to.deep.equal(expected);
      }
    } finally {
      await close(ours);
      await close(plain);
    }
  });
});
