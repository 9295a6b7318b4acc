/**
 * Every change of a guarantee's state, in one table (docs/protocol.md, "Guarantee lifecycle", "Transition
 * table", which is this table printed: test/operator/transitions.test.ts compares them). A row says: in one
 * of these states, on this trigger, when the guard holds, the guarantee moves to that state. Issuance (the
 * first state), the chain indexer's event handlers and the V2 lifecycle ask {@link GuaranteeTransitions} for
 * every move; a move the table does not allow is refused, logged (`guarantee_transition_refused`) and
 * counted (`surety_guarantee_transitions_refused_total{trigger}`), and nothing changes.
 *
 * The move itself is one compare-and-set in the store (the state is written iff it is still one the row
 * starts from), so concurrent writers (issuance, the indexer, the lifecycle, several replicas) never
 * interleave a read and a write. A reorg's rewind restores the state an event's journal recorded
 * (chain/journal.ts): it undoes a move of this table and is not one itself.
 */
import type { Logger } from "../logger";
import type { GuaranteeState } from "./states";
import { PRE_CYCLE_LOCKED_STATES } from "./states";

/** What moves a guarantee, and who reports it. */
export const TRANSITION_TRIGGERS = {
  issued: "issuance: Core signs the certificate",
  payer_finalized: "V2 lifecycle: the payer waives validation (`POST /core/guarantees/{id}/finalize`)",
  validation_failed: "V2 lifecycle: the validator's latest answer fails the policy",
  validation_passed: "V2 lifecycle: deadline passed (chain time, indexed past it) with a passing answer",
  validation_expired:
    "V2 lifecycle: deadline passed (chain time, indexed past it) with no passing answer, or its passing answer overwritten after the deadline",
  verdict_voided:
    "V2 lifecycle: a response after the deadline overwrote its passing verdict before any pin of it (the Vault skips the pin)",
  remunerated: "indexer: `Vault.GuaranteeRemunerated`",
  cycle_committed: "indexer: `ClearingHouse.CycleCommitted` of Core's plan listing it",
  foreign_netted: "indexer: a cycle Core did not plan netted its V2 id (`Vault.GuaranteeNetted`)",
  debit_paid: "indexer: `ClearingHouse.NetDebitPaid` of its payer's debit",
  debit_covered: "indexer: `ClearingHouse.DefaultCovered` of its payer's debit",
  debit_cleared: "indexer: answered disputes left its payer's debit at zero",
  debit_voided: "indexer: `ClearingHouse.DebitVoided` (an unanswered dispute) of its payer's debit",
  cycle_vetoed: "indexer: `ClearingHouse.CycleVetoed` of its cycle",
} as const;
export type TransitionTrigger = keyof typeof TRANSITION_TRIGGERS;

/** What the guards read; a trigger whose rows are guarded must be given what its guards need. */
export interface TransitionFacts {
  version?: 1 | 2;
  /** The guarantee's payer is a net debtor of its asset in the cycle (NETTED until the debit resolves). */
  payerIsDebtor?: boolean;
}

export const GUARDS = {
  v1: (f: TransitionFacts) => need(f, "version") === 1,
  v2: (f: TransitionFacts) => need(f, "version") === 2,
  "payer is a net debtor": (f: TransitionFacts) => need(f, "payerIsDebtor"),
  "payer is not a net debtor": (f: TransitionFacts) => !need(f, "payerIsDebtor"),
} as const;
export type GuardName = keyof typeof GUARDS;

function need<K extends keyof TransitionFacts>(
  facts: TransitionFacts,
  key: K,
): NonNullable<TransitionFacts[K]> {
  const value = facts[key];
  if (value === undefined) throw new TypeError(`this transition's guard needs the fact "${key}"`);
  return value as NonNullable<TransitionFacts[K]>;
}

export interface TransitionRule {
  /** The states it starts from; empty for the first state (`issued`). */
  from: readonly GuaranteeState[];
  trigger: TransitionTrigger;
  to: GuaranteeState;
  guard?: GuardName;
}

const ONE_CYCLE_LOCKED = PRE_CYCLE_LOCKED_STATES;

/** The lifecycle (docs/protocol.md). Order: as a guarantee lives it. */
export const TRANSITIONS: readonly TransitionRule[] = [
  { from: [], trigger: "issued", to: "FINALIZED_PAYABLE", guard: "v1" },
  { from: [], trigger: "issued", to: "PENDING_VALIDATION", guard: "v2" },
  { from: ["PENDING_VALIDATION"], trigger: "validation_failed", to: "DISPUTED", guard: "v2" },
  {
    from: ["PENDING_VALIDATION", "DISPUTED"],
    trigger: "payer_finalized",
    to: "FINALIZED_PAYABLE",
    guard: "v2",
  },
  {
    from: ["PENDING_VALIDATION", "DISPUTED"],
    trigger: "validation_passed",
    to: "FINALIZED_PAYABLE",
    guard: "v2",
  },
  { from: ["PENDING_VALIDATION", "DISPUTED"], trigger: "validation_expired", to: "CANCELLED", guard: "v2" },
  { from: ["FINALIZED_PAYABLE"], trigger: "verdict_voided", to: "CANCELLED", guard: "v2" },
  { from: [...ONE_CYCLE_LOCKED, "CANCELLED"], trigger: "remunerated", to: "REMUNERATED" },
  { from: ["FINALIZED_PAYABLE"], trigger: "cycle_committed", to: "NETTED", guard: "payer is a net debtor" },
  {
    from: ["FINALIZED_PAYABLE"],
    trigger: "cycle_committed",
    to: "SETTLED",
    guard: "payer is not a net debtor",
  },
  { from: ONE_CYCLE_LOCKED, trigger: "foreign_netted", to: "NETTED", guard: "payer is a net debtor" },
  { from: ONE_CYCLE_LOCKED, trigger: "foreign_netted", to: "SETTLED", guard: "payer is not a net debtor" },
  { from: ["NETTED"], trigger: "debit_paid", to: "SETTLED" },
  { from: ["NETTED"], trigger: "debit_covered", to: "DEFAULT_REMUNERATED" },
  { from: ["NETTED"], trigger: "debit_cleared", to: "SETTLED" },
  { from: ["NETTED"], trigger: "debit_voided", to: "SETTLED" },
  { from: ["NETTED", "SETTLED"], trigger: "cycle_vetoed", to: "FINALIZED_PAYABLE" },
];

/** Where `trigger` leads under `facts`: the states it may start from and the one it ends in. */
export interface ResolvedTransition {
  from: readonly GuaranteeState[];
  to: GuaranteeState;
}

/** The rows of `trigger` whose guard holds; they must agree on the state they lead to. */
export function resolveTransition(
  trigger: TransitionTrigger,
  facts: TransitionFacts = {},
): ResolvedTransition | null {
  const rows = TRANSITIONS.filter(
    (r) => r.trigger === trigger && (r.guard === undefined || GUARDS[r.guard](facts)),
  );
  if (rows.length === 0) return null;
  const to = rows[0].to;
  if (rows.some((r) => r.to !== to)) throw new Error(`transition table: ${trigger} leads to several states`);
  return { from: [...new Set(rows.flatMap((r) => r.from))], to };
}

/** Whether the table moves a guarantee in `state` on `trigger` (under `facts`), and where to. */
export function nextState(
  state: GuaranteeState,
  trigger: TransitionTrigger,
  facts: TransitionFacts = {},
): GuaranteeState | null {
  const resolved = resolveTransition(trigger, facts);
  return resolved !== null && resolved.from.includes(state) ? resolved.to : null;
}

/** The first state of each version, read from the table once (issuance's hot path asks per guarantee). */
const FIRST_STATES = new Map(
  ([1, 2] as const).map((version) => [version, resolveTransition("issued", { version })?.to]),
);

/** The state a guarantee is issued in (V1 payable at once, V2 waiting for its validation). */
export function initialState(version: 1 | 2): GuaranteeState {
  const state = FIRST_STATES.get(version);
  if (state === undefined) throw new Error(`transition table: no first state for V${version}`);
  return state;
}

/**
 * The triggers and the table as docs/protocol.md prints them, "Transition table" (one row per rule; `—`
 * for no guard, `(new)` for no state before).
 */
export function transitionTableMarkdown(): string {
  const lines = ["| Trigger | Reported by |", "| --- | --- |"];
  for (const [trigger, what] of Object.entries(TRANSITION_TRIGGERS))
    lines.push(`| \`${trigger}\` | ${what} |`);
  lines.push("", "| From | Trigger | Guard | To |", "| --- | --- | --- | --- |");
  for (const r of TRANSITIONS) {
    const from = r.from.length === 0 ? "(new)" : r.from.map((s) => `\`${s}\``).join(", ");
    lines.push(`| ${from} | \`${r.trigger}\` | ${r.guard ?? "—"} | \`${r.to}\` |`);
  }
  return lines.join("\n");
}

/**
 * Where a move is written: a compare-and-set that sets `to` iff the state is one of `from` and returns the
 * state it had (null: unknown id or another state, nothing changed), and a read of the current state. The
 * indexer's journal (chain/journal.ts, which records the inverse) and {@link storeTransitions} provide it.
 */
export interface TransitionStore {
  transitionGuarantee(
    guaranteeId: string,
    from: readonly GuaranteeState[],
    to: GuaranteeState,
  ): Promise<GuaranteeState | null>;
  stateOf(guaranteeId: string): Promise<GuaranteeState | null>;
}

/** A {@link TransitionStore} over the store's guarantees (or a transaction's) at wall time `now`. */
export function storeTransitions(
  guarantees: {
    transitionGuarantee(
      guaranteeId: string,
      from: readonly GuaranteeState[],
      to: GuaranteeState,
      now: number,
    ): Promise<{ state: GuaranteeState } | null>;
    getClearingGuarantee(guaranteeId: string): Promise<{ state: GuaranteeState } | null>;
  },
  now: number,
): TransitionStore {
  return {
    transitionGuarantee: async (id, from, to) =>
      (await guarantees.transitionGuarantee(id, from, to, now))?.state ?? null,
    stateOf: async (id) => (await guarantees.getClearingGuarantee(id))?.state ?? null,
  };
}

/** Told of every refused move (CoreMetrics counts them). */
export interface TransitionRefusals {
  guaranteeTransitionRefused(trigger: TransitionTrigger): void;
}

export interface TransitionRequest {
  trigger: TransitionTrigger;
  facts?: TransitionFacts;
  /**
   * The state the caller read the guarantee in: the move happens only from it (a concurrent move in between
   * makes it a refusal), and only if the table allows it.
   */
  expected?: GuaranteeState;
}

/** The one writer of guarantee states: each move checked against {@link TRANSITIONS}. */
export class GuaranteeTransitions {
  constructor(private readonly deps: { logger: Logger; refusals?: TransitionRefusals }) {}

  /**
   * Moves the guarantee as the table says for `request`; returns the state it left, or null when the table
   * refuses (the guarantee is unknown, in a state the trigger does not start from, or a guard fails), which
   * is logged and counted.
   */
  async apply(
    store: TransitionStore,
    guaranteeId: string,
    request: TransitionRequest,
  ): Promise<GuaranteeState | null> {
    const { trigger, facts, expected } = request;
    const resolved = resolveTransition(trigger, facts);
    let from = resolved?.from ?? [];
    if (expected !== undefined) from = from.filter((s) => s === expected);
    if (resolved !== null && from.length > 0) {
      const previous = await store.transitionGuarantee(guaranteeId, from, resolved.to);
      if (previous !== null) return previous;
    }
    await this.refused(store, guaranteeId, request, resolved);
    return null;
  }

  private async refused(
    store: TransitionStore,
    guaranteeId: string,
    request: TransitionRequest,
    resolved: ResolvedTransition | null,
  ): Promise<void> {
    const state = await store.stateOf(guaranteeId);
    this.deps.refusals?.guaranteeTransitionRefused(request.trigger);
    this.deps.logger.info(
      {
        event: "guarantee_transition_refused",
        guarantee_id: guaranteeId.toLowerCase(),
        trigger: request.trigger,
        state,
        expected: request.expected ?? null,
        allowed_from: resolved?.from ?? [],
        to: resolved?.to ?? null,
      },
      "guarantee transition refused: not in the transition table from its current state",
    );
  }
}
