/**
 * The stored guarantees Core planned a cycle from: what its trees are rebuilt from to answer disputes,
 * release listed reserves and serve proofs. By the cycle's own id list, not by `cycle_id` alone: a guarantee
 * the commit skipped (remunerated in the commit's own block, `GuaranteeNettingSkipped`) never gets the cycle
 * id written, yet it is a leaf of the committed trees — without it no position of that cycle could be
 * proven, and every dispute of it would be voided against the bond.
 */
import type { ClearingGuarantee, Repositories } from "../store";

export async function plannedGuarantees(
  store: Pick<Repositories, "guarantees">,
  cycle: { cycleId: number; guaranteeIds: readonly string[] },
): Promise<ClearingGuarantee[]> {
  const ids = new Set(cycle.guaranteeIds.map((id) => id.toLowerCase()));
  const found = (await store.guarantees.listGuarantees({ cycleId: cycle.cycleId })).filter((g) =>
    ids.has(g.guaranteeId.toLowerCase()),
  );
  if (found.length < ids.size) {
    // The few the commit skipped (or, for a vetoed cycle, all of them: re-listed by a later cycle).
    const have = new Set(found.map((g) => g.guaranteeId.toLowerCase()));
    for (const id of ids) {
      if (have.has(id)) continue;
      const guarantee = await store.guarantees.getClearingGuarantee(id);
      if (guarantee) found.push(guarantee);
    }
  }
  return found;
}
