// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";

import {GuaranteeSignature} from "../lib/GuaranteeSignature.sol";
import {IGuaranteeErrors} from "./IGuaranteeErrors.sol";

/// @title IGuaranteeVerifier
/// @notice Checks what a guarantee carries: its claims (CertificateCodec encoding), Core's BLS certificate
/// over them (G1 signature, G2 key, POP tag) and the payer's own signature (EIP-712 / EIP-191; a contract
/// wallet's by the EOA key it registered in the Vault, never ERC-1271) under the Vault's EIP-712 domain.
/// Stateless and trusting no caller: everything it checks against (key, domain, Vault) is an argument. One
/// deployment serves the Vault and the ClearingHouse.
interface IGuaranteeVerifier is IGuaranteeErrors {
    /// @notice Whose signature a guarantee needs: its `user`, the Vault holding that payer's registered signing
    /// keys ({IClearingVault-guaranteeSignerAt}) and the guarantee's `timestamp`, which picks the key.
    struct Payer {
        address vault;
        address user;
        uint64 timestamp;
    }

    /// @notice The fields of a V1 certificate a seller's reserve needs.
    struct V1Guarantee {
        bytes32 guaranteeId;
        address user;
        address recipient;
        address asset;
        uint256 amount;
        uint64 timestamp;
    }

    /// @notice What a disputed guarantee is checked against: the Vault (its certificate domain, trusted
    /// registries), its EIP-712 separator, Core's BLS key, and the disputing debtor and asset.
    struct Dispute {
        address vault;
        bytes32 separator;
        BLS.G2Point key;
        address debtor;
        address asset;
    }

    /// @notice A disputed guarantee, as far as the dispute needs it.
    struct DisputedGuarantee {
        bytes32 guaranteeId;
        address recipient;
        uint256 amount;
        bool validated;
    }

    /// @notice Reverts unless `signature` is `key`'s BLS signature over `claims` (`OperatorKeyNotSet` for an
    /// all-zero key, `InvalidCertificateSignature`) and `payerSignature` is `payer`'s signature of the
    /// guarantee's EIP-712 `digest` with `payerScheme` (`InvalidPayerSignature`), in that order: the signature
    /// recovers to `payer.user`, or to the key `payer.user` registered in `payer.vault` for `payer.timestamp`.
    /// @param key The operator's BLS key (EIP-2537 G2; all zero: none set).
    /// @param claims The certificate claims (the BLS-signed message).
    /// @param signature Core's BLS signature (G1).
    /// @param digest The guarantee's EIP-712 digest under the Vault's domain.
    /// @param payer The guarantee's `user` and `timestamp`, and the Vault.
    /// @param payerScheme How the payer signed.
    /// @param payerSignature The payer's signature.
    function checkSignatures(
        BLS.G2Point calldata key,
        bytes calldata claims,
        BLS.G1Point calldata signature,
        bytes32 digest,
        Payer calldata payer,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    ) external view;

    /// @notice Decodes and verifies a V1 certificate of `vault`: V1 claims (strict codec; `NotV1Certificate`
    /// otherwise), the Vault's certificate domain on this chain, the guarantee id derived from its fields,
    /// Core's BLS signature against `key`, and the payer's signature under `separator` (its own, or its key
    /// registered in `vault` for the claims' timestamp).
    /// @param vault The Vault the certificate must be for.
    /// @param separator The Vault's EIP-712 domain separator.
    /// @param key The operator's BLS key.
    /// @param claims The certificate claims.
    /// @param signature Core's BLS signature over `claims`.
    /// @param payerScheme How the payer signed.
    /// @param payerSignature The payer's signature over the guarantee.
    /// @return g The guarantee's fields.
    function verifyV1(
        address vault,
        bytes32 separator,
        BLS.G2Point calldata key,
        bytes calldata claims,
        BLS.G1Point calldata signature,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    ) external view returns (V1Guarantee memory g);

    /// @notice What `Vault.remunerate` (V2) or a V1 reserve would accept of a disputed guarantee: its claims
    /// (V1 or V2) decode, are for `dispute.vault` on this chain (`CertificateDomainMismatch`), its id is the
    /// Vault's id of its payer and reqId (`GuaranteeIdMismatch`), it is an outgoing payment of the debtor in
    /// the asset (`GuaranteeNotOwed`), Core certified it (`OperatorKeyNotSet`, `InvalidCertificateSignature`)
    /// and the payer signed it, itself or with the key it registered in the Vault for the claims' timestamp
    /// (`InvalidGuaranteeSignature`; no ERC-1271 call: nothing the payer does later revokes it), in that order. For V2 it also reads, without
    /// reverting, whether the validation passed as `remunerate` requires (trusted registry, responded, score,
    /// tag, in time): `validated` (always true for V1), or true without a verdict when `finalization` is the
    /// payer's EIP-712 signature of `Finalization(bytes32 guaranteeId)` under the same domain and key as the
    /// guarantee (the payer finalized it off chain, waiving validation).
    /// @param dispute What the guarantee is checked against.
    /// @param claims The certificate claims.
    /// @param certificate Core's BLS signature over `claims`.
    /// @param scheme How the payer signed.
    /// @param signature The payer's signature.
    /// @param finalization The payer's finalization signature (65 bytes), or empty.
    function checkDisputedGuarantee(
        Dispute calldata dispute,
        bytes calldata claims,
        BLS.G1Point calldata certificate,
        GuaranteeSignature.Scheme scheme,
        bytes calldata signature,
        bytes calldata finalization
    ) external view returns (DisputedGuarantee memory g);

    /// @notice Whether `key` is usable as the operator key: a G2 point of the prime-order subgroup, not the
    /// identity (EIP-2537 encoding).
    /// @param key The candidate key.
    function isValidOperatorKey(BLS.G2Point calldata key) external view returns (bool);
}
