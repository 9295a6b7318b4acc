/**
 * What Core publishes about its deployment (`GET /core/public-params`,
 * `GET /core/tokens`), computed once at startup from config, the deployment
 * file and the BLS key.
 */
import type { Deployment } from "../sdk/ids";
import {
  buildWirePublicParams,
  buildWireTokenList,
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

/** `GET /core/public-params` (built by the sdk, which derives the domain separator and max version). */
export function buildPublicParams(
  config: OperatorConfig,
  deployment: DeploymentInfo,
  blsPublicKey: Uint8Array,
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
