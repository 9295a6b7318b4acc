/**
 * Health view: Core's probes and indexer sync, who leads the background work, the clearing schedule in
 * chain time (next cutoff, commit due, a cycle under way) with the timings and the latest deadlines, the
 * contracts, and the webhook backlog (admin wallets).
 */
import type {
  CycleBody,
  HealthBody,
  HealthWarning,
  ScheduleBody,
  WebhookBacklogBody,
  WirePublicParams,
} from "./api";
import { h, row } from "./dom";
import { formatSeconds } from "./format";
import { time } from "./links";

export interface HealthData {
  health: HealthBody;
  params: WirePublicParams;
  schedule: ScheduleBody | null;
  latestCycle: CycleBody | null;
  /** The admin's view of the webhook outbox; null when the signed-in wallet is not admin (or none is). */
  backlog: WebhookBacklogBody | null;
  signedIn: boolean;
  /** The charts (charts.ts), built by the page from its samples. */
  charts: Node | null;
}

/** What each check of `GET /core/health` watches (docs/monitoring.md). */
const CHECK_LABEL: Record<string, string> = {
  webhook_backlog: "Webhook backlog",
  clearing_cutoff: "Clearing cutoff",
  clearing_commit: "Clearing commit",
  cover_slack: "Cover slack",
  bond_margin: "Bond margin",
  bond_refunds_owed: "Refunds owed",
  indexer_lag: "Indexer lag",
  operator_key: "Operator key",
  verdict_pins: "Verdict pins",
};

/**
 * Red when the limit itself is reached (a commit or a cover past its due time, the bond under what the cycle
 * needs, an operator key no dispute answer verifies under), amber while there is still time: the warning says
 * how far it is.
 */
export function warningSeverity(warning: HealthWarning): "red" | "amber" {
  if ((warning.check === "clearing_commit" || warning.check === "cover_slack") && warning.value <= 0)
    return "red";
  if (warning.check === "bond_margin" && warning.value < 0) return "red";
  if (warning.check === "operator_key") return "red";
  return "amber";
}

function renderWarnings(health: HealthBody): HTMLElement | null {
  const warnings = health.warnings ?? [];
  if (warnings.length === 0) return null;
  return h(
    "div",
    { class: "warnings", "data-testid": "health-warnings" },
    warnings.map((w) => {
      const severity = warningSeverity(w);
      return h(
        "div",
        {
          class: `state ${severity === "red" ? "error" : "warn"}`,
          role: severity === "red" ? "alert" : "status",
          "data-testid": "health-warning",
          "data-check": w.check,
          "data-severity": severity,
        },
        h(
          "p",
          { class: "title" },
          `${CHECK_LABEL[w.check] ?? w.check}${w.subject ? ` (${w.subject})` : ""}: ${severity === "red" ? "limit reached" : "warning"}`,
        ),
        h("p", {}, w.reason),
      );
    }),
  );
}

function checkRows(health: HealthBody): HTMLElement[] {
  const checks = health.checks;
  if (!checks) return [];
  return Object.entries(checks).flatMap(([name, state]) =>
    row(CHECK_LABEL[name] ?? name, h("span", { "data-check": name }, badge(state))),
  );
}

const SYNC_ADVICE: Record<string, string> = {
  starting: "The indexer has not finished a pass yet; this clears by itself within a poll interval.",
  lagging: "Core is behind the chain by more than its bound: check the RPC node and Core's log.",
  stale: "No successful indexer pass lately: check the RPC node (SURETY_RPC_URL) and Core's log.",
  halted:
    "The chain reorganised below the history Core keeps: Core issues nothing until an operator restores the store (docs/operator-async.md).",
  off: "This Core runs without background tasks (SURETY_BACKGROUND_TASKS=false): nothing is indexed here.",
};

export { time };

function badge(value: string): HTMLElement {
  const kind = value === "ok" ? "ok" : value === "off" ? "off" : value === "warn" ? "warn" : "fail";
  return h("span", { class: `badge ${kind}` }, value);
}

function scheduleRows(schedule: ScheduleBody | null): HTMLElement[] {
  if (!schedule) return row("Next cutoff", h("span", { class: "muted" }, "reading…"));
  const pending = schedule.pending_cycle;
  return [
    ...row("Chain time", h("span", { "data-testid": "chain-time" }, time(schedule.chain_time))),
    ...row(
      "Next cutoff",
      schedule.next_cutoff === null
        ? h("span", { class: "muted" }, "not set yet (the scheduler sets it on its first run)")
        : h(
            "span",
            { "data-testid": "next-cutoff" },
            time(schedule.next_cutoff),
            schedule.seconds_to_cutoff === null
              ? null
              : schedule.seconds_to_cutoff >= 0
                ? ` in ${formatSeconds(schedule.seconds_to_cutoff)} of chain time`
                : ` passed ${formatSeconds(-schedule.seconds_to_cutoff)} ago: commit under way`,
          ),
    ),
    ...row("Commit due by", time(schedule.next_commit_by)),
    ...row(
      "Cycle under way",
      pending === null
        ? h("span", { class: "muted" }, "none")
        : h(
            "span",
            {},
            `#${pending.cycle_id} ${pending.state}, cutoff `,
            time(pending.cutoff),
            pending.commit_tx ? " tx " : null,
            pending.commit_tx ? h("code", {}, pending.commit_tx) : null,
          ),
    ),
  ];
}

function leaderRows(health: HealthBody): HTMLElement[] {
  const l = health.leadership;
  if (!l) return [];
  return [
    ...row(
      "Background work",
      h("span", { "data-testid": "leadership" }, l.role, l.replica ? ` (this replica: ${l.replica})` : ""),
    ),
    ...row("Leader", l.leader ?? h("span", { class: "muted" }, "single Core (no lease)")),
    l.lease_expires_at ? row("Lease until", time(l.lease_expires_at)) : [],
  ].flat();
}

function backlogRow(backlog: WebhookBacklogBody | null, signedIn: boolean): HTMLElement[] {
  if (backlog === null) {
    return row(
      "Webhook backlog",
      h(
        "span",
        { class: "muted" },
        signedIn ? "admin wallets only" : "sign in with an admin wallet to see it",
      ),
    );
  }
  return row(
    "Webhook backlog",
    h(
      "span",
      { "data-testid": "health-backlog" },
      `${backlog.pending} pending, ${backlog.failed} failed`,
      backlog.oldest_pending_at ? [", oldest since ", time(backlog.oldest_pending_at)] : null,
    ),
  );
}

export function renderHealth({
  health,
  params,
  schedule,
  latestCycle,
  backlog,
  signedIn,
  charts,
}: HealthData): HTMLElement {
  const sync = health.chain_sync;
  // Core publishes head − confirmations − indexed as lag_blocks, so the confirmation depth follows from the three.
  const confirmations =
    sync.head_block !== null && sync.indexed_block !== null && sync.lag_blocks !== null
      ? sync.head_block - sync.indexed_block - sync.lag_blocks
      : null;
  const timings = params.protocol_timings;
  return h(
    "section",
    { class: "health", "data-view": "health" },
    h(
      "h2",
      {},
      "Health ",
      badge(health.status),
      health.status === "ok" && (health.warnings?.length ?? 0) > 0
        ? [
            " ",
            h(
              "span",
              { class: "badge warn", "data-testid": "warning-count" },
              `${health.warnings!.length} warning${health.warnings!.length === 1 ? "" : "s"}`,
            ),
          ]
        : null,
    ),
    renderWarnings(health),
    sync.state !== "ok" && SYNC_ADVICE[sync.state]
      ? h(
          "div",
          { class: "state warn", role: "status" },
          h("p", { class: "title" }, sync.reason ?? sync.state),
          h("p", {}, SYNC_ADVICE[sync.state]),
        )
      : null,
    h(
      "div",
      { class: "cards" },
      h(
        "article",
        {},
        h("h3", {}, "Chain and indexer"),
        h(
          "dl",
          {},
          row("Chain head", h("strong", { "data-testid": "chain-head" }, sync.head_block ?? "not read yet")),
          row("Indexed block", sync.indexed_block ?? "—"),
          row(
            "Indexer lag",
            sync.lag_blocks === null ? "—" : `${sync.lag_blocks} blocks (bound ${sync.max_lag_blocks})`,
          ),
          row("Confirmations", confirmations === null ? "—" : `${confirmations} blocks`),
          row("Sync state", badge(sync.state)),
          row(
            "Last sync",
            time(sync.last_synced_at),
            sync.seconds_since_sync === null
              ? null
              : ` ${sync.seconds_since_sync} s ago (bound ${sync.max_stale_seconds} s)`,
          ),
          row("Store", badge(health.db)),
          row("Chain RPC", badge(health.chain_rpc)),
          row("Indexer", badge(health.indexer)),
          leaderRows(health),
        ),
        health.checks ? h("h4", {}, "Checks") : null,
        health.checks ? h("dl", { "data-testid": "health-checks" }, checkRows(health)) : null,
      ),
      h(
        "article",
        {},
        h("h3", {}, "Clearing schedule"),
        timings === null
          ? h(
              "p",
              { class: "muted" },
              "Core has not read the Vault's timings (it runs without background tasks).",
            )
          : h(
              "dl",
              {},
              row("Cycle length", formatSeconds(timings.cycle_length_seconds), " of chain time"),
              row("Commit delay", formatSeconds(timings.commit_delay_seconds)),
              row("Challenge window (W)", formatSeconds(timings.challenge_window_seconds)),
              row("Answer window", formatSeconds(timings.challenge_window_seconds)),
              row("Payment window (P)", formatSeconds(timings.payment_window_seconds)),
              row("Default window", formatSeconds(timings.default_window_seconds)),
              row("Withdrawal grace", formatSeconds(timings.withdrawal_grace_period_seconds)),
              scheduleRows(schedule),
            ),
        h(
          "h4",
          {},
          latestCycle
            ? `Latest cycle #${latestCycle.cycle_id} (${latestCycle.state})`
            : "No cycle committed yet",
        ),
        latestCycle
          ? h(
              "dl",
              { "data-testid": "latest-cycle" },
              row("Committed", time(latestCycle.committed_at)),
              row("Challenges until", time(latestCycle.challenge_deadline)),
              row("Answers until", time(latestCycle.answer_deadline)),
              row("Payment deadline", time(latestCycle.payment_deadline)),
              row("Default deadline", time(latestCycle.default_deadline)),
            )
          : null,
      ),
      h(
        "article",
        {},
        h("h3", {}, "Deployment"),
        h(
          "dl",
          {},
          row("Chain id", params.chain_id),
          row("Vault", h("code", {}, params.contract_address)),
          row(
            "ClearingHouse",
            params.clearing_house_address ? h("code", {}, params.clearing_house_address) : "—",
          ),
          row("Guarantee versions", params.accepted_guarantee_versions.join(", ")),
          row(
            "Latest V2 deadline",
            params.latest_validation_deadline === null
              ? "—"
              : time(new Date(params.latest_validation_deadline * 1000).toISOString()),
          ),
          backlogRow(backlog, signedIn),
        ),
      ),
    ),
    charts,
  );
}
