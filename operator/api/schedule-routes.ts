/**
 * The clearing schedule (docs/operator-api.md, `GET /core/clearing/schedule`), public: chain time, the
 * next cutoff and the commit due after it, a cycle Core planned but the chain has not shown committed
 * yet. The same facts are on chain or follow from the Vault's timings; Core publishes its own reading.
 */
import type { ClearingSchedule } from "../../sdk/api-clearing";
import { Router } from "express";
import { clearingSchedule } from "../clearing/schedule";
import { isoFromSeconds } from "../clock";
import type { StoreAreas } from "../store";
import type { RouteModule } from "./context";
import { SERVER_ERROR, jsonAnswer, mount, operation, ref } from "./operations";

/** The schedule's operation: mounted below, described in Core's OpenAPI document. */
export const SCHEDULE_OPERATIONS = {
  schedule: operation("get", "/core/clearing/schedule", {
    tags: ["clearing"],
    summary: "The clearing schedule in chain time: next cutoff, commit due, a cycle under way",
    responses: { "200": jsonAnswer("Core's schedule now.", ref("ClearingSchedule")), ...SERVER_ERROR },
  }),
};

const iso = (seconds: number | null) => (seconds === null ? null : isoFromSeconds(seconds));

export const scheduleRoutes: RouteModule<StoreAreas<"cycles" | "operatorState">> = (context) => {
  const { store, chainClock, config } = context;
  const router = Router();

  mount(router, SCHEDULE_OPERATIONS.schedule, async (_req, res) => {
    const s = await clearingSchedule({ store, chainClock, config, timings: context.timings.get() });
    res.set("Cache-Control", "no-store").json({
      chain_time: iso(s.chainTime),
      cycle_length_seconds: s.cycleLengthSeconds,
      commit_delay_seconds: s.commitDelaySeconds,
      next_cutoff: iso(s.nextCutoff),
      next_commit_by: iso(s.nextCommitBy),
      seconds_to_cutoff: s.nextCutoff !== null && s.chainTime !== null ? s.nextCutoff - s.chainTime : null,
      pending_cycle: s.pending && {
        cycle_id: s.pending.cycleId,
        state: s.pending.state,
        cutoff: isoFromSeconds(s.pending.cutoff),
        planned_at: isoFromSeconds(s.pending.plannedAt),
        commit_tx: s.pending.txHash,
        sent_at: iso(s.pending.sentAt),
      },
      latest_committed_cycle_id: s.latestCommittedCycleId,
    } satisfies ClearingSchedule);
  });

  return router;
};
