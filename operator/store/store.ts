/**
 * The operator's store: one repository interface per data area (./repositories), composed. Every method
 * is async so that a PostgreSQL implementation (several operator replicas, row locks) can implement the
 * same interface as the embedded SQLite store. Conventions in ./repositories/common.ts.
 *
 * A new backend implements {@link Store}; a new query goes into the repository of its area (and into
 * every backend), so the areas stay independent of each other and of the backends.
 */
import type { AuthSessionRepository } from "./repositories/auth-sessions";
import type { ChainJournalRepository } from "./repositories/chain-journal";
import type { CollateralRepository } from "./repositories/collateral";
import type { CycleRepository } from "./repositories/cycles";
import type { GuaranteeRepository } from "./repositories/guarantees";
import type { IssuanceRepository } from "./repositories/issuance";
import type { CycleNettingRepository } from "./repositories/netting";
import type { OperatorStateRepository } from "./repositories/operator-state";
import type { ReserveRepository } from "./repositories/reserves";
import type { WebhookOutboxRepository } from "./repositories/webhooks";

/** Every repository's operations; each call is atomic on its own and usable inside `store.transaction`. */
export interface StoreOps
  extends AuthSessionRepository,
    CollateralRepository,
    ReserveRepository,
    GuaranteeRepository,
    IssuanceRepository,
    CycleRepository,
    CycleNettingRepository,
    ChainJournalRepository,
    WebhookOutboxRepository,
    OperatorStateRepository {}

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

/**
 * The database could not be reached, or dropped the connection, during an operation (PostgreSQL: server
 * down or restarting, connection refused, reset or terminated). The operation wrote nothing, except when the
 * connection broke while its COMMIT was under way: then its outcome is unknown, and a retry of an idempotent
 * operation (issuance, by the guarantee id) tells. Core answers it 500 `store_unavailable`.
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
  constructor(override readonly cause: unknown) {
    super(`the database is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}
