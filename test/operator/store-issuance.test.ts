import { expect } from "chai";
import { join } from "node:path";
import { type GuaranteeRecord, SqliteStore } from "../../operator/store";
import { tempDir } from "./helpers";

const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const ASSET = "0x0000000000000000000000000000000000000000";
const T0 = 1_750_000_000;
const full = (b: { deposited: bigint; pendingWithdrawal: bigint }) => b.deposited - b.pendingWithdrawal;

function record(n: number, amount = 10n): GuaranteeRecord {
  return {
    guaranteeId: "0x" + n.toString(16).padStart(64, "0"),
    version: 1,
    user: USER,
    recipient: RECIPIENT,
    reqId: BigInt(n),
    amount,
    asset: ASSET,
    timestamp: T0,
    policy: null,
    scheme: "eip712",
    signature: "0x" + "11".repeat(65),
    certificateClaims: "0x1234",
    certificateSignature: "0x" + "22".repeat(96),
    state: "FINALIZED_PAYABLE",
    createdAt: T0,
  };
}

describe("store: batched issuance and collateral views", () => {
  let dir: ReturnType<typeof tempDir>;
  let store: SqliteStore;

  beforeEach(() => {
    dir = tempDir();
    store = SqliteStore.open(join(dir.path, "s.sqlite"));
  });
  afterEach(async () => {
    await store.close();
    dir.remove();
  });

  it("each item is atomic and independent; the batch never exceeds capacity", async () => {
    await store.collateral.creditDeposit(USER, ASSET, 25n, T0);
    await store.guarantees.insertGuarantee(record(9, 1n)); // pre-existing id
    const outcomes = await store.issuance.issueGuarantees(
      [record(1), record(2), record(9), record(3), record(1), record(4, 5n)].map((r) => ({
        record: r,
        capacity: full,
      })),
      T0,
    );
    expect(outcomes.map((o) => o.kind)).to.deep.equal([
      "issued",
      "issued",
      "duplicate",
      "insufficient_collateral",
      "duplicate",
      "issued",
    ]);
    expect((await store.collateral.getCollateral(USER, ASSET)).locked).to.equal(25n);
    expect(await store.guarantees.getGuarantee(record(3).guaranteeId)).to.equal(null);
  });

  it("an item that fails unexpectedly leaves no trace and does not affect the others", async () => {
    await store.collateral.creditDeposit(USER, ASSET, 100n, T0);
    const broken = { ...record(2), scheme: "nope" as "eip712" }; // violates the CHECK after its lock
    const outcomes = await store.issuance.issueGuarantees(
      [record(1), broken, record(3)].map((r) => ({ record: r, capacity: full })),
      T0,
    );
    expect(outcomes.map((o) => o.kind)).to.deep.equal(["issued", "failed", "issued"]);
    expect((await store.collateral.getCollateral(USER, ASSET)).locked).to.equal(20n);
    expect(await store.guarantees.getGuarantee(record(2).guaranteeId)).to.equal(null);
  });

  it("pending withdrawals, per-user listing and locked totals", async () => {
    await store.collateral.creditDeposit(USER, ASSET, 100n, T0);
    await store.collateral.creditDeposit(RECIPIENT, ASSET, 50n, T0);
    await store.collateral.setPendingWithdrawal(USER, ASSET, 60n, T0);
    const outcomes = await store.issuance.issueGuarantees([{ record: record(1, 41n), capacity: full }], T0);
    expect(outcomes[0].kind).to.equal("insufficient_collateral");
    await store.issuance.issueGuarantees([{ record: record(1, 40n), capacity: full }], T0);
    expect(await store.collateral.listCollateral(USER.toLowerCase())).to.deep.equal([
      { user: USER, asset: ASSET, deposited: 100n, locked: 40n, pendingWithdrawal: 60n },
    ]);
    expect(await store.collateral.lockedTotals()).to.deep.equal(new Map([[ASSET, 40n]]));
    let caught: unknown;
    await store.collateral.setPendingWithdrawal(USER, ASSET, -1n, T0).catch((error) => (caught = error));
    expect(caught).to.be.instanceOf(RangeError);
  });
});
