/** {@link AuthSessionRepository} on a better-sqlite3 connection (schema: migration 1). */
import type { Database, Statement } from "better-sqlite3";
import { type Atomic, atomicRunner } from "../sqlite-atomic";
import {
  type AuthSessionRepository,
  type NonceConsumption,
  type RefreshTokenRecord,
  type SiweNonceRecord,
} from "../repositories";
import { address, type SyncOf } from "./common";

interface NonceRow {
  address: string;
  expires_at: number;
  used_at: number | null;
}

interface RefreshRow {
  token_hash: string;
  family_id: string;
  wallet: string;
  scopes: string;
  issued_at: number;
  expires_at: number;
  rotated_from: string | null;
  rotated_at: number | null;
  revoked_at: number | null;
}

export class SqliteAuthSessions implements SyncOf<AuthSessionRepository> {
  private readonly stmt: ReturnType<typeof prepare>;
  private readonly atomic: Atomic;

  constructor(db: Database) {
    this.stmt = prepare(db);
    this.atomic = atomicRunner(db);
  }

  insertNonce(record: SiweNonceRecord): void {
    this.stmt.insertNonce.run(record.nonce, address(record.address), record.issuedAt, record.expiresAt);
  }

  consumeNonce(nonce: string, wallet: string, now: number): NonceConsumption {
    return this.atomic((): NonceConsumption => {
      const row = this.stmt.getNonce.get(nonce) as NonceRow | undefined;
      if (!row) return "unknown";
      if (row.used_at !== null) return "used";
      if (row.expires_at <= now) return "expired";
      if (row.address !== address(wallet)) return "address_mismatch";
      // The `used_at IS NULL` guard makes the spend single-use even across processes.
      const spent = this.stmt.useNonce.run(now, nonce);
      return spent.changes === 1 ? "consumed" : "used";
    });
  }

  deleteExpiredNonces(now: number): number {
    return this.stmt.deleteExpiredNonces.run(now).changes;
  }

  insertRefreshToken(record: RefreshTokenRecord): void {
    this.stmt.insertRefreshToken.run(
      record.tokenHash,
      record.familyId,
      address(record.wallet),
      JSON.stringify(record.scopes),
      record.issuedAt,
      record.expiresAt,
      record.rotatedFrom,
      record.rotatedAt,
      record.revokedAt,
    );
  }

  getRefreshToken(tokenHash: string): RefreshTokenRecord | null {
    const row = this.stmt.getRefreshToken.get(tokenHash) as RefreshRow | undefined;
    if (!row) return null;
    return {
      tokenHash: row.token_hash,
      familyId: row.family_id,
      wallet: row.wallet,
      scopes: JSON.parse(row.scopes) as string[],
      issuedAt: row.issued_at,
      expiresAt: row.expires_at,
      rotatedFrom: row.rotated_from,
      rotatedAt: row.rotated_at,
      revokedAt: row.revoked_at,
    };
  }

  markRefreshTokenRotated(tokenHash: string, now: number): boolean {
    return this.stmt.rotateRefreshToken.run(now, tokenHash).changes === 1;
  }

  revokeRefreshTokenFamily(familyId: string, now: number): number {
    return this.stmt.revokeFamily.run(now, familyId).changes;
  }
}

function prepare(db: Database) {
  const p = (sql: string): Statement => db.prepare(sql);
  return {
    deleteExpiredNonces: p("DELETE FROM siwe_nonces WHERE expires_at < ?"),
    getNonce: p("SELECT address, expires_at, used_at FROM siwe_nonces WHERE nonce = ?"),
    getRefreshToken: p("SELECT * FROM refresh_tokens WHERE token_hash = ?"),
    insertNonce: p("INSERT INTO siwe_nonces (nonce, address, issued_at, expires_at) VALUES (?, ?, ?, ?)"),
    insertRefreshToken: p(
      `INSERT INTO refresh_tokens
         (token_hash, family_id, wallet, scopes, issued_at, expires_at, rotated_from, rotated_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    revokeFamily: p("UPDATE refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL"),
    rotateRefreshToken: p(
      "UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL AND revoked_at IS NULL",
    ),
    useNonce: p("UPDATE siwe_nonces SET used_at = ? WHERE nonce = ? AND used_at IS NULL"),
  };
}
