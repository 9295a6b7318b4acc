/**
 * A cycle's commit (`ClearingHouse.CycleCommitted`; docs/operator-async.md, "Event → state"): Core's own
 * plan, or a cycle Core did not plan committed with the operator key. Registered with the indexer by
 * chain/events.ts.
 */
import { getAddress } from "ethers";
import type { ApplyContext, EventHandlers } from "../chain/handlers";
import type { JournaledTx } from "../chain/journal";
import { type DecodedEvent, journaledArgsOf } from "../chain/typed-events";
import type { CycleRecord } from "../store";
import { nextState } from "../guarantees/transitions";
import { cycleCommitArgs, type CommitCycleArgsJson } from "./cycle-json";

type CommitEvent = DecodedEvent<"ClearingHouse.CycleCommitted">;

const ZERO_BYTES32 = "0x" + "00".repeat(32);

export function registerCommitHandlers(handlers: EventHandlers): void {
  handlers.on("ClearingHouse.CycleCommitted", applyCycleCommitted);
}

/**
 * A committed cycle of Core's plan: its guarantees leave their own locks; a payer who is a net debtor in the
 * asset now has the net debit locked instead (its guarantees are NETTED until the debit is resolved), every
 * other guarantee is SETTLED at once (net zero or net creditor: nothing left to pay). Any other commit is a
 * cycle Core did not plan ({@link applyForeignCycleCommitted}).
 */
async function applyCycleCommitted(j: JournaledTx, event: CommitEvent, context: ApplyContext): Promise<void> {
  const a = event.args;
  const cycleId = Number(a.cycleId);
  const cycle = await j.tx.cycles.getCycle(cycleId);
  const committed = await committedCycleData(j, event, cycleId);
  if (!cycle || !isCorePlan(cycle, committed)) {
    await applyForeignCycleCommitted(j, event, context, committed, cycle);
    return;
  }
  await j.updateCycle(cycle, {
    state: cycle.state === "FINALIZED" ? "FINALIZED" : "COMMITTED",
    committedBlock: event.blockNumber,
    committedAt: event.blockTimestamp,
    paymentDeadline: Number(a.paymentDeadline),
    defaultDeadline: Number(a.defaultDeadline),
  });
  await recordV2Nettings(j, event, committed);
  const args = cycleCommitArgs(cycle);
  const debtorKeys = new Set(args.debtors.map((d) => `${d.asset.toLowerCase()}:${d.debtor.toLowerCase()}`));
  // The plan reserved a key range (no cycle_id written then): its guarantees join the cycle now. A plan
  // from before key ranges assigned them at reservation (a no-op here); a rewind returns them to the pool.
  const joined: string[] = [];
  // Each guarantee leaves its own lock; the unlocks are summed per account and applied once each (a cycle
  // at the scheduler's cap is 100,000 guarantees over far fewer accounts). Summing first changes nothing:
  // the store clamps at zero, and successive decreases clamped one by one end where their sum clamped does.
  const unlocks = new AccountSums();
  for (const id of cycle.guaranteeIds) {
    const g = await j.tx.guarantees.getClearingGuarantee(id);
    if (!g) continue;
    const isDebtor = debtorKeys.has(`${g.asset.toLowerCase()}:${g.user.toLowerCase()}`);
    const previous = await context.transitions.apply(j, id, {
      trigger: "cycle_committed",
      facts: { payerIsDebtor: isDebtor },
    });
    if (previous === null) {
      context.logger.error(
        { guarantee_id: id, state: g.state, cycle_id: cycleId },
        "netted guarantee not payable",
      );
      continue;
    }
    unlocks.add(g.user, g.asset, g.amount);
    if (g.cycleId === null) joined.push(id);
    if (!isDebtor) {
      await j.emit(context.webhooks?.guaranteeSettled(event, g, cycleId, "net_position", j.now));
    }
  }
  for (const { user, asset, amount } of unlocks.values()) {
    await j.adjustCollateral(user, asset, { locked: -amount });
  }
  await j.assignCycle(joined, cycleId, null);
  for (const d of args.debtors) {
    const amount = d.amount;
    await j.putDebt({
      cycleId,
      asset: getAddress(d.asset),
      debtor: getAddress(d.debtor),
      amount,
      status: "OPEN",
      covered: null,
      resolvedTx: null,
    });
    await j.adjustCollateral(d.debtor, d.asset, { locked: amount });
  }
  const deadlines = { payment: Number(a.paymentDeadline), default: Number(a.defaultDeadline) };
  await j.emit(context.webhooks?.cycleCommitted(event, cycle, deadlines, args.debtors, j.now));
}

/** Amounts summed per (user, asset) account, keyed case-insensitively, in first-seen order. */
class AccountSums {
  private readonly sums = new Map<string, { user: string; asset: string; amount: bigint }>();

  add(user: string, asset: string, amount: bigint): void {
    const key = `${user.toLowerCase()}:${asset.toLowerCase()}`;
    const sum = this.sums.get(key);
    if (sum) sum.amount += amount;
    else this.sums.set(key, { user, asset, amount });
  }

  values(): IterableIterator<{ user: string; asset: string; amount: bigint }> {
    return this.sums.values();
  }
}

/** What one `commitCycle` transaction put on chain, read from its events (all in the same block and batch). */
interface CommittedCycleData {
  cycleId: number;
  root: string;
  /** From `CycleChallengeWindow` (null if the transaction did not emit one: not this ClearingHouse). */
  guaranteesRoot: string | null;
  debitsRoot: string | null;
  challengeDeadline: number | null;
  answerDeadline: number | null;
  totals: { asset: string; total: bigint }[];
  debtors: { asset: string; debtor: string; amount: bigint }[];
  /**
   * The V2 ids the commit marked netted in the Vault (`Vault.GuaranteeNetted`, emitted by `markNetted`
   * before the ClearingHouse's own logs), lower case, in log order. Ids the Vault skipped as already
   * consumed (`GuaranteeNettingSkipped`) are not among them.
   */
  nettedV2Ids: { guaranteeId: string; logIndex: number }[];
}

/**
 * The commit's data: `CycleCommitted` itself, and the `CycleAssetCommitted`, `NetDebitRecorded` and
 * `CycleChallengeWindow` logs the same transaction emitted before it. Those precede it in the same block,
 * so the indexer has journaled them already, in this very store transaction (a block is never split
 * between batches): the journal is where they are read back.
 */
async function committedCycleData(
  j: JournaledTx,
  event: CommitEvent,
  cycleId: number,
): Promise<CommittedCycleData> {
  const data: CommittedCycleData = {
    cycleId,
    root: event.args.root.toLowerCase(),
    guaranteesRoot: null,
    debitsRoot: null,
    challengeDeadline: null,
    answerDeadline: null,
    totals: [],
    debtors: [],
    nettedV2Ids: [],
  };
  const earlier = (await j.tx.chainJournal.listChainEventsAbove(event.blockNumber - 1))
    .filter((e) => e.txHash === event.txHash && e.logIndex < event.logIndex)
    .sort((x, y) => x.logIndex - y.logIndex);
  // GuaranteeNetted carries no cycle id: this commit's are those after an earlier commit of the same
  // transaction (a contract holding the operator role could commit twice in one call).
  const previousCommit = earlier
    .filter((e) => journaledArgsOf(e, "ClearingHouse.CycleCommitted") !== null)
    .reduce((max, e) => Math.max(max, e.logIndex), -1);
  for (const e of earlier) {
    const netted = journaledArgsOf(e, "Vault.GuaranteeNetted");
    if (netted && e.logIndex > previousCommit) {
      data.nettedV2Ids.push({ guaranteeId: netted.guaranteeId.toLowerCase(), logIndex: e.logIndex });
    }
  }
  const ofCycle = <T extends { cycleId: string }>(args: T | null): T | null =>
    args && Number(args.cycleId) === cycleId ? args : null;
  for (const e of earlier) {
    const total = ofCycle(journaledArgsOf(e, "ClearingHouse.CycleAssetCommitted"));
    const debit = ofCycle(journaledArgsOf(e, "ClearingHouse.NetDebitRecorded"));
    const window = ofCycle(journaledArgsOf(e, "ClearingHouse.CycleChallengeWindow"));
    if (total) {
      data.totals.push({ asset: getAddress(total.asset), total: BigInt(total.total) });
    } else if (debit) {
      data.debtors.push({
        asset: getAddress(debit.asset),
        debtor: getAddress(debit.debtor),
        amount: BigInt(debit.amount),
      });
    } else if (window) {
      data.guaranteesRoot = window.guaranteesRoot.toLowerCase();
      data.debitsRoot = window.debitsRoot.toLowerCase();
      data.challengeDeadline = Number(window.challengeDeadline);
      data.answerDeadline = Number(window.answerDeadline);
    }
  }
  return data;
}

/**
 * Whether the commit is exactly Core's plan of that id: same root, same guarantees and debits roots (what
 * Core answers disputes from) and the same debtors. Anything else (a fake guarantees root over a real position tree
 * included) is a cycle Core did not plan.
 */
function isCorePlan(cycle: CycleRecord, committed: CommittedCycleData): boolean {
  if (!cycle.plannedByCore) return false;
  const args = cycleCommitArgs(cycle);
  if (cycle.root.toLowerCase() !== committed.root) return false;
  if (committed.guaranteesRoot !== null && args.guaranteesRoot.toLowerCase() !== committed.guaranteesRoot) {
    return false;
  }
  if (committed.debitsRoot !== null && args.debitsRoot.toLowerCase() !== committed.debitsRoot) return false;
  const key = (d: { asset: string; debtor: string; amount: string | bigint }) =>
    `${d.asset.toLowerCase()}:${d.debtor.toLowerCase()}:${BigInt(d.amount)}`;
  const planned = args.debtors.map(key).sort();
  const onChain = committed.debtors.map(key).sort();
  return planned.length === onChain.length && planned.every((k, i) => k === onChain[i]);
}

/**
 * A cycle Core did not plan was committed with the operator key: a security event (the key was used outside
 * Core). Core indexes it anyway, from the chain's data, so its books match the chain: its debts enter the
 * books (locked like any net debit: capacity and withdrawals account for them), the keeper voids its
 * challenged debits at the answer deadline (Core holds no signatures that justify them) and covers its
 * defaults. A plan of Core's under the same id (the chain will refuse it) is dropped and its guarantees
 * return to the pool for Core's next cycle. Its creditors' claims need the attacker's tree: Core has none.
 */
async function applyForeignCycleCommitted(
  j: JournaledTx,
  event: CommitEvent,
  context: ApplyContext,
  committed: CommittedCycleData,
  replaced: CycleRecord | null,
): Promise<void> {
  const a = event.args;
  const cycleId = committed.cycleId;
  const debtors = committed.debtors.map((d) => ({
    asset: d.asset,
    debtor: d.debtor,
    amount: d.amount.toString(),
  }));
  const args: CommitCycleArgsJson = {
    cycleId: String(cycleId),
    root: committed.root,
    guaranteesRoot: committed.guaranteesRoot ?? ZERO_BYTES32,
    debitsRoot: committed.debitsRoot ?? ZERO_BYTES32,
    totals: committed.totals.map((t) => ({
      asset: t.asset,
      totalDebit: t.total.toString(),
      totalCredit: t.total.toString(),
    })),
    debtors,
    nettedV2Ids: committed.nettedV2Ids.map((n) => n.guaranteeId),
  };
  const record: CycleRecord = {
    cycleId,
    state: "COMMITTED",
    root: committed.root,
    treeDump: "null",
    args: JSON.stringify(args),
    guaranteeIds: [],
    cutoff: event.blockTimestamp,
    plannedAt: event.blockTimestamp,
    txHash: event.txHash,
    txNonce: null,
    rawTx: null,
    sentAt: null,
    committedBlock: event.blockNumber,
    committedAt: event.blockTimestamp,
    paymentDeadline: Number(a.paymentDeadline),
    defaultDeadline: Number(a.defaultDeadline),
    finalizedAt: null,
    challengeDeadline: committed.challengeDeadline,
    answerDeadline: committed.answerDeadline,
    vetoedAt: null,
    plannedByCore: false,
  };
  const dropped = replaced && (replaced.state === "PLANNED" || replaced.state === "SENT") ? replaced : null;
  if (dropped) await j.assignCycle(dropped.guaranteeIds, null, cycleId);
  await recordV2Nettings(j, event, committed);
  const booked = await bookForeignNettings(j, event, context, committed);
  record.guaranteeIds = booked.map((g) => g.guaranteeId);
  await j.putCycleRecord(record);
  for (const d of committed.debtors) {
    await j.putDebt({
      cycleId,
      asset: d.asset,
      debtor: d.debtor,
      amount: d.amount,
      status: "OPEN",
      covered: null,
      resolvedTx: null,
    });
    await j.adjustCollateral(d.debtor, d.asset, { locked: d.amount });
  }
  const netted = { all: args.nettedV2Ids, booked: record.guaranteeIds };
  await j.emit(
    context.webhooks?.cycleForeignCommit(event, record, args.guaranteesRoot, debtors, dropped, netted, j.now),
  );
  for (const g of booked) {
    if (g.state === "SETTLED") {
      await j.emit(context.webhooks?.guaranteeSettled(event, g, cycleId, "net_position", j.now));
    }
  }
  context.logger.error(
    {
      security_event: "operator_key_used_outside_core",
      cycle_id: cycleId,
      root: committed.root,
      guarantees_root: committed.guaranteesRoot,
      debtors: debtors.length,
      netted_v2_ids: args.nettedV2Ids.length,
      netted_core_guarantees: record.guaranteeIds,
      tx: event.txHash,
      replaced_plan: dropped ? dropped.root : null,
    },
    "a cycle Core did not plan was committed on chain with the operator key: indexed as foreign; " +
      "its challenged debits will be voided against the bond",
  );
}

/** Records the V2 ids the commit netted in the Vault (one row per `GuaranteeNetted`; journaled). */
async function recordV2Nettings(j: JournaledTx, event: CommitEvent, committed: CommittedCycleData) {
  for (const { guaranteeId, logIndex } of committed.nettedV2Ids) {
    await j.putV2Netting({
      guaranteeId,
      cycleId: committed.cycleId,
      txHash: event.txHash,
      logIndex,
      blockNumber: event.blockNumber,
    });
  }
}

/**
 * Core's own guarantees among the V2 ids a foreign commit netted: consumed on chain, they can no longer be
 * remunerated, so Core's books treat them as netted by that cycle, as for a cycle of Core's: each leaves its
 * own lock and joins the foreign cycle (`cycle_id`), NETTED when its payer is a net debtor of that asset in
 * the cycle (settled with the debit: paid, covered or voided), else SETTLED at once. A veto of the foreign
 * cycle returns them to FINALIZED_PAYABLE (applyCycleVetoed), and Core's next cycle nets them (the Vault
 * skips the consumed id; the payer's debit pays the seller). Only unresolved guarantees move
 * (PENDING_VALIDATION, FINALIZED_PAYABLE, DISPUTED); any other is logged. Returns the moved guarantees as
 * they are now.
 */
async function bookForeignNettings(
  j: JournaledTx,
  event: CommitEvent,
  context: ApplyContext,
  committed: CommittedCycleData,
) {
  const cycleId = committed.cycleId;
  const debtorKeys = new Set(
    committed.debtors.map((d) => `${d.asset.toLowerCase()}:${d.debtor.toLowerCase()}`),
  );
  const booked = [];
  for (const { guaranteeId } of committed.nettedV2Ids) {
    const g = await j.tx.guarantees.getClearingGuarantee(guaranteeId);
    if (!g) continue; // not a guarantee Core issued
    const isDebtor = debtorKeys.has(`${g.asset.toLowerCase()}:${g.user.toLowerCase()}`);
    const facts = { payerIsDebtor: isDebtor };
    const previous = await context.transitions.apply(j, g.guaranteeId, { trigger: "foreign_netted", facts });
    if (previous === null) {
      context.logger.error(
        { guarantee_id: g.guaranteeId, state: g.state, cycle_id: cycleId, tx: event.txHash },
        "a cycle Core did not plan netted a guarantee Core holds as resolved",
      );
      continue;
    }
    await j.adjustCollateral(g.user, g.asset, { locked: -g.amount });
    await j.assignCycle([g.guaranteeId], cycleId, g.cycleId);
    booked.push({ ...g, state: nextState(previous, "foreign_netted", facts)!, cycleId });
  }
  return booked;
}
