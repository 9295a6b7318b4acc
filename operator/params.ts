/**
 * What Core publishes about its deployment (`GET /core/public-params`,
 * `GET /core/tokens`), computed once at startup from config, the deployment
 * file and the BLS key.
 */
import { publicKeyToArray } from "../sdk/bls";
import type { Deployment } from "../sdk/ids";
import { certificateDomain, VALIDATION_HASH_CANONICALIZATION_VERSION } from "../sdk/ids";
import type { GuaranteeVersion } from "../sdk/wire";
import type { OperatorConfig } from "./config";
import type { DeploymentInfo } from "./deployment";

/** Guarantee versions this Core verifies and certifies. */
export const ACCEPTED_GUARANTEE_VERSIONS: readonly GuaranteeVersion[] = Object.freeze([1, 2]);
export const MAX_ACCEPTED_GUARANTEE_VERSION: GuaranteeVersion = 2;

export interface PublicParams {
  public_key: number[];
  contract_address: string;
  ethereum_http_rpc_url: string;
  eip712_name: string;
  eip712_version: string;
  chain_id: number;
  max_accepted_guarantee_version: number;
  accepted_guarantee_versions: number[];
  active_guarantee_domain_separator: string;
  trusted_validation_registries: string[];
  validation_hash_canonicalization_version: string;
}

export interface TokensResponse {
  chain_id: number;
  tokens: { symbol: string; address: string; decimals: number }[];
}

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

export function buildPublicParams(
  config: OperatorConfig,
  deployment: DeploymentInfo,
  blsPublicKey: Uint8Array,
): Readonly<PublicParams> {
  return Object.freeze({
    public_key: publicKeyToArray(blsPublicKey),
    contract_address: deployment.vault,
    ethereum_http_rpc_url: config.publicRpcUrl,
    eip712_name: config.eip712Name,
    eip712_version: config.eip712Version,
    chain_id: config.chainId,
    max_accepted_guarantee_version: MAX_ACCEPTED_GUARANTEE_VERSION,
    accepted_guarantee_versions: [...ACCEPTED_GUARANTEE_VERSIONS],
    active_guarantee_domain_separator: certificateDomain(sdkDeployment(config, deployment)),
    trusted_validation_registries: [...trustedRegistries(config, deployment)],
    validation_hash_canonicalization_version: VALIDATION_HASH_CANONICALIZATION_VERSION,
  });
}

export function buildTokensResponse(
  config: Pick<OperatorConfig, "chainId">,
  deployment: DeploymentInfo,
): Readonly<TokensResponse> {
  return Object.freeze({
    chain_id: config.chainId,
    tokens: deployment.tokens.map(({ symbol, address, decimals }) => ({ symbol, address, decimals })),
  });
}
