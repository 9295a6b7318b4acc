/**
 * The keccak256 of the sdk's per-guarantee hashes (EIP-712 struct hash and digest, the signer's address,
 * the guarantee id, the certificate domain): @noble/hashes by default, so the sdk runs anywhere. A
 * process with a faster implementation installs it with {@link useKeccak256} (Core installs its native
 * addon, operator/clearing/native-keccak.ts); it is taken only when it gives the same bytes as
 * @noble/hashes on a set of inputs around the sponge's block boundary (136 bytes), and the hashes stay
 * byte-identical either way (test/sdk/keccak.test.ts).
 */
import { keccak_256 } from "@noble/hashes/sha3.js";

/** keccak256 of `data`, 32 bytes. */
export type Keccak256Bytes = (data: Uint8Array) => Uint8Array;

let current: Keccak256Bytes = keccak_256;

/** keccak256 of `data` with the installed implementation (32 bytes). */
export function keccak256Bytes(data: Uint8Array): Uint8Array {
  return current(data);
}

/**
 * Deterministic bytes (xorshift32 from `seed`) for load-time checks of a keccak implementation: no
 * randomness is needed to catch a broken build. Also used by operator/clearing/native-keccak.ts.
 */
export function sampleBytes(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** Whether `a` and `b` hold the same bytes. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Installs `impl` for {@link keccak256Bytes} when it matches @noble/hashes on sample inputs (0 to 300
 * bytes, both sides of each block boundary); returns whether it was installed. `null` restores
 * @noble/hashes.
 */
export function useKeccak256(impl: Keccak256Bytes | null): boolean {
  if (impl === null) {
    current = keccak_256;
    return true;
  }
  for (const length of [0, 1, 20, 32, 64, 66, 135, 136, 137, 160, 192, 271, 272, 273, 300]) {
    const data = sampleBytes(length, length + 7);
    let hash: Uint8Array;
    try {
      hash = impl(data);
    } catch {
      return false;
    }
    if (!(hash instanceof Uint8Array) || !sameBytes(hash, keccak_256(data))) return false;
  }
  current = impl;
  return true;
}

/** Whether {@link keccak256Bytes} is @noble/hashes (false once another implementation was installed). */
export function keccak256IsNoble(): boolean {
  return current === keccak_256;
}
