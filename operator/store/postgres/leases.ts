/**
 * Leader leases on PostgreSQL (docs/scale-out.md, "Leader lease and fencing"). One row per lease name:
 * who holds it, until when (the database's clock, unix ms) and its fencing token, which grows by one each
 * time the lease is granted to a holder that did not hold it unexpired (a new term).
 *
 * Not part of `StoreOps`: only the PostgreSQL store has replicas to elect among (SQLite's single process
 * holds its background work trivially, operator/leadership/). Every operation runs inside the caller's
 * transaction (a {@link PgConn}).
 */
import type { PgConn, Row } from "./common";

/** The database's clock in unix milliseconds, read anew at each evaluation (not the transaction start). */
const NOW_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/** A lease row as read (or as left by an acquire), with the database's clock when it was read. */
export interface LeaseState {
  name: string;
  holder: string;
  /** Fencing token of the holder's term (≥ 1). */
  token: number;
  /** Unix ms (database clock) when this term began. */
  acquiredAtMs: number;
  /** Unix ms (database clock) after which anyone may take the lease. */
  expiresAtMs: number;
  /** The database's clock (unix ms) at the read: `expiresAtMs − nowMs` is the time left. */
  nowMs: number;
}

/** Who may act under a lease: the fencing check of every write of a term. */
export interface LeaseFence {
  name: string;
  holder: string;
  token: number;
}

/** A write was refused: the lease is no longer held by this holder with this token (a newer term began). */
export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";
  constructor(readonly fence: LeaseFence) {
    super(
      `leader lease "${fence.name}" is no longer held by ${fence.holder} with fencing token ${fence.token}: ` +
        "this replica is not the leader, its background write was refused",
    );
  }
}

function stateOf(row: Row): LeaseState {
  return {
    name: row.name as string,
    holder: row.holder as string,
    token: row.token as number,
    acquiredAtMs: row.acquired_at_ms as number,
    expiresAtMs: row.expires_at_ms as number,
    nowMs: row.now_ms as number,
  };
}

const COLUMNS = `name, holder, token, acquired_at_ms, expires_at_ms, ${NOW_MS} AS now_ms`;

export class PgLeases {
  constructor(private readonly db: PgConn) {}

  /**
   * Takes or renews `name` for `holder` for `ttlMs` if it is free, expired or already `holder`'s; answers
   * the row as it stands afterwards (`holder` tells whether this call got it). Renewing an unexpired lease
   * keeps its token; any other grant (a new holder, or the same holder after expiry) increments it.
   */
  async acquire(name: string, holder: string, ttlMs: number): Promise<LeaseState> {
    const { rows } = await this.db.query(
      `INSERT INTO leader_leases AS l (name, holder, token, acquired_at_ms, expires_at_ms)
       VALUES ($1, $2, 1, ${NOW_MS}, ${NOW_MS} + $3)
       ON CONFLICT (name) DO UPDATE SET
         token = CASE WHEN l.holder = excluded.holder AND l.expires_at_ms > ${NOW_MS}
                      THEN l.token ELSE l.token + 1 END,
         acquired_at_ms = CASE WHEN l.holder = excluded.holder AND l.expires_at_ms > ${NOW_MS}
                               THEN l.acquired_at_ms ELSE excluded.acquired_at_ms END,
         holder = excluded.holder,
         expires_at_ms = excluded.expires_at_ms
       WHERE l.holder = excluded.holder OR l.expires_at_ms <= ${NOW_MS}
       RETURNING ${COLUMNS}`,
      [name, holder, ttlMs],
    );
    if (rows[0]) return stateOf(rows[0]);
    return (await this.get(name))!;
  }

  /** The lease row now (null: never taken). */
  async get(name: string): Promise<LeaseState | null> {
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM leader_leases WHERE name = $1`, [name]);
    return rows[0] ? stateOf(rows[0]) : null;
  }

  /** Ends `fence`'s term now (graceful stop): the next acquire by anyone starts a new term at once. */
  async release(fence: LeaseFence): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `UPDATE leader_leases SET expires_at_ms = ${NOW_MS}
       WHERE name = $1 AND holder = $2 AND token = $3 AND expires_at_ms > ${NOW_MS}`,
      [fence.name, fence.holder, fence.token],
    );
    return rowCount > 0;
  }

  /**
   * The fencing check: throws {@link LeaseLostError} unless `fence` is the current, unexpired term. The row
   * stays share-locked until the caller's transaction ends, so no other holder can take the lease (its
   * acquire waits for the lock) between this check and the caller's COMMIT.
   */
  async check(fence: LeaseFence): Promise<void> {
    const { rowCount } = await this.db.query(
      `SELECT 1 FROM leader_leases
       WHERE name = $1 AND holder = $2 AND token = $3 AND expires_at_ms > ${NOW_MS}
       FOR SHARE`,
      [fence.name, fence.holder, fence.token],
    );
    if (rowCount === 0) throw new LeaseLostError(fence);
  }
}
