/**
 * BLS12-381 helpers for Surety certificates (docs/protocol.md, "Certificates"): minimal-signature-size
 * variant, signature in G1 (48 bytes compressed), public key in G2 (96 bytes compressed), hash-to-curve
 * tag CERTIFICATE_DST. Signing and verifying use blst's C library through the Node-API addon in
 * native/blst-minsig (built by `npm ci`; the operator's hot path), or @noble/curves when the addon is
 * not built (same bytes, ≈ 40× slower: {@link blsBackend} says which). Point (de)compression into the
 * EIP-2537 form the contracts take uses @noble/curves.
 *
 * Pure: no I/O, no clocks; no randomness but {@link blsVerifyBatch}'s coefficients (keys derive from
 * caller-supplied key material).
 */
import { bls12_381 } from "@noble/curves/bls12-381.js";
import { hkdf } from "@noble/hashes/hkdf.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { CERTIFICATE_DST, nobleVerify, PUBLIC_KEY_LENGTH, SIGNATURE_LENGTH } from "./bls-verify";
import { WireError } from "./errors";

// The tag and the compressed lengths are defined once, in the pure verifier (the browser's too).
export { CERTIFICATE_DST, PUBLIC_KEY_LENGTH, SIGNATURE_LENGTH };

export const SECRET_KEY_LENGTH = 32;
/** IETF BLS KeyGen needs at least 32 bytes of input key material. */
export const MIN_IKM_LENGTH = 32;
/** EIP-2537 encodes an Fp element in 64 bytes (16 zero bytes, then the 48-byte big-endian value). */
export const EIP2537_FP_LENGTH = 64;
export const EIP2537_G1_LENGTH = 2 * EIP2537_FP_LENGTH;
export const EIP2537_G2_LENGTH = 4 * EIP2537_FP_LENGTH;

const WORD_LENGTH = 32;
const BYTE_MAX = 255;
const FP_MODULUS = bls12_381.fields.Fp.ORDER;
const GROUP_ORDER = bls12_381.fields.Fr.ORDER;
const DST_BYTES = new TextEncoder().encode(CERTIFICATE_DST);
const G1_COMPRESSED_LENGTH = 48;
const G2_COMPRESSED_LENGTH = 96;

/** A malformed BLS key, signature or point encoding; a {@link WireError} so HTTP layers answer 400. */
export class BlsError extends WireError {
  override readonly name: string = "BlsError";
}

export interface BlsKeyPair {
  /** 32-byte big-endian scalar. Keep secret. */
  secretKey: Uint8Array;
  /** 96-byte compressed G2 point. */
  publicKey: Uint8Array;
}

/** A G1 point in EIP-2537 form, field names and order as solady's `BLS.G1Point`. */
export interface Eip2537G1Point {
  x_a: string;
  x_b: string;
  y_a: string;
  y_b: string;
}

/** A G2 point in EIP-2537 form, field names and order as solady's `BLS.G2Point`. */
export interface Eip2537G2Point {
  x_c0_a: string;
  x_c0_b: string;
  x_c1_a: string;
  x_c1_b: string;
  y_c0_a: string;
  y_c0_b: string;
  y_c1_a: string;
  y_c1_b: string;
}

const G1_FIELDS = ["x_a", "x_b", "y_a", "y_b"] as const;
const G2_FIELDS = ["x_c0_a", "x_c0_b", "x_c1_a", "x_c1_b", "y_c0_a", "y_c0_b", "y_c1_a", "y_c1_b"] as const;

// ---------------------------------------------------------------------------------------------
// Backends: blst (native addon) or @noble/curves, byte for byte the same
// ---------------------------------------------------------------------------------------------

/** The min-sig operations, as native/blst-minsig exports them (secret keys already range-checked). */
interface MinSigBackend {
  keygen(ikm: Uint8Array): Uint8Array;
  publicKey(secretKey: Uint8Array): Uint8Array;
  sign(secretKey: Uint8Array, message: Uint8Array, dst: Uint8Array): Uint8Array;
  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array, dst: Uint8Array): boolean;
  /**
   * The addon only: a key checked once (decoded, in G2, not infinity) with its Miller loop lines and the
   * generator's precomputed, or null for an invalid key; `verifyPrepared` is `verify` against it.
   */
  prepareKey?(publicKey: Uint8Array): PreparedKey | null;
  verifyPrepared?(key: PreparedKey, message: Uint8Array, signature: Uint8Array, dst: Uint8Array): boolean;
  /**
   * The addon only: whether every signature is valid, checked at once with random coefficients (8 bytes per
   * signature from `coefficients`); false when any one is not (or, with probability ≤ 2^-63, never for valid
   * ones).
   */
  verifyBatchPrepared?(
    key: PreparedKey,
    messages: readonly Uint8Array[],
    signatures: readonly Uint8Array[],
    dst: Uint8Array,
    coefficients: Uint8Array,
  ): boolean;
}

/** An opaque key of the addon's `prepareKey`. */
declare const preparedKeyBrand: unique symbol;
type PreparedKey = { readonly [preparedKeyBrand]: true };

/**
 * IETF BLS KeyGen (draft-irtf-cfrg-bls-signature-04 §2.3, as blst implements it; key_info empty) in pure
 * JavaScript: what the @noble/curves fallback derives keys with. Prefer {@link blsKeyFromSecret}.
 */
export function ietfKeygen(ikm: Uint8Array): Uint8Array {
  let salt: Uint8Array = new TextEncoder().encode("BLS-SIG-KEYGEN-SALT-");
  const keyLength = 48; // ceil(3 * ceil(log2(r)) / 16)
  for (;;) {
    salt = sha256(salt);
    const okm = hkdf(sha256, Uint8Array.from([...ikm, 0]), salt, Uint8Array.from([0, keyLength]), keyLength);
    const secret = BigInt("0x" + bytesToHex(okm)) % GROUP_ORDER;
    if (secret !== 0n)
      return hexToBytes(secret.toString(16).padStart(2 * SECRET_KEY_LENGTH, "0"), "secretKey");
  }
}

const short = bls12_381.shortSignatures;
const nobleBackend: MinSigBackend = {
  keygen: ietfKeygen,
  publicKey: (secretKey) => short.getPublicKey(secretKey).toBytes(true),
  sign: (secretKey, message, dst) => short.sign(short.hash(message, dst), secretKey).toBytes(true),
  verify: nobleVerify,
};

/**
 * Where the addon lives (the worker thread of operator/guarantees/signing-worker.ts loads it too): the
 * repository's `native/blst-minsig`, reached from `sdk/` in the sources or from `dist/sdk/` when compiled
 * (`npm run operator:build`); null when it is in neither place.
 */
export const NATIVE_BLS_ADDON: string | null = resolveFirst([
  "../native/blst-minsig",
  "../../native/blst-minsig",
]);

function resolveFirst(candidates: readonly string[]): string | null {
  for (const candidate of candidates) {
    try {
      return require.resolve(candidate);
    } catch {
      // not there: the next candidate
    }
  }
  return null;
}

function loadBackend(): { name: "blst" | "noble"; backend: MinSigBackend } {
  try {
    if (NATIVE_BLS_ADDON === null) return { name: "noble", backend: nobleBackend };
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return { name: "blst", backend: require(NATIVE_BLS_ADDON) as MinSigBackend };
  } catch {
    return { name: "noble", backend: nobleBackend };
  }
}

const loaded = loadBackend();
const backend = loaded.backend;

/**
 * Which implementation signs and verifies: `blst` (the native addon, ≈ 5–8k signatures/s per core) or
 * `noble` (pure JavaScript, ≈ 130/s) when the addon was not built (`SURETY_SKIP_BLS_ADDON=1`).
 */
export function blsBackend(): "blst" | "noble" {
  return loaded.name;
}

// ---------------------------------------------------------------------------------------------
// Keys, signing, verification
// ---------------------------------------------------------------------------------------------

/**
 * Derives a key pair from input key material with the IETF BLS KeyGen (blst `blst_keygen`; the same
 * scalar as @chainsafe/blst's `SecretKey.fromKeygen`).
 * @param ikm at least 32 bytes, as bytes or hex (with or without 0x).
 */
export function blsKeyFromSecret(ikm: Uint8Array | string, field = "ikm"): BlsKeyPair {
  const material = typeof ikm === "string" ? hexToBytes(ikm, field) : ikm;
  if (!(material instanceof Uint8Array)) throw new BlsError(field, "must be bytes or a hex string");
  if (material.length < MIN_IKM_LENGTH) {
    throw new BlsError(
      field,
      `must be at least ${MIN_IKM_LENGTH} bytes of key material, got ${material.length}`,
    );
  }
  return keyPairOf(Uint8Array.from(backend.keygen(material)));
}

/**
 * Rebuilds a key pair from a raw 32-byte secret key (as returned in `BlsKeyPair.secretKey`).
 * @param secretKey 32 bytes or 64 hex digits; must be a non-zero scalar below the group order.
 */
export function blsKeyFromSecretKeyBytes(secretKey: Uint8Array | string, field = "secretKey"): BlsKeyPair {
  return keyPairOf(parseSecretKey(secretKey, field));
}

/** Signs `message` with CERTIFICATE_DST; returns the 48-byte compressed G1 signature. */
export function blsSign(secretKey: Uint8Array, message: Uint8Array): Uint8Array {
  return Uint8Array.from(backend.sign(parseSecretKey(secretKey, "secretKey"), message, DST_BYTES));
}

/** A signer that parses the secret key once (for the issuance hot path). */
export interface BlsSigner {
  readonly publicKey: Uint8Array;
  sign(message: Uint8Array): Uint8Array;
}

export function createBlsSigner(secretKey: Uint8Array | string): BlsSigner {
  const key = parseSecretKey(secretKey, "secretKey");
  return {
    publicKey: Uint8Array.from(backend.publicKey(key)),
    sign: (message) => backend.sign(key, message, DST_BYTES),
  };
}

/**
 * Verifies a compressed signature (tag CERTIFICATE_DST) against a compressed public key.
 * Never throws: malformed, off-curve, out-of-subgroup or infinity keys/signatures give false.
 */
export function blsVerify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    if (!(message instanceof Uint8Array)) return false;
    // Compressed encodings only (the wire format).
    if (!(publicKey instanceof Uint8Array) || publicKey.length !== PUBLIC_KEY_LENGTH) return false;
    if (!(signature instanceof Uint8Array) || signature.length !== SIGNATURE_LENGTH) return false;
    if (backend.prepareKey === undefined || backend.verifyPrepared === undefined) {
      return backend.verify(publicKey, message, signature, DST_BYTES);
    }
    const key = preparedKey(publicKey, backend.prepareKey);
    return key !== null && backend.verifyPrepared(key, message, signature, DST_BYTES);
  } catch {
    return false;
  }
}

/** Bytes of one random coefficient of {@link blsVerifyBatch}. */
const BATCH_COEFFICIENT_BYTES = 8;

/**
 * {@link blsVerify} of many signatures under one key: `result[i]` says whether `signatures[i]` is the key's
 * over `messages[i]`. With the addon, all are checked in one pairing equation with fresh random coefficients
 * (≈ 0.25 ms per signature + ≈ 0.8 ms per batch where each alone costs ≈ 1.05 ms; docs/benchmarks.md, "A paid
 * request, hop by hop", third round); when that equation fails, each is checked alone to say which. An
 * invalid signature passes the batch with probability ≤ 2^-63 (small-exponent batch verification; every
 * signature is decoded and checked to be in G1 first). Without the addon: one by one.
 */
export function blsVerifyBatch(
  publicKey: Uint8Array,
  messages: readonly Uint8Array[],
  signatures: readonly Uint8Array[],
): boolean[] {
  if (messages.length !== signatures.length) throw new RangeError("one message per signature");
  const alone = () => messages.map((message, i) => blsVerify(publicKey, message, signatures[i]));
  const verifyBatch = backend.verifyBatchPrepared;
  if (messages.length < 2 || backend.prepareKey === undefined || verifyBatch === undefined) return alone();
  try {
    if (!(publicKey instanceof Uint8Array) || publicKey.length !== PUBLIC_KEY_LENGTH) return alone();
    for (let i = 0; i < messages.length; i++) {
      if (!(messages[i] instanceof Uint8Array) || !(signatures[i] instanceof Uint8Array)) return alone();
    }
    const key = preparedKey(publicKey, backend.prepareKey);
    if (key === null) return messages.map(() => false);
    const coefficients = new Uint8Array(BATCH_COEFFICIENT_BYTES * messages.length);
    globalThis.crypto.getRandomValues(coefficients);
    if (verifyBatch(key, messages, signatures, DST_BYTES, coefficients)) return messages.map(() => true);
  } catch {
    // a malformed input: each alone says which
  }
  return alone();
}

/** Keys prepared by the addon, by their hex: Core's key (and the previous one across a rotation). */
const preparedKeys = new Map<string, PreparedKey | null>();
const MAX_PREPARED_KEYS = 8;

/**
 * The addon's prepared form of `publicKey`, computed once per key (≈ 0.3 ms; each verification against
 * it then skips the key's decompression and G2 subgroup check and the G2 half of both Miller loops:
 * docs/benchmarks.md, "A paid request, hop by hop", third round); null for an invalid key, remembered as such too.
 */
function preparedKey(
  publicKey: Uint8Array,
  prepare: (publicKey: Uint8Array) => PreparedKey | null,
): PreparedKey | null {
  const hex = bytesToHex(publicKey);
  let key = preparedKeys.get(hex);
  if (key === undefined) {
    key = prepare(publicKey);
    if (preparedKeys.size >= MAX_PREPARED_KEYS) preparedKeys.delete(preparedKeys.keys().next().value!);
    preparedKeys.set(hex, key);
  }
  return key;
}

// ---------------------------------------------------------------------------------------------
// The `public_key` JSON array form (public params)
// ---------------------------------------------------------------------------------------------

/** The spec's `public_key` form: the 96 compressed bytes as an array of numbers. */
export function publicKeyToArray(publicKey: Uint8Array): number[] {
  decodeG2(publicKey, "publicKey");
  return Array.from(publicKey);
}

/** Parses the spec's `public_key` array (96 integers 0..255 forming a valid G2 point). */
export function publicKeyFromArray(value: unknown, field = "public_key"): Uint8Array {
  if (!Array.isArray(value))
    throw new BlsError(field, `must be an array of ${PUBLIC_KEY_LENGTH} byte values`);
  if (value.length !== PUBLIC_KEY_LENGTH) {
    throw new BlsError(field, `must have ${PUBLIC_KEY_LENGTH} elements, got ${value.length}`);
  }
  const bytes = new Uint8Array(PUBLIC_KEY_LENGTH);
  value.forEach((item: unknown, i) => {
    if (typeof item !== "number" || !Number.isInteger(item) || item < 0 || item > BYTE_MAX) {
      throw new BlsError(`${field}[${i}]`, `must be an integer 0..${BYTE_MAX}`);
    }
    bytes[i] = item;
  });
  decodeG2(bytes, field);
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// EIP-2537 conversions (contract call arguments)
// ---------------------------------------------------------------------------------------------

/** Compressed public key (96 bytes, G2) → solady `BLS.G2Point` (`Vault.setOperatorKey`, `operatorKey()`). */
export function publicKeyToEip2537(publicKey: Uint8Array): Eip2537G2Point {
  return g2ToEip2537(publicKey, "publicKey");
}

/** solady `BLS.G2Point` (e.g. `Vault.operatorKey()`) → 96-byte compressed public key (validated). */
export function publicKeyFromEip2537(point: Eip2537G2Point, field = "publicKey"): Uint8Array {
  return g2FromEip2537(point, field);
}

/** Compressed signature (48 bytes, G1) → solady `BLS.G1Point` (`Vault.remunerate`). */
export function signatureToEip2537(signature: Uint8Array): Eip2537G1Point {
  return g1ToEip2537(signature, "signature");
}

/** solady `BLS.G1Point` → 48-byte compressed signature (validated). */
export function signatureFromEip2537(point: Eip2537G1Point, field = "signature"): Uint8Array {
  return g1FromEip2537(point, field);
}

/** Compressed G1 point (48 bytes) → solady `BLS.G1Point`. */
export function g1ToEip2537(point: Uint8Array, field = "point"): Eip2537G1Point {
  return wordsToStruct(G1_FIELDS, bytesToWords(g1ToEip2537Bytes(point, field)));
}

/** Compressed G2 point (96 bytes) → solady `BLS.G2Point`. */
export function g2ToEip2537(point: Uint8Array, field = "point"): Eip2537G2Point {
  return wordsToStruct(G2_FIELDS, bytesToWords(g2ToEip2537Bytes(point, field)));
}

/** Compressed G1 point (48 bytes) → 128-byte EIP-2537 encoding (x ‖ y). */
export function g1ToEip2537Bytes(point: Uint8Array, field = "point"): Uint8Array {
  const { x, y } = decodeG1(point, field).toAffine();
  return concat([fpToBytes(x), fpToBytes(y)]);
}

/** Compressed G2 point (96 bytes) → 256-byte EIP-2537 encoding (x.c0 ‖ x.c1 ‖ y.c0 ‖ y.c1). */
export function g2ToEip2537Bytes(point: Uint8Array, field = "point"): Uint8Array {
  const { x, y } = decodeG2(point, field).toAffine();
  return concat([fpToBytes(x.c0), fpToBytes(x.c1), fpToBytes(y.c0), fpToBytes(y.c1)]);
}

/** solady `BLS.G1Point` (e.g. an ethers Result) → 48-byte compressed point. */
export function g1FromEip2537(point: Eip2537G1Point, field = "point"): Uint8Array {
  return g1FromEip2537Bytes(structToBytes(point, G1_FIELDS, field), field);
}

/** solady `BLS.G2Point` (e.g. an ethers Result) → 96-byte compressed point. */
export function g2FromEip2537(point: Eip2537G2Point, field = "point"): Uint8Array {
  return g2FromEip2537Bytes(structToBytes(point, G2_FIELDS, field), field);
}

/** 128-byte EIP-2537 G1 encoding → 48-byte compressed point (validated: on curve, in G1, not infinity). */
export function g1FromEip2537Bytes(encoded: Uint8Array, field = "point"): Uint8Array {
  expectLength(encoded, EIP2537_G1_LENGTH, field);
  const x = fpFromBytes(encoded, 0, `${field}.x`);
  const y = fpFromBytes(encoded, 1, `${field}.y`);
  const point = validated(() => bls12_381.G1.Point.fromAffine({ x, y }), field);
  return point.toBytes(true);
}

/** 256-byte EIP-2537 G2 encoding → 96-byte compressed point (validated: on curve, in G2, not infinity). */
export function g2FromEip2537Bytes(encoded: Uint8Array, field = "point"): Uint8Array {
  expectLength(encoded, EIP2537_G2_LENGTH, field);
  const x = { c0: fpFromBytes(encoded, 0, `${field}.x.c0`), c1: fpFromBytes(encoded, 1, `${field}.x.c1`) };
  const y = { c0: fpFromBytes(encoded, 2, `${field}.y.c0`), c1: fpFromBytes(encoded, 3, `${field}.y.c1`) };
  const point = validated(() => bls12_381.G2.Point.fromAffine({ x, y }), field);
  return point.toBytes(true);
}

// ---------------------------------------------------------------------------------------------
// Internals
// ---------------------------------------------------------------------------------------------

function keyPairOf(secretKey: Uint8Array): BlsKeyPair {
  return { secretKey, publicKey: Uint8Array.from(backend.publicKey(secretKey)) };
}

/** A 32-byte big-endian scalar, 0 < sk < r (a copy). */
function parseSecretKey(secretKey: Uint8Array | string, field: string): Uint8Array {
  const bytes = typeof secretKey === "string" ? hexToBytes(secretKey, field) : secretKey;
  if (!(bytes instanceof Uint8Array)) throw new BlsError(field, "must be bytes or a hex string");
  expectLength(bytes, SECRET_KEY_LENGTH, field);
  const scalar = BigInt("0x" + bytesToHex(bytes));
  if (scalar === 0n || scalar >= GROUP_ORDER) {
    throw new BlsError(field, "is not a valid secret key (must be non-zero and below the group order)");
  }
  return Uint8Array.from(bytes);
}

type G1Point = ReturnType<typeof bls12_381.G1.Point.fromBytes>;
type G2Point = ReturnType<typeof bls12_381.G2.Point.fromBytes>;

/** Compressed G1 → noble point; rejects bad encodings, off-curve, out-of-subgroup and infinity. */
function decodeG1(bytes: Uint8Array, field: string): G1Point {
  if (!(bytes instanceof Uint8Array)) throw new BlsError(field, "must be a Uint8Array");
  expectLength(bytes, G1_COMPRESSED_LENGTH, field);
  return validated(() => bls12_381.G1.Point.fromBytes(bytes), field);
}

function decodeG2(bytes: Uint8Array, field: string): G2Point {
  if (!(bytes instanceof Uint8Array)) throw new BlsError(field, "must be a Uint8Array");
  expectLength(bytes, G2_COMPRESSED_LENGTH, field);
  return validated(() => bls12_381.G2.Point.fromBytes(bytes), field);
}

/** Builds a point and checks it is on the curve, in the prime-order subgroup and not infinity. */
function validated<P extends { assertValidity(): void; is0(): boolean }>(build: () => P, field: string): P {
  let point: P;
  try {
    point = build();
    point.assertValidity();
  } catch (error) {
    throw new BlsError(field, `is not a valid BLS12-381 point (${(error as Error).message})`);
  }
  // The identity key would verify any message against the identity signature.
  if (point.is0()) throw new BlsError(field, "is the point at infinity");
  return point;
}

function expectLength(bytes: Uint8Array, length: number, field: string): void {
  if (bytes.length !== length) throw new BlsError(field, `must be ${length} bytes, got ${bytes.length}`);
}

/** Fp element → 64-byte big-endian (EIP-2537). */
function fpToBytes(value: bigint): Uint8Array {
  return hexToBytes(value.toString(16).padStart(2 * EIP2537_FP_LENGTH, "0"), "fp");
}

/** The `index`-th 64-byte Fp element of an EIP-2537 encoding; must be canonical (< p). */
function fpFromBytes(encoded: Uint8Array, index: number, field: string): bigint {
  const slice = encoded.subarray(index * EIP2537_FP_LENGTH, (index + 1) * EIP2537_FP_LENGTH);
  const value = BigInt("0x" + bytesToHex(slice));
  if (value >= FP_MODULUS) throw new BlsError(field, "is not a canonical field element (must be below p)");
  return value;
}

function bytesToWords(bytes: Uint8Array): string[] {
  const words: string[] = [];
  for (let offset = 0; offset < bytes.length; offset += WORD_LENGTH) {
    words.push("0x" + bytesToHex(bytes.subarray(offset, offset + WORD_LENGTH)));
  }
  return words;
}

function wordsToStruct<K extends string>(fields: readonly K[], words: string[]): Record<K, string> {
  return Object.fromEntries(fields.map((name, i) => [name, words[i]])) as Record<K, string>;
}

function structToBytes(point: object, fields: readonly string[], field: string): Uint8Array {
  if (typeof point !== "object" || point === null)
    throw new BlsError(field, "must be an EIP-2537 point object");
  const record = point as Record<string, unknown>;
  return concat(
    fields.map((name) => {
      const word = record[name];
      if (typeof word !== "string")
        throw new BlsError(`${field}.${name}`, "must be a 0x-prefixed bytes32 hex string");
      const bytes = hexToBytes(word, `${field}.${name}`);
      expectLength(bytes, WORD_LENGTH, `${field}.${name}`);
      return bytes;
    }),
  );
}

const HEX_PATTERN = /^(0x)?([0-9a-fA-F]{2})*$/;

function hexToBytes(hex: string, field: string): Uint8Array {
  if (typeof hex !== "string" || !HEX_PATTERN.test(hex)) {
    throw new BlsError(field, "must be a hex string with an even number of digits");
  }
  return Uint8Array.from(Buffer.from(hex.startsWith("0x") ? hex.slice(2) : hex, "hex"));
}

function bytesToHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

function concat(parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(Buffer.concat(parts));
}
