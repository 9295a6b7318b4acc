// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";

import {IGuaranteeErrors} from "./IGuaranteeErrors.sol";
import {GuaranteeSignature} from "../lib/GuaranteeSignature.sol";
import {SumTree} from "../lib/SumTree.sol";

/// @title IClearingHouse
/// @notice The ClearingHouse's records, events and errors: committed cycles and their debts, settlement
/// (payment, default cover, credit claims, payouts), the challenge game, the guardian's veto, double
/// listings and the operator bond. Its logic library ({CycleCommitLogic}) emits and
/// revert with these declarations, so one ABI decodes every ClearingHouse log and revert.
interface IClearingHouse is IGuaranteeErrors {
    /// @notice Per-asset totals of a cycle; netting makes them equal.
    struct AssetTotal {
        address asset;
        uint256 totalDebit;
        uint256 totalCredit;
    }

    /// @notice The roots a cycle is committed with.
    /// @param root StandardMerkleTree root over the cycle's net positions (what creditors claim with).
    /// @param guaranteesRoot StandardMerkleTree root over the cycle's guarantees (what double listings and V1
    /// reserves are proven against).
    /// @param debitsRoot Root over the accounts' summaries (each account's outgoing and incoming sum trees in one
    /// asset; per asset a sum tree of their net credits, CreditCheck): what claims and disputes prove against.
    struct CycleRoots {
        bytes32 root;
        bytes32 guaranteesRoot;
        bytes32 debitsRoot;
    }

    /// @notice State of a debtor's net debit in a cycle.
    /// @dev Open → Paid | Covered | Challenged (a dispute of one of its guarantees is open); Challenged →
    /// Answered (every dispute resolved, something still owed) | Voided (nothing left owed, or a dispute left
    /// unanswered past the answer deadline); Answered → Paid | Covered | Challenged (another dispute, inside the
    /// challenge window). In a vetoed cycle, any unresolved debt → Voided and a paid one → Refunded.
    enum DebtStatus {
        None,
        Open,
        Paid,
        Covered,
        Challenged,
        Answered,
        Voided,
        Refunded
    }

    /// @notice A committed cycle.
    struct Cycle {
        bytes32 root;
        bytes32 guaranteesRoot;
        bytes32 debitsRoot;
        uint64 committedAt;
        uint64 challengeDeadline;
        uint64 answerDeadline;
        uint64 paymentDeadline;
        uint64 defaultDeadline;
        uint32 openDebts;
        uint32 openChallenges;
        bool finalized;
        bool vetoed;
        uint64 doubleListingDeadline; // packed into the slot of defaultDeadline..vetoed (no extra write)
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

    /// @notice State of one disputed position of a debtor's tree in a cycle.
    /// @dev Open → Upheld (the operator proved the guarantee) | Voided (the operator could not or did not
    /// prove it: its amount is taken off the debit, the bond pays) | Removed (the guarantee was already paid to
    /// its recipient, or its V2 validation did not pass: taken off the debit and off the recipient's credit)
    /// | Dismissed (the position is empty).
    enum DisputeStatus {
        None,
        Open,
        Upheld,
        Voided,
        Removed,
        Dismissed
    }

    /// @notice An account's summary in a cycle's `debitsRoot` for one asset: the root, total and depth of its
    /// sum tree of outgoing guarantees (`sumRoot`, `total`, `depth`; all zero without any) and of its sum tree of
    /// incoming guarantees (`inRoot`, `inTotal`, `inDepth`; all zero without any), both SumTrees over the same
    /// guarantee leaves ordered by guarantee id. Its net position is `inTotal - total`: a debit when negative
    /// (at most what the commit recorded), a credit when positive (what {claimNetCredit} pays).
    struct DebitSummary {
        bytes32 sumRoot;
        uint256 total;
        uint256 depth;
        bytes32 inRoot;
        uint256 inTotal;
        uint256 inDepth;
    }

    /// @notice Where a guarantee sits in its recipient's incoming tree: the recipient's summary, proven by
    /// `summaryProof` under the cycle's `debitsRoot`, and the position `index` with its sum-tree `path` (leaf level
    /// first) under the summary's `inRoot`. What binds a listing to the credit it pays ({answerDispute},
    /// `Vault.releaseListedReserve`).
    struct CreditProof {
        DebitSummary summary;
        bytes32[] summaryProof;
        uint256 index;
        SumTree.Node[] path;
    }

    /// @notice The dispute game of one account's outgoing tree (a debtor's, or a creditor's since issue 25
    /// item 5): its summary once revealed ({revealSummary} or the first answer), its open disputes, and the
    /// sum of the positions answered so far (`settled`: upheld, removed, conceded or empty).
    struct DebtGame {
        bytes32 sumRoot;
        uint128 total;
        uint8 depth;
        bool revealed;
        uint32 openDisputes;
        uint128 inTotal;
        uint128 settled;
    }

    /// @notice The operator's answer to a disputed position of a debtor's tree.
    /// @param summary The debtor's summary, proven by `summaryProof` under the cycle's `debitsRoot` (ignored
    /// once a previous answer revealed it).
    /// @param leaf The node at the disputed position (`(0, 0)` for an empty one) and `path` its sum-tree proof.
    /// @param claims The guarantee's certificate claims (every signed field); empty to concede the position.
    /// @param certificate Core's BLS certificate over `claims`.
    /// @param scheme How the payer signed; `signature` the payer's signature (its keccak256 is the leaf's
    /// signature hash).
    /// @param finalization For a V2 guarantee without a passing verdict: the payer's EIP-712 signature of
    /// `Finalization(bytes32 guaranteeId)` (it finalized the payment off chain, waiving validation); empty
    /// otherwise (docs/clearing.md "Payer-finalized V2 guarantees").
    /// @param credit The same node in the guarantee recipient's incoming tree (ignored for a concession or an
    /// empty position): a listing stands only if it is credited to its own recipient.
    struct DisputeAnswer {
        DebitSummary summary;
        bytes32[] summaryProof;
        SumTree.Node leaf;
        SumTree.Node[] path;
        bytes claims;
        BLS.G1Point certificate;
        GuaranteeSignature.Scheme scheme;
        bytes signature;
        bytes finalization;
        CreditProof credit;
    }

    /// @notice A recipient's credit dispute of one guarantee of a cycle ({ClearingHouse-disputeCredit}):
    /// None → Open → Answered (the operator proved it in the recipient's incoming tree) | Paid (unanswered by the
    /// answer deadline: the bond paid the recipient) | Lapsed (unanswered, but the guarantee was paid to its
    /// recipient outside the cycle meanwhile: nothing to pay). A veto ends every dispute of the cycle.
    enum CreditDisputeStatus {
        None,
        Open,
        Answered,
        Paid,
        Lapsed
    }

    /// @notice A recipient's proof that its guarantee is listed in a cycle ({ClearingHouse-disputeCredit}): the
    /// guarantee's certificate (as a {DisputeAnswer} carries it) and its position in its payer's outgoing tree.
    /// @param summary The payer's summary in the asset, proven by `summaryProof` under the cycle's `debitsRoot`.
    /// @param index The guarantee's position in the payer's outgoing sum tree, `path` its sum-tree proof (leaf
    /// level first; `summary.depth` siblings) to `summary.sumRoot`.
    /// @param claims The guarantee's certificate claims; `certificate` Core's BLS signature over them.
    /// @param scheme How the payer signed; `signature` the payer's signature (its keccak256 is the leaf's
    /// signature hash).
    /// @param finalization For a V2 guarantee without a passing verdict, the payer's finalization signature;
    /// empty otherwise.
    struct ListedGuarantee {
        DebitSummary summary;
        bytes32[] summaryProof;
        uint256 index;
        SumTree.Node[] path;
        bytes claims;
        BLS.G1Point certificate;
        GuaranteeSignature.Scheme scheme;
        bytes signature;
        bytes finalization;
    }

    /// @notice A recipient's credit dispute as recorded: the guarantee's leaf hash, recipient, asset, amount
    /// and status.
    struct CreditDispute {
        bytes32 leaf;
        address recipient;
        address asset;
        uint128 amount;
        CreditDisputeStatus status;
    }

    /// @notice One leaf of a cycle's guarantees root (the fields `guaranteeLeafHash` hashes).
    struct GuaranteeLeaf {
        bytes32 guaranteeId;
        address payer;
        address recipient;
        address asset;
        uint256 amount;
        bytes32 signatureHash;
    }

    /// @notice Cycle `cycleId` was committed with Merkle root `root`; `nettedV2Count` V2 ids were newly marked
    /// consumed (listed ids already consumed were skipped, see the Vault's `GuaranteeNettingSkipped`).
    event CycleCommitted(
        uint256 indexed cycleId,
        bytes32 root,
        uint64 paymentDeadline,
        uint64 defaultDeadline,
        uint256 assetCount,
        uint256 debtorCount,
        uint256 nettedV2Count
    );
    /// @notice Cycle `cycleId` carries the guarantees root `guaranteesRoot` and the debtors' summaries
    /// `debitsRoot`; guarantees can be disputed (and the cycle vetoed) until `challengeDeadline`, disputes
    /// answered until `answerDeadline`.
    event CycleChallengeWindow(
        uint256 indexed cycleId,
        bytes32 guaranteesRoot,
        bytes32 debitsRoot,
        uint64 challengeDeadline,
        uint64 answerDeadline
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
    /// @notice The part `amount` of `debtor`'s covered debit its collateral lacked was funded from the `asset`
    /// bond (a debit committed beyond the debtor's collateral is the operator's fault).
    event DefaultFundedFromBond(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed debtor,
        uint256 amount
    );
    /// @notice `participant`'s net credit `amount` was claimed and set aside for it ({payoutOf}).
    event NetCreditClaimed(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed participant,
        uint256 amount
    );
    /// @notice Every debtor of cycle `cycleId` is resolved (paid, covered or voided).
    event CycleFinalized(uint256 indexed cycleId);
    /// @notice `debtor` disputed the guarantee at position `index` of its tree for `asset` in cycle `cycleId`.
    event GuaranteeDisputed(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed debtor,
        uint256 index
    );
    /// @notice The operator revealed `debtor`'s summary for `asset` in cycle `cycleId` (first answer of a debt).
    event DebitSummaryRevealed(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed debtor,
        bytes32 sumRoot,
        uint256 total,
        uint256 depth
    );
    /// @notice The dispute of position `index` ended as `outcome`; the position holds `guaranteeId` (zero when
    /// conceded or empty) of `amount`.
    event DisputeResolved(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed debtor,
        uint256 index,
        DisputeStatus outcome,
        bytes32 guaranteeId,
        uint256 amount
    );
    /// @notice `recipient` (or someone on its behalf) disputes that guarantee `guaranteeId` of `amount`, listed in
    /// `payer`'s outgoing tree of cycle `cycleId`, is credited to it ({ClearingHouse-disputeCredit}).
    event CreditDisputed(
        uint256 indexed cycleId,
        bytes32 indexed guaranteeId,
        address indexed recipient,
        address payer,
        address asset,
        uint256 amount
    );
    /// @notice The credit dispute of `guaranteeId` in cycle `cycleId` ended as `outcome` (Answered, Paid, Lapsed);
    /// Paid: `paid` set aside for the recipient from the bond ({payoutOf}) and `owed` recorded as owed
    /// ({refundOwed}) where the bond lacked it.
    event CreditDisputeResolved(
        uint256 indexed cycleId,
        bytes32 indexed guaranteeId,
        CreditDisputeStatus outcome,
        uint256 paid,
        uint256 owed
    );
    /// @notice `amount` was taken off `debtor`'s debit (an unproven or already-paid guarantee, or a debit above
    /// its revealed total); `fromBond` of it was paid into the cycle from the bond (the rest is shortfall), and
    /// `refunded` (a removed or conceded guarantee larger than what was left of the debit: the debtor's incoming
    /// payments) is held for the debtor, never paid into the cycle (`claimDebitRefund` once the cycle's disputes
    /// are closed; a veto cancels it): set aside from the bond at once when the operator's own answer (a
    /// concession, a removal as not validated) refunds it ({ClearingHouse-refundSetAsideOf}; audit3 A3-M2),
    /// otherwise owed by the bond.
    event DebitReduced(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed debtor,
        uint256 amount,
        uint256 fromBond,
        uint256 refunded
    );
    /// @notice `recipient` owes `amount` back in cycle `cycleId`: guarantee `guaranteeId` listed to it was
    /// already paid to it (or failed its V2 validation). The amount is locked on its Vault collateral; its
    /// claim pays that much less and returns it to the bond (releasing the lock), and what no claim returned is
    /// recovered from its collateral after the payment deadline (`recoverDeduction`).
    event CreditDeducted(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed recipient,
        bytes32 guaranteeId,
        uint256 amount
    );
    /// @notice `debtor`'s summary was revealed, `disputes` of its positions were still open after the payment
    /// deadline and nobody proved them: every position not answered yet (`amount`, the revealed total minus
    /// what answers and proven voids settled) was conceded at once ({ClearingHouse-voidUnansweredDebit}); the
    /// rest of the debit stays owed.
    event UnansweredConceded(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed debtor,
        uint256 amount,
        uint32 disputes
    );
    /// @notice A dispute left unanswered past the answer deadline voided `debtor`'s remaining debit `amount`; `fromBond` of it was paid into the
    /// cycle from the operator bond (the rest is shortfall).
    event DebitVoided(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed debtor,
        uint256 amount,
        uint256 fromBond
    );
    /// @notice `debtor`'s held refund of cycle `cycleId` (see {DebitReduced}) was settled from the bond: `paid` set
    /// aside for it ({payoutOf}: what was set aside at the answer, then what the spare bond holds), `owed` recorded
    /// as owed by the bond ({refundOwed}: the spare bond lacked it).
    event DebitRefundClaimed(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed debtor,
        uint256 paid,
        uint256 owed
    );
    /// @notice `debtor`'s held refund `amount` of vetoed cycle `cycleId` was cancelled (the re-commit credits the
    /// same incoming payments; audit M-3), and no longer counts in {totalRefundOwed}; what was set aside for it
    /// from the bond ({ClearingHouse-refundSetAsideOf}) went back to the bond.
    event DebitRefundCancelled(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed debtor,
        uint256 amount
    );
    /// @notice `amount` of `recipient`'s deductions in cycle `cycleId` was settled and its lock on the
    /// recipient's Vault collateral lifted: returned by its claim (`fromCollateral` 0: the credit paid it), taken
    /// from its collateral into the bond by `recoverDeduction` (`fromCollateral`: what arrived, all of it unless
    /// the collateral was short), or only unlocked in a vetoed cycle (`fromCollateral` 0).
    event DeductionRecovered(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed recipient,
        uint256 amount,
        uint256 fromCollateral
    );
    /// @notice The guardian vetoed cycle `cycleId`: nothing of it settles; its debts are released or refunded.
    event CycleVetoed(uint256 indexed cycleId, address indexed guardian);
    /// @notice What the bond had paid into vetoed cycle `cycleId` in `asset` (`amount`) went back to the bond.
    event VetoedBondReturned(uint256 indexed cycleId, address indexed asset, uint256 amount);
    /// @notice A debt `amount` of vetoed cycle `cycleId` was released (`refunded` when it had been paid: the
    /// payment was set aside for the debtor, {payoutOf}).
    event VetoedDebtReleased(
        uint256 indexed cycleId,
        address indexed asset,
        address indexed debtor,
        uint256 amount,
        bool refunded
    );
    /// @notice Guarantee `guaranteeId` of `payer` in `asset` was listed both in cycle `firstCycleId` and in the
    /// later cycle `laterCycleId`: the later listing is fraudulent and `amount` (the smaller listed amount) is
    /// refunded to the payer from the operator bond ({DoubleListingRefunded} follows).
    event DoubleListingProven(
        bytes32 indexed guaranteeId,
        address indexed payer,
        address indexed asset,
        uint256 firstCycleId,
        uint256 laterCycleId,
        uint256 amount
    );
    /// @notice For a proven double listing, `paid` of `asset` was taken from the operator bond and set aside for
    /// `payer` ({payoutOf}, pulled with {withdrawPayout}); `owed` more is recorded in {refundOwed} because
    /// the bond was short.
    event DoubleListingRefunded(address indexed asset, address indexed payer, uint256 paid, uint256 owed);
    /// @notice `amount` of `payer`'s owed refund in `asset` was taken from the bond and set aside for it
    /// ({payoutOf}); `stillOwed` remains owed.
    event OwedRefundPaid(address indexed asset, address indexed payer, uint256 amount, uint256 stillOwed);
    /// @notice `account` withdrew `amount` of `asset` set aside for it ({payoutOf}) to `to`.
    event PayoutWithdrawn(address indexed asset, address indexed account, address indexed to, uint256 amount);
    /// @notice The bond floor is now `bps` basis points of each committed cycle's total debit per asset.
    event BondFloorSet(uint16 bps);
    /// @notice Cycle `cycleId` can no longer draw on the bond (vetoed, or finalized: every debt paid, covered or
    /// voided): its total debits left {ClearingHouse-bondAtRisk} (audit3 A3-M1, A3-M3).
    event CycleRiskReleased(uint256 indexed cycleId);
    /// @notice `from` added `amount` of `asset` to the operator bond, now `bond`.
    event BondPosted(address indexed asset, address indexed from, uint256 amount, uint256 bond);
    /// @notice `amount` of the `asset` bond was withdrawn to `to`; `bond` remains.
    event BondWithdrawn(address indexed asset, address indexed to, uint256 amount, uint256 bond);

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
    /// @notice A commit of `debtors` debtors and `nettedV2Ids` V2 ids is over the per-transaction bound:
    /// `debtors + ceil(nettedV2Ids / 2)` must not exceed {ClearingHouse-MAX_DEBTORS_PER_COMMIT}.
    error CommitTooLarge(uint256 debtors, uint256 nettedV2Ids);
    /// @notice A commit of `assets` assets is over the per-transaction bound
    /// {ClearingHouse-MAX_ASSETS_PER_COMMIT} (each asset adds its own writes and a lookup per debtor: audit3
    /// A3-I1).
    error CommitTooManyAssets(uint256 assets);
    /// @notice Cycle `cycleId` has not been committed.
    error UnknownCycle(uint256 cycleId);
    /// @notice `debtor` owes nothing in `asset` in cycle `cycleId`.
    error NoDebt(uint256 cycleId, address asset, address debtor);
    /// @notice `debtor`'s debt in `asset` in cycle `cycleId` is `status`, which does not allow this call.
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
    /// @notice Cycle `cycleId` was vetoed: nothing of it can be paid, covered, claimed or challenged.
    error CycleIsVetoed(uint256 cycleId);
    /// @notice Cycle `cycleId` was not vetoed.
    error CycleNotVetoed(uint256 cycleId);
    /// @notice The challenge window of cycle `cycleId` closed at `challengeDeadline`.
    error ChallengeWindowClosed(uint256 cycleId, uint64 challengeDeadline);
    /// @notice Claims of cycle `cycleId` open only after its challenge deadline `challengeDeadline`.
    error ChallengeWindowOpen(uint256 cycleId, uint64 challengeDeadline);
    /// @notice The answer window of cycle `cycleId` closed at `answerDeadline`.
    error AnswerWindowClosed(uint256 cycleId, uint64 answerDeadline);
    /// @notice An unanswered challenge of cycle `cycleId` can be voided only after `answerDeadline`.
    error AnswerWindowOpen(uint256 cycleId, uint64 answerDeadline);
    /// @notice The answer window of cycle `cycleId` was extended to `answerDeadline` by a change or revocation
    /// of the operator key (`Vault.answerDeadlineAfterKeyGap`): an unanswered challenge is voided only after it.
    error AnswerWindowExtended(uint256 cycleId, uint256 answerDeadline);
    /// @notice Guarantee `guaranteeId` already answered a dispute in cycle `cycleId`.
    error GuaranteeAlreadyUsed(bytes32 guaranteeId, uint256 cycleId);
    /// @notice Position `index` of `debtor`'s tree for `asset` in cycle `cycleId` is `status`, which does not
    /// allow this call (a position is disputed once).
    error DisputeNotOpen(uint256 cycleId, address asset, address debtor, uint256 index, DisputeStatus status);
    /// @notice Only the operator (`OPERATOR_ROLE`) may concede a position (answer with empty claims); `caller`
    /// is not it.
    error ConcessionNotAllowed(address caller);
    /// @notice The operator's own answer (a concession, or a removal as not validated) of a position of
    /// `debtor`'s tree in `asset` for cycle `cycleId` would refund `refund` above what is left of the debit, and
    /// the bond can spare only `spare` ({ClearingBooks-spareBond}): such a refund is set aside from the bond at
    /// the answer, so a stolen operator key can never make the bond owe more than it holds (audit3 A3-M2). Top
    /// the bond up, or answer with the evidence; left open, the position is conceded after the answer deadline
    /// ({ClearingHouse-voidUnansweredPosition}) and its refund owed by the bond.
    error RefundAboveSpareBond(uint256 cycleId, address asset, address debtor, uint256 refund, uint256 spare);
    /// @notice Only the operator (`OPERATOR_ROLE`) may answer a position `Removed` because its V2 guarantee
    /// `guaranteeId` is not validated (no passing verdict and no payer `Finalization` in the answer): anyone
    /// else could strip the optional finalization from an honest answer (audit H-1). `caller` is not it; the
    /// dispute stays open.
    error RemovalNotAllowed(address caller, bytes32 guaranteeId);
    /// @notice Position `index` is past the end of `account`'s revealed tree (`2^depth` positions): nothing can
    /// be listed there, so it cannot be disputed (audit M-1).
    error PositionPastTreeEnd(uint256 cycleId, address asset, address account, uint256 index, uint8 depth);
    /// @notice `account`'s summary in `asset` for cycle `cycleId` is not revealed ({ClearingHouse-revealSummary}).
    error SummaryNotRevealed(uint256 cycleId, address asset, address account);
    /// @notice The summary is not `debtor`'s leaf under the cycle's `debitsRoot`.
    error InvalidDebitSummary(uint256 cycleId, address asset, address debtor);
    /// @notice The node and path do not lead to position `index` of the debtor's revealed tree.
    error LeafNotInTree(uint256 index);
    /// @notice The guarantee is not at the given position of `recipient`'s incoming tree in cycle `cycleId`
    /// (or the summary is not `recipient`'s): the listing is not credited to its recipient.
    error NotCreditedToRecipient(uint256 cycleId, address recipient, bytes32 guaranteeId);
    /// @notice `account`'s summary for `asset` in cycle `cycleId` was already revealed with other values.
    error SummaryMismatch(uint256 cycleId, address asset, address account);
    /// @notice `account`'s summary may no longer be revealed: its debt is paid, covered or voided (or the cycle
    /// vetoed).
    error SummaryNotRevealable(uint256 cycleId, address asset, address account);
    /// @notice The answer's claims and signature are not the guarantee at the disputed position.
    error AnswerLeafMismatch(bytes32 guaranteeId);
    /// @notice The credit dispute of `guaranteeId` in cycle `cycleId` is not open (`status`: None, or already
    /// disputed and resolved; a guarantee is disputed once per cycle).
    error CreditDisputeNotOpen(uint256 cycleId, bytes32 guaranteeId, CreditDisputeStatus status);
    /// @notice Guarantee `guaranteeId` is not owed to its recipient by the cycle: already paid on chain
    /// (remunerated, collected, or by the bond after a credit dispute) or its V2 validation did not pass.
    error CreditNotOwed(bytes32 guaranteeId);
    /// @notice Claims and held refunds of cycle `cycleId` wait for its open disputes, at most until
    /// `answerDeadline` (the committed one, or later while an operator key change extends it).
    error DisputesOpen(uint256 cycleId, uint64 answerDeadline);
    /// @notice The unpaid debts of vetoed cycle `cycleId` stay locked until `releasableAt` (the grace period
    /// after its commit), so that a veto never lets a payer withdraw before the re-commit.
    error VetoedDebtLocked(uint256 cycleId, uint64 releasableAt);
    /// @notice The amount is zero.
    error ZeroAmount();
    /// @notice `bond` can be withdrawn (the bond above the floor's share of the debits at risk); `amount` cannot.
    error BondTooSmall(address asset, uint256 bond, uint256 amount);
    /// @notice The bond can be withdrawn only when no challenge is open and the last cycle's double-listing
    /// deadline (`lockedUntil`, the latest) has passed.
    error BondInUse(uint256 openChallenges, uint64 lockedUntil);
    /// @notice `owed` of `asset` is owed by the bond ({totalRefundOwed}: refunds owed or held): it pays them first.
    error RefundsOwed(address asset, uint256 owed);
    /// @notice A double-listing proof needs two different cycles, the earlier first: `firstCycleId` <
    /// `laterCycleId`.
    error ListingsNotOrdered(uint256 firstCycleId, uint256 laterCycleId);
    /// @notice The two listings are not of the same guarantee of the same payer in the same asset.
    error ListingsDiffer(bytes32 firstGuaranteeId, bytes32 laterGuaranteeId);
    /// @notice Guarantee `guaranteeId`'s listing charges no one (a self-payment, no payer, or a zero amount):
    /// listing it twice harms nobody.
    error UnchargedListing(bytes32 guaranteeId);
    /// @notice The proof does not show guarantee `guaranteeId`'s leaf under the guarantees root of `cycleId`.
    error ListingNotInCycle(bytes32 guaranteeId, uint256 cycleId);
    /// @notice Double listings of cycle `cycleId` could be proven until `doubleListingDeadline`.
    error DoubleListingProofClosed(uint256 cycleId, uint64 doubleListingDeadline);
    /// @notice Guarantee `guaranteeId`'s listing in cycle `laterCycleId` was already proven double.
    error DoubleListingAlreadyProven(bytes32 guaranteeId, uint256 laterCycleId);
    /// @notice Nothing is owed to `payer` in `asset`, or the bond (`bond`) has none to spare yet (all of it is
    /// the floor's share of the debits at risk, {ClearingHouse-bondFloorBps}).
    error NoRefundPayable(address asset, address payer, uint256 owed, uint256 bond);
    /// @notice No refund is held for `debtor` in `asset` in cycle `cycleId`.
    error NoRefundHeld(uint256 cycleId, address asset, address debtor);
    /// @notice Nothing deducted from `recipient` in `asset` in cycle `cycleId` is left to recover.
    error NoDeduction(uint256 cycleId, address asset, address recipient);
    /// @notice `to` is the zero address.
    error InvalidRecipient(address to);
    /// @notice Nothing is set aside for `account` in `asset` ({payoutOf}), nor coverable of an owed refund.
    error NoPayout(address asset, address account);
    /// @notice The `asset` bond `bond` is below the floor `floor` the cycle's total debit requires ({bondFloorBps}).
    error BondBelowFloor(address asset, uint256 bond, uint256 floor);
    /// @notice `bps` exceeds {BPS}.
    error BondFloorTooHigh(uint16 bps);
    /// @notice {ClearingHouse-releaseSettledRisk} released nothing: cycle `cycleId`, the oldest still counted in
    /// {ClearingHouse-bondAtRisk}, is neither vetoed nor finalized (or no cycle is counted: `lastCycleId + 1`).
    error NoSettledRisk(uint256 cycleId);

    /// @notice A committed cycle (all zero if not committed).
    function getCycle(uint256 cycleId) external view returns (Cycle memory);

    /// @notice Cycle `cycleId`'s committed total credit in `asset` (= its total debit; 0 if the commit did not list
    /// the asset): what the net credits of its summaries in that asset must add up to for any of them to prove.
    function assetCredit(uint256 cycleId, address asset) external view returns (uint256);

    /// @notice Whether cycle `cycleId` was vetoed (a Vault mark made by its commit then takes no effect).
    function isVetoed(uint256 cycleId) external view returns (bool);

    /// @notice Whether cycle `cycleId` is committed, not vetoed and past its challenge deadline (no veto can
    /// undo it any more).
    function isSettled(uint256 cycleId) external view returns (bool);
}
