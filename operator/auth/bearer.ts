/**
 * The caller of a request from its `Authorization` header (`Bearer <jwt>`, RFC 6750). Missing, malformed,
 * invalid or expired tokens are refused with an {@link AuthError}; the HTTP edge answers 401 with a
 * `WWW-Authenticate: Bearer` challenge (api/errors.ts).
 */
import type { AccessTokens } from "./access-token";
import type { Principal } from "./authority";
import { AUTH_ERRORS, AuthError } from "./errors";

/** RFC 6750 b64token after "Bearer ". */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * The caller of a request with this `Authorization` header: throws an {@link AuthError} when the header is
 * missing, malformed, or carries an invalid or expired token.
 */
export async function authenticate(
  accessTokens: AccessTokens,
  header: string | undefined,
): Promise<Principal> {
  if (header === undefined || header.trim() === "") {
    throw new AuthError(AUTH_ERRORS.missingToken, "Authorization: Bearer <access token> header is required");
  }
  const match = BEARER.exec(header);
  if (!match) {
    throw new AuthError(AUTH_ERRORS.invalidToken, "Authorization header must be 'Bearer <access token>'");
  }
  try {
    return await accessTokens.verify(match[1]);
  } catch (error) {
    const expired = (error as { reason?: string }).reason === "expired";
    throw expired
      ? new AuthError(AUTH_ERRORS.tokenExpired, "access token has expired")
      : new AuthError(AUTH_ERRORS.invalidToken, "access token is invalid");
  }
}
