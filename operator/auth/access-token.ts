/**
 * Access tokens: HS256 JWTs, short-lived and stateless (docs/operator-auth.md, "Tokens").
 * Claims: `sub` (checksummed wallet), `scopes`, `iat`, `exp`, `iss`, `aud`,
 * `jti`. Verification uses the injected clock, not the wall clock.
 */
import { createSecretKey, type KeyObject, randomUUID } from "node:crypto";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { getAddress } from "ethers";
import type { Clock } from "../clock";
import type { OperatorConfig } from "../config";
import type { Principal } from "./authority";

const ALGORITHM = "HS256";
/**
 * Verified tokens kept so that a caller presenting the same token again (a
 * facilitator settles many payments with one session) skips the HMAC check.
 * Only tokens that passed full verification enter; each hit re-checks expiry
 * against the clock. Bounded: when full, the cache is cleared.
 */
export const VERIFIED_TOKEN_CACHE_SIZE = 10_000;

export type AccessTokenConfig = Pick<
  OperatorConfig,
  "jwtSecret" | "jwtIssuer" | "jwtAudience" | "accessTokenLifetimeSeconds"
>;

export interface IssuedAccessToken {
  token: string;
  /** Lifetime in seconds (the `expires_in` of the token response). */
  expiresIn: number;
}

/** Why a presented token was refused. */
export class AccessTokenError extends Error {
  override readonly name = "AccessTokenError";
  constructor(
    readonly reason: "expired" | "invalid",
    message: string,
  ) {
    super(message);
  }
}

export class AccessTokens {
  /** A KeyObject (not raw bytes): jose then imports the HMAC key once instead of on every call. */
  private readonly key: KeyObject;
  private readonly verified = new Map<string, Principal>();

  constructor(
    private readonly config: AccessTokenConfig,
    private readonly clock: Clock,
  ) {
    this.key = createSecretKey(Buffer.from(config.jwtSecret, "utf8"));
  }

  async issue(wallet: string, scopes: readonly string[]): Promise<IssuedAccessToken> {
    const now = this.clock.nowSeconds();
    const lifetime = this.config.accessTokenLifetimeSeconds;
    const token = await new SignJWT({ scopes: [...scopes] })
      .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
      .setSubject(getAddress(wallet))
      .setIssuer(this.config.jwtIssuer)
      .setAudience(this.config.jwtAudience)
      .setIssuedAt(now)
      .setExpirationTime(now + lifetime)
      .setJti(randomUUID())
      .sign(this.key);
    return { token, expiresIn: lifetime };
  }

  /** The token's principal; throws {@link AccessTokenError} for anything but a valid, current token. */
  async verify(token: string): Promise<Principal> {
    const cached = this.verified.get(token);
    if (cached !== undefined) {
      if (cached.expiresAt > this.clock.nowSeconds()) return cached;
      this.verified.delete(token);
    }
    const principal = await this.verifyFully(token);
    if (this.verified.size >= VERIFIED_TOKEN_CACHE_SIZE) this.verified.clear();
    this.verified.set(token, principal);
    return principal;
  }

  private async verifyFully(token: string): Promise<Principal> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.key, {
        algorithms: [ALGORITHM],
        issuer: this.config.jwtIssuer,
        audience: this.config.jwtAudience,
        currentDate: new Date(this.clock.nowSeconds() * 1000),
        requiredClaims: ["sub", "iat", "exp", "jti"],
      }));
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired)
        throw new AccessTokenError("expired", "access token has expired");
      throw new AccessTokenError("invalid", "access token is invalid");
    }
    const { sub, scopes, jti, exp } = payload;
    if (
      typeof sub !== "string" ||
      !isStringArray(scopes) ||
      typeof jti !== "string" ||
      typeof exp !== "number"
    ) {
      throw new AccessTokenError("invalid", "access token is invalid");
    }
    let wallet: string;
    try {
      wallet = getAddress(sub);
    } catch {
      throw new AccessTokenError("invalid", "access token is invalid");
    }
    return Object.freeze({ wallet, scopes: Object.freeze([...scopes]), tokenId: jti, expiresAt: exp });
  }
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}
