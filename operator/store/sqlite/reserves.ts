/**
 * {@link ReserveRepository} on a better-sqlite3 connection (schema: migration 6). The indexer writes them;
 * {@link SqliteCollateral}'s check-and-lock reads them in its own transaction.
 */
import type { Database, Statement } from "better-sqlite3";
import { CONSUMED_STATES, type GuaranteeState } from "../../guarantees/states";
import type { ActiveReserve, ReserveRecord, ReserveRepository } from "../repositories";
import { address as addr, type Row, type SyncOf } from "./common";

const ACTIVE_COLUMNS = `r.*, g.state AS g_state, g.user_address AS g_user, g.asset_address AS g_asset,
  g.amount AS g_amount`;

export class SqliteReserves implements SyncOf<ReserveRepository> {
  private readonly put: Statement;
  private readonly get: Statement;
  private readonly remove: Statement;
  private readonly listByUser: Statement;
  private readonly listByUserAsset: Statement;
  private readonly listReleasable: Statement;
  private readonly listV1: Statement;

  constructor(db: Database) {
    this.put = db.prepare(
      `INSERT OR REPLACE INTO reserves (guarantee_id, user_address, asset_address, recipient, amount, expires_at,
         tx_hash, block_number, v1) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.get = db.prepare("SELECT * FROM reserves WHERE guarantee_id = ?");
    this.remove = db.prepare("DELETE FROM reserves WHERE guarantee_id = ?");
    const active = `SELECT ${ACTIVE_COLUMNS} FROM reserves r LEFT JOIN guarantees g ON g.guarantee_id = r.guarantee_id`;
    this.listByUser = db.prepare(
      `${active} WHERE r.user_address = ? ORDER BY r.block_number, r.guarantee_id`,
    );
    this.listByUserAsset = db.prepare(
      `${active} WHERE r.user_address = ? AND r.asset_address = ? ORDER BY r.block_number, r.guarantee_id`,
    );
    // Mirrors Vault.releaseReserve: consumed (netted or remunerated, as Core's books say) or, V2 only, expired.
    this.listReleasable = db.prepare(
      `${active} WHERE (r.v1 = 0 AND r.expires_at <= ?) OR g.state IN (${CONSUMED_STATES.map(() => "?").join(", ")})
       ORDER BY r.block_number, r.guarantee_id LIMIT ?`,
    );
    this.listV1 = db.prepare(
      "SELECT guarantee_id FROM reserves WHERE v1 = 1 ORDER BY block_number, guarantee_id",
    );
  }

  putReserve(record: ReserveRecord): void {
    this.put.run(
      record.guaranteeId.toLowerCase(),
      addr(record.user),
      addr(record.asset),
      addr(record.recipient),
      record.amount.toString(),
      record.expiresAt,
      record.txHash.toLowerCase(),
      record.blockNumber,
      record.v1 === true ? 1 : 0,
    );
  }

  getReserve(guaranteeId: string): ReserveRecord | null {
    const row = this.get.get(guaranteeId.toLowerCase()) as Row | undefined;
    return row ? reserveFromRow(row) : null;
  }

  deleteReserve(guaranteeId: string): void {
    this.remove.run(guaranteeId.toLowerCase());
  }

  listReserves(user: string, asset?: string): ActiveReserve[] {
    return asset === undefined
      ? activeReserves(this.listByUser.all(addr(user)) as Row[])
      : this.listReservesOfChecksummed(addr(user), addr(asset));
  }

  listReleasableReserves(nowSeconds: number, limit: number): ActiveReserve[] {
    return activeReserves(this.listReleasable.all(nowSeconds, ...CONSUMED_STATES, limit) as Row[]);
  }

  listV1ReserveIds(): string[] {
    return (this.listV1.all() as Row[]).map((row) => row.guarantee_id as string);
  }

  /**
   * As {@link listReserves} for addresses already in EIP-55 form (the check-and-lock's balance): the
   * issuance path skips re-checksumming, a keccak per address that cost more than the query itself.
   */
  listReservesOfChecksummed(user: string, asset: string): ActiveReserve[] {
    return activeReserves(this.listByUserAsset.all(user, asset) as Row[]);
  }
}

function activeReserves(rows: Row[]): ActiveReserve[] {
  return rows.map((row) => ({
    ...reserveFromRow(row),
    guarantee:
      row.g_state === null || row.g_state === undefined
        ? null
        : {
            state: row.g_state as GuaranteeState,
            // Both tables' writers store addresses checksummed.
            user: row.g_user as string,
            asset: row.g_asset as string,
            amount: BigInt(row.g_amount as string),
          },
  }));
}

function reserveFromRow(row: Row): ReserveRecord {
  return {
    guaranteeId: row.guarantee_id as string,
    user: row.user_address as string,
    asset: row.asset_address as string,
    recipient: row.recipient as string,
    amount: BigInt(row.amount as string),
    expiresAt: row.expires_at as number,
    txHash: row.tx_hash as string,
    blockNumber: row.block_number as number,
    ...(row.v1 === 1 ? { v1: true } : {}),
  };
}
