// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {CertificateCodec} from "../lib/CertificateCodec.sol";

/// @notice Test harness: exposes CertificateCodec.
contract CertificateCodecHarness {
    /// @notice CertificateCodec.decodeClaims.
    function decodeClaims(
        bytes calldata data
    ) external pure returns (CertificateCodec.CertificateClaims memory) {
        return CertificateCodec.decodeClaims(data);
    }

    /// @notice CertificateCodec.decodeV2Calldata.
    function decodeV2Calldata(
        bytes calldata data
    )
        external
        pure
        returns (CertificateCodec.CertificateClaims memory, CertificateCodec.ValidationPolicy memory)
    {
        return CertificateCodec.decodeV2Calldata(data);
    }

    /// @notice CertificateCodec.decodePolicy.
    function decodePolicy(
        bytes calldata data
    ) external pure returns (CertificateCodec.ValidationPolicy memory) {
        return CertificateCodec.decodePolicy(data);
    }

    /// @notice CertificateCodec.certificateDomain.
    function certificateDomain(uint256 chainId, address vault) external pure returns (bytes32) {
        return CertificateCodec.certificateDomain(chainId, vault);
    }

    /// @notice CertificateCodec.guaranteeId.
    function guaranteeId(
        uint256 chainId,
        address vault,
        address user,
        uint256 reqId
    ) external pure returns (bytes32) {
        return CertificateCodec.guaranteeId(chainId, vault, user, reqId);
    }

    /// @notice CertificateCodec.validationRequestHash.
    function validationRequestHash(
        uint256 chainId,
        CertificateCodec.ValidationPolicy calldata policy,
        bytes32 id
    ) external pure returns (bytes32) {
        return CertificateCodec.validationRequestHash(chainId, policy, id);
    }
}
