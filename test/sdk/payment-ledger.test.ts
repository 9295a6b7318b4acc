/**
 * The seller's payment ledgers (sdk/kits/x402-scheme/ledger.ts, sqlite-ledger.ts): the same state
 * machine in memory and in a SQLite file, the file surviving a reopen (a seller restart) and shared by
 * two connections (two seller processes on one host). Clocks are numbers passed in; nothing waits.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import {
  DEFAULT_SETTLE_LEASE_SECONDS,
  MemoryPaymentLedger,
  type PaymentLedger,
  paymentKey,
} from "../../sdk/kits/x402-scheme";
import { SqlitePaymentLedger } from "../../sdk/kits/x402-scheme/sqlite-ledger";

const NOW = 1_750_000_000;
const KEY = paymentKey("eip155:31337", "0xAbC0000000000000000000000000000000000001", 7n);
const EXPIRES = NOW + 3600;

describe("PaymentLedger (sdk/kits/x402-scheme)", function () {
  let dir: string;
  const open: SqlitePaymentLedger[] = [];

  before(function () {
    dir = mkdtempSync(join(tmpdir(), "surety-ledger-"));
  });
  after(function () {
    for (const ledger of open) ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function sqlite(name: string, options = {}): SqlitePaymentLedger {
    const ledger = new SqlitePaymentLedger(join(dir, name), options);
    open.push(ledger);
    return ledger;
  }

  const kinds: [string, (name: string) => PaymentLedger][] = [
    ["MemoryPaymentLedger", () => new MemoryPaymentLedger()],
    ["SqlitePaymentLedger", (name) => sqlite(name)],
  ];

  for (const [kind, make] of kinds) {
    describe(kind, function () {
      it("first settlement, in flight, refused (released), unknown outcome (retry), used", async function () {
        const ledger = make(`states-${kind}.db`);
        expect(await ledger.reserve(KEY, EXPIRES, NOW)).to.equal("reserved");
        expect(await ledger.reserve(KEY, EXPIRES, NOW)).to.equal("in_progress");
        await ledger.release(KEY);
        expect(await ledger.reserve(KEY, EXPIRES, NOW)).to.equal("reserved");
        await ledger.markAttempted(KEY);
        expect(await ledger.reserve(KEY, EXPIRES, NOW + 1)).to.equal("retry");
        expect(await ledger.reserve(KEY, EXPIRES, NOW + 1)).to.equal("in_progress");
        // A retry that is refused (4xx) forgets the payment: nothing was issued.
        await ledger.release(KEY);
        expect(await ledger.reserve(KEY, EXPIRES, NOW + 2)).to.equal("reserved");
        await ledger.markUsed(KEY);
        expect(await ledger.reserve(KEY, EXPIRES, NOW + 3)).to.equal("used");
        // release and markAttempted never undo a use.
        await ledger.release(KEY);
        await ledger.markAttempted(KEY);
        expect(await ledger.reserve(KEY, EXPIRES, NOW + 4)).to.equal("used");
        // Past its expiry the entry counts as absent (the facilitator refuses the timestamp by then).
        expect(await ledger.reserve(KEY, EXPIRES, EXPIRES)).to.equal("reserved");
      });

      it("a settlement in flight past the lease is taken over as the seller's retry", async function () {
        const ledger = make(`lease-${kind}.db`);
        expect(await ledger.reserve(KEY, EXPIRES, NOW)).to.equal("reserved");
        const lease = DEFAULT_SETTLE_LEASE_SECONDS;
        expect(await ledger.reserve(KEY, EXPIRES, NOW + lease - 1)).to.equal("in_progress");
        expect(await ledger.reserve(KEY, EXPIRES, NOW + lease)).to.equal("retry");
        expect(await ledger.reserve(KEY, EXPIRES, NOW + lease)).to.equal("in_progress");
      });
    });
  }

  describe("SqlitePaymentLedger", function () {
    it("survives a reopen: used stays used, attempted stays the seller's retry, in flight ages out", function () {
      const file = "restart.db";
      const used = paymentKey("eip155:31337", "0x00000000000000000000000000000000000000aa", 1n);
      const attempted = paymentKey("eip155:31337", "0x00000000000000000000000000000000000000aa", 2n);
      const crashed = paymentKey("eip155:31337", "0x00000000000000000000000000000000000000aa", 3n);
      const before = sqlite(file);
      expect(before.reserve(used, EXPIRES, NOW)).to.equal("reserved");
      before.markUsed(used);
      expect(before.reserve(attempted, EXPIRES, NOW)).to.equal("reserved");
      before.markAttempted(attempted);
      expect(before.reserve(crashed, EXPIRES, NOW)).to.equal("reserved");
      before.close();

      const after = sqlite(file);
      expect(after.size(NOW)).to.equal(3);
      expect(after.reserve(used, EXPIRES, NOW + 1)).to.equal("used");
      expect(after.reserve(attempted, EXPIRES, NOW + 1)).to.equal("retry");
      expect(after.reserve(crashed, EXPIRES, NOW + 1)).to.equal("in_progress");
      expect(after.reserve(crashed, EXPIRES, NOW + DEFAULT_SETTLE_LEASE_SECONDS)).to.equal("retry");
    });

    it("two connections on one file (two seller processes): one reservation, one view", function () {
      const a = sqlite("shared.db");
      const b = sqlite("shared.db");
      expect(a.reserve(KEY, EXPIRES, NOW)).to.equal("reserved");
      expect(b.reserve(KEY, EXPIRES, NOW)).to.equal("in_progress");
      a.markAttempted(KEY);
      expect(b.reserve(KEY, EXPIRES, NOW)).to.equal("retry");
      b.markUsed(KEY);
      expect(a.reserve(KEY, EXPIRES, NOW)).to.equal("used");
    });

    it("refuses bad options and bad times with a message naming them", function () {
      expect(() => new SqlitePaymentLedger(join(dir, "x.db"), { table: "a; DROP TABLE b" })).to.throw(
        /table: must be a SQL identifier/,
      );
      expect(() => new SqlitePaymentLedger(join(dir, "x.db"), { leaseSeconds: 0 })).to.throw(/leaseSeconds/);
      expect(() => new MemoryPaymentLedger({ leaseSeconds: 1.5 })).to.throw(/leaseSeconds/);
      const ledger = sqlite("times.db");
      expect(() => ledger.reserve(KEY, 1.5, NOW)).to.throw(/expiresAt/);
      expect(() => ledger.reserve(KEY, EXPIRES, -1)).to.throw(/nowSeconds/);
    });
  });
});
