/** Request bodies of the `/auth/*` endpoints: parsed or a WireError naming the field (→ 400). */
import { WireError } from "../../sdk/errors";
import { parseAddress, parseHexBytes, parseObject, parseString } from "../../sdk/wire";
import type { SiweSignIn } from "./siwe";

/** A SIWE message is a few hundred bytes; anything this large is not one. */
export const MAX_SIWE_MESSAGE_BYTES = 4096;
/** Refresh tokens are 43 characters; allow some slack before calling the value malformed. */
const MAX_REFRESH_TOKEN_BYTES = 256;
/** EOA signatures: 65-byte r ‖ s ‖ v, or the 64-byte EIP-2098 compact form. */
const SIGNATURE_LENGTHS = [64, 65];

function body(value: unknown): Record<string, unknown> {
  return parseObject(value, "body");
}

export function parseNonceRequest(value: unknown): { address: string } {
  return { address: parseAddress(body(value).address, "address") };
}

export function parseVerifyRequest(value: unknown): SiweSignIn {
  const fields = body(value);
  const address = parseAddress(fields.address, "address");
  const message = parseString(fields.message, "message", MAX_SIWE_MESSAGE_BYTES);
  if (message.length === 0) throw new WireError("message", "must not be empty");
  const signature = parseHexBytes(fields.signature, "signature");
  const length = (signature.length - 2) / 2;
  if (!SIGNATURE_LENGTHS.includes(length)) {
    throw new WireError("signature", `must be a 65-byte (or 64-byte compact) signature, got ${length} bytes`);
  }
  return { address, message, signature };
}

export function parseRefreshTokenRequest(value: unknown): { refreshToken: string } {
  const refreshToken = parseString(body(value).refresh_token, "refresh_token", MAX_REFRESH_TOKEN_BYTES);
  if (refreshToken.length === 0) throw new WireError("refresh_token", "must not be empty");
  return { refreshToken };
}
