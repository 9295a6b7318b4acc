/**
 * Parsing and normalising of wire values (docs/protocol.md, "Wire values"). Every parser
 * takes `unknown` (straight from JSON) and the field's dotted name, and throws
 * a {@link WireError} naming that field when the value is unusable.
 */
import { getAddress } from "ethers";
import { WireError } from "./errors";

export const MAX_UINT256 = (1n << 256n) - 1n;
export const MAX_UINT64 = (1n << 64n) - 1n;
export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

const DECIMAL = /^(0|[1-9][0-9]*)$/;
const HEX_QUANTITY = /^0[xX][0-9a-fA-F]+$/;
const ADDRESS = /^0[xX][0-9a-fA-F]{40}$/;
const BYTES32 = /^0[xX][0-9a-fA-F]{64}$/;
const HEX_BYTES = /^0[xX]([0-9a-fA-F]{2})*$/;
/** Longest accepted numeric string: 2^256 needs 78 decimal digits; "0x" + 64 hex digits is 66. */
const MAX_NUMERIC_STRING_LENGTH = 80;

export type GuaranteeVersion = 1 | 2;

/** Describes a JSON value's type for error messages ("null", "array", "number" …). */
export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/**
 * Most recently used checksummed addresses, keyed by lower-case address. A
 * checksum is a keccak of the address in JS (≈ 60 µs here) and the issuance
 * path checksums several per guarantee, mostly the same few payers,
 * recipients and assets. Bounded, least recently used out first, so a caller
 * sending ever new addresses costs memory once, not without limit.
 */
const CHECKSUM_CACHE_ENTRIES = 10_000;
const checksumCache = new Map<string, string>();

/** EIP-55 checksum of a well-formed lower-case address (0x + 40 hex digits), memoised. */
function checksumLowerCase(lower: string): string {
  let checksummed = checksumCache.get(lower);
  if (checksummed !== undefined) {
    // Re-insert: Map iteration order is insertion order, so the first key is the least recently used.
    checksumCache.delete(lower);
  } else {
    checksummed = getAddress(lower);
    if (checksumCache.size >= CHECKSUM_CACHE_ENTRIES) {
      checksumCache.delete(checksumCache.keys().next().value as string);
    }
  }
  checksumCache.set(lower, checksummed);
  return checksummed;
}

/** An EVM address in any letter case → its EIP-55 checksummed form. */
export function parseAddress(value: unknown, field: string): string {
  if (typeof value !== "string")
    throw new WireError(field, `must be an address string, got ${describeType(value)}`);
  if (!ADDRESS.test(value)) throw new WireError(field, "must be a 0x-prefixed 20-byte hex address");
  // Any case is accepted (docs/protocol.md, "Wire values"): lower-casing first skips ethers' checksum test on mixed case.
  return checksumLowerCase("0x" + value.slice(2).toLowerCase());
}

/** How many checksummed addresses {@link parseAddress} keeps (for tests of the bound). */
export function addressChecksumCacheSize(): number {
  return checksumCache.size;
}

/** The bound of {@link parseAddress}'s checksum cache. */
export const ADDRESS_CHECKSUM_CACHE_ENTRIES = CHECKSUM_CACHE_ENTRIES;

export interface Uint256Options {
  /** Zero is rejected unless this is set (amounts must be positive). */
  allowZero?: boolean;
  /** Inclusive upper bound; defaults to 2^256 − 1. */
  max?: bigint;
}

/** An unsigned integer as a decimal string or a 0x hex string. Numbers are refused (precision). */
export function parseUint256(value: unknown, field: string, options: Uint256Options = {}): bigint {
  if (typeof value !== "string") {
    throw new WireError(field, `must be a decimal or 0x-hex string, got ${describeType(value)}`);
  }
  if (value.length === 0) throw new WireError(field, "must not be empty");
  if (value.length > MAX_NUMERIC_STRING_LENGTH) throw new WireError(field, "is too long for a uint256");
  if (!DECIMAL.test(value) && !HEX_QUANTITY.test(value)) {
    throw new WireError(field, "must be an unsigned decimal integer or a 0x-prefixed hex string");
  }
  const parsed = BigInt(value);
  const max = options.max ?? MAX_UINT256;
  if (parsed > max) throw new WireError(field, `must be at most ${max}`);
  if (parsed === 0n && !options.allowZero) throw new WireError(field, "must be greater than zero");
  return parsed;
}

/** A non-negative integer JSON number up to `max` (safe-integer range), e.g. unix seconds. */
export function parseSafeInteger(value: unknown, field: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== "number") throw new WireError(field, `must be a number, got ${describeType(value)}`);
  if (!Number.isSafeInteger(value) || value < 0) throw new WireError(field, "must be a non-negative integer");
  if (value > max) throw new WireError(field, `must be at most ${max}`);
  return value;
}

/** Unix seconds (uint64 on chain; JSON numbers keep them exact up to 2^53). */
export function parseTimestamp(value: unknown, field: string): number {
  return parseSafeInteger(value, field);
}

/** Guarantee version: `1`, `2`, `"1"`, `"2"`, `"v1"` or `"v2"` → 1 | 2. */
export function parseVersion(value: unknown, field: string): GuaranteeVersion {
  switch (value) {
    case 1:
    case "1":
    case "v1":
      return 1;
    case 2:
    case "2":
    case "v2":
      return 2;
    default:
      throw new WireError(
        field,
        `must be 1 or 2 (or "v1"/"v2"), got ${JSON.stringify(value) ?? "undefined"}`,
      );
  }
}

/** A 32-byte hex value, normalised to lower case. */
export function parseBytes32(value: unknown, field: string): string {
  if (typeof value !== "string")
    throw new WireError(field, `must be a 32-byte hex string, got ${describeType(value)}`);
  if (!BYTES32.test(value)) throw new WireError(field, "must be a 0x-prefixed 32-byte hex string");
  return value.toLowerCase();
}

/** Arbitrary 0x-prefixed bytes with an optional exact length, normalised to lower case. */
export function parseHexBytes(value: unknown, field: string, byteLength?: number): string {
  if (typeof value !== "string")
    throw new WireError(field, `must be a 0x-prefixed hex string, got ${describeType(value)}`);
  if (!HEX_BYTES.test(value)) throw new WireError(field, "must be a 0x-prefixed hex string of whole bytes");
  const length = (value.length - 2) / 2;
  if (byteLength !== undefined && length !== byteLength) {
    throw new WireError(field, `must be ${byteLength} bytes, got ${length}`);
  }
  return value.toLowerCase();
}

/** A string field, optionally bounded in length (UTF-8 bytes). */
export function parseString(value: unknown, field: string, maxBytes = 1024): string {
  if (typeof value !== "string") throw new WireError(field, `must be a string, got ${describeType(value)}`);
  if (Buffer.byteLength(value, "utf8") > maxBytes)
    throw new WireError(field, `must be at most ${maxBytes} bytes`);
  return value;
}

/** A plain JSON object (not null, not an array). */
export function parseObject(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new WireError(field, `must be an object, got ${describeType(value)}`);
  }
  return value as Record<string, unknown>;
}

/** CAIP-2 `eip155:<chainId>` → chain id. */
export function parseNetwork(value: unknown, field: string): number {
  if (typeof value !== "string")
    throw new WireError(field, `must be a CAIP-2 network string, got ${describeType(value)}`);
  const match = /^eip155:([1-9][0-9]{0,15})$/.exec(value);
  if (!match) throw new WireError(field, 'must be a CAIP-2 EVM network such as "eip155:31337"');
  const chainId = Number(match[1]);
  if (!Number.isSafeInteger(chainId)) throw new WireError(field, "chain id is out of range");
  return chainId;
}

/** Chain id → CAIP-2 network identifier. */
export function formatNetwork(chainId: number | bigint): string {
  return `eip155:${chainId.toString()}`;
}

/** Amounts and ids are emitted as decimal strings (docs/protocol.md, "Wire values"). */
export function formatUint(value: bigint): string {
  return value.toString(10);
}

/** Addresses compare case-insensitively (docs/protocol.md, "Wire values"). */
export function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
