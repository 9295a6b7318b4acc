// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControlDefaultAdminRules} from "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";

/// @title TimelockedRoles
/// @notice Role grants (and, for the inheriting contract, other sensitive changes) that take effect only a
/// delay after they were scheduled, so that a leaked admin key cannot hand a role that moves funds or keys
/// to a thief at once: the schedule is public for the whole delay, payers can leave, the admin can cancel.
/// Revocation stays immediate.
/// @dev Issue 17, finding 3. The delay is the contract's `defaultAdminDelay()`: the same delay already guards
/// the admin seat, and shortening it is itself delayed (AccessControlDefaultAdminRules). A schedule fixes its
/// `readyAt` with the delay of the moment. Any account may execute a due role grant (the admin's intent is on
/// chain); the default admin may cancel any scheduled operation. Inheriting contracts name their timelocked roles in {_isTimelockedRole} and may declare a setup
/// phase ({_inSetup}) during which every change is immediate (deployment wiring).
abstract contract TimelockedRoles is AccessControlDefaultAdminRules {
    /// @dev Operation ids are keccak256 of a tag and the operation's arguments.
    bytes32 private constant _GRANT_TAG = keccak256("TIMELOCKED_ROLE_GRANT");

    /// @dev operation id => time from which it may be executed (0 = not scheduled).
    mapping(bytes32 operation => uint48 readyAt) private _readyAt;

    /// @notice The grant of `role` to `account` was scheduled as `operation`; it can be executed from `readyAt`.
    event RoleGrantScheduled(
        bytes32 indexed role,
        address indexed account,
        bytes32 operation,
        uint48 readyAt
    );
    /// @notice The scheduled `operation` (a role grant, or one of the inheriting contract's) was cancelled.
    event OperationCancelled(bytes32 indexed operation);
    /// @notice The scheduled grant of `role` to `account` took effect (AccessControl's RoleGranted follows).
    event RoleGrantExecuted(bytes32 indexed role, address indexed account);

    /// @notice `role` is timelocked: use {scheduleRoleGrant} and {executeRoleGrant}.
    error RoleGrantMustBeScheduled(bytes32 role);
    /// @notice `role` is not timelocked: grant it with `grantRole`.
    error RoleNotTimelocked(bytes32 role);
    /// @notice The operation `operation` is already scheduled (ready at `readyAt`).
    error OperationAlreadyScheduled(bytes32 operation, uint48 readyAt);
    /// @notice The operation `operation` is not scheduled.
    error OperationNotScheduled(bytes32 operation);
    /// @notice The operation `operation` cannot be executed before `readyAt`.
    error OperationNotReady(bytes32 operation, uint48 readyAt);

    /// @notice Grants a role that is not timelocked (or any role during the setup phase).
    /// @dev Reverts {RoleGrantMustBeScheduled} for a timelocked role once setup is over.
    function grantRole(bytes32 role, address account) public virtual override {
        if (_isTimelockedRole(role) && !_inSetup()) revert RoleGrantMustBeScheduled(role);
        super.grantRole(role, account);
    }

    /// @notice Schedules the grant of the timelocked `role` to `account`, executable after {timelockDelay}.
    /// @dev Only the role's admin. Reverts {RoleNotTimelocked}, {OperationAlreadyScheduled}.
    function scheduleRoleGrant(bytes32 role, address account) external onlyRole(getRoleAdmin(role)) {
        if (!_isTimelockedRole(role)) revert RoleNotTimelocked(role);
        bytes32 operation = _grantOperation(role, account);
        uint48 readyAt = _scheduleOperation(operation);
        emit RoleGrantScheduled(role, account, operation, readyAt);
    }

    /// @notice Cancels the scheduled `operation` (its id is in the event that scheduled it).
    /// @dev Only the default admin. Reverts {OperationNotScheduled}.
    function cancelOperation(bytes32 operation) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (_readyAt[operation] == 0) revert OperationNotScheduled(operation);
        delete _readyAt[operation];
        emit OperationCancelled(operation);
    }

    /// @notice Executes the scheduled grant of `role` to `account` once it is due; callable by anyone.
    /// @dev Reverts {OperationNotScheduled}, {OperationNotReady}.
    function executeRoleGrant(bytes32 role, address account) external {
        _executeOperation(_grantOperation(role, account));
        emit RoleGrantExecuted(role, account);
        _grantRole(role, account);
    }

    /// @notice When the operation `operation` can be executed (0 when not scheduled).
    function operationReadyAt(bytes32 operation) public view returns (uint48) {
        return _readyAt[operation];
    }

    /// @notice Seconds between scheduling a timelocked operation and its earliest execution.
    function timelockDelay() public view returns (uint48) {
        return defaultAdminDelay();
    }

    /// @dev The roles whose grants are timelocked.
    function _isTimelockedRole(bytes32 role) internal view virtual returns (bool);

    /// @dev Whether the contract is still being wired (changes immediate); false unless overridden.
    function _inSetup() internal view virtual returns (bool) {
        return false;
    }

    /// @dev Schedules `operation` at now + {timelockDelay}; returns that time.
    function _scheduleOperation(bytes32 operation) internal returns (uint48 readyAt) {
        uint48 scheduled = _readyAt[operation];
        if (scheduled != 0) revert OperationAlreadyScheduled(operation, scheduled);
        readyAt = uint48(block.timestamp) + timelockDelay();
        _readyAt[operation] = readyAt;
    }

    /// @dev Consumes the scheduled `operation` if it is due.
    function _executeOperation(bytes32 operation) internal {
        uint48 readyAt = _readyAt[operation];
        if (readyAt == 0) revert OperationNotScheduled(operation);
        if (block.timestamp < readyAt) revert OperationNotReady(operation, readyAt);
        delete _readyAt[operation];
    }

    /// @dev keccak256(abi.encode(keccak256("TIMELOCKED_ROLE_GRANT"), role, account)).
    function _grantOperation(bytes32 role, address account) private pure returns (bytes32) {
        return keccak256(abi.encode(_GRANT_TAG, role, account));
    }
}
