/**
 * The clearing cycle keeps its cadence under steady issuance (issue 26, item 1; docs/clearing.md "Cadence and
 * the commit deadline"), on both store engines: the real contracts on the in-process Hardhat chain, Core's
 * scheduler and indexer driven by `tick()`, chain time moved with the network helpers (no real waits).
 *
 * Each step issues guarantees, and one more DURING every planning (between the scheduler's reservation and
 * its decision: what made every cycle "partial" and pushed the schedule before), then moves the chain a
 * quarter cycle on. Checked over ≥ 6 cycles: every guarantee committed within cycleLength + commitDelay +
 * confirmationLag + one block of its acknowledgement (chain time), `seconds_to_cutoff` of
 * `GET /core/clearing/schedule` never above one cycle length, the cutoffs one cycle length apart; with a
 * small `maxGuaranteesPerCycle` the cycles are split and still meet the deadline; and the deadline gate
 * refuses issuance (`commit_deadline_at_risk`) once more guarantees wait than the commits after the next
 * cutoff can take in time, and admits again once they are committed.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther } from "ethers";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { createCoreApp } from "../../operator/api";
import { OperatorSender } from "../../operator/chain/sender";
import { ClearingScheduler } from "../../operator/clearing/scheduler";
import { IssuanceError } from "../../operator/guarantees/issuance";
import { silentLogger } from "../../operator/logger";
import type { Store } from "../../operator/store";
import { sharedTestPostgres, stopTestPostgresBackend } from "../store/backends";
import {
  chainFixture,
  type CoreHarness,
  issueGuarantee,
  OPERATOR_KEY,
  openCore,
  provider,
} from "./indexer-fixtures";
import { PostgresStore } from "../../operator/store";

const ENGINES: { name: string; open: () => Promise<Store | undefined> }[] = [
  { name: "SQLite", open: async () => undefined },
  {
    name: "PostgreSQL",
    open: async () => {
      const pg = await sharedTestPostgres();
      const url = await pg.createDatabase(`cadence_${process.pid}_${++databases}`);
      return PostgresStore.open(url, { poolSize: 4 });
    },
  },
];
let databases = 0;

describe("clearing cadence under steady issuance (issue 26)", function () {
  this.timeout(300_000);
  let h: CoreHarness | undefined;
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await new Promise((resolve) => server!.close(resolve));
    server = undefined;
    await h?.close();
    h = undefined;
  });
  after(async () => {
    await stopTestPostgresBackend();
  });

  /** Core with its scheduler (the context's deadline gate), the schedule served over HTTP. */
  async function setup(engine: (typeof ENGINES)[number], maxGuaranteesPerCycle?: number) {
    const f = await loadFixture(chainFixture);
    h = await openCore(f, { store: await engine.open() });
    const core = h;
    await f.vault.connect(f.alice).deposit({ value: parseEther("100") });
    await f.vault.connect(f.bob).deposit({ value: parseEther("100") });
    await core.indexer.syncToHead();
    await core.syncClock();
    const { commitDelay, confirmationLag, cycleLength } = f.timings;
    // Issues one guarantee right after each reservation: "issued during planning".
    let duringPlanning: Promise<unknown> | null = null;
    const hook = { enabled: true };
    const acks = new Map<string, number>();
    const issue = async (payer = f.alice, recipient = f.carol.address) => {
      const ack = await time.latest();
      const { id } = await issueGuarantee(core, payer, recipient, 1_000n);
      acks.set(id.toLowerCase(), ack);
      return id;
    };
    const store = new Proxy(core.store, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== "reservePayableGuarantees" || typeof value !== "function") return value;
        return async (...args: unknown[]) => {
          const reserved = (await (value as (...a: unknown[]) => Promise<number>).apply(
            target,
            args,
          )) as number;
          if (hook.enabled) {
            duringPlanning = issue(f.bob, f.dave.address);
            await duringPlanning;
          }
          return reserved;
        };
      },
    }) as Store;
    const logger = silentLogger();
    const scheduler = new ClearingScheduler({
      store,
      provider,
      sender: new OperatorSender({
        privateKey: OPERATOR_KEY,
        provider,
        chainId: 31337n,
        store: core.store,
        logger,
      }),
      deployment: f.deployment,
      chainClock: core.chainClock,
      logger,
      cycleLengthSeconds: cycleLength,
      gasBudget: null,
      maxGuaranteesPerCycle,
      deadlineGate: core.context.commitDeadline,
      commitBudgetSeconds: () => commitDelay + confirmationLag,
    });
    const { app } = createCoreApp({ ...core.context, logger });
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server!.once("listening", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const secondsToCutoff = async () => {
      const body = (await (await fetch(`${base}/core/clearing/schedule`)).json()) as {
        seconds_to_cutoff: number | null;
      };
      return body.seconds_to_cutoff;
    };
    /** Ticks the scheduler (and indexes) until it waits for the next cutoff; answers the actions. */
    const settle = async () => {
      const actions: string[] = [];
      for (let i = 0; i < 100; i++) {
        const result = await scheduler.tick();
        await core.indexer.syncToHead();
        actions.push(result.action);
        if (result.action === "waiting" || result.action === "empty") return actions;
      }
      throw new Error(`scheduler never settled: ${actions.join(", ")}`);
    };
    return { f, core, scheduler, issue, acks, secondsToCutoff, settle, hook };
  }

  /** Moves chain time (one block) and Core's clocks on, and indexes it. */
  async function step(core: CoreHarness, seconds: number) {
    await time.increase(seconds);
    await core.syncClock();
    await core.indexer.syncToHead();
  }

  /** Every acknowledged guarantee's commit block time minus its acknowledgement (chain seconds). */
  async function ackToCommit(core: CoreHarness, acks: Map<string, number>) {
    const out: number[] = [];
    for (const [id, ack] of acks) {
      const g = await core.store.guarantees.getClearingGuarantee(id);
      expect(g?.cycleId, `${id} committed`).to.be.a("number");
      const cycle = await core.store.cycles.getCycle(g!.cycleId!);
      expect(cycle?.committedAt, `cycle ${g!.cycleId} committed`).to.be.a("number");
      out.push(cycle!.committedAt! - ack);
    }
    return out;
  }

  for (const engine of ENGINES) {
    describe(engine.name, () => {
      for (const split of [false, true]) {
        it(
          split
            ? "a cycle cut by a small maxGuaranteesPerCycle is committed in several commits under its own cutoff, in time"
            : "steady issuance over 7 cycles: one commit per cutoff, the grid never moves, every guarantee in time",
          async () => {
            const s = await setup(engine, split ? 3 : undefined);
            const { f, core } = s;
            const { cycleLength: L, commitDelay, confirmationLag } = f.timings;
            await s.settle(); // first cutoff: one cycle length from now
            const cutoffs: number[] = [];
            let maxToCutoff = 0;
            const quarter = L / 4;
            for (let i = 0; i < 7 * 4; i++) {
              await s.issue();
              await s.issue(f.alice, f.dave.address);
              await step(core, quarter);
              await s.settle();
              const toCutoff = await s.secondsToCutoff();
              expect(toCutoff, "seconds_to_cutoff").to.be.a("number");
              maxToCutoff = Math.max(maxToCutoff, toCutoff!);
              expect(toCutoff!, `seconds_to_cutoff at step ${i}`).to.be.at.most(L);
              expect(core.context.commitDeadline.status().state, `deadline gate at step ${i}`).to.equal("ok");
            }
            // The last ones: one more cutoff commits them.
            await step(core, L);
            await s.settle();
            s.hook.enabled = false; // the guarantee issued during that planning is the last one
            await step(core, L);
            await s.settle();

            const cycles = [];
            for (let id = 1; ; id++) {
              const cycle = await core.store.cycles.getCycle(id);
              if (!cycle) break;
              cycles.push(cycle);
              if (!cutoffs.includes(cycle.cutoff)) cutoffs.push(cycle.cutoff);
            }
            expect(cutoffs.length, "cutoffs").to.be.at.least(7);
            // The grid: cutoffs one cycle length apart (every window had guarantees).
            for (let i = 1; i < cutoffs.length; i++) expect(cutoffs[i] - cutoffs[i - 1]).to.equal(L);
            if (split) {
              expect(cycles.length, "split commits").to.be.above(cutoffs.length);
            } else {
              expect(cycles.length, "one commit per cutoff").to.equal(cutoffs.length);
            }
            const bound = L + commitDelay + confirmationLag + 1;
            const lags = await ackToCommit(core, s.acks);
            expect(lags.length).to.be.at.least(7 * 4 * 2);
            expect(Math.max(...lags), `ack → commit (bound ${bound} s)`).to.be.at.most(bound);
            expect(maxToCutoff).to.be.at.most(L);
            // Every commit by its cutoff + commitDelay + confirmationLag.
            for (const cycle of cycles) {
              expect(cycle.committedAt! - cycle.cutoff, `cycle ${cycle.cycleId}`).to.be.at.most(
                commitDelay + confirmationLag,
              );
            }
          },
        );
      }

      it("refuses issuance (commit_deadline_at_risk) while more wait than the commits after the cutoff take in time", async () => {
        const s = await setup(engine, 1);
        s.hook.enabled = false;
        const { f, core } = s;
        const { cycleLength: L, commitDelay, confirmationLag } = f.timings;
        await s.settle();
        // One guarantee per commit, one commit ≈ 1 s: (commitDelay + lag) / 1 − 1 commits after a cutoff.
        const capacity = commitDelay + confirmationLag - 1;
        for (let i = 0; i < capacity; i++) await s.issue();
        await step(core, 1);
        await s.settle();
        expect(core.context.commitDeadline.status()).to.include({ state: "at_risk", capacity });
        const refused = await s.issue().catch((error: unknown) => error);
        expect(refused).to.be.instanceOf(IssuanceError);
        expect((refused as IssuanceError).code).to.equal("commit_deadline_at_risk");
        // The cutoff (chain time reaches it exactly) commits them, one per commit, within the deadline.
        await step(core, L - 1);
        await s.settle();
        expect(core.context.commitDeadline.status().state).to.equal("ok");
        await s.issue();
        const lags = await ackToCommit(core, new Map([...s.acks].slice(0, capacity)));
        expect(Math.max(...lags)).to.be.at.most(L + commitDelay + confirmationLag + 1);
      });
    });
  }
});
