// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Address} from "@openzeppelin/contracts/utils/Address.sol";

import {IClearingHouse} from "../interfaces/IClearingHouse.sol";

/// @title ClearingBooks
/// @notice The ClearingHouse's books as one storage struct, and the operations on them that the
/// ClearingHouse and its logic library ({CycleCommitLogic}) share. The libraries run
/// in the ClearingHouse's context (DELEGATECALL) and receive the books as a storage pointer.
library ClearingBooks {
    using SafeERC20 for IERC20;

    /// @notice The asset id of ETH.
    address internal constant ETH = address(0);

    /// @notice Everything the ClearingHouse records (the public views are the ClearingHouse's).
    struct Books {
        uint256 lastCycleId;
        mapping(address asset => uint256) heldLiquidity;
        mapping(address asset => uint256) bondOf;
        uint256 openChallenges;
        uint16 bondFloorBps;
        mapping(bytes32 guaranteeId => uint256 cycleId) answeredIn;
        mapping(bytes32 guaranteeId => mapping(uint256 laterCycleId => bool)) doubleListingProven;
        mapping(address asset => mapping(address payer => uint256)) refundOwed;
        mapping(address asset => mapping(address account => uint256)) payoutOf;
        mapping(address asset => uint256) totalRefundOwed;
        mapping(uint256 cycleId => IClearingHouse.Cycle) cycles;
        mapping(uint256 cycleId => mapping(address asset => IClearingHouse.CycleAsset)) cycleAssets;
        mapping(uint256 cycleId => mapping(address asset => mapping(address debtor => IClearingHouse.Debt))) debts;
        mapping(uint256 cycleId => mapping(address asset => mapping(address participant => bool))) claimed;
        // The dispute game (DisputeLogic).
        mapping(uint256 cycleId => mapping(address asset => mapping(address debtor => IClearingHouse.DebtGame))) games;
        mapping(uint256 cycleId => mapping(address asset => mapping(address debtor => mapping(uint256 index => IClearingHouse.DisputeStatus)))) disputes;
        mapping(uint256 cycleId => mapping(address asset => mapping(address recipient => uint256))) deducted;
        // The bond floor over every cycle neither finalized nor vetoed, from `riskHead` on (CycleCommitLogic).
        mapping(address asset => uint256) atRisk;
        uint256 riskHead;
        mapping(uint256 cycleId => address[]) cycleAssetList;
        // What the bond paid into each cycle and asset (returned to the bond if the cycle is vetoed).
        mapping(uint256 cycleId => mapping(address asset => uint256)) bondFunded;
        // A removed or conceded position's excess over the debit (the debtor's incoming it had offset), owed
        // to the debtor by the bond (never paid into the cycle) once the cycle's disputes are closed (audit
        // A2-H1); a veto cancels it (audit M-3). Counted in `totalRefundOwed` until claimed or cancelled.
        mapping(uint256 cycleId => mapping(address asset => mapping(address debtor => uint256))) refundHeld;
        // Recipients' credit disputes (a guarantee listed in its payer's tree, proven credited to its recipient
        // or paid to it from the bond).
        mapping(uint256 cycleId => mapping(bytes32 guaranteeId => IClearingHouse.CreditDispute)) creditDisputes;
        // The part of `refundHeld` the operator's own answer refunded (a concession, a removal as not validated):
        // taken from the spare bond at the answer and held in `heldLiquidity` until settled (audit3 A3-M2), so
        // never counted in `totalRefundOwed`.
        mapping(uint256 cycleId => mapping(address asset => mapping(address debtor => uint256))) refundSetAside;
    }

    /// @notice The committed cycle `cycleId`; reverts `UnknownCycle` otherwise.
    function committed(
        Books storage books,
        uint256 cycleId
    ) internal view returns (IClearingHouse.Cycle storage) {
        if (cycleId == 0 || cycleId > books.lastCycleId) revert IClearingHouse.UnknownCycle(cycleId);
        return books.cycles[cycleId];
    }

    /// @notice `debtor`'s debt in `asset` of cycle `cycleId`, which must be in `status` (`NoDebt`,
    /// `DebtAlreadyResolved` otherwise).
    function debtIn(
        Books storage books,
        uint256 cycleId,
        address asset,
        address debtor,
        IClearingHouse.DebtStatus status
    ) internal view returns (IClearingHouse.Debt storage debt) {
        debt = books.debts[cycleId][asset][debtor];
        if (debt.status == IClearingHouse.DebtStatus.None)
            revert IClearingHouse.NoDebt(cycleId, asset, debtor);
        if (debt.status != status)
            revert IClearingHouse.DebtAlreadyResolved(cycleId, asset, debtor, debt.status);
    }

    /// @notice Adds `amount` to what cycle `cycleId` holds of `asset` for its creditors.
    function fund(Books storage books, uint256 cycleId, address asset, uint256 amount) internal {
        books.cycleAssets[cycleId][asset].funded += amount;
        books.heldLiquidity[asset] += amount;
    }

    /// @notice Takes `amount` of `asset` for `payer` from the bond into {payoutOf}, as far as {spareBond} goes;
    /// the rest is recorded as owed ({refundOwed}). Returns what was paid and what is owed.
    function owe(
        Books storage books,
        address asset,
        address payer,
        uint256 amount
    ) internal returns (uint256 paid, uint256 owed) {
        uint256 spare = spareBond(books, asset);
        paid = amount < spare ? amount : spare;
        books.bondOf[asset] -= paid;
        books.payoutOf[asset][payer] += paid;
        owed = amount - paid;
        if (owed != 0) {
            books.refundOwed[asset][payer] += owed;
            books.totalRefundOwed[asset] += owed;
        }
    }

    /// @notice What the bond holds of `asset` above the share the floor keeps for the debits at risk
    /// (`ceil(atRisk × bondFloorBps / 10000)`, as `commitCycle` checks it; the whole bond with the floor off).
    /// Refunds the bond owes beyond those debits (above a debit, double listings, unanswered credit disputes)
    /// are paid from it only, so they never take what backs a committed cycle's creditors (audit A2-H1).
    function spareBond(Books storage books, address asset) internal view returns (uint256) {
        uint256 bond = books.bondOf[asset];
        uint256 floorBps = books.bondFloorBps;
        if (floorBps == 0) return bond;
        // ceil(atRisk × floorBps / 10000) without forming the product: `atRisk` sums debits committed without a
        // collateral check over every cycle at risk, so nothing on chain keeps it below 2^256 / 10000, and an
        // overflow would revert every refund the bond owes. With atRisk = q × 10000 + r it is
        // q × floorBps + ceil(r × floorBps / 10000) <= atRisk (floorBps <= 10000): no step can overflow.
        uint256 atRisk = books.atRisk[asset];
        uint256 kept = (atRisk / 10_000) * floorBps + ((atRisk % 10_000) * floorBps + 9_999) / 10_000;
        return bond > kept ? bond - kept : 0;
    }

    /// @notice Funds `amount` of cycle `cycleId`'s `asset` from the bond (what it lacks is shortfall); returns
    /// what the bond paid.
    function fundFromBond(
        Books storage books,
        uint256 cycleId,
        address asset,
        uint256 amount
    ) internal returns (uint256 fromBond) {
        uint256 bond = books.bondOf[asset];
        fromBond = amount < bond ? amount : bond;
        books.bondOf[asset] = bond - fromBond;
        books.bondFunded[cycleId][asset] += fromBond;
        fund(books, cycleId, asset, fromBond);
        books.cycleAssets[cycleId][asset].shortfall += amount - fromBond;
    }

    /// @notice Counts one debt of cycle `cycleId` resolved; finalizes the cycle with its last.
    function resolveDebt(uint256 cycleId, IClearingHouse.Cycle storage c) internal {
        c.openDebts -= 1;
        if (c.openDebts == 0) finalize(cycleId, c);
    }

    /// @notice Marks cycle `cycleId` finalized (every debtor resolved).
    function finalize(uint256 cycleId, IClearingHouse.Cycle storage c) internal {
        c.finalized = true;
        emit IClearingHouse.CycleFinalized(cycleId);
    }

    /// @notice Sends `amount` of `asset` (ETH or an ERC-20) to `to`.
    function send(address asset, address to, uint256 amount) internal {
        if (asset == ETH) Address.sendValue(payable(to), amount);
        else IERC20(asset).safeTransfer(to, amount);
    }
}
