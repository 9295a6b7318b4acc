/**
 * A committed cycle's later events (docs/operator-async.md, "Event → state"): its debits paid or covered,
 * credits claimed, its challenge window, its end, and the guardian's veto. Registered with the indexer by
 * chain/events.ts (the commit itself: ./commit-handlers.ts; disputes: ./dispute-handlers.ts).
 */
import { OPEN_CREDIT_DISPUTES_KEY, parseOpenCreditDisputes, withoutCycle } from "./credit-disputes";
import type { ApplyContext, EventHandlers } from "../chain/handlers";
import type { JournaledTx } from "../chain/journal";
import type { DecodedEvent } from "../chain/typed-events";

export function registerCycleHandlers(handlers: EventHandlers): void {
  handlers
    .on("ClearingHouse.NetDebitPaid", (j, event, context) => applyDebtResolved(j, event, context, null))
    .on("ClearingHouse.DefaultCovered", (j, event, context) =>
      applyDebtResolved(j, event, context, event.args.covered),
    )
    .on("ClearingHouse.NetCreditClaimed", async (j, event) => {
      const a = event.args;
      await j.putClaim(Number(a.cycleId), a.asset, a.participant, a.amount, event.txHash);
    })
    .on("ClearingHouse.CycleChallengeWindow", async (j, event) => {
      const a = event.args;
      const cycle = await j.tx.cycles.getCycle(Number(a.cycleId));
      if (cycle) {
        await j.updateCycle(cycle, {
          challengeDeadline: Number(a.challengeDeadline),
          answerDeadline: Number(a.answerDeadline),
        });
      }
    })
    .on("ClearingHouse.CycleVetoed", applyCycleVetoed)
    .on("ClearingHouse.VetoedDebtReleased", applyVetoedDebtReleased)
    .on("ClearingHouse.DoubleListingProven", async (_j, event, context) => {
      const a = event.args;
      // Core never lists a guarantee of a committed, unvetoed cycle again (the scheduler only takes
      // unassigned payable guarantees): a proof means the operator key committed a cycle Core did not
      // plan, or a bug. Nothing in Core's books changes (the remedy is a refund from the bond; the
      // cycle's debts stand as committed), but someone must look now.
      context.logger.error(
        {
          guarantee_id: a.guaranteeId,
          payer: a.payer,
          asset: a.asset,
          first_cycle_id: Number(a.firstCycleId),
          later_cycle_id: Number(a.laterCycleId),
          amount: a.amount.toString(),
        },
        "double listing proven on chain: the payer is refunded from the operator bond",
      );
    })
    .on("ClearingHouse.CycleFinalized", async (j, event) => {
      const cycle = await j.tx.cycles.getCycle(Number(event.args.cycleId));
      if (cycle) await j.updateCycle(cycle, { state: "FINALIZED", finalizedAt: event.blockTimestamp });
    });
}

/**
 * NetDebitPaid (`covered` null) → SETTLED; ClearingHouse.DefaultCovered → DEFAULT_REMUNERATED. Either
 * releases the debit lock.
 */
async function applyDebtResolved(
  j: JournaledTx,
  event: DecodedEvent<"ClearingHouse.NetDebitPaid" | "ClearingHouse.DefaultCovered">,
  context: ApplyContext,
  covered: bigint | null,
): Promise<void> {
  const a = event.args;
  const cycleId = Number(a.cycleId);
  const asset = a.asset;
  const debtor = a.debtor;
  const paid = covered === null;
  const debt = await j.tx.cycles.getCycleDebt(cycleId, asset, debtor);
  // An answered challenge leaves the debt payable and coverable, like an open one.
  if (!debt || (debt.status !== "OPEN" && debt.status !== "ANSWERED")) {
    context.logger.error(
      { cycle_id: cycleId, asset, debtor, event: event.name },
      "no open debt in Core's books",
    );
    return;
  }
  await j.putDebt({
    ...debt,
    status: paid ? "PAID" : "COVERED",
    covered,
    resolvedTx: event.txHash,
  });
  await j.adjustCollateral(debtor, asset, { locked: -debt.amount });
  const netted = await j.tx.guarantees.listGuarantees({ cycleId, user: debtor, asset, states: ["NETTED"] });
  const moved: typeof netted = [];
  for (const g of netted) {
    const trigger = paid ? "debit_paid" : "debit_covered";
    const previous = await context.transitions.apply(j, g.guaranteeId, { trigger });
    if (previous !== null) moved.push(g);
  }
  const webhooks = context.webhooks;
  if (!webhooks) return;
  if (covered === null) {
    for (const g of moved) {
      await j.emit(webhooks.guaranteeSettled(event, g, cycleId, "net_debit_paid", j.now));
    }
  } else {
    const ref = { cycleId, asset, debtor, amount: debt.amount, covered };
    const ids = moved.map((g) => g.guaranteeId);
    await j.emit(webhooks.defaultCovered(event, ref, ids, j.now));
  }
}

/**
 * A vetoed cycle's debt was released on chain: a paid one refunded, an unpaid one's obligation freed (only
 * after the grace period: Core's books kept its lock until now, as the Vault did).
 */
async function applyVetoedDebtReleased(
  j: JournaledTx,
  event: DecodedEvent<"ClearingHouse.VetoedDebtReleased">,
  context: ApplyContext,
): Promise<void> {
  const a = event.args;
  const cycleId = Number(a.cycleId);
  const asset = a.asset;
  const debtor = a.debtor;
  const debt = await j.tx.cycles.getCycleDebt(cycleId, asset, debtor);
  if (!debt || !["OPEN", "CHALLENGED", "ANSWERED", "PAID"].includes(debt.status)) {
    context.logger.error(
      { cycle_id: cycleId, asset, debtor, event: event.name, status: debt?.status ?? null },
      "debt not in the expected state in Core's books",
    );
    return;
  }
  if (debt.status !== "PAID") await j.adjustCollateral(debtor, asset, { locked: -debt.amount });
  await j.putDebt({ ...debt, status: a.refunded ? "REFUNDED" : "VOIDED", resolvedTx: event.txHash });
}

/**
 * The guardian vetoed a cycle: nothing of it settles. Every guarantee of the cycle is payable again with its
 * own lock, unassigned, so the scheduler re-commits it in the next cycle; the unresolved debits keep their
 * locks until the chain releases their obligations (`releaseVetoedDebt`, which the keeper sends once the
 * grace period has passed), so a veto never frees collateral a payer still owes. Paid debits are refunded.
 */
async function applyCycleVetoed(
  j: JournaledTx,
  event: DecodedEvent<"ClearingHouse.CycleVetoed">,
  context: ApplyContext,
): Promise<void> {
  const cycleId = Number(event.args.cycleId);
  // A veto ends the cycle's credit disputes (docs/clearing.md "Misdirected credits"): none is left to answer.
  // The chain emits no CreditDisputeResolved for them: each is announced here as `vetoed`.
  const credit = parseOpenCreditDisputes(await j.tx.operatorState.getOperatorState(OPEN_CREDIT_DISPUTES_KEY));
  const ended = credit.filter((d) => d.cycleId === cycleId);
  if (ended.length > 0) await j.setOperatorState(OPEN_CREDIT_DISPUTES_KEY, withoutCycle(credit, cycleId));
  for (const d of ended) {
    const extra = { outcome: "vetoed", paid: "0", owed: "0" };
    const type = "cycle.credit_dispute_resolved";
    await j.emit(context.webhooks?.creditDispute(event, type, d, extra, j.now, d.guaranteeId));
    context.creditDisputes?.creditDisputeApplied("vetoed");
  }
  const cycle = await j.tx.cycles.getCycle(cycleId);
  if (!cycle) {
    context.logger.error({ cycle_id: cycleId }, "CycleVetoed for a cycle Core did not plan");
    return;
  }
  // The unpaid debts stay locked (the Vault keeps their obligations until the grace period has passed:
  // VetoedDebtReleased frees them), and the guarantees come back with their own locks for the re-commit.
  await j.updateCycle(cycle, { state: "VETOED", vetoedAt: event.blockTimestamp });
  const back: string[] = [];
  for (const id of cycle.guaranteeIds) {
    const g = await j.tx.guarantees.getClearingGuarantee(id);
    if (!g) continue;
    const previous = await context.transitions.apply(j, id, { trigger: "cycle_vetoed" });
    if (previous === null) continue; // e.g. REMUNERATED: a skipped V2 id, nothing to re-commit
    await j.adjustCollateral(g.user, g.asset, { locked: g.amount });
    back.push(id);
  }
  await j.assignCycle(back, null, cycleId);
  const guardian = event.args.guardian;
  await j.emit(context.webhooks?.cycleVetoed(event, cycle, guardian, back, j.now));
  context.logger.error(
    { cycle_id: cycleId, guardian, guarantees: back.length },
    "cycle vetoed by the guardian: its guarantees return to the next cycle",
  );
}
