// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IValidationRegistry} from "./interfaces/IValidationRegistry.sol";

/// @title ValidationRegistry
/// @notice Publishes validators' verdicts on V2 guarantees (ERC-8004 validation registry shape).
/// @dev Records are kept per (requestHash, validatorAddress), see {IValidationRegistry}. Anyone may open a
/// request; only the named validator may answer it, and may answer again (the latest answer wins).
/// While a record has no answer yet, the validator it names may re-open it with its own agent id and URI,
/// so that a record opened by someone else with a wrong agent id cannot block the real request.
contract ValidationRegistry is IValidationRegistry {
    /// @notice Highest score a validator may give (ERC-8004: responses are 0..100).
    uint8 public constant MAX_RESPONSE = 100;

    struct Record {
        address requester;
        uint64 lastUpdate;
        uint8 response;
        bool exists;
        bool responded;
        uint256 agentId;
        bytes32 responseHash;
        string tag;
    }

    /// @dev requestHash => validator => record.
    mapping(bytes32 requestHash => mapping(address validator => Record)) private _records;
    /// @dev requestHash => the validator named by the first request (for the ERC-8004 single-key view).
    mapping(bytes32 requestHash => address validator) private _firstValidator;

    /// @notice The validator address is zero.
    error ZeroValidatorAddress();
    /// @notice The request hash is zero.
    error ZeroRequestHash();
    /// @notice A request for `requestHash` addressed to `validator` already exists and cannot be re-opened by the caller.
    error RequestAlreadyExists(bytes32 requestHash, address validator);
    /// @notice No request for `requestHash` is addressed to `validator` (the caller of a response).
    error RequestNotFound(bytes32 requestHash, address validator);
    /// @notice `response` is above {MAX_RESPONSE}.
    error ResponseOutOfRange(uint8 response);

    /// @inheritdoc IValidationRegistry
    /// @dev Reverts with {ZeroValidatorAddress}, {ZeroRequestHash}, or {RequestAlreadyExists} when the
    /// record exists and either has an answer or the caller is not the validator it names.
    function validationRequest(
        address validatorAddress,
        uint256 agentId,
        string calldata requestUri,
        bytes32 requestHash
    ) external {
        if (validatorAddress == address(0)) revert ZeroValidatorAddress();
        if (requestHash == bytes32(0)) revert ZeroRequestHash();
        Record storage record = _records[requestHash][validatorAddress];
        if (record.exists && (record.responded || msg.sender != validatorAddress)) {
            revert RequestAlreadyExists(requestHash, validatorAddress);
        }
        record.exists = true;
        record.requester = msg.sender;
        record.agentId = agentId;
        if (_firstValidator[requestHash] == address(0)) _firstValidator[requestHash] = validatorAddress;
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
    /// @dev `lastUpdate` is zero until the validator has answered.
    function getValidationStatus(
        bytes32 requestHash
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
        return _status(requestHash, _firstValidator[requestHash]);
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
        return _status(requestHash, validator);
    }

    /// @notice Whether a request for `requestHash` addressed to `validator` exists.
    function requestExists(bytes32 requestHash, address validator) external view returns (bool) {
        return _records[requestHash][validator].exists;
    }

    /// @notice Whether `validator` has answered the request `requestHash`.
    function hasResponse(bytes32 requestHash, address validator) external view returns (bool) {
        return _records[requestHash][validator].responded;
    }

    /// @notice Who opened (or last re-opened) the request `requestHash` addressed to `validator`.
    function requesterOf(bytes32 requestHash, address validator) external view returns (address) {
        return _records[requestHash][validator].requester;
    }

    function _status(
        bytes32 requestHash,
        address validator
    ) private view returns (address, uint256, uint8, bytes32, string memory, uint256) {
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
}
