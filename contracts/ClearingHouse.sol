// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControlDefaultAdminRules} from "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";

import {TimelockedRoles} from "./access/TimelockedRoles.sol";
import {ClearingBooks} from "./clearing/ClearingBooks.sol";
import {CycleCommitLogic} from "./clearing/CycleCommitLogic.sol";
import {DisputeLogic} from "./clearing/DisputeLogic.sol";
import {PayoutLogic} from "./clearing/PayoutLogic.sol";
import {IClearingHouse} from "./interfaces/IClearingHouse.sol";
import {IClearingVault} from "./interfaces/IClearingVault.sol";
import {IGuaranteeVerifier} from "./interfaces/IGuaranteeVerifier.sol";
import {GuaranteeLeaf as GuaranteeLeafHash} from "./lib/GuaranteeLeaf.sol";
import {SumTree} from "./lib/SumTree.sol";

/// @title ClearingHouse
/// @notice Settles multilateral netting cycles committed by the operator, optimistically: a commit opens a
/// challenge window in which every debtor may dispute the guarantees its net debit is made of, one position
/// of its sum tree at a time (the operator proves each with the payer's own signed, certified guarantee, or
/// only that guarantee's amount comes off the debit, against the operator bond), and the guardian may veto
/// the whole cycle. Debtors pay their net debit (or have it covered from their Vault collateral after the
/// payment deadline); creditors claim their net credit with a Merkle proof once the challenge window has
/// closed and the cycle's disputes are answered.
/// @dev Net-position leaves are `@openzeppelin/merkle-tree` StandardMerkleTree leaves over
/// `[uint256 cycleId, address asset, address participant, uint256 debit, uint256 credit]`; a creditor's leaf
/// has `debit == 0`. Guarantee leaves (the `guaranteesRoot`) are StandardMerkleTree leaves over
/// `[bytes32 guaranteeId, address payer, address recipient, address asset, uint256 amount,
/// bytes32 signatureHash]` with `signatureHash = keccak256(payer signature bytes)`. The `debitsRoot` commits
/// each account's summary `[address account, address asset, bytes32 sumRoot, uint256 total, uint256 depth,
/// bytes32 inRoot, uint256 inTotal, uint256 inDepth]` (the roots of Merkle sum trees, SumTree, over the same
/// guarantee leaves of its outgoing and incoming guarantees in that asset, ordered by guarantee id), per asset
/// in a sum tree of the summaries' net credits whose top must equal the cycle's total credit (CreditCheck).
/// Creditors are paid first come, first served from the liquidity of their cycle and asset (debits paid +
/// defaults covered, their gap from the bond + bond charged for voided debits); the claims of an asset never
/// exceed its committed total. Every payment out of a cycle is a pull payment: claims, refunds of vetoed debts and
/// double-listing refunds are set aside for their owner ({payoutOf}), who pulls them with {withdrawPayout} to an
/// address of its choice, so no recipient wallet can block its own payment or a call batched with it.
/// Invariant: for every asset, this contract holds `heldLiquidity(asset) + bondOf(asset)` plus the payouts set
/// aside ({payoutOf}, summed over accounts).
///
/// Timing (W = Vault.challengeWindow()): `challengeDeadline = commit time + W` (disputes, veto);
/// `answerDeadline = challengeDeadline + W` (answers; a debt with an unanswered dispute can be voided after it);
/// `paymentDeadline = answerDeadline + Vault.paymentWindow()`: default coverage opens strictly after it.
/// A debtor may pay from the commit on (unless a dispute of its debit is open) and late as long as nobody
/// covered the debt. `defaultDeadline = paymentDeadline + Vault.defaultWindow()` bounds the clearing path
/// used in the withdrawal-grace invariant. `doubleListingDeadline = defaultDeadline +
/// Vault.timings().withdrawalGracePeriod` (snapshot at commit): until then a guarantee listed in this cycle and in an
/// earlier one can be proven double-listed ({proveDoubleListing}); never earlier than the previous cycle's, so
/// the last cycle's is the latest, and the bond stays locked until it ({withdrawBond}).
contract ClearingHouse is IClearingHouse, TimelockedRoles, ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    /// @notice Role that commits cycles (the operator, Core).
    bytes32 public constant OPERATOR_ROLE = keccak256("OPERATOR_ROLE");
    /// @notice Role that may veto a committed cycle inside its challenge window (a key separate from the
    /// operator's).
    bytes32 public constant GUARDIAN_ROLE = keccak256("GUARDIAN_ROLE");
    /// @notice The asset id of ETH.
    address public constant ETH = address(0);
    /// @notice Denominator of {bondFloorBps} (basis points).
    uint256 public constant BPS = 10_000;
    /// @notice Most debtors one {commitCycle} records; a netted V2 id counts half a debtor
    /// (`debtors + ceil(nettedV2Ids / 2)`, else {CommitTooLarge}): bounds a commit under EIP-7825's 2^24 gas.
    uint256 public constant MAX_DEBTORS_PER_COMMIT = CycleCommitLogic.MAX_DEBTORS_PER_COMMIT;
    /// @notice Most assets one {commitCycle} lists (`totals.length`, else {CommitTooManyAssets}): with
    /// {MAX_DEBTORS_PER_COMMIT} it bounds a commit under EIP-7825's 2^24 gas (audit3 A3-I1).
    uint256 public constant MAX_ASSETS_PER_COMMIT = CycleCommitLogic.MAX_ASSETS_PER_COMMIT;

    /// @notice The Vault holding collateral and obligations.
    IClearingVault public immutable vault;
    /// @notice Decodes answer guarantees and checks payer signatures (shared with the Vault).
    IGuaranteeVerifier public immutable guaranteeVerifier;

    /// @dev Cycles, debts, liquidity, the bond, payouts and the challenge game's marks (views below).
    ClearingBooks.Books private _books;

    /// @param vault_ The Vault (it must then be given this contract with `Vault.setClearingHouse`).
    /// @param admin Receives the admin role.
    /// @param operator Receives the operator role (commits cycles).
    /// @param guardian Receives the guardian role (vetoes cycles); must not be the operator's key.
    /// @param adminTransferDelay Seconds between `beginDefaultAdminTransfer` and the earliest
    /// `acceptDefaultAdminTransfer` (the default admin changes in two steps, never at once).
    /// @param bondFloorBps_ The initial bond floor ({bondFloorBps}; 0 = off, at most {BPS}), so that a deployment
    /// whose admin is not the deployer starts with its floor on.
    /// @param verifier The {IGuaranteeVerifier} (a contract; the Vault's own).
    constructor(
        IClearingVault vault_,
        address admin,
        address operator,
        address guardian,
        uint48 adminTransferDelay,
        uint16 bondFloorBps_,
        IGuaranteeVerifier verifier
    ) AccessControlDefaultAdminRules(adminTransferDelay, admin) {
        if (address(vault_).code.length == 0) revert InvalidVault(address(vault_));
        if (address(verifier).code.length == 0) revert InvalidGuaranteeVerifier(address(verifier));
        if (bondFloorBps_ > BPS) revert BondFloorTooHigh(bondFloorBps_);
        vault = vault_;
        guaranteeVerifier = verifier;
        _grantRole(OPERATOR_ROLE, operator);
        _grantRole(GUARDIAN_ROLE, guardian);
        _books.bondFloorBps = bondFloorBps_;
        emit BondFloorSet(bondFloorBps_);
    }

    /// @notice Accepts ETH only from the Vault (default coverage).
    receive() external payable {
        if (msg.sender != address(vault)) revert UnexpectedEthSender(msg.sender);
    }

    // ------------------------------------------------------------------------------------------ commit

    /// @notice Commits clearing cycle `cycleId` (must be `lastCycleId + 1`).
    /// @param roots The cycle's three roots ({CycleRoots}; none zero).
    /// @param totals Per-asset total debit and credit (must be equal).
    /// @param debtors Every net debtor with its debit; per asset they sum to the total debit.
    /// @param nettedV2Ids V2 guarantees netted in this cycle. Ids already consumed (remunerated, or netted
    /// before) are skipped and reported by the Vault (`GuaranteeNettingSkipped`), never reverting the commit.
    /// At most {MAX_DEBTORS_PER_COMMIT} debtors, a V2 id counting half a debtor ({CommitTooLarge}), and at
    /// most {MAX_ASSETS_PER_COMMIT} assets ({CommitTooManyAssets}).
    /// @dev Marks the V2 ids first: it is the only step that depends on state others can change between
    /// Core's estimate and the commit, so it runs before the per-debtor work (the Vault is trusted and makes
    /// no external call). Then records each obligation in the Vault. Deadlines as in the contract's notes,
    /// from the Vault's timings.
    function commitCycle(
        uint256 cycleId,
        CycleRoots calldata roots,
        AssetTotal[] calldata totals,
        IClearingVault.Obligation[] calldata debtors,
        bytes32[] calldata nettedV2Ids
    ) external onlyRole(OPERATOR_ROLE) nonReentrant {
        CycleCommitLogic.commitCycle(_books, vault, cycleId, roots, totals, debtors, nettedV2Ids);
    }

    // ------------------------------------------------------------------------------------- settlement

    /// @notice Pays the caller's net debit in `asset` for cycle `cycleId`: send exactly the debit as ETH, or
    /// approve it for the token. Allowed from the commit on (not while the debit is under challenge: paying
    /// accepts it), and after the payment deadline as long as the debt was not covered yet.
    /// @dev Releases the matching obligation in the Vault. Fee-on-transfer tokens are rejected.
    function payNetDebit(uint256 cycleId, address asset) external payable nonReentrant {
        Debt storage debt = _payableDebt(cycleId, asset, msg.sender);
        uint256 amount = debt.amount;
        if (asset == ETH) {
            if (msg.value != amount) revert IncorrectPayment(amount, msg.value);
        } else if (msg.value != 0) {
            revert UnexpectedEth(msg.value);
        }
        Cycle storage cycle = _books.cycles[cycleId];
        debt.status = DebtStatus.Paid;
        ClearingBooks.fund(_books, cycleId, asset, amount);
        emit NetDebitPaid(cycleId, asset, msg.sender, amount, block.timestamp > cycle.paymentDeadline);
        ClearingBooks.resolveDebt(cycleId, cycle);

        vault.releaseObligation(msg.sender, asset, amount);
        if (asset != ETH) {
            uint256 before = IERC20(asset).balanceOf(address(this));
            IERC20(asset).safeTransferFrom(msg.sender, address(this), amount);
            uint256 received = IERC20(asset).balanceOf(address(this)) - before;
            if (received != amount) revert IncorrectPayment(amount, received);
        }
    }

    /// @notice Covers `debtor`'s unpaid net debit in `asset` for cycle `cycleId` from its Vault collateral.
    /// Anyone may call once the payment deadline (which follows the answer window) has passed. The Vault
    /// moves min(debit, collateral balance); the cycle is funded with what actually arrived here, and the
    /// rest from the operator bond ({DefaultFundedFromBond}; none while Core keeps its locking invariant and
    /// the token charges no transfer fee), recorded as shortfall only when the bond is short too.
    /// @dev Funding is measured as this contract's balance change (capped at what the Vault moved), so a
    /// token that takes a fee on transfer can never make `funded`, `heldLiquidity` or the event promise
    /// creditors more than is held. The debt is marked covered before the call; funding and the cycle's
    /// progress are written after it (they depend on what arrived), which is safe because every
    /// state-changing entry point is `nonReentrant`.
    function coverDefault(uint256 cycleId, address asset, address debtor) external nonReentrant {
        Debt storage debt = _payableDebt(cycleId, asset, debtor);
        Cycle storage cycle = _books.cycles[cycleId];
        if (block.timestamp <= cycle.paymentDeadline)
            revert PaymentWindowOpen(cycleId, cycle.paymentDeadline);
        uint256 amount = debt.amount;
        debt.status = DebtStatus.Covered;

        uint256 before = _holdings(asset);
        uint256 moved = vault.coverDefault(debtor, asset, amount);
        uint256 arrived = _holdings(asset) - before;
        uint256 covered = arrived < moved ? arrived : moved;

        ClearingBooks.fund(_books, cycleId, asset, covered);
        emit DefaultCovered(cycleId, asset, debtor, amount, covered);
        if (covered < amount) {
            // A debit beyond the debtor's collateral is the operator's fault (Core locks what it commits): the
            // bond funds the rest, so no creditor of the cycle is short (shortfall only if the bond is too).
            uint256 fromBond = ClearingBooks.fundFromBond(_books, cycleId, asset, amount - covered);
            emit DefaultFundedFromBond(cycleId, asset, debtor, fromBond);
        }
        ClearingBooks.resolveDebt(cycleId, cycle);
    }

    /// @notice Claims `participant`'s net credit in `asset` for cycle `cycleId` and sets it aside for the
    /// participant ({payoutOf}; the participant pulls it with {withdrawPayout}). Anyone may call (Core's keeper
    /// can) once the cycle's challenge window has closed and its disputes are answered, or its answer window
    /// has closed (`Vault.answerDeadlineAfterKeyGap` of it while an operator key change extends the answers;
    /// `DisputesOpen` until then; a vetoed cycle pays nothing); nothing is sent, so a participant that cannot
    /// receive the asset never makes a claim revert. The credit is the participant's net position in its own summary
    /// under the cycle's `debitsRoot`, `inTotal - total` (issue 25, item 5: what a creditor claims follows
    /// from the guarantees listed to it in its incoming tree). What disputes removed from the participant's
    /// credit (guarantees already paid to it, {deductedOf}) is returned to what the cycle is short of, then to
    /// the bond, which paid it into the cycle.
    /// @param summary The participant's summary (`inTotal > total`); once revealed, the revealed one.
    /// @param proof Proof of the summary under the cycle's `debitsRoot` (CreditCheck `isSummary`: its path in the
    /// asset's summaries sum tree, then the list of asset tops).
    function claimNetCredit(
        uint256 cycleId,
        address asset,
        address participant,
        DebitSummary calldata summary,
        bytes32[] calldata proof
    ) external nonReentrant {
        PayoutLogic.claimNetCredit(_books, vault, cycleId, asset, participant, summary, proof);
    }

    /// @notice Settles what a removed or conceded position of `debtor`'s tree refunded above its debit in `asset`
    /// for cycle `cycleId` (its incoming payments the position had offset; `DebitReduced.refunded`, held since).
    /// Anyone may call once the cycle is past its challenge deadline and its disputes are closed as for a claim
    /// (`DisputesOpen`). Paid from the bond only, never from the cycle's liquidity: what the operator's own answer
    /// refunded was set aside from the bond at the answer ({refundSetAsideOf}) and is paid in full; of the rest
    /// what {ClearingBooks-spareBond} (the bond above the floor's share of the debits at risk) holds is set aside
    /// for the debtor ({payoutOf}), the rest recorded as owed ({refundOwed}; paid as the bond grows, the bond
    /// cannot be withdrawn meanwhile). In a vetoed cycle the refund is cancelled instead (`DebitRefundCancelled`),
    /// at any time, and what was set aside goes back to the bond.
    function claimDebitRefund(uint256 cycleId, address asset, address debtor) external nonReentrant {
        PayoutLogic.claimDebitRefund(_books, vault, cycleId, asset, debtor);
    }

    /// @notice Recovers what disputes removed from `recipient` in `asset` in cycle `cycleId` ({deductedOf}:
    /// guarantees already paid to it outside the cycle) and no claim of its credit returned: taken from its
    /// Vault collateral, where it was locked at the removal, into the cycle's shortfall first, then the bond
    /// that fronted it. Anyone may call
    /// after the cycle's payment deadline; in a vetoed cycle the lock is only lifted.
    function recoverDeduction(uint256 cycleId, address asset, address recipient) external nonReentrant {
        PayoutLogic.recoverDeduction(_books, vault, cycleId, asset, recipient);
    }

    // -------------------------------------------------------------------------------- challenge game

    /// @notice Disputes the guarantee at position `index` of the caller's sum tree of outgoing guarantees in
    /// `asset` for cycle `cycleId` (its leaves and proofs: Core's `GET /core/cycles/{id}/debits/{payer}`), inside
    /// the challenge window, while its debit is unpaid; a net creditor (no debt) disputes its outgoing tree too
    /// once its summary is revealed ({revealSummary}; `NoDebt` before): a position it did not sign lowers its
    /// credit, and a conceded or withheld position is refunded to it from the bond. Until every dispute of the debt is answered the debit
    /// can be neither paid nor covered; the operator answers each position on its own ({answerDispute}); a
    /// dispute left unanswered by the answer deadline is conceded at its proven amount
    /// ({voidUnansweredPosition}); before any summary is revealed it voids the whole debit ({voidUnansweredDebit}).
    /// Each position is disputed once; a position past the tree's end is dismissed, and once the summary is
    /// revealed it cannot be disputed (`PositionPastTreeEnd`).
    function disputeGuarantee(uint256 cycleId, address asset, uint256 index) external nonReentrant {
        if (index >> SumTree.MAX_DEPTH != 0) revert SumTree.InvalidSumPath(index, SumTree.MAX_DEPTH);
        DisputeLogic.disputeGuarantee(_books, cycleId, asset, msg.sender, index);
    }

    /// @notice Answers the dispute of position `index` of `debtor`'s tree in `asset` for cycle `cycleId`, until
    /// the answer deadline; anyone may answer (Core's keeper does). The first answer of a debt reveals the
    /// debtor's summary. Outcomes ({DisputeStatus}): Upheld (the position's guarantee was certified by Core,
    /// signed by the debtor and, V2, validated; not paid on chain; not used by another answer; a V2 id its
    /// commit left unmarked is marked netted in the Vault, so it cannot be remunerated too), Dismissed
    /// (empty position), Removed (already paid to its recipient, or validation not passed: off the debit and
    /// off the recipient's credit) or Voided (conceded with empty claims, by the operator only: only its amount
    /// off the debit, against the bond). A removal because a V2 guarantee is not validated is the operator's
    /// too (`RemovalNotAllowed`: anyone else could leave out the payer's `Finalization`); anyone answers with
    /// the evidence that upholds it. What the operator's concession or removal as not validated refunds above
    /// the debit is set aside from the spare bond at once (`RefundAboveSpareBond` when it cannot; audit3
    /// A3-M2). Costs O(tree depth) and one certificate and signature check. The answer deadline is extended
    /// after an operator key change ({voidUnansweredDebit}).
    function answerDispute(
        uint256 cycleId,
        address asset,
        address debtor,
        uint256 index,
        DisputeAnswer calldata answer
    ) external nonReentrant {
        // Only the operator may concede (empty claims at a listed position): anyone else could void an honest
        // debit against the bond.
        DisputeLogic.answerDispute(
            _books,
            vault,
            guaranteeVerifier,
            [cycleId, index],
            asset,
            debtor,
            hasRole(OPERATOR_ROLE, msg.sender),
            answer
        );
    }

    /// @notice Closes `debtor`'s unanswered disputes in `asset` for cycle `cycleId` once the answer deadline has
    /// passed (the operator withheld its own tree); anyone may call. Summary never revealed: what is left of
    /// the debit is voided, the obligation released (the debtor keeps its collateral) and the cycle funded from
    /// the operator bond instead (shortfall if the bond is short). Summary revealed: open positions are
    /// conceded one by one at their proven amounts ({voidUnansweredPosition}) until the payment deadline
    /// (`PaymentWindowOpen` before it; after an operator key gap, before the payment deadline moved as far as
    /// the answer deadline, for unrevealed trees too: audit A2-L1); after it, for a tree nobody proves, every
    /// position not answered yet counts as conceded ({UnansweredConceded}): its sum comes off the debit, what
    /// exceeds it (the incoming payments those positions offset) is refunded to the account from the bond, so
    /// withholding never beats conceding, and the rest of the debit, proven by answers, stays owed
    /// (`Answered`; `Voided` if nothing is left). The same closes a net creditor's unanswered disputes. After
    /// an operator key change or revocation the answer deadline is `Vault.answerDeadlineAfterKeyGap` of the
    /// committed one ({AnswerWindowExtended} until then; docs/clearing.md "Operator key gaps").
    function voidUnansweredDebit(uint256 cycleId, address asset, address debtor) external nonReentrant {
        DisputeLogic.voidUnansweredDebit(_books, vault, cycleId, asset, debtor, _checkKeyGap(cycleId));
    }

    /// @notice Concedes the unanswered dispute of position `index` of `debtor`'s revealed tree in `asset` for
    /// cycle `cycleId`, after the answer deadline, at the amount of its node `leaf` proven by `path` under the
    /// revealed sum root (`LeafNotInTree` otherwise; `SummaryNotRevealed` before a reveal); anyone may call.
    /// The position is `Voided` (its amount off the debit against the bond, the excess held for the account as
    /// by a concession) or `Dismissed` (empty, or past the tree's end: no proof needed); nothing else of the
    /// debit is touched. With the last open dispute the debt is `Answered` (or `Voided` if nothing is left).
    /// Costs O(tree depth), no signature check (audit M-1). Waits out an operator key gap as
    /// {voidUnansweredDebit} does ({AnswerWindowExtended}).
    function voidUnansweredPosition(
        uint256 cycleId,
        address asset,
        address debtor,
        uint256 index,
        SumTree.Node calldata leaf,
        SumTree.Node[] calldata path
    ) external nonReentrant {
        _checkKeyGap(cycleId);
        DisputeLogic.voidUnansweredPosition(_books, vault, [cycleId, index], asset, debtor, leaf, path);
    }

    /// @notice Reveals `account`'s summary in `asset` for cycle `cycleId` (proven by `proof` under its
    /// `debitsRoot`); anyone may call, once, while the cycle stands and the account's debt (if any) is not
    /// paid, covered or voided. A debit above the summary's net position is cut to it against the bond; the
    /// summary is what {voidUnansweredDebit} refunds from and what {claimNetCredit} must then match.
    function revealSummary(
        uint256 cycleId,
        address asset,
        address account,
        DebitSummary calldata summary,
        bytes32[] calldata proof
    ) external nonReentrant {
        DisputeLogic.revealSummary(_books, vault, cycleId, asset, account, summary, proof);
    }

    /// @notice A recipient's credit dispute: the guarantee `l` proves (Core's certificate, the payer's signature
    /// and its position in `payer`'s outgoing tree in `asset` of cycle `cycleId`) is listed, so it must be
    /// credited to its recipient. Anyone may call on the recipient's behalf, inside the challenge window, once
    /// per guarantee and cycle; refused for a guarantee already paid on chain or whose V2 validation did not
    /// pass (`CreditNotOwed`). The operator answers with the guarantee's {CreditProof} ({answerCreditDispute});
    /// unanswered, the bond pays the recipient ({payUnansweredCredit}). Claims of the cycle wait for it like
    /// for any dispute (`DisputesOpen`). docs/clearing.md "Misdirected credits".
    function disputeCredit(
        uint256 cycleId,
        address asset,
        address payer,
        ListedGuarantee calldata l
    ) external nonReentrant {
        DisputeLogic.disputeCredit(_books, vault, guaranteeVerifier, cycleId, asset, payer, l);
    }

    /// @notice Answers the credit dispute of `guaranteeId` in cycle `cycleId` with the guarantee's position in
    /// its recipient's incoming tree (`NotCreditedToRecipient` otherwise), until the answer deadline; anyone
    /// may answer (Core's keeper does).
    function answerCreditDispute(
        uint256 cycleId,
        bytes32 guaranteeId,
        CreditProof calldata proof
    ) external nonReentrant {
        DisputeLogic.answerCreditDispute(_books, cycleId, guaranteeId, proof);
    }

    /// @notice Pays the recipient of an unanswered credit dispute (after the answer deadline; anyone may call)
    /// the guarantee's amount from the bond ({payoutOf}; what the bond lacks is owed, {refundOwed}) and marks the
    /// guarantee paid in the Vault, so it is paid once only. If it was paid outside the cycle meanwhile, the
    /// dispute lapses without payment.
    function payUnansweredCredit(uint256 cycleId, bytes32 guaranteeId) external nonReentrant {
        DisputeLogic.payUnansweredCredit(_books, vault, cycleId, guaranteeId);
    }

    /// @notice The credit dispute of `guaranteeId` in cycle `cycleId` (all zero if none).
    function creditDisputeOf(
        uint256 cycleId,
        bytes32 guaranteeId
    ) external view returns (CreditDispute memory) {
        return _books.creditDisputes[cycleId][guaranteeId];
    }

    // ------------------------------------------------------------------------------------------- veto

    /// @notice Vetoes cycle `cycleId` inside its challenge window: none of it settles (no claim, payment,
    /// coverage or dispute), and the Vault's marks made by its commit take no effect (its V2 ids can be
    /// remunerated, reserved and re-committed again). Its debts are then released one by one
    /// ({releaseVetoedDebt}): paid ones at once, unpaid ones only after the grace period, so that a veto never
    /// lets a payer withdraw what it owes before the operator re-commits the cycle's guarantees as a new cycle.
    function vetoCycle(uint256 cycleId) external onlyRole(GUARDIAN_ROLE) {
        Cycle storage cycle = ClearingBooks.committed(_books, cycleId);
        if (cycle.vetoed) revert CycleIsVetoed(cycleId);
        if (block.timestamp > cycle.challengeDeadline)
            revert ChallengeWindowClosed(cycleId, cycle.challengeDeadline);
        cycle.vetoed = true;
        _books.openChallenges -= cycle.openChallenges;
        cycle.openChallenges = 0;
        emit CycleVetoed(cycleId, msg.sender);
        // A vetoed cycle pays no claim: what the bond paid into it (conceded or removed positions) goes back.
        DisputeLogic.returnBondOfVetoed(_books, cycleId);
    }

    /// @notice Releases `debtor`'s debt in `asset` of the vetoed cycle `cycleId`; anyone may call. A paid one is
    /// refunded at once: set aside for the debtor ({payoutOf}, pulled with {withdrawPayout}; a vetoed cycle
    /// never pays a claim, so its funded liquidity is exactly its payments). An unpaid debt's Vault obligation
    /// is released only after `committedAt` + the withdrawal grace period of its commit ({VetoedDebtLocked}),
    /// by when a live operator has re-committed the cycle's guarantees.
    /// @dev Refund rather than carry-over: the re-commit is a new cycle whose debits the debtor can challenge
    /// on their own; crediting an old payment there would need the operator's word for it.
    function releaseVetoedDebt(uint256 cycleId, address asset, address debtor) external nonReentrant {
        Cycle storage cycle = ClearingBooks.committed(_books, cycleId);
        if (!cycle.vetoed) revert CycleNotVetoed(cycleId);
        Debt storage debt = _books.debts[cycleId][asset][debtor];
        DebtStatus status = debt.status;
        if (status == DebtStatus.None) revert NoDebt(cycleId, asset, debtor);
        if (status == DebtStatus.Voided || status == DebtStatus.Refunded) {
            revert DebtAlreadyResolved(cycleId, asset, debtor, status);
        }
        uint256 amount = debt.amount;
        bool refunded = status == DebtStatus.Paid;
        if (!refunded) {
            // doubleListingDeadline - defaultDeadline is the grace period snapshot at commit (or more).
            uint64 releasableAt = cycle.committedAt + (cycle.doubleListingDeadline - cycle.defaultDeadline);
            if (block.timestamp <= releasableAt) revert VetoedDebtLocked(cycleId, releasableAt);
        }
        debt.status = refunded ? DebtStatus.Refunded : DebtStatus.Voided;
        emit VetoedDebtReleased(cycleId, asset, debtor, amount, refunded);
        if (refunded) {
            _books.cycleAssets[cycleId][asset].funded -= amount;
            _books.heldLiquidity[asset] -= amount;
            _books.payoutOf[asset][debtor] += amount;
        } else if (amount != 0) {
            vault.releaseObligation(debtor, asset, amount);
        }
    }

    // ------------------------------------------------------------------------------------------- bond

    /// @notice Adds to the operator bond in `asset` (ETH with the call, or `amount` of the token pulled with
    /// transferFrom); anyone may post. The bond funds creditors of debits voided by unanswered challenges.
    /// @dev Credits what actually arrived (a fee-on-transfer token cannot inflate the bond).
    function postBond(address asset, uint256 amount) external payable nonReentrant {
        uint256 received;
        if (asset == ETH) {
            received = msg.value;
        } else {
            if (msg.value != 0) revert UnexpectedEth(msg.value);
            uint256 before = IERC20(asset).balanceOf(address(this));
            IERC20(asset).safeTransferFrom(msg.sender, address(this), amount);
            received = IERC20(asset).balanceOf(address(this)) - before;
        }
        if (received == 0) revert ZeroAmount();
        uint256 bond = _books.bondOf[asset] + received;
        _books.bondOf[asset] = bond;
        emit BondPosted(asset, msg.sender, received, bond);
    }

    /// @notice Stops counting in {bondAtRisk} the oldest cycles that can no longer draw on the bond: vetoed, or
    /// finalized (every debt paid, covered or voided), in cycle order and the newest too, at most `maxCycles`
    /// of them (`CycleRiskReleased` each); anyone may call. Reverts {NoSettledRisk} when the oldest cycle still
    /// counted is neither. Commits release up to 8 such cycles themselves, and so do {claimOwedRefund} and
    /// {withdrawPayout} when the bond cannot spare an owed refund; this call frees the floor's share without
    /// a commit (a keeper, or an owed party once every cycle has settled: audit3 A3-M3). Costs ≈ 6k gas per
    /// cycle plus ≈ 5.5k per asset of it (≈ 49k for one cycle of one asset); the caller bounds the work with
    /// `maxCycles`.
    /// @return released How many cycles it released.
    function releaseSettledRisk(uint256 maxCycles) external nonReentrant returns (uint256 released) {
        return CycleCommitLogic.releaseSettledRisk(_books, maxCycles);
    }

    /// @notice Sets the bond floor ({bondFloorBps}); default admin only, at once. Raising it only makes commits
    /// stricter; lowering it is visible ({BondFloorSet}) and also lowers the share kept for cycles already
    /// counted in {bondAtRisk} (docs/clearing.md, "Audit 3: when a cycle leaves the floor").
    function setBondFloor(uint16 bps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (bps > BPS) revert BondFloorTooHigh(bps);
        _books.bondFloorBps = bps;
        emit BondFloorSet(bps);
    }

    /// @notice Withdraws `amount` of the `asset` bond to `to` (default admin only), only while no challenge
    /// is open, every committed cycle's double-listing deadline has passed (the last cycle's `doubleListingDeadline`, the
    /// latest, after every answer deadline) and no refund is owed in `asset`, and never more than the bond above
    /// the floor's share of the debits still at risk ({ClearingBooks-spareBond}: cycles neither finalized nor
    /// vetoed; up to 8 settled ones are released first, more with {releaseSettledRisk}), so a bond can never
    /// leave while a debit could still be voided or covered from it, or a double listing remedied against it
    /// (audit4 A4-L1).
    function withdrawBond(
        address asset,
        uint256 amount,
        address to
    ) external onlyRole(DEFAULT_ADMIN_ROLE) nonReentrant {
        uint64 lockedUntil = _books.cycles[_books.lastCycleId].doubleListingDeadline;
        if (_books.openChallenges != 0 || block.timestamp <= lockedUntil) {
            revert BondInUse(_books.openChallenges, lockedUntil);
        }
        if (_books.totalRefundOwed[asset] != 0) revert RefundsOwed(asset, _books.totalRefundOwed[asset]);
        // Never the floor's share of cycles still counted (neither finalized nor vetoed): a default of such a
        // cycle may still be funded from it (audit4 A4-L1). Settled ones are released first, as for an owed refund.
        uint256 spare = ClearingBooks.spareBond(_books, asset);
        if (spare < amount) {
            CycleCommitLogic.releaseSettled(_books, CycleCommitLogic.MAX_RELEASES);
            spare = ClearingBooks.spareBond(_books, asset);
        }
        if (amount == 0 || amount > spare) revert BondTooSmall(asset, spare, amount);
        uint256 bond = _books.bondOf[asset];
        _books.bondOf[asset] = bond - amount;
        emit BondWithdrawn(asset, to, amount, bond - amount);
        ClearingBooks.send(asset, to, amount);
    }

    // ------------------------------------------------------------------------------- double listing

    /// @notice Proves that one guarantee was listed in the guarantees roots of two cycles, and remedies the
    /// later listing from the operator bond; anyone may call (the remedy always goes to the payer). Answers mark
    /// a guarantee as used, but a payer that accepted the earlier cycle without challenging could otherwise be
    /// charged for the same signed guarantee again: the operator's two commits are the evidence.
    /// @param firstCycleId The earlier cycle; `laterCycleId` the later one (strictly greater). Both must be
    /// committed, not vetoed and past their challenge window (neither can be vetoed afterwards, so the remedy
    /// cannot be undone by a veto refund), and the proof must come by the later cycle's
    /// `doubleListingDeadline`.
    /// @param first The leaf as listed in the earlier cycle; `later` as listed in the later one. Same guarantee
    /// id, payer and asset (recipient, amount and signature hash may differ: a variant listing is still the
    /// same signed request); neither a self-payment, nor without payer, nor of zero amount.
    /// @param firstProof StandardMerkleTree proof of `first` under the earlier cycle's guarantees root;
    /// `laterProof` of `later` under the later one's.
    /// @dev Remedy: `amount = min(first.amount, later.amount)` is taken from the `asset` bond and set aside for
    /// the payer ({payoutOf}; the payer pulls it with {withdrawPayout}, nothing is sent here); what the
    /// bond lacks is recorded in {refundOwed} and taken by {claimOwedRefund} / {withdrawPayout} once the bond is
    /// topped up (the bond cannot be withdrawn meanwhile). The later cycle's debts are left as committed (Core's books
    /// and the cycle's funding stay consistent); the refund gives the payer back what the duplicate cost it,
    /// whether it paid, was covered, or was a creditor whose credit the duplicate reduced. Each later listing is
    /// remedied once ({doubleListingProven}), whichever earlier listing proves it.
    function proveDoubleListing(
        uint256 firstCycleId,
        uint256 laterCycleId,
        GuaranteeLeaf calldata first,
        GuaranteeLeaf calldata later,
        bytes32[] calldata firstProof,
        bytes32[] calldata laterProof
    ) external nonReentrant {
        PayoutLogic.proveDoubleListing(
            _books,
            firstCycleId,
            laterCycleId,
            first,
            later,
            firstProof,
            laterProof
        );
    }

    /// @notice Takes what the bond can spare ({ClearingBooks-spareBond}: above the floor's share of the debits at
    /// risk) of `payer`'s owed refund in `asset` ({refundOwed}) and sets it aside for the payer ({payoutOf});
    /// anyone may call (a keeper can secure a payer's refund as soon as the bond is topped up). When the bond
    /// cannot spare all of it, up to 8 settled cycles are released from {bondAtRisk} first
    /// ({releaseSettledRisk}), so the refund never waits for a commit. Sends nothing.
    function claimOwedRefund(address asset, address payer) external nonReentrant {
        if (_coverOwed(asset, payer) == 0)
            revert NoRefundPayable(asset, payer, _books.refundOwed[asset][payer], _books.bondOf[asset]);
    }

    /// @notice Sends everything set aside for the caller in `asset` ({payoutOf}: claimed net credits, refunds of
    /// vetoed debts, double-listing refunds) to `to`, plus what the bond can now cover of its {refundOwed} (as
    /// {claimOwedRefund}, releasing settled cycles' risk first when the bond cannot spare it all). Only
    /// the account itself pulls its payout, to any address it names (a contract wallet that cannot receive ETH,
    /// or an address a token blocks, names another one).
    function withdrawPayout(address asset, address to) external nonReentrant {
        if (to == address(0)) revert InvalidRecipient(to);
        _coverOwed(asset, msg.sender);
        uint256 amount = _books.payoutOf[asset][msg.sender];
        if (amount == 0) revert NoPayout(asset, msg.sender);
        _books.payoutOf[asset][msg.sender] = 0;
        emit PayoutWithdrawn(asset, msg.sender, to, amount);
        ClearingBooks.send(asset, to, amount);
    }

    // ------------------------------------------------------------------------------------------ views

    /// @notice A committed cycle (all zero if not committed).
    function getCycle(uint256 cycleId) external view returns (Cycle memory) {
        return _books.cycles[cycleId];
    }

    /// @inheritdoc IClearingHouse
    function isVetoed(uint256 cycleId) external view returns (bool) {
        return _books.cycles[cycleId].vetoed;
    }

    /// @inheritdoc IClearingHouse
    function isSettled(uint256 cycleId) external view returns (bool) {
        Cycle storage c = _books.cycles[cycleId];
        return c.committedAt != 0 && !c.vetoed && block.timestamp > c.challengeDeadline;
    }

    /// @notice The dispute game of `debtor`'s debt in `asset` for cycle `cycleId` (its summary once revealed).
    function debtGameOf(
        uint256 cycleId,
        address asset,
        address debtor
    ) external view returns (DebtGame memory) {
        return _books.games[cycleId][asset][debtor];
    }

    /// @notice The state of position `index` of `debtor`'s tree in `asset` for cycle `cycleId`.
    function disputeOf(
        uint256 cycleId,
        address asset,
        address debtor,
        uint256 index
    ) external view returns (DisputeStatus) {
        return _books.disputes[cycleId][asset][debtor][index];
    }

    /// @notice What disputes removed from `recipient`'s credit in `asset` for cycle `cycleId` and is not
    /// returned yet (its claim pays that much less; the rest is recovered by {recoverDeduction}).
    function deductedOf(uint256 cycleId, address asset, address recipient) external view returns (uint256) {
        return _books.deducted[cycleId][asset][recipient];
    }

    /// @notice What is held for `debtor` in `asset` in cycle `cycleId` until {claimDebitRefund} (owed by the bond,
    /// or set aside from it, {refundSetAsideOf}; not paid into the cycle).
    function refundHeldOf(uint256 cycleId, address asset, address debtor) external view returns (uint256) {
        return _books.refundHeld[cycleId][asset][debtor];
    }

    /// @notice The part of {refundHeldOf} that the operator's own answer (a concession, a removal as not
    /// validated) refunded above the debit: taken from the spare bond at the answer and held ({heldLiquidity})
    /// until {claimDebitRefund} pays it or, in a vetoed cycle, returns it to the bond (audit3 A3-M2).
    function refundSetAsideOf(
        uint256 cycleId,
        address asset,
        address debtor
    ) external view returns (uint256) {
        return _books.refundSetAside[cycleId][asset][debtor];
    }

    /// @notice The debits of `asset` the bond floor counts: every cycle that may still draw on the bond (not
    /// vetoed and not finalized; released in cycle order by later commits, {releaseSettledRisk}, and
    /// {claimOwedRefund} / {withdrawPayout} when an owed refund needs it: audit3 A3-M1, A3-M3).
    function bondAtRisk(address asset) external view returns (uint256) {
        return _books.atRisk[asset];
    }

    /// @inheritdoc IClearingHouse
    function assetCredit(uint256 cycleId, address asset) external view returns (uint256) {
        return _books.cycleAssets[cycleId][asset].totalDebit;
    }

    /// @notice One asset of a committed cycle (all zero if not part of it).
    function getCycleAsset(uint256 cycleId, address asset) external view returns (CycleAsset memory) {
        return _books.cycleAssets[cycleId][asset];
    }

    /// @notice `debtor`'s net debit in `asset` for cycle `cycleId`.
    function debtOf(uint256 cycleId, address asset, address debtor) external view returns (Debt memory) {
        return _books.debts[cycleId][asset][debtor];
    }

    /// @notice Whether `participant` has claimed its credit in `asset` for cycle `cycleId`.
    function isCreditClaimed(
        uint256 cycleId,
        address asset,
        address participant
    ) external view returns (bool) {
        return _books.claimed[cycleId][asset][participant];
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

    /// @notice The StandardMerkleTree leaf hash of a guarantee in a cycle's guarantees root.
    function guaranteeLeafHash(
        bytes32 guaranteeId,
        address payer,
        address recipient,
        address asset,
        uint256 amount,
        bytes32 signatureHash
    ) public pure returns (bytes32) {
        return GuaranteeLeafHash.hash(guaranteeId, payer, recipient, asset, amount, signatureHash);
    }

    /// @notice Id of the last committed cycle (0 before the first; ids go 1, 2, 3, ...).
    function lastCycleId() external view returns (uint256) {
        return _books.lastCycleId;
    }

    /// @notice Liquidity this contract holds for unclaimed credits and for refunds set aside from the bond
    /// ({refundSetAsideOf}), per asset.
    function heldLiquidity(address asset) external view returns (uint256) {
        return _books.heldLiquidity[asset];
    }

    /// @notice The operator bond per asset: what voided debits are charged to.
    function bondOf(address asset) external view returns (uint256) {
        return _books.bondOf[asset];
    }

    /// @notice Unanswered challenges over all cycles (the bond cannot be withdrawn while any is open).
    function openChallenges() external view returns (uint256) {
        return _books.openChallenges;
    }

    /// @notice Bond floor: a commit is refused unless, for each of its assets, the bond in that asset is at least
    /// `bondAtRisk * bondFloorBps / BPS`, where {bondAtRisk} counts this cycle's total debit and those of every
    /// earlier cycle neither finalized nor vetoed (each of those debits can still be voided against the bond, or
    /// its default funded from it). 0 (the default) switches the check off; at most {BPS} (full cover).
    /// That share of the bond is kept for those debits: refunds the bond owes beyond them (above a debit, double
    /// listings, unanswered credit disputes) are paid only from what it holds above it, else owed.
    function bondFloorBps() external view returns (uint16) {
        return _books.bondFloorBps;
    }

    /// @notice The cycle whose dispute answer used the guarantee `guaranteeId` (0: none). A signed
    /// guarantee justifies at most one challenged debit, ever (answers in a vetoed cycle do not count).
    function answeredIn(bytes32 guaranteeId) external view returns (uint256 cycleId) {
        return _books.answeredIn[guaranteeId];
    }

    /// @notice Whether guarantee `guaranteeId`'s listing in cycle `laterCycleId` was proven a double listing
    /// (each later listing is remedied once, whichever earlier listing proved it).
    function doubleListingProven(bytes32 guaranteeId, uint256 laterCycleId) external view returns (bool) {
        return _books.doubleListingProven[guaranteeId][laterCycleId];
    }

    /// @notice Refunds owed to `payer` in `asset` that the bond could not spare yet (double listings, unanswered
    /// credit disputes, refunds above a debit; {claimOwedRefund} or {withdrawPayout} take them from the bond
    /// once it is topped up above its floor's share).
    function refundOwed(address asset, address payer) external view returns (uint256) {
        return _books.refundOwed[asset][payer];
    }

    /// @notice What is set aside for `account` in `asset`, all sources in one balance: net credits claimed
    /// ({claimNetCredit}), paid debts of vetoed cycles refunded ({releaseVetoedDebt}) and double-listing
    /// refunds taken from the bond ({proveDoubleListing}, {claimOwedRefund}). Only `account` pulls it, with
    /// {withdrawPayout}, to any address it names: pull payments, so a recipient wallet that rejects ETH (or a
    /// token that blocks it) cannot make the call that credits it revert, and nobody else's call depends on it.
    function payoutOf(address asset, address account) external view returns (uint256) {
        return _books.payoutOf[asset][account];
    }

    /// @notice Sum of {refundOwed} over payers plus the refunds above a debit held and not settled yet
    /// ({refundHeldOf}) less their parts already set aside from the bond ({refundSetAsideOf}), per asset (no bond
    /// is withdrawn while it is not zero).
    function totalRefundOwed(address asset) external view returns (uint256) {
        return _books.totalRefundOwed[asset];
    }

    // -------------------------------------------------------------------------------------- internals

    /// @dev Moves what the bond can of `payer`'s owed refund in `asset` into {payoutOf}; returns the amount
    /// (no event when zero). Nothing owed (the usual case of {withdrawPayout}) costs one slot read.
    function _coverOwed(address asset, address payer) private returns (uint256 amount) {
        uint256 owed = _books.refundOwed[asset][payer];
        if (owed == 0) return 0;
        uint256 spare = ClearingBooks.spareBond(_books, asset);
        if (spare < owed) {
            // The floor's share may still count cycles that have settled since the last commit (audit3 A3-M3).
            CycleCommitLogic.releaseSettled(_books, CycleCommitLogic.MAX_RELEASES);
            spare = ClearingBooks.spareBond(_books, asset);
        }
        amount = owed < spare ? owed : spare;
        if (amount == 0) return 0;
        _books.bondOf[asset] -= amount;
        _books.refundOwed[asset][payer] = owed - amount;
        _books.totalRefundOwed[asset] -= amount;
        _books.payoutOf[asset][payer] += amount;
        emit OwedRefundPaid(asset, payer, amount, owed - amount);
    }

    /// @dev A debt that may be paid or covered: open or answered, in a cycle that was not vetoed.
    function _payableDebt(
        uint256 cycleId,
        address asset,
        address debtor
    ) private view returns (Debt storage debt) {
        debt = _books.debts[cycleId][asset][debtor];
        DebtStatus status = debt.status;
        if (status == DebtStatus.None) revert NoDebt(cycleId, asset, debtor);
        if (_books.cycles[cycleId].vetoed) revert CycleIsVetoed(cycleId);
        if (status != DebtStatus.Open && status != DebtStatus.Answered) {
            revert DebtAlreadyResolved(cycleId, asset, debtor, status);
        }
    }

    /// @dev What this contract holds of `asset` (ETH or token balance).
    function _holdings(address asset) private view returns (uint256) {
        return asset == ETH ? address(this).balance : IERC20(asset).balanceOf(address(this));
    }

    /// @dev OPERATOR_ROLE commits cycles (obligations on payers' collateral) and GUARDIAN_ROLE vetoes them
    /// (each veto releases obligations after the grace period): both grants are timelocked.
    /// @dev Reverts {AnswerWindowExtended} past the committed answer deadline of `cycleId` while an operator
    /// key change extends it (`Vault.answerDeadlineAfterKeyGap`); before it DisputeLogic says `AnswerWindowOpen`.
    /// Returns the answer deadline after the key gap (the committed one until it has passed, or if vetoed).
    function _checkKeyGap(uint256 cycleId) private view returns (uint256 until) {
        Cycle storage cycle = _books.cycles[cycleId];
        until = cycle.answerDeadline;
        // A vetoed cycle is DisputeLogic's to refuse (`CycleIsVetoed`), whatever the key.
        if (block.timestamp <= until || cycle.vetoed) return until;
        until = vault.answerDeadlineAfterKeyGap(until);
        if (block.timestamp <= until) revert AnswerWindowExtended(cycleId, until);
    }

    function _isTimelockedRole(bytes32 role) internal pure override returns (bool) {
        return role == OPERATOR_ROLE || role == GUARDIAN_ROLE;
    }
}
