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
 * verify, which returns false for anything that is not a valid signature.
 */
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

static napi_value init(napi_env env, napi_value exports) {
    napi_property_descriptor properties[] = {
        {"keygen", NULL, keygen, NULL, NULL, NULL, napi_enumerable, NULL},
        {"publicKey", NULL, public_key, NULL, NULL, NULL, napi_enumerable, NULL},
        {"sign", NULL, sign, NULL, NULL, NULL, napi_enumerable, NULL},
        {"verify", NULL, verify, NULL, NULL, NULL, napi_enumerable, NULL},
    };
    CHECK(napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties));
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
