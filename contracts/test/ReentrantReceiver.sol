// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title ReentrantReceiver
/// @notice Test-only account contract that, when paid ETH, calls back into a configured target once and
/// records the outcome, to show that the Vault and ClearingHouse refuse re-entry.
contract ReentrantReceiver {
    address public callbackTarget;
    bytes public reentryData;
    bool public reentered;
    bool public reentrySucceeded;
    bytes public reentryRevertData;

    /// @notice Sets the call to attempt on the next ETH receipt.
    function arm(address target_, bytes calldata data) external {
        callbackTarget = target_;
        reentryData = data;
        reentered = false;
    }

    /// @notice Makes this contract call `to` with `data` and `value` (bubbles reverts).
    function execute(address to, uint256 value, bytes calldata data) external payable returns (bytes memory) {
        (bool ok, bytes memory ret) = to.call{value: value}(data);
        if (!ok) {
            assembly {
                revert(add(ret, 32), mload(ret))
            }
        }
        return ret;
    }

    receive() external payable {
        if (callbackTarget == address(0) || reentered) return;
        reentered = true;
        (bool ok, bytes memory ret) = callbackTarget.call(reentryData);
        reentrySucceeded = ok;
        reentryRevertData = ret;
    }
}
