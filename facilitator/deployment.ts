/**
 * The deployment parameters the facilitator checks payments against, derived
 * once from Core's `GET /core/public-params` (interface spec "Public
 * parameters"): chain, Vault, EIP-712 domain (as a ready {@link GuaranteeHasher}),
 * accepted guarantee versions, trusted V2 registries, Core's BLS key and its V2 deadline cap.
 * The body is parsed and cross-checked by the sdk (`parsePublicParams`):
 * every problem is a WireError naming the field, so a Core that serves
 * something unusable is reported precisely.
 */
import { GuaranteeHasher } from "../sdk/eip712";
import { parsePublicParams } from "../sdk/public-params";
import { formatNetwork, type GuaranteeVersion } from "../sdk/wire";

/** What verification and settlement need, precomputed once per public-params load. */
export interface DeploymentParams {
  chainId: number;
  /** CAIP-2 `eip155:<chainId>`. */
  network: string;
  /** Vault address (EIP-712 `verifyingContract`), checksummed. */
  vault: string;
  /** EIP-712 hasher for the guarantee domain: type hashes and domain separator computed once. */
  hasher: GuaranteeHasher;
  acceptedVersions: readonly GuaranteeVersion[];
  /** Checksummed addresses of the V2 validation registries Core accepts. */
  trustedRegistries: readonly string[];
  /** Core's BLS public key, 96 compressed bytes (G2). */
  blsPublicKey: Uint8Array;
  /** Certificate domain (`active_guarantee_domain_separator`), lower-case hex. */
  certificateDomain: string;
  /**
   * Core's V2 deadline cap when the params were served (`latest_validation_deadline`, unix seconds); null
   * when Core applies none (or serves none). It only moves forward with chain time, so an older value is
   * stricter than Core's cap now (api/routes.ts reloads the params before refusing on it).
   */
  latestValidationDeadline: number | null;
}

/**
 * Parses and cross-checks Core's public params (sdk `parsePublicParams`:
 * inconsistent params are refused, since the facilitator would otherwise
 * approve payments Core must reject) into {@link DeploymentParams}. `field`
 * prefixes error paths.
 */
export function deploymentFromPublicParams(value: unknown, field = "public_params"): DeploymentParams {
  const params = parsePublicParams(value, field);
  const { chainId, vault } = params;
  return Object.freeze({
    chainId,
    network: formatNetwork(chainId),
    vault,
    hasher: new GuaranteeHasher({
      name: params.eip712Name,
      version: params.eip712Version,
      chainId,
      verifyingContract: vault,
    }),
    acceptedVersions: params.acceptedVersions,
    trustedRegistries: params.trustedRegistries,
    blsPublicKey: params.blsPublicKey,
    certificateDomain: params.certificateDomain,
    latestValidationDeadline: params.latestValidationDeadline,
  });
}
