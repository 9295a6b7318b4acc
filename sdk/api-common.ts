/**
 * Wire shapes of Core's HTTP API that every other shape is built of (docs/operator-api.md): addresses,
 * numbers as decimal strings, hashes, times, the error body. Each exported schema is one component of
 * Core's OpenAPI document, named as exported (`core-api.ts` collects them); each type is inferred from
 * its schema, so the routes, the console and the tests read the one definition. Pure: zod only.
 */
import { z } from "zod/v4";

/** Every error answer: `error` says what is wrong (names the field for bad input), `code` is stable. */
export const ApiError = z.object({
  error: z.string(),
  code: z.string(),
});
export type ApiError = z.infer<typeof ApiError>;

export const InternalError = z.object({
  error: z.literal("internal error"),
  code: z.literal("internal_error"),
});
export type InternalError = z.infer<typeof InternalError>;

export const StoreUnavailable = z.object({
  error: z.literal("the database is unavailable"),
  code: z.literal("store_unavailable"),
});
export type StoreUnavailable = z.infer<typeof StoreUnavailable>;

export const Address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/)
  .describe("Any case in; EIP-55 out.");
export type Address = z.infer<typeof Address>;

export const Uint = z
  .string()
  .regex(/^(0|[1-9][0-9]*)$/)
  .describe("Unsigned integer < 2^256, decimal.");
export type Uint = z.infer<typeof Uint>;

export const UintInput = z
  .string()
  .regex(/^([0-9]+|0x[0-9a-fA-F]+)$/)
  .describe("Unsigned integer < 2^256, decimal or 0x hex.");
export type UintInput = z.infer<typeof UintInput>;

export const Bytes32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
export type Bytes32 = z.infer<typeof Bytes32>;

export const HexBytes = z.string().regex(/^0x([0-9a-fA-F]{2})+$/);
export type HexBytes = z.infer<typeof HexBytes>;

export const PayerSignature = z
  .string()
  .regex(/^0x([0-9a-fA-F]{2}){1,2048}$/)
  .describe(
    "1 to 2048 bytes on the wire; only 65 bytes r‖s‖v verify: the payer's own signature, or for a contract wallet the EOA key it registered in the Vault (setGuaranteeSigner).",
  );
export type PayerSignature = z.infer<typeof PayerSignature>;

export const UnixSeconds = z.int().min(0);
export type UnixSeconds = z.infer<typeof UnixSeconds>;

/** ISO 8601, as `Date.prototype.toISOString` writes it (any offset accepted). */
export const DateTime = z.iso.datetime({ offset: true });
export type DateTime = z.infer<typeof DateTime>;
