/**
 * Health warnings (docs/monitoring.md): what is still working but heading for trouble. `GET /core/health`
 * shows them as `checks` (`ok` / `warn` / `off` per check) and `warnings` (which and why) with HTTP 200 and
 * the spec's `status` unchanged; `/metrics` exports the figures they are judged on, so that alert rules see
 * what health sees. Every figure comes from the store, the chain-sync verdict, the commit-bond verdict and
 * the Vault's timings, all of which Core's HTTP workers and follower replicas mirror
 * (operator/background-state.ts), so every process answers the same.
 *
 * | Check | Figure | Warns when |
 * | --- | --- | --- |
 * | `webhook_backlog` | per subscription, age of the oldest pending delivery (wall clock) | older than `SURETY_HEALTH_WEBHOOK_BACKLOG_SECONDS` |
 * | `clearing_cutoff` | how far the next cutoff is past its time, or beyond one cycle length away (chain time) | above `SURETY_HEALTH_CUTOFF_LATENESS_SECONDS` |
 * | `clearing_commit` | time left before an owed commit's due time (cutoff + commitDelay, chain time) | below `SURETY_HEALTH_COMMIT_SLACK_SECONDS` |
 * | `cover_slack` | time left before the default deadline of the unpaid debts past their payment deadline | below `SURETY_HEALTH_COVER_SLACK_SECONDS` |
 * | `bond_margin` | per asset, the bond above what the last checked cycle needs; the bond against `SURETY_BOND_FLOORS` | below `SURETY_HEALTH_BOND_MARGIN_BPS`; below the floor |
 * | `bond_refunds_owed` | per asset, what the bond owes in refunds it could not pay yet (`ClearingHouse.totalRefundOwed`, read by the bond monitor) | above zero |
 * | `indexer_lag` | blocks behind the confirmed head; seconds since the last successful tick | above `SURETY_HEALTH_INDEXER_LAG_BLOCKS` / `_STALE_SECONDS` (the refusal bounds are higher) |
 * | `operator_key` | the keeper's last check of Core's BLS key against the Vault's (clearing/key-watch.ts) | not the Vault's key, no key on the Vault, or unreadable: dispute answers would not verify |
 * | `verdict_pins` | how long the oldest guarantee payable on its verdict has waited for its pin's indexing (wall clock) | above `SURETY_HEALTH_VERDICT_PIN_SECONDS` (default one cycle length) |
 *
 * A check is `off` when this process has nothing to judge it by (no scheduler state, no timings, no
 * indexer, no bond checked). Each warning is logged once when it appears (`event: "health_warning"`) and
 * once when it clears, as health or metrics are read.
 */
import type { VaultTimings } from "./chain/handlers";
import type { ChainSyncStatus } from "./chain/sync-status";
import type { CommitBondStatus } from "./clearing/bond-floor";
import { clearingSchedule } from "./clearing/schedule";
import type { Clock } from "./clock";
import type { OperatorConfig } from "./config";
import type { Logger } from "./logger";
import {
  type OperatorKeySnapshot,
  OPERATOR_KEY_STATE_KEY,
  parseOperatorKeySnapshot,
} from "./clearing/key-watch";
import type { Repositories, StoreAreas } from "./store";
import { HEALTH_CHECKS, type HealthCheckName, type HealthCheckState } from "../sdk/api-vocabulary";

// The checks and their states are wire vocabulary (`GET /core/health`): the sdk holds them.
export { HEALTH_CHECKS, type HealthCheckName, type HealthCheckState };

export interface HealthWarning {
  check: HealthCheckName;
  /** What it is about: a subscription id, an asset, `cycle <id>`; null for Core as a whole. */
  subject: string | null;
  /** Why, in words, with the figure and the threshold. */
  reason: string;
  /** The figure judged (seconds, blocks, basis points or base units: see the check). */
  value: number;
  threshold: number;
}

/** The thresholds in force (defaults derived from the Vault's timings and the refusal bounds resolved). */
export interface HealthThresholds {
  webhookBacklogSeconds: number;
  cutoffLatenessSeconds: number;
  /** Null while the Vault's timings are unknown and none is configured. */
  commitSlackSeconds: number | null;
  coverSlackSeconds: number | null;
  bondMarginBps: number;
  indexerLagBlocks: number;
  indexerStaleSeconds: number;
  /** Null while neither the cycle length nor the Vault's timings are known and none is configured. */
  verdictPinSeconds: number | null;
}

/** The figures the checks judge, as `/metrics` exports them. */
export interface HealthFigures {
  webhooks: { subscriptionId: string; pending: number; failed: number; oldestPendingSeconds: number }[];
  /** Null: no cutoff scheduled (no scheduler ran) or no chain time yet. */
  cutoffLatenessSeconds: number | null;
  /** Seconds left before the earliest owed commit is due (negative: late); null when none is owed. */
  commitSlackSeconds: number | null;
  /** Seconds left before the earliest default deadline of a debt awaiting cover (negative: past); null when none. */
  coverSlackSeconds: number | null;
  debtsAwaitingCover: number;
  /** Per asset of the last checked cycle: (bond − required) / required. */
  bondMargins: { asset: string; bond: bigint; required: bigint; marginRatio: number }[];
  /** `SURETY_BOND_FLOORS`, with the bond last read where the bond monitor runs in this process. */
  bondFloors: { asset: string; floor: bigint; bond: bigint | null }[];
  /** The keeper's last check of the operator key (null: no check published, e.g. no keeper). */
  operatorKey: (Pick<OperatorKeySnapshot, "state" | "problems"> & { problemSeconds: number | null }) | null;
  /** Guarantees payable on their verdict waiting for the pin's indexing, and the oldest's wait (seconds). */
  verdictPins: { waiting: number; oldestWaitSeconds: number | null };
}

export interface HealthReport {
  checks: Record<HealthCheckName, HealthCheckState>;
  warnings: HealthWarning[];
  figures: HealthFigures;
  thresholds: HealthThresholds;
}

export type HealthConfig = Pick<
  OperatorConfig,
  | "healthWebhookBacklogSeconds"
  | "healthCutoffLatenessSeconds"
  | "healthCommitSlackSeconds"
  | "healthCoverSlackSeconds"
  | "healthBondMarginBps"
  | "healthIndexerLagBlocks"
  | "healthIndexerStaleSeconds"
  | "healthVerdictPinSeconds"
  | "indexerMaxLagBlocks"
  | "indexerMaxStaleSeconds"
  | "cycleLengthSeconds"
  | "bondFloors"
>;

export interface HealthMonitorDeps {
  store: StoreAreas<"cycles" | "guarantees" | "operatorState" | "webhooks">;
  /** Wall clock (webhook backlog ages). */
  clock: Clock;
  /** Chain time (cutoffs, commit and cover deadlines: the clock the contracts judge them by). */
  chainClock: Clock;
  config: HealthConfig;
  timings: { get(): VaultTimings | null };
  chainSync: { status(): ChainSyncStatus };
  commitBond: { status(): CommitBondStatus };
  /** The operator bond per asset as the bond monitor last read it (empty where it does not run). */
  bonds: () => ReadonlyMap<string, bigint>;
  /** What the bond owes in refunds per asset as the bond monitor last read it (empty where it does not run). */
  refundsOwed: () => ReadonlyMap<string, bigint>;
  logger: Logger;
}

const DEBT_STATUSES_AWAITING_COVER = ["OPEN", "ANSWERED"] as const;

/** The thresholds in force for `config` under `timings`. */
export function healthThresholds(config: HealthConfig, timings: VaultTimings | null): HealthThresholds {
  return {
    webhookBacklogSeconds: config.healthWebhookBacklogSeconds,
    cutoffLatenessSeconds: config.healthCutoffLatenessSeconds,
    commitSlackSeconds:
      config.healthCommitSlackSeconds ?? (timings === null ? null : Math.floor(timings.commitDelay / 2)),
    coverSlackSeconds:
      config.healthCoverSlackSeconds ?? (timings === null ? null : Math.floor(timings.defaultWindow / 2)),
    bondMarginBps: config.healthBondMarginBps,
    indexerLagBlocks: config.healthIndexerLagBlocks ?? Math.floor(config.indexerMaxLagBlocks / 2),
    indexerStaleSeconds: config.healthIndexerStaleSeconds ?? Math.floor(config.indexerMaxStaleSeconds / 2),
    verdictPinSeconds:
      config.healthVerdictPinSeconds ?? config.cycleLengthSeconds ?? timings?.cycleLength ?? null,
  };
}

function chainNow(chainClock: Clock): number | null {
  try {
    return chainClock.nowSeconds();
  } catch {
    return null; // nothing indexed yet
  }
}

export class HealthMonitor {
  /** Warnings standing at the last evaluation, by check and subject (each logged once). */
  private standing = new Map<string, HealthWarning>();
  /** One evaluation shared by everything that asks at once (a scrape reads every gauge together). */
  private inFlight: Promise<HealthReport> | null = null;

  constructor(private readonly deps: HealthMonitorDeps) {}

  evaluate(): Promise<HealthReport> {
    this.inFlight ??= this.run().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async run(): Promise<HealthReport> {
    const { config, timings } = this.deps;
    const thresholds = healthThresholds(config, timings.get());
    const checks = Object.fromEntries(HEALTH_CHECKS.map((c) => [c, "ok"])) as Record<
      HealthCheckName,
      HealthCheckState
    >;
    const warnings: HealthWarning[] = [];
    const warn = (w: HealthWarning) => {
      checks[w.check] = "warn";
      warnings.push(w);
    };
    const [webhooks, schedule, cover, operatorKey, verdictPins] = await Promise.all([
      this.webhookFigures(),
      this.scheduleFigures(),
      this.coverFigures(),
      this.operatorKeyFigures(),
      this.verdictPinFigures(),
    ]);

    for (const w of webhooks) {
      if (w.pending > 0 && w.oldestPendingSeconds > thresholds.webhookBacklogSeconds) {
        warn({
          check: "webhook_backlog",
          subject: w.subscriptionId,
          reason:
            `${w.pending} webhook deliveries pending, the oldest for ${w.oldestPendingSeconds} s ` +
            `(threshold ${thresholds.webhookBacklogSeconds} s)` +
            (w.lastError ? `; last error: ${w.lastError}` : ""),
          value: w.oldestPendingSeconds,
          threshold: thresholds.webhookBacklogSeconds,
        });
      }
    }

    if (schedule.cutoffLatenessSeconds === null) checks.clearing_cutoff = "off";
    else if (schedule.cutoffLatenessSeconds > thresholds.cutoffLatenessSeconds) {
      warn({
        check: "clearing_cutoff",
        subject: null,
        reason: schedule.cutoffReason!,
        value: schedule.cutoffLatenessSeconds,
        threshold: thresholds.cutoffLatenessSeconds,
      });
    }

    if (!schedule.judged || thresholds.commitSlackSeconds === null) checks.clearing_commit = "off";
    else if (
      schedule.commitSlackSeconds !== null &&
      schedule.commitSlackSeconds < thresholds.commitSlackSeconds
    ) {
      warn({
        check: "clearing_commit",
        subject: schedule.commitSubject,
        reason:
          `the commit of ${schedule.commitSubject} is due in ${schedule.commitSlackSeconds} s of chain time ` +
          `(cutoff + commitDelay; threshold ${thresholds.commitSlackSeconds} s)` +
          (schedule.commitSlackSeconds < 0
            ? ": late, the withdrawal grace period no longer covers its guarantees"
            : ""),
        value: schedule.commitSlackSeconds,
        threshold: thresholds.commitSlackSeconds,
      });
    }

    if (cover.chainTime === null || thresholds.coverSlackSeconds === null) checks.cover_slack = "off";
    else if (cover.slackSeconds !== null && cover.slackSeconds < thresholds.coverSlackSeconds) {
      warn({
        check: "cover_slack",
        subject: cover.subject,
        reason:
          `${cover.awaiting} unpaid debt(s) past their payment deadline; ${cover.subject} must be covered ` +
          `within ${cover.slackSeconds} s of chain time, before its default deadline ` +
          `(threshold ${thresholds.coverSlackSeconds} s)`,
        value: cover.slackSeconds,
        threshold: thresholds.coverSlackSeconds,
      });
    }

    const bond = this.bondFigures();
    if (bond.margins.length === 0 && bond.floors.every((f) => f.bond === null)) checks.bond_margin = "off";
    for (const m of bond.margins) {
      const marginBps = Math.floor(m.marginRatio * 10_000);
      if (marginBps < thresholds.bondMarginBps) {
        warn({
          check: "bond_margin",
          subject: m.asset,
          reason:
            `operator bond ${m.bond} is ${marginBps / 100} % above the ${m.required} the last checked cycle ` +
            `needs under the ClearingHouse floor (threshold ${thresholds.bondMarginBps / 100} %): ` +
            `top it up with ClearingHouse.postBond`,
          value: marginBps,
          threshold: thresholds.bondMarginBps,
        });
      }
    }
    for (const f of bond.floors) {
      if (f.bond !== null && f.bond < f.floor) {
        warn({
          check: "bond_margin",
          subject: f.asset,
          reason: `operator bond ${f.bond} is below its floor ${f.floor} (SURETY_BOND_FLOORS)`,
          value: Number(f.bond),
          threshold: Number(f.floor),
        });
      }
    }

    const owed = this.deps.refundsOwed();
    if (owed.size === 0) checks.bond_refunds_owed = "off";
    for (const [asset, amount] of owed) {
      if (amount > 0n) {
        warn({
          check: "bond_refunds_owed",
          subject: asset,
          reason:
            `the operator bond owes ${amount} in refunds it could not pay (ClearingHouse.totalRefundOwed): ` +
            "those payers wait and withdrawBond is refused until ClearingHouse.postBond covers them",
          value: Number(amount),
          threshold: 0,
        });
      }
    }

    const sync = this.deps.chainSync.status();
    if (sync.state === "off") checks.indexer_lag = "off";
    else if (sync.state === "ok") {
      if (sync.lagBlocks !== null && sync.lagBlocks > thresholds.indexerLagBlocks) {
        warn({
          check: "indexer_lag",
          subject: null,
          reason:
            `the indexer is ${sync.lagBlocks} blocks behind the confirmed head (threshold ` +
            `${thresholds.indexerLagBlocks}; issuance stops above ${sync.limits.maxLagBlocks})`,
          value: sync.lagBlocks,
          threshold: thresholds.indexerLagBlocks,
        });
      }
      if (sync.secondsSinceSync !== null && sync.secondsSinceSync > thresholds.indexerStaleSeconds) {
        warn({
          check: "indexer_lag",
          subject: null,
          reason:
            `the indexer's last successful tick was ${sync.secondsSinceSync} s ago (threshold ` +
            `${thresholds.indexerStaleSeconds} s; issuance stops above ${sync.limits.maxStaleSeconds} s)`,
          value: sync.secondsSinceSync,
          threshold: thresholds.indexerStaleSeconds,
        });
      }
    }
    // Starting, lagging, stale or halted: health already fails (503) and says why in `chain_sync`.

    if (operatorKey.figures === null) checks.operator_key = "off";
    else if (operatorKey.figures.state !== "ready") {
      warn({
        check: "operator_key",
        subject: null,
        reason:
          `${operatorKey.reason} (for ${operatorKey.figures.problemSeconds} s; dispute answers wait, ` +
          "the chain extends their window for a key gap: clearing.md, Operator key gaps)",
        value: operatorKey.figures.problemSeconds ?? 0,
        threshold: 0,
      });
    }

    if (thresholds.verdictPinSeconds === null) checks.verdict_pins = "off";
    else if (
      verdictPins.oldestWaitSeconds !== null &&
      verdictPins.oldestWaitSeconds > thresholds.verdictPinSeconds
    ) {
      warn({
        check: "verdict_pins",
        subject: null,
        reason:
          `${verdictPins.waiting} V2 guarantee(s) payable on their verdict wait for their pin's indexing, ` +
          `the oldest for ${verdictPins.oldestWaitSeconds} s (threshold ${thresholds.verdictPinSeconds} s): ` +
          "they are in no cycle until then (a pin not mined or not indexed; a verdict voided after its deadline is cancelled: " +
          "clearing.md, Pinned verdicts)",
        value: verdictPins.oldestWaitSeconds,
        threshold: thresholds.verdictPinSeconds,
      });
    }

    this.logTransitions(warnings);
    return {
      checks,
      warnings,
      thresholds,
      figures: {
        webhooks: webhooks.map(({ lastError: _lastError, ...w }) => w),
        cutoffLatenessSeconds: schedule.cutoffLatenessSeconds,
        commitSlackSeconds: schedule.commitSlackSeconds,
        coverSlackSeconds: cover.slackSeconds,
        debtsAwaitingCover: cover.awaiting,
        bondMargins: bond.margins,
        bondFloors: bond.floors,
        operatorKey: operatorKey.figures,
        verdictPins,
      },
    };
  }

  /** Every subscription with its backlog (zeros when none), the oldest pending delivery's age on the wall clock. */
  private async webhookFigures() {
    const { store, clock } = this.deps;
    const [subscriptions, backlog] = await Promise.all([
      store.webhooks.listWebhookSubscriptions(),
      store.webhooks.webhookBacklog(),
    ]);
    const now = clock.nowSeconds();
    const figures = [];
    for (const s of subscriptions) {
      const b = backlog.find((item) => item.subscriptionId === s.id);
      const oldest = b?.oldestPendingAt ?? null;
      const oldestPendingSeconds = oldest === null ? 0 : Math.max(0, now - oldest);
      let lastError: string | null = null;
      if (b && b.pending > 0 && oldestPendingSeconds > this.deps.config.healthWebhookBacklogSeconds) {
        const [latest] = await store.webhooks.listWebhookDeliveries({
          subscriptionId: s.id,
          status: "pending",
          limit: 1,
        });
        lastError = latest?.lastError ?? null;
      }
      figures.push({
        subscriptionId: s.id,
        pending: b?.pending ?? 0,
        failed: b?.failed ?? 0,
        oldestPendingSeconds,
        lastError,
      });
    }
    return figures;
  }

  /** Cutoff lateness and commit slack from the published schedule (the scheduler's stored cutoff and plan), in chain time. */
  private async scheduleFigures() {
    const { store, chainClock, config, timings } = this.deps;
    const s = await clearingSchedule({ store, chainClock, config, timings: timings.get() });
    const result = {
      /** Judged: a cutoff is scheduled, chain time and the Vault's timings are known. */
      judged: s.nextCutoff !== null && s.chainTime !== null && s.commitDelaySeconds !== null,
      cutoffLatenessSeconds: null as number | null,
      cutoffReason: null as string | null,
      commitSlackSeconds: null as number | null,
      commitSubject: null as string | null,
    };
    if (s.nextCutoff === null || s.chainTime === null) return result;
    const { nextCutoff, chainTime: now, cycleLengthSeconds: cycleLength } = s;
    const overdue = Math.max(0, now - nextCutoff);
    const slipped = cycleLength === null ? 0 : Math.max(0, nextCutoff - now - cycleLength);
    result.cutoffLatenessSeconds = Math.max(overdue, slipped);
    result.cutoffReason =
      overdue >= slipped
        ? `the cutoff scheduled at chain time ${nextCutoff} is ${overdue} s overdue: no cycle was closed`
        : `the next cutoff is ${nextCutoff - now} s away, ${slipped} s beyond one cycle length ` +
          `(${cycleLength} s): the cutoff schedule slipped`;
    if (s.commitDelaySeconds === null) return result;
    const owed: { due: number; subject: string }[] = [];
    if (s.pending)
      owed.push({ due: s.pending.cutoff + s.commitDelaySeconds, subject: `cycle ${s.pending.cycleId}` });
    if (nextCutoff <= now) {
      owed.push({
        due: nextCutoff + s.commitDelaySeconds,
        subject: `the cycle closing at ${nextCutoff} (if anything is payable)`,
      });
    }
    const first = owed.sort((a, b) => a.due - b.due)[0];
    if (first) {
      result.commitSlackSeconds = first.due - now;
      result.commitSubject = first.subject;
    }
    return result;
  }

  /** The operator-key verdict the background work published (clearing/key-watch.ts), on the wall clock. */
  private async operatorKeyFigures() {
    const { store, clock } = this.deps;
    const snapshot = parseOperatorKeySnapshot(
      await store.operatorState.getOperatorState(OPERATOR_KEY_STATE_KEY),
    );
    if (snapshot === null) return { figures: null, reason: null };
    return {
      figures: {
        state: snapshot.state,
        problems: snapshot.problems,
        problemSeconds: snapshot.since === null ? null : Math.max(0, clock.nowSeconds() - snapshot.since),
      },
      reason: snapshot.reason,
    };
  }

  /** The guarantees payable on their verdict still waiting for their pin's indexing (wall clock). */
  private async verdictPinFigures() {
    const { store, clock } = this.deps;
    const wait = await store.guarantees.verdictPinWait();
    return {
      waiting: wait.waiting,
      oldestWaitSeconds:
        wait.oldestPayableAt === null ? null : Math.max(0, clock.nowSeconds() - wait.oldestPayableAt),
    };
  }

  /** Debts past their payment deadline and still unpaid (OPEN or ANSWERED, cycle not vetoed): the keeper must cover them. */
  private async coverFigures() {
    const { store, chainClock } = this.deps;
    const now = chainNow(chainClock);
    const result = {
      chainTime: now,
      slackSeconds: null as number | null,
      awaiting: 0,
      subject: null as string | null,
    };
    if (now === null) return result;
    const debts = (
      await Promise.all(DEBT_STATUSES_AWAITING_COVER.map((status) => store.cycles.listCycleDebts({ status })))
    ).flat();
    const cycles = new Map<number, Awaited<ReturnType<Repositories["cycles"]["getCycle"]>>>();
    for (const debt of debts) {
      if (!cycles.has(debt.cycleId)) cycles.set(debt.cycleId, await store.cycles.getCycle(debt.cycleId));
      const cycle = cycles.get(debt.cycleId);
      if (
        !cycle ||
        cycle.state === "VETOED" ||
        cycle.paymentDeadline === null ||
        cycle.defaultDeadline === null
      ) {
        continue;
      }
      if (now <= cycle.paymentDeadline) continue; // the debtor may still pay
      result.awaiting++;
      const slack = cycle.defaultDeadline - now;
      if (result.slackSeconds === null || slack < result.slackSeconds) {
        result.slackSeconds = slack;
        result.subject = `cycle ${debt.cycleId} debtor ${debt.debtor} (${debt.asset})`;
      }
    }
    return result;
  }

  /**
   * The bond against what the last checked cycle needs (the scheduler's verdict) and against the configured
   * floors. Where the bond monitor runs in this process its latest read (every round) is the bond, so a
   * top-up shows at once; elsewhere the bond the scheduler read at its check.
   */
  private bondFigures() {
    const status = this.deps.commitBond.status();
    const bonds = this.deps.bonds();
    const margins =
      status.state === "off"
        ? []
        : status.assets
            .filter((a) => a.required > 0n)
            .map((a) => {
              const bond = bonds.get(a.asset) ?? a.bond;
              return {
                asset: a.asset,
                bond,
                required: a.required,
                marginRatio: Number(((bond - a.required) * 1_000_000n) / a.required) / 1_000_000,
              };
            });
    const floors = Object.entries(this.deps.config.bondFloors).map(([asset, floor]) => ({
      asset,
      floor,
      bond: bonds.get(asset) ?? null,
    }));
    return { margins, floors };
  }

  private logTransitions(warnings: readonly HealthWarning[]): void {
    const { logger } = this.deps;
    const now = new Map(warnings.map((w) => [`${w.check}:${w.subject ?? ""}`, w]));
    for (const [key, w] of now) {
      if (!this.standing.has(key)) {
        logger.warn(
          {
            event: "health_warning",
            check: w.check,
            subject: w.subject,
            value: w.value,
            threshold: w.threshold,
          },
          w.reason,
        );
      }
    }
    for (const [key, w] of this.standing) {
      if (!now.has(key)) {
        logger.info(
          { event: "health_warning_cleared", check: w.check, subject: w.subject },
          "health warning cleared",
        );
      }
    }
    this.standing = now;
  }
}
