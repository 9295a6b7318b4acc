/**
 * Core pins the passed verdict of every V2 guarantee it nets (audit H-2; docs/clearing.md "Pinned
 * verdicts"). A validator's response after the policy deadline (even the same score), or the registry's
 * removal from the Vault's trusted set, would otherwise turn a netted guarantee into "not validated": the
 * payer's dispute of its debit would come out `Removed` and the seller be paid nothing. `Vault.pinVerdicts`
 * records the verdict for good once the deadline has passed.
 *
 * Which guarantees: V2 in FINALIZED_PAYABLE or NETTED without the payer's finalization (a finalization
 * answers disputes in place of the verdict) and no pin sent yet, or one sent a resend period ago and still
 * not indexed (below). The lifecycle moves a guarantee to
 * FINALIZED_PAYABLE on its verdict only once the indexed chain time is past the deadline, so the Vault
 * never refuses the pin as `VerdictNotFinal`. This task runs after the lifecycle and before the clearing
 * scheduler in every round (background.ts) and sends through the same operator sender.
 *
 * A guarantee is marked `sent` when its pin is sent and `pinned` when the indexer applies its
 * `VerdictPinned` (./validation-handlers.ts). The scheduler nets a guarantee made payable on its verdict
 * only once it is `pinned` (the payable pool, store/sql/payable-keys.ts): a validator's response between the
 * deadline and the pin can void a verdict, and the Vault then skips its pin, but no cycle holds it: the V2
 * lifecycle cancels such a guarantee (`verdict_voided`).
 *
 * **Resends.** A pin still `sent` {@link DEFAULT_PIN_RESEND_SECONDS} (`resendAfterSeconds`, wall clock) after
 * it was sent is sent again: its transaction may never have been mined (its nonce taken by another
 * transaction, the sender gave it up as consumed) or its `VerdictPinned` may have been lost to a reorg. A
 * resend is harmless: `pinVerdicts` skips verdicts already pinned (and failing ones) instead of reverting, and
 * the sender answers an identical call still in flight with that transaction. A verdict the Vault skips
 * because a late response voided it is never pinned, so its resends back off: each waits at least as long as
 * the pin has been awaited so far (sent at t, t + R, t + 2R, t + 4R, …, at most daily); the V2 lifecycle
 * cancels such a guarantee once the late response is indexed (`verdict_voided`, ./v2-lifecycle.ts).
 */
import { parseValidationPolicy } from "../../sdk/claims";
import { vaultInterface } from "../chain/abi";
import { CallRevertedError, type OperatorSender } from "../chain/sender";
import type { Clock } from "../clock";
import type { Logger } from "../logger";
import type { ClearingGuarantee, GuaranteeState, StoreAreas } from "../store";

/**
 * Most verdicts in one `pinVerdicts` transaction: 45,125 gas each in a batch (test/contracts/gas.test.ts),
 * so 256 take ≈ 11.6M, under EIP-7825's 2^24 per transaction with ≈ 30 % to spare (371 fit).
 */
export const MAX_PIN_BATCH = 256;

/** Seconds after which a pin sent and not yet indexed is sent again (wall clock). */
export const DEFAULT_PIN_RESEND_SECONDS = 300;
/** Longest wait between two resends of the same pin (the back-off's ceiling). */
export const MAX_PIN_RESEND_SECONDS = 86_400;

/**
 * Whether a pin sent and not yet indexed is due again at `now`: once `resendAfter` has passed since its last send
 * and, after that, once as long again as it had been awaited at that send (since it was made payable), capped at
 * {@link MAX_PIN_RESEND_SECONDS}: resends at t, t + R, t + 2R, t + 4R, … A pin never sent is due at once.
 */
export function pinResendDue(g: ClearingGuarantee, now: number, resendAfter: number): boolean {
  const sentAt = g.verdictPinAt ?? null;
  if (g.verdictPin !== "sent" || sentAt === null) return true;
  const payableAt = g.verdictPayableAt ?? null;
  const awaited = payableAt === null ? 0 : sentAt - payableAt;
  return now - sentAt >= Math.max(resendAfter, Math.min(awaited, MAX_PIN_RESEND_SECONDS));
}

/** States of a V2 guarantee Core nets or netted. */
const NETTABLE_STATES: readonly GuaranteeState[] = ["FINALIZED_PAYABLE", "NETTED"];
/** Guarantees read per store page. */
const PAGE = 500;

export interface VerdictPinnerOptions {
  store: StoreAreas<"guarantees">;
  sender: Pick<OperatorSender, "send">;
  /** The Vault's address. */
  vault: string;
  /** Chain time (the indexed head): only verdicts whose deadline it has passed are pinned. */
  chainClock: Clock;
  /** Wall clock: when a pin was sent, and when it is due again. */
  clock: Clock;
  /** Seconds after a send without its `VerdictPinned` indexed before the pin is sent again (default 300). */
  resendAfterSeconds?: number;
  logger: Logger;
  /** Verdicts per transaction (1..{@link MAX_PIN_BATCH}; default the maximum). */
  batchSize?: number;
}

export interface VerdictPinResult {
  /** Guarantee ids whose pin was sent this tick (resends included). */
  sent: string[];
  /** Those of `sent` whose pin had been sent before without being indexed. */
  resent: string[];
  /** Hashes of the transactions sent. */
  transactions: string[];
}

export class VerdictPinner {
  private readonly batchSize: number;
  private readonly resendAfterSeconds: number;

  constructor(private readonly options: VerdictPinnerOptions) {
    const size = options.batchSize ?? MAX_PIN_BATCH;
    if (!Number.isInteger(size) || size < 1 || size > MAX_PIN_BATCH) {
      throw new RangeError(`verdict pin batch size must be 1..${MAX_PIN_BATCH}, got ${size}`);
    }
    this.batchSize = size;
    const resend = options.resendAfterSeconds ?? DEFAULT_PIN_RESEND_SECONDS;
    if (!Number.isInteger(resend) || resend < 1) {
      throw new RangeError(`verdict pin resend period must be a positive integer, got ${resend}`);
    }
    this.resendAfterSeconds = resend;
  }

  async tick(): Promise<VerdictPinResult> {
    const { store, chainClock, clock } = this.options;
    const result: VerdictPinResult = { sent: [], resent: [], transactions: [] };
    const chainNow = chainClock.nowSeconds();
    const now = clock.nowSeconds();
    let batch: ClearingGuarantee[] = [];
    let afterSeq = 0;
    for (;;) {
      const page = await store.guarantees.listGuarantees({
        states: NETTABLE_STATES,
        version: 2,
        verdictToPin: true,
        pinSentBefore: now - this.resendAfterSeconds,
        afterSeq,
        limit: PAGE,
      });
      if (page.length === 0) break;
      afterSeq = page[page.length - 1].seq;
      // Only past the deadline (the Vault refuses the whole batch otherwise): a verdict-netted guarantee
      // always is; one a payer finalized before finalizations were stored (no signature) may not be yet.
      for (const g of page) {
        if (parseValidationPolicy(g.policy, "stored.validation_policy").deadline >= chainNow) continue;
        if (!pinResendDue(g, now, this.resendAfterSeconds)) continue;
        batch.push(g);
        if (batch.length === this.batchSize) {
          if (!(await this.send(batch, now, result))) return result;
          batch = [];
        }
      }
    }
    if (batch.length > 0) await this.send(batch, now, result);
    return result;
  }

  /** Sends one `pinVerdicts` of `batch` and marks it `sent`; false when the chain refused it. */
  private async send(
    batch: readonly ClearingGuarantee[],
    now: number,
    result: VerdictPinResult,
  ): Promise<boolean> {
    const { store, sender, vault, logger } = this.options;
    const ids = batch.map((g) => g.guaranteeId);
    let hash: string;
    try {
      const tx = await sender.send({
        to: vault,
        data: vaultInterface.encodeFunctionData("pinVerdicts", [batch.map((g) => g.certificateClaims)]),
        errors: vaultInterface,
        label: `pinVerdicts (${batch.length})`,
      });
      hash = tx.hash;
    } catch (error) {
      if (!(error instanceof CallRevertedError)) throw error;
      // Only claims that are not this deployment's V2 revert now: retried next round; meanwhile a netted
      // verdict still counts while the registry holds it.
      logger.error({ guarantee_ids: ids, reason: error.message }, "pinVerdicts refused by the chain");
      return false;
    }
    await store.guarantees.setVerdictPinsSent(ids, now);
    const resent = batch.filter((g) => g.verdictPin === "sent").map((g) => g.guaranteeId);
    result.sent.push(...ids);
    result.resent.push(...resent);
    result.transactions.push(hash);
    logger.info({ count: ids.length, tx: hash }, "V2 verdicts pin sent");
    if (resent.length > 0) {
      logger.warn(
        { guarantee_ids: resent, tx: hash, resend_after_seconds: this.resendAfterSeconds },
        "V2 verdict pins sent again: not indexed since their last send",
      );
    }
    return true;
  }
}
