/** {@link AuthSessionRepository} for both engines (tables `siwe_nonces`, `refresh_tokens`; migration 1). */
import type {
  AuthSessionRepository,
  NonceConsumption,
  RefreshTokenRecord,
  SiweNonceRecord,
} from "../repositories";
import { address } from "../values";
import type { SqlEngine } from "./engine";
import type { RefreshTokensTable } from "./schema";

export class AuthSessions implements AuthSessionRepository {
  constructor(private readonly sql: SqlEngine) {}

  async insertNonce(record: SiweNonceRecord): Promise<void> {
    await this.sql.run(
      this.sql.db.insertInto("siwe_nonces").values({
        nonce: record.nonce,
        address: address(record.address),
        issued_at: record.issuedAt,
        expires_at: record.expiresAt,
      }),
    );
  }

  consumeNonce(nonce: string, wallet: string, now: number): Promise<NonceConsumption> {
    const { db } = this.sql;
    return this.sql.atomic(async (): Promise<NonceConsumption> => {
      // Two replicas consuming the same nonce queue on the row lock (SQLite: on the write lock).
      const row = await this.sql.first(
        db
          .selectFrom("siwe_nonces")
          .select(["address", "expires_at", "used_at"])
          .where("nonce", "=", nonce)
          .$if(this.sql.rowLocks, (query) => query.forUpdate()),
      );
      if (!row) return "unknown";
      if (row.used_at !== null) return "used";
      if (row.expires_at <= now) return "expired";
      if (row.address !== address(wallet)) return "address_mismatch";
      // The `used_at IS NULL` guard makes the spend single-use even across processes.
      const spent = await this.sql.run(
        db
          .updateTable("siwe_nonces")
          .set({ used_at: now })
          .where("nonce", "=", nonce)
          .where("used_at", "is", null),
      );
      return spent === 1 ? "consumed" : "used";
    });
  }

  deleteExpiredNonces(now: number): Promise<number> {
    return this.sql.run(this.sql.db.deleteFrom("siwe_nonces").where("expires_at", "<", now));
  }

  async insertRefreshToken(record: RefreshTokenRecord): Promise<void> {
    await this.sql.run(
      this.sql.db.insertInto("refresh_tokens").values({
        token_hash: record.tokenHash,
        family_id: record.familyId,
        wallet: address(record.wallet),
        scopes: JSON.stringify(record.scopes),
        issued_at: record.issuedAt,
        expires_at: record.expiresAt,
        rotated_from: record.rotatedFrom,
        rotated_at: record.rotatedAt,
        revoked_at: record.revokedAt,
      }),
    );
  }

  async getRefreshToken(tokenHash: string): Promise<RefreshTokenRecord | null> {
    const row = await this.sql.first(
      this.sql.db.selectFrom("refresh_tokens").selectAll().where("token_hash", "=", tokenHash),
    );
    return row ? refreshTokenFromRow(row) : null;
  }

  async markRefreshTokenRotated(tokenHash: string, now: number): Promise<boolean> {
    const changed = await this.sql.run(
      this.sql.db
        .updateTable("refresh_tokens")
        .set({ rotated_at: now })
        .where("token_hash", "=", tokenHash)
        .where("rotated_at", "is", null)
        .where("revoked_at", "is", null),
    );
    return changed === 1;
  }

  revokeRefreshTokenFamily(familyId: string, now: number): Promise<number> {
    return this.sql.run(
      this.sql.db
        .updateTable("refresh_tokens")
        .set({ revoked_at: now })
        .where("family_id", "=", familyId)
        .where("revoked_at", "is", null),
    );
  }
}

function refreshTokenFromRow(row: RefreshTokensTable): RefreshTokenRecord {
  return {
    tokenHash: row.token_hash,
    familyId: row.family_id,
    wallet: row.wallet,
    scopes: JSON.parse(row.scopes) as string[],
    issuedAt: row.issued_at,
    expiresAt: row.expires_at,
    rotatedFrom: row.rotated_from ?? null,
    rotatedAt: row.rotated_at ?? null,
    revokedAt: row.revoked_at ?? null,
  };
}
