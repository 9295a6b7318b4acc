/**
 * Refresh tokens are opaque: 32 random bytes, base64url. Only their sha256
 * is stored, so a database leak does not hand out live sessions.
 */
import { createHash, randomBytes } from "node:crypto";

export const REFRESH_TOKEN_BYTES = 32;
/** base64url of 32 bytes, no padding. */
const REFRESH_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newRefreshToken(): string {
  return randomBytes(REFRESH_TOKEN_BYTES).toString("base64url");
}

export function hashRefreshToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Shape check only: whether the token is live is up to the store. */
export function looksLikeRefreshToken(token: string): boolean {
  return REFRESH_TOKEN_PATTERN.test(token);
}

/** Identifier shared by all tokens descending from one sign-in. */
export function newFamilyId(): string {
  return randomBytes(16).toString("hex");
}
