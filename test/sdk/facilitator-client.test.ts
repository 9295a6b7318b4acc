/**
 * SuretyFacilitatorClient (sdk/kits/x402-scheme/facilitator-client.ts) answers as the official
 * HTTPFacilitatorClient does, over one kept-alive connection: the same results, the same errors (the very
 * classes, so that the official server's instanceof checks hold) and messages, for every kind of
 * facilitator answer, both clients against the same scripted server; the global fetch is left as it was.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { FacilitatorTimeoutError, HTTPFacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { SuretyFacilitatorClient } from "../../sdk/kits/x402-scheme/facilitator-client";

const requirements = {
  scheme: "svc-credit",
  network: "eip155:31337",
  asset: "0x0000000000000000000000000000000000000000",
  amount: "1000",
  payTo: "0x0000000000000000000000000000000000000001",
  maxTimeoutSeconds: 60,
  extra: { big: 1n },
} as unknown as PaymentRequirements;
const payload = {
  x402Version: 2,
  accepted: requirements,
  payload: { claims: { amount: "1000" }, signature: "0x00" },
} as unknown as PaymentPayload;

interface Scripted {
  status: number;
  body: string;
  headers?: Record<string, string>;
  /** Never answers: the client gives up after its timeout, however slow the host. */
  hang?: true;
}

/** A client's timeout for the hanging answer; every other answer is awaited as long as the host needs. */
const GIVE_UP_MS = 200;
const PATIENT_MS = 30_000;

const extensions = Buffer.from(JSON.stringify({ bazaar: { status: "ok" } })).toString("base64");
const ANSWERS: Record<string, Scripted> = {
  valid: {
    status: 200,
    body: JSON.stringify({ isValid: true, payer: "0xabc", invalidReason: null, extra: { a: 1 } }),
  },
  invalid: { status: 200, body: JSON.stringify({ isValid: false, invalidReason: "x", invalidMessage: "y" }) },
  settled: {
    status: 200,
    body: JSON.stringify({
      success: true,
      transaction: "0x01",
      network: "eip155:31337",
      payer: "0xabc",
      amount: null,
      extra: { certificate: { claims: "0x" } },
    }),
    headers: { "EXTENSION-RESPONSES": extensions },
  },
  refusedVerify: {
    status: 400,
    body: JSON.stringify({ isValid: false, invalidReason: "bad", payer: "0x1" }),
  },
  refusedSettle: {
    status: 400,
    body: JSON.stringify({ success: false, errorReason: "bad", transaction: "", network: "eip155:31337" }),
  },
  otherError: { status: 500, body: JSON.stringify({ error: "boom", code: "core_unavailable" }) },
  notJsonError: { status: 502, body: "<html>bad gateway</html>" },
  notJson: { status: 200, body: "not json" },
  wrongShape: { status: 200, body: JSON.stringify({ isValid: "yes", success: "yes", transaction: 1 }) },
  slow: { status: 200, body: JSON.stringify({ isValid: true }), hang: true },
};

describe("SuretyFacilitatorClient (node:http) against the official HTTPFacilitatorClient", function () {
  let server: Server;
  let url: string;
  let next = "valid";
  const bodies: unknown[] = [];
  let connections = 0;
  /** `sec-fetch-mode` of each request: undici's fetch sends it, node:http does not. */
  const fetchModes: (string | undefined)[] = [];

  before(async function () {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        fetchModes.push(req.headers["sec-fetch-mode"] as string | undefined);
        bodies.push({
          path: req.url,
          type: req.headers["content-type"],
          body: JSON.parse(Buffer.concat(chunks).toString()),
        });
        const answer = ANSWERS[next];
        if (answer.hang) return; // held open until the client aborts (or `after` closes it)
        res.writeHead(answer.status, { "content-type": "application/json", ...(answer.headers ?? {}) });
        res.end(answer.body);
      });
    });
    server.on("connection", () => connections++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  after(async function () {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function errorClass(call: () => Promise<unknown>): Promise<unknown> {
    try {
      await call();
      return null;
    } catch (error) {
      return (error as Error).constructor;
    }
  }

  async function outcome(call: () => Promise<unknown>): Promise<unknown> {
    try {
      return { value: await call() };
    } catch (error) {
      const e = error as Error & Record<string, unknown>;
      return { error: e.constructor.name, message: e.message, fields: { ...e } };
    }
  }

  for (const [operation, answers] of [
    [
      "verify",
      ["valid", "invalid", "refusedVerify", "otherError", "notJsonError", "notJson", "wrongShape", "slow"],
    ],
    ["settle", ["settled", "refusedSettle", "otherError", "notJsonError", "notJson", "wrongShape"]],
  ] as const) {
    for (const answer of answers) {
      it(`${operation}: ${answer}`, async function () {
        next = answer;
        // A short timeout only where the server never answers: a stalled host cannot time out the others.
        const timeoutMs = answer === "slow" ? GIVE_UP_MS : PATIENT_MS;
        const official = new HTTPFacilitatorClient({ url, timeoutMs });
        const ours = new SuretyFacilitatorClient({ url, timeoutMs });
        bodies.length = 0;
        const theirs = await outcome(() => official[operation](payload, requirements));
        const globalFetch = globalThis.fetch;
        const pending = ours[operation](payload, requirements);
        expect(globalThis.fetch).to.equal(globalFetch);
        const mine = await outcome(() => pending);
        expect(mine).to.deep.equal(theirs);
        expect(await errorClass(() => ours[operation](payload, requirements))).to.equal(
          await errorClass(() => official[operation](payload, requirements)),
        );
        if (answer !== "slow") expect(bodies[1]).to.deep.equal(bodies[0]);
        if (answer !== "slow") expect(bodies[2]).to.deep.equal(bodies[0]);
        if (answer === "slow")
          expect((mine as { error: string }).error).to.equal(FacilitatorTimeoutError.name);
      });
    }
  }

  it("sends over node:http (not the global fetch), and the official client over fetch", async function () {
    next = "valid";
    fetchModes.length = 0;
    await new SuretyFacilitatorClient({ url }).verify(payload, requirements);
    await new SuretyFacilitatorClient({ url }).settle(payload, requirements).catch(() => null);
    await new HTTPFacilitatorClient({ url }).verify(payload, requirements);
    expect(fetchModes).to.deep.equal([undefined, undefined, "cors"]);
  });

  it("keeps one connection open across calls", async function () {
    next = "valid";
    const ours = new SuretyFacilitatorClient({ url });
    await ours.verify(payload, requirements);
    const before = connections;
    for (let i = 0; i < 5; i++) await ours.verify(payload, requirements);
    expect(connections).to.equal(before);
  });
});
