/**
 * Core's services, wired in one place: what the route modules (operator/api/) and the background
 * work (operator/app/work.ts) are handed. `CoreDeps` are injected (tests swap the clocks, store,
 * logger, config, deployment and chain); `CoreServices` are built from them once per process, or
 * injected too. Everything expensive to build (BLS signer, EIP-712 hasher, public params) is built
 * here, once. Nothing here knows HTTP: a background-only process builds this and no Express app.
 */
import { Wallet } from "ethers";
import type { BlsSigner } from "../../sdk/bls";
import { GuaranteeHasher } from "../../sdk/eip712";
import type { WirePublicParams, WireTokenList } from "../../sdk/public-params";
import type { ChainGateway } from "../chain";
import { ChainSyncMonitor } from "../chain/sync-status";
import { CommitBondGate } from "../clearing/bond-floor";
import { CommitDeadlineGate } from "../clearing/commit-deadline";
import { IssuanceAdmission } from "../guarantees/admission";
import { ProtocolTimings, strictestV2ValidationDeadline } from "../chain/timings";
import { type Clock, systemClock } from "../clock";
import type { OperatorConfig } from "../config";
import type { DeploymentInfo } from "../deployment";
import { PayerSigningKeys } from "../guarantees/signing-keys";
import { GuaranteeIssuer } from "../guarantees";
import { operatorBlsSigner } from "../guarantees/signing-worker";
import { V2Lifecycle } from "../lifecycle/v2-lifecycle";
import type { Logger } from "../logger";
import { HealthMonitor } from "../health";
import { CoreMetrics } from "../metrics";
import { buildPublicParams, buildTokensResponse, trustedRegistries } from "../params";
import type { Store } from "../store";
import { AccessTokens, AuthService } from "../auth";
import { type LeadershipView, SoleOwnership } from "../leadership/ownership";

export interface CoreDeps {
  config: OperatorConfig;
  store: Store;
  /** Wall clock: Core's own rules (auth lifetimes, the claim timestamp window, webhooks, stamps). */
  clock: Clock;
  /**
   * Chain time: every deadline a contract also judges by `block.timestamp` (docs/operator-async.md,
   * "Which clock"). The server uses a ChainClock fed by its indexer; tests may inject a ManualClock.
   */
  chainClock: Clock;
  logger: Logger;
  /** The active deployment (`deployments/<network>.json`). */
  deployment: DeploymentInfo;
  chain: ChainGateway;
}

export interface CoreServices {
  accessTokens: AccessTokens;
  auth: AuthService;
  /** Core's certificate signer; its public key is `public_key` in the public params. */
  signer: BlsSigner;
  hasher: GuaranteeHasher;
  metrics: CoreMetrics;
  issuer: GuaranteeIssuer;
  /** The V2 lifecycle: the payer's finalization (routes) and the deadline decisions (background tasks) share it. */
  lifecycle: V2Lifecycle;
  /** The Vault's timings as Core knows them (loaded at startup, kept current by the indexer). */
  timings: ProtocolTimings;
  /** Whether the books follow the chain: the indexer reports to it; health, issuance and metrics read it. */
  chainSync: ChainSyncMonitor;
  /** Whether the clearing scheduler holds commits back for a bond below the on-chain floor (health, metrics). */
  commitBond: CommitBondGate;
  /** Whether the scheduler can commit what is owed by its deadline (issuance gate, health, metrics). */
  commitDeadline: CommitDeadlineGate;
  /** Sheds issuance under saturation (500 issuance_overloaded) so that deadline work runs first; stopped with Core. */
  admission: IssuanceAdmission;
  /** `GET /core/public-params` now (the timings and the V2 deadline cap are live). */
  publicParams: () => Readonly<WirePublicParams>;
  tokens: Readonly<WireTokenList>;
  /** Who runs the background work (`leadership` in `GET /core/health`; docs/scale-out.md). */
  leadership: { view(): LeadershipView };
  /** The warnings of `GET /core/health` and the figures `/metrics` exports for them (docs/monitoring.md). */
  health: HealthMonitor;
}

export type CoreContext = CoreDeps & CoreServices;

export function createCoreContext(deps: CoreDeps, services: Partial<CoreServices> = {}): CoreContext {
  const { config, deployment } = deps;
  const accessTokens = services.accessTokens ?? new AccessTokens(config, deps.clock);
  const auth = services.auth ?? new AuthService({ ...deps, accessTokens });
  const signer = services.signer ?? operatorBlsSigner(config);
  const hasher =
    services.hasher ??
    new GuaranteeHasher({
      name: config.eip712Name,
      version: config.eip712Version,
      chainId: config.chainId,
      verifyingContract: deployment.vault,
    });
  const chainSync =
    services.chainSync ??
    new ChainSyncMonitor({
      limits: { maxLagBlocks: config.indexerMaxLagBlocks, maxStaleSeconds: config.indexerMaxStaleSeconds },
      // Wall time, not deps.clock: staleness must grow even when chain time stops (sync-status.ts).
      clock: systemClock,
      logger: deps.logger,
    });
  const operator = config.operatorPrivateKey
    ? { address: new Wallet(config.operatorPrivateKey).address, clock: systemClock }
    : undefined;
  const commitBond = services.commitBond ?? new CommitBondGate({ logger: deps.logger, clock: systemClock });
  const commitDeadline =
    services.commitDeadline ?? new CommitDeadlineGate({ logger: deps.logger, clock: systemClock });
  const timings = services.timings ?? new ProtocolTimings();
  const admission =
    services.admission ??
    new IssuanceAdmission({
      maxInFlight: config.issuanceMaxInFlight,
      maxLoopDelayMs: config.issuanceMaxLoopDelayMs,
      logger: deps.logger,
    });
  // The bond monitor reports to the metrics (CoreMetrics.observeBond); health reads it from there.
  const bonds = {
    read: (): ReadonlyMap<string, bigint> => new Map(),
    owed: (): ReadonlyMap<string, bigint> => new Map(),
  };
  const health =
    services.health ??
    new HealthMonitor({
      store: deps.store,
      clock: deps.clock,
      chainClock: deps.chainClock,
      config,
      timings,
      chainSync,
      commitBond,
      bonds: () => bonds.read(),
      refundsOwed: () => bonds.owed(),
      logger: deps.logger,
    });
  const metrics =
    services.metrics ?? new CoreMetrics(deps.store, chainSync, operator, commitBond, health, commitDeadline);
  bonds.read = () => metrics.bondValues();
  bonds.owed = () => metrics.refundsOwedValues();
  const issuer =
    services.issuer ??
    new GuaranteeIssuer({
      ...deps,
      metrics,
      hasher,
      signer,
      trustedRegistries: trustedRegistries(config, deployment),
      chainSync,
      commitBond,
      commitDeadline,
      admission,
      signingKeys: PayerSigningKeys.over(deps.chain, deployment.vault),
      // A key change reaches timestamps a grace period after it: the smallest grace that is or may come in force.
      signingKeyGracePeriod: () => {
        const graces = timings.bounding().map((t) => t.withdrawalGracePeriod);
        return graces.length === 0 ? null : Math.min(...graces);
      },
      // Under the timings in force and every scheduled change (operator/chain/timings.ts).
      maxValidationDeadline: (now) =>
        strictestV2ValidationDeadline(timings.bounding(), now, config.v2DeadlineMarginSeconds),
    });
  const lifecycle =
    services.lifecycle ??
    new V2Lifecycle({
      store: deps.store,
      clock: deps.clock,
      chainClock: deps.chainClock,
      logger: deps.logger,
      chainId: config.chainId,
      transitionRefusals: metrics,
      hasher,
      signingKeys: PayerSigningKeys.over(deps.chain, deployment.vault),
    });
  return {
    ...deps,
    accessTokens,
    auth,
    signer,
    hasher,
    metrics,
    issuer,
    lifecycle,
    timings,
    chainSync,
    commitBond,
    commitDeadline,
    admission,
    publicParams:
      services.publicParams ??
      (() =>
        buildPublicParams(config, deployment, signer.publicKey, {
          timings: timings.get(),
          // Through issuance's own function: what is published is what issuance applies.
          latestValidationDeadline: issuer.latestValidationDeadline(),
        })),
    tokens: services.tokens ?? buildTokensResponse(config, deployment),
    leadership: services.leadership ?? new SoleOwnership(deps.store),
    health,
  };
}
