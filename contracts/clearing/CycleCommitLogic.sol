// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";

import {IClearingHouse} from "../interfaces/IClearingHouse.sol";
import {IClearingVault} from "../interfaces/IClearingVault.sol";
import {ClearingBooks} from "./ClearingBooks.sol";

/// @title CycleCommitLogic
/// @notice Commits a clearing cycle: checks the netting (per asset, total debit = total credit = the sum of
/// the debtors' obligations) and the bond floor over every cycle still at risk, writes its roots, debts and
/// deadlines, marks its V2 ids netted and records the obligations in the Vault. An external library the ClearingHouse delegates {IClearingHouse-commitCycle}
/// to (its books, its events); the per-debtor work is the same as inline.
library CycleCommitLogic {
    /// @notice Most debtors one commit records (a netted V2 id counts half a debtor): the commit's gas grows
    /// ≈ 57k per debtor and ≈ 24k per V2 id, so at this bound it stays under EIP-7825's 2^24 gas per
    /// transaction with a margin (docs/gas.md). Core splits larger cycles into several commits.
    uint256 internal constant MAX_DEBTORS_PER_COMMIT = 200;
    /// @notice Most assets one commit lists: each asset adds its records, its bond-floor check and a lookup
    /// per debtor (≈ 128k gas at the debtor bound), so the two bounds together keep a commit under 2^24 gas
    /// (docs/gas.md; audit3 A3-I1). Core splits a cycle over more assets into several commits.
    uint256 internal constant MAX_ASSETS_PER_COMMIT = 16;

    /// @notice Most settled cycles a commit, `claimOwedRefund` or `withdrawPayout` stops counting at risk
    /// ({releaseSettled}); each costs ≈ 6k gas plus ≈ 5.5k per asset of the cycle.
    uint256 internal constant MAX_RELEASES = 8;

    /// @notice See {ClearingHouse-commitCycle}; `books` and `vault` are the ClearingHouse's.
    function commitCycle(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        uint256 cycleId,
        IClearingHouse.CycleRoots calldata roots,
        IClearingHouse.AssetTotal[] calldata totals,
        IClearingVault.Obligation[] calldata debtors,
        bytes32[] calldata nettedV2Ids
    ) external {
        uint256 expected = books.lastCycleId + 1;
        if (cycleId != expected) revert IClearingHouse.UnexpectedCycleId(expected, cycleId);
        if (roots.root == bytes32(0) || roots.guaranteesRoot == bytes32(0) || roots.debitsRoot == bytes32(0))
            revert IClearingHouse.EmptyRoot();
        if (debtors.length + (nettedV2Ids.length + 1) / 2 > MAX_DEBTORS_PER_COMMIT)
            revert IClearingHouse.CommitTooLarge(debtors.length, nettedV2Ids.length);
        if (totals.length > MAX_ASSETS_PER_COMMIT) revert IClearingHouse.CommitTooManyAssets(totals.length);
        books.lastCycleId = cycleId;
        // Marks the V2 ids first: the only step that depends on state others can change between Core's
        // estimate and the commit (the Vault is trusted and makes no external call).
        uint256 nettedCount = vault.markNetted(cycleId, nettedV2Ids);
        releaseSettled(books, MAX_RELEASES);
        _commitTotals(books, cycleId, totals);
        _commitDebtors(books, cycleId, totals, debtors);

        _openCycle(books, vault, cycleId, roots, totals.length, debtors.length, nettedCount);

        vault.recordObligations(debtors);
    }

    /// @dev Writes the cycle's roots, open debts and deadlines, and announces it.
    function _openCycle(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        uint256 cycleId,
        IClearingHouse.CycleRoots calldata roots,
        uint256 assetCount,
        uint256 debtorCount,
        uint256 nettedCount
    ) private {
        IClearingHouse.Cycle storage cycle = books.cycles[cycleId];
        bytes32 root = roots.root;
        cycle.root = root;
        cycle.guaranteesRoot = roots.guaranteesRoot;
        cycle.debitsRoot = roots.debitsRoot;
        cycle.openDebts = SafeCast.toUint32(debtorCount);
        (uint64 paymentDeadline, uint64 defaultDeadline) = _setDeadlines(books, vault, cycleId, cycle);
        emit IClearingHouse.CycleCommitted(
            cycleId,
            root,
            paymentDeadline,
            defaultDeadline,
            assetCount,
            debtorCount,
            nettedCount
        );
        if (debtorCount == 0) ClearingBooks.finalize(cycleId, cycle);
    }

    function _commitTotals(
        ClearingBooks.Books storage books,
        uint256 cycleId,
        IClearingHouse.AssetTotal[] calldata totals
    ) private {
        uint256 floorBps = books.bondFloorBps;
        address[] storage assetList = books.cycleAssetList[cycleId];
        for (uint256 i = 0; i < totals.length; ++i) {
            IClearingHouse.AssetTotal calldata total = totals[i];
            IClearingHouse.CycleAsset storage cycleAsset = books.cycleAssets[cycleId][total.asset];
            if (cycleAsset.listed) revert IClearingHouse.DuplicateCycleAsset(total.asset);
            if (total.totalDebit != total.totalCredit) {
                revert IClearingHouse.UnbalancedAsset(total.asset, total.totalDebit, total.totalCredit);
            }
            uint256 atRisk = books.atRisk[total.asset] + total.totalDebit;
            books.atRisk[total.asset] = atRisk;
            if (floorBps != 0) {
                // Rounded up; amounts are bounded by Vault balances (uint128), so the product cannot overflow.
                uint256 floor = (atRisk * floorBps + _BPS - 1) / _BPS;
                uint256 bond = books.bondOf[total.asset];
                if (bond < floor) revert IClearingHouse.BondBelowFloor(total.asset, bond, floor);
            }
            assetList.push(total.asset);
            cycleAsset.listed = true;
            cycleAsset.totalDebit = total.totalDebit;
            emit IClearingHouse.CycleAssetCommitted(cycleId, total.asset, total.totalDebit);
        }
    }

    function _commitDebtors(
        ClearingBooks.Books storage books,
        uint256 cycleId,
        IClearingHouse.AssetTotal[] calldata totals,
        IClearingVault.Obligation[] calldata debtors
    ) private {
        uint256[] memory sums = new uint256[](totals.length);
        for (uint256 i = 0; i < debtors.length; ++i) {
            IClearingVault.Obligation calldata o = debtors[i];
            if (o.amount == 0 || o.debtor == address(0))
                revert IClearingHouse.InvalidObligation(o.asset, o.debtor, o.amount);
            sums[_indexOfAsset(cycleId, totals, o.asset)] += o.amount;
            IClearingHouse.Debt storage debt = books.debts[cycleId][o.asset][o.debtor];
            if (debt.status != IClearingHouse.DebtStatus.None)
                revert IClearingHouse.DuplicateDebtor(o.asset, o.debtor);
            debt.amount = SafeCast.toUint248(o.amount);
            debt.status = IClearingHouse.DebtStatus.Open;
            emit IClearingHouse.NetDebitRecorded(cycleId, o.asset, o.debtor, o.amount);
        }
        for (uint256 i = 0; i < totals.length; ++i) {
            if (sums[i] != totals[i].totalDebit) {
                revert IClearingHouse.ObligationSumMismatch(totals[i].asset, sums[i], totals[i].totalDebit);
            }
        }
    }

    /// @notice See {ClearingHouse-releaseSettledRisk}: {releaseSettled}, reverting `NoSettledRisk` when it
    /// released nothing.
    function releaseSettledRisk(
        ClearingBooks.Books storage books,
        uint256 maxCycles
    ) external returns (uint256 released) {
        released = releaseSettled(books, maxCycles);
        if (released == 0) revert IClearingHouse.NoSettledRisk(books.riskHead == 0 ? 1 : books.riskHead);
    }

    /// @notice Stops counting in {IClearingHouse-bondAtRisk} the debits of the oldest cycles that can no longer
    /// draw on the bond: vetoed ones, and finalized ones (every debt paid, covered or voided: nothing of the
    /// cycle can be voided, cut or funded from the bond any more; a default is funded from it only when
    /// covered, after the payment deadline, audit3 A3-M1). In cycle order, the newest too, at most `maxCycles`
    /// (each cycle is released once, so the work stays bounded and the count only lags, on the safe side);
    /// returns how many. Called by every commit and by {ClearingHouse-releaseSettledRisk} (anyone) and
    /// `claimOwedRefund` / `withdrawPayout` when the bond cannot spare an owed refund (audit3 A3-M3), each
    /// bounded by {MAX_RELEASES} or the caller's `maxCycles`.
    function releaseSettled(
        ClearingBooks.Books storage books,
        uint256 maxCycles
    ) public returns (uint256 released) {
        uint256 head = books.riskHead;
        if (head == 0) head = 1;
        uint256 last = books.lastCycleId;
        for (; released < maxCycles && head <= last; ++released) {
            IClearingHouse.Cycle storage c = books.cycles[head];
            if (!c.vetoed && !c.finalized) break;
            address[] storage assets = books.cycleAssetList[head];
            for (uint256 i = 0; i < assets.length; ++i) {
                books.atRisk[assets[i]] -= books.cycleAssets[head][assets[i]].totalDebit;
            }
            emit IClearingHouse.CycleRiskReleased(head);
            ++head;
        }
        if (released != 0) books.riskHead = head;
    }

    /// @dev Writes the cycle's deadlines from the Vault's current timings and announces its window.
    function _setDeadlines(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        uint256 cycleId,
        IClearingHouse.Cycle storage cycle
    ) private returns (uint64 paymentDeadline, uint64 defaultDeadline) {
        IClearingVault.Timings memory t = vault.timings(); // one call for the timings used here
        uint64 challengeDeadline = uint64(block.timestamp) + t.challengeWindow;
        uint64 answerDeadline = challengeDeadline + t.challengeWindow;
        paymentDeadline = answerDeadline + t.paymentWindow;
        defaultDeadline = paymentDeadline + t.defaultWindow;
        // Never earlier than the previous cycle's (timings may be lowered): the last cycle's deadline is then
        // the latest, which is what `withdrawBond` waits for.
        uint64 doubleListingDeadline = defaultDeadline + t.withdrawalGracePeriod;
        uint64 previous = books.cycles[cycleId - 1].doubleListingDeadline;
        cycle.doubleListingDeadline = doubleListingDeadline > previous ? doubleListingDeadline : previous;
        cycle.committedAt = uint64(block.timestamp);
        cycle.challengeDeadline = challengeDeadline;
        cycle.answerDeadline = answerDeadline;
        cycle.paymentDeadline = paymentDeadline;
        cycle.defaultDeadline = defaultDeadline;
        emit IClearingHouse.CycleChallengeWindow(
            cycleId,
            cycle.guaranteesRoot,
            cycle.debitsRoot,
            challengeDeadline,
            answerDeadline
        );
    }

    function _indexOfAsset(
        uint256 cycleId,
        IClearingHouse.AssetTotal[] calldata totals,
        address asset
    ) private pure returns (uint256) {
        for (uint256 j = 0; j < totals.length; ++j) {
            if (totals[j].asset == asset) return j;
        }
        revert IClearingHouse.UnknownCycleAsset(cycleId, asset);
    }

    /// @dev Denominator of the bond floor (the ClearingHouse's `BPS`).
    uint256 private constant _BPS = 10_000;
}
