/**
 * The reserves read by SQLite's synchronous check-and-lock ({@link SqliteCollateral}, issuance): hand-written
 * until issuance moves to the single implementation (docs/store.md "What remains per engine"). Every other
 * reserve operation is `sql/reserves.ts`, for both engines.
 */
import type { Database, Statement } from "better-sqlite3";
import type { ActiveReserve } from "../repositories";
import { type ActiveReserveRow, activeFromRow } from "../sql/reserves";

export class SqliteReserves {
  private readonly listByUserAsset: Statement;

  constructor(db: Database) {
    this.listByUserAsset = db.prepare(
      `SELECT r.*, g.state AS g_state, g.user_address AS g_user, g.asset_address AS g_asset, g.amount AS g_amount
       FROM reserves r LEFT JOIN guarantees g ON g.guarantee_id = r.guarantee_id
       WHERE r.user_address = ? AND r.asset_address = ? ORDER BY r.block_number, r.guarantee_id`,
    );
  }

  /**
   * `listReserves` for addresses already in EIP-55 form (the check-and-lock's balance): the issuance path
   * skips re-checksumming, a keccak per address that cost more than the query itself.
   */
  listReservesOfChecksummed(user: string, asset: string): ActiveReserve[] {
    return (this.listByUserAsset.all(user, asset) as ActiveReserveRow[]).map(activeFromRow);
  }
}
