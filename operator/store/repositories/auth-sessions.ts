/** Sign-in state (docs/operator-auth.md): single-use SIWE nonces and rotating refresh-token families. */

export interface SiweNonceRecord {
  nonce: string;
  /** The wallet the nonce was issued to; only that wallet may consume it. */
  address: string;
  issuedAt: number;
  expiresAt: number;
}

/** Outcome of {@link consumeNonce}; only `"consumed"` means the nonce is now spent. */
export type NonceConsumption = "consumed" | "unknown" | "used" | "expired" | "address_mismatch";

export interface RefreshTokenRecord {
  /** sha256 of the opaque token (hex); the token itself is never stored. */
  tokenHash: string;
  /** All tokens descending from one sign-in share a family; reuse of a rotated token revokes the family. */
  familyId: string;
  wallet: string;
  scopes: readonly string[];
  issuedAt: number;
  expiresAt: number;
  /** Hash of the token this one replaced (null for the token issued at sign-in). */
  rotatedFrom: string | null;
  /** When this token was exchanged for a successor (null while it is current). */
  rotatedAt: number | null;
  revokedAt: number | null;
}

export interface AuthSessionRepository {
  // --- SIWE nonces ---
  insertNonce(record: SiweNonceRecord): Promise<void>;
  /** Marks the nonce used iff it exists, is unused, unexpired at `now` and bound to `address`. */
  consumeNonce(nonce: string, address: string, now: number): Promise<NonceConsumption>;
  /** Deletes nonces that expired before `now` (used or not: an expired nonce is rejected anyway). */
  deleteExpiredNonces(now: number): Promise<number>;

  // --- refresh tokens ---
  insertRefreshToken(record: RefreshTokenRecord): Promise<void>;
  getRefreshToken(tokenHash: string): Promise<RefreshTokenRecord | null>;
  /** Sets `rotatedAt` iff the token is neither rotated nor revoked; false otherwise. */
  markRefreshTokenRotated(tokenHash: string, now: number): Promise<boolean>;
  /** Revokes every not-yet-revoked token of the family; returns how many were revoked. */
  revokeRefreshTokenFamily(familyId: string, now: number): Promise<number>;
}
