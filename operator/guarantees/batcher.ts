/**
 * Group commit for issuance. Each issuance is its own atomic unit (check,
 * lock, insert), but committing one SQLite transaction per guarantee would
 * cost one fsync each (≈ 0.55 ms here), which would cap Core below the
 * crypto floor. Requests that arrive together are therefore issued in one
 * store transaction, each in its own savepoint, and answered only after that
 * transaction is committed and on disk (the store's WalSync, docs/store.md):
 * the same guarantees as one transaction per request, with one fsync per batch.
 */
import type { Clock } from "../clock";
import type { IssueGuaranteeOutcome, IssueGuaranteeRequest, StoreAreas } from "../store";

/** Upper bound on one batch, so one commit never holds the write lock for long. */
export const MAX_ISSUE_BATCH = 256;

interface Pending {
  request: IssueGuaranteeRequest;
  resolve(outcome: IssueGuaranteeOutcome): void;
  reject(error: unknown): void;
}

export class IssueBatcher {
  private queue: Pending[] = [];
  private scheduled = false;
  private flushing = false;

  constructor(
    private readonly store: StoreAreas<"issuance">,
    private readonly clock: Clock,
    private readonly maxBatch = MAX_ISSUE_BATCH,
  ) {}

  /** Resolves with this request's outcome once its batch is durably committed. */
  issue(request: IssueGuaranteeRequest): Promise<IssueGuaranteeOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    // After the current I/O phase: requests parsed in the same tick join the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, this.maxBatch);
    if (batch.length === 0) return;
    this.flushing = true;
    try {
      const outcomes = await this.store.issuance.issueGuarantees(
        batch.map((item) => item.request),
        this.clock.nowSeconds(),
      );
      batch.forEach((item, i) => item.resolve(outcomes[i]));
    } catch (error) {
      // The commit failed: nothing of the batch was issued.
      for (const item of batch) item.reject(error);
    } finally {
      this.flushing = false;
      if (this.queue.length > 0) this.schedule();
    }
  }
}
