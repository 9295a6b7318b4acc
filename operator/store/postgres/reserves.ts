/** {@link ReserveRepository} on PostgreSQL; {@link PgCollateral}'s check-and-lock reads them in its transaction. */
import { CONSUMED_STATES, type GuaranteeState } from "../../guarantees/states";
import type { ActiveReserve, ReserveRecord, ReserveRepository } from "../repositories";
import { address } from "../sqlite/common";
import type { PgConn, Row } from "./common";

const ACTIVE = `SELECT r.*, g.state AS g_state, g.user_address AS g_user, g.asset_address AS g_asset,
  g.amount AS g_amount FROM reserves r LEFT JOIN guarantees g ON g.guarantee_id = r.guarantee_id`;

export class PgReserves implements ReserveRepository {
  constructor(private readonly db: PgConn) {}

  async putReserve(record: ReserveRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO reserves (guarantee_id, user_address, asset_address, recipient, amount, expires_at, tx_hash,
         block_number, v1) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (guarantee_id) DO UPDATE SET user_address = excluded.user_address,
         asset_address = excluded.asset_address, recipient = excluded.recipient, amount = excluded.amount,
         expires_at = excluded.expires_at, tx_hash = excluded.tx_hash, block_number = excluded.block_number,
         v1 = excluded.v1`,
      [
        record.guaranteeId.toLowerCase(),
        address(record.user),
        address(record.asset),
        address(record.recipient),
        record.amount.toString(),
        record.expiresAt,
        record.txHash.toLowerCase(),
        record.blockNumber,
        record.v1 === true,
      ],
    );
  }

  async getReserve(guaranteeId: string): Promise<ReserveRecord | null> {
    const { rows } = await this.db.query("SELECT * FROM reserves WHERE guarantee_id = $1", [
      guaranteeId.toLowerCase(),
    ]);
    return rows[0] ? reserveFromRow(rows[0]) : null;
  }

  async deleteReserve(guaranteeId: string): Promise<void> {
    await this.db.query("DELETE FROM reserves WHERE guarantee_id = $1", [guaranteeId.toLowerCase()]);
  }

  async listReserves(user: string, asset?: string): Promise<ActiveReserve[]> {
    if (asset !== undefined) return this.listReservesOfChecksummed(address(user), address(asset));
    const { rows } = await this.db.query(
      `${ACTIVE} WHERE r.user_address = $1 ORDER BY r.block_number, r.guarantee_id`,
      [address(user)],
    );
    return rows.map(activeFromRow);
  }

  async listReleasableReserves(nowSeconds: number, limit: number): Promise<ActiveReserve[]> {
    // Mirrors Vault.releaseReserve: consumed (netted or remunerated, as Core's books say) or, V2 only, expired.
    const { rows } = await this.db.query(
      `${ACTIVE} WHERE (NOT r.v1 AND r.expires_at <= $1) OR g.state = ANY($2::text[]) ORDER BY r.block_number, r.guarantee_id LIMIT $3`,
      [nowSeconds, [...CONSUMED_STATES], limit],
    );
    return rows.map(activeFromRow);
  }

  async listV1ReserveIds(): Promise<string[]> {
    const { rows } = await this.db.query(
      "SELECT guarantee_id FROM reserves WHERE v1 ORDER BY block_number, guarantee_id",
    );
    return rows.map((row) => row.guarantee_id as string);
  }

  /** The active reserves of already checksummed pairs, in one statement, by `user\nasset`. */
  async listReservesOfPairs(
    pairs: readonly { user: string; asset: string }[],
  ): Promise<Map<string, ActiveReserve[]>> {
    const { rows } = await this.db.query(
      `${ACTIVE} JOIN unnest($1::text[], $2::text[]) AS t(u, a) ON r.user_address = t.u AND r.asset_address = t.a
       ORDER BY r.block_number, r.guarantee_id`,
      [pairs.map((p) => p.user), pairs.map((p) => p.asset)],
    );
    const out = new Map<string, ActiveReserve[]>();
    for (const row of rows) {
      const key = `${row.user_address as string}\n${row.asset_address as string}`;
      out.set(key, [...(out.get(key) ?? []), activeFromRow(row)]);
    }
    return out;
  }

  /** As {@link listReserves} for addresses already checksummed (the check-and-lock's balance). */
  async listReservesOfChecksummed(user: string, asset: string): Promise<ActiveReserve[]> {
    const { rows } = await this.db.query(
      `${ACTIVE} WHERE r.user_address = $1 AND r.asset_address = $2 ORDER BY r.block_number, r.guarantee_id`,
      [user, asset],
    );
    return rows.map(activeFromRow);
  }
}

function activeFromRow(row: Row): ActiveReserve {
  return {
    ...reserveFromRow(row),
    guarantee:
      row.g_state === null || row.g_state === undefined
        ? null
        : {
            state: row.g_state as GuaranteeState,
            user: row.g_user as string,
            asset: row.g_asset as string,
            amount: BigInt(row.g_amount as string),
          },
  };
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
    ...(row.v1 === true ? { v1: true } : {}),
  };
}
