/**
 * The dispute game (docs/clearing.md, "Disputes: one position at a time"): a debtor disputes one position of
 * its debit, the operator answers (or concedes), an unanswered dispute voids the debit. Registered with the
 * indexer by chain/events.ts.
 */
import { formatUint } from "../../sdk/wire";
import type { ApplyContext, EventHandlers } from "../chain/handlers";
import type { ChainLogRef } from "../chain/event-types";
import type { JournaledTx } from "../chain/journal";
import type { DecodedEvent } from "../chain/typed-events";
import type { CycleDebtRecord } from "../store";
import {
  OPEN_CREDIT_DISPUTES_KEY,
  type OpenCreditDispute,
  parseOpenCreditDisputes,
  withCreditDispute,
  withoutCreditDispute,
} from "./credit-disputes";

export function registerDisputeHandlers(handlers: EventHandlers): void {
  handlers
    .on("ClearingHouse.GuaranteeDisputed", applyGuaranteeDisputed)
    .on("ClearingHouse.DisputeResolved", applyDisputeResolved)
    .on("ClearingHouse.DebitReduced", applyDebitReduced)
    .on("ClearingHouse.CreditDeducted", applyCreditDeducted)
    .on("ClearingHouse.DeductionRecovered", applyDeductionRecovered)
    .on("ClearingHouse.DebitVoided", applyDebitVoided)
    .on("ClearingHouse.UnansweredConceded", applyUnansweredConceded)
    .on("ClearingHouse.CreditDisputed", applyCreditDisputed)
    .on("ClearingHouse.CreditDisputeResolved", applyCreditDisputeResolved);
}

/**
 * A recipient disputes that a listed guarantee is credited to it (docs/clearing.md "Misdirected credits"): the
 * keeper answers it with the guarantee's credit proof before the answer deadline.
 */
async function applyCreditDisputed(
  j: JournaledTx,
  event: DecodedEvent<"ClearingHouse.CreditDisputed">,
  context: ApplyContext,
): Promise<void> {
  const a = event.args;
  const d: OpenCreditDispute = {
    cycleId: Number(a.cycleId),
    guaranteeId: a.guaranteeId.toLowerCase(),
    recipient: a.recipient,
    payer: a.payer,
    asset: a.asset,
    amount: formatUint(a.amount),
    openedAt: event.blockTimestamp,
    openedTx: event.txHash,
  };
  const list = parseOpenCreditDisputes(await j.tx.operatorState.getOperatorState(OPEN_CREDIT_DISPUTES_KEY));
  await j.setOperatorState(OPEN_CREDIT_DISPUTES_KEY, withCreditDispute(list, d));
  context.logger.warn(
    { cycle_id: d.cycleId, guarantee_id: d.guaranteeId, recipient: a.recipient, amount: d.amount },
    "credit disputed by a recipient",
  );
  const cycle = await j.tx.cycles.getCycle(d.cycleId);
  const deadline = cycle?.answerDeadline ?? null;
  const extra = { answer_deadline: deadline === null ? null : new Date(deadline * 1000).toISOString() };
  await j.emit(context.webhooks?.creditDispute(event, "cycle.credit_disputed", d, extra, j.now));
  context.creditDisputes?.creditDisputeApplied("opened");
}

/** `CreditDisputeStatus` by its number; the closed ones are the webhook outcomes. */
const CREDIT_STATUSES = [null, null, "answered", "paid", "lapsed"] as const;

/** A credit dispute ended: answered (Core proved the credit), paid from the bond (Core failed to), or lapsed. */
async function applyCreditDisputeResolved(
  j: JournaledTx,
  event: DecodedEvent<"ClearingHouse.CreditDisputeResolved">,
  context: ApplyContext,
): Promise<void> {
  const a = event.args;
  const key = { cycleId: Number(a.cycleId), guaranteeId: a.guaranteeId.toLowerCase() };
  const list = parseOpenCreditDisputes(await j.tx.operatorState.getOperatorState(OPEN_CREDIT_DISPUTES_KEY));
  await j.setOperatorState(OPEN_CREDIT_DISPUTES_KEY, withoutCreditDispute(list, key));
  const outcome = CREDIT_STATUSES[Number(a.outcome)] ?? null;
  const fields = { cycle_id: key.cycleId, guarantee_id: key.guaranteeId, outcome, paid: a.paid.toString() };
  if (outcome === null) {
    context.logger.error(fields, "CreditDisputeResolved with an outcome Core does not know");
    return;
  }
  if (outcome === "paid") context.logger.error(fields, "credit dispute paid from the bond");
  else context.logger.info(fields, "credit dispute resolved");
  const d = list.find((x) => x.cycleId === key.cycleId && x.guaranteeId === key.guaranteeId) ?? {
    ...key,
    recipient: null,
    payer: null,
    asset: null,
    amount: null,
    openedAt: null,
    openedTx: null,
  };
  const extra = { outcome, paid: formatUint(a.paid), owed: formatUint(a.owed) };
  await j.emit(context.webhooks?.creditDispute(event, "cycle.credit_dispute_resolved", d, extra, j.now));
  context.creditDisputes?.creditDisputeApplied(outcome);
}

/**
 * A removed guarantee's amount is owed back by its recipient: locked on its collateral until its claim returns
 * it or `recoverDeduction` takes it (docs/clearing.md "Deductions are recovered"; what leaves the Vault is
 * Vault.DefaultCovered's).
 */
async function applyCreditDeducted(
  j: JournaledTx,
  event: DecodedEvent<"ClearingHouse.CreditDeducted">,
): Promise<void> {
  const a = event.args;
  await j.adjustCollateral(a.recipient, a.asset, { locked: a.amount });
}

/** The deduction came back (by the recipient's claim or from its collateral): its lock is lifted. */
async function applyDeductionRecovered(
  j: JournaledTx,
  event: DecodedEvent<"ClearingHouse.DeductionRecovered">,
): Promise<void> {
  const a = event.args;
  await j.adjustCollateral(a.recipient, a.asset, { locked: -a.amount });
}

const DISPUTE_OUTCOMES = ["NONE", "OPEN", "UPHELD", "VOIDED", "REMOVED", "DISMISSED"] as const;

/** The debtor disputed one position of its tree: the debt can be neither paid nor covered until answered. */
async function applyGuaranteeDisputed(
  j: JournaledTx,
  event: DecodedEvent<"ClearingHouse.GuaranteeDisputed">,
  context: ApplyContext,
): Promise<void> {
  const a = event.args;
  const cycleId = Number(a.cycleId);
  const asset = a.asset;
  const debtor = a.debtor;
  const position = Number(a.index);
  await j.putDispute({
    cycleId,
    asset,
    debtor,
    position,
    status: "OPEN",
    guaranteeId: null,
    amount: null,
    openedTx: event.txHash,
    resolvedTx: null,
  });
  const debt = await j.tx.cycles.getCycleDebt(cycleId, asset, debtor);
  if (!debt) {
    // A net creditor disputing its outgoing tree (issue 25, item 5): no debt; the keeper answers it.
    context.logger.warn({ cycle_id: cycleId, asset, debtor, position }, "net creditor disputed a guarantee");
    return;
  }
  if (!["OPEN", "CHALLENGED", "ANSWERED"].includes(debt.status)) {
    context.logger.error(
      { cycle_id: cycleId, asset, debtor, position, status: debt.status },
      "GuaranteeDisputed for a debt Core holds as not open",
    );
    return;
  }
  await j.putDebt({ ...debt, status: "CHALLENGED", resolvedTx: null });
  context.logger.warn(
    { cycle_id: cycleId, asset, debtor, position, amount: debt.amount.toString() },
    "guarantee disputed",
  );
  const ref = { cycleId, asset, debtor, amount: debt.amount };
  await j.emit(
    context.webhooks?.challenge(event, "cycle.challenge_opened", ref, { position: String(position) }, j.now),
  );
}

/** A disputed position was answered: the dispute's outcome, then the debt's state (the last one closes it). */
async function applyDisputeResolved(
  j: JournaledTx,
  event: DecodedEvent<"ClearingHouse.DisputeResolved">,
  context: ApplyContext,
): Promise<void> {
  const a = event.args;
  const cycleId = Number(a.cycleId);
  const asset = a.asset;
  const debtor = a.debtor;
  const position = Number(a.index);
  const outcome = DISPUTE_OUTCOMES[Number(a.outcome)];
  const dispute = await j.tx.cycles.getCycleDispute(cycleId, asset, debtor, position);
  if (!dispute || outcome === "NONE" || outcome === "OPEN" || outcome === undefined) {
    context.logger.error(
      { cycle_id: cycleId, asset, debtor, position },
      "DisputeResolved for no open dispute",
    );
    return;
  }
  const guaranteeId = a.guaranteeId.toLowerCase();
  await j.putDispute({
    ...dispute,
    status: outcome,
    guaranteeId: /^0x0{64}$/.test(guaranteeId) ? null : guaranteeId,
    amount: a.amount,
    resolvedTx: event.txHash,
  });
  const debt = await settleDebtAfterDispute(j, event, context, cycleId, asset, debtor);
  if (outcome === "VOIDED" || outcome === "REMOVED") {
    context.logger.error(
      { cycle_id: cycleId, asset, debtor, position, outcome, amount: a.amount.toString() },
      "disputed guarantee taken off the debit",
    );
  }
  const ref = { cycleId, asset, debtor, amount: debt?.amount ?? 0n };
  const extra = {
    position: String(position),
    outcome: outcome.toLowerCase(),
    guarantee_id: /^0x0{64}$/.test(guaranteeId) ? null : guaranteeId,
    guarantee_amount: formatUint(a.amount),
  };
  await j.emit(context.webhooks?.challenge(event, "cycle.challenge_answered", ref, extra, j.now));
}

/**
 * An unproven or already-paid guarantee (or a debit above its revealed total) came off the debit: the
 * debtor owes that much less, its lock shrinks with it.
 */
async function applyDebitReduced(
  j: JournaledTx,
  event: DecodedEvent<"ClearingHouse.DebitReduced">,
  context: ApplyContext,
): Promise<void> {
  const a = event.args;
  const cycleId = Number(a.cycleId);
  const asset = a.asset;
  const debtor = a.debtor;
  const cut = a.amount;
  const debt = await j.tx.cycles.getCycleDebt(cycleId, asset, debtor);
  if (!debt) {
    // A net creditor's conceded position (nothing cut, its amount refunded from the bond) is expected.
    if (cut !== 0n)
      context.logger.error(
        { cycle_id: cycleId, asset, debtor },
        "DebitReduced for a debt Core does not hold",
      );
    return;
  }
  const amount = debt.amount > cut ? debt.amount - cut : 0n;
  await j.putDebt({ ...debt, amount });
  if (cut > 0n) await j.adjustCollateral(debtor, asset, { locked: -(debt.amount - amount) });
  await settleDebtAfterDispute(j, event, context, cycleId, asset, debtor);
}

/**
 * A disputed debt's state from its disputes: CHALLENGED while one is open; then VOIDED when nothing is
 * left owed (its netted guarantees are SETTLED), ANSWERED otherwise (payable and coverable again).
 */
async function settleDebtAfterDispute(
  j: JournaledTx,
  event: ChainLogRef,
  context: ApplyContext,
  cycleId: number,
  asset: string,
  debtor: string,
): Promise<CycleDebtRecord | null> {
  const debt = await j.tx.cycles.getCycleDebt(cycleId, asset, debtor);
  // ANSWERED too: within one answer the dispute closes (DisputeResolved) before its amount comes off
  // (DebitReduced), which may leave nothing owed.
  if (!debt || (debt.status !== "CHALLENGED" && debt.status !== "ANSWERED")) return debt;
  const open = await j.tx.cycles.listCycleDisputes({ cycleId, asset, debtor, status: "OPEN" });
  if (open.length > 0) return debt;
  if (debt.amount === 0n) {
    await j.putDebt({ ...debt, status: "VOIDED", resolvedTx: event.txHash });
    for (const g of await j.tx.guarantees.listGuarantees({
      cycleId,
      user: debtor,
      asset,
      states: ["NETTED"],
    })) {
      await context.transitions.apply(j, g.guaranteeId, { trigger: "debit_cleared" });
    }
    return { ...debt, status: "VOIDED" };
  }
  await j.putDebt({ ...debt, status: "ANSWERED", resolvedTx: null });
  return { ...debt, status: "ANSWERED" };
}

/**
 * After the payment deadline, a revealed tree's open disputes nobody proved were conceded at once (audit M-1;
 * `DebitReduced` came first with the amount): the open disputes are VOIDED, and the debt ANSWERED with what
 * answers proved. Nothing left owed: the chain follows with `DebitVoided`, which closes the debt.
 */
async function applyUnansweredConceded(
  j: JournaledTx,
  event: DecodedEvent<"ClearingHouse.UnansweredConceded">,
  context: ApplyContext,
): Promise<void> {
  const a = event.args;
  const cycleId = Number(a.cycleId);
  for (const dispute of await j.tx.cycles.listCycleDisputes({
    cycleId,
    asset: a.asset,
    debtor: a.debtor,
    status: "OPEN",
  })) {
    await j.putDispute({ ...dispute, status: "VOIDED", resolvedTx: event.txHash });
  }
  const debt = await j.tx.cycles.getCycleDebt(cycleId, a.asset, a.debtor);
  if (debt && debt.status === "CHALLENGED" && debt.amount > 0n)
    await settleDebtAfterDispute(j, event, context, cycleId, a.asset, a.debtor);
  context.logger.error(
    { cycle_id: cycleId, asset: a.asset, debtor: a.debtor, amount: a.amount.toString() },
    "unanswered positions conceded after the payment deadline: charged to the operator bond",
  );
}

/**
 * A dispute left unanswered voided a debit: the debtor owes nothing (its lock is released) and the
 * cycle's creditors were funded from the operator bond; its netted guarantees are SETTLED.
 */
async function applyDebitVoided(
  j: JournaledTx,
  event: DecodedEvent<"ClearingHouse.DebitVoided">,
  context: ApplyContext,
): Promise<void> {
  const a = event.args;
  const cycleId = Number(a.cycleId);
  const asset = a.asset;
  const debtor = a.debtor;
  const debt = await j.tx.cycles.getCycleDebt(cycleId, asset, debtor);
  if (!debt || debt.status !== "CHALLENGED") {
    context.logger.error(
      { cycle_id: cycleId, asset, debtor },
      "DebitVoided for a debt Core holds as not challenged",
    );
    return;
  }
  await j.putDebt({ ...debt, status: "VOIDED", resolvedTx: event.txHash });
  await j.adjustCollateral(debtor, asset, { locked: -debt.amount });
  for (const dispute of await j.tx.cycles.listCycleDisputes({ cycleId, asset, debtor, status: "OPEN" })) {
    await j.putDispute({ ...dispute, status: "VOIDED", resolvedTx: event.txHash });
  }
  for (const g of await j.tx.guarantees.listGuarantees({
    cycleId,
    user: debtor,
    asset,
    states: ["NETTED"],
  })) {
    await context.transitions.apply(j, g.guaranteeId, { trigger: "debit_voided" });
  }
  const ref = { cycleId, asset, debtor, amount: debt.amount };
  const extra = { from_bond: formatUint(a.fromBond) };
  await j.emit(context.webhooks?.challenge(event, "cycle.challenge_voided", ref, extra, j.now));
  context.logger.error(
    {
      cycle_id: cycleId,
      asset,
      debtor,
      amount: debt.amount.toString(),
      from_bond: a.fromBond.toString(),
    },
    "debit voided by an unanswered challenge: charged to the operator bond",
  );
}
