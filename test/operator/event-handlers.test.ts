import { expect } from "chai";
import { getAddress, type Log, ZeroHash } from "ethers";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { clearingHouseInterface, vaultInterface } from "../../operator/chain/abi";
import { eventHandlers, HANDLER_MODULES } from "../../operator/chain/events";
import { type ApplyContext, EventHandlers } from "../../operator/chain/handlers";
import type { JournaledTx } from "../../operator/chain/journal";
import { EventDecoder, jsonArgs } from "../../operator/chain/typed-events";
import { GuaranteeTransitions } from "../../operator/guarantees/transitions";
import { silentLogger } from "../../operator/logger";

const VAULT = getAddress("0x" + "11".repeat(20));
const CLEARING_HOUSE = getAddress("0x" + "22".repeat(20));
const REGISTRY = getAddress("0x" + "33".repeat(20));
const USER = getAddress("0x" + "aa".repeat(20));
const ASSET = getAddress("0x" + "bb".repeat(20));

/** Logs the journal reads back and that change nothing on their own (docs/operator-async.md). */
const JOURNALED_ONLY = [
  "Vault.GuaranteeNetted",
  "ClearingHouse.CycleAssetCommitted",
  "ClearingHouse.NetDebitRecorded",
];

function logOf(address: string, encoded: { data: string; topics: string[] }, index = 0): Log {
  return {
    address,
    topics: encoded.topics,
    data: encoded.data,
    transactionHash: "0x" + "AB".repeat(32),
    index,
    blockNumber: 7,
    blockHash: "0x" + "CD".repeat(32),
    removed: false,
  } as unknown as Log;
}

describe("chain event handlers (operator/chain/events.ts, typed-events.ts)", () => {
  const decoder = new EventDecoder({
    vault: VAULT,
    clearingHouse: CLEARING_HOUSE,
    validationRegistry: REGISTRY,
  });

  it("decodes a log through the typechain interface into its typed member and its journal form", () => {
    const encoded = vaultInterface.encodeEventLog("Deposited", [USER, ASSET, 5n, 9n]);
    const event = decoder.decode(logOf(VAULT.toLowerCase(), encoded, 3), 1_000);
    expect(event).to.not.equal(null);
    expect(event!.key).to.equal("Vault.Deposited");
    if (event!.key !== "Vault.Deposited") return;
    // Narrowed on the key: the arguments are typechain's (address as checksummed string, uint256 bigint).
    const amount: bigint = event!.args.amount;
    expect(amount).to.equal(5n);
    expect(event!.args.user).to.equal(USER);
    expect(event).to.include({ contract: "Vault", name: "Deposited", logIndex: 3, blockTimestamp: 1_000 });
    expect(event!.txHash).to.equal("0x" + "ab".repeat(32));
    expect(jsonArgs(event!.plainArgs)).to.deep.equal({ user: USER, asset: ASSET, amount: "5", balance: "9" });
  });

  it("keeps a struct argument's names in the journal form (TimingsUpdated)", () => {
    const timings = {
      cycleLength: 60n,
      commitDelay: 5n,
      challengeWindow: 30n,
      paymentWindow: 40n,
      defaultWindow: 50n,
      withdrawalGracePeriod: 600n,
      confirmationLag: 2n,
    };
    const encoded = vaultInterface.encodeEventLog("TimingsUpdated", [timings]);
    const event = decoder.decode(logOf(VAULT, encoded), 1);
    expect(event?.key).to.equal("Vault.TimingsUpdated");
    if (event?.key !== "Vault.TimingsUpdated") return;
    expect(event.args.timings.withdrawalGracePeriod).to.equal(600n);
    expect(jsonArgs(event.plainArgs)).to.deep.equal({
      timings: Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, v.toString()])),
    });
  });

  it("skips, without a trace, a log of another address or one its contract does not declare", () => {
    const encoded = vaultInterface.encodeEventLog("Deposited", [USER, ASSET, 5n, 9n]);
    expect(decoder.decode(logOf(getAddress("0x" + "44".repeat(20)), encoded), 1)).to.equal(null);
    expect(decoder.decode(logOf(VAULT, { data: "0x", topics: [ZeroHash] }), 1)).to.equal(null);
    // A ClearingHouse event emitted at the Vault's address is not one of the Vault's.
    const foreign = clearingHouseInterface.encodeEventLog("CycleFinalized", [1n]);
    expect(decoder.decode(logOf(VAULT, foreign), 1)).to.equal(null);
  });

  it("registers each event's handler once, in its domain's module", () => {
    const handlers = eventHandlers();
    const keys = handlers.keys();
    expect(new Set(keys).size).to.equal(keys.length);
    expect(keys.length).to.be.at.least(25);
    expect(() => eventHandlers([...HANDLER_MODULES, HANDLER_MODULES[0]])).to.throw(/has a handler already/);
  });

  it("applies nothing for an event no module handles (it is still journaled by the indexer)", async () => {
    const encoded = vaultInterface.encodeEventLog("GuaranteeNetted", [ZeroHash]);
    const event = decoder.decode(logOf(VAULT, encoded), 1)!;
    const j = new Proxy(
      {},
      {
        get() {
          throw new Error("an unhandled event touched the store");
        },
      },
    ) as JournaledTx;
    const logger = silentLogger();
    const context: ApplyContext = { logger, transitions: new GuaranteeTransitions({ logger }) };
    await eventHandlers().apply(j, event, context);
    await new EventHandlers().apply(j, event, context);
  });

  it("has a row in docs/operator-async.md 'Event → state' for every handled event, and a handler for every row", () => {
    const doc = readFileSync(join(__dirname, "../../docs/operator-async.md"), "utf8");
    const section = doc.slice(doc.indexOf("### Event → state"), doc.indexOf("## Clearing scheduler"));
    const rows = new Set(
      [...section.matchAll(/^\| `((?:Vault|ClearingHouse|ValidationRegistry)\.\w+)\(/gm)].map((m) => m[1]),
    );
    for (const m of section.matchAll(/`(ClearingHouse\.\w+)\([^`]*\)`, `(ClearingHouse\.\w+)\(/g)) {
      rows.add(m[1]).add(m[2]);
    }
    const handled = eventHandlers().keys();
    for (const key of handled) expect(rows, `row for ${key}`).to.include(key);
    for (const key of rows) {
      if (JOURNALED_ONLY.includes(key)) continue;
      expect(handled, `handler for ${key}`).to.include(key);
    }
  });
});
