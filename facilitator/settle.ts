/**
 * Settlement: re-verify the payment, have Core issue the guarantee, and
 * accept Core's certificate only after checking it ourselves: its BLS
 * signature against Core's published key, and that it binds exactly these
 * claims in this deployment. A seller who gets `success: true` holds a
 * certificate the Vault will honour for the payment it asked for.
 *
 * How Core's answers map to ours (docs/facilitator.md, "Settle errors"):
 * - 200, or 409 carrying the stored certificate (idempotent retry) → settled, `replayed` telling
 *   them apart (`extra.already_issued`), except that a 409 for a seller that declared this its
 *   first attempt (`settle_attempt: "first"`) is a replay → 400 `payment_already_used`;
 * - 400 (claims, policy, signature or collateral refused) → 400 with Core's code;
 * - 409 without a certificate (req_id already used by a different guarantee) → 400;
 * - 401 after a fresh sign-in, 403, other 4xx, 5xx, no answer, or a
 *   certificate that fails our checks → 500: the facilitator or Core is at
 *   fault, not the payment, and the seller may retry.
 */
import {
  type Certificate,
  certificateMatchesRequest,
  decodeCertificateClaims,
  encodeCertificateClaims,
} from "../sdk/certificate";
import { toWireSignedGuarantee } from "../sdk/claims";
import { WireError } from "../sdk/errors";
import { guaranteeId } from "../sdk/ids";
import { type FacilitatorRequest, PAYMENT_ALREADY_USED } from "../sdk/x402";
import { type CertificateSignatureCheck, certificateSignatureValid } from "./certificate-signatures";
import type { CoreApi } from "./core-client";
import { CoreHttpError, CoreProtocolError, CoreUnavailableError } from "./core-http";
import type { DeploymentParams } from "./deployment";
import type { InvalidReason } from "../sdk/invalid-reasons";
import { SIGNATURE_CHECK_UNAVAILABLE } from "./contract-wallets";
import {
  SignatureCheckUnavailableError,
  type VerificationContext,
  verifyPaymentWithContractWallets,
} from "./verify";

/** Codes of settlement failures that are not verification failures (`error` / `errorReason`). */
export const SETTLE_ERRORS = {
  /** Core refused the guarantee with 400 but gave no code. */
  coreRejected: "core_rejected",
  /** Core answered 409 without a certificate: this payer's req_id is taken by another guarantee. */
  duplicateGuarantee: "duplicate_guarantee",
  /**
   * Core had issued this guarantee before, and the seller declared this settlement its first attempt
   * (`settle_attempt: "first"`): the payment was used already, this is a replay (400).
   */
  paymentAlreadyUsed: PAYMENT_ALREADY_USED,
  /** Core refused the facilitator's session even after a fresh sign-in (401). */
  coreUnauthorized: "core_unauthorized",
  /** Core says the facilitator wallet may not issue this guarantee (403): Core's facilitator list lacks it. */
  coreForbidden: "core_forbidden",
  /** Core failed (5xx) or answered with an unexpected status. */
  coreError: "core_error",
  /** Core could not be reached or did not answer in time. */
  coreUnavailable: "core_unavailable",
  /** Core answered 200 with something that is not a usable answer. */
  invalidCoreResponse: "invalid_core_response",
  /** Core's certificate does not verify against Core's key or does not bind this payment. */
  invalidCertificate: "invalid_certificate",
  /** The payer may be a contract wallet and the chain could not be asked for its registered signing key. */
  signatureCheckUnavailable: SIGNATURE_CHECK_UNAVAILABLE,
} as const;

export type SettleOutcome =
  | {
      success: true;
      certificate: Certificate;
      /** Guarantee identity (docs/protocol.md, "Identities"): the settlement's reference. */
      guaranteeId: string;
      payer: string;
      /** Core had issued this exact guarantee before (idempotent retry). */
      replayed: boolean;
    }
  | {
      success: false;
      /** 400: the payment is at fault; 500: the facilitator or Core is. */
      status: 400 | 500;
      error: InvalidReason | string;
      message: string;
      payer: string;
    };

export interface SettleContext extends VerificationContext {
  core: CoreApi;
}

/** Settles a parsed request; never throws for a failed payment or a Core failure. */
export async function settlePayment(
  request: FacilitatorRequest,
  context: SettleContext,
): Promise<SettleOutcome> {
  const payer = request.paymentPayload.payload.claims.user;
  const fail = (status: 400 | 500, error: string, message: string): SettleOutcome => ({
    success: false,
    status,
    error,
    message,
    payer,
  });
  let verification;
  try {
    verification = await verifyPaymentWithContractWallets(request, context);
  } catch (error) {
    if (!(error instanceof SignatureCheckUnavailableError)) throw error;
    return fail(500, SETTLE_ERRORS.signatureCheckUnavailable, error.message);
  }
  if (!verification.isValid) return fail(400, verification.invalidReason, verification.message);

  const signed = request.paymentPayload.payload;
  let outcome;
  try {
    outcome = await context.core.issueGuarantee(toWireSignedGuarantee(signed));
  } catch (error) {
    if (error instanceof CoreUnavailableError) return fail(500, SETTLE_ERRORS.coreUnavailable, error.message);
    if (error instanceof CoreProtocolError)
      return fail(500, SETTLE_ERRORS.invalidCoreResponse, error.message);
    if (error instanceof CoreHttpError) {
      // Raised by the sign-in itself (nonce or SIWE verification refused).
      const code = error.status === 401 ? SETTLE_ERRORS.coreUnauthorized : SETTLE_ERRORS.coreError;
      return fail(500, code, `signing in to Core failed: ${error.message}`);
    }
    throw error;
  }
  if (!outcome.ok) {
    const { status, code, error } = outcome;
    if (status === 400) return fail(400, code ?? SETTLE_ERRORS.coreRejected, error);
    if (status === 409) return fail(400, code ?? SETTLE_ERRORS.duplicateGuarantee, error);
    if (status === 401)
      return fail(500, SETTLE_ERRORS.coreUnauthorized, `Core refused the session: ${error}`);
    if (status === 403)
      return fail(500, SETTLE_ERRORS.coreForbidden, `Core refused the facilitator: ${error}`);
    // Core's cause (e.g. indexer_stale, commit_bond_short) stays readable in the message, as in CoreHttpError.
    return fail(500, SETTLE_ERRORS.coreError, `Core answered ${status}${code ? ` ${code}` : ""}: ${error}`);
  }

  const problem = await certificateProblem(outcome.certificate, request, context.deployment);
  if (problem !== null) return fail(500, SETTLE_ERRORS.invalidCertificate, problem);
  if (outcome.replayed && request.settleAttempt === "first") {
    // Nothing was issued or locked now: Core answered its stored certificate.
    return fail(
      400,
      SETTLE_ERRORS.paymentAlreadyUsed,
      "Core issued this guarantee before, and the seller says this is its first settlement of it: a replayed payment",
    );
  }
  return {
    success: true,
    certificate: outcome.certificate,
    guaranteeId: guaranteeId(context.deployment, signed.claims.user, signed.claims.reqId),
    payer,
    replayed: outcome.replayed,
  };
}

/**
 * Why the certificate is unacceptable for this request, or null when it is good. The BLS check goes through
 * `signatureValid` (by default batched with the other settlements in flight: certificate-signatures.ts).
 */
export async function certificateProblem(
  certificate: Certificate,
  request: FacilitatorRequest,
  deployment: DeploymentParams,
  signatureValid: CertificateSignatureCheck = certificateSignatureValid,
): Promise<string | null> {
  const claimsBytes = Buffer.from(certificate.claims.slice(2), "hex");
  const signature = Buffer.from(certificate.signature.slice(2), "hex");
  if (!(await signatureValid(deployment.blsPublicKey, claimsBytes, signature))) {
    return "the certificate's BLS signature does not verify against Core's public key";
  }
  // The good case without decoding: decoding is strict (only the canonical encoding decodes), so the claims
  // bind this payment exactly when they are the bytes Core's encoder gives for it. Decoding (ethers' ABI
  // decoder, ≈ 1 ms) only runs to say why a certificate does not match.
  if (
    certificate.claims.toLowerCase() ===
    encodeCertificateClaims(request.paymentPayload.payload.claims, deployment)
  )
    return null;
  let decoded;
  try {
    decoded = decodeCertificateClaims(certificate.claims);
  } catch (error) {
    if (error instanceof WireError) return `the certificate's claims do not decode: ${error.message}`;
    throw error;
  }
  if (!certificateMatchesRequest(decoded, request.paymentPayload.payload.claims, deployment)) {
    return "the certificate does not bind the claims of this payment in this deployment";
  }
  return null;
}
