// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";

/// @title BLSVerifier
/// @notice Verifies BLS12-381 signatures in the minimal-signature-size variant (signature in G1,
/// public key in G2) with the EIP-2537 precompiles, for a caller-chosen hash-to-curve tag.
/// @dev Signatures in G1 make a verification cheap on chain: hashing onto G1 maps two field elements
/// with MAP_FP_TO_G1 (5,500 gas each) where G2 needs MAP_FP2_TO_G2 (23,800 each). Surety's
/// certificates use the proof-of-possession tag `POP_DST`; this library carries its own RFC 9380
/// hash_to_curve (suite BLS12381G1_XMD:SHA-256_SSWU_RO_) that takes the tag as a parameter.
/// Points use solady's EIP-2537 structs (big-endian, 64 bytes per Fp element).
///
/// Invalid points: `verify` never reverts because of the public key or the signature. A point that
/// is not canonically encoded, not on the curve or not in the prime-order subgroup makes the
/// pairing precompile fail, and `verify` then returns false. Per EIP-2537 a failing precompile
/// consumes all gas forwarded to it (63/64 of what is left), so a submitter of a malformed
/// signature pays for it. The 1/64 kept back lets the caller finish (checked: a 400-byte message with
/// an off-curve key in a 300k-gas transaction still returns false and completes).
/// The point at infinity is rejected for both the key and the signature before any precompile
/// runs: an identity public key would make the pairing check pass for any message.
library BLSVerifier {
    /// @notice The hash-to-curve tag of Surety certificates: the IETF BLS proof-of-possession ciphersuite
    /// with signatures in G1 (draft-irtf-cfrg-bls-signature §4.2.3).
    bytes internal constant POP_DST = "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_POP_";

    /// @dev RFC 9380 §5.3.1: a tag longer than 255 bytes needs the oversize-DST procedure, which
    /// this library does not implement; an empty tag is forbidden (§3.1).
    uint256 private constant MAX_DST_LENGTH = 255;

    /// @dev expand_message_xmd output length: 2 Fp elements x L (64) bytes.
    uint256 private constant EXPANDED_LENGTH = 128;

    /// @dev Number of SHA-256 output blocks in the expanded message (EXPANDED_LENGTH / 32).
    uint256 private constant EXPANDED_BLOCKS = 4;

    /// @dev SHA-256 input block size in bytes (the Z_pad prefix of msg_prime).
    uint256 private constant SHA256_BLOCK_SIZE = 64;

    /// @dev SHA-256 output length in bytes.
    uint256 private constant SHA256_OUTPUT_LENGTH = 32;

    /// @dev The SHA-256 and modular exponentiation precompiles (numbers: assembly takes only number constants).
    uint256 private constant SHA256_PRECOMPILE = 0x02;
    uint256 private constant MODEXP_PRECOMPILE = 0x05;

    /// @dev Field modulus p of BLS12-381 as two big-endian words (the top 16 bytes are zero).
    bytes32 private constant P_HI = 0x000000000000000000000000000000001a0111ea397fe69a4b1ba7b6434bacd7;
    bytes32 private constant P_LO = 0x64774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab;

    /// @dev Length in bytes of one hash_to_field element (L), of the modexp exponent and modulus.
    uint256 private constant FIELD_ELEMENT_LENGTH = 64;
    uint256 private constant EXPONENT_LENGTH = 32;

    /// @dev The negated generator of G2, -G2 = (x, -y), so that the single pairing check
    /// e(H(m), pk) * e(sig, -G2) == 1 expresses e(H(m), pk) == e(sig, G2).
    bytes32 private constant NEG_G2_X_C0_A =
        0x00000000000000000000000000000000024aa2b2f08f0a91260805272dc51051;
    bytes32 private constant NEG_G2_X_C0_B =
        0xc6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8;
    bytes32 private constant NEG_G2_X_C1_A =
        0x0000000000000000000000000000000013e02b6052719f607dacd3a088274f65;
    bytes32 private constant NEG_G2_X_C1_B =
        0x596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e;
    bytes32 private constant NEG_G2_Y_C0_A =
        0x000000000000000000000000000000000d1b3cc2c7027888be51d9ef691d77bc;
    bytes32 private constant NEG_G2_Y_C0_B =
        0xb679afda66c73f17f9ee3837a55024f78c71363275a75d75d86bab79f74782aa;
    bytes32 private constant NEG_G2_Y_C1_A =
        0x0000000000000000000000000000000013fa4d4a0ad8b1ce186ed5061789213d;
    bytes32 private constant NEG_G2_Y_C1_B =
        0x993923066dddaf1040bc3ff59f825c78df74f2d75467e25e0f55f8a00fa030ed;

    /// @dev The pairing precompile returns a 32-byte word equal to 1 when the product is the identity.
    uint256 private constant PAIRING_RESULT_LENGTH = 32;
    uint256 private constant PAIRING_SUCCESS = 1;

    /// @dev The pairing precompile (a number: assembly takes only number constants).
    uint256 private constant BLS12_PAIRING_CHECK = 0x0f;

    /// @dev Length of a G1 point in EIP-2537 form.
    uint256 private constant G1_POINT_LENGTH = 128;

    /// @dev Length of a G2 point in EIP-2537 form (the G2MSM output).
    uint256 private constant G2_POINT_LENGTH = 256;

    /// @dev The EIP-2537 precompiles used in assembly (as numbers: assembly takes only number constants).
    uint256 private constant BLS12_MAP_FP_TO_G1 = 0x10;
    uint256 private constant BLS12_G1ADD = 0x0b;

    /// @notice The hash-to-curve tag is empty or longer than 255 bytes.
    error InvalidDstLength(uint256 length);

    /// @notice The SHA-256 precompile failed (only possible when out of gas).
    error Sha256Failed();

    /// @notice The modexp precompile failed (only possible when out of gas).
    error ModExpFailed();

    /// @notice The MAP_FP_TO_G1 precompile failed (only possible when out of gas: reduced inputs are valid).
    error MapToG1Failed();

    /// @notice The G1ADD precompile failed (only possible when out of gas: mapped points are valid).
    error G1AddFailed();

    /// @notice RFC 9380 hash_to_curve onto G1 (suite BLS12381G1_XMD:SHA-256_SSWU_RO_) with tag `dst`.
    /// @param message The message to hash (any length).
    /// @param dst The domain separation tag, 1 to 255 bytes.
    /// @return result The hashed point in EIP-2537 form.
    function hashToG1(
        bytes memory message,
        bytes memory dst
    ) internal view returns (BLS.G1Point memory result) {
        bytes32[EXPANDED_BLOCKS] memory uniform = expandMessageXmd(message, dst);
        // hash_to_field with count 2, m 1, L 64: u0 = uniform[0..64), u1 = uniform[64..128); each 64-byte
        // integer is reduced mod p in place (modexp base^1 mod p). MAP_FP_TO_G1 maps with SSWU and clears
        // the cofactor; clearing is a homomorphism, so clear(map(u0)) + clear(map(u1)) equals RFC 9380's
        // clear(map(u0) + map(u1)). Assembly, as every remuneration runs it.
        assembly ("memory-safe") {
            let s := mload(0x40)
            // modexp header: base length 64, exponent length 32, modulus length 64; exponent 1; modulus p.
            mstore(s, FIELD_ELEMENT_LENGTH)
            mstore(add(s, 0x20), EXPONENT_LENGTH)
            mstore(add(s, 0x40), FIELD_ELEMENT_LENGTH)
            mstore(add(s, 0xa0), 1)
            mstore(add(s, 0xc0), P_HI)
            mstore(add(s, 0xe0), P_LO)
            for {
                let i := 0
            } lt(i, 2) {
                i := add(i, 1)
            } {
                let element := add(uniform, mul(i, FIELD_ELEMENT_LENGTH))
                mcopy(add(s, 0x60), element, FIELD_ELEMENT_LENGTH)
                if iszero(
                    and(
                        eq(returndatasize(), FIELD_ELEMENT_LENGTH),
                        staticcall(gas(), MODEXP_PRECOMPILE, s, 0x100, element, FIELD_ELEMENT_LENGTH)
                    )
                ) {
                    mstore(0x00, 0x1f7ec5f0) // `ModExpFailed()`
                    revert(0x1c, 0x04)
                }
            }
            // map(u0) at s, map(u1) right after it: the G1ADD input.
            for {
                let i := 0
            } lt(i, 2) {
                i := add(i, 1)
            } {
                if iszero(
                    and(
                        eq(returndatasize(), G1_POINT_LENGTH),
                        staticcall(
                            gas(),
                            BLS12_MAP_FP_TO_G1,
                            add(uniform, mul(i, FIELD_ELEMENT_LENGTH)),
                            FIELD_ELEMENT_LENGTH,
                            add(s, mul(i, G1_POINT_LENGTH)),
                            G1_POINT_LENGTH
                        )
                    )
                ) {
                    mstore(0x00, 0x718774ab) // `MapToG1Failed()`
                    revert(0x1c, 0x04)
                }
            }
            if iszero(
                and(
                    eq(returndatasize(), G1_POINT_LENGTH),
                    staticcall(gas(), BLS12_G1ADD, s, mul(2, G1_POINT_LENGTH), result, G1_POINT_LENGTH)
                )
            ) {
                mstore(0x00, 0xd6cc76eb) // `G1AddFailed()`
                revert(0x1c, 0x04)
            }
        }
    }

    /// @notice Checks a BLS signature: e(H(message), publicKey) == e(signature, G2).
    /// @dev Returns false (never reverts) for an invalid key or signature; see the library notes.
    /// Reverts with `InvalidDstLength` only for a bad tag, which is the caller's constant.
    /// @param publicKey The signer's public key in G2 (EIP-2537 form).
    /// @param message The signed message.
    /// @param signature The signature in G1 (EIP-2537 form).
    /// @param dst The hash-to-curve tag the signer used (`POP_DST` for Surety certificates).
    /// @return valid Whether the signature is valid.
    function verify(
        BLS.G2Point memory publicKey,
        bytes memory message,
        BLS.G1Point memory signature,
        bytes memory dst
    ) internal view returns (bool valid) {
        if (_isInfinity(publicKey) || _isInfinity(signature)) return false;
        BLS.G1Point memory hashed = hashToG1(message, dst);
        // The precompile's input: two pairs of a G1 point (128 bytes) and a G2 point (256 bytes), laid out
        // in place: (H(m), publicKey), (signature, -G2). The pairing precompile checks that every point
        // is canonical, on its curve and in its prime-order subgroup, and fails otherwise.
        assembly ("memory-safe") {
            let s := mload(0x40)
            mcopy(s, hashed, G1_POINT_LENGTH)
            mcopy(add(s, 0x80), publicKey, G2_POINT_LENGTH)
            mcopy(add(s, 0x180), signature, G1_POINT_LENGTH)
            mstore(add(s, 0x200), NEG_G2_X_C0_A)
            mstore(add(s, 0x220), NEG_G2_X_C0_B)
            mstore(add(s, 0x240), NEG_G2_X_C1_A)
            mstore(add(s, 0x260), NEG_G2_X_C1_B)
            mstore(add(s, 0x280), NEG_G2_Y_C0_A)
            mstore(add(s, 0x2a0), NEG_G2_Y_C0_B)
            mstore(add(s, 0x2c0), NEG_G2_Y_C1_A)
            mstore(add(s, 0x2e0), NEG_G2_Y_C1_B)
            let ok := staticcall(gas(), BLS12_PAIRING_CHECK, s, 0x300, 0x00, PAIRING_RESULT_LENGTH)
            valid := and(
                ok,
                and(eq(returndatasize(), PAIRING_RESULT_LENGTH), eq(mload(0x00), PAIRING_SUCCESS))
            )
        }
    }

    /// @notice Whether `publicKey` is usable as a verification key: canonical encoding, on the curve,
    /// in the prime-order subgroup and not the point at infinity.
    /// @dev Meant for the moment a key is configured (a Vault constructor or setter), so that a bad key
    /// is refused once instead of making every later `verify` return false. G2MSM performs the
    /// subgroup check EIP-2537 requires; multiplying by 1 leaves the point unchanged. A failing
    /// precompile consumes the gas forwarded to it (see the library notes).
    /// @param publicKey The candidate key in EIP-2537 form.
    /// @return Whether the key is valid.
    function isValidPublicKey(BLS.G2Point memory publicKey) internal view returns (bool) {
        if (_isInfinity(publicKey)) return false;
        (bool ok, bytes memory result) = BLS.BLS12_G2MSM.staticcall(abi.encode(publicKey, uint256(1)));
        return ok && result.length == G2_POINT_LENGTH;
    }

    /// @notice RFC 9380 §5.3.1 expand_message_xmd with SHA-256 and len_in_bytes = 128.
    /// @param message The message.
    /// @param dst The domain separation tag, 1 to 255 bytes.
    /// @return uniform The 128 output bytes as four 32-byte blocks b_1 .. b_4.
    function expandMessageXmd(
        bytes memory message,
        bytes memory dst
    ) internal view returns (bytes32[EXPANDED_BLOCKS] memory uniform) {
        uint256 dstLength = dst.length;
        if (dstLength == 0 || dstLength > MAX_DST_LENGTH) revert InvalidDstLength(dstLength);
        // One scratch buffer above the free memory pointer, never allocated: msg_prime first, then
        // b_0 ^ b_(i-1) || I2OSP(i, 1) || DST_prime for each later block (it only shrinks).
        assembly ("memory-safe") {
            // Writes I2OSP(i, 1) || DST || I2OSP(len(DST), 1) at o; returns the end.
            function suffix(o, i, tag, tagLength) -> end {
                mstore8(o, i)
                mcopy(add(o, 1), add(tag, 0x20), tagLength)
                mstore8(add(add(o, 1), tagLength), tagLength)
                end := add(add(o, 2), tagLength)
            }
            function sha(data, length) -> h {
                if iszero(
                    and(
                        eq(returndatasize(), 0x20),
                        staticcall(gas(), SHA256_PRECOMPILE, data, length, 0x00, 0x20)
                    )
                ) {
                    mstore(0x00, 0xc176b3c5) // `Sha256Failed()`
                    revert(0x1c, 0x04)
                }
                h := mload(0x00)
            }
            let s := mload(0x40)
            // msg_prime = Z_pad (64 zero bytes) || msg || I2OSP(128, 2) || I2OSP(0, 1) || DST_prime
            mstore(s, 0)
            mstore(add(s, 0x20), 0)
            let messageLength := mload(message)
            mcopy(add(s, SHA256_BLOCK_SIZE), add(message, 0x20), messageLength)
            let o := add(add(s, SHA256_BLOCK_SIZE), messageLength)
            mstore(o, shl(240, EXPANDED_LENGTH))
            let b0 := sha(s, sub(suffix(add(o, 2), 0, dst, dstLength), s))
            // b_1 = H(b_0 || I2OSP(1, 1) || DST_prime)
            mstore(s, b0)
            let previous := sha(s, sub(suffix(add(s, 0x20), 1, dst, dstLength), s))
            mstore(uniform, previous)
            for {
                let i := 2
            } iszero(gt(i, EXPANDED_BLOCKS)) {
                i := add(i, 1)
            } {
                // b_i = H(strxor(b_0, b_(i-1)) || I2OSP(i, 1) || DST_prime)
                mstore(s, xor(b0, previous))
                previous := sha(s, sub(suffix(add(s, 0x20), i, dst, dstLength), s))
                mstore(add(uniform, mul(sub(i, 1), 0x20)), previous)
            }
        }
    }

    /// @dev EIP-2537 encodes the point at infinity as all zeros.
    function _isInfinity(BLS.G1Point memory p) private pure returns (bool) {
        return (p.x_a | p.x_b | p.y_a | p.y_b) == bytes32(0);
    }

    function _isInfinity(BLS.G2Point memory p) private pure returns (bool) {
        return
            (p.x_c0_a | p.x_c0_b | p.x_c1_a | p.x_c1_b | p.y_c0_a | p.y_c0_b | p.y_c1_a | p.y_c1_b) ==
            bytes32(0);
    }
}
