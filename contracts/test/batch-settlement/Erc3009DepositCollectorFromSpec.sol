// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IBatchDepositCollector} from "./BatchSettlementFromSpec.sol";

/// @notice The EIP-3009 call the collector makes (`to` must be the caller).
interface IReceiveWithAuthorization {
    /// @notice Moves `value` from `from` to the caller on `from`'s signed authorization.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external;
}

/// @title Erc3009DepositCollectorFromSpec
/// @notice FOR BENCHMARKING ONLY: the ERC-3009 deposit collector of x402 `batch-settlement`, written here from
/// the scheme specification (not the official `ERC3009DepositCollector`). It pulls the deposit with the payer's
/// `receiveWithAuthorization` (to = this collector, nonce = keccak256(abi.encode(channelId, salt)), binding the
/// authorization to the channel) and forwards it to the escrow, which is the only allowed caller.
contract Erc3009DepositCollectorFromSpec is IBatchDepositCollector {
    using SafeERC20 for IERC20;

    /// @notice The escrow this collector serves (an immutable: it survives copying the code elsewhere).
    address public immutable settlement;

    /// @notice The caller is not the escrow.
    error OnlySettlement(address caller);

    /// @param settlement_ The escrow's address.
    constructor(address settlement_) {
        settlement = settlement_;
    }

    /// @inheritdoc IBatchDepositCollector
    function collect(
        address payer,
        address token,
        uint256 amount,
        bytes32 channelId,
        bytes calldata collectorData
    ) external {
        if (msg.sender != settlement) revert OnlySettlement(msg.sender);
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) = abi.decode(
            collectorData,
            (uint256, uint256, uint256, bytes)
        );
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IReceiveWithAuthorization(token).receiveWithAuthorization(
            payer,
            address(this),
            amount,
            validAfter,
            validBefore,
            nonce,
            signature
        );
        IERC20(token).safeTransfer(msg.sender, amount);
    }
}
