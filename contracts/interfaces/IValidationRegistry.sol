// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title IValidationRegistry
/// @notice ERC-8004-shaped validation registry, extended with a per-validator lookup.
/// @dev A request hash is public as soon as the guarantee is known, so a record keyed by the hash alone
/// could be squatted by anyone naming a bogus validator. Records are therefore kept per
/// (requestHash, validatorAddress); the Vault reads {getValidationStatusFor} with the validator named in
/// the signed policy. {getValidationStatus} keeps the ERC-8004 single-argument shape.
interface IValidationRegistry {
    /// @notice A validation was requested from `validatorAddress` for `agentId`.
    event ValidationRequest(
        address indexed validatorAddress,
        uint256 indexed agentId,
        string requestUri,
        bytes32 indexed requestHash
    );

    /// @notice `validatorAddress` answered (or updated its answer to) the request `requestHash`.
    event ValidationResponse(
        address indexed validatorAddress,
        uint256 indexed agentId,
        bytes32 indexed requestHash,
        uint8 response,
        string responseUri,
        bytes32 responseHash,
        string tag
    );

    /// @notice Asks `validatorAddress` to validate the work committed to by `requestHash`.
    function validationRequest(
        address validatorAddress,
        uint256 agentId,
        string calldata requestUri,
        bytes32 requestHash
    ) external;

    /// @notice Records the caller's answer (0..100) to a request addressed to it.
    function validationResponse(
        bytes32 requestHash,
        uint8 response,
        string calldata responseUri,
        bytes32 responseHash,
        string calldata tag
    ) external;

    /// @notice ERC-8004 view: the status held by the first validator a request for `requestHash` named.
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
        );

    /// @notice The status of the request `requestHash` addressed to `validator` (zeros if none).
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
        );
}
