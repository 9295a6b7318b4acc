/**
 * Decoding the logs Core indexes into plain events, and the event → state mapping
 * (docs/operator-async.md, "Event → state"). Each handler changes the store only through a
 * {@link JournaledTx}, so a reorg can rewind it exactly.
 */
import { getAddress, type Interface, type Log } from "ethers";
import { formatUint } from "../../sdk/wire";
import type { DeploymentInfo } from "../deployment";
import type { Logger } from "../logger";
import { cycleCommitArgs, type CommitCycleArgsJson } from "../clearing/cycle-json";
import {
  type CycleDebtRecord,
  type CycleRecord,
  PRE_CYCLE_LOCKED_STATES,
  type WithdrawalRecord,
} from "../store";
import { clearingHouseInterface, validationRegistryInterface, vaultInterface } from "./abi";
import type { ChainEvent, ContractName, EventValue } from "./event-types";
import type { JournaledTx } from "./journal";
import type { ChainWebhooks } from "../webhooks/events";

// Their own module so that webhooks/ can read events without importing the handlers (no cycle).
export type { ChainEvent, ContractName, EventValue } from "./event-types";

// Defined with the store (collateral capacity reads it too); re-exported for the event handlers' callers.
export { PRE_CYCLE_LOCKED_STATES };

/** Timings as the Vault holds them (seconds). */
export interface VaultTimings {
  cycleLength: number;
  commitDelay: number;
  challengeWindow: number;
  paymentWindow: number;
  defaultWindow: number;
  withdrawalGracePeriod: number;
  confirmationLag: number;
}

/** A `setTimings` change waiting out the Vault's timelock (`TimingsScheduled`). */
export interface ScheduledTimings {
  /** The timelock's operation id (lower-case hex). */
  operation: string;
  /** Chain time from which a second `setTimings` can execute it. */
  readyAt: number;
  timings: VaultTimings;
}

function plain(value: unknown): EventValue {
  if (typeof value === "bigint" || typeof value === "boolean" || typeof value === "number") return value;
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    const result = value as unknown as { toObject?: () => Record<string, unknown> };
    try {
      const object = result.toObject?.();
      if (object && Object.keys(object).length > 0 && !Object.keys(object).every((k) => /^_?\d+$/.test(k))) {
        return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, plain(v)]));
      }
    } catch {
      // A Result with unnamed members: fall through to an array.
    }
    return value.map(plain);
  }
  return String(value);
}

/** JSON form of event arguments (bigints as decimal strings) for the journal. */
export function jsonArgs(args: Record<string, EventValue>): Record<string, unknown> {
  const convert = (value: EventValue): unknown => {
    if (typeof value === "bigint") return value.toString();
    if (Array.isArray(value)) return value.map(convert);
    if (typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, convert(v)]));
    return value;
  };
  return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, convert(v)]));
}

export class EventDecoder {
  private readonly byAddress: Map<string, { contract: ContractName; iface: Interface }>;

  constructor(deployment: Pick<DeploymentInfo, "vault" | "clearingHouse" | "validationRegistry">) {
    this.byAddress = new Map([
      [deployment.vault.toLowerCase(), { contract: "Vault", iface: vaultInterface }],
      [deployment.clearingHouse.toLowerCase(), { contract: "ClearingHouse", iface: clearingHouseInterface }],
      [
        deployment.validationRegistry.toLowerCase(),
        { contract: "ValidationRegistry", iface: validationRegistryInterface },
      ],
    ]);
  }

  get addresses(): string[] {
    return [...this.byAddress.keys()].map((a) => getAddress(a));
  }

  /** The event of `log`, or null for a log Core does not follow (e.g. role changes). */
  decode(log: Log, blockTimestamp: number): ChainEvent | null {
    const source = this.byAddress.get(log.address.toLowerCase());
    if (!source) return null;
    const parsed = source.iface.parseLog({ topics: [...log.topics], data: log.data });
    if (!parsed) return null;
    const args: Record<string, EventValue> = {};
    parsed.fragment.inputs.forEach((input, i) => {
      args[input.name] = plain(parsed.args[i]);
    });
    return {
      contract: source.contract,
      name: parsed.name,
      args,
      txHash: log.transactionHash.toLowerCase(),
      logIndex: log.index,
      blockNumber: log.blockNumber,
      blockHash: log.blockHash.toLowerCase(),
      blockTimestamp,
    };
  }
}

export interface ApplyContext {
  logger: Logger;
  /** Called when the Vault's timings change (issuance caps V2 deadlines with them). */
  onTimings?: (timings: VaultTimings) => void;
  /** Called when a timings change is scheduled (`TimingsScheduled`): the V2 deadline cap counts it until it executes. */
  onTimingsScheduled?: (change: ScheduledTimings) => void;
  /** Called when the Vault's admin cancels a timelocked operation (`OperationCancelled`). */
  onOperationCancelled?: (operation: string) => void;
  /** Builds the webhook events applied logs announce (written to the outbox with the change). */
  webhooks?: ChainWebhooks;
}

/**
 * Names of the events read back from the journal, taken from the typechain interfaces (a renamed event
 * fails the type check instead of silently matching nothing).
 */
const GUARANTEE_NETTED = vaultInterface.getEvent("GuaranteeNetted").name;
const CYCLE_COMMITTED = clearingHouseInterface.getEvent("CycleCommitted").name;

const big = (value: EventValue): bigint => value as bigint;
const ZERO_BYTES32 = "0x" + "00".repeat(32);
const address = (value: EventValue): string => getAddress(value as string);
const num = (value: EventValue): number => Number(value as bigint);

/** A `Timings` tuple of an event (TimingsUpdated, TimingsScheduled). */
function timingsOf(value: EventValue): VaultTimings {
  const t = value as Record<string, EventValue>;
  return {
    cycleLength: num(t.cycleLength),
    commitDelay: num(t.commitDelay),
    challengeWindow: num(t.challengeWindow),
    paymentWindow: num(t.paymentWindow),
    defaultWindow: num(t.defaultWindow),
    withdrawalGracePeriod: num(t.withdrawalGracePeriod),
    confirmationLag: num(t.confirmationLag),
  };
}

/** Applies one event's effects through `j` (event → state table in docs/operator-async.md). */
export async function applyEvent(j: JournaledTx, event: ChainEvent, context: ApplyContext): Promise<void> {
  const a = event.args;
  const key = `${event.contract}.${event.name}`;
  switch (key) {
    case "Vault.Deposited": {
      const [user, asset, amount] = [address(a.user), address(a.asset), big(a.amount)];
      await j.adjustCollateral(user, asset, { deposited: amount });
      await j.emit(context.webhooks?.deposited(event, user, asset, amount, j.now));
      return;
    }
    case "Vault.WithdrawalRequested": {
      const user = address(a.user);
      const asset = address(a.asset);
      const withdrawal: WithdrawalRecord = {
        withdrawalId: num(a.withdrawalId),
        user,
        asset,
        amount: big(a.amount),
        finalizableAt: num(a.finalizableAt),
        requestedAt: event.blockTimestamp,
        state: "PENDING",
        paid: null,
        closedAt: null,
      };
      await j.putWithdrawal(withdrawal);
      await j.setPendingWithdrawal(user, asset, big(a.amount));
      await j.emit(context.webhooks?.withdrawal(event, "withdrawal.requested", withdrawal, j.now));
      return;
    }
    case "Vault.WithdrawalCancelled":
    case "Vault.WithdrawalFinalized": {
      const user = address(a.user);
      const asset = address(a.asset);
      const id = num(a.withdrawalId);
      const finalized = event.name === "WithdrawalFinalized";
      const existing = await j.tx.getWithdrawal(id);
      const withdrawal: WithdrawalRecord = {
        withdrawalId: id,
        user,
        asset,
        amount: existing?.amount ?? (finalized ? big(a.requested) : 0n),
        finalizableAt: existing?.finalizableAt ?? 0,
        requestedAt: existing?.requestedAt ?? 0,
        state: finalized ? "FINALIZED" : "CANCELLED",
        paid: finalized ? big(a.paid) : null,
        closedAt: event.blockTimestamp,
      };
      await j.putWithdrawal(withdrawal);
      if (finalized) await j.adjustCollateral(user, asset, { deposited: -big(a.paid) });
      await j.setPendingWithdrawal(user, asset, 0n);
      const type = finalized ? "withdrawal.finalized" : "withdrawal.cancelled";
      await j.emit(context.webhooks?.withdrawal(event, type, withdrawal, j.now));
      return;
    }
    case "Vault.DefaultCovered":
      // What left the Vault (the ClearingHouse's event carries what arrived there).
      await j.adjustCollateral(address(a.user), address(a.asset), { deposited: -big(a.covered) });
      return;
    case "Vault.GuaranteeRemunerated":
      await applyRemunerated(j, event, context);
      return;
    case "Vault.ReserveRegistered":
    case "Vault.V1ReserveRegistered":
    case "Vault.ReserveReleased":
      await applyReserve(j, event, context);
      return;
    case "Vault.TimingsUpdated":
      context.onTimings?.(timingsOf(a.timings));
      return;
    case "Vault.TimingsScheduled":
      // CONFIG_ROLE scheduled new timings (timelocked, docs/contracts.md "Timelocked grants and changes"):
      // they are not in force before a second setTimings executes them (TimingsUpdated), but V2 deadlines
      // issued meanwhile must hold under them too (the cap counts them: timings.ts). A shorter window from
      // an unknown hand is the first sign of an attack, and Core's own settings (confirmations, cycle
      // length) may need to follow: someone must look now, while the admin can still cancel.
      context.onTimingsScheduled?.({
        operation: (a.operation as string).toLowerCase(),
        readyAt: num(a.readyAt),
        timings: timingsOf(a.timings),
      });
      context.logger.error(
        {
          event: "timings_scheduled",
          operation: a.operation,
          ready_at: num(a.readyAt),
          timings: timingsOf(a.timings),
          tx_hash: event.txHash,
        },
        "Vault timings change scheduled: it takes effect when executed after readyAt unless the admin cancels it",
      );
      return;
    case "Vault.OperationCancelled":
      context.onOperationCancelled?.((a.operation as string).toLowerCase());
      return;
    case "ClearingHouse.CycleCommitted":
      await applyCycleCommitted(j, event, context);
      return;
    case "ClearingHouse.NetDebitPaid":
    case "ClearingHouse.DefaultCovered":
      await applyDebtResolved(j, event, context);
      return;
    case "ClearingHouse.NetCreditClaimed":
      await j.putClaim(num(a.cycleId), address(a.asset), address(a.participant), big(a.amount), event.txHash);
      return;
    case "ClearingHouse.CycleChallengeWindow": {
      const cycle = await j.tx.getCycle(num(a.cycleId));
      if (cycle) {
        await j.updateCycle(cycle, {
          challengeDeadline: num(a.challengeDeadline),
          answerDeadline: num(a.answerDeadline),
        });
      }
      return;
    }
    case "ClearingHouse.GuaranteeDisputed":
      await applyGuaranteeDisputed(j, event, context);
      return;
    case "ClearingHouse.DisputeResolved":
      await applyDisputeResolved(j, event, context);
      return;
    case "ClearingHouse.DebitReduced":
      await applyDebitReduced(j, event, context);
      return;
    case "ClearingHouse.DebitVoided":
      await applyDebitVoided(j, event, context);
      return;
    case "ClearingHouse.CycleVetoed":
      await applyCycleVetoed(j, event, context);
      return;
    case "ClearingHouse.VetoedDebtReleased":
      await applyVetoedDebtReleased(j, event, context);
      return;
    case "ClearingHouse.DoubleListingProven":
      // Core never lists a guarantee of a committed, unvetoed cycle again (the scheduler only takes
      // unassigned payable guarantees): a proof means the operator key committed a cycle Core did not
      // plan, or a bug. Nothing in Core's books changes (the remedy is a refund from the bond; the
      // cycle's debts stand as committed), but someone must look now.
      context.logger.error(
        {
          guarantee_id: a.guaranteeId,
          payer: address(a.payer),
          asset: address(a.asset),
          first_cycle_id: num(a.firstCycleId),
          later_cycle_id: num(a.laterCycleId),
          amount: big(a.amount).toString(),
        },
        "double listing proven on chain: the payer is refunded from the operator bond",
      );
      return;
    case "ClearingHouse.CycleFinalized": {
      const cycle = await j.tx.getCycle(num(a.cycleId));
      if (cycle) await j.updateCycle(cycle, { state: "FINALIZED", finalizedAt: event.blockTimestamp });
      return;
    }
    case "ValidationRegistry.ValidationResponse":
      await j.recordValidationResponse({
        txHash: event.txHash,
        logIndex: event.logIndex,
        requestHash: a.requestHash as string,
        validator: address(a.validatorAddress),
        agentId: big(a.agentId),
        response: num(a.response),
        tag: a.tag as string,
        blockNumber: event.blockNumber,
        blockTimestamp: event.blockTimestamp,
      });
      return;
    default:
      return; // other events of these contracts (roles, allow-lists, obligations) change nothing in Core
  }
}

/**
 * A seller's reserve (docs/operator-async.md, "Sellers' reserves"), V2 or V1 (`V1ReserveRegistered`, kept
 * apart: it never expires, and the scheduler lists its id as netted): registered → Core holds it as the
 * Vault does until ReserveReleased (also emitted by a remuneration paid out of it, before
 * GuaranteeRemunerated, which then reduces the deposit once). Capacity counts it beyond Core's own lock
 * of the guarantee only (operator/guarantees/capacity.ts).
 */
async function applyReserve(j: JournaledTx, event: ChainEvent, context: ApplyContext): Promise<void> {
  const a = event.args;
  const id = (a.guaranteeId as string).toLowerCase();
  if (event.name === "ReserveRegistered" || event.name === "V1ReserveRegistered") {
    const v1 = event.name === "V1ReserveRegistered";
    await j.putReserve({
      guaranteeId: id,
      user: address(a.user),
      asset: address(a.asset),
      recipient: address(a.recipient),
      amount: big(a.amount),
      // A V1 reserve never expires; Core stores its collectableAt (the keeper's releaseListedReserve deadline).
      expiresAt: num(v1 ? a.collectableAt : a.expiresAt),
      txHash: event.txHash,
      blockNumber: event.blockNumber,
      ...(v1 ? { v1: true } : {}),
    });
    return;
  }
  if (!(await j.deleteReserve(id))) {
    context.logger.warn(
      { guarantee_id: id, tx: event.txHash },
      "ReserveReleased for a reserve Core does not hold",
    );
  }
}

/** V2 paid on chain: REMUNERATED, its lock released, the payer's deposit reduced by what was paid. */
async function applyRemunerated(j: JournaledTx, event: ChainEvent, context: ApplyContext): Promise<void> {
  const a = event.args;
  const user = address(a.user);
  const asset = address(a.asset);
  const amount = big(a.amount);
  await j.adjustCollateral(user, asset, { deposited: -amount });
  const id = (a.guaranteeId as string).toLowerCase();
  const previous = await j.transition(id, [...PRE_CYCLE_LOCKED_STATES, "CANCELLED"], "REMUNERATED");
  if (previous === null) {
    const known = await j.tx.getClearingGuarantee(id);
    context.logger.warn(
      { guarantee_id: id, state: known?.state ?? null, tx: event.txHash },
      "GuaranteeRemunerated for a guarantee Core does not hold as unresolved",
    );
    return;
  }
  if (previous !== "CANCELLED") await j.adjustCollateral(user, asset, { locked: -amount });
  const g = await j.tx.getClearingGuarantee(id);
  if (g) await j.emit(context.webhooks?.guaranteeRemunerated(event, g, amount, j.now));
}

/**
 * A committed cycle of Core's plan: its guarantees leave their own locks; a payer who is a net debtor in the
 * asset now has the net debit locked instead (its guarantees are NETTED until the debit is resolved), every
 * other guarantee is SETTLED at once (net zero or net creditor: nothing left to pay). Any other commit is a
 * cycle Core did not plan ({@link applyForeignCycleCommitted}).
 */
async function applyCycleCommitted(j: JournaledTx, event: ChainEvent, context: ApplyContext): Promise<void> {
  const a = event.args;
  const cycleId = num(a.cycleId);
  const cycle = await j.tx.getCycle(cycleId);
  const committed = await committedCycleData(j, event, cycleId);
  if (!cycle || !isCorePlan(cycle, committed)) {
    await applyForeignCycleCommitted(j, event, context, committed, cycle);
    return;
  }
  await j.updateCycle(cycle, {
    state: cycle.state === "FINALIZED" ? "FINALIZED" : "COMMITTED",
    committedBlock: event.blockNumber,
    committedAt: event.blockTimestamp,
    paymentDeadline: num(a.paymentDeadline),
    defaultDeadline: num(a.defaultDeadline),
  });
  await recordV2Nettings(j, event, committed);
  const args = cycleCommitArgs(cycle);
  const debtorKeys = new Set(args.debtors.map((d) => `${d.asset.toLowerCase()}:${d.debtor.toLowerCase()}`));
  // The plan reserved a key range (no cycle_id written then): its guarantees join the cycle now. A plan
  // from before key ranges assigned them at reservation (a no-op here); a rewind returns them to the pool.
  const joined: string[] = [];
  for (const id of cycle.guaranteeIds) {
    const g = await j.tx.getClearingGuarantee(id);
    if (!g) continue;
    const isDebtor = debtorKeys.has(`${g.asset.toLowerCase()}:${g.user.toLowerCase()}`);
    const previous = await j.transition(id, ["FINALIZED_PAYABLE"], isDebtor ? "NETTED" : "SETTLED");
    if (previous === null) {
      context.logger.error(
        { guarantee_id: id, state: g.state, cycle_id: cycleId },
        "netted guarantee not payable",
      );
      continue;
    }
    await j.adjustCollateral(g.user, g.asset, { locked: -g.amount });
    if (g.cycleId === null) joined.push(id);
    if (!isDebtor) {
      await j.emit(context.webhooks?.guaranteeSettled(event, g, cycleId, "net_position", j.now));
    }
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
  const deadlines = { payment: num(a.paymentDeadline), default: num(a.defaultDeadline) };
  await j.emit(context.webhooks?.cycleCommitted(event, cycle, deadlines, args.debtors, j.now));
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
  event: ChainEvent,
  cycleId: number,
): Promise<CommittedCycleData> {
  const data: CommittedCycleData = {
    cycleId,
    root: (event.args.root as string).toLowerCase(),
    guaranteesRoot: null,
    debitsRoot: null,
    challengeDeadline: null,
    answerDeadline: null,
    totals: [],
    debtors: [],
    nettedV2Ids: [],
  };
  const earlier = (await j.tx.listChainEventsAbove(event.blockNumber - 1))
    .filter((e) => e.txHash === event.txHash && e.logIndex < event.logIndex)
    .sort((x, y) => x.logIndex - y.logIndex);
  // GuaranteeNetted carries no cycle id: this commit's are those after an earlier commit of the same
  // transaction (a contract holding the operator role could commit twice in one call).
  const previousCommit = earlier
    .filter((e) => e.contract === "ClearingHouse" && e.name === CYCLE_COMMITTED)
    .reduce((max, e) => Math.max(max, e.logIndex), -1);
  for (const e of earlier) {
    if (e.contract === "Vault" && e.name === GUARANTEE_NETTED && e.logIndex > previousCommit) {
      data.nettedV2Ids.push({ guaranteeId: String(e.args.guaranteeId).toLowerCase(), logIndex: e.logIndex });
    }
  }
  const sameTx = earlier.filter((e) => e.contract === "ClearingHouse" && Number(e.args.cycleId) === cycleId);
  for (const e of sameTx) {
    const a = e.args as Record<string, string>;
    if (e.name === "CycleAssetCommitted") {
      data.totals.push({ asset: getAddress(a.asset), total: BigInt(a.total) });
    } else if (e.name === "NetDebitRecorded") {
      data.debtors.push({
        asset: getAddress(a.asset),
        debtor: getAddress(a.debtor),
        amount: BigInt(a.amount),
      });
    } else if (e.name === "CycleChallengeWindow") {
      data.guaranteesRoot = a.guaranteesRoot.toLowerCase();
      data.debitsRoot = a.debitsRoot.toLowerCase();
      data.challengeDeadline = Number(a.challengeDeadline);
      data.answerDeadline = Number(a.answerDeadline);
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
  event: ChainEvent,
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
    paymentDeadline: num(a.paymentDeadline),
    defaultDeadline: num(a.defaultDeadline),
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
async function recordV2Nettings(j: JournaledTx, event: ChainEvent, committed: CommittedCycleData) {
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
  event: ChainEvent,
  context: ApplyContext,
  committed: CommittedCycleData,
) {
  const cycleId = committed.cycleId;
  const debtorKeys = new Set(
    committed.debtors.map((d) => `${d.asset.toLowerCase()}:${d.debtor.toLowerCase()}`),
  );
  const booked = [];
  for (const { guaranteeId } of committed.nettedV2Ids) {
    const g = await j.tx.getClearingGuarantee(guaranteeId);
    if (!g) continue; // not a guarantee Core issued
    const isDebtor = debtorKeys.has(`${g.asset.toLowerCase()}:${g.user.toLowerCase()}`);
    const to = isDebtor ? "NETTED" : "SETTLED";
    const previous = await j.transition(g.guaranteeId, PRE_CYCLE_LOCKED_STATES, to);
    if (previous === null) {
      context.logger.error(
        { guarantee_id: g.guaranteeId, state: g.state, cycle_id: cycleId, tx: event.txHash },
        "a cycle Core did not plan netted a guarantee Core holds as resolved",
      );
      continue;
    }
    await j.adjustCollateral(g.user, g.asset, { locked: -g.amount });
    await j.assignCycle([g.guaranteeId], cycleId, g.cycleId);
    booked.push({ ...g, state: to, cycleId } as typeof g);
  }
  return booked;
}

/** NetDebitPaid → SETTLED; ClearingHouse.DefaultCovered → DEFAULT_REMUNERATED. Either releases the debit lock. */
async function applyDebtResolved(j: JournaledTx, event: ChainEvent, context: ApplyContext): Promise<void> {
  const a = event.args;
  const cycleId = num(a.cycleId);
  const asset = address(a.asset);
  const debtor = address(a.debtor);
  const paid = event.name === "NetDebitPaid";
  const debt = await j.tx.getCycleDebt(cycleId, asset, debtor);
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
    covered: paid ? null : big(a.covered),
    resolvedTx: event.txHash,
  });
  await j.adjustCollateral(debtor, asset, { locked: -debt.amount });
  const netted = await j.tx.listGuarantees({ cycleId, user: debtor, asset, states: ["NETTED"] });
  const moved: typeof netted = [];
  for (const g of netted) {
    const previous = await j.transition(g.guaranteeId, ["NETTED"], paid ? "SETTLED" : "DEFAULT_REMUNERATED");
    if (previous !== null) moved.push(g);
  }
  const webhooks = context.webhooks;
  if (!webhooks) return;
  if (paid) {
    for (const g of moved) {
      await j.emit(webhooks.guaranteeSettled(event, g, cycleId, "net_debit_paid", j.now));
    }
  } else {
    const covered = { cycleId, asset, debtor, amount: debt.amount, covered: big(a.covered) };
    const ids = moved.map((g) => g.guaranteeId);
    await j.emit(webhooks.defaultCovered(event, covered, ids, j.now));
  }
}

/**
 * A vetoed cycle's debt was released on chain: a paid one refunded, an unpaid one's obligation freed (only
 * after the grace period: Core's books kept its lock until now, as the Vault did).
 */
async function applyVetoedDebtReleased(
  j: JournaledTx,
  event: ChainEvent,
  context: ApplyContext,
): Promise<void> {
  const a = event.args;
  const cycleId = num(a.cycleId);
  const asset = address(a.asset);
  const debtor = address(a.debtor);
  const debt = await j.tx.getCycleDebt(cycleId, asset, debtor);
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

const DISPUTE_OUTCOMES = ["NONE", "OPEN", "UPHELD", "VOIDED", "REMOVED", "DISMISSED"] as const;

/** The debtor disputed one position of its tree: the debt can be neither paid nor covered until answered. */
async function applyGuaranteeDisputed(
  j: JournaledTx,
  event: ChainEvent,
  context: ApplyContext,
): Promise<void> {
  const a = event.args;
  const cycleId = num(a.cycleId);
  const asset = address(a.asset);
  const debtor = address(a.debtor);
  const position = num(a.index);
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
  const debt = await j.tx.getCycleDebt(cycleId, asset, debtor);
  if (!debt) {
    // A net creditor disputing its outgoing tree (issue 25, item 5): no debt; the keeper answers it.
    context.logger.warn({ cycle_id: cycleId, asset, debtor, position }, "net creditor disputed a guarantee");
    return;
  }
  if (!["OPEN", "CHALLENGED", "ANSWERED"].includes(debt.status)) {
    context.logger.error(
      { cycle_id: cycleId, asset, debtor, position, status: debt?.status ?? null },
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
async function applyDisputeResolved(j: JournaledTx, event: ChainEvent, context: ApplyContext): Promise<void> {
  const a = event.args;
  const cycleId = num(a.cycleId);
  const asset = address(a.asset);
  const debtor = address(a.debtor);
  const position = num(a.index);
  const outcome = DISPUTE_OUTCOMES[num(a.outcome)];
  const dispute = await j.tx.getCycleDispute(cycleId, asset, debtor, position);
  if (!dispute || outcome === "NONE" || outcome === "OPEN" || outcome === undefined) {
    context.logger.error(
      { cycle_id: cycleId, asset, debtor, position },
      "DisputeResolved for no open dispute",
    );
    return;
  }
  const guaranteeId = String(a.guaranteeId).toLowerCase();
  await j.putDispute({
    ...dispute,
    status: outcome,
    guaranteeId: /^0x0{64}$/.test(guaranteeId) ? null : guaranteeId,
    amount: big(a.amount),
    resolvedTx: event.txHash,
  });
  const debt = await settleDebtAfterDispute(j, event, cycleId, asset, debtor);
  if (outcome === "VOIDED" || outcome === "REMOVED") {
    context.logger.error(
      { cycle_id: cycleId, asset, debtor, position, outcome, amount: big(a.amount).toString() },
      "disputed guarantee taken off the debit",
    );
  }
  const ref = { cycleId, asset, debtor, amount: debt?.amount ?? 0n };
  const extra = {
    position: String(position),
    outcome: outcome.toLowerCase(),
    guarantee_id: /^0x0{64}$/.test(guaranteeId) ? null : guaranteeId,
    guarantee_amount: formatUint(big(a.amount)),
  };
  await j.emit(context.webhooks?.challenge(event, "cycle.challenge_answered", ref, extra, j.now));
}

/**
 * An unproven or already-paid guarantee (or a debit above its revealed total) came off the debit: the
 * debtor owes that much less, its lock shrinks with it.
 */
async function applyDebitReduced(j: JournaledTx, event: ChainEvent, context: ApplyContext): Promise<void> {
  const a = event.args;
  const cycleId = num(a.cycleId);
  const asset = address(a.asset);
  const debtor = address(a.debtor);
  const cut = big(a.amount);
  const debt = await j.tx.getCycleDebt(cycleId, asset, debtor);
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
  await settleDebtAfterDispute(j, event, cycleId, asset, debtor);
}

/**
 * A disputed debt's state from its disputes: CHALLENGED while one is open; then VOIDED when nothing is
 * left owed (its netted guarantees are SETTLED), ANSWERED otherwise (payable and coverable again).
 */
async function settleDebtAfterDispute(
  j: JournaledTx,
  event: ChainEvent,
  cycleId: number,
  asset: string,
  debtor: string,
): Promise<CycleDebtRecord | null> {
  const debt = await j.tx.getCycleDebt(cycleId, asset, debtor);
  // ANSWERED too: within one answer the dispute closes (DisputeResolved) before its amount comes off
  // (DebitReduced), which may leave nothing owed.
  if (!debt || (debt.status !== "CHALLENGED" && debt.status !== "ANSWERED")) return debt;
  const open = await j.tx.listCycleDisputes({ cycleId, asset, debtor, status: "OPEN" });
  if (open.length > 0) return debt;
  if (debt.amount === 0n) {
    await j.putDebt({ ...debt, status: "VOIDED", resolvedTx: event.txHash });
    for (const g of await j.tx.listGuarantees({ cycleId, user: debtor, asset, states: ["NETTED"] })) {
      await j.transition(g.guaranteeId, ["NETTED"], "SETTLED");
    }
    return { ...debt, status: "VOIDED" };
  }
  await j.putDebt({ ...debt, status: "ANSWERED", resolvedTx: null });
  return { ...debt, status: "ANSWERED" };
}

/**
 * A dispute left unanswered voided a debit: the debtor owes nothing (its lock is released) and the
 * cycle's creditors were funded from the operator bond; its netted guarantees are SETTLED.
 */
async function applyDebitVoided(j: JournaledTx, event: ChainEvent, context: ApplyContext): Promise<void> {
  const a = event.args;
  const cycleId = num(a.cycleId);
  const asset = address(a.asset);
  const debtor = address(a.debtor);
  const debt = await j.tx.getCycleDebt(cycleId, asset, debtor);
  if (!debt || debt.status !== "CHALLENGED") {
    context.logger.error(
      { cycle_id: cycleId, asset, debtor },
      "DebitVoided for a debt Core holds as not challenged",
    );
    return;
  }
  await j.putDebt({ ...debt, status: "VOIDED", resolvedTx: event.txHash });
  await j.adjustCollateral(debtor, asset, { locked: -debt.amount });
  for (const dispute of await j.tx.listCycleDisputes({ cycleId, asset, debtor, status: "OPEN" })) {
    await j.putDispute({ ...dispute, status: "VOIDED", resolvedTx: event.txHash });
  }
  for (const g of await j.tx.listGuarantees({ cycleId, user: debtor, asset, states: ["NETTED"] })) {
    await j.transition(g.guaranteeId, ["NETTED"], "SETTLED");
  }
  const ref = { cycleId, asset, debtor, amount: debt.amount };
  const extra = { from_bond: formatUint(big(a.fromBond)) };
  await j.emit(context.webhooks?.challenge(event, "cycle.challenge_voided", ref, extra, j.now));
  context.logger.error(
    {
      cycle_id: cycleId,
      asset,
      debtor,
      amount: debt.amount.toString(),
      from_bond: big(a.fromBond).toString(),
    },
    "debit voided by an unanswered challenge: charged to the operator bond",
  );
}

/**
 * The guardian vetoed a cycle: nothing of it settles. Every guarantee of the cycle is payable again with its
 * own lock, unassigned, so the scheduler re-commits it in the next cycle; the unresolved debits keep their
 * locks until the chain releases their obligations (`releaseVetoedDebt`, which the keeper sends once the
 * grace period has passed), so a veto never frees collateral a payer still owes. Paid debits are refunded.
 */
async function applyCycleVetoed(j: JournaledTx, event: ChainEvent, context: ApplyContext): Promise<void> {
  const cycleId = num(event.args.cycleId);
  const cycle = await j.tx.getCycle(cycleId);
  if (!cycle) {
    context.logger.error({ cycle_id: cycleId }, "CycleVetoed for a cycle Core did not plan");
    return;
  }
  // The unpaid debts stay locked (the Vault keeps their obligations until the grace period has passed:
  // VetoedDebtReleased frees them), and the guarantees come back with their own locks for the re-commit.
  await j.updateCycle(cycle, { state: "VETOED", vetoedAt: event.blockTimestamp });
  const back: string[] = [];
  for (const id of cycle.guaranteeIds) {
    const g = await j.tx.getClearingGuarantee(id);
    if (!g) continue;
    const previous = await j.transition(id, ["NETTED", "SETTLED"], "FINALIZED_PAYABLE");
    if (previous === null) continue; // e.g. REMUNERATED: a skipped V2 id, nothing to re-commit
    await j.adjustCollateral(g.user, g.asset, { locked: g.amount });
    back.push(id);
  }
  await j.assignCycle(back, null, cycleId);
  const guardian = address(event.args.guardian);
  await j.emit(context.webhooks?.cycleVetoed(event, cycle, guardian, back, j.now));
  context.logger.error(
    { cycle_id: cycleId, guardian: address(event.args.guardian), guarantees: back.length },
    "cycle vetoed by the guardian: its guarantees return to the next cycle",
  );
}
