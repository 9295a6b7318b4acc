/**
 * The store's contract, continued: the reads of the operator console (docs/console.md) — guarantee search
 * and counts, a payer's ledger (debts, claims, the journal's deposits), a transaction's cycles, and the
 * operator's webhook retry and test event. Run for every backend by {@link describeStoreContract}.
 */
import { expect } from "chai";
import type { GuaranteeRecord, Store } from "../../operator/store";
import { T0 } from "../operator/helpers";

const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const OTHER = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const ASSET = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

function guarantee(n: number, changes: Partial<GuaranteeRecord> = {}): GuaranteeRecord {
  return {
    guaranteeId: "0x" + n.toString(16).padStart(64, "0"),
    version: 1,
    user: USER,
    recipient: RECIPIENT,
    reqId: BigInt(n),
    amount: 1000n,
    asset: ASSET,
    timestamp: T0,
    policy: null,
    scheme: "eip712",
    signature: "0x" + "ab".repeat(65),
    certificateClaims: "0x01",
    certificateSignature: "0x02",
    state: "FINALIZED_PAYABLE",
    createdAt: T0,
    ...changes,
  };
}

const cycle = (cycleId: number, txHash: string) => ({
  cycleId,
  state: "COMMITTED" as const,
  root: "0x" + "11".repeat(32),
  treeDump: "{}",
  args: "[]",
  guaranteeIds: [],
  cutoff: T0,
  plannedAt: T0,
  txHash,
  txNonce: 1,
  rawTx: null,
  sentAt: T0,
  committedBlock: 5,
  committedAt: T0 + 10,
  paymentDeadline: T0 + 100,
  defaultDeadline: T0 + 200,
  finalizedAt: null,
  challengeDeadline: T0 + 50,
  answerDeadline: T0 + 60,
  vetoedAt: null,
  plannedByCore: true,
});

export function describeConsoleReads(open: () => Promise<Store>): void {
  describe("console reads", () => {
    it("searches guarantees by id, party, time range and cycle, and counts them", async () => {
      const store = await open();
      // 1–3 USER → RECIPIENT at T0, T0+10, T0+20; 4 RECIPIENT → OTHER at T0+30.
      for (const n of [1, 2, 3])
        await store.guarantees.insertGuarantee(guarantee(n, { createdAt: T0 + 10 * (n - 1) }));
      await store.guarantees.insertGuarantee(
        guarantee(4, { user: RECIPIENT, recipient: OTHER, createdAt: T0 + 30 }),
      );
      const ids = async (query: Parameters<Store["guarantees"]["listGuarantees"]>[0]) =>
        (await store.guarantees.listGuarantees({ newestFirst: true, ...query })).map((g) =>
          Number(BigInt(g.guaranteeId)),
        );
      expect(await ids({ party: RECIPIENT.toLowerCase() })).to.deep.equal([4, 3, 2, 1]);
      expect(await ids({ party: OTHER })).to.deep.equal([4]);
      expect(
        await ids({ guaranteeId: guarantee(2).guaranteeId.toUpperCase().replace("0X", "0x") }),
      ).to.deep.equal([2]);
      expect(await ids({ createdFrom: T0 + 10, createdTo: T0 + 30 })).to.deep.equal([3, 2]);
      expect(await store.guarantees.countGuarantees({ createdFrom: T0 + 10 })).to.equal(3);
      // The count ignores paging: the total of the filter, not of the page.
      expect(await store.guarantees.countGuarantees({ user: USER, beforeSeq: 2, limit: 1 })).to.equal(3);
      expect(await store.guarantees.countGuarantees({ party: OTHER, user: USER })).to.equal(0);
      await store.guarantees.assignGuaranteesToCycle([guarantee(1).guaranteeId, guarantee(2).guaranteeId], 7);
      await store.guarantees.setGuaranteeExcluded(guarantee(2).guaranteeId, "consumed on chain");
      expect(await ids({ inCycle: true })).to.deep.equal([1]);
      expect(await store.guarantees.countGuarantees({ cycleId: 7 })).to.equal(2);
    });

    it("a payer's debts and claims, cycles by transaction, cycle counts, the journal's events by name", async () => {
      const store = await open();
      await store.cycles.insertCycle(cycle(1, "0x" + "c1".repeat(32)));
      await store.cycles.insertCycle(cycle(2, "0x" + "c2".repeat(32)));
      await store.cycles.insertCycle({ ...cycle(3, "0x" + "c3".repeat(32)), state: "PLANNED" });
      const covered = "0x" + "d1".repeat(32);
      await store.cycles.putCycleDebt({
        cycleId: 1,
        asset: ASSET,
        debtor: USER,
        amount: 500n,
        status: "COVERED",
        covered: 500n,
        resolvedTx: covered,
      });
      await store.cycles.putCycleDebt({
        cycleId: 2,
        asset: ASSET,
        debtor: OTHER,
        amount: 9n,
        status: "OPEN",
        covered: null,
        resolvedTx: null,
      });
      const claimTx = "0x" + "e2".repeat(32);
      await store.cycles.putCycleClaim({
        cycleId: 2,
        asset: ASSET,
        participant: USER,
        amount: 70n,
        txHash: claimTx,
      });
      await store.cycles.putCycleClaim({
        cycleId: 1,
        asset: ASSET,
        participant: OTHER,
        amount: 1n,
        txHash: claimTx,
      });

      const debts = await store.cycles.listCycleDebts({ debtor: USER.toLowerCase() });
      expect(debts.map((d) => [d.cycleId, d.status, d.covered])).to.deep.equal([[1, "COVERED", 500n]]);
      const claims = await store.cycles.listCycleClaimsOf(USER.toLowerCase());
      expect(claims.map((c) => [c.cycleId, c.amount, c.txHash])).to.deep.equal([[2, 70n, claimTx]]);

      expect(await store.cycles.countCycles(["COMMITTED", "FINALIZED", "VETOED"])).to.equal(2);
      expect(await store.cycles.countCycles([])).to.equal(0);
      expect(
        await store.cycles.cycleIdsOfTx(("0x" + "c2".repeat(32)).toUpperCase().replace("0X", "0x")),
      ).to.deep.equal([2]);
      expect(await store.cycles.cycleIdsOfTx(covered)).to.deep.equal([1]);
      expect(await store.cycles.cycleIdsOfTx(claimTx)).to.deep.equal([1, 2]);
      expect(await store.cycles.cycleIdsOfTx("0x" + "00".repeat(32))).to.deep.equal([]);

      for (const [n, name] of [
        [1, "Deposited"],
        [2, "WithdrawalRequested"],
        [3, "Deposited"],
      ] as const) {
        await store.chainJournal.insertChainEvent({
          txHash: "0x" + "f".repeat(63) + n,
          logIndex: 0,
          blockNumber: n,
          blockHash: "0x" + "0".repeat(63) + n,
          blockTimestamp: T0 + n,
          contract: "Vault",
          name,
          args: { user: USER, asset: ASSET, amount: String(n) },
          undo: [],
          appliedAt: T0,
        });
      }
      const deposits = await store.chainJournal.listChainEventsNamed("Vault", "Deposited");
      expect(deposits.map((e) => [e.blockNumber, e.args.amount])).to.deep.equal([
        [1, "1"],
        [3, "3"],
      ]);
      expect(await store.chainJournal.listChainEventsNamed("ClearingHouse", "Deposited")).to.deep.equal([]);
    });

    it("an operator's retry makes a failed delivery due now; a test event reaches one subscription", async () => {
      const store = await open();
      for (const id of ["whk_a", "whk_b"]) {
        await store.webhooks.putWebhookSubscription({
          id,
          url: `https://${id}.test/hook`,
          secret: "s",
          eventTypes: ["guarantee.issued"],
          description: null,
          source: "api",
          createdAt: T0,
        });
      }
      await store.webhooks.insertWebhookEvent(
        { id: "evt_1", type: "guarantee.issued", createdAt: T0, payload: '{"n":1}' },
        T0,
      );
      await store.webhooks.claimDueWebhookDeliveries(T0 * 1000, 10, 30_000);
      await store.webhooks.recordWebhookAttempt(
        "evt_1",
        "whk_a",
        { status: "failed", error: "gone", statusCode: 410 },
        T0,
      );
      await store.webhooks.recordWebhookAttempt(
        "evt_1",
        "whk_b",
        { status: "delivered", statusCode: 200 },
        T0,
      );

      expect(await store.webhooks.getWebhookEvent("evt_1")).to.deep.equal({
        id: "evt_1",
        type: "guarantee.issued",
        createdAt: T0,
        payload: '{"n":1}',
        retractedAt: null,
      });
      expect(await store.webhooks.getWebhookEvent("evt_none")).to.equal(null);

      const retried = await store.webhooks.retryWebhookDelivery("evt_1", "whk_a", (T0 + 100) * 1000 + 250);
      expect(retried).to.include({
        status: "pending",
        attempts: 1,
        nextAttemptAtMs: (T0 + 100) * 1000 + 250,
      });
      expect(retried?.lastError).to.equal("gone");
      // Delivered (and unknown) deliveries are not retried.
      expect(await store.webhooks.retryWebhookDelivery("evt_1", "whk_b", (T0 + 100) * 1000)).to.equal(null);
      expect(await store.webhooks.retryWebhookDelivery("evt_2", "whk_a", (T0 + 100) * 1000)).to.equal(null);
      const due = await store.webhooks.claimDueWebhookDeliveries((T0 + 101) * 1000, 10, 30_000);
      expect(due.map((d) => [d.eventId, d.subscriptionId, d.attempts])).to.deep.equal([
        ["evt_1", "whk_a", 2],
      ]);

      await store.webhooks.recordWebhookAttempt(
        "evt_1",
        "whk_a",
        { status: "delivered", statusCode: 200 },
        T0 + 101,
      );

      // A test event of a type nobody subscribes to, to whk_b only.
      await store.webhooks.insertWebhookEventFor(
        { id: "evt_test", type: "webhook.test", createdAt: T0 + 200, payload: "{}" },
        "whk_b",
        T0 + 200,
      );
      const test = await store.webhooks.claimDueWebhookDeliveries((T0 + 200) * 1000, 10, 30_000);
      expect(test.map((d) => [d.eventId, d.subscriptionId])).to.deep.equal([["evt_test", "whk_b"]]);
      expect(await store.webhooks.getWebhookDelivery("evt_test", "whk_a")).to.equal(null);
    });
  });
}
