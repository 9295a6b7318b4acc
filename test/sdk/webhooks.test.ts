import { expect } from "chai";
import express from "express";
import { createHmac } from "node:crypto";
import type { AddressInfo } from "node:net";
import { createWebhookHandler } from "../../sdk/kits/webhook-receiver";
import {
  parseSignatureHeader,
  signWebhook,
  verifyWebhook,
  WEBHOOK_API_VERSION,
  WebhookDeduplicator,
  type WebhookEnvelope,
  WebhookVerificationError,
} from "../../sdk/webhooks";

const SECRET = "whsec_sdk_test_secret_abcdefghijklmnop";
const NOW = 1_750_000_000;
const envelope: WebhookEnvelope = {
  id: "evt_0123456789abcdef0123456789abcdef",
  type: "collateral.deposited",
  created_at: "2025-06-15T15:06:40.000Z",
  api_version: WEBHOOK_API_VERSION,
  data: { amount: "1", block_number: 7 },
};
const body = JSON.stringify(envelope);

function failure(fn: () => unknown): WebhookVerificationError {
  try {
    fn();
  } catch (error) {
    expect(error).to.be.instanceOf(WebhookVerificationError);
    return error as WebhookVerificationError;
  }
  throw new Error("expected a WebhookVerificationError");
}

describe("sdk webhooks: signature, verification, deduplication, handler", function () {
  it("signs t.rawBody with HMAC-SHA256 and verifies it back", function () {
    const header = signWebhook(body, SECRET, NOW);
    const expected = createHmac("sha256", SECRET).update(`${NOW}.${body}`).digest("hex");
    expect(header).to.equal(`t=${NOW},v1=${expected}`);
    expect(verifyWebhook(body, header, SECRET, { now: NOW })).to.deep.equal(envelope);
    expect(verifyWebhook(Buffer.from(body), header, SECRET, { now: NOW + 300 })).to.deep.equal(envelope);
    expect(parseSignatureHeader(header)).to.deep.equal({ timestamp: NOW, signatures: [expected] });
  });

  it("rejects a tampered body, a wrong secret and a malformed header", function () {
    const header = signWebhook(body, SECRET, NOW);
    const tampered = body.replace('"amount":"1"', '"amount":"9"');
    expect(failure(() => verifyWebhook(tampered, header, SECRET, { now: NOW })).reason).to.equal(
      "bad_signature",
    );
    expect(failure(() => verifyWebhook(body, header, SECRET + "x", { now: NOW })).reason).to.equal(
      "bad_signature",
    );
    for (const bad of [undefined, "", "t=1", "v1=" + "0".repeat(64), `t=x,v1=${"0".repeat(64)}`, "garbage"]) {
      expect(failure(() => verifyWebhook(body, bad, SECRET, { now: NOW })).reason, String(bad)).to.equal(
        "malformed_signature_header",
      );
    }
  });

  it("rejects a stale or future timestamp beyond the tolerance", function () {
    const header = signWebhook(body, SECRET, NOW);
    expect(failure(() => verifyWebhook(body, header, SECRET, { now: NOW + 301 })).reason).to.equal(
      "stale_timestamp",
    );
    expect(failure(() => verifyWebhook(body, header, SECRET, { now: NOW - 301 })).reason).to.equal(
      "stale_timestamp",
    );
    expect(
      failure(() => verifyWebhook(body, header, SECRET, { now: NOW + 61, toleranceSeconds: 60 })).reason,
    ).to.equal("stale_timestamp");
    // A replayed capture with a forged fresh timestamp fails the signature instead.
    const replay = header.replace(`t=${NOW}`, `t=${NOW + 1_000}`);
    expect(failure(() => verifyWebhook(body, replay, SECRET, { now: NOW + 1_000 })).reason).to.equal(
      "bad_signature",
    );
  });

  it("accepts any of several v1 signatures (secret rotation) and rejects a non-envelope body", function () {
    const header = signWebhook(body, SECRET, NOW);
    const other = signWebhook(body, "another-secret-of-enough-length", NOW).split(",")[1];
    expect(verifyWebhook(body, `${header},${other}`, SECRET, { now: NOW }).id).to.equal(envelope.id);
    const notEnvelope = JSON.stringify({ id: "x", type: "t" });
    const signed = signWebhook(notEnvelope, SECRET, NOW);
    expect(failure(() => verifyWebhook(notEnvelope, signed, SECRET, { now: NOW })).message).to.match(
      /^created_at/,
    );
  });

  it("the deduplicator remembers a bounded number of ids, oldest forgotten first", function () {
    const dedup = new WebhookDeduplicator(2);
    expect(dedup.markSeen("a")).to.equal(true);
    expect(dedup.markSeen("a")).to.equal(false);
    expect(dedup.markSeen("b")).to.equal(true);
    expect(dedup.markSeen("c")).to.equal(true);
    expect([dedup.has("a"), dedup.has("b"), dedup.has("c"), dedup.size]).to.deep.equal([
      false,
      true,
      true,
      2,
    ]);
    expect(() => new WebhookDeduplicator(0)).to.throw(RangeError);
  });

  it("createWebhookHandler behind Express: verifies the raw body, drops duplicates, retries on handler failure", async function () {
    const received: WebhookEnvelope[] = [];
    let failNext = false;
    const app = express();
    app.post(
      "/hooks",
      createWebhookHandler({
        secret: SECRET,
        now: () => NOW,
        onEvent: (e) => {
          if (failNext) {
            failNext = false;
            throw new Error("database down");
          }
          received.push(e);
        },
      }),
    );
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    const send = (raw: string, header: string) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "surety-signature": header },
        body: raw,
      });
    try {
      const header = signWebhook(body, SECRET, NOW);
      failNext = true;
      expect((await send(body, header)).status).to.equal(500); // not marked seen: the retry is processed
      const ok = await send(body, header);
      expect([ok.status, await ok.json()]).to.deep.equal([200, { received: true, duplicate: false }]);
      const again = await send(body, header);
      expect([again.status, await again.json()]).to.deep.equal([200, { received: true, duplicate: true }]);
      expect(received).to.have.length(1);
      const bad = await send(body.replace("evt_0", "evt_1"), header);
      expect(bad.status).to.equal(400);
      expect(((await bad.json()) as { code: string }).code).to.equal("bad_signature");
      const stale = await send(body, signWebhook(body, SECRET, NOW - 1_000));
      expect(((await stale.json()) as { code: string }).code).to.equal("stale_timestamp");
      expect(received).to.have.length(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("refuses to sign with an empty secret or a bad timestamp", function () {
    expect(() => signWebhook(body, "", NOW)).to.throw(RangeError);
    expect(() => signWebhook(body, SECRET, -1)).to.throw(RangeError);
    expect(() => signWebhook(body, SECRET, 1.5)).to.throw(RangeError);
  });
});
