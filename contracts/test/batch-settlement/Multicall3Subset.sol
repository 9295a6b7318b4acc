// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title Multicall3Subset
/// @notice FOR BENCHMARKING ONLY: the `tryAggregate` call of Multicall3 (deployed at 0xcA11bde0…CA11 on public
/// chains), which the official x402 EVM batch-settlement facilitator reads channel state through. The bench
/// places this code at that address on the devnet; written here, not copied.
contract Multicall3Subset {
    /// @notice One call.
    struct Call {
        address target;
        bytes callData;
    }

    /// @notice One call's outcome.
    struct Result {
        bool success;
        bytes returnData;
    }

    /// @notice A call failed and `requireSuccess` was set.
    error CallFailed(uint256 index);

    /// @notice Runs every call; with `requireSuccess` any failure reverts the whole.
    /// @param requireSuccess Revert on the first failure.
    /// @param calls The calls.
    /// @return returnData Each call's success and return data.
    function tryAggregate(
        bool requireSuccess,
        Call[] calldata calls
    ) external payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool ok, bytes memory out) = calls[i].target.call(calls[i].callData);
            if (requireSuccess && !ok) revert CallFailed(i);
            returnData[i] = Result(ok, out);
        }
    }
}
