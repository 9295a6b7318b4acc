/**
 * Webhook delivery lanes (docs/webhooks.md, "Lanes"): a receiver that hangs holds its own
 * subscription's lane and nobody else's. Real receivers on loopback (one holds every answer until
 * released, one answers at once), a real Core over a SQLite file, guarantees issued over HTTP.
 * Nothing here sleeps or measures time: the tests wait for arrivals and recorded outcomes, and the
 * hanging receiver is only released once the healthy one has everything.
 */
import { expect } from "chai";
import { ZeroAddress } from "ethers";
import { join } from "node:path";
import { SqliteStore } from "../../operator/store";
import {
  createWebhookDispatcher,
  type DispatchRound,
  guaranteeIssuedEvent,
  type WebhookDispatcher,
} from "../../operator/webhooks";
import { issue, payer, recipient, signedBody, v1Claims } from "./guarantee-fixtures";
import { signIn, startTestCore, T0, TEST_DEPLOYMENT, type TestCore, tempDir } from "./helpers";
import { RECEIVER_SECRET, WebhookReceiver } from "./webhook-receiver";

/** Long enough that a dispatcher waiting for the hang would fail the test, not slow it down. */
const HANG_TIMEOUT_MS = 120_000;

describe("webhooks: one hanging receiver delays no other", function () {
  let t: TestCore | undefined;
  let slow: WebhookReceiver | undefined;
  let fast: WebhookReceiver | undefined;

  afterEach(async () => {
    // Answer whatever is still held, so Core's stop (which waits for attempts under way) returns.
    await slow?.release();
    await t?.stop();
    await slow?.close();
    await fast?.close();
    t = slow = fast = undefined;
  });

  /** A Core with a `slow` (holding every answer) and a `fast` subscription to guarantee.issued. */
  async function setup(config: Record<string, unknown>) {
    const core: { t?: TestCore } = {};
    const now = () => core.t?.clock.nowSeconds() ?? T0;
    slow = await WebhookReceiver.start({ now });
    fast = await WebhookReceiver.start({ now });
    slow.hold = true;
    const hook = (id: string, url: string) => ({
      id,
      url,
      secret: RECEIVER_SECRET,
      event_types: ["guarantee.issued"],
    });
    t = core.t = await startTestCore({
      webhooks: JSON.stringify([hook("slow", slow.url), hook("fast", fast.url)]),
      webhookTimeoutMs: HANG_TIMEOUT_MS,
      ...config,
    });
    await t.core.context.store.collateral.creditDeposit(payer.address, ZeroAddress, 10_000n, T0);
    const token = (await signIn(t.core.url, recipient)).access_token;
    const issueOne = async (reqId: bigint) => {
      const answer = await issue(t!.core.url, token, await signedBody(v1Claims({ reqId, amount: 1n })));
      expect(answer.status).to.equal(200);
    };
    return { t, slow, fast, issueOne };
  }

  const reqIds = (receiver: WebhookReceiver) =>
    receiver.events.map((event) => (event.data as { req_id: string }).req_id);
  const lanes = (round: DispatchRound) => round.attempts.map((a) => a.subscriptionId).sort();
  const attemptOf = (round: DispatchRound, subscriptionId: string) =>
    round.attempts.find((a) => a.subscriptionId === subscriptionId)!.outcome;

  it("rounds serve the healthy lane while the hanging one holds its own; a full lane waits its turn", async function () {
    const { t, slow, fast, issueOne } = await setup({ backgroundTasks: false });
    const dispatcher: WebhookDispatcher = createWebhookDispatcher(t.core.context, {
      laneWidth: 2,
      jitter: () => 0,
    });
    let slowFirstRecorded = false;

    await issueOne(1n);
    const first = await dispatcher.dispatch();
    expect(lanes(first)).to.deep.equal(["fast", "slow"]);
    void attemptOf(first, "slow").then(() => (slowFirstRecorded = true));
    expect(await attemptOf(first, "fast")).to.include({ status: "delivered" });
    await slow.arrivals(1);
    expect(slow.heldCount).to.equal(1);

    // The next event reaches the healthy endpoint while the first is still held by the slow one.
    await issueOne(2n);
    const second = await dispatcher.dispatch();
    expect(lanes(second)).to.deep.equal(["fast", "slow"]);
    expect(await attemptOf(second, "fast")).to.include({ status: "delivered" });
    await slow.arrivals(2);
    expect(slowFirstRecorded).to.equal(false);
    expect(slow.heldCount).to.equal(2);
    expect(reqIds(fast)).to.deep.equal(["1", "2"]);

    // The slow lane is full (2 under way): the third event goes out to the fast endpoint only.
    await issueOne(3n);
    const third = await dispatcher.dispatch();
    expect(lanes(third)).to.deep.equal(["fast"]);
    expect(await third.done).to.deep.equal({ attempted: 1, delivered: 1, retrying: 0, failed: 0 });
    expect(reqIds(fast)).to.deep.equal(["1", "2", "3"]);
    expect(dispatcher.attemptsInFlight).to.equal(2);
    const waiting = await t.core.context.store.webhooks.listWebhookDeliveries({
      subscriptionId: "slow",
      limit: 10,
    });
    expect(waiting.map((d) => [d.status, d.attempts])).to.deep.equal([
      ["pending", 0],
      ["pending", 1],
      ["pending", 1],
    ]);

    // The slow receiver answers: its lane empties, and the next round gives it the third event.
    await slow.release();
    expect(await first.done).to.deep.equal({ attempted: 2, delivered: 2, retrying: 0, failed: 0 });
    expect(await second.done).to.include({ delivered: 2 });
    expect(await dispatcher.tick()).to.deep.equal({ attempted: 1, delivered: 1, retrying: 0, failed: 0 });
    expect(reqIds(slow)).to.deep.equal(["1", "2", "3"]);
    expect(dispatcher.attemptsInFlight).to.equal(0);
  });

  it("Core's own dispatch loop delivers to the healthy receiver while another hangs", async function () {
    // Were the loop to wait for the hanging attempt, this test would time out long before it does.
    this.timeout(20_000);
    const { slow, fast, issueOne } = await setup({ backgroundTasks: true, pollIntervalMs: 10 });

    await issueOne(1n);
    await Promise.all([slow.arrivals(1), fast.accepted(1)]);
    for (const reqId of [2n, 3n, 4n]) {
      await issueOne(reqId);
      await fast.accepted(Number(reqId));
    }
    expect(reqIds(fast)).to.deep.equal(["1", "2", "3", "4"]);
    // None of the slow receiver's requests has been answered yet: nothing above waited for them.
    expect(slow.requests.every((r) => r.status === 0)).to.equal(true);
    expect(slow.events).to.deep.equal([]);

    await slow.release();
    await slow.accepted(4);
    expect([...reqIds(slow)].sort()).to.deep.equal(["1", "2", "3", "4"]);
  });

  describe("the store's lane claim", function () {
    const dir = tempDir();
    after(() => dir.remove());

    it("takes each subscription's oldest first, in turns, within what its lane has room for", async function () {
      const store = SqliteStore.open(join(dir.path, "lanes.sqlite"));
      try {
        for (const id of ["a", "b", "c"]) {
          await store.webhooks.putWebhookSubscription({
            id,
            url: `http://127.0.0.1:9/${id}`,
            secret: RECEIVER_SECRET,
            eventTypes: ["*"],
            description: null,
            source: "api",
            createdAt: T0,
          });
        }
        const source = { chainId: 31337, vault: TEST_DEPLOYMENT.vault };
        const events = [1, 2, 3].map((n) =>
          guaranteeIssuedEvent(source, {
            guaranteeId: "0x" + n.toString(16).padStart(64, "0"),
            version: 1,
            user: payer.address,
            recipient: recipient.address,
            reqId: BigInt(n),
            amount: 1n,
            asset: ZeroAddress,
            timestamp: T0,
            policy: null,
            scheme: "eip712",
            signature: "0x",
            certificateClaims: "0x",
            certificateSignature: "0x",
            state: "FINALIZED_PAYABLE",
            createdAt: T0,
          }),
        );
        for (const [i, event] of events.entries()) await store.webhooks.insertWebhookEvent(event, T0 + i);

        // a: 2 slots, 1 taken; b: 2 free; c: full.
        const inFlight = new Map([
          ["a", 1],
          ["c", 2],
        ]);
        const claimed = await store.webhooks.claimDueWebhookDeliveries((T0 + 10) * 1000, 10, 60_000, {
          perSubscription: 2,
          inFlight,
        });
        const key = (d: { subscriptionId: string; eventId: string }) =>
          `${d.subscriptionId}:${events.findIndex((e) => e.id === d.eventId) + 1}`;
        expect(claimed.map(key)).to.deep.equal(["a:1", "b:1", "b:2"]);

        // The limit cuts across lanes in turns: every lane's first before any lane's second.
        const next = await store.webhooks.claimDueWebhookDeliveries((T0 + 10) * 1000, 2, 60_000, {
          perSubscription: 3,
          inFlight: new Map(),
        });
        expect(next.map(key)).to.deep.equal(["c:1", "a:2"]);
      } finally {
        await store.close();
      }
    });
  });
});
