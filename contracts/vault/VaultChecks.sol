// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";
import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";

import {ClearingHouse} from "../ClearingHouse.sol";
import {Vault} from "../Vault.sol";
import {IClearingVault} from "../interfaces/IClearingVault.sol";
import {BLSVerifier} from "../lib/BLSVerifier.sol";
import {CertificateCodec} from "../lib/CertificateCodec.sol";
import {GuaranteeSignature} from "../lib/GuaranteeSignature.sol";

/// @title VaultChecks
/// @notice Stateless checks of the Vault that are not on its hot path: the timing invariant, V1 certificates
/// (for the seller's V1 reserve) and a guarantee's listing in a committed cycle. The Vault deploys it in its
/// constructor ({Vault-checks}) and calls it; every revert bubbles up through the Vault with the same
/// selector as the Vault's error of the same name (the Vault declares them too, so they are in its ABI).
/// @dev A separate contract only to keep the Vault under the EIP-170 code size limit (docs/contracts.md,
/// "Code size"), like the ClearingHouse's PayerGuaranteeVerifier. It holds no state and trusts no caller:
/// anyone may call it, it only reads. {verifyV1} and {checkListing} take the arguments of the Vault function
/// that forwards its own calldata to them, and read the rest (operator key, domain, timings, reserve) from
/// the caller's views: the caller is the Vault they check for (another caller only checks against itself).
contract VaultChecks {
    /// @notice Upper bound on the withdrawal grace period (the Vault's `MAX_WITHDRAWAL_GRACE_PERIOD`).
    uint64 public constant MAX_WITHDRAWAL_GRACE_PERIOD = 30 days;

    /// @notice A V1 certificate's fields a reserve needs (the claims' own names) and the reserve's times.
    struct V1Reserve {
        bytes32 guaranteeId;
        address user;
        address recipient;
        address asset;
        uint256 amount;
        uint64 registerBy;
        uint64 collectableAt;
    }

    /// @notice `cycleLength` is zero.
    error ZeroCycleLength();
    /// @notice `paymentWindow` is zero.
    error ZeroPaymentWindow();
    /// @notice `challengeWindow` is zero (it would switch off challenges and the guardian's veto).
    error ZeroChallengeWindow();
    /// @notice `withdrawalGracePeriod` must be greater than `minimumExclusive` (the clearing path's length).
    error GracePeriodTooShort(uint64 withdrawalGracePeriod, uint256 minimumExclusive);
    /// @notice `withdrawalGracePeriod` exceeds {MAX_WITHDRAWAL_GRACE_PERIOD}.
    error GracePeriodTooLong(uint64 withdrawalGracePeriod, uint64 maximum);
    /// @notice Only V1 certificates can back a V1 reserve; this one has `version`.
    error NotV1Certificate(uint64 version);
    /// @notice The certificate's domain `actual` is not this deployment's `expected` domain.
    error CertificateDomainMismatch(bytes32 expected, bytes32 actual);
    /// @notice The certificate's guarantee id `actual` is not the id `expected` derived from its fields.
    error GuaranteeIdMismatch(bytes32 expected, bytes32 actual);
    /// @notice No operator BLS key has been set.
    error OperatorKeyNotSet();
    /// @notice The BLS signature does not verify against the operator key.
    error InvalidCertificateSignature();
    /// @notice The BLS key is not a valid G2 point of the prime-order subgroup (or is the identity).
    error InvalidOperatorKey();
    /// @notice Cycle `cycleId` is not committed, was vetoed, or its challenge window (until
    /// `challengeDeadline`) is still open: it cannot prove a listing yet (or ever).
    error CycleNotSettled(uint256 cycleId, uint64 challengeDeadline);
    /// @notice The guarantee `guaranteeId` (with the reserve's payer, recipient, asset and amount) is not a leaf
    /// of cycle `cycleId`'s guarantees root under the given proof.
    error GuaranteeNotListed(bytes32 guaranteeId, uint256 cycleId);

    /// @notice Reverts unless the timings keep the Vault's invariant: `cycleLength`, `paymentWindow` and
    /// `challengeWindow` non-zero, and `maximum >= withdrawalGracePeriod > cycleLength + commitDelay +
    /// confirmationLag + 2 * challengeWindow + paymentWindow + defaultWindow` (docs/protocol.md, grace-period
    /// invariant; the ClearingHouse's answer window is as long as the challenge window, and Core acts
    /// `confirmationLag` seconds behind the chain head).
    /// @param t The timings.
    function checkTimings(IClearingVault.Timings calldata t) external pure {
        if (t.cycleLength == 0) revert ZeroCycleLength();
        if (t.paymentWindow == 0) revert ZeroPaymentWindow();
        if (t.challengeWindow == 0) revert ZeroChallengeWindow();
        uint256 clearingPath = uint256(t.cycleLength) +
            t.commitDelay +
            t.confirmationLag +
            2 * uint256(t.challengeWindow) +
            t.paymentWindow +
            t.defaultWindow;
        if (t.withdrawalGracePeriod <= clearingPath)
            revert GracePeriodTooShort(t.withdrawalGracePeriod, clearingPath);
        if (t.withdrawalGracePeriod > MAX_WITHDRAWAL_GRACE_PERIOD) {
            revert GracePeriodTooLong(t.withdrawalGracePeriod, MAX_WITHDRAWAL_GRACE_PERIOD);
        }
    }

    /// @notice Reverts unless `signature` is the BLS signature of `key` over the certificate `claims` (POP
    /// tag, min-pk: key in G1, signature in G2; `InvalidCertificateSignature`) and `payerSignature` is
    /// `payer`'s signature of the guarantee's EIP-712 `digest` with `payerScheme` (EOA or ERC-1271;
    /// `InvalidPayerSignature(payer)`), in that order.
    /// @param key The operator's BLS key.
    /// @param claims The certificate claims (the BLS-signed message).
    /// @param signature Core's BLS signature.
    /// @param digest The guarantee's EIP-712 digest under the Vault's domain.
    /// @param payer The guarantee's `user`.
    /// @param payerScheme How the payer signed.
    /// @param payerSignature The payer's signature.
    function checkSignatures(
        BLS.G2Point calldata key,
        bytes calldata claims,
        BLS.G1Point calldata signature,
        bytes32 digest,
        address payer,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    ) external view {
        _requireKeySet(key);
        if (!BLSVerifier.verify(key, claims, signature, BLSVerifier.POP_DST))
            revert InvalidCertificateSignature();
        if (
            !GuaranteeSignature.isValidSignature(
                payer,
                GuaranteeSignature.signedHash(digest, payerScheme),
                payerSignature
            )
        ) {
            revert GuaranteeSignature.InvalidPayerSignature(payer);
        }
    }

    /// @notice Decodes and verifies a V1 certificate for the calling Vault, and derives its reserve's times:
    /// V1 claims (strict codec), the Vault's domain on this chain, the guarantee id derived from its fields,
    /// Core's BLS signature against the Vault's operator key (POP tag), and the payer's own signature over the
    /// guarantee under the Vault's EIP-712 domain. With t the claims' timestamp and the Vault's timings:
    /// `registerBy = t + cycleLength + commitDelay + confirmationLag` (a live Core's commit of the guarantee's
    /// cycle lands by then) and `collectableAt = registerBy + 2 * challengeWindow` (that cycle is past its
    /// challenge window, and a listing has had one more window to be proven).
    /// @param claims The certificate claims.
    /// @param signature Core's BLS signature over `claims`.
    /// @param payerScheme How the payer signed.
    /// @param payerSignature The payer's signature over the guarantee.
    /// @return r The guarantee's fields and its reserve's times.
    function verifyV1(
        bytes calldata claims,
        BLS.G1Point calldata signature,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    ) external view returns (V1Reserve memory r) {
        Vault vault = Vault(msg.sender);
        CertificateCodec.CertificateClaims memory c = CertificateCodec.decodeClaims(claims);
        if (c.version != CertificateCodec.VERSION_V1) revert NotV1Certificate(c.version);
        bytes32 domain = CertificateCodec.certificateDomain(block.chainid, address(vault));
        if (c.domain != domain) revert CertificateDomainMismatch(domain, c.domain);
        bytes32 id = CertificateCodec.guaranteeId(block.chainid, address(vault), c.user, c.reqId);
        if (c.guaranteeId != id) revert GuaranteeIdMismatch(id, c.guaranteeId);
        BLS.G2Point memory key = vault.operatorKey();
        _requireKeySet(key);
        if (!BLSVerifier.verify(key, claims, signature, BLSVerifier.POP_DST))
            revert InvalidCertificateSignature();
        GuaranteeSignature.check(
            vault.guaranteeDomainSeparator(),
            GuaranteeSignature.structHashV1(c),
            c.user,
            payerScheme,
            payerSignature
        );
        IClearingVault.Timings memory t = vault.timings();
        uint64 registerBy = c.timestamp + t.cycleLength + t.commitDelay + t.confirmationLag;
        r = V1Reserve(
            id,
            c.user,
            c.recipient,
            c.asset,
            c.amount,
            registerBy,
            registerBy + 2 * t.challengeWindow
        );
    }

    /// @notice Reverts unless the calling Vault's V1 reserve of `guaranteeId` is proven cleared: its leaf
    /// (the guarantee id, the reserve's payer, recipient, asset and amount, and `signatureHash`) is in the
    /// guarantees root of cycle `cycleId` of the Vault's ClearingHouse, and that cycle is committed, not
    /// vetoed and past its challenge deadline (no veto can undo the listing any more).
    /// @param guaranteeId The reserved V1 guarantee (`ReserveNotFound` unless the caller holds a V1 reserve of it).
    /// @param cycleId The cycle that listed it.
    /// @param signatureHash The leaf's signature hash (whatever the cycle listed).
    /// @param proof StandardMerkleTree proof of the leaf under the cycle's guarantees root.
    function checkListing(
        bytes32 guaranteeId,
        uint256 cycleId,
        bytes32 signatureHash,
        bytes32[] calldata proof
    ) external view {
        Vault vault = Vault(msg.sender);
        Vault.Reserve memory r = vault.reserveOf(guaranteeId);
        address recipient = vault.v1ReserveRecipient(guaranteeId);
        if (r.user == address(0) || recipient == address(0)) revert Vault.ReserveNotFound(guaranteeId);
        ClearingHouse house = ClearingHouse(payable(vault.clearingHouse()));
        ClearingHouse.Cycle memory cycle = house.getCycle(cycleId);
        if (
            cycle.guaranteesRoot == bytes32(0) || cycle.vetoed || block.timestamp <= cycle.challengeDeadline
        ) {
            revert CycleNotSettled(cycleId, cycle.challengeDeadline);
        }
        bytes32 leaf = house.guaranteeLeafHash(
            guaranteeId,
            r.user,
            recipient,
            r.asset,
            r.amount,
            signatureHash
        );
        if (!MerkleProof.verifyCalldata(proof, cycle.guaranteesRoot, leaf)) {
            revert GuaranteeNotListed(guaranteeId, cycleId);
        }
    }

    /// @notice Reverts `InvalidOperatorKey` unless `key` is a valid operator key: a G2 point of the
    /// prime-order subgroup, not the identity (EIP-2537 encoding).
    /// @param key The candidate operator key.
    function checkOperatorKey(BLS.G2Point calldata key) external view {
        if (!BLSVerifier.isValidPublicKey(key)) revert InvalidOperatorKey();
    }

    /// @dev A set key is never the identity, so all-zero words mean "not set" (one slot less than a flag).
    function _requireKeySet(BLS.G2Point memory key) private pure {
        if (
            (key.x_c0_a |
                key.x_c0_b |
                key.x_c1_a |
                key.x_c1_b |
                key.y_c0_a |
                key.y_c0_b |
                key.y_c1_a |
                key.y_c1_b) == bytes32(0)
        ) revert OperatorKeyNotSet();
    }
}
