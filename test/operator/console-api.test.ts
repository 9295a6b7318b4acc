/**
 * The console's reads (`/console/api/…`) and the webhook admin additions (retry, test event, one
 * delivery with its payload): answers, authority, and 4xx with a message naming the field at fault.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import type { GuaranteeRecord } from "../../operator/store";
import { request, signIn, startTestCore, T0, type TestCore } from "./helpers";
import { bearer, payer, recipient, stranger, TUSD } from "./guarantee-fixtures";

const admin = new Wallet("0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a");

function record(n: number, changes: Partial<GuaranteeRecord> = {}): GuaranteeRecord {
  return {
    guaranteeId: "0x" + n.toString(16).padStart(64, "0"),
    version: 1,
    user: payer.address,
    recipient: recipient.address,
    reqId: BigInt(n),
    amount: 1000n * BigInt(n),
    asset: TUSD,
    timestamp: T0,
    policy: null,
    scheme: "eip712",
    signature: "0x" + "ab".repeat(65),
    certificateClaims: "0x01",
    certificateSignature: "0x02",
    state: "FINALIZED_PAYABLE",
    createdAt: T0 + n,
    ...changes,
  };
}

describe("Console API (/console/api) and webhook admin additions", () => {
  let t: TestCore;
  let url: string;
  const tokens: Record<string, string> = {};

  beforeEach(async () => {
    t = await startTestCore({
      // The tests play the dispatcher's moves themselves (claim, record): the app's own dispatcher loop would
      // race them for the due delivery under load (an extra attempt), so this Core runs no background work.
      backgroundTasks: false,
      adminWallets: admin.address,
      explorerUrl: "https://explorer.test/",
      webhooks: JSON.stringify([
        { id: "ops", url: "http://127.0.0.1:9/hook", secret: "s".repeat(32), event_types: ["*"] },
      ]),
    });
    url = t.core.url;
    for (const wallet of [payer, recipient, stranger, admin]) {
      tokens[wallet.address] = (await signIn(url, wallet)).access_token;
    }
  });

  afterEach(async () => {
    await t.stop();
  });

  const get = (path: string, wallet?: { address: string }) =>
    request(url, "GET", path, { headers: wallet ? bearer(tokens[wallet.address]) : {} });
  const post = (path: string, wallet?: { address: string }) =>
    request(url, "POST", path, { headers: wallet ? bearer(tokens[wallet.address]) : {} });

  it("config: the explorer (trailing slash dropped), public", async () => {
    const response = await get("/console/api/config");
    expect(response.status).to.equal(200);
    expect(response.body).to.deep.equal({ explorer_url: "https://explorer.test" });
  });

  it("session: who the bearer is, 200 for admins and others alike; 401 without a token", async () => {
    expect((await get("/console/api/session", admin)).body).to.deep.equal({
      address: admin.address,
      admin: true,
      facilitator: false,
    });
    const other = await get("/console/api/session", stranger);
    expect(other.status).to.equal(200);
    expect(other.body).to.include({ admin: false, facilitator: false });
    expect((await get("/console/api/session")).status).to.equal(401);
  });

  describe("GET /console/api/guarantees", () => {
    beforeEach(async () => {
      const store = t.core.context.store;
      for (let n = 1; n <= 60; n++) await store.guarantees.insertGuarantee(record(n));
      await store.guarantees.insertGuarantee(
        record(61, { user: stranger.address, recipient: payer.address }),
      );
    });

    it("pages past 50 with the total, newest first, and the cursor reaches every row once", async () => {
      const first = await get(`/console/api/guarantees?payer=${payer.address}`, payer);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.body.total).to.equal(60);
      expect(first.body.guarantees).to.have.length(50);
      expect(first.body.guarantees[0].guarantee_id).to.equal(record(60).guaranteeId);
      const second = await get(
        `/console/api/guarantees?payer=${payer.address}&cursor=${first.body.next_cursor}`,
        payer,
      );
      expect(second.body.total).to.equal(60);
      expect(second.body.guarantees).to.have.length(10);
      expect(second.body.next_cursor).to.equal(null);
      const ids = new Set([...first.body.guarantees, ...second.body.guarantees].map((g) => g.guarantee_id));
      expect(ids.size).to.equal(60);
    });

    it("searches by id, by party, by transaction hash, by cycle and time range", async () => {
      const store = t.core.context.store;
      const byId = await get(`/console/api/guarantees?q=${record(7).guaranteeId}`, admin);
      expect(byId.body.total).to.equal(1);
      expect(byId.body.guarantees[0].guarantee_id).to.equal(record(7).guaranteeId);

      const party = await get(`/console/api/guarantees?q=${stranger.address.toLowerCase()}`, admin);
      expect(party.body.guarantees.map((g: { guarantee_id: string }) => g.guarantee_id)).to.deep.equal([
        record(61).guaranteeId,
      ]);

      const commitTx = "0x" + "c7".repeat(32);
      await store.cycles.insertCycle({
        cycleId: 3,
        state: "COMMITTED",
        root: "0x" + "11".repeat(32),
        treeDump: "null",
        args: "[]",
        guaranteeIds: [],
        cutoff: T0,
        plannedAt: T0,
        txHash: commitTx,
        txNonce: 1,
        rawTx: null,
        sentAt: T0,
        committedBlock: 9,
        committedAt: T0 + 100,
        paymentDeadline: null,
        defaultDeadline: null,
        finalizedAt: null,
        challengeDeadline: null,
        answerDeadline: null,
        vetoedAt: null,
        plannedByCore: false,
      });
      await store.guarantees.assignGuaranteesToCycle([record(2).guaranteeId, record(3).guaranteeId], 3);
      const byTx = await get(`/console/api/guarantees?q=${commitTx}`, admin);
      expect(byTx.body.total).to.equal(2);
      const byCycle = await get(`/console/api/guarantees?cycle=3&payer=${payer.address}`, payer);
      expect(byCycle.body.total).to.equal(2);
      const none = await get(`/console/api/guarantees?q=0x${"00".repeat(32)}`, admin);
      expect(none.body).to.deep.equal({ guarantees: [], total: 0, next_cursor: null });

      const from = new Date((T0 + 10) * 1000).toISOString();
      const range = await get(`/console/api/guarantees?from=${from}&to=${T0 + 19}`, admin);
      expect(range.body.total).to.equal(10);
    });

    it("a wallet sees only its own; malformed input is 400 naming the parameter", async () => {
      const refused = await get("/console/api/guarantees", stranger);
      expect(refused.status).to.equal(403);
      expect(refused.body.code).to.equal("not_authorized_for_guarantees");
      for (const [query, field] of [
        ["state=NOPE", /^state: must be one of PENDING_VALIDATION/],
        ["q=hello", /^q: must be a guarantee id or a transaction hash/],
        ["from=yesterday", /^from: must be an ISO 8601 time/],
        [`from=${T0 + 10}&to=${T0}`, /^from: must not be later than to/],
        ["cycle=0", /^cycle: must be a positive integer/],
        ["limit=501", /^limit: must be an integer from 1 to 500/],
        ["cursor=abc", /^cursor: is not a cursor/],
        ["q=1&q=2", /^q: must be given once/],
      ] as const) {
        const response = await get(`/console/api/guarantees?${query}`, admin);
        expect(response.status, query).to.equal(400);
        expect(response.body.code).to.equal("invalid_request");
        expect(response.body.error, query).to.match(field);
      }
    });
  });

  it("cycles: the page and the total; 400 for a malformed limit or before", async () => {
    const empty = await get("/console/api/cycles");
    expect(empty.body).to.deep.equal({ cycles: [], total: 0, next_cursor: null });
    const bad = await get("/console/api/cycles?before=x");
    expect(bad.status).to.equal(400);
    expect(bad.body.error).to.match(/^before: must be a positive integer cycle id/);
    expect((await get("/console/api/cycles?limit=51")).body.error).to.match(/^limit: /);
  });

  it("ledger: locks, net debits and covers, withdrawals, payouts, unclaimed credits; own or admin only", async () => {
    const store = t.core.context.store;
    await store.guarantees.insertGuarantee(record(1)); // still locked
    await store.guarantees.insertGuarantee(record(2, { state: "NETTED" }));
    await store.guarantees.insertGuarantee(
      record(3, { state: "NETTED", user: stranger.address, recipient: payer.address }),
    );
    await store.cycles.insertCycle({
      cycleId: 1,
      state: "COMMITTED",
      root: "0x" + "11".repeat(32),
      treeDump: "null",
      args: "[]",
      guaranteeIds: [],
      cutoff: T0,
      plannedAt: T0,
      txHash: "0x" + "c1".repeat(32),
      txNonce: 1,
      rawTx: null,
      sentAt: T0,
      committedBlock: 9,
      committedAt: T0 + 100,
      paymentDeadline: null,
      defaultDeadline: null,
      finalizedAt: null,
      challengeDeadline: null,
      answerDeadline: null,
      vetoedAt: null,
      plannedByCore: true,
    });
    await store.guarantees.assignGuaranteesToCycle([record(2).guaranteeId, record(3).guaranteeId], 1);
    await store.cycles.putCycleDebt({
      cycleId: 1,
      asset: TUSD,
      debtor: stranger.address,
      amount: 1000n,
      status: "COVERED",
      covered: 1000n,
      resolvedTx: "0x" + "d1".repeat(32),
    });
    await store.collateral.putWithdrawal({
      withdrawalId: 4,
      user: payer.address,
      asset: TUSD,
      amount: 10n,
      finalizableAt: T0 + 50,
      requestedAt: T0 + 5,
      state: "PENDING",
      paid: null,
      closedAt: null,
    });
    const response = await get(`/console/api/users/${payer.address}/ledger`, payer);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    const kinds = response.body.entries.map((e: { kind: string; amount: string }) => [e.kind, e.amount]);
    // Cycle 1: received 3000, paid 2000: a net credit of 1000 it has not claimed.
    expect(kinds).to.deep.include.members([
      ["lock", "1000"],
      ["withdrawal", "10"],
      ["unclaimed_credit", "1000"],
    ]);
    const cover = await get(`/console/api/users/${stranger.address}/ledger`, admin);
    expect(cover.body.entries.map((e: { kind: string }) => e.kind)).to.include("cover");
    expect((await get(`/console/api/users/${stranger.address}/ledger`, payer)).status).to.equal(403);
    const bad = await get("/console/api/users/0x1234/ledger", payer);
    expect(bad.status).to.equal(400);
    expect(bad.body.error).to.match(/^address: /);
  });

  describe("webhook admin: test event, one delivery with its payload, retry", () => {
    it("queues a test event to the one subscription, shows its payload, retries a failed delivery", async () => {
      const test = await post("/core/admin/webhooks/ops/test", admin);
      expect(test.status, JSON.stringify(test.body)).to.equal(201);
      const eventId = test.body.delivery.event_id as string;
      expect(test.body.delivery).to.include({ event_type: "webhook.test", status: "pending", attempts: 0 });

      const one = await get(`/core/admin/webhooks/ops/deliveries/${eventId}`, admin);
      expect(one.status).to.equal(200);
      expect(one.body.event.payload).to.include({ id: eventId, type: "webhook.test" });
      expect(one.body.event.payload.data).to.include({ webhook_id: "ops", test: true });
      expect(one.body.attempts).to.deep.equal([]);

      // Pending: a retry makes it due now. Failed: pending again. Delivered: 409.
      expect((await post(`/core/admin/webhooks/ops/deliveries/${eventId}/retry`, admin)).status).to.equal(
        200,
      );
      const store = t.core.context.store;
      // The dispatcher's moves: claim an attempt (the count grows), then record its outcome.
      const attempt = async (
        outcome: Parameters<typeof store.webhooks.recordWebhookAttempt>[2],
        at: number,
      ) => {
        const due = await store.webhooks.claimDueWebhookDeliveries(Date.UTC(2100, 0, 1), 100, 30_000);
        expect(due.map((d) => d.eventId)).to.include(eventId);
        await store.webhooks.recordWebhookAttempt(eventId, "ops", outcome, at);
      };
      await attempt({ status: "failed", error: "refused", statusCode: null }, T0);
      const retried = await post(`/core/admin/webhooks/ops/deliveries/${eventId}/retry`, admin);
      expect(retried.body.delivery, JSON.stringify(retried.body)).to.include({
        status: "pending",
        last_error: "refused",
      });
      await attempt({ status: "delivered", statusCode: 200 }, T0 + 5);
      const again = await post(`/core/admin/webhooks/ops/deliveries/${eventId}/retry`, admin);
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal("delivery_not_retryable");
      // Each attempt's own outcome, oldest first.
      const history = await get(`/core/admin/webhooks/ops/deliveries/${eventId}`, admin);
      expect(history.body.attempts).to.deep.equal([
        {
          attempt: 1,
          at: new Date(T0 * 1000).toISOString(),
          outcome: "failed",
          status_code: null,
          error: "refused",
        },
        {
          attempt: 2,
          at: new Date((T0 + 5) * 1000).toISOString(),
          outcome: "delivered",
          status_code: 200,
          error: null,
        },
      ]);
    });

    it("404 for an unknown delivery or webhook, 400 for a malformed event id, 403 for non-admins", async () => {
      const unknown = await post("/core/admin/webhooks/ops/deliveries/evt_nothing/retry", admin);
      expect(unknown.status).to.equal(404);
      expect(unknown.body.code).to.equal("delivery_not_found");
      expect((await post("/core/admin/webhooks/nope/test", admin)).body.code).to.equal("webhook_not_found");
      const malformed = await get("/core/admin/webhooks/ops/deliveries/not-an-event", admin);
      expect(malformed.status).to.equal(400);
      expect(malformed.body.error).to.match(/^event_id: /);
      expect((await post("/core/admin/webhooks/ops/test", payer)).body.code).to.equal("not_admin");
    });
  });
});
