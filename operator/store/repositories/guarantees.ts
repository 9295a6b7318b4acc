/**
 * Guarantees (docs/protocol.md, "Guarantee lifecycle"): the issued records, their state transitions, the
 * clearing columns (cycle assignment, exclusion, V2 validation request hash) and the V2 validation
 * responses indexed from the ValidationRegistry.
 */
import type { GuaranteeState } from "../../guarantees/states";
import type { Page, PageRequest } from "./common";

// The states are the domain's vocabulary (operator/guarantees/states.ts; their transitions:
// operator/guarantees/transitions.ts): the store keeps a guarantee's state, it does not define them.
export type { GuaranteeState };

export interface GuaranteeRecord {
  /** 0x-prefixed 32-byte id, lower case. */
  guaranteeId: string;
  version: 1 | 2;
  user: string;
  recipient: string;
  reqId: bigint;
  amount: bigint;
  asset: string;
  /** Claim timestamp (unix seconds). */
  timestamp: number;
  /** V2 validation policy in its wire (JSON) form; null for V1. */
  policy: Record<string, unknown> | null;
  scheme: "eip712" | "eip191";
  /** Payer signature, 0x hex. */
  signature: string;
  /** BLS certificate (hex strings as returned to the caller). */
  certificateClaims: string;
  certificateSignature: string;
  state: GuaranteeState;
  createdAt: number;
}

/** A guarantee as read back from the store. */
export interface StoredGuarantee extends GuaranteeRecord {
  /** Last state change (unix seconds). */
  updatedAt: number;
  /** The clearing cycle it is planned or netted in (null while unassigned). */
  cycleId: number | null;
  /** Why the clearing scheduler will not net it (e.g. consumed on chain first); null normally. */
  excludedReason: string | null;
  /**
   * V2: the payer's EIP-712 `Finalization` signature (sdk/finalization.ts), given when it finalized the
   * guarantee without a verdict; a dispute answer carries it on chain. Null otherwise.
   */
  finalizationSignature?: string | null;
}

/** A guarantee with the clearing columns. */
export interface ClearingGuarantee extends StoredGuarantee {
  seq: number;
  validationRequestHash: string | null;
  /** Where the pin of its verdict stands (null: none sent). */
  verdictPin?: VerdictPin | null;
  /** When Core last sent that pin (wall clock, unix seconds; null: never). */
  verdictPinAt?: number | null;
  /** When the V2 lifecycle made it payable on its verdict (wall clock, unix seconds; null: not so, or before). */
  verdictPayableAt?: number | null;
}

export interface ValidationResponseRecord {
  txHash: string;
  logIndex: number;
  requestHash: string;
  validator: string;
  agentId: bigint;
  response: number;
  tag: string;
  blockNumber: number;
  blockTimestamp: number;
}

/** Filter of {@link listGuarantees}. */
export interface GuaranteeQuery {
  states?: readonly GuaranteeState[];
  /** Only this guarantee (any case). */
  guaranteeId?: string;
  cycleId?: number;
  /** Only guarantees of one of these cycles (none matches an empty list). */
  cycleIds?: readonly number[];
  user?: string;
  recipient?: string;
  /** Guarantees this address is payer or recipient of. */
  party?: string;
  asset?: string;
  version?: 1 | 2;
  /** Only guarantees in a cycle (cycle id set) and not excluded from it. */
  inCycle?: boolean;
  /** `created_at` ≥ this (unix seconds). */
  createdFrom?: number;
  /** `created_at` < this (unix seconds). */
  createdTo?: number;
  /** Only guarantees with no cycle assigned and not excluded (what the scheduler may net). */
  unassigned?: boolean;
  /** Only those without a validation request hash yet. */
  missingRequestHash?: boolean;
  /**
   * Only those without a payer's finalization whose verdict Core has not pinned nor sent a pin for; with
   * `pinSentBefore`, also those whose pin Core sent at or before that time (wall clock) and whose
   * `VerdictPinned` is not indexed (a resend).
   */
  verdictToPin?: boolean;
  pinSentBefore?: number;
  /** seq > afterSeq (paging). */
  afterSeq?: number;
  /** seq < beforeSeq (paging newest first). */
  beforeSeq?: number;
  /** Order by seq descending (newest first) instead of ascending. */
  newestFirst?: boolean;
  limit?: number;
}

/**
 * A V2 verdict's pin in the Vault (`Vault.pinVerdicts`, audit H-2): `sent` once Core sent the pin, `pinned`
 * once the indexer applied its `VerdictPinned`.
 */
export type VerdictPin = "sent" | "pinned";

export interface GuaranteeRepository {
  /** Throws {@link DuplicateGuaranteeError} when the id exists. */
  insertGuarantee(record: GuaranteeRecord): Promise<void>;
  getGuarantee(guaranteeId: string): Promise<StoredGuarantee | null>;
  /** Oldest first; the cursor is stable under concurrent inserts (new rows only ever append). */
  listGuaranteesByRecipient(recipient: string, page?: PageRequest): Promise<Page<StoredGuarantee>>;

  // --- clearing and lifecycle ---
  getClearingGuarantee(guaranteeId: string): Promise<ClearingGuarantee | null>;
  listGuarantees(query: GuaranteeQuery): Promise<ClearingGuarantee[]>;
  /** How many guarantees match `query` (its paging fields and limit ignored): the console's totals. */
  countGuarantees(query: GuaranteeQuery): Promise<number>;
  /**
   * Sets the state iff the current one is in `from`; returns the guarantee as it was before, or null
   * (unknown id or another state: nothing changed).
   */
  transitionGuarantee(
    guaranteeId: string,
    from: readonly GuaranteeState[],
    to: GuaranteeState,
    now: number,
  ): Promise<ClearingGuarantee | null>;
  /** Sets `cycle_id` of the given guarantees (null unassigns). */
  assignGuaranteesToCycle(guaranteeIds: readonly string[], cycleId: number | null): Promise<void>;
  setGuaranteeExcluded(guaranteeId: string, reason: string | null): Promise<void>;
  setValidationRequestHash(guaranteeId: string, requestHash: string): Promise<void>;
  /** Stores the payer's finalization signature of a V2 guarantee (before its move to FINALIZED_PAYABLE). */
  setFinalizationSignature(guaranteeId: string, signature: string): Promise<void>;
  /** Where the pin of a V2 guarantee's verdict in the Vault stands (null: not sent). */
  verdictPinOf(guaranteeId: string): Promise<VerdictPin | null>;
  /**
   * Sets where the pin stands. `pinned` puts a guarantee waiting for its pin (payable on its verdict, see
   * {@link setVerdictPayable}) into the payable pool, with a fresh payable key after every reserved range.
   */
  setVerdictPin(guaranteeId: string, pin: VerdictPin | null): Promise<void>;
  /** Marks the pins of `guaranteeIds` sent at `at` (wall clock), unless already `pinned`. */
  setVerdictPinsSent(guaranteeIds: readonly string[], at: number): Promise<void>;
  /**
   * The guarantees payable on their verdict still waiting for the pin's indexing (out of the payable pool):
   * how many, and when the oldest was made payable (wall clock; null when none).
   */
  verdictPinWait(): Promise<{ waiting: number; oldestPayableAt: number | null }>;
  /**
   * Records that the V2 lifecycle makes the guarantee payable on its verdict (before its move to
   * FINALIZED_PAYABLE; `at`: wall clock): unless its payer finalizes it, it enters the payable pool only once
   * its verdict's pin is indexed (audit H-2; docs/clearing.md "Pinned verdicts").
   */
  setVerdictPayable(guaranteeId: string, at: number): Promise<void>;

  // --- V2 validation responses ---
  insertValidationResponse(record: ValidationResponseRecord): Promise<void>;
  deleteValidationResponse(txHash: string, logIndex: number): Promise<void>;
  /** The latest response of `validator` to `requestHash` in a block at or before `maxTimestamp`. */
  latestValidationResponse(
    requestHash: string,
    validator: string,
    maxTimestamp?: number,
  ): Promise<ValidationResponseRecord | null>;
}

/** A guarantee with this id is already stored (HTTP 409). */
export class DuplicateGuaranteeError extends Error {
  override readonly name = "DuplicateGuaranteeError";
  constructor(readonly guaranteeId: string) {
    super(`guarantee ${guaranteeId} already exists`);
  }
}
