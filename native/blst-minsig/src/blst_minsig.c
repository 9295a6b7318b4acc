/*
 * blst-minsig: Node-API binding of blst's minimal-signature-size BLS12-381 API (signature in G1,
 * public key in G2), the scheme of Surety certificates (docs/protocol.md, "Certificates").
 *
 * @chainsafe/blst 2.x exposes only the minimal-pubkey-size variant (signature in G2), so Core signs
 * through this file instead. It is compiled by node-gyp during `npm install` / `npm ci` against the
 * blst C sources shipped inside the npm package `@chainsafe/blst@0.2.11` (installed under the alias
 * `blst-sources`; Apache-2.0, see that package's blst/LICENSE).
 *
 * Every function takes and returns Uint8Arrays; bad input throws a TypeError/RangeError, except
 * verify and verifyPrepared, which return false for anything that is not a valid signature, and
 * prepareKey, which returns null for a key that is not a valid one.
 */
#define NAPI_VERSION 8
#include <stdlib.h>
#include <string.h>
#include <node_api.h>
#include "blst.h"

#define SECRET_KEY_LENGTH 32
#define PUBLIC_KEY_LENGTH 96 /* compressed G2 */
#define SIGNATURE_LENGTH 48  /* compressed G1 */
#define MIN_IKM_LENGTH 32
#define MAX_ARGS 4

#define CHECK(call)                                                   \
    do {                                                              \
        if ((call) != napi_ok) {                                      \
            napi_throw_error(env, NULL, "blst-minsig: N-API failure"); \
            return NULL;                                              \
        }                                                             \
    } while (0)

/* Reads argument `index` as a Uint8Array; throws a TypeError and returns 0 when it is not one. */
static int get_bytes(napi_env env, napi_value value, const char *name, const byte **data, size_t *length) {
    bool is_typed_array = false;
    if (napi_is_typedarray(env, value, &is_typed_array) != napi_ok || !is_typed_array) {
        napi_throw_type_error(env, NULL, name);
        return 0;
    }
    napi_typedarray_type type;
    void *raw = NULL;
    if (napi_get_typedarray_info(env, value, &type, length, &raw, NULL, NULL) != napi_ok ||
        type != napi_uint8_array) {
        napi_throw_type_error(env, NULL, name);
        return 0;
    }
    *data = (const byte *)raw;
    return 1;
}

static napi_value new_bytes(napi_env env, const byte *data, size_t length) {
    void *out = NULL;
    napi_value buffer;
    CHECK(napi_create_buffer_copy(env, length, data, &out, &buffer));
    return buffer;
}

/* Parses a 32-byte big-endian secret key; throws a RangeError unless 0 < sk < r. */
static int get_secret_key(napi_env env, napi_value value, blst_scalar *sk) {
    const byte *data;
    size_t length;
    if (!get_bytes(env, value, "secretKey must be a Uint8Array", &data, &length)) return 0;
    if (length != SECRET_KEY_LENGTH) {
        napi_throw_range_error(env, NULL, "secretKey must be 32 bytes");
        return 0;
    }
    blst_scalar_from_bendian(sk, data);
    if (!blst_sk_check(sk)) {
        memset(sk, 0, sizeof(*sk));
        napi_throw_range_error(env, NULL, "secretKey must be non-zero and below the group order");
        return 0;
    }
    return 1;
}

/* keygen(ikm: Uint8Array): Uint8Array(32): IETF BLS KeyGen, as blst (and @chainsafe/blst) implement it. */
static napi_value keygen(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 1) {
        napi_throw_type_error(env, NULL, "keygen(ikm) takes 1 argument");
        return NULL;
    }
    const byte *ikm;
    size_t ikm_length;
    if (!get_bytes(env, argv[0], "ikm must be a Uint8Array", &ikm, &ikm_length)) return NULL;
    if (ikm_length < MIN_IKM_LENGTH) {
        napi_throw_range_error(env, NULL, "ikm must be at least 32 bytes");
        return NULL;
    }
    blst_scalar sk;
    byte out[SECRET_KEY_LENGTH];
    blst_keygen(&sk, ikm, ikm_length, NULL, 0);
    blst_bendian_from_scalar(out, &sk);
    memset(&sk, 0, sizeof(sk));
    napi_value result = new_bytes(env, out, sizeof(out));
    memset(out, 0, sizeof(out));
    return result;
}

/* publicKey(secretKey): Uint8Array(96): the compressed G2 public key. */
static napi_value public_key(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 1) {
        napi_throw_type_error(env, NULL, "publicKey(secretKey) takes 1 argument");
        return NULL;
    }
    blst_scalar sk;
    if (!get_secret_key(env, argv[0], &sk)) return NULL;
    blst_p2 pk;
    byte out[PUBLIC_KEY_LENGTH];
    blst_sk_to_pk_in_g2(&pk, &sk);
    memset(&sk, 0, sizeof(sk));
    blst_p2_compress(out, &pk);
    return new_bytes(env, out, sizeof(out));
}

/* sign(secretKey, message, dst): Uint8Array(48): hash_to_curve onto G1 with `dst`, times the key. */
static napi_value sign(napi_env env, napi_callback_info info) {
    size_t argc = 3;
    napi_value argv[3];
    CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 3) {
        napi_throw_type_error(env, NULL, "sign(secretKey, message, dst) takes 3 arguments");
        return NULL;
    }
    const byte *message, *dst;
    size_t message_length, dst_length;
    if (!get_bytes(env, argv[1], "message must be a Uint8Array", &message, &message_length)) return NULL;
    if (!get_bytes(env, argv[2], "dst must be a Uint8Array", &dst, &dst_length)) return NULL;
    blst_scalar sk;
    if (!get_secret_key(env, argv[0], &sk)) return NULL;
    blst_p1 hash, signature;
    byte out[SIGNATURE_LENGTH];
    blst_hash_to_g1(&hash, message, message_length, dst, dst_length, NULL, 0);
    blst_sign_pk_in_g2(&signature, &hash, &sk);
    memset(&sk, 0, sizeof(sk));
    blst_p1_compress(out, &signature);
    return new_bytes(env, out, sizeof(out));
}

/*
 * verify(publicKey, message, signature, dst): boolean. Both points compressed; each must decode,
 * lie in its prime-order subgroup and not be the point at infinity. Never throws for bad points.
 */
static napi_value verify(napi_env env, napi_callback_info info) {
    size_t argc = MAX_ARGS;
    napi_value argv[MAX_ARGS];
    napi_value result;
    CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < MAX_ARGS) {
        napi_throw_type_error(env, NULL, "verify(publicKey, message, signature, dst) takes 4 arguments");
        return NULL;
    }
    const byte *pk_bytes, *message, *sig_bytes, *dst;
    size_t pk_length, message_length, sig_length, dst_length;
    if (!get_bytes(env, argv[0], "publicKey must be a Uint8Array", &pk_bytes, &pk_length)) return NULL;
    if (!get_bytes(env, argv[1], "message must be a Uint8Array", &message, &message_length)) return NULL;
    if (!get_bytes(env, argv[2], "signature must be a Uint8Array", &sig_bytes, &sig_length)) return NULL;
    if (!get_bytes(env, argv[3], "dst must be a Uint8Array", &dst, &dst_length)) return NULL;
    bool ok = false;
    blst_p2_affine pk;
    blst_p1_affine signature;
    if (pk_length == PUBLIC_KEY_LENGTH && sig_length == SIGNATURE_LENGTH &&
        blst_p2_uncompress(&pk, pk_bytes) == BLST_SUCCESS && blst_p1_uncompress(&signature, sig_bytes) == BLST_SUCCESS &&
        !blst_p2_affine_is_inf(&pk) && !blst_p1_affine_is_inf(&signature)) {
        // blst_core_verify_pk_in_g2 checks both points' subgroup membership itself (pk_groupcheck and
        // sig_groupcheck are set in its PAIRING_Aggregate_PK_in_G2 call): checking them here as well
        // ran the costly G2 check twice per verification.
        ok = blst_core_verify_pk_in_g2(&pk, &signature, true, message, message_length, dst, dst_length, NULL, 0) ==
             BLST_SUCCESS;
    }
    CHECK(napi_get_boolean(env, ok, &result));
    return result;
}

/*
 * A public key checked once (decoded, in G2, not infinity) with the Miller loop lines of it and of the
 * G2 generator precomputed (blst_precompute_lines): verifying against it skips the key's decompression
 * and subgroup check and the G2 half of both Miller loops. The check is the same equation blst's
 * core_verify evaluates, e(sig, g2)^-1 * e(H(msg), pk) == 1 after one final exponentiation.
 */
typedef struct {
    blst_fp6 key_lines[68];
    blst_fp6 generator_lines[68];
} prepared_key;

static const napi_type_tag PREPARED_KEY_TAG = {0x5375726574794b65ULL, 0x79426c73744d5331ULL};

static void free_prepared(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    free(data);
}

/* The prepared key behind `value`; throws a TypeError and returns NULL when it is not one of prepareKey's. */
static const prepared_key *get_prepared_key(napi_env env, napi_value value) {
    bool tagged = false;
    napi_valuetype type;
    void *data = NULL;
    if (napi_typeof(env, value, &type) != napi_ok) return NULL;
    if (type == napi_external && napi_check_object_type_tag(env, value, &PREPARED_KEY_TAG, &tagged) != napi_ok)
        return NULL;
    if (!tagged || napi_get_value_external(env, value, &data) != napi_ok) {
        napi_throw_type_error(env, NULL, "preparedKey must come from prepareKey");
        return NULL;
    }
    return (const prepared_key *)data;
}

/* Both sides' Miller loops against the prepared lines and one final exponentiation: e(sig, g2) == e(hash, pk). */
static bool pairing_check(const prepared_key *prepared, const blst_p1_affine *signature, const blst_p1_affine *hash) {
    blst_fp12 signature_side, message_side;
    blst_miller_loop_lines(&signature_side, prepared->generator_lines, signature);
    blst_miller_loop_lines(&message_side, prepared->key_lines, hash);
    return blst_fp12_finalverify(&signature_side, &message_side);
}

/* prepareKey(publicKey): an opaque prepared key, or null when publicKey is not a valid compressed G2 key. */
static napi_value prepare_key(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    napi_value result;
    CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 1) {
        napi_throw_type_error(env, NULL, "prepareKey(publicKey) takes 1 argument");
        return NULL;
    }
    const byte *pk_bytes;
    size_t pk_length;
    if (!get_bytes(env, argv[0], "publicKey must be a Uint8Array", &pk_bytes, &pk_length)) return NULL;
    blst_p2_affine pk;
    if (pk_length != PUBLIC_KEY_LENGTH || blst_p2_uncompress(&pk, pk_bytes) != BLST_SUCCESS ||
        blst_p2_affine_is_inf(&pk) || !blst_p2_affine_in_g2(&pk)) {
        CHECK(napi_get_null(env, &result));
        return result;
    }
    prepared_key *prepared = malloc(sizeof(prepared_key));
    if (prepared == NULL) {
        napi_throw_error(env, NULL, "blst-minsig: out of memory");
        return NULL;
    }
    blst_precompute_lines(prepared->key_lines, &pk);
    blst_precompute_lines(prepared->generator_lines, blst_p2_affine_generator());
    if (napi_create_external(env, prepared, free_prepared, NULL, &result) != napi_ok) {
        free(prepared);
        napi_throw_error(env, NULL, "blst-minsig: N-API failure");
        return NULL;
    }
    CHECK(napi_type_tag_object(env, result, &PREPARED_KEY_TAG));
    return result;
}

/*
 * verifyPrepared(preparedKey, message, signature, dst): boolean; verify() against a key prepareKey
 * accepted. The signature must decode, lie in G1 and not be the point at infinity.
 */
static napi_value verify_prepared(napi_env env, napi_callback_info info) {
    size_t argc = MAX_ARGS;
    napi_value argv[MAX_ARGS];
    napi_value result;
    CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < MAX_ARGS) {
        napi_throw_type_error(env, NULL, "verifyPrepared(preparedKey, message, signature, dst) takes 4 arguments");
        return NULL;
    }
    const prepared_key *prepared = get_prepared_key(env, argv[0]);
    if (prepared == NULL) return NULL;
    const byte *message, *sig_bytes, *dst;
    size_t message_length, sig_length, dst_length;
    if (!get_bytes(env, argv[1], "message must be a Uint8Array", &message, &message_length)) return NULL;
    if (!get_bytes(env, argv[2], "signature must be a Uint8Array", &sig_bytes, &sig_length)) return NULL;
    if (!get_bytes(env, argv[3], "dst must be a Uint8Array", &dst, &dst_length)) return NULL;
    bool ok = false;
    blst_p1_affine signature;
    if (sig_length == SIGNATURE_LENGTH && blst_p1_uncompress(&signature, sig_bytes) == BLST_SUCCESS &&
        !blst_p1_affine_is_inf(&signature) && blst_p1_affine_in_g1(&signature)) {
        blst_p1 hash;
        blst_p1_affine hash_affine;
        blst_hash_to_g1(&hash, message, message_length, dst, dst_length, NULL, 0);
        blst_p1_to_affine(&hash_affine, &hash);
        ok = pairing_check(prepared, &signature, &hash_affine);
    }
    CHECK(napi_get_boolean(env, ok, &result));
    return result;
}

#define BATCH_COEFFICIENT_BYTES 8

/*
 * verifyBatchPrepared(preparedKey, messages, signatures, dst, coefficients): boolean. True when every
 * signatures[i] is the key's over messages[i] (each must decode, lie in G1 and not be infinity), checked at
 * once with random coefficients r_i (8 bytes each from `coefficients`, little-endian, top bit forced so that
 * none is zero): e(sum r_i sig_i, g2) == e(sum r_i H(m_i), pk), two Miller loops and one final
 * exponentiation for the whole batch. A batch with an invalid signature passes with probability at most
 * 2^-63 over the coefficients, which the caller draws afresh from a CSPRNG for every call. False says only
 * that some signature failed: the caller verifies them one by one to know which.
 */
static napi_value verify_batch_prepared(napi_env env, napi_callback_info info) {
    size_t argc = 5;
    napi_value argv[5];
    napi_value result;
    CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 5) {
        napi_throw_type_error(env, NULL,
                              "verifyBatchPrepared(preparedKey, messages, signatures, dst, coefficients) takes 5 arguments");
        return NULL;
    }
    const prepared_key *prepared = get_prepared_key(env, argv[0]);
    if (prepared == NULL) return NULL;
    bool messages_array = false, signatures_array = false;
    CHECK(napi_is_array(env, argv[1], &messages_array));
    CHECK(napi_is_array(env, argv[2], &signatures_array));
    if (!messages_array || !signatures_array) {
        napi_throw_type_error(env, NULL, "messages and signatures must be arrays");
        return NULL;
    }
    uint32_t count = 0, signature_count = 0;
    CHECK(napi_get_array_length(env, argv[1], &count));
    CHECK(napi_get_array_length(env, argv[2], &signature_count));
    if (count == 0 || count != signature_count) {
        napi_throw_range_error(env, NULL, "messages and signatures must be non-empty and of the same length");
        return NULL;
    }
    const byte *dst, *coefficients;
    size_t dst_length, coefficients_length;
    if (!get_bytes(env, argv[3], "dst must be a Uint8Array", &dst, &dst_length)) return NULL;
    if (!get_bytes(env, argv[4], "coefficients must be a Uint8Array", &coefficients, &coefficients_length)) return NULL;
    if (coefficients_length != (size_t)count * BATCH_COEFFICIENT_BYTES) {
        napi_throw_range_error(env, NULL, "coefficients must be 8 bytes per signature");
        return NULL;
    }
    bool ok = true;
    blst_p1 signature_sum, hash_sum;
    memset(&signature_sum, 0, sizeof(signature_sum)); /* Z = 0: the point at infinity */
    memset(&hash_sum, 0, sizeof(hash_sum));
    for (uint32_t i = 0; i < count && ok; i++) {
        napi_value message_value, signature_value;
        CHECK(napi_get_element(env, argv[1], i, &message_value));
        CHECK(napi_get_element(env, argv[2], i, &signature_value));
        const byte *message, *sig_bytes;
        size_t message_length, sig_length;
        if (!get_bytes(env, message_value, "messages must hold Uint8Arrays", &message, &message_length)) return NULL;
        if (!get_bytes(env, signature_value, "signatures must hold Uint8Arrays", &sig_bytes, &sig_length)) return NULL;
        blst_p1_affine signature;
        if (sig_length != SIGNATURE_LENGTH || blst_p1_uncompress(&signature, sig_bytes) != BLST_SUCCESS ||
            blst_p1_affine_is_inf(&signature) || !blst_p1_affine_in_g1(&signature)) {
            ok = false;
            break;
        }
        byte coefficient[BATCH_COEFFICIENT_BYTES];
        memcpy(coefficient, coefficients + (size_t)i * BATCH_COEFFICIENT_BYTES, BATCH_COEFFICIENT_BYTES);
        coefficient[BATCH_COEFFICIENT_BYTES - 1] |= 0x80;
        blst_p1 point, scaled, hash;
        blst_p1_from_affine(&point, &signature);
        blst_p1_mult(&scaled, &point, coefficient, 8 * BATCH_COEFFICIENT_BYTES);
        blst_p1_add_or_double(&signature_sum, &signature_sum, &scaled);
        blst_hash_to_g1(&hash, message, message_length, dst, dst_length, NULL, 0);
        blst_p1_mult(&scaled, &hash, coefficient, 8 * BATCH_COEFFICIENT_BYTES);
        blst_p1_add_or_double(&hash_sum, &hash_sum, &scaled);
    }
    if (ok && (blst_p1_is_inf(&signature_sum) || blst_p1_is_inf(&hash_sum))) ok = false;
    if (ok) {
        blst_p1_affine signature_affine, hash_affine;
        blst_p1_to_affine(&signature_affine, &signature_sum);
        blst_p1_to_affine(&hash_affine, &hash_sum);
        ok = pairing_check(prepared, &signature_affine, &hash_affine);
    }
    CHECK(napi_get_boolean(env, ok, &result));
    return result;
}

static napi_value init(napi_env env, napi_value exports) {
    napi_property_descriptor properties[] = {
        {"keygen", NULL, keygen, NULL, NULL, NULL, napi_enumerable, NULL},
        {"publicKey", NULL, public_key, NULL, NULL, NULL, napi_enumerable, NULL},
        {"sign", NULL, sign, NULL, NULL, NULL, napi_enumerable, NULL},
        {"verify", NULL, verify, NULL, NULL, NULL, napi_enumerable, NULL},
        {"prepareKey", NULL, prepare_key, NULL, NULL, NULL, napi_enumerable, NULL},
        {"verifyPrepared", NULL, verify_prepared, NULL, NULL, NULL, napi_enumerable, NULL},
        {"verifyBatchPrepared", NULL, verify_batch_prepared, NULL, NULL, NULL, napi_enumerable, NULL},
    };
    CHECK(napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties));
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
