// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControlDefaultAdminRules} from "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Address} from "@openzeppelin/contracts/utils/Address.sol";
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";

import {TimelockedRoles} from "./access/TimelockedRoles.sol";
import {IClearingVault} from "./interfaces/IClearingVault.sol";

/// @title ClearingHouse
/// @notice Settles multilateral netting cycles committed by the operator: debtors pay their net debit (or
/// have it covered from their Vault collateral after the payment deadline), creditors claim their net
/// credit with a Merkle proof.
/// @dev Merkle leaves are `@openzeppelin/merkle-tree` StandardMerkleTree leaves over
/// `[uint256 cycleId, address asset, address participant, uint256 debit, uint256 credit]`; positions are net,
/// so a creditor's leaf has `debit == 0`. Creditors are paid first come, first served from the liquidity of
/// their cycle and asset (debits paid + defaults covered). Invariant: for every asset, this contract holds
/// `heldLiquidity(asset)` = sum over cycles of (funded - claimed).
///
/// Timing: `paymentDeadline = commit time + Vault.paymentWindow()`; default coverage opens strictly after it
/// and stays open until the debt is resolved. A debtor may still pay late as long as nobody has covered
/// the debt yet. `defaultDeadline = paymentDeadline + Vault.defaultWindow()` is the time by which the
/// operator's keeper covers defaults; it bounds the clearing path used in the withdrawal-grace invariant.
contract ClearingHouse is TimelockedRoles, ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    /// @notice Role that commits cycles (the operator, Core).
    bytes32 public constant OPERATOR_ROLE = keccak256("OPERATOR_ROLE");
    /// @notice The asset id of ETH.
    address public constant ETH = address(0);

    /// @notice Per-asset totals of a cycle; netting makes them equal.
    struct AssetTotal {
        address asset;
        uint256 totalDebit;
        uint256 totalCredit;
    }

    /// @notice State of a debtor's net debit in a cycle.
    enum DebtStatus {
        None,
        Open,
        Paid,
        Covered
    }

    /// @notice A committed cycle.
    struct Cycle {
        bytes32 root;
        uint64 committedAt;
        uint64 paymentDeadline;
        uint64 defaultDeadline;
        uint32 openDebts;
        bool finalized;
    }

    /// @notice One asset of a committed cycle.
    struct CycleAsset {
        bool listed;
        uint256 totalDebit;
        uint256 funded;
        uint256 claimed;
        uint256 shortfall;
    }

    /// @notice A debtor's net debit in one cycle and asset.
    struct Debt {
        uint248 amount; // packed with the status into one slot (commit writes one slot per debtor)
        DebtStatus status;
    }

    /// @notice The Vault holding collateral and obligations.
    IClearingVault public immutable vault;
    /// @notice Id of the last committed cycle (0 before the first; ids go 1, 2, 3, ...).
    uint256 public lastCycleId;
    /// @notice Liquidity this contract holds for unclaimed credits, per asset.
    mapping(address asset => uint256) public heldLiquidity;

    mapping(uint256 cycleId => Cycle) private _cycles;
    mapping(uint256 cycleId => mapping(address asset => CycleAsset)) private _cycleAssets;
    mapping(uint256 cycleId => mapping(address asset => mapping(address debtor => Debt))) private _debts;
    mapping(uint256 cycleId => mapping(address asset => mapping(address participant => bool)))
        private _claimed;

    /// @notice Cycle `cycleId` was committed with Merkle root `root`.
    event CycleCommitted(
        uint256 indexed cycleId,
        bytes32 root,
        uint64 paymentDeadline,
        uint64 defaultDeadline,
        uint256 assetCount,
        uint256 debtorCount,
        uint256 nettedV2Count
    );
    /// @notice Cycle `cycleId` nets `total` of `asset` (total debit = total credit).
    event CycleAssetCommitted(uint256 indexed cycleId, address indexed asset, uint256 total);
    /// @notice `debtor` owes `amount` of `asset` in cycle `cycleId`.
    event NetDebitRecorded(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed debtor,
        uint256 amount
    );
    /// @notice `debtor` paid its net debit; `late` when paid after the payment deadline.
    event NetDebitPaid(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed debtor,
        uint256 amount,
        bool late
    );
    /// @notice `debtor` defaulted on `amount`; `covered` of it was taken from its Vault collateral.
    event DefaultCovered(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed debtor,
        uint256 amount,
        uint256 covered
    );
    /// @notice `participant` was paid its net credit `amount`.
    event NetCreditClaimed(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed participant,
        uint256 amount
    );
    /// @notice Every debtor of cycle `cycleId` is resolved (paid or covered).
    event CycleFinalized(uint256 indexed cycleId);

    /// @notice The next cycle must have id `expected`, not `cycleId`.
    error UnexpectedCycleId(uint256 expected, uint256 cycleId);
    /// @notice The Merkle root is zero.
    error EmptyRoot();
    /// @notice `asset` appears twice in a cycle's totals.
    error DuplicateCycleAsset(address asset);
    /// @notice `asset`'s total debit and total credit differ.
    error UnbalancedAsset(address asset, uint256 totalDebit, uint256 totalCredit);
    /// @notice `asset` is not part of cycle `cycleId`.
    error UnknownCycleAsset(uint256 cycleId, address asset);
    /// @notice A debtor obligation has a zero amount or a zero debtor address.
    error InvalidObligation(address asset, address debtor, uint256 amount);
    /// @notice `debtor` appears twice for `asset` in a cycle.
    error DuplicateDebtor(address asset, address debtor);
    /// @notice The debtors' obligations in `asset` sum to `sum`, not the total debit `totalDebit`.
    error ObligationSumMismatch(address asset, uint256 sum, uint256 totalDebit);
    /// @notice Cycle `cycleId` has not been committed.
    error UnknownCycle(uint256 cycleId);
    /// @notice `debtor` owes nothing in `asset` in cycle `cycleId`.
    error NoDebt(uint256 cycleId, address asset, address debtor);
    /// @notice `debtor`'s debt in `asset` in cycle `cycleId` is already `status`.
    error DebtAlreadyResolved(uint256 cycleId, address asset, address debtor, DebtStatus status);
    /// @notice The payment must be exactly `expected`; `received` arrived.
    error IncorrectPayment(uint256 expected, uint256 received);
    /// @notice ETH was sent with a token payment.
    error UnexpectedEth(uint256 value);
    /// @notice Default coverage opens only after the payment deadline `paymentDeadline`.
    error PaymentWindowOpen(uint256 cycleId, uint64 paymentDeadline);
    /// @notice A net credit must be greater than zero.
    error ZeroCredit();
    /// @notice `participant` already claimed its credit in `asset` in cycle `cycleId`.
    error CreditAlreadyClaimed(uint256 cycleId, address asset, address participant);
    /// @notice The proof does not show the leaf (cycleId, asset, participant, 0, credit) under the root.
    error InvalidMerkleProof();
    /// @notice Only `available` of the cycle's `asset` liquidity is funded and unclaimed; `credit` is due.
    error CreditNotYetFunded(uint256 cycleId, address asset, uint256 available, uint256 credit);
    /// @notice Only the Vault may send ETH here (default coverage); `sender` is not it.
    error UnexpectedEthSender(address sender);
    /// @notice The Vault address has no code.
    error InvalidVault(address vault);

    /// @param vault_ The Vault (it must then be given this contract with `Vault.setClearingHouse`).
    /// @param admin Receives the admin role.
    /// @param operator Receives the operator role (commits cycles).
    /// @param adminTransferDelay Seconds between `beginDefaultAdminTransfer` and the earliest
    /// `acceptDefaultAdminTransfer` (the default admin changes in two steps, never at once).
    constructor(
        IClearingVault vault_,
        address admin,
        address operator,
        uint48 adminTransferDelay
    ) AccessControlDefaultAdminRules(adminTransferDelay, admin) {
        if (address(vault_).code.length == 0) revert InvalidVault(address(vault_));
        vault = vault_;
        _grantRole(OPERATOR_ROLE, operator);
    }

    /// @notice Accepts ETH only from the Vault (default coverage).
    receive() external payable {
        if (msg.sender != address(vault)) revert UnexpectedEthSender(msg.sender);
    }

    /// @notice Commits clearing cycle `cycleId` (must be `lastCycleId + 1`).
    /// @param root StandardMerkleTree root over the cycle's net positions.
    /// @param totals Per-asset total debit and credit (must be equal).
    /// @param debtors Every net debtor with its debit; per asset they sum to the total debit.
    /// @param nettedV2Ids V2 guarantees netted in this cycle; none may have been remunerated already.
    /// @dev Records each obligation in the Vault and marks the V2 ids consumed. Payment deadline =
    /// now + paymentWindow, default deadline = payment deadline + defaultWindow (both read from the Vault).
    function commitCycle(
        uint256 cycleId,
        bytes32 root,
        AssetTotal[] calldata totals,
        IClearingVault.Obligation[] calldata debtors,
        bytes32[] calldata nettedV2Ids
    ) external onlyRole(OPERATOR_ROLE) nonReentrant {
        if (cycleId != lastCycleId + 1) revert UnexpectedCycleId(lastCycleId + 1, cycleId);
        if (root == bytes32(0)) revert EmptyRoot();
        lastCycleId = cycleId;

        for (uint256 i = 0; i < totals.length; ++i) {
            AssetTotal calldata total = totals[i];
            CycleAsset storage cycleAsset = _cycleAssets[cycleId][total.asset];
            if (cycleAsset.listed) revert DuplicateCycleAsset(total.asset);
            if (total.totalDebit != total.totalCredit) {
                revert UnbalancedAsset(total.asset, total.totalDebit, total.totalCredit);
            }
            cycleAsset.listed = true;
            cycleAsset.totalDebit = total.totalDebit;
            emit CycleAssetCommitted(cycleId, total.asset, total.totalDebit);
        }

        uint256[] memory sums = new uint256[](totals.length);
        for (uint256 i = 0; i < debtors.length; ++i) {
            IClearingVault.Obligation calldata o = debtors[i];
            if (o.amount == 0 || o.debtor == address(0))
                revert InvalidObligation(o.asset, o.debtor, o.amount);
            sums[_indexOfAsset(cycleId, totals, o.asset)] += o.amount;
            Debt storage debt = _debts[cycleId][o.asset][o.debtor];
            if (debt.status != DebtStatus.None) revert DuplicateDebtor(o.asset, o.debtor);
            debt.amount = SafeCast.toUint248(o.amount);
            debt.status = DebtStatus.Open;
            emit NetDebitRecorded(cycleId, o.asset, o.debtor, o.amount);
        }
        for (uint256 i = 0; i < totals.length; ++i) {
            if (sums[i] != totals[i].totalDebit) {
                revert ObligationSumMismatch(totals[i].asset, sums[i], totals[i].totalDebit);
            }
        }

        uint64 paymentDeadline = uint64(block.timestamp) + vault.paymentWindow();
        uint64 defaultDeadline = paymentDeadline + vault.defaultWindow();
        Cycle storage cycle = _cycles[cycleId];
        cycle.root = root;
        cycle.committedAt = uint64(block.timestamp);
        cycle.paymentDeadline = paymentDeadline;
        cycle.defaultDeadline = defaultDeadline;
        cycle.openDebts = SafeCast.toUint32(debtors.length);
        emit CycleCommitted(
            cycleId,
            root,
            paymentDeadline,
            defaultDeadline,
            totals.length,
            debtors.length,
            nettedV2Ids.length
        );
        if (debtors.length == 0) _finalize(cycleId, cycle);

        vault.recordObligations(debtors);
        vault.markNetted(nettedV2Ids);
    }

    /// @notice Pays the caller's net debit in `asset` for cycle `cycleId`: send exactly the debit as ETH, or
    /// approve it for the token. Allowed after the payment deadline as long as the debt was not covered yet.
    /// @dev Releases the matching obligation in the Vault. Fee-on-transfer tokens are rejected.
    function payNetDebit(uint256 cycleId, address asset) external payable nonReentrant {
        Debt storage debt = _openDebt(cycleId, asset, msg.sender);
        uint256 amount = debt.amount;
        if (asset == ETH) {
            if (msg.value != amount) revert IncorrectPayment(amount, msg.value);
        } else if (msg.value != 0) {
            revert UnexpectedEth(msg.value);
        }
        Cycle storage cycle = _cycles[cycleId];
        debt.status = DebtStatus.Paid;
        _fund(cycleId, asset, amount);
        emit NetDebitPaid(cycleId, asset, msg.sender, amount, block.timestamp > cycle.paymentDeadline);
        _resolveDebt(cycleId, cycle);

        vault.releaseObligation(msg.sender, asset, amount);
        if (asset != ETH) {
            uint256 before = IERC20(asset).balanceOf(address(this));
            IERC20(asset).safeTransferFrom(msg.sender, address(this), amount);
            uint256 received = IERC20(asset).balanceOf(address(this)) - before;
            if (received != amount) revert IncorrectPayment(amount, received);
        }
    }

    /// @notice Covers `debtor`'s unpaid net debit in `asset` for cycle `cycleId` from its Vault collateral.
    /// Anyone may call once the payment deadline has passed. The Vault moves min(debit, collateral balance);
    /// the cycle is funded with what actually arrived here, and the rest of the debit is recorded as
    /// shortfall (none while Core keeps its locking invariant and the token charges no transfer fee).
    /// @dev Funding is measured as this contract's balance change (capped at what the Vault moved), so a
    /// token that takes a fee on transfer can never make `funded`, `heldLiquidity` or the event promise
    /// creditors more than is held. The debt is marked covered before the call; funding and the cycle's
    /// progress are written after it (they depend on what arrived), which is safe because every
    /// state-changing entry point is `nonReentrant`.
    function coverDefault(uint256 cycleId, address asset, address debtor) external nonReentrant {
        Debt storage debt = _openDebt(cycleId, asset, debtor);
        Cycle storage cycle = _cycles[cycleId];
        if (block.timestamp <= cycle.paymentDeadline)
            revert PaymentWindowOpen(cycleId, cycle.paymentDeadline);
        uint256 amount = debt.amount;
        debt.status = DebtStatus.Covered;

        uint256 before = _holdings(asset);
        uint256 moved = vault.coverDefault(debtor, asset, amount);
        uint256 arrived = _holdings(asset) - before;
        uint256 covered = arrived < moved ? arrived : moved;

        _fund(cycleId, asset, covered);
        _cycleAssets[cycleId][asset].shortfall += amount - covered;
        emit DefaultCovered(cycleId, asset, debtor, amount, covered);
        _resolveDebt(cycleId, cycle);
    }

    /// @notice Pays `participant` its net credit in `asset` for cycle `cycleId`; anyone may call.
    /// @param credit The participant's net credit (its leaf has debit 0).
    /// @param proof StandardMerkleTree proof of the leaf (cycleId, asset, participant, 0, credit).
    function claimNetCredit(
        uint256 cycleId,
        address asset,
        address participant,
        uint256 credit,
        bytes32[] calldata proof
    ) external nonReentrant {
        if (cycleId == 0 || cycleId > lastCycleId) revert UnknownCycle(cycleId);
        CycleAsset storage cycleAsset = _cycleAssets[cycleId][asset];
        if (!cycleAsset.listed) revert UnknownCycleAsset(cycleId, asset);
        if (credit == 0) revert ZeroCredit();
        if (_claimed[cycleId][asset][participant]) revert CreditAlreadyClaimed(cycleId, asset, participant);
        if (
            !MerkleProof.verifyCalldata(
                proof,
                _cycles[cycleId].root,
                leafHash(cycleId, asset, participant, 0, credit)
            )
        ) {
            revert InvalidMerkleProof();
        }
        uint256 available = cycleAsset.funded - cycleAsset.claimed;
        if (available < credit) revert CreditNotYetFunded(cycleId, asset, available, credit);

        _claimed[cycleId][asset][participant] = true;
        cycleAsset.claimed += credit;
        heldLiquidity[asset] -= credit;
        emit NetCreditClaimed(cycleId, asset, participant, credit);

        if (asset == ETH) Address.sendValue(payable(participant), credit);
        else IERC20(asset).safeTransfer(participant, credit);
    }

    /// @notice A committed cycle (all zero if not committed).
    function getCycle(uint256 cycleId) external view returns (Cycle memory) {
        return _cycles[cycleId];
    }

    /// @notice One asset of a committed cycle (all zero if not part of it).
    function getCycleAsset(uint256 cycleId, address asset) external view returns (CycleAsset memory) {
        return _cycleAssets[cycleId][asset];
    }

    /// @notice `debtor`'s net debit in `asset` for cycle `cycleId`.
    function debtOf(uint256 cycleId, address asset, address debtor) external view returns (Debt memory) {
        return _debts[cycleId][asset][debtor];
    }

    /// @notice Whether `participant` has claimed its credit in `asset` for cycle `cycleId`.
    function isCreditClaimed(
        uint256 cycleId,
        address asset,
        address participant
    ) external view returns (bool) {
        return _claimed[cycleId][asset][participant];
    }

    /// @notice The StandardMerkleTree leaf hash of a net position (double keccak of the ABI encoding).
    function leafHash(
        uint256 cycleId,
        address asset,
        address participant,
        uint256 debit,
        uint256 credit
    ) public pure returns (bytes32) {
        return keccak256(bytes.concat(keccak256(abi.encode(cycleId, asset, participant, debit, credit))));
    }

    function _openDebt(
        uint256 cycleId,
        address asset,
        address debtor
    ) private view returns (Debt storage debt) {
        debt = _debts[cycleId][asset][debtor];
        if (debt.status == DebtStatus.None) revert NoDebt(cycleId, asset, debtor);
        if (debt.status != DebtStatus.Open) revert DebtAlreadyResolved(cycleId, asset, debtor, debt.status);
    }

    /// @dev What this contract holds of `asset` (ETH or token balance).
    function _holdings(address asset) private view returns (uint256) {
        return asset == ETH ? address(this).balance : IERC20(asset).balanceOf(address(this));
    }

    function _fund(uint256 cycleId, address asset, uint256 amount) private {
        _cycleAssets[cycleId][asset].funded += amount;
        heldLiquidity[asset] += amount;
    }

    function _resolveDebt(uint256 cycleId, Cycle storage c) private {
        c.openDebts -= 1;
        if (c.openDebts == 0) _finalize(cycleId, c);
    }

    function _finalize(uint256 cycleId, Cycle storage c) private {
        c.finalized = true;
        emit CycleFinalized(cycleId);
    }

    function _indexOfAsset(
        uint256 cycleId,
        AssetTotal[] calldata totals,
        address asset
    ) private pure returns (uint256) {
        for (uint256 j = 0; j < totals.length; ++j) {
            if (totals[j].asset == asset) return j;
        }
        revert UnknownCycleAsset(cycleId, asset);
    }

    /// @dev OPERATOR_ROLE commits cycles (obligations on payers' collateral): its grants are timelocked.
    function _isTimelockedRole(bytes32 role) internal pure override returns (bool) {
        return role == OPERATOR_ROLE;
    }
}
