/**
 * Unauthenticated Core endpoints: `GET /core/tokens` (computed once at
 * startup), `GET /core/public-params` (per request: the timings and the V2
 * deadline cap are live), `GET /core/health` (store and chain probed
 * on every call, each bounded by a timeout; the indexer's sync state as the
 * issuance gate sees it; whether commits are held back by the on-chain bond floor; the warnings of
 * operator/health.ts, which never change `status` nor the HTTP status) and `GET /metrics`.
 */
import { Router } from "express";
import type { ChainSync, CommitBond, CommitDeadline, Health, Leadership } from "../../sdk/api-public";
import { blsBackend } from "../../sdk/bls";
import { withTimeout } from "../chain";
import type { ChainSyncStatus } from "../chain/sync-status";
import type { CommitBondStatus } from "../clearing/bond-floor";
import type { CommitDeadlineStatus } from "../clearing/commit-deadline";
import { HEALTH_CHECKS, type HealthCheckName, type HealthCheckState, type HealthReport } from "../health";
import { isoFromSeconds } from "../clock";
import type { LeadershipView } from "../leadership/ownership";
import type { CoreContext, RouteModule } from "./context";
import { SERVER_ERROR, jsonAnswer, mount, operation, ref } from "./operations";

/** The public operations: mounted below, described in Core's OpenAPI document. */
export const PUBLIC_OPERATIONS = {
  tokens: operation("get", "/core/tokens", {
    tags: ["public"],
    summary: "ERC-20 collateral assets of the active deployment (ETH, the zero address, is always supported)",
    responses: { "200": jsonAnswer("Tokens.", ref("Tokens")), ...SERVER_ERROR },
  }),
  publicParams: operation("get", "/core/public-params", {
    tags: ["public"],
    summary: "Everything a payer signs against and a verifier checks with",
    responses: { "200": jsonAnswer("Public parameters.", ref("PublicParams")), ...SERVER_ERROR },
  }),
  health: operation("get", "/core/health", {
    tags: ["public"],
    summary: "Store and chain RPC probed on every call; whether the books follow the chain",
    responses: {
      "200": jsonAnswer("Healthy.", {
        allOf: [ref("Health")],
        type: "object",
        properties: { status: { const: "ok" } },
      }),
      "503": jsonAnswer(
        "A dependency is down, or the books cannot follow the chain (`fail` for each failing part).",
        { allOf: [ref("Health")], type: "object", properties: { status: { const: "fail" } } },
      ),
    },
  }),
  metrics: operation("get", "/metrics", {
    tags: ["ops"],
    summary: "Prometheus metrics (restrict by network)",
    responses: {
      "200": {
        description: "Prometheus text exposition format.",
        content: { "text/plain": { schema: { type: "string" } } },
      },
    },
  }),
};

/** Health answers within this bound even when a dependency hangs. */
export const HEALTH_PROBE_TIMEOUT_MS = 2_000;

export type ProbeResult = "ok" | "fail";

/** One dependency's probe: `ok`, or `fail` with why (logged with the failing health answer). */
async function probe(
  check: () => Promise<unknown>,
  timeoutMs: number,
  what: string,
): Promise<{ result: ProbeResult; reason: string | null }> {
  try {
    await withTimeout(check(), timeoutMs, what);
    return { result: "ok", reason: null };
  } catch (error) {
    return { result: "fail", reason: error instanceof Error ? error.message : String(error) };
  }
}

/** `chain_sync` of the health body: the verdict issuance uses, with the lag and the bounds. */
export function chainSyncView(status: ChainSyncStatus): ChainSync {
  return {
    state: status.state,
    reason: status.reason,
    head_block: status.headBlock,
    indexed_block: status.indexedBlock,
    lag_blocks: status.lagBlocks,
    max_lag_blocks: status.limits.maxLagBlocks,
    last_synced_at: status.lastSyncedAt === null ? null : isoFromSeconds(status.lastSyncedAt),
    seconds_since_sync: status.secondsSinceSync,
    max_stale_seconds: status.limits.maxStaleSeconds,
  };
}

/** `commit_bond` of the health body: the scheduler's last bond-floor verdict (clearing/bond-floor.ts). */
export function commitBondView(status: CommitBondStatus): CommitBond {
  return {
    state: status.state,
    floor_bps: status.floorBps,
    cycle_id: status.cycleId,
    assets: status.assets.map((a) => ({
      asset: a.asset,
      bond: a.bond.toString(),
      required: a.required.toString(),
      short: a.bond < a.required,
    })),
    since: status.since === null ? null : isoFromSeconds(status.since),
  };
}

/** `commit_deadline` of the health body: the scheduler's commit-deadline verdict (clearing/commit-deadline.ts). */
export function commitDeadlineView(status: CommitDeadlineStatus): CommitDeadline {
  const iso = (seconds: number | null) => (seconds === null ? null : isoFromSeconds(seconds));
  return {
    state: status.state,
    deadline: iso(status.deadline),
    cutoff: iso(status.cutoff),
    commits_owed: status.commitsOwed,
    waiting: status.waiting,
    capacity: status.capacity,
    seconds_per_commit: status.secondsPerCommit,
    reason: status.reason,
    since: iso(status.since),
  };
}

/** `checks` and `warnings` of the health body: every check `off` when they could not be judged in time. */
export function warningsView(report: HealthReport | null): Required<Pick<Health, "checks" | "warnings">> {
  const checks = Object.fromEntries(
    HEALTH_CHECKS.map((c) => [c, report === null ? "off" : report.checks[c]]),
  ) as Record<HealthCheckName, HealthCheckState>;
  return {
    checks,
    warnings: (report?.warnings ?? []).map((w) => ({
      check: w.check,
      subject: w.subject,
      reason: w.reason,
      value: w.value,
      threshold: w.threshold,
    })),
  };
}

/** `leadership` of the health body: which replica runs the background work (docs/scale-out.md). */
export function leadershipView(view: LeadershipView): Leadership {
  return {
    role: view.role,
    replica: view.self,
    leader: view.leader,
    token: view.token,
    lease_expires_at: view.expiresAt === null ? null : new Date(view.expiresAt).toISOString(),
  };
}

export const publicRoutes: RouteModule<Pick<CoreContext["store"], "ping">> = (context) => {
  const { store, chain, config, logger } = context;
  const timeoutMs = Math.min(HEALTH_PROBE_TIMEOUT_MS, config.rpcTimeoutMs);
  const router = Router();

  mount(router, PUBLIC_OPERATIONS.tokens, (_req, res) => {
    res.json(context.tokens);
  });

  mount(router, PUBLIC_OPERATIONS.publicParams, (_req, res) => {
    // `latest_validation_deadline` moves with time: not to be cached.
    res.set("Cache-Control", "no-store").json(context.publicParams());
  });

  mount(router, PUBLIC_OPERATIONS.health, async (_req, res) => {
    const [dbProbe, rpcProbe, report] = await Promise.all([
      probe(() => store.ping(), timeoutMs, "store ping"),
      probe(() => chain.blockNumber(), timeoutMs, "eth_blockNumber"),
      withTimeout(context.health.evaluate(), timeoutMs, "health warnings").catch((error: unknown) => {
        logger.debug({ err: error }, "health warnings could not be judged");
        return null;
      }),
    ]);
    const sync = context.chainSync.status();
    // "off": no indexer in this process, nothing to judge by (the sync monitor logs its own changes).
    const indexer = sync.state === "off" ? "off" : sync.ready ? "ok" : "fail";
    const db = dbProbe.result;
    const chainRpc = rpcProbe.result;
    if (db !== "ok" || chainRpc !== "ok") {
      const reasons = [dbProbe.reason, rpcProbe.reason].filter((reason) => reason !== null);
      logger.warn({ db, chain_rpc: chainRpc, reasons }, "health check failed");
    }
    const healthy = db === "ok" && chainRpc === "ok" && indexer !== "fail";
    const body: Health = {
      status: healthy ? "ok" : "fail",
      db,
      chain_rpc: chainRpc,
      indexer,
      chain_sync: chainSyncView(sync),
      // Informational: a held-back commit does not make Core unhealthy (issuance and reads still work).
      commit_bond: commitBondView(context.commitBond.status()),
      // Informational too: while `at_risk` issuance is refused (commit_deadline_at_risk).
      commit_deadline: commitDeadlineView(context.commitDeadline.status()),
      leadership: leadershipView(context.leadership.view()),
      // Warnings: still working, heading for trouble (docs/monitoring.md). Never a 503, never `status`.
      ...warningsView(report),
      // Which BLS implementation signs certificates: the native addon, or the slow pure-JS fallback.
      bls_signer: blsBackend(),
    };
    res
      .status(healthy ? 200 : 503)
      .set("Cache-Control", "no-store")
      .json(body);
  });

  mount(router, PUBLIC_OPERATIONS.metrics, async (_req, res) => {
    const { contentType, body } = await context.metrics.render();
    res.set("Content-Type", contentType).send(body);
  });

  return router;
};
