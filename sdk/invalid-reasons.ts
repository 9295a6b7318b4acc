/**
 * The stable `invalidReason` codes of `POST /verify` (and `error` of a
 * `/settle` that fails re-verification). Sellers branch on these strings:
 * never rename one; add new ones at the end. docs/facilitator.md lists them
 * with their meaning.
 */
export const INVALID_REASONS = [
  /** `paymentRequirements.scheme` or the payload's scheme is not `svc-credit`. */
  "unsupported_scheme",
  /** `paymentRequirements.network` is not the chain this facilitator's Core serves. */
  "unsupported_network",
  /** The payload's network differs from `paymentRequirements.network`. */
  "network_mismatch",
  /** x402 v2: `paymentPayload.accepted` is not the requirements being verified. */
  "accepted_mismatch",
  /** `claims.recipient_address` ≠ `paymentRequirements.payTo`. */
  "recipient_mismatch",
  /** `claims.asset_address` ≠ `paymentRequirements.asset`. */
  "asset_mismatch",
  /** `claims.amount` ≠ the required amount (`amount` / `maxAmountRequired`). */
  "amount_mismatch",
  /** `claims.version` is not among Core's `accepted_guarantee_versions`. */
  "unsupported_version",
  /** `claims.timestamp` is older than the accepted window. */
  "timestamp_too_old",
  /** `claims.timestamp` is further in the future than the accepted window. */
  "timestamp_in_future",
  /** The requirements carry a validation policy but the claims are version 1. */
  "policy_required",
  /** The claims' policy differs from the one in `paymentRequirements.extra` (or none was asked for). */
  "policy_mismatch",
  /** The policy's validation deadline has passed. */
  "policy_expired",
  /** The policy's registry is not among Core's `trusted_validation_registries`. */
  "untrusted_registry",
  /** The policy's optional `validation_chain_id` is not this chain. */
  "policy_chain_mismatch",
  /** The policy's optional `validation_request_hash` is not the derived request hash. */
  "policy_request_hash_mismatch",
  /** The signature is malformed, high-s, or recovers to no key. */
  "invalid_signature",
  /**
   * The signature is valid but was made by someone other than `claims.user_address` and its guarantee
   * signing key registered in the Vault (a contract wallet's, `Vault.setGuaranteeSigner`).
   */
  "signer_mismatch",
  /**
   * The policy's validation deadline is after Core's cap (`latest_validation_deadline` of its public
   * params): Core refuses to issue it under the same code.
   */
  "validation_deadline_too_far",
  /**
   * `extra` of the requirements (or of v2 `accepted`) names an EIP-712 domain (`chain_id`,
   * `contract_address`, `eip712_name`, `eip712_version`) other than the deployment's.
   */
  "domain_mismatch",
  /**
   * `claims.user_address` (a contract wallet) has a guarantee signing key change pending in the Vault: Core
   * issues nothing for it until the new key is in effect (docs/protocol.md "Payer signatures").
   */
  "signing_key_change_pending",
] as const;

export type InvalidReason = (typeof INVALID_REASONS)[number];
