/**
 * Core follows the Vault's timelocked timings (docs/operator-async.md, "Event → state"): a scheduled change
 * (`TimingsScheduled`) changes nothing in Core but is logged as an error for the operator, while the admin
 * can still cancel it; the executed change (`TimingsUpdated`, a second `setTimings` after the delay) becomes
 * Core's timings (V2 deadline cap, public params). Real chain, real SQLite store, real indexer.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { Writable } from "node:stream";
import pino from "pino";
import { ChainIndexer } from "../../operator/chain/indexer";
import { ProtocolTimings } from "../../operator/chain/timings";
import { timingsOperation } from "../contracts/helpers";
import { chainFixture, type CoreHarness, openCore, provider } from "./indexer-fixtures";

describe("Core follows the Vault's timelocked timings", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("a scheduled change is logged as an error and changes nothing; the executed one becomes Core's timings", async function () {
    const f = await loadFixture(chainFixture);
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: "info" }, sink);
    h = await openCore(f, { logger });
    const timings = new ProtocolTimings();
    const loaded = await timings.load(provider, f.vaultAddress);
    const indexer = new ChainIndexer({
      store: h.store,
      provider,
      deployment: f.deployment,
      clock: h.clock,
      logger,
      confirmations: 0,
      maxBlocksPerTick: 1_000,
      onTimings: (t) => timings.set(t),
    });
    await indexer.syncToHead();

    // A thief with CONFIG_ROLE shrinks the challenge window to one second: scheduled only.
    const shorter = { ...loaded, challengeWindow: 1 };
    const receipt = await (await f.vault.connect(f.admin).setTimings(shorter)).wait();
    const readyAt = (await time.latest()) + Number(await f.vault.timelockDelay());
    await indexer.syncToHead();
    expect(timings.get()).to.deep.equal(loaded);
    const alerts = lines.filter((l) => l.event === "timings_scheduled");
    expect(alerts).to.have.length(1);
    expect(alerts[0]).to.deep.include({
      level: 50,
      operation: timingsOperation(shorter),
      ready_at: readyAt,
      timings: shorter,
      tx_hash: receipt!.hash.toLowerCase(),
    });

    // The delay passes and the change executes: Core takes it over from the event.
    await time.increaseTo(readyAt);
    await (await f.vault.connect(f.admin).setTimings(shorter)).wait();
    await indexer.syncToHead();
    expect(timings.get()).to.deep.equal(shorter);
    expect(lines.filter((l) => l.event === "timings_scheduled")).to.have.length(1);
  });
});
