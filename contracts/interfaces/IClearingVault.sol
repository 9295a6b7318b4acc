// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";

/// @title IClearingVault
/// @notice What the ClearingHouse needs from the Vault: obligation hooks, default coverage, the V2 netting
/// marks, the guarantees' signing domain, and the clearing timings (the Vault owns all seven timing values so
/// that `withdrawalGracePeriod > cycleLength + commitDelay + confirmationLag + 2 * challengeWindow +
/// paymentWindow + defaultWindow` is checked in one place).
interface IClearingVault {
    /// @notice How a guarantee was consumed on chain (a guarantee is paid at most once): V2 ids by
    /// remuneration or netting; V1 ids only when they have a seller's reserve (collected from it:
    /// `Remunerated`; proven listed in a settled cycle, or marked by a commit: `Netted`).
    enum Consumption {
        None,
        Remunerated,
        Netted
    }

    /// @notice A committed net debit of `debtor` in `asset` (ETH = address(0)).
    struct Obligation {
        address asset;
        address debtor;
        uint256 amount;
    }

    /// @notice Protocol timings, all in seconds.
    /// @param cycleLength Length of a clearing cycle's window.
    /// @param commitDelay Longest time between a cycle's cutoff and its commit on chain.
    /// @param challengeWindow Time after a commit during which a debtor may challenge its debit and the
    /// guardian may veto the cycle; challenges are then answered within a second window of the same length.
    /// @param paymentWindow Time a debtor has after the answer window to pay before default coverage opens.
    /// @param defaultWindow Time after the payment deadline by which the keeper covers defaults.
    /// @param withdrawalGracePeriod Time between a withdrawal request and its finalisation.
    /// @param confirmationLag How far Core's view trails the chain head (it acts only on blocks its
    /// `confirmations` deep: about confirmations × block time), which delays each of its commits.
    struct Timings {
        uint64 cycleLength;
        uint64 commitDelay;
        uint64 challengeWindow;
        uint64 paymentWindow;
        uint64 defaultWindow;
        uint64 withdrawalGracePeriod;
        uint64 confirmationLag;
    }

    /// @notice Marks `guaranteeId` paid to its recipient (`Remunerated`): the bond paid it after an unanswered
    /// credit dispute, so no `remunerate`, `collectReserve` or reserve can pay it again (a V1 reserve of it is
    /// then released to its payer with `releaseReserve`).
    function markPaid(bytes32 guaranteeId) external;

    /// @notice Adds each obligation to its debtor's on-chain obligation (called on cycle commit).
    function recordObligations(Obligation[] calldata obligations) external;

    /// @notice Removes `amount` from `user`'s obligation in `asset` (the net debit was paid).
    function releaseObligation(address user, address asset, uint256 amount) external;

    /// @notice Resolves `amount` of `user`'s obligation by moving min(amount, balance) of the user's
    /// collateral to the ClearingHouse; returns the amount moved.
    function coverDefault(address user, address asset, uint256 amount) external returns (uint256 covered);

    /// @notice Marks V2 guarantee ids as consumed by netting in cycle `cycleId` (the commit's `nettedV2Ids`, and
    /// the id of an Upheld answer that the commit left unmarked, audit2 A2-M2); ids already consumed
    /// (remunerated, or netted by an earlier cycle not vetoed) are skipped and reported, never reverting.
    /// Returns how many were marked. A mark of a cycle later vetoed takes no effect ({consumption}).
    function markNetted(uint256 cycleId, bytes32[] calldata guaranteeIds) external returns (uint256 netted);

    /// @notice Records that an answer removed cycle `cycleId`'s listing of V2 guarantee `guaranteeId` as not
    /// validated (taken off its recipient's credit: the cycle does not pay it), so the listing can no longer
    /// be marked (`markListed` reverts `GuaranteeNotListed`), and undoes a `Netted` mark that carries that
    /// cycle (`GuaranteeNettingUndone`): the seller may remunerate it once validated (audit3 A3-L2).
    function markRemoved(uint256 cycleId, bytes32 guaranteeId) external;

    /// @notice `user`'s collateral balance in `asset`.
    function balanceOf(address user, address asset) external view returns (uint256);

    /// @notice How the guarantee `guaranteeId` was consumed, if at all (a netting mark of a vetoed cycle reads
    /// as not consumed).
    function consumption(bytes32 guaranteeId) external view returns (Consumption);

    /// @notice Whether `registry` is trusted for V2 validation verdicts.
    function isTrustedRegistry(address registry) external view returns (bool);

    /// @notice Whether the V2 verdict of the validation request `requestHash` was pinned ({IVault-pinVerdicts}):
    /// it then counts as passed for good, whatever the registry says later and whether it is still trusted.
    function isVerdictPinned(bytes32 requestHash) external view returns (bool);

    /// @notice Core's BLS key (EIP-2537 G2; all zero while none is set): what dispute answers are checked with.
    function operatorKey() external view returns (BLS.G2Point memory);

    /// @notice The answer deadline of a cycle whose committed answer deadline is `answerDeadline`, after the
    /// operator key's changes: at least {challengeWindow} after the current key took effect, or after the
    /// earliest time a key revoked without replacement could have been replaced, but never more than
    /// `min(timelockDelay(), MAX_KEY_GAP_DELAY) + challengeWindow` after `answerDeadline` (the bound on a key
    /// manager that revokes and never sets a key, or rotates to hold disputes open; `MAX_KEY_GAP_DELAY` = 30
    /// days caps it whatever delay the admin sets). Answers are accepted and unanswered disputes wait until it
    /// (docs/clearing.md "Operator key gaps").
    function answerDeadlineAfterKeyGap(uint256 answerDeadline) external view returns (uint256);

    /// @notice The EIP-712 domain separator payers sign guarantees under (`verifyingContract` = the Vault).
    function guaranteeDomainSeparator() external view returns (bytes32);

    /// @notice The signing key `payer` registered for guarantees timestamped `timestamp` (zero: none): the
    /// latest registration in effect from a time <= `timestamp`. What a signature that does not recover to the
    /// payer itself is checked against (a contract wallet's key; docs/contracts.md "Payer signatures on chain").
    function guaranteeSignerAt(address payer, uint64 timestamp) external view returns (address);

    /// @notice Seconds after a commit during which debits can be challenged and the cycle vetoed.
    function challengeWindow() external view returns (uint64);

    /// @notice Seconds a debtor has after the answer window to pay.
    function paymentWindow() external view returns (uint64);

    /// @notice Seconds after the payment deadline by which defaults are to be covered.
    function defaultWindow() external view returns (uint64);

    /// @notice All timings at once (one call where several are needed).
    function timings() external view returns (Timings memory);
}
