// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/// @notice Test contract wallet: accepts (ERC-1271) what its signer key signed (the owner at first; the owner
/// may name another), refuses everything else. It also holds collateral: it deposits, requests withdrawals
/// and registers its guarantee signing key in the Vault on the owner's behalf (`execute`).
contract ERC1271Wallet is IERC1271 {
    /// @notice The key that drives the wallet.
    address public immutable owner;
    /// @notice The key whose signatures the wallet accepts (ERC-1271).
    address public signer;

    /// @notice Only the owner may drive the wallet.
    error NotOwner(address caller);

    constructor(address owner_) {
        owner = owner_;
        signer = owner_;
    }

    /// @notice Makes `signer_` the key whose signatures the wallet accepts (what an ERC-1271 wallet can do at
    /// any time: the reason the Vault does not ask it after the fact).
    function setSigner(address signer_) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        signer = signer_;
    }

    /// @inheritdoc IERC1271
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (address recovered, ECDSA.RecoverError err, ) = ECDSA.tryRecoverCalldata(hash, signature);
        return
            err == ECDSA.RecoverError.NoError && recovered == signer
                ? IERC1271.isValidSignature.selector
                : bytes4(0);
    }

    /// @notice Calls `target` with `data` and `value` (the owner's way to deposit from the wallet).
    function execute(
        address target,
        uint256 value,
        bytes calldata data
    ) external payable returns (bytes memory) {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        (bool ok, bytes memory result) = target.call{value: value}(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(result, 0x20), mload(result))
            }
        }
        return result;
    }

    receive() external payable {}
}
