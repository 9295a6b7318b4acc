// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";

import {IClearingHouse} from "../interfaces/IClearingHouse.sol";
import {IClearingVault} from "../interfaces/IClearingVault.sol";
import {IGuaranteeVerifier} from "../interfaces/IGuaranteeVerifier.sol";
import {IVault} from "../interfaces/IVault.sol";
import {CertificateCodec} from "../lib/CertificateCodec.sol";
import {CreditCheck} from "../lib/CreditCheck.sol";
import {GuaranteeLeaf} from "../lib/GuaranteeLeaf.sol";
import {GuaranteeSignature} from "../lib/GuaranteeSignature.sol";
import {VaultCertificates} from "./VaultCertificates.sol";
import {VaultLedger} from "./VaultLedger.sol";

/// @title ReserveLogic
/// @notice The seller's reserve: registering a certificate (V1 or V2) so that its amount of the payer's
/// collateral can no longer be withdrawn, and releasing a V1 reserve whose guarantee is proven listed in a
/// settled cycle, collecting a V1 reserve Core did not clear in time, and releasing a reserve whose guarantee
/// was consumed or whose term ended. An external library the Vault delegates to (its books, its events).
library ReserveLogic {
    /// @notice See {IVault-registerReserve}; `books`, `timings` and `authority` are the Vault's.
    function registerReserve(
        VaultLedger.Books storage books,
        IClearingVault.Timings storage timings,
        VaultCertificates.Authority memory authority,
        bytes calldata claims,
        BLS.G1Point calldata signature,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    ) external {
        if (VaultCertificates.isV1(claims)) {
            IGuaranteeVerifier.V1Guarantee memory g = authority.verifier.verifyV1(
                address(this),
                authority.separator,
                authority.key,
                claims,
                signature,
                payerScheme,
                payerSignature
            );
            // A live Core's commit of the guarantee's cycle lands by `registerBy`; from `collectableAt` that
            // cycle is past its challenge window and a listing has had one more window to be proven.
            IClearingVault.Timings memory t = timings;
            uint64 registerBy = g.timestamp + t.cycleLength + t.commitDelay + t.confirmationLag;
            uint64 collectableAt = registerBy + 2 * t.challengeWindow;
            _reserve(books, g.guaranteeId, g.user, g.asset, g.amount, registerBy, collectableAt);
            books.v1ReserveRecipient[g.guaranteeId] = g.recipient;
            emit IVault.V1ReserveRegistered(
                g.guaranteeId,
                g.user,
                g.recipient,
                g.asset,
                g.amount,
                collectableAt
            );
            return;
        }
        (
            CertificateCodec.CertificateClaims memory c,
            CertificateCodec.ValidationPolicy memory p
        ) = VaultCertificates.verifiedV2(authority, claims, signature, payerScheme, payerSignature);
        // After the deadline the verdict is final: the seller remunerates, or a live Core nets the guarantee
        // within the clearing path, which the grace period exceeds.
        uint64 expiresAt = p.deadline + timings.withdrawalGracePeriod;
        _reserve(books, c.guaranteeId, c.user, c.asset, c.amount, p.deadline, expiresAt);
        emit IVault.ReserveRegistered(c.guaranteeId, c.user, c.recipient, c.asset, c.amount, expiresAt);
    }

    /// @notice See {IVault-releaseListedReserve}; `clearingHouse` is the Vault's.
    function releaseListedReserve(
        VaultLedger.Books storage books,
        IClearingHouse clearingHouse,
        bytes32 guaranteeId,
        uint256 cycleId,
        bytes32 signatureHash,
        IClearingHouse.CreditProof calldata proof
    ) external {
        IVault.Reserve memory r = books.reserves[guaranteeId];
        address recipient = books.v1ReserveRecipient[guaranteeId];
        if (r.user == address(0) || recipient == address(0)) revert IVault.ReserveNotFound(guaranteeId);
        IClearingHouse.Cycle memory cycle = clearingHouse.getCycle(cycleId);
        // No veto can undo the listing any more once the cycle is past its challenge deadline.
        if (
            cycle.guaranteesRoot == bytes32(0) || cycle.vetoed || block.timestamp <= cycle.challengeDeadline
        ) {
            revert IVault.CycleNotSettled(cycleId, cycle.challengeDeadline);
        }
        bytes32 leaf = GuaranteeLeaf.hash(guaranteeId, r.user, recipient, r.asset, r.amount, signatureHash);
        // Credited to its own recipient (its incoming tree), not merely listed: issue 25, item 5.
        // The cycle's total credit in the asset: the summaries' credits must add up to it (0 if not listed).
        uint256 assetCredit = clearingHouse.assetCredit(cycleId, r.asset);
        if (
            !CreditCheck.isCredited(cycle.debitsRoot, assetCredit, recipient, r.asset, leaf, r.amount, proof)
        ) {
            revert IVault.GuaranteeNotListed(guaranteeId, cycleId);
        }
        if (VaultLedger.consumption(books, guaranteeId) == IClearingVault.Consumption.None) {
            books.marks[guaranteeId] = VaultLedger.Mark(IClearingVault.Consumption.Netted, 0);
            emit IVault.GuaranteeNetted(guaranteeId);
        }
        delete books.v1ReserveRecipient[guaranteeId];
        VaultLedger.release(books, guaranteeId, r, books.accounts[r.user][r.asset]);
    }

    /// @notice See {Vault-markListed}; `clearingHouse` is the Vault's.
    function markListed(
        VaultLedger.Books storage books,
        IClearingHouse clearingHouse,
        uint256 cycleId,
        bytes calldata claims,
        bytes32 signatureHash,
        IClearingHouse.CreditProof calldata proof
    ) external {
        (CertificateCodec.CertificateClaims memory c, ) = VaultCertificates.decodedV2(claims);
        bytes32 id = c.guaranteeId;
        IClearingHouse.Cycle memory cycle = clearingHouse.getCycle(cycleId);
        bytes32 leaf = GuaranteeLeaf.hash(id, c.user, c.recipient, c.asset, c.amount, signatureHash);
        // Credited to its own recipient in a committed cycle not vetoed, and not removed from that credit by an
        // answer: that cycle's claim pays it. A veto later undoes the mark (it carries the cycle id), as it
        // undoes a commit's; so does a `Removed` answer of the listing (audit3 A3-L2).
        if (
            books.removedFrom[id][cycleId] ||
            cycle.guaranteesRoot == bytes32(0) ||
            cycle.vetoed ||
            !CreditCheck.isCredited(
                cycle.debitsRoot,
                clearingHouse.assetCredit(cycleId, c.asset),
                c.recipient,
                c.asset,
                leaf,
                c.amount,
                proof
            )
        ) revert IVault.GuaranteeNotListed(id, cycleId);
        IClearingVault.Consumption how = VaultLedger.consumption(books, id);
        if (how != IClearingVault.Consumption.None) revert IVault.GuaranteeAlreadyConsumed(id, how);
        books.marks[id] = VaultLedger.Mark(IClearingVault.Consumption.Netted, SafeCast.toUint64(cycleId));
        emit IVault.GuaranteeNetted(id);
    }

    /// @notice See {IVault-collectReserve}.
    function collectReserve(VaultLedger.Books storage books, bytes32 guaranteeId) external {
        IVault.Reserve memory r = books.reserves[guaranteeId];
        address recipient = books.v1ReserveRecipient[guaranteeId];
        if (r.user == address(0) || recipient == address(0)) revert IVault.ReserveNotFound(guaranteeId);
        // A netting mark alone does not stop the collection: only a proof that the guarantee is credited to
        // its recipient does ({releaseListedReserve} ends the reserve; issue 25, item 5).
        IClearingVault.Consumption how = VaultLedger.consumption(books, guaranteeId);
        if (how == IClearingVault.Consumption.Remunerated)
            revert IVault.GuaranteeAlreadyConsumed(guaranteeId, how);
        if (block.timestamp < r.expiresAt) revert IVault.ReserveNotYetCollectable(guaranteeId, r.expiresAt);

        books.marks[guaranteeId] = VaultLedger.Mark(IClearingVault.Consumption.Remunerated, 0);
        delete books.v1ReserveRecipient[guaranteeId];
        VaultLedger.Account storage account = books.accounts[r.user][r.asset];
        VaultLedger.release(books, guaranteeId, r, account);
        uint128 balance = account.balance;
        uint128 paid = r.amount < balance ? r.amount : balance;
        account.balance = balance - paid;
        emit IVault.GuaranteeRemunerated(guaranteeId, r.user, recipient, r.asset, paid);
        VaultLedger.send(r.asset, recipient, paid);
    }

    /// @notice See {IVault-releaseReserve}.
    function releaseReserve(VaultLedger.Books storage books, bytes32 guaranteeId) external {
        IVault.Reserve memory r = books.reserves[guaranteeId];
        if (r.user == address(0)) revert IVault.ReserveNotFound(guaranteeId);
        address recipient = books.v1ReserveRecipient[guaranteeId];
        // A netting mark frees a V2 reserve only once no veto can undo it; a V1 reserve only by a proof that
        // the guarantee is credited to its recipient ({releaseListedReserve}; issue 25, item 5).
        bool consumed = books.marks[guaranteeId].how == IClearingVault.Consumption.Remunerated ||
            (recipient == address(0) && VaultLedger.nettedForGood(books, guaranteeId));
        if (!consumed && (recipient != address(0) || block.timestamp < r.expiresAt))
            revert IVault.ReserveStillActive(guaranteeId, r.expiresAt);
        if (recipient != address(0)) delete books.v1ReserveRecipient[guaranteeId];
        VaultLedger.release(books, guaranteeId, r, books.accounts[r.user][r.asset]);
    }

    /// @dev Registers a reserve of `amount` of `user`'s free `asset` collateral for `guaranteeId` until
    /// `expiresAt`; checks, in order: not consumed, no reserve yet, non-zero amount, not after `registerBy`,
    /// free collateral.
    function _reserve(
        VaultLedger.Books storage books,
        bytes32 guaranteeId,
        address user,
        address asset,
        uint256 amount,
        uint64 registerBy,
        uint64 expiresAt
    ) private {
        IClearingVault.Consumption how = VaultLedger.consumption(books, guaranteeId);
        if (how != IClearingVault.Consumption.None) revert IVault.GuaranteeAlreadyConsumed(guaranteeId, how);
        if (books.reserves[guaranteeId].user != address(0))
            revert IVault.ReserveAlreadyRegistered(guaranteeId);
        if (amount == 0) revert IVault.ZeroAmount();
        if (block.timestamp > registerBy) revert IVault.ReserveAfterDeadline(registerBy);
        VaultLedger.Account storage account = books.accounts[user][asset];
        uint256 free = VaultLedger.free(account);
        if (free < amount) revert IVault.InsufficientFreeCollateral(user, asset, free, amount);
        books.reserves[guaranteeId] = IVault.Reserve({
            user: user,
            expiresAt: expiresAt,
            asset: asset,
            amount: SafeCast.toUint96(amount)
        });
        books.reserved[user][asset] += amount;
        // amount <= free < 2^128
        account.locked += uint128(amount);
    }
}
