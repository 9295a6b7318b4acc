/**
 * The store's contract: behaviour every backend must have, the same tests for each. A backend is added to
 * STORE_BACKENDS (backends.ts) and store-contract.test.ts runs this suite against it.
 */
import { expect } from "chai";
import { WireError } from "../../sdk/errors";
import { MAX_UINT256 } from "../../sdk/wire";
import {
  type CapacityFn,
  DuplicateGuaranteeError,
  type GuaranteeRecord,
  type Store,
} from "../../operator/store";
import { T0 } from "../operator/helpers";

/** One empty database of a backend, and how to open store instances on it. */
export interface TestDatabase {
  /** A new store instance on this database (several instances share it, as Core replicas would). */
  open(): Promise<Store>;
  /** Deletes the database; every instance is closed first. */
  remove(): Promise<void>;
}

export interface StoreBackend {
  name: string;
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
        await store.creditDeposit(USER, ASSET, 100n, T0);
        const failure = new Error("boom");
        let caught: unknown;
        try {
          await store.transaction(async (tx) => {
            await tx.creditDeposit(USER, ASSET, 50n, T0);
            const lock = await tx.lockIfAvailable(USER, ASSET, 120n, fullCapacity, T0);
            expect(lock.locked).to.equal(true);
            await tx.insertGuarantee(guarantee(1));
            await tx.insertNonce({ nonce: "n1", address: USER, issuedAt: T0, expiresAt: T0 + 300 });
            throw failure;
          });
        } catch (error) {
          caught = error;
        }
        expect(caught).to.equal(failure);
        expect(await store.getCollateral(USER, ASSET)).to.deep.include({ deposited: 100n, locked: 0n });
        expect(await store.getGuarantee(guarantee(1).guaranteeId)).to.equal(null);
        expect(await store.consumeNonce("n1", USER, T0)).to.equal("unknown");
      });

      it("commit every step when the body resolves", async () => {
        const store = await open();
        const result = await store.transaction(async (tx) => {
          await tx.creditDeposit(USER, ASSET, 10n, T0);
          await tx.insertGuarantee(guarantee(1));
          return "done";
        });
        expect(result).to.equal("done");
        expect((await store.getCollateral(USER, ASSET)).deposited).to.equal(10n);
        expect(await store.getGuarantee(guarantee(1).guaranteeId)).to.not.equal(null);
      });

      it("a failed step inside a transaction rolls back the steps before it", async () => {
        const store = await open();
        await store.insertGuarantee(guarantee(1));
        let caught: unknown;
        try {
          await store.transaction(async (tx) => {
            await tx.creditDeposit(USER, ASSET, 10n, T0);
            await tx.insertGuarantee(guarantee(1)); // duplicate
          });
        } catch (error) {
          caught = error;
        }
        expect(caught).to.be.instanceOf(DuplicateGuaranteeError);
        expect((await store.getCollateral(USER, ASSET)).deposited).to.equal(0n);
      });

      it("other callers' writes wait for the transaction instead of joining it", async () => {
        const store = await open();
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const tx = store
          .transaction(async (t) => {
            await t.creditDeposit(USER, ASSET, 1n, T0);
            await gate;
            throw new Error("rolled back");
          })
          .catch(() => "rolled back");
        // Issued while the transaction is open: must not be swept into its rollback.
        const outside = store.creditDeposit(OTHER, ASSET, 7n, T0);
        release();
        expect(await tx).to.equal("rolled back");
        await outside;
        expect((await store.getCollateral(OTHER, ASSET)).deposited).to.equal(7n);
        expect((await store.getCollateral(USER, ASSET)).deposited).to.equal(0n);
      });

      it("refuses the outer store and nested transactions inside a transaction", async () => {
        const store = await open();
        let outerError: unknown;
        let nestedError: unknown;
        await store.transaction(async () => {
          await store.getCollateral(USER, ASSET).catch((error) => (outerError = error));
          await store.transaction(async () => undefined).catch((error) => (nestedError = error));
        });
        expect(String(outerError)).to.match(/use the tx handle/);
        expect(String(nestedError)).to.match(/do not nest/);
      });
    });

    describe("collateral", () => {
      it("keeps amounts exact up to 2^256 − 1", async () => {
        const store = await open();
        const big = MAX_UINT256 - 1n;
        await store.creditDeposit(USER, ETH, big, T0);
        await store.creditDeposit(USER, ETH, 1n, T0);
        expect((await store.getCollateral(USER, ETH)).deposited).to.equal(MAX_UINT256);
        const lock = await store.lockIfAvailable(USER, ETH, MAX_UINT256, fullCapacity, T0);
        expect(lock.locked).to.equal(true);
        expect(lock.balance.locked).to.equal(MAX_UINT256);
      });

      it("normalises address case", async () => {
        const store = await open();
        await store.creditDeposit(USER.toLowerCase(), ASSET.toUpperCase().replace("0X", "0x"), 3n, T0);
        const balance = await store.getCollateral(USER, ASSET);
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
        await store.creditDeposit(USER, ASSET, 0n, T0).catch(() => errors++);
        await store.creditDeposit(USER, ASSET, -1n, T0).catch(() => errors++);
        await store.lockIfAvailable(USER, ASSET, 0n, fullCapacity, T0).catch(() => errors++);
        expect(errors).to.equal(3);
      });

      it("lockIfAvailable locks up to capacity and not a unit more", async () => {
        const store = await open();
        await store.creditDeposit(USER, ASSET, 100n, T0);
        expect((await store.lockIfAvailable(USER, ASSET, 60n, fullCapacity, T0)).locked).to.equal(true);
        const refused = await store.lockIfAvailable(USER, ASSET, 41n, fullCapacity, T0);
        expect(refused).to.deep.include({ locked: false, capacity: 100n });
        expect(refused.balance.locked).to.equal(60n);
        expect((await store.lockIfAvailable(USER, ASSET, 40n, fullCapacity, T0)).locked).to.equal(true);
        expect((await store.lockIfAvailable(USER, ASSET, 1n, fullCapacity, T0)).locked).to.equal(false);
        expect((await store.getCollateral(USER, ASSET)).locked).to.equal(100n);
      });

      it("lockIfAvailable applies the capacity function (collateral factor)", async () => {
        const store = await open();
        await store.creditDeposit(USER, ASSET, 1000n, T0);
        const eightyPercent: CapacityFn = (b) => (b.deposited * 8000n) / 10000n;
        expect((await store.lockIfAvailable(USER, ASSET, 801n, eightyPercent, T0)).locked).to.equal(false);
        expect((await store.lockIfAvailable(USER, ASSET, 800n, eightyPercent, T0)).locked).to.equal(true);
      });

      it("concurrent locks never exceed capacity (one connection)", async () => {
        const store = await open();
        await store.creditDeposit(USER, ASSET, 1000n, T0);
        const attempts = Array.from({ length: 200 }, (_, i) =>
          store.lockIfAvailable(USER, ASSET, BigInt(1 + (i % 13)), fullCapacity, T0),
        );
        const results = await Promise.all(attempts);
        const granted = results.filter((r) => r.locked).length;
        const grantedAmount = attempts.reduce(
          (sum, _, i) => (results[i].locked ? sum + BigInt(1 + (i % 13)) : sum),
          0n,
        );
        const balance = await store.getCollateral(USER, ASSET);
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
        await a.creditDeposit(USER, ASSET, 500n, T0);
        const attempts = Array.from({ length: 100 }, (_, i) =>
          (i % 2 === 0 ? a : b).lockIfAvailable(USER, ASSET, 7n, fullCapacity, T0),
        );
        const granted = (await Promise.all(attempts)).filter((r) => r.locked).length;
        expect(granted).to.equal(Math.floor(500 / 7));
        expect((await a.getCollateral(USER, ASSET)).locked).to.equal(BigInt(granted * 7));
      });

      it("check-and-lock inside a transaction with other steps is all-or-nothing", async () => {
        const store = await open();
        await store.creditDeposit(USER, ASSET, 10n, T0);
        await store.insertGuarantee(guarantee(1));
        const attempt = store.transaction(async (tx) => {
          const lock = await tx.lockIfAvailable(USER, ASSET, 10n, fullCapacity, T0);
          if (!lock.locked) throw new Error("no capacity");
          await tx.insertGuarantee(guarantee(1)); // duplicate id → whole unit fails
        });
        let caught: unknown;
        await attempt.catch((error) => (caught = error));
        expect(caught).to.be.instanceOf(DuplicateGuaranteeError);
        expect((await store.getCollateral(USER, ASSET)).locked).to.equal(0n);
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
        await store.insertGuarantee(record);
        expect(await store.getGuarantee(record.guaranteeId.toUpperCase().replace("0X", "0x"))).to.deep.equal({
          ...record,
          updatedAt: record.createdAt,
          cycleId: null,
          excludedReason: null,
        });
      });

      it("rejects a duplicate id with DuplicateGuaranteeError", async () => {
        const store = await open();
        await store.insertGuarantee(guarantee(1));
        let caught: unknown;
        await store.insertGuarantee(guarantee(1, { amount: 5n })).catch((error) => (caught = error));
        expect(caught).to.be.instanceOf(DuplicateGuaranteeError);
        expect((await store.getGuarantee(guarantee(1).guaranteeId))?.amount).to.equal(1000n);
      });

      it("lists by recipient, oldest first, with a stable cursor", async () => {
        const store = await open();
        for (let n = 1; n <= 5; n++) await store.insertGuarantee(guarantee(n));
        await store.insertGuarantee(guarantee(6, { recipient: OTHER }));
        const first = await store.listGuaranteesByRecipient(RECIPIENT.toLowerCase(), { limit: 2 });
        expect(first.items.map((g) => g.reqId)).to.deep.equal([1n, 2n]);
        expect(first.nextCursor).to.be.a("string");
        await store.insertGuarantee(guarantee(7)); // appended while paging: seen at the end
        const second = await store.listGuaranteesByRecipient(RECIPIENT, {
          limit: 2,
          cursor: first.nextCursor,
        });
        expect(second.items.map((g) => g.reqId)).to.deep.equal([3n, 4n]);
        const third = await store.listGuaranteesByRecipient(RECIPIENT, {
          limit: 2,
          cursor: second.nextCursor,
        });
        expect(third.items.map((g) => g.reqId)).to.deep.equal([5n, 7n]);
        expect(third.nextCursor).to.equal(null);
      });

      it("rejects a forged cursor or an out-of-range limit as WireErrors", async () => {
        const store = await open();
        let cursorError: unknown;
        let limitError: unknown;
        await store
          .listGuaranteesByRecipient(RECIPIENT, { cursor: "bm9wZQ" })
          .catch((e) => (cursorError = e));
        await store.listGuaranteesByRecipient(RECIPIENT, { limit: 0 }).catch((e) => (limitError = e));
        expect(cursorError).to.be.instanceOf(WireError).and.have.property("field", "cursor");
        expect(limitError).to.be.instanceOf(WireError).and.have.property("field", "limit");
      });
    });

    describe("nonces and refresh tokens", () => {
      it("a nonce is spent once, by its address, before expiry", async () => {
        const store = await open();
        await store.insertNonce({ nonce: "abc", address: USER, issuedAt: T0, expiresAt: T0 + 300 });
        expect(await store.consumeNonce("abc", OTHER, T0)).to.equal("address_mismatch");
        expect(await store.consumeNonce("abc", USER, T0 + 300)).to.equal("expired");
        expect(await store.consumeNonce("abc", USER.toLowerCase(), T0 + 299)).to.equal("consumed");
        expect(await store.consumeNonce("abc", USER, T0 + 299)).to.equal("used");
        expect(await store.consumeNonce("nope", USER, T0)).to.equal("unknown");
        expect(await store.deleteExpiredNonces(T0 + 301)).to.equal(1);
      });

      it("rotation is single-use and family revocation covers every token", async () => {
        const store = await open();
        const base = { familyId: "f", wallet: USER, scopes: ["s"], issuedAt: T0, expiresAt: T0 + 10 };
        await store.insertRefreshToken({
          ...base,
          tokenHash: "h1",
          rotatedFrom: null,
          rotatedAt: null,
          revokedAt: null,
        });
        await store.insertRefreshToken({
          ...base,
          tokenHash: "h2",
          rotatedFrom: "h1",
          rotatedAt: null,
          revokedAt: null,
        });
        expect(await store.markRefreshTokenRotated("h1", T0)).to.equal(true);
        expect(await store.markRefreshTokenRotated("h1", T0)).to.equal(false);
        expect(await store.revokeRefreshTokenFamily("f", T0 + 1)).to.equal(2);
        expect(await store.getRefreshToken("h2")).to.deep.include({
          revokedAt: T0 + 1,
          scopes: ["s"],
          rotatedFrom: "h1",
        });
        expect(await store.markRefreshTokenRotated("h2", T0)).to.equal(false);
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
  });
}
