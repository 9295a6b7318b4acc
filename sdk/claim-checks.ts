/**
 * The rules a guarantee's claims must meet that both Core's issuance (`POST /core/guarantees`) and the
 * facilitator's `/verify` apply: accepted version, the V2 policy's trusted registry, chain id and request
 * hash, the timestamp window, the V2 validation deadline and its cap (`latest_validation_deadline`). One definition, one set of reason codes
 * (Core answers them as its error `code`s; the facilitator maps them to its x402 `invalidReason`s,
 * docs/facilitator.md). Pure: the times are given.
 *
 * The checks come in two groups because Core places its signature and identity checks between them
 * (docs/operator-api.md: an issued guarantee is answered idempotently even after its timestamp aged out):
 * {@link checkClaimRules} needs no clock, {@link checkClaimTimes} does; the facilitator runs them in
 * the same order, checking the integrity fields of the policy a seller asked for in between
 * ({@link checkPolicyIntegrity}). Each returns the first problem, or null.
 */
import type { GuaranteeClaims, ValidationPolicy } from "./claims";
import { type Deployment, guaranteeId, validationRequestHash } from "./ids";
import { type GuaranteeVersion, sameAddress } from "./wire";

export const CLAIM_CHECK_REASONS = {
  unsupportedVersion: "unsupported_version",
  untrustedRegistry: "untrusted_validation_registry",
  chainIdMismatch: "validation_chain_id_mismatch",
  requestHashMismatch: "validation_request_hash_mismatch",
  timestampTooOld: "timestamp_too_old",
  timestampInFuture: "timestamp_in_future",
  deadlinePassed: "validation_deadline_passed",
  deadlineTooFar: "validation_deadline_too_far",
} as const;

export type ClaimCheckReason = (typeof CLAIM_CHECK_REASONS)[keyof typeof CLAIM_CHECK_REASONS];

/** A failed check: its reason code and a message naming the field at fault (`field: what is wrong`). */
export interface ClaimProblem {
  reason: ClaimCheckReason;
  message: string;
}

/**
 * What the clock-free rules are checked against: the deployment as Core publishes it (public params); its
 * chain id and Vault give the guarantee id behind a V2 request hash.
 */
export interface ClaimRules extends Deployment {
  acceptedVersions: readonly GuaranteeVersion[];
  trustedRegistries: readonly string[];
}

export interface ClaimTimes {
  /** Unix seconds the timestamp window is judged at. */
  now: number;
  /** A claim may be at most this many seconds older than `now`... */
  pastSeconds: number;
  /** ...and at most this many seconds ahead of it. */
  futureSeconds: number;
  /** Names `now` in messages, e.g. "Core's time". */
  clockName: string;
  /**
   * The time the V2 validation deadline is judged at (Core: chain time, the latest block it indexed; it
   * may throw when there is none yet); `now` when absent. Called only for V2 claims.
   */
  deadlineNow?: () => number;
  /** Names the deadline's time in messages (default: `clockName`). */
  deadlineClockName?: string;
}

const POLICY = "claims.validation_policy";
const S = CLAIM_CHECK_REASONS;

/** Version, then for V2 the policy's registry, chain id and request hash. */
export function checkClaimRules(claims: GuaranteeClaims, rules: ClaimRules): ClaimProblem | null {
  if (!rules.acceptedVersions.includes(claims.version)) {
    return {
      reason: S.unsupportedVersion,
      message: `claims.version: ${claims.version} is not accepted (accepted: ${rules.acceptedVersions.join(", ")})`,
    };
  }
  if (claims.version !== 2) return null;
  const { policy } = claims;
  if (!rules.trustedRegistries.some((registry) => sameAddress(registry, policy.registry))) {
    return {
      reason: S.untrustedRegistry,
      message:
        `${POLICY}.validation_registry_address: ${policy.registry} is not a trusted validation registry ` +
        "(trusted_validation_registries, GET /core/public-params)",
    };
  }
  return checkPolicyIntegrity(policy, POLICY, claims, rules);
}

/**
 * A policy's optional integrity fields against the guarantee they travel with: `validation_chain_id` must
 * be the deployment's chain, `validation_request_hash` the request hash derived from the claims
 * (docs/protocol.md). `integrity` is the policy carrying them (the claims' own, or one a seller asked for);
 * `field` names it in messages.
 */
export function checkPolicyIntegrity(
  integrity: Pick<ValidationPolicy, "chainId" | "requestHash">,
  field: string,
  claims: Extract<GuaranteeClaims, { version: 2 }>,
  deployment: Deployment,
): ClaimProblem | null {
  const chainId = Number(deployment.chainId);
  if (integrity.chainId !== undefined && integrity.chainId !== chainId) {
    return {
      reason: S.chainIdMismatch,
      message: `${field}.validation_chain_id: ${integrity.chainId} is not this deployment's chain id ${chainId}`,
    };
  }
  if (integrity.requestHash !== undefined) {
    const id = guaranteeId(deployment, claims.user, claims.reqId);
    const expected = validationRequestHash(chainId, claims.policy, id).toLowerCase();
    if (integrity.requestHash !== expected) {
      return {
        reason: S.requestHashMismatch,
        message: `${field}.validation_request_hash: does not match the request hash derived from the claims (${expected})`,
      };
    }
  }
  return null;
}

/** The timestamp window, then for V2 that the validation deadline has not passed. */
export function checkClaimTimes(claims: GuaranteeClaims, times: ClaimTimes): ClaimProblem | null {
  const { now, pastSeconds, futureSeconds, clockName } = times;
  if (claims.timestamp < now - pastSeconds) {
    return {
      reason: S.timestampTooOld,
      message: `claims.timestamp: ${claims.timestamp} is more than ${pastSeconds} s before ${clockName} ${now}`,
    };
  }
  if (claims.timestamp > now + futureSeconds) {
    return {
      reason: S.timestampInFuture,
      message: `claims.timestamp: ${claims.timestamp} is more than ${futureSeconds} s after ${clockName} ${now}`,
    };
  }
  if (claims.version !== 2) return null;
  const deadlineNow = times.deadlineNow?.() ?? now;
  const { deadline } = claims.policy;
  if (deadline <= deadlineNow) {
    return {
      reason: S.deadlinePassed,
      message: `${POLICY}.validation_deadline: ${deadline} is not after ${times.deadlineClockName ?? clockName} ${deadlineNow}`,
    };
  }
  return null;
}

/**
 * The latest V2 validation deadline accepted (docs/operator-async.md, "V2 deadline cap at issuance"): Core
 * computes it from the Vault's timings and its chain time, and publishes it as `latest_validation_deadline`
 * in `GET /core/public-params`.
 */
export interface DeadlineCap {
  /** The latest `validation_deadline` accepted (unix seconds); null: no cap. */
  latest: number | null;
  /** The time the cap was counted from (Core: its chain time), when known: named in messages. */
  now?: number;
  /** Names `now` in messages. */
  clockName?: string;
}

/**
 * For V2 claims, that `validation_deadline` is not after the latest accepted one: a pending V2 guarantee
 * must be resolved before a withdrawal requested now could finalize. Core applies it at issuance with the
 * cap at its chain time; the facilitator with the `latest_validation_deadline` of the public params it
 * holds (Core's cap moves forward with chain time, so an older value is stricter, unless the Vault's
 * timings were shortened meanwhile: then Core refuses at issuance under the same code).
 */
export function checkDeadlineCap(claims: GuaranteeClaims, cap: DeadlineCap): ClaimProblem | null {
  if (claims.version !== 2 || cap.latest === null) return null;
  const { latest, now } = cap;
  const field = `${POLICY}.validation_deadline`;
  if (now !== undefined && latest <= now) {
    return {
      reason: S.deadlineTooFar,
      message:
        `${field}: no V2 deadline is accepted with this deployment's timings: the withdrawal grace period ` +
        "does not exceed cycle length + commit delay + SURETY_V2_DEADLINE_MARGIN_SECONDS (docs/operator-async.md)",
    };
  }
  const { deadline } = claims.policy;
  if (deadline <= latest) return null;
  const beyond =
    now === undefined
      ? "is after the latest deadline accepted (latest_validation_deadline, GET /core/public-params)"
      : `is more than ${latest - now} s after ${cap.clockName ?? "now"} ${now}`;
  return {
    reason: S.deadlineTooFar,
    message:
      `${field}: ${deadline} ${beyond}; a pending V2 guarantee must be resolved before a withdrawal ` +
      `requested now could finalize (latest accepted: ${latest})`,
  };
}
