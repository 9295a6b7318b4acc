// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IValidationRegistry} from "./interfaces/IValidationRegistry.sol";

/// @title ValidationRegistry
/// @notice Publishes validators' verdicts on V2 guarantees (ERC-8004 validation registry shape).
/// @dev Records are kept per (requestHash, validatorAddress), see {IValidationRegistry}. Anyone may request,
/// as often as they like: the first request opens the record, later ones are events only, except that the
/// named validator's own request (before it answers) sets the record's agent id. Only the named validator
/// may answer, and may answer again (the latest answer wins).
contract ValidationRegistry is IValidationRegistry {
    /// @notice Highest score a validator may give (ERC-8004: responses are 0..100).
    uint8 public constant MAX_RESPONSE = 100;

    /// @dev The first slot holds everything {verdictOf} reads but the tag (a short tag is one more slot).
    struct Record {
        address requester;
        uint64 lastUpdate;
        uint8 response;
        bool exists;
        bool responded;
        string tag;
        uint256 agentId;
        bytes32 responseHash;
    }

    /// @dev requestHash => validator => record.
    mapping(bytes32 requestHash => mapping(address validator => Record)) private _records;

    /// @notice The validator address is zero.
    error ZeroValidatorAddress();
    /// @notice The request hash is zero.
    error ZeroRequestHash();
    /// @notice No request for `requestHash` is addressed to `validator` (the caller of a response).
    error RequestNotFound(bytes32 requestHash, address validator);
    /// @notice `response` is above {MAX_RESPONSE}.
    error ResponseOutOfRange(uint8 response);

    /// @inheritdoc IValidationRegistry
    /// @dev Reverts only with {ZeroValidatorAddress} or {ZeroRequestHash}: a request someone else opened first
    /// never blocks another (issue 17, finding 4). The first request opens the record with its requester and
    /// agent id; the named validator's own request, while it has not answered, replaces both.
    function validationRequest(
        address validatorAddress,
        uint256 agentId,
        string calldata requestUri,
        bytes32 requestHash
    ) external {
        if (validatorAddress == address(0)) revert ZeroValidatorAddress();
        if (requestHash == bytes32(0)) revert ZeroRequestHash();
        Record storage record = _records[requestHash][validatorAddress];
        if (!record.exists || (msg.sender == validatorAddress && !record.responded)) {
            record.exists = true;
            record.requester = msg.sender;
            record.agentId = agentId;
        }
        emit ValidationRequest(validatorAddress, agentId, requestUri, requestHash);
    }

    /// @inheritdoc IValidationRegistry
    /// @dev Reverts with {ResponseOutOfRange} or {RequestNotFound} (no request addressed to the caller).
    function validationResponse(
        bytes32 requestHash,
        uint8 response,
        string calldata responseUri,
        bytes32 responseHash,
        string calldata tag
    ) external {
        if (response > MAX_RESPONSE) revert ResponseOutOfRange(response);
        Record storage record = _records[requestHash][msg.sender];
        if (!record.exists) revert RequestNotFound(requestHash, msg.sender);
        record.response = response;
        record.responded = true;
        record.responseHash = responseHash;
        record.tag = tag;
        record.lastUpdate = uint64(block.timestamp);
        emit ValidationResponse(
            msg.sender,
            record.agentId,
            requestHash,
            response,
            responseUri,
            responseHash,
            tag
        );
    }

    /// @inheritdoc IValidationRegistry
    /// @dev `lastUpdate` is zero until the validator has answered; all fields are zero if no such request.
    function getValidationStatusFor(
        bytes32 requestHash,
        address validator
    )
        external
        view
        returns (
            address validatorAddress,
            uint256 agentId,
            uint8 response,
            bytes32 responseHash,
            string memory tag,
            uint256 lastUpdate
        )
    {
        Record storage record = _records[requestHash][validator];
        if (!record.exists) return (address(0), 0, 0, bytes32(0), "", 0);
        return (
            validator,
            record.agentId,
            record.response,
            record.responseHash,
            record.tag,
            record.lastUpdate
        );
    }

    /// @inheritdoc IValidationRegistry
    function verdictOf(
        bytes32 requestHash,
        address validator
    ) external view returns (bool responded, uint8 response, bytes32 tagHash, uint64 lastUpdate) {
        Record storage record = _records[requestHash][validator];
        if (!record.responded) return (false, 0, bytes32(0), 0);
        return (true, record.response, keccak256(bytes(record.tag)), record.lastUpdate);
    }

    /// @notice Whether a request for `requestHash` addressed to `validator` exists.
    function requestExists(bytes32 requestHash, address validator) external view returns (bool) {
        return _records[requestHash][validator].exists;
    }

    /// @notice Whether `validator` has answered the request `requestHash`.
    function hasResponse(bytes32 requestHash, address validator) external view returns (bool) {
        return _records[requestHash][validator].responded;
    }

    /// @notice Who opened the request `requestHash` addressed to `validator` (or the validator, if it
    /// re-requested before answering).
    function requesterOf(bytes32 requestHash, address validator) external view returns (address) {
        return _records[requestHash][validator].requester;
    }
}
