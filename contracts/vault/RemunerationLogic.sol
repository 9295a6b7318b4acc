// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";

import {IClearingVault} from "../interfaces/IClearingVault.sol";
import {IValidationRegistry} from "../interfaces/IValidationRegistry.sol";
import {IVault} from "../interfaces/IVault.sol";
import {CertificateCodec} from "../lib/CertificateCodec.sol";
import {GuaranteeSignature} from "../lib/GuaranteeSignature.sol";
import {VaultCertificates} from "./VaultCertificates.sol";
import {VaultLedger} from "./VaultLedger.sol";

/// @title RemunerationLogic
/// @notice V2 remuneration: pays a guarantee whose validation passed from its payer's collateral to its
/// recipient. An external library: the Vault delegates {IVault-remunerate} to it, so it runs on the Vault's
/// books and emits the Vault's events (its code is not part of the Vault's EIP-170 budget).
library RemunerationLogic {
    /// @notice See {IVault-remunerate}; `books` and `authority` are the Vault's.
    function remunerate(
        VaultLedger.Books storage books,
        VaultCertificates.Authority memory authority,
        bytes calldata claims,
        BLS.G1Point calldata signature,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    ) external {
        (
            CertificateCodec.CertificateClaims memory c,
            CertificateCodec.ValidationPolicy memory p
        ) = VaultCertificates.verifiedV2(authority, claims, signature, payerScheme, payerSignature);
        _pay(books, c, p);
    }

    /// @dev Pays the verified guarantee `c` (policy `p`) once: not consumed, non-zero, validation passed, free
    /// collateral (with the guarantee's own reserve if needed).
    function _pay(
        VaultLedger.Books storage books,
        CertificateCodec.CertificateClaims memory c,
        CertificateCodec.ValidationPolicy memory p
    ) private {
        IClearingVault.Consumption how = VaultLedger.consumption(books, c.guaranteeId);
        if (how != IClearingVault.Consumption.None)
            revert IVault.GuaranteeAlreadyConsumed(c.guaranteeId, how);
        if (c.amount == 0) revert IVault.ZeroAmount();
        _checkValidation(books, p, c.guaranteeId);
        VaultLedger.Account storage account = books.accounts[c.user][c.asset];
        uint256 free = VaultLedger.free(account);
        // The guarantee's own reserve is read only when it is needed (one storage read less otherwise); a
        // reserve left behind is released by anyone afterwards ({IVault-releaseReserve}).
        if (free < c.amount) {
            IVault.Reserve memory r = books.reserves[c.guaranteeId];
            // A reserve of another payer or asset under the same id (only possible if Core certified two
            // guarantees with one id and the payer signed both) is left alone; a payer is never address(0).
            if (r.user == c.user && r.asset == c.asset) {
                VaultLedger.release(books, c.guaranteeId, r, account);
                free += r.amount;
            }
        }
        if (free < c.amount) revert IVault.InsufficientFreeCollateral(c.user, c.asset, free, c.amount);

        books.marks[c.guaranteeId] = VaultLedger.Mark(IClearingVault.Consumption.Remunerated, 0);
        // c.amount <= free <= balance < 2^128
        account.balance -= uint128(c.amount);
        emit IVault.GuaranteeRemunerated(c.guaranteeId, c.user, c.recipient, c.asset, c.amount);
        VaultLedger.send(c.asset, c.recipient, c.amount);
    }

    /// @notice See {IVault-pinVerdicts}; `books` are the Vault's.
    function pinVerdicts(
        VaultLedger.Books storage books,
        bytes[] calldata claims
    ) external returns (uint256 pinned) {
        for (uint256 i = 0; i < claims.length; ++i) {
            (
                CertificateCodec.CertificateClaims memory c,
                CertificateCodec.ValidationPolicy memory p
            ) = VaultCertificates.decodedV2(claims[i]);
            // Up to the deadline (inclusive) the validator may still answer, and a later answer is the verdict.
            if (block.timestamp <= p.deadline) revert IVault.VerdictNotFinal(c.guaranteeId, p.deadline);
            bytes32 requestHash = CertificateCodec.validationRequestHash(block.chainid, p, c.guaranteeId);
            // Already pinned, or not passing now (skipped, not reverted: one verdict voided between Core's
            // simulation and its transaction must not revert the whole batch).
            if (books.pinnedVerdicts[requestHash] || _validationError(books, p, requestHash).length != 0)
                continue;
            books.pinnedVerdicts[requestHash] = true;
            ++pinned;
            emit IVault.VerdictPinned(c.guaranteeId, requestHash, p.registry, p.validator);
        }
    }

    /// @dev Reverts unless the guarantee's verdict passed: pinned ({IVault-pinVerdicts}), or as
    /// {_validationError} reads it from the registry. The pin is read first (one storage read on every
    /// remuneration): a pinned verdict pays without calling the registry, even while a trusted registry
    /// reverts (audit2 A2-I2), as the ClearingHouse's answers already read it.
    function _checkValidation(
        VaultLedger.Books storage books,
        CertificateCodec.ValidationPolicy memory p,
        bytes32 guaranteeId
    ) private view {
        bytes32 requestHash = CertificateCodec.validationRequestHash(block.chainid, p, guaranteeId);
        if (books.pinnedVerdicts[requestHash]) return;
        bytes memory err = _validationError(books, p, requestHash);
        if (err.length != 0) {
            assembly ("memory-safe") {
                revert(add(err, 0x20), mload(err))
            }
        }
    }

    /// @dev Why the registry's verdict on `requestHash` does not pass (the encoded custom error; empty when it
    /// passes): the validator the signed policy names, in a trusted registry, answered with a score >=
    /// minScore, the policy's tag and a last update no later than the deadline. The request hash binds the
    /// policy (agent id included) and the guarantee id.
    function _validationError(
        VaultLedger.Books storage books,
        CertificateCodec.ValidationPolicy memory p,
        bytes32 requestHash
    ) private view returns (bytes memory) {
        if (!books.isTrustedRegistry[p.registry])
            return abi.encodeWithSelector(IVault.UntrustedRegistry.selector, p.registry);
        (bool responded, uint8 response, bytes32 tagHash, uint64 lastUpdate) = IValidationRegistry(p.registry)
            .verdictOf(requestHash, p.validator);
        if (!responded) return abi.encodeWithSelector(IVault.ValidationResponseMissing.selector, requestHash);
        if (response < p.minScore)
            return abi.encodeWithSelector(IVault.ValidationScoreTooLow.selector, response, p.minScore);
        if (tagHash != keccak256(bytes(p.tag)))
            return abi.encodeWithSelector(IVault.ValidationTagMismatch.selector, p.tag, tagHash);
        if (lastUpdate > p.deadline)
            return abi.encodeWithSelector(IVault.ValidationAfterDeadline.selector, lastUpdate, p.deadline);
        return "";
    }
}
