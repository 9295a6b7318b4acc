// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";
import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";

import {IGuaranteeVerifier} from "./interfaces/IGuaranteeVerifier.sol";
import {BLSVerifier} from "./lib/BLSVerifier.sol";
import {CertificateCodec} from "./lib/CertificateCodec.sol";
import {GuaranteeLeaf} from "./lib/GuaranteeLeaf.sol";
import {GuaranteeSignature} from "./lib/GuaranteeSignature.sol";

/// @title GuaranteeVerifier
/// @notice The one place that decodes certificate claims and checks Core's BLS certificate and the payer's
/// own signature; the Vault (remuneration, reserves) and the ClearingHouse (challenge answers) call it.
/// @dev Holds no state and trusts no caller: anyone may call it, it only reads, and every value it checks
/// against is an argument. Its own code (the BLS hash-to-curve and pairing, the claims decoder, the
/// ECDSA / ERC-1271 check) would otherwise be compiled into both callers.
contract GuaranteeVerifier is IGuaranteeVerifier {
    /// @inheritdoc IGuaranteeVerifier
    function checkSignatures(
        BLS.G2Point calldata key,
        bytes calldata claims,
        BLS.G1Point calldata signature,
        bytes32 digest,
        address payer,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    ) external view {
        _checkCertificate(key, claims, signature);
        if (
            !GuaranteeSignature.isValidSignature(
                payer,
                GuaranteeSignature.signedHash(digest, payerScheme),
                payerSignature
            )
        ) revert InvalidPayerSignature(payer);
    }

    /// @inheritdoc IGuaranteeVerifier
    function verifyV1(
        address vault,
        bytes32 separator,
        BLS.G2Point calldata key,
        bytes calldata claims,
        BLS.G1Point calldata signature,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    ) external view returns (V1Guarantee memory g) {
        CertificateCodec.CertificateClaims memory c = CertificateCodec.decodeClaims(claims);
        if (c.version != CertificateCodec.VERSION_V1) revert NotV1Certificate(c.version);
        bytes32 domain = CertificateCodec.certificateDomain(block.chainid, vault);
        if (c.domain != domain) revert CertificateDomainMismatch(domain, c.domain);
        bytes32 id = CertificateCodec.guaranteeId(block.chainid, vault, c.user, c.reqId);
        if (c.guaranteeId != id) revert GuaranteeIdMismatch(id, c.guaranteeId);
        _checkCertificate(key, claims, signature);
        if (
            !GuaranteeSignature.verify(
                separator,
                GuaranteeSignature.structHashV1(c),
                c.user,
                payerScheme,
                payerSignature
            )
        ) revert InvalidPayerSignature(c.user);
        g = V1Guarantee(id, c.user, c.recipient, c.asset, c.amount, c.timestamp);
    }

    /// @inheritdoc IGuaranteeVerifier
    function checkAnswerGuarantee(
        Answer calldata answer,
        bytes calldata claims,
        GuaranteeSignature.Scheme scheme,
        bytes calldata signature,
        bytes32[] calldata proof
    ) external view returns (bytes32 guaranteeId, uint256 amount) {
        CertificateCodec.CertificateClaims memory c = CertificateCodec.decodeClaims(claims);
        (guaranteeId, amount) = (c.guaranteeId, c.amount);
        _checkOwed(answer, c);
        bytes32 leaf = GuaranteeLeaf.hash(
            guaranteeId,
            c.user,
            c.recipient,
            c.asset,
            amount,
            keccak256(signature)
        );
        if (!MerkleProof.verifyCalldata(proof, answer.guaranteesRoot, leaf))
            revert GuaranteeNotInCycle(guaranteeId);
        if (
            !GuaranteeSignature.verify(
                answer.separator,
                GuaranteeSignature.structHash(c),
                c.user,
                scheme,
                signature
            )
        ) {
            revert InvalidGuaranteeSignature(guaranteeId);
        }
    }

    /// @dev The claims' id is the Vault's id of their payer and reqId, and they are an outgoing payment of the
    /// answer's debtor in its asset.
    function _checkOwed(Answer calldata answer, CertificateCodec.CertificateClaims memory c) private view {
        bytes32 expected = CertificateCodec.guaranteeId(block.chainid, answer.vault, c.user, c.reqId);
        if (c.guaranteeId != expected) revert GuaranteeIdMismatch(expected, c.guaranteeId);
        address debtor = answer.debtor;
        if (c.user != debtor || c.asset != answer.asset || c.recipient == debtor) {
            revert GuaranteeNotOwed(c.guaranteeId, debtor, answer.asset);
        }
    }

    /// @inheritdoc IGuaranteeVerifier
    function isValidOperatorKey(BLS.G2Point calldata key) external view returns (bool) {
        return BLSVerifier.isValidPublicKey(key);
    }

    /// @dev Reverts unless `key` is set and `signature` is its BLS signature over `claims` (POP tag). A set
    /// key is never the identity, so all-zero words mean "not set".
    function _checkCertificate(
        BLS.G2Point calldata key,
        bytes calldata claims,
        BLS.G1Point calldata signature
    ) private view {
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
        if (!BLSVerifier.verify(key, claims, signature, BLSVerifier.POP_DST))
            revert InvalidCertificateSignature();
    }
}
