/**
 * {@link CollateralRepository} on PostgreSQL. The check-and-lock takes the payer's (user, asset) row lock
 * (`SELECT … FOR UPDATE`, the row created first if missing so there is always one to lock): every other
 * writer of that row, on any connection or replica, waits until this transaction ends and then reads the
 * committed total, so `locked ≤ capacity` holds across replicas without aborting anyone.
 */
import { tryLock } from "../../guarantees/try-lock";
import type {
  CapacityFn,
  CollateralAdjustment,
  CollateralBalance,
  CollateralDelta,
  CollateralRepository,
  LockResult,
  WithdrawalRecord,
  WithdrawalState,
} from "../repositories";
import { address, nonNegative, positive } from "../sqlite/common";
import type { PgConn, Row } from "./common";
import type { PgReserves } from "./reserves";

export class PgCollateral implements CollateralRepository {
  constructor(
    private readonly db: PgConn,
    /** Read by the check-and-lock: the payer's on-chain reserves hold collateral too. */
    private readonly reserves: PgReserves,
  ) {}

  async getCollateral(user: string, asset: string): Promise<CollateralBalance> {
    const key = { user: address(user), asset: address(asset) };
    const { rows } = await this.db.query(
      "SELECT deposited, locked, pending_withdrawal FROM collateral WHERE user_address = $1 AND asset_address = $2",
      [key.user, key.asset],
    );
    return balanceOf(key, rows[0]);
  }

  /**
   * Locks the rows of the given (user, asset) pairs, creating missing ones, in sorted order: two
   * transactions locking overlapping sets always take them in the same order, so they queue instead of
   * deadlocking. The balances come back as committed by whoever held the lock before.
   */
  async lockRows(pairs: readonly { user: string; asset: string }[], now: number): Promise<void> {
    const keys = [...new Set(pairs.map((p) => `${address(p.user)}\n${address(p.asset)}`))].sort();
    if (keys.length === 0) return;
    const users = keys.map((k) => k.split("\n")[0]);
    const assets = keys.map((k) => k.split("\n")[1]);
    await this.db.query(
      `INSERT INTO collateral (user_address, asset_address, updated_at)
       SELECT u, a, $3 FROM unnest($1::text[], $2::text[]) AS t(u, a) ORDER BY u, a
       ON CONFLICT (user_address, asset_address) DO NOTHING`,
      [users, assets, now],
    );
    await this.db.query(
      `SELECT 1 FROM collateral c JOIN unnest($1::text[], $2::text[]) AS t(u, a)
         ON c.user_address = t.u AND c.asset_address = t.a
       ORDER BY c.user_address, c.asset_address FOR UPDATE OF c`,
      [users, assets],
    );
  }

  /**
   * The balances of already checksummed pairs whose rows this transaction has locked ({@link lockRows}), in
   * one statement, by `user\nasset`.
   */
  async balancesOfLocked(
    pairs: readonly { user: string; asset: string }[],
  ): Promise<Map<string, CollateralBalance>> {
    const { rows } = await this.db.query(
      `SELECT c.user_address, c.asset_address, c.deposited, c.locked, c.pending_withdrawal
       FROM collateral c JOIN unnest($1::text[], $2::text[]) AS t(u, a)
         ON c.user_address = t.u AND c.asset_address = t.a`,
      [pairs.map((p) => p.user), pairs.map((p) => p.asset)],
    );
    const out = new Map<string, CollateralBalance>();
    for (const row of rows) {
      const key = { user: row.user_address as string, asset: row.asset_address as string };
      out.set(`${key.user}\n${key.asset}`, balanceOf(key, row));
    }
    return out;
  }

  /** Writes the `locked` totals of rows this transaction has locked, in one statement. */
  async writeLockedTotals(balances: readonly CollateralBalance[], now: number): Promise<void> {
    await this.db.query(
      `UPDATE collateral c SET locked = t.l::numeric, updated_at = $4
       FROM unnest($1::text[], $2::text[], $3::text[]) AS t(u, a, l)
       WHERE c.user_address = t.u AND c.asset_address = t.a`,
      [
        balances.map((b) => b.user),
        balances.map((b) => b.asset),
        balances.map((b) => nonNegative(b.locked, "locked").toString()),
        now,
      ],
    );
  }

  /** The balance of an already checksummed pair, locked for the rest of the transaction. */
  private async lockedBalance(user: string, asset: string, now: number): Promise<CollateralBalance> {
    await this.lockRows([{ user, asset }], now);
    const { rows } = await this.db.query(
      "SELECT deposited, locked, pending_withdrawal FROM collateral WHERE user_address = $1 AND asset_address = $2",
      [user, asset],
    );
    return balanceOf({ user, asset }, rows[0]);
  }

  async creditDeposit(user: string, asset: string, amount: bigint, now: number): Promise<CollateralBalance> {
    positive(amount, "deposit amount");
    const balance = await this.lockedBalance(address(user), address(asset), now);
    const next = { ...balance, deposited: balance.deposited + amount };
    await this.writeCollateral(next, now);
    return next;
  }

  async lockIfAvailable(
    user: string,
    asset: string,
    amount: bigint,
    capacity: CapacityFn,
    now: number,
  ): Promise<LockResult> {
    positive(amount, "lock amount");
    const balance = await this.lockedBalance(address(user), address(asset), now);
    const limit = capacity(
      balance,
      await this.reserves.listReservesOfChecksummed(balance.user, balance.asset),
    );
    const next = tryLock(balance, amount, limit);
    if (next === null) return { locked: false, balance, capacity: limit };
    await this.writeCollateral(next, now);
    return { locked: true, balance: next, capacity: limit };
  }

  async setPendingWithdrawal(
    user: string,
    asset: string,
    amount: bigint,
    now: number,
  ): Promise<CollateralBalance> {
    nonNegative(amount, "pending withdrawal");
    const next = {
      ...(await this.lockedBalance(address(user), address(asset), now)),
      pendingWithdrawal: amount,
    };
    await this.writeCollateral(next, now);
    return next;
  }

  async listCollateral(user: string): Promise<CollateralBalance[]> {
    const key = address(user);
    // Rows created only to be locked (all zero) are not balances the store "knows" in the SQLite sense.
    const { rows } = await this.db.query(
      `SELECT asset_address, deposited, locked, pending_withdrawal FROM collateral
       WHERE user_address = $1 AND (deposited <> 0 OR locked <> 0 OR pending_withdrawal <> 0)
       ORDER BY asset_address`,
      [key],
    );
    return rows.map((row) => balanceOf({ user: key, asset: row.asset_address as string }, row));
  }

  async listAllCollateral(page: {
    after?: { user: string; asset: string };
    asset?: string;
    limit: number;
  }): Promise<CollateralBalance[]> {
    const where = ["(deposited <> 0 OR locked <> 0 OR pending_withdrawal <> 0)"];
    const params: unknown[] = [];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (page.after) {
      // COLLATE "C": byte order, as SQLite's, whatever the database's locale.
      const user = param(address(page.after.user));
      const asset = param(address(page.after.asset));
      where.push(
        `(user_address COLLATE "C" > ${user} OR (user_address = ${user} AND asset_address COLLATE "C" > ${asset}))`,
      );
    }
    if (page.asset !== undefined) where.push(`asset_address = ${param(address(page.asset))}`);
    const { rows } = await this.db.query(
      `SELECT user_address, asset_address, deposited, locked, pending_withdrawal FROM collateral
       WHERE ${where.join(" AND ")}
       ORDER BY user_address COLLATE "C", asset_address COLLATE "C" LIMIT ${param(page.limit)}`,
      params,
    );
    return rows.map((row) =>
      balanceOf({ user: row.user_address as string, asset: row.asset_address as string }, row),
    );
  }

  async lockedTotals(): Promise<Map<string, bigint>> {
    const { rows } = await this.db.query(
      "SELECT asset_address, sum(locked)::text AS locked FROM collateral WHERE locked <> 0 GROUP BY asset_address",
    );
    return new Map(rows.map((row) => [row.asset_address as string, BigInt(row.locked as string)]));
  }

  async adjustCollateral(
    user: string,
    asset: string,
    delta: CollateralDelta,
    now: number,
  ): Promise<CollateralAdjustment> {
    const before = await this.lockedBalance(address(user), address(asset), now);
    const clamp = (value: bigint) => (value < 0n ? 0n : value);
    const balance = {
      ...before,
      deposited: clamp(before.deposited + (delta.deposited ?? 0n)),
      locked: clamp(before.locked + (delta.locked ?? 0n)),
    };
    await this.writeCollateral(balance, now);
    return {
      balance,
      applied: { deposited: balance.deposited - before.deposited, locked: balance.locked - before.locked },
    };
  }

  async putWithdrawal(record: WithdrawalRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO withdrawals (withdrawal_id, user_address, asset_address, amount, finalizable_at, requested_at,
         state, paid, closed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (withdrawal_id) DO UPDATE SET amount = excluded.amount, finalizable_at = excluded.finalizable_at,
         requested_at = excluded.requested_at, state = excluded.state, paid = excluded.paid, closed_at = excluded.closed_at`,
      [
        record.withdrawalId,
        address(record.user),
        address(record.asset),
        record.amount.toString(),
        record.finalizableAt,
        record.requestedAt,
        record.state,
        record.paid === null ? null : record.paid.toString(),
        record.closedAt,
      ],
    );
  }

  async getWithdrawal(withdrawalId: number): Promise<WithdrawalRecord | null> {
    const { rows } = await this.db.query("SELECT * FROM withdrawals WHERE withdrawal_id = $1", [
      withdrawalId,
    ]);
    return rows[0] ? withdrawalFromRow(rows[0]) : null;
  }

  async deleteWithdrawal(withdrawalId: number): Promise<void> {
    await this.db.query("DELETE FROM withdrawals WHERE withdrawal_id = $1", [withdrawalId]);
  }

  async listWithdrawals(user: string, states?: readonly WithdrawalState[]): Promise<WithdrawalRecord[]> {
    const { rows } = await this.db.query(
      "SELECT * FROM withdrawals WHERE user_address = $1 ORDER BY withdrawal_id",
      [address(user)],
    );
    return rows.map(withdrawalFromRow).filter((w) => !states || states.includes(w.state));
  }

  private async writeCollateral(balance: CollateralBalance, now: number): Promise<void> {
    await this.db.query(
      `INSERT INTO collateral (user_address, asset_address, deposited, locked, pending_withdrawal, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (user_address, asset_address) DO UPDATE SET
         deposited = excluded.deposited, locked = excluded.locked,
         pending_withdrawal = excluded.pending_withdrawal, updated_at = excluded.updated_at`,
      [
        balance.user,
        balance.asset,
        nonNegative(balance.deposited, "deposited").toString(),
        nonNegative(balance.locked, "locked").toString(),
        nonNegative(balance.pendingWithdrawal, "pending_withdrawal").toString(),
        now,
      ],
    );
  }
}

function balanceOf(key: { user: string; asset: string }, row: Row | undefined): CollateralBalance {
  return {
    ...key,
    deposited: BigInt((row?.deposited as string | undefined) ?? 0),
    locked: BigInt((row?.locked as string | undefined) ?? 0),
    pendingWithdrawal: BigInt((row?.pending_withdrawal as string | undefined) ?? 0),
  };
}

function withdrawalFromRow(row: Row): WithdrawalRecord {
  return {
    withdrawalId: row.withdrawal_id as number,
    user: row.user_address as string,
    asset: row.asset_address as string,
    amount: BigInt(row.amount as string),
    finalizableAt: row.finalizable_at as number,
    requestedAt: row.requested_at as number,
    state: row.state as WithdrawalState,
    paid: row.paid === null ? null : BigInt(row.paid as string),
    closedAt: (row.closed_at as number | null) ?? null,
  };
}
