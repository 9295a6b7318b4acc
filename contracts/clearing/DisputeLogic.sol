// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IClearingHouse} from "../interfaces/IClearingHouse.sol";
import {IClearingVault} from "../interfaces/IClearingVault.sol";
import {IGuaranteeVerifier} from "../interfaces/IGuaranteeVerifier.sol";
import {CertificateCodec} from "../lib/CertificateCodec.sol";
import {CreditCheck} from "../lib/CreditCheck.sol";
import {GuaranteeLeaf} from "../lib/GuaranteeLeaf.sol";
import {SumTree} from "../lib/SumTree.sol";
import {ClearingBooks} from "./ClearingBooks.sol";

/// @title DisputeLogic
/// @notice Answers a disputed position of a debtor's sum tree (docs/clearing.md "Disputes"): the first answer
/// of a debt reveals the debtor's summary from the cycle's `debitsRoot` (a debit above its total is cut to
/// it, against the bond); then the position's node is proven in the tree and judged. A guarantee Core
/// certified, the payer signed and (V2) its validator passed, not paid on chain and not used by another
/// answer, is upheld; an empty position is dismissed; a guarantee already paid to its recipient (remunerated,
/// collected) or whose V2 validation did not pass is removed (off the debit and off the recipient's
/// credit); anything else the operator concedes (empty claims) and only that amount is voided against the
/// bond (what the operator's own outcomes refund above the debit is set aside from the spare bond at once, or
/// refused: audit3 A3-M2); a debt whose dispute the operator leaves unanswered is voided whole. An external
/// library the ClearingHouse delegates answers and voids to (its books, its events):
/// one answer costs O(depth) hashing and one signature and certificate check, whatever the number of
/// guarantees.
library DisputeLogic {
    /// @dev One disputed position (kept in memory: the answer path has more values than the stack holds).
    struct Position {
        uint256 cycleId;
        address asset;
        address debtor;
        uint256 index;
        bool mayConcede;
        // Set by `_judge` for the operator's own outcomes (a concession, a removal as not validated): what they
        // refund above the debit is set aside from the spare bond at once, or the answer reverts (audit3 A3-M2).
        bool setAside;
    }

    /// @notice See {ClearingHouse-disputeGuarantee}; `account` is the caller.
    function disputeGuarantee(
        ClearingBooks.Books storage books,
        uint256 cycleId,
        address asset,
        address account,
        uint256 index
    ) external {
        IClearingHouse.Cycle storage cycle = ClearingBooks.committed(books, cycleId);
        if (cycle.vetoed) revert IClearingHouse.CycleIsVetoed(cycleId);
        if (block.timestamp > cycle.challengeDeadline)
            revert IClearingHouse.ChallengeWindowClosed(cycleId, cycle.challengeDeadline);
        IClearingHouse.Debt storage debt = books.debts[cycleId][asset][account];
        IClearingHouse.DebtStatus status = debt.status;
        // A net creditor disputes once its summary is revealed ({revealSummary}): an account with nothing in
        // the cycle can then not hold its claims up.
        if (status == IClearingHouse.DebtStatus.None && !books.games[cycleId][asset][account].revealed)
            revert IClearingHouse.NoDebt(cycleId, asset, account);
        if (
            status != IClearingHouse.DebtStatus.None &&
            status != IClearingHouse.DebtStatus.Open &&
            status != IClearingHouse.DebtStatus.Challenged &&
            status != IClearingHouse.DebtStatus.Answered
        ) revert IClearingHouse.DebtAlreadyResolved(cycleId, asset, account, status);
        // `index` fits SumTree.MAX_DEPTH bits (checked by the ClearingHouse, whose ABI names the error).
        mapping(uint256 => IClearingHouse.DisputeStatus) storage positions = books.disputes[cycleId][asset][
            account
        ];
        if (positions[index] != IClearingHouse.DisputeStatus.None)
            revert IClearingHouse.DisputeNotOpen(cycleId, asset, account, index, positions[index]);
        IClearingHouse.DebtGame storage game = books.games[cycleId][asset][account];
        // Once the summary is revealed nothing can sit past the tree's end: such a dispute could only be
        // dismissed, and left unanswered it must not hold the debt up (audit M-1).
        if (game.revealed && index >> game.depth != 0)
            revert IClearingHouse.PositionPastTreeEnd(cycleId, asset, account, index, game.depth);
        positions[index] = IClearingHouse.DisputeStatus.Open;
        if (status != IClearingHouse.DebtStatus.None) debt.status = IClearingHouse.DebtStatus.Challenged;
        game.openDisputes += 1;
        cycle.openChallenges += 1;
        books.openChallenges += 1;
        emit IClearingHouse.GuaranteeDisputed(cycleId, asset, account, index);
    }

    /// @notice See {ClearingHouse-answerDispute}; `books`, `vault` and `verifier` are the ClearingHouse's.
    function answerDispute(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        IGuaranteeVerifier verifier,
        uint256[2] calldata cycleAndIndex,
        address asset,
        address debtor,
        bool mayConcede,
        IClearingHouse.DisputeAnswer calldata a
    ) external {
        (uint256 cycleId, uint256 index) = (cycleAndIndex[0], cycleAndIndex[1]);
        Position memory at = Position(cycleId, asset, debtor, index, mayConcede, false);
        IClearingHouse.Cycle storage cycle = ClearingBooks.committed(books, cycleId);
        if (cycle.vetoed) revert IClearingHouse.CycleIsVetoed(cycleId);
        if (block.timestamp > cycle.answerDeadline) {
            // Past the committed deadline only while an operator key change extends it (one Vault read).
            uint256 until = vault.answerDeadlineAfterKeyGap(cycle.answerDeadline);
            if (block.timestamp > until) revert IClearingHouse.AnswerWindowClosed(cycleId, uint64(until));
        }
        IClearingHouse.DisputeStatus status = books.disputes[cycleId][asset][debtor][index];
        if (status != IClearingHouse.DisputeStatus.Open) {
            revert IClearingHouse.DisputeNotOpen(cycleId, asset, debtor, index, status);
        }
        IClearingHouse.DebtGame storage game = books.games[cycleId][asset][debtor];
        // A void closed every open dispute of the game at once (their positions keep the `Open` mark); a key
        // change after it may reopen the answer window, not the game (audit2 A2-I1).
        if (game.openDisputes == 0)
            revert IClearingHouse.DisputeNotOpen(
                cycleId,
                asset,
                debtor,
                index,
                IClearingHouse.DisputeStatus.Voided
            );
        if (!game.revealed) _reveal(books, vault, cycle, at, game, a.summary, a.summaryProof);
        if (index >> game.depth != 0) {
            // Past the tree's last position: nothing is listed there.
            books.disputes[cycleId][asset][debtor][index] = IClearingHouse.DisputeStatus.Dismissed;
            emit IClearingHouse.DisputeResolved(
                cycleId,
                asset,
                debtor,
                index,
                IClearingHouse.DisputeStatus.Dismissed,
                bytes32(0),
                0
            );
        } else {
            _checkInTree(game, a.leaf, a.path, index);
            _settle(books, vault, verifier, at, a);
        }
        _close(books, cycle, at, game);
    }

    /// @dev Reverts unless `leaf` (with `path`) sits at `index` of the revealed tree.
    function _checkInTree(
        IClearingHouse.DebtGame storage game,
        SumTree.Node calldata leaf,
        SumTree.Node[] calldata path,
        uint256 index
    ) private view {
        SumTree.Node memory top = SumTree.rootOf(leaf, index, path);
        if (path.length != game.depth || top.hash != game.sumRoot || top.sum != game.total) {
            revert IClearingHouse.LeafNotInTree(index);
        }
    }

    /// @dev Judges the position and applies its outcome.
    function _settle(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        IGuaranteeVerifier verifier,
        Position memory at,
        IClearingHouse.DisputeAnswer calldata a
    ) private {
        (IClearingHouse.DisputeStatus outcome, bytes32 id, address recipient) = _judge(
            books,
            vault,
            verifier,
            at,
            a
        );
        uint256 amount = a.leaf.sum;
        // amount <= the revealed total (a leaf of its sum tree), which fits 128 bits; positions are distinct.
        books.games[at.cycleId][at.asset][at.debtor].settled += uint128(amount);
        books.disputes[at.cycleId][at.asset][at.debtor][at.index] = outcome;
        emit IClearingHouse.DisputeResolved(at.cycleId, at.asset, at.debtor, at.index, outcome, id, amount);
        if (outcome == IClearingHouse.DisputeStatus.Removed) {
            // The recipient was paid this guarantee outside the cycle and again by the cycle: it owes it back
            // (audit M-2). Its claim returns it; whatever a claim does not (a net debtor or a net-zero
            // recipient has none) is locked on its collateral and recovered from it ({recoverDeduction}).
            books.deducted[at.cycleId][at.asset][recipient] += amount;
            emit IClearingHouse.CreditDeducted(at.cycleId, at.asset, recipient, id, amount);
            IClearingVault.Obligation[] memory owed = new IClearingVault.Obligation[](1);
            owed[0] = IClearingVault.Obligation(at.asset, recipient, amount);
            vault.recordObligations(owed);
        }
        if (
            outcome == IClearingHouse.DisputeStatus.Voided || outcome == IClearingHouse.DisputeStatus.Removed
        ) {
            reduce(books, vault, at.cycleId, at.asset, at.debtor, amount, at.setAside);
        }
    }

    /// @notice See {ClearingHouse-voidUnansweredDebit}; `answerDeadline` is the cycle's after any operator key
    /// gap (`Vault.answerDeadlineAfterKeyGap`, which the ClearingHouse checked has passed; the committed one if none).
    function voidUnansweredDebit(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        uint256 cycleId,
        address asset,
        address debtor,
        uint256 answerDeadline
    ) external {
        IClearingHouse.Cycle storage cycle = ClearingBooks.committed(books, cycleId);
        if (cycle.vetoed) revert IClearingHouse.CycleIsVetoed(cycleId);
        if (block.timestamp <= cycle.answerDeadline)
            revert IClearingHouse.AnswerWindowOpen(cycleId, cycle.answerDeadline);
        IClearingHouse.DebtGame storage game = books.games[cycleId][asset][debtor];
        uint32 open = game.openDisputes;
        // Nothing open: `NoDebt` / `DebtAlreadyResolved` as before (a challenged debt always has a dispute open).
        if (open == 0)
            ClearingBooks.debtIn(books, cycleId, asset, debtor, IClearingHouse.DebtStatus.Challenged);
        IClearingHouse.Debt storage debt = books.debts[cycleId][asset][debtor];
        // Each open position is conceded at its proven amount ({voidUnansweredPosition}) until the payment
        // deadline; only then, for a tree nobody proves, every position not answered yet is conceded (the payer
        // may lack the data). An operator key gap moves this deadline as far as the answer deadline, and holds
        // unrevealed trees too (anyone may reveal one meanwhile): a gap never leaves the per-position phase out
        // (audit M-1, A2-L1). What was proven stays owed.
        uint256 extension = answerDeadline - cycle.answerDeadline;
        if (game.revealed || extension != 0) {
            uint256 due = cycle.paymentDeadline + extension;
            if (block.timestamp <= due) revert IClearingHouse.PaymentWindowOpen(cycleId, uint64(due));
        }
        if (game.revealed) {
            uint256 rest = game.total - game.settled;
            _closeAll(books, cycle, game, open);
            game.settled = game.total;
            reduce(books, vault, cycleId, asset, debtor, rest, false);
            emit IClearingHouse.UnansweredConceded(cycleId, asset, debtor, rest, open);
            if (debt.status != IClearingHouse.DebtStatus.Challenged) return; // a creditor's game
            if (debt.amount != 0) {
                debt.status = IClearingHouse.DebtStatus.Answered;
                return;
            }
        } else {
            _closeAll(books, cycle, game, open);
        }
        if (debt.status != IClearingHouse.DebtStatus.Challenged) return; // a creditor's game: no debt to void
        uint256 amount = debt.amount;
        debt.status = IClearingHouse.DebtStatus.Voided;
        uint256 fromBond = ClearingBooks.fundFromBond(books, cycleId, asset, amount);
        emit IClearingHouse.DebitVoided(cycleId, asset, debtor, amount, fromBond);
        ClearingBooks.resolveDebt(cycleId, cycle);

        if (amount != 0) vault.releaseObligation(debtor, asset, amount);
    }

    /// @notice See {ClearingHouse-voidUnansweredPosition}.
    function voidUnansweredPosition(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        uint256[2] calldata cycleAndIndex,
        address asset,
        address debtor,
        SumTree.Node calldata leaf,
        SumTree.Node[] calldata path
    ) external {
        Position memory at = Position(cycleAndIndex[0], asset, debtor, cycleAndIndex[1], false, false);
        IClearingHouse.Cycle storage cycle = ClearingBooks.committed(books, at.cycleId);
        if (cycle.vetoed) revert IClearingHouse.CycleIsVetoed(at.cycleId);
        if (block.timestamp <= cycle.answerDeadline)
            revert IClearingHouse.AnswerWindowOpen(at.cycleId, cycle.answerDeadline);
        IClearingHouse.DisputeStatus status = books.disputes[at.cycleId][asset][debtor][at.index];
        if (status != IClearingHouse.DisputeStatus.Open)
            revert IClearingHouse.DisputeNotOpen(at.cycleId, asset, debtor, at.index, status);
        IClearingHouse.DebtGame storage game = books.games[at.cycleId][asset][debtor];
        // A void closed every open dispute of the game at once (their positions keep the `Open` mark).
        if (game.openDisputes == 0)
            revert IClearingHouse.DisputeNotOpen(
                at.cycleId,
                asset,
                debtor,
                at.index,
                IClearingHouse.DisputeStatus.Voided
            );
        if (!game.revealed) revert IClearingHouse.SummaryNotRevealed(at.cycleId, asset, debtor);
        uint256 amount;
        if (at.index >> game.depth == 0) {
            _checkInTree(game, leaf, path, at.index);
            amount = leaf.sum;
        }
        IClearingHouse.DisputeStatus outcome = amount == 0
            ? IClearingHouse.DisputeStatus.Dismissed
            : IClearingHouse.DisputeStatus.Voided;
        // amount <= the revealed total, which fits 128 bits; positions are distinct.
        game.settled += uint128(amount);
        books.disputes[at.cycleId][asset][debtor][at.index] = outcome;
        emit IClearingHouse.DisputeResolved(at.cycleId, asset, debtor, at.index, outcome, bytes32(0), amount);
        reduce(books, vault, at.cycleId, asset, debtor, amount, false);
        _close(books, cycle, at, game);
    }

    /// @dev Closes the game's `open` disputes at once (a void).
    function _closeAll(
        ClearingBooks.Books storage books,
        IClearingHouse.Cycle storage cycle,
        IClearingHouse.DebtGame storage game,
        uint32 open
    ) private {
        game.openDisputes = 0;
        cycle.openChallenges -= open;
        books.openChallenges -= open;
    }

    /// @notice See {ClearingHouse-revealSummary}.
    function revealSummary(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        uint256 cycleId,
        address asset,
        address account,
        IClearingHouse.DebitSummary calldata s,
        bytes32[] calldata proof
    ) external {
        IClearingHouse.Cycle storage cycle = ClearingBooks.committed(books, cycleId);
        IClearingHouse.DebtStatus status = books.debts[cycleId][asset][account].status;
        IClearingHouse.DebtGame storage game = books.games[cycleId][asset][account];
        if (
            cycle.vetoed ||
            game.revealed ||
            (status != IClearingHouse.DebtStatus.None &&
                status != IClearingHouse.DebtStatus.Open &&
                status != IClearingHouse.DebtStatus.Challenged &&
                status != IClearingHouse.DebtStatus.Answered)
        ) revert IClearingHouse.SummaryNotRevealable(cycleId, asset, account);
        _reveal(books, vault, cycle, Position(cycleId, asset, account, 0, false, false), game, s, proof);
    }

    /// @notice See {ClearingHouse-disputeCredit}.
    function disputeCredit(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        IGuaranteeVerifier verifier,
        uint256 cycleId,
        address asset,
        address payer,
        IClearingHouse.ListedGuarantee calldata l
    ) external {
        IClearingHouse.Cycle storage cycle = ClearingBooks.committed(books, cycleId);
        if (cycle.vetoed) revert IClearingHouse.CycleIsVetoed(cycleId);
        if (block.timestamp > cycle.challengeDeadline)
            revert IClearingHouse.ChallengeWindowClosed(cycleId, cycle.challengeDeadline);
        // Core certified it and the payer signed it (the checks an answer to the payer's dispute makes).
        IGuaranteeVerifier.DisputedGuarantee memory g = verifier.checkDisputedGuarantee(
            IGuaranteeVerifier.Dispute(
                address(vault),
                vault.guaranteeDomainSeparator(),
                vault.operatorKey(),
                payer,
                asset
            ),
            l.claims,
            l.certificate,
            l.scheme,
            l.signature,
            l.finalization
        );
        bytes32 id = g.guaranteeId;
        IClearingHouse.CreditDispute storage d = books.creditDisputes[cycleId][id];
        if (d.status != IClearingHouse.CreditDisputeStatus.None)
            revert IClearingHouse.CreditDisputeNotOpen(cycleId, id, d.status);
        // Not owed by the cycle: paid outside it already, or a V2 validation that did not pass (its payer's
        // dispute removes it).
        if (!g.validated || vault.consumption(id) == IClearingVault.Consumption.Remunerated)
            revert IClearingHouse.CreditNotOwed(id);
        bytes32 leaf = GuaranteeLeaf.hash(id, payer, g.recipient, asset, g.amount, keccak256(l.signature));
        // Listed: the payer's summary and the leaf at `index` of its outgoing tree (what charges the payer).
        uint256 totalDebit = books.cycleAssets[cycleId][asset].totalDebit;
        if (!CreditCheck.isSummary(cycle.debitsRoot, totalDebit, payer, asset, l.summary, l.summaryProof))
            revert IClearingHouse.InvalidDebitSummary(cycleId, asset, payer);
        if (l.path.length != l.summary.depth || l.index >> l.path.length != 0)
            revert IClearingHouse.LeafNotInTree(l.index);
        SumTree.Node memory top = SumTree.Node(leaf, g.amount);
        for (uint256 level = 0; level < l.path.length; ++level) {
            top = (l.index >> level) & 1 == 0
                ? SumTree.parent(top, l.path[level])
                : SumTree.parent(l.path[level], top);
        }
        if (top.hash != l.summary.sumRoot || top.sum != l.summary.total)
            revert IClearingHouse.LeafNotInTree(l.index);
        // g.amount is a leaf of a sum tree whose total fits 128 bits (isSummary).
        books.creditDisputes[cycleId][id] = IClearingHouse.CreditDispute(
            leaf,
            g.recipient,
            asset,
            uint128(g.amount),
            IClearingHouse.CreditDisputeStatus.Open
        );
        cycle.openChallenges += 1;
        books.openChallenges += 1;
        emit IClearingHouse.CreditDisputed(cycleId, id, g.recipient, payer, asset, g.amount);
    }

    /// @notice See {ClearingHouse-answerCreditDispute}.
    function answerCreditDispute(
        ClearingBooks.Books storage books,
        uint256 cycleId,
        bytes32 guaranteeId,
        IClearingHouse.CreditProof calldata p
    ) external {
        (IClearingHouse.Cycle storage cycle, IClearingHouse.CreditDispute storage d) = _openCredit(
            books,
            cycleId,
            guaranteeId
        );
        if (block.timestamp > cycle.answerDeadline)
            revert IClearingHouse.AnswerWindowClosed(cycleId, cycle.answerDeadline);
        if (
            !CreditCheck.isCredited(
                cycle.debitsRoot,
                books.cycleAssets[cycleId][d.asset].totalDebit,
                d.recipient,
                d.asset,
                d.leaf,
                d.amount,
                p
            )
        ) revert IClearingHouse.NotCreditedToRecipient(cycleId, d.recipient, guaranteeId);
        _closeCredit(books, cycle, d, IClearingHouse.CreditDisputeStatus.Answered);
        emit IClearingHouse.CreditDisputeResolved(
            cycleId,
            guaranteeId,
            IClearingHouse.CreditDisputeStatus.Answered,
            0,
            0
        );
    }

    /// @notice See {ClearingHouse-payUnansweredCredit}.
    function payUnansweredCredit(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        uint256 cycleId,
        bytes32 guaranteeId
    ) external {
        (IClearingHouse.Cycle storage cycle, IClearingHouse.CreditDispute storage d) = _openCredit(
            books,
            cycleId,
            guaranteeId
        );
        if (block.timestamp <= cycle.answerDeadline)
            revert IClearingHouse.AnswerWindowOpen(cycleId, cycle.answerDeadline);
        // Paid to its recipient outside the cycle since the dispute opened (a reserve collected): once only.
        if (vault.consumption(guaranteeId) == IClearingVault.Consumption.Remunerated) {
            _closeCredit(books, cycle, d, IClearingHouse.CreditDisputeStatus.Lapsed);
            emit IClearingHouse.CreditDisputeResolved(
                cycleId,
                guaranteeId,
                IClearingHouse.CreditDisputeStatus.Lapsed,
                0,
                0
            );
            return;
        }
        _closeCredit(books, cycle, d, IClearingHouse.CreditDisputeStatus.Paid);
        (uint256 paid, uint256 owed) = ClearingBooks.owe(books, d.asset, d.recipient, d.amount);
        emit IClearingHouse.CreditDisputeResolved(
            cycleId,
            guaranteeId,
            IClearingHouse.CreditDisputeStatus.Paid,
            paid,
            owed
        );
        vault.markPaid(guaranteeId);
    }

    /// @dev The open credit dispute of `guaranteeId` in the committed, not vetoed cycle `cycleId`.
    function _openCredit(
        ClearingBooks.Books storage books,
        uint256 cycleId,
        bytes32 guaranteeId
    ) private view returns (IClearingHouse.Cycle storage cycle, IClearingHouse.CreditDispute storage d) {
        cycle = ClearingBooks.committed(books, cycleId);
        if (cycle.vetoed) revert IClearingHouse.CycleIsVetoed(cycleId);
        d = books.creditDisputes[cycleId][guaranteeId];
        if (d.status != IClearingHouse.CreditDisputeStatus.Open)
            revert IClearingHouse.CreditDisputeNotOpen(cycleId, guaranteeId, d.status);
    }

    /// @dev Resolves an open credit dispute as `status` and counts it closed.
    function _closeCredit(
        ClearingBooks.Books storage books,
        IClearingHouse.Cycle storage cycle,
        IClearingHouse.CreditDispute storage d,
        IClearingHouse.CreditDisputeStatus status
    ) private {
        d.status = status;
        cycle.openChallenges -= 1;
        books.openChallenges -= 1;
    }

    /// @notice Returns to the bond what it paid into vetoed cycle `cycleId` (per asset; `VetoedBondReturned`):
    /// a vetoed cycle pays no claim, so that money would otherwise stay held for ever.
    function returnBondOfVetoed(ClearingBooks.Books storage books, uint256 cycleId) external {
        address[] storage assets = books.cycleAssetList[cycleId];
        for (uint256 i = 0; i < assets.length; ++i) {
            address asset = assets[i];
            uint256 amount = books.bondFunded[cycleId][asset];
            if (amount == 0) continue;
            books.bondFunded[cycleId][asset] = 0;
            books.cycleAssets[cycleId][asset].funded -= amount;
            books.heldLiquidity[asset] -= amount;
            books.bondOf[asset] += amount;
            emit IClearingHouse.VetoedBondReturned(cycleId, asset, amount);
        }
    }

    /// @notice Takes `amount` off `debtor`'s debit in `asset` for cycle `cycleId` against the bond: what is
    /// left of the debit is released in the Vault and paid into the cycle from the bond; what exceeds it (the
    /// debtor's incoming payments the removed guarantee had offset) is not paid into the cycle: it is held for
    /// the debtor ({ClearingHouse-claimDebitRefund} once the cycle's disputes are closed; a veto cancels it), so
    /// no creditor's liquidity pays it and no creditor is paid from it (audit A2-H1). With `setAside` (the
    /// operator's own answer: a concession, a removal as not validated) the refund is taken from the spare
    /// bond at once (`RefundAboveSpareBond` when the bond cannot spare it): the operator key, which alone
    /// decides these outcomes and may do so after the guardian's veto window, can never make the bond owe
    /// more than it holds, nor queue an owed refund ahead of honest ones (audit3 A3-M2). Otherwise (a void, a
    /// removal of a guarantee paid on chain) it is owed by the bond, counted in `totalRefundOwed` meanwhile.
    function reduce(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        uint256 cycleId,
        address asset,
        address debtor,
        uint256 amount,
        bool setAside
    ) internal {
        if (amount == 0) return;
        IClearingHouse.Debt storage debt = books.debts[cycleId][asset][debtor];
        uint256 owed = debt.amount;
        uint256 cut = amount < owed ? amount : owed;
        // cut <= debt.amount < 2^248
        debt.amount = uint248(owed - cut);
        uint256 fromBond = ClearingBooks.fundFromBond(books, cycleId, asset, cut);
        uint256 excess = amount - cut;
        if (excess != 0) {
            books.refundHeld[cycleId][asset][debtor] += excess;
            if (setAside) {
                // Refunds already owed come first: a set-aside never takes the top-up meant for them (audit4
                // A4-L2).
                uint256 spare = ClearingBooks.spareBond(books, asset);
                uint256 owed = books.totalRefundOwed[asset];
                spare = spare > owed ? spare - owed : 0;
                if (excess > spare)
                    revert IClearingHouse.RefundAboveSpareBond(cycleId, asset, debtor, excess, spare);
                books.bondOf[asset] -= excess;
                books.heldLiquidity[asset] += excess;
                books.refundSetAside[cycleId][asset][debtor] += excess;
            } else {
                books.totalRefundOwed[asset] += excess;
            }
        }
        emit IClearingHouse.DebitReduced(cycleId, asset, debtor, cut, fromBond, excess);
        if (cut != 0) vault.releaseObligation(debtor, asset, cut);
    }

    /// @dev Reveals the account's summary (proven under the cycle's `debitsRoot`); a debit above its net
    /// position (`total - inTotal`, 0 for a net creditor) is cut to it against the bond (the operator committed
    /// more than it listed).
    function _reveal(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        IClearingHouse.Cycle storage cycle,
        Position memory at,
        IClearingHouse.DebtGame storage game,
        IClearingHouse.DebitSummary calldata s,
        bytes32[] calldata proof
    ) private {
        (uint256 cycleId, address asset, address debtor) = (at.cycleId, at.asset, at.debtor);
        if (
            !CreditCheck.isSummary(
                cycle.debitsRoot,
                books.cycleAssets[cycleId][asset].totalDebit,
                debtor,
                asset,
                s,
                proof
            )
        ) {
            revert IClearingHouse.InvalidDebitSummary(cycleId, asset, debtor);
        }
        game.sumRoot = s.sumRoot;
        game.total = uint128(s.total);
        game.depth = uint8(s.depth);
        game.inTotal = uint128(s.inTotal);
        game.revealed = true;
        emit IClearingHouse.DebitSummaryRevealed(cycleId, asset, debtor, s.sumRoot, s.total, s.depth);
        uint256 debit = books.debts[cycleId][asset][debtor].amount;
        uint256 net = s.total > s.inTotal ? s.total - s.inTotal : 0;
        if (debit > net) reduce(books, vault, cycleId, asset, debtor, debit - net, false);
    }

    /// @dev The outcome of a proven position: Dismissed (empty), Voided (conceded), Removed (already paid to
    /// its recipient, or V2 validation not passed) or Upheld (marks the guarantee used, and a V2 one not consumed yet netted in the Vault). Reverts when the
    /// claims do not verify or are not the position's guarantee, or the guarantee already answered another
    /// dispute: the operator concedes such a position instead.
    function _judge(
        ClearingBooks.Books storage books,
        IClearingVault vault,
        IGuaranteeVerifier verifier,
        Position memory at,
        IClearingHouse.DisputeAnswer calldata a
    ) private returns (IClearingHouse.DisputeStatus, bytes32, address) {
        address debtor = at.debtor;
        if (a.leaf.hash == bytes32(0) && a.leaf.sum == 0) {
            return (IClearingHouse.DisputeStatus.Dismissed, bytes32(0), address(0));
        }
        if (a.claims.length == 0) {
            // A concession voids the position against the bond: the operator's call alone (audit H-1).
            if (!at.mayConcede) revert IClearingHouse.ConcessionNotAllowed(msg.sender);
            at.setAside = true;
            return (IClearingHouse.DisputeStatus.Voided, bytes32(0), address(0));
        }
        IGuaranteeVerifier.DisputedGuarantee memory g = verifier.checkDisputedGuarantee(
            IGuaranteeVerifier.Dispute(
                address(vault),
                vault.guaranteeDomainSeparator(),
                vault.operatorKey(),
                debtor,
                at.asset
            ),
            a.claims,
            a.certificate,
            a.scheme,
            a.signature,
            a.finalization
        );
        bytes32 leaf = GuaranteeLeaf.hash(
            g.guaranteeId,
            debtor,
            g.recipient,
            at.asset,
            g.amount,
            keccak256(a.signature)
        );
        if (leaf != a.leaf.hash || g.amount != a.leaf.sum)
            revert IClearingHouse.AnswerLeafMismatch(g.guaranteeId);
        // A listing stands (or is removed from its recipient's credit) only where it is credited to its own
        // recipient: a guarantee listed to one creditor never pays another (issue 25, item 5).
        if (
            !CreditCheck.isCredited(
                books.cycles[at.cycleId].debitsRoot,
                books.cycleAssets[at.cycleId][at.asset].totalDebit,
                g.recipient,
                at.asset,
                leaf,
                g.amount,
                a.credit
            )
        ) revert IClearingHouse.NotCreditedToRecipient(at.cycleId, g.recipient, g.guaranteeId);
        IClearingVault.Consumption how = vault.consumption(g.guaranteeId);
        if (how == IClearingVault.Consumption.Remunerated) {
            return (IClearingHouse.DisputeStatus.Removed, g.guaranteeId, g.recipient);
        }
        if (!g.validated) {
            // "Not validated" may only mean that the answer left out the payer's Finalization (optional
            // evidence): anyone else could strip it and remove an honest position (audit H-1). Like a
            // concession, it is the operator's call; anyone may still answer with the evidence.
            if (!at.mayConcede) revert IClearingHouse.RemovalNotAllowed(msg.sender, g.guaranteeId);
            at.setAside = true;
            // The cycle no longer pays it to its recipient: a mark of this listing must not outlive the removal
            // (audit3 A3-L2), unless another listing of the id in this cycle was upheld (it still pays that).
            if (books.answeredIn[g.guaranteeId] != at.cycleId) vault.markRemoved(at.cycleId, g.guaranteeId);
            return (IClearingHouse.DisputeStatus.Removed, g.guaranteeId, g.recipient);
        }
        // An answer in a vetoed cycle does not count: the re-commit must be able to use the guarantee again.
        uint256 usedIn = books.answeredIn[g.guaranteeId];
        if (usedIn != 0 && !books.cycles[usedIn].vetoed)
            revert IClearingHouse.GuaranteeAlreadyUsed(g.guaranteeId, usedIn);
        books.answeredIn[g.guaranteeId] = at.cycleId;
        // The payer pays this V2 guarantee through the cycle: consumed here if the commit left it out of its
        // `nettedV2Ids`, so no `remunerate` pays it again (audit2 A2-M2; a veto undoes the mark).
        if (how == IClearingVault.Consumption.None && _isV2(a.claims)) {
            bytes32[] memory ids = new bytes32[](1);
            ids[0] = g.guaranteeId;
            vault.markNetted(at.cycleId, ids);
        }
        return (IClearingHouse.DisputeStatus.Upheld, g.guaranteeId, g.recipient);
    }

    /// @dev Whether verified certificate `claims` are V2 (their leading word is the codec's version).
    function _isV2(bytes calldata claims) private pure returns (bool) {
        return uint256(bytes32(claims[:32])) == CertificateCodec.VERSION_V2;
    }

    /// @dev Closes one dispute of the debt; with its last, the debt is Answered (or Voided when nothing is
    /// left owed, which resolves it).
    function _close(
        ClearingBooks.Books storage books,
        IClearingHouse.Cycle storage cycle,
        Position memory at,
        IClearingHouse.DebtGame storage game
    ) private {
        game.openDisputes -= 1;
        cycle.openChallenges -= 1;
        books.openChallenges -= 1;
        if (game.openDisputes != 0) return;
        IClearingHouse.Debt storage debt = books.debts[at.cycleId][at.asset][at.debtor];
        if (debt.status == IClearingHouse.DebtStatus.None) return; // a net creditor's game
        if (debt.amount == 0) {
            debt.status = IClearingHouse.DebtStatus.Voided;
            ClearingBooks.resolveDebt(at.cycleId, cycle);
        } else {
            debt.status = IClearingHouse.DebtStatus.Answered;
        }
    }
}
