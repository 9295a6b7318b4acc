// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

import {IClearingVault} from "../interfaces/IClearingVault.sol";
import {IGuaranteeErrors} from "../interfaces/IGuaranteeErrors.sol";
import {CertificateCodec} from "./CertificateCodec.sol";

/// @title GuaranteeSignature
/// @notice Verifies the payer's own signature over a guarantee (docs/protocol.md, "Payer signatures"), exactly as the SDK
/// defines it (sdk/eip712.ts): the EIP-712 digest of `GuaranteeV1` / `GuaranteeV2` under the domain
/// `{name, version, chainId, verifyingContract = Vault}`, signed either as typed data (`EIP712`) or as
/// `personal_sign` of its 32 raw bytes (`EIP191`). A contract wallet signs with the EOA key it registered in
/// the Vault (`setGuaranteeSigner`), the one in effect at the guarantee's timestamp: never through ERC-1271,
/// whose answer the wallet could change after Core accepted the signature (issue 25, item 3).
/// @dev A certificate's claims carry every signed field (CertificateCodec), so the struct hash is computed
/// from the decoded claims. ECDSA signatures must be 65 bytes r ‖ s ‖ v with low s (OpenZeppelin ECDSA)
/// and v ∈ {27, 28, 0, 1}: the SDK accepts the same set, so what Core accepted verifies here too.
library GuaranteeSignature {
    /// @notice How the payer signed the digest (the wire's `signing_scheme`: "eip712" = 0, "eip191" = 1).
    enum Scheme {
        EIP712,
        EIP191
    }

    /// @notice `keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")`.
    bytes32 internal constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");

    /// @notice The EIP-712 type hash of `GuaranteeV1` (field names and order are part of the signed type).
    bytes32 internal constant GUARANTEE_V1_TYPEHASH =
        keccak256(
            "GuaranteeV1(address user,address recipient,uint256 reqId,uint256 amount,address asset,uint64 timestamp)"
        );

    /// @notice The EIP-712 type hash of `GuaranteeV2`.
    bytes32 internal constant GUARANTEE_V2_TYPEHASH =
        keccak256(
            "GuaranteeV2(address user,address recipient,uint256 reqId,uint256 amount,address asset,uint64 timestamp,"
            "address validationRegistry,address validator,uint256 validatorAgentId,uint8 minValidationScore,"
            "bytes32 jobHash,string requiredValidationTag,uint64 validationDeadline)"
        );

    /// @notice The EIP-712 type hash of `Finalization`: the payer's waiver of a V2 guarantee's validation (it
    /// finalized the payment off chain, `POST /core/guarantees/{id}/finalize`), signed under the same domain
    /// and with the same key as the guarantee; a dispute answer carries it in place of the validator's verdict.
    bytes32 internal constant FINALIZATION_TYPEHASH = keccak256("Finalization(bytes32 guaranteeId)");

    /// @dev Length of an ECDSA signature r ‖ s ‖ v.
    uint256 private constant ECDSA_SIGNATURE_LENGTH = 65;
    /// @dev v = 0 / 1 is the raw recovery id; ecrecover wants 27 / 28.
    uint8 private constant RECOVERY_ID_OFFSET = 27;

    /// @notice The EIP-712 domain separator (`hashStruct(EIP712Domain)`).
    /// @param name The domain name (the Vault's {EIP712} name).
    /// @param version The domain version.
    /// @param chainId The chain id.
    /// @param verifyingContract The Vault.
    function domainSeparator(
        string memory name,
        string memory version,
        uint256 chainId,
        address verifyingContract
    ) internal pure returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    DOMAIN_TYPEHASH,
                    keccak256(bytes(name)),
                    keccak256(bytes(version)),
                    chainId,
                    verifyingContract
                )
            );
    }

    /// @notice `hashStruct(GuaranteeV1)` of the claims (the policy is not read).
    /// @param c Decoded certificate claims.
    function structHashV1(CertificateCodec.CertificateClaims memory c) internal pure returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    GUARANTEE_V1_TYPEHASH,
                    c.user,
                    c.recipient,
                    c.reqId,
                    c.amount,
                    c.asset,
                    c.timestamp
                )
            );
    }

    /// @notice `hashStruct(GuaranteeV2)` of the claims and their decoded policy.
    /// @param c Decoded certificate claims.
    /// @param p The decoded `c.policy`.
    function structHashV2(
        CertificateCodec.CertificateClaims memory c,
        CertificateCodec.ValidationPolicy memory p
    ) internal pure returns (bytes32 hash) {
        // EIP-712 encodes a dynamic `string` as keccak256 of its UTF-8 bytes.
        bytes32 tagHash = keccak256(bytes(p.tag));
        bytes32 typeHash = GUARANTEE_V2_TYPEHASH;
        // encodeData is 14 words; copied straight from the two memory structs (each member is one cleaned
        // word: c.user .. c.timestamp are words 3..8 of `c`, p.registry .. p.jobHash words 0..4 of `p`),
        // which costs a fraction of abi.encode (this runs in every remuneration).
        assembly ("memory-safe") {
            let m := mload(0x40)
            mstore(m, typeHash)
            mcopy(add(m, 0x20), add(c, 0x60), 0xc0)
            mcopy(add(m, 0xe0), p, 0xa0)
            mstore(add(m, 0x180), tagHash)
            mstore(add(m, 0x1a0), mload(add(p, 0xc0)))
            hash := keccak256(m, 0x1c0)
        }
    }

    /// @notice `hashStruct` of the claims' own version (decodes the policy of V2 claims).
    /// @param c Decoded certificate claims (version 1 or 2, as {CertificateCodec.decodeClaims} guarantees).
    function structHash(CertificateCodec.CertificateClaims memory c) internal pure returns (bytes32) {
        if (c.version == CertificateCodec.VERSION_V1) return structHashV1(c);
        return structHashV2(c, CertificateCodec.decodePolicy(c.policy));
    }

    /// @notice The EIP-712 digest `keccak256(0x1901 ‖ domainSeparator ‖ structHash)`.
    function digest(bytes32 separator, bytes32 hashOfStruct) internal pure returns (bytes32) {
        return MessageHashUtils.toTypedDataHash(separator, hashOfStruct);
    }

    /// @notice The 32 bytes a signature of `scheme` signs: the digest itself (EIP712), or the EIP-191
    /// message hash `keccak256("\x19Ethereum Signed Message:\n32" ‖ digest)` (EIP191).
    function signedHash(bytes32 guaranteeDigest, Scheme scheme) internal pure returns (bytes32) {
        return
            scheme == Scheme.EIP712
                ? guaranteeDigest
                : MessageHashUtils.toEthSignedMessageHash(guaranteeDigest);
    }

    /// @notice The signer of `hash` by a 65-byte low-s ECDSA `signature` (v ∈ {27, 28, 0, 1}); the zero
    /// address for anything else. Never reverts.
    function recover(bytes32 hash, bytes memory signature) internal pure returns (address) {
        if (signature.length != ECDSA_SIGNATURE_LENGTH) return address(0);
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly ("memory-safe") {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        if (v < RECOVERY_ID_OFFSET) v += RECOVERY_ID_OFFSET;
        (address recovered, ECDSA.RecoverError err, ) = ECDSA.tryRecover(hash, v, r, s);
        return err == ECDSA.RecoverError.NoError ? recovered : address(0);
    }

    /// @notice `hashStruct(Finalization)` of guarantee `guaranteeId`.
    function structHashFinalization(bytes32 guaranteeId) internal pure returns (bytes32) {
        return keccak256(abi.encode(FINALIZATION_TYPEHASH, guaranteeId));
    }

    /// @notice Whether `signature` over `hash` is `payer`'s: it recovers to `payer` itself (an EOA; nothing
    /// else is read), or else to the key `payer` registered in `vault` for guarantees timestamped `timestamp`
    /// ({IClearingVault-guaranteeSignerAt}: a contract wallet's key). Never reverts on a bad signature.
    function isPayerSignature(
        IClearingVault vault,
        address payer,
        uint64 timestamp,
        bytes32 hash,
        bytes memory signature
    ) internal view returns (bool) {
        address signer = recover(hash, signature);
        if (signer == address(0)) return false;
        return signer == payer || signer == vault.guaranteeSignerAt(payer, timestamp);
    }

    /// @notice Whether `payer` signed the guarantee whose struct hash is `hashOfStruct` under `separator`,
    /// itself or with its key registered in `vault` for the guarantee's `timestamp` ({isPayerSignature}).
    /// @param vault The Vault holding payers' signing keys.
    /// @param separator The EIP-712 domain separator ({domainSeparator}).
    /// @param hashOfStruct {structHashV1} / {structHashV2} / {structHash} of the guarantee.
    /// @param payer The guarantee's `user`.
    /// @param timestamp The guarantee's `timestamp`.
    /// @param scheme How the payer signed.
    /// @param signature The payer's (or its registered key's) 65-byte signature.
    function verify(
        IClearingVault vault,
        bytes32 separator,
        bytes32 hashOfStruct,
        address payer,
        uint64 timestamp,
        Scheme scheme,
        bytes memory signature
    ) internal view returns (bool) {
        return
            isPayerSignature(
                vault,
                payer,
                timestamp,
                signedHash(digest(separator, hashOfStruct), scheme),
                signature
            );
    }
}
