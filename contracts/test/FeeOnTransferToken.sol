// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title FeeOnTransferToken
/// @notice Test-only ERC-20 that burns a fixed share of every transfer, to show that the Vault credits what
/// it actually received and that the ClearingHouse rejects short payments.
contract FeeOnTransferToken is ERC20 {
    uint256 private constant BPS = 10_000;
    /// @notice Fee in basis points taken from every transfer between two non-zero addresses.
    uint256 public immutable feeBps;

    /// @param feeBps_ Fee in basis points (10_000 burns the whole transfer).
    constructor(uint256 feeBps_) ERC20("Fee Token", "FEE") {
        feeBps = feeBps_;
    }

    /// @notice Mints `amount` to `to` (test token).
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function _update(address from, address to, uint256 value) internal override {
        if (from == address(0) || to == address(0)) return super._update(from, to, value);
        uint256 fee = (value * feeBps) / BPS;
        super._update(from, address(0), fee);
        super._update(from, to, value - fee);
    }
}
