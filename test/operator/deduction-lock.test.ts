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
import type { Log } from "ethers";
import { clearingHouseInterface } from "../../operator/chain/abi";
import { applyEvent, EventDecoder } from "../../operator/chain/events";
import { JournaledTx } from "../../operator/chain/journal";
import { GuaranteeTransitions } from "../../operator/guarantees/transitions";
import { silentLogger } from "../../operator/logger";
import { SqliteStore } from "../../operator/store";

const ETH = ZeroAddress;
const SELLER = Wallet.createRandom().address;
const CLEARING_HOUSE = Wallet.createRandom().address;
const decoder = new EventDecoder({
  vault: Wallet.createRandom().address,
  clearingHouse: CLEARING_HOUSE,
  validationRegistry: Wallet.createRandom().address,
});

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

  /** Applies a real ClearingHouse log (encoded and decoded through the typechain interface). */
  async function apply(name: string, args: Record<string, unknown>) {
    const encoded = clearingHouseInterface.encodeEventLog(name, Object.values(args));
    const log = {
      address: CLEARING_HOUSE,
      topics: encoded.topics,
      data: encoded.data,
      transactionHash: "0x" + "11".repeat(32),
      index: logIndex++,
      blockNumber: 1,
      blockHash: "0x" + "22".repeat(32),
      removed: false,
    } as unknown as Log;
    const event = decoder.decode(log, 1_700_000_000)!;
    const logger = silentLogger();
    await store.transaction((tx) =>
      applyEvent(new JournaledTx(tx, 1_700_000_000), event, {
        logger,
        transitions: new GuaranteeTransitions({ logger }),
      }),
    );
  }
  const locked = async () => (await store.collateral.getCollateral(SELLER, ETH)).locked;

  it("locks at the removal and unlocks as the claim returns it and the rest is recovered", async () => {
    await apply("CreditDeducted", {
      cycleId: 1n,
      asset: ETH,
      recipient: SELLER,
      guaranteeId: "0x" + "33".repeat(32),
      amount: 5n,
    });
    expect(await locked()).to.equal(5n);
    // Its claim returned 3 (a credit of 3), recoverDeduction the other 2.
    await apply("DeductionRecovered", {
      cycleId: 1n,
      asset: ETH,
      recipient: SELLER,
      amount: 3n,
      fromCollateral: 0n,
    });
    expect(await locked()).to.equal(2n);
    await apply("DeductionRecovered", {
      cycleId: 1n,
      asset: ETH,
      recipient: SELLER,
      amount: 2n,
      fromCollateral: 2n,
    });
    expect(await locked()).to.equal(0n);
  });
});
