// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";

import {IClearingVault} from "./IClearingVault.sol";
import {IGuaranteeErrors} from "./IGuaranteeErrors.sol";

/// @title IVault
/// @notice The Vault's events, errors and records: collateral and withdrawals, the seller's reserves, V2
/// remuneration, the clearing hooks ({IClearingVault}) and the configuration (operator key, tokens,
/// registries, timings). The reserve and remuneration logic ({ReserveLogic}, {RemunerationLogic}) emits
/// and reverts with these declarations, so one ABI decodes every Vault log and revert.
interface IVault is IClearingVault, IGuaranteeErrors {
    /// @notice A seller's on-chain reserve of a pending guarantee's amount (see {registerReserve}: a V2 or
    /// a V1 certificate, where `expiresAt` is the time from which the reserve can be collected).
    /// @dev Two slots; `amount` fits 96 bits (larger guarantees cannot be reserved).
    struct Reserve {
        address user;
        uint64 expiresAt;
        address asset;
        uint96 amount;
    }

    /// @notice An open withdrawal request (one per user and asset).
    /// @dev `finalizableAt` is the time it was given; see {withdrawalFinalizableAt} for when it is ready.
    struct WithdrawalRequest {
        uint64 id; // id and both times share one slot
        uint64 requestedAt;
        uint64 finalizableAt;
        uint256 amount;
    }

    /// @notice A guarantee signing key of a payer (a contract wallet's EOA key): it signs the payer's
    /// guarantees whose claims timestamp is `effectiveFrom` or later, until the next key's `effectiveFrom`.
    struct GuaranteeSigner {
        address key;
        uint64 effectiveFrom;
    }

    /// @notice `user` deposited `amount` of `asset`; `balance` is the new balance.
    event Deposited(address indexed user, address indexed asset, uint256 amount, uint256 balance);
    /// @notice `user` asked to withdraw `amount` of `asset`, finalizable from `finalizableAt`.
    event WithdrawalRequested(
        uint256 indexed withdrawalId,
        address indexed user,
        address indexed asset,
        uint256 amount,
        uint64 finalizableAt
    );
    /// @notice `user` cancelled the withdrawal `withdrawalId`.
    event WithdrawalCancelled(uint256 indexed withdrawalId, address indexed user, address indexed asset);
    /// @notice The withdrawal `withdrawalId` closed, paying `paid` of the `requested` amount.
    event WithdrawalFinalized(
        uint256 indexed withdrawalId,
        address indexed user,
        address indexed asset,
        uint256 requested,
        uint256 paid
    );
    /// @notice A committed cycle added `amount` to `user`'s obligation; `obligation` is the new total.
    event ObligationRecorded(address indexed user, address indexed asset, uint256 amount, uint256 obligation);
    /// @notice A paid net debit released `amount` of `user`'s obligation; `obligation` is the new total.
    event ObligationReleased(address indexed user, address indexed asset, uint256 amount, uint256 obligation);
    /// @notice `user`'s unpaid `obligation` was resolved by moving `covered` of its collateral to clearing.
    event DefaultCovered(address indexed user, address indexed asset, uint256 obligation, uint256 covered);
    /// @notice The V2 guarantee `guaranteeId` was netted in a committed cycle.
    event GuaranteeNetted(bytes32 indexed guaranteeId);
    /// @notice The `Netted` mark of `guaranteeId` by cycle `cycleId` was undone: an answer removed that cycle's
    /// listing of it as not validated, so the cycle does not pay it (audit3 A3-L2); it reads as not consumed.
    event GuaranteeNettingUndone(bytes32 indexed guaranteeId, uint256 cycleId);
    /// @notice A committed cycle listed `guaranteeId`, which was already consumed (`how`); it was skipped.
    event GuaranteeNettingSkipped(bytes32 indexed guaranteeId, Consumption how);
    /// @notice The V2 guarantee `guaranteeId` passed validation and `amount` was paid to `recipient`.
    event GuaranteeRemunerated(
        bytes32 indexed guaranteeId,
        address indexed user,
        address indexed recipient,
        address asset,
        uint256 amount
    );
    /// @notice `amount` of `user`'s collateral is reserved for the V2 guarantee `guaranteeId` to `recipient`
    /// until it is remunerated, netted or `expiresAt`.
    event ReserveRegistered(
        bytes32 indexed guaranteeId,
        address indexed user,
        address indexed recipient,
        address asset,
        uint256 amount,
        uint64 expiresAt
    );
    /// @notice `amount` of `user`'s collateral is reserved for the V1 guarantee `guaranteeId` to `recipient`
    /// until the guarantee is proven cleared (netted) or, from `collectableAt`, collected for `recipient`.
    event V1ReserveRegistered(
        bytes32 indexed guaranteeId,
        address indexed user,
        address indexed recipient,
        address asset,
        uint256 amount,
        uint64 collectableAt
    );
    /// @notice The reserve of `guaranteeId` no longer holds `amount` of `user`'s collateral.
    event ReserveReleased(bytes32 indexed guaranteeId, address indexed user, address asset, uint256 amount);
    /// @notice The ClearingHouse was set.
    event ClearingHouseSet(address indexed clearingHouse);
    /// @notice The operator's BLS key changed; `keyHash` is keccak256 of the EIP-2537 encoding.
    event OperatorKeyRotated(bytes32 indexed keyHash, BLS.G2Point key);
    /// @notice `token` was added to (`allowed`) or removed from the deposit allow-list.
    event TokenAllowListUpdated(address indexed token, bool allowed);
    /// @notice `registry` was added to (`trusted`) or removed from the trusted validation registries.
    event TrustedRegistryUpdated(address indexed registry, bool trusted);
    /// @notice The protocol timings changed.
    event TimingsUpdated(Timings timings);
    /// @notice Setup is over: role grants, operator key changes, new trusted registries and timings are timelocked.
    event SetupFinished();
    /// @notice `key` was scheduled (as `operation`) to become the operator key from `readyAt`.
    event OperatorKeyScheduled(bytes32 indexed keyHash, BLS.G2Point key, bytes32 operation, uint48 readyAt);
    /// @notice The operator key `keyHash` was removed at once (remuneration stops until a new key is due).
    event OperatorKeyRevoked(bytes32 indexed keyHash);
    /// @notice `registry` was scheduled (as `operation`) to become trusted from `readyAt`.
    event TrustedRegistryScheduled(address indexed registry, bytes32 operation, uint48 readyAt);
    /// @notice `timings` were scheduled (as `operation`) to replace the current timings from `readyAt`.
    event TimingsScheduled(Timings timings, bytes32 operation, uint48 readyAt);
    /// @notice `payer` registered `key` to sign its guarantees timestamped `effectiveFrom` or later (0: the
    /// first key, for every timestamp); earlier guarantees keep the key they were signed with.
    event GuaranteeSignerSet(address indexed payer, address indexed key, uint64 effectiveFrom);
    /// @notice The passing V2 verdict of guarantee `guaranteeId` (validation request `requestHash`, which commits
    /// to the guarantee id and its whole policy) was pinned after the policy deadline ({Vault-pinVerdicts}):
    /// remuneration and dispute answers accept it from now on without reading `registry`.
    event VerdictPinned(
        bytes32 indexed guaranteeId,
        bytes32 indexed requestHash,
        address indexed registry,
        address validator
    );

    /// @notice The amount is zero.
    error ZeroAmount();
    /// @notice `token` is not on the deposit allow-list.
    error TokenNotAllowed(address token);
    /// @notice `token` is the zero address or has no code.
    error InvalidToken(address token);
    /// @notice The deposit transferred no tokens to the Vault.
    error NothingReceived(address token);
    /// @notice `amount` exceeds `user`'s `balance` in `asset`.
    error WithdrawalExceedsBalance(address user, address asset, uint256 balance, uint256 amount);
    /// @notice `user` already has the open withdrawal `withdrawalId` in `asset`.
    error WithdrawalAlreadyPending(address user, address asset, uint64 withdrawalId);
    /// @notice `user` has no open withdrawal in `asset`.
    error NoPendingWithdrawal(address user, address asset);
    /// @notice The withdrawal `withdrawalId` cannot be finalized before `finalizableAt`.
    error WithdrawalNotReady(uint64 withdrawalId, uint64 finalizableAt);
    /// @notice Only the ClearingHouse may call this; `caller` is not it.
    error NotClearingHouse(address caller);
    /// @notice The ClearingHouse is already set to `current`.
    error ClearingHouseAlreadySet(address current);
    /// @notice `clearingHouse` is the zero address or has no code.
    error InvalidClearingHouse(address clearingHouse);
    /// @notice Releasing or covering `amount` exceeds `user`'s recorded `obligation` in `asset`.
    error ObligationExceeded(address user, address asset, uint256 obligation, uint256 amount);
    /// @notice The V2 guarantee `guaranteeId` was already consumed (`how`).
    error GuaranteeAlreadyConsumed(bytes32 guaranteeId, Consumption how);
    /// @notice `cycleLength` is zero.
    error ZeroCycleLength();
    /// @notice `paymentWindow` is zero.
    error ZeroPaymentWindow();
    /// @notice `challengeWindow` is zero (it would switch off challenges and the guardian's veto).
    error ZeroChallengeWindow();
    /// @notice `withdrawalGracePeriod` must be greater than `minimumExclusive` (the clearing path's length).
    error GracePeriodTooShort(uint64 withdrawalGracePeriod, uint256 minimumExclusive);
    /// @notice `withdrawalGracePeriod` exceeds {MAX_WITHDRAWAL_GRACE_PERIOD}.
    error GracePeriodTooLong(uint64 withdrawalGracePeriod, uint64 maximum);
    /// @notice The BLS key is not a valid G2 point of the prime-order subgroup (or is the identity).
    error InvalidOperatorKey();
    /// @notice `registry` is the zero address or has no code.
    error InvalidRegistry(address registry);
    /// @notice {finishSetup} was already called.
    error SetupAlreadyFinished();
    /// @notice A guarantee signing key cannot be the zero address.
    error InvalidGuaranteeSigner(address key);
    /// @notice `payer`'s previous key change takes effect only at `effectiveFrom`; one change at a time.
    error GuaranteeSignerChangePending(address payer, uint64 effectiveFrom);

    /// @notice Only V2 certificates can be remunerated; this one has `version`.
    error NotV2Certificate(uint64 version);
    /// @notice The policy's `registry` is not a trusted validation registry.
    error UntrustedRegistry(address registry);
    /// @notice The policy's validator has not answered the request `requestHash` (or no such request exists).
    error ValidationResponseMissing(bytes32 requestHash);
    /// @notice The validator's `response` is below the policy's `minScore`.
    error ValidationScoreTooLow(uint8 response, uint8 minScore);
    /// @notice The response's tag (keccak256 `actualHash`) differs from the policy's tag `expected`.
    error ValidationTagMismatch(string expected, bytes32 actualHash);
    /// @notice The response was last updated at `lastUpdate`, after the policy deadline `deadline`.
    error ValidationAfterDeadline(uint64 lastUpdate, uint64 deadline);
    /// @notice A verdict can be pinned only once it is final: after the policy `deadline` of `guaranteeId`.
    error VerdictNotFinal(bytes32 guaranteeId, uint64 deadline);
    /// @notice `guaranteeId` already has a reserve.
    error ReserveAlreadyRegistered(bytes32 guaranteeId);
    /// @notice `guaranteeId` has no reserve.
    error ReserveNotFound(bytes32 guaranteeId);
    /// @notice The reserve of `guaranteeId` holds until `expiresAt` unless its guarantee is consumed first.
    error ReserveStillActive(bytes32 guaranteeId, uint64 expiresAt);
    /// @notice A reserve can only be registered up to the validation deadline `deadline`.
    error ReserveAfterDeadline(uint64 deadline);
    /// @notice `user`'s free collateral `free` in `asset` does not cover `amount`.
    error InsufficientFreeCollateral(address user, address asset, uint256 free, uint256 amount);
    /// @notice The V1 reserve of `guaranteeId` can be collected only from `collectableAt` (until then Core's
    /// clearing of the guarantee is awaited).
    error ReserveNotYetCollectable(bytes32 guaranteeId, uint64 collectableAt);
    /// @notice Cycle `cycleId` is not committed, was vetoed, or its challenge window (until
    /// `challengeDeadline`) is still open, so it cannot prove a listing.
    error CycleNotSettled(uint256 cycleId, uint64 challengeDeadline);
    /// @notice The V1 reserve's guarantee (its payer, recipient, asset and amount) is not a leaf of cycle
    /// `cycleId`'s guarantees root under the given proof.
    error GuaranteeNotListed(bytes32 guaranteeId, uint256 cycleId);
}
