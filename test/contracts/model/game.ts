/**
 * The reference model of the clearing game (test/contracts/game-model.test.ts): the Vault's collateral,
 * obligations, reserves and consumption marks, the ClearingHouse's cycles, debts, disputes, liquidity,
 * bond and payouts, written from docs/clearing.md and the contracts' documented rules, in plain TypeScript.
 *
 * Every action is a method that first checks, in the contract's order, whether the call must revert (it
 * throws {@link Refusal} with the custom error's name, having changed nothing) and otherwise applies the
 * call's effects. `t` is the timestamp of the block the call lands in. The test runs each action on the
 * chain too and compares: the same success or the same error, then the same books.
 *
 * On top of the contract's state the model keeps what the properties need: Core's view of each payer's
 * capacity (guarantees issued and not yet committed), who signed what, and a ledger of every amount that
 * moved for each participant, with the operator's faults (what the bond may pay for) on the side.
 */
import { key, type BuiltCycle } from "./cycles";

export class Refusal extends Error {
  constructor(readonly error: string) {
    super(error);
  }
}

const refuse = (error: string): never => {
  throw new Refusal(error);
};

/** `CycleCommitLogic.MAX_RELEASES`: settled cycles a commit or an owed refund's cover releases at most. */
const MAX_RELEASES = 8;

export enum DebtStatus {
  None = 0,
  Open = 1,
  Paid = 2,
  Covered = 3,
  Challenged = 4,
  Answered = 5,
  Voided = 6,
  Refunded = 7,
}
export enum DisputeStatus {
  None = 0,
  Open = 1,
  Upheld = 2,
  Voided = 3,
  Removed = 4,
  Dismissed = 5,
}
export enum CreditDisputeStatus {
  None = 0,
  Open = 1,
  Answered = 2,
  Paid = 3,
  Lapsed = 4,
}
export enum Consumption {
  None = 0,
  Remunerated = 1,
  Netted = 2,
}

export interface Timings {
  cycleLength: number;
  commitDelay: number;
  challengeWindow: number;
  paymentWindow: number;
  defaultWindow: number;
  withdrawalGracePeriod: number;
  confirmationLag: number;
}

/** A guarantee Core certified (or the operator made up). */
export interface ModelGuarantee {
  id: string;
  version: 1 | 2;
  payer: string;
  recipient: string;
  asset: string;
  amount: bigint;
  /** The claims' timestamp (V1 reserves count from it). */
  timestamp: number;
  /** V2: the policy's validation deadline. */
  deadline: number;
  /** V1, or V2 whose validator passed it (or its payer finalized it): Core finalizes it as payable. */
  payable: boolean;
  /** V2: its verdict was pinned in the Vault (`Vault.pinVerdicts`, audit H-2): final, whatever is posted later. */
  pinned?: boolean;
  /** V2 payable only by its payer's Finalization (no passing verdict): never remunerable, and an answer
   * proves it only with the finalization (audit H-1). */
  finalized?: boolean;
  /** Core's pool: issued, not committed (again) yet; listed: in a live cycle; consumed: paid outside clearing. */
  state: "pending" | "listed" | "consumed" | "dropped";
  /** The cycle that listed it last (when `listed`). */
  cycle?: number;
}

/** One position of a debtor's tree, as the honest payer judges it. */
export interface PositionInfo {
  /** The guarantee listed there (undefined for a fabricated leaf). */
  guaranteeId?: string;
  amount: bigint;
  /** A second listing of the same id in this tree. */
  duplicate: boolean;
}

export interface CycleAssetState {
  totalDebit: bigint;
  funded: bigint;
  /** What the bond paid into this cycle and asset (returned to the bond by a veto). */
  bondFunded: bigint;
  claimed: bigint;
  shortfall: bigint;
}

export interface ModelCycle {
  id: number;
  committedAt: number;
  challengeDeadline: number;
  answerDeadline: number;
  paymentDeadline: number;
  defaultDeadline: number;
  doubleListingDeadline: number;
  vetoed: boolean;
  finalized: boolean;
  openDebts: number;
  openChallenges: number;
  assets: Map<string, CycleAssetState>;
  debts: Map<string, { amount: bigint; status: DebtStatus }>;
  games: Map<
    string,
    { revealed: boolean; openDisputes: number; depth: number; total: bigint; settled: bigint }
  >;
  disputes: Map<string, DisputeStatus>;
  deducted: Map<string, bigint>;
  /** Excess refunds of removed or conceded positions held until the challenge deadline: `asset|debtor`. */
  refundHeld: Map<string, bigint>;
  /** The part of `refundHeld` the operator's own answer refunded, taken from the bond then (audit3 A3-M2). */
  refundSetAside: Map<string, bigint>;
  claimed: Set<string>;
  built: BuiltCycle;
  /** Positions of each debtor's tree by `debtor|asset`. */
  positions: Map<string, PositionInfo[]>;
  /** Real guarantees listed (each once). */
  listed: string[];
  rogue?: string;
  /** Debts voided by `voidUnansweredDebit`, with the debit as committed: `asset|debtor`. */
  unanswered: Map<string, bigint>;
  /** The debits as committed: `asset|debtor`. */
  committedDebits: Map<string, bigint>;
  /** Recipients' credit disputes by guarantee id (`disputeCredit`). */
  creditDisputes: Map<
    string,
    { status: CreditDisputeStatus; recipient: string; asset: string; amount: bigint }
  >;
}

export interface Reserve {
  user: string;
  asset: string;
  amount: bigint;
  expiresAt: number;
  /** V1: the recipient collectReserve pays ("" for a V2 reserve). */
  v1Recipient: string;
}

/** What moved for one participant in one asset (the properties' ledger). */
export interface Flows {
  /** Paid for its debits (payNetDebit, coverDefault) and for its guarantees outside clearing (remunerate, collectReserve). */
  paidOut: bigint;
  /** Given back as a debtor: vetoed debts refunded, removed or voided amounts above the debit, double-listing refunds. */
  refunded: bigint;
  /** Received as a creditor or recipient: net credits set aside (minus deductions), remunerations, reserve collections. */
  received: bigint;
  /**
   * Of `paidOut`: deductions recovered from its collateral as a recipient (`recoverDeduction`), i.e. money it
   * had received for a removed position given back, not a payment for its own guarantees.
   */
  recovered: bigint;
}

const ZERO_FLOWS = (): Flows => ({ paidOut: 0n, refunded: 0n, received: 0n, recovered: 0n });

export class GameModel {
  now = 0;
  readonly balances = new Map<string, bigint>();
  readonly locked = new Map<string, bigint>();
  readonly reserved = new Map<string, bigint>();
  readonly withdrawals = new Map<string, { amount: bigint; readyAt: number }>();
  readonly marks = new Map<string, { how: Consumption; cycleId: number }>();
  readonly reserves = new Map<string, Reserve>();
  readonly cycles: ModelCycle[] = [];
  readonly bond = new Map<string, bigint>();
  readonly held = new Map<string, bigint>();
  readonly payouts = new Map<string, bigint>();
  readonly refundOwed = new Map<string, bigint>();
  /**
   * `ClearingHouse.bondAtRisk` per asset: the total debits of every cycle from `riskHead` on, released in cycle
   * order once finalized or vetoed (audit3 A3-M1, A3-M3). The game runs with the floor off (`floorBps` 0), so
   * the spare bond is the whole bond, but the count and when it is released are checked against the chain.
   */
  readonly atRisk = new Map<string, bigint>();
  riskHead = 1;
  floorBps = 0n;
  readonly answeredIn = new Map<string, number>();
  /** `key(id, cycleId)` of listings a `Removed` answer took off as not validated (audit3 A3-L2). */
  readonly removedFrom = new Set<string>();
  openChallenges = 0;
  readonly guarantees = new Map<string, ModelGuarantee>();
  readonly flows = new Map<string, Flows>();
  /** Bond drawn for the operator's faults, by asset (concessions, unanswered voids, removals, refunds). */
  readonly faults = new Map<string, bigint>();
  /** Bond posted, by asset. */
  readonly posted = new Map<string, bigint>();
  /**
   * The Vault's operator key (docs/clearing.md "Operator key gaps"): whether one is set, its clock
   * (`operatorKeySince`), the timelock delay, and the replacement keys scheduled (key index → ready at).
   */
  keySet = true;
  keySince = 0;
  keyDelay = 0;
  readonly keysScheduled = new Map<number, number>();

  constructor(readonly t: Timings) {}

  /** `Vault.answerDeadlineAfterKeyGap(D)` = max(D, min(S + W, D + min(T, 30 days) + W)). */
  answerDeadlineAfterKeyGap(deadline: number): number {
    const resumed = this.keySince + this.t.challengeWindow;
    if (resumed <= deadline) return deadline;
    const bound = deadline + Math.min(this.keyDelay, 30 * 24 * 3600) + this.t.challengeWindow;
    return resumed < bound ? resumed : bound;
  }

  /** The answer deadline of cycle `c` at `t`: the committed one until it has passed, then after any key gap. */
  private answersUntil(c: ModelCycle, t: number): number {
    return t <= c.answerDeadline ? c.answerDeadline : this.answerDeadlineAfterKeyGap(c.answerDeadline);
  }

  /** `Vault.revokeOperatorKey`: the key goes at once; a replacement counts from `t + timelockDelay`. */
  revokeOperatorKey(t: number): void {
    if (this.keySet) this.keySince = t + this.keyDelay;
    this.keySet = false;
  }

  /**
   * `Vault.setOperatorKey(key)` after setup: the first call schedules it (ready `timelockDelay` later), a
   * call from then executes it; a key replacing a revoked one counts from min(now, revocation + delay).
   */
  setOperatorKey(keyIndex: number, t: number): "scheduled" | "executed" {
    const readyAt = this.keysScheduled.get(keyIndex) ?? 0;
    if (readyAt === 0) {
      this.keysScheduled.set(keyIndex, t + this.keyDelay);
      return "scheduled";
    }
    if (t < readyAt) refuse("OperationNotReady");
    this.keysScheduled.delete(keyIndex);
    let since = t;
    if (!this.keySet && this.keySince !== 0 && this.keySince < since) since = this.keySince;
    this.keySet = true;
    this.keySince = since;
    return "executed";
  }

  /** A certificate check (answers with a proof, remunerate, reserves, credit disputes) with no key set. */
  private checkKey(): void {
    if (!this.keySet) refuse("OperatorKeyNotSet");
  }

  // ------------------------------------------------------------------------------------ helpers

  get(m: Map<string, bigint>, k: string): bigint {
    return m.get(k) ?? 0n;
  }
  add(m: Map<string, bigint>, k: string, by: bigint): void {
    m.set(k, this.get(m, k) + by);
  }
  flow(account: string, asset: string): Flows {
    const k = key(account, asset);
    let f = this.flows.get(k);
    if (f === undefined) this.flows.set(k, (f = ZERO_FLOWS()));
    return f;
  }
  balance(user: string, asset: string): bigint {
    return this.get(this.balances, key(user, asset));
  }
  /** Obligations alone (`Vault.obligationOf`). */
  obligation(user: string, asset: string): bigint {
    const k = key(user, asset);
    return this.get(this.locked, k) - this.get(this.reserved, k);
  }
  free(user: string, asset: string): bigint {
    const k = key(user, asset);
    const b = this.get(this.balances, k);
    const l = this.get(this.locked, k);
    return b > l ? b - l : 0n;
  }
  cycle(id: number): ModelCycle | undefined {
    return id >= 1 && id <= this.cycles.length ? this.cycles[id - 1] : undefined;
  }
  committed(id: number): ModelCycle {
    return this.cycle(id) ?? refuse("UnknownCycle");
  }
  /** `Vault.consumption`: a netting mark of a vetoed commit reads as none. */
  consumption(id: string): Consumption {
    const m = this.marks.get(id.toLowerCase());
    if (m === undefined) return Consumption.None;
    if (m.how === Consumption.Netted && m.cycleId !== 0 && this.cycle(m.cycleId)?.vetoed)
      return Consumption.None;
    return m.how;
  }
  isSettled(cycleId: number, t: number): boolean {
    const c = this.cycle(cycleId);
    return c !== undefined && !c.vetoed && t > c.challengeDeadline;
  }
  /**
   * Core's capacity for a new guarantee of `payer` in `asset`: free collateral less the guarantees it has
   * issued and not committed yet (those with a reserve are locked already) and its open withdrawal.
   */
  capacity(payer: string, asset: string): bigint {
    let c = this.free(payer, asset);
    for (const g of this.guarantees.values()) {
      if (g.state !== "pending" || g.payer !== payer.toLowerCase() || g.asset !== asset.toLowerCase())
        continue;
      if (!this.reserves.has(g.id)) c -= g.amount;
    }
    c -= this.withdrawals.get(key(payer, asset))?.amount ?? 0n;
    return c;
  }

  private fund(c: ModelCycle, asset: string, amount: bigint): void {
    const a = c.assets.get(asset.toLowerCase())!;
    a.funded += amount;
    this.add(this.held, asset.toLowerCase(), amount);
  }
  private fundFromBond(c: ModelCycle, asset: string, amount: bigint): bigint {
    const bond = this.get(this.bond, asset);
    const fromBond = amount < bond ? amount : bond;
    this.bond.set(asset, bond - fromBond);
    this.fund(c, asset, fromBond);
    c.assets.get(asset)!.bondFunded += fromBond;
    c.assets.get(asset)!.shortfall += amount - fromBond;
    return fromBond;
  }
  /** A returned deduction refills what the cycle is short of first (`PayoutLogic._refill`). */
  private refill(c: ModelCycle, asset: string, amount: bigint): bigint {
    const a = c.assets.get(asset.toLowerCase())!;
    const refilled = amount < a.shortfall ? amount : a.shortfall;
    a.shortfall -= refilled;
    this.fund(c, asset, refilled);
    return refilled;
  }
  private resolveDebt(c: ModelCycle): void {
    c.openDebts -= 1;
    if (c.openDebts === 0) c.finalized = true;
  }
  /**
   * `ClearingHouse.totalRefundOwed`: refunds owed to payers plus refunds held above a debit and not set aside
   * (counted when held, until `claimDebitRefund` pays or cancels them).
   */
  totalRefundOwed(asset: string): bigint {
    const mine = (k: string) => k.split("|")[0] === asset.toLowerCase();
    let total = 0n;
    for (const [k, v] of this.refundOwed) if (mine(k)) total += v;
    for (const c of this.cycles) {
      for (const [k, v] of c.refundHeld) if (mine(k)) total += v - this.get(c.refundSetAside, k);
    }
    return total;
  }
  /** `ClearingBooks.spareBond` of `bond` (default: the bond now): above the floor's share of `atRisk` (all of it with the floor off). */
  spare(asset: string, bond: bigint = this.get(this.bond, asset)): bigint {
    if (this.floorBps === 0n) return bond;
    const kept = (this.get(this.atRisk, asset) * this.floorBps + 9_999n) / 10_000n;
    return bond > kept ? bond - kept : 0n;
  }
  /** `CycleCommitLogic.releaseSettled`: up to `max` of the oldest counted cycles, finalized or vetoed, in order. */
  releaseSettled(max: number): number {
    let released = 0;
    while (released < max && this.riskHead <= this.cycles.length) {
      const c = this.cycles[this.riskHead - 1];
      if (!c.vetoed && !c.finalized) break;
      for (const [asset, a] of c.assets) this.add(this.atRisk, asset, -a.totalDebit);
      this.riskHead += 1;
      released += 1;
    }
    return released;
  }
  /** `ClearingHouse.releaseSettledRisk(max)` (anyone). */
  releaseSettledRisk(max: number): number {
    const released = this.releaseSettled(max);
    if (released === 0) refuse("NoSettledRisk");
    return released;
  }
  private releaseObligation(user: string, asset: string, amount: bigint): void {
    const k = key(user, asset);
    if (amount > this.obligation(user, asset)) throw new Error("model: obligation exceeded");
    this.add(this.locked, k, -amount);
  }
  private fault(asset: string, amount: bigint): void {
    this.add(this.faults, asset, amount);
  }

  // -------------------------------------------------------------------------------------- Vault

  deposit(user: string, asset: string, amount: bigint): void {
    this.add(this.balances, key(user, asset), amount);
  }

  requestWithdrawal(user: string, asset: string, amount: bigint, t: number): void {
    if (amount === 0n) refuse("ZeroAmount");
    const k = key(user, asset);
    if (this.withdrawals.has(k)) refuse("WithdrawalAlreadyPending");
    if (amount > this.balance(user, asset)) refuse("WithdrawalExceedsBalance");
    this.withdrawals.set(k, { amount, readyAt: t + this.t.withdrawalGracePeriod });
  }

  /** Returns what is paid. */
  finalizeWithdrawal(user: string, asset: string, t: number): bigint {
    const k = key(user, asset);
    const w = this.withdrawals.get(k) ?? refuse("NoPendingWithdrawal");
    if (t < w.readyAt) refuse("WithdrawalNotReady");
    const free = this.free(user, asset);
    const paid = w.amount < free ? w.amount : free;
    this.withdrawals.delete(k);
    this.add(this.balances, k, -paid);
    return paid;
  }

  /**
   * Whether `g` counts as validated on chain: V1, a pinned verdict, or a passing one. The model's validator
   * re-posts only what cannot change a verdict (the same verdict by the deadline, anything after a pin), so
   * an unpinned verdict passes as it was issued (a re-post after the deadline before the pin voids it: the
   * remaining window, test/contracts/pinned-verdicts.test.ts).
   */
  validated(g: ModelGuarantee): boolean {
    return g.version === 1 || g.pinned === true || g.payable;
  }

  /**
   * `Vault.pinVerdicts` of V2 guarantees `gs` at time `t`: refused as a whole while one's deadline has not
   * passed; pins each passing verdict not pinned yet, skips the others. Returns how many were pinned.
   */
  pinVerdicts(gs: readonly ModelGuarantee[], t: number): number {
    for (const g of gs) {
      if (g.version !== 2) refuse("NotV2Certificate");
      if (t <= g.deadline) refuse("VerdictNotFinal");
    }
    let pinned = 0;
    for (const g of gs) {
      // A payer-finalized guarantee has no passing verdict to pin (its finalization answers for it).
      if (g.pinned || !g.payable || g.finalized) continue;
      g.pinned = true;
      pinned += 1;
    }
    return pinned;
  }

  /** `remunerate` of V2 guarantee `g` (its certificate and signature are valid). */
  remunerate(g: ModelGuarantee): void {
    this.checkKey();
    const how = this.consumption(g.id);
    if (how !== Consumption.None) refuse("GuaranteeAlreadyConsumed");
    if (!this.validated(g) || g.finalized) refuse("ValidationScoreTooLow");
    const k = key(g.payer, g.asset);
    let free = this.free(g.payer, g.asset);
    const r = this.reserves.get(g.id);
    let release = false;
    if (free < g.amount && r !== undefined && r.user === g.payer && r.asset === g.asset) {
      free += r.amount;
      release = true;
    }
    if (free < g.amount) refuse("InsufficientFreeCollateral");
    if (release) this.releaseReserveOf(g.id);
    this.marks.set(g.id, { how: Consumption.Remunerated, cycleId: 0 });
    this.add(this.balances, k, -g.amount);
    this.flow(g.payer, g.asset).paidOut += g.amount;
    this.flow(g.recipient, g.asset).received += g.amount;
    if (g.state === "pending") g.state = "consumed";
  }

  private releaseReserveOf(id: string): void {
    const r = this.reserves.get(id)!;
    this.reserves.delete(id);
    this.add(this.reserved, key(r.user, r.asset), -r.amount);
    this.add(this.locked, key(r.user, r.asset), -r.amount);
  }

  registerReserve(g: ModelGuarantee, t: number): void {
    const registerBy =
      g.version === 1
        ? g.timestamp + this.t.cycleLength + this.t.commitDelay + this.t.confirmationLag
        : g.deadline;
    this.checkKey();
    const expiresAt =
      g.version === 1 ? registerBy + 2 * this.t.challengeWindow : g.deadline + this.t.withdrawalGracePeriod;
    if (this.consumption(g.id) !== Consumption.None) refuse("GuaranteeAlreadyConsumed");
    if (this.reserves.has(g.id)) refuse("ReserveAlreadyRegistered");
    if (t > registerBy) refuse("ReserveAfterDeadline");
    if (this.free(g.payer, g.asset) < g.amount) refuse("InsufficientFreeCollateral");
    this.reserves.set(g.id, {
      user: g.payer,
      asset: g.asset,
      amount: g.amount,
      expiresAt,
      v1Recipient: g.version === 1 ? g.recipient : "",
    });
    this.add(this.reserved, key(g.payer, g.asset), g.amount);
    this.add(this.locked, key(g.payer, g.asset), g.amount);
  }

  /** `collectReserve`; returns what the recipient is paid. */
  collectReserve(g: ModelGuarantee, t: number): bigint {
    const r = this.reserves.get(g.id);
    if (r === undefined || r.v1Recipient === "") refuse("ReserveNotFound");
    // A netting mark does not stop the collection (issue 25, item 5): only a proven credit ends the reserve.
    const how = this.consumption(g.id);
    if (how === Consumption.Remunerated) refuse("GuaranteeAlreadyConsumed");
    if (t < r!.expiresAt) refuse("ReserveNotYetCollectable");
    this.marks.set(g.id, { how: Consumption.Remunerated, cycleId: 0 });
    this.releaseReserveOf(g.id);
    const k = key(r!.user, r!.asset);
    const balance = this.get(this.balances, k);
    const paid = r!.amount < balance ? r!.amount : balance;
    this.balances.set(k, balance - paid);
    this.flow(g.payer, g.asset).paidOut += paid;
    this.flow(g.recipient, g.asset).received += paid;
    if (g.state === "pending") g.state = "consumed";
    return paid;
  }

  releaseReserve(id: string, t: number): void {
    const r = this.reserves.get(id) ?? refuse("ReserveNotFound");
    const m = this.marks.get(id);
    // A commit's mark counts once no veto nor `Removed` answer can undo it (audit3 A3-L2).
    const nettedForGood =
      m !== undefined &&
      m.how === Consumption.Netted &&
      (m.cycleId === 0 || (this.isSettled(m.cycleId, t) && this.cycle(m.cycleId)!.openChallenges === 0));
    // A V1 reserve is released by a proven credit only (releaseListedReserve), never by a mark.
    const consumed =
      (m !== undefined && m.how === Consumption.Remunerated) || (r.v1Recipient === "" && nettedForGood);
    if (!consumed && (r.v1Recipient !== "" || t < r.expiresAt)) refuse("ReserveStillActive");
    this.releaseReserveOf(id);
  }

  releaseListedReserve(id: string, cycleId: number, t: number): void {
    const r = this.reserves.get(id);
    if (r === undefined || r.v1Recipient === "") refuse("ReserveNotFound");
    const c = this.cycle(cycleId);
    if (c === undefined || c.vetoed || t <= c.challengeDeadline) refuse("CycleNotSettled");
    // Credited to its own recipient in that cycle (its incoming tree), not merely listed.
    const inTree = c!.built.trees.get(key(r!.v1Recipient, r!.asset))?.incoming;
    if (inTree === undefined || !inTree.leaves.some((l) => l.guaranteeId.toLowerCase() === id.toLowerCase()))
      refuse("GuaranteeNotListed");
    if (this.consumption(id) === Consumption.None)
      this.marks.set(id, { how: Consumption.Netted, cycleId: 0 });
    this.releaseReserveOf(id);
  }

  /** `Vault.markListed` of V2 guarantee `id` in cycle `cycleId` (audit2 A2-M2): credited to its recipient. */
  markListed(id: string, cycleId: number): void {
    const g = this.guarantees.get(id) ?? refuse("GuaranteeNotListed");
    if (g.version !== 2) refuse("NotV2Certificate");
    const c = this.cycle(cycleId);
    const inTree = c?.built.trees.get(key(g.recipient, g.asset))?.incoming;
    if (
      this.removedFrom.has(key(id.toLowerCase(), String(cycleId))) ||
      c === undefined ||
      c.vetoed ||
      inTree === undefined ||
      !inTree.leaves.some((l) => l.guaranteeId.toLowerCase() === id.toLowerCase())
    )
      refuse("GuaranteeNotListed");
    if (this.consumption(id) !== Consumption.None) refuse("GuaranteeAlreadyConsumed");
    this.marks.set(id, { how: Consumption.Netted, cycleId });
  }

  // ------------------------------------------------------------------------------- ClearingHouse

  postBond(asset: string, amount: bigint): void {
    this.add(this.bond, asset, amount);
    this.add(this.posted, asset, amount);
  }

  /**
   * `commitCycle` of `built` (the operator's arguments), marking `netted`; `positions` and `listed` describe
   * what it lists. Returns the ids the Vault skipped.
   */
  commit(
    built: BuiltCycle,
    netted: readonly string[],
    positions: Map<string, PositionInfo[]>,
    listed: string[],
    t: number,
    rogue?: string,
  ): string[] {
    const id = this.cycles.length + 1;
    if (Number(built.cycleId) !== id) refuse("UnexpectedCycleId");
    const skipped: string[] = [];
    for (const raw of netted) {
      const g = raw.toLowerCase();
      if (this.consumption(g) !== Consumption.None) {
        skipped.push(g);
        continue;
      }
      this.marks.set(g, { how: Consumption.Netted, cycleId: id });
    }
    this.releaseSettled(MAX_RELEASES);
    for (const total of built.totals) this.add(this.atRisk, total.asset.toLowerCase(), total.totalDebit);
    const w = this.t.challengeWindow;
    const challengeDeadline = t + w;
    const answerDeadline = challengeDeadline + w;
    const paymentDeadline = answerDeadline + this.t.paymentWindow;
    const defaultDeadline = paymentDeadline + this.t.defaultWindow;
    const previous = this.cycles.length > 0 ? this.cycles[this.cycles.length - 1].doubleListingDeadline : 0;
    const dld = Math.max(defaultDeadline + this.t.withdrawalGracePeriod, previous);
    const c: ModelCycle = {
      id,
      committedAt: t,
      challengeDeadline,
      answerDeadline,
      paymentDeadline,
      defaultDeadline,
      doubleListingDeadline: dld,
      vetoed: false,
      finalized: built.debtors.length === 0,
      openDebts: built.debtors.length,
      openChallenges: 0,
      assets: new Map(),
      debts: new Map(),
      games: new Map(),
      disputes: new Map(),
      deducted: new Map(),
      refundHeld: new Map(),
      refundSetAside: new Map(),
      claimed: new Set(),
      built,
      positions,
      listed,
      rogue,
      unanswered: new Map(),
      committedDebits: new Map(built.debtors.map((d) => [key(d.asset, d.debtor), d.amount])),
      creditDisputes: new Map(),
    };
    for (const total of built.totals) {
      c.assets.set(total.asset.toLowerCase(), {
        totalDebit: total.totalDebit,
        funded: 0n,
        bondFunded: 0n,
        claimed: 0n,
        shortfall: 0n,
      });
    }
    for (const d of built.debtors) {
      c.debts.set(key(d.asset, d.debtor), { amount: d.amount, status: DebtStatus.Open });
      this.add(this.locked, key(d.debtor, d.asset), d.amount);
    }
    this.cycles.push(c);
    for (const gid of listed) {
      const g = this.guarantees.get(gid);
      if (g !== undefined && g.state === "pending") {
        g.state = "listed";
        g.cycle = id;
      }
    }
    return skipped;
  }

  private payable(cycleId: number, asset: string, debtor: string) {
    const c = this.cycle(cycleId);
    const debt = c?.debts.get(key(asset, debtor));
    if (c === undefined || debt === undefined) return refuse("NoDebt");
    if (c.vetoed) refuse("CycleIsVetoed");
    if (debt.status !== DebtStatus.Open && debt.status !== DebtStatus.Answered) refuse("DebtAlreadyResolved");
    return { c, debt };
  }

  payNetDebit(cycleId: number, asset: string, debtor: string): bigint {
    const { c, debt } = this.payable(cycleId, asset, debtor);
    const amount = debt.amount;
    debt.status = DebtStatus.Paid;
    this.fund(c, asset, amount);
    this.resolveDebt(c);
    this.releaseObligation(debtor, asset, amount);
    this.flow(debtor, asset).paidOut += amount;
    return amount;
  }

  coverDefault(cycleId: number, asset: string, debtor: string, t: number): void {
    const { c, debt } = this.payable(cycleId, asset, debtor);
    if (t <= c.paymentDeadline) refuse("PaymentWindowOpen");
    const amount = debt.amount;
    debt.status = DebtStatus.Covered;
    if (amount > this.obligation(debtor, asset)) throw new Error("model: cover above the obligation");
    const k = key(debtor, asset);
    const balance = this.get(this.balances, k);
    const covered = amount < balance ? amount : balance;
    this.add(this.locked, k, -amount);
    this.balances.set(k, balance - covered);
    this.fund(c, asset, covered);
    // A debit beyond the debtor's collateral is the operator's fault: the bond funds the gap (phantom credits).
    if (covered < amount) this.fault(asset, this.fundFromBond(c, asset, amount - covered));
    this.resolveDebt(c);
    this.flow(debtor, asset).paidOut += covered;
  }

  claimNetCredit(cycleId: number, asset: string, participant: string, t: number): bigint {
    const c = this.committed(cycleId);
    if (c.vetoed) refuse("CycleIsVetoed");
    if (t <= c.challengeDeadline) refuse("ChallengeWindowOpen");
    if (c.openChallenges !== 0 && t <= this.answersUntil(c, t)) refuse("DisputesOpen");
    const a = c.assets.get(asset) ?? refuse("UnknownCycleAsset");
    const credit = c.built.credits.get(key(asset, participant)) ?? 0n;
    if (credit === 0n) refuse("ZeroCredit");
    if (c.claimed.has(key(asset, participant))) refuse("CreditAlreadyClaimed");
    if (a.funded - a.claimed < credit) refuse("CreditNotYetFunded");
    c.claimed.add(key(asset, participant));
    a.claimed += credit;
    this.add(this.held, asset, -credit);
    const deducted = this.get(c.deducted, key(asset, participant));
    const returned = deducted < credit ? deducted : credit;
    if (returned !== 0n) {
      const back = returned - this.refill(c, asset, returned);
      this.add(this.bond, asset, back);
      this.fault(asset, -back);
      c.deducted.set(key(asset, participant), deducted - returned);
      this.releaseObligation(participant, asset, returned);
    }
    this.add(this.payouts, key(asset, participant), credit - returned);
    this.flow(participant, asset).received += credit - returned;
    return credit - returned;
  }

  /**
   * `ClearingHouse.claimDebitRefund` (audit M-3, A2-H1): the held excess, once the challenge deadline has passed
   * and the cycle's disputes are closed, from the spare bond only (what it lacks is owed; the game plays with
   * the floor off, so the whole bond is spare);
   * cancelled in a vetoed cycle.
   */
  claimDebitRefund(cycleId: number, asset: string, debtor: string, t: number): bigint {
    const c = this.committed(cycleId);
    const amount = this.get(c.refundHeld, key(asset, debtor));
    if (amount === 0n) refuse("NoRefundHeld");
    if (!c.vetoed) {
      if (t <= c.challengeDeadline) refuse("ChallengeWindowOpen");
      if (c.openChallenges !== 0 && t <= this.answersUntil(c, t)) refuse("DisputesOpen");
    }
    c.refundHeld.set(key(asset, debtor), 0n);
    // What the operator's own answer refunded was set aside from the bond at the answer (audit3 A3-M2).
    const setAside = this.get(c.refundSetAside, key(asset, debtor));
    c.refundSetAside.set(key(asset, debtor), 0n);
    this.add(this.held, asset, -setAside);
    if (c.vetoed) {
      this.add(this.bond, asset, setAside);
      return 0n;
    }
    this.add(this.payouts, key(asset, debtor), setAside);
    const rest = amount - setAside;
    const bond = this.get(this.bond, asset);
    const spare = this.spare(asset);
    const paid = rest < spare ? rest : spare;
    this.bond.set(asset, bond - paid);
    this.add(this.payouts, key(asset, debtor), paid);
    if (rest > paid) this.add(this.refundOwed, key(asset, debtor), rest - paid);
    // Counted when owed, as an unanswered credit dispute's payment is.
    this.flow(debtor, asset).refunded += amount;
    return setAside + paid;
  }

  /** `ClearingHouse.recoverDeduction` (audit M-2): what no claim returned, from the recipient's collateral. */
  recoverDeduction(cycleId: number, asset: string, recipient: string, t: number): bigint {
    const c = this.committed(cycleId);
    const amount = this.get(c.deducted, key(asset, recipient));
    if (amount === 0n) refuse("NoDeduction");
    if (!c.vetoed && t <= c.paymentDeadline) refuse("PaymentWindowOpen");
    c.deducted.set(key(asset, recipient), 0n);
    if (c.vetoed) {
      this.releaseObligation(recipient, asset, amount);
      return 0n;
    }
    if (amount > this.obligation(recipient, asset)) throw new Error("model: recovery above the obligation");
    const k = key(recipient, asset);
    const balance = this.get(this.balances, k);
    const covered = amount < balance ? amount : balance;
    this.add(this.locked, k, -amount);
    this.balances.set(k, balance - covered);
    const back = covered - this.refill(c, asset, covered);
    this.add(this.bond, asset, back);
    this.fault(asset, -back);
    this.flow(recipient, asset).paidOut += covered;
    this.flow(recipient, asset).recovered += covered;
    return covered;
  }

  withdrawPayout(asset: string, account: string): bigint {
    const [head, atRisk] = [this.riskHead, new Map(this.atRisk)];
    this.coverOwed(asset, account);
    const amount = this.get(this.payouts, key(asset, account));
    if (amount === 0n) {
      // The revert undoes the releases the cover made (nothing else of it moved: it paid nothing).
      this.riskHead = head;
      for (const [a, v] of atRisk) this.atRisk.set(a, v);
      refuse("NoPayout");
    }
    this.payouts.set(key(asset, account), 0n);
    return amount;
  }

  private coverOwed(asset: string, payer: string): void {
    const owed = this.get(this.refundOwed, key(asset, payer));
    if (owed === 0n) return;
    // The floor's share may still count settled cycles: released first (audit3 A3-M3).
    if (this.spare(asset) < owed) this.releaseSettled(MAX_RELEASES);
    const bond = this.get(this.bond, asset);
    const spare = this.spare(asset);
    const amount = owed < spare ? owed : spare;
    if (amount === 0n) return;
    this.bond.set(asset, bond - amount);
    this.refundOwed.set(key(asset, payer), owed - amount);
    this.add(this.payouts, key(asset, payer), amount);
  }

  /**
   * `disputeCredit` of guarantee `id` (listed in its payer's tree: the harness proves it) by its recipient,
   * in the contract's order of checks.
   */
  disputeCredit(cycleId: number, id: string, t: number): void {
    const c = this.committed(cycleId);
    if (c.vetoed) refuse("CycleIsVetoed");
    if (t > c.challengeDeadline) refuse("ChallengeWindowClosed");
    this.checkKey();
    const g = this.guarantees.get(id.toLowerCase())!;
    if (c.creditDisputes.has(g.id)) refuse("CreditDisputeNotOpen");
    // (A finalized guarantee's credit dispute carries its payer's finalization: validated.)
    if (!this.validated(g) || this.consumption(g.id) === Consumption.Remunerated) refuse("CreditNotOwed");
    c.creditDisputes.set(g.id, {
      status: CreditDisputeStatus.Open,
      recipient: g.recipient,
      asset: g.asset,
      amount: g.amount,
    });
    c.openChallenges += 1;
    this.openChallenges += 1;
  }

  private openCredit(cycleId: number, id: string) {
    const c = this.committed(cycleId);
    if (c.vetoed) refuse("CycleIsVetoed");
    const d = c.creditDisputes.get(id.toLowerCase());
    if (d === undefined || d.status !== CreditDisputeStatus.Open) refuse("CreditDisputeNotOpen");
    return { c, d: d! };
  }

  /** `answerCreditDispute` with the credit proof the cycle has (`credited`: the recipient's tree holds it). */
  answerCreditDispute(cycleId: number, id: string, credited: boolean, t: number): void {
    const { c, d } = this.openCredit(cycleId, id);
    if (t > c.answerDeadline) refuse("AnswerWindowClosed");
    if (!credited) refuse("NotCreditedToRecipient");
    d.status = CreditDisputeStatus.Answered;
    c.openChallenges -= 1;
    this.openChallenges -= 1;
  }

  /** `payUnansweredCredit`: the bond pays the recipient (what it lacks is owed), once; lapses if paid outside. */
  payUnansweredCredit(cycleId: number, id: string, t: number): CreditDisputeStatus {
    const { c, d } = this.openCredit(cycleId, id);
    if (t <= c.answerDeadline) refuse("AnswerWindowOpen");
    c.openChallenges -= 1;
    this.openChallenges -= 1;
    if (this.consumption(id) === Consumption.Remunerated) return (d.status = CreditDisputeStatus.Lapsed);
    d.status = CreditDisputeStatus.Paid;
    const bond = this.get(this.bond, d.asset);
    const spare = this.spare(d.asset);
    const paid = d.amount < spare ? d.amount : spare;
    this.bond.set(d.asset, bond - paid);
    this.add(this.payouts, key(d.asset, d.recipient), paid);
    if (d.amount > paid) {
      this.add(this.refundOwed, key(d.asset, d.recipient), d.amount - paid);
    }
    this.flow(d.recipient, d.asset).received += d.amount;
    this.add(this.faults, d.asset, d.amount);
    this.marks.set(id.toLowerCase(), { how: Consumption.Remunerated, cycleId: 0 });
    return d.status;
  }

  disputeGuarantee(cycleId: number, asset: string, debtor: string, index: number, t: number): void {
    const c = this.committed(cycleId);
    if (c.vetoed) refuse("CycleIsVetoed");
    if (t > c.challengeDeadline) refuse("ChallengeWindowClosed");
    // A net creditor (no debt) disputes its outgoing tree too (issue 25, finding 2).
    const debt = c.debts.get(key(asset, debtor));
    // ... once its summary is revealed (an account with nothing in the cycle cannot hold its claims up).
    if (debt === undefined && !(c.games.get(key(asset, debtor))?.revealed ?? false)) refuse("NoDebt");
    if (
      debt !== undefined &&
      ![DebtStatus.Open, DebtStatus.Challenged, DebtStatus.Answered].includes(debt.status)
    )
      refuse("DebtAlreadyResolved");
    if (index >= 1 << 24) refuse("InvalidSumPath");
    const dk = key(asset, debtor, index);
    if ((c.disputes.get(dk) ?? DisputeStatus.None) !== DisputeStatus.None) refuse("DisputeNotOpen");
    // Nothing sits past a revealed tree's end (audit M-1).
    const shown = c.games.get(key(asset, debtor));
    if (shown?.revealed && index >= 2 ** shown.depth) refuse("PositionPastTreeEnd");
    c.disputes.set(dk, DisputeStatus.Open);
    if (debt !== undefined) debt.status = DebtStatus.Challenged;
    const game = this.game(c, asset, debtor);
    game.openDisputes += 1;
    c.openChallenges += 1;
    this.openChallenges += 1;
  }

  private game(c: ModelCycle, asset: string, debtor: string) {
    const gk = key(asset, debtor);
    let game = c.games.get(gk);
    if (game === undefined)
      c.games.set(gk, (game = { revealed: false, openDisputes: 0, depth: 0, total: 0n, settled: 0n }));
    return game;
  }

  /**
   * `answerDispute` of position `index`: `prove` answers with the guarantee listed there (its certificate and
   * signature), otherwise the answer is empty (a concession, or the empty node of a padding position or of
   * one past the tree's end). Returns the outcome.
   */
  answerDispute(
    cycleId: number,
    asset: string,
    debtor: string,
    index: number,
    prove: boolean,
    t: number,
    byOperator = true,
    withFinalization = true,
  ): DisputeStatus {
    const c = this.committed(cycleId);
    if (c.vetoed) refuse("CycleIsVetoed");
    // Past the committed deadline while an operator key gap extends it (audit M-2).
    if (t > this.answersUntil(c, t)) refuse("AnswerWindowClosed");
    const dk = key(asset, debtor, index);
    if ((c.disputes.get(dk) ?? DisputeStatus.None) !== DisputeStatus.Open) refuse("DisputeNotOpen");
    // A void closed the whole game (its positions keep the Open mark; audit2 A2-I1).
    if (this.game(c, asset, debtor).openDisputes === 0) refuse("DisputeNotOpen");
    const tree = c.built.trees.get(key(debtor, asset))!;
    const positions = c.positions.get(key(debtor, asset)) ?? [];
    const info = positions[index];
    const pastEnd = index >= 1 << tree.summary.depth;
    let outcome: DisputeStatus;
    let gid: string | undefined;
    // The operator's own outcomes (a concession, a removal as not validated): their refund above the debit is
    // set aside from the bond at once, or the answer is refused (audit3 A3-M2).
    let setAside = false;
    let notValidated = false;
    if (pastEnd || info === undefined) outcome = DisputeStatus.Dismissed;
    else if (!prove) {
      // Only the operator concedes (audit H-1: anyone else could void an honest debit against the bond).
      if (!byOperator) refuse("ConcessionNotAllowed");
      outcome = DisputeStatus.Voided;
      setAside = true;
    } else {
      this.checkKey();
      gid = info.guaranteeId!;
      const g = this.guarantees.get(gid)!;
      if (this.consumption(gid) === Consumption.Remunerated) outcome = DisputeStatus.Removed;
      else if (!this.validated(g) || (g.finalized && !withFinalization)) {
        // "Not validated" is the operator's call (audit H-1: optional evidence could be left out).
        if (!byOperator) refuse("RemovalNotAllowed");
        outcome = DisputeStatus.Removed;
        setAside = true;
        notValidated = true;
      } else {
        const usedIn = this.answeredIn.get(gid) ?? 0;
        if (usedIn !== 0 && !this.cycle(usedIn)!.vetoed) refuse("GuaranteeAlreadyUsed");
        outcome = DisputeStatus.Upheld;
      }
    }
    if (setAside) this.checkSpareForRefund(c, asset, debtor, info!.amount);
    // Every check passed: apply.
    const game = this.game(c, asset, debtor);
    if (!game.revealed) this.reveal(c, asset, debtor);
    if (outcome !== DisputeStatus.Dismissed) game.settled += info!.amount;
    c.disputes.set(dk, outcome);
    if (outcome === DisputeStatus.Upheld) {
      this.answeredIn.set(gid!, cycleId);
      // The cycle pays it: a V2 id the commit left unmarked is netted by the answer (audit2 A2-M2).
      const g = this.guarantees.get(gid!)!;
      if (g.version === 2 && this.consumption(gid!) === Consumption.None)
        this.marks.set(gid!, { how: Consumption.Netted, cycleId });
    }
    if (notValidated && (this.answeredIn.get(gid!) ?? 0) !== cycleId) {
      // The cycle no longer pays it: its listing cannot be marked, and a mark of it is undone (audit3 A3-L2).
      this.removedFrom.add(key(gid!.toLowerCase(), String(cycleId)));
      const m = this.marks.get(gid!);
      if (m !== undefined && m.how === Consumption.Netted && m.cycleId === cycleId) this.marks.delete(gid!);
    }
    if (outcome === DisputeStatus.Removed) {
      const g = this.guarantees.get(gid!)!;
      this.add(c.deducted, key(asset, g.recipient), info!.amount);
      // Locked on the recipient's collateral until a claim returns it or recoverDeduction takes it (M-2).
      this.add(this.locked, key(g.recipient, asset), info!.amount);
    }
    if (outcome === DisputeStatus.Voided || outcome === DisputeStatus.Removed) {
      this.fault(asset, info!.amount);
      this.reduce(c, asset, debtor, info!.amount, setAside);
    }
    this.closeDispute(c, asset, debtor);
    return outcome;
  }

  /**
   * Refuses (`RefundAboveSpareBond`) an operator's answer taking `amount` off `debtor`'s debit whose refund above
   * the debit exceeds the bond left once the reveal's cut (a first answer) and the position's cut are funded
   * from it (`spareBond`: above the floor's share, the whole bond with the floor off). Changes nothing.
   */
  private checkSpareForRefund(c: ModelCycle, asset: string, debtor: string, amount: bigint): void {
    let debit = c.debts.get(key(asset, debtor))?.amount ?? 0n;
    let bond = this.get(this.bond, asset);
    const take = (x: bigint): void => {
      bond -= x < bond ? x : bond;
    };
    if (!this.game(c, asset, debtor).revealed) {
      const { total, inTotal } = c.built.trees.get(key(debtor, asset))!.summary;
      const net = total > inTotal ? total - inTotal : 0n;
      if (debit > net) {
        take(debit - net);
        debit = net;
      }
    }
    const cut = amount < debit ? amount : debit;
    take(cut);
    // `ClearingBooks.spareBond` of what is left (above the floor's share of the debits at risk), less the
    // refunds already owed: they come first (audit4 A4-L2).
    const spare = this.spare(asset, bond);
    const owed = this.totalRefundOwed(asset);
    if (amount - cut > (spare > owed ? spare - owed : 0n)) refuse("RefundAboveSpareBond");
  }

  /** One dispute of the game closed; with its last, the debt is Answered (or Voided when nothing is owed). */
  private closeDispute(c: ModelCycle, asset: string, debtor: string): void {
    const game = this.game(c, asset, debtor);
    game.openDisputes -= 1;
    c.openChallenges -= 1;
    this.openChallenges -= 1;
    const owes = c.debts.get(key(asset, debtor));
    if (game.openDisputes === 0 && owes !== undefined) {
      const debt = owes;
      if (debt.amount === 0n) {
        debt.status = DebtStatus.Voided;
        this.resolveDebt(c);
      } else debt.status = DebtStatus.Answered;
    }
  }

  /**
   * `voidUnansweredPosition` (audit M-1): after the answer deadline anyone concedes one open position of a
   * revealed tree at its proven amount (Voided), or dismisses it when empty or past the end.
   */
  voidUnansweredPosition(
    cycleId: number,
    asset: string,
    debtor: string,
    index: number,
    t: number,
  ): DisputeStatus {
    const c = this.committed(cycleId);
    if (c.vetoed) refuse("CycleIsVetoed");
    if (t <= c.answerDeadline) refuse("AnswerWindowOpen");
    if (t <= this.answersUntil(c, t)) refuse("AnswerWindowExtended");
    const dk = key(asset, debtor, index);
    if ((c.disputes.get(dk) ?? DisputeStatus.None) !== DisputeStatus.Open) refuse("DisputeNotOpen");
    const game = this.game(c, asset, debtor);
    // A void closed every open dispute at once (the positions keep their Open mark on chain too).
    if (game.openDisputes === 0) refuse("DisputeNotOpen");
    if (!game.revealed) refuse("SummaryNotRevealed");
    const info = index < 2 ** game.depth ? (c.positions.get(key(debtor, asset)) ?? [])[index] : undefined;
    const amount = info?.amount ?? 0n;
    const outcome = amount === 0n ? DisputeStatus.Dismissed : DisputeStatus.Voided;
    game.settled += amount;
    c.disputes.set(dk, outcome);
    if (amount !== 0n) {
      this.fault(asset, amount);
      this.reduce(c, asset, debtor, amount);
    }
    this.closeDispute(c, asset, debtor);
    return outcome;
  }

  /** Reveals `account`'s summary: a debit above its net position (out − in, 0 for a creditor) is cut. */
  private reveal(c: ModelCycle, asset: string, account: string): void {
    const game = this.game(c, asset, account);
    const tree = c.built.trees.get(key(account, asset))!;
    game.revealed = true;
    game.depth = tree.summary.depth;
    game.total = tree.summary.total;
    const debit = c.debts.get(key(asset, account))?.amount ?? 0n;
    const net = tree.summary.total > tree.summary.inTotal ? tree.summary.total - tree.summary.inTotal : 0n;
    if (debit > net) {
      this.fault(asset, debit - net);
      this.reduce(c, asset, account, debit - net);
    }
  }

  /** `revealSummary` by anyone: once, while the cycle stands and the account's debt is unresolved. */
  revealSummary(cycleId: number, asset: string, account: string): void {
    const c = this.committed(cycleId);
    const debt = c.debts.get(key(asset, account));
    const game = this.game(c, asset, account);
    if (
      c.vetoed ||
      game.revealed ||
      (debt !== undefined &&
        ![DebtStatus.Open, DebtStatus.Challenged, DebtStatus.Answered].includes(debt.status))
    )
      refuse("SummaryNotRevealable");
    if (!c.built.trees.has(key(account, asset))) refuse("InvalidDebitSummary");
    this.reveal(c, asset, account);
  }

  private reduce(c: ModelCycle, asset: string, debtor: string, amount: bigint, setAside = false): void {
    if (amount === 0n) return;
    const debt = c.debts.get(key(asset, debtor)) ?? { amount: 0n };
    const cut = amount < debt.amount ? amount : debt.amount;
    debt.amount -= cut;
    this.fundFromBond(c, asset, cut);
    const excess = amount - cut;
    const owedBefore = this.totalRefundOwed(asset);
    // Held for the debtor, owed by the bond, never paid into the cycle (audit A2-H1; M-3: a veto cancels it).
    if (excess !== 0n) this.add(c.refundHeld, key(asset, debtor), excess);
    if (excess !== 0n && setAside) {
      // The operator's own answer: taken from the bond now (checked by checkSpareForRefund; audit3 A3-M2).
      const bond = this.get(this.bond, asset);
      if (excess + owedBefore > this.spare(asset))
        throw new Error("model: a set-aside refund above the spare bond less what is owed");
      this.bond.set(asset, bond - excess);
      this.add(this.held, asset, excess);
      this.add(c.refundSetAside, key(asset, debtor), excess);
    }
    if (cut !== 0n) this.releaseObligation(debtor, asset, cut);
  }

  voidUnansweredDebit(cycleId: number, asset: string, debtor: string, t: number): bigint {
    const c = this.committed(cycleId);
    if (c.vetoed) refuse("CycleIsVetoed");
    if (t <= c.answerDeadline) refuse("AnswerWindowOpen");
    const until = this.answersUntil(c, t);
    if (t <= until) refuse("AnswerWindowExtended");
    const game = this.game(c, asset, debtor);
    const debt = c.debts.get(key(asset, debtor));
    if (game.openDisputes === 0) {
      if (debt === undefined) refuse("NoDebt");
      refuse("DebtAlreadyResolved");
    }
    // Revealed: open positions are conceded one by one at their proven amounts until the payment deadline,
    // which a key gap moves as far as the answer deadline, for unrevealed trees too (audit A2-L1).
    const extension = until - c.answerDeadline;
    if ((game.revealed || extension !== 0) && t <= c.paymentDeadline + extension) refuse("PaymentWindowOpen");
    c.openChallenges -= game.openDisputes;
    this.openChallenges -= game.openDisputes;
    game.openDisputes = 0;
    if (game.revealed) {
      // Nobody proved them: every position not answered yet counts as conceded (withholding never beats
      // conceding); what answers proved stays owed (audit M-1).
      const rest = game.total - game.settled;
      game.settled = game.total;
      this.fault(asset, rest);
      this.reduce(c, asset, debtor, rest);
      if (debt !== undefined && debt.status === DebtStatus.Challenged && debt.amount !== 0n) {
        debt.status = DebtStatus.Answered;
        return 0n;
      }
    }
    if (debt === undefined || debt.status !== DebtStatus.Challenged) return 0n;
    const amount = debt.amount;
    debt.status = DebtStatus.Voided;
    if (!game.revealed) c.unanswered.set(key(asset, debtor), c.committedDebits.get(key(asset, debtor)) ?? 0n);
    this.fault(asset, amount);
    this.fundFromBond(c, asset, amount);
    this.resolveDebt(c);
    if (amount !== 0n) this.releaseObligation(debtor, asset, amount);
    return amount;
  }

  vetoCycle(cycleId: number, t: number): void {
    const c = this.committed(cycleId);
    if (c.vetoed) refuse("CycleIsVetoed");
    if (t > c.challengeDeadline) refuse("ChallengeWindowClosed");
    c.vetoed = true;
    this.openChallenges -= c.openChallenges;
    c.openChallenges = 0;
    // What the bond paid into the cycle goes back to it (ClearingHouse.vetoCycle, VetoedBondReturned).
    for (const [asset, a] of c.assets) {
      if (a.bondFunded === 0n) continue;
      a.funded -= a.bondFunded;
      this.add(this.held, asset, -a.bondFunded);
      // The fault happened (the operator conceded); the bond merely got its money back.
      this.add(this.bond, asset, a.bondFunded);
      a.bondFunded = 0n;
    }
    // Core re-commits the vetoed cycle's guarantees: they are back in its pool.
    for (const gid of c.listed) {
      const g = this.guarantees.get(gid);
      if (g !== undefined && g.state === "listed" && g.cycle === c.id && g.payable) g.state = "pending";
    }
  }

  releaseVetoedDebt(cycleId: number, asset: string, debtor: string, t: number): void {
    const c = this.committed(cycleId);
    if (!c.vetoed) refuse("CycleNotVetoed");
    const debt = c.debts.get(key(asset, debtor)) ?? refuse("NoDebt");
    if (debt.status === DebtStatus.Voided || debt.status === DebtStatus.Refunded)
      refuse("DebtAlreadyResolved");
    const refunded = debt.status === DebtStatus.Paid;
    if (!refunded) {
      const releasableAt = c.committedAt + (c.doubleListingDeadline - c.defaultDeadline);
      if (t <= releasableAt) refuse("VetoedDebtLocked");
    }
    debt.status = refunded ? DebtStatus.Refunded : DebtStatus.Voided;
    if (refunded) {
      c.assets.get(asset)!.funded -= debt.amount;
      this.add(this.held, asset, -debt.amount);
      this.add(this.payouts, key(asset, debtor), debt.amount);
      this.flow(debtor, asset).refunded += debt.amount;
    } else if (debt.amount !== 0n) this.releaseObligation(debtor, asset, debt.amount);
  }
}
