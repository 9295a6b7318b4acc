// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";
import {BLSVerifier} from "../lib/BLSVerifier.sol";

/// @notice Test harness: exposes BLSVerifier.
contract BLSVerifierHarness {
    /// @notice BLSVerifier.POP_DST.
    function popDst() external pure returns (bytes memory) {
        return BLSVerifier.POP_DST;
    }

    /// @notice BLSVerifier.hashToG1.
    function hashToG1(bytes calldata message, bytes calldata dst) external view returns (BLS.G1Point memory) {
        return BLSVerifier.hashToG1(message, dst);
    }

    /// @notice BLSVerifier.expandMessageXmd.
    function expandMessageXmd(
        bytes calldata message,
        bytes calldata dst
    ) external view returns (bytes32[4] memory) {
        return BLSVerifier.expandMessageXmd(message, dst);
    }

    /// @notice BLSVerifier.verify.
    function verify(
        BLS.G2Point calldata publicKey,
        bytes calldata message,
        BLS.G1Point calldata signature,
        bytes calldata dst
    ) external view returns (bool) {
        return BLSVerifier.verify(publicKey, message, signature, dst);
    }

    /// @notice BLSVerifier.isValidPublicKey.
    function isValidPublicKey(BLS.G2Point calldata publicKey) external view returns (bool) {
        return BLSVerifier.isValidPublicKey(publicKey);
    }

    /// @notice BLSVerifier.verify with POP_DST, as a transaction so tests can measure its gas.
    /// @dev Emits the result so a test can read it from the receipt.
    function verifyCertificateTx(
        BLS.G2Point calldata publicKey,
        bytes calldata message,
        BLS.G1Point calldata signature
    ) external returns (bool valid) {
        valid = BLSVerifier.verify(publicKey, message, signature, BLSVerifier.POP_DST);
        emit Verified(valid);
    }

    /// @notice The result of `verifyCertificateTx`.
    event Verified(bool valid);
}
