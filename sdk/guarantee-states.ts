/**
 * The states of a guarantee as Core answers them (`GET /core/guarantees/{id}`, `state`; docs/protocol.md,
 * "Guarantee lifecycle"). Wire vocabulary, so it lives in the sdk: Core's domain, its store and the console
 * read this one list. Which transitions lead from one to another is Core's own rule:
 * operator/guarantees/transitions.ts.
 */
export const GUARANTEE_STATES = [
  "PENDING_VALIDATION",
  "FINALIZED_PAYABLE",
  "DISPUTED",
  "CANCELLED",
  "NETTED",
  "SETTLED",
  "REMUNERATED",
  "DEFAULT_REMUNERATED",
] as const;
export type GuaranteeState = (typeof GUARANTEE_STATES)[number];

/** Whether `value` names a guarantee state (exact, upper case). */
export function isGuaranteeState(value: string): value is GuaranteeState {
  return (GUARANTEE_STATES as readonly string[]).includes(value);
}
