import { expect } from "chai";
import { Wallet, ZeroAddress } from "ethers";
import { join } from "node:path";
import { EVENT_ID_HEADER, SIGNATURE_HEADER, verifyWebhook, WEBHOOK_API_VERSION } from "../../sdk/webhooks";
import { guaranteeId } from "../../sdk/ids";
import { ManualClock } from "../../operator/clock";
import { silentLogger } from "../../operator/logger";
import { SqliteStore } from "../../operator/store";
import {
  createWebhookDispatcher,
  defaultJitter,
  guaranteeIssuedEvent,
  retryAtMs,
  WebhookDispatcher,
  type WebhookDispatcher as Dispatcher,
} from "../../operator/webhooks";
import { bearer, issue, payer, recipient, signedBody, stranger, v1Claims } from "./guarantee-fixtures";
import {
  request,
  signIn,
  startTestCore,
  T0,
  TEST_DEPLOYMENT,
  type TestCore,
  tempDir,
  testConfig,
} from "./helpers";
import { RECEIVER_SECRET, WebhookReceiver } from "./webhook-receiver";

const admin = new Wallet("0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a");
const RETRY = { backoffBaseSeconds: 10, backoffMaxSeconds: 1_000, jitter: () => 0 };

describe("webhooks: outbox, signed delivery, retries, admin API", function () {
  let t: TestCore | undefined;
  let receiver: WebhookReceiver | undefined;
  afterEach(async () => {
    await t?.stop();
    await receiver?.close();
    t = undefined;
    receiver = undefined;
  });

  /** A Core with the receiver configured (as SURETY_WEBHOOKS would) and the payer's deposit credited. */
  async function setup(eventTypes: unknown = ["guarantee.issued"], extra: Record<string, unknown> = {}) {
    // The receiver's clock is Core's (set once Core exists): signatures are checked at Core's time.
    const core: { clock?: ManualClock } = {};
    receiver = await WebhookReceiver.start({ now: () => core.clock?.nowSeconds() ?? T0 });
    t = await startTestCore({
      backgroundTasks: false,
      adminWallets: admin.address,
      webhooks: JSON.stringify([
        { id: "test-hook", url: receiver.url, secret: RECEIVER_SECRET, event_types: eventTypes },
      ]),
      ...extra,
    });
    core.clock = t.clock;
    await t.core.context.store.collateral.creditDeposit(payer.address, ZeroAddress, 10_000n, T0);
    const dispatcher = createWebhookDispatcher(t.core.context, RETRY);
    const tokens = await signIn(t.core.url, recipient);
    return { t, receiver, dispatcher, token: tokens.access_token };
  }

  async function deliveries(t: TestCore, token: string, id = "test-hook", query = "") {
    return request(t.core.url, "GET", `/core/admin/webhooks/${id}/deliveries${query}`, {
      headers: bearer(token),
    });
  }

  it("delivers guarantee.issued, signed over the raw body, after an issuance over HTTP", async function () {
    const { t, receiver, dispatcher, token } = await setup();
    const claims = v1Claims({ reqId: 77n, amount: 1_234n });
    expect((await issue(t.core.url, token, await signedBody(claims))).status).to.equal(200);
    // Written with the issuance; nothing is sent before the dispatcher runs.
    expect(receiver.requests).to.have.length(0);
    expect(await dispatcher.tick()).to.deep.equal({ attempted: 1, delivered: 1, retrying: 0, failed: 0 });

    expect(receiver.events).to.have.length(1);
    const [event] = receiver.events;
    const id = guaranteeId({ chainId: 31337n, vault: TEST_DEPLOYMENT.vault }, payer.address, 77n);
    expect(event.id).to.match(/^evt_[0-9a-f]{32}$/);
    expect(event).to.include({ type: "guarantee.issued", api_version: WEBHOOK_API_VERSION });
    expect(event.api_version).to.match(/^\d{4}-\d{2}-\d{2}$/);
    expect(event.created_at).to.equal(new Date(T0 * 1000).toISOString());
    expect(event.data).to.deep.equal({
      guarantee_id: id,
      version: 1,
      state: "FINALIZED_PAYABLE",
      user_address: payer.address,
      recipient_address: recipient.address,
      req_id: "77",
      amount: "1234",
      asset_address: ZeroAddress,
      timestamp: T0,
      network: "eip155:31337",
    });
    const [sent] = receiver.requests;
    expect(sent.headers[EVENT_ID_HEADER.toLowerCase()]).to.equal(event.id);
    expect(sent.headers["content-type"]).to.equal("application/json");
    const header = sent.headers[SIGNATURE_HEADER.toLowerCase()] as string;
    expect(header).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(sent.body, header, RECEIVER_SECRET, { now: T0 })).to.deep.equal(event);

    // Delivered once: later ticks send nothing.
    expect((await dispatcher.tick()).attempted).to.equal(0);
    const admins = await signIn(t.core.url, admin);
    const list = await deliveries(t, admins.access_token);
    expect(list.status).to.equal(200);
    expect(list.body.deliveries).to.have.length(1);
    expect(list.body.deliveries[0]).to.include({
      event_id: event.id,
      event_type: "guarantee.issued",
      status: "delivered",
      attempts: 1,
      last_error: null,
      last_status_code: 200,
      next_attempt_at: null,
    });
  });

  it("writes no event for a rejected issuance, and none for types nobody subscribed to", async function () {
    const { t, receiver, dispatcher, token } = await setup(["collateral.deposited"]);
    expect((await issue(t.core.url, token, await signedBody(v1Claims({ reqId: 5n })))).status).to.equal(200);
    const tooMuch = v1Claims({ reqId: 6n, amount: 1_000_000n });
    expect((await issue(t.core.url, token, await signedBody(tooMuch))).status).to.equal(400);
    await dispatcher.tick();
    expect(receiver.requests).to.have.length(0);
  });

  it("retries with exponential backoff until the receiver recovers, then stops", async function () {
    const { t, receiver, dispatcher, token } = await setup();
    const admins = (await signIn(t.core.url, admin)).access_token;
    receiver.refuseNext = 3;
    await issue(t.core.url, token, await signedBody(v1Claims({ reqId: 9n })));

    expect(await dispatcher.tick()).to.include({ attempted: 1, retrying: 1 });
    let [d] = (await deliveries(t, admins)).body.deliveries;
    expect(d).to.include({ status: "pending", attempts: 1, last_status_code: 503 });
    expect(d.last_error).to.equal("HTTP 503: busy");
    expect(d.next_attempt_at).to.equal(new Date((T0 + 10) * 1000).toISOString());

    // 10 s, then 20 s, then 40 s (base 10, factor 2, no jitter).
    for (const [wait, attempts] of [
      [10, 2],
      [20, 3],
    ] as const) {
      t.clock.advance(wait - 1);
      expect((await dispatcher.tick()).attempted, `${wait - 1} s`).to.equal(0);
      t.clock.advance(1);
      expect(await dispatcher.tick()).to.include({ attempted: 1, retrying: 1 });
      [d] = (await deliveries(t, admins)).body.deliveries;
      expect(d).to.include({ status: "pending", attempts });
    }
    t.clock.advance(40);
    expect(await dispatcher.tick()).to.include({ attempted: 1, delivered: 1 });
    expect(receiver.requests.map((r) => r.status)).to.deep.equal([503, 503, 503, 200]);
    expect(receiver.events).to.have.length(1);
    [d] = (await deliveries(t, admins)).body.deliveries;
    expect(d).to.include({ status: "delivered", attempts: 4, next_attempt_at: null });
    expect(d.delivered_at).to.equal(new Date((T0 + 70) * 1000).toISOString());
  });

  it("never retries early: the first gaps are 2 s and 4 s plus up to 10 % jitter, to the millisecond", async function () {
    // docs/webhooks.md: min(max, base · 2^(n−1)) after the n-th failure, plus up to 10 % jitter. The
    // dispatcher's own random jitter, the clock moved by hand in milliseconds (no timers, no sleeps).
    const { t, receiver, token } = await setup(["*"], { webhookBackoffBaseSeconds: 2 });
    const dispatcher = createWebhookDispatcher(t.core.context);
    const store = t.core.context.store;
    receiver.refuseNext = 3;
    await issue(t.core.url, token, await signedBody(v1Claims({ reqId: 12n })));
    // The first attempt fails 0.7 s into a second: with due times in whole seconds the retry started 0.7 s early.
    t.clock.advanceMilliseconds(700);
    let failedAt = t.clock.nowMilliseconds();
    expect(await dispatcher.tick()).to.include({ attempted: 1, retrying: 1 });
    const gaps: number[] = [];
    for (const [base, attempts] of [
      [2_000, 2],
      [4_000, 3],
    ] as const) {
      const [pending] = await store.webhooks.listWebhookDeliveries({ subscriptionId: "test-hook", limit: 1 });
      const due = pending.nextAttemptAtMs!;
      const gap = due - failedAt;
      expect(gap, `gap after ${attempts - 1} failures`)
        .to.be.at.least(base)
        .and.below(base * 1.1);
      gaps.push(gap);
      // Not a millisecond early: one before, nothing is claimed; at it, the retry starts.
      t.clock.advanceMilliseconds(due - 1 - t.clock.nowMilliseconds());
      expect((await dispatcher.tick()).attempted, `${gap - 1} ms after the failure`).to.equal(0);
      t.clock.advanceMilliseconds(1);
      failedAt = t.clock.nowMilliseconds();
      expect(await dispatcher.tick()).to.include({ attempted: 1, retrying: 1 });
      expect((await store.webhooks.getWebhookDelivery(pending.eventId, "test-hook"))?.attempts).to.equal(
        attempts,
      );
    }
    expect(gaps).to.have.length(2);
    expect(receiver.requests.map((r) => r.status)).to.deep.equal([503, 503, 503]);
  });

  it("jitter: up to 10 % of the delay, in whole milliseconds, added to the attempt's end", function () {
    const policy = { maxAttempts: 12, backoffBaseSeconds: 2, backoffMaxSeconds: 21_600 };
    const end = T0 * 1000 + 700;
    expect(retryAtMs(policy, 1, end, () => 0)).to.equal(end + 2_000);
    expect(retryAtMs(policy, 1, end, (d) => d / 10 - 1)).to.equal(end + 2_199);
    expect(retryAtMs(policy, 2, end, () => 0.9)).to.equal(end + 4_000); // rounded down, never negative
    expect(retryAtMs(policy, 3, end, () => -5)).to.equal(end + 8_000);
    for (let i = 0; i < 200; i++) {
      const jitter = defaultJitter(2_000);
      expect(Number.isInteger(jitter) && jitter >= 0 && jitter < 200, String(jitter)).to.equal(true);
    }
  });

  it("gives up after the configured attempts and marks the delivery failed", async function () {
    const { t, receiver, token } = await setup(["*"], { webhookMaxAttempts: 2 });
    const dispatcher = createWebhookDispatcher(t.core.context, RETRY);
    receiver.refuseNext = 5;
    await issue(t.core.url, token, await signedBody(v1Claims({ reqId: 10n })));
    expect(await dispatcher.tick()).to.include({ retrying: 1 });
    t.clock.advance(10);
    expect(await dispatcher.tick()).to.include({ failed: 1 });
    t.clock.advance(10_000);
    expect((await dispatcher.tick()).attempted).to.equal(0);
    const admins = (await signIn(t.core.url, admin)).access_token;
    const failed = await deliveries(t, admins, "test-hook", "?status=failed");
    expect(failed.body.deliveries).to.have.length(1);
    expect(failed.body.deliveries[0]).to.include({ status: "failed", attempts: 2, next_attempt_at: null });
  });

  it("times out a receiver that does not answer and retries it", async function () {
    const { t, receiver, token } = await setup();
    const dispatcher = createWebhookDispatcher(t.core.context, { ...RETRY, timeoutMs: 100 });
    await issue(t.core.url, token, await signedBody(v1Claims({ reqId: 11n })));
    {
      // Point the subscription at a server that accepts the connection and never answers.
      const sub = (await t.core.context.store.webhooks.getWebhookSubscription("test-hook"))!;
      const silent = (await import("node:http")).createServer(() => undefined);
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
      const port = (silent.address() as { port: number }).port;
      await t.core.context.store.webhooks.putWebhookSubscription({
        ...sub,
        url: `http://127.0.0.1:${port}/`,
      });
      expect(await dispatcher.tick()).to.include({ retrying: 1 });
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
      const [d] = await t.core.context.store.webhooks.listWebhookDeliveries({
        subscriptionId: "test-hook",
        limit: 1,
      });
      expect(d.lastError).to.equal("timeout after 100 ms");
      await t.core.context.store.webhooks.putWebhookSubscription(sub);
      t.clock.advance(10);
      // The retry to the live receiver with Core's configured timeout (10 s): 100 ms would time out on a
      // stalled host as surely as on the silent server.
      const patient = createWebhookDispatcher(t.core.context, RETRY);
      expect(await patient.tick()).to.include({ delivered: 1 });
      expect(receiver.events).to.have.length(1);
    }
  });

  it("a receiver that lost Core's answer gets the retry, and its helper drops the duplicate", async function () {
    const { t, receiver, dispatcher, token } = await setup();
    receiver.loseAnswerOfNext = 1;
    await issue(t.core.url, token, await signedBody(v1Claims({ reqId: 12n })));
    expect(await dispatcher.tick()).to.include({ retrying: 1 });
    t.clock.advance(10);
    expect(await dispatcher.tick()).to.include({ delivered: 1 });
    expect(receiver.requests).to.have.length(2);
    expect(receiver.requests[0].body).to.equal(receiver.requests[1].body); // same bytes, same id
    expect(receiver.events).to.have.length(1); // handled once
  });

  describe("restart", function () {
    const dir = tempDir();
    after(() => dir.remove());

    function openDispatcher(store: SqliteStore, clock: ManualClock): Dispatcher {
      return new WebhookDispatcher({
        store,
        clock,
        logger: silentLogger(),
        timeoutMs: 2_000,
        maxAttempts: 5,
        ...RETRY,
      });
    }

    it("a new dispatcher over the same store file carries on mid-retry and after a crash mid-attempt", async function () {
      const clock = new ManualClock(T0);
      receiver = await WebhookReceiver.start({ now: () => clock.nowSeconds() });
      const file = join(dir.path, "restart.sqlite");
      let store = SqliteStore.open(file);
      await store.webhooks.putWebhookSubscription({
        id: "hook",
        url: receiver.url,
        secret: RECEIVER_SECRET,
        eventTypes: ["*"],
        description: null,
        source: "api",
        createdAt: T0,
      });
      const source = { chainId: 31337, vault: TEST_DEPLOYMENT.vault };
      const record = {
        guaranteeId: "0x" + "ab".repeat(32),
        version: 1 as const,
        user: payer.address,
        recipient: recipient.address,
        reqId: 1n,
        amount: 5n,
        asset: ZeroAddress,
        timestamp: T0,
        policy: null,
        scheme: "eip712" as const,
        signature: "0x",
        certificateClaims: "0x",
        certificateSignature: "0x",
        state: "FINALIZED_PAYABLE" as const,
        createdAt: T0,
      };
      const first = guaranteeIssuedEvent(source, record);
      const second = guaranteeIssuedEvent(source, { ...record, guaranteeId: "0x" + "cd".repeat(32) });
      expect(await store.webhooks.insertWebhookEvent(first, T0)).to.equal(1);

      // Mid-retry: the first attempt fails, the operator stops.
      receiver.refuseNext = 1;
      expect(await openDispatcher(store, clock).tick()).to.include({ retrying: 1 });
      await store.close();

      // Restart: the retry happens on schedule.
      store = SqliteStore.open(file);
      let dispatcher = openDispatcher(store, clock);
      expect((await dispatcher.tick()).attempted).to.equal(0);
      clock.advance(10);
      expect(await dispatcher.tick()).to.include({ delivered: 1 });
      expect(receiver.events.map((e) => e.id)).to.deep.equal([first.id]);

      // Crash mid-attempt: a claimed delivery whose outcome was never recorded is sent again after its lease.
      await store.webhooks.insertWebhookEvent(second, clock.nowSeconds());
      const [claimed] = await store.webhooks.claimDueWebhookDeliveries(clock.nowMilliseconds(), 10, 60_000);
      expect(claimed).to.include({ eventId: second.id, attempts: 1 });
      await store.close();
      store = SqliteStore.open(file);
      dispatcher = openDispatcher(store, clock);
      expect((await dispatcher.tick()).attempted).to.equal(0);
      clock.advance(60);
      expect(await dispatcher.tick()).to.include({ delivered: 1 });
      expect(receiver.events.map((e) => e.id)).to.deep.equal([first.id, second.id]);
      expect(await store.webhooks.getWebhookDelivery(second.id, "hook")).to.include({
        status: "delivered",
        attempts: 2,
      });

      // Retracted (a reorg undid its source) before delivery: cancelled, never sent; the same source
      // applied again revives the same event id and it is delivered once.
      const third = guaranteeIssuedEvent(source, { ...record, guaranteeId: "0x" + "ef".repeat(32) });
      await store.webhooks.insertWebhookEvent(third, clock.nowSeconds());
      await store.webhooks.retractWebhookEvent(third.id, clock.nowSeconds());
      expect(await store.webhooks.getWebhookDelivery(third.id, "hook")).to.include({ status: "cancelled" });
      expect((await dispatcher.tick()).attempted).to.equal(0);
      expect(await store.webhooks.insertWebhookEvent(third, clock.nowSeconds())).to.equal(0); // no new row
      expect(await store.webhooks.getWebhookDelivery(third.id, "hook")).to.include({ status: "pending" });
      expect(await dispatcher.tick()).to.include({ delivered: 1 });
      expect(receiver.events.map((e) => e.id)).to.deep.equal([first.id, second.id, third.id]);
      await store.close();
    });
  });

  describe("admin API", function () {
    it("needs a bearer token (401) of an admin wallet (403)", async function () {
      const { t } = await setup();
      const base = t.core.url;
      const none = await request(base, "GET", "/core/admin/webhooks");
      expect(none.status).to.equal(401);
      expect(none.body.code).to.equal("missing_token");
      expect(none.headers.get("www-authenticate")).to.match(/^Bearer/);
      expect((await request(base, "POST", "/core/admin/webhooks", { json: {} })).status).to.equal(401);
      expect((await request(base, "DELETE", "/core/admin/webhooks/x")).status).to.equal(401);
      expect((await request(base, "GET", "/core/admin/webhooks/x/deliveries")).status).to.equal(401);
      const outsider = (await signIn(base, stranger)).access_token;
      const denied = await request(base, "GET", "/core/admin/webhooks", { headers: bearer(outsider) });
      expect(denied.status).to.equal(403);
      expect(denied.body.code).to.equal("not_admin");
      const post = await request(base, "POST", "/core/admin/webhooks", {
        json: { url: "https://example.com/h", event_types: ["*"] },
        headers: bearer(outsider),
      });
      expect(post.status).to.equal(403);
      expect(await t.core.context.store.webhooks.listWebhookSubscriptions()).to.have.length(1);
    });

    it("creates, lists, delivers to, and deletes a subscription; refuses plain http off loopback", async function () {
      const { t, dispatcher, token } = await setup(["collateral.deposited"]);
      const base = t.core.url;
      const auth = bearer((await signIn(base, admin)).access_token);
      const create = (json: unknown) =>
        request(base, "POST", "/core/admin/webhooks", { json, headers: auth });

      for (const [body, field] of [
        [{ url: "http://example.com/hook", event_types: ["*"] }, "url"],
        [{ url: "http://10.0.0.1/hook", event_types: ["*"] }, "url"],
        [{ url: "ftp://example.com/hook", event_types: ["*"] }, "url"],
        [{ url: "https://user:pw@example.com/hook", event_types: ["*"] }, "url"],
        [{ url: "https://example.com/hook", event_types: ["guarantee.nope"] }, "event_types[0]"],
        [{ url: "https://example.com/hook", event_types: [] }, "event_types"],
        [{ url: "https://example.com/hook", event_types: ["*"], secret: "short" }, "secret"],
        [{ url: "https://example.com/hook", event_types: ["*"], extra: 1 }, "extra"],
      ] as const) {
        const answer = await create(body);
        expect(answer.status, JSON.stringify(body)).to.equal(400);
        expect(answer.body.code).to.equal("invalid_request");
        expect(answer.body.error.startsWith(`${field}:`), answer.body.error).to.equal(true);
      }
      for (const url of [
        "http://localhost:9/h",
        "http://127.0.0.9/h",
        "http://[::1]:9/h",
        "https://example.com/h",
      ]) {
        expect((await create({ url, event_types: ["*"] })).status, url).to.equal(201);
      }

      const otherReceiver = await WebhookReceiver.start({ now: () => t.clock.nowSeconds() });
      try {
        const made = await create({
          url: otherReceiver.url,
          event_types: ["guarantee.issued"],
          secret: RECEIVER_SECRET,
          description: "orders",
        });
        expect(made.status).to.equal(201);
        expect(made.body).to.include({ url: otherReceiver.url, source: "api", secret: RECEIVER_SECRET });
        expect(made.body.id).to.match(/^whk_[0-9a-f]{24}$/);
        const generated = await create({ url: "https://example.com/g", event_types: "*" });
        expect(generated.body.secret).to.match(/^whsec_[0-9a-f]{64}$/);

        const list = await request(base, "GET", "/core/admin/webhooks", { headers: auth });
        expect(list.status).to.equal(200);
        expect(list.body.webhooks).to.have.length(7);
        expect(JSON.stringify(list.body)).not.to.contain("secret");
        const one = await request(base, "GET", `/core/admin/webhooks/${made.body.id}`, { headers: auth });
        expect(one.body).to.include({ id: made.body.id, description: "orders" });

        await issue(base, token, await signedBody(v1Claims({ reqId: 21n })));
        await dispatcher.tick();
        expect(otherReceiver.ofType("guarantee.issued")).to.have.length(1);
        const own = await deliveries(t, auth.authorization.slice(7), made.body.id);
        expect(own.body.deliveries.map((d: { status: string }) => d.status)).to.deep.equal(["delivered"]);

        // Configured subscriptions can only be removed in the configuration.
        const configured = await request(base, "DELETE", "/core/admin/webhooks/test-hook", { headers: auth });
        expect(configured.status).to.equal(409);
        expect(configured.body.code).to.equal("configured_webhook");
        const removed = await request(base, "DELETE", `/core/admin/webhooks/${made.body.id}`, {
          headers: auth,
        });
        expect(removed.status).to.equal(204);
        expect(
          (await request(base, "DELETE", `/core/admin/webhooks/${made.body.id}`, { headers: auth })).status,
        ).to.equal(404);
        expect((await deliveries(t, auth.authorization.slice(7), made.body.id)).status).to.equal(404);
        await issue(base, token, await signedBody(v1Claims({ reqId: 22n })));
        await dispatcher.tick();
        expect(otherReceiver.ofType("guarantee.issued")).to.have.length(1);
      } finally {
        await otherReceiver.close();
      }
    });

    it("pages deliveries newest first and validates the query", async function () {
      const { t, dispatcher, token } = await setup();
      const auth = (await signIn(t.core.url, admin)).access_token;
      for (const reqId of [31n, 32n, 33n])
        await issue(t.core.url, token, await signedBody(v1Claims({ reqId })));
      await dispatcher.tick();
      const first = await deliveries(t, auth, "test-hook", "?limit=2");
      expect(first.body.deliveries).to.have.length(2);
      expect(first.body.next_cursor).to.be.a("string");
      const rest = await deliveries(t, auth, "test-hook", `?limit=2&cursor=${first.body.next_cursor}`);
      expect(rest.body.deliveries).to.have.length(1);
      expect(rest.body.next_cursor).to.equal(null);
      const ids = [...first.body.deliveries, ...rest.body.deliveries].map(
        (d: { event_id: string }) => d.event_id,
      );
      expect(new Set(ids).size).to.equal(3);
      for (const query of ["?limit=0", "?limit=x", "?status=nope", "?cursor=abc"]) {
        expect((await deliveries(t, auth, "test-hook", query)).status, query).to.equal(400);
      }
      expect((await deliveries(t, auth, "nope")).status).to.equal(404);
    });
  });

  it("refuses a configured plain-http, non-loopback endpoint at startup", function () {
    const dir = tempDir();
    try {
      expect(() =>
        testConfig(dir.path, {
          webhooks: JSON.stringify([
            { url: "http://hooks.example.com/x", secret: RECEIVER_SECRET, event_types: ["*"] },
          ]),
        }),
      ).to.throw(/webhooks: \[0\]\.url: must use https/);
      expect(() => testConfig(dir.path, { webhooks: "not json" })).to.throw(/webhooks: must be a JSON array/);
      const ok = testConfig(dir.path, {
        webhooks: [{ url: "https://hooks.example.com/x", secret: RECEIVER_SECRET, event_types: "*" }],
      });
      expect(ok.webhooks[0]).to.include({ url: "https://hooks.example.com/x" });
      expect(ok.webhooks[0].id).to.match(/^whk_cfg_[0-9a-f]{16}$/);
    } finally {
      dir.remove();
    }
  });
});
