/**
 * A guarantee's lifecycle timeline (docs/operator-api.md, `GET /core/guarantees/{id}/timeline`): what
 * moved it and, where the chain did, the transaction. Built from the records Core keeps anyway (the
 * guarantee, its V2 validation response, its seller's reserve, its cycle, the V2 netting log, the payer's
 * debt and the recipient's claim in that cycle), so it needs no history table and survives the pruning of
 * the indexer's undo journal. No HTTP here.
 */
import { parseValidationPolicy } from "../../sdk/claims";
import { validationRequestHash } from "../../sdk/ids";
import { sameAddress } from "../../sdk/wire";
import type { StoredGuarantee, Repositories } from "../store";

export type TimelineClock = "chain" | "core";

export interface TimelineEntry {
  /** What happened (docs/operator-api.md lists the kinds). */
  kind:
    | "issued"
    | "reserve_registered"
    | "validation_response"
    | "cycle_planned"
    | "netted"
    | "debt_paid"
    | "debt_covered"
    | "debt_voided"
    | "debt_refunded"
    | "credit_claimed"
    | "cycle_finalized"
    | "cycle_vetoed"
    | "state";
  /** Unix seconds; null when Core keeps no time for it (a debt's payment: see its transaction). */
  at: number | null;
  /** Whose clock `at` is: the block's timestamp (chain) or Core's own clock (core). */
  clock: TimelineClock;
  txHash: string | null;
  blockNumber: number | null;
  cycleId: number | null;
  /** Short facts of the step (amounts as decimal strings, a validator's score, the state reached). */
  detail: Record<string, string | number>;
}

const entry = (
  kind: TimelineEntry["kind"],
  at: number | null,
  clock: TimelineClock,
  more: Partial<Omit<TimelineEntry, "kind" | "at" | "clock">> = {},
): TimelineEntry => ({
  kind,
  at,
  clock,
  txHash: null,
  blockNumber: null,
  cycleId: null,
  detail: {},
  ...more,
});

/** The steps of `g`, oldest first (steps without a time keep their causal place). */
export async function guaranteeTimeline(
  store: Pick<Repositories, "cycles" | "guarantees" | "reserves">,
  g: StoredGuarantee,
  chainId: number,
): Promise<TimelineEntry[]> {
  const steps: TimelineEntry[] = [
    entry("issued", g.createdAt, "core", { detail: { amount: g.amount.toString(), version: g.version } }),
  ];
  const reserve = await store.reserves.getReserve(g.guaranteeId);
  if (reserve) {
    steps.push(
      entry("reserve_registered", null, "chain", {
        txHash: reserve.txHash,
        blockNumber: reserve.blockNumber,
        detail: { amount: reserve.amount.toString() },
      }),
    );
  }
  if (g.version === 2 && g.policy !== null) {
    const policy = parseValidationPolicy(g.policy, "stored.validation_policy");
    const requestHash = validationRequestHash(chainId, policy, g.guaranteeId);
    const response = await store.guarantees.latestValidationResponse(requestHash, policy.validator);
    if (response) {
      steps.push(
        entry("validation_response", response.blockTimestamp, "chain", {
          txHash: response.txHash,
          blockNumber: response.blockNumber,
          detail: { response: response.response, tag: response.tag, validator: response.validator },
        }),
      );
    }
  }
  const cycle = g.cycleId === null ? null : await store.cycles.getCycle(g.cycleId);
  if (cycle) {
    const cycleId = cycle.cycleId;
    if (cycle.state === "PLANNED" || cycle.state === "SENT") {
      steps.push(entry("cycle_planned", cycle.plannedAt, "chain", { cycleId, txHash: cycle.txHash }));
    } else {
      const netting = g.version === 2 ? await store.cycles.getV2Netting(g.guaranteeId) : null;
      steps.push(
        entry("netted", cycle.committedAt, "chain", {
          cycleId,
          txHash: netting?.txHash ?? cycle.txHash,
          blockNumber: netting?.blockNumber ?? cycle.committedBlock,
          detail: { root: cycle.root },
        }),
      );
      const debt = await store.cycles.getCycleDebt(cycleId, g.asset, g.user);
      if (debt && debt.status !== "OPEN" && debt.status !== "CHALLENGED" && debt.status !== "ANSWERED") {
        const kind = (
          {
            PAID: "debt_paid",
            COVERED: "debt_covered",
            VOIDED: "debt_voided",
            REFUNDED: "debt_refunded",
          } as const
        )[debt.status];
        steps.push(
          entry(kind, null, "chain", {
            cycleId,
            txHash: debt.resolvedTx,
            detail: {
              debtor: debt.debtor,
              amount: debt.amount.toString(),
              ...(debt.covered === null ? {} : { covered: debt.covered.toString() }),
            },
          }),
        );
      }
      const claim = (await store.cycles.listCycleClaims(cycleId)).find(
        (c) => sameAddress(c.participant, g.recipient) && sameAddress(c.asset, g.asset),
      );
      if (claim) {
        steps.push(
          entry("credit_claimed", null, "chain", {
            cycleId,
            txHash: claim.txHash,
            detail: { participant: claim.participant, amount: claim.amount.toString() },
          }),
        );
      }
      if (cycle.vetoedAt !== null) steps.push(entry("cycle_vetoed", cycle.vetoedAt, "chain", { cycleId }));
      if (cycle.finalizedAt !== null)
        steps.push(entry("cycle_finalized", cycle.finalizedAt, "chain", { cycleId }));
    }
  }
  // The state it is in now, when it was reached (the last change Core recorded).
  steps.push(entry("state", g.updatedAt, "core", { cycleId: g.cycleId, detail: { state: g.state } }));
  return steps;
}
