// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {CertificateCodec} from "../lib/CertificateCodec.sol";
import {GuaranteeSignature} from "../lib/GuaranteeSignature.sol";

/// @title PayerGuaranteeVerifier
/// @notice Stateless helper of the ClearingHouse: decodes a guarantee's certificate claims and checks the
/// payer's signature over them. The ClearingHouse deploys it in its constructor and calls it for each
/// guarantee of a challenge answer.
/// @dev A separate contract only to keep the ClearingHouse under the EIP-170 code size limit (the claims
/// decoder and the EIP-712 / EIP-191 / ERC-1271 verifier are the largest code it runs). It holds no state
/// and trusts no caller: anyone may call it, it only reads.
contract PayerGuaranteeVerifier {
    /// @notice The fields of a guarantee that a challenge answer checks.
    struct Checked {
        bytes32 guaranteeId;
        address user;
        address recipient;
        address asset;
        uint256 amount;
        uint256 reqId;
        bool signatureValid;
    }

    /// @notice Decodes `claims` (CertificateCodec encoding) and verifies `signature` as the claims' user's
    /// signature under the guarantee domain `separator` with `scheme` (EIP-712, EIP-191 or ERC-1271).
    /// @return checked The decoded fields and whether the signature is the user's; reverts only on claims
    /// that do not decode.
    function check(
        bytes32 separator,
        bytes calldata claims,
        GuaranteeSignature.Scheme scheme,
        bytes calldata signature
    ) external view returns (Checked memory checked) {
        CertificateCodec.CertificateClaims memory c = CertificateCodec.decodeClaims(claims);
        checked.guaranteeId = c.guaranteeId;
        checked.user = c.user;
        checked.recipient = c.recipient;
        checked.asset = c.asset;
        checked.amount = c.amount;
        checked.reqId = c.reqId;
        checked.signatureValid = GuaranteeSignature.verify(
            separator,
            GuaranteeSignature.structHash(c),
            c.user,
            scheme,
            signature
        );
    }
}
