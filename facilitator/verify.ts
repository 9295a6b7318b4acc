/**
 * The facilitator's verification of a payment: a pure function of the parsed
 * request, the deployment parameters and the clock. It never contacts Core,
 * so `/verify` answers in microseconds and `/settle` can re-run it before
 * spending a Core round trip.
 *
 * Checks run cheapest first and stop at the first failure, so each invalid
 * payment gets exactly one stable reason (sdk/invalid-reasons.ts);
 * the signature (the only costly check) runs last. The checks of the claims
 * themselves are Core's issuance rules (sdk/claim-checks.ts), their reasons
 * mapped to this endpoint's `invalidReason`s; the signing domain a seller's
 * `extra` names must be the deployment's. {@link verifyPaymentWithContractWallets}
 * (what the routes call) adds the one check that may ask the chain: a payer
 * signature that does not recover to the payer is checked against the key the
 * payer (a contract wallet) registered in the Vault ({@link checkContractWalletSignature}).
 */
import {
  type GuaranteeClaims,
  SIGNATURE_BYTES,
  type SignedGuarantee,
  type ValidationPolicy,
} from "../sdk/claims";
import { getAddress } from "ethers";
import {
  type ClaimCheckReason,
  checkClaimRules,
  checkClaimTimes,
  checkDeadlineCap,
  checkPolicyIntegrity,
} from "../sdk/claim-checks";
import { type GuaranteeTypedDataDomain, recoverGuaranteeSignerLowerCase } from "../sdk/eip712";
import { checkRegisteredSigner, type SigningKeyReason } from "../sdk/signing-keys";
import { SignatureError, WireError } from "../sdk/errors";
import {
  type FacilitatorRequest,
  type PaymentRequirements,
  SCHEME,
  domainDifference,
  domainFromExtra,
  parseFacilitatorRequest,
  payloadNetwork,
  payloadScheme,
  policyFromExtra,
  requiredAmount,
} from "../sdk/x402";
import { sameAddress } from "../sdk/wire";
import type { Clock } from "./clock";
import { type ContractWalletCheck, ContractWalletUnavailableError } from "./contract-wallets";
import type { DeploymentParams } from "./deployment";
import type { InvalidReason } from "../sdk/invalid-reasons";

export interface TimestampWindow {
  /** A claim may be at most this many seconds old. */
  pastSeconds: number;
  /** A claim may be at most this many seconds ahead of the clock. */
  futureSeconds: number;
}

export interface VerificationContext {
  deployment: DeploymentParams;
  clock: Clock;
  timestampWindow: TimestampWindow;
  /** Payers' registered signing keys on chain (`SURETY_FACILITATOR_RPC_URL`); absent or null: EOA payers only. */
  contractWallets?: ContractWalletCheck | null;
}

/**
 * The payer's signature could be neither accepted nor refused: it is not the payer's ECDSA signature,
 * and the chain could not be asked for the signing key the payer registered in the Vault. `/verify`
 * answers 500 `signature_check_unavailable`, `/settle` likewise; the payment may be valid.
 */
export class SignatureCheckUnavailableError extends Error {
  override readonly name = "SignatureCheckUnavailableError";
}

export type VerifyOutcome =
  | { isValid: true; invalidReason: null; message: null; payer: string }
  | { isValid: false; invalidReason: InvalidReason; message: string; payer: string };

/**
 * Parses a `/verify` or `/settle` body (sdk parsers; the x402 version is
 * resolved from the body or the payload) and insists on what verification
 * needs beyond the envelope: an amount in the requirements. Throws WireError
 * naming the field (→ 400).
 */
export function parsePaymentRequest(body: unknown): FacilitatorRequest {
  const request = parseFacilitatorRequest(body);
  if (requiredAmount(request.paymentRequirements) === undefined) {
    throw new WireError("paymentRequirements.amount", "is required (or maxAmountRequired)");
  }
  return request;
}

/** Verifies a parsed request. Never throws for an invalid payment; only for a programming error. */
export function verifyPayment(request: FacilitatorRequest, context: VerificationContext): VerifyOutcome {
  const { claims, signature, scheme } = request.paymentPayload.payload;
  const payer = claims.user;
  const invalid = (invalidReason: InvalidReason, message: string): VerifyOutcome => ({
    isValid: false,
    invalidReason,
    message,
    payer,
  });
  const problem = checkPayment(request, context);
  if (problem !== null) return invalid(...problem);

  let signer: string;
  try {
    // Lower case: the checksum (a keccak in JS) is only worth computing for the mismatch message.
    signer = recoverGuaranteeSignerLowerCase(context.deployment.hasher, claims, signature, scheme);
  } catch (error) {
    if (error instanceof SignatureError || error instanceof WireError) {
      return invalid("invalid_signature", error.message);
    }
    throw error;
  }
  if (signer !== claims.user.toLowerCase()) {
    const checksummed = getAddress(signer);
    return invalid(
      "signer_mismatch",
      `signature was made by ${checksummed}, not by user_address ${claims.user}`,
    );
  }
  return { isValid: true, invalidReason: null, message: null, payer };
}

type Problem = [InvalidReason, string];

/** The `invalidReason` of each shared claim check (docs/facilitator.md keeps the facilitator's names). */
const INVALID_REASON_OF: Readonly<Record<ClaimCheckReason, InvalidReason>> = {
  unsupported_version: "unsupported_version",
  untrusted_validation_registry: "untrusted_registry",
  validation_chain_id_mismatch: "policy_chain_mismatch",
  validation_request_hash_mismatch: "policy_request_hash_mismatch",
  timestamp_too_old: "timestamp_too_old",
  timestamp_in_future: "timestamp_in_future",
  validation_deadline_passed: "policy_expired",
  // Core's own code: /settle answered it before /verify checked it too, and sellers may branch on it.
  validation_deadline_too_far: "validation_deadline_too_far",
};

/**
 * {@link verifyPayment}, then, when only the payer's signature did not recover to `user_address`, the
 * registered-key check of {@link checkContractWalletSignature}: what `/verify` and `/settle` run. The EOA
 * path stays pure and synchronous; only a signature that does not recover to `user_address` costs chain
 * reads. Throws {@link SignatureCheckUnavailableError} when the chain cannot be asked.
 */
export async function verifyPaymentWithContractWallets(
  request: FacilitatorRequest,
  context: VerificationContext,
): Promise<VerifyOutcome> {
  const outcome = verifyPayment(request, context);
  if (outcome.isValid) return outcome;
  if (outcome.invalidReason !== "invalid_signature" && outcome.invalidReason !== "signer_mismatch") {
    return outcome;
  }
  const problem = await checkContractWalletSignature(
    request.paymentPayload.payload,
    [outcome.invalidReason, outcome.message],
    context,
  );
  if (problem === null) return { isValid: true, invalidReason: null, message: null, payer: outcome.payer };
  return { isValid: false, invalidReason: problem[0], message: problem[1], payer: outcome.payer };
}

/** The `invalidReason` of each refusal of a registered signing key (sdk/signing-keys.ts). */
const SIGNING_KEY_REASON_OF: Readonly<Record<SigningKeyReason, InvalidReason>> = {
  signer_mismatch: "signer_mismatch",
  signing_key_change_pending: "signing_key_change_pending",
  timestamp_in_future: "timestamp_in_future",
};

/** Hint for a signature no key can have made (not 65 bytes): most likely a contract wallet's own format. */
const REGISTERED_KEY_HINT =
  " (a contract wallet signs with the EOA key it registered in the Vault, Vault.setGuaranteeSigner)";

/**
 * The payer's signature when ECDSA recovery did not give `user_address` (`ecdsaProblem`), checked as Core's
 * issuance and the Vault check it (sdk/signing-keys.ts): it must recover to the signing key the payer
 * registered in the Vault, read at the latest block, with no change pending. Null when it does;
 * `invalid_signature` when no key made it (not a 65-byte low-s signature); `signer_mismatch`,
 * `signing_key_change_pending` or `timestamp_in_future` otherwise. Throws
 * {@link SignatureCheckUnavailableError} when the chain cannot be asked.
 */
export async function checkContractWalletSignature(
  signed: SignedGuarantee,
  ecdsaProblem: Problem,
  context: VerificationContext,
): Promise<Problem | null> {
  const { claims, signature, scheme } = signed;
  const wallets = context.contractWallets ?? null;
  if (ecdsaProblem[0] === "invalid_signature") {
    // No key made it: no registered key can either.
    return signature.length !== 2 + 2 * SIGNATURE_BYTES
      ? [ecdsaProblem[0], ecdsaProblem[1] + REGISTERED_KEY_HINT]
      : ecdsaProblem;
  }
  if (wallets === null) {
    return [
      ecdsaProblem[0],
      `${ecdsaProblem[1]} (contract-wallet payers' registered signing keys are not checked: no RPC URL configured)`,
    ];
  }
  const { hasher, chainId, vault } = context.deployment;
  const recovered = getAddress(recoverGuaranteeSignerLowerCase(hasher, claims, signature, scheme));
  let read;
  try {
    read = await wallets.signingKey(chainId, vault, claims.user);
  } catch (error) {
    if (!(error instanceof ContractWalletUnavailableError)) throw error;
    throw new SignatureCheckUnavailableError(
      `signature: made by ${recovered}, not user_address, and ${claims.user}'s signing key registered ` +
        `in the Vault could not be checked: ${error.message}`,
    );
  }
  const problem = checkRegisteredSigner(claims, recovered, read.registered, {
    now: read.blockTimestamp,
    gracePeriod: null,
  });
  return problem === null ? null : [SIGNING_KEY_REASON_OF[problem.reason], problem.message];
}

/** Every check except the signature, in order; null when all pass. */
function checkPayment(request: FacilitatorRequest, context: VerificationContext): Problem | null {
  const { deployment } = context;
  const requirements = request.paymentRequirements;
  const payload = request.paymentPayload;
  const claims = payload.payload.claims;
  // The policy the seller asks for, parsed once for every check below.
  const required = policyFromExtra(requirements.extra ?? null);

  if (requirements.scheme !== SCHEME) {
    return ["unsupported_scheme", `paymentRequirements.scheme must be "${SCHEME}"`];
  }
  const scheme = payloadScheme(payload);
  if (scheme !== undefined && scheme !== SCHEME) {
    return ["unsupported_scheme", `paymentPayload.scheme must be "${SCHEME}"`];
  }
  if (requirements.network !== deployment.network) {
    return ["unsupported_network", `paymentRequirements.network must be "${deployment.network}"`];
  }
  const network = payloadNetwork(payload);
  if (network !== undefined && network !== requirements.network) {
    return ["network_mismatch", "paymentPayload.network differs from paymentRequirements.network"];
  }
  const domainProblem =
    checkExtraDomain(requirements.extra ?? null, "paymentRequirements.extra", deployment.hasher.domain) ??
    (payload.x402Version === 2
      ? checkExtraDomain(
          payload.accepted.extra ?? null,
          "paymentPayload.accepted.extra",
          deployment.hasher.domain,
        )
      : null);
  if (domainProblem !== null) return domainProblem;
  if (payload.x402Version === 2) {
    const difference = requirementsDifference(payload.accepted, requirements, required);
    if (difference !== null) {
      return ["accepted_mismatch", `paymentPayload.accepted.${difference} differs from paymentRequirements`];
    }
  }

  if (!sameAddress(claims.recipient, requirements.payTo)) {
    return ["recipient_mismatch", "claims.recipient_address differs from paymentRequirements.payTo"];
  }
  if (!sameAddress(claims.asset, requirements.asset)) {
    return ["asset_mismatch", "claims.asset_address differs from paymentRequirements.asset"];
  }
  const amount = requiredAmount(requirements);
  if (claims.amount !== amount) {
    return ["amount_mismatch", `claims.amount is ${claims.amount}, the requirements ask for ${amount}`];
  }
  const policyProblem = checkRequiredPolicy(claims, required);
  if (policyProblem !== null) return policyProblem;
  const problem =
    checkClaimRules(claims, deployment) ??
    // The integrity fields of the policy the seller asked for bind to this guarantee as the claims' do.
    (claims.version === 2 && required !== null
      ? checkPolicyIntegrity(required, "paymentRequirements.extra", claims, deployment)
      : null) ??
    checkClaimTimes(claims, {
      now: context.clock.nowSeconds(),
      pastSeconds: context.timestampWindow.pastSeconds,
      futureSeconds: context.timestampWindow.futureSeconds,
      clockName: "the facilitator's time",
    }) ??
    // Core's cap as its public params gave it (api/routes.ts reloads them before a refusal stands).
    checkDeadlineCap(claims, { latest: deployment.latestValidationDeadline });
  if (problem !== null) return [INVALID_REASON_OF[problem.reason], problem.message];
  return null;
}

/**
 * The EIP-712 domain a seller's `extra` names (`chain_id`, `contract_address`, `eip712_name`,
 * `eip712_version`: what buyers sign under) against the deployment's; null when `extra` names none or the
 * same one.
 */
function checkExtraDomain(
  extra: Record<string, unknown> | null,
  field: string,
  domain: GuaranteeTypedDataDomain,
): Problem | null {
  const named = domainFromExtra(extra, field);
  if (named === null) return null;
  const difference = domainDifference(named, domain);
  if (difference === null) return null;
  const values = {
    chain_id: [named.chainId, domain.chainId],
    contract_address: [named.verifyingContract, domain.verifyingContract],
    eip712_name: [JSON.stringify(named.name), JSON.stringify(domain.name)],
    eip712_version: [JSON.stringify(named.version), JSON.stringify(domain.version)],
  }[difference];
  return [
    "domain_mismatch",
    `${field}.${difference}: ${values[0]} is not this deployment's (${values[1]}): the signing domain ` +
      "would not be the Vault's",
  ];
}

/**
 * The requirements decide which kind of guarantee the seller accepts: a policy in `extra` demands a V2
 * guarantee under exactly that policy, and no policy demands a V1 guarantee (a V2 guarantee is only
 * payable after validation, which a seller who asked for none did not agree to).
 */
function checkRequiredPolicy(claims: GuaranteeClaims, required: ValidationPolicy | null): Problem | null {
  if (claims.version === 1) {
    if (required !== null) {
      return [
        "policy_required",
        "paymentRequirements.extra asks for a validation policy; claims are version 1",
      ];
    }
    return null;
  }
  if (required === null) {
    return [
      "policy_mismatch",
      "claims carry a validation policy but paymentRequirements.extra asks for none",
    ];
  }
  const difference = policyDifference(claims.policy, required);
  if (difference !== null) {
    return [
      "policy_mismatch",
      `claims.validation_policy.${difference} differs from paymentRequirements.extra`,
    ];
  }
  return null;
}

/** The first signed policy field that differs (wire name), or null. Integrity fields are not compared. */
function policyDifference(a: ValidationPolicy, b: ValidationPolicy): string | null {
  if (!sameAddress(a.registry, b.registry)) return "validation_registry_address";
  if (!sameAddress(a.validator, b.validator)) return "validator_address";
  if (a.agentId !== b.agentId) return "validator_agent_id";
  if (a.minScore !== b.minScore) return "min_validation_score";
  if (a.jobHash !== b.jobHash) return "job_hash";
  if (a.tag !== b.tag) return "required_validation_tag";
  if (a.deadline !== b.deadline) return "validation_deadline";
  return null;
}

/** The first payment-relevant field of two requirements that differs, or null. */
function requirementsDifference(
  accepted: PaymentRequirements,
  requirements: PaymentRequirements,
  requiredPolicy: ValidationPolicy | null,
): string | null {
  if (accepted.scheme !== requirements.scheme) return "scheme";
  if (accepted.network !== requirements.network) return "network";
  if (!sameAddress(accepted.payTo, requirements.payTo)) return "payTo";
  if (!sameAddress(accepted.asset, requirements.asset)) return "asset";
  if (requiredAmount(accepted) !== requiredAmount(requirements)) return "amount";
  const acceptedPolicy = policyFromExtra(accepted.extra ?? null, "paymentPayload.accepted.extra");
  if ((acceptedPolicy === null) !== (requiredPolicy === null)) return "extra";
  if (
    acceptedPolicy !== null &&
    requiredPolicy !== null &&
    policyDifference(acceptedPolicy, requiredPolicy)
  ) {
    return "extra";
  }
  return null;
}
