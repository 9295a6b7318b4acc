/**
 * {@link CollateralRepository} on a better-sqlite3 connection: balances, the check-and-lock (which reads the
 * payer's reserves in the same transaction), the chain's adjustments and withdrawals.
 */
import { tryLock } from "../../guarantees/try-lock";
import type { Database, Statement } from "better-sqlite3";
import { type Atomic, atomicRunner } from "../sqlite-atomic";
import type { SqliteReserves } from "./reserves";
import {
  type CapacityFn,
  type CollateralAdjustment,
  type CollateralBalance,
  type CollateralDelta,
  type CollateralRepository,
  type LockResult,
  type WithdrawalRecord,
  type WithdrawalState,
} from "../repositories";
import { address, nonNegative, positive, type Row, type SyncOf } from "./common";

interface CollateralRow {
  asset_address?: string;
  deposited: string;
  locked: string;
  pending_withdrawal: string;
}

export class SqliteCollateral implements SyncOf<CollateralRepository> {
  private readonly stmt: ReturnType<typeof prepare>;
  private readonly atomic: Atomic;

  constructor(
    private readonly db: Database,
    /** Read by the check-and-lock: the payer's on-chain reserves hold collateral too. */
    private readonly reserves: SqliteReserves,
  ) {
    this.stmt = prepare(db);
    this.atomic = atomicRunner(db);
  }

  getCollateral(user: string, asset: string): CollateralBalance {
    const key = { user: address(user), asset: address(asset) };
    const row = this.stmt.getCollateral.get(key.user, key.asset) as CollateralRow | undefined;
    return {
      ...key,
      deposited: BigInt(row?.deposited ?? 0),
      locked: BigInt(row?.locked ?? 0),
      pendingWithdrawal: BigInt(row?.pending_withdrawal ?? 0),
    };
  }

  creditDeposit(user: string, asset: string, amount: bigint, now: number): CollateralBalance {
    positive(amount, "deposit amount");
    return this.atomic(() => {
      const balance = this.getCollateral(user, asset);
      const next = { ...balance, deposited: balance.deposited + amount };
      this.writeCollateral(next, now);
      return next;
    });
  }

  lockIfAvailable(
    user: string,
    asset: string,
    amount: bigint,
    capacity: CapacityFn,
    now: number,
  ): LockResult {
    positive(amount, "lock amount");
    return this.atomic((): LockResult => {
      const balance = this.getCollateral(user, asset);
      const limit = capacity(balance, this.reserves.listReservesOfChecksummed(balance.user, balance.asset));
      const next = tryLock(balance, amount, limit);
      if (next === null) return { locked: false, balance, capacity: limit };
      this.writeCollateral(next, now);
      return { locked: true, balance: next, capacity: limit };
    });
  }

  setPendingWithdrawal(user: string, asset: string, amount: bigint, now: number): CollateralBalance {
    nonNegative(amount, "pending withdrawal");
    return this.atomic(() => {
      const next = { ...this.getCollateral(user, asset), pendingWithdrawal: amount };
      this.writeCollateral(next, now);
      return next;
    });
  }

  listCollateral(user: string): CollateralBalance[] {
    const key = address(user);
    const rows = this.stmt.listCollateral.all(key) as Required<CollateralRow>[];
    return rows.map((row) => ({
      user: key,
      asset: row.asset_address,
      deposited: BigInt(row.deposited),
      locked: BigInt(row.locked),
      pendingWithdrawal: BigInt(row.pending_withdrawal),
    }));
  }

  listAllCollateral(page: {
    after?: { user: string; asset: string };
    asset?: string;
    limit: number;
  }): CollateralBalance[] {
    const where = ["NOT (deposited = '0' AND locked = '0' AND pending_withdrawal = '0')"];
    const params: unknown[] = [];
    if (page.after) {
      // SQLite compares TEXT bytewise (BINARY collation): the order the contract names.
      where.push("(user_address > ? OR (user_address = ? AND asset_address > ?))");
      const user = address(page.after.user);
      params.push(user, user, address(page.after.asset));
    }
    if (page.asset !== undefined) {
      where.push("asset_address = ?");
      params.push(address(page.asset));
    }
    params.push(page.limit);
    const rows = this.db
      .prepare(
        `SELECT user_address, asset_address, deposited, locked, pending_withdrawal FROM collateral
         WHERE ${where.join(" AND ")} ORDER BY user_address, asset_address LIMIT ?`,
      )
      .all(...params) as Required<CollateralRow & { user_address: string }>[];
    return rows.map((row) => ({
      user: row.user_address,
      asset: row.asset_address,
      deposited: BigInt(row.deposited),
      locked: BigInt(row.locked),
      pendingWithdrawal: BigInt(row.pending_withdrawal),
    }));
  }

  lockedTotals(): Map<string, bigint> {
    const totals = new Map<string, bigint>();
    for (const row of this.stmt.lockedRows.all() as { asset_address: string; locked: string }[]) {
      totals.set(row.asset_address, (totals.get(row.asset_address) ?? 0n) + BigInt(row.locked));
    }
    return totals;
  }

  adjustCollateral(user: string, asset: string, delta: CollateralDelta, now: number): CollateralAdjustment {
    return this.atomic(() => {
      const key = { user: address(user), asset: address(asset) };
      const row = this.stmt.getCollateral.get(key.user, key.asset) as Row | undefined;
      const before: CollateralBalance = {
        ...key,
        deposited: BigInt((row?.deposited as string) ?? 0),
        locked: BigInt((row?.locked as string) ?? 0),
        pendingWithdrawal: BigInt((row?.pending_withdrawal as string) ?? 0),
      };
      const clamp = (value: bigint) => (value < 0n ? 0n : value);
      const balance = {
        ...before,
        deposited: clamp(before.deposited + (delta.deposited ?? 0n)),
        locked: clamp(before.locked + (delta.locked ?? 0n)),
      };
      this.stmt.upsertCollateral.run(
        key.user,
        key.asset,
        balance.deposited.toString(),
        balance.locked.toString(),
        balance.pendingWithdrawal.toString(),
        now,
      );
      return {
        balance,
        applied: {
          deposited: balance.deposited - before.deposited,
          locked: balance.locked - before.locked,
        },
      };
    });
  }

  putWithdrawal(record: WithdrawalRecord): void {
    this.stmt.putWithdrawal.run(
      record.withdrawalId,
      address(record.user),
      address(record.asset),
      record.amount.toString(),
      record.finalizableAt,
      record.requestedAt,
      record.state,
      record.paid === null ? null : record.paid.toString(),
      record.closedAt,
    );
  }

  getWithdrawal(withdrawalId: number): WithdrawalRecord | null {
    const row = this.stmt.getWithdrawal.get(withdrawalId) as Row | undefined;
    return row ? withdrawalFromRow(row) : null;
  }

  deleteWithdrawal(withdrawalId: number): void {
    this.stmt.deleteWithdrawal.run(withdrawalId);
  }

  listWithdrawals(user: string, states?: readonly WithdrawalState[]): WithdrawalRecord[] {
    const rows = this.stmt.listWithdrawals.all(address(user)) as Row[];
    return rows.map(withdrawalFromRow).filter((w) => !states || states.includes(w.state));
  }

  private writeCollateral(balance: CollateralBalance, now: number): void {
    this.stmt.upsertCollateral.run(
      balance.user,
      balance.asset,
      nonNegative(balance.deposited, "deposited").toString(),
      nonNegative(balance.locked, "locked").toString(),
      nonNegative(balance.pendingWithdrawal, "pending_withdrawal").toString(),
      now,
    );
  }
}

function prepare(db: Database) {
  const p = (sql: string): Statement => db.prepare(sql);
  return {
    deleteWithdrawal: p("DELETE FROM withdrawals WHERE withdrawal_id = ?"),
    getCollateral: p(
      "SELECT deposited, locked, pending_withdrawal FROM collateral WHERE user_address = ? AND asset_address = ?",
    ),
    getWithdrawal: p("SELECT * FROM withdrawals WHERE withdrawal_id = ?"),
    listCollateral: p(
      `SELECT asset_address, deposited, locked, pending_withdrawal FROM collateral
       WHERE user_address = ? ORDER BY asset_address`,
    ),
    listWithdrawals: p("SELECT * FROM withdrawals WHERE user_address = ? ORDER BY withdrawal_id"),
    lockedRows: p("SELECT asset_address, locked FROM collateral WHERE locked != '0'"),
    putWithdrawal: p(
      `INSERT INTO withdrawals (withdrawal_id, user_address, asset_address, amount, finalizable_at, requested_at,
         state, paid, closed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (withdrawal_id) DO UPDATE SET amount = excluded.amount, finalizable_at = excluded.finalizable_at,
         requested_at = excluded.requested_at, state = excluded.state, paid = excluded.paid, closed_at = excluded.closed_at`,
    ),
    upsertCollateral: p(
      `INSERT INTO collateral (user_address, asset_address, deposited, locked, pending_withdrawal, updated_at)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (user_address, asset_address) DO UPDATE SET
         deposited = excluded.deposited, locked = excluded.locked,
         pending_withdrawal = excluded.pending_withdrawal, updated_at = excluded.updated_at`,
    ),
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
