/**
 * What Core publishes about its deployment (`GET /core/public-params`,
 * `GET /core/tokens`), from config, the deployment file and the BLS key; the
 * public params also carry the Vault's current timings and issuance's current
 * V2 deadline cap, so they are built per request.
 */
import type { Deployment } from "../sdk/ids";
import {
  buildWirePublicParams,
  buildWireTokenList,
  type ProtocolTimingValues,
  type WirePublicParams,
  type WireTokenList,
} from "../sdk/public-params";
import type { GuaranteeVersion } from "../sdk/wire";
import type { OperatorConfig } from "./config";
import type { DeploymentInfo } from "./deployment";

/** Guarantee versions this Core verifies and certifies. */
export const ACCEPTED_GUARANTEE_VERSIONS: readonly GuaranteeVersion[] = Object.freeze([1, 2]);

/** The sdk's view of where guarantees live (ids, certificate domain). */
export function sdkDeployment(
  config: Pick<OperatorConfig, "chainId">,
  deployment: DeploymentInfo,
): Deployment {
  return { chainId: config.chainId, vault: deployment.vault };
}

/**
 * V2 registries Core accepts: `SURETY_TRUSTED_VALIDATION_REGISTRIES` when
 * set, otherwise the ones the deploy script trusted on the Vault. (A registry
 * the Vault does not trust would make `remunerate` revert, so the config
 * should only ever narrow the deployment's list.)
 */
export function trustedRegistries(
  config: Pick<OperatorConfig, "trustedValidationRegistries">,
  deployment: DeploymentInfo,
): readonly string[] {
  return config.trustedValidationRegistries.length > 0
    ? config.trustedValidationRegistries
    : deployment.trustedRegistries;
}

/** The public params that change while Core runs. */
export interface LivePublicParams {
  /** The Vault's timings as Core knows them now (they follow `TimingsUpdated`); null before loaded. */
  timings: ProtocolTimingValues | null;
  /** Issuance's V2 deadline cap now (GuaranteeIssuer.latestValidationDeadline); null: no cap. */
  latestValidationDeadline: number | null;
}

/** `GET /core/public-params` (built by the sdk, which derives the domain separator and max version). */
export function buildPublicParams(
  config: OperatorConfig,
  deployment: DeploymentInfo,
  blsPublicKey: Uint8Array,
  live: LivePublicParams,
): Readonly<WirePublicParams> {
  return Object.freeze(
    buildWirePublicParams({
      blsPublicKey,
      vault: deployment.vault,
      rpcUrl: config.publicRpcUrl,
      eip712Name: config.eip712Name,
      eip712Version: config.eip712Version,
      chainId: config.chainId,
      acceptedVersions: ACCEPTED_GUARANTEE_VERSIONS,
      trustedRegistries: trustedRegistries(config, deployment),
      clearingHouse: deployment.clearingHouse,
      timings: live.timings,
      latestValidationDeadline: live.latestValidationDeadline,
    }),
  );
}

/** `GET /core/tokens`. */
export function buildTokensResponse(
  config: Pick<OperatorConfig, "chainId">,
  deployment: DeploymentInfo,
): Readonly<WireTokenList> {
  return Object.freeze(buildWireTokenList(config.chainId, deployment.tokens));
}
