/**
 * {@link ReserveRepository} for both engines (table `reserves`, migrations 6 and 8). The indexer writes
 * them; the check-and-lock and issuance read them in their own transaction (collateral-rows.ts) with
 * {@link activeReserves} and {@link activeFromRow} below.
 */
import { CONSUMED_STATES, type GuaranteeState } from "../../guarantees/states";
import type { ActiveReserve, ReserveRecord, ReserveRepository } from "../repositories";
import { address } from "../values";
import type { Kysely } from "kysely";
import { isTrue, type SqlEngine } from "./engine";
import type { ReservesTable, Schema } from "./schema";

/** A `reserves` row joined with the guarantee it backs (the `g_*` columns are null without one). */
export interface ActiveReserveRow extends ReservesTable {
  g_state: string | null;
  g_user: string | null;
  g_asset: string | null;
  g_amount: string | null;
}

export class Reserves implements ReserveRepository {
  constructor(private readonly sql: SqlEngine) {}

  async putReserve(record: ReserveRecord): Promise<void> {
    const values = {
      user_address: address(record.user),
      asset_address: address(record.asset),
      recipient: address(record.recipient),
      amount: record.amount.toString(),
      expires_at: record.expiresAt,
      tx_hash: record.txHash.toLowerCase(),
      block_number: record.blockNumber,
      v1: this.sql.bool(record.v1 === true),
    };
    await this.sql.run(
      this.sql.db
        .insertInto("reserves")
        .values({ guarantee_id: record.guaranteeId.toLowerCase(), ...values })
        .onConflict((conflict) => conflict.column("guarantee_id").doUpdateSet(values)),
    );
  }

  async getReserve(guaranteeId: string): Promise<ReserveRecord | null> {
    const row = await this.sql.first(
      this.sql.db.selectFrom("reserves").selectAll().where("guarantee_id", "=", guaranteeId.toLowerCase()),
    );
    return row ? reserveFromRow(row) : null;
  }

  async deleteReserve(guaranteeId: string): Promise<void> {
    await this.sql.run(
      this.sql.db.deleteFrom("reserves").where("guarantee_id", "=", guaranteeId.toLowerCase()),
    );
  }

  async listReserves(user: string, asset?: string): Promise<ActiveReserve[]> {
    let query = activeReserves(this.sql.db).where("r.user_address", "=", address(user));
    if (asset !== undefined) query = query.where("r.asset_address", "=", address(asset));
    const rows = await this.sql.all(query.orderBy("r.block_number").orderBy("r.guarantee_id"));
    return rows.map(activeFromRow);
  }

  async listReleasableReserves(nowSeconds: number, limit: number): Promise<ActiveReserve[]> {
    // Mirrors Vault.releaseReserve: consumed (netted or remunerated, as Core's books say) or, V2 only, expired.
    const rows = await this.sql.all(
      activeReserves(this.sql.db)
        .where((eb) =>
          eb.or([
            eb.and([eb("r.v1", "=", this.sql.bool(false)), eb("r.expires_at", "<=", nowSeconds)]),
            eb("g.state", "in", CONSUMED_STATES),
          ]),
        )
        .orderBy("r.block_number")
        .orderBy("r.guarantee_id")
        .limit(limit),
    );
    return rows.map(activeFromRow);
  }

  async listV1ReserveIds(): Promise<string[]> {
    const rows = await this.sql.all(
      this.sql.db
        .selectFrom("reserves")
        .select("guarantee_id")
        .where("v1", "=", this.sql.bool(true))
        .orderBy("block_number")
        .orderBy("guarantee_id"),
    );
    return rows.map((row) => row.guarantee_id);
  }
}

/** Reserves joined with the guarantees they back ({@link ActiveReserveRow}; the check-and-lock's read too). */
export function activeReserves(db: Kysely<Schema>) {
  return db
    .selectFrom("reserves as r")
    .leftJoin("guarantees as g", "g.guarantee_id", "r.guarantee_id")
    .selectAll("r")
    .select([
      "g.state as g_state",
      "g.user_address as g_user",
      "g.asset_address as g_asset",
      "g.amount as g_amount",
    ]);
}

/** An {@link ActiveReserveRow} as the repository returns it (both engines, both readers). */
export function activeFromRow(row: ActiveReserveRow): ActiveReserve {
  return {
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
  };
}

function reserveFromRow(row: ReservesTable): ReserveRecord {
  return {
    guaranteeId: row.guarantee_id,
    user: row.user_address,
    asset: row.asset_address,
    recipient: row.recipient,
    amount: BigInt(row.amount),
    expiresAt: row.expires_at,
    txHash: row.tx_hash,
    blockNumber: row.block_number,
    ...(isTrue(row.v1) ? { v1: true } : {}),
  };
}
