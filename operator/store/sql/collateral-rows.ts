/**
 * {@link CollateralRows}, where collateral and issuance differ between the engines, both implementations
 * side by side.
 *
 * - **SQLite**: the operation's write transaction (`BEGIN IMMEDIATE`) already excludes every other writer,
 *   so there is nothing to lock; a pair's balance or reserves are one cached statement each (microseconds,
 *   no round trip), and a `locked` total is written with the balance's upsert (a pair may have no row yet).
 * - **PostgreSQL**: several replicas write at once, so the pairs' rows are locked (`SELECT … FOR UPDATE`,
 *   created first if missing so there is always one to lock): every other writer of those rows, on any
 *   connection or replica, waits until this transaction ends and then reads the committed total, so
 *   `locked ≤ capacity` holds across replicas without aborting anyone. A set of pairs is read or written
 *   in one statement over `unnest` arrays (docs/scale-out.md, "Issuance round trips").
 */
import type { ActiveReserve, CollateralBalance } from "../repositories";
import { nonNegative } from "../values";
import type { PgConn } from "../postgres/common";
import { balanceOf, type CollateralRows, GET_BALANCE, type Pair, pairKey, writeBalance } from "./collateral";
import type { SqlEngine } from "./engine";
import { precompile } from "./precompiled";
import { type ActiveReserveRow, activeFromRow, activeReserves } from "./reserves";
import type { CollateralTable } from "./schema";

const RESERVES_OF_PAIR = precompile((db, arg) =>
  activeReserves(db)
    .where("r.user_address", "=", arg<string>(0))
    .where("r.asset_address", "=", arg<string>(1))
    .orderBy("r.block_number")
    .orderBy("r.guarantee_id"),
);

/** SQLite: the operation's write transaction is the lock; one cached statement per pair. */
export function sqliteCollateralRows(sql: SqlEngine): CollateralRows {
  return {
    lockPairs: async () => undefined,
    async balances(pairs) {
      const out = new Map<string, CollateralBalance>();
      for (const pair of pairs) {
        const row = await sql.first(GET_BALANCE.with(sql, pair.user, pair.asset));
        if (row) out.set(pairKey(pair), balanceOf(pair, row));
      }
      return out;
    },
    async reserves(pairs) {
      const out = new Map<string, ActiveReserve[]>();
      for (const pair of pairs) {
        const rows = await sql.all(RESERVES_OF_PAIR.with(sql, pair.user, pair.asset));
        if (rows.length > 0) out.set(pairKey(pair), rows.map(activeFromRow));
      }
      return out;
    },
    async writeLocked(balances, now) {
      for (const balance of balances) await writeBalance(sql, balance, now);
    },
    unit: (body) => sql.atomic(body),
  };
}

/** PostgreSQL: row locks in sorted order; each set of pairs in one statement. */
export function postgresCollateralRows(conn: PgConn): CollateralRows {
  const arrays = (pairs: readonly Pair[]) => [pairs.map((p) => p.user), pairs.map((p) => p.asset)];
  return {
    async lockPairs(pairs, now) {
      const sorted = [...new Map(pairs.map((p) => [pairKey(p), p])).entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([, pair]) => pair);
      if (sorted.length === 0) return;
      const [users, assets] = arrays(sorted);
      await conn.query(
        `INSERT INTO collateral (user_address, asset_address, updated_at)
         SELECT u, a, $3 FROM unnest($1::text[], $2::text[]) AS t(u, a) ORDER BY u, a
         ON CONFLICT (user_address, asset_address) DO NOTHING`,
        [users, assets, now],
      );
      await conn.query(
        `SELECT 1 FROM collateral c JOIN unnest($1::text[], $2::text[]) AS t(u, a)
           ON c.user_address = t.u AND c.asset_address = t.a
         ORDER BY c.user_address, c.asset_address FOR UPDATE OF c`,
        [users, assets],
      );
    },
    async balances(pairs) {
      const { rows } = await conn.query<CollateralTable>(
        `SELECT c.user_address, c.asset_address, c.deposited, c.locked, c.pending_withdrawal
         FROM collateral c JOIN unnest($1::text[], $2::text[]) AS t(u, a)
           ON c.user_address = t.u AND c.asset_address = t.a`,
        arrays(pairs),
      );
      const out = new Map<string, CollateralBalance>();
      for (const row of rows) {
        const pair = { user: row.user_address, asset: row.asset_address };
        out.set(pairKey(pair), balanceOf(pair, row));
      }
      return out;
    },
    async reserves(pairs) {
      const { rows } = await conn.query<ActiveReserveRow>(
        `SELECT r.*, g.state AS g_state, g.user_address AS g_user, g.asset_address AS g_asset,
           g.amount AS g_amount
         FROM reserves r LEFT JOIN guarantees g ON g.guarantee_id = r.guarantee_id
         JOIN unnest($1::text[], $2::text[]) AS t(u, a) ON r.user_address = t.u AND r.asset_address = t.a
         ORDER BY r.block_number, r.guarantee_id`,
        arrays(pairs),
      );
      const out = new Map<string, ActiveReserve[]>();
      for (const row of rows) {
        const key = pairKey({ user: row.user_address, asset: row.asset_address });
        out.set(key, [...(out.get(key) ?? []), activeFromRow(row)]);
      }
      return out;
    },
    async writeLocked(balances, now) {
      if (balances.length === 0) return;
      await conn.query(
        `UPDATE collateral c SET locked = t.l::numeric, updated_at = $4
         FROM unnest($1::text[], $2::text[], $3::text[]) AS t(u, a, l)
         WHERE c.user_address = t.u AND c.asset_address = t.a`,
        [...arrays(balances), balances.map((b) => nonNegative(b.locked, "locked").toString()), now],
      );
    },
    unit: (body) => conn.savepoint(body),
  };
}
