/**
 * The reserves read by PostgreSQL's check-and-lock ({@link PgCollateral}) and batched issuance: hand-written
 * until issuance moves to the single implementation (docs/store.md "What remains per engine"). Every other
 * reserve operation is `sql/reserves.ts`, for both engines.
 */
import type { ActiveReserve } from "../repositories";
import { type ActiveReserveRow, activeFromRow } from "../sql/reserves";
import type { PgConn } from "./common";

const ACTIVE = `SELECT r.*, g.state AS g_state, g.user_address AS g_user, g.asset_address AS g_asset,
  g.amount AS g_amount FROM reserves r LEFT JOIN guarantees g ON g.guarantee_id = r.guarantee_id`;

export class PgReserves {
  constructor(private readonly db: PgConn) {}

  /** The active reserves of already checksummed pairs, in one statement, by `user\nasset`. */
  async listReservesOfPairs(
    pairs: readonly { user: string; asset: string }[],
  ): Promise<Map<string, ActiveReserve[]>> {
    const { rows } = await this.db.query<ActiveReserveRow>(
      `${ACTIVE} JOIN unnest($1::text[], $2::text[]) AS t(u, a) ON r.user_address = t.u AND r.asset_address = t.a
       ORDER BY r.block_number, r.guarantee_id`,
      [pairs.map((p) => p.user), pairs.map((p) => p.asset)],
    );
    const out = new Map<string, ActiveReserve[]>();
    for (const row of rows) {
      const key = `${row.user_address}\n${row.asset_address}`;
      out.set(key, [...(out.get(key) ?? []), activeFromRow(row)]);
    }
    return out;
  }

  /** `listReserves` for addresses already checksummed (the check-and-lock's balance). */
  async listReservesOfChecksummed(user: string, asset: string): Promise<ActiveReserve[]> {
    const { rows } = await this.db.query<ActiveReserveRow>(
      `${ACTIVE} WHERE r.user_address = $1 AND r.asset_address = $2 ORDER BY r.block_number, r.guarantee_id`,
      [user, asset],
    );
    return rows.map(activeFromRow);
  }
}
