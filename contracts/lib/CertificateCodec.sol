// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IGuaranteeErrors} from "../interfaces/IGuaranteeErrors.sol";

/// @title CertificateCodec
/// @notice Decodes the claims a Surety certificate signs and derives the hashes that bind them
/// (docs/protocol.md, "Identities" and "Certificates"). The TypeScript SDK holds the one encoder; tests check both agree.
/// @dev claims = abi.encode(uint64 version, bytes32 domain, bytes32 guaranteeId, address user,
/// address recipient, uint256 reqId, uint256 amount, address asset, uint64 timestamp, bytes policy)
/// with policy = 0x for V1 and abi.encode(address registry, address validator, uint256 agentId,
/// uint8 minScore, bytes32 jobHash, string tag, uint64 deadline) for V2.
///
/// Decoding is strict: the bytes must be the canonical ABI encoding of the decoded values (so one set
/// of claims has exactly one byte string, and one BLS signature), the version must be 1 or 2, a V1
/// policy must be empty and a V2 policy must not be. Malformed ABI data reverts in `abi.decode`. The errors
/// are {IGuaranteeErrors}', so every contract that decodes claims carries them in its ABI.
library CertificateCodec {
    /// @notice The claims of a certificate, in encoding order.
    struct CertificateClaims {
        uint64 version;
        bytes32 domain;
        bytes32 guaranteeId;
        address user;
        address recipient;
        uint256 reqId;
        uint256 amount;
        address asset;
        uint64 timestamp;
        bytes policy;
    }

    /// @notice The validation policy of a V2 guarantee (ERC-8004 style registry).
    struct ValidationPolicy {
        address registry;
        address validator;
        uint256 agentId;
        uint8 minScore;
        bytes32 jobHash;
        string tag;
        uint64 deadline;
    }

    /// @dev Head of the ABI encoding of a dynamic struct: the offset of its body.
    uint256 private constant TUPLE_OFFSET = 0x20;

    /// @notice Claims version of a plain guarantee (no validation policy).
    uint64 internal constant VERSION_V1 = 1;

    /// @notice Claims version of a guarantee gated by a validation policy.
    uint64 internal constant VERSION_V2 = 2;

    /// @notice Tag of the certificate domain separator.
    bytes32 internal constant CERTIFICATE_DOMAIN_TAG = keccak256("SURETY_CERTIFICATE_V1");

    /// @notice Tag of the guarantee identity.
    bytes32 internal constant GUARANTEE_ID_TAG = keccak256("SURETY_GUARANTEE_ID_V1");

    /// @notice Tag of the validation request hash.
    bytes32 internal constant VALIDATION_REQUEST_TAG = keccak256("SURETY_VALIDATION_REQUEST_V1");

    /// @notice Decodes certificate claims.
    /// @param data The raw claims bytes (the BLS-signed message).
    /// @return claims The decoded claims; `policy` is left encoded (see `decodePolicy`).
    function decodeClaims(bytes memory data) internal pure returns (CertificateClaims memory claims) {
        bytes memory tuple = _asTuple(data);
        claims = abi.decode(tuple, (CertificateClaims));
        if (keccak256(abi.encode(claims)) != keccak256(tuple)) revert IGuaranteeErrors.NonCanonicalEncoding();
        if (claims.version == VERSION_V1) {
            if (claims.policy.length != 0)
                revert IGuaranteeErrors.PolicyMismatch(claims.version, claims.policy.length);
        } else if (claims.version == VERSION_V2) {
            if (claims.policy.length == 0) revert IGuaranteeErrors.PolicyMismatch(claims.version, 0);
        } else {
            revert IGuaranteeErrors.UnsupportedClaimsVersion(claims.version);
        }
    }

    /// @dev Head words of the claims tuple, of the policy tuple, and the size of a word.
    uint256 private constant CLAIM_HEAD_WORDS = 10;
    uint256 private constant POLICY_HEAD_WORDS = 7;
    uint256 private constant WORD = 32;

    /// @notice Decodes V2 claims straight from calldata, as strictly as {decodeClaims} + {decodePolicy}: every
    /// offset and length exact, every narrow value (address, uint64, uint8) without high bits, the tag's
    /// padding zero, nothing after it. Cheaper in gas and code than `abi.decode` plus re-encoding (it runs in
    /// every remuneration).
    /// @param data The raw claims bytes.
    /// @return c The claims, with `policy` left empty (the decoded policy is `p`).
    /// @return p The decoded policy.
    function decodeV2Calldata(
        bytes calldata data
    ) internal pure returns (CertificateClaims memory c, ValidationPolicy memory p) {
        uint256 length = data.length;
        // Fixed part: the claims head, the policy's length word, the policy head, the tag's length word.
        uint256 tagStart = (CLAIM_HEAD_WORDS + 1 + POLICY_HEAD_WORDS + 1) * WORD;
        if (length < tagStart) revert IGuaranteeErrors.NonCanonicalEncoding();
        uint256 version = _word(data, 0);
        if (version != VERSION_V2) {
            if (version > type(uint64).max) revert IGuaranteeErrors.NonCanonicalEncoding();
            revert IGuaranteeErrors.UnsupportedClaimsVersion(uint64(version));
        }
        c.version = VERSION_V2;
        c.domain = bytes32(_word(data, 1));
        c.guaranteeId = bytes32(_word(data, 2));
        c.user = _address(data, 3);
        c.recipient = _address(data, 4);
        c.reqId = _word(data, 5);
        c.amount = _word(data, 6);
        c.asset = _address(data, 7);
        c.timestamp = _uint64(data, 8);
        if (_word(data, 9) != CLAIM_HEAD_WORDS * WORD) revert IGuaranteeErrors.NonCanonicalEncoding();
        uint256 policyLength = _word(data, CLAIM_HEAD_WORDS);
        if (policyLength == 0) revert IGuaranteeErrors.PolicyMismatch(VERSION_V2, 0);
        if (policyLength != length - (CLAIM_HEAD_WORDS + 1) * WORD)
            revert IGuaranteeErrors.NonCanonicalEncoding();
        uint256 q = CLAIM_HEAD_WORDS + 1;
        p.registry = _address(data, q);
        p.validator = _address(data, q + 1);
        p.agentId = _word(data, q + 2);
        uint256 minScore = _word(data, q + 3);
        if (minScore > type(uint8).max) revert IGuaranteeErrors.NonCanonicalEncoding();
        p.minScore = uint8(minScore);
        p.jobHash = bytes32(_word(data, q + 4));
        if (_word(data, q + 5) != POLICY_HEAD_WORDS * WORD) revert IGuaranteeErrors.NonCanonicalEncoding();
        p.deadline = _uint64(data, q + 6);
        uint256 tagLength = _word(data, q + POLICY_HEAD_WORDS);
        // The tag fills the rest, padded with zeros to a whole word, and nothing follows it.
        uint256 rest = length - tagStart;
        if (tagLength > rest || rest - tagLength >= WORD || rest % WORD != 0)
            revert IGuaranteeErrors.NonCanonicalEncoding();
        if (rest != tagLength) {
            uint256 paddingBits = (rest - tagLength) * 8;
            if (_word(data, length / WORD - 1) & ((1 << paddingBits) - 1) != 0)
                revert IGuaranteeErrors.NonCanonicalEncoding();
        }
        p.tag = string(data[tagStart:tagStart + tagLength]);
    }

    /// @notice Decodes the validation policy of V2 claims.
    /// @param data The `policy` bytes of V2 claims.
    /// @return policy The decoded policy.
    function decodePolicy(bytes memory data) internal pure returns (ValidationPolicy memory policy) {
        bytes memory tuple = _asTuple(data);
        policy = abi.decode(tuple, (ValidationPolicy));
        if (keccak256(abi.encode(policy)) != keccak256(tuple)) revert IGuaranteeErrors.NonCanonicalEncoding();
    }

    /// @notice The certificate domain separator of a deployment (`active_guarantee_domain_separator`).
    /// @param chainId The chain id.
    /// @param vault The Vault contract address.
    function certificateDomain(uint256 chainId, address vault) internal pure returns (bytes32) {
        return keccak256(abi.encode(CERTIFICATE_DOMAIN_TAG, chainId, vault));
    }

    /// @notice The identity of a guarantee: unique per payer and request id within a deployment.
    /// @param chainId The chain id.
    /// @param vault The Vault contract address.
    /// @param user The payer.
    /// @param reqId The payer's request id.
    function guaranteeId(
        uint256 chainId,
        address vault,
        address user,
        uint256 reqId
    ) internal pure returns (bytes32) {
        return keccak256(abi.encode(GUARANTEE_ID_TAG, chainId, vault, user, reqId));
    }

    /// @notice The ERC-8004 validation request hash binding a guarantee to its policy (docs/protocol.md, "Identities").
    /// @param chainId The chain id.
    /// @param p The validation policy.
    /// @param id The guarantee id.
    function validationRequestHash(
        uint256 chainId,
        ValidationPolicy memory p,
        bytes32 id
    ) internal pure returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    VALIDATION_REQUEST_TAG,
                    chainId,
                    p.registry,
                    p.validator,
                    p.agentId,
                    id,
                    p.minScore,
                    keccak256(bytes(p.tag)),
                    p.jobHash,
                    p.deadline
                )
            );
    }

    /// @dev Word `index` of calldata `data` (the caller checked the length).
    function _word(bytes calldata data, uint256 index) private pure returns (uint256 value) {
        assembly ("memory-safe") {
            value := calldataload(add(data.offset, mul(index, 0x20)))
        }
    }

    /// @dev Word `index` as an address; canonical encoding leaves its top 12 bytes zero.
    function _address(bytes calldata data, uint256 index) private pure returns (address) {
        uint256 value = _word(data, index);
        if (value > type(uint160).max) revert IGuaranteeErrors.NonCanonicalEncoding();
        return address(uint160(value));
    }

    /// @dev Word `index` as a uint64, canonical.
    function _uint64(bytes calldata data, uint256 index) private pure returns (uint64) {
        uint256 value = _word(data, index);
        if (value > type(uint64).max) revert IGuaranteeErrors.NonCanonicalEncoding();
        return uint64(value);
    }

    /// @dev The wire format is abi.encode(field1, ..., fieldN), i.e. the body of a tuple. The ABI
    /// encoding of a struct with a dynamic member is a 32-byte offset (0x20) followed by that same
    /// body, so prefixing the offset lets `abi.decode` fill the struct in one step (decoding ten
    /// values into locals would exceed the legacy code generator's stack).
    function _asTuple(bytes memory body) private pure returns (bytes memory) {
        return abi.encodePacked(TUPLE_OFFSET, body);
    }
}
