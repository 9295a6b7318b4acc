/**
 * Building a payment: claims from the chosen requirements, the payer's
 * signature, the x402 payload and the header that carries it.
 *
 * `buildClaims` and `paymentPayloadJson` are pure; `createPayment` adds the
 * wallet (async, may be remote) and a self-check of the signature.
 */
import { randomBytes } from "node:crypto";
import {
  type GuaranteeClaims,
  type SignedGuarantee,
  type SigningScheme,
  parseSignatureHex,
  toWireSignedGuarantee,
} from "../claims";
import {
  type GuaranteeDomainParams,
  type GuaranteeSigner,
  guaranteeHasher,
  signGuarantee,
  verifyGuaranteeSignature,
} from "../eip712";
import { SignatureError, WireError } from "../errors";
import { guaranteeId } from "../ids";
import { parseAddress } from "../wire";
import {
  type PaymentRequirements,
  SCHEME,
  type X402Version,
  encodeBase64Json,
  paymentHeaderName,
  policyFromExtra,
  requiredAmount,
} from "../x402";
import { PaymentError } from "./errors";
import type { PaymentRequiredAnswer } from "./required";
import { type ParsedSpendingLimits, type SelectedOption, selectPaymentOption } from "./select";
import { domainNetwork } from "./domain";

/**
 * `req_id` entropy: 128 bits. Guarantee identity is (chain, Vault, payer,
 * req_id) and Core refuses a duplicate (409), so a buyer's ids must never
 * repeat; 2^-64 is the collision chance after 2^32 payments.
 */
export const REQ_ID_BYTES = 16;

/** A fresh random `req_id` from the OS CSPRNG. */
export function randomReqId(): bigint {
  return BigInt("0x" + randomBytes(REQ_ID_BYTES).toString("hex"));
}

/** What a buyer's wallet must do: sign (typed data or message) and tell its address. ethers Signers fit. */
export interface PayerSigner extends GuaranteeSigner {
  getAddress(): Promise<string>;
}

export interface ClaimsInput {
  payer: string;
  reqId: bigint;
  /** Unix seconds (the buyer's clock; the facilitator accepts 600 s old to 30 s ahead by default). */
  timestamp: number;
}

/**
 * Claims that pay exactly `requirements`: recipient `payTo`, `asset`, the
 * required amount; version 2 under the policy in `extra` when the seller
 * demands validation, else version 1.
 */
export function buildClaims(requirements: PaymentRequirements, input: ClaimsInput): GuaranteeClaims {
  const amount = requiredAmount(requirements);
  if (amount === undefined) throw new PaymentError("no_acceptable_option", "the option names no amount");
  const common = {
    user: parseAddress(input.payer, "payer"),
    recipient: requirements.payTo,
    reqId: input.reqId,
    amount,
    asset: requirements.asset,
    timestamp: input.timestamp,
  };
  const policy = policyFromExtra(requirements.extra ?? null);
  return policy === null ? { version: 1, ...common } : { version: 2, ...common, policy };
}

/**
 * The JSON payment payload. v1: `{x402Version: 1, scheme, network, payload}`;
 * v2: `{x402Version: 2, accepted, payload, resource?}` where `accepted` is the
 * seller's option exactly as sent.
 */
export function paymentPayloadJson(
  answer: PaymentRequiredAnswer,
  selected: SelectedOption,
  signed: SignedGuarantee,
): Record<string, unknown> {
  const payload = toWireSignedGuarantee(signed);
  if (answer.x402Version === 1) {
    return { x402Version: 1, scheme: SCHEME, network: selected.requirements.network, payload };
  }
  const json: Record<string, unknown> = {
    x402Version: 2,
    accepted: answer.rawAccepts[selected.index],
    payload,
  };
  if (answer.required.resource !== undefined) json.resource = answer.required.resource;
  return json;
}

export interface PaymentHeader {
  /** `X-PAYMENT` (v1) or `PAYMENT-SIGNATURE` (v2). */
  name: string;
  /** base64 of the payload's UTF-8 JSON. */
  value: string;
}

export function paymentHeader(x402Version: X402Version, payloadJson: Record<string, unknown>): PaymentHeader {
  return { name: paymentHeaderName(x402Version), value: encodeBase64Json(payloadJson) };
}

export interface PaymentOptions {
  signer: PayerSigner;
  domain: GuaranteeDomainParams;
  limits: ParsedSpendingLimits;
  nowSeconds: number;
  /** Defaults to {@link randomReqId}. */
  reqId?: bigint;
  /** Default `eip712`; `eip191` for wallets without typed-data signing. */
  signingScheme?: SigningScheme;
  acceptValidation?: boolean;
}

export interface PreparedPayment {
  x402Version: X402Version;
  requirements: PaymentRequirements;
  signed: SignedGuarantee;
  /** Guarantee identity (docs/protocol.md, "Identities"), what the settlement's `transaction` names. */
  guaranteeId: string;
  payloadJson: Record<string, unknown>;
  header: PaymentHeader;
}

/**
 * Selects an option, builds and signs the claims, and checks the signature
 * recovers to the payer before anything leaves the process (a wallet on the
 * wrong account or a domain mix-up fails here, not at the seller).
 */
export async function createPayment(
  answer: PaymentRequiredAnswer,
  options: PaymentOptions,
): Promise<PreparedPayment> {
  const hasher = guaranteeHasher(options.domain);
  const selected = selectPaymentOption(answer.required.accepts, {
    network: domainNetwork(hasher.domain),
    limits: options.limits,
    nowSeconds: options.nowSeconds,
    acceptValidation: options.acceptValidation,
  });
  const payer = await options.signer.getAddress();
  const claims = buildClaims(selected.requirements, {
    payer,
    reqId: options.reqId ?? randomReqId(),
    timestamp: options.nowSeconds,
  });
  const scheme = options.signingScheme ?? "eip712";
  const signature = await signGuarantee(options.signer, hasher, claims, scheme);
  try {
    verifyGuaranteeSignature(hasher, claims, parseSignatureHex(signature), scheme);
  } catch (error) {
    if (error instanceof SignatureError || error instanceof WireError) {
      throw new PaymentError("signature_invalid", `the wallet's ${scheme} signature: ${error.message}`);
    }
    throw error;
  }
  const signed: SignedGuarantee = { claims, signature: parseSignatureHex(signature), scheme };
  const payloadJson = paymentPayloadJson(answer, selected, signed);
  return {
    x402Version: answer.x402Version,
    requirements: selected.requirements,
    signed,
    guaranteeId: guaranteeId(
      { chainId: hasher.domain.chainId, vault: hasher.domain.verifyingContract },
      claims.user,
      claims.reqId,
    ),
    payloadJson,
    header: paymentHeader(answer.x402Version, payloadJson),
  };
}
