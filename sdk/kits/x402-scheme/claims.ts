/**
 * The claims a payment signs: built from the chosen requirements, pure
 * (the caller supplies payer, req_id and time); `randomReqId` draws a fresh
 * req_id from the OS CSPRNG. Signing and the x402 envelope are the client
 * scheme's (client.ts) and the x402 client's.
 */
import { randomBytes } from "node:crypto";
import type { GuaranteeClaims } from "../../claims";
import type { GuaranteeSigner } from "../../eip712";
import { parseAddress } from "../../wire";
import { type PaymentRequirements, policyFromExtra, requiredAmount } from "../../x402";
import { PaymentError } from "./errors";

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
