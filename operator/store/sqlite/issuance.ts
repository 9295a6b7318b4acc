/**
 * {@link IssuanceRepository} on a better-sqlite3 connection: the check-and-lock of {@link SqliteCollateral}
 * and the insert of {@link SqliteGuaranteeRows} (and the issuance's webhook events) as one unit per guarantee.
 */
import type { Database } from "better-sqlite3";
import { type Atomic, atomicRunner } from "../sqlite-atomic";
import type { IssuanceRepository, IssueGuaranteeOutcome, IssueGuaranteeRequest } from "../repositories";
import type { SyncOf } from "./common";
import type { SqliteCollateral } from "./collateral";
import type { SqliteGuaranteeRows } from "../sql/payable-keys";
import type { SqliteWebhookOutbox } from "./webhooks";

export class SqliteIssuance implements SyncOf<IssuanceRepository> {
  /** One issuance as a unit: a savepoint inside the batch's transaction, so a failed item leaves no trace. */
  private readonly issueOne: (request: IssueGuaranteeRequest, now: number) => IssueGuaranteeOutcome;
  /**
   * Runs a body in a transaction (a savepoint when nested). Built once: `db.transaction` makes four
   * wrapper functions per call, which was per-request garbage on the issuance path.
   */
  private readonly atomic: Atomic;

  constructor(
    db: Database,
    collateral: SqliteCollateral,
    guarantees: SqliteGuaranteeRows,
    /** Where issuance writes its webhook events (same connection, so same transaction). */
    outbox: SqliteWebhookOutbox,
  ) {
    this.atomic = atomicRunner(db);
    this.issueOne = db.transaction((request: IssueGuaranteeRequest, now: number): IssueGuaranteeOutcome => {
      const { record, capacity } = request;
      const existing = guarantees.getGuarantee(record.guaranteeId);
      if (existing) return { kind: "duplicate", existing };
      const lock = collateral.lockIfAvailable(record.user, record.asset, record.amount, capacity, now);
      if (!lock.locked) {
        return { kind: "insufficient_collateral", balance: lock.balance, capacity: lock.capacity };
      }
      guarantees.insertGuarantee(record);
      for (const event of request.events ?? []) outbox.insertWebhookEvent(event, now);
      return { kind: "issued", balance: lock.balance, capacity: lock.capacity };
    });
  }

  issueGuarantees(requests: readonly IssueGuaranteeRequest[], now: number): IssueGuaranteeOutcome[] {
    return this.atomic(() =>
      requests.map((request): IssueGuaranteeOutcome => {
        try {
          return this.issueOne(request, now);
        } catch (error) {
          return { kind: "failed", error };
        }
      }),
    );
  }
}
