/** {@link AuthSessionRepository} on PostgreSQL (schema: PG migration 1). */
import type {
  AuthSessionRepository,
  NonceConsumption,
  RefreshTokenRecord,
  SiweNonceRecord,
} from "../repositories";
import { address } from "../sqlite/common";
import type { PgConn, Row } from "./common";

export class PgAuthSessions implements AuthSessionRepository {
  constructor(private readonly db: PgConn) {}

  async insertNonce(record: SiweNonceRecord): Promise<void> {
    await this.db.query(
      "INSERT INTO siwe_nonces (nonce, address, issued_at, expires_at) VALUES ($1, $2, $3, $4)",
      [record.nonce, address(record.address), record.issuedAt, record.expiresAt],
    );
  }

  async consumeNonce(nonce: string, wallet: string, now: number): Promise<NonceConsumption> {
    // FOR UPDATE: two replicas consuming the same nonce queue here; the second then sees it used.
    const { rows } = await this.db.query(
      "SELECT address, expires_at, used_at FROM siwe_nonces WHERE nonce = $1 FOR UPDATE",
      [nonce],
    );
    const row = rows[0];
    if (!row) return "unknown";
    if (row.used_at !== null) return "used";
    if ((row.expires_at as number) <= now) return "expired";
    if (row.address !== address(wallet)) return "address_mismatch";
    const spent = await this.db.query(
      "UPDATE siwe_nonces SET used_at = $1 WHERE nonce = $2 AND used_at IS NULL",
      [now, nonce],
    );
    return spent.rowCount === 1 ? "consumed" : "used";
  }

  async deleteExpiredNonces(now: number): Promise<number> {
    return (await this.db.query("DELETE FROM siwe_nonces WHERE expires_at < $1", [now])).rowCount;
  }

  async insertRefreshToken(record: RefreshTokenRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO refresh_tokens
         (token_hash, family_id, wallet, scopes, issued_at, expires_at, rotated_from, rotated_at, revoked_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        record.tokenHash,
        record.familyId,
        address(record.wallet),
        JSON.stringify(record.scopes),
        record.issuedAt,
        record.expiresAt,
        record.rotatedFrom,
        record.rotatedAt,
        record.revokedAt,
      ],
    );
  }

  async getRefreshToken(tokenHash: string): Promise<RefreshTokenRecord | null> {
    const { rows } = await this.db.query<Row>("SELECT * FROM refresh_tokens WHERE token_hash = $1", [
      tokenHash,
    ]);
    const row = rows[0];
    if (!row) return null;
    return {
      tokenHash: row.token_hash as string,
      familyId: row.family_id as string,
      wallet: row.wallet as string,
      scopes: JSON.parse(row.scopes as string) as string[],
      issuedAt: row.issued_at as number,
      expiresAt: row.expires_at as number,
      rotatedFrom: (row.rotated_from as string | null) ?? null,
      rotatedAt: (row.rotated_at as number | null) ?? null,
      revokedAt: (row.revoked_at as number | null) ?? null,
    };
  }

  async markRefreshTokenRotated(tokenHash: string, now: number): Promise<boolean> {
    const result = await this.db.query(
      "UPDATE refresh_tokens SET rotated_at = $1 WHERE token_hash = $2 AND rotated_at IS NULL AND revoked_at IS NULL",
      [now, tokenHash],
    );
    return result.rowCount === 1;
  }

  async revokeRefreshTokenFamily(familyId: string, now: number): Promise<number> {
    const result = await this.db.query(
      "UPDATE refresh_tokens SET revoked_at = $1 WHERE family_id = $2 AND revoked_at IS NULL",
      [now, familyId],
    );
    return result.rowCount;
  }
}
