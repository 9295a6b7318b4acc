/**
 * Identities and domains derived from signed values (docs/protocol.md, "Identities").
 * The contracts compute the very same values (CertificateCodec.sol); the shared
 * test vectors keep both in step.
 */
import { AbiCoder, keccak256, toUtf8Bytes } from "ethers";
import { keccakHex, WORD_BYTES, writeAddress, writeBytes32, writeUint } from "./abi-words";
import type { ValidationPolicy } from "./claims";

const abi = AbiCoder.defaultAbiCoder();

export const GUARANTEE_ID_TAG = keccak256(toUtf8Bytes("SURETY_GUARANTEE_ID_V1"));
export const CERTIFICATE_DOMAIN_TAG = keccak256(toUtf8Bytes("SURETY_CERTIFICATE_V1"));
export const VALIDATION_REQUEST_TAG = keccak256(toUtf8Bytes("SURETY_VALIDATION_REQUEST_V1"));
/** Published as `validation_hash_canonicalization_version` in the public params. */
export const VALIDATION_HASH_CANONICALIZATION_VERSION = "surety-validation-request-v1";

/** Where a guarantee lives: the chain and the Vault it is backed by. */
export interface Deployment {
  chainId: bigint | number;
  vault: string;
}

/** keccak256(abi.encode(GUARANTEE_ID_TAG, chainId, vault, user, reqId)): one id per payer request. */
export function guaranteeId(deployment: Deployment, user: string, reqId: bigint): string {
  // Word by word (sdk/abi-words.ts): this runs once per issued guarantee.
  const input = Buffer.alloc(5 * WORD_BYTES);
  writeBytes32(input, 0, GUARANTEE_ID_TAG);
  writeUint(input, 1, deployment.chainId);
  writeAddress(input, 2, deployment.vault);
  writeAddress(input, 3, user);
  writeUint(input, 4, reqId);
  return keccakHex(input);
}

/** The certificate domain (`active_guarantee_domain_separator`): binds certificates to one Vault. */
export function certificateDomain(deployment: Deployment): string {
  const input = Buffer.alloc(3 * WORD_BYTES);
  writeBytes32(input, 0, CERTIFICATE_DOMAIN_TAG);
  writeUint(input, 1, deployment.chainId);
  writeAddress(input, 2, deployment.vault);
  return keccakHex(input);
}

/** The ERC-8004 request hash that binds a V2 guarantee to its validation policy (docs/protocol.md, "Identities"). */
export function validationRequestHash(
  chainId: bigint | number,
  policy: Pick<
    ValidationPolicy,
    "registry" | "validator" | "agentId" | "minScore" | "tag" | "jobHash" | "deadline"
  >,
  id: string,
): string {
  return keccak256(
    abi.encode(
      [
        "bytes32",
        "uint256",
        "address",
        "address",
        "uint256",
        "bytes32",
        "uint8",
        "bytes32",
        "bytes32",
        "uint64",
      ],
      [
        VALIDATION_REQUEST_TAG,
        chainId,
        policy.registry,
        policy.validator,
        policy.agentId,
        id,
        policy.minScore,
        keccak256(toUtf8Bytes(policy.tag)),
        policy.jobHash,
        policy.deadline,
      ],
    ),
  );
}
