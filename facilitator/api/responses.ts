/**
 * Response bodies of the facilitator. Each carries the interface spec's
 * fields plus the names the reference x402 packages (`@x402/core`) read, so
 * that a seller using the reference `HTTPFacilitatorClient` understands us:
 * - verify: `invalidMessage` (human text) and `payer`;
 * - settle: `transaction` (our settlement reference: the guarantee id, since
 *   issuance is off chain and `txHash` is null), `network`, `payer`,
 *   `errorReason` (= `error` on failure) and `errorMessage`; on success the
 *   certificate again as `extra.certificate`, the only place the reference
 *   client keeps it, and `extra.already_issued` (Core had issued it before);
 * - supported: each kind's `extra` names the signing domain, which the
 *   `svc-credit` server scheme copies into the requirements.
 */
import type { SettleFailure, SettleResponse, SettleSuccess, VerifyResponse } from "../../sdk/api-facilitator";
import type { Certificate } from "../../sdk/certificate";
import { SCHEME, type SupportedKinds, X402_VERSIONS, extraFromDomain, settlementExtra } from "../../sdk/x402";
import type { DeploymentParams } from "../deployment";
import type { SettleOutcome } from "../settle";
import type { VerifyOutcome } from "../verify";

/** The CAIP-2 family key of `signers` in `/supported`, as the reference facilitator keys it. */
export const EVM_SIGNER_FAMILY = "eip155:*";
/** `errorReason` of a malformed settle request (its `error` is the message naming the field). */
export const INVALID_REQUEST = "invalid_request";

/** `POST /verify`'s answer: the interface specification's fields and x402 v2's (sdk/api-facilitator.ts). */
export type VerifyBody = VerifyResponse;

export function verifyBody(outcome: VerifyOutcome): VerifyBody {
  return {
    isValid: outcome.isValid,
    invalidReason: outcome.invalidReason,
    invalidMessage: outcome.message,
    payer: outcome.payer,
    certificate: null,
  };
}

/** `POST /settle`'s answer, success or failure (sdk/api-facilitator.ts). */
export type SettleBody = SettleResponse;

export function settleSuccessBody(
  certificate: Certificate,
  guaranteeId: string,
  network: string,
  payer: string,
  alreadyIssued = false,
): SettleSuccess {
  return {
    success: true,
    error: null,
    txHash: null,
    networkId: network,
    certificate,
    transaction: guaranteeId,
    network,
    payer,
    errorReason: null,
    errorMessage: null,
    extra: settlementExtra(certificate, alreadyIssued),
  };
}

/**
 * A failed settlement. `error` is the code (an invalidReason, a settle error
 * code or Core's code) except for malformed requests, where it is the
 * message naming the field and `errorReason` is {@link INVALID_REQUEST}.
 */
export function settleFailureBody(
  error: string,
  errorReason: string,
  errorMessage: string,
  network: string | null,
  payer: string | null,
): SettleFailure {
  return {
    success: false,
    error,
    txHash: null,
    networkId: network,
    certificate: null,
    transaction: "",
    network: network ?? "",
    payer,
    errorReason,
    errorMessage,
  };
}

export function settleOutcomeBody(outcome: SettleOutcome, network: string): SettleBody {
  if (outcome.success)
    return settleSuccessBody(
      outcome.certificate,
      outcome.guaranteeId,
      network,
      outcome.payer,
      outcome.replayed,
    );
  return settleFailureBody(outcome.error, outcome.error, outcome.message, network, outcome.payer);
}

/**
 * One kind per x402 version for the deployment's network, its `extra` the
 * signing domain (sdk `extraFromDomain`); `signers` lists the facilitator wallet.
 */
export function supportedBody(deployment: DeploymentParams, facilitatorWallet: string): SupportedKinds {
  const extra = extraFromDomain(deployment.hasher.domain);
  return {
    kinds: X402_VERSIONS.map((x402Version) => ({
      x402Version,
      scheme: SCHEME,
      network: deployment.network,
      extra: { ...extra },
    })),
    extensions: [],
    signers: { [EVM_SIGNER_FAMILY]: [facilitatorWallet] },
  };
}
