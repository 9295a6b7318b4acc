// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title GuaranteeLeaf
/// @notice The leaf of a cycle's guarantees root: an `@openzeppelin/merkle-tree` StandardMerkleTree leaf over
/// `[bytes32 guaranteeId, address payer, address recipient, address asset, uint256 amount,
/// bytes32 signatureHash]` with `signatureHash = keccak256(payer signature bytes)`. One definition for the
/// ClearingHouse (answers, double listings) and the Vault (V1 reserves proven cleared).
library GuaranteeLeaf {
    /// @notice The leaf hash (double keccak of the ABI encoding).
    function hash(
        bytes32 guaranteeId,
        address payer,
        address recipient,
        address asset,
        uint256 amount,
        bytes32 signatureHash
    ) internal pure returns (bytes32) {
        return
            keccak256(
                bytes.concat(
                    keccak256(abi.encode(guaranteeId, payer, recipient, asset, amount, signatureHash))
                )
            );
    }
}
