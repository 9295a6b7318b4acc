/**
 * Unauthenticated Core endpoints: `GET /core/tokens`, `GET /core/public-params`
 * (both computed once at startup), `GET /core/health` (store and chain probed
 * on every call, each bounded by a timeout) and `GET /metrics`.
 */
import { Router } from "express";
import { withTimeout } from "../chain";
import type { RouteModule } from "./context";

/** Health answers within this bound even when a dependency hangs. */
export const HEALTH_PROBE_TIMEOUT_MS = 2_000;

export type ProbeResult = "ok" | "fail";

async function probe(check: () => Promise<unknown>, timeoutMs: number, what: string): Promise<ProbeResult> {
  try {
    await withTimeout(check(), timeoutMs, what);
    return "ok";
  } catch {
    return "fail";
  }
}

export const publicRoutes: RouteModule = (context) => {
  const { store, chain, config, logger } = context;
  const timeoutMs = Math.min(HEALTH_PROBE_TIMEOUT_MS, config.rpcTimeoutMs);
  const router = Router();

  router.get("/core/tokens", (_req, res) => {
    res.json(context.tokens);
  });

  router.get("/core/public-params", (_req, res) => {
    res.json(context.publicParams);
  });

  router.get("/core/health", async (_req, res) => {
    const [db, chainRpc] = await Promise.all([
      probe(() => store.ping(), timeoutMs, "store ping"),
      probe(() => chain.blockNumber(), timeoutMs, "eth_blockNumber"),
    ]);
    const healthy = db === "ok" && chainRpc === "ok";
    if (!healthy) logger.warn({ db, chain_rpc: chainRpc }, "health check failed");
    res
      .status(healthy ? 200 : 503)
      .set("Cache-Control", "no-store")
      .json({ status: healthy ? "ok" : "fail", db, chain_rpc: chainRpc });
  });

  router.get("/metrics", async (_req, res) => {
    const { contentType, body } = await context.metrics.render();
    res.set("Content-Type", contentType).send(body);
  });

  return router;
};
