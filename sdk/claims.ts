/**
 * Guarantee claims: the wire form (snake_case JSON, interface spec "Guarantee
 * claims") and the parsed form the rest of the code works with (camelCase,
 * bigint amounts, checksummed addresses). docs/protocol.md, "Wire values".
 */
import type { Claims } from "./api-guarantees";
import { WireError } from "./errors";
import {
  type GuaranteeVersion,
  ZERO_ADDRESS,
  formatUint,
  parseAddress,
  parseBytes32,
  parseHexBytes,
  parseObject,
  parseSafeInteger,
  parseString,
  parseTimestamp,
  parseUint256,
  parseVersion,
} from "./wire";

export type SigningScheme = "eip712" | "eip191";
export const SIGNING_SCHEMES: readonly SigningScheme[] = ["eip712", "eip191"];

/** Scores of an ERC-8004 validation response run from 0 to 100. */
export const MAX_VALIDATION_SCORE = 100;
/** Upper bound on the UTF-8 length of a validation tag, to keep certificates small. */
export const MAX_VALIDATION_TAG_BYTES = 256;
/** An EOA's secp256k1 signature r ‖ s ‖ v. */
export const SIGNATURE_BYTES = 65;
/**
 * Longest payer signature accepted on the wire. An EOA signs 65 bytes; a contract wallet (ERC-1271)
 * defines its own format (a multisig concatenates its owners' signatures), so the wire takes any
 * length from 1 byte up to this bound. 2,048 bytes (e.g. 31 owners' 65-byte signatures) keeps an
 * x402 payment header (base64 of the JSON payload) well under Node's 16 KiB header limit.
 */
export const MAX_PAYER_SIGNATURE_BYTES = 2048;

/** V2 validation policy as signed by the payer (wire form). */
export interface WireValidationPolicy {
  validation_registry_address: string;
  validator_address: string;
  /** ERC-8004 agent id of the validator: decimal or 0x string. */
  validator_agent_id: string;
  /** Minimum response (0–100) the validator must publish. */
  min_validation_score: number;
  /** 32-byte hash of the job whose outcome is validated. */
  job_hash: string;
  required_validation_tag: string;
  /** Unix seconds by which a passing response must be published. */
  validation_deadline: number;
  /** Optional; when present it must equal the deployment's chain id. */
  validation_chain_id?: number;
  /** Optional; when present it must equal the derived validation request hash (docs/protocol.md, "Identities"). */
  validation_request_hash?: string;
}

/** Guarantee claims as they travel in JSON. */
export interface WireClaims {
  version: GuaranteeVersion;
  user_address: string;
  recipient_address: string;
  req_id: string;
  amount: string;
  asset_address: string;
  timestamp: number;
  validation_policy?: WireValidationPolicy | null;
}

/** The body of `POST /core/guarantees`. */
export interface WireSignedGuarantee {
  claims: WireClaims;
  signature: string;
  scheme: SigningScheme;
}

export interface ValidationPolicy {
  registry: string;
  validator: string;
  agentId: bigint;
  minScore: number;
  jobHash: string;
  tag: string;
  deadline: number;
  /** Integrity fields carried from the wire when the payer supplied them; checked by Core. */
  chainId?: number;
  requestHash?: string;
}

interface ClaimsFields {
  user: string;
  recipient: string;
  reqId: bigint;
  amount: bigint;
  asset: string;
  timestamp: number;
}

export interface GuaranteeClaimsV1 extends ClaimsFields {
  version: 1;
}

export interface GuaranteeClaimsV2 extends ClaimsFields {
  version: 2;
  policy: ValidationPolicy;
}

export type GuaranteeClaims = GuaranteeClaimsV1 | GuaranteeClaimsV2;

export interface SignedGuarantee {
  claims: GuaranteeClaims;
  /**
   * The payer's signature, lower-case hex: 65 bytes r ‖ s ‖ v for an EOA, any length up to
   * {@link MAX_PAYER_SIGNATURE_BYTES} for a contract wallet (whatever its `isValidSignature` accepts).
   */
  signature: string;
  scheme: SigningScheme;
}

/** Payer and recipient can never be the zero address: money sent there is burnt. */
function parseNonZeroAddress(value: unknown, field: string): string {
  const address = parseAddress(value, field);
  if (address === ZERO_ADDRESS) throw new WireError(field, "must not be the zero address");
  return address;
}

/** Parses the `validation_policy` object of V2 claims. */
export function parseValidationPolicy(value: unknown, field = "validation_policy"): ValidationPolicy {
  const wire = parseObject(value, field);
  const policy: ValidationPolicy = {
    registry: parseAddress(wire.validation_registry_address, `${field}.validation_registry_address`),
    validator: parseAddress(wire.validator_address, `${field}.validator_address`),
    agentId: parseUint256(wire.validator_agent_id, `${field}.validator_agent_id`, { allowZero: true }),
    minScore: parseSafeInteger(
      wire.min_validation_score,
      `${field}.min_validation_score`,
      MAX_VALIDATION_SCORE,
    ),
    jobHash: parseBytes32(wire.job_hash, `${field}.job_hash`),
    tag: parseString(
      wire.required_validation_tag,
      `${field}.required_validation_tag`,
      MAX_VALIDATION_TAG_BYTES,
    ),
    deadline: parseTimestamp(wire.validation_deadline, `${field}.validation_deadline`),
  };
  if (wire.validation_chain_id !== undefined) {
    policy.chainId = parseSafeInteger(wire.validation_chain_id, `${field}.validation_chain_id`);
  }
  if (wire.validation_request_hash !== undefined) {
    policy.requestHash = parseBytes32(wire.validation_request_hash, `${field}.validation_request_hash`);
  }
  return policy;
}

/** Parses a `claims` object (any accepted spelling) into {@link GuaranteeClaims}. */
export function parseClaims(value: unknown, field = "claims"): GuaranteeClaims {
  const wire = parseObject(value, field);
  const version = parseVersion(wire.version, `${field}.version`);
  const fields: ClaimsFields = {
    user: parseNonZeroAddress(wire.user_address, `${field}.user_address`),
    recipient: parseNonZeroAddress(wire.recipient_address, `${field}.recipient_address`),
    reqId: parseUint256(wire.req_id, `${field}.req_id`, { allowZero: true }),
    amount: parseUint256(wire.amount, `${field}.amount`),
    asset: parseAddress(wire.asset_address, `${field}.asset_address`),
    timestamp: parseTimestamp(wire.timestamp, `${field}.timestamp`),
  };
  const policyValue = wire.validation_policy;
  if (version === 1) {
    if (policyValue !== undefined && policyValue !== null) {
      throw new WireError(`${field}.validation_policy`, "must be null or absent for version 1");
    }
    return { version, ...fields };
  }
  if (policyValue === undefined || policyValue === null) {
    throw new WireError(`${field}.validation_policy`, "is required for version 2");
  }
  return { version, ...fields, policy: parseValidationPolicy(policyValue, `${field}.validation_policy`) };
}

export function parseSigningScheme(value: unknown, field = "scheme"): SigningScheme {
  if (value === "eip712" || value === "eip191") return value;
  throw new WireError(field, `must be "eip712" or "eip191", got ${JSON.stringify(value) ?? "undefined"}`);
}

/**
 * The wire parser of a payer signature (the one definition Core, the facilitator and the clients use):
 * 0x-prefixed hex of 1 to {@link MAX_PAYER_SIGNATURE_BYTES} whole bytes, returned in lower case. Its
 * length is not fixed at 65 so that contract wallets (ERC-1271) can pay; whether the bytes are an EOA's
 * r ‖ s ‖ v or a wallet's own format is decided by the checks in eip712.ts and on chain.
 */
export function parseSignatureHex(value: unknown, field = "signature"): string {
  const hex = parseHexBytes(value, field);
  const length = (hex.length - 2) / 2;
  if (length === 0) throw new WireError(field, "must not be empty");
  if (length > MAX_PAYER_SIGNATURE_BYTES) {
    throw new WireError(field, `must be at most ${MAX_PAYER_SIGNATURE_BYTES} bytes, got ${length}`);
  }
  return hex;
}

/** Parses the signed request body of `POST /core/guarantees`. */
export function parseSignedGuarantee(value: unknown, field?: string): SignedGuarantee {
  const prefix = field ? `${field}.` : "";
  const body = parseObject(value, field ?? "body");
  return {
    claims: parseClaims(body.claims, `${prefix}claims`),
    signature: parseSignatureHex(body.signature, `${prefix}signature`),
    scheme: parseSigningScheme(body.scheme, `${prefix}scheme`),
  };
}

export function toWireValidationPolicy(policy: ValidationPolicy): WireValidationPolicy {
  const wire: WireValidationPolicy = {
    validation_registry_address: policy.registry,
    validator_address: policy.validator,
    validator_agent_id: formatUint(policy.agentId),
    min_validation_score: policy.minScore,
    job_hash: policy.jobHash,
    required_validation_tag: policy.tag,
    validation_deadline: policy.deadline,
  };
  if (policy.chainId !== undefined) wire.validation_chain_id = policy.chainId;
  if (policy.requestHash !== undefined) wire.validation_request_hash = policy.requestHash;
  return wire;
}

/** Canonical wire form: numeric version, checksummed addresses, decimal amounts. */
/** The wire form Core answers with (`claims` of a guarantee read: the policy always present, null for V1). */
export function toWireClaims(claims: GuaranteeClaims): Claims {
  return {
    version: claims.version,
    user_address: claims.user,
    recipient_address: claims.recipient,
    req_id: formatUint(claims.reqId),
    amount: formatUint(claims.amount),
    asset_address: claims.asset,
    timestamp: claims.timestamp,
    validation_policy: claims.version === 2 ? toWireValidationPolicy(claims.policy) : null,
  };
}

export function toWireSignedGuarantee(signed: SignedGuarantee): WireSignedGuarantee {
  return { claims: toWireClaims(signed.claims), signature: signed.signature, scheme: signed.scheme };
}
