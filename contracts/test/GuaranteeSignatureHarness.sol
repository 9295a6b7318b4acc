// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IClearingVault} from "../interfaces/IClearingVault.sol";
import {CertificateCodec} from "../lib/CertificateCodec.sol";
import {GuaranteeSignature} from "../lib/GuaranteeSignature.sol";

/// @notice Test harness: exposes GuaranteeSignature. It stands in for the Vault's signing-key registry too
/// (`guaranteeSignerAt`): `setSigner(payer, key, from)` registers `key` for timestamps >= `from`.
contract GuaranteeSignatureHarness {
    struct Key {
        address key;
        uint64 from;
    }

    mapping(address payer => Key[]) private _keys;

    /// @notice Registers `key` for `payer`'s guarantees timestamped `from` or later (append only).
    function setSigner(address payer, address key, uint64 from) external {
        _keys[payer].push(Key(key, from));
    }

    /// @notice As {IClearingVault-guaranteeSignerAt}.
    function guaranteeSignerAt(address payer, uint64 timestamp) external view returns (address) {
        Key[] storage keys = _keys[payer];
        for (uint256 i = keys.length; i != 0; --i) {
            if (keys[i - 1].from <= timestamp) return keys[i - 1].key;
        }
        return address(0);
    }

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

    /// @notice GuaranteeSignature.recover.
    function recover(bytes32 hash, bytes calldata signature) external pure returns (address) {
        return GuaranteeSignature.recover(hash, signature);
    }

    /// @notice GuaranteeSignature.verify of raw certificate claims (payer and timestamp from the claims),
    /// with this harness as the key registry.
    function verify(
        bytes32 separator,
        bytes calldata claims,
        GuaranteeSignature.Scheme scheme,
        bytes calldata signature
    ) external view returns (bool) {
        CertificateCodec.CertificateClaims memory c = CertificateCodec.decodeClaims(claims);
        return
            GuaranteeSignature.verify(
                IClearingVault(address(this)),
                separator,
                GuaranteeSignature.structHash(c),
                c.user,
                c.timestamp,
                scheme,
                signature
            );
    }
}
