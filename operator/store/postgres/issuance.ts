/**
 * {@link IssuanceRepository} on PostgreSQL. A batch is one transaction: first the row locks of every payer
 * (user, asset) in the batch, taken in sorted order (two batches over overlapping payers queue instead of
 * deadlocking), then per item, inside a SAVEPOINT: duplicate check, check-and-lock, insert (idempotent by the
 * guarantee id's primary key), webhook events. The caller is answered only after COMMIT returned.
 */
import type { IssuanceRepository, IssueGuaranteeOutcome, IssueGuaranteeRequest } from "../repositories";
import type { PgConn } from "./common";
import type { PgCollateral } from "./collateral";
import type { PgGuarantees } from "./guarantees";
import type { PgWebhookOutbox } from "./webhooks";

/** Thrown inside an item's savepoint to roll it back when another transaction stored the id first. */
class InsertedElsewhere extends Error {}

export class PgIssuance implements IssuanceRepository {
  constructor(
    private readonly db: PgConn,
    private readonly collateral: PgCollateral,
    private readonly guarantees: PgGuarantees,
    private readonly outbox: PgWebhookOutbox,
  ) {}

  async issueGuarantees(
    requests: readonly IssueGuaranteeRequest[],
    now: number,
  ): Promise<IssueGuaranteeOutcome[]> {
    await this.collateral.lockRows(
      requests.map((r) => ({ user: r.record.user, asset: r.record.asset })),
      now,
    );
    const outcomes: IssueGuaranteeOutcome[] = [];
    for (const request of requests) {
      try {
        outcomes.push(await this.db.savepoint(() => this.issueOne(request, now)));
      } catch (error) {
        if (error instanceof InsertedElsewhere) {
          const existing = await this.guarantees.getGuarantee(request.record.guaranteeId);
          outcomes.push(existing ? { kind: "duplicate", existing } : { kind: "failed", error });
        } else outcomes.push({ kind: "failed", error });
      }
    }
    return outcomes;
  }

  private async issueOne(request: IssueGuaranteeRequest, now: number): Promise<IssueGuaranteeOutcome> {
    const { record, capacity } = request;
    const existing = await this.guarantees.getGuarantee(record.guaranteeId);
    if (existing) return { kind: "duplicate", existing };
    const lock = await this.collateral.lockIfAvailable(
      record.user,
      record.asset,
      record.amount,
      capacity,
      now,
    );
    if (!lock.locked)
      return { kind: "insufficient_collateral", balance: lock.balance, capacity: lock.capacity };
    if (!(await this.guarantees.insertGuaranteeIfNew(record))) throw new InsertedElsewhere();
    for (const event of request.events ?? []) await this.outbox.insertWebhookEvent(event, now);
    return { kind: "issued", balance: lock.balance, capacity: lock.capacity };
  }
}
