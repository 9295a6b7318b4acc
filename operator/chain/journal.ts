/**
 * Applying chain events with an undo journal. Every change an event makes goes through a
 * {@link JournaledTx}, which performs it on the store transaction and records its inverse; the
 * inverses are stored with the event (chain_events.undo) and replayed newest-first when a reorg
 * rewinds the event. Inverses are *deltas* for collateral (deposited, locked), not before-images:
 * issuance locks collateral concurrently, and a rewind must not wipe those locks out.
 */
import type {
  CollateralDelta,
  CycleDebtRecord,
  CycleDisputeRecord,
  CycleRecord,
  GuaranteeState,
  OutboxEvent,
  ReserveRecord,
  Repositories,
  V2NettingRecord,
  VerdictPin,
  WithdrawalRecord,
} from "../store";
import type { TransitionStore } from "../guarantees/transitions";

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** One inverse operation (JSON-safe: bigints as decimal strings). */
export type UndoOp =
  | { op: "collateral"; user: string; asset: string; deposited: string; locked: string }
  | { op: "pending"; user: string; asset: string; value: string }
  | { op: "state"; guaranteeId: string; from: GuaranteeState; to: GuaranteeState }
  | { op: "withdrawal"; withdrawalId: number; before: Json | null }
  | { op: "cycle"; cycleId: number; before: Json }
  | { op: "cycle_record"; cycleId: number; before: Json | null }
  | { op: "debt"; cycleId: number; asset: string; debtor: string; before: Json | null }
  | { op: "dispute"; cycleId: number; asset: string; debtor: string; position: number; before: Json | null }
  | { op: "claim"; cycleId: number; asset: string; participant: string }
  | { op: "assign"; guaranteeIds: string[]; cycleId: number | null }
  | { op: "response"; txHash: string; logIndex: number }
  | { op: "verdict_pin"; guaranteeId: string; before: VerdictPin | null }
  | { op: "reserve"; guaranteeId: string; before: Json | null }
  | { op: "v2_netting"; guaranteeId: string; before: Json | null }
  | { op: "webhook"; eventId: string }
  | { op: "operator_state"; key: string; before: string | null };

/** The fields of a cycle that chain events change (what a rewind restores). */
const CHAIN_CYCLE_FIELDS = [
  "state",
  "committedBlock",
  "committedAt",
  "paymentDeadline",
  "defaultDeadline",
  "finalizedAt",
  "challengeDeadline",
  "answerDeadline",
  "vetoedAt",
] as const satisfies readonly (keyof CycleRecord)[];
type ChainCycleFields = Pick<CycleRecord, (typeof CHAIN_CYCLE_FIELDS)[number]>;

function withdrawalToJson(w: WithdrawalRecord): Json {
  return {
    ...w,
    amount: w.amount.toString(),
    paid: w.paid === null ? null : w.paid.toString(),
  } as unknown as Json;
}

function withdrawalFromJson(json: Json): WithdrawalRecord {
  const w = json as unknown as Record<string, unknown>;
  return {
    ...(w as unknown as WithdrawalRecord),
    amount: BigInt(w.amount as string),
    paid: w.paid === null ? null : BigInt(w.paid as string),
  };
}

function debtToJson(d: CycleDebtRecord): Json {
  return {
    ...d,
    amount: d.amount.toString(),
    covered: d.covered === null ? null : d.covered.toString(),
  } as unknown as Json;
}

function debtFromJson(json: Json): CycleDebtRecord {
  const d = json as unknown as Record<string, unknown>;
  return {
    ...(d as unknown as CycleDebtRecord),
    amount: BigInt(d.amount as string),
    covered: d.covered === null ? null : BigInt(d.covered as string),
  };
}

function disputeToJson(d: CycleDisputeRecord): Json {
  return { ...d, amount: d.amount === null ? null : d.amount.toString() } as unknown as Json;
}

function disputeFromJson(json: Json): CycleDisputeRecord {
  const d = json as unknown as Record<string, unknown>;
  return {
    ...(d as unknown as CycleDisputeRecord),
    amount: d.amount === null ? null : BigInt(d.amount as string),
  };
}

function reserveToJson(r: ReserveRecord): Json {
  return { ...r, amount: r.amount.toString() } as unknown as Json;
}

function reserveFromJson(json: Json): ReserveRecord {
  const r = json as unknown as Record<string, unknown>;
  return { ...(r as unknown as ReserveRecord), amount: BigInt(r.amount as string) };
}

/** The areas the indexer's event handlers read and write (through {@link JournaledTx}'s `tx`). */
export type JournalArea =
  | "collateral"
  | "reserves"
  | "guarantees"
  | "cycles"
  | "chainJournal"
  | "webhooks"
  | "operatorState";

/** Store changes with their inverses recorded; `undo` is what the event's journal row keeps. */
export class JournaledTx implements TransitionStore {
  readonly undo: UndoOp[] = [];

  /** The event types any subscription wants, read once per journaled event (one store transaction). */
  private subscribedTypes: Promise<ReadonlySet<string>> | undefined;

  constructor(
    readonly tx: Pick<Repositories, JournalArea>,
    readonly now: number,
  ) {}

  private wanted(): Promise<ReadonlySet<string>> {
    this.subscribedTypes ??= this.tx.webhooks
      .listWebhookSubscriptions()
      .then((subscriptions) => new Set(subscriptions.flatMap((s) => s.eventTypes)));
    return this.subscribedTypes;
  }

  /** Adds the deltas (clamped at zero by the store); records exactly what was applied. */
  async adjustCollateral(user: string, asset: string, delta: CollateralDelta): Promise<void> {
    const { applied } = await this.tx.collateral.adjustCollateral(user, asset, delta, this.now);
    if (applied.deposited === 0n && applied.locked === 0n) return;
    this.undo.push({
      op: "collateral",
      user,
      asset,
      deposited: (-applied.deposited).toString(),
      locked: (-applied.locked).toString(),
    });
  }

  async setPendingWithdrawal(user: string, asset: string, amount: bigint): Promise<void> {
    const before = await this.tx.collateral.getCollateral(user, asset);
    await this.tx.collateral.setPendingWithdrawal(user, asset, amount, this.now);
    this.undo.push({ op: "pending", user, asset, value: before.pendingWithdrawal.toString() });
  }

  /**
   * Moves a guarantee from one of `from` to `to`; returns its previous state, or null if it was elsewhere.
   * Handlers do not call it: they ask `context.transitions` (guarantees/transitions.ts), which checks the
   * move against the transition table and calls this ({@link TransitionStore}).
   */
  async transitionGuarantee(
    guaranteeId: string,
    from: readonly GuaranteeState[],
    to: GuaranteeState,
  ): Promise<GuaranteeState | null> {
    const before = await this.tx.guarantees.transitionGuarantee(guaranteeId, from, to, this.now);
    if (!before) return null;
    this.undo.push({ op: "state", guaranteeId: before.guaranteeId, from: before.state, to });
    return before.state;
  }

  /** The guarantee's state now, in this transaction (null: unknown id). */
  async stateOf(guaranteeId: string): Promise<GuaranteeState | null> {
    return (await this.tx.guarantees.getClearingGuarantee(guaranteeId))?.state ?? null;
  }

  async putWithdrawal(record: WithdrawalRecord): Promise<void> {
    const before = await this.tx.collateral.getWithdrawal(record.withdrawalId);
    await this.tx.collateral.putWithdrawal(record);
    this.undo.push({
      op: "withdrawal",
      withdrawalId: record.withdrawalId,
      before: before ? withdrawalToJson(before) : null,
    });
  }

  async updateCycle(cycle: CycleRecord, changes: Partial<ChainCycleFields>): Promise<void> {
    const before: Record<string, Json> = {};
    for (const field of CHAIN_CYCLE_FIELDS) before[field] = cycle[field];
    await this.tx.cycles.updateCycle(cycle.cycleId, changes);
    this.undo.push({ op: "cycle", cycleId: cycle.cycleId, before });
  }

  /**
   * Stores a whole cycle record Core built from chain events (a cycle it did not plan), replacing the
   * record of that id if there is one (Core's own plan the chain never took); the rewind restores it.
   */
  async putCycleRecord(record: CycleRecord): Promise<void> {
    const before = await this.tx.cycles.getCycle(record.cycleId);
    if (before) await this.tx.cycles.deleteCycle(record.cycleId);
    await this.tx.cycles.insertCycle(record);
    this.undo.push({
      op: "cycle_record",
      cycleId: record.cycleId,
      before: before ? (before as unknown as Json) : null,
    });
  }

  /** Registers (or replaces) a reserve; the rewind restores what was there before (usually nothing). */
  async putReserve(record: ReserveRecord): Promise<void> {
    const before = await this.tx.reserves.getReserve(record.guaranteeId);
    await this.tx.reserves.putReserve(record);
    this.undo.push({
      op: "reserve",
      guaranteeId: record.guaranteeId,
      before: before ? reserveToJson(before) : null,
    });
  }

  /** Removes a reserve; false (nothing recorded) if there was none. */
  async deleteReserve(guaranteeId: string): Promise<boolean> {
    const before = await this.tx.reserves.getReserve(guaranteeId);
    if (!before) return false;
    await this.tx.reserves.deleteReserve(guaranteeId);
    this.undo.push({ op: "reserve", guaranteeId, before: reserveToJson(before) });
    return true;
  }

  /** Records a V2 id a commit netted; the rewind restores what was there before (usually nothing). */
  /** Sets an `operator_state` value (null deletes it); a rewind restores the one before. */
  async setOperatorState(key: string, value: string | null): Promise<void> {
    const before = await this.tx.operatorState.getOperatorState(key);
    await this.tx.operatorState.setOperatorState(key, value);
    this.undo.push({ op: "operator_state", key, before });
  }

  async putV2Netting(record: V2NettingRecord): Promise<void> {
    const before = await this.tx.cycles.getV2Netting(record.guaranteeId);
    await this.tx.cycles.putV2Netting(record);
    this.undo.push({
      op: "v2_netting",
      guaranteeId: record.guaranteeId,
      before: before ? (before as unknown as Json) : null,
    });
  }

  async putDebt(record: CycleDebtRecord): Promise<void> {
    const before = await this.tx.cycles.getCycleDebt(record.cycleId, record.asset, record.debtor);
    await this.tx.cycles.putCycleDebt(record);
    this.undo.push({
      op: "debt",
      cycleId: record.cycleId,
      asset: record.asset,
      debtor: record.debtor,
      before: before ? debtToJson(before) : null,
    });
  }

  /** Records a disputed position; the rewind restores what was there before (nothing, or the open dispute). */
  async putDispute(record: CycleDisputeRecord): Promise<void> {
    const { cycleId, asset, debtor, position } = record;
    const before = await this.tx.cycles.getCycleDispute(cycleId, asset, debtor, position);
    await this.tx.cycles.putCycleDispute(record);
    this.undo.push({
      op: "dispute",
      cycleId,
      asset,
      debtor,
      position,
      before: before ? disputeToJson(before) : null,
    });
  }

  /** Moves guarantees out of (`cycleId` null) or into a cycle; the rewind puts them back in `from`. */
  async assignCycle(
    guaranteeIds: readonly string[],
    cycleId: number | null,
    from: number | null,
  ): Promise<void> {
    if (guaranteeIds.length === 0) return;
    await this.tx.guarantees.assignGuaranteesToCycle(guaranteeIds, cycleId);
    this.undo.push({ op: "assign", guaranteeIds: [...guaranteeIds], cycleId: from });
  }

  async putClaim(cycleId: number, asset: string, participant: string, amount: bigint, txHash: string) {
    await this.tx.cycles.putCycleClaim({ cycleId, asset, participant, amount, txHash });
    this.undo.push({ op: "claim", cycleId, asset, participant });
  }

  /**
   * Puts a webhook event in the outbox; a rewind retracts its undelivered deliveries (docs/webhooks.md).
   * An event of a type no subscription wants is neither stored nor journaled, nor built (a lazy event's id
   * and payload are computed on first read): a cycle's commit announces up to 100,000 settled guarantees.
   */
  async emit(event: OutboxEvent | undefined): Promise<void> {
    if (!event) return;
    const wanted = await this.wanted();
    if (!wanted.has(event.type) && !wanted.has("*")) return;
    await this.tx.webhooks.insertWebhookEvent(event, this.now);
    this.undo.push({ op: "webhook", eventId: event.id });
  }

  async recordValidationResponse(
    record: Parameters<Repositories["guarantees"]["insertValidationResponse"]>[0],
  ) {
    await this.tx.guarantees.insertValidationResponse(record);
    this.undo.push({ op: "response", txHash: record.txHash, logIndex: record.logIndex });
  }

  /**
   * Records that the Vault pinned `guaranteeId`'s verdict (`VerdictPinned`); false for an unknown guarantee
   * or a pin of another policy under its id (`requestHash` not the one Core derived from its policy: anyone
   * may pin a made-up policy, which pins nothing for the real one). A payable guarantee waiting for its pin
   * enters the payable pool (store: setVerdictPin).
   */
  async setVerdictPinned(guaranteeId: string, requestHash: string): Promise<boolean> {
    const g = await this.tx.guarantees.getClearingGuarantee(guaranteeId);
    if (g === null) return false;
    if (
      g.validationRequestHash !== null &&
      g.validationRequestHash.toLowerCase() !== requestHash.toLowerCase()
    )
      return false;
    const before = await this.tx.guarantees.verdictPinOf(guaranteeId);
    await this.tx.guarantees.setVerdictPin(guaranteeId, "pinned");
    this.undo.push({ op: "verdict_pin", guaranteeId, before });
    return true;
  }
}

/** Replays the inverses of one event, newest first. */
export async function applyUndo(
  tx: Pick<Repositories, JournalArea>,
  undo: readonly UndoOp[],
  now: number,
): Promise<void> {
  for (const step of [...undo].reverse()) {
    switch (step.op) {
      case "collateral":
        await tx.collateral.adjustCollateral(
          step.user,
          step.asset,
          { deposited: BigInt(step.deposited), locked: BigInt(step.locked) },
          now,
        );
        break;
      case "pending":
        await tx.collateral.setPendingWithdrawal(step.user, step.asset, BigInt(step.value), now);
        break;
      case "state":
        // The rewind restores the state the journal recorded: it undoes a move of the transition table
        // (guarantees/transitions.ts) and is not one itself.
        await tx.guarantees.transitionGuarantee(step.guaranteeId, [step.to], step.from, now);
        break;
      case "withdrawal":
        if (step.before === null) await tx.collateral.deleteWithdrawal(step.withdrawalId);
        else await tx.collateral.putWithdrawal(withdrawalFromJson(step.before));
        break;
      case "cycle":
        await tx.cycles.updateCycle(step.cycleId, step.before as unknown as Partial<CycleRecord>);
        break;
      case "cycle_record":
        await tx.cycles.deleteCycle(step.cycleId);
        if (step.before !== null) await tx.cycles.insertCycle(step.before as unknown as CycleRecord);
        break;
      case "debt":
        if (step.before === null) await tx.cycles.deleteCycleDebt(step.cycleId, step.asset, step.debtor);
        else await tx.cycles.putCycleDebt(debtFromJson(step.before));
        break;
      case "dispute":
        if (step.before === null)
          await tx.cycles.deleteCycleDispute(step.cycleId, step.asset, step.debtor, step.position);
        else await tx.cycles.putCycleDispute(disputeFromJson(step.before));
        break;
      case "claim":
        await tx.cycles.deleteCycleClaim(step.cycleId, step.asset, step.participant);
        break;
      case "assign":
        await tx.guarantees.assignGuaranteesToCycle(step.guaranteeIds, step.cycleId);
        break;
      case "response":
        await tx.guarantees.deleteValidationResponse(step.txHash, step.logIndex);
        break;
      case "verdict_pin":
        await tx.guarantees.setVerdictPin(step.guaranteeId, step.before);
        break;
      case "webhook":
        await tx.webhooks.retractWebhookEvent(step.eventId, now);
        break;
      case "reserve":
        if (step.before === null) await tx.reserves.deleteReserve(step.guaranteeId);
        else await tx.reserves.putReserve(reserveFromJson(step.before));
        break;
      case "v2_netting":
        if (step.before === null) await tx.cycles.deleteV2Netting(step.guaranteeId);
        else await tx.cycles.putV2Netting(step.before as unknown as V2NettingRecord);
        break;
      case "operator_state":
        await tx.operatorState.setOperatorState(step.key, step.before);
        break;
    }
  }
}
