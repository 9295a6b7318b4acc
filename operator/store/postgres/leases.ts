/**
 * Leader leases on PostgreSQL (docs/scale-out.md, "Leader lease and fencing"). One row per lease name:
 * who holds it, until when (the database's clock, unix ms) and its fencing token, which grows by one each
 * time the lease is granted to a holder that did not hold it unexpired (a new term).
 *
 * Not part of `Store`: only the PostgreSQL store has replicas to elect among (SQLite's single process
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
   *
   * Three steps, so that only a takeover ever waits for the term's writes in flight (issue 26 item 1b: with
   * one `INSERT … ON CONFLICT DO UPDATE`, every renewal and every follower's try locked the row against the
   * fenced transactions' share locks, and under load renewals queued past the expiry):
   * 1. renewal: a plain `UPDATE` of the holder's unexpired row. It changes no key column, so its row lock
   *    (FOR NO KEY UPDATE) does not conflict with the fenced transactions' FOR KEY SHARE ({@link check});
   * 2. a lock-free read: a lease held, unexpired, by someone else is left alone (followers never lock);
   * 3. takeover of a free or expired lease: the row is locked FOR UPDATE, which waits for every fenced
   *    transaction of the old term to end, and the condition is checked again under the lock.
   */
  async acquire(name: string, holder: string, ttlMs: number): Promise<LeaseState> {
    const renewed = await this.db.query(
      `UPDATE leader_leases SET expires_at_ms = ${NOW_MS} + $3
       WHERE name = $1 AND holder = $2 AND expires_at_ms > ${NOW_MS}
       RETURNING ${COLUMNS}`,
      [name, holder, ttlMs],
    );
    if (renewed.rows[0]) return stateOf(renewed.rows[0]);
    const seen = await this.get(name);
    if (seen !== null && seen.holder !== holder && seen.expiresAtMs > seen.nowMs) return seen;
    const created = await this.db.query(
      `INSERT INTO leader_leases (name, holder, token, acquired_at_ms, expires_at_ms)
       VALUES ($1, $2, 1, ${NOW_MS}, ${NOW_MS} + $3)
       ON CONFLICT (name) DO NOTHING
       RETURNING ${COLUMNS}`,
      [name, holder, ttlMs],
    );
    if (created.rows[0]) return stateOf(created.rows[0]);
    const locked = await this.db.query(`SELECT ${COLUMNS} FROM leader_leases WHERE name = $1 FOR UPDATE`, [
      name,
    ]);
    const current = stateOf(locked.rows[0]);
    const ours = current.holder === holder && current.expiresAtMs > current.nowMs;
    if (!ours && current.expiresAtMs > current.nowMs) return current;
    const { rows } = await this.db.query(
      `UPDATE leader_leases SET
         token = CASE WHEN $4 THEN token ELSE token + 1 END,
         acquired_at_ms = CASE WHEN $4 THEN acquired_at_ms ELSE ${NOW_MS} END,
         holder = $2,
         expires_at_ms = ${NOW_MS} + $3
       WHERE name = $1
       RETURNING ${COLUMNS}`,
      [name, holder, ttlMs, ours],
    );
    return stateOf(rows[0]);
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
   * stays locked FOR KEY SHARE until the caller's transaction ends, so no other holder can take the lease
   * (a takeover locks FOR UPDATE and waits) between this check and the caller's COMMIT, while the holder's
   * own renewals (FOR NO KEY UPDATE) never wait for it.
   */
  async check(fence: LeaseFence): Promise<void> {
    const { rowCount } = await this.db.query(
      `SELECT 1 FROM leader_leases
       WHERE name = $1 AND holder = $2 AND token = $3 AND expires_at_ms > ${NOW_MS}
       FOR KEY SHARE`,
      [fence.name, fence.holder, fence.token],
    );
    if (rowCount === 0) throw new LeaseLostError(fence);
  }
}
