/**
 * Clearing scheduler (docs/protocol.md, "Clearing cycles"; docs/operator-async.md): closes a cycle every
 * `cycleLengthSeconds` of chain time (the indexed head's timestamp, operator/clock.ts ChainClock: the
 * commit budget `commitDelay` is part of the Vault's grace-period invariant, which withdrawals are
 * judged against by `block.timestamp`), reserves the payable pool's oldest keys for the next cycle id (one
 * key range, no write per guarantee: docs/clearing.md "Netting in the database") and nets them in the store
 * (planStoredCycle, db-netting.ts: SQL sums, streamed leaf hashes), stores the plan (tree dump, root,
 * arguments, guarantee ids) BEFORE sending, and commits it with the operator account. A reservation whose
 * plan is dropped or never stored is released. Each guarantee's `cycle_id` is written when the commit is
 * indexed (events.ts), with its state.
 *
 * Never two commits for one cycle: at most one cycle is outstanding (planned or sent, not yet seen on
 * chain); it is resolved first on every tick, against the ClearingHouse's `lastCycleId` (ids are
 * sequential on chain) and the stored signed transaction, followed through the operator sender (re-sent
 * as is when the node lost it; a fee replacement is stored here before it is broadcast).
 * A plan is abandoned only when its transaction provably failed (reverted, or its nonce was used by
 * another transaction); its guarantees then return to the pool and the same id is planned again.
 *
 * A V2 guarantee remunerated between cutoff and commit would be skipped by the commit (reported, not
 * reverted: contracts finding 6) while still counted in the payer's debit, so before each estimate the
 * plan's V2 ids are read with `Vault.consumptionOf`: a remunerated one is excluded and the cycle rebuilt. A plan
 * over the chain's bounds on one commit (`MAX_DEBTORS_PER_COMMIT` debtors, a V2 id counting half: audit A2-L3;
 * `MAX_ASSETS_PER_COMMIT` assets: audit3 A3-I1) is rebuilt with a range scaled to the bound (at most half as
 * long), and a plan whose estimate exceeds the
 * gas budget with half the guarantees (oldest first), until it fits; the rest are taken by the next tick at once.
 * Empty windows commit nothing (the cycle id is not used).
 *
 * Cadence (docs/clearing.md "Cadence and the commit deadline"): the cutoffs are a fixed grid,
 * `cycleLengthSeconds` apart, moved only when a whole cycle length was missed (Core down). A cycle is
 * split into several commits only when the size bound (`maxGuaranteesPerCycle`), the debtor bound or the gas budget cut it,
 * never because guarantees arrived during planning (those have later keys and belong to the next cutoff).
 * The rest of a cut cycle is committed under the same cutoff (`DRAINING_CUTOFF_KEY`, kept in the store
 * for a restart or the next leader) before the next cutoff is served, and the grid does not move. Every
 * tick also judges whether the commits owed land by cutoff + commitDelay + confirmationLag and whether the
 * guarantees waiting fit in the commits after the next cutoff ({@link CommitDeadlineGate}): if not,
 * issuance is refused before a commit can be late.
 *
 * Bond floor (bond-floor.ts): before estimating, the plan's totals are checked against the ClearingHouse's
 * `bondFloorBps` and `bondOf` (latest block). When the bond is short the commit is neither estimated nor sent
 * and the plan is not stored (its guarantees stay in the pool); every tick asks again, and the cycle is
 * committed on the first tick after the bond is topped up.
 */
import type { Clock } from "../clock";
import type { DeploymentInfo } from "../deployment";
import type { Logger } from "../logger";
import {
  CONSUMPTION,
  clearingHouseAt,
  clearingHouseInterface,
  commitErrorsInterface,
  vaultAt,
} from "../chain/abi";
import type { ChainProvider } from "../chain/provider";
import { CallRevertedError, type OperatorSender, type SignedTransaction } from "../chain/sender";
import type { CycleRecord, StoreAreas } from "../store";
import { systemClock } from "../clock";
import { CommitBondGate } from "./bond-floor";
import { CommitDeadlineGate, commitsPerCutoff, judgeCommitDeadline } from "./commit-deadline";
import {
  type CommitCycleArgs,
  MAX_ASSETS_PER_COMMIT,
  MAX_DEBTORS_PER_COMMIT,
  commitWeight,
  toCommitCycleCall,
} from "./commit-plan";
import { commitArgsToJson, cycleCommitArgs } from "./cycle-json";
import { planStoredCycle, type StoredCyclePlan } from "./db-netting";

/** operator_state key of the next cutoff (unix seconds). */
export const NEXT_CUTOFF_KEY = "clearing.next_cutoff";
/**
 * operator_state key of a cutoff whose cycle was cut by a bound and is still being committed (absent: none):
 * JSON `{cutoff, remaining}`, `remaining` the guarantees of that cutoff not yet planned (the oldest keys).
 */
export const DRAINING_CUTOFF_KEY = "clearing.draining_cutoff";
/** Bound of the pool count taken when a cutoff is first planned (an index walk). */
const POOL_COUNT_BOUND = 100_000_000;

/** A cutoff still being committed in several commits. */
interface Draining {
  cutoff: number;
  /** Its guarantees not yet planned: the oldest keys of the pool. */
  remaining: number;
}

function parseDraining(raw: string | null): Draining | null {
  if (raw === null || raw === "") return null;
  try {
    const value = JSON.parse(raw) as Partial<Draining>;
    if (Number.isSafeInteger(value.cutoff) && Number.isSafeInteger(value.remaining)) {
      return { cutoff: value.cutoff!, remaining: value.remaining! };
    }
  } catch {
    // unreadable: nothing is draining (the next cutoff takes the rest)
  }
  return null;
}
/** Commit durations the deadline estimate keeps (the longest of them is used). */
const COMMIT_SAMPLES = 8;
const EXCLUDED_CONSUMED = "remunerated on chain before its commit";
/**
 * Guarantees per cycle unless configured: the cap the store's list limit used to impose. Netting itself
 * scales past it (docs/clearing.md "Netting in the database"); what does not yet is the per-guarantee work
 * after the commit (the cycle record's id list, one state transition per guarantee in the indexer).
 */
export const DEFAULT_MAX_GUARANTEES_PER_CYCLE = 100_000;
/** Rebuild attempts per tick (each drops a consumed id or at least halves the cycle). */
const MAX_REBUILDS = 32;

export interface ClearingSchedulerOptions {
  store: StoreAreas<"cycles" | "guarantees" | "netting" | "operatorState" | "reserves">;
  provider: ChainProvider;
  sender: OperatorSender;
  deployment: Pick<DeploymentInfo, "clearingHouse" | "vault">;
  /** Chain time (the indexed head): cutoffs and the cycle's stamps. */
  chainClock: Clock;
  logger: Logger;
  cycleLengthSeconds: number;
  /** Largest gas one commit may use (null: no limit). */
  gasBudget: bigint | null;
  /** Upper bound of guarantees in one cycle (default {@link DEFAULT_MAX_GUARANTEES_PER_CYCLE}). */
  maxGuaranteesPerCycle?: number;
  /** Most debtors one commit records, a V2 id counting half (1..the chain's, the default {@link MAX_DEBTORS_PER_COMMIT}). */
  maxDebtorsPerCommit?: number;
  /** Most assets one commit lists (1..the chain's, the default {@link MAX_ASSETS_PER_COMMIT}). */
  maxAssetsPerCommit?: number;
  /** Where the bond-floor verdict is kept for health and metrics (default: a gate of its own). */
  bondGate?: CommitBondGate;
  /** Where the commit-deadline verdict is kept for issuance, health and metrics (default: a gate of its own). */
  deadlineGate?: CommitDeadlineGate;
  /**
   * `commitDelay + confirmationLag` of the Vault's timings now (seconds): every commit of a cycle lands by
   * its cutoff + this. Null or absent: the deadline is not judged (gate `off`).
   */
  commitBudgetSeconds?: () => number | null;
  /** Chain seconds a commit is assumed to take before one was observed (default 1: one block). */
  initialSecondsPerCommit?: number;
}

export type SchedulerTickResult =
  | { action: "waiting"; nextCutoff: number }
  | { action: "empty"; nextCutoff: number }
  | { action: "pending"; cycleId: number; txHash: string | null }
  | { action: "committed"; cycleId: number; txHash: string; guarantees: number }
  /** The operator bond is below the ClearingHouse's floor for this cycle: nothing sent, asked again next tick. */
  | { action: "bond_short"; cycleId: number }
  | { action: "abandoned"; cycleId: number; reason: string };

export class ClearingScheduler {
  private running: Promise<SchedulerTickResult> | null = null;
  /**
   * The cutoff of a cycle cut by the size or gas bound (or whose plan was abandoned) that still has
   * guarantees to commit: planned next, under that cutoff, without waiting. Undefined: not read yet.
   */
  private draining: Draining | null | undefined = undefined;
  /** Guarantees one commit took at the last plan (the size bound, or what the gas budget cut it to). */
  private perCommit: number;
  /**
   * Guarantees of the last plan when the debtor bound cut it (else null): the next plan starts from twice
   * that, not from the size bound, so a pool of many payers is not netted whole again for every commit
   * (each try nets its whole range: ≈ 0.8 s of CPU at 100,000).
   */
  private debtorCut: number | null = null;
  /** Most debtors one commit records (the chain's `MAX_DEBTORS_PER_COMMIT` unless lowered). */
  private readonly maxDebtors: number;
  /** Most assets one commit lists (the chain's `MAX_ASSETS_PER_COMMIT` unless lowered). */
  private readonly maxAssets: number;
  /** Chain seconds of the last commits, from the tick that planned each to the tick that saw it on chain. */
  private readonly commitSeconds: number[] = [];
  /** The commit being watched for its duration. */
  private watching: { cycleId: number; plannedAt: number } | null = null;
  /** The bond-floor check before every commit (bond-floor.ts). */
  readonly bondGate: CommitBondGate;
  /** Whether the commits owed land in time (commit-deadline.ts). */
  readonly deadlineGate: CommitDeadlineGate;

  constructor(private readonly options: ClearingSchedulerOptions) {
    if (!Number.isSafeInteger(options.cycleLengthSeconds) || options.cycleLengthSeconds < 1) {
      throw new RangeError("cycleLengthSeconds must be a positive integer");
    }
    this.bondGate = options.bondGate ?? new CommitBondGate({ logger: options.logger, clock: systemClock });
    this.bondGate.attach();
    this.deadlineGate =
      options.deadlineGate ?? new CommitDeadlineGate({ logger: options.logger, clock: systemClock });
    this.perCommit = this.maxPerCycle;
    const debtors = options.maxDebtorsPerCommit ?? MAX_DEBTORS_PER_COMMIT;
    if (!Number.isSafeInteger(debtors) || debtors < 1 || debtors > MAX_DEBTORS_PER_COMMIT) {
      throw new RangeError(`maxDebtorsPerCommit must be 1..${MAX_DEBTORS_PER_COMMIT}, got ${debtors}`);
    }
    this.maxDebtors = debtors;
    const assets = options.maxAssetsPerCommit ?? MAX_ASSETS_PER_COMMIT;
    if (!Number.isSafeInteger(assets) || assets < 1 || assets > MAX_ASSETS_PER_COMMIT) {
      throw new RangeError(`maxAssetsPerCommit must be 1..${MAX_ASSETS_PER_COMMIT}, got ${assets}`);
    }
    this.maxAssets = assets;
  }

  private get maxPerCycle(): number {
    return this.options.maxGuaranteesPerCycle ?? DEFAULT_MAX_GUARANTEES_PER_CYCLE;
  }

  tick(): Promise<SchedulerTickResult> {
    this.running ??= this.step()
      .then(async (result) => {
        await this.judgeDeadline();
        return result;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  /** Chain seconds one commit takes: the longest recent one (at least the initial estimate until one is seen). */
  secondsPerCommit(): number {
    const initial = Math.max(1, this.options.initialSecondsPerCommit ?? 1);
    return this.commitSeconds.length === 0 ? initial : Math.max(1, ...this.commitSeconds);
  }

  /**
   * Judges the commit deadline after the tick (commit-deadline.ts): the earliest owed cutoff (outstanding
   * plan, cut cycle still draining, cutoff passed with guarantees waiting) and the next cutoff's load.
   */
  private async judgeDeadline(): Promise<void> {
    const budget = this.options.commitBudgetSeconds?.() ?? null;
    if (budget === null) return;
    const { store, chainClock } = this.options;
    const now = chainClock.nowSeconds();
    const [latest, stored, draining] = await Promise.all([
      store.cycles.latestCycle(),
      store.operatorState.getOperatorState(NEXT_CUTOFF_KEY),
      this.drainingCutoff(),
    ]);
    const spc = this.secondsPerCommit();
    const perCommit = Math.max(1, this.perCommit);
    const capacity = commitsPerCutoff(budget, spc) * perCommit;
    const waiting = await store.netting.countUnreservedPayable(capacity + 1);
    const outstanding =
      latest !== null && (latest.state === "PLANNED" || latest.state === "SENT") ? latest : null;
    const nextCutoff = stored === null ? null : Number(stored);
    const owed: number[] = [];
    if (outstanding) owed.push(outstanding.cutoff);
    if (draining !== null) owed.push(draining.cutoff);
    if (nextCutoff !== null && nextCutoff <= now && waiting > 0) owed.push(nextCutoff);
    const owedCutoff = owed.length === 0 ? null : Math.min(...owed);
    // The outstanding commit, then the rest of a cut cycle, or a passed cutoff's whole pool.
    const owedGuarantees =
      draining !== null ? draining.remaining : nextCutoff !== null && nextCutoff <= now ? waiting : 0;
    const commitsOwed =
      owedCutoff === null ? 0 : (outstanding ? 1 : 0) + Math.ceil(owedGuarantees / perCommit);
    this.deadlineGate.record(
      judgeCommitDeadline({
        now,
        budgetSeconds: budget,
        owedCutoff,
        commitsOwed: Math.max(owedCutoff === null ? 0 : 1, commitsOwed),
        waiting,
        perCommit,
        secondsPerCommit: spc,
      }),
    );
  }

  /** The cut cycle still draining (memory, else the store: a restart or a new leader). */
  private async drainingCutoff(): Promise<Draining | null> {
    if (this.draining === undefined) {
      this.draining = parseDraining(
        await this.options.store.operatorState.getOperatorState(DRAINING_CUTOFF_KEY),
      );
    }
    return this.draining;
  }

  /** A commit seen on chain: its duration joins the estimate. */
  private observeCommitted(chainLast: number, now: number): void {
    if (this.watching === null || chainLast < this.watching.cycleId) return;
    this.commitSeconds.push(Math.max(1, now - this.watching.plannedAt));
    if (this.commitSeconds.length > COMMIT_SAMPLES) this.commitSeconds.shift();
    this.watching = null;
  }

  /** The ClearingHouse's last committed cycle id (latest block, not confirmed: only used to avoid duplicates). */
  async chainLastCycleId(): Promise<number> {
    const { provider, deployment } = this.options;
    return Number(await clearingHouseAt(deployment.clearingHouse, provider).lastCycleId());
  }

  private async step(): Promise<SchedulerTickResult> {
    const { store, chainClock } = this.options;
    const chainLast = await this.chainLastCycleId();
    this.observeCommitted(chainLast, chainClock.nowSeconds());
    const latest = await store.cycles.latestCycle();
    if (latest && (latest.state === "PLANNED" || latest.state === "SENT") && latest.cycleId > chainLast) {
      const outcome = await this.resolveOutstanding(latest);
      if (outcome) return outcome;
    }

    const now = chainClock.nowSeconds();
    const nextCutoff = await this.nextCutoff(now);
    const draining = await this.drainingCutoff();
    if (now < nextCutoff && draining === null) return { action: "waiting", nextCutoff };
    // The rest of a cut cycle first, under its own cutoff; the grid (NEXT_CUTOFF_KEY) is not touched.
    const cutoff = draining?.cutoff ?? nextCutoff;
    // What this cutoff owes: the rest of the cut cycle, or the whole pool now (a count up to a bound).
    const owed = draining?.remaining ?? (await store.netting.countUnreservedPayable(POOL_COUNT_BOUND));
    // Windows missed while Core was down are not replayed one by one: the next closes a cycle length on.
    const length = this.options.cycleLengthSeconds;
    const following =
      draining !== null ? null : nextCutoff + length > now ? nextCutoff + length : now + length;
    const cycleId = Math.max(chainLast, latest?.cycleId ?? 0) + 1;
    const plan = await this.buildFittingPlan(cycleId, owed);
    if (plan === "bond_short") return { action: "bond_short", cycleId };
    if (!plan) {
      await store.transaction(async (tx) => {
        if (following !== null) await tx.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(following));
        if (draining !== null) await tx.operatorState.setOperatorState(DRAINING_CUTOFF_KEY, null);
      });
      this.draining = null;
      return { action: "empty", nextCutoff: following ?? nextCutoff };
    }
    const record: CycleRecord = {
      cycleId,
      state: "PLANNED",
      root: plan.plan.root,
      treeDump: JSON.stringify(plan.plan.treeDump),
      args: JSON.stringify(commitArgsToJson(plan.plan.args)),
      guaranteeIds: plan.ids,
      cutoff,
      plannedAt: now,
      txHash: null,
      txNonce: null,
      rawTx: null,
      sentAt: null,
      committedBlock: null,
      committedAt: null,
      paymentDeadline: null,
      defaultDeadline: null,
      finalizedAt: null,
      challengeDeadline: null,
      answerDeadline: null,
      vetoedAt: null,
      plannedByCore: true,
    };
    const remaining = owed - plan.ids.length;
    const drainingAfter: Draining | null = plan.cut && remaining > 0 ? { cutoff, remaining } : null;
    try {
      // The guarantees are already reserved for the cycle (the key range the plan was netted from).
      await store.transaction(async (tx) => {
        await tx.cycles.insertCycle(record);
        if (following !== null) await tx.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(following));
        if (drainingAfter !== null || draining !== null) {
          await tx.operatorState.setOperatorState(
            DRAINING_CUTOFF_KEY,
            drainingAfter === null ? null : JSON.stringify(drainingAfter),
          );
        }
      });
    } catch (error) {
      await store.netting.releaseCycleGuarantees(cycleId).catch(() => undefined);
      throw error;
    }
    this.draining = drainingAfter;
    this.watching = { cycleId, plannedAt: now };
    this.options.logger.info(
      {
        cycle_id: cycleId,
        guarantees: plan.ids.length,
        root: plan.plan.root,
        cutoff,
        // Cut by the size or gas bound: the rest follows under the same cutoff.
        partial: drainingAfter !== null,
        ...(drainingAfter !== null ? { remaining: drainingAfter.remaining } : {}),
        ...(draining !== null ? { continues_cutoff: draining.cutoff } : {}),
      },
      "clearing cycle planned",
    );
    return this.send(record, plan.gas);
  }

  private async nextCutoff(now: number): Promise<number> {
    const stored = await this.options.store.operatorState.getOperatorState(NEXT_CUTOFF_KEY);
    if (stored !== null) return Number(stored);
    // First run: the first cycle closes one cycle length from now.
    const first = now + this.options.cycleLengthSeconds;
    await this.options.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(first));
    return first;
  }

  /**
   * Nets the unassigned payable guarantees into a plan the chain accepts within the gas budget:
   * consumed V2 ids are excluded, an oversized cycle is halved. Null when nothing is payable. The
   * guarantees stay reserved for `cycleId` (their `cycle_id`) when a plan is returned; otherwise, or on
   * an error, the reservation is released.
   */
  private async buildFittingPlan(
    cycleId: number,
    owed: number,
  ): Promise<{ plan: StoredCyclePlan; ids: string[]; gas: bigint; cut: boolean } | "bond_short" | null> {
    const { store, sender, gasBudget, deployment } = this.options;
    const hinted = this.debtorCut !== null;
    let limit = hinted ? Math.min(this.maxPerCycle, 2 * this.debtorCut!) : this.maxPerCycle;
    let debtorCut = hinted;
    // No cycle row has this id yet: a reservation under it is one a crash left before its plan was stored.
    await store.netting.releaseCycleGuarantees(cycleId);
    try {
      for (let attempt = 0; attempt < MAX_REBUILDS; attempt++) {
        const reserved = await store.netting.reservePayableGuarantees(cycleId, limit);
        if (reserved === 0) return null;
        // Reserved V1 ids are not listed on chain, but one whose seller collected its reserve must not be
        // netted again (docs/clearing.md, "Reserved V1 ids").
        const reservedV1Ids = new Set(
          (await store.reserves.listV1ReserveIds()).map((id) => id.toLowerCase()),
        );
        const plan = await planStoredCycle(store.netting, cycleId, undefined, reservedV1Ids);
        if (!plan) throw new Error(`cycle ${cycleId}: ${reserved} guarantees reserved, none to net`);
        // The chain's bounds on one commit (CommitTooLarge, CommitTooManyAssets). Every debtor pays and every
        // asset is paid in the range, so a range with few enough payers and assets fits, and one guarantee
        // always does: at least halved each time, it ends.
        const weight = commitWeight(plan.args);
        const assets = plan.args.totals.length;
        if ((weight > this.maxDebtors || assets > this.maxAssets) && reserved > 1) {
          await store.netting.releaseCycleGuarantees(cycleId);
          const scaled = Math.floor(reserved * Math.min(this.maxDebtors / weight, this.maxAssets / assets));
          limit = Math.max(1, Math.min(scaled, Math.ceil(reserved / 2)));
          debtorCut = true;
          this.options.logger.info(
            { cycle_id: cycleId, debtors: plan.args.debtors.length, weight, assets, next_limit: limit },
            "cycle over the commit's debtor or asset bound: splitting",
          );
          continue;
        }
        if (await this.excludeRemunerated([...plan.args.nettedV2Ids, ...plan.netting.reservedV1Ids])) {
          await store.netting.releaseCycleGuarantees(cycleId);
          continue;
        }
        // Before the estimate: a cycle the bond does not cover would only revert (BondBelowFloor).
        if (!(await this.bondCovers(cycleId, plan.args.totals))) {
          await store.netting.releaseCycleGuarantees(cycleId);
          return "bond_short";
        }
        const data = encodeCommitCycle(plan.args);
        const gas = await sender.estimate(deployment.clearingHouse, data, commitErrorsInterface);
        if (gasBudget !== null && gas > gasBudget && reserved > 1) {
          await store.netting.releaseCycleGuarantees(cycleId);
          limit = Math.ceil(reserved / 2);
          this.options.logger.warn(
            { cycle_id: cycleId, gas, budget: gasBudget, next_limit: limit },
            "cycle over gas budget: splitting",
          );
          continue;
        }
        // Cut by a bound: the range is full and guarantees of this cutoff are left. Guarantees that merely
        // arrived during planning (or after the cutoff) belong to the next cutoff and wait for it.
        const cut = reserved >= limit && reserved < owed && (await store.netting.hasUnreservedPayable());
        this.perCommit = limit;
        // Kept while the debtor bound cuts, or a range started from it was full (it doubles each commit).
        this.debtorCut = debtorCut && reserved >= limit ? limit : null;
        return { plan, ids: await store.netting.listCycleGuaranteeIds(cycleId), gas, cut };
      }
      throw new Error(`cycle ${cycleId}: no committable plan after ${MAX_REBUILDS} rebuilds`);
    } catch (error) {
      await store.netting.releaseCycleGuarantees(cycleId).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Excludes the ids among `ids` that a `remunerate` consumed on chain (latest block); true when any was.
   * Ids netted already (re-commit of a vetoed cycle) stay: the commit skips them and they are consumed once.
   */
  private async excludeRemunerated(ids: readonly string[]): Promise<boolean> {
    if (ids.length === 0) return false;
    const { provider, deployment, store, logger } = this.options;
    const how = await vaultAt(deployment.vault, provider).consumptionOf([...ids]);
    let excluded = false;
    for (let i = 0; i < ids.length; i++) {
      if (Number(how[i]) !== CONSUMPTION.remunerated) continue;
      await store.guarantees.setGuaranteeExcluded(ids[i], EXCLUDED_CONSUMED);
      logger.warn({ guarantee_id: ids[i] }, "guarantee remunerated on chain before its commit: excluded");
      excluded = true;
    }
    return excluded;
  }

  /** Whether the bond covers the ClearingHouse's floor for these totals (the gate logs and reports it). */
  private bondCovers(
    cycleId: number,
    totals: readonly { asset: string; totalDebit: bigint }[],
  ): Promise<boolean> {
    const { provider, deployment } = this.options;
    return this.bondGate.check(cycleId, totals, clearingHouseAt(deployment.clearingHouse, provider));
  }

  private async send(record: CycleRecord, gas?: bigint): Promise<SchedulerTickResult> {
    const { sender, deployment } = this.options;
    const args = cycleCommitArgs(record);
    // A stored plan sent again (after a restart): the bond may have changed since it was planned. Held
    // back, it stays planned (its guarantees with it) and is sent once the bond is topped up.
    if (gas === undefined && !(await this.bondCovers(record.cycleId, args.totals))) {
      return { action: "bond_short", cycleId: record.cycleId };
    }
    const data = encodeCommitCycle(args);
    try {
      const signed = await sender.send({
        to: deployment.clearingHouse,
        data,
        errors: commitErrorsInterface,
        gasLimit: gas === undefined ? undefined : gas + gas / 5n,
        label: `commitCycle ${record.cycleId}`,
        persist: this.persistCommit(record),
      });
      this.options.logger.info({ cycle_id: record.cycleId, tx: signed.hash }, "clearing cycle commit sent");
      return {
        action: "committed",
        cycleId: record.cycleId,
        txHash: signed.hash,
        guarantees: record.guaranteeIds.length,
      };
    } catch (error) {
      // Not sent (the estimate reverted): the plan is stale.
      if (error instanceof CallRevertedError) return this.abandon(record, error);
      throw error;
    }
  }

  /**
   * Stores each signed version of the commit (the original, then every fee replacement) with the
   * cycle before the sender broadcasts it, so a restart rebroadcasts exactly those bytes.
   */
  private persistCommit(record: CycleRecord): (tx: SignedTransaction) => Promise<void> {
    let sentAt = record.sentAt;
    return (tx) => {
      sentAt ??= this.options.chainClock.nowSeconds();
      return this.options.store.transaction(async (t) => {
        // The indexer may have put a cycle Core did not plan under this id meanwhile: never overwrite it,
        // and never broadcast a commit the chain can no longer take (a failed persist is not broadcast).
        if (!isOwnPlan(await t.cycles.getCycle(record.cycleId))) {
          throw new Error(`cycle ${record.cycleId} is no longer Core's uncommitted plan: commit not sent`);
        }
        await t.cycles.updateCycle(record.cycleId, {
          state: "SENT",
          txHash: tx.hash,
          txNonce: tx.nonce,
          rawTx: tx.raw,
          sentAt,
        });
      });
    };
  }

  /** The outstanding cycle (planned or sent, not on chain yet): send, follow, or abandon. */
  private async resolveOutstanding(cycle: CycleRecord): Promise<SchedulerTickResult | null> {
    const { sender } = this.options;
    if (
      cycle.state === "PLANNED" ||
      cycle.rawTx === null ||
      cycle.txHash === null ||
      cycle.txNonce === null
    ) {
      return this.send(cycle);
    }
    // The sender re-sends it if the node lost it, replaces it if stuck, and knows every version's hash.
    const status = await sender.follow(cycle.rawTx, {
      label: `commitCycle ${cycle.cycleId}`,
      persist: this.persistCommit(cycle),
    });
    if (status.state === "consumed") {
      // Its nonce was used by another transaction (or by the sender's cancel of a commit no node
      // accepted): no version of it can ever be mined.
      const why = status.cancelled ? "refused by the node and cancelled" : "used by another transaction";
      return this.abandon(cycle, new Error(`nonce ${status.nonce} ${why}`));
    }
    if (status.state === "pending" || status.receipt.status === 1) {
      return { action: "pending", cycleId: cycle.cycleId, txHash: status.hash }; // mined: lastCycleId lags (reorg)
    }
    // Reverted: find out why by estimating the same call now.
    const data = encodeCommitCycle(cycleCommitArgs(cycle));
    try {
      await sender.estimate(this.options.deployment.clearingHouse, data, commitErrorsInterface);
      return this.abandon(cycle, new Error(`commit ${status.hash} reverted (out of gas?)`));
    } catch (error) {
      return this.abandon(cycle, error);
    }
  }

  /** Drops a plan that can never be committed; its guarantees return to the pool for the same id. */
  private async abandon(cycle: CycleRecord, reason: unknown): Promise<SchedulerTickResult> {
    const before = await this.drainingCutoff();
    const again: Draining = {
      cutoff: Math.min(cycle.cutoff, before?.cutoff ?? cycle.cutoff),
      remaining: (before?.remaining ?? 0) + cycle.guaranteeIds.length,
    };
    await this.options.store.transaction(async (tx) => {
      // Only Core's own, uncommitted plan: a cycle the indexer recorded under this id (one Core did not
      // plan took it) stays, and its plan's guarantees were already returned to the pool then.
      if (!isOwnPlan(await tx.cycles.getCycle(cycle.cycleId))) return;
      // Its reservation is dropped (and a plan's from before key ranges, by cycle_id, unassigned): its
      // guarantees are in the pool for the next reservation.
      await tx.netting.releaseCycleGuarantees(cycle.cycleId);
      await tx.cycles.deleteCycle(cycle.cycleId);
      // Planned again at once, under the same cutoff (and so the same deadline).
      await tx.operatorState.setOperatorState(DRAINING_CUTOFF_KEY, JSON.stringify(again));
    });
    this.draining = again;
    this.watching = null;
    const message = reason instanceof Error ? reason.message : String(reason);
    this.options.logger.warn({ cycle_id: cycle.cycleId, reason: message }, "clearing cycle plan abandoned");
    return { action: "abandoned", cycleId: cycle.cycleId, reason: message };
  }
}

/** A plan of Core's not seen committed yet (what the scheduler may still change or drop). */
function isOwnPlan(cycle: CycleRecord | null): boolean {
  return cycle !== null && cycle.plannedByCore && (cycle.state === "PLANNED" || cycle.state === "SENT");
}

/** The calldata of `ClearingHouse.commitCycle` for a plan: the one place the scheduler encodes it. */
function encodeCommitCycle(args: CommitCycleArgs): string {
  return clearingHouseInterface.encodeFunctionData("commitCycle", toCommitCycleCall(args));
}
