// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";

import {IGuaranteeVerifier} from "./interfaces/IGuaranteeVerifier.sol";
import {IValidationRegistry} from "./interfaces/IValidationRegistry.sol";
import {IClearingVault} from "./interfaces/IClearingVault.sol";
import {BLSVerifier} from "./lib/BLSVerifier.sol";
import {CertificateCodec} from "./lib/CertificateCodec.sol";
import {GuaranteeSignature} from "./lib/GuaranteeSignature.sol";

/// @title GuaranteeVerifier
/// @notice The one place that decodes certificate claims and checks Core's BLS certificate and the payer's
/// own signature; the Vault (remuneration, reserves) and the ClearingHouse (dispute answers) call it.
/// @dev Holds no state and trusts no caller: anyone may call it, it only reads, and every value it checks
/// against is an argument (a contract wallet's signing key is read from the Vault given as one). Its own code
/// (the BLS hash-to-curve and pairing, the claims decoder, the ECDSA check) would otherwise be compiled into
/// both callers.
contract GuaranteeVerifier is IGuaranteeVerifier {
    /// @inheritdoc IGuaranteeVerifier
    function checkSignatures(
        BLS.G2Point calldata key,
        bytes calldata claims,
        BLS.G1Point calldata signature,
        bytes32 digest,
        Payer calldata payer,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    ) external view {
        _checkCertificate(key, claims, signature);
        if (
            !GuaranteeSignature.isPayerSignature(
                IClearingVault(payer.vault),
                payer.user,
                payer.timestamp,
                GuaranteeSignature.signedHash(digest, payerScheme),
                payerSignature
            )
        ) revert InvalidPayerSignature(payer.user);
    }

    /// @inheritdoc IGuaranteeVerifier
    function verifyV1(
        address vault,
        bytes32 separator,
        BLS.G2Point calldata key,
        bytes calldata claims,
        BLS.G1Point calldata signature,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    ) external view returns (V1Guarantee memory g) {
        CertificateCodec.CertificateClaims memory c = CertificateCodec.decodeClaims(claims);
        if (c.version != CertificateCodec.VERSION_V1) revert NotV1Certificate(c.version);
        bytes32 domain = CertificateCodec.certificateDomain(block.chainid, vault);
        if (c.domain != domain) revert CertificateDomainMismatch(domain, c.domain);
        bytes32 id = CertificateCodec.guaranteeId(block.chainid, vault, c.user, c.reqId);
        if (c.guaranteeId != id) revert GuaranteeIdMismatch(id, c.guaranteeId);
        _checkCertificate(key, claims, signature);
        if (
            !GuaranteeSignature.verify(
                IClearingVault(vault),
                separator,
                GuaranteeSignature.structHashV1(c),
                c.user,
                c.timestamp,
                payerScheme,
                payerSignature
            )
        ) revert InvalidPayerSignature(c.user);
        g = V1Guarantee(id, c.user, c.recipient, c.asset, c.amount, c.timestamp);
    }

    /// @inheritdoc IGuaranteeVerifier
    function checkDisputedGuarantee(
        Dispute calldata dispute,
        bytes calldata claims,
        BLS.G1Point calldata certificate,
        GuaranteeSignature.Scheme scheme,
        bytes calldata signature,
        bytes calldata finalization
    ) external view returns (DisputedGuarantee memory g) {
        CertificateCodec.CertificateClaims memory c = _owedClaims(dispute, claims);
        _checkCertificate(dispute.key, claims, certificate);
        g = _signedGuarantee(dispute, c, scheme, signature, finalization);
    }

    /// @dev The disputed guarantee once its payer's signature verifies (`InvalidGuaranteeSignature`), with
    /// whether it is validated: V1, finalized by its payer, or its V2 verdict passed.
    function _signedGuarantee(
        Dispute calldata dispute,
        CertificateCodec.CertificateClaims memory c,
        GuaranteeSignature.Scheme scheme,
        bytes calldata signature,
        bytes calldata finalization
    ) private view returns (DisputedGuarantee memory) {
        bool v1 = c.version == CertificateCodec.VERSION_V1;
        CertificateCodec.ValidationPolicy memory p;
        if (!v1) p = CertificateCodec.decodePolicy(c.policy);
        bytes32 hashOfStruct = v1
            ? GuaranteeSignature.structHashV1(c)
            : GuaranteeSignature.structHashV2(c, p);
        if (!_payerSigned(dispute, c, hashOfStruct, scheme, signature))
            revert InvalidGuaranteeSignature(c.guaranteeId);
        bool validated = v1 ||
            _payerFinalized(dispute, c, finalization) ||
            _validationPassed(dispute.vault, p, c.guaranteeId);
        return DisputedGuarantee(c.guaranteeId, c.recipient, c.amount, validated);
    }

    /// @dev The decoded claims of a disputed guarantee: for `dispute.vault` on this chain, its id the Vault's id
    /// of its payer and reqId, an outgoing payment of the debtor in the asset.
    function _owedClaims(
        Dispute calldata dispute,
        bytes calldata claims
    ) private view returns (CertificateCodec.CertificateClaims memory c) {
        c = CertificateCodec.decodeClaims(claims);
        address vault = dispute.vault;
        bytes32 domain = CertificateCodec.certificateDomain(block.chainid, vault);
        if (c.domain != domain) revert CertificateDomainMismatch(domain, c.domain);
        bytes32 id = CertificateCodec.guaranteeId(block.chainid, vault, c.user, c.reqId);
        if (c.guaranteeId != id) revert GuaranteeIdMismatch(id, c.guaranteeId);
        if (c.user != dispute.debtor || c.asset != dispute.asset || c.recipient == c.user) {
            revert GuaranteeNotOwed(id, dispute.debtor, dispute.asset);
        }
    }

    /// @dev Whether `finalization` is the payer's EIP-712 `Finalization` of the guarantee (its waiver of the
    /// validation), signed like the guarantee itself (the payer or its key for the claims' timestamp).
    function _payerFinalized(
        Dispute calldata dispute,
        CertificateCodec.CertificateClaims memory c,
        bytes calldata finalization
    ) private view returns (bool) {
        return
            finalization.length != 0 &&
            GuaranteeSignature.verify(
                IClearingVault(dispute.vault),
                dispute.separator,
                GuaranteeSignature.structHashFinalization(c.guaranteeId),
                c.user,
                c.timestamp,
                GuaranteeSignature.Scheme.EIP712,
                finalization
            );
    }

    /// @dev Whether the disputed guarantee's payer signed it (itself, or with its key registered in the Vault).
    function _payerSigned(
        Dispute calldata dispute,
        CertificateCodec.CertificateClaims memory c,
        bytes32 hashOfStruct,
        GuaranteeSignature.Scheme scheme,
        bytes calldata signature
    ) private view returns (bool) {
        return
            GuaranteeSignature.verify(
                IClearingVault(dispute.vault),
                dispute.separator,
                hashOfStruct,
                c.user,
                c.timestamp,
                scheme,
                signature
            );
    }

    /// @dev The V2 verdict as `Vault.remunerate` requires it (RemunerationLogic), read without reverting: pinned
    /// in the Vault (final, the registry is not read), or passing in a trusted registry now.
    function _validationPassed(
        address vault,
        CertificateCodec.ValidationPolicy memory p,
        bytes32 guaranteeId
    ) private view returns (bool) {
        bytes32 requestHash = CertificateCodec.validationRequestHash(block.chainid, p, guaranteeId);
        if (IClearingVault(vault).isVerdictPinned(requestHash)) return true;
        if (!IClearingVault(vault).isTrustedRegistry(p.registry)) return false;
        (bool responded, uint8 response, bytes32 tagHash, uint64 lastUpdate) = IValidationRegistry(p.registry)
            .verdictOf(requestHash, p.validator);
        return
            responded &&
            response >= p.minScore &&
            tagHash == keccak256(bytes(p.tag)) &&
            lastUpdate <= p.deadline;
    }

    /// @inheritdoc IGuaranteeVerifier
    function isValidOperatorKey(BLS.G2Point calldata key) external view returns (bool) {
        return BLSVerifier.isValidPublicKey(key);
    }

    /// @dev Reverts unless `key` is set and `signature` is its BLS signature over `claims` (POP tag). A set
    /// key is never the identity, so all-zero words mean "not set".
    function _checkCertificate(
        BLS.G2Point calldata key,
        bytes calldata claims,
        BLS.G1Point calldata signature
    ) private view {
        if (
            (key.x_c0_a |
                key.x_c0_b |
                key.x_c1_a |
                key.x_c1_b |
                key.y_c0_a |
                key.y_c0_b |
                key.y_c1_a |
                key.y_c1_b) == bytes32(0)
        ) revert OperatorKeyNotSet();
        if (!BLSVerifier.verify(key, claims, signature, BLSVerifier.POP_DST))
            revert InvalidCertificateSignature();
    }
}
