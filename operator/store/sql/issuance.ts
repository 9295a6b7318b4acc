/**
 * {@link IssuanceRepository} for both engines. A batch is one unit (SQLite: one `IMMEDIATE` transaction, or
 * a savepoint inside `store.transaction`; PostgreSQL: the operation's transaction): first the row locks of
 * every payer (user, asset) of the batch ({@link CollateralRows.lockPairs}: PostgreSQL's, in sorted order;
 * nothing on SQLite), then the items, in order. The caller is answered only once the batch committed
 * (and, on SQLite, was fsynced).
 *
 * The items run on a batch path with a few reads per batch and one write per item (docs/scale-out.md,
 * "Issuance round trips"): the locked balances, the payers' reserves, the stored guarantees among the ids
 * and the webhook subscriptions are read once; then per item the check-and-lock in memory ({@link tryLock}
 * on the balance) and one insert if new; at the end the changed `locked` totals are written. All of it
 * inside one savepoint: on any SQL error it is rolled back and the batch runs again on the item path (per
 * item, in its own savepoint: duplicate check, check-and-lock, insert, webhook events), which isolates the
 * failing item. Ids repeated inside the batch, and reserves of a guarantee of the batch, also take the item
 * path (their capacity depends on the items before them being stored).
 */
import { tryLock } from "../../guarantees/try-lock";
import type {
  CollateralBalance,
  GuaranteeRecord,
  IssuanceRepository,
  IssueGuaranteeOutcome,
  IssueGuaranteeRequest,
  StoredGuarantee,
} from "../repositories";
import { nonNegative, positive } from "../values";
import { type Collateral, type CollateralRows, type Pair, pairKey, pairOf } from "./collateral";
import type { SqlEngine } from "./engine";
import type { WebhookOutbox } from "./webhooks";

/** What issuance needs of the guarantees area (whose implementation writes the payable key). */
export interface IssuanceGuarantees {
  getGuarantee(guaranteeId: string): Promise<StoredGuarantee | null>;
  /** The stored records among `guaranteeIds`, by lower-case id. */
  getGuarantees(guaranteeIds: readonly string[]): Promise<Map<string, StoredGuarantee>>;
  /** Inserts the record unless its id exists (also against another replica's concurrent insert); true iff inserted. */
  insertGuaranteeIfNew(record: GuaranteeRecord): Promise<boolean>;
}

/** Thrown inside an item's savepoint to roll it back when another transaction stored the id first. */
class InsertedElsewhere extends Error {}

/** An SQL error on the batch path: its savepoint is rolled back and the batch runs on the item path. */
class BatchPathFailed extends Error {
  constructor(override readonly cause: unknown) {
    super("the batch path failed");
  }
}

/** Runs one SQL step of the batch path, turning its failure into {@link BatchPathFailed}. */
async function step<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw new BatchPathFailed(error);
  }
}

export class Issuance implements IssuanceRepository {
  constructor(
    private readonly sql: SqlEngine,
    private readonly rows: CollateralRows,
    private readonly collateral: Collateral,
    private readonly guarantees: IssuanceGuarantees,
    private readonly outbox: WebhookOutbox,
  ) {}

  issueGuarantees(requests: readonly IssueGuaranteeRequest[], now: number): Promise<IssueGuaranteeOutcome[]> {
    return this.sql.atomic(async () => {
      // A request whose addresses are not addresses fails alone, on the item path.
      const pairs = requests.map((r) => pairOrNull(r.record));
      await this.rows.lockPairs(
        pairs.filter((p): p is Pair => p !== null),
        now,
      );
      const batched = await this.batchPath(requests, pairs, now);
      if (batched !== null) return batched;
      const outcomes: IssueGuaranteeOutcome[] = [];
      for (const request of requests) {
        try {
          outcomes.push(await this.rows.unit(() => this.issueOne(request, now)));
        } catch (error) {
          if (error instanceof InsertedElsewhere) {
            const existing = await this.guarantees.getGuarantee(request.record.guaranteeId);
            outcomes.push(existing ? { kind: "duplicate", existing } : { kind: "failed", error });
          } else outcomes.push({ kind: "failed", error });
        }
      }
      return outcomes;
    });
  }

  /** The batch path (module comment), or null when the batch must take the item path. */
  private async batchPath(
    requests: readonly IssueGuaranteeRequest[],
    pairs: readonly (Pair | null)[],
    now: number,
  ): Promise<IssueGuaranteeOutcome[] | null> {
    const ids = requests.map((r) => r.record.guaranteeId.toLowerCase());
    if (new Set(ids).size !== ids.length || pairs.includes(null)) return null;
    try {
      return await this.rows.unit(() => this.runBatch(requests, pairs as readonly Pair[], ids, now));
    } catch (error) {
      if (error instanceof BatchPathFailed) return null;
      throw error;
    }
  }

  private async runBatch(
    requests: readonly IssueGuaranteeRequest[],
    pairs: readonly Pair[],
    ids: readonly string[],
    now: number,
  ): Promise<IssueGuaranteeOutcome[]> {
    const distinct = [...new Map(pairs.map((pair) => [pairKey(pair), pair])).values()];
    const balances = await step(() => this.rows.balances(distinct));
    const reserves = await step(() => this.rows.reserves(distinct));
    const batchIds = new Set(ids);
    for (const list of reserves.values()) {
      // A reserve of a guarantee of this batch counts differently once that guarantee is stored.
      if (list.some((r) => batchIds.has(r.guaranteeId.toLowerCase()))) throw new BatchPathFailed(null);
    }
    const stored = await step(() => this.guarantees.getGuarantees(ids));
    const subscriptions = await step(() => this.outbox.subscriptions());
    const changed = new Map<string, CollateralBalance>();
    const outcomes: IssueGuaranteeOutcome[] = [];
    for (const [index, request] of requests.entries()) {
      const { record } = request;
      const existing = stored.get(ids[index]);
      if (existing) {
        outcomes.push({ kind: "duplicate", existing });
        continue;
      }
      const pair = pairs[index];
      const key = pairKey(pair);
      const balance = balances.get(key) ?? { ...pair, deposited: 0n, locked: 0n, pendingWithdrawal: 0n };
      let limit: bigint;
      try {
        positive(record.amount, "lock amount");
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
      if (!(await step(() => this.guarantees.insertGuaranteeIfNew(record)))) {
        // Another transaction stored this id meanwhile (the insert waited for it): nothing is locked here.
        const other = await step(() => this.guarantees.getGuarantee(record.guaranteeId));
        if (other === null) throw new BatchPathFailed(null);
        outcomes.push({ kind: "duplicate", existing: other });
        continue;
      }
      balances.set(key, next);
      changed.set(key, next);
      for (const event of request.events ?? []) {
        await step(() => this.outbox.insertWebhookEventTo(event, now, subscriptions));
      }
      outcomes.push({ kind: "issued", balance: next, capacity: limit });
    }
    if (changed.size > 0) {
      for (const balance of changed.values()) nonNegative(balance.locked, "locked");
      await step(() => this.rows.writeLocked([...changed.values()], now));
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
    if (!lock.locked) {
      return { kind: "insufficient_collateral", balance: lock.balance, capacity: lock.capacity };
    }
    if (!(await this.guarantees.insertGuaranteeIfNew(record))) throw new InsertedElsewhere();
    for (const event of request.events ?? []) await this.outbox.insertWebhookEvent(event, now);
    return { kind: "issued", balance: lock.balance, capacity: lock.capacity };
  }
}

function pairOrNull(record: GuaranteeRecord): Pair | null {
  try {
    return pairOf(record.user, record.asset);
  } catch {
    return null;
  }
}
