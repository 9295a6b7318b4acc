/**
 * How a domain tells the indexer what an event does (docs/architecture.md, "Chain events"): each domain
 * module exports a `register…Handlers(handlers)` that calls {@link EventHandlers.on} once per event it owns,
 * and chain/events.ts lists those modules. A handler changes the store only through its {@link JournaledTx}
 * (so a reorg can rewind it) and moves guarantees only through `context.transitions`.
 */
import type { GuaranteeTransitions } from "../guarantees/transitions";
import type { Logger } from "../logger";
import type { ChainWebhooks } from "../webhooks/events";
import type { JournaledTx } from "./journal";
import type { DecodedEvent, EventKey, TypedChainEvent } from "./typed-events";

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

export interface ApplyContext {
  logger: Logger;
  /** The one writer of guarantee states (guarantees/transitions.ts). */
  transitions: GuaranteeTransitions;
  /** Called when the Vault's timings change (issuance caps V2 deadlines with them). */
  onTimings?: (timings: VaultTimings) => void;
  /** Called when a timings change is scheduled (`TimingsScheduled`): the V2 deadline cap counts it until it executes. */
  onTimingsScheduled?: (change: ScheduledTimings) => void;
  /** Called when the Vault's admin cancels a timelocked operation (`OperationCancelled`). */
  onOperationCancelled?: (operation: string) => void;
  /** Builds the webhook events applied logs announce (written to the outbox with the change). */
  webhooks?: ChainWebhooks;
  /** Counts credit disputes opened and ended (CoreMetrics `surety_credit_disputes_total`). */
  creditDisputes?: {
    /** `opened`, or how it ended (clearing/credit-disputes.ts `CREDIT_DISPUTE_OUTCOMES`). */
    creditDisputeApplied(outcome: "opened" | "answered" | "paid" | "lapsed" | "vetoed"): void;
  };
}

export type EventHandler<K extends EventKey> = (
  j: JournaledTx,
  event: DecodedEvent<K>,
  context: ApplyContext,
) => Promise<void>;

/** Every event's handler, by `Contract.Event`; at most one per event. */
export class EventHandlers {
  private readonly byKey = new Map<EventKey, EventHandler<EventKey>>();

  /** Registers the handler of `key`; a second one for the same event is a wiring mistake and throws. */
  on<K extends EventKey>(key: K, handler: EventHandler<K>): this {
    if (this.byKey.has(key)) throw new Error(`event ${key} has a handler already`);
    this.byKey.set(key, handler as unknown as EventHandler<EventKey>);
    return this;
  }

  /** The events with a handler. */
  keys(): EventKey[] {
    return [...this.byKey.keys()];
  }

  /**
   * Applies `event`. An event without a handler changes nothing in Core (roles, allow-lists, obligations,
   * and the logs a later one reads back from the journal); the indexer still journals it.
   */
  async apply(j: JournaledTx, event: TypedChainEvent, context: ApplyContext): Promise<void> {
    const handler = this.byKey.get(event.key);
    if (handler) await handler(j, event as DecodedEvent<EventKey>, context);
  }
}

/** A domain's registration function. */
export type HandlerModule = (handlers: EventHandlers) => void;
