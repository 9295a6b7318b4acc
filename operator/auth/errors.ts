/**
 * Refusals of authentication (docs/operator-auth.md): bearer tokens, SIWE sign-in, refresh tokens. Every one
 * is a 401 at the HTTP edge (`api/errors.ts`); a bearer-token refusal also carries the RFC 6750 challenge.
 */
import { DomainError } from "../errors";

export const AUTH_ERRORS = {
  missingToken: "missing_token",
  invalidToken: "invalid_token",
  tokenExpired: "token_expired",
  invalidSiweMessage: "invalid_siwe_message",
  siweAddressMismatch: "siwe_address_mismatch",
  siweDomainMismatch: "siwe_domain_mismatch",
  siweUriMismatch: "siwe_uri_mismatch",
  siweChainIdMismatch: "siwe_chain_id_mismatch",
  siweStatementMismatch: "siwe_statement_mismatch",
  siweNotYetValid: "siwe_not_yet_valid",
  siweMessageExpired: "siwe_message_expired",
  invalidSignature: "invalid_signature",
  nonceUnknown: "nonce_unknown",
  nonceUsed: "nonce_used",
  nonceExpired: "nonce_expired",
  nonceAddressMismatch: "nonce_address_mismatch",
  invalidRefreshToken: "invalid_refresh_token",
  refreshTokenRevoked: "refresh_token_revoked",
  refreshTokenReused: "refresh_token_reused",
  refreshTokenExpired: "refresh_token_expired",
} as const;

export type AuthErrorCode = (typeof AUTH_ERRORS)[keyof typeof AUTH_ERRORS];

/** The bearer-token refusals: the HTTP edge answers them with a `WWW-Authenticate: Bearer` challenge. */
export const BEARER_TOKEN_ERRORS: readonly AuthErrorCode[] = [
  AUTH_ERRORS.missingToken,
  AUTH_ERRORS.invalidToken,
  AUTH_ERRORS.tokenExpired,
];

export class AuthError extends DomainError<AuthErrorCode> {
  override readonly name = "AuthError";
}
