/**
 * The operator's store: one repository per data area (./repositories), handed out as typed properties of
 * one {@link Repositories} bundle. Every method is async so that a PostgreSQL implementation (several
 * operator replicas, row locks) can implement the same interface as the embedded SQLite store. Conventions
 * in ./repositories/common.ts.
 *
 * A consumer is given only the areas it uses ({@link StoreAreas}); the composition root (operator/app/)
 * and the store's own tests hold the whole {@link Store}. A new query goes into the repository of its area
 * (one implementation, ./sql), so the areas stay independent of each other and of the engines.
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

/**
 * The repositories by data area. Each call is atomic on its own; inside `store.transaction(fn)` the same
 * bundle (`tx`) runs every call in that one transaction.
 */
export interface Repositories {
  readonly collateral: CollateralRepository;
  readonly reserves: ReserveRepository;
  readonly guarantees: GuaranteeRepository;
  readonly issuance: IssuanceRepository;
  readonly cycles: CycleRepository;
  readonly netting: CycleNettingRepository;
  readonly chainJournal: ChainJournalRepository;
  readonly webhooks: WebhookOutboxRepository;
  readonly authSessions: AuthSessionRepository;
  readonly operatorState: OperatorStateRepository;
}

/** The name of one data area (a key of {@link Repositories}). */
export type StoreArea = keyof Repositories;

/**
 * What a consumer is given: the repositories of the areas it uses, and a transaction handing over the same
 * areas. A {@link Store} is one (for any `A`).
 */
export type StoreAreas<A extends StoreArea> = Pick<Repositories, A> & {
  /**
   * Runs `fn` in one transaction: committed if it resolves, rolled back if it throws. Inside `fn` use only
   * `tx` (calling the outer store from inside would wait for the transaction to end, so it throws instead).
   */
  transaction<T>(fn: (tx: Pick<Repositories, A>) => Promise<T>): Promise<T>;
};

export interface Store extends Repositories {
  /**
   * Runs `fn` in one transaction: committed if it resolves, rolled back if it
   * throws. Inside `fn` use only `tx` (calling the outer store from inside
   * would wait for the transaction to end, so it throws instead).
   */
  transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T>;
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
