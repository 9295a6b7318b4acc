/** Issuance: check-and-lock and the guarantee's insert as one unit (docs/protocol.md, "Collateral and safety invariants"). */
import type { CapacityFn, CollateralBalance } from "./collateral";
import type { GuaranteeRecord, StoredGuarantee } from "./guarantees";
import type { OutboxEvent } from "./webhooks";

/** One guarantee to issue: the record (certificate included) and the collateral rule it must satisfy. */
export interface IssueGuaranteeRequest {
  record: GuaranteeRecord;
  /** Capacity of the payer's (user, asset) balance; the lock must keep `locked ≤ capacity`. */
  capacity: CapacityFn;
  /** Webhook events announcing the issuance, written with it (only if it is issued). */
  events?: readonly OutboxEvent[];
}

/**
 * Outcome of one issuance: `issued` (collateral locked and guarantee stored
 * together), `duplicate` (the id exists; nothing changed; the stored record is
 * returned), `insufficient_collateral` (nothing changed), or `failed` (an
 * unexpected error for this item only; nothing of it was written).
 */
export type IssueGuaranteeOutcome =
  | { kind: "issued"; balance: CollateralBalance; capacity: bigint }
  | { kind: "duplicate"; existing: StoredGuarantee }
  | { kind: "insufficient_collateral"; balance: CollateralBalance; capacity: bigint }
  | { kind: "failed"; error: unknown };

export interface IssuanceRepository {
  /**
   * Issues each request atomically and independently, in order, all inside
   * one transaction (one durable commit for the whole batch: group commit).
   * Per item: if the guarantee id exists → `duplicate`; else lock `amount` iff
   * `locked + amount ≤ capacity` and insert the record, both or neither.
   * An item's outcome is final only once the returned promise resolves (the
   * batch committed); if the commit itself fails the promise rejects and no
   * item was issued.
   */
  issueGuarantees(requests: readonly IssueGuaranteeRequest[], now: number): Promise<IssueGuaranteeOutcome[]>;
}
