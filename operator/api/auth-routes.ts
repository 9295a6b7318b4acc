/**
 * `/auth/*` endpoints. Status codes: 200 with a JSON body, 204 for logout,
 * 400 `{error, code}` for malformed bodies (checked with express-validator, api/validation.ts; the message
 * names the field), 401 for invalid credentials (docs/operator-auth.md).
 */
import type { NonceResponse, TokenResponse } from "../../sdk/api-public";
import { Router } from "express";
import { parseAddress, parseObject } from "../../sdk/wire";
import type { AuthService } from "../auth";
import { parseRefreshToken, parseSiweMessage, parseSiweSignature } from "../auth/requests";
import { bodyField, validate, validated, wholeBody } from "./validation";

/** Every `/auth/*` body is a JSON object. */
const jsonObject = wholeBody((value) => parseObject(value, "body"));

export function authRouter(auth: AuthService): Router {
  const router = Router();

  router.post(
    "/auth/nonce",
    ...validate(jsonObject, bodyField("address", parseAddress)),
    async (req, res) => {
      const { address } = validated<{ address: string }>(req);
      res.json((await auth.createNonce(address)) satisfies NonceResponse);
    },
  );

  const signIn = validate(
    jsonObject,
    bodyField("address", parseAddress),
    bodyField("message", parseSiweMessage),
    bodyField("signature", parseSiweSignature),
  );
  router.post("/auth/verify", ...signIn, async (req, res) => {
    const { address, message, signature } = validated<{
      address: string;
      message: string;
      signature: string;
    }>(req);
    res.json((await auth.signIn({ address, message, signature })) satisfies TokenResponse);
  });

  const refreshToken = validate(jsonObject, bodyField("refresh_token", parseRefreshToken));

  router.post("/auth/refresh", ...refreshToken, async (req, res) => {
    const { refresh_token } = validated<{ refresh_token: string }>(req);
    res.json((await auth.refresh(refresh_token)) satisfies TokenResponse);
  });

  router.post("/auth/logout", ...refreshToken, async (req, res) => {
    const { refresh_token } = validated<{ refresh_token: string }>(req);
    await auth.logout(refresh_token);
    res.status(204).end();
  });

  return router;
}
