/**
 * Certificate claims codec (docs/protocol.md, "Certificates"). Core signs these bytes with
 * BLS; the Vault decodes the very same layout on chain (CertificateCodec.sol),
 * so this file is the one TypeScript definition of it:
 *
 *   claims = abi.encode(uint64 version, bytes32 domain, bytes32 guaranteeId, address user,
 *                       address recipient, uint256 reqId, uint256 amount, address asset,
 *                       uint64 timestamp, bytes policy)
 *   policy = 0x (V1) | abi.encode(address registry, address validator, uint256 agentId,
 *                                 uint8 minScore, bytes32 jobHash, string tag, uint64 deadline) (V2)
 */
import { AbiCoder, getBytes, hexlify } from "ethers";
import { toHex, WORD_BYTES, writeAddress, writeBytes32, writeUint } from "./abi-words";
import { type BlsSigner, type Eip2537G1Point, blsVerify, SIGNATURE_LENGTH, signatureToEip2537 } from "./bls";
import { MAX_VALIDATION_SCORE, MAX_VALIDATION_TAG_BYTES } from "./claims";
import type { GuaranteeClaims, SigningScheme, ValidationPolicy } from "./claims";
import { toPayerSignatureArgs } from "./eip712";
import { WireError } from "./errors";
import { type Deployment, certificateDomain, guaranteeId } from "./ids";
import { parseHexBytes, parseObject } from "./wire";

const abi = AbiCoder.defaultAbiCoder();

/** ABI types of the certificate claims tuple, in order. */
export const CERTIFICATE_CLAIMS_TYPES: readonly string[] = [
  "uint64", // version
  "bytes32", // domain
  "bytes32", // guaranteeId
  "address", // user
  "address", // recipient
  "uint256", // reqId
  "uint256", // amount
  "address", // asset
  "uint64", // timestamp
  "bytes", // policy
];

/** ABI types of the V2 policy tuple carried in the claims' `policy` bytes, in order. */
export const CERTIFICATE_POLICY_TYPES: readonly string[] = [
  "address", // registry
  "address", // validator
  "uint256", // agentId
  "uint8", // minScore
  "bytes32", // jobHash
  "string", // tag
  "uint64", // deadline
];

/** A BLS12-381 G1 signature, compressed (docs/protocol.md, "Certificates"). */
export const CERTIFICATE_SIGNATURE_BYTES = SIGNATURE_LENGTH;
/** V1 certificates carry no policy. */
const EMPTY_POLICY_HEX = "0x";
const EMPTY_POLICY = Buffer.alloc(0);

/** The BLS certificate Core returns (interface spec "BLS certificate"): both fields lower-case hex. */
export interface Certificate {
  /** ABI-encoded certificate claims (the BLS message). */
  claims: string;
  /** 48-byte compressed G1 BLS signature over `claims`. */
  signature: string;
}

/** Certificate claims split back into what they bind. */
export interface DecodedCertificateClaims {
  version: 1 | 2;
  /** Certificate domain (`active_guarantee_domain_separator`), lower-case hex. */
  domain: string;
  /** Guarantee identity (docs/protocol.md, "Identities"), lower-case hex. */
  guaranteeId: string;
  claims: GuaranteeClaims;
}

/** What the claims are bound to besides themselves: the deployment's domain and the guarantee's id. */
export interface CertificateBinding {
  /** Certificate domain (`active_guarantee_domain_separator`, {@link certificateDomain}). */
  domain: string;
  /** Guarantee identity ({@link guaranteeId}). */
  guaranteeId: string;
}

const CLAIM_HEAD_WORDS = 10;
const POLICY_HEAD_WORDS = 7;
const UINT8_BITS = 8;
const UINT64_BITS = 64;

/** abi.encode(registry, validator, agentId, minScore, jobHash, tag, deadline): a whole number of words. */
function encodePolicy(policy: ValidationPolicy): Buffer {
  const tag = Buffer.from(policy.tag, "utf8");
  const tagWords = Math.ceil(tag.length / WORD_BYTES);
  const buffer = Buffer.alloc((POLICY_HEAD_WORDS + 1 + tagWords) * WORD_BYTES);
  writeAddress(buffer, 0, policy.registry);
  writeAddress(buffer, 1, policy.validator);
  writeUint(buffer, 2, policy.agentId);
  writeUint(buffer, 3, policy.minScore, UINT8_BITS);
  writeBytes32(buffer, 4, policy.jobHash);
  writeUint(buffer, 5, POLICY_HEAD_WORDS * WORD_BYTES); // offset of `tag`
  writeUint(buffer, 6, policy.deadline, UINT64_BITS);
  writeUint(buffer, 7, tag.length);
  tag.copy(buffer, (POLICY_HEAD_WORDS + 1) * WORD_BYTES);
  return buffer;
}

/** abi.encode of the claims tuple (layout at the top of this file), word by word (sdk/abi-words.ts). */
function encodeBound(claims: GuaranteeClaims, binding: CertificateBinding): string {
  const policy = claims.version === 2 ? encodePolicy(claims.policy) : EMPTY_POLICY;
  const buffer = Buffer.alloc((CLAIM_HEAD_WORDS + 1) * WORD_BYTES + policy.length);
  writeUint(buffer, 0, claims.version, UINT64_BITS);
  writeBytes32(buffer, 1, binding.domain);
  writeBytes32(buffer, 2, binding.guaranteeId);
  writeAddress(buffer, 3, claims.user);
  writeAddress(buffer, 4, claims.recipient);
  writeUint(buffer, 5, claims.reqId);
  writeUint(buffer, 6, claims.amount);
  writeAddress(buffer, 7, claims.asset);
  writeUint(buffer, 8, claims.timestamp, UINT64_BITS);
  writeUint(buffer, 9, CLAIM_HEAD_WORDS * WORD_BYTES); // offset of `policy`
  writeUint(buffer, 10, policy.length);
  policy.copy(buffer, (CLAIM_HEAD_WORDS + 1) * WORD_BYTES);
  return toHex(buffer);
}

/**
 * The bytes Core signs for `claims`, as lower-case 0x hex: the one encoder of
 * certificate claims. Given a deployment, the domain and guarantee id are
 * derived from it; hot paths that already hold both (Core computes the
 * domain once and the id before its duplicate check) pass a
 * {@link CertificateBinding} instead. Throws a RangeError for a value that
 * does not fit its ABI type (parsed claims always fit).
 */
export function encodeCertificateClaims(
  claims: GuaranteeClaims,
  target: Deployment | CertificateBinding,
): string {
  const binding =
    "guaranteeId" in target
      ? target
      : { domain: certificateDomain(target), guaranteeId: guaranteeId(target, claims.user, claims.reqId) };
  return encodeBound(claims, binding);
}

/**
 * ABI-decodes `hex` into a plain array, or returns null. ethers defers some
 * decoding errors (e.g. dirty address padding) until a field is read, so
 * every field is read here, inside the guard.
 */
function abiDecode(types: readonly string[], hex: string): unknown[] | null {
  try {
    const result = abi.decode(types, hex);
    return types.map((_, i) => result[i] as unknown);
  } catch {
    return null;
  }
}

/** A uint64 from the ABI decoder that must also be a safe JS integer (timestamps, deadlines). */
function toSafeInteger(value: bigint, field: string, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new WireError(field, `${what} is out of range`);
  return Number(value);
}

function decodePolicy(policyHex: string, field: string): ValidationPolicy {
  const fields = abiDecode(CERTIFICATE_POLICY_TYPES, policyHex);
  if (fields === null) throw new WireError(field, "V2 policy is not a valid ABI-encoded validation policy");
  const minScore = Number(fields[3] as bigint);
  if (minScore > MAX_VALIDATION_SCORE) {
    throw new WireError(field, `policy min score must be at most ${MAX_VALIDATION_SCORE}`);
  }
  const tag = fields[5] as string;
  if (Buffer.byteLength(tag, "utf8") > MAX_VALIDATION_TAG_BYTES) {
    throw new WireError(field, `policy tag must be at most ${MAX_VALIDATION_TAG_BYTES} bytes`);
  }
  return {
    registry: fields[0] as string,
    validator: fields[1] as string,
    agentId: fields[2] as bigint,
    minScore,
    jobHash: fields[4] as string,
    tag,
    deadline: toSafeInteger(fields[6] as bigint, field, "policy deadline"),
  };
}

/**
 * Decodes certificate claims strictly: version 1 or 2, empty policy for V1, a
 * well-formed policy for V2, the same value bounds as wire claims, and only
 * the canonical encoding (re-encoding must give back the input bytes, so no
 * dirty padding, odd offsets or trailing data slip through).
 */
export function decodeCertificateClaims(
  hex: unknown,
  field = "certificate.claims",
): DecodedCertificateClaims {
  const bytes = parseHexBytes(hex, field);
  if (bytes.length === 2) throw new WireError(field, "must not be empty");
  const fields = abiDecode(CERTIFICATE_CLAIMS_TYPES, bytes);
  if (fields === null) throw new WireError(field, "is not a valid ABI encoding of certificate claims");
  const rawVersion = fields[0] as bigint;
  if (rawVersion !== 1n && rawVersion !== 2n) {
    throw new WireError(field, `version must be 1 or 2, got ${rawVersion}`);
  }
  const version = Number(rawVersion) as 1 | 2;
  const amount = fields[6] as bigint;
  if (amount === 0n) throw new WireError(field, "amount must be greater than zero");
  const common = {
    user: fields[3] as string,
    recipient: fields[4] as string,
    reqId: fields[5] as bigint,
    amount,
    asset: fields[7] as string,
    timestamp: toSafeInteger(fields[8] as bigint, field, "timestamp"),
  };
  const policyHex = fields[9] as string;
  let claims: GuaranteeClaims;
  if (version === 1) {
    if (policyHex !== EMPTY_POLICY_HEX)
      throw new WireError(field, "a version 1 certificate must carry no policy");
    claims = { version, ...common };
  } else {
    if (policyHex === EMPTY_POLICY_HEX)
      throw new WireError(field, "a version 2 certificate must carry a policy");
    claims = { version, ...common, policy: decodePolicy(policyHex, field) };
  }
  const domain = fields[1] as string;
  const id = fields[2] as string;
  if (encodeBound(claims, { domain, guaranteeId: id }) !== bytes) {
    throw new WireError(field, "is not the canonical ABI encoding of its claims");
  }
  return { version, domain, guaranteeId: id, claims };
}

/**
 * True when the certificate binds exactly `claims` in `deployment`'s domain:
 * same domain, same guarantee id, same version, parties, request, amount,
 * asset, timestamp and (V2) policy. The policy's optional integrity fields
 * (`chainId`, `requestHash`) are not part of the certificate and are ignored.
 */
export function certificateMatchesRequest(
  decoded: DecodedCertificateClaims,
  claims: GuaranteeClaims,
  deployment: Deployment,
): boolean {
  const expected = encodeCertificateClaims(claims, deployment);
  return encodeBound(decoded.claims, decoded) === expected;
}

/** Parses a `{claims, signature}` certificate: non-empty claims hex and a 48-byte signature. */
export function parseCertificate(value: unknown, field = "certificate"): Certificate {
  const wire = parseObject(value, field);
  const claims = parseHexBytes(wire.claims, `${field}.claims`);
  if (claims.length === 2) throw new WireError(`${field}.claims`, "must not be empty");
  return {
    claims,
    signature: parseHexBytes(wire.signature, `${field}.signature`, CERTIFICATE_SIGNATURE_BYTES),
  };
}

/**
 * Core's side: encode the claims for `target` (a deployment or a precomputed binding) and sign the bytes with the
 * operator's BLS key (message = the raw claims bytes, tag CERTIFICATE_DST).
 */
export function signCertificate(
  signer: BlsSigner,
  claims: GuaranteeClaims,
  target: Deployment | CertificateBinding,
): Certificate {
  const encoded = encodeCertificateClaims(claims, target);
  return { claims: encoded, signature: hexlify(signer.sign(getBytes(encoded))) };
}

/** True when `certificate.signature` is Core's BLS signature over `certificate.claims`. */
export function verifyCertificateSignature(publicKey: Uint8Array, certificate: Certificate): boolean {
  return blsVerify(publicKey, getBytes(certificate.claims), getBytes(certificate.signature));
}

/** The payer's own signature over a guarantee, as Core stores it (`scheme`, `signature` of the guarantee view). */
export interface PayerSignature {
  scheme: SigningScheme;
  /** 0x hex: 65 bytes r ‖ s ‖ v for an EOA; whatever its ERC-1271 wallet accepts for a contract payer. */
  signature: string;
}

/**
 * The arguments of `Vault.remunerate(bytes claims, BLS.G1Point signature, uint8 payerScheme, bytes
 * payerSignature)`, by name. docs/protocol.md ("Remunerating a V2 guarantee on chain") describes the
 * encoding for integrators in other languages.
 */
export interface RemunerateArgs {
  /** The certificate claims, unchanged (the BLS message). */
  claims: string;
  /** Core's BLS signature, decompressed to the EIP-2537 G1 point. */
  signature: Eip2537G1Point;
  /** `GuaranteeSignature.Scheme`: 0 = eip712, 1 = eip191 ({@link SIGNING_SCHEME_CODES}). */
  payerScheme: 0 | 1;
  /** The payer's signature bytes. */
  payerSignature: string;
}

/** The arguments of `Vault.remunerate` for a certificate Core returned and the payer's signature it was issued for. */
export function toRemunerateArgs(certificate: Certificate, payer: PayerSignature): RemunerateArgs {
  const { scheme, signature } = toPayerSignatureArgs(payer.scheme, payer.signature);
  return {
    claims: certificate.claims,
    signature: signatureToEip2537(getBytes(certificate.signature)),
    payerScheme: scheme,
    payerSignature: signature,
  };
}

/** {@link RemunerateArgs} as the positional argument list of `Vault.remunerate`, in ABI order. */
export function remunerateCallArgs(args: RemunerateArgs): [string, Eip2537G1Point, 0 | 1, string] {
  return [args.claims, args.signature, args.payerScheme, args.payerSignature];
}
