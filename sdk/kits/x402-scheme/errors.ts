/**
 * Why a buyer did not pay. Each failure carries a stable `code` a buyer's
 * application can branch on; `message` is for people.
 */

export type PaymentErrorCode =
  /** The 402 answer carries no readable x402 requirements (header or body). */
  | "invalid_payment_required"
  /** No `svc-credit` option passes the buyer's checks (network, asset, limit, policy). */
  | "no_acceptable_option"
  /** The wallet's signature does not verify for the payer's address (wrong wallet or domain). */
  | "signature_invalid"
  /** The EIP-712 domain (Core's public params) could not be loaded or is malformed. */
  | "domain_unavailable"
  /** The seller's requirements name another signing domain (Vault, chain, name or version) than the buyer's. */
  | "domain_mismatch";

/** One option the buyer turned down, and why (see {@link selectPaymentOption}). */
export interface OptionRejection {
  /** Position of the option among the 402 answer's `svc-credit` options. */
  index: number;
  reason: RejectionReason;
  message: string;
}

export type RejectionReason =
  | "network_mismatch"
  | "amount_missing"
  | "asset_not_allowed"
  | "amount_over_limit"
  | "validation_not_accepted"
  | "policy_expired"
  | "policy_chain_mismatch";

export class PaymentError extends Error {
  override readonly name = "PaymentError";

  constructor(
    readonly code: PaymentErrorCode,
    message: string,
    /** For `no_acceptable_option`: every option and why it was turned down. */
    readonly rejections: readonly OptionRejection[] = [],
  ) {
    super(message);
  }
}
