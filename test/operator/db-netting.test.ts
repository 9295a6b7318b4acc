/**
 * Clearing in the database (operator/clearing/db-netting.ts) against the in-memory netting
 * (netCycle + buildCommitPlan, the oracle): the same positions, roots, tree dump and commitCycle arguments
 * on random cycles, on every store backend.
 */
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { expect } from "chai";
import { Client, type PoolClient } from "pg";
import { getAddress, hexlify, randomBytes } from "ethers";
import { buildCommitPlan } from "../../operator/clearing/commit-plan";
import { netStoredCycle, planStoredCycle, storedGuaranteesRoot } from "../../operator/clearing/db-netting";
import { nobleKeccak256 } from "../../sdk/compact-merkle";
import { netCycle } from "../../operator/clearing/netting";
import {
  type CycleLeafRow,
  type GuaranteeRecord,
  type GuaranteeState,
  MIGRATIONS,
  migrate,
  migratePostgres,
  PostgresStore,
  SqliteStore,
  type Store,
} from "../../operator/store";
import type { PgConn } from "../../operator/store/postgres/common";
import { CycleNetting } from "../../operator/store/sql/netting";
import { postgresEngine } from "../../operator/store/sql/engine";
import { PgCycleScanner } from "../../operator/store/sql/netting-scan";
import { postgresPayableKeys } from "../../operator/store/sql/payable-keys";
import { STORE_BACKENDS, sharedTestPostgres, stopTestPostgresBackend } from "../store/backends";
import type { TestDatabase } from "../store/contract";
import { T0, tempDir } from "./helpers";

const ETH = "0x0000000000000000000000000000000000000000";

/** mulberry32, seeded per test so a failure replays. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface RandomCycle {
  records: GuaranteeRecord[];
  /** The records the cycle must net (payable, unassigned, not excluded). */
  payable: GuaranteeRecord[];
}

function randomCycle(seed: number, size: number, options: { allSelf?: boolean } = {}): RandomCycle {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const participants = Array.from({ length: 7 }, () => getAddress(hexlify(randomBytes(20))));
  const assets = [ETH, getAddress(hexlify(randomBytes(20))), getAddress(hexlify(randomBytes(20)))];
  const records: GuaranteeRecord[] = [];
  const payable: GuaranteeRecord[] = [];
  for (let i = 0; i < size; i++) {
    const user = pick(participants);
    const recipient = options.allSelf || random() < 0.1 ? user : pick(participants);
    const kind = random();
    // Dust, ordinary, and amounts far beyond 64 bits (exact sums).
    const amount =
      kind < 0.2
        ? BigInt(1 + Math.floor(random() * 3))
        : kind < 0.9
          ? BigInt(1 + Math.floor(random() * 1e12))
          : (1n << 200n) + BigInt(Math.floor(random() * 1e9));
    const state: GuaranteeState =
      random() < 0.9 ? "FINALIZED_PAYABLE" : pick(["PENDING_VALIDATION", "NETTED"]);
    const record: GuaranteeRecord = {
      guaranteeId: hexlify(randomBytes(32)),
      version: random() < 0.5 ? 1 : 2,
      // Stored addresses are checksummed; give the store mixed letter case.
      user: random() < 0.5 ? user.toLowerCase() : user,
      recipient,
      reqId: BigInt(i),
      amount,
      asset: pick(assets),
      timestamp: T0,
      policy: null,
      scheme: "eip712",
      signature: hexlify(randomBytes(65)),
      certificateClaims: "0x01",
      certificateSignature: "0x02",
      state,
      createdAt: T0,
    };
    records.push(record);
    if (state === "FINALIZED_PAYABLE") payable.push(record);
  }
  return { records, payable };
}

/** The bigint-bearing plan parts as comparable JSON. */
const plain = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value, (_, v: unknown) => (typeof v === "bigint" ? `${v}n` : v)));

/** Reserves the stored payable guarantees for `cycleId` and checks the stored plan against the oracle. */
async function compareStored(store: Store, cycle: RandomCycle, cycleId: number): Promise<void> {
  expect(await store.netting.reservePayableGuarantees(cycleId)).to.equal(cycle.payable.length);
  const stored = await planStoredCycle(store.netting, cycleId);
  const netting = netCycle(BigInt(cycleId), cycle.payable);
  const oracle = buildCommitPlan(netting, cycle.payable);
  if (oracle === null) {
    expect(stored).to.equal(null);
    return;
  }
  expect(stored).to.not.equal(null);
  expect(stored!.root).to.equal(oracle.root);
  expect(stored!.args.guaranteesRoot).to.equal(oracle.args.guaranteesRoot);
  expect(plain(stored!.args)).to.deep.equal(plain(oracle.args));
  expect(stored!.treeDump).to.deep.equal(oracle.treeDump);
  expect(stored!.placeholder).to.equal(oracle.placeholder);
  expect(plain(stored!.leaves)).to.deep.equal(plain(oracle.leaves));
  expect(plain(stored!.netting.assets)).to.deep.equal(plain(netting.assets));
  expect(stored!.netting.guaranteeCount).to.equal(netting.includedIds.length);
  expect((await store.netting.listCycleGuaranteeIds(cycleId)).sort()).to.deep.equal(
    [...netting.includedIds].sort(),
  );
  // The pure-JS keccak gives the same roots; so do the separate reads (aggregates, then the leaves).
  expect((await planStoredCycle(store.netting, cycleId, nobleKeccak256))!.args).to.deep.equal(stored!.args);
  const separate = await netStoredCycle(store.netting, cycleId);
  expect(plain(separate)).to.deep.equal(plain(stored!.netting));
  expect(await storedGuaranteesRoot(store.netting, cycleId, separate!.guaranteeCount)).to.equal(
    oracle.args.guaranteesRoot,
  );
}

for (const backend of STORE_BACKENDS) {
  describe(`clearing in the database equals the in-memory netting (${backend.name})`, function () {
    this.timeout(120_000);
    let database: TestDatabase;
    let store: Store;

    beforeEach(async () => {
      database = await backend.create();
      store = await database.open();
    });

    afterEach(async () => {
      await store.close();
      await database.remove();
    });

    async function compare(cycle: RandomCycle, cycleId: number): Promise<void> {
      for (const record of cycle.records) await store.guarantees.insertGuarantee(record);
      await compareStored(store, cycle, cycleId);
    }

    for (const seed of [1, 2, 3]) {
      it(`random cycle of 400 guarantees (seed ${seed})`, async () => {
        await compare(randomCycle(seed, 400), 7);
      });
    }

    it("a cycle of self-payments only: placeholder leaf, no V2 id listed", async () => {
      const cycle = randomCycle(11, 30, { allSelf: true });
      await compare(cycle, 1);
      const plan = await planStoredCycle(store.netting, 1);
      expect(plan!.placeholder).to.equal(true);
      expect(plan!.args.nettedV2Ids).to.deep.equal([]);
    });

    it("an empty cycle plans nothing", async () => {
      expect(await planStoredCycle(store.netting, 3)).to.equal(null);
    });

    it("a single guarantee", async () => {
      await compare(randomCycle(5, 1), 2);
    });

    for (const [label, every] of [
      ["a few of the cycle's V1 ids", 3],
      ["every V1 id of the cycle", 1],
    ] as const) {
      it(`reports the cycle's reserved V1 ids apart as netCycle does, not among the V2 ids: ${label} (docs/clearing.md, Reserved V1 ids)`, async () => {
        const cycle = randomCycle(21, 300);
        for (const record of cycle.records) await store.guarantees.insertGuarantee(record);
        const v1 = cycle.records.filter((r) => r.version === 1);
        // V1 ids (payable or not, self-payments included), an id of no stored guarantee, and one in upper
        // case (Core lower-cases them; such an entry matches nothing, as in netCycle).
        const reserved = new Set([
          ...v1.filter((_, i) => i % every === 0 && i !== 1).map((r) => r.guaranteeId.toLowerCase()),
          hexlify(randomBytes(32)),
          "0x" + v1[1].guaranteeId.slice(2).toUpperCase(),
        ]);
        expect(await store.netting.reservePayableGuarantees(4)).to.equal(cycle.payable.length);
        const stored = await planStoredCycle(store.netting, 4, undefined, reserved);
        const netting = netCycle(4n, cycle.payable, reserved);
        const oracle = buildCommitPlan(netting, cycle.payable)!;
        expect(plain(stored!.args)).to.deep.equal(plain(oracle.args));
        expect(stored!.netting.nettedV2Ids).to.deep.equal(netting.nettedV2Ids);
        expect(stored!.netting.reservedV1Ids).to.deep.equal(netting.reservedV1Ids);
        const reservedV1 = cycle.payable.filter(
          (r) => r.version === 1 && reserved.has(r.guaranteeId.toLowerCase()),
        );
        expect(reservedV1.length).to.be.greaterThan(0);
        expect(stored!.netting.reservedV1Ids).to.deep.equal(
          reservedV1.map((r) => r.guaranteeId.toLowerCase()).sort(),
        );
        for (const r of reservedV1)
          expect(stored!.args.nettedV2Ids).to.not.include(r.guaranteeId.toLowerCase());
      });
    }
  });
}

/** The guarantees columns of the schema before the leaf hash (SQLite migration 9, PostgreSQL 6). */
const LEGACY_COLUMNS =
  "guarantee_id, version, user_address, recipient_address, req_id, amount, asset_address, timestamp, policy, " +
  "scheme, signature, certificate_claims, certificate_signature, state, created_at, updated_at";

/** A record as an operator of the previous schema stored it (addresses checksummed, id lower case). */
function legacyRow(record: GuaranteeRecord): unknown[] {
  return [
    record.guaranteeId.toLowerCase(),
    record.version,
    getAddress(record.user),
    getAddress(record.recipient),
    record.reqId.toString(),
    record.amount.toString(),
    getAddress(record.asset),
    record.timestamp,
    null,
    record.scheme,
    record.signature,
    record.certificateClaims,
    record.certificateSignature,
    record.state,
    record.createdAt,
    record.createdAt,
  ];
}

/**
 * A store of the previous schema with guarantees in it, opened by this operator (which migrates it):
 * the old guarantees have no leaf hash, the plan hashes their fields; new ones are hashed at issuance.
 */
interface LegacyBackend {
  name: string;
  /**
   * Creates the old-schema database holding `records` (those in `reserved` assigned to cycle 9, as the
   * reservation wrote `cycle_id` before key ranges), opens it with the current store.
   */
  openWith(
    records: readonly GuaranteeRecord[],
    reserved?: readonly string[],
  ): Promise<{ store: Store; remove(): Promise<void> }>;
}

/** The cycle id a legacy store's reservation assigned by `cycle_id`. */
const LEGACY_CYCLE = 9;

const LEGACY_BACKENDS: LegacyBackend[] = [
  {
    name: "SQLite",
    async openWith(records, reserved = []) {
      const dir = tempDir();
      const file = join(dir.path, "operator.sqlite");
      const db = new BetterSqlite3(file);
      try {
        db.pragma("journal_mode = WAL");
        migrate(
          db,
          MIGRATIONS.filter((m) => m.version <= 8),
        );
        const insert = db.prepare(
          `INSERT INTO guarantees (seq, ${LEGACY_COLUMNS}) VALUES (?, ${LEGACY_COLUMNS.split(",")
            .map(() => "?")
            .join(", ")})`,
        );
        db.transaction(() => records.forEach((record, i) => insert.run(i + 1, ...legacyRow(record))))();
        const assign = db.prepare(`UPDATE guarantees SET cycle_id = ${LEGACY_CYCLE} WHERE guarantee_id = ?`);
        for (const id of reserved) assign.run(id.toLowerCase());
      } finally {
        db.close();
      }
      const store = await SqliteStore.open(file);
      return { store, remove: async () => dir.remove() };
    },
  },
  {
    name: "PostgreSQL",
    async openWith(records, reserved = []) {
      const pg = await sharedTestPostgres();
      const name = `db_netting_legacy_${process.pid}_${Date.now()}`;
      const url = await pg.createDatabase(name);
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        await migratePostgres(
          client as unknown as PoolClient,
          MIGRATIONS.filter((m) => m.version <= 8),
        );
        for (const record of records) {
          const row = legacyRow(record);
          await client.query(
            `INSERT INTO guarantees (${LEGACY_COLUMNS}) VALUES (${row.map((_, i) => `$${i + 1}`).join(", ")})`,
            row,
          );
        }
        await client.query(
          `UPDATE guarantees SET cycle_id = ${LEGACY_CYCLE} WHERE guarantee_id = ANY($1::text[])`,
          [reserved.map((id) => id.toLowerCase())],
        );
      } finally {
        await client.end();
      }
      const store = await PostgresStore.open(url);
      return { store, remove: async () => pg.dropDatabase(name) };
    },
  },
];

for (const backend of LEGACY_BACKENDS) {
  describe(`leaf hashes of guarantees stored before the leaf_hash column (${backend.name})`, function () {
    this.timeout(120_000);

    it("the migrated store plans the same roots; old rows are hashed from their fields, new ones at issuance", async () => {
      const old = randomCycle(21, 150);
      const fresh = randomCycle(22, 150);
      const { store, remove } = await backend.openWith(old.records);
      try {
        for (const record of fresh.records) await store.guarantees.insertGuarantee(record);
        const both: RandomCycle = {
          records: [...old.records, ...fresh.records],
          payable: [...old.payable, ...fresh.payable],
        };
        expect(await store.netting.reservePayableGuarantees(4)).to.equal(both.payable.length);
        let unhashed = 0;
        let hashed = 0;
        await store.netting.scanCycleLeaves(4, (row: CycleLeafRow) =>
          row.leafHash === null ? unhashed++ : hashed++,
        );
        expect(unhashed).to.equal(old.payable.length);
        expect(hashed).to.equal(fresh.payable.length);
        await store.netting.releaseCycleGuarantees(4);
        await compareStored(store, both, 4);
      } finally {
        await store.close();
        await remove();
      }
    });

    it("a reservation made by cycle_id before key ranges stays out of the pool until released, then joins the next range", async () => {
      const old = randomCycle(23, 60);
      const reserved = old.payable.slice(0, 10).map((r) => r.guaranteeId);
      const { store, remove } = await backend.openWith(old.records, reserved);
      try {
        expect(await store.netting.reservePayableGuarantees(4)).to.equal(old.payable.length - 10);
        expect(await store.netting.hasUnreservedPayable()).to.equal(false);
        // A release of the old cycle id (what the scheduler does before planning it, or abandoning it).
        expect(await store.netting.releaseCycleGuarantees(LEGACY_CYCLE)).to.equal(10);
        expect((await store.guarantees.getClearingGuarantee(reserved[0]))?.cycleId).to.equal(null);
        expect(await store.netting.hasUnreservedPayable()).to.equal(true);
        expect(await store.netting.reservePayableGuarantees(5)).to.equal(10);
        expect(
          (await store.netting.listCycleGuaranteeIds(5)).map((id) => id.toLowerCase()).sort(),
        ).to.deep.equal(reserved.map((id) => id.toLowerCase()).sort());
      } finally {
        await store.close();
        await remove();
      }
    });
  });
}

describe("PostgreSQL: stored leaf hashes read in pages (one bytea per page)", function () {
  this.timeout(120_000);

  it("pages of 5 give every leaf once, old rows (no leaf hash) after them", async () => {
    const pg = await sharedTestPostgres();
    const name = `db_netting_pages_${process.pid}_${Date.now()}`;
    const url = await pg.createDatabase(name);
    const store = await PostgresStore.open(url);
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const cycle = randomCycle(31, 40);
      for (const record of cycle.records) await store.guarantees.insertGuarantee(record);
      // Three rows as stored before the leaf_hash column.
      const old = cycle.payable.slice(0, 3).map((r) => r.guaranteeId.toLowerCase());
      await client.query("UPDATE guarantees SET leaf_hash = NULL WHERE guarantee_id = ANY($1::text[])", [
        old,
      ]);
      expect(await store.netting.reservePayableGuarantees(5)).to.equal(cycle.payable.length);
      const whole: string[] = [];
      await store.netting.scanCycleLeaves(5, (row) =>
        whole.push(row.leafHash === null ? `old ${row.guaranteeId}` : row.leafHash.toString("hex")),
      );
      const conn = {
        query: (text: string, params?: readonly unknown[]) => client.query(text, params as unknown[]),
        savepoint: <T>(body: () => Promise<T>) => body(),
      };
      const paged: string[] = [];
      await client.query("BEGIN");
      const pgConn = conn as unknown as PgConn;
      const sql = postgresEngine(pgConn);
      const netting = new CycleNetting(sql, postgresPayableKeys(pgConn, sql), new PgCycleScanner(pgConn, 5));
      const scanned = await netting.scanCycleLeaves(5, (row) =>
        paged.push(row.leafHash === null ? `old ${row.guaranteeId}` : row.leafHash.toString("hex")),
      );
      await client.query("COMMIT");
      expect(scanned).to.equal(cycle.payable.length);
      expect(new Set(paged).size).to.equal(cycle.payable.length);
      expect([...paged].sort()).to.deep.equal([...whole].sort());
      expect(paged.filter((h) => h.startsWith("old "))).to.have.length(3);
      await store.netting.releaseCycleGuarantees(5);
      await compareStored(store, cycle, 5);
    } finally {
      await client.end();
      await store.close();
      await pg.dropDatabase(name);
    }
  });
});

after(async function () {
  this.timeout(60_000);
  await stopTestPostgresBackend();
});
