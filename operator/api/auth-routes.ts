/**
 * `/auth/*` endpoints. Status codes: 200 with a JSON body, 204 for logout,
 * 400 `{error, code}` for malformed bodies (the message names the field),
 * 401 for invalid credentials (docs/operator-auth.md).
 */
import { Router } from "express";
import type { AuthService } from "../auth";
import { parseNonceRequest, parseRefreshTokenRequest, parseVerifyRequest } from "../auth/requests";

export function authRouter(auth: AuthService): Router {
  const router = Router();

  router.post("/auth/nonce", async (req, res) => {
    const { address } = parseNonceRequest(req.body);
    res.json(await auth.createNonce(address));
  });

  router.post("/auth/verify", async (req, res) => {
    res.json(await auth.signIn(parseVerifyRequest(req.body)));
  });

  router.post("/auth/refresh", async (req, res) => {
    const { refreshToken } = parseRefreshTokenRequest(req.body);
    res.json(await auth.refresh(refreshToken));
  });

  router.post("/auth/logout", async (req, res) => {
    const { refreshToken } = parseRefreshTokenRequest(req.body);
    await auth.logout(refreshToken);
    res.status(204).end();
  });

  return router;
}
