// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title IClearingVault
/// @notice What the ClearingHouse needs from the Vault: obligation hooks, default coverage, the V2 netting
/// marks, and the clearing timings (the Vault owns all five timing values so that
/// `withdrawalGracePeriod > cycleLength + commitDelay + paymentWindow + defaultWindow` is checked in one place).
interface IClearingVault {
    /// @notice A committed net debit of `debtor` in `asset` (ETH = address(0)).
    struct Obligation {
        address asset;
        address debtor;
        uint256 amount;
    }

    /// @notice Protocol timings, all in seconds.
    /// @param cycleLength Length of a clearing cycle's window.
    /// @param commitDelay Longest time between a cycle's cutoff and its commit on chain.
    /// @param paymentWindow Time a debtor has after commit to pay before default coverage opens.
    /// @param defaultWindow Time after the payment deadline by which the keeper covers defaults.
    /// @param withdrawalGracePeriod Time between a withdrawal request and its finalisation.
    struct Timings {
        uint64 cycleLength;
        uint64 commitDelay;
        uint64 paymentWindow;
        uint64 defaultWindow;
        uint64 withdrawalGracePeriod;
    }

    /// @notice Adds each obligation to its debtor's on-chain obligation (called on cycle commit).
    function recordObligations(Obligation[] calldata obligations) external;

    /// @notice Removes `amount` from `user`'s obligation in `asset` (the net debit was paid).
    function releaseObligation(address user, address asset, uint256 amount) external;

    /// @notice Resolves `amount` of `user`'s obligation by moving min(amount, balance) of the user's
    /// collateral to the ClearingHouse; returns the amount moved.
    function coverDefault(address user, address asset, uint256 amount) external returns (uint256 covered);

    /// @notice Marks V2 guarantee ids as consumed by netting; ids already consumed (remunerated, or netted
    /// by an earlier cycle) are skipped and reported, never reverting. Returns how many were marked.
    function markNetted(bytes32[] calldata guaranteeIds) external returns (uint256 netted);

    /// @notice `user`'s collateral balance in `asset`.
    function balanceOf(address user, address asset) external view returns (uint256);

    /// @notice Seconds a debtor has after commit to pay.
    function paymentWindow() external view returns (uint64);

    /// @notice Seconds after the payment deadline by which defaults are to be covered.
    function defaultWindow() external view returns (uint64);
}
