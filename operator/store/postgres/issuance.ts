/**
 * {@link IssuanceRepository} on PostgreSQL. A batch is one transaction: first the row locks of every payer
 * (user, asset) in the batch, taken in sorted order (two batches over overlapping payers queue instead of
 * deadlocking), then the items, in order. The caller is answered only after COMMIT returned.
 *
 * The items run on a batch path with a few statements per batch and one per item (docs/scale-out.md,
 * "Issuance round trips"): one read of the locked balances, one of the payers' reserves, one duplicate check
 * for every id, one read of the webhook subscriptions; then per item the check-and-lock in memory on the
 * locked balance and one `INSERT … ON CONFLICT DO NOTHING`; at the end one `UPDATE` of the locked totals.
 * All of it inside one SAVEPOINT: on any SQL error it is rolled back and the batch runs again on the item
 * path (per item, in its own SAVEPOINT: duplicate check, check-and-lock, insert, webhook events), which
 * isolates the failing item. Ids repeated inside the batch, and reserves of a guarantee of the batch, also
 * take the item path (their capacity depends on the items before them being stored).
 */
import { tryLock } from "../../guarantees/try-lock";
import type {
  CollateralBalance,
  IssuanceRepository,
  IssueGuaranteeOutcome,
  IssueGuaranteeRequest,
} from "../repositories";
import { address, nonNegative, positive } from "../sqlite/common";
import type { PgConn } from "./common";
import type { PgCollateral } from "./collateral";
import type { Guarantees } from "../sql/guarantees";
import type { PgReserves } from "./reserves";
import type { WebhookOutbox } from "../sql/webhooks";

/** Thrown inside an item's savepoint to roll it back when another transaction stored the id first. */
class InsertedElsewhere extends Error {}

/** An SQL error on the batch path: its savepoint is rolled back and the batch runs on the item path. */
class BatchPathFailed extends Error {
  constructor(override readonly cause: unknown) {
    super("the batch path failed");
  }
}

const pairKey = (user: string, asset: string) => `${user}\n${asset}`;

export class PgIssuance implements IssuanceRepository {
  constructor(
    private readonly db: PgConn,
    private readonly collateral: PgCollateral,
    private readonly reserves: PgReserves,
    private readonly guarantees: Guarantees,
    private readonly outbox: WebhookOutbox,
  ) {}

  async issueGuarantees(
    requests: readonly IssueGuaranteeRequest[],
    now: number,
  ): Promise<IssueGuaranteeOutcome[]> {
    await this.collateral.lockRows(
      requests.map((r) => ({ user: r.record.user, asset: r.record.asset })),
      now,
    );
    const batched = await this.batchPath(requests, now);
    if (batched !== null) return batched;
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

  /** The batch path (module comment), or null when the batch must take the item path. */
  private async batchPath(
    requests: readonly IssueGuaranteeRequest[],
    now: number,
  ): Promise<IssueGuaranteeOutcome[] | null> {
    const ids = requests.map((r) => r.record.guaranteeId.toLowerCase());
    if (new Set(ids).size !== ids.length) return null;
    try {
      return await this.db.savepoint(() => this.runBatch(requests, ids, now));
    } catch (error) {
      if (error instanceof BatchPathFailed) return null;
      throw error;
    }
  }

  private async runBatch(
    requests: readonly IssueGuaranteeRequest[],
    ids: readonly string[],
    now: number,
  ): Promise<IssueGuaranteeOutcome[] | null> {
    const sql = async <T>(body: () => Promise<T>): Promise<T> => {
      try {
        return await body();
      } catch (error) {
        throw new BatchPathFailed(error);
      }
    };
    const pairs = [
      ...new Map(
        requests.map((r) => {
          const user = address(r.record.user);
          const asset = address(r.record.asset);
          return [pairKey(user, asset), { user, asset }] as const;
        }),
      ).values(),
    ];
    const balances = await sql(() => this.collateral.balancesOfLocked(pairs));
    const reserves = await sql(() => this.reserves.listReservesOfPairs(pairs));
    const batchIds = new Set(ids);
    for (const list of reserves.values()) {
      // A reserve of a guarantee of this batch counts differently once that guarantee is stored.
      if (list.some((r) => batchIds.has(r.guaranteeId.toLowerCase()))) throw new BatchPathFailed(null);
    }
    const stored = await sql(() => this.guarantees.getGuarantees(ids));
    const subscriptions = await sql(() => this.outbox.subscriptions());
    const changed = new Map<string, CollateralBalance>();
    const outcomes: IssueGuaranteeOutcome[] = [];
    for (const request of requests) {
      const { record } = request;
      const existing = stored.get(record.guaranteeId.toLowerCase());
      if (existing) {
        outcomes.push({ kind: "duplicate", existing });
        continue;
      }
      let key: string;
      let balance: CollateralBalance;
      let limit: bigint;
      try {
        positive(record.amount, "lock amount");
        const user = address(record.user);
        const asset = address(record.asset);
        key = pairKey(user, asset);
        balance = balances.get(key) ?? { user, asset, deposited: 0n, locked: 0n, pendingWithdrawal: 0n };
        limit = request.capacity(balance, reserves.get(key) ?? []);
      } catch (error) {
        outcomes.push({ kind: "failed", error });
        continue;
      }
      const next = tryLock(balance, record.amount, limit);
      if (next === null) {
        outcomes.push({ kind: "insufficient_collateral", balance, capacity: limit });
        continue;
      }
      // Any failure of the insert (the server's or the driver's) sends the batch to the item path, which
      // fails that item alone.
      if (!(await sql(() => this.guarantees.insertGuaranteeIfNew(record)))) {
        // Another transaction stored this id meanwhile (the insert waited for it): nothing is locked here.
        const other = await sql(() => this.guarantees.getGuarantee(record.guaranteeId));
        if (other === null) throw new BatchPathFailed(null);
        outcomes.push({ kind: "duplicate", existing: other });
        continue;
      }
      balances.set(key, next);
      changed.set(key, next);
      for (const event of request.events ?? []) {
        await sql(() => this.outbox.insertWebhookEventTo(event, now, subscriptions));
      }
      outcomes.push({ kind: "issued", balance: next, capacity: limit });
    }
    if (changed.size > 0) {
      for (const b of changed.values()) nonNegative(b.locked, "locked");
      await sql(() => this.collateral.writeLockedTotals([...changed.values()], now));
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
