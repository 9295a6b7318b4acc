/**
 * Prometheus metrics (`GET /metrics`, prom-client). One registry per Core
 * app, so several Cores in one process (tests) do not share counters.
 *
 * - `surety_http_requests_total{method,route,status}` and
 *   `surety_http_request_duration_seconds{method,route,status}`: `route` is
 *   the matched route pattern (`/core/guarantees/:id`), never the raw path,
 *   so ids and addresses do not explode the label space.
 * - `surety_guarantees_issued_total{version,scheme}`,
 *   `surety_guarantees_rejected_total{reason}` (reason = the error code).
 * - `surety_guarantee_transitions_refused_total{trigger}`: guarantee moves the transition table refused
 *   (guarantees/transitions.ts; each is also logged, `guarantee_transition_refused`).
 * - `surety_credit_disputes_total{outcome}`: recipients' credit disputes (docs/clearing.md "Misdirected
 *   credits") as the indexer applies them: `opened`, then `answered`, `paid` (from the bond: Core did not
 *   answer in time), `lapsed` or `vetoed`. Counted in this process when the log is applied: a log re-applied
 *   after a reorg (or a retried batch) counts again; the webhooks are the exact record.
 * - `surety_collateral_locked{asset}`: total locked collateral per asset in
 *   base units, read from the store at scrape time (a float: exact up to 2^53).
 * - `surety_indexer_lag_blocks`, `surety_indexer_seconds_since_sync` and
 *   `surety_indexer_state{state}` (1 for the current state): whether the books
 *   follow the chain (chain/sync-status.ts), read at scrape time; no sample
 *   while no indexer reports (state `off` is still exported).
 * - `surety_operator_transactions_unfinished` and
 *   `surety_operator_transaction_oldest_seconds`: the operator account's sends
 *   not yet mined (and confirmed), and how long ago the oldest of them was
 *   first signed (0 when none), read from the sender's journal at
 *   scrape time (chain/sender.ts). A keeper or commit that stays unmined shows
 *   here before its deadline passes.
 * - `surety_operator_bond{asset}`: the ClearingHouse's operator bond per asset in base units, as the
 *   background bond monitor last read it (clearing/bond-monitor.ts); no sample before its first read.
 * - `surety_bond_refunds_owed{asset}`: refunds the bond owes and could not pay yet
 *   (`ClearingHouse.totalRefundOwed`, audit A2-H1), same source; above zero, a top-up is due.
 * - `surety_commit_bond_short` (1 while the scheduler holds a commit back because the operator bond is below
 *   the ClearingHouse's floor, else 0; no sample when nothing commits in this process) and
 *   `surety_commit_bond_required{asset}` (what the last checked cycle needs per asset, base units):
 *   clearing/bond-floor.ts.
 * - The figures the health warnings judge (health.ts, docs/monitoring.md), read at scrape time through
 *   one evaluation: `surety_webhook_backlog_oldest_seconds{subscription}`,
 *   `surety_webhook_backlog_pending{subscription}`, `surety_webhook_deliveries_failed{subscription}`,
 *   `surety_clearing_cutoff_lateness_seconds`, `surety_clearing_commit_slack_seconds`,
 *   `surety_keeper_cover_slack_seconds`, `surety_keeper_debts_awaiting_cover`,
 *   `surety_commit_bond_margin_ratio{asset}`, `surety_operator_bond_floor{asset}`,
 *   `surety_operator_key_problem{state}` (1 while the keeper's last check of Core's BLS key against the
 *   Vault's found a problem), `surety_operator_key_problems_total` (the checks that found one, a counter
 *   kept in the store: every process serves the same), `surety_verdict_pins_waiting`,
 *   `surety_verdict_pin_oldest_wait_seconds` and `surety_health_warnings{check}` (how many warnings each
 *   check raises now).
 * - `surety_bls_signer_info{backend}`: 1 for the BLS implementation that signs certificates in this
 *   process, `blst` (the native addon) or `noble` (the pure-JavaScript fallback, ≈ 40 certificates/s; Core
 *   starts on it only with `SURETY_ALLOW_SLOW_BLS`).
 * - Node process metrics with the `surety_core_` prefix.
 */
import type { Request, RequestHandler, Response } from "express";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { unfinishedTransactions } from "./chain/sender";
import { CHAIN_SYNC_STATES, type ChainSyncMonitor } from "./chain/sync-status";
import type { Clock } from "./clock";
import type { CommitBondGate } from "./clearing/bond-floor";
import type { CreditDisputeOutcome } from "./clearing/credit-disputes";
import type { CommitDeadlineGate } from "./clearing/commit-deadline";
import { HEALTH_CHECKS, type HealthMonitor, type HealthReport } from "./health";
import type { Repositories } from "./store";
import { blsBackend } from "../sdk/bls";

/** Latency buckets (seconds) around the issuance target (p99 < 25 ms). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** The background bond monitor's last readings, per checksummed asset (clearing/bond-monitor.ts). */
export interface BondSource {
  values(): ReadonlyMap<string, bigint>;
  refundsOwed?(): ReadonlyMap<string, bigint>;
}

export class CoreMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"method" | "route" | "status">;
  private readonly duration: Histogram<"method" | "route" | "status">;
  private readonly issued: Counter<"version" | "scheme">;
  private readonly rejected: Counter<"reason">;
  private readonly transitionsRefused: Counter<"trigger">;
  private readonly creditDisputes: Counter<"outcome">;

  constructor(
    store: Pick<Repositories, "collateral" | "operatorState">,
    chainSync?: Pick<ChainSyncMonitor, "status">,
    operator?: { address: string; clock: Clock },
    commitBond?: Pick<CommitBondGate, "status">,
    health?: Pick<HealthMonitor, "evaluate">,
    commitDeadline?: Pick<CommitDeadlineGate, "status">,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "surety_core_" });
    this.requests = new Counter({
      name: "surety_http_requests_total",
      help: "HTTP requests answered, by route pattern and status",
      labelNames: ["method", "route", "status"],
      registers,
    });
    this.duration = new Histogram({
      name: "surety_http_request_duration_seconds",
      help: "HTTP request latency, by route pattern and status",
      labelNames: ["method", "route", "status"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.issued = new Counter({
      name: "surety_guarantees_issued_total",
      help: "Guarantees issued (certificate returned)",
      labelNames: ["version", "scheme"],
      registers,
    });
    this.rejected = new Counter({
      name: "surety_guarantees_rejected_total",
      help: "Guarantee requests refused, by error code",
      labelNames: ["reason"],
      registers,
    });
    this.transitionsRefused = new Counter({
      name: "surety_guarantee_transitions_refused_total",
      help: "Guarantee state moves the transition table refused, by trigger",
      labelNames: ["trigger"],
      registers,
    });
    this.creditDisputes = new Counter({
      name: "surety_credit_disputes_total",
      help: "Recipients' credit disputes applied from the chain: opened, then answered, paid (from the bond), lapsed or vetoed",
      labelNames: ["outcome"],
      registers,
    });
    new Gauge({
      name: "surety_collateral_locked",
      help: "Collateral locked by unresolved guarantees, per asset, in base units",
      labelNames: ["asset"],
      registers,
      async collect() {
        this.reset();
        for (const [asset, total] of await store.collateral.lockedTotals())
          this.set({ asset }, Number(total));
      },
    });
    const bonds = () => this.bondSource?.values() ?? new Map<string, bigint>();
    const refundsOwed = () => this.refundsOwedValues();
    new Gauge({
      name: "surety_operator_bond",
      help: "Operator bond in the ClearingHouse, per asset, in base units (last background read)",
      labelNames: ["asset"],
      registers,
      collect() {
        this.reset();
        for (const [asset, bond] of bonds()) this.set({ asset }, Number(bond));
      },
    });
    new Gauge({
      name: "surety_bond_refunds_owed",
      help: "Refunds the operator bond owes and could not pay yet (ClearingHouse.totalRefundOwed), per asset, base units (last background read)",
      labelNames: ["asset"],
      registers,
      collect() {
        this.reset();
        for (const [asset, owed] of refundsOwed()) this.set({ asset }, Number(owed));
      },
    });
    new Gauge({
      name: "surety_bls_signer_info",
      help: "1 for the BLS implementation signing certificates: blst (native addon) or noble (pure-JS fallback, about 40/s)",
      labelNames: ["backend"],
      registers,
    }).set({ backend: blsBackend() }, 1);
    if (chainSync) this.registerChainSync(chainSync, registers);
    if (commitBond) this.registerCommitBond(commitBond, registers);
    if (commitDeadline) this.registerCommitDeadline(commitDeadline, registers);
    if (operator) this.registerOperatorTransactions(store, operator, registers);
    if (health) this.registerHealth(health, registers);
  }

  /** Gauges of the health figures: one evaluation per scrape (every collect shares it). */
  private registerHealth(health: Pick<HealthMonitor, "evaluate">, registers: Registry[]): void {
    const gauge = (
      name: string,
      help: string,
      labelNames: string[],
      fill: (set: (labels: Record<string, string>, value: number) => void, report: HealthReport) => void,
    ) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          const report = await health.evaluate();
          this.reset();
          fill((labels, value) => this.set(labels, value), report);
        },
      });
    gauge(
      "surety_webhook_backlog_oldest_seconds",
      "Age of the subscription's oldest pending webhook delivery, seconds (0 when none is pending)",
      ["subscription"],
      (set, { figures }) => {
        for (const w of figures.webhooks) set({ subscription: w.subscriptionId }, w.oldestPendingSeconds);
      },
    );
    gauge(
      "surety_webhook_backlog_pending",
      "Webhook deliveries of the subscription still to be sent",
      ["subscription"],
      (set, { figures }) => {
        for (const w of figures.webhooks) set({ subscription: w.subscriptionId }, w.pending);
      },
    );
    gauge(
      "surety_webhook_deliveries_failed",
      "Webhook deliveries of the subscription that gave up after the last attempt",
      ["subscription"],
      (set, { figures }) => {
        for (const w of figures.webhooks) set({ subscription: w.subscriptionId }, w.failed);
      },
    );
    gauge(
      "surety_clearing_cutoff_lateness_seconds",
      "How far the next clearing cutoff is past its time, or beyond one cycle length away (chain seconds)",
      [],
      (set, { figures }) => {
        if (figures.cutoffLatenessSeconds !== null) set({}, figures.cutoffLatenessSeconds);
      },
    );
    gauge(
      "surety_clearing_commit_slack_seconds",
      "Chain seconds left before the earliest owed clearing commit is due (cutoff + commitDelay); negative: late",
      [],
      (set, { figures }) => {
        if (figures.commitSlackSeconds !== null) set({}, figures.commitSlackSeconds);
      },
    );
    gauge(
      "surety_keeper_cover_slack_seconds",
      "Chain seconds left before the earliest default deadline of an unpaid debt past its payment deadline",
      [],
      (set, { figures }) => {
        if (figures.coverSlackSeconds !== null) set({}, figures.coverSlackSeconds);
      },
    );
    gauge(
      "surety_keeper_debts_awaiting_cover",
      "Unpaid debts past their payment deadline that the keeper must cover before their default deadline",
      [],
      (set, { figures }) => set({}, figures.debtsAwaitingCover),
    );
    gauge(
      "surety_commit_bond_margin_ratio",
      "Operator bond above what the last checked cycle needs under the ClearingHouse floor: (bond - required) / required",
      ["asset"],
      (set, { figures }) => {
        for (const m of figures.bondMargins) set({ asset: m.asset }, m.marginRatio);
      },
    );
    gauge(
      "surety_operator_bond_floor",
      "Operator bond floor per asset (SURETY_BOND_FLOORS), base units: compare with surety_operator_bond",
      ["asset"],
      (set, { figures }) => {
        for (const f of figures.bondFloors) set({ asset: f.asset }, Number(f.floor));
      },
    );
    gauge(
      "surety_operator_key_problem",
      "1 while the keeper's last check found Core's BLS key unable to certify dispute answers (not the Vault's, none on the Vault, unreadable), else 0; no sample before a check",
      ["state"],
      (set, { figures }) => {
        if (figures.operatorKey !== null)
          set({ state: figures.operatorKey.state }, figures.operatorKey.state === "ready" ? 0 : 1);
      },
    );
    new Counter({
      name: "surety_operator_key_problems_total",
      help: "Checks of the operator key (one per background round) that found dispute answers could not be certified, since the store was created",
      registers,
      async collect() {
        const { figures } = await health.evaluate();
        this.reset();
        if (figures.operatorKey !== null) this.inc(figures.operatorKey.problems);
      },
    });
    gauge(
      "surety_verdict_pins_waiting",
      "V2 guarantees payable on their verdict that wait for their pin's indexing (in no cycle until then)",
      [],
      (set, { figures }) => set({}, figures.verdictPins.waiting),
    );
    gauge(
      "surety_verdict_pin_oldest_wait_seconds",
      "How long the oldest V2 guarantee payable on its verdict has waited for its pin's indexing (0 when none)",
      [],
      (set, { figures }) => set({}, figures.verdictPins.oldestWaitSeconds ?? 0),
    );
    gauge(
      "surety_health_warnings",
      "Warnings each health check raises now (GET /core/health `warnings`); 0 when ok or off",
      ["check"],
      (set, { warnings }) => {
        for (const check of HEALTH_CHECKS) set({ check }, warnings.filter((w) => w.check === check).length);
      },
    );
  }

  private registerOperatorTransactions(
    store: Pick<Repositories, "operatorState">,
    operator: { address: string; clock: Clock },
    registers: Registry[],
  ): void {
    new Gauge({
      name: "surety_operator_transactions_unfinished",
      help: "Operator account transactions sent and not yet mined (and confirmed)",
      registers,
      async collect() {
        this.set((await unfinishedTransactions(store, operator.address)).count);
      },
    });
    new Gauge({
      name: "surety_operator_transaction_oldest_seconds",
      help: "Seconds since the oldest unfinished operator transaction was first signed (0: none)",
      registers,
      async collect() {
        const { oldestSignedAt } = await unfinishedTransactions(store, operator.address);
        this.set(oldestSignedAt === null ? 0 : Math.max(0, operator.clock.nowSeconds() - oldestSignedAt));
      },
    });
  }

  private registerChainSync(chainSync: Pick<ChainSyncMonitor, "status">, registers: Registry[]): void {
    new Gauge({
      name: "surety_indexer_lag_blocks",
      help: "Blocks between the confirmed chain head and the last block Core's books include (at the last tick)",
      registers,
      collect() {
        this.reset();
        const { lagBlocks } = chainSync.status();
        if (lagBlocks !== null) this.set(lagBlocks);
      },
    });
    new Gauge({
      name: "surety_indexer_seconds_since_sync",
      help: "Seconds since the indexer's last successful tick (since its start when none succeeded)",
      registers,
      collect() {
        this.reset();
        const { secondsSinceSync } = chainSync.status();
        if (secondsSinceSync !== null) this.set(secondsSinceSync);
      },
    });
    new Gauge({
      name: "surety_indexer_state",
      help: "1 for the chain sync state Core is in (issuance is refused unless ok or off), 0 for the others",
      labelNames: ["state"],
      registers,
      collect() {
        const { state } = chainSync.status();
        for (const each of CHAIN_SYNC_STATES) this.set({ state: each }, each === state ? 1 : 0);
      },
    });
  }

  private registerCommitDeadline(gate: Pick<CommitDeadlineGate, "status">, registers: Registry[]): void {
    new Gauge({
      name: "surety_commit_deadline_at_risk",
      help: "1 while owed clearing commits might land after cutoff + commitDelay + confirmationLag (issuance refused)",
      registers,
      collect() {
        this.reset();
        const { state } = gate.status();
        if (state !== "off") this.set(state === "at_risk" ? 1 : 0);
      },
    });
    new Gauge({
      name: "surety_clearing_seconds_per_commit",
      help: "Chain seconds one clearing commit takes, as the scheduler estimates it (the longest recent one)",
      registers,
      collect() {
        this.reset();
        const status = gate.status();
        if (status.state !== "off") this.set(status.secondsPerCommit);
      },
    });
  }

  private registerCommitBond(gate: Pick<CommitBondGate, "status">, registers: Registry[]): void {
    new Gauge({
      name: "surety_commit_bond_short",
      help: "1 while a clearing commit is held back because the operator bond is below the ClearingHouse floor",
      registers,
      collect() {
        this.reset();
        const { state } = gate.status();
        if (state !== "off") this.set(state === "short" ? 1 : 0);
      },
    });
    new Gauge({
      name: "surety_commit_bond_required",
      help: "Bond the last checked cycle needs under the ClearingHouse floor, per asset, in base units",
      labelNames: ["asset"],
      registers,
      collect() {
        this.reset();
        for (const { asset, required } of gate.status().assets) this.set({ asset }, Number(required));
      },
    });
  }

  private bondSource: BondSource | null = null;

  /** Where `surety_operator_bond` and `surety_bond_refunds_owed` read (the background bond monitor). */
  observeBond(source: BondSource): void {
    this.bondSource = source;
  }

  /** The bond per asset as the bond monitor last read it (empty where none runs in this process). */
  bondValues(): ReadonlyMap<string, bigint> {
    return this.bondSource?.values() ?? new Map<string, bigint>();
  }

  /** What the bond owes in refunds per asset as the bond monitor last read it (empty where none runs). */
  refundsOwedValues(): ReadonlyMap<string, bigint> {
    return this.bondSource?.refundsOwed?.() ?? new Map<string, bigint>();
  }

  guaranteeIssued(version: number, scheme: string): void {
    this.issued.inc({ version: String(version), scheme });
  }

  /** A guarantee move the transition table refused (guarantees/transitions.ts). */
  guaranteeTransitionRefused(trigger: string): void {
    this.transitionsRefused.inc({ trigger });
  }

  /** A credit dispute opened or ended, as the indexer applied it (clearing/credit-disputes.ts). */
  creditDisputeApplied(outcome: "opened" | CreditDisputeOutcome): void {
    this.creditDisputes.inc({ outcome });
  }

  guaranteeRejected(reason: string): void {
    this.rejected.inc({ reason });
  }

  /** Labelled children, resolved once per (method, route, status): label hashing is per-request work otherwise. */
  private readonly httpChildren = new Map<string, { count(): void; observe(seconds: number): void }>();

  /** Counts and times one answered request (`route` is the matched pattern, or "unmatched"). */
  httpRequestFinished(method: string, route: string, status: number, started: bigint): void {
    const key = `${method} ${route} ${status}`;
    let labelled = this.httpChildren.get(key);
    if (labelled === undefined) {
      const counter = this.requests.labels(method, route, String(status));
      const histogram = this.duration.labels(method, route, String(status));
      labelled = { count: () => counter.inc(), observe: (seconds) => histogram.observe(seconds) };
      this.httpChildren.set(key, labelled);
    }
    labelled.count();
    labelled.observe(Number(process.hrtime.bigint() - started) / 1e9);
  }

  /** Counts and times every request by its matched route pattern. */
  httpMiddleware(): RequestHandler {
    return (req: Request, res: Response, next) => {
      const started = process.hrtime.bigint();
      res.on("finish", () => this.httpRequestFinished(req.method, routeOf(req), res.statusCode, started));
      next();
    };
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** The route label of requests no route matched (e.g. a body the JSON parser refused). */
export const UNMATCHED_ROUTE = "unmatched";

function routeOf(req: Request): string {
  const route = (req as { route?: { path?: unknown } }).route;
  return route && typeof route.path === "string" ? req.baseUrl + route.path : UNMATCHED_ROUTE;
}
