// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";

/// @notice Pulls a deposit from the payer to the calling escrow (the `collect` call of the scheme).
interface IBatchDepositCollector {
    /// @param payer Owner of the tokens.
    /// @param token ERC-20 token.
    /// @param amount Exact amount to move to `msg.sender`.
    /// @param channelId Channel the deposit is for (binds the payer's authorization).
    /// @param collectorData Collector-specific data (signatures, validity window, salt).
    function collect(
        address payer,
        address token,
        uint256 amount,
        bytes32 channelId,
        bytes calldata collectorData
    ) external;
}

/// @title BatchSettlementFromSpec
/// @notice FOR BENCHMARKING ONLY. An escrow for x402's `batch-settlement` scheme on EVM, written in this
/// repository from the published scheme specification (`scheme_batch_settlement_evm.md`) and the ABI the
/// official x402 EVM package (2.27) facilitator calls. It is NOT the official `x402BatchSettlement` contract (whose
/// bytecode the npm package does not ship) and has not been audited: `npm run bench:vs-peers` places its code at
/// the canonical address the official client, server and facilitator use (`hardhat_setCode`), so they run
/// unmodified on the devnet. Gas figures measured on it approximate the official contract's, they are not its.
///
/// Model (from the specification): a channel is identified by the EIP-712 hash of an immutable
/// `ChannelConfig` under the domain `x402 Batch Settlement`/`1`; it holds `balance` (deposited minus
/// withdrawn and refunded) and `totalClaimed` (cumulative, only grows, capped by the payer's latest
/// cumulative voucher). Claims move no tokens; `settle` sweeps a receiver's claimed-but-unsettled total in
/// one transfer. The payer leaves through a timed withdrawal; the receiver side may refund cooperatively.
contract BatchSettlementFromSpec is EIP712, ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    /// @notice The immutable parameters of a channel; their EIP-712 hash is the channel id.
    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    /// @notice A payer's cumulative voucher for a channel.
    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    /// @notice One row of a claim: the voucher, its signature, and the new cumulative claimed total.
    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }

    /// @notice Per channel: deposited minus withdrawn and refunded, and the cumulative claimed total.
    struct ChannelState {
        uint128 balance;
        uint128 totalClaimed;
    }

    /// @notice A timed withdrawal in progress.
    struct PendingWithdrawal {
        uint128 amount;
        uint40 initiatedAt;
    }

    /// @notice Per receiver and token: claimed and already transferred totals.
    struct ReceiverState {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    /// @notice Lower bound of `withdrawDelay` (15 minutes).
    uint40 public constant MIN_WITHDRAW_DELAY = 900;
    /// @notice Upper bound of `withdrawDelay` (30 days).
    uint40 public constant MAX_WITHDRAW_DELAY = 2_592_000;

    /// @notice EIP-712 type hash of `ChannelConfig`.
    bytes32 public constant CHANNEL_CONFIG_TYPEHASH =
        keccak256(
            "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
        );
    /// @notice EIP-712 type hash of `Voucher`.
    bytes32 public constant VOUCHER_TYPEHASH =
        keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    /// @notice EIP-712 type hash of `Refund`.
    bytes32 public constant REFUND_TYPEHASH =
        keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    /// @notice EIP-712 type hash of `ClaimEntry`.
    bytes32 public constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    /// @notice EIP-712 type hash of `ClaimBatch`.
    bytes32 public constant CLAIM_BATCH_TYPEHASH =
        keccak256(
            "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
        );

    /// @notice Channel balances and claimed totals, by channel id.
    mapping(bytes32 channelId => ChannelState) public channels;
    /// @notice Timed withdrawals, by channel id.
    mapping(bytes32 channelId => PendingWithdrawal) public pendingWithdrawals;
    /// @notice The nonce the next `refundWithSignature` of a channel must carry.
    mapping(bytes32 channelId => uint256) public refundNonce;
    /// @notice Claimed and settled totals per receiver and token.
    mapping(address receiver => mapping(address token => ReceiverState)) public receivers;

    /// @notice First deposit into an empty channel.
    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    /// @notice Tokens were added to a channel.
    event Deposited(bytes32 indexed channelId, address indexed collector, uint128 amount);
    /// @notice A channel's claimed total rose.
    event Claimed(bytes32 indexed channelId, uint128 totalClaimed, uint128 delta);
    /// @notice A receiver's claimed funds were transferred.
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    /// @notice A timed withdrawal started.
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 initiatedAt);
    /// @notice A timed withdrawal completed.
    event Withdrawn(bytes32 indexed channelId, uint128 amount);
    /// @notice Unclaimed escrow was returned to the payer by the receiver side.
    event Refunded(bytes32 indexed channelId, uint128 amount, uint256 nonce);
    /// @notice Unclaimed escrow of a never-claimed channel returned to zero.
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);

    /// @notice The deposit amount is zero.
    error ZeroAmount();
    /// @notice `withdrawDelay` is outside [15 min, 30 days].
    error WithdrawDelayOutOfRange(uint40 withdrawDelay);
    /// @notice The collector delivered less than `amount`.
    error DepositShortfall(uint256 expected, uint256 received);
    /// @notice The voucher signature is not the payer's (or payer authorizer's).
    error InvalidVoucherSignature(bytes32 channelId);
    /// @notice The authorizer signature is not the receiver authorizer's.
    error InvalidAuthorizerSignature();
    /// @notice The rows of a signed claim name different receiver authorizers.
    error MixedReceiverAuthorizers();
    /// @notice The caller is not allowed to do this for this channel.
    error Unauthorized(address caller);
    /// @notice `totalClaimed` is above the voucher's ceiling.
    error ClaimAboveVoucher(bytes32 channelId, uint128 totalClaimed, uint128 maxClaimableAmount);
    /// @notice `totalClaimed` is above the channel's balance.
    error ClaimAboveBalance(bytes32 channelId, uint128 totalClaimed, uint128 balance);
    /// @notice The refund nonce is not the channel's current one.
    error StaleRefundNonce(uint256 expected, uint256 given);
    /// @notice The withdrawal amount exceeds the unclaimed escrow.
    error WithdrawAboveAvailable(uint128 amount, uint128 available);
    /// @notice No timed withdrawal is pending.
    error NoPendingWithdrawal();
    /// @notice The withdrawal delay has not elapsed.
    error WithdrawDelayNotElapsed(uint256 readyAt);
    /// @notice An empty claim batch.
    error EmptyClaims();

    constructor() EIP712("x402 Batch Settlement", "1") {}

    // ------------------------------------------------------------------ ids and digests

    /// @notice The channel id of `config` on this chain and contract.
    /// @param config The channel's immutable parameters.
    /// @return The EIP-712 hash of `config`.
    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return
            _hashTypedDataV4(
                keccak256(
                    abi.encode(
                        CHANNEL_CONFIG_TYPEHASH,
                        config.payer,
                        config.payerAuthorizer,
                        config.receiver,
                        config.receiverAuthorizer,
                        config.token,
                        config.withdrawDelay,
                        config.salt
                    )
                )
            );
    }

    /// @notice The digest a payer signs for a cumulative voucher.
    /// @param channelId The channel.
    /// @param maxClaimableAmount The cumulative ceiling.
    /// @return The EIP-712 digest.
    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    /// @notice The digest the receiver authorizer signs for a refund.
    /// @param channelId The channel.
    /// @param nonce The channel's current refund nonce.
    /// @param amount The requested refund.
    /// @return The EIP-712 digest.
    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    /// @notice The digest the receiver authorizer signs for a batch of claims.
    /// @param voucherClaims The rows.
    /// @return The EIP-712 digest of `ClaimBatch`.
    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            VoucherClaim calldata c = voucherClaims[i];
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH,
                    getChannelId(c.voucher.channel),
                    c.voucher.maxClaimableAmount,
                    c.totalClaimed
                )
            );
        }
        return
            _hashTypedDataV4(
                keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries))))
            );
    }

    // ------------------------------------------------------------------ deposit

    /// @notice Adds `amount` to the channel of `config`, pulled by `collector` (which checks the payer's
    /// authorization); the contract credits only what it actually received.
    /// @param config The channel.
    /// @param amount Tokens to add.
    /// @param collector The deposit collector (ERC-3009 or Permit2).
    /// @param collectorData The collector's data.
    function deposit(
        ChannelConfig calldata config,
        uint128 amount,
        address collector,
        bytes calldata collectorData
    ) external nonReentrant {
        if (amount == 0) revert ZeroAmount();
        if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY)
            revert WithdrawDelayOutOfRange(config.withdrawDelay);
        bytes32 channelId = getChannelId(config);
        IERC20 token = IERC20(config.token);
        uint256 before = token.balanceOf(address(this));
        IBatchDepositCollector(collector).collect(
            config.payer,
            config.token,
            amount,
            channelId,
            collectorData
        );
        uint256 received = token.balanceOf(address(this)) - before;
        if (received < amount) revert DepositShortfall(amount, received);
        ChannelState storage ch = channels[channelId];
        if (ch.balance == 0 && ch.totalClaimed == 0) emit ChannelCreated(channelId, config);
        ch.balance += amount;
        emit Deposited(channelId, collector, amount);
    }

    // ------------------------------------------------------------------ claims

    /// @notice Claims vouchers; the caller must be each row's receiver or receiver authorizer.
    /// @param voucherClaims The rows.
    function claim(VoucherClaim[] calldata voucherClaims) external nonReentrant {
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            ChannelConfig calldata c = voucherClaims[i].voucher.channel;
            if (msg.sender != c.receiver && msg.sender != c.receiverAuthorizer)
                revert Unauthorized(msg.sender);
            _claim(voucherClaims[i]);
        }
    }

    /// @notice Claims vouchers of many channels on a `ClaimBatch` signature of their (common) receiver
    /// authorizer; anyone may relay it.
    /// @param voucherClaims The rows.
    /// @param authorizerSignature The receiver authorizer's EIP-712 `ClaimBatch` signature.
    function claimWithSignature(
        VoucherClaim[] calldata voucherClaims,
        bytes calldata authorizerSignature
    ) external nonReentrant {
        if (voucherClaims.length == 0) revert EmptyClaims();
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        for (uint256 i = 1; i < voucherClaims.length; i++) {
            if (voucherClaims[i].voucher.channel.receiverAuthorizer != authorizer)
                revert MixedReceiverAuthorizers();
        }
        if (
            !SignatureChecker.isValidSignatureNow(
                authorizer,
                getClaimBatchDigest(voucherClaims),
                authorizerSignature
            )
        ) revert InvalidAuthorizerSignature();
        for (uint256 i = 0; i < voucherClaims.length; i++) _claim(voucherClaims[i]);
    }

    function _claim(VoucherClaim calldata c) private {
        ChannelConfig calldata config = c.voucher.channel;
        bytes32 channelId = getChannelId(config);
        uint128 ceiling = c.voucher.maxClaimableAmount;
        if (!_validVoucher(config, getVoucherDigest(channelId, ceiling), c.signature))
            revert InvalidVoucherSignature(channelId);
        if (c.totalClaimed > ceiling) revert ClaimAboveVoucher(channelId, c.totalClaimed, ceiling);
        ChannelState storage ch = channels[channelId];
        if (c.totalClaimed > ch.balance) revert ClaimAboveBalance(channelId, c.totalClaimed, ch.balance);
        if (c.totalClaimed <= ch.totalClaimed) return; // already claimed up to here: a no-op row
        uint128 delta = c.totalClaimed - ch.totalClaimed;
        ch.totalClaimed = c.totalClaimed;
        receivers[config.receiver][config.token].totalClaimed += delta;
        emit Claimed(channelId, c.totalClaimed, delta);
    }

    function _validVoucher(
        ChannelConfig calldata config,
        bytes32 digest,
        bytes calldata signature
    ) private view returns (bool) {
        if (config.payerAuthorizer != address(0)) {
            (address signer, ECDSA.RecoverError err, ) = ECDSA.tryRecoverCalldata(digest, signature);
            return err == ECDSA.RecoverError.NoError && signer == config.payerAuthorizer;
        }
        return SignatureChecker.isValidSignatureNow(config.payer, digest, signature);
    }

    // ------------------------------------------------------------------ settle

    /// @notice Transfers everything claimed and not yet transferred for `receiver` in `token`; permissionless.
    /// @param receiver The receiver.
    /// @param token The token.
    function settle(address receiver, address token) external nonReentrant {
        ReceiverState storage r = receivers[receiver][token];
        uint128 amount = r.totalClaimed - r.totalSettled;
        if (amount == 0) return;
        r.totalSettled = r.totalClaimed;
        IERC20(token).safeTransfer(receiver, amount);
        emit Settled(receiver, token, msg.sender, amount);
    }

    // ------------------------------------------------------------------ payer exit

    /// @notice Starts a timed withdrawal of up to the unclaimed escrow (payer or payer authorizer).
    /// @param config The channel.
    /// @param amount Tokens to withdraw.
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        _onlyPayerSide(config);
        bytes32 channelId = getChannelId(config);
        ChannelState storage ch = channels[channelId];
        uint128 available = ch.balance - ch.totalClaimed;
        if (amount == 0) revert ZeroAmount();
        if (amount > available) revert WithdrawAboveAvailable(amount, available);
        pendingWithdrawals[channelId] = PendingWithdrawal(amount, uint40(block.timestamp));
        emit WithdrawInitiated(channelId, amount, uint40(block.timestamp));
    }

    /// @notice Completes a timed withdrawal once its delay has elapsed, capped to the unclaimed escrow left.
    /// @param config The channel.
    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        _onlyPayerSide(config);
        bytes32 channelId = getChannelId(config);
        PendingWithdrawal memory p = pendingWithdrawals[channelId];
        if (p.initiatedAt == 0) revert NoPendingWithdrawal();
        uint256 readyAt = uint256(p.initiatedAt) + config.withdrawDelay;
        if (block.timestamp < readyAt) revert WithdrawDelayNotElapsed(readyAt);
        delete pendingWithdrawals[channelId];
        ChannelState storage ch = channels[channelId];
        uint128 available = ch.balance - ch.totalClaimed;
        uint128 amount = p.amount < available ? p.amount : available;
        ch.balance -= amount;
        if (amount > 0) IERC20(config.token).safeTransfer(config.payer, amount);
        emit Withdrawn(channelId, amount);
        if (ch.balance == 0 && ch.totalClaimed == 0) emit ChannelClosed(channelId, config);
    }

    function _onlyPayerSide(ChannelConfig calldata config) private view {
        if (
            msg.sender != config.payer &&
            (config.payerAuthorizer == address(0) || msg.sender != config.payerAuthorizer)
        ) revert Unauthorized(msg.sender);
    }

    // ------------------------------------------------------------------ cooperative refund

    /// @notice Returns up to `amount` of unclaimed escrow to the payer (receiver or receiver authorizer).
    /// @param config The channel.
    /// @param amount Requested refund (capped to the unclaimed escrow).
    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer)
            revert Unauthorized(msg.sender);
        _refund(config, getChannelId(config), amount);
    }

    /// @notice `refund` on an EIP-712 `Refund` signature of the receiver authorizer; anyone may relay it.
    /// @param config The channel.
    /// @param amount Requested refund (capped to the unclaimed escrow).
    /// @param nonce Must equal `refundNonce(channelId)`.
    /// @param receiverAuthorizerSignature The receiver authorizer's signature.
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 channelId = getChannelId(config);
        uint256 expected = refundNonce[channelId];
        if (nonce != expected) revert StaleRefundNonce(expected, nonce);
        if (
            !SignatureChecker.isValidSignatureNow(
                config.receiverAuthorizer,
                getRefundDigest(channelId, nonce, amount),
                receiverAuthorizerSignature
            )
        ) revert InvalidAuthorizerSignature();
        _refund(config, channelId, amount);
    }

    /// @dev The nonce advances first, even when nothing is left to refund (the specification's order).
    function _refund(ChannelConfig calldata config, bytes32 channelId, uint128 amount) private {
        uint256 nonce = refundNonce[channelId]++;
        ChannelState storage ch = channels[channelId];
        uint128 available = ch.balance - ch.totalClaimed;
        uint128 refunded = amount < available ? amount : available;
        if (refunded == 0) return;
        ch.balance -= refunded;
        PendingWithdrawal storage p = pendingWithdrawals[channelId];
        if (p.initiatedAt != 0) {
            if (refunded >= p.amount) delete pendingWithdrawals[channelId];
            else p.amount -= refunded;
        }
        IERC20(config.token).safeTransfer(config.payer, refunded);
        emit Refunded(channelId, refunded, nonce);
        if (ch.balance == 0 && ch.totalClaimed == 0) emit ChannelClosed(channelId, config);
    }

    // ------------------------------------------------------------------ multicall

    /// @notice Runs several calls of this contract in one transaction (each as if called directly).
    /// @param data ABI-encoded calls.
    /// @return results Their return data.
    function multicall(bytes[] calldata data) external returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; i++) {
            (bool ok, bytes memory out) = address(this).delegatecall(data[i]);
            if (!ok) {
                assembly ("memory-safe") {
                    revert(add(out, 32), mload(out))
                }
            }
            results[i] = out;
        }
    }
}
