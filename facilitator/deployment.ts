/**
 * The deployment parameters the facilitator checks payments against, derived
 * once from Core's `GET /core/public-params` (interface spec "Public
 * parameters"): chain, Vault, EIP-712 domain (as a ready {@link GuaranteeHasher}),
 * accepted guarantee versions, trusted V2 registries and Core's BLS key.
 *
 * The public-params JSON is parsed strictly here because the sdk does not
 * define it yet (see docs/facilitator.md); every problem is a WireError naming
 * the field, so a Core that serves something unusable is reported precisely.
 */
import { publicKeyFromArray } from "../sdk/bls";
import { GuaranteeHasher } from "../sdk/eip712";
import { WireError } from "../sdk/errors";
import { VALIDATION_HASH_CANONICALIZATION_VERSION, certificateDomain } from "../sdk/ids";
import {
  describeType,
  formatNetwork,
  parseAddress,
  parseBytes32,
  parseObject,
  parseSafeInteger,
  parseString,
  parseVersion,
  type GuaranteeVersion,
} from "../sdk/wire";

/** `GET /core/public-params`, as Core serves it. */
export interface WirePublicParams {
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
  /** Core's BLS public key, 48 compressed bytes. */
  blsPublicKey: Uint8Array;
  /** Certificate domain (`active_guarantee_domain_separator`), lower-case hex. */
  certificateDomain: string;
}

const MAX_TEXT_BYTES = 1024;

function parseArray(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new WireError(field, `must be an array, got ${describeType(value)}`);
  return value;
}

/**
 * Parses and cross-checks Core's public params into {@link DeploymentParams}.
 * `field` prefixes error paths. Inconsistent params (a domain separator that
 * is not this chain and Vault's, a max version that is not the largest
 * accepted one, an unknown validation-hash canonicalization) are refused:
 * the facilitator would otherwise approve payments Core must reject.
 */
export function deploymentFromPublicParams(value: unknown, field = "public_params"): DeploymentParams {
  const wire = parseObject(value, field);
  const chainId = parseSafeInteger(wire.chain_id, `${field}.chain_id`);
  if (chainId === 0) throw new WireError(`${field}.chain_id`, "must be greater than zero");
  const vault = parseAddress(wire.contract_address, `${field}.contract_address`);
  const name = parseString(wire.eip712_name, `${field}.eip712_name`, MAX_TEXT_BYTES);
  const version = parseString(wire.eip712_version, `${field}.eip712_version`, MAX_TEXT_BYTES);
  if (name === "") throw new WireError(`${field}.eip712_name`, "must not be empty");
  if (version === "") throw new WireError(`${field}.eip712_version`, "must not be empty");
  parseString(wire.ethereum_http_rpc_url, `${field}.ethereum_http_rpc_url`, MAX_TEXT_BYTES);

  const acceptedVersions = [
    ...new Set(
      parseArray(wire.accepted_guarantee_versions, `${field}.accepted_guarantee_versions`).map((v, i) =>
        parseVersion(v, `${field}.accepted_guarantee_versions[${i}]`),
      ),
    ),
  ].sort((a, b) => a - b);
  if (acceptedVersions.length === 0) {
    throw new WireError(`${field}.accepted_guarantee_versions`, "must not be empty");
  }
  const maxVersion = parseVersion(
    wire.max_accepted_guarantee_version,
    `${field}.max_accepted_guarantee_version`,
  );
  if (maxVersion !== acceptedVersions[acceptedVersions.length - 1]) {
    throw new WireError(
      `${field}.max_accepted_guarantee_version`,
      "must equal the largest of accepted_guarantee_versions",
    );
  }

  const trustedRegistries = parseArray(
    wire.trusted_validation_registries,
    `${field}.trusted_validation_registries`,
  ).map((address, i) => parseAddress(address, `${field}.trusted_validation_registries[${i}]`));

  const domain = parseBytes32(
    wire.active_guarantee_domain_separator,
    `${field}.active_guarantee_domain_separator`,
  );
  const expectedDomain = certificateDomain({ chainId, vault });
  if (domain !== expectedDomain.toLowerCase()) {
    throw new WireError(
      `${field}.active_guarantee_domain_separator`,
      "is not the certificate domain of chain_id and contract_address",
    );
  }
  const canonicalization = parseString(
    wire.validation_hash_canonicalization_version,
    `${field}.validation_hash_canonicalization_version`,
    MAX_TEXT_BYTES,
  );
  if (canonicalization !== VALIDATION_HASH_CANONICALIZATION_VERSION) {
    throw new WireError(
      `${field}.validation_hash_canonicalization_version`,
      `must be "${VALIDATION_HASH_CANONICALIZATION_VERSION}" (the one this facilitator implements)`,
    );
  }

  return Object.freeze({
    chainId,
    network: formatNetwork(chainId),
    vault,
    hasher: new GuaranteeHasher({ name, version, chainId, verifyingContract: vault }),
    acceptedVersions: Object.freeze(acceptedVersions),
    trustedRegistries: Object.freeze([...new Set(trustedRegistries)]),
    blsPublicKey: publicKeyFromArray(wire.public_key, `${field}.public_key`),
    certificateDomain: domain,
  });
}
