// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/// @notice Test contract wallet with a multisig's signature format (like a Safe's): a signature is the
/// concatenation of `threshold` 65-byte owner signatures of the hash, signers in strictly increasing
/// address order. Its signatures are therefore not 65 bytes long (130 for a 2-of-n), which is what the
/// off-chain wire format must carry. It holds collateral: any owner drives it.
contract ERC1271MultiOwnerWallet is IERC1271 {
    /// @notice Length of one owner's ECDSA signature r ‖ s ‖ v.
    uint256 private constant OWNER_SIGNATURE_BYTES = 65;

    /// @notice Owner signatures a valid wallet signature carries.
    uint256 public immutable threshold;

    /// @notice Whether an address is an owner.
    mapping(address owner => bool) public isOwner;

    /// @notice Only an owner may drive the wallet.
    error NotOwner(address caller);
    /// @notice The threshold is zero or above the number of owners.
    error InvalidThreshold(uint256 threshold, uint256 owners);

    constructor(address[] memory owners, uint256 threshold_) {
        if (threshold_ == 0 || threshold_ > owners.length) revert InvalidThreshold(threshold_, owners.length);
        threshold = threshold_;
        for (uint256 i = 0; i < owners.length; ++i) isOwner[owners[i]] = true;
    }

    /// @inheritdoc IERC1271
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != threshold * OWNER_SIGNATURE_BYTES) return bytes4(0);
        address previous = address(0);
        for (uint256 i = 0; i < threshold; ++i) {
            bytes calldata part = signature[i * OWNER_SIGNATURE_BYTES:(i + 1) * OWNER_SIGNATURE_BYTES];
            (address signer, ECDSA.RecoverError err, ) = ECDSA.tryRecoverCalldata(hash, part);
            if (err != ECDSA.RecoverError.NoError || signer <= previous || !isOwner[signer]) return bytes4(0);
            previous = signer;
        }
        return IERC1271.isValidSignature.selector;
    }

    /// @notice Calls `target` with `data` and `value` (an owner's way to deposit from the wallet).
    /// @param target Contract to call.
    /// @param value Wei to send along.
    /// @param data Calldata.
    /// @return The call's return data.
    function execute(
        address target,
        uint256 value,
        bytes calldata data
    ) external payable returns (bytes memory) {
        if (!isOwner[msg.sender]) revert NotOwner(msg.sender);
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
