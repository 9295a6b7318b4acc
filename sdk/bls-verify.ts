/**
 * Certificate signature check in pure JavaScript (docs/protocol.md, "Certificates"): BLS12-381 with
 * signatures in G1 (48 bytes compressed) and keys in G2 (96 bytes compressed), hash-to-curve tag
 * {@link CERTIFICATE_DST}, message = the certificate's raw `claims` bytes. @noble/curves only, no Node
 * API: the operator console checks certificates in the browser with it, and sdk/bls.ts uses it as its
 * fallback verifier when the native addon is not built (byte for byte what blst checks).
 */
import { bls12_381 } from "@noble/curves/bls12-381.js";

/**
 * Hash-to-curve tag of certificate signatures: the IETF BLS proof-of-possession ciphersuite with
 * signatures in G1 (draft-irtf-cfrg-bls-signature §4.2.3). The Vault verifies with the same tag.
 */
export const CERTIFICATE_DST = "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_POP_";
/** Compressed G2 point. */
export const PUBLIC_KEY_LENGTH = 96;
/** Compressed G1 point. */
export const SIGNATURE_LENGTH = 48;

const DST_BYTES = new TextEncoder().encode(CERTIFICATE_DST);
const short = bls12_381.shortSignatures;

/**
 * Whether `signature` (compressed G1) is `publicKey`'s (compressed G2) over `message` under `dst`
 * (default {@link CERTIFICATE_DST}). Throws on a malformed, off-curve or out-of-subgroup encoding;
 * the identity point (either side) gives false.
 */
export function nobleVerify(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
  dst: Uint8Array = DST_BYTES,
): boolean {
  const pk = bls12_381.G2.Point.fromBytes(publicKey);
  const sig = bls12_381.G1.Point.fromBytes(signature);
  pk.assertValidity();
  sig.assertValidity();
  if (pk.is0() || sig.is0()) return false;
  return short.verify(sig, short.hash(message, dst), pk);
}

/** {@link nobleVerify} that never throws: any malformed input is false (compressed encodings only). */
export function verifyCertificateSignature(
  publicKey: Uint8Array,
  claims: Uint8Array,
  signature: Uint8Array,
): boolean {
  try {
    if (publicKey.length !== PUBLIC_KEY_LENGTH || signature.length !== SIGNATURE_LENGTH) return false;
    return nobleVerify(publicKey, claims, signature);
  } catch {
    return false;
  }
}
