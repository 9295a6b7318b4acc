/**
 * x402 envelopes for the `svc-credit` scheme (interface spec: "x402 payment
 * payload", "Payment requirements", /verify, /settle, /supported).
 *
 * Shapes follow the reference x402 packages (`@x402/core`, coinbase/x402) so
 * that their clients and servers interoperate with ours:
 * - v1 payload `{x402Version: 1, scheme, network, payload}`; v2 payload
 *   `{x402Version: 2, accepted, payload, resource?, extensions?}` where
 *   `accepted` is the requirements entry the buyer chose.
 * - v1 requirements carry `maxAmountRequired`, v2 requirements `amount`; we
 *   accept either (or both when they agree) in both versions.
 * - Headers carry base64 of the UTF-8 JSON (standard alphabet, padded, when we
 *   emit; standard or URL-safe, padded or not, when we read).
 *
 * Parsers are strict: every problem is a {@link WireError} naming the field
 * path (e.g. `paymentPayload.payload.claims.amount`). Parsed requirements stay
 * in wire form (strings, checksummed addresses, decimal amounts) so they can be
 * echoed back verbatim; the guarantee inside a payload is parsed into
 * {@link SignedGuarantee} (bigints) and turned back into JSON on encoding.
 */
import type {
  PaymentPayload as X402PaymentPayload,
  PaymentPayloadV1 as X402PaymentPayloadV1,
  PaymentRequired as X402PaymentRequired,
  PaymentRequirements as X402PaymentRequirements,
  PaymentRequirementsV1 as X402PaymentRequirementsV1,
  ResourceInfo as X402ResourceInfo,
  SupportedKind as X402SupportedKind,
  SupportedResponse as X402SupportedResponse,
} from "@x402/core/types";
import { type Certificate, parseCertificate } from "./certificate";
import {
  type GuaranteeDomainParams,
  type GuaranteeTypedDataDomain,
  guaranteeTypedDataDomain,
} from "./eip712";
import {
  type SignedGuarantee,
  type ValidationPolicy,
  type WireSignedGuarantee,
  parseSignedGuarantee,
  parseValidationPolicy,
  toWireSignedGuarantee,
  toWireValidationPolicy,
} from "./claims";
import { WireError } from "./errors";
import {
  describeType,
  formatUint,
  parseAddress,
  parseNetwork,
  parseObject,
  parseSafeInteger,
  parseString,
  parseUint256,
  sameAddress,
} from "./wire";

/** The payment scheme id of this service, in payloads, requirements and supported kinds. */
export const SCHEME = "svc-credit";

export type X402Version = 1 | 2;
export const X402_VERSIONS: readonly X402Version[] = [1, 2];

/** Request header carrying the payment payload, x402 v1. */
export const X_PAYMENT_HEADER = "X-PAYMENT";
/** Request header carrying the payment payload, x402 v2. */
export const PAYMENT_SIGNATURE_HEADER = "PAYMENT-SIGNATURE";
/** Response header carrying the settlement result, x402 v1. */
export const X_PAYMENT_RESPONSE_HEADER = "X-PAYMENT-RESPONSE";
/** Response header carrying the settlement result, x402 v2. */
export const PAYMENT_RESPONSE_HEADER = "PAYMENT-RESPONSE";
/** 402 response header carrying the payment requirements, x402 v2 (v1 sends them as the body). */
export const PAYMENT_REQUIRED_HEADER = "PAYMENT-REQUIRED";

/** Largest header value we decode; a signed V2 guarantee is well under 2 KiB. */
export const MAX_HEADER_BYTES = 16 * 1024;
/** Bound on free-text pass-through fields (description, URLs, reasons). */
const MAX_TEXT_BYTES = 4096;
/** Bound on short identifiers (scheme, mime type). */
const MAX_IDENTIFIER_BYTES = 256;

/** Name of the request header that carries a payment for `version`. */
export function paymentHeaderName(version: X402Version): string {
  return version === 1 ? X_PAYMENT_HEADER : PAYMENT_SIGNATURE_HEADER;
}

/** Name of the response header that carries the settlement for `version`. */
export function paymentResponseHeaderName(version: X402Version): string {
  return version === 1 ? X_PAYMENT_RESPONSE_HEADER : PAYMENT_RESPONSE_HEADER;
}

// ---------------------------------------------------------------------------
// Payment requirements
// ---------------------------------------------------------------------------

/**
 * What a seller asks for (interface spec "Payment requirements"), normalised: x402's requirements of
 * either version (`@x402/core/types`), what `svc-credit` needs required and the rest optional. `scheme`
 * is any non-empty id (whether it is {@link SCHEME} is a verification outcome, not a parse error);
 * `payTo` and `asset` are EIP-55 checksummed (`asset` the zero address for ETH); the amount is `amount`
 * (v2 name) or `maxAmountRequired` (v1 name), a decimal in base units.
 */
export type PaymentRequirements = Pick<X402PaymentRequirements, "scheme" | "payTo" | "asset"> &
  Partial<Pick<X402PaymentRequirements, "amount" | "maxTimeoutSeconds">> &
  Partial<Pick<X402PaymentRequirementsV1, "maxAmountRequired" | "resource" | "description" | "mimeType">> & {
    /** CAIP-2 `eip155:<chainId>` (x402's `Network` is any `<namespace>:<reference>`). */
    network: string;
    /** Scheme-specific extras; for V2 guarantees, the validation policy (see {@link policyFromExtra}). */
    extra?: Record<string, unknown> | null;
    /** v1 reference field, passed through untouched. */
    outputSchema?: Record<string, unknown> | null;
  };

function parseNonEmptyString(value: unknown, field: string, maxBytes: number): string {
  const text = parseString(value, field, maxBytes);
  if (text.length === 0) throw new WireError(field, "must not be empty");
  return text;
}

function parseNullableObject(value: unknown, field: string): Record<string, unknown> | null {
  return value === null ? null : parseObject(value, field);
}

/** Parses payment requirements; `field` prefixes error paths (e.g. `paymentRequirements`). */
export function parsePaymentRequirements(value: unknown, field = "paymentRequirements"): PaymentRequirements {
  const wire = parseObject(value, field);
  const scheme = parseNonEmptyString(wire.scheme, `${field}.scheme`, MAX_IDENTIFIER_BYTES);
  // parseNetwork accepts only the canonical spelling, so the string itself is kept.
  parseNetwork(wire.network, `${field}.network`);
  const parsed: PaymentRequirements = {
    scheme,
    network: wire.network as string,
    payTo: parseAddress(wire.payTo, `${field}.payTo`),
    asset: parseAddress(wire.asset, `${field}.asset`),
  };
  if (wire.maxAmountRequired !== undefined) {
    const amount = parseUint256(wire.maxAmountRequired, `${field}.maxAmountRequired`);
    parsed.maxAmountRequired = formatUint(amount);
  }
  if (wire.amount !== undefined) parsed.amount = formatUint(parseUint256(wire.amount, `${field}.amount`));
  if (
    parsed.amount !== undefined &&
    parsed.maxAmountRequired !== undefined &&
    parsed.amount !== parsed.maxAmountRequired
  ) {
    throw new WireError(`${field}.maxAmountRequired`, `must equal ${field}.amount when both are given`);
  }
  if (wire.extra !== undefined) {
    parsed.extra = parseNullableObject(wire.extra, `${field}.extra`);
    // Reject a malformed policy or domain here, where the error can still name the field.
    policyFromExtra(parsed.extra, `${field}.extra`);
    domainFromExtra(parsed.extra, `${field}.extra`);
  }
  if (wire.resource !== undefined) {
    parsed.resource = parseString(wire.resource, `${field}.resource`, MAX_TEXT_BYTES);
  }
  if (wire.description !== undefined) {
    parsed.description = parseString(wire.description, `${field}.description`, MAX_TEXT_BYTES);
  }
  if (wire.mimeType !== undefined) {
    parsed.mimeType = parseString(wire.mimeType, `${field}.mimeType`, MAX_IDENTIFIER_BYTES);
  }
  if (wire.maxTimeoutSeconds !== undefined) {
    parsed.maxTimeoutSeconds = parseSafeInteger(wire.maxTimeoutSeconds, `${field}.maxTimeoutSeconds`);
    if (parsed.maxTimeoutSeconds === 0) {
      throw new WireError(`${field}.maxTimeoutSeconds`, "must be greater than zero");
    }
  }
  if (wire.outputSchema !== undefined) {
    parsed.outputSchema = parseNullableObject(wire.outputSchema, `${field}.outputSchema`);
  }
  return parsed;
}

/** The amount the requirements ask for (`amount`, else `maxAmountRequired`), or undefined when neither is set. */
export function requiredAmount(requirements: PaymentRequirements): bigint | undefined {
  const amount = requirements.amount ?? requirements.maxAmountRequired;
  return amount === undefined ? undefined : BigInt(amount);
}

// ---------------------------------------------------------------------------
// V2 validation policy in `extra`
// ---------------------------------------------------------------------------

/**
 * The spec says V2 policy fields travel in `paymentRequirements.extra` but does
 * not name them. Decision: `extra` carries them flat under the SAME snake_case
 * names as `claims.validation_policy` (`validation_registry_address`,
 * `validator_address`, `validator_agent_id`, `min_validation_score`,
 * `job_hash`, `required_validation_tag`, `validation_deadline`, optionally
 * `validation_chain_id` and `validation_request_hash`), so a seller can copy
 * the policy object into `extra` and a buyer can copy it back into its claims.
 * Other keys in `extra` are left alone.
 */
export const POLICY_EXTRA_FIELDS: readonly string[] = [
  "validation_registry_address",
  "validator_address",
  "validator_agent_id",
  "min_validation_score",
  "job_hash",
  "required_validation_tag",
  "validation_deadline",
  "validation_chain_id",
  "validation_request_hash",
];

/**
 * The V2 validation policy carried in `extra`, or null when `extra` is absent
 * or carries none of the policy fields. A partial policy is an error naming
 * the first missing or malformed field.
 */
export function policyFromExtra(
  extra: unknown,
  field = "paymentRequirements.extra",
): ValidationPolicy | null {
  if (extra === undefined || extra === null) return null;
  const object = parseObject(extra, field);
  if (!POLICY_EXTRA_FIELDS.some((key) => object[key] !== undefined)) return null;
  return parseValidationPolicy(object, field);
}

/** `extra` for requirements that demand a V2 guarantee under `policy`, merged over `base`. */
export function extraFromPolicy(
  policy: ValidationPolicy,
  base: Record<string, unknown> = {},
): Record<string, unknown> {
  return { ...base, ...toWireValidationPolicy(policy) };
}

// ---------------------------------------------------------------------------
// Signing domain in `extra`
// ---------------------------------------------------------------------------

/**
 * Requirements built by the `svc-credit` server scheme (sdk/kits/x402-scheme) also
 * carry the EIP-712 domain the buyer signs under, flat in `extra` under the
 * SAME names as Core's `GET /core/public-params`: `contract_address` (the
 * Vault, `verifyingContract`), `chain_id` (JSON number), `eip712_name`,
 * `eip712_version`. The facilitator advertises them in its `/supported`
 * kinds' `extra`. A buyer never trusts them blindly: it signs only under a
 * domain it was configured with, and uses these to refuse a mismatch early.
 */
export const DOMAIN_EXTRA_FIELDS: readonly string[] = [
  "contract_address",
  "chain_id",
  "eip712_name",
  "eip712_version",
];

/** `extra` fields naming `domain` (see {@link DOMAIN_EXTRA_FIELDS}). */
export function extraFromDomain(domain: GuaranteeDomainParams): Record<string, unknown> {
  const checked = guaranteeTypedDataDomain(domain);
  if (checked.chainId > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new WireError("domain.chainId", "is too large for a JSON number");
  }
  return {
    contract_address: checked.verifyingContract,
    chain_id: Number(checked.chainId),
    eip712_name: checked.name,
    eip712_version: checked.version,
  };
}

/**
 * The signing domain carried in `extra`, or null when `extra` is absent or
 * carries none of the domain fields. A partial domain is an error naming the
 * first missing or malformed field.
 */
export function domainFromExtra(
  extra: unknown,
  field = "paymentRequirements.extra",
): GuaranteeTypedDataDomain | null {
  if (extra === undefined || extra === null) return null;
  const object = parseObject(extra, field);
  if (!DOMAIN_EXTRA_FIELDS.some((key) => object[key] !== undefined)) return null;
  const chainId = parseSafeInteger(object.chain_id, `${field}.chain_id`);
  if (chainId === 0) throw new WireError(`${field}.chain_id`, "must be greater than zero");
  return guaranteeTypedDataDomain({
    name: parseNonEmptyString(object.eip712_name, `${field}.eip712_name`, MAX_IDENTIFIER_BYTES),
    version: parseNonEmptyString(object.eip712_version, `${field}.eip712_version`, MAX_IDENTIFIER_BYTES),
    chainId,
    verifyingContract: parseAddress(object.contract_address, `${field}.contract_address`),
  });
}

/**
 * The first field (its `extra` name) in which two signing domains differ, or null when they are the same
 * domain: what a buyer (`domain_mismatch` before signing), a seller pinning its domain and the facilitator
 * (`domain_mismatch` in `/verify`) compare.
 */
export function domainDifference(
  a: GuaranteeTypedDataDomain,
  b: GuaranteeTypedDataDomain,
): "chain_id" | "contract_address" | "eip712_name" | "eip712_version" | null {
  if (a.chainId !== b.chainId) return "chain_id";
  if (!sameAddress(a.verifyingContract, b.verifyingContract)) return "contract_address";
  if (a.name !== b.name) return "eip712_name";
  if (a.version !== b.version) return "eip712_version";
  return null;
}

// ---------------------------------------------------------------------------
// Payment payloads
// ---------------------------------------------------------------------------

/** v2 description of the protected resource: x402's `ResourceInfo`. */
export type ResourceInfo = X402ResourceInfo;

/** x402 v1's payload with a signed guarantee as `payload` (`scheme` and `network` optional here). */
export type PaymentPayloadV1 = Pick<X402PaymentPayloadV1, "x402Version"> & {
  scheme?: string;
  network?: string;
  payload: SignedGuarantee;
};

/**
 * x402 v2's payload with a signed guarantee as `payload`, `accepted` the requirements entry the buyer chose
 * to pay. `scheme` and `network` are not in the reference v2 shape; accepted when present and then must
 * match `accepted`.
 */
export type PaymentPayloadV2 = Pick<X402PaymentPayload, "extensions"> & {
  x402Version: 2;
  scheme?: string;
  network?: string;
  accepted: PaymentRequirements;
  payload: SignedGuarantee;
  resource?: ResourceInfo;
};

export type PaymentPayload = PaymentPayloadV1 | PaymentPayloadV2;

/** JSON form of a payment payload (what travels in the payment header). */
export type WirePaymentPayload =
  | (Omit<PaymentPayloadV1, "payload"> & { payload: WireSignedGuarantee })
  | (Omit<PaymentPayloadV2, "payload"> & { payload: WireSignedGuarantee });

/** `x402Version` as a strict JSON number 1 or 2. */
export function parseX402Version(value: unknown, field = "x402Version"): X402Version {
  if (value === 1 || value === 2) return value;
  throw new WireError(field, `must be 1 or 2, got ${JSON.stringify(value) ?? "undefined"}`);
}

function parseResourceInfo(value: unknown, field: string): ResourceInfo {
  const wire = parseObject(value, field);
  const info: ResourceInfo = { url: parseNonEmptyString(wire.url, `${field}.url`, MAX_TEXT_BYTES) };
  if (wire.description !== undefined) {
    info.description = parseString(wire.description, `${field}.description`, MAX_TEXT_BYTES);
  }
  if (wire.mimeType !== undefined) {
    info.mimeType = parseString(wire.mimeType, `${field}.mimeType`, MAX_IDENTIFIER_BYTES);
  }
  return info;
}

/** Parses a payment payload of either x402 version. */
export function parsePaymentPayload(value: unknown, field = "paymentPayload"): PaymentPayload {
  const wire = parseObject(value, field);
  const version = parseX402Version(wire.x402Version, `${field}.x402Version`);
  let scheme: string | undefined;
  let network: string | undefined;
  if (wire.scheme !== undefined) {
    scheme = parseNonEmptyString(wire.scheme, `${field}.scheme`, MAX_IDENTIFIER_BYTES);
  }
  if (wire.network !== undefined) {
    parseNetwork(wire.network, `${field}.network`);
    network = wire.network as string;
  }
  if (version === 1) {
    const payload = parseSignedGuarantee(wire.payload, `${field}.payload`);
    const parsed: PaymentPayloadV1 = { x402Version: 1, payload };
    if (scheme !== undefined) parsed.scheme = scheme;
    if (network !== undefined) parsed.network = network;
    return parsed;
  }
  if (wire.accepted === undefined) throw new WireError(`${field}.accepted`, "is required for x402Version 2");
  const accepted = parsePaymentRequirements(wire.accepted, `${field}.accepted`);
  if (scheme !== undefined && scheme !== accepted.scheme) {
    throw new WireError(`${field}.scheme`, `must equal ${field}.accepted.scheme`);
  }
  if (network !== undefined && network !== accepted.network) {
    throw new WireError(`${field}.network`, `must equal ${field}.accepted.network`);
  }
  const payload = parseSignedGuarantee(wire.payload, `${field}.payload`);
  const parsed: PaymentPayloadV2 = { x402Version: 2, accepted, payload };
  if (scheme !== undefined) parsed.scheme = scheme;
  if (network !== undefined) parsed.network = network;
  if (wire.resource !== undefined) parsed.resource = parseResourceInfo(wire.resource, `${field}.resource`);
  if (wire.extensions !== undefined) parsed.extensions = parseObject(wire.extensions, `${field}.extensions`);
  return parsed;
}

/** The JSON form of a parsed payload (bigints back to decimal strings). */
export function toWirePaymentPayload(payload: PaymentPayload): WirePaymentPayload {
  return { ...payload, payload: toWireSignedGuarantee(payload.payload) };
}

/** The scheme a payload pays with: its own, else (v2) the accepted requirements'. */
export function payloadScheme(payload: PaymentPayload): string | undefined {
  return payload.scheme ?? (payload.x402Version === 2 ? payload.accepted.scheme : undefined);
}

/** The network a payload pays on: its own, else (v2) the accepted requirements'. */
export function payloadNetwork(payload: PaymentPayload): string | undefined {
  return payload.network ?? (payload.x402Version === 2 ? payload.accepted.network : undefined);
}

/**
 * The x402 version of a verify/settle request: the body's top-level
 * `x402Version` when present, else the payload's. Both present and different
 * is an error (the body is inconsistent).
 */
export function resolveX402Version(
  bodyVersion: unknown,
  payload: PaymentPayload,
  field = "x402Version",
  payloadField = "paymentPayload",
): X402Version {
  if (bodyVersion === undefined || bodyVersion === null) return payload.x402Version;
  const version = parseX402Version(bodyVersion, field);
  if (version !== payload.x402Version) {
    throw new WireError(
      field,
      `is ${version} but ${payloadField}.x402Version is ${payload.x402Version}; they must agree`,
    );
  }
  return version;
}

// ---------------------------------------------------------------------------
// Facilitator requests and results
// ---------------------------------------------------------------------------

/**
 * What a seller tells the facilitator about a settlement, in `paymentPayload.payload.settle_attempt`
 * (beside the buyer's `claims`, `signature`, `scheme`; the payer's signature covers only the claims):
 * - `"first"`: this seller has not submitted this payment before. Should Core have issued the
 *   guarantee already, the settlement is a replay: the facilitator refuses it (400
 *   `payment_already_used`) and the seller serves nothing.
 * - `"retry"`: this seller submitted it before and never learnt the outcome (its settle call timed
 *   out, the facilitator or Core failed, the seller stopped mid-settle): a guarantee Core issued
 *   already is this seller's own, and the settlement succeeds with `extra.already_issued: true`.
 * Absent: as `"retry"` (the behaviour of sellers that predate the field), with `extra.already_issued`
 * telling the seller which it was.
 */
export type SettleAttempt = "first" | "retry";
export const SETTLE_ATTEMPTS: readonly SettleAttempt[] = ["first", "retry"];
/** The field of `paymentPayload.payload` carrying the seller's {@link SettleAttempt}. */
export const SETTLE_ATTEMPT_FIELD = "settle_attempt";
/** `error` / `errorReason` of a settlement refused as a replay (facilitator 400, seller 402). */
export const PAYMENT_ALREADY_USED = "payment_already_used";

/** Body of `POST /verify` and `POST /settle`, with the version resolved. */
export interface FacilitatorRequest {
  x402Version: X402Version;
  paymentPayload: PaymentPayload;
  paymentRequirements: PaymentRequirements;
  /** `paymentPayload.payload.settle_attempt`, when the seller sent it (`/settle` reads it, `/verify` ignores it). */
  settleAttempt?: SettleAttempt;
}

/** `paymentPayload.payload.settle_attempt` of a raw request body: absent, or one of {@link SETTLE_ATTEMPTS}. */
export function parseSettleAttempt(
  paymentPayload: unknown,
  field = "paymentPayload",
): SettleAttempt | undefined {
  const payload = parseObject(parseObject(paymentPayload, field).payload, `${field}.payload`);
  const value = payload[SETTLE_ATTEMPT_FIELD];
  if (value === undefined) return undefined;
  if (value === "first" || value === "retry") return value;
  throw new WireError(`${field}.payload.${SETTLE_ATTEMPT_FIELD}`, 'must be "first" or "retry"');
}
export type VerifyRequest = FacilitatorRequest;
export type SettleRequest = FacilitatorRequest;

/** Parses a `/verify` or `/settle` body; error paths are relative to the body (`paymentPayload…`). */
export function parseFacilitatorRequest(value: unknown): FacilitatorRequest {
  const body = parseObject(value, "body");
  if (body.paymentPayload === undefined) throw new WireError("paymentPayload", "is required");
  if (body.paymentRequirements === undefined) throw new WireError("paymentRequirements", "is required");
  const paymentPayload = parsePaymentPayload(body.paymentPayload, "paymentPayload");
  const paymentRequirements = parsePaymentRequirements(body.paymentRequirements, "paymentRequirements");
  const request: FacilitatorRequest = {
    x402Version: resolveX402Version(body.x402Version, paymentPayload),
    paymentPayload,
    paymentRequirements,
  };
  const settleAttempt = parseSettleAttempt(body.paymentPayload);
  if (settleAttempt !== undefined) request.settleAttempt = settleAttempt;
  return request;
}
export const parseVerifyRequest = parseFacilitatorRequest;
export const parseSettleRequest = parseFacilitatorRequest;

/** JSON body of a verify/settle request built by a seller. */
export function toWireFacilitatorRequest(request: FacilitatorRequest): {
  x402Version: X402Version;
  paymentPayload: WirePaymentPayload;
  paymentRequirements: PaymentRequirements;
} {
  const paymentPayload = toWirePaymentPayload(request.paymentPayload);
  if (request.settleAttempt !== undefined) {
    const payload: WireSignedGuarantee & { [SETTLE_ATTEMPT_FIELD]?: SettleAttempt } = {
      ...paymentPayload.payload,
    };
    payload[SETTLE_ATTEMPT_FIELD] = request.settleAttempt;
    paymentPayload.payload = payload;
  }
  return {
    x402Version: request.x402Version,
    paymentPayload,
    paymentRequirements: request.paymentRequirements,
  };
}

/** `POST /verify` answer. Verification never issues a certificate. */
export interface VerifyResult {
  isValid: boolean;
  invalidReason: string | null;
  certificate: null;
}

/** `POST /settle` answer (also the settlement response header's content). */
export interface SettleResult {
  success: boolean;
  error: string | null;
  txHash: string | null;
  /** CAIP-2 network. */
  networkId: string | null;
  certificate: Certificate | null;
}

/** x402's supported kind, its version optional and `extra` possibly null (the interface specification's). */
export type SupportedKind = Pick<X402SupportedKind, "scheme"> & {
  network: string;
  x402Version?: X402Version;
  extra?: Record<string, unknown> | null;
};

/**
 * `GET /supported` answer: x402's `SupportedResponse` (`signers`: CAIP family pattern, e.g. `eip155:*` →
 * signer addresses) with Surety's kinds.
 */
export type SupportedKinds = Omit<X402SupportedResponse, "kinds"> & { kinds: SupportedKind[] };

function parseBoolean(value: unknown, field: string): boolean {
  if (typeof value !== "boolean") throw new WireError(field, `must be a boolean, got ${describeType(value)}`);
  return value;
}

function parseOptionalText(value: unknown, field: string): string | null {
  return value === undefined || value === null ? null : parseString(value, field, MAX_TEXT_BYTES);
}

/** Parses a facilitator's `/verify` answer (seller side). */
export function parseVerifyResult(value: unknown, field = "verifyResult"): VerifyResult {
  const wire = parseObject(value, field);
  const isValid = parseBoolean(wire.isValid, `${field}.isValid`);
  const invalidReason = parseOptionalText(wire.invalidReason, `${field}.invalidReason`);
  if (wire.certificate !== undefined && wire.certificate !== null) {
    throw new WireError(`${field}.certificate`, "must be null: verification issues no certificate");
  }
  return { isValid, invalidReason, certificate: null };
}

/**
 * The facilitator's settle answer repeats the certificate as
 * `extra.certificate`: the reference `HTTPFacilitatorClient` keeps only the
 * reference fields of a settle answer (`extra` among them), so this is the
 * copy that reaches a seller on `@x402/express` / `@x402/hono` and, through
 * the `PAYMENT-RESPONSE` header, the buyer.
 */
export const SETTLEMENT_EXTRA_CERTIFICATE = "certificate";

/**
 * `extra.already_issued` of a successful settle answer: true when Core had issued this guarantee
 * before this settlement (a retry, or a replay the seller did not declare as its first attempt; see
 * {@link SettleAttempt}), false when this settlement issued it.
 */
export const SETTLEMENT_EXTRA_ALREADY_ISSUED = "already_issued";

/** `extra` of a successful settle answer: `{certificate, already_issued}`. */
export function settlementExtra(
  certificate: Certificate,
  alreadyIssued = false,
): { [SETTLEMENT_EXTRA_CERTIFICATE]: Certificate; [SETTLEMENT_EXTRA_ALREADY_ISSUED]: boolean } {
  return { [SETTLEMENT_EXTRA_CERTIFICATE]: certificate, [SETTLEMENT_EXTRA_ALREADY_ISSUED]: alreadyIssued };
}

/**
 * `extra.already_issued` of a settle answer or a decoded settlement header: true or false as the
 * facilitator said, null when it did not say (a failure, or a facilitator that predates the field).
 */
export function settlementAlreadyIssued(settlement: unknown): boolean | null {
  if (typeof settlement !== "object" || settlement === null) return null;
  const extra = (settlement as { extra?: unknown }).extra;
  if (typeof extra !== "object" || extra === null) return null;
  const value = (extra as Record<string, unknown>)[SETTLEMENT_EXTRA_ALREADY_ISSUED];
  return typeof value === "boolean" ? value : null;
}

/**
 * Parses a facilitator's `/settle` answer or a decoded settlement header,
 * ours or one relayed by the reference packages: the certificate is the
 * top-level `certificate`, else `extra.certificate`; the network is
 * `networkId`, else the reference `network`; the error is `error`, else the
 * reference `errorReason`.
 */
export function parseSettleResult(value: unknown, field = "settleResult"): SettleResult {
  const wire = parseObject(value, field);
  const success = parseBoolean(wire.success, `${field}.success`);
  const error =
    wire.error === undefined || wire.error === null
      ? parseOptionalText(wire.errorReason, `${field}.errorReason`)
      : parseOptionalText(wire.error, `${field}.error`);
  const txHash = parseOptionalText(wire.txHash, `${field}.txHash`);
  let networkId: string | null = null;
  if (wire.networkId !== undefined && wire.networkId !== null) {
    parseNetwork(wire.networkId, `${field}.networkId`);
    networkId = wire.networkId as string;
  } else if (typeof wire.network === "string" && wire.network !== "") {
    parseNetwork(wire.network, `${field}.network`);
    networkId = wire.network;
  }
  let certificate: Certificate | null = null;
  if (wire.certificate !== undefined && wire.certificate !== null) {
    certificate = parseCertificate(wire.certificate, `${field}.certificate`);
  } else if (wire.extra !== undefined && wire.extra !== null) {
    const extra = parseObject(wire.extra, `${field}.extra`);
    const relayed = extra[SETTLEMENT_EXTRA_CERTIFICATE];
    if (relayed !== undefined && relayed !== null) {
      certificate = parseCertificate(relayed, `${field}.extra.${SETTLEMENT_EXTRA_CERTIFICATE}`);
    }
  }
  if (success && certificate === null) {
    throw new WireError(`${field}.certificate`, "is required when success is true");
  }
  return { success, error, txHash, networkId, certificate };
}

function parseSupportedKind(value: unknown, field: string): SupportedKind {
  const wire = parseObject(value, field);
  const kind: SupportedKind = {
    scheme: parseNonEmptyString(wire.scheme, `${field}.scheme`, MAX_IDENTIFIER_BYTES),
    network: parseNonEmptyString(wire.network, `${field}.network`, MAX_IDENTIFIER_BYTES),
  };
  if (wire.x402Version !== undefined)
    kind.x402Version = parseX402Version(wire.x402Version, `${field}.x402Version`);
  if (wire.extra !== undefined) kind.extra = parseNullableObject(wire.extra, `${field}.extra`);
  return kind;
}

function parseArray(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new WireError(field, `must be an array, got ${describeType(value)}`);
  return value;
}

/**
 * Parses a `/supported` answer. Networks of other facilitators' kinds may be
 * non-EVM, so kinds are checked for shape only.
 */
export function parseSupportedKinds(value: unknown, field = "supported"): SupportedKinds {
  const wire = parseObject(value, field);
  const kinds = parseArray(wire.kinds, `${field}.kinds`).map((kind, i) =>
    parseSupportedKind(kind, `${field}.kinds[${i}]`),
  );
  const extensions = parseArray(wire.extensions, `${field}.extensions`).map((extension, i) =>
    parseNonEmptyString(extension, `${field}.extensions[${i}]`, MAX_IDENTIFIER_BYTES),
  );
  const signersObject = parseObject(wire.signers, `${field}.signers`);
  const signers: Record<string, string[]> = {};
  for (const [family, addresses] of Object.entries(signersObject)) {
    signers[family] = parseArray(addresses, `${field}.signers.${family}`).map((address, i) =>
      parseNonEmptyString(address, `${field}.signers.${family}[${i}]`, MAX_IDENTIFIER_BYTES),
    );
  }
  return { kinds, extensions, signers };
}

// ---------------------------------------------------------------------------
// 402 answer (PaymentRequired)
// ---------------------------------------------------------------------------

/** What a seller answers with status 402: v1 as the JSON body, v2 in the `PAYMENT-REQUIRED` header. */
export type PaymentRequired = Pick<X402PaymentRequired, "error" | "extensions"> & {
  x402Version: X402Version;
  /** v2: the protected resource (the reference client requires it, with `url`). */
  resource?: ResourceInfo;
  /** The payment options in `svc-credit`; options in other schemes are dropped when parsing. */
  accepts: PaymentRequirements[];
};

/**
 * Parses a 402 answer. Options in schemes other than {@link SCHEME} are
 * skipped (a seller may offer several ways to pay, and their fields need not
 * fit EVM rules); it is an error when no `svc-credit` option remains.
 */
export function parsePaymentRequired(value: unknown, field = "paymentRequired"): PaymentRequired {
  const wire = parseObject(value, field);
  const x402Version = parseX402Version(wire.x402Version, `${field}.x402Version`);
  const options = parseArray(wire.accepts, `${field}.accepts`);
  const accepts: PaymentRequirements[] = [];
  options.forEach((option, i) => {
    const optionField = `${field}.accepts[${i}]`;
    if (parseObject(option, optionField).scheme !== SCHEME) return;
    accepts.push(parsePaymentRequirements(option, optionField));
  });
  if (accepts.length === 0) throw new WireError(`${field}.accepts`, `offers no "${SCHEME}" payment option`);
  const parsed: PaymentRequired = { x402Version, accepts };
  if (wire.error !== undefined) parsed.error = parseString(wire.error, `${field}.error`, MAX_TEXT_BYTES);
  if (wire.resource !== undefined) parsed.resource = parseResourceInfo(wire.resource, `${field}.resource`);
  if (wire.extensions !== undefined) parsed.extensions = parseObject(wire.extensions, `${field}.extensions`);
  return parsed;
}

// ---------------------------------------------------------------------------
// Header encoding: base64 of UTF-8 JSON
// ---------------------------------------------------------------------------

const BASE64 = /^[A-Za-z0-9+/]*$/;
const BASE64_URL = /^[A-Za-z0-9_-]*$/;

/** Base64 (standard alphabet, padded) of the UTF-8 JSON of `value`. */
export function encodeBase64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64");
}

/**
 * Decodes a header value holding base64 (standard or URL-safe alphabet,
 * padding optional) of UTF-8 JSON. Size, alphabet, padding, UTF-8 and JSON
 * are each checked with their own error so a buyer can tell what went wrong.
 */
export function decodeBase64Json(header: unknown, field: string): unknown {
  if (typeof header !== "string") {
    throw new WireError(field, `must be a base64 string, got ${describeType(header)}`);
  }
  if (header.length > MAX_HEADER_BYTES) {
    throw new WireError(field, `is larger than ${MAX_HEADER_BYTES} bytes`);
  }
  const trimmed = header.trim();
  if (trimmed.length === 0) throw new WireError(field, "must not be empty");
  const body = trimmed.replace(/=+$/, "");
  const padding = trimmed.length - body.length;
  const alphabetOk = BASE64.test(body) || BASE64_URL.test(body);
  if (!alphabetOk || padding > 2 || body.length % 4 === 1 || (padding > 0 && trimmed.length % 4 !== 0)) {
    throw new WireError(field, "is not valid base64");
  }
  const bytes = Buffer.from(body.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new WireError(field, "does not decode to UTF-8 text");
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new WireError(field, "does not decode to JSON");
  }
}

/** The payment header value (`X-PAYMENT` / `PAYMENT-SIGNATURE`) for `payload`. */
export function encodePaymentHeader(payload: PaymentPayload): string {
  return encodeBase64Json(toWirePaymentPayload(payload));
}

/** Decodes and parses a payment header; `field` names the header in errors. */
export function decodePaymentHeader(header: unknown, field = "paymentPayload"): PaymentPayload {
  return parsePaymentPayload(decodeBase64Json(header, field), field);
}

/** The `PAYMENT-REQUIRED` header value for a 402 answer. */
export function encodePaymentRequiredHeader(required: PaymentRequired): string {
  return encodeBase64Json(required);
}

export function decodePaymentRequiredHeader(header: unknown, field = "paymentRequired"): PaymentRequired {
  return parsePaymentRequired(decodeBase64Json(header, field), field);
}

/** The settlement response header value (`X-PAYMENT-RESPONSE` / `PAYMENT-RESPONSE`). */
export function encodePaymentResponseHeader(result: SettleResult): string {
  return encodeBase64Json(result);
}

export function decodePaymentResponseHeader(header: unknown, field = "paymentResponse"): SettleResult {
  return parseSettleResult(decodeBase64Json(header, field), field);
}
