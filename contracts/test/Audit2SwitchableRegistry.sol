// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title Audit2SwitchableRegistry
/// @notice Test double (audit2, finding A2-I2): a validation registry whose `verdictOf` answers one stored
/// verdict and can be switched to revert, as an upgradeable or paused ERC-8004 registry might. Tests only.
contract Audit2SwitchableRegistry {
    bool public broken;
    uint8 private _response;
    bytes32 private _tagHash;
    uint64 private _lastUpdate;

    /// @notice Answers every request with (`response`, keccak256(`tag`), `lastUpdate`).
    function setVerdict(uint8 response, string calldata tag, uint64 lastUpdate) external {
        (_response, _tagHash, _lastUpdate) = (response, keccak256(bytes(tag)), lastUpdate);
    }

    /// @notice From now on `verdictOf` reverts (`on`) or answers again.
    function setBroken(bool on) external {
        broken = on;
    }

    /// @notice The IValidationRegistry view the Vault and the GuaranteeVerifier read.
    function verdictOf(bytes32, address) external view returns (bool, uint8, bytes32, uint64) {
        require(!broken, "registry unavailable");
        return (true, _response, _tagHash, _lastUpdate);
    }
}
