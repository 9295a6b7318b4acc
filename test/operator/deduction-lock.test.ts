/**
 * Core's books follow a removal's deduction (audit M-2; docs/clearing.md "Deductions are recovered"): the
 * ClearingHouse locks what a recipient owes back on its Vault collateral at the removal (`CreditDeducted`)
 * and lifts the lock when its claim returns it or `recoverDeduction` settles it (`DeductionRecovered`); what
 * leaves the Vault is `Vault.DefaultCovered`'s, as for a covered debt. Applied to a real SQLite store.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { Wallet, ZeroAddress } from "ethers";
import { applyEvent, type ChainEvent } from "../../operator/chain/events";
import { JournaledTx } from "../../operator/chain/journal";
import { silentLogger } from "../../operator/logger";
import { SqliteStore } from "../../operator/store";

const ETH = ZeroAddress;
const SELLER = Wallet.createRandom().address;

describe("Core's books follow a removal's deduction (audit M-2)", () => {
  let dir: string;
  let store: SqliteStore;
  let logIndex = 0;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "surety-deduction-"));
    store = SqliteStore.open(join(dir, "core.db"));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function apply(contract: "ClearingHouse" | "Vault", name: string, args: ChainEvent["args"]) {
    const event: ChainEvent = {
      contract,
      name,
      args,
      txHash: "0x" + "11".repeat(32),
      logIndex: logIndex++,
      blockNumber: 1,
      blockHash: "0x" + "22".repeat(32),
      blockTimestamp: 1_700_000_000,
    };
    await store.transaction((tx) =>
      applyEvent(new JournaledTx(tx, 1_700_000_000), event, { logger: silentLogger() }),
    );
  }
  const locked = async () => (await store.getCollateral(SELLER, ETH)).locked;

  it("locks at the removal and unlocks as the claim returns it and the rest is recovered", async () => {
    await apply("ClearingHouse", "CreditDeducted", {
      cycleId: 1n,
      asset: ETH,
      recipient: SELLER,
      guaranteeId: "0x" + "33".repeat(32),
      amount: 5n,
    });
    expect(await locked()).to.equal(5n);
    // Its claim returned 3 (a credit of 3), recoverDeduction the other 2.
    await apply("ClearingHouse", "DeductionRecovered", {
      cycleId: 1n,
      asset: ETH,
      recipient: SELLER,
      amount: 3n,
      fromCollateral: 0n,
    });
    expect(await locked()).to.equal(2n);
    await apply("ClearingHouse", "DeductionRecovered", {
      cycleId: 1n,
      asset: ETH,
      recipient: SELLER,
      amount: 2n,
      fromCollateral: 2n,
    });
    expect(await locked()).to.equal(0n);
  });
});
