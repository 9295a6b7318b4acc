/**
 * `requireAccessToken`: guards a route with `Authorization: Bearer <jwt>` (auth/bearer.ts). A refused token
 * answers 401 with a `WWW-Authenticate: Bearer` challenge (RFC 6750 §3, api/errors.ts); a valid token puts
 * the caller's {@link Principal} on `req.principal`.
 */
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { type AccessTokens, authenticate, type Principal } from "../auth";

declare module "express-serve-static-core" {
  interface Request {
    /** Set by {@link requireAccessToken}. */
    principal?: Principal;
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
