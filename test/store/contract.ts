/**
 * The store's contract: behaviour every backend must have, the same tests for each. A backend is added to
 * STORE_BACKENDS (backends.ts) and store-contract.test.ts runs this suite against it.
 */
import { expect } from "chai";
import { WireError } from "../../sdk/errors";
import { guaranteeLeafHash, signatureHash } from "../../sdk/guarantee-tree";
import { MAX_UINT256 } from "../../sdk/wire";
import {
  type CapacityFn,
  type CycleFlow,
  type CycleLeafRow,
  DuplicateGuaranteeError,
  type GuaranteeRecord,
  type Store,
} from "../../operator/store";
import type { Repositories } from "../../operator/store/store";
import { T0 } from "../operator/helpers";
import { describeConsoleReads } from "./contract-console";

/** One empty database of a backend, and how to open store instances on it. */
export interface TestDatabase {
  /** A new store instance on this database (several instances share it, as Core replicas would). */
  open(): Promise<Store>;
  /** Deletes the database; every instance is closed first. */
  remove(): Promise<void>;
}

export interface StoreBackend {
  name: string;
  /**
   * One writer at a time on the database (SQLite): a write waits until the transaction in flight ends, so
   * tests of writers that overlap run them one after the other there.
   */
  serializesWriters?: boolean;
  /** A fresh, empty, migrated database. */
  create(): Promise<TestDatabase>;
}

const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const OTHER = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const ASSET = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const ETH = "0x0000000000000000000000000000000000000000";

/** Capacity = deposits minus pending withdrawals, at a 100 % collateral factor. */
const fullCapacity: CapacityFn = (b) => b.deposited - b.pendingWithdrawal;

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

/** The guarantees-root leaf of a record, by the sdk's own definition. */
const leafHashOf = (record: GuaranteeRecord): string =>
  guaranteeLeafHash({
    guaranteeId: record.guaranteeId,
    payer: record.user,
    recipient: record.recipient,
    asset: record.asset,
    amount: record.amount,
    signatureHash: signatureHash(record.signature),
  });

const byParticipant = (flows: CycleFlow[]): CycleFlow[] =>
  [...flows].sort((a, b) =>
    a.asset + a.participant < b.asset + b.participant
      ? -1
      : a.asset + a.participant > b.asset + b.participant
        ? 1
        : 0,
  );

export function describeStoreContract(backend: StoreBackend): void {
  describe(`store contract (${backend.name})`, () => {
    let database: TestDatabase;
    const opened: Store[] = [];

    async function open(): Promise<Store> {
      const store = await database.open();
      opened.push(store);
      return store;
    }

    beforeEach(async () => {
      database = await backend.create();
    });

    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close();
      await database.remove();
    });

    describe("transactions", () => {
      it("roll back every step when the body throws", async () => {
        const store = await open();
        await store.collateral.creditDeposit(USER, ASSET, 100n, T0);
        const failure = new Error("boom");
        let caught: unknown;
        try {
          await store.transaction(async (tx) => {
            await tx.collateral.creditDeposit(USER, ASSET, 50n, T0);
            const lock = await tx.collateral.lockIfAvailable(USER, ASSET, 120n, fullCapacity, T0);
            expect(lock.locked).to.equal(true);
            await tx.guarantees.insertGuarantee(guarantee(1));
            await tx.authSessions.insertNonce({
              nonce: "n1",
              address: USER,
              issuedAt: T0,
              expiresAt: T0 + 300,
            });
            throw failure;
          });
        } catch (error) {
          caught = error;
        }
        expect(caught).to.equal(failure);
        expect(await store.collateral.getCollateral(USER, ASSET)).to.deep.include({
          deposited: 100n,
          locked: 0n,
        });
        expect(await store.guarantees.getGuarantee(guarantee(1).guaranteeId)).to.equal(null);
        expect(await store.authSessions.consumeNonce("n1", USER, T0)).to.equal("unknown");
      });

      it("the areas written once (operator/store/sql) join the transaction: their atomic steps roll back and commit with it", async () => {
        const store = await open();
        await store.authSessions.insertNonce({
          nonce: "n1",
          address: USER,
          issuedAt: T0,
          expiresAt: T0 + 300,
        });
        const subscription = {
          id: "whk_tx",
          url: "https://a.test/hook",
          secret: "s",
          eventTypes: ["*"],
          description: null,
          source: "api" as const,
          createdAt: T0,
        };
        const steps = async (tx: Repositories) => {
          await tx.webhooks.putWebhookSubscription(subscription);
          expect(
            await tx.webhooks.insertWebhookEvent(
              { id: "evt_tx", type: "t", createdAt: T0, payload: "{}" },
              T0,
            ),
          ).to.equal(1);
          expect(await tx.authSessions.consumeNonce("n1", USER, T0)).to.equal("consumed");
          await tx.chainJournal.deleteChainBlocks(0);
          await tx.operatorState.setOperatorState("k", "v");
        };
        const failure = new Error("boom");
        const caught = await store
          .transaction(async (tx) => {
            await steps(tx);
            throw failure;
          })
          .catch((error: unknown) => error);
        expect(caught).to.equal(failure);
        expect(await store.webhooks.getWebhookSubscription("whk_tx")).to.equal(null);
        expect(await store.operatorState.getOperatorState("k")).to.equal(null);
        expect(await store.authSessions.consumeNonce("n1", USER, T0 + 1)).to.equal("consumed");
        await store.authSessions.insertNonce({
          nonce: "n2",
          address: USER,
          issuedAt: T0,
          expiresAt: T0 + 300,
        });
        await store.transaction(async (tx) => {
          await tx.webhooks.putWebhookSubscription(subscription);
          expect(
            await tx.webhooks.insertWebhookEvent(
              { id: "evt_tx", type: "t", createdAt: T0, payload: "{}" },
              T0,
            ),
          ).to.equal(1);
          expect(await tx.authSessions.consumeNonce("n2", USER, T0)).to.equal("consumed");
        });
        expect(await store.webhooks.getWebhookDelivery("evt_tx", "whk_tx")).to.include({ status: "pending" });
        expect(await store.authSessions.consumeNonce("n2", USER, T0 + 1)).to.equal("used");
      });

      it("commit every step when the body resolves", async () => {
        const store = await open();
        const result = await store.transaction(async (tx) => {
          await tx.collateral.creditDeposit(USER, ASSET, 10n, T0);
          await tx.guarantees.insertGuarantee(guarantee(1));
          return "done";
        });
        expect(result).to.equal("done");
        expect((await store.collateral.getCollateral(USER, ASSET)).deposited).to.equal(10n);
        expect(await store.guarantees.getGuarantee(guarantee(1).guaranteeId)).to.not.equal(null);
      });

      it("steps of one transaction started together (Promise.all) all run, and a failed one alone is undone", async () => {
        const store = await open();
        await store.guarantees.insertGuarantee(guarantee(1));
        const [collateral, stored, dup, reserves] = await store.transaction(async (tx) => {
          await tx.collateral.creditDeposit(USER, ASSET, 10n, T0);
          return Promise.all([
            tx.collateral.listCollateral(USER),
            tx.guarantees.getGuarantee(guarantee(1).guaranteeId),
            tx.guarantees.insertGuarantee(guarantee(1)).then(
              () => null,
              (error: unknown) => error,
            ),
            tx.reserves.listReserves(USER),
          ]);
        });
        expect(collateral.map((c) => c.deposited)).to.deep.equal([10n]);
        expect(stored).to.not.equal(null);
        expect(dup).to.be.instanceOf(DuplicateGuaranteeError);
        expect(reserves).to.deep.equal([]);
        expect((await store.collateral.getCollateral(USER, ASSET)).deposited).to.equal(10n);
      });

      it("a failed step inside a transaction rolls back the steps before it", async () => {
        const store = await open();
        await store.guarantees.insertGuarantee(guarantee(1));
        let caught: unknown;
        try {
          await store.transaction(async (tx) => {
            await tx.collateral.creditDeposit(USER, ASSET, 10n, T0);
            await tx.guarantees.insertGuarantee(guarantee(1)); // duplicate
          });
        } catch (error) {
          caught = error;
        }
        expect(caught).to.be.instanceOf(DuplicateGuaranteeError);
        expect((await store.collateral.getCollateral(USER, ASSET)).deposited).to.equal(0n);
      });

      it("other callers' writes wait for the transaction instead of joining it", async () => {
        const store = await open();
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const tx = store
          .transaction(async (t) => {
            await t.collateral.creditDeposit(USER, ASSET, 1n, T0);
            await gate;
            throw new Error("rolled back");
          })
          .catch(() => "rolled back");
        // Issued while the transaction is open: must not be swept into its rollback.
        const outside = store.collateral.creditDeposit(OTHER, ASSET, 7n, T0);
        release();
        expect(await tx).to.equal("rolled back");
        await outside;
        expect((await store.collateral.getCollateral(OTHER, ASSET)).deposited).to.equal(7n);
        expect((await store.collateral.getCollateral(USER, ASSET)).deposited).to.equal(0n);
      });

      it("refuses the outer store and nested transactions inside a transaction", async () => {
        const store = await open();
        let outerError: unknown;
        let nestedError: unknown;
        await store.transaction(async () => {
          await store.collateral.getCollateral(USER, ASSET).catch((error) => (outerError = error));
          await store.transaction(async () => undefined).catch((error) => (nestedError = error));
        });
        expect(String(outerError)).to.match(/use the tx handle/);
        expect(String(nestedError)).to.match(/do not nest/);
      });

      it("hands the transaction the same areas, refused once it ended", async () => {
        const store = await open();
        let kept: Repositories | undefined;
        await store.transaction(async (tx) => {
          kept = tx;
          await tx.collateral.creditDeposit(USER, ASSET, 3n, T0);
          await tx.operatorState.setOperatorState("contract.tx", "1");
        });
        expect((await store.collateral.getCollateral(USER, ASSET)).deposited).to.equal(3n);
        expect(await store.operatorState.getOperatorState("contract.tx")).to.equal("1");
        let late: unknown;
        await kept!.collateral.getCollateral(USER, ASSET).catch((error) => (late = error));
        expect(String(late)).to.match(/after its transaction ended/);
      });
    });

    describe("collateral", () => {
      it("keeps amounts exact up to 2^256 − 1", async () => {
        const store = await open();
        const big = MAX_UINT256 - 1n;
        await store.collateral.creditDeposit(USER, ETH, big, T0);
        await store.collateral.creditDeposit(USER, ETH, 1n, T0);
        expect((await store.collateral.getCollateral(USER, ETH)).deposited).to.equal(MAX_UINT256);
        const lock = await store.collateral.lockIfAvailable(USER, ETH, MAX_UINT256, fullCapacity, T0);
        expect(lock.locked).to.equal(true);
        expect(lock.balance.locked).to.equal(MAX_UINT256);
      });

      it("normalises address case", async () => {
        const store = await open();
        await store.collateral.creditDeposit(
          USER.toLowerCase(),
          ASSET.toUpperCase().replace("0X", "0x"),
          3n,
          T0,
        );
        const balance = await store.collateral.getCollateral(USER, ASSET);
        expect(balance).to.deep.equal({
          user: USER,
          asset: ASSET,
          deposited: 3n,
          locked: 0n,
          pendingWithdrawal: 0n,
        });
      });

      it("rejects non-positive deposits and locks", async () => {
        const store = await open();
        let errors = 0;
        await store.collateral.creditDeposit(USER, ASSET, 0n, T0).catch(() => errors++);
        await store.collateral.creditDeposit(USER, ASSET, -1n, T0).catch(() => errors++);
        await store.collateral.lockIfAvailable(USER, ASSET, 0n, fullCapacity, T0).catch(() => errors++);
        expect(errors).to.equal(3);
      });

      it("lists every non-empty balance by user then asset (byte order), paged after a key, by asset", async () => {
        const store = await open();
        await store.collateral.creditDeposit(OTHER, ASSET, 5n, T0);
        await store.collateral.creditDeposit(USER, ETH, 1n, T0);
        await store.collateral.creditDeposit(USER.toLowerCase(), ASSET, 2n, T0);
        await store.collateral.creditDeposit(RECIPIENT, ETH, 3n, T0);
        await store.collateral.setPendingWithdrawal(RECIPIENT, ASSET, 0n, T0); // an all-zero row is not listed
        const keys = (list: { user: string; asset: string }[]) => list.map((b) => `${b.user}/${b.asset}`);
        // Byte order of the checksummed strings: "0x3C44…" < "0x5FbD…" < "0x7099…" < "0x90F7…".
        const all = await store.collateral.listAllCollateral({ limit: 10 });
        expect(keys(all)).to.deep.equal([
          `${RECIPIENT}/${ETH}`,
          `${USER}/${ETH}`,
          `${USER}/${ASSET}`,
          `${OTHER}/${ASSET}`,
        ]);
        expect(all[2]).to.deep.equal({
          user: USER,
          asset: ASSET,
          deposited: 2n,
          locked: 0n,
          pendingWithdrawal: 0n,
        });
        const first = await store.collateral.listAllCollateral({ limit: 2 });
        const rest = await store.collateral.listAllCollateral({ after: first[1], limit: 2 });
        expect(keys([...first, ...rest])).to.deep.equal(keys(all));
        expect(await store.collateral.listAllCollateral({ after: rest[1], limit: 2 })).to.deep.equal([]);
        expect(
          keys(await store.collateral.listAllCollateral({ asset: ASSET.toLowerCase(), limit: 10 })),
        ).to.deep.equal([`${USER}/${ASSET}`, `${OTHER}/${ASSET}`]);
      });

      it("lockIfAvailable locks up to capacity and not a unit more", async () => {
        const store = await open();
        await store.collateral.creditDeposit(USER, ASSET, 100n, T0);
        expect((await store.collateral.lockIfAvailable(USER, ASSET, 60n, fullCapacity, T0)).locked).to.equal(
          true,
        );
        const refused = await store.collateral.lockIfAvailable(USER, ASSET, 41n, fullCapacity, T0);
        expect(refused).to.deep.include({ locked: false, capacity: 100n });
        expect(refused.balance.locked).to.equal(60n);
        expect((await store.collateral.lockIfAvailable(USER, ASSET, 40n, fullCapacity, T0)).locked).to.equal(
          true,
        );
        expect((await store.collateral.lockIfAvailable(USER, ASSET, 1n, fullCapacity, T0)).locked).to.equal(
          false,
        );
        expect((await store.collateral.getCollateral(USER, ASSET)).locked).to.equal(100n);
      });

      it("lockIfAvailable applies the capacity function (collateral factor)", async () => {
        const store = await open();
        await store.collateral.creditDeposit(USER, ASSET, 1000n, T0);
        const eightyPercent: CapacityFn = (b) => (b.deposited * 8000n) / 10000n;
        expect(
          (await store.collateral.lockIfAvailable(USER, ASSET, 801n, eightyPercent, T0)).locked,
        ).to.equal(false);
        expect(
          (await store.collateral.lockIfAvailable(USER, ASSET, 800n, eightyPercent, T0)).locked,
        ).to.equal(true);
      });

      it("concurrent locks never exceed capacity (one connection)", async () => {
        const store = await open();
        await store.collateral.creditDeposit(USER, ASSET, 1000n, T0);
        const attempts = Array.from({ length: 200 }, (_, i) =>
          store.collateral.lockIfAvailable(USER, ASSET, BigInt(1 + (i % 13)), fullCapacity, T0),
        );
        const results = await Promise.all(attempts);
        const granted = results.filter((r) => r.locked).length;
        const grantedAmount = attempts.reduce(
          (sum, _, i) => (results[i].locked ? sum + BigInt(1 + (i % 13)) : sum),
          0n,
        );
        const balance = await store.collateral.getCollateral(USER, ASSET);
        expect(balance.locked).to.equal(grantedAmount);
        expect(balance.locked <= 1000n).to.equal(true);
        expect(granted).to.be.greaterThan(0);
        expect(granted).to.be.lessThan(200);
        // Greedy in call order: every refusal happened when the lock would have crossed capacity.
        for (const r of results.filter((r) => !r.locked)) expect(r.balance.locked <= 1000n).to.equal(true);
      });

      it("concurrent locks never exceed capacity (two store instances on one database)", async () => {
        const a = await open();
        const b = await open();
        await a.collateral.creditDeposit(USER, ASSET, 500n, T0);
        const attempts = Array.from({ length: 100 }, (_, i) =>
          (i % 2 === 0 ? a : b).collateral.lockIfAvailable(USER, ASSET, 7n, fullCapacity, T0),
        );
        const granted = (await Promise.all(attempts)).filter((r) => r.locked).length;
        expect(granted).to.equal(Math.floor(500 / 7));
        expect((await a.collateral.getCollateral(USER, ASSET)).locked).to.equal(BigInt(granted * 7));
      });

      it("check-and-lock inside a transaction with other steps is all-or-nothing", async () => {
        const store = await open();
        await store.collateral.creditDeposit(USER, ASSET, 10n, T0);
        await store.guarantees.insertGuarantee(guarantee(1));
        const attempt = store.transaction(async (tx) => {
          const lock = await tx.collateral.lockIfAvailable(USER, ASSET, 10n, fullCapacity, T0);
          if (!lock.locked) throw new Error("no capacity");
          await tx.guarantees.insertGuarantee(guarantee(1)); // duplicate id → whole unit fails
        });
        let caught: unknown;
        await attempt.catch((error) => (caught = error));
        expect(caught).to.be.instanceOf(DuplicateGuaranteeError);
        expect((await store.collateral.getCollateral(USER, ASSET)).locked).to.equal(0n);
      });
    });

    describe("guarantees", () => {
      it("round-trips a record, V2 policy included", async () => {
        const store = await open();
        const policy = {
          validation_registry_address: OTHER,
          min_validation_score: 80,
          validator_agent_id: "7",
        };
        const record = guarantee(2, { version: 2, policy, state: "PENDING_VALIDATION", reqId: MAX_UINT256 });
        await store.guarantees.insertGuarantee(record);
        expect(
          await store.guarantees.getGuarantee(record.guaranteeId.toUpperCase().replace("0X", "0x")),
        ).to.deep.equal({
          ...record,
          updatedAt: record.createdAt,
          cycleId: null,
          excludedReason: null,
          finalizationSignature: null,
        });
        // The payer's Finalization signature (migration 14 / 11), stored in lower case.
        await store.guarantees.setFinalizationSignature(record.guaranteeId, "0x" + "AB".repeat(65));
        expect(
          (await store.guarantees.getClearingGuarantee(record.guaranteeId))?.finalizationSignature,
        ).to.equal("0x" + "ab".repeat(65));
      });

      it("rejects a duplicate id with DuplicateGuaranteeError", async () => {
        const store = await open();
        await store.guarantees.insertGuarantee(guarantee(1));
        let caught: unknown;
        await store.guarantees
          .insertGuarantee(guarantee(1, { amount: 5n }))
          .catch((error) => (caught = error));
        expect(caught).to.be.instanceOf(DuplicateGuaranteeError);
        expect((await store.guarantees.getGuarantee(guarantee(1).guaranteeId))?.amount).to.equal(1000n);
      });

      it("lists by recipient, oldest first, with a stable cursor", async () => {
        const store = await open();
        for (let n = 1; n <= 5; n++) await store.guarantees.insertGuarantee(guarantee(n));
        await store.guarantees.insertGuarantee(guarantee(6, { recipient: OTHER }));
        const first = await store.guarantees.listGuaranteesByRecipient(RECIPIENT.toLowerCase(), { limit: 2 });
        expect(first.items.map((g) => g.reqId)).to.deep.equal([1n, 2n]);
        expect(first.nextCursor).to.be.a("string");
        await store.guarantees.insertGuarantee(guarantee(7)); // appended while paging: seen at the end
        const second = await store.guarantees.listGuaranteesByRecipient(RECIPIENT, {
          limit: 2,
          cursor: first.nextCursor,
        });
        expect(second.items.map((g) => g.reqId)).to.deep.equal([3n, 4n]);
        const third = await store.guarantees.listGuaranteesByRecipient(RECIPIENT, {
          limit: 2,
          cursor: second.nextCursor,
        });
        expect(third.items.map((g) => g.reqId)).to.deep.equal([5n, 7n]);
        expect(third.nextCursor).to.equal(null);
      });

      it("paging never skips a row committed after later rows (two concurrent transactions)", async () => {
        const writer = await open();
        const reader = await open();
        await writer.guarantees.insertGuarantee(guarantee(1));
        // Transaction A inserts #2 (taking the lower seq) and stays open...
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let inserted!: () => void;
        const entered = new Promise<void>((resolve) => (inserted = resolve));
        const a = writer.transaction(async (tx) => {
          await tx.guarantees.insertGuarantee(guarantee(2));
          inserted();
          await gate;
        });
        await entered;
        // ...while others insert and commit #3 and #4 (on a backend with one writer at a time, they wait
        // for A, and the reader below only sees #1).
        const others = (async () => {
          await writer.guarantees.insertGuarantee(guarantee(3));
          await writer.guarantees.insertGuarantee(guarantee(4));
        })();
        if (!backend.serializesWriters) await others;

        // A tailing reader pages through what it sees now, one row per page, keeping the last cursor.
        const seen: bigint[] = [];
        let cursor: string | null = null;
        const readOn = async () => {
          for (;;) {
            const page: Awaited<ReturnType<Store["guarantees"]["listGuaranteesByRecipient"]>> =
              await reader.guarantees.listGuaranteesByRecipient(RECIPIENT, { limit: 1, cursor });
            seen.push(...page.items.map((g) => g.reqId));
            if (page.nextCursor === null) return;
            cursor = page.nextCursor;
          }
        };
        await readOn();
        expect(seen, "a row of A, still in flight, is not listed").to.not.include(2n);

        // A commits last; the reader goes on from its last cursor and must meet #2 too.
        release();
        await a;
        await others;
        await readOn();
        expect([...new Set(seen)].sort((x, y) => (x < y ? -1 : 1))).to.deep.equal([1n, 2n, 3n, 4n]);
      });

      it("rejects a forged cursor or an out-of-range limit as WireErrors", async () => {
        const store = await open();
        let cursorError: unknown;
        let limitError: unknown;
        await store.guarantees
          .listGuaranteesByRecipient(RECIPIENT, { cursor: "bm9wZQ" })
          .catch((e) => (cursorError = e));
        await store.guarantees
          .listGuaranteesByRecipient(RECIPIENT, { limit: 0 })
          .catch((e) => (limitError = e));
        expect(cursorError).to.be.instanceOf(WireError).and.have.property("field", "cursor");
        expect(limitError).to.be.instanceOf(WireError).and.have.property("field", "limit");
      });
    });

    describe("nonces and refresh tokens", () => {
      it("a nonce is spent once, by its address, before expiry", async () => {
        const store = await open();
        await store.authSessions.insertNonce({
          nonce: "abc",
          address: USER,
          issuedAt: T0,
          expiresAt: T0 + 300,
        });
        expect(await store.authSessions.consumeNonce("abc", OTHER, T0)).to.equal("address_mismatch");
        expect(await store.authSessions.consumeNonce("abc", USER, T0 + 300)).to.equal("expired");
        expect(await store.authSessions.consumeNonce("abc", USER.toLowerCase(), T0 + 299)).to.equal(
          "consumed",
        );
        expect(await store.authSessions.consumeNonce("abc", USER, T0 + 299)).to.equal("used");
        expect(await store.authSessions.consumeNonce("nope", USER, T0)).to.equal("unknown");
        expect(await store.authSessions.deleteExpiredNonces(T0 + 301)).to.equal(1);
      });

      it("rotation is single-use and family revocation covers every token", async () => {
        const store = await open();
        const base = { familyId: "f", wallet: USER, scopes: ["s"], issuedAt: T0, expiresAt: T0 + 10 };
        await store.authSessions.insertRefreshToken({
          ...base,
          tokenHash: "h1",
          rotatedFrom: null,
          rotatedAt: null,
          revokedAt: null,
        });
        await store.authSessions.insertRefreshToken({
          ...base,
          tokenHash: "h2",
          rotatedFrom: "h1",
          rotatedAt: null,
          revokedAt: null,
        });
        expect(await store.authSessions.markRefreshTokenRotated("h1", T0)).to.equal(true);
        expect(await store.authSessions.markRefreshTokenRotated("h1", T0)).to.equal(false);
        expect(await store.authSessions.revokeRefreshTokenFamily("f", T0 + 1)).to.equal(2);
        expect(await store.authSessions.getRefreshToken("h2")).to.deep.include({
          revokedAt: T0 + 1,
          scopes: ["s"],
          rotatedFrom: "h1",
        });
        expect(await store.authSessions.markRefreshTokenRotated("h2", T0)).to.equal(false);
      });
    });

    it("ping works while open; calls fail cleanly after close", async () => {
      const store = await open();
      await store.ping();
      await store.close();
      await store.close(); // idempotent
      let caught: unknown;
      await store.ping().catch((error) => (caught = error));
      expect(String(caught)).to.match(/closed/);
    });

    describe("issuance", () => {
      it("issues, answers a duplicate with the stored record, refuses beyond capacity, all in one batch", async () => {
        const store = await open();
        await store.collateral.creditDeposit(USER, ASSET, 2500n, T0);
        const request = (n: number) => ({ record: guarantee(n), capacity: fullCapacity });
        const outcomes = await store.issuance.issueGuarantees(
          [request(1), request(1), request(2), request(3)],
          T0,
        );
        expect(outcomes.map((o) => o.kind)).to.deep.equal([
          "issued",
          "duplicate",
          "issued",
          "insufficient_collateral",
        ]);
        const duplicate = outcomes[1];
        if (duplicate.kind !== "duplicate") throw new Error("unreachable");
        expect(duplicate.existing.guaranteeId).to.equal(guarantee(1).guaranteeId);
        expect((await store.collateral.getCollateral(USER, ASSET)).locked).to.equal(2000n);
        expect(await store.guarantees.getGuarantee(guarantee(3).guaranteeId)).to.equal(null);
      });

      it("a batch of distinct ids over two payers: stored duplicate, issued, refused, webhook events; each payer's total once", async () => {
        const store = await open();
        await store.webhooks.putWebhookSubscription({
          id: "whk_a",
          url: "https://a.test/hook",
          secret: "s",
          eventTypes: ["guarantee.issued"],
          description: null,
          source: "api",
          createdAt: T0,
        });
        await store.collateral.creditDeposit(USER, ASSET, 2500n, T0);
        await store.collateral.creditDeposit(OTHER, ASSET, 1000n, T0);
        await store.issuance.issueGuarantees([{ record: guarantee(1), capacity: fullCapacity }], T0);
        const request = (n: number, user = USER) => ({
          record: guarantee(n, { user }),
          capacity: fullCapacity,
          events: [{ id: `evt_${n}`, type: "guarantee.issued", createdAt: T0, payload: `{"n":${n}}` }],
        });
        const outcomes = await store.issuance.issueGuarantees(
          [request(1), request(2), request(3, OTHER), request(4), request(5, OTHER)],
          T0,
        );
        expect(outcomes.map((o) => o.kind)).to.deep.equal([
          "duplicate",
          "issued",
          "issued",
          "insufficient_collateral",
          "insufficient_collateral",
        ]);
        const second = outcomes[1];
        if (second.kind !== "issued") throw new Error("unreachable");
        expect(second.balance).to.include({ locked: 2000n });
        expect((await store.collateral.getCollateral(USER, ASSET)).locked).to.equal(2000n);
        expect((await store.collateral.getCollateral(OTHER, ASSET)).locked).to.equal(1000n);
        expect(await store.guarantees.getGuarantee(guarantee(4).guaranteeId)).to.equal(null);
        // Events only for what was issued in this batch.
        const due = await store.webhooks.claimDueWebhookDeliveries(T0 * 1000, 10, 30_000);
        expect(due.map((d) => d.eventId).sort()).to.deep.equal(["evt_2", "evt_3"]);
      });

      it("an item the database refuses fails alone; the rest of its batch is issued", async () => {
        const store = await open();
        await store.collateral.creditDeposit(USER, ASSET, 5000n, T0);
        const refused = guarantee(2, { version: 3 as 1 }); // CHECK (version IN (1, 2))
        const outcomes = await store.issuance.issueGuarantees(
          [1, 2, 3].map((n) => ({ record: n === 2 ? refused : guarantee(n), capacity: fullCapacity })),
          T0,
        );
        expect(outcomes.map((o) => o.kind)).to.deep.equal(["issued", "failed", "issued"]);
        expect((await store.collateral.getCollateral(USER, ASSET)).locked).to.equal(2000n);
        expect(await store.guarantees.getGuarantee(refused.guaranteeId)).to.equal(null);
        expect(await store.guarantees.getGuarantee(guarantee(3).guaranteeId)).to.not.equal(null);
      });

      it("two store instances issuing the same ids concurrently: each issued once, never over-locked", async () => {
        const a = await open();
        const b = await open();
        await a.collateral.creditDeposit(USER, ASSET, 10_000n, T0);
        const batch = (from: number) =>
          Array.from({ length: 20 }, (_, i) => ({ record: guarantee(from + i), capacity: fullCapacity }));
        // Ids 1..20 and 11..30, twice each: 30 distinct guarantees of 1000 against a capacity of 10.
        const results = await Promise.all([
          a.issuance.issueGuarantees(batch(1), T0),
          b.issuance.issueGuarantees(batch(11), T0),
          a.issuance.issueGuarantees(batch(11), T0),
          b.issuance.issueGuarantees(batch(1), T0),
        ]);
        const issued = results.flat().filter((o) => o.kind === "issued").length;
        expect(issued).to.equal(10);
        expect((await a.collateral.getCollateral(USER, ASSET)).locked).to.equal(10_000n);
      });
    });

    describe("collateral adjustments and withdrawals", () => {
      it("adjustCollateral clamps at zero and reports what it applied", async () => {
        const store = await open();
        await store.collateral.creditDeposit(USER, ASSET, 10n, T0);
        const adjustment = await store.collateral.adjustCollateral(
          USER,
          ASSET,
          { deposited: -15n, locked: 4n },
          T0,
        );
        expect(adjustment.applied).to.deep.equal({ deposited: -10n, locked: 4n });
        expect(adjustment.balance).to.include({ deposited: 0n, locked: 4n });
        expect(await store.collateral.lockedTotals()).to.deep.equal(new Map([[ASSET, 4n]]));
        expect((await store.collateral.setPendingWithdrawal(USER, ASSET, 3n, T0)).pendingWithdrawal).to.equal(
          3n,
        );
        expect((await store.collateral.listCollateral(USER)).map((b) => b.asset)).to.deep.equal([ASSET]);
      });

      it("withdrawals round-trip and filter by state", async () => {
        const store = await open();
        const withdrawal = {
          withdrawalId: 7,
          user: USER,
          asset: ASSET,
          amount: 5n,
          finalizableAt: T0 + 60,
          requestedAt: T0,
          state: "PENDING" as const,
          paid: null,
          closedAt: null,
        };
        await store.collateral.putWithdrawal(withdrawal);
        expect(await store.collateral.getWithdrawal(7)).to.deep.equal(withdrawal);
        expect(await store.collateral.listWithdrawals(USER, ["FINALIZED"])).to.deep.equal([]);
        expect(await store.collateral.listWithdrawals(USER, ["PENDING"])).to.have.length(1);
        await store.collateral.deleteWithdrawal(7);
        expect(await store.collateral.getWithdrawal(7)).to.equal(null);
      });
    });

    describe("guarantee lifecycle and reserves", () => {
      it("transitions only from the given states and lists by query", async () => {
        const store = await open();
        await store.guarantees.insertGuarantee(guarantee(1));
        await store.guarantees.insertGuarantee(guarantee(2, { state: "PENDING_VALIDATION", version: 2 }));
        expect(
          await store.guarantees.transitionGuarantee(guarantee(1).guaranteeId, ["DISPUTED"], "CANCELLED", T0),
        ).to.equal(null);
        const before = await store.guarantees.transitionGuarantee(
          guarantee(1).guaranteeId,
          ["FINALIZED_PAYABLE"],
          "NETTED",
          T0 + 1,
        );
        expect(before?.state).to.equal("FINALIZED_PAYABLE");
        expect((await store.guarantees.getGuarantee(guarantee(1).guaranteeId))?.state).to.equal("NETTED");
        await store.guarantees.assignGuaranteesToCycle([guarantee(1).guaranteeId], 3);
        await store.guarantees.setGuaranteeExcluded(guarantee(2).guaranteeId, "consumed on chain");
        expect(
          (await store.guarantees.listGuarantees({ cycleId: 3 })).map((g) => g.guaranteeId),
        ).to.deep.equal([guarantee(1).guaranteeId]);
        expect(await store.guarantees.listGuarantees({ unassigned: true })).to.deep.equal([]);
        await store.guarantees.setValidationRequestHash(guarantee(2).guaranteeId, "0x" + "cd".repeat(32));
        expect(
          (await store.guarantees.getClearingGuarantee(guarantee(2).guaranteeId))?.validationRequestHash,
        ).to.equal("0x" + "cd".repeat(32));
      });

      it("lists by recipient, payer, state and asset, oldest or newest first, paged by seq", async () => {
        const store = await open();
        await store.guarantees.insertGuarantee(guarantee(1));
        await store.guarantees.insertGuarantee(guarantee(2, { recipient: OTHER, state: "NETTED" }));
        await store.guarantees.insertGuarantee(guarantee(3, { user: OTHER, asset: ETH }));
        await store.guarantees.insertGuarantee(guarantee(4, { recipient: RECIPIENT.toLowerCase() }));
        const ids = (list: { guaranteeId: string }[]) => list.map((g) => Number(BigInt(g.guaranteeId)));
        expect(
          ids(await store.guarantees.listGuarantees({ recipient: RECIPIENT.toLowerCase() })),
        ).to.deep.equal([1, 3, 4]);
        expect(
          ids(await store.guarantees.listGuarantees({ recipient: RECIPIENT, newestFirst: true })),
        ).to.deep.equal([4, 3, 1]);
        expect(ids(await store.guarantees.listGuarantees({ user: USER, recipient: OTHER }))).to.deep.equal([
          2,
        ]);
        expect(ids(await store.guarantees.listGuarantees({ asset: ETH }))).to.deep.equal([3]);
        expect(ids(await store.guarantees.listGuarantees({ states: ["NETTED"], user: USER }))).to.deep.equal([
          2,
        ]);
        const newest = await store.guarantees.listGuarantees({ newestFirst: true, limit: 2 });
        expect(ids(newest)).to.deep.equal([4, 3]);
        const next = await store.guarantees.listGuarantees({
          newestFirst: true,
          beforeSeq: newest[1].seq,
          limit: 2,
        });
        expect(ids(next)).to.deep.equal([2, 1]);
        expect(
          await store.guarantees.listGuarantees({ newestFirst: true, beforeSeq: next[1].seq }),
        ).to.deep.equal([]);
      });

      it("reserves come back with the guarantee they back", async () => {
        const store = await open();
        await store.guarantees.insertGuarantee(guarantee(1));
        const reserve = {
          guaranteeId: guarantee(1).guaranteeId,
          user: USER,
          asset: ASSET,
          recipient: RECIPIENT,
          amount: 1000n,
          expiresAt: T0 + 100,
          txHash: "0x" + "aa".repeat(32),
          blockNumber: 5,
        };
        await store.reserves.putReserve(reserve);
        expect(await store.reserves.getReserve(reserve.guaranteeId)).to.deep.equal(reserve);
        const [active] = await store.reserves.listReserves(USER, ASSET);
        expect(active.guarantee).to.deep.equal({
          state: "FINALIZED_PAYABLE",
          user: USER,
          asset: ASSET,
          amount: 1000n,
        });
        await store.reserves.deleteReserve(reserve.guaranteeId);
        expect(await store.reserves.listReserves(USER)).to.deep.equal([]);
      });

      it("releasable reserves: expired at the given time or backing a consumed guarantee, oldest first", async () => {
        const store = await open();
        const reserve = (n: number, expiresAt: number, blockNumber: number) => ({
          guaranteeId: guarantee(n).guaranteeId,
          user: USER,
          asset: ASSET,
          recipient: RECIPIENT,
          amount: 1000n,
          expiresAt,
          txHash: "0x" + "aa".repeat(32),
          blockNumber,
        });
        await store.guarantees.insertGuarantee(guarantee(1));
        await store.guarantees.insertGuarantee(guarantee(2, { state: "NETTED" }));
        await store.reserves.putReserve(reserve(1, T0 + 100, 7)); // expires later, guarantee still open
        await store.reserves.putReserve(reserve(2, T0 + 100, 6)); // consumed: releasable now
        await store.reserves.putReserve(reserve(3, T0 + 50, 5)); // no guarantee in Core: releasable once expired
        const ids = async (now: number, limit = 10) =>
          (await store.reserves.listReleasableReserves(now, limit)).map((r) => r.guaranteeId);
        expect(await ids(T0)).to.deep.equal([guarantee(2).guaranteeId]);
        expect(await ids(T0 + 50)).to.deep.equal([guarantee(3).guaranteeId, guarantee(2).guaranteeId]);
        expect(await ids(T0 + 100)).to.deep.equal([3, 2, 1].map((n) => guarantee(n).guaranteeId));
        expect(await ids(T0 + 100, 1)).to.deep.equal([guarantee(3).guaranteeId]);
      });

      it("V1 reserves: kept apart (v1), never releasable as expired, only once consumed; listed by id", async () => {
        const store = await open();
        const v1 = (n: number, blockNumber: number, isV1 = true) => ({
          guaranteeId: guarantee(n).guaranteeId,
          user: USER,
          asset: ASSET,
          recipient: RECIPIENT,
          amount: 1000n,
          expiresAt: T0 + 100, // collectableAt
          txHash: "0x" + "aa".repeat(32),
          blockNumber,
          ...(isV1 ? { v1: true } : {}),
        });
        await store.guarantees.insertGuarantee(guarantee(1));
        await store.guarantees.insertGuarantee(guarantee(2, { state: "NETTED" }));
        await store.reserves.putReserve(v1(1, 7));
        await store.reserves.putReserve(v1(2, 6));
        await store.reserves.putReserve(v1(3, 5, false)); // a V2 one
        expect(await store.reserves.getReserve(guarantee(1).guaranteeId)).to.deep.equal(v1(1, 7));
        expect((await store.reserves.getReserve(guarantee(3).guaranteeId))?.v1).to.equal(undefined);
        expect(await store.reserves.listV1ReserveIds()).to.deep.equal(
          [2, 1].map((n) => guarantee(n).guaranteeId),
        );
        const ids = async (now: number) =>
          (await store.reserves.listReleasableReserves(now, 10)).map((r) => r.guaranteeId);
        expect(await ids(T0)).to.deep.equal([guarantee(2).guaranteeId]);
        expect(await ids(T0 + 1000)).to.deep.equal([3, 2].map((n) => guarantee(n).guaranteeId));
      });
    });

    describe("cycles", () => {
      it("insert, update, latest, list by state; debts and claims", async () => {
        const store = await open();
        const cycle = {
          cycleId: 1,
          state: "PLANNED" as const,
          root: "0x" + "11".repeat(32),
          treeDump: "{}",
          args: "[]",
          guaranteeIds: [guarantee(1).guaranteeId],
          cutoff: T0,
          plannedAt: T0,
          txHash: null,
          txNonce: null,
          rawTx: null,
          sentAt: null,
          committedBlock: null,
          committedAt: null,
          paymentDeadline: null,
          defaultDeadline: null,
          finalizedAt: null,
          challengeDeadline: null,
          answerDeadline: null,
          vetoedAt: null,
          plannedByCore: true,
        };
        await store.cycles.insertCycle(cycle);
        await store.cycles.updateCycle(1, { state: "SENT", txNonce: 4, sentAt: T0 + 1 });
        expect(await store.cycles.getCycle(1)).to.deep.equal({
          ...cycle,
          state: "SENT",
          txNonce: 4,
          sentAt: T0 + 1,
        });
        expect((await store.cycles.latestCycle())?.cycleId).to.equal(1);
        expect(await store.cycles.listCycles(["PLANNED"])).to.deep.equal([]);
        const debt = {
          cycleId: 1,
          asset: ASSET,
          debtor: USER,
          amount: 9n,
          status: "OPEN" as const,
          covered: null,
          resolvedTx: null,
        };
        await store.cycles.putCycleDebt(debt);
        expect(await store.cycles.getCycleDebt(1, ASSET, USER)).to.deep.equal(debt);
        expect(await store.cycles.listCycleDebts({ status: "OPEN" })).to.deep.equal([debt]);
        const claim = {
          cycleId: 1,
          asset: ASSET,
          participant: RECIPIENT,
          amount: 9n,
          txHash: "0x" + "bb".repeat(32),
        };
        await store.cycles.putCycleClaim(claim);
        expect(await store.cycles.listCycleClaims(1)).to.deep.equal([claim]);
        await store.cycles.deleteCycleClaim(1, ASSET, RECIPIENT);
        await store.cycles.deleteCycleDebt(1, ASSET, USER);
        await store.cycles.deleteCycle(1);
        expect(await store.cycles.latestCycle()).to.equal(null);
      });

      it("lists cycle ids by state, newest first, below a given id", async () => {
        const store = await open();
        for (const [cycleId, state] of [
          [1, "FINALIZED"],
          [2, "COMMITTED"],
          [3, "VETOED"],
          [4, "PLANNED"],
        ] as const) {
          await store.cycles.insertCycle({
            cycleId,
            state,
            root: "0x" + "11".repeat(32),
            treeDump: "{}",
            args: "[]",
            guaranteeIds: [],
            cutoff: T0,
            plannedAt: T0,
            txHash: null,
            txNonce: null,
            rawTx: null,
            sentAt: null,
            committedBlock: null,
            committedAt: null,
            paymentDeadline: null,
            defaultDeadline: null,
            finalizedAt: null,
            challengeDeadline: null,
            answerDeadline: null,
            vetoedAt: null,
            plannedByCore: true,
          });
        }
        const committed = ["COMMITTED", "FINALIZED", "VETOED"] as const;
        expect(await store.cycles.listCycleIds(committed, { limit: 10 })).to.deep.equal([3, 2, 1]);
        expect(await store.cycles.listCycleIds(committed, { limit: 2 })).to.deep.equal([3, 2]);
        expect(await store.cycles.listCycleIds(committed, { beforeId: 2, limit: 2 })).to.deep.equal([1]);
        expect(await store.cycles.listCycleIds(["PLANNED"], { limit: 5 })).to.deep.equal([4]);
        expect(await store.cycles.listCycleIds([], { limit: 5 })).to.deep.equal([]);
      });

      it("V2 nettings: keyed by guarantee id (lower case), listed per cycle in log order, replaced and deleted", async () => {
        const store = await open();
        const id = (n: number) => "0x" + n.toString(16).padStart(64, "0");
        const tx = "0x" + "CC".repeat(32);
        const netting = (n: number, cycleId: number, logIndex: number) => ({
          guaranteeId: id(n),
          cycleId,
          txHash: tx.toLowerCase(),
          logIndex,
          blockNumber: 40,
        });
        await store.cycles.putV2Netting({ ...netting(2, 1, 7), txHash: tx });
        await store.cycles.putV2Netting(netting(1, 1, 8));
        await store.cycles.putV2Netting(netting(3, 2, 1));
        expect(await store.cycles.listV2Nettings(1)).to.deep.equal([netting(2, 1, 7), netting(1, 1, 8)]);
        expect(await store.cycles.getV2Netting(id(3).toUpperCase().replace("0X", "0x"))).to.deep.equal(
          netting(3, 2, 1),
        );
        expect(await store.cycles.getV2Netting(id(4))).to.equal(null);
        // A log applied again after a rewind (another block, log index) replaces the record.
        await store.cycles.putV2Netting({ ...netting(3, 2, 5), blockNumber: 41 });
        expect(await store.cycles.listV2Nettings(2)).to.deep.equal([
          { ...netting(3, 2, 5), blockNumber: 41 },
        ]);
        await store.cycles.deleteV2Netting(id(2));
        expect(await store.cycles.listV2Nettings(1)).to.deep.equal([netting(1, 1, 8)]);
        expect(await store.cycles.listV2Nettings(3)).to.deep.equal([]);
      });
    });

    describe("cycle netting (clearing in the database)", () => {
      const THIRD = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65";
      const ids = (ns: number[]) => ns.map((n) => guarantee(n).guaranteeId);

      it("reserves the oldest payable unassigned guarantees as one key range, releases them", async () => {
        const store = await open();
        for (let n = 1; n <= 6; n++) await store.guarantees.insertGuarantee(guarantee(n));
        await store.guarantees.insertGuarantee(guarantee(7, { state: "PENDING_VALIDATION" }));
        await store.guarantees.assignGuaranteesToCycle([guarantee(2).guaranteeId], 1);
        await store.guarantees.setGuaranteeExcluded(guarantee(3).guaranteeId, "consumed");
        expect(await store.netting.reservePayableGuarantees(2, 2)).to.equal(2);
        expect(await store.netting.listCycleGuaranteeIds(2)).to.deep.equal(ids([1, 4]));
        // A reservation writes no guarantee: cycle_id is set when the commit is indexed.
        expect((await store.guarantees.getClearingGuarantee(guarantee(1).guaranteeId))?.cycleId).to.equal(
          null,
        );
        expect(await store.netting.reservePayableGuarantees(3)).to.equal(2);
        expect(await store.netting.listCycleGuaranteeIds(3)).to.deep.equal(ids([5, 6]));
        // Membership of given ids: only those of the range (not another range's, not one assigned by cycle_id).
        expect(await store.netting.listCycleGuaranteesAmong(3, ids([1, 2, 6, 7, 99]))).to.deep.equal(
          ids([6]),
        );
        expect(await store.netting.listCycleGuaranteesAmong(3, [])).to.deep.equal([]);
        expect(await store.netting.listCycleGuaranteesAmong(8, ids([6]))).to.deep.equal([]);
        expect(await store.netting.hasUnreservedPayable()).to.equal(false);
        expect(await store.netting.reservePayableGuarantees(4)).to.equal(0);
        expect(await store.netting.countCycleGuarantees(4)).to.equal(0);
        // Released below a later range: its guarantees take fresh keys, and the next range has them.
        expect(await store.netting.releaseCycleGuarantees(2)).to.equal(2);
        expect(await store.netting.listCycleGuaranteeIds(2)).to.deep.equal([]);
        expect(await store.netting.hasUnreservedPayable()).to.equal(true);
        expect(await store.netting.reservePayableGuarantees(4)).to.equal(2);
        expect(await store.netting.listCycleGuaranteeIds(4)).to.deep.equal(ids([1, 4]));
        expect(await store.netting.listCycleGuaranteeIds(3)).to.deep.equal(ids([5, 6]));
        // The last range released: its guarantees are the next range again, same keys.
        expect(await store.netting.releaseCycleGuarantees(4)).to.equal(2);
        expect(await store.netting.reservePayableGuarantees(4)).to.equal(2);
        expect(await store.netting.listCycleGuaranteeIds(4)).to.deep.equal(ids([1, 4]));
        expect(
          (await store.guarantees.listGuarantees({ cycleId: 1 })).map((g) => g.guaranteeId),
        ).to.deep.equal(ids([2]));
        let error: unknown;
        await store.netting.reservePayableGuarantees(2, 0).catch((e: unknown) => (error = e));
        expect(error).to.be.instanceOf(RangeError);
      });

      it("a guarantee that enters the pool after a reservation is never in its range, and is in the next", async () => {
        const store = await open();
        await store.guarantees.insertGuarantee(guarantee(1));
        await store.guarantees.insertGuarantee(guarantee(2, { state: "PENDING_VALIDATION", version: 2 }));
        await store.guarantees.insertGuarantee(guarantee(3));
        await store.guarantees.setGuaranteeExcluded(guarantee(3).guaranteeId, "consumed");
        expect(await store.netting.reservePayableGuarantees(1)).to.equal(1);
        // Stored payable, finalized, no longer excluded: all after the range.
        await store.guarantees.insertGuarantee(guarantee(4));
        await store.guarantees.transitionGuarantee(
          guarantee(2).guaranteeId,
          ["PENDING_VALIDATION"],
          "FINALIZED_PAYABLE",
          T0,
        );
        await store.guarantees.setGuaranteeExcluded(guarantee(3).guaranteeId, null);
        expect(await store.netting.countCycleGuarantees(1)).to.equal(1);
        expect(await store.netting.listCycleGuaranteeIds(1)).to.deep.equal(ids([1]));
        expect(await store.netting.hasUnreservedPayable()).to.equal(true);
        expect(await store.netting.reservePayableGuarantees(2)).to.equal(3);
        expect(await store.netting.listCycleGuaranteeIds(2)).to.deep.equal(ids([4, 2, 3]));
        // Cycle 1 committed (cycle_id and state written at indexing), then vetoed: back to the pool,
        // after every range.
        await store.guarantees.assignGuaranteesToCycle([guarantee(1).guaranteeId], 1);
        await store.guarantees.transitionGuarantee(
          guarantee(1).guaranteeId,
          ["FINALIZED_PAYABLE"],
          "NETTED",
          T0,
        );
        expect(await store.netting.countCycleGuarantees(1)).to.equal(0);
        expect(await store.netting.hasUnreservedPayable()).to.equal(false);
        await store.guarantees.transitionGuarantee(
          guarantee(1).guaranteeId,
          ["NETTED"],
          "FINALIZED_PAYABLE",
          T0,
        );
        await store.guarantees.assignGuaranteesToCycle([guarantee(1).guaranteeId], null);
        expect(await store.netting.listCycleGuaranteeIds(2)).to.deep.equal(ids([4, 2, 3]));
        expect(await store.netting.reservePayableGuarantees(3)).to.equal(1);
        expect(await store.netting.listCycleGuaranteeIds(3)).to.deep.equal(ids([1]));
      });

      it("a V2 payable on its verdict waits outside the pool until its pin is indexed, then takes a fresh key (audit H-2)", async () => {
        const store = await open();
        const v2 = (n: number) => guarantee(n, { state: "PENDING_VALIDATION", version: 2 });
        for (const n of [1, 2, 3, 5]) await store.guarantees.insertGuarantee(v2(n));
        await store.guarantees.insertGuarantee(guarantee(4));
        // 1, 2 and 3 pass on their verdicts, and 2's payer finalized it too (its finalization answers
        // disputes); 5 is finalized by its payer only.
        for (const n of [1, 2, 3]) await store.guarantees.setVerdictPayable(guarantee(n).guaranteeId, T0);
        for (const n of [2, 5])
          await store.guarantees.setFinalizationSignature(guarantee(n).guaranteeId, "0x" + "fe".repeat(65));
        for (const n of [1, 2, 3, 5]) {
          await store.guarantees.transitionGuarantee(
            guarantee(n).guaranteeId,
            ["PENDING_VALIDATION"],
            "FINALIZED_PAYABLE",
            T0,
          );
        }
        await store.guarantees.setVerdictPin(guarantee(1).guaranteeId, "sent");
        expect(await store.netting.countUnreservedPayable(10)).to.equal(3);
        expect(await store.netting.reservePayableGuarantees(1)).to.equal(3);
        expect(await store.netting.listCycleGuaranteeIds(1)).to.deep.equal(ids([4, 2, 5]));
        expect(await store.netting.hasUnreservedPayable()).to.equal(false);
        // Indexed pins: 3 and 1 enter the pool after the reserved range; the range keeps its guarantees.
        await store.guarantees.setVerdictPin(guarantee(3).guaranteeId, "pinned");
        await store.guarantees.setVerdictPin(guarantee(1).guaranteeId, "pinned");
        expect(await store.netting.listCycleGuaranteeIds(1)).to.deep.equal(ids([4, 2, 5]));
        // Anyone pins a guarantee already in a reserved range (2, payer-finalized): it keeps its key.
        await store.guarantees.setVerdictPin(guarantee(2).guaranteeId, "pinned");
        expect(await store.netting.listCycleGuaranteeIds(1)).to.deep.equal(ids([4, 2, 5]));
        expect(await store.netting.reservePayableGuarantees(2)).to.equal(2);
        expect(await store.netting.listCycleGuaranteeIds(2)).to.deep.equal(ids([3, 1]));
        expect(await store.netting.aggregateCycleGuarantees(2)).to.include({ guaranteeCount: 2 });
        expect(await store.netting.listCycleNettedV2Ids(2)).to.deep.equal(ids([1, 3]));
        let leaves = 0;
        expect((await store.netting.scanCycle(2, () => leaves++)).guaranteeCount).to.equal(2);
        expect(leaves).to.equal(2);
        // A reorg that drops 1's pin: out of the pool again (and so out of the range).
        await store.guarantees.setVerdictPin(guarantee(1).guaranteeId, "sent");
        expect(await store.netting.listCycleGuaranteeIds(2)).to.deep.equal(ids([3]));
      });

      it("pins to send: never sent, or sent at or before a time and not indexed; the verdicts waiting for theirs", async () => {
        const store = await open();
        const v2 = (n: number) => guarantee(n, { state: "PENDING_VALIDATION", version: 2 });
        for (const n of [1, 2, 3, 4]) {
          await store.guarantees.insertGuarantee(v2(n));
          await store.guarantees.setVerdictPayable(guarantee(n).guaranteeId, T0 + n);
          await store.guarantees.transitionGuarantee(
            guarantee(n).guaranteeId,
            ["PENDING_VALIDATION"],
            "FINALIZED_PAYABLE",
            T0,
          );
        }
        expect(await store.guarantees.verdictPinWait()).to.deep.equal({
          waiting: 4,
          oldestPayableAt: T0 + 1,
        });
        await store.guarantees.setVerdictPinsSent(ids([1, 2]), T0 + 100);
        await store.guarantees.setVerdictPinsSent(ids([3]), T0 + 200);
        await store.guarantees.setVerdictPin(guarantee(1).guaranteeId, "pinned");
        // A late "sent" never downgrades a pin already indexed.
        await store.guarantees.setVerdictPinsSent(ids([1]), T0 + 300);
        const g1 = await store.guarantees.getClearingGuarantee(guarantee(1).guaranteeId);
        expect([g1?.verdictPin, g1?.verdictPinAt]).to.deep.equal(["pinned", T0 + 100]);
        const g2 = await store.guarantees.getClearingGuarantee(guarantee(2).guaranteeId);
        expect([g2?.verdictPin, g2?.verdictPinAt]).to.deep.equal(["sent", T0 + 100]);
        const toPin = async (pinSentBefore?: number) =>
          (await store.guarantees.listGuarantees({ version: 2, verdictToPin: true, pinSentBefore })).map(
            (g) => g.guaranteeId,
          );
        expect(await toPin()).to.deep.equal(ids([4]));
        expect(await toPin(T0 + 99)).to.deep.equal(ids([4]));
        expect(await toPin(T0 + 100)).to.deep.equal(ids([2, 4]));
        expect(await toPin(T0 + 200)).to.deep.equal(ids([2, 3, 4]));
        expect(await store.guarantees.verdictPinWait()).to.deep.equal({
          waiting: 3,
          oldestPayableAt: T0 + 2,
        });
        for (const n of [2, 3, 4]) await store.guarantees.setVerdictPin(guarantee(n).guaranteeId, "pinned");
        expect(await store.guarantees.verdictPinWait()).to.deep.equal({ waiting: 0, oldestPayableAt: null });
      });

      it("a range ends before every transaction still in flight: a payable guarantee it has not seen commit is in the next", async function () {
        if (backend.serializesWriters) this.skip(); // one writer at a time: nothing is in flight meanwhile
        const [a, b] = [await open(), await open()];
        await a.guarantees.insertGuarantee(guarantee(1));
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let inserted!: () => void;
        const insertedInFlight = new Promise<void>((resolve) => (inserted = resolve));
        // Stored in a transaction that stays open while another replica stores one and reserves.
        const inFlight = a.transaction(async (tx) => {
          await tx.guarantees.insertGuarantee(guarantee(2));
          inserted();
          await held;
        });
        try {
          await insertedInFlight;
          await b.guarantees.insertGuarantee(guarantee(3)); // committed, but its transaction began after 2's
          expect(await b.netting.reservePayableGuarantees(1)).to.equal(1);
          expect(await b.netting.listCycleGuaranteeIds(1)).to.deep.equal(ids([1]));
        } finally {
          release();
          await inFlight;
        }
        expect(await b.netting.countCycleGuarantees(1)).to.equal(1);
        expect(await b.netting.reservePayableGuarantees(2)).to.equal(2);
        expect(await b.netting.listCycleGuaranteeIds(2)).to.deep.equal(ids([2, 3]));
      });

      it("sums flows per asset and participant; self-payments count in volume only and are not listed", async () => {
        const store = await open();
        const rows: GuaranteeRecord[] = [
          guarantee(1, { user: USER, recipient: RECIPIENT, amount: 700n, version: 2 }),
          guarantee(2, { user: RECIPIENT, recipient: USER, amount: 200n }),
          guarantee(3, { user: OTHER, recipient: OTHER, amount: 5n, version: 2 }), // self-payment
          guarantee(4, { user: USER, recipient: USER, amount: 9n, asset: ETH }), // self-payment, ETH only
          guarantee(5, { user: THIRD, recipient: RECIPIENT, amount: 1n, version: 2 }), // dust
          guarantee(6, { user: THIRD, recipient: THIRD, amount: 3n, asset: ETH, version: 2 }),
        ];
        for (const row of rows) await store.guarantees.insertGuarantee(row);
        expect(await store.netting.reservePayableGuarantees(9)).to.equal(6);
        const aggregates = await store.netting.aggregateCycleGuarantees(9);
        expect(aggregates.guaranteeCount).to.equal(6);
        expect(aggregates.assets).to.deep.equal([
          { asset: ETH, guaranteeCount: 2, grossAmount: 12n },
          { asset: ASSET, guaranteeCount: 4, grossAmount: 906n },
        ]);
        const flows = [...aggregates.flows].sort((a, b) => (a.participant < b.participant ? -1 : 1));
        expect(flows).to.deep.equal(
          [
            { asset: ASSET, participant: RECIPIENT, received: 701n, paid: 200n },
            { asset: ASSET, participant: USER, received: 200n, paid: 700n },
            { asset: ASSET, participant: THIRD, received: 0n, paid: 1n },
          ].sort((a, b) => (a.participant < b.participant ? -1 : 1)),
        );
        // V2, not self-payments, sorted by id.
        expect(await store.netting.listCycleNettedV2Ids(9)).to.deep.equal(ids([1, 5]));
        // Each guarantee's leaf hash was stored at issuance: the tree's own leaf hash.
        const scanned: string[] = [];
        const collect = (row: CycleLeafRow): void => {
          expect(row.leafHash).to.not.equal(null);
          scanned.push("0x" + (row.leafHash as Buffer).toString("hex"));
        };
        expect(await store.netting.scanCycleLeaves(9, collect)).to.equal(6);
        expect(scanned.sort()).to.deep.equal(rows.map(leafHashOf).sort());
        expect(await store.netting.countCycleGuarantees(9)).to.equal(6);
        // The one-pass scan gives the same aggregates, V2 ids and leaves.
        scanned.length = 0;
        const scan = await store.netting.scanCycle(9, collect);
        expect(scanned.sort()).to.deep.equal(rows.map(leafHashOf).sort());
        expect(scan.nettedV2Ids).to.deep.equal(ids([1, 5]));
        expect({ ...scan, nettedV2Ids: undefined, flows: byParticipant(scan.flows) }).to.deep.equal({
          ...aggregates,
          nettedV2Ids: undefined,
          flows: byParticipant(aggregates.flows),
        });
        const all = await store.netting.aggregateCycleGuarantees(10);
        expect(all).to.deep.equal({ guaranteeCount: 0, assets: [], flows: [] });
        expect(await store.netting.countCycleGuarantees(10)).to.equal(0);
        expect(await store.netting.scanCycle(10, collect)).to.deep.equal({
          guaranteeCount: 0,
          assets: [],
          flows: [],
          nettedV2Ids: [],
        });
      });

      it("sums exactly up to 2^256 − 1 per guarantee, over many assets", async () => {
        const store = await open();
        const assets = Array.from({ length: 12 }, (_, i) => "0x" + (i + 1).toString(16).padStart(40, "0"));
        let n = 0;
        const expected = new Map<string, bigint>();
        for (const asset of assets) {
          for (const amount of [MAX_UINT256, MAX_UINT256 - 1n, 10n ** 18n + 1n, 1n]) {
            await store.guarantees.insertGuarantee(guarantee(++n, { asset, amount }));
            expected.set(asset, (expected.get(asset) ?? 0n) + amount);
          }
        }
        await store.netting.reservePayableGuarantees(4);
        const aggregates = await store.netting.aggregateCycleGuarantees(4);
        expect(aggregates.assets.map((a) => a.grossAmount)).to.deep.equal(assets.map((a) => expected.get(a)));
        for (const flow of aggregates.flows) {
          const total = expected.get(flow.asset.toLowerCase());
          expect(flow.participant === USER ? flow.paid : flow.received).to.equal(total);
        }
        expect(aggregates.flows).to.have.length(24);
        const scan = await store.netting.scanCycle(4, () => undefined);
        expect(scan).to.deep.include({
          guaranteeCount: aggregates.guaranteeCount,
          assets: aggregates.assets,
        });
        expect(byParticipant(scan.flows)).to.deep.equal(byParticipant(aggregates.flows));
      });
    });

    describe("chain journal and operator state", () => {
      it("cursor, blocks and events, newest first for a rewind", async () => {
        const store = await open();
        expect(await store.chainJournal.getChainCursor()).to.equal(null);
        const cursor = { blockNumber: 3, blockHash: "0x" + "03".repeat(32), blockTimestamp: T0 };
        await store.chainJournal.setChainCursor(cursor, T0);
        expect(await store.chainJournal.getChainCursor()).to.deep.equal(cursor);
        for (const n of [1, 2, 3]) {
          await store.chainJournal.recordChainBlock({
            blockNumber: n,
            blockHash: "0x" + "0".repeat(63) + n,
            blockTimestamp: T0 + n,
          });
          await store.chainJournal.insertChainEvent({
            txHash: "0x" + "e".repeat(63) + n,
            logIndex: 0,
            blockNumber: n,
            blockHash: "0x" + "0".repeat(63) + n,
            blockTimestamp: T0 + n,
            contract: "Vault",
            name: "Deposited",
            args: { amount: String(n) },
            undo: [{ op: "x", n }],
            appliedAt: T0,
          });
        }
        expect((await store.chainJournal.listChainBlocks(3, 2)).map((b) => b.blockNumber)).to.deep.equal([
          3, 2,
        ]);
        expect((await store.chainJournal.listChainEventsAbove(1)).map((e) => e.blockNumber)).to.deep.equal([
          3, 2,
        ]);
        expect((await store.chainJournal.getChainEvent("0x" + "e".repeat(63) + "2", 0))?.undo).to.deep.equal([
          { op: "x", n: 2 },
        ]);
        expect(await store.chainJournal.deleteChainEventsBelow(2)).to.equal(1);
        await store.chainJournal.deleteChainBlocks(2, 2);
        expect((await store.chainJournal.listChainBlocks(10, 10)).map((b) => b.blockNumber)).to.deep.equal([
          2,
        ]);
        await store.chainJournal.setChainCursor(null, T0);
        expect(await store.chainJournal.getChainCursor()).to.equal(null);
      });

      it("operator state is a durable key-value map", async () => {
        const store = await open();
        expect(await store.operatorState.getOperatorState("k")).to.equal(null);
        await store.operatorState.setOperatorState("k", "v1");
        await store.operatorState.setOperatorState("k", "v2");
        expect(await store.operatorState.getOperatorState("k")).to.equal("v2");
        await store.operatorState.setOperatorState("k", null);
        expect(await store.operatorState.getOperatorState("k")).to.equal(null);
      });
    });

    describe("webhook outbox", () => {
      it("fans an event out to matching subscriptions, leases due deliveries, records attempts", async () => {
        const store = await open();
        await store.webhooks.putWebhookSubscription({
          id: "whk_a",
          url: "https://a.test/hook",
          secret: "s",
          eventTypes: ["*"],
          description: null,
          source: "api",
          createdAt: T0,
        });
        expect(
          await store.webhooks.insertWebhookEvent(
            { id: "evt_1", type: "guarantee.issued", createdAt: T0, payload: "{}" },
            T0,
          ),
        ).to.equal(1);
        const [due] = await store.webhooks.claimDueWebhookDeliveries(T0 * 1000, 10, 30_000);
        expect(due).to.include({ eventId: "evt_1", subscriptionId: "whk_a", attempts: 1, payload: "{}" });
        expect(await store.webhooks.claimDueWebhookDeliveries((T0 + 1) * 1000, 10, 30_000)).to.deep.equal([]);
        await store.webhooks.recordWebhookAttempt(
          "evt_1",
          "whk_a",
          { status: "delivered", statusCode: 200 },
          T0 + 2,
        );
        expect((await store.webhooks.getWebhookDelivery("evt_1", "whk_a"))?.status).to.equal("delivered");
        expect(await store.webhooks.listWebhookAttempts("evt_1", "whk_a")).to.deep.equal([
          { attempt: 1, at: T0 + 2, outcome: "delivered", statusCode: 200, error: null },
        ]);
        // A second outcome for a delivery no longer pending changes nothing and records nothing.
        await store.webhooks.recordWebhookAttempt(
          "evt_1",
          "whk_a",
          { status: "failed", error: "x", statusCode: 500 },
          T0 + 3,
        );
        expect(await store.webhooks.listWebhookAttempts("evt_1", "whk_a")).to.have.length(1);
        expect(await store.webhooks.webhookBacklog()).to.deep.equal([]);
        expect(await store.webhooks.deleteWebhookSubscription("whk_a")).to.equal(true);
        // Attempts go with their delivery.
        expect(await store.webhooks.listWebhookAttempts("evt_1", "whk_a")).to.deep.equal([]);
        expect(await store.webhooks.listWebhookSubscriptions()).to.deep.equal([]);
      });
      it("counts each subscription's pending and failed deliveries, with the oldest pending and its attempts", async () => {
        const store = await open();
        for (const id of ["whk_a", "whk_b", "whk_c"]) {
          await store.webhooks.putWebhookSubscription({
            id,
            url: `https://${id}.test/hook`,
            secret: "s",
            eventTypes: ["*"],
            description: null,
            source: "api",
            createdAt: T0,
          });
        }
        for (let n = 1; n <= 3; n++) {
          await store.webhooks.insertWebhookEvent(
            { id: `evt_${n}`, type: "guarantee.issued", createdAt: T0 + n, payload: "{}" },
            T0 + n,
          );
        }
        // evt_1: delivered to a, failed at b, retried at c; evt_2 and evt_3 pending everywhere.
        await store.webhooks.claimDueWebhookDeliveries((T0 + 1) * 1000, 3, 30_000);
        await store.webhooks.recordWebhookAttempt(
          "evt_1",
          "whk_a",
          { status: "delivered", statusCode: 200 },
          T0 + 5,
        );
        await store.webhooks.recordWebhookAttempt(
          "evt_1",
          "whk_b",
          { status: "failed", error: "gone", statusCode: 410 },
          T0 + 5,
        );
        await store.webhooks.recordWebhookAttempt(
          "evt_1",
          "whk_c",
          { status: "pending", nextAttemptAtMs: (T0 + 60) * 1000, error: "busy", statusCode: 503 },
          T0 + 5,
        );
        expect(await store.webhooks.webhookBacklog()).to.deep.equal([
          { subscriptionId: "whk_a", pending: 2, failed: 0, oldestPendingAt: T0 + 2, maxPendingAttempts: 0 },
          { subscriptionId: "whk_b", pending: 2, failed: 1, oldestPendingAt: T0 + 2, maxPendingAttempts: 0 },
          { subscriptionId: "whk_c", pending: 3, failed: 0, oldestPendingAt: T0 + 1, maxPendingAttempts: 1 },
        ]);
      });
    });

    describeConsoleReads(open);
  });
}
