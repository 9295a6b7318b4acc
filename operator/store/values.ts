/**
 * How every store implementation normalises values before they reach a key or a CHECK: addresses in
 * EIP-55 form, 32-byte hex in lower case, amounts checked for sign. One definition for both engines and the
 * single implementation (./sql); `sqlite/common.ts` re-exports them for the areas still written per engine.
 */
import { getAddress } from "ethers";

/** Checksumming costs a keccak256; the same few addresses (payers, recipients, assets) recur constantly. */
const CHECKSUM_MEMO_LIMIT = 10_000;
const checksummed = new Map<string, string>();

/** Keys compare as strings: normalise every address to its checksummed form first. */
export function address(value: string): string {
  let result = checksummed.get(value);
  if (result === undefined) {
    result = getAddress(value.toLowerCase());
    if (checksummed.size >= CHECKSUM_MEMO_LIMIT) checksummed.clear();
    checksummed.set(value, result);
  }
  return result;
}

export const bytes32 = (value: string): string => value.toLowerCase();

export function nonNegative(value: bigint, what: string): bigint {
  if (value < 0n) throw new RangeError(`${what} must not be negative, got ${value}`);
  return value;
}

export function positive(value: bigint, what: string): bigint {
  if (value <= 0n) throw new RangeError(`${what} must be positive, got ${value}`);
  return value;
}
