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
import {
  BODY_400_CODES,
  COMMON_ERRORS,
  errorAnswer,
  jsonAnswer,
  jsonBody,
  mount,
  operation,
  ref,
} from "./operations";

const REFRESH_TOKEN_400 = errorAnswer("`refresh_token` missing or not a string.", [
  "invalid_request",
  ...BODY_400_CODES,
]);

/** The `/auth/*` operations: mounted below, described in Core's OpenAPI document. */
export const AUTH_OPERATIONS = {
  nonce: operation("post", "/auth/nonce", {
    tags: ["auth"],
    summary: "A single-use SIWE nonce and the EIP-4361 template to sign",
    requestBody: jsonBody(ref("NonceRequest")),
    responses: {
      "200": jsonAnswer("Nonce and template.", ref("NonceResponse")),
      "400": errorAnswer("`address` missing or not an address; malformed JSON.", [
        "invalid_request",
        ...BODY_400_CODES,
      ]),
      ...COMMON_ERRORS,
    },
  }),
  verify: operation("post", "/auth/verify", {
    tags: ["auth"],
    summary: "Sign in: verify the signed SIWE message and issue tokens",
    requestBody: jsonBody(ref("SignInRequest")),
    responses: {
      "200": jsonAnswer("Access and refresh tokens.", ref("TokenResponse")),
      "400": errorAnswer("Malformed body.", ["invalid_request", ...BODY_400_CODES]),
      "401": errorAnswer("Message, signature or nonce refused.", [
        "invalid_siwe_message",
        "siwe_address_mismatch",
        "siwe_domain_mismatch",
        "siwe_uri_mismatch",
        "siwe_chain_id_mismatch",
        "siwe_statement_mismatch",
        "siwe_not_yet_valid",
        "siwe_message_expired",
        "invalid_signature",
        "nonce_unknown",
        "nonce_used",
        "nonce_expired",
        "nonce_address_mismatch",
      ]),
      ...COMMON_ERRORS,
    },
  }),
  refresh: operation("post", "/auth/refresh", {
    tags: ["auth"],
    summary: "Rotate a refresh token into a new token pair",
    requestBody: jsonBody(ref("RefreshTokenRequest")),
    responses: {
      "200": jsonAnswer("A new token pair; the presented refresh token stops working.", ref("TokenResponse")),
      "400": REFRESH_TOKEN_400,
      "401": errorAnswer("Refresh token refused (a reused one revokes its whole session).", [
        "invalid_refresh_token",
        "refresh_token_reused",
        "refresh_token_revoked",
        "refresh_token_expired",
      ]),
      ...COMMON_ERRORS,
    },
  }),
  logout: operation("post", "/auth/logout", {
    tags: ["auth"],
    summary: "Revoke the refresh token's session (idempotent)",
    requestBody: jsonBody(ref("RefreshTokenRequest")),
    responses: {
      "204": { description: "Revoked (also for unknown or already revoked tokens)." },
      "400": REFRESH_TOKEN_400,
      ...COMMON_ERRORS,
    },
  }),
};

/** Every `/auth/*` body is a JSON object. */
const jsonObject = wholeBody((value) => parseObject(value, "body"));

export function authRouter(auth: AuthService): Router {
  const router = Router();

  mount(
    router,
    AUTH_OPERATIONS.nonce,
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
  mount(router, AUTH_OPERATIONS.verify, ...signIn, async (req, res) => {
    const { address, message, signature } = validated<{
      address: string;
      message: string;
      signature: string;
    }>(req);
    res.json((await auth.signIn({ address, message, signature })) satisfies TokenResponse);
  });

  const refreshToken = validate(jsonObject, bodyField("refresh_token", parseRefreshToken));

  mount(router, AUTH_OPERATIONS.refresh, ...refreshToken, async (req, res) => {
    const { refresh_token } = validated<{ refresh_token: string }>(req);
    res.json((await auth.refresh(refresh_token)) satisfies TokenResponse);
  });

  mount(router, AUTH_OPERATIONS.logout, ...refreshToken, async (req, res) => {
    const { refresh_token } = validated<{ refresh_token: string }>(req);
    await auth.logout(refresh_token);
    res.status(204).end();
  });

  return router;
}
