/**
 * Guarantee issuance (`POST /core/guarantees`): verify, lock, certify.
 *
 * Order of checks, cheapest and least revealing first:
 *   1. body shape (sdk parser; 400 naming the field)
 *   2. issuance authority for the recipient (403)
 *   3. supported asset, then the claim rules shared with the facilitator (sdk/claim-checks.ts: accepted
 *      version, V2 policy against the deployment) (400)
 *   4. payer signature, recovered natively with a hasher built once; only if it does not recover to the
 *      payer, the key the payer registered in the Vault (a contract wallet's; signing-keys.ts), read at the
 *      indexed block (400 invalid_signature / signing_key_change_pending / timestamp_in_future; 500
 *      signature_check_unavailable without a chain answer)
 *   5. identity already issued? (409; a byte-identical retry also gets the stored certificate): read only
 *      when a check of 6–7 refuses; otherwise the store transaction of 8 finds it (one read per batch)
 *   6. timestamp window against Core's wall clock, V2 deadline against chain time and its cap
 *      (sdk/claim-checks.ts; the cap is Core's, published as latest_validation_deadline) (400; 500 before
 *      Core has indexed a block)
 *   7. the books follow the chain (500 indexer_*: the collateral check would read a chain that is gone
 *      or far behind; chain/sync-status.ts)
 *   8. BLS certificate, then check-and-lock + insert in one store transaction
 *      (400 insufficient_collateral, or 409 if a concurrent twin won)
 * Identity comes before the clock checks so that a retried `/settle` of an
 * issued guarantee is answered idempotently even after its timestamp aged out.
 */
import type { BlsSigner } from "../../sdk/bls";
import { type Certificate, encodeCertificateClaims } from "../../sdk/certificate";
import {
  type GuaranteeClaims,
  parseSignedGuarantee,
  type SignedGuarantee,
  toWireValidationPolicy,
} from "../../sdk/claims";
import { type GuaranteeHasher, recoverGuaranteeSigner, verifyGuaranteeSignature } from "../../sdk/eip712";
import { checkRegisteredSigner, type SigningKeyReason } from "../../sdk/signing-keys";
import {
  CLAIM_CHECK_REASONS,
  type ClaimProblem,
  type ClaimRules,
  checkClaimRules,
  checkClaimTimes,
  checkDeadlineCap,
} from "../../sdk/claim-checks";
import { SignatureError, WireError } from "../../sdk/errors";
import { certificateDomain, type Deployment, guaranteeId } from "../../sdk/ids";
import { ChainError } from "../chain/gateway";
import type { ChainSyncMonitor, ChainSyncStatus } from "../chain/sync-status";
import type { CommitBondGate, CommitBondStatus } from "../clearing/bond-floor";
import type { CommitDeadlineGate, CommitDeadlineStatus } from "../clearing/commit-deadline";
import { canIssueFor, type Principal } from "../auth";
import { ChainClock, ChainTimeUnavailableError, type Clock } from "../clock";
import { collateralFactorBps, type OperatorConfig } from "../config";
import { type DeploymentInfo, isSupportedAsset } from "../deployment";
import { DomainError } from "../errors";
import type { Logger } from "../logger";
import type { PayerSigningKeys } from "./signing-keys";
import type { CoreMetrics } from "../metrics";
import { ACCEPTED_GUARANTEE_VERSIONS, sdkDeployment } from "../params";
import type { GuaranteeRecord, IssueGuaranteeOutcome, StoreAreas, StoredGuarantee } from "../store";
import { IssueBatcher } from "./batcher";
import type { IssuanceAdmission } from "./admission";
import { lockLimit } from "./capacity";
import { initialState } from "./transitions";
import { isAsyncBlsSigner } from "./signing-worker";
import { guaranteeIssuedEvent, type WebhookSource } from "../webhooks/events";
import { claimsOfRecord } from "./view";

export interface GuaranteeIssuerDeps {
  config: OperatorConfig;
  deployment: DeploymentInfo;
  store: StoreAreas<"guarantees" | "issuance">;
  /** Wall clock: the claim timestamp window and record stamps. */
  clock: Clock;
  /**
   * Chain time (the indexed head, operator/clock.ts ChainClock): the V2 validation deadline is judged
   * by the ValidationRegistry's and Vault's `block.timestamp`, so "passed" and the cap are too.
   */
  chainClock: Clock;
  logger: Logger;
  metrics: CoreMetrics;
  /** EIP-712 hasher of this deployment's domain (built once). */
  hasher: GuaranteeHasher;
  /** Core's certificate signer (key parsed once); an AsyncBlsSigner signs off the event loop. */
  signer: BlsSigner;
  trustedRegistries: readonly string[];
  /**
   * Latest V2 `validation_deadline` accepted at `now` (null: no cap). Contracts security review,
   * finding 1: see maxV2ValidationDeadline in operator/chain/timings.ts.
   */
  maxValidationDeadline?: (now: number) => number | null;
  /** Whether the books follow the chain; issuance is refused (500) while they do not. */
  chainSync?: Pick<ChainSyncMonitor, "status">;
  /**
   * Whether clearing commits can be sent (operator bond at the ClearingHouse floor); issuance is refused
   * (500) while they are held back or the verdict is unknown (operator/clearing/bond-floor.ts).
   */
  commitBond?: Pick<CommitBondGate, "status">;
  /**
   * Whether the clearing commits owed land by their deadline (cutoff + commitDelay + confirmationLag);
   * issuance is refused (500) while they might not (operator/clearing/commit-deadline.ts).
   */
  commitDeadline?: Pick<CommitDeadlineGate, "status">;
  /** Sheds issuance under saturation so that deadline work runs first (admission.ts); none: every request admitted. */
  admission?: Pick<IssuanceAdmission, "admit">;
  /** Payers' registered signing keys (contract wallets), read from the Vault; absent or null: EOA signatures only. */
  signingKeys?: PayerSigningKeys | null;
  /**
   * The smallest `withdrawalGracePeriod` in force or scheduled (the delay of a signing key change); null:
   * unknown (tests without a Vault).
   */
  signingKeyGracePeriod?: () => number | null;
}

/**
 * Rejection codes of `POST /core/guarantees` (also the `reason` label of the rejection metric): the claim
 * checks shared with the facilitator (sdk/claim-checks.ts) under their own codes, and Core's.
 */
export const ISSUANCE_ERRORS = {
  ...CLAIM_CHECK_REASONS,
  invalidRequest: "invalid_request",
  notAuthorized: "not_authorized_for_recipient",
  unsupportedAsset: "unsupported_asset",
  invalidSignature: "invalid_signature",
  duplicate: "duplicate_guarantee",
  chainTimeUnavailable: "chain_time_unavailable",
  insufficientCollateral: "insufficient_collateral",
  signatureCheckUnavailable: "signature_check_unavailable",
  signingKeyChangePending: "signing_key_change_pending",
  indexerHalted: "indexer_halted",
  indexerStale: "indexer_stale",
  indexerLagging: "indexer_lagging",
  indexerStarting: "indexer_starting",
  commitBondShort: "commit_bond_short",
  commitBondUnknown: "commit_bond_unknown",
  commitDeadlineAtRisk: "commit_deadline_at_risk",
  overloaded: "issuance_overloaded",
} as const;

export type IssuanceErrorCode = (typeof ISSUANCE_ERRORS)[keyof typeof ISSUANCE_ERRORS];

/** A refusal of `POST /core/guarantees` (statuses: api/errors.ts; docs/operator-api.md). */
export class IssuanceError extends DomainError<IssuanceErrorCode> {
  override readonly name = "IssuanceError";
}

/** The refusal code (status 500, docs/operator-api.md) for each state of the chain sync that refuses issuance. */
const CHAIN_SYNC_CODES: Readonly<Record<ChainSyncStatus["state"], IssuanceErrorCode | null>> = {
  off: null,
  ok: null,
  starting: ISSUANCE_ERRORS.indexerStarting,
  lagging: ISSUANCE_ERRORS.indexerLagging,
  stale: ISSUANCE_ERRORS.indexerStale,
  halted: ISSUANCE_ERRORS.indexerHalted,
};

/** The refusal for a chain sync state in which Core cannot judge collateral; null when it can. */
export function chainSyncRefusal(status: ChainSyncStatus): IssuanceError | null {
  const code = CHAIN_SYNC_CODES[status.state];
  if (code === null) return null;
  return new IssuanceError(
    code,
    `Core cannot check collateral against the chain now: ${status.reason}; no guarantee is issued until it can` +
      ` (GET /core/health)`,
  );
}

/**
 * The refusal while Core cannot commit what it would issue (null when it can): with the operator bond below
 * the ClearingHouse's floor the scheduler sends no commit, so a new guarantee would stay uncommitted while
 * its payer's withdrawal clock runs and the withdrawal could finalize first (docs/clearing.md "Bond floor,
 * enforced on chain").
 */
export function commitBondRefusal(status: CommitBondStatus): IssuanceError | null {
  if (status.state === "short") {
    const short = status.assets
      .filter((a) => a.bond < a.required)
      .map((a) => `${a.asset} bond ${a.bond} < required ${a.required}`)
      .join(", ");
    return new IssuanceError(
      ISSUANCE_ERRORS.commitBondShort,
      `Core cannot commit clearing cycles now: the operator bond is below the ClearingHouse floor` +
        ` (${short || "cycle " + String(status.cycleId)}); no guarantee is issued until it is topped up` +
        ` (GET /core/health commit_bond)`,
    );
  }
  if (status.state === "unknown") {
    return new IssuanceError(
      ISSUANCE_ERRORS.commitBondUnknown,
      "Core cannot tell whether clearing cycles can be committed (the clearing scheduler's verdict is" +
        " missing or stale); no guarantee is issued until it can (GET /core/health commit_bond)",
    );
  }
  return null;
}

/**
 * The refusal while the clearing commits Core owes might land after the grace-period budget (null when
 * they land in time): a guarantee acknowledged now would add to work that cannot be committed in time
 * (operator/clearing/commit-deadline.ts, docs/clearing.md "Cadence and the commit deadline").
 */
export function commitDeadlineRefusal(status: CommitDeadlineStatus): IssuanceError | null {
  if (status.state !== "at_risk") return null;
  return new IssuanceError(
    ISSUANCE_ERRORS.commitDeadlineAtRisk,
    `Core cannot commit more guarantees in time now: ${status.reason ?? "clearing is behind"}; no guarantee ` +
      "is issued until the clearing commits catch up (GET /core/health commit_deadline)",
  );
}

const E = ISSUANCE_ERRORS;

/** Core's code for each refusal of a registered signing key (sdk/signing-keys.ts). */
const SIGNING_KEY_CODES: Readonly<Record<SigningKeyReason, IssuanceErrorCode>> = {
  signer_mismatch: E.invalidSignature,
  signing_key_change_pending: E.signingKeyChangePending,
  timestamp_in_future: E.timestampInFuture,
};

export class GuaranteeIssuer {
  private readonly batcher: IssueBatcher;
  private readonly sdkDeployment: Deployment;
  /** The certificate domain, computed once. */
  private readonly domain: string;
  /** What the claim rules shared with the facilitator are checked against. */
  private readonly claimRules: ClaimRules;
  /** The deployment the `guarantee.issued` webhook events belong to. */
  private readonly webhookSource: WebhookSource;

  constructor(private readonly deps: GuaranteeIssuerDeps) {
    this.batcher = new IssueBatcher(deps.store, deps.clock);
    this.sdkDeployment = sdkDeployment(deps.config, deps.deployment);
    this.domain = certificateDomain(this.sdkDeployment);
    this.claimRules = {
      ...this.sdkDeployment,
      acceptedVersions: ACCEPTED_GUARANTEE_VERSIONS,
      trustedRegistries: deps.trustedRegistries,
    };
    this.webhookSource = { chainId: deps.config.chainId, vault: deps.deployment.vault };
  }

  /** Issues the guarantee in `body` for `principal`; throws IssuanceErrors (and WireErrors: invalid_request). */
  async issue(principal: Principal, body: unknown): Promise<Certificate> {
    return this.issueSigned(principal, this.parseBody(body));
  }

  /**
   * The sdk's parser of the body (`parseSignedGuarantee`, the one definition of a signed guarantee); a
   * malformed body is counted as a rejection (invalid_request) and throws its WireError.
   */
  parseBody(body: unknown): SignedGuarantee {
    try {
      return parseSignedGuarantee(body);
    } catch (error) {
      this.deps.metrics.guaranteeRejected(rejectionReason(error));
      throw error;
    }
  }

  /** Issues a parsed signed guarantee for `principal`; throws IssuanceErrors. */
  async issueSigned(principal: Principal, signed: SignedGuarantee): Promise<Certificate> {
    // First and cheapest: under saturation nothing is checked, the deadline work goes first (admission.ts).
    const admitted = this.deps.admission?.admit() ?? null;
    try {
      if (admitted !== null && !admitted.admitted) {
        throw new IssuanceError(
          E.overloaded,
          `Core is shedding issuance to keep its deadlines: ${admitted.reason}; nothing was issued, retry shortly`,
        );
      }
      const certificate = await this.issueChecked(principal, signed);
      return certificate;
    } catch (error) {
      this.deps.metrics.guaranteeRejected(rejectionReason(error));
      throw error;
    } finally {
      if (admitted?.admitted) admitted.release();
    }
  }

  /**
   * A signature that does not recover to the payer (`ecdsa`): accepted only if it recovers to the key the
   * payer registered in the Vault, as `remunerate` and the dispute answers will check it, by the rule of
   * sdk/signing-keys.ts (no change pending, the latest key, a timestamp it covers for good). The key is read
   * at the block Core has indexed, whose time is the rule's `now`.
   */
  private async checkRegisteredKey(signed: SignedGuarantee, ecdsa: SignatureError): Promise<void> {
    const { claims } = signed;
    const keys = this.deps.signingKeys;
    let recovered: string;
    try {
      recovered = recoverGuaranteeSigner(this.deps.hasher, claims, signed.signature, signed.scheme);
    } catch (error) {
      if (!(error instanceof SignatureError)) throw error;
      const hint = keys
        ? " (a contract wallet signs with the EOA key it registered in the Vault, Vault.setGuaranteeSigner)"
        : "";
      throw new IssuanceError(E.invalidSignature, `signature: ${error.message}${hint}`);
    }
    if (!keys) throw new IssuanceError(E.invalidSignature, `signature: ${ecdsa.message}`);
    const { chainClock } = this.deps;
    const head = chainClock instanceof ChainClock ? chainClock.current() : null;
    const now = head?.blockTimestamp ?? this.chainNowFor("contract-wallet guarantees cannot be checked yet");
    let registered;
    try {
      registered = await keys.latest(claims.user, head?.blockNumber);
    } catch (error) {
      if (!(error instanceof ChainError)) throw error;
      this.deps.logger.warn({ payer: claims.user, reason: error.message }, "signing key read failed");
      throw new IssuanceError(
        E.signatureCheckUnavailable,
        `signature: made by ${recovered}, not user_address, and Core could not read ${claims.user}'s ` +
          `registered signing key from the Vault (${error.message}); nothing was issued`,
      );
    }
    const problem = checkRegisteredSigner(claims, recovered, registered, {
      now,
      gracePeriod: this.deps.signingKeyGracePeriod?.() ?? null,
    });
    if (problem !== null) throw new IssuanceError(SIGNING_KEY_CODES[problem.reason], problem.message);
  }

  private async issueChecked(principal: Principal, signed: SignedGuarantee): Promise<Certificate> {
    const { config, deployment, hasher, clock, metrics } = this.deps;
    const { claims } = signed;

    if (!canIssueFor(config, principal, claims.recipient)) {
      throw new IssuanceError(
        E.notAuthorized,
        `${principal.wallet} may not request guarantees for recipient ${claims.recipient}`,
      );
    }
    if (!isSupportedAsset(deployment, claims.asset)) {
      throw new IssuanceError(
        E.unsupportedAsset,
        `claims.asset_address: ${claims.asset} is not a supported asset (see GET /core/tokens)`,
      );
    }
    refuse(checkClaimRules(claims, this.claimRules));
    const id = guaranteeId(this.sdkDeployment, claims.user, claims.reqId);

    try {
      verifyGuaranteeSignature(hasher, claims, signed.signature, signed.scheme);
    } catch (error) {
      if (!(error instanceof SignatureError)) throw error;
      await this.checkRegisteredKey(signed, error);
    }

    // Identity before the clock and chain checks (module comment, step 5): the stored guarantee is read only
    // when one of them refuses. When they all pass, the issuance transaction's own duplicate check (the
    // batch reads the stored ids of the whole batch at once) answers a duplicate with the same 409.
    const now = clock.nowSeconds();
    try {
      this.checkAfterIdentity(claims, now);
    } catch (refusal) {
      const existing = await this.deps.store.guarantees.getGuarantee(id);
      if (existing) throw this.duplicate(existing, signed);
      throw refusal;
    }

    const encoded = encodeCertificateClaims(claims, { domain: this.domain, guaranteeId: id });
    const message = Buffer.from(encoded.slice(2), "hex");
    const { signer } = this.deps;
    const signature = isAsyncBlsSigner(signer) ? await signer.signAsync(message) : signer.sign(message);
    const certificate: Certificate = {
      claims: encoded,
      signature: "0x" + Buffer.from(signature).toString("hex"),
    };
    const record: GuaranteeRecord = {
      guaranteeId: id,
      version: claims.version,
      user: claims.user,
      recipient: claims.recipient,
      reqId: claims.reqId,
      amount: claims.amount,
      asset: claims.asset,
      timestamp: claims.timestamp,
      policy: claims.version === 2 ? { ...toWireValidationPolicy(claims.policy) } : null,
      scheme: signed.scheme,
      signature: signed.signature,
      certificateClaims: certificate.claims,
      certificateSignature: certificate.signature,
      // The table's first state (transitions.ts, `issued`): V1 payable at once, V2 waiting for validation.
      state: initialState(claims.version),
      createdAt: now,
    };
    const factor = collateralFactorBps(config, claims.asset);
    const outcome = await this.batcher.issue({
      record,
      // Capacity less what the payer's on-chain reserves hold beyond Core's locks (capacity.ts).
      capacity: (balance, reserves) => lockLimit(balance, reserves, factor),
      // Written in the issuance's own transaction, only if it is issued (docs/webhooks.md).
      events: [guaranteeIssuedEvent(this.webhookSource, record)],
    });
    this.settleOutcome(outcome, signed);
    metrics.guaranteeIssued(claims.version, signed.scheme);
    return certificate;
  }

  /** The checks after the identity's (steps 6 and 7, and the clearing gates); throws the first refusal. */
  private checkAfterIdentity(claims: GuaranteeClaims, now: number): void {
    this.checkTime(claims, now);
    const sync = this.deps.chainSync?.status();
    const refusal = sync === undefined ? null : chainSyncRefusal(sync);
    if (refusal !== null) throw refusal;
    const bond = this.deps.commitBond?.status();
    const bondRefusal = bond === undefined ? null : commitBondRefusal(bond);
    if (bondRefusal !== null) throw bondRefusal;
    const deadline = this.deps.commitDeadline?.status();
    const deadlineRefusal = deadline === undefined ? null : commitDeadlineRefusal(deadline);
    if (deadlineRefusal !== null) throw deadlineRefusal;
  }

  /**
   * The latest V2 `validation_deadline` issuance accepts at chain time `chainNow` (default: the chain
   * time Core has indexed); null: no cap, or no chain time yet. `GET /core/public-params` publishes it
   * through this same function, so the two are one rule.
   */
  latestValidationDeadline(chainNow?: number): number | null {
    let now = chainNow;
    if (now === undefined) {
      try {
        now = this.deps.chainClock.nowSeconds();
      } catch (error) {
        if (error instanceof ChainTimeUnavailableError) return null;
        throw error;
      }
    }
    return this.deps.maxValidationDeadline?.(now) ?? null;
  }

  /**
   * The timestamp window against Core's wall clock, the V2 deadline against chain time, then Core's cap on
   * the deadline (docs/operator-async.md, "V2 deadline cap"): all three rules of sdk/claim-checks.ts.
   */
  private checkTime(claims: GuaranteeClaims, now: number): void {
    const { timestampWindowPastSeconds, timestampWindowFutureSeconds } = this.deps.config;
    let chainNow: number | undefined;
    refuse(
      checkClaimTimes(claims, {
        now,
        pastSeconds: timestampWindowPastSeconds,
        futureSeconds: timestampWindowFutureSeconds,
        clockName: "Core's time",
        deadlineNow: () => (chainNow = this.chainNow()),
        deadlineClockName: "the chain's time (the latest block Core has indexed)",
      }),
    );
    if (claims.version === 2 && chainNow !== undefined) {
      refuse(
        checkDeadlineCap(claims, {
          latest: this.latestValidationDeadline(chainNow),
          now: chainNow,
          clockName: "the chain's time (the latest block Core has indexed)",
        }),
      );
    }
  }

  /** Chain time; refused (chain_time_unavailable) before Core has indexed a block. */
  private chainNow(): number {
    return this.chainNowFor("V2 guarantees cannot be issued yet");
  }

  private chainNowFor(what: string): number {
    try {
      return this.deps.chainClock.nowSeconds();
    } catch (error) {
      if (error instanceof ChainTimeUnavailableError) {
        throw new IssuanceError(E.chainTimeUnavailable, `${what}: ${error.message}`);
      }
      throw error;
    }
  }

  private settleOutcome(outcome: IssueGuaranteeOutcome, signed: SignedGuarantee): void {
    switch (outcome.kind) {
      case "issued":
        return;
      case "duplicate":
        throw this.duplicate(outcome.existing, signed);
      case "insufficient_collateral": {
        const { balance, capacity } = outcome;
        const available = capacity > balance.locked ? capacity - balance.locked : 0n;
        throw new IssuanceError(
          E.insufficientCollateral,
          `claims.amount: ${signed.claims.amount} exceeds available collateral ${available} of asset ${balance.asset} ` +
            `(deposited ${balance.deposited}, pending withdrawal ${balance.pendingWithdrawal}, ` +
            `locked ${balance.locked}, capacity less on-chain reserves ${capacity})`,
        );
      }
      case "failed":
        throw outcome.error;
    }
  }

  /**
   * 409 for an identity that was already issued. A byte-identical retry (same
   * scheme, same signature, same signed claims) gets the stored certificate,
   * so a retried settlement is idempotent; anything else gets none.
   */
  private duplicate(existing: StoredGuarantee, signed: SignedGuarantee): IssuanceError {
    const identical =
      existing.scheme === signed.scheme &&
      existing.signature.toLowerCase() === signed.signature.toLowerCase() &&
      this.deps.hasher.digest(claimsOfRecord(existing)) === this.deps.hasher.digest(signed.claims);
    const message = `guarantee ${existing.guaranteeId} (req_id ${existing.reqId} of ${existing.user}) was already issued`;
    if (!identical) return new IssuanceError(E.duplicate, message);
    // Signed again with Core's current key: the stored certificate after a key rotation, no longer verifies
    // on chain (deterministic BLS: under an unchanged key this is the stored certificate, byte for byte).
    const signature = this.deps.signer.sign(Buffer.from(existing.certificateClaims.slice(2), "hex"));
    return new IssuanceError(E.duplicate, message, {
      certificate: {
        claims: existing.certificateClaims,
        signature: "0x" + Buffer.from(signature).toString("hex"),
      },
    });
  }
}

/** A shared claim check's problem refused under its own reason code. */
function refuse(problem: ClaimProblem | null): void {
  if (problem !== null) throw new IssuanceError(problem.reason, problem.message);
}

function rejectionReason(error: unknown): string {
  if (error instanceof DomainError) return error.code;
  if (error instanceof WireError) return E.invalidRequest;
  return "internal_error";
}
