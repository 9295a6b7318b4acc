// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title EthRejectingWallet
/// @notice Test-only contract wallet that refuses every incoming ETH transfer (no `receive`, a reverting
/// fallback), to show that a recipient that cannot be paid ETH blocks neither its own credit nor anyone else's
/// call (pull payments in the ClearingHouse).
contract EthRejectingWallet {
    /// @notice The wallet refuses ETH.
    error EthRefused(address from, uint256 value);

    /// @notice Makes this wallet call `to` with `data`, forwarding `msg.value` (bubbles reverts).
    function execute(address to, bytes calldata data) external payable returns (bytes memory) {
        (bool ok, bytes memory ret) = to.call{value: msg.value}(data);
        if (!ok) {
            assembly {
                revert(add(ret, 32), mload(ret))
            }
        }
        return ret;
    }

    fallback() external payable {
        revert EthRefused(msg.sender, msg.value);
    }
}
