// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";

import {IClearingHouse} from "../interfaces/IClearingHouse.sol";
import {IClearingVault} from "../interfaces/IClearingVault.sol";
import {CreditCheck} from "../lib/CreditCheck.sol";
import {GuaranteeLeaf} from "../lib/GuaranteeLeaf.sol";
import {ClearingBooks} from "./ClearingBooks.sol";

/// @title PayoutLogic
/// @notice What a settled cycle owes accounts and the bond, set aside as pull payments ({ClearingHouse-payoutOf}):
/// net-credit claims (a creditor's summary under the cycle's `debitsRoot`), refunds held for a debtor above its
/// debit, deductions recovered into the bond, and double-listing refunds from the bond. An external library
/// the ClearingHouse delegates these calls to (its books, its events, its address); it sends nothing.
library PayoutLogic {
    /// @notice See {ClearingHouse-claimNetCredit}; `books` and `vault` are the ClearingHouse's.
    function claimNetCredit(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        uint256 cycleId,
        address asset,
        address participant,
        IClearingHouse.DebitSummary calldata summary,
        bytes32[] calldata proof
    ) external {
        IClearingHouse.Cycle storage cycle = ClearingBooks.committed(books, cycleId);
        if (cycle.vetoed) revert IClearingHouse.CycleIsVetoed(cycleId);
        if (block.timestamp <= cycle.challengeDeadline)
            revert IClearingHouse.ChallengeWindowOpen(cycleId, cycle.challengeDeadline);
        _checkDisputesClosed(vault, cycleId, cycle);
        IClearingHouse.CycleAsset storage cycleAsset = books.cycleAssets[cycleId][asset];
        if (!cycleAsset.listed) revert IClearingHouse.UnknownCycleAsset(cycleId, asset);
        uint256 credit = _creditOf(books, cycle, cycleId, asset, participant, summary, proof);
        if (credit == 0) revert IClearingHouse.ZeroCredit();
        if (books.claimed[cycleId][asset][participant])
            revert IClearingHouse.CreditAlreadyClaimed(cycleId, asset, participant);
        uint256 available = cycleAsset.funded - cycleAsset.claimed;
        if (available < credit) revert IClearingHouse.CreditNotYetFunded(cycleId, asset, available, credit);

        books.claimed[cycleId][asset][participant] = true;
        cycleAsset.claimed += credit;
        books.heldLiquidity[asset] -= credit;
        uint256 deducted = books.deducted[cycleId][asset][participant];
        uint256 returned = deducted < credit ? deducted : credit;
        books.payoutOf[asset][participant] += credit - returned;
        emit IClearingHouse.NetCreditClaimed(cycleId, asset, participant, credit - returned);
        if (returned != 0) {
            books.deducted[cycleId][asset][participant] = deducted - returned;
            books.bondOf[asset] += returned - _refill(books, cycleId, asset, returned);
            emit IClearingHouse.DeductionRecovered(cycleId, asset, participant, returned, 0);
            vault.releaseObligation(participant, asset, returned);
        }
    }

    /// @notice See {ClearingHouse-claimDebitRefund}.
    function claimDebitRefund(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        uint256 cycleId,
        address asset,
        address debtor
    ) external {
        IClearingHouse.Cycle storage cycle = ClearingBooks.committed(books, cycleId);
        uint256 amount = books.refundHeld[cycleId][asset][debtor];
        if (amount == 0) revert IClearingHouse.NoRefundHeld(cycleId, asset, debtor);
        bool vetoed = cycle.vetoed;
        if (!vetoed) {
            if (block.timestamp <= cycle.challengeDeadline)
                revert IClearingHouse.ChallengeWindowOpen(cycleId, cycle.challengeDeadline);
            // A refund is a credit too: not senior to the cycle's claims (audit A2-H1).
            _checkDisputesClosed(vault, cycleId, cycle);
        }
        books.refundHeld[cycleId][asset][debtor] = 0;
        // What the operator's own answer refunded was taken from the bond then (audit3 A3-M2): it is paid, or
        // goes back to the bond in a vetoed cycle. The rest was counted owed since the reduction; `owe` counts
        // again what stays owed.
        uint256 setAside = books.refundSetAside[cycleId][asset][debtor];
        if (setAside != 0) {
            books.refundSetAside[cycleId][asset][debtor] = 0;
            books.heldLiquidity[asset] -= setAside;
        }
        uint256 rest = amount - setAside;
        books.totalRefundOwed[asset] -= rest;
        if (vetoed) {
            books.bondOf[asset] += setAside;
            emit IClearingHouse.DebitRefundCancelled(cycleId, asset, debtor, amount);
            return;
        }
        books.payoutOf[asset][debtor] += setAside;
        // From the bond only (what it holds above the floor's share), never from the cycle's liquidity.
        (uint256 paid, uint256 owed) = rest == 0 ? (0, 0) : ClearingBooks.owe(books, asset, debtor, rest);
        emit IClearingHouse.DebitRefundClaimed(cycleId, asset, debtor, setAside + paid, owed);
    }

    /// @dev Reverts {IClearingHouse-DisputesOpen} while cycle `cycleId` has a dispute open and answerable: until
    /// its answer deadline, extended while an operator key change does (`Vault.answerDeadlineAfterKeyGap`, one
    /// call only past the committed deadline), so every deduction is recorded before a claim (audit A2-M1).
    /// Unanswered after it, a dispute is voided, which deducts nothing.
    function _checkDisputesClosed(
        IClearingVault vault,
        uint256 cycleId,
        IClearingHouse.Cycle storage cycle
    ) private view {
        if (cycle.openChallenges == 0) return;
        uint256 deadline = cycle.answerDeadline;
        if (block.timestamp > deadline) deadline = vault.answerDeadlineAfterKeyGap(deadline);
        if (block.timestamp <= deadline) revert IClearingHouse.DisputesOpen(cycleId, uint64(deadline));
    }

    /// @notice See {ClearingHouse-recoverDeduction}.
    function recoverDeduction(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        uint256 cycleId,
        address asset,
        address recipient
    ) external {
        IClearingHouse.Cycle storage cycle = ClearingBooks.committed(books, cycleId);
        uint256 amount = books.deducted[cycleId][asset][recipient];
        if (amount == 0) revert IClearingHouse.NoDeduction(cycleId, asset, recipient);
        bool vetoed = cycle.vetoed;
        if (!vetoed && block.timestamp <= cycle.paymentDeadline)
            revert IClearingHouse.PaymentWindowOpen(cycleId, cycle.paymentDeadline);
        books.deducted[cycleId][asset][recipient] = 0;
        uint256 recovered;
        if (vetoed) {
            // A vetoed cycle paid nothing twice: the lock is lifted, nothing is taken.
            vault.releaseObligation(recipient, asset, amount);
        } else {
            uint256 before = _holdings(asset);
            uint256 moved = vault.coverDefault(recipient, asset, amount);
            uint256 arrived = _holdings(asset) - before;
            recovered = arrived < moved ? arrived : moved;
            books.bondOf[asset] += recovered - _refill(books, cycleId, asset, recovered);
        }
        emit IClearingHouse.DeductionRecovered(cycleId, asset, recipient, amount, recovered);
    }

    /// @notice See {ClearingHouse-proveDoubleListing}.
    function proveDoubleListing(
        ClearingBooks.Books storage books,
        uint256 firstCycleId,
        uint256 laterCycleId,
        IClearingHouse.GuaranteeLeaf calldata first,
        IClearingHouse.GuaranteeLeaf calldata later,
        bytes32[] calldata firstProof,
        bytes32[] calldata laterProof
    ) external {
        if (firstCycleId >= laterCycleId)
            revert IClearingHouse.ListingsNotOrdered(firstCycleId, laterCycleId);
        bytes32 id = later.guaranteeId;
        if (first.guaranteeId != id || first.payer != later.payer || first.asset != later.asset) {
            revert IClearingHouse.ListingsDiffer(first.guaranteeId, id);
        }
        _settledListing(books, firstCycleId, first, firstProof);
        IClearingHouse.Cycle storage cycle = _settledListing(books, laterCycleId, later, laterProof);
        if (block.timestamp > cycle.doubleListingDeadline) {
            revert IClearingHouse.DoubleListingProofClosed(laterCycleId, cycle.doubleListingDeadline);
        }
        if (books.doubleListingProven[id][laterCycleId])
            revert IClearingHouse.DoubleListingAlreadyProven(id, laterCycleId);
        books.doubleListingProven[id][laterCycleId] = true;
        uint256 amount = first.amount < later.amount ? first.amount : later.amount;
        emit IClearingHouse.DoubleListingProven(
            id,
            later.payer,
            later.asset,
            firstCycleId,
            laterCycleId,
            amount
        );
        (uint256 paid, uint256 owed) = ClearingBooks.owe(books, later.asset, later.payer, amount);
        emit IClearingHouse.DoubleListingRefunded(later.asset, later.payer, paid, owed);
    }

    /// @dev The credit `s` gives `participant` (`inTotal - total`, 0 when not positive), after checking `s` is
    /// its summary under the cycle's `debitsRoot` and, once revealed, the one revealed.
    function _creditOf(
        ClearingBooks.Books storage books,
        IClearingHouse.Cycle storage cycle,
        uint256 cycleId,
        address asset,
        address participant,
        IClearingHouse.DebitSummary calldata s,
        bytes32[] calldata proof
    ) private view returns (uint256) {
        if (
            !CreditCheck.isSummary(
                cycle.debitsRoot,
                books.cycleAssets[cycleId][asset].totalDebit,
                participant,
                asset,
                s,
                proof
            )
        ) revert IClearingHouse.InvalidMerkleProof();
        IClearingHouse.DebtGame storage game = books.games[cycleId][asset][participant];
        if (
            game.revealed && (game.sumRoot != s.sumRoot || game.total != s.total || game.inTotal != s.inTotal)
        ) revert IClearingHouse.SummaryMismatch(cycleId, asset, participant);
        return CreditCheck.creditOf(s);
    }

    /// @dev A listing that charges its payer something (not a self-payment, which nets to zero), in a cycle
    /// committed, not vetoed and past its challenge window, with the leaf under the cycle's guarantees root.
    function _settledListing(
        ClearingBooks.Books storage books,
        uint256 cycleId,
        IClearingHouse.GuaranteeLeaf calldata l,
        bytes32[] calldata proof
    ) private view returns (IClearingHouse.Cycle storage cycle) {
        if (l.payer == address(0) || l.payer == l.recipient || l.amount == 0) {
            revert IClearingHouse.UnchargedListing(l.guaranteeId);
        }
        cycle = ClearingBooks.committed(books, cycleId);
        if (cycle.vetoed) revert IClearingHouse.CycleIsVetoed(cycleId);
        if (block.timestamp <= cycle.challengeDeadline)
            revert IClearingHouse.ChallengeWindowOpen(cycleId, cycle.challengeDeadline);
        bytes32 leaf = GuaranteeLeaf.hash(
            l.guaranteeId,
            l.payer,
            l.recipient,
            l.asset,
            l.amount,
            l.signatureHash
        );
        if (!MerkleProof.verifyCalldata(proof, cycle.guaranteesRoot, leaf))
            revert IClearingHouse.ListingNotInCycle(l.guaranteeId, cycleId);
    }

    /// @dev A returned deduction goes back first to what the cycle is short of (a removal the bond could not
    /// front in full), then to the bond: the bond gets back only what it fronted (audit, Info). Returns the
    /// part that refilled the cycle.
    function _refill(
        ClearingBooks.Books storage books,
        uint256 cycleId,
        address asset,
        uint256 amount
    ) private returns (uint256 refilled) {
        uint256 short = books.cycleAssets[cycleId][asset].shortfall;
        if (short == 0) return 0;
        refilled = amount < short ? amount : short;
        books.cycleAssets[cycleId][asset].shortfall = short - refilled;
        ClearingBooks.fund(books, cycleId, asset, refilled);
    }

    /// @dev What the ClearingHouse (this library's context) holds of `asset`.
    function _holdings(address asset) private view returns (uint256) {
        return asset == ClearingBooks.ETH ? address(this).balance : IERC20(asset).balanceOf(address(this));
    }
}
