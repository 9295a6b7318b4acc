/**
 * Payer signatures over guarantee claims (docs/protocol.md, "Payer signatures").
 *
 * Two paths compute the same EIP-712 digest:
 * - the typed-data description (`guaranteeTypedDataDomain`, `guaranteeTypedDataTypes`,
 *   `guaranteeTypedDataMessage`) that wallets sign through ethers;
 * - {@link GuaranteeHasher}, which hashes the struct by hand with precomputed type hashes and
 *   domain separator. Issuance and the facilitator verify every request, and ethers' generic
 *   encoder plus pure-JS recovery costs milliseconds per signature (docs/protocol.md), so the hot
 *   path hashes here and recovers with the native libsecp256k1 binding.
 * The tests keep both paths equal.
 */
import { keccak_256 } from "@noble/hashes/sha3.js";
import { TypedDataEncoder, getAddress, getBytes, type TypedDataDomain, type TypedDataField } from "ethers";
import secp256k1 from "secp256k1";
import { keccak256Bytes } from "./keccak";
import type { GuaranteeClaims, SigningScheme, ValidationPolicy } from "./claims";
import { SignatureError, WireError } from "./errors";
import { MAX_UINT256, MAX_UINT64, describeType, parseAddress, sameAddress } from "./wire";

/** The EIP-712 domain of guarantees: `verifyingContract` is the Vault (docs/protocol.md). */
export interface GuaranteeDomainParams {
  name: string;
  version: string;
  chainId: bigint | number;
  verifyingContract: string;
}

/** A validated domain: chain id as bigint, checksummed Vault address. */
export interface GuaranteeTypedDataDomain {
  readonly name: string;
  readonly version: string;
  readonly chainId: bigint;
  readonly verifyingContract: string;
}

/** Field lists exactly as in docs/protocol.md, "Payer signatures": names and order are part of the signed type. */
export const GUARANTEE_V1_FIELDS: readonly TypedDataField[] = Object.freeze([
  { name: "user", type: "address" },
  { name: "recipient", type: "address" },
  { name: "reqId", type: "uint256" },
  { name: "amount", type: "uint256" },
  { name: "asset", type: "address" },
  { name: "timestamp", type: "uint64" },
]);

export const GUARANTEE_V2_FIELDS: readonly TypedDataField[] = Object.freeze([
  ...GUARANTEE_V1_FIELDS,
  { name: "validationRegistry", type: "address" },
  { name: "validator", type: "address" },
  { name: "validatorAgentId", type: "uint256" },
  { name: "minValidationScore", type: "uint8" },
  { name: "jobHash", type: "bytes32" },
  { name: "requiredValidationTag", type: "string" },
  { name: "validationDeadline", type: "uint64" },
]);

export const GUARANTEE_V1_PRIMARY_TYPE = "GuaranteeV1";
export const GUARANTEE_V2_PRIMARY_TYPE = "GuaranteeV2";

function encodeType(primaryType: string, fields: readonly TypedDataField[]): string {
  return `${primaryType}(${fields.map((field) => `${field.type} ${field.name}`).join(",")})`;
}

/** `GuaranteeV1(address user,address recipient,uint256 reqId,uint256 amount,address asset,uint64 timestamp)` */
export const GUARANTEE_V1_TYPE = encodeType(GUARANTEE_V1_PRIMARY_TYPE, GUARANTEE_V1_FIELDS);
export const GUARANTEE_V2_TYPE = encodeType(GUARANTEE_V2_PRIMARY_TYPE, GUARANTEE_V2_FIELDS);

const GUARANTEE_V1_TYPEHASH = keccak_256(Buffer.from(GUARANTEE_V1_TYPE, "utf8"));
const GUARANTEE_V2_TYPEHASH = keccak_256(Buffer.from(GUARANTEE_V2_TYPE, "utf8"));
export const GUARANTEE_V1_TYPEHASH_HEX = toHex(GUARANTEE_V1_TYPEHASH);
export const GUARANTEE_V2_TYPEHASH_HEX = toHex(GUARANTEE_V2_TYPEHASH);

/** The typed-data `types` argument for a version (a fresh copy: ethers' API takes mutable arrays). */
export function guaranteeTypedDataTypes(version: 1 | 2): Record<string, TypedDataField[]> {
  return version === 1
    ? { [GUARANTEE_V1_PRIMARY_TYPE]: GUARANTEE_V1_FIELDS.map((field) => ({ ...field })) }
    : { [GUARANTEE_V2_PRIMARY_TYPE]: GUARANTEE_V2_FIELDS.map((field) => ({ ...field })) };
}

/** Validates a domain: non-empty name and version, positive chain id, a Vault address (checksummed). */
export function guaranteeTypedDataDomain(params: GuaranteeDomainParams): GuaranteeTypedDataDomain {
  if (typeof params.name !== "string" || params.name.length === 0) {
    throw new WireError("domain.name", `must be a non-empty string, got ${describeType(params.name)}`);
  }
  if (typeof params.version !== "string" || params.version.length === 0) {
    throw new WireError("domain.version", `must be a non-empty string, got ${describeType(params.version)}`);
  }
  const chainId = params.chainId;
  const validChainId =
    (typeof chainId === "bigint" && chainId > 0n && chainId <= MAX_UINT256) ||
    (typeof chainId === "number" && Number.isSafeInteger(chainId) && chainId > 0);
  if (!validChainId) throw new WireError("domain.chainId", "must be a positive integer");
  return Object.freeze({
    name: params.name,
    version: params.version,
    chainId: BigInt(chainId),
    verifyingContract: parseAddress(params.verifyingContract, "domain.verifyingContract"),
  });
}

/** The typed-data `value` for claims, field names as in docs/protocol.md, "Payer signatures". */
export function guaranteeTypedDataMessage(claims: GuaranteeClaims): Record<string, unknown> {
  const base = {
    user: claims.user,
    recipient: claims.recipient,
    reqId: claims.reqId,
    amount: claims.amount,
    asset: claims.asset,
    timestamp: claims.timestamp,
  };
  if (claims.version === 1) return base;
  const policy: ValidationPolicy = claims.policy;
  return {
    ...base,
    validationRegistry: policy.registry,
    validator: policy.validator,
    validatorAgentId: policy.agentId,
    minValidationScore: policy.minScore,
    jobHash: policy.jobHash,
    requiredValidationTag: policy.tag,
    validationDeadline: policy.deadline,
  };
}

export function guaranteePrimaryType(version: 1 | 2): string {
  return version === 1 ? GUARANTEE_V1_PRIMARY_TYPE : GUARANTEE_V2_PRIMARY_TYPE;
}

const WORD = 32;
const ADDRESS_HEX = /^0[xX][0-9a-fA-F]{40}$/;
const BYTES32_HEX = /^0[xX][0-9a-fA-F]{64}$/;
const MAX_UINT8 = 255;
const EIP712_PREFIX = Uint8Array.of(0x19, 0x01);
/** EIP-191 version 0x45 prefix for a 32-byte message (what `personal_sign` of the digest hashes). */
const EIP191_PREFIX = Buffer.from("\x19Ethereum Signed Message:\n32", "utf8");

function toHex(bytes: Uint8Array): string {
  return "0x" + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** Struct encoding writes words into a zeroed buffer; each writer checks the value's ABI range. */
function writeAddress(buffer: Buffer, word: number, value: string, field: string): void {
  if (typeof value !== "string" || !ADDRESS_HEX.test(value)) {
    throw new WireError(field, "must be a 0x-prefixed 20-byte hex address");
  }
  buffer.write(value.slice(2), word * WORD + 12, 20, "hex");
}

function writeUint(buffer: Buffer, word: number, value: bigint | number, max: bigint, field: string): void {
  const valid =
    (typeof value === "bigint" && value >= 0n && value <= max) ||
    (typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && BigInt(value) <= max);
  if (!valid) throw new WireError(field, `must be an integer from 0 to ${max}`);
  const hex = value.toString(16);
  // Right-align the big-endian value; an odd digit count gets its leading zero nibble.
  const padded = hex.length % 2 === 0 ? hex : "0" + hex;
  buffer.write(padded, word * WORD + WORD - padded.length / 2, "hex");
}

function writeBytes32(buffer: Buffer, word: number, value: string, field: string): void {
  if (typeof value !== "string" || !BYTES32_HEX.test(value)) {
    throw new WireError(field, "must be a 0x-prefixed 32-byte hex string");
  }
  buffer.write(value.slice(2), word * WORD, WORD, "hex");
}

/**
 * EIP-712 hashing of guarantees for one domain. Build one per deployment and reuse it: the
 * domain separator and type hashes are computed once, each digest is then one abi-encoded
 * buffer and two or three keccak256 calls.
 */
export class GuaranteeHasher {
  readonly domain: GuaranteeTypedDataDomain;
  /** `hashStruct(EIP712Domain)`, 0x-hex. */
  readonly domainSeparator: string;
  private readonly digestInput: Buffer;

  constructor(domain: GuaranteeDomainParams) {
    this.domain = guaranteeTypedDataDomain(domain);
    this.domainSeparator = TypedDataEncoder.hashDomain(this.domain as TypedDataDomain);
    // 0x1901 ‖ domainSeparator ‖ structHash: the first 34 bytes never change.
    this.digestInput = Buffer.alloc(2 + WORD + WORD);
    this.digestInput.set(EIP712_PREFIX, 0);
    this.digestInput.write(this.domainSeparator.slice(2), 2, WORD, "hex");
  }

  /** `hashStruct(GuaranteeV1|V2)` of the claims. */
  structHash(claims: GuaranteeClaims): Uint8Array {
    const v2 = claims.version === 2;
    if (!v2 && claims.version !== 1) throw new WireError("claims.version", "must be 1 or 2");
    const words = Buffer.alloc((v2 ? GUARANTEE_V2_FIELDS.length + 1 : GUARANTEE_V1_FIELDS.length + 1) * WORD);
    words.set(v2 ? GUARANTEE_V2_TYPEHASH : GUARANTEE_V1_TYPEHASH, 0);
    writeAddress(words, 1, claims.user, "claims.user_address");
    writeAddress(words, 2, claims.recipient, "claims.recipient_address");
    writeUint(words, 3, claims.reqId, MAX_UINT256, "claims.req_id");
    writeUint(words, 4, claims.amount, MAX_UINT256, "claims.amount");
    writeAddress(words, 5, claims.asset, "claims.asset_address");
    writeUint(words, 6, claims.timestamp, MAX_UINT64, "claims.timestamp");
    if (claims.version === 2) {
      const policy = claims.policy;
      const field = "claims.validation_policy";
      if (typeof policy !== "object" || policy === null)
        throw new WireError(field, "is required for version 2");
      writeAddress(words, 7, policy.registry, `${field}.validation_registry_address`);
      writeAddress(words, 8, policy.validator, `${field}.validator_address`);
      writeUint(words, 9, policy.agentId, MAX_UINT256, `${field}.validator_agent_id`);
      writeUint(words, 10, policy.minScore, BigInt(MAX_UINT8), `${field}.min_validation_score`);
      writeBytes32(words, 11, policy.jobHash, `${field}.job_hash`);
      if (typeof policy.tag !== "string")
        throw new WireError(`${field}.required_validation_tag`, "must be a string");
      // EIP-712 encodes a dynamic `string` as keccak256 of its UTF-8 bytes.
      words.set(keccak256Bytes(Buffer.from(policy.tag, "utf8")), 12 * WORD);
      writeUint(words, 13, policy.deadline, MAX_UINT64, `${field}.validation_deadline`);
    }
    return keccak256Bytes(words);
  }

  /** The EIP-712 digest as 32 bytes (what `eip712` signatures sign). */
  digestBytes(claims: GuaranteeClaims): Uint8Array {
    const structHash = this.structHash(claims);
    // Copy the fixed prefix so that the hasher stays reentrant-safe and shareable.
    const input = Buffer.from(this.digestInput);
    input.set(structHash, 2 + WORD);
    return keccak256Bytes(input);
  }

  /** The EIP-712 digest, 0x-hex; equals ethers' `TypedDataEncoder.hash`. */
  digest(claims: GuaranteeClaims): string {
    return toHex(this.digestBytes(claims));
  }

  /** The 32 bytes a signature of `scheme` signs: the EIP-712 digest, or its EIP-191 message hash. */
  signedHash(claims: GuaranteeClaims, scheme: SigningScheme): Uint8Array {
    const digest = this.digestBytes(claims);
    if (scheme === "eip712") return digest;
    if (scheme === "eip191") return keccak256Bytes(Buffer.concat([EIP191_PREFIX, digest]));
    throw new WireError(
      "scheme",
      `must be "eip712" or "eip191", got ${JSON.stringify(scheme) ?? "undefined"}`,
    );
  }
}

/** Hashers are cached by the domain's content (never by object identity, which could be mutated). */
const HASHER_CACHE_LIMIT = 64;
const hasherCache = new Map<string, GuaranteeHasher>();

function domainCacheKey(domain: GuaranteeDomainParams): string {
  const chainId =
    typeof domain.chainId === "bigint" || typeof domain.chainId === "number" ? domain.chainId : NaN;
  const contract = typeof domain.verifyingContract === "string" ? domain.verifyingContract.toLowerCase() : "";
  return JSON.stringify([domain.name, domain.version, chainId.toString(), contract]);
}

/** The hasher itself, or a cached one for a plain domain. */
export function guaranteeHasher(domain: GuaranteeDomainParams | GuaranteeHasher): GuaranteeHasher {
  if (domain instanceof GuaranteeHasher) return domain;
  const key = domainCacheKey(domain);
  let hasher = hasherCache.get(key);
  if (hasher === undefined) {
    hasher = new GuaranteeHasher(domain);
    if (hasherCache.size >= HASHER_CACHE_LIMIT) hasherCache.clear();
    hasherCache.set(key, hasher);
  }
  return hasher;
}

/** The EIP-712 digest of the claims under the domain, 0x-hex. */
export function guaranteeDigest(
  domain: GuaranteeDomainParams | GuaranteeHasher,
  claims: GuaranteeClaims,
): string {
  return guaranteeHasher(domain).digest(claims);
}

/** What {@link signGuarantee} needs from a wallet; ethers' `Wallet` and `JsonRpcSigner` fit. */
export interface GuaranteeSigner {
  signTypedData(
    domain: TypedDataDomain,
    types: Record<string, TypedDataField[]>,
    value: Record<string, unknown>,
  ): Promise<string>;
  signMessage(message: string | Uint8Array): Promise<string>;
}

/**
 * The private key of a wallet that holds it in process (ethers' `Wallet` / `BaseWallet`:
 * `signingKey.privateKey`), or null (a JSON-RPC or hardware signer, anything else).
 */
function inProcessPrivateKey(wallet: GuaranteeSigner): Uint8Array | null {
  const key = (wallet as { signingKey?: { privateKey?: unknown } }).signingKey?.privateKey;
  if (typeof key !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(key)) return null;
  return Buffer.from(key.slice(2), "hex");
}

/**
 * Signs the claims as the payer. `eip712` signs the typed data; `eip191` is `personal_sign` of
 * the 32 raw bytes of the same digest (docs/protocol.md), for wallets without typed-data support.
 *
 * A wallet whose key is in process (ethers' `Wallet`) is not asked: the digest is hashed here and
 * signed with native libsecp256k1 (≈ 0.1 ms against ≈ 1.3 ms for ethers' typed-data encoder and
 * JavaScript signer). Both sign deterministically (RFC 6979) in low-s form, so the signature is the
 * one the wallet would have returned, byte for byte (test/sdk/eip712.test.ts).
 */
export async function signGuarantee(
  wallet: GuaranteeSigner,
  domain: GuaranteeDomainParams | GuaranteeHasher,
  claims: GuaranteeClaims,
  scheme: SigningScheme,
): Promise<string> {
  const hasher = guaranteeHasher(domain);
  const key = scheme === "eip712" || scheme === "eip191" ? inProcessPrivateKey(wallet) : null;
  if (key !== null) {
    const { signature, recid } = secp256k1.ecdsaSign(hasher.signedHash(claims, scheme), key);
    return `0x${Buffer.from(signature).toString("hex")}${(27 + recid).toString(16)}`;
  }
  if (scheme === "eip712") {
    return wallet.signTypedData(
      hasher.domain as TypedDataDomain,
      guaranteeTypedDataTypes(claims.version),
      guaranteeTypedDataMessage(claims),
    );
  }
  if (scheme === "eip191") return wallet.signMessage(getBytes(hasher.digest(claims)));
  throw new WireError("scheme", `must be "eip712" or "eip191", got ${JSON.stringify(scheme) ?? "undefined"}`);
}

/** secp256k1 group order n, and n/2: s above it is the malleable twin of a low-s signature. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
export const SECP256K1_HALF_N = SECP256K1_N >> 1n;

/**
 * A secp256k1 private key (Core's operator key, the facilitator's key): `0x` and 32 bytes of hex, a scalar
 * in [1, n − 1] (ethers does not range-check it); lower case. The message never echoes the value: it is a
 * secret.
 */
export function parsePrivateKey(raw: unknown): string {
  if (typeof raw !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(raw.trim())) {
    throw new Error("must be a 0x-prefixed 32-byte hex secp256k1 private key");
  }
  const key = raw.trim().toLowerCase();
  const scalar = BigInt(key);
  if (scalar === 0n || scalar >= SECP256K1_N) throw new Error("is not a valid secp256k1 private key");
  return key;
}
const SIGNATURE_HEX = /^0[xX][0-9a-fA-F]*$/;
const SIGNATURE_BYTES = 65;

export interface ParsedSignature {
  r: bigint;
  s: bigint;
  /** 0 or 1 (from v ∈ {27, 28, 0, 1}). */
  recoveryId: 0 | 1;
  /** r ‖ s, the input libsecp256k1 takes. */
  compact: Uint8Array;
}

/**
 * Checks a 65-byte r ‖ s ‖ v signature before recovery. Rejects r or s of zero or not below n,
 * and high-s (s > n/2): each valid signature has a twin (n − s, flipped v) and accepting both
 * would give one authorisation two encodings.
 */
export function parseGuaranteeSignature(signature: string | Uint8Array): ParsedSignature {
  let bytes: Uint8Array;
  if (typeof signature === "string") {
    if (!SIGNATURE_HEX.test(signature) || signature.length % 2 !== 0) {
      throw new SignatureError("signature must be 0x-prefixed hex of whole bytes");
    }
    bytes = Buffer.from(signature.slice(2), "hex");
  } else if (signature instanceof Uint8Array) {
    bytes = signature;
  } else {
    throw new SignatureError(`signature must be a hex string, got ${describeType(signature)}`);
  }
  if (bytes.length !== SIGNATURE_BYTES) {
    throw new SignatureError(`signature must be ${SIGNATURE_BYTES} bytes (r ‖ s ‖ v), got ${bytes.length}`);
  }
  const compact = bytes.slice(0, 64);
  const r = BigInt(toHex(compact.subarray(0, 32)));
  const s = BigInt(toHex(compact.subarray(32, 64)));
  const v = bytes[64];
  if (r === 0n) throw new SignatureError("signature r is zero");
  if (r >= SECP256K1_N) throw new SignatureError("signature r is not below the secp256k1 order");
  if (s === 0n) throw new SignatureError("signature s is zero");
  if (s >= SECP256K1_N) throw new SignatureError("signature s is not below the secp256k1 order");
  if (s > SECP256K1_HALF_N) {
    throw new SignatureError(
      "signature s is in the upper half of the order (high-s); use the low-s form n − s",
    );
  }
  let recoveryId: 0 | 1;
  if (v === 27 || v === 0) recoveryId = 0;
  else if (v === 28 || v === 1) recoveryId = 1;
  else throw new SignatureError(`signature v must be 27, 28, 0 or 1, got ${v}`);
  return { r, s, recoveryId, compact };
}

/** Recovers the signing address (lower-case hex, no checksum) from a 32-byte hash. */
function recoverAddressLower(hash: Uint8Array, signature: string | Uint8Array): string {
  const parsed = parseGuaranteeSignature(signature);
  let publicKey: Uint8Array;
  try {
    publicKey = secp256k1.ecdsaRecover(parsed.compact, parsed.recoveryId, hash, false);
  } catch {
    // r is not the x-coordinate of a curve point for this recovery id.
    throw new SignatureError("signature does not recover to a public key");
  }
  // Address = last 20 bytes of keccak256 of the 64-byte uncompressed key (without the 0x04 tag).
  return toHex(keccak256Bytes(publicKey.subarray(1)).subarray(12));
}

/** The payer address (EIP-55) that signed the claims under the scheme; throws SignatureError if none. */
export function recoverGuaranteeSigner(
  domain: GuaranteeDomainParams | GuaranteeHasher,
  claims: GuaranteeClaims,
  signature: string | Uint8Array,
  scheme: SigningScheme,
): string {
  return getAddress(recoverGuaranteeSignerLowerCase(domain, claims, signature, scheme));
}

/**
 * {@link recoverGuaranteeSigner} without the EIP-55 checksum: the address in lower case. The
 * checksum is one more keccak in JS (≈ 35 µs here) that a hot path comparing addresses
 * case-insensitively does not need; it can checksum only when it shows the address to someone.
 */
export function recoverGuaranteeSignerLowerCase(
  domain: GuaranteeDomainParams | GuaranteeHasher,
  claims: GuaranteeClaims,
  signature: string | Uint8Array,
  scheme: SigningScheme,
): string {
  return recoverAddressLower(guaranteeHasher(domain).signedHash(claims, scheme), signature);
}

/**
 * Throws SignatureError unless the signature is a valid low-s signature of the claims by
 * `expectedSigner` (default: the claims' `user_address`). Addresses compare case-insensitively.
 */
export function verifyGuaranteeSignature(
  domain: GuaranteeDomainParams | GuaranteeHasher,
  claims: GuaranteeClaims,
  signature: string | Uint8Array,
  scheme: SigningScheme,
  expectedSigner: string = claims.user,
): void {
  const recovered = recoverAddressLower(guaranteeHasher(domain).signedHash(claims, scheme), signature);
  if (typeof expectedSigner !== "string" || !sameAddress(recovered, expectedSigner)) {
    throw new SignatureError("signature does not recover to user_address");
  }
}

/**
 * The on-chain code of a signing scheme: `GuaranteeSignature.Scheme` in
 * contracts/lib/GuaranteeSignature.sol (a uint8 in the ABI): `eip712` = 0, `eip191` = 1.
 */
export const SIGNING_SCHEME_CODES: Readonly<Record<SigningScheme, 0 | 1>> = Object.freeze({
  eip712: 0,
  eip191: 1,
});

/** A payer signature as contracts take it: the scheme's uint8 code and the signature bytes (0x hex). */
export interface PayerSignatureArgs {
  scheme: 0 | 1;
  signature: string;
}

/**
 * The contract arguments of a payer signature (`GuaranteeSignature.Scheme scheme, bytes signature`).
 * Checks the scheme and that the signature is non-empty whole-byte hex; the contract checks the rest
 * (an ERC-1271 wallet's signature may have any length).
 */
export function toPayerSignatureArgs(scheme: SigningScheme, signature: string): PayerSignatureArgs {
  const code = (SIGNING_SCHEME_CODES as Record<string, 0 | 1 | undefined>)[scheme];
  if (code === undefined) {
    throw new WireError(
      "scheme",
      `must be "eip712" or "eip191", got ${JSON.stringify(scheme) ?? "undefined"}`,
    );
  }
  if (
    typeof signature !== "string" ||
    !SIGNATURE_HEX.test(signature) ||
    signature.length % 2 !== 0 ||
    signature.length === 2
  ) {
    throw new WireError("signature", "must be non-empty 0x-prefixed hex of whole bytes");
  }
  return { scheme: code, signature: signature.toLowerCase() };
}
