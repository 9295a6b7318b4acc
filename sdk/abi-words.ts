/**
 * Head-only ABI encoding, written word by word into a Buffer. The fixed
 * layouts of the sdk (guarantee id, certificate domain, certificate claims:
 * docs/protocol.md, "Identities", "Certificates") are encoded with these instead of ethers' generic
 * AbiCoder, which costs more per guarantee than the BLS signature (it
 * re-checksums every address). Each writer checks its value, so a value that
 * does not fit its word throws instead of producing other bytes.
 * test/sdk/certificate.test.ts and test/sdk/ids.test.ts compare the results
 * with an independent ethers encoding.
 */
import { keccak256Bytes } from "./keccak";

export const WORD_BYTES = 32;

const ADDRESS = /^0[xX][0-9a-fA-F]{40}$/;
const BYTES32 = /^0[xX][0-9a-fA-F]{64}$/;

/** A word of zeros, then `hex` (no 0x, at most 64 digits) right-aligned: big-endian. */
function writeRightAligned(buffer: Buffer, word: number, hex: string): void {
  const padded = hex.length % 2 === 0 ? hex : "0" + hex;
  buffer.write(padded, word * WORD_BYTES + WORD_BYTES - padded.length / 2, "hex");
}

/** uint<bits> (bits a multiple of 4, at most 256) at `word`. */
export function writeUint(buffer: Buffer, word: number, value: bigint | number, bits = 256): void {
  if (typeof value === "number" && !Number.isSafeInteger(value)) {
    throw new RangeError(`uint${bits}: ${value} is not a safe integer`);
  }
  if (value < 0) throw new RangeError(`uint${bits}: ${value} is negative`);
  const hex = value.toString(16);
  // toString(16) has no leading zeros, so more than bits/4 digits means the value does not fit.
  if (hex.length * 4 > bits) {
    throw new RangeError(`uint${bits}: ${value} does not fit`);
  }
  writeRightAligned(buffer, word, hex);
}

/** address (any letter case) at `word`. */
export function writeAddress(buffer: Buffer, word: number, address: string): void {
  if (!ADDRESS.test(address)) throw new RangeError(`address: ${address} is not a 20-byte hex address`);
  writeRightAligned(buffer, word, address.slice(2));
}

/** bytes32 (0x + 64 hex digits, any letter case) at `word`. */
export function writeBytes32(buffer: Buffer, word: number, value: string): void {
  if (!BYTES32.test(value)) throw new RangeError(`bytes32: ${value} is not 32 bytes of hex`);
  buffer.write(value.slice(2), word * WORD_BYTES, WORD_BYTES, "hex");
}

/** Lower-case 0x hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  return "0x" + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** keccak256 of `bytes` as lower-case 0x hex. */
export function keccakHex(bytes: Uint8Array): string {
  return toHex(keccak256Bytes(bytes));
}
