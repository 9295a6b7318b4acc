/**
 * The EIP-712 domain a buyer signs guarantees under (docs/protocol.md, "Payer signatures"):
 * `{name: eip712_name, version: eip712_version, chainId: chain_id,
 * verifyingContract: contract_address}` from Core's `GET /core/public-params`.
 * The buyer's network (`eip155:<chainId>`) follows from it: a buyer only pays
 * options on the chain its signatures are valid for.
 */
import {
  type GuaranteeDomainParams,
  type GuaranteeTypedDataDomain,
  guaranteeTypedDataDomain,
} from "../../eip712";
import { WireError } from "../../errors";
import { formatNetwork, parseAddress, parseObject, parseSafeInteger, parseString } from "../../wire";

const MAX_DOMAIN_TEXT_BYTES = 1024;

/** Parses the signing domain out of Core's public params; errors name the field (`public_params.chain_id`). */
export function domainFromPublicParams(value: unknown, field = "public_params"): GuaranteeTypedDataDomain {
  const wire = parseObject(value, field);
  const chainId = parseSafeInteger(wire.chain_id, `${field}.chain_id`);
  if (chainId === 0) throw new WireError(`${field}.chain_id`, "must be greater than zero");
  return guaranteeTypedDataDomain({
    name: parseString(wire.eip712_name, `${field}.eip712_name`, MAX_DOMAIN_TEXT_BYTES),
    version: parseString(wire.eip712_version, `${field}.eip712_version`, MAX_DOMAIN_TEXT_BYTES),
    chainId,
    verifyingContract: parseAddress(wire.contract_address, `${field}.contract_address`),
  });
}

/** The CAIP-2 network of a signing domain. */
export function domainNetwork(domain: GuaranteeDomainParams): string {
  return formatNetwork(BigInt(domain.chainId));
}
