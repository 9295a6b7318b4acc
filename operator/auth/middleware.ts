/**
 * `requireAccessToken`: guards a route with `Authorization: Bearer <jwt>`.
 * Missing, malformed, invalid or expired tokens answer 401 with a
 * `WWW-Authenticate: Bearer` challenge (RFC 6750 §3); a valid token puts the
 * caller's {@link Principal} on `req.principal`.
 */
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { unauthorized } from "../api/errors";
import type { AccessTokens } from "./access-token";
import type { Principal } from "./authority";

declare module "express-serve-static-core" {
  interface Request {
    /** Set by {@link requireAccessToken}. */
    principal?: Principal;
  }
}

export const AUTH_REALM = "surety";
/** RFC 6750 b64token after "Bearer ". */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

function challenge(error?: { code: string; description: string }): Record<string, string> {
  const params = [`realm="${AUTH_REALM}"`];
  if (error) params.push(`error="${error.code}"`, `error_description="${error.description}"`);
  return { "WWW-Authenticate": `Bearer ${params.join(", ")}` };
}

/**
 * The caller of a request with this `Authorization` header: throws the 401
 * (with its challenge) when the header is missing, malformed, or carries an
 * invalid or expired token.
 */
export async function authenticate(
  accessTokens: AccessTokens,
  header: string | undefined,
): Promise<Principal> {
  if (header === undefined || header.trim() === "") {
    throw unauthorized(
      "missing_token",
      "Authorization: Bearer <access token> header is required",
      challenge(),
    );
  }
  const match = BEARER.exec(header);
  if (!match) {
    const description = "Authorization header must be 'Bearer <access token>'";
    throw unauthorized("invalid_token", description, challenge({ code: "invalid_token", description }));
  }
  try {
    return await accessTokens.verify(match[1]);
  } catch (error) {
    const expired = (error as { reason?: string }).reason === "expired";
    const description = expired ? "access token has expired" : "access token is invalid";
    throw unauthorized(
      expired ? "token_expired" : "invalid_token",
      description,
      challenge({ code: "invalid_token", description }),
    );
  }
}

export function requireAccessToken(accessTokens: AccessTokens): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    req.principal = await authenticate(accessTokens, req.get("authorization"));
    next();
  };
}

/** The principal of a request behind {@link requireAccessToken}; a programming error otherwise. */
export function principalOf(req: Request): Principal {
  if (!req.principal) throw new Error("route is not behind requireAccessToken");
  return req.principal;
}
