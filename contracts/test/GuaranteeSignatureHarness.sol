// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {CertificateCodec} from "../lib/CertificateCodec.sol";
import {GuaranteeSignature} from "../lib/GuaranteeSignature.sol";

/// @notice Test harness: exposes GuaranteeSignature.
contract GuaranteeSignatureHarness {
    /// @notice GuaranteeSignature.domainSeparator.
    function domainSeparator(
        string calldata name,
        string calldata version,
        uint256 chainId,
        address verifyingContract
    ) external pure returns (bytes32) {
        return GuaranteeSignature.domainSeparator(name, version, chainId, verifyingContract);
    }

    /// @notice GuaranteeSignature.structHash of raw certificate claims.
    function structHash(bytes calldata claims) external pure returns (bytes32) {
        return GuaranteeSignature.structHash(CertificateCodec.decodeClaims(claims));
    }

    /// @notice GuaranteeSignature.digest of raw certificate claims under a domain separator.
    function digest(bytes32 separator, bytes calldata claims) external pure returns (bytes32) {
        return
            GuaranteeSignature.digest(
                separator,
                GuaranteeSignature.structHash(CertificateCodec.decodeClaims(claims))
            );
    }

    /// @notice GuaranteeSignature.signedHash.
    function signedHash(
        bytes32 guaranteeDigest,
        GuaranteeSignature.Scheme scheme
    ) external pure returns (bytes32) {
        return GuaranteeSignature.signedHash(guaranteeDigest, scheme);
    }

    /// @notice GuaranteeSignature.isValidSignature.
    function isValidSignature(
        address signer,
        bytes32 hash,
        bytes calldata signature
    ) external view returns (bool) {
        return GuaranteeSignature.isValidSignature(signer, hash, signature);
    }

    /// @notice GuaranteeSignature.verify of raw certificate claims, the payer being the claims' user.
    function verify(
        bytes32 separator,
        bytes calldata claims,
        GuaranteeSignature.Scheme scheme,
        bytes calldata signature
    ) external view returns (bool) {
        CertificateCodec.CertificateClaims memory c = CertificateCodec.decodeClaims(claims);
        return
            GuaranteeSignature.verify(separator, GuaranteeSignature.structHash(c), c.user, scheme, signature);
    }

    /// @notice GuaranteeSignature.check of raw certificate claims (reverts InvalidPayerSignature).
    function check(
        bytes32 separator,
        bytes calldata claims,
        GuaranteeSignature.Scheme scheme,
        bytes calldata signature
    ) external view {
        CertificateCodec.CertificateClaims memory c = CertificateCodec.decodeClaims(claims);
        GuaranteeSignature.check(separator, GuaranteeSignature.structHash(c), c.user, scheme, signature);
    }
}
