/**
 * Building webhook events (docs/webhooks.md lists every type and its `data`). Each event's id is
 * derived from its source (the deployment, plus the chain log or the guarantee it announces), so
 * applying the same source again — a retried batch, a log re-applied after a reorg rewind — yields
 * the same id: the outbox then revives the event instead of creating a second one, and a receiver
 * that already has it drops the repeat.
 */
import { createHash } from "node:crypto";
import { formatUint } from "../../sdk/wire";
import { WEBHOOK_API_VERSION, type WebhookEnvelope, type WebhookEventType } from "../../sdk/webhooks";
import type { ChainLogRef } from "../chain/event-types";
import type { OpenCreditDispute } from "../clearing/credit-disputes";
import type { CycleRecord, GuaranteeRecord, OutboxEvent, WithdrawalRecord } from "../store";

/** Domain tag of event ids (change it only with a new id scheme). */
const EVENT_ID_TAG = "surety-webhook-event-v1";
/** 128 bits of the SHA-256, hex. */
const EVENT_ID_HEX_CHARS = 32;

/** The deployment events belong to: ids are unique across deployments sharing a receiver. */
export interface WebhookSource {
  chainId: number;
  vault: string;
}

export function network(source: WebhookSource): string {
  return `eip155:${source.chainId}`;
}

/** `evt_` + 128 bits of SHA-256(tag, chain id, vault, source key). */
export function webhookEventId(source: WebhookSource, key: string): string {
  const digest = createHash("sha256")
    .update(`${EVENT_ID_TAG}\n${source.chainId}\n${source.vault.toLowerCase()}\n${key}`)
    .digest("hex");
  return "evt_" + digest.slice(0, EVENT_ID_HEX_CHARS);
}

/**
 * `collateral.deposited` `status`, the only value the spec gives: the event is written when the indexer
 * applies the deposit, i.e. once it is `SURETY_CONFIRMATIONS` deep, the depth Core's books treat as final.
 */
export const DEPOSIT_FINALIZED = "finalized";

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
const isoOrNull = (seconds: number | null) => (seconds === null ? null : iso(seconds));

/** The outbox row of one event: the envelope serialised once. */
export function outboxEvent(
  source: WebhookSource,
  key: string,
  type: WebhookEventType,
  data: Record<string, unknown>,
  createdAt: number,
): OutboxEvent {
  const id = webhookEventId(source, key);
  const envelope: WebhookEnvelope = {
    id,
    type,
    created_at: iso(createdAt),
    api_version: WEBHOOK_API_VERSION,
    data,
  };
  return { id, type, createdAt, payload: JSON.stringify(envelope) };
}

/**
 * An outbox row whose `id` and `payload` are built on their first read, once. The outbox reads an event's
 * `type` first and writes nothing when no subscription wants it (`insertWebhookEventTo`): an event issued
 * for every guarantee (a SHA-256, an ISO date and a JSON envelope) then costs nothing to build.
 */
export function lazyOutboxEvent(
  type: WebhookEventType,
  createdAt: number,
  build: () => OutboxEvent,
): OutboxEvent {
  let built: OutboxEvent | undefined;
  const row = () => (built ??= build());
  return {
    type,
    createdAt,
    get id() {
      return row().id;
    },
    get payload() {
      return row().payload;
    },
  };
}

/**
 * `guarantee.issued`: written by issuance in the transaction that locks the collateral; built only if a
 * subscription wants it ({@link lazyOutboxEvent}).
 */
export function guaranteeIssuedEvent(source: WebhookSource, record: GuaranteeRecord): OutboxEvent {
  return lazyOutboxEvent("guarantee.issued", record.createdAt, () => issuedEvent(source, record));
}

function issuedEvent(source: WebhookSource, record: GuaranteeRecord): OutboxEvent {
  return outboxEvent(
    source,
    `guarantee:${record.guaranteeId.toLowerCase()}:issued`,
    "guarantee.issued",
    {
      guarantee_id: record.guaranteeId.toLowerCase(),
      version: record.version,
      state: record.state,
      user_address: record.user,
      recipient_address: record.recipient,
      req_id: formatUint(record.reqId),
      amount: formatUint(record.amount),
      asset_address: record.asset,
      timestamp: record.timestamp,
      network: network(source),
    },
    record.createdAt,
  );
}

/**
 * Events announced by applied chain logs. Every builder takes the log it comes from; `subject`
 * distinguishes several events of one log (e.g. one `guarantee.settled` per guarantee of a commit).
 */
export class ChainWebhooks {
  /**
   * @param confirmations the depth at which the indexer applies logs (`SURETY_CONFIRMATIONS`): every
   * chain event, `collateral.deposited` included, is written once its log is that deep.
   */
  constructor(
    readonly source: WebhookSource,
    readonly confirmations: number,
  ) {}

  private event(
    log: ChainLogRef,
    type: WebhookEventType,
    data: Record<string, unknown>,
    now: number,
    subject = "",
  ): OutboxEvent {
    const key = `chain:${log.txHash.toLowerCase()}:${log.logIndex}:${type}${subject ? ":" + subject : ""}`;
    return lazyOutboxEvent(type, now, () => outboxEvent(this.source, key, type, data, now));
  }

  /** Where the event happened on chain, appended to every chain event's data. */
  private where(log: ChainLogRef) {
    return {
      network: network(this.source),
      transaction_hash: log.txHash,
      block_number: log.blockNumber,
    };
  }

  /**
   * Spec "Events": exactly these fields, "emitted after a finalized deposit" with `status`
   * `finalized`. The indexer calls this only when it applies the deposit, which it does once the log
   * is Core's configured confirmation depth deep (the depth its books credit collateral at), so the
   * event never precedes the deposit's finality by that depth. No earlier, unconfirmed notice exists:
   * the spec lists no such event type (docs/webhooks.md).
   */
  deposited(log: ChainLogRef, user: string, asset: string, amount: bigint, now: number): OutboxEvent {
    return this.event(
      log,
      "collateral.deposited",
      {
        user_address: user,
        asset_address: asset,
        amount: formatUint(amount),
        ...this.where(log),
        status: DEPOSIT_FINALIZED,
      },
      now,
    );
  }

  withdrawal(
    log: ChainLogRef,
    type: "withdrawal.requested" | "withdrawal.cancelled" | "withdrawal.finalized",
    w: WithdrawalRecord,
    now: number,
  ): OutboxEvent {
    return this.event(
      log,
      type,
      {
        withdrawal_id: String(w.withdrawalId),
        user_address: w.user,
        asset_address: w.asset,
        amount: formatUint(w.amount),
        state: w.state,
        requested_at: isoOrNull(w.requestedAt || null),
        finalizable_at: isoOrNull(w.finalizableAt || null),
        paid: w.paid === null ? null : formatUint(w.paid),
        ...this.where(log),
      },
      now,
    );
  }

  guaranteeSettled(
    log: ChainLogRef,
    g: GuaranteeRecord,
    cycleId: number,
    reason: "net_position" | "net_debit_paid",
    now: number,
  ): OutboxEvent {
    return this.event(
      log,
      "guarantee.settled",
      {
        guarantee_id: g.guaranteeId.toLowerCase(),
        state: "SETTLED",
        reason,
        cycle_id: String(cycleId),
        user_address: g.user,
        recipient_address: g.recipient,
        asset_address: g.asset,
        amount: formatUint(g.amount),
        ...this.where(log),
      },
      now,
      g.guaranteeId.toLowerCase(),
    );
  }

  guaranteeRemunerated(log: ChainLogRef, g: GuaranteeRecord, amount: bigint, now: number): OutboxEvent {
    return this.event(
      log,
      "guarantee.remunerated",
      {
        guarantee_id: g.guaranteeId.toLowerCase(),
        state: "REMUNERATED",
        user_address: g.user,
        recipient_address: g.recipient,
        asset_address: g.asset,
        amount: formatUint(amount),
        ...this.where(log),
      },
      now,
    );
  }

  cycleCommitted(
    log: ChainLogRef,
    cycle: CycleRecord,
    deadlines: { payment: number; default: number },
    debtors: readonly { asset: string; debtor: string; amount: bigint | string }[],
    now: number,
  ): OutboxEvent {
    return this.event(
      log,
      "cycle.committed",
      {
        cycle_id: String(cycle.cycleId),
        root: cycle.root,
        guarantee_count: cycle.guaranteeIds.length,
        payment_deadline: iso(deadlines.payment),
        default_deadline: iso(deadlines.default),
        debtors: debtors.map((d) => ({
          asset_address: d.asset,
          debtor_address: d.debtor,
          amount: d.amount.toString(),
        })),
        ...this.where(log),
      },
      now,
    );
  }

  defaultCovered(
    log: ChainLogRef,
    debt: { cycleId: number; asset: string; debtor: string; amount: bigint; covered: bigint },
    guaranteeIds: readonly string[],
    now: number,
  ): OutboxEvent {
    return this.event(
      log,
      "default.covered",
      {
        cycle_id: String(debt.cycleId),
        asset_address: debt.asset,
        debtor_address: debt.debtor,
        amount: formatUint(debt.amount),
        covered: formatUint(debt.covered),
        guarantee_ids: guaranteeIds.map((id) => id.toLowerCase()),
        ...this.where(log),
      },
      now,
    );
  }

  /** A debtor challenged its debit, Core answered it, or an unanswered one was voided (issue 17). */
  challenge(
    log: ChainLogRef,
    type: "cycle.challenge_opened" | "cycle.challenge_answered" | "cycle.challenge_voided",
    debt: { cycleId: number; asset: string; debtor: string; amount: bigint },
    extra: Record<string, unknown>,
    now: number,
  ): OutboxEvent {
    return this.event(
      log,
      type,
      {
        cycle_id: String(debt.cycleId),
        asset_address: debt.asset,
        debtor_address: debt.debtor,
        amount: formatUint(debt.amount),
        ...extra,
        ...this.where(log),
      },
      now,
    );
  }

  /**
   * A recipient disputed that a listed guarantee is credited to it (`cycle.credit_disputed`), or the dispute
   * ended (`cycle.credit_dispute_resolved`: answered, paid from the bond, lapsed, or vetoed with the cycle).
   * `subject` tells apart the disputes one log ends (a veto ends all of its cycle's).
   */
  creditDispute(
    log: ChainLogRef,
    type: "cycle.credit_disputed" | "cycle.credit_dispute_resolved",
    d: OpenCreditDispute,
    extra: Record<string, unknown>,
    now: number,
    subject = "",
  ): OutboxEvent {
    return this.event(
      log,
      type,
      {
        cycle_id: String(d.cycleId),
        guarantee_id: d.guaranteeId.toLowerCase(),
        recipient_address: d.recipient,
        payer_address: d.payer,
        asset_address: d.asset,
        amount: d.amount,
        ...extra,
        ...this.where(log),
      },
      now,
      subject,
    );
  }

  /**
   * A cycle Core did not plan was committed with the operator key (security event: the key was used
   * outside Core). `replacedPlan` is Core's own plan of that id the chain will now refuse, if any.
   */
  cycleForeignCommit(
    log: ChainLogRef,
    cycle: CycleRecord,
    guaranteesRoot: string,
    debtors: readonly { asset: string; debtor: string; amount: string }[],
    replacedPlan: CycleRecord | null,
    netted: { all: readonly string[]; booked: readonly string[] },
    now: number,
  ): OutboxEvent {
    return this.event(
      log,
      "cycle.foreign_commit",
      {
        cycle_id: String(cycle.cycleId),
        root: cycle.root,
        guarantees_root: guaranteesRoot,
        challenge_deadline: isoOrNull(cycle.challengeDeadline),
        answer_deadline: isoOrNull(cycle.answerDeadline),
        payment_deadline: isoOrNull(cycle.paymentDeadline),
        default_deadline: isoOrNull(cycle.defaultDeadline),
        debtors: debtors.map((d) => ({
          asset_address: d.asset,
          debtor_address: d.debtor,
          amount: d.amount.toString(),
        })),
        replaced_plan_guarantee_ids: (replacedPlan?.guaranteeIds ?? []).map((id) => id.toLowerCase()),
        netted_v2_guarantee_ids: netted.all.map((id) => id.toLowerCase()),
        netted_core_guarantee_ids: netted.booked.map((id) => id.toLowerCase()),
        ...this.where(log),
      },
      now,
    );
  }

  /** The guardian vetoed a cycle; its guarantees return to the next cycle. */
  cycleVetoed(
    log: ChainLogRef,
    cycle: CycleRecord,
    guardian: string,
    guaranteeIds: readonly string[],
    now: number,
  ): OutboxEvent {
    return this.event(
      log,
      "cycle.vetoed",
      {
        cycle_id: String(cycle.cycleId),
        root: cycle.root,
        guardian_address: guardian,
        guarantee_ids: guaranteeIds.map((id) => id.toLowerCase()),
        ...this.where(log),
      },
      now,
    );
  }
}
