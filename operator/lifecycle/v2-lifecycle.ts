/**
 * V2 guarantee lifecycle (docs/protocol.md, "Guarantee lifecycle" and "V2 validation"; docs/operator-async.md):
 *
 * - payer finalizes (`finalizeByPayer`): PENDING_VALIDATION | DISPUTED → FINALIZED_PAYABLE;
 * - the registry's latest response of the policy's validator fails the policy
 *   (score < min, other tag or agent id) → DISPUTED (the payer may still finalize);
 * - once the policy deadline has passed in chain time (the indexed head's timestamp: the registry
 *   stamps responses with `block.timestamp` and the Vault compares that with the deadline; Core's wall
 *   clock plays no part) AND the indexer has applied every block up to a block later than the deadline (so no response at or before it can still appear), the verdict is
 *   final (contracts security review: a verdict cannot become passing after the deadline):
 *     passing → FINALIZED_PAYABLE (netted: security review finding 1, its obligation is then recorded
 *               before a withdrawal requested after issuance can finalize), marked payable on its verdict:
 *               the scheduler nets it once its verdict's pin is indexed (audit H-2, ./verdict-pins.ts),
 *     otherwise → CANCELLED and its lock released; also when a response after the deadline has already
 *               overwritten the passing one with no pin of it indexed (the Vault would never pay it);
 * - a verdict made payable and overwritten after that by a response after the deadline before its pin
 *   (audit H-2's remaining window, docs/clearing.md "Pinned verdicts"): the Vault skips its pin and
 *   `remunerate` refuses it for good, so it is CANCELLED (`verdict_voided`) and its lock released instead of
 *   staying FINALIZED_PAYABLE, out of every cycle, for ever;
 * - on-chain remuneration → REMUNERATED (the indexer, GuaranteeRemunerated).
 *
 * Every move goes through the transition table (guarantees/transitions.ts: triggers `payer_finalized`,
 * `validation_failed`, `validation_passed`, `validation_expired`, `verdict_voided`).
 *
 * Decisions are taken from confirmed, indexed chain state; a reorg deeper than the confirmation depth
 * does not undo them (the confirmation depth is Core's finality assumption).
 */
import { parseValidationPolicy, type ValidationPolicy } from "../../sdk/claims";
import type { GuaranteeHasher } from "../../sdk/eip712";
import { SignatureError } from "../../sdk/errors";
import { recoverFinalizationSigner } from "../../sdk/finalization";
import { validationRequestHash } from "../../sdk/ids";
import { sameAddress } from "../../sdk/wire";
import type { Clock } from "../clock";
import { DomainError } from "../errors";
import type { PayerSigningKeys } from "../guarantees/signing-keys";
import {
  GuaranteeTransitions,
  resolveTransition,
  storeTransitions,
  type TransitionRefusals,
} from "../guarantees/transitions";
import type { Logger } from "../logger";
import type { ClearingGuarantee, GuaranteeState, StoreAreas, ValidationResponseRecord } from "../store";

/** States a payer may finalize from (the transition table's `payer_finalized`). */
export const PAYER_FINALIZABLE_STATES: readonly GuaranteeState[] = resolveTransition("payer_finalized", {
  version: 2,
})!.from;
/** States waiting for the validation's verdict (those its deadline resolves). */
const WAITING_STATES: readonly GuaranteeState[] = resolveTransition("validation_expired", {
  version: 2,
})!.from;
/** V2 guarantees examined per tick page. */
const PAGE = 500;

/** Refusals of the payer's finalization (statuses: api/errors.ts; docs/operator-async.md). */
export const LIFECYCLE_ERRORS = {
  guaranteeNotFound: "guarantee_not_found",
  notPayer: "not_payer",
  invalidState: "invalid_state",
  invalidFinalization: "invalid_finalization_signature",
} as const;

export type LifecycleErrorCode = (typeof LIFECYCLE_ERRORS)[keyof typeof LIFECYCLE_ERRORS];

export class LifecycleError extends DomainError<LifecycleErrorCode> {
  override readonly name = "LifecycleError";
}

export interface V2LifecycleOptions {
  store: StoreAreas<"chainJournal" | "collateral" | "guarantees">;
  /** Wall clock: stamps of the transitions (and the payer's finalization). */
  clock: Clock;
  /** Chain time (the indexed head, operator/clock.ts ChainClock): judges the validation deadline. */
  chainClock: Clock;
  logger: Logger;
  chainId: number;
  /** Counts the guarantee moves the transition table refuses (CoreMetrics). */
  transitionRefusals?: TransitionRefusals;
  /** The guarantees' EIP-712 domain: the payer's finalization is signed under it (required to finalize). */
  hasher?: GuaranteeHasher;
  /** Contract wallets' registered keys (a finalization not signed by the payer itself); null: EOAs only. */
  signingKeys?: PayerSigningKeys | null;
}

export interface LifecycleTickResult {
  disputed: string[];
  cancelled: string[];
  finalized: string[];
  /** Made payable on a verdict that a response after the deadline then overwrote, before its pin: cancelled. */
  voided: string[];
}

/**
 * Whether the response satisfies the policy as `Vault.remunerate` checks it (score and tag; the caller
 * already picked the policy's validator's latest answer by the deadline). The registry record's agent id is
 * not compared: whoever opened the request first chose it (issue 17, finding 4), and the request hash
 * already commits to the policy's agent id.
 */
export function responsePasses(policy: ValidationPolicy, response: ValidationResponseRecord | null): boolean {
  return response !== null && response.response >= policy.minScore && response.tag === policy.tag;
}

export class V2Lifecycle {
  private running: Promise<LifecycleTickResult> | null = null;
  private readonly transitions: GuaranteeTransitions;

  constructor(private readonly options: V2LifecycleOptions) {
    this.transitions = new GuaranteeTransitions({
      logger: options.logger,
      refusals: options.transitionRefusals,
    });
  }

  /**
   * The payer's decision to pay: FINALIZED_PAYABLE (it enters the next cycle), with its EIP-712
   * `Finalization` signature (sdk/finalization.ts), stored first: a dispute answer carries it on chain in
   * place of the validator's verdict. Refused with `guarantee_not_found` for a guarantee the caller cannot
   * see, `not_payer` for a party that is not the payer, `invalid_state` from any other state,
   * `invalid_finalization_signature` unless the payer (or, for a contract wallet, its registered key for the
   * guarantee's timestamp) signed it.
   */
  async finalizeByPayer(guaranteeId: string, wallet: string, signature: unknown): Promise<ClearingGuarantee> {
    const { store, clock } = this.options;
    const g = await store.guarantees.getClearingGuarantee(guaranteeId);
    if (!g || (!sameAddress(g.user, wallet) && !sameAddress(g.recipient, wallet))) {
      throw new LifecycleError(
        LIFECYCLE_ERRORS.guaranteeNotFound,
        `no guarantee ${guaranteeId.toLowerCase()} visible to ${wallet}`,
      );
    }
    if (!sameAddress(g.user, wallet)) {
      throw new LifecycleError(
        LIFECYCLE_ERRORS.notPayer,
        `only the payer ${g.user} may finalize guarantee ${g.guaranteeId}`,
      );
    }
    if (g.version !== 2) {
      throw new LifecycleError(
        LIFECYCLE_ERRORS.invalidState,
        `guarantee ${g.guaranteeId} is V1: it is payable from issuance`,
      );
    }
    if (!PAYER_FINALIZABLE_STATES.includes(g.state)) {
      throw new LifecycleError(
        LIFECYCLE_ERRORS.invalidState,
        `guarantee ${g.guaranteeId} is ${g.state}; only ${PAYER_FINALIZABLE_STATES.join(" or ")} can be finalized`,
      );
    }
    const finalization = await this.checkFinalization(g, signature);
    await store.guarantees.setFinalizationSignature(g.guaranteeId, finalization);
    const before = await this.transitions.apply(
      storeTransitions(store.guarantees, clock.nowSeconds()),
      g.guaranteeId,
      {
        trigger: "payer_finalized",
        facts: { version: g.version },
      },
    );
    if (!before) {
      const current = (await store.guarantees.getClearingGuarantee(g.guaranteeId))?.state ?? g.state;
      throw new LifecycleError(
        LIFECYCLE_ERRORS.invalidState,
        `guarantee ${g.guaranteeId} is ${current}; only ${PAYER_FINALIZABLE_STATES.join(" or ")} can be finalized`,
      );
    }
    this.options.logger.info({ guarantee_id: g.guaranteeId }, "V2 guarantee finalized by its payer");
    return (await store.guarantees.getClearingGuarantee(g.guaranteeId))!;
  }

  /**
   * Throws `invalid_finalization_signature` unless `signature` is the payer's `Finalization` of `g` as the
   * chain checks it (GuaranteeVerifier): recovered to the payer, or to the key it registered in the Vault in
   * effect for `g.timestamp` (Core knows only the latest key: one registered after the guarantee's timestamp
   * is refused, as the chain would check an older one).
   */
  private async checkFinalization(g: ClearingGuarantee, signature: unknown): Promise<string> {
    const { hasher, signingKeys } = this.options;
    const refuse = (why: string): never => {
      throw new LifecycleError(LIFECYCLE_ERRORS.invalidFinalization, `signature: ${why}`);
    };
    if (hasher === undefined) throw new Error("the lifecycle was built without the guarantees' domain");
    if (typeof signature !== "string" || !/^0x[0-9a-fA-F]{130}$/.test(signature)) {
      return refuse(
        `required: the payer's 65-byte EIP-712 signature of Finalization(bytes32 guaranteeId) for ` +
          `${g.guaranteeId.toLowerCase()}, 0x hex (docs/protocol.md "Payer finalization")`,
      );
    }
    let signer: string;
    try {
      signer = recoverFinalizationSigner(hasher, g.guaranteeId, signature);
    } catch (error) {
      if (!(error instanceof SignatureError)) throw error;
      return refuse(error.message);
    }
    const finalization = signature.toLowerCase();
    if (sameAddress(signer, g.user)) return finalization;
    const registered = signingKeys ? await signingKeys.latest(g.user) : null;
    if (registered !== null && sameAddress(registered.key, signer) && registered.effectiveFrom <= g.timestamp)
      return finalization;
    return refuse(
      `Finalization(${g.guaranteeId.toLowerCase()}) was signed by ${signer}, neither the payer ${g.user} nor ` +
        "its signing key registered in the Vault for the guarantee's timestamp",
    );
  }

  tick(): Promise<LifecycleTickResult> {
    this.running ??= this.step().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async step(): Promise<LifecycleTickResult> {
    const { store, clock, chainClock } = this.options;
    const result: LifecycleTickResult = { disputed: [], cancelled: [], finalized: [], voided: [] };
    const chainNow = chainClock.nowSeconds();
    const now = clock.nowSeconds();
    const indexedUntil = (await store.chainJournal.getChainCursor())?.blockTimestamp ?? 0;
    let afterSeq = 0;
    for (;;) {
      const page = await store.guarantees.listGuarantees({
        states: WAITING_STATES,
        version: 2,
        afterSeq,
        limit: PAGE,
      });
      if (page.length === 0) break;
      afterSeq = page[page.length - 1].seq;
      for (const g of page) await this.examine(g, chainNow, now, indexedUntil, result);
    }
    await this.cancelVoidedVerdicts(now, result);
    return result;
  }

  /**
   * Whether a response after the policy's deadline has overwritten the registry's record of this verdict and
   * no pin of it is indexed: the Vault then skips its pin and `remunerate` refuses it (the record's
   * `lastUpdate` only grows), so the verdict can never pay. The pin state is read after the response: a pin
   * mined before the late response is in an earlier block, applied by the indexer before it.
   */
  private async verdictVoided(
    g: ClearingGuarantee,
    policy: ValidationPolicy,
    requestHash: string,
  ): Promise<boolean> {
    const { store } = this.options;
    const latest = await store.guarantees.latestValidationResponse(requestHash, policy.validator);
    if (latest === null || latest.blockTimestamp <= policy.deadline) return false;
    return (await store.guarantees.verdictPinOf(g.guaranteeId)) !== "pinned";
  }

  /** Moves `g` by `trigger` and releases its lock, in one transaction; false if the table refused the move. */
  private cancel(g: ClearingGuarantee, trigger: "validation_expired" | "verdict_voided", now: number) {
    return this.options.store.transaction(async (tx) => {
      const moved = await this.transitions.apply(storeTransitions(tx.guarantees, now), g.guaranteeId, {
        trigger,
        facts: { version: g.version },
        expected: g.state,
      });
      if (!moved) return false;
      await tx.collateral.adjustCollateral(g.user, g.asset, { locked: -g.amount }, now);
      return true;
    });
  }

  /**
   * The guarantees made payable on their verdict whose pin is not indexed (never sent, or sent and skipped by
   * the Vault): each whose verdict a late response voided is cancelled and its lock released. Few in normal
   * operation (a pin is indexed within a round or two of its verdict).
   */
  private async cancelVoidedVerdicts(now: number, result: LifecycleTickResult): Promise<void> {
    const { store, logger } = this.options;
    let afterSeq = 0;
    for (;;) {
      const page = await store.guarantees.listGuarantees({
        states: ["FINALIZED_PAYABLE"],
        version: 2,
        verdictToPin: true,
        pinSentBefore: Number.MAX_SAFE_INTEGER,
        afterSeq,
        limit: PAGE,
      });
      if (page.length === 0) break;
      afterSeq = page[page.length - 1].seq;
      for (const g of page) {
        if ((g.verdictPayableAt ?? null) === null || g.validationRequestHash === null) continue;
        const policy = parseValidationPolicy(g.policy, "stored.validation_policy");
        if (!(await this.verdictVoided(g, policy, g.validationRequestHash))) continue;
        if (await this.cancel(g, "verdict_voided", now)) {
          result.voided.push(g.guaranteeId);
          logger.warn(
            { guarantee_id: g.guaranteeId, request_hash: g.validationRequestHash },
            "V2 verdict overwritten by a response after its deadline before its pin: cancelled, lock released",
          );
        }
      }
    }
  }

  private async examine(
    g: ClearingGuarantee,
    chainNow: number,
    now: number,
    indexedUntil: number,
    result: LifecycleTickResult,
  ): Promise<void> {
    const { store, logger } = this.options;
    const { transitions } = this;
    const facts = { version: g.version };
    const policy = parseValidationPolicy(g.policy, "stored.validation_policy");
    let requestHash = g.validationRequestHash;
    if (requestHash === null) {
      requestHash = validationRequestHash(this.options.chainId, policy, g.guaranteeId).toLowerCase();
      await store.guarantees.setValidationRequestHash(g.guaranteeId, requestHash);
    }
    const response = await store.guarantees.latestValidationResponse(
      requestHash,
      policy.validator,
      policy.deadline,
    );
    const passes = responsePasses(policy, response);
    if (chainNow > policy.deadline && indexedUntil > policy.deadline) {
      if (passes && !(await this.verdictVoided(g, policy, requestHash))) {
        // Payable on its verdict: it enters the payable pool once the verdict's pin is indexed (audit H-2;
        // ./verdict-pins.ts), both written in one transaction with the move.
        const moved = await store.transaction(async (tx) => {
          await tx.guarantees.setVerdictPayable(g.guaranteeId, now);
          return transitions.apply(storeTransitions(tx.guarantees, now), g.guaranteeId, {
            trigger: "validation_passed",
            facts,
            expected: g.state,
          });
        });
        if (moved) {
          result.finalized.push(g.guaranteeId);
          logger.info(
            { guarantee_id: g.guaranteeId },
            "V2 validation passed, not remunerated by the deadline: netted",
          );
        }
        return;
      }
      if (await this.cancel(g, "validation_expired", now)) result.cancelled.push(g.guaranteeId);
      return;
    }
    if (g.state === "PENDING_VALIDATION" && response !== null && !passes) {
      const moved = await transitions.apply(storeTransitions(store.guarantees, now), g.guaranteeId, {
        trigger: "validation_failed",
        facts,
      });
      if (moved) {
        result.disputed.push(g.guaranteeId);
      }
    }
  }
}
