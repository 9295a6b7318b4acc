/**
 * {@link CollateralRepository} for both engines: balances, the check-and-lock (which reads the payer's
 * reserves in the same transaction), the chain's adjustments and the Vault's withdrawal requests. How a
 * balance is locked for the rest of the transaction, and how several pairs are read and written at once,
 * is where the engines differ: {@link CollateralRows} (collateral-rows.ts, both implementations).
 *
 * The queries of the check-and-lock and issuance are {@link precompile}d (the hot path); the admin's
 * paged list is built per call.
 */
import type { ExpressionBuilder } from "kysely";
import { tryLock } from "../../guarantees/try-lock";
import type {
  ActiveReserve,
  CapacityFn,
  CollateralAdjustment,
  CollateralBalance,
  CollateralDelta,
  CollateralRepository,
  LockResult,
  WithdrawalRecord,
  WithdrawalState,
} from "../repositories";
import { address, nonNegative, positive } from "../values";
import type { SqlEngine } from "./engine";
import { precompile } from "./precompiled";
import type { CollateralTable, Schema, WithdrawalsTable } from "./schema";

/** A payer's (user, asset), both checksummed. */
export interface Pair {
  user: string;
  asset: string;
}

export const pairKey = (pair: Pair): string => `${pair.user}\n${pair.asset}`;
export const pairOf = (user: string, asset: string): Pair => ({ user: address(user), asset: address(asset) });

/**
 * Where the engines differ for collateral and issuance (collateral-rows.ts): PostgreSQL locks rows and
 * reads or writes a set of pairs in one statement (round trips count); SQLite's write transaction already
 * excludes every other writer, and a statement per pair costs microseconds.
 */
export interface CollateralRows {
  /**
   * Locks the pairs' rows for the rest of the transaction, creating missing ones, in sorted order (two
   * transactions over overlapping pairs queue instead of deadlocking). Nothing to do on SQLite.
   */
  lockPairs(pairs: readonly Pair[], now: number): Promise<void>;
  /** The stored balances of the pairs, by {@link pairKey} (a pair without a row is absent). */
  balances(pairs: readonly Pair[]): Promise<Map<string, CollateralBalance>>;
  /** The pairs' active reserves, by {@link pairKey}, each list by block then guarantee id. */
  reserves(pairs: readonly Pair[]): Promise<Map<string, ActiveReserve[]>>;
  /** Writes the `locked` totals of balances read in this transaction. */
  writeLocked(balances: readonly CollateralBalance[], now: number): Promise<void>;
  /** Runs `body` as one unit inside the transaction (a savepoint): rolled back alone if it throws. */
  unit<T>(body: () => Promise<T>): Promise<T>;
}

type BalanceColumns = Pick<CollateralTable, "deposited" | "locked" | "pending_withdrawal">;

export const GET_BALANCE = precompile((db, arg) =>
  db
    .selectFrom("collateral")
    .select(["deposited", "locked", "pending_withdrawal"])
    .where("user_address", "=", arg<string>(0))
    .where("asset_address", "=", arg<string>(1)),
);

const WRITE_BALANCE = precompile((db, arg) =>
  db
    .insertInto("collateral")
    .values({
      user_address: arg(0),
      asset_address: arg(1),
      deposited: arg(2),
      locked: arg(3),
      pending_withdrawal: arg(4),
      updated_at: arg(5),
    })
    .onConflict((conflict) =>
      conflict.columns(["user_address", "asset_address"]).doUpdateSet((eb) => ({
        deposited: eb.ref("excluded.deposited"),
        locked: eb.ref("excluded.locked"),
        pending_withdrawal: eb.ref("excluded.pending_withdrawal"),
        updated_at: eb.ref("excluded.updated_at"),
      })),
    ),
);

/** Rows created only to be locked (PostgreSQL, all zero) are not balances anyone has. */
const notEmpty = (eb: ExpressionBuilder<Schema, "collateral">) =>
  eb.or([eb("deposited", "<>", "0"), eb("locked", "<>", "0"), eb("pending_withdrawal", "<>", "0")]);

const LIST_OF_USER = precompile((db, arg) =>
  db
    .selectFrom("collateral")
    .select(["asset_address", "deposited", "locked", "pending_withdrawal"])
    .where("user_address", "=", arg<string>(0))
    .where(notEmpty)
    .orderBy("asset_address"),
);

const LOCKED_ROWS = precompile((db) =>
  db.selectFrom("collateral").select(["asset_address", "locked"]).where("locked", "<>", "0"),
);

const PUT_WITHDRAWAL = precompile((db, arg) =>
  db
    .insertInto("withdrawals")
    .values({
      withdrawal_id: arg(0),
      user_address: arg(1),
      asset_address: arg(2),
      amount: arg(3),
      finalizable_at: arg(4),
      requested_at: arg(5),
      state: arg(6),
      paid: arg(7),
      closed_at: arg(8),
    })
    .onConflict((conflict) =>
      conflict.column("withdrawal_id").doUpdateSet((eb) => ({
        amount: eb.ref("excluded.amount"),
        finalizable_at: eb.ref("excluded.finalizable_at"),
        requested_at: eb.ref("excluded.requested_at"),
        state: eb.ref("excluded.state"),
        paid: eb.ref("excluded.paid"),
        closed_at: eb.ref("excluded.closed_at"),
      })),
    ),
);

/** Writes every column of a balance read in this transaction. */
export async function writeBalance(sql: SqlEngine, balance: CollateralBalance, now: number): Promise<void> {
  await sql.run(
    WRITE_BALANCE.with(
      sql,
      balance.user,
      balance.asset,
      nonNegative(balance.deposited, "deposited").toString(),
      nonNegative(balance.locked, "locked").toString(),
      nonNegative(balance.pendingWithdrawal, "pending_withdrawal").toString(),
      now,
    ),
  );
}

export class Collateral implements CollateralRepository {
  constructor(
    private readonly sql: SqlEngine,
    private readonly rows: CollateralRows,
  ) {}

  async getCollateral(user: string, asset: string): Promise<CollateralBalance> {
    const pair = pairOf(user, asset);
    return balanceOf(pair, await this.sql.first(GET_BALANCE.with(this.sql, pair.user, pair.asset)));
  }

  creditDeposit(user: string, asset: string, amount: bigint, now: number): Promise<CollateralBalance> {
    positive(amount, "deposit amount");
    return this.update(pairOf(user, asset), now, (balance) => ({
      ...balance,
      deposited: balance.deposited + amount,
    }));
  }

  lockIfAvailable(
    user: string,
    asset: string,
    amount: bigint,
    capacity: CapacityFn,
    now: number,
  ): Promise<LockResult> {
    positive(amount, "lock amount");
    const pair = pairOf(user, asset);
    return this.sql.atomic(async (): Promise<LockResult> => {
      const balance = await this.lockedBalance(pair, now);
      const limit = capacity(balance, (await this.rows.reserves([pair])).get(pairKey(pair)) ?? []);
      const next = tryLock(balance, amount, limit);
      if (next === null) return { locked: false, balance, capacity: limit };
      await writeBalance(this.sql, next, now);
      return { locked: true, balance: next, capacity: limit };
    });
  }

  setPendingWithdrawal(user: string, asset: string, amount: bigint, now: number): Promise<CollateralBalance> {
    nonNegative(amount, "pending withdrawal");
    return this.update(pairOf(user, asset), now, (balance) => ({ ...balance, pendingWithdrawal: amount }));
  }

  async listCollateral(user: string): Promise<CollateralBalance[]> {
    const key = address(user);
    const rows = await this.sql.all(LIST_OF_USER.with(this.sql, key));
    return rows.map((row) => balanceOf({ user: key, asset: row.asset_address }, row));
  }

  async listAllCollateral(page: {
    after?: { user: string; asset: string };
    asset?: string;
    limit: number;
  }): Promise<CollateralBalance[]> {
    const { sql } = this;
    const user = sql.bytewise("user_address");
    const asset = sql.bytewise("asset_address");
    let query = sql.db
      .selectFrom("collateral")
      .select(["user_address", "asset_address", "deposited", "locked", "pending_withdrawal"])
      .where(notEmpty);
    const after = page.after;
    if (after) {
      const key = pairOf(after.user, after.asset);
      query = query.where((eb) =>
        eb.or([
          eb(user, ">", key.user),
          eb.and([eb("user_address", "=", key.user), eb(asset, ">", key.asset)]),
        ]),
      );
    }
    if (page.asset !== undefined) query = query.where("asset_address", "=", address(page.asset));
    const rows = await sql.all(query.orderBy(user).orderBy(asset).limit(page.limit));
    return rows.map((row) => balanceOf({ user: row.user_address, asset: row.asset_address }, row));
  }

  async lockedTotals(): Promise<Map<string, bigint>> {
    const totals = new Map<string, bigint>();
    for (const row of await this.sql.all(LOCKED_ROWS.with(this.sql))) {
      totals.set(row.asset_address, (totals.get(row.asset_address) ?? 0n) + BigInt(row.locked));
    }
    return totals;
  }

  adjustCollateral(
    user: string,
    asset: string,
    delta: CollateralDelta,
    now: number,
  ): Promise<CollateralAdjustment> {
    const pair = pairOf(user, asset);
    return this.sql.atomic(async () => {
      const before = await this.lockedBalance(pair, now);
      const clamp = (value: bigint) => (value < 0n ? 0n : value);
      const balance = {
        ...before,
        deposited: clamp(before.deposited + (delta.deposited ?? 0n)),
        locked: clamp(before.locked + (delta.locked ?? 0n)),
      };
      await writeBalance(this.sql, balance, now);
      return {
        balance,
        applied: { deposited: balance.deposited - before.deposited, locked: balance.locked - before.locked },
      };
    });
  }

  async putWithdrawal(record: WithdrawalRecord): Promise<void> {
    await this.sql.run(
      PUT_WITHDRAWAL.with(
        this.sql,
        record.withdrawalId,
        address(record.user),
        address(record.asset),
        record.amount.toString(),
        record.finalizableAt,
        record.requestedAt,
        record.state,
        record.paid === null ? null : record.paid.toString(),
        record.closedAt,
      ),
    );
  }

  async getWithdrawal(withdrawalId: number): Promise<WithdrawalRecord | null> {
    const row = await this.sql.first(
      this.sql.db.selectFrom("withdrawals").selectAll().where("withdrawal_id", "=", withdrawalId),
    );
    return row ? withdrawalFromRow(row) : null;
  }

  async deleteWithdrawal(withdrawalId: number): Promise<void> {
    await this.sql.run(this.sql.db.deleteFrom("withdrawals").where("withdrawal_id", "=", withdrawalId));
  }

  async listWithdrawals(user: string, states?: readonly WithdrawalState[]): Promise<WithdrawalRecord[]> {
    const rows = await this.sql.all(
      this.sql.db
        .selectFrom("withdrawals")
        .selectAll()
        .where("user_address", "=", address(user))
        .orderBy("withdrawal_id"),
    );
    return rows.map(withdrawalFromRow).filter((w) => !states || states.includes(w.state));
  }

  /** The pair's balance, locked for the rest of the transaction ({@link CollateralRows.lockPairs}). */
  private async lockedBalance(pair: Pair, now: number): Promise<CollateralBalance> {
    await this.rows.lockPairs([pair], now);
    return (await this.rows.balances([pair])).get(pairKey(pair)) ?? balanceOf(pair, undefined);
  }

  /** Read-modify-write of one balance as one unit. */
  private update(
    pair: Pair,
    now: number,
    change: (balance: CollateralBalance) => CollateralBalance,
  ): Promise<CollateralBalance> {
    return this.sql.atomic(async () => {
      const next = change(await this.lockedBalance(pair, now));
      await writeBalance(this.sql, next, now);
      return next;
    });
  }
}

/** A balance from its row's amounts (zero without a row). */
export function balanceOf(pair: Pair, row: BalanceColumns | undefined): CollateralBalance {
  return {
    ...pair,
    deposited: BigInt(row?.deposited ?? 0),
    locked: BigInt(row?.locked ?? 0),
    pendingWithdrawal: BigInt(row?.pending_withdrawal ?? 0),
  };
}

function withdrawalFromRow(row: WithdrawalsTable): WithdrawalRecord {
  return {
    withdrawalId: row.withdrawal_id,
    user: row.user_address,
    asset: row.asset_address,
    amount: BigInt(row.amount),
    finalizableAt: row.finalizable_at,
    requestedAt: row.requested_at,
    state: row.state as WithdrawalState,
    paid: row.paid === null ? null : BigInt(row.paid),
    closedAt: row.closed_at ?? null,
  };
}
