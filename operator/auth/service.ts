/**
 * The sign-in flow (docs/operator-auth.md): nonce → SIWE verify → token pair;
 * refresh with rotation and reuse detection; logout. HTTP-agnostic: refusals are
 * {@link AuthError}s (401 at the HTTP edge, api/errors.ts).
 */
import { randomBytes } from "node:crypto";
import type { Clock } from "../clock";
import type { OperatorConfig } from "../config";
import type { NonceConsumption, StoreAreas } from "../store";
import { AccessTokens } from "./access-token";
import { AUTH_ERRORS, AuthError, type AuthErrorCode } from "./errors";
import { DEFAULT_SCOPES } from "./authority";
import { hashRefreshToken, looksLikeRefreshToken, newFamilyId, newRefreshToken } from "./refresh-token";
import { type SiweSignIn, type SiweTemplate, siweTemplate, verifySiweSignIn } from "./siwe";

/** 128-bit nonces, hex: EIP-4361 wants ≥ 8 alphanumeric characters. */
const NONCE_BYTES = 16;

export interface NonceResponse {
  nonce: string;
  siwe: SiweTemplate;
}

export interface TokenResponse {
  access_token: string;
  refresh_token: string;
  /** Access token lifetime in seconds. */
  expires_in: number;
}

export interface AuthServiceDeps {
  config: OperatorConfig;
  store: StoreAreas<"authSessions">;
  clock: Clock;
  accessTokens: AccessTokens;
}

const NONCE_ERRORS: Record<Exclude<NonceConsumption, "consumed">, [code: AuthErrorCode, message: string]> = {
  unknown: [AUTH_ERRORS.nonceUnknown, "nonce was not issued by this server"],
  used: [AUTH_ERRORS.nonceUsed, "nonce has already been used"],
  expired: [AUTH_ERRORS.nonceExpired, "nonce has expired"],
  address_mismatch: [AUTH_ERRORS.nonceAddressMismatch, "nonce was issued to a different address"],
};

type RefreshOutcome =
  | { kind: "rotated"; wallet: string; scopes: readonly string[] }
  | { kind: "unknown" | "revoked" | "reused" | "expired" };

const REFRESH_ERRORS: Record<
  Exclude<RefreshOutcome["kind"], "rotated">,
  [code: AuthErrorCode, message: string]
> = {
  unknown: [AUTH_ERRORS.invalidRefreshToken, "refresh token is not valid"],
  revoked: [AUTH_ERRORS.refreshTokenRevoked, "refresh token has been revoked"],
  reused: [AUTH_ERRORS.refreshTokenReused, "refresh token was already used; the session has been revoked"],
  expired: [AUTH_ERRORS.refreshTokenExpired, "refresh token has expired"],
};

function rejectWith([code, message]: [AuthErrorCode, string]): AuthError {
  return new AuthError(code, message);
}

export class AuthService {
  constructor(private readonly deps: AuthServiceDeps) {}

  /** `POST /auth/nonce`: a single-use nonce bound to `address`. */
  async createNonce(address: string): Promise<NonceResponse> {
    const { config, store, clock } = this.deps;
    const now = clock.nowSeconds();
    const nonce = randomBytes(NONCE_BYTES).toString("hex");
    await store.authSessions.deleteExpiredNonces(now);
    await store.authSessions.insertNonce({
      nonce,
      address,
      issuedAt: now,
      expiresAt: now + config.nonceLifetimeSeconds,
    });
    return { nonce, siwe: siweTemplate(config, now) };
  }

  /** `POST /auth/verify`: checks the signed SIWE message, spends its nonce, issues a token pair. */
  async signIn(input: SiweSignIn): Promise<TokenResponse> {
    const { config, store, clock, accessTokens } = this.deps;
    const message = await verifySiweSignIn(config, clock, input);
    const now = clock.nowSeconds();
    const access = await accessTokens.issue(input.address, DEFAULT_SCOPES);
    const refreshToken = newRefreshToken();
    // Spending the nonce and storing the session commit together or not at all.
    const outcome = await store.transaction(async (tx) => {
      const consumed = await tx.authSessions.consumeNonce(message.nonce, input.address, now);
      if (consumed !== "consumed") return consumed;
      await tx.authSessions.insertRefreshToken({
        tokenHash: hashRefreshToken(refreshToken),
        familyId: newFamilyId(),
        wallet: input.address,
        scopes: DEFAULT_SCOPES,
        issuedAt: now,
        expiresAt: now + config.refreshTokenLifetimeSeconds,
        rotatedFrom: null,
        rotatedAt: null,
        revokedAt: null,
      });
      return consumed;
    });
    if (outcome !== "consumed") throw rejectWith(NONCE_ERRORS[outcome]);
    return { access_token: access.token, refresh_token: refreshToken, expires_in: access.expiresIn };
  }

  /**
   * `POST /auth/refresh`: exchanges a current refresh token for a new pair.
   * Presenting a token that was already exchanged means two parties hold it
   * (a theft or a leak), so the whole family is revoked (RFC 9700 §4.14.2).
   */
  async refresh(refreshToken: string): Promise<TokenResponse> {
    const { config, store, clock, accessTokens } = this.deps;
    if (!looksLikeRefreshToken(refreshToken)) throw rejectWith(REFRESH_ERRORS.unknown);
    const now = clock.nowSeconds();
    const presented = hashRefreshToken(refreshToken);
    const successor = newRefreshToken();
    // The transaction commits in every outcome: a detected reuse must stay revoked.
    const outcome = await store.transaction(async (tx): Promise<RefreshOutcome> => {
      const record = await tx.authSessions.getRefreshToken(presented);
      if (!record) return { kind: "unknown" };
      if (record.revokedAt !== null) return { kind: "revoked" };
      if (record.rotatedAt === null && record.expiresAt <= now) return { kind: "expired" };
      // The conditional update is the single-use guard, should another writer have rotated it meanwhile.
      if (record.rotatedAt !== null || !(await tx.authSessions.markRefreshTokenRotated(presented, now))) {
        await tx.authSessions.revokeRefreshTokenFamily(record.familyId, now);
        return { kind: "reused" };
      }
      await tx.authSessions.insertRefreshToken({
        tokenHash: hashRefreshToken(successor),
        familyId: record.familyId,
        wallet: record.wallet,
        scopes: record.scopes,
        issuedAt: now,
        expiresAt: now + config.refreshTokenLifetimeSeconds,
        rotatedFrom: presented,
        rotatedAt: null,
        revokedAt: null,
      });
      return { kind: "rotated", wallet: record.wallet, scopes: record.scopes };
    });
    if (outcome.kind !== "rotated") throw rejectWith(REFRESH_ERRORS[outcome.kind]);
    const access = await accessTokens.issue(outcome.wallet, outcome.scopes);
    return { access_token: access.token, refresh_token: successor, expires_in: access.expiresIn };
  }

  /**
   * `POST /auth/logout`: revokes the session (the token's whole family).
   * Idempotent and silent about unknown tokens. Access tokens already issued
   * stay valid until they expire (at most `accessTokenLifetimeSeconds`).
   */
  async logout(refreshToken: string): Promise<void> {
    const { store, clock } = this.deps;
    if (!looksLikeRefreshToken(refreshToken)) return;
    const presented = hashRefreshToken(refreshToken);
    await store.transaction(async (tx) => {
      const record = await tx.authSessions.getRefreshToken(presented);
      if (record) await tx.authSessions.revokeRefreshTokenFamily(record.familyId, clock.nowSeconds());
    });
  }
}
