/**
 * Clearing keeper (docs/operator-async.md): once a cycle's payment deadline has passed, covers every
 * debt still open with `ClearingHouse.coverDefault`, so creditors are funded even if nobody else acts
 * (the grace-period invariant budgets `defaultWindow` for this). "Passed" is by chain time (the indexed
 * head's timestamp), as the ClearingHouse judges it, never by Core's wall clock. Optionally (`claimCredits`) it also
 * claims funded credits on the creditors' behalf: `claimNetCredit` sets the credit aside for the participant
 * (`ClearingHouse.payoutOf`), never for the caller, and sends nothing (pull payment: a creditor that cannot
 * receive the asset never makes the keeper's call revert); the creditor withdraws it with
 * `withdrawPayout(asset, to)`. This secures the creditor's share of the cycle's liquidity early and only
 * spends the operator's gas. A vetoed cycle's paid debts are refunded the same way (set aside for the debtor).
 * It also settles what disputes left held (docs/clearing.md "Deductions are recovered", "One refund path"):
 * once a cycle's challenge deadline has passed it claims each disputed debtor's held refund
 * (`claimDebitRefund`: from the bond, set aside for the debtor or owed; the chain answers `DisputesOpen` until
 * the cycle's disputes are closed, a later tick retries; in a vetoed cycle at once, which cancels it and
 * unblocks the bond's withdrawal), and once its payment deadline has passed (or at once in a
 * vetoed cycle) it recovers each removed guarantee's deduction from its recipient (`recoverDeduction`, back
 * into the bond that fronted it), so neither waits for someone else to call. While the bond floor's share
 * matters (`releaseRisk`: refunds owed or held, or commits held back below the floor) it releases settled
 * cycles from `ClearingHouse.bondAtRisk` (`releaseSettledRisk`, before the held refunds: what it frees is paid
 * to them rather than owed; the chain answers `NoSettledRisk` when nothing is settled yet, and nothing is sent).
 *
 * Idempotent by construction: every call is estimated first, and a debt already resolved (or a credit
 * claimed or not yet funded) reverts the estimate, so nothing is sent. Open debts are read from Core's
 * books (the indexer) and re-checked on chain by that estimate. A call sent on an earlier tick and not
 * mined yet is not sent again: the operator sender answers it as already in flight and follows it.
 */
import type { Clock } from "../clock";
import type { DeploymentInfo } from "../deployment";
import type { Logger } from "../logger";
import { Interface } from "ethers";
import { clearingHouseInterface, commitErrorsInterface } from "../chain/abi";
import { CallRevertedError, type OperatorSender } from "../chain/sender";
import type { StoreAreas } from "../store";
import { WireError } from "../../sdk/errors";
import type { ActiveReserve, CycleRecord } from "../store/repositories";
import {
  DisputeAnswerError,
  buildDisputeAnswer,
  debtorTreeOf,
  rebuildCycleDebitTrees,
  type AnswerableGuarantee,
} from "./dispute-answer";
import { guaranteeLeafOf } from "./commit-plan";
import { OPEN_CREDIT_DISPUTES_KEY, parseOpenCreditDisputes } from "./credit-disputes";
import { buildDebtorTree, creditProofOf, debitSummaryProof, summaryStruct } from "../../sdk/debit-tree";
import { cycleCommitArgs } from "./cycle-json";
import { plannedGuarantees } from "./planned-guarantees";
import { type AnswerCertifier, certifierProblem, type CertifierStatus } from "./answer-certifier";

/**
 * The one Vault call the keeper makes, with the reverts that say "not yet" (kept local: the chain
 * bindings are generated elsewhere, and this is all the keeper needs of the Vault).
 */
const reserveInterface = new Interface([
  "function releaseReserve(bytes32 guaranteeId)",
  "function releaseListedReserve(bytes32 guaranteeId, uint256 cycleId, bytes32 signatureHash, ((bytes32 sumRoot, uint256 total, uint256 depth, bytes32 inRoot, uint256 inTotal, uint256 inDepth) summary, bytes32[] summaryProof, uint256 index, (bytes32 hash, uint256 sum)[] path) proof)",
  "error CycleNotSettled(uint256 cycleId)",
  "error GuaranteeNotListed(bytes32 guaranteeId, uint256 cycleId)",
  "error ReserveNotFound(bytes32 guaranteeId)",
  "error ReserveStillActive(bytes32 guaranteeId, uint64 expiresAt)",
]);

/** A planned cycle's guarantees and trees, rebuilt once per tick to answer its disputes. */
interface CycleAnswering {
  guarantees: AnswerableGuarantee[];
  trees: ReturnType<typeof rebuildCycleDebitTrees>;
  byId: ReadonlyMap<string, AnswerableGuarantee>;
}

/** Reserves released per tick at most (each is one transaction; the rest wait for the next tick). */
export const RESERVES_RELEASED_PER_TICK = 50;

/**
 * Settled cycles one `releaseSettledRisk` releases at most (≈ 6k gas each plus ≈ 5.5k per asset of the
 * cycle: far below a block at any realistic asset count; the rest go in the next tick's call).
 */
export const RISK_RELEASES_PER_CALL = 64;

export interface ClearingKeeperOptions {
  store: StoreAreas<"cycles" | "guarantees" | "operatorState" | "reserves">;
  sender: OperatorSender;
  deployment: Pick<DeploymentInfo, "clearingHouse" | "vault">;
  /**
   * Chain time (the indexed head, operator/clock.ts ChainClock): `coverDefault` reverts until
   * `block.timestamp` passes the payment deadline, so the keeper judges that deadline by the chain.
   */
  chainClock: Clock;
  logger: Logger;
  /** Also claim funded credits for creditors (set aside for them; costs the operator gas). */
  claimCredits: boolean;
  /**
   * Re-signs each answered guarantee's claims with Core's current BLS key after checking it is the Vault's
   * (answer-certifier.ts): a certificate stored under a rotated key no longer verifies on chain. Without
   * it the stored certificate is sent as issued (tests of the keeper alone).
   */
  certifier?: AnswerCertifier;
  /**
   * Whether releasing settled cycles from the bond floor's share would help now (refunds the bond owes or
   * holds, or commits held back by the floor); absent, the keeper never calls `releaseSettledRisk`.
   */
  releaseRisk?: () => boolean;
}

export interface KeeperTickResult {
  /** Disputed positions answered (proven, or conceded when Core cannot prove them). */
  answered: {
    cycleId: number;
    asset: string;
    debtor: string;
    position: number;
    conceded: boolean;
    txHash: string;
  }[];
  /**
   * Recipients' credit disputes answered with the guarantee's credit proof (`answerCreditDispute`), or, past
   * the answer deadline, paid from the bond (`payUnansweredCredit`: `paid`).
   */
  creditsAnswered: { cycleId: number; guaranteeId: string; paid: boolean; txHash: string }[];
  /** Debts with a dispute left unanswered, voided after the answer deadline (the bond funds the creditors). */
  voided: { cycleId: number; asset: string; debtor: string; txHash: string }[];
  /** Debts of vetoed cycles released (obligation freed or payment refunded). */
  released: { cycleId: number; asset: string; debtor: string; txHash: string }[];
  covered: { cycleId: number; asset: string; debtor: string; txHash: string }[];
  claimed: { cycleId: number; asset: string; participant: string; txHash: string }[];
  /** Sellers' reserves freed (`Vault.releaseReserve`): their guarantee was netted or remunerated, or they expired. */
  reservesReleased: { guaranteeId: string; user: string; txHash: string }[];
  /** Held refunds claimed for debtors and deductions recovered from recipients (after disputes). */
  holdingsSettled: {
    call: HoldingCall;
    cycleId: number;
    asset: string;
    account: string;
    txHash: string;
  }[];
  /** The `releaseSettledRisk` sent this tick (settled cycles leave `bondAtRisk`), or null. */
  riskReleased: string | null;
}

/**
 * What a keeper call came to: its tx hash, "in_flight" (sent on an earlier tick, not mined yet), or the
 * estimate's revert with its decoded error name (null when undecodable), by which callers tell "done" and "not yet" apart.
 */
type SendOutcome = string | "in_flight" | { reverted: string | null };

/** The two calls that settle what a dispute left held. */
export type HoldingCall = "claimDebitRefund" | "recoverDeduction";

/**
 * Reverts of an answer that say Core's certificate key is not the Vault's: never conceded for (a key gap is
 * not the payer's doing, and the chain extends the answer window for it: docs/clearing.md "Operator key gaps").
 */
const KEY_GAP_ERRORS: ReadonlySet<string> = new Set(["OperatorKeyNotSet", "InvalidCertificateSignature"]);

/** Reverts that mean "nothing (more) to settle here": the key is not asked again (until a restart). */
const HOLDING_SETTLED_ERRORS: ReadonlySet<string> = new Set(["NoRefundHeld", "NoDeduction", "CycleIsVetoed"]);

/** {@link ClearingKeeper}'s `voidPosition` sent the debtor's `revealSummary` first (the void follows). */
const REVEALING = "revealing";

export class ClearingKeeper {
  private running: Promise<KeeperTickResult> | null = null;
  /** Holdings found settled (or never held): `call:cycle:asset:account`. */
  private readonly settledHoldings = new Set<string>();

  constructor(private readonly options: ClearingKeeperOptions) {}

  tick(): Promise<KeeperTickResult> {
    this.running ??= this.step().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async step(): Promise<KeeperTickResult> {
    const result: KeeperTickResult = {
      answered: [],
      creditsAnswered: [],
      voided: [],
      released: [],
      covered: [],
      claimed: [],
      reservesReleased: [],
      holdingsSettled: [],
      riskReleased: null,
    };
    // Answers first: a dispute unanswered past its deadline voids an honest debit against the bond.
    await this.answerDisputes(result);
    await this.answerCreditDisputes(result);
    await this.releaseVetoed(result);
    await this.coverDefaults(result);
    if (this.options.claimCredits) await this.claimCredits(result);
    await this.releaseSettledRisk(result);
    await this.settleHoldings(result);
    await this.releaseReserves(result);
    return result;
  }

  /**
   * Stops counting settled cycles (finalized or vetoed) in `ClearingHouse.bondAtRisk` when that helps
   * (`releaseRisk`): refunds are paid only from the bond above the floor's share of it, and a commit must fit
   * under it. The estimate reverts `NoSettledRisk` while the oldest counted cycle is open: nothing is sent.
   */
  private async releaseSettledRisk(result: KeeperTickResult): Promise<void> {
    if (!this.options.releaseRisk?.()) return;
    const data = clearingHouseInterface.encodeFunctionData("releaseSettledRisk", [RISK_RELEASES_PER_CALL]);
    result.riskReleased = await this.trySend(data, { call: "releaseSettledRisk" });
  }

  /**
   * Claims held refunds (cancels them in a vetoed cycle) and recovers deductions that disputes left
   * (candidates: the removed and voided positions in Core's books). The estimate re-checks each on chain; a
   * revert saying nothing is held (`NoRefundHeld`, `NoDeduction`, `CycleIsVetoed`) retires the key, any other
   * ("not yet": `DisputesOpen`, `PaymentWindowOpen`) leaves it for a later tick.
   */
  private async settleHoldings(result: KeeperTickResult): Promise<void> {
    const { store, chainClock } = this.options;
    const now = chainClock.nowSeconds();
    const disputes = [
      ...(await store.cycles.listCycleDisputes({ status: "REMOVED" })),
      ...(await store.cycles.listCycleDisputes({ status: "VOIDED" })),
    ];
    const cycles = new Map<number, CycleRecord | null>();
    for (const dispute of disputes) {
      if (!cycles.has(dispute.cycleId))
        cycles.set(dispute.cycleId, await store.cycles.getCycle(dispute.cycleId));
      const cycle = cycles.get(dispute.cycleId);
      if (!cycle) continue;
      const vetoed = cycle.state === "VETOED";
      if (vetoed || (cycle.challengeDeadline !== null && now > cycle.challengeDeadline)) {
        await this.settleHolding("claimDebitRefund", dispute.cycleId, dispute.asset, dispute.debtor, result);
      }
      if (dispute.status !== "REMOVED" || dispute.guaranteeId === null) continue;
      if (!vetoed && (cycle.paymentDeadline === null || now <= cycle.paymentDeadline)) continue;
      const guarantee = await store.guarantees.getClearingGuarantee(dispute.guaranteeId);
      if (guarantee) {
        await this.settleHolding(
          "recoverDeduction",
          dispute.cycleId,
          dispute.asset,
          guarantee.recipient,
          result,
        );
      }
    }
  }

  private async settleHolding(
    call: HoldingCall,
    cycleId: number,
    asset: string,
    account: string,
    result: KeeperTickResult,
  ): Promise<void> {
    const key = `${call}:${cycleId}:${asset}:${account}`.toLowerCase();
    if (this.settledHoldings.has(key)) return;
    const data =
      call === "claimDebitRefund"
        ? clearingHouseInterface.encodeFunctionData("claimDebitRefund", [cycleId, asset, account])
        : clearingHouseInterface.encodeFunctionData("recoverDeduction", [cycleId, asset, account]);
    const sent = await this.send(data, { cycle_id: cycleId, asset, account, call }, false);
    if (typeof sent === "string" && sent.startsWith("0x")) {
      this.settledHoldings.add(key);
      result.holdingsSettled.push({ call, cycleId, asset, account, txHash: sent });
    } else if (
      typeof sent === "object" &&
      sent.reverted !== null &&
      HOLDING_SETTLED_ERRORS.has(sent.reverted)
    ) {
      this.settledHoldings.add(key);
    }
  }

  /**
   * Frees sellers' reserves the Vault no longer needs to hold (netted or remunerated guarantee, or expired
   * by chain time), so they do not pin the payer's collateral until someone else calls. Candidates come
   * from Core's books; the estimate re-checks each on chain (a reserve whose netting is not mined yet
   * reverts `ReserveStillActive` and waits for a later tick).
   */
  private async releaseReserves(result: KeeperTickResult): Promise<void> {
    const { store, chainClock, deployment } = this.options;
    const due = await store.reserves.listReleasableReserves(
      chainClock.nowSeconds(),
      RESERVES_RELEASED_PER_TICK,
    );
    for (const reserve of due) {
      const data = reserveInterface.encodeFunctionData("releaseReserve", [reserve.guaranteeId]);
      const txHash = await this.trySend(
        data,
        { guarantee_id: reserve.guaranteeId, user: reserve.user, expires_at: reserve.expiresAt },
        false,
        { to: deployment.vault, errors: reserveInterface, label: "keeper releaseReserve" },
      );
      const released = txHash ?? (reserve.v1 === true ? await this.releaseListed(reserve) : null);
      if (released)
        result.reservesReleased.push({
          guaranteeId: reserve.guaranteeId,
          user: reserve.user,
          txHash: released,
        });
    }
  }

  /**
   * The backstop for a V1 reserve whose guarantee Core netted but its commit did not mark (the reserve was
   * registered after Core planned the cycle; docs/clearing.md, "Reserved V1 ids"): once the cycle is past its
   * challenge deadline, not vetoed, proves the guarantee credited to its recipient (its incoming tree under
   * the cycle's debitsRoot: `Vault.releaseListedReserve`), which marks it netted and frees the reserve before
   * its `collectableAt`
   * (at least one challenge window later). Null when not possible yet or the chain refuses.
   */
  private async releaseListed(reserve: ActiveReserve): Promise<string | null> {
    const { store, chainClock, deployment } = this.options;
    const guarantee = await store.guarantees.getClearingGuarantee(reserve.guaranteeId);
    if (!guarantee || guarantee.cycleId === null) return null;
    const cycle = await store.cycles.getCycle(guarantee.cycleId);
    if (!cycle || !cycle.plannedByCore || (cycle.state !== "COMMITTED" && cycle.state !== "FINALIZED"))
      return null;
    if (cycle.challengeDeadline === null || chainClock.nowSeconds() <= cycle.challengeDeadline) return null;
    const context = { guarantee_id: reserve.guaranteeId, user: reserve.user, cycle_id: cycle.cycleId };
    // The proof that the guarantee is credited to its recipient (its incoming tree under the debitsRoot):
    // a mere listing no longer releases a V1 reserve (issue 25, item 5).
    const answering = await this.answering(cycle);
    if (answering === null) return null;
    const leaf = answering.guarantees.find(
      (g) => g.guaranteeId.toLowerCase() === reserve.guaranteeId.toLowerCase(),
    );
    if (leaf === undefined) return null;
    const l = guaranteeLeafOf(leaf);
    const recipient = buildDebtorTree(answering.guarantees.map(guaranteeLeafOf), l.recipient, l.asset);
    const proof = recipient && creditProofOf(answering.trees, recipient, l.guaranteeId);
    if (!proof) return null;
    const data = reserveInterface.encodeFunctionData("releaseListedReserve", [
      reserve.guaranteeId,
      cycle.cycleId,
      l.signatureHash,
      proof,
    ]);
    return this.trySend(data, context, true, {
      to: deployment.vault,
      errors: reserveInterface,
      label: "keeper releaseListedReserve",
    });
  }

  /**
   * Every open dispute: answered while the answer window is open (chain time), each position on its own:
   * proven with the guarantee there, or conceded when the chain refuses the proof (only that position's
   * amount comes off the debit); after the window the debt is voided (so the creditors are funded from the
   * bond without waiting for anyone).
   */
  private async answerDisputes(result: KeeperTickResult): Promise<void> {
    const { store, chainClock, logger } = this.options;
    const now = chainClock.nowSeconds();
    const voided = new Set<string>();
    const cycles = new Map<number, CycleAnswering | null>();
    // Whether Core's key is the Vault's: read once per tick, and only when there is something to answer.
    let certifier: CertifierStatus | undefined;
    for (const dispute of await store.cycles.listCycleDisputes({ status: "OPEN" })) {
      const cycle = await store.cycles.getCycle(dispute.cycleId);
      if (!cycle || cycle.state === "VETOED") continue;
      const ref = { cycleId: dispute.cycleId, asset: dispute.asset, debtor: dispute.debtor };
      const context = {
        cycle_id: dispute.cycleId,
        asset: dispute.asset,
        debtor: dispute.debtor,
        position: dispute.position,
      };
      if (cycle.answerDeadline !== null && now > cycle.answerDeadline) {
        // A missed answer of a revealed tree Core planned: concede that position alone at its proven amount
        // (audit M-1; what was proven stays owed). Otherwise (no summary on chain, a cycle Core did not
        // plan) the debt is voided; after a reveal the chain allows that only past the payment deadline.
        if (cycle.plannedByCore) {
          if (!cycles.has(cycle.cycleId)) cycles.set(cycle.cycleId, await this.answering(cycle));
          const txHash = await this.voidPosition(cycles.get(cycle.cycleId) ?? null, dispute, context);
          if (txHash === REVEALING) continue;
          if (txHash) {
            result.answered.push({ ...ref, position: dispute.position, conceded: true, txHash });
            continue;
          }
        }
        const key = `${dispute.cycleId}:${dispute.asset}:${dispute.debtor}`;
        if (voided.has(key)) continue;
        const outcome = await this.send(
          clearingHouseInterface.encodeFunctionData("voidUnansweredDebit", [
            dispute.cycleId,
            dispute.asset,
            dispute.debtor,
          ]),
          context,
          false,
        );
        // Still answerable: an operator key change extended the cycle's answer window on chain.
        const extended = typeof outcome === "object" && outcome.reverted === "AnswerWindowExtended";
        if (!extended) {
          voided.add(key);
          if (typeof outcome === "string" && outcome.startsWith("0x"))
            result.voided.push({ ...ref, txHash: outcome });
          continue;
        }
      }
      // A cycle Core did not plan: Core holds no trees for it, so it is never answered; the debtor is made
      // whole from the bond once the answer deadline passes (above).
      if (!cycle.plannedByCore) continue;
      if (!cycles.has(cycle.cycleId)) cycles.set(cycle.cycleId, await this.answering(cycle));
      const answering = cycles.get(cycle.cycleId);
      if (!answering) continue;
      if (this.options.certifier && certifier === undefined) {
        certifier = await this.options.certifier.status();
        const problem = certifierProblem(certifier);
        // Answers would not verify: wait (the chain extends the answer window for a key gap), never concede.
        if (problem !== null) logger.error({ reason: problem }, "cannot answer disputes: operator key");
      }
      let answer: ReturnType<typeof buildDisputeAnswer>;
      let conceded = false;
      try {
        const tree = debtorTreeOf(answering.guarantees, dispute.debtor, dispute.asset);
        answer = buildDisputeAnswer(answering.trees, tree, answering.byId, dispute.position);
        // A proof needs Core's certificate under the Vault's key; a dismissal or concession needs none.
        if (certifier !== undefined && answer.claims !== "0x") {
          if (certifier.kind !== "ready") continue;
          answer = certifier.recertify(answer);
        }
        let sent = await this.sendAnswer(dispute, answer, context);
        if (typeof sent === "object" && sent.reverted !== null && KEY_GAP_ERRORS.has(sent.reverted)) {
          logger.error(
            { ...context, reason: sent.reverted },
            "dispute answer refused: Core's certificate key is not the Vault's; not conceding",
          );
          continue;
        }
        if (typeof sent === "object" && answer.claims !== "0x") {
          // The chain refuses the proof (already used elsewhere, a signature that no longer verifies, ...):
          // concede this position alone rather than let the whole debit be voided at the deadline. Never
          // while the proof is in flight: whichever landed first would win.
          conceded = true;
          answer = buildDisputeAnswer(answering.trees, tree, answering.byId, dispute.position, true);
          sent = await this.sendAnswer(dispute, answer, { ...context, conceded });
        }
        if (typeof sent === "object" && sent.reverted === "RefundAboveSpareBond") {
          // The operator's own outcome refunds more above the debit than the bond can spare (audit3 A3-M2):
          // a top-up lets the next tick land it; otherwise the position is conceded after the answer deadline
          // (voidUnansweredPosition) and its refund owed by the bond.
          logger.error(
            { ...context, reason: sent.reverted },
            "answer refused: its refund above the debit exceeds the spare bond; top the bond up",
          );
        }
        if (typeof sent === "string" && sent.startsWith("0x")) {
          result.answered.push({ ...ref, position: dispute.position, conceded, txHash: sent });
        }
      } catch (error) {
        if (!(error instanceof DisputeAnswerError)) throw error;
        logger.error({ ...context, reason: error.message }, "cannot answer a dispute");
      }
    }
  }

  /**
   * Every open credit dispute (docs/clearing.md "Misdirected credits"): answered with the guarantee's credit
   * proof in its recipient's incoming tree while the answer window is open; past it, the recipient is paid
   * from the bond (what the chain owes it; a Core that credited the guarantee answered in time).
   */
  private async answerCreditDisputes(result: KeeperTickResult): Promise<void> {
    const { store, chainClock, logger } = this.options;
    const open = parseOpenCreditDisputes(
      await store.operatorState.getOperatorState(OPEN_CREDIT_DISPUTES_KEY),
    );
    const now = chainClock.nowSeconds();
    const cycles = new Map<number, CycleAnswering | null>();
    for (const d of open) {
      const cycle = await store.cycles.getCycle(d.cycleId);
      if (!cycle || cycle.state === "VETOED") continue;
      const context = { cycle_id: d.cycleId, guarantee_id: d.guaranteeId };
      if (cycle.answerDeadline !== null && now > cycle.answerDeadline) {
        const data = clearingHouseInterface.encodeFunctionData("payUnansweredCredit", [
          d.cycleId,
          d.guaranteeId,
        ]);
        const txHash = await this.trySend(data, context);
        if (txHash)
          result.creditsAnswered.push({ cycleId: d.cycleId, guaranteeId: d.guaranteeId, paid: true, txHash });
        continue;
      }
      if (!cycle.plannedByCore) continue;
      if (!cycles.has(cycle.cycleId)) cycles.set(cycle.cycleId, await this.answering(cycle));
      const answering = cycles.get(cycle.cycleId);
      const g = answering?.byId.get(d.guaranteeId);
      if (!answering || g === undefined) {
        logger.error(context, "cannot answer a credit dispute: not a guarantee of the cycle Core planned");
        continue;
      }
      const l = guaranteeLeafOf(g);
      const recipient = buildDebtorTree(answering.guarantees.map(guaranteeLeafOf), l.recipient, l.asset);
      const proof = recipient && creditProofOf(answering.trees, recipient, l.guaranteeId);
      if (!proof) {
        logger.error(context, "cannot answer a credit dispute: no credit proof");
        continue;
      }
      const data = clearingHouseInterface.encodeFunctionData("answerCreditDispute", [
        d.cycleId,
        d.guaranteeId,
        proof,
      ]);
      const txHash = await this.trySend(data, context, true);
      if (txHash)
        result.creditsAnswered.push({ cycleId: d.cycleId, guaranteeId: d.guaranteeId, paid: false, txHash });
    }
  }

  /** The trees of a cycle Core planned, rebuilt from its stored guarantees (null, logged, if they differ). */
  private async answering(cycle: CycleRecord): Promise<CycleAnswering | null> {
    const { store, logger } = this.options;
    const guarantees = await plannedGuarantees(store, cycle);
    try {
      const trees = rebuildCycleDebitTrees(cycleCommitArgs(cycle).debitsRoot, guarantees);
      const byId = new Map<string, AnswerableGuarantee>(
        guarantees.map((g) => [g.guaranteeId.toLowerCase(), g]),
      );
      return { guarantees, trees, byId };
    } catch (error) {
      if (!(error instanceof DisputeAnswerError) && !(error instanceof WireError)) throw error;
      logger.error(
        { cycle_id: cycle.cycleId, reason: error.message },
        "cannot rebuild a cycle's debtor trees",
      );
      return null;
    }
  }

  /**
   * `voidUnansweredPosition` for one open dispute past the answer deadline, with the position's node and path
   * from the trees Core planned: the tx hash; {@link REVEALING} when the debtor's summary is not on chain yet
   * and its `revealSummary` was sent instead (no key needed; the position is voided on a later tick: after a
   * key gap the chain holds the whole-debit void a payment window for this, audit A2-L1); null when not sent
   * (no trees, or the estimate reverts).
   */
  private async voidPosition(
    answering: CycleAnswering | null,
    dispute: { cycleId: number; asset: string; debtor: string; position: number },
    context: Record<string, unknown>,
  ): Promise<string | typeof REVEALING | null> {
    if (!answering) return null;
    let answer: ReturnType<typeof buildDisputeAnswer>;
    try {
      const tree = debtorTreeOf(answering.guarantees, dispute.debtor, dispute.asset);
      answer = buildDisputeAnswer(answering.trees, tree, answering.byId, dispute.position, true);
    } catch (error) {
      if (!(error instanceof DisputeAnswerError)) throw error;
      return null;
    }
    const data = clearingHouseInterface.encodeFunctionData("voidUnansweredPosition", [
      dispute.cycleId,
      dispute.asset,
      dispute.debtor,
      dispute.position,
      answer.leaf,
      answer.path,
    ]);
    const sent = await this.send(data, context, false);
    if (typeof sent === "string") return sent.startsWith("0x") ? sent : null;
    if (sent.reverted !== "SummaryNotRevealed") return null;
    const reveal = await this.send(
      clearingHouseInterface.encodeFunctionData("revealSummary", [
        dispute.cycleId,
        dispute.asset,
        dispute.debtor,
        answer.summary,
        answer.summaryProof,
      ]),
      context,
      true,
    );
    return typeof reveal === "string" ? REVEALING : null;
  }

  private sendAnswer(
    dispute: { cycleId: number; asset: string; debtor: string; position: number },
    answer: ReturnType<typeof buildDisputeAnswer>,
    context: Record<string, unknown>,
  ): Promise<SendOutcome> {
    const data = clearingHouseInterface.encodeFunctionData("answerDispute", [
      dispute.cycleId,
      dispute.asset,
      dispute.debtor,
      dispute.position,
      answer,
    ]);
    return this.send(data, context, answer.claims === "0x");
  }

  /** Releases every unresolved debt of a vetoed cycle on chain (obligation freed, or payment refunded). */
  private async releaseVetoed(result: KeeperTickResult): Promise<void> {
    const { store } = this.options;
    for (const cycle of await store.cycles.listCycles(["VETOED"])) {
      for (const debt of await store.cycles.listCycleDebts({ cycleId: cycle.cycleId })) {
        if (debt.status === "VOIDED" || debt.status === "REFUNDED" || debt.status === "COVERED") continue;
        const txHash = await this.sendForDebt("releaseVetoedDebt", debt);
        if (txHash) {
          result.released.push({ cycleId: debt.cycleId, asset: debt.asset, debtor: debt.debtor, txHash });
        }
      }
    }
  }

  private async coverDefaults(result: KeeperTickResult): Promise<void> {
    const { store, chainClock } = this.options;
    const now = chainClock.nowSeconds();
    // Debts whose disputes are all answered are open debts again.
    const open = [
      ...(await store.cycles.listCycleDebts({ status: "OPEN" })),
      ...(await store.cycles.listCycleDebts({ status: "ANSWERED" })),
    ];
    const deadlines = new Map<number, number | null>();
    for (const debt of open) {
      if (!deadlines.has(debt.cycleId)) {
        const cycle = await store.cycles.getCycle(debt.cycleId);
        deadlines.set(debt.cycleId, cycle && cycle.state !== "VETOED" ? cycle.paymentDeadline : null);
      }
      const deadline = deadlines.get(debt.cycleId);
      if (deadline === null || deadline === undefined || now <= deadline) continue;
      const txHash = await this.sendForDebt("coverDefault", debt);
      if (txHash)
        result.covered.push({ cycleId: debt.cycleId, asset: debt.asset, debtor: debt.debtor, txHash });
    }
  }

  private async claimCredits(result: KeeperTickResult): Promise<void> {
    const { store } = this.options;
    for (const cycle of await store.cycles.listCycles(["COMMITTED", "FINALIZED"])) {
      // Core holds no net-position tree for a cycle it did not plan (its creditors claim with their own proofs).
      if (!cycle.plannedByCore) continue;
      const claimed = new Set(
        (await store.cycles.listCycleClaims(cycle.cycleId)).map((c) =>
          `${c.asset}:${c.participant}`.toLowerCase(),
        ),
      );
      // Each creditor's claim proves its own summary under the cycle's debitsRoot (issue 25, item 5).
      const answering = await this.answering(cycle);
      if (answering === null) continue;
      for (const summary of answering.trees.summaries) {
        if (summary.inTotal <= summary.total) continue;
        if (claimed.has(`${summary.asset}:${summary.debtor}`.toLowerCase())) continue;
        const data = clearingHouseInterface.encodeFunctionData("claimNetCredit", [
          cycle.cycleId,
          summary.asset,
          summary.debtor,
          summaryStruct(summary),
          debitSummaryProof(answering.trees.tree, summary),
        ]);
        const txHash = await this.trySend(data, {
          cycle_id: cycle.cycleId,
          asset: summary.asset,
          participant: summary.debtor,
        });
        if (txHash) {
          result.claimed.push({
            cycleId: cycle.cycleId,
            asset: summary.asset,
            participant: summary.debtor,
            txHash,
          });
        }
      }
    }
  }

  /** Sends the call unless its estimate reverts (already done, not yet possible): then null. */
  /** `fn(cycleId, asset, debtor)` on the ClearingHouse for one debt: the tx hash, or null if not sent. */
  private sendForDebt(
    fn: "releaseVetoedDebt" | "coverDefault",
    debt: { cycleId: number; asset: string; debtor: string },
  ): Promise<string | null> {
    const args: [number, string, string] = [debt.cycleId, debt.asset, debt.debtor];
    // One call per name: the typed interface checks each function's arguments separately.
    const data =
      fn === "coverDefault"
        ? clearingHouseInterface.encodeFunctionData("coverDefault", args)
        : clearingHouseInterface.encodeFunctionData("releaseVetoedDebt", args);
    return this.trySend(data, { cycle_id: debt.cycleId, asset: debt.asset, debtor: debt.debtor });
  }

  private async trySend(
    data: string,
    context: Record<string, unknown>,
    /** A revert here is a failure to report, not an expected "already done" (a conceded answer). */
    revertIsError = false,
    /** Another contract than the ClearingHouse (the Vault, for reserves). */
    target?: { to: string; errors: Interface; label: string },
  ): Promise<string | null> {
    const sent = await this.send(data, context, revertIsError, target);
    return typeof sent === "string" && sent.startsWith("0x") ? sent : null;
  }

  /** The tx hash, or why nothing was sent: "in_flight" (sent on an earlier tick, not mined) or the revert. */
  private async send(
    data: string,
    context: Record<string, unknown>,
    revertIsError: boolean,
    target?: { to: string; errors: Interface; label: string },
  ): Promise<SendOutcome> {
    const { sender, deployment, logger } = this.options;
    try {
      const signed = await sender.send({
        to: target?.to ?? deployment.clearingHouse,
        data,
        errors: target?.errors ?? commitErrorsInterface,
        label: target?.label ?? `keeper ${clearingHouseInterface.parseTransaction({ data })?.name ?? "call"}`,
      });
      if (signed.alreadyInFlight) {
        // Sent on an earlier tick and not mined yet: the sender follows it (re-send, fee replacement).
        logger.debug({ ...context, tx: signed.hash }, "keeper call already in flight");
        return "in_flight";
      }
      logger.info({ ...context, tx: signed.hash, nonce: signed.nonce }, "keeper transaction sent");
      return signed.hash;
    } catch (error) {
      if (error instanceof CallRevertedError) {
        if (revertIsError) {
          // A concession the chain refuses leaves the debit to be voided against the bond at the deadline.
          logger.error({ ...context, reason: error.message }, "keeper call refused by the chain");
        } else {
          logger.debug({ ...context, reason: error.message }, "keeper call skipped");
        }
        return { reverted: error.error?.name ?? null };
      }
      throw error;
    }
  }
}
