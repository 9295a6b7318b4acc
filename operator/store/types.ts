/**
 * The operator's repository contract. Every method is async so that a
 * PostgreSQL implementation (several operator replicas, row locks) can
 * implement the same interface as the embedded SQLite store.
 *
 * Conventions: addresses are EIP-55 checksummed (implementations normalise
 * what they are given), amounts are bigint (stored exactly, never as floating
 * point), times are unix seconds.
 */

import type { ActiveReserve, AsyncStoreOps } from "./async-types";
import type { OutboxEvent, WebhookStoreOps } from "./webhook-types";

/** The lifecycle of docs/protocol.md, "Guarantee lifecycle" (docs/operator-async.md has the transitions). */
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

/** States in which a guarantee's own amount is locked in Core (before it enters a cycle). */
export const PRE_CYCLE_LOCKED_STATES: readonly GuaranteeState[] = [
  "PENDING_VALIDATION",
  "FINALIZED_PAYABLE",
  "DISPUTED",
];

export interface SiweNonceRecord {
  nonce: string;
  /** The wallet the nonce was issued to; only that wallet may consume it. */
  address: string;
  issuedAt: number;
  expiresAt: number;
}

/** Outcome of {@link StoreOps.consumeNonce}; only `"consumed"` means the nonce is now spent. */
export type NonceConsumption = "consumed" | "unknown" | "used" | "expired" | "address_mismatch";

export interface RefreshTokenRecord {
  /** sha256 of the opaque token (hex); the token itself is never stored. */
  tokenHash: string;
  /** All tokens descending from one sign-in share a family; reuse of a rotated token revokes the family. */
  familyId: string;
  wallet: string;
  scopes: readonly string[];
  issuedAt: number;
  expiresAt: number;
  /** Hash of the token this one replaced (null for the token issued at sign-in). */
  rotatedFrom: string | null;
  /** When this token was exchanged for a successor (null while it is current). */
  rotatedAt: number | null;
  revokedAt: number | null;
}

export interface CollateralBalance {
  user: string;
  asset: string;
  deposited: bigint;
  /** Sum of unresolved guarantees and unpaid net debits. */
  locked: bigint;
  pendingWithdrawal: bigint;
}

/**
 * Largest total `locked` the balance may carry (deposits × collateral factor − pending withdrawals, less
 * what the payer's on-chain reserves hold beyond Core's locks: operator/guarantees/capacity.ts). The store
 * reads the payer's active reserves in the same transaction as the balance.
 */
export type CapacityFn = (balance: CollateralBalance, reserves: readonly ActiveReserve[]) => bigint;

export type LockResult =
  | { locked: true; balance: CollateralBalance; capacity: bigint }
  | { locked: false; balance: CollateralBalance; capacity: bigint };

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
}

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

export interface Page<T> {
  items: T[];
  /** Pass back as `cursor` to read the next page; null when there is no more. */
  nextCursor: string | null;
}

export interface PageRequest {
  /** 1 … {@link MAX_PAGE_SIZE}; defaults to {@link DEFAULT_PAGE_SIZE}. */
  limit?: number;
  /** Opaque cursor from a previous page; a cursor this store did not issue is a WireError on `cursor`. */
  cursor?: string | null;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

/** Repository operations; each call is atomic on its own. */
export interface StoreOps extends AsyncStoreOps, WebhookStoreOps {
  // --- SIWE nonces ---
  insertNonce(record: SiweNonceRecord): Promise<void>;
  /** Marks the nonce used iff it exists, is unused, unexpired at `now` and bound to `address`. */
  consumeNonce(nonce: string, address: string, now: number): Promise<NonceConsumption>;
  /** Deletes nonces that expired before `now` (used or not: an expired nonce is rejected anyway). */
  deleteExpiredNonces(now: number): Promise<number>;

  // --- refresh tokens ---
  insertRefreshToken(record: RefreshTokenRecord): Promise<void>;
  getRefreshToken(tokenHash: string): Promise<RefreshTokenRecord | null>;
  /** Sets `rotatedAt` iff the token is neither rotated nor revoked; false otherwise. */
  markRefreshTokenRotated(tokenHash: string, now: number): Promise<boolean>;
  /** Revokes every not-yet-revoked token of the family; returns how many were revoked. */
  revokeRefreshTokenFamily(familyId: string, now: number): Promise<number>;

  // --- collateral ---
  /** Zero balance when the pair has never been seen. */
  getCollateral(user: string, asset: string): Promise<CollateralBalance>;
  creditDeposit(user: string, asset: string, amount: bigint, now: number): Promise<CollateralBalance>;
  /**
   * Check-and-lock (docs/protocol.md, "Collateral and safety invariants"): adds `amount` to `locked` iff the
   * new total stays ≤ `capacity(balance)`; otherwise changes nothing.
   */
  lockIfAvailable(
    user: string,
    asset: string,
    amount: bigint,
    capacity: CapacityFn,
    now: number,
  ): Promise<LockResult>;

  // --- guarantees ---
  /** Throws {@link DuplicateGuaranteeError} when the id exists. */
  insertGuarantee(record: GuaranteeRecord): Promise<void>;
  getGuarantee(guaranteeId: string): Promise<StoredGuarantee | null>;
  /** Oldest first; the cursor is stable under concurrent inserts (new rows only ever append). */
  listGuaranteesByRecipient(recipient: string, page?: PageRequest): Promise<Page<StoredGuarantee>>;

  // --- issuance (check-and-lock + insert, docs/protocol.md, "Collateral and safety invariants") ---
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
  /** Sets the amount of `asset` the user has asked to withdraw (the Vault's pending request; 0 clears it). */
  setPendingWithdrawal(user: string, asset: string, amount: bigint, now: number): Promise<CollateralBalance>;
  /** Every (user, asset) balance of `user` the store knows, by asset address. */
  listCollateral(user: string): Promise<CollateralBalance[]>;
  /** Sum of `locked` over all users, per asset (metrics). */
  lockedTotals(): Promise<Map<string, bigint>>;
}

/** The handle a transaction body works with: the same operations, all inside one transaction. */
export type StoreTx = StoreOps;

export interface Store extends StoreOps {
  /**
   * Runs `fn` in one transaction: committed if it resolves, rolled back if it
   * throws. Inside `fn` use only `tx` (calling the outer store from inside
   * would wait for the transaction to end, so it throws instead).
   */
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** Cheap round trip to the database (health checks). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A guarantee with this id is already stored (HTTP 409). */
export class DuplicateGuaranteeError extends Error {
  override readonly name = "DuplicateGuaranteeError";
  constructor(readonly guaranteeId: string) {
    super(`guarantee ${guaranteeId} already exists`);
  }
}
