/**
 * The fields of the `/auth/*` request bodies: each parsed or refused with a WireError naming the field
 * (→ 400). api/auth-routes.ts checks the bodies with them (express-validator, api/validation.ts).
 */
import { WireError } from "../../sdk/errors";
import { parseHexBytes, parseString } from "../../sdk/wire";

/** A SIWE message is a few hundred bytes; anything this large is not one. */
export const MAX_SIWE_MESSAGE_BYTES = 4096;
/** Refresh tokens are 43 characters; allow some slack before calling the value malformed. */
const MAX_REFRESH_TOKEN_BYTES = 256;
/** EOA signatures: 65-byte r ‖ s ‖ v, or the 64-byte EIP-2098 compact form. */
const SIGNATURE_LENGTHS = [64, 65];

/** `message` of `POST /auth/verify`: a non-empty string of at most {@link MAX_SIWE_MESSAGE_BYTES}. */
export function parseSiweMessage(value: unknown, field: string): string {
  const message = parseString(value, field, MAX_SIWE_MESSAGE_BYTES);
  if (message.length === 0) throw new WireError(field, "must not be empty");
  return message;
}

/** `signature` of `POST /auth/verify`: 65 bytes, or 64 in the EIP-2098 compact form. */
export function parseSiweSignature(value: unknown, field: string): string {
  const signature = parseHexBytes(value, field);
  const length = (signature.length - 2) / 2;
  if (!SIGNATURE_LENGTHS.includes(length)) {
    throw new WireError(field, `must be a 65-byte (or 64-byte compact) signature, got ${length} bytes`);
  }
  return signature;
}

/** `refresh_token` of `POST /auth/refresh` and `/auth/logout`: a non-empty string, not too long. */
export function parseRefreshToken(value: unknown, field: string): string {
  const refreshToken = parseString(value, field, MAX_REFRESH_TOKEN_BYTES);
  if (refreshToken.length === 0) throw new WireError(field, "must not be empty");
  return refreshToken;
}
