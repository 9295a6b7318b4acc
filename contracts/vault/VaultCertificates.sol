// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";

import {IGuaranteeErrors} from "../interfaces/IGuaranteeErrors.sol";
import {IGuaranteeVerifier} from "../interfaces/IGuaranteeVerifier.sol";
import {IVault} from "../interfaces/IVault.sol";
import {CertificateCodec} from "../lib/CertificateCodec.sol";
import {GuaranteeSignature} from "../lib/GuaranteeSignature.sol";

/// @title VaultCertificates
/// @notice The V2 certificate check the Vault's remuneration and reserves share: claims decoded from
/// calldata, this deployment's domain and id, then Core's certificate and the payer's own signature in the
/// {IGuaranteeVerifier}.
library VaultCertificates {
    /// @dev Bytes in a word (the claims' version word).
    uint256 private constant _WORD = 32;

    /// @notice Whether `claims` declare version 1 (read from the first word, before any decoding).
    function isV1(bytes calldata claims) internal pure returns (bool) {
        return claims.length >= _WORD && uint256(bytes32(claims[:_WORD])) == CertificateCodec.VERSION_V1;
    }

    /// @notice What a certificate is checked against: the verifier, the Vault's EIP-712 domain separator
    /// and Core's BLS key (all zero while none is set).
    struct Authority {
        IGuaranteeVerifier verifier;
        bytes32 separator;
        BLS.G2Point key;
    }

    /// @notice The V2 claims decoded, for this chain and Vault, their guarantee id the Vault's id of their payer
    /// and reqId (no signature is checked); reverts `NotV2Certificate` for V1 claims, the codec's, id and
    /// domain errors.
    function decodedV2(
        bytes calldata claims
    )
        internal
        view
        returns (CertificateCodec.CertificateClaims memory c, CertificateCodec.ValidationPolicy memory p)
    {
        if (isV1(claims)) revert IVault.NotV2Certificate(CertificateCodec.VERSION_V1);
        (c, p) = CertificateCodec.decodeV2Calldata(claims);
        bytes32 domain = CertificateCodec.certificateDomain(block.chainid, address(this));
        if (c.domain != domain) revert IGuaranteeErrors.CertificateDomainMismatch(domain, c.domain);
        bytes32 id = CertificateCodec.guaranteeId(block.chainid, address(this), c.user, c.reqId);
        if (c.guaranteeId != id) revert IGuaranteeErrors.GuaranteeIdMismatch(id, c.guaranteeId);
    }

    /// @notice The V2 certificate (this chain and Vault, `authority.key`) and the payer's signature over it
    /// under `authority.separator`; reverts `NotV2Certificate` for V1 claims, the codec's, id and domain
    /// errors, and the verifier's.
    function verifiedV2(
        Authority memory authority,
        bytes calldata claims,
        BLS.G1Point calldata signature,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    )
        internal
        view
        returns (CertificateCodec.CertificateClaims memory c, CertificateCodec.ValidationPolicy memory p)
    {
        (c, p) = decodedV2(claims);
        bytes32 digest = GuaranteeSignature.digest(
            authority.separator,
            GuaranteeSignature.structHashV2(c, p)
        );
        authority.verifier.checkSignatures(
            authority.key,
            claims,
            signature,
            digest,
            IGuaranteeVerifier.Payer(address(this), c.user, c.timestamp),
            payerScheme,
            payerSignature
        );
    }
}
