/**
 * A payer's finalization of a V2 guarantee (docs/protocol.md "Payer finalization"): the payer decides to pay
 * without the validator's verdict (`POST /core/guarantees/{id}/finalize`), and signs that decision so that it
 * holds on chain. EIP-712 typed data `Finalization(bytes32 guaranteeId)` under the guarantees' own domain
 * (`verifyingContract` = the Vault), signed by the key that signed the guarantee (the payer itself, or the
 * key a contract wallet registered in the Vault for the guarantee's timestamp). A dispute answer carries it in
 * place of the verdict (contracts/lib/GuaranteeSignature.sol `FINALIZATION_TYPEHASH`,
 * `GuaranteeVerifier._payerFinalized`), so the payer cannot have a guarantee it finalized removed from its
 * debit. The one definition of the type; the contract's constant is tested against it.
 */
import { Signature, TypedDataEncoder, getAddress, recoverAddress, type TypedDataField } from "ethers";
import { SignatureError, WireError } from "./errors";
import { guaranteeHasher, type GuaranteeDomainParams, type GuaranteeHasher } from "./eip712";

/** The primary type and its one field (names and order are part of the signed type). */
export const FINALIZATION_PRIMARY_TYPE = "Finalization";
export const FINALIZATION_FIELDS: readonly TypedDataField[] = Object.freeze([
  { name: "guaranteeId", type: "bytes32" },
]);
/** `Finalization(bytes32 guaranteeId)`. */
export const FINALIZATION_TYPE = "Finalization(bytes32 guaranteeId)";

const BYTES32_HEX = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE_65_HEX = /^0x[0-9a-fA-F]{130}$/;

/** What {@link signFinalization} needs from a wallet; ethers' `Wallet` and `JsonRpcSigner` fit. */
export interface FinalizationSigner {
  signTypedData(
    domain: Record<string, unknown>,
    types: Record<string, TypedDataField[]>,
    value: Record<string, unknown>,
  ): Promise<string>;
}

function checkedId(guaranteeId: string): string {
  if (typeof guaranteeId !== "string" || !BYTES32_HEX.test(guaranteeId))
    throw new WireError("guarantee_id", "must be a 0x-prefixed 32-byte hex string");
  return guaranteeId.toLowerCase();
}

/** The typed data a wallet signs: domain, types and message. */
export function finalizationTypedData(
  domain: GuaranteeDomainParams | GuaranteeHasher,
  guaranteeId: string,
): {
  domain: Record<string, unknown>;
  types: Record<string, TypedDataField[]>;
  message: { guaranteeId: string };
} {
  return {
    domain: { ...guaranteeHasher(domain).domain },
    types: { [FINALIZATION_PRIMARY_TYPE]: [...FINALIZATION_FIELDS] },
    message: { guaranteeId: checkedId(guaranteeId) },
  };
}

/** The EIP-712 digest of the finalization of `guaranteeId`, 0x-hex. */
export function finalizationDigest(
  domain: GuaranteeDomainParams | GuaranteeHasher,
  guaranteeId: string,
): string {
  const t = finalizationTypedData(domain, guaranteeId);
  return TypedDataEncoder.hash(t.domain, t.types, t.message);
}

/** Signs the finalization of `guaranteeId` as the payer (or its registered signing key). */
export async function signFinalization(
  wallet: FinalizationSigner,
  domain: GuaranteeDomainParams | GuaranteeHasher,
  guaranteeId: string,
): Promise<string> {
  const t = finalizationTypedData(domain, guaranteeId);
  return wallet.signTypedData(t.domain, t.types, t.message);
}

/**
 * The address (EIP-55) that signed the finalization: a 65-byte low-s signature, as the chain accepts it
 * (OpenZeppelin's ECDSA). Throws {@link SignatureError} otherwise.
 */
export function recoverFinalizationSigner(
  domain: GuaranteeDomainParams | GuaranteeHasher,
  guaranteeId: string,
  signature: string,
): string {
  if (typeof signature !== "string" || !SIGNATURE_65_HEX.test(signature))
    throw new SignatureError("finalization signature must be 65 bytes of 0x hex (r ‖ s ‖ v)");
  let parsed: Signature;
  try {
    parsed = Signature.from(signature);
  } catch {
    throw new SignatureError("finalization signature is not a valid low-s ECDSA signature");
  }
  return getAddress(recoverAddress(finalizationDigest(domain, guaranteeId), parsed));
}
