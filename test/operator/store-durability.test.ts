/**
 * Durable commits off the event loop (operator/store/sqlite-durability.ts):
 * the store answers an operation only once every commit up to its end has
 * been fsynced, shares one fsync among commits that wait together, fails
 * the waiting operations when fsync fails, and checkpoints the WAL on a
 * worker so it does not grow. The fsync is injected so the test decides
 * when it completes.
 */
import { expect } from "chai";
import { statSync } from "node:fs";
import { join } from "node:path";
import { type FsyncFn, WalSync } from "../../operator/store/sqlite-durability";
import { SqliteStore } from "../../operator/store";
import { T0, tempDir } from "./helpers";

const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const ASSET = "0x0000000000000000000000000000000000000000";

/** An fsync whose calls wait until the test completes them (or fails them). */
class HeldFsync {
  readonly calls: { fd: number; done: (error: NodeJS.ErrnoException | null) => void }[] = [];
  readonly fn: FsyncFn = (fd, done) => {
    this.calls.push({ fd, done });
  };
  /** Completes every call made so far, and the ones they start, until none is waiting. */
  async releaseAll(error: NodeJS.ErrnoException | null = null): Promise<void> {
    await settleTicks();
    for (let rounds = 0; rounds < 10 && this.calls.length > 0; rounds++) {
      for (const call of this.calls.splice(0)) call.done(error);
      await settleTicks();
    }
  }
}

/** Lets promise continuations and immediates run. */
async function settleTicks(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** "settled" if `promise` has settled once pending work has run, "pending" otherwise. */
async function state(promise: Promise<unknown>): Promise<"settled" | "pending"> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await settleTicks();
  return settled ? "settled" : "pending";
}

describe("store durability: fsync off the event loop", function () {
  let dir: ReturnType<typeof tempDir>;
  let fsync: HeldFsync;
  let store: SqliteStore;

  beforeEach(function () {
    dir = tempDir();
    fsync = new HeldFsync();
    store = SqliteStore.open(join(dir.path, "core.sqlite"), { fsync: fsync.fn });
  });

  afterEach(async function () {
    await fsync.releaseAll();
    await store.close();
    dir.remove();
  });

  it("resolves a write only after its commit is fsynced, and a read after it too", async function () {
    const write = store.collateral.creditDeposit(USER, ASSET, 10n, T0);
    expect(await state(write)).to.equal("pending");
    // Committed but not yet durable: a read is not answered from it either.
    const read = store.collateral.getCollateral(USER, ASSET);
    expect(await state(read)).to.equal("pending");
    expect(fsync.calls.length).to.be.greaterThan(0);
    await fsync.releaseAll();
    expect(await state(write)).to.equal("settled");
    expect((await read).deposited).to.equal(10n);
  });

  it("does not fsync for reads when nothing is waiting to be durable", async function () {
    const write = store.collateral.creditDeposit(USER, ASSET, 10n, T0);
    await fsync.releaseAll();
    await write;
    const read = store.collateral.getCollateral(USER, ASSET);
    expect(await state(read)).to.equal("settled");
    expect(fsync.calls).to.have.length(0);
  });

  it("shares one fsync among the commits that wait together (group commit)", async function () {
    const first = store.collateral.creditDeposit(USER, ASSET, 1n, T0);
    await settleTicks();
    const before = fsync.calls.length; // the directory's first sync, then the WAL's
    const writes = Array.from({ length: 20 }, () => store.collateral.creditDeposit(USER, ASSET, 1n, T0));
    await settleTicks();
    expect(fsync.calls.length).to.equal(before);
    await fsync.releaseAll();
    await Promise.all([first, ...writes]);
    expect((await store.collateral.getCollateral(USER, ASSET)).deposited).to.equal(21n);
  });

  it("fails the waiting operations when fsync fails, and syncs again on the next commit", async function () {
    let caught: unknown;
    const write = store.collateral.creditDeposit(USER, ASSET, 10n, T0).catch((e: unknown) => (caught = e));
    const error = Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
    await fsync.releaseAll(error);
    await write;
    expect(caught).to.equal(error);
    const next = store.collateral.creditDeposit(USER, ASSET, 5n, T0);
    await settleTicks();
    await fsync.releaseAll();
    await next;
    expect((await store.collateral.getCollateral(USER, ASSET)).deposited).to.equal(15n);
  });

  it("close() waits for the last commit's fsync", async function () {
    const write = store.collateral.creditDeposit(USER, ASSET, 10n, T0);
    await settleTicks();
    const closing = store.close();
    expect(await state(closing)).to.equal("pending");
    await fsync.releaseAll();
    await Promise.all([write, closing]);
    const reopened = SqliteStore.open(join(dir.path, "core.sqlite"));
    try {
      expect((await reopened.collateral.getCollateral(USER, ASSET)).deposited).to.equal(10n);
    } finally {
      await reopened.close();
    }
  });
});

describe("store durability: WalSync", function () {
  it("fails a round whose files cannot be opened, and does not stay stuck for the next one", async function () {
    const dir = tempDir();
    try {
      const wal = new WalSync(join(dir.path, "missing", "core.sqlite-wal"));
      for (let round = 0; round < 2; round++) {
        wal.noteCommit();
        let caught: unknown;
        await wal.whenDurable().catch((error: unknown) => (caught = error));
        expect((caught as NodeJS.ErrnoException).code).to.equal("ENOENT");
      }
    } finally {
      dir.remove();
    }
  });
});

describe("store durability: WAL checkpoints on a worker", function () {
  it("copies the WAL into the database, so that the WAL is reused instead of growing", async function () {
    const dir = tempDir();
    const file = join(dir.path, "core.sqlite");
    const store = SqliteStore.open(file);
    try {
      const burst = async (from: number) => {
        for (let i = from; i < from + 300; i++) {
          await store.collateral.creditDeposit("0x" + i.toString(16).padStart(40, "0"), ASSET, 1n, T0);
        }
      };
      await burst(1);
      const first = await store.checkpoint();
      expect(first!.log).to.be.greaterThan(0);
      expect(first!.checkpointed).to.equal(first!.log);
      const walSize = statSync(`${file}-wal`).size;
      await burst(1_000);
      await store.checkpoint();
      // The second burst wrote about as much again from the start of the WAL. Without the checkpoint the
      // file would hold both bursts (≈ 2 × walSize); reused, it stays near one burst. Not `≤ walSize`: the
      // second burst lands in a larger B-tree (a few more pages split) and SQLite's autocheckpoint may
      // restart the WAL mid-burst depending on timing, so its extent varies by some pages run to run.
      expect(statSync(`${file}-wal`).size).to.be.below(walSize * 1.5);
    } finally {
      await store.close();
      dir.remove();
    }
  });

  it("an in-memory store has nothing to sync or checkpoint", async function () {
    const store = SqliteStore.open(":memory:");
    await store.collateral.creditDeposit(USER, ASSET, 1n, T0);
    expect(await store.checkpoint()).to.equal(null);
    await store.close();
  });
});
