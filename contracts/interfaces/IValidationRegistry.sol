// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title IValidationRegistry
/// @notice ERC-8004-shaped validation registry, keyed by (requestHash, validatorAddress).
/// @dev A request hash is public as soon as the guarantee is known, so nothing about a request may be first
/// come, first served (issue 17, findings 4 and 7):
/// - records are kept per (requestHash, validatorAddress), and only that validator writes the verdict;
/// - opening a request never fails because someone opened it before (anyone may request again; each request
///   is an event), so a payer cannot squat the seller's request;
/// - the verdict is read per validator ({verdictOf}, {getValidationStatusFor}). ERC-8004's single-argument
///   `getValidationStatus(requestHash)` is deliberately absent: with several validators named for one hash it
///   had to pick one, and anyone could choose which.
/// The agent id a request carries is informational: the request hash itself commits to the validator, its
/// agent id and the guarantee's policy (docs/protocol.md, "Identities"), and the Vault checks
/// the verdict of the validator the signed policy names.
interface IValidationRegistry {
    /// @notice A validation was requested from `validatorAddress` for `agentId` (by anyone, any number of times).
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

    /// @notice What the Vault checks, in one static answer: whether `validator` answered `requestHash`, its
    /// score, keccak256 of its tag's UTF-8 bytes, and the time of its latest answer (all zero if none).
    function verdictOf(
        bytes32 requestHash,
        address validator
    ) external view returns (bool responded, uint8 response, bytes32 tagHash, uint64 lastUpdate);
}
