/**
 * Guarantee vocabulary of Core's domain (docs/protocol.md, "Guarantee lifecycle"): the states (the wire's,
 * sdk/guarantee-states.ts) and the groups of states the rules name. The store imports these; nothing here
 * imports the store. Which transitions lead between the states: ./transitions.ts.
 */
import type { GuaranteeState } from "../../sdk/guarantee-states";

export { GUARANTEE_STATES, type GuaranteeState, isGuaranteeState } from "../../sdk/guarantee-states";

/** States in which a guarantee's own amount is locked in Core (before it enters a cycle). */
export const PRE_CYCLE_LOCKED_STATES: readonly GuaranteeState[] = [
  "PENDING_VALIDATION",
  "FINALIZED_PAYABLE",
  "DISPUTED",
];

/** States whose id the Vault has consumed (netted in a committed cycle, or remunerated). */
export const CONSUMED_STATES: readonly GuaranteeState[] = [
  "NETTED",
  "SETTLED",
  "REMUNERATED",
  "DEFAULT_REMUNERATED",
];
