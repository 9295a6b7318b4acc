// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title IGuaranteeErrors
/// @notice The reverts of checking a guarantee's certificate and its payer's signature. The Vault and the
/// ClearingHouse inherit them (their ABIs carry them): a check run in the {IGuaranteeVerifier} reverts with
/// these selectors through whichever contract called it.
interface IGuaranteeErrors {
    /// @notice The certificate's domain `actual` is not this deployment's `expected` domain.
    error CertificateDomainMismatch(bytes32 expected, bytes32 actual);
    /// @notice The certificate's guarantee id `actual` is not the id `expected` derived from its fields.
    error GuaranteeIdMismatch(bytes32 expected, bytes32 actual);
    /// @notice No operator BLS key has been set.
    error OperatorKeyNotSet();
    /// @notice The BLS signature does not verify against the operator key.
    error InvalidCertificateSignature();
    /// @notice `payer` did not sign the guarantee (wrong key, wrong scheme, malformed or high-s signature,
    /// or a contract wallet that refused it).
    error InvalidPayerSignature(address payer);
    /// @notice Only V1 certificates can back a V1 reserve; this one has `version`.
    error NotV1Certificate(uint64 version);
    /// @notice The claims carry a version other than 1 or 2 (CertificateCodec).
    error UnsupportedClaimsVersion(uint64 version);
    /// @notice A V1 claim carries a non-empty policy, or a V2 claim carries an empty one (CertificateCodec).
    error PolicyMismatch(uint64 version, uint256 policyLength);
    /// @notice The bytes decode, but are not the canonical ABI encoding of what they decode to (CertificateCodec).
    error NonCanonicalEncoding();
    /// @notice Guarantee `guaranteeId` is not an outgoing payment of `debtor` in `asset` (other payer, other
    /// asset, or a self-payment, which adds nothing to a debit).
    error GuaranteeNotOwed(bytes32 guaranteeId, address debtor, address asset);
    /// @notice The payer's signature over guarantee `guaranteeId` does not verify.
    error InvalidGuaranteeSignature(bytes32 guaranteeId);
    /// @notice `verifier`, given to a constructor as the {IGuaranteeVerifier}, has no code.
    error InvalidGuaranteeVerifier(address verifier);
}
