/*
 * keccak-tree: Node-API routines for the guarantees root of a clearing cycle (docs/clearing.md, "Netting
 * in the database"): keccak256 of one buffer, keccak256 of many sorted 32-byte pairs in one call (one
 * level of an OpenZeppelin StandardMerkleTree), an in-place bytewise sort of 32-byte hashes, and one
 * level of the accounts' sum trees per call (sdk/debit-tree.ts, contracts/lib/SumTree.sol). Used
 * through operator/clearing/native-keccak.ts, which falls back to JavaScript when this addon is missing
 * and checks it against @noble/hashes at load; test/operator/native-keccak.test.ts compares every routine
 * with the JavaScript one on random inputs.
 *
 * Keccak-f[1600] is written from its specification (FIPS 202, section 3; keccak256 is Keccak[512] with
 * the original padding 0x01 ... 0x80, as Ethereum uses it): the step mappings theta, rho, pi, chi and
 * iota written out for one round from the specification's rotation offsets and lane permutation, no
 * tables but the round constants. Original code of this project, under the project's licence; nothing
 * is copied from another implementation.
 */
#include <stdint.h>
#include <string.h>
#include <node_api.h>

#define HASH 32
#define RATE 136 /* keccak256: 1088-bit rate */
#define MAX_ARGS 4

static const uint64_t ROUND_CONSTANTS[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};
#define ROTL64(x, n) (((x) << (n)) | ((x) >> (64 - (n))))

/*
 * The 24 rounds on lanes a[x + 5y]. One round written out: theta (column parities c, d), rho and pi
 * (b[y + 5((2x + 3y) mod 5)] = rot(a[x + 5y] ^ d[x], r[x][y]) with FIPS 202's offsets r), chi, iota.
 */
static void keccak_f1600(uint64_t a[25]) {
    uint64_t b[25];
    for (int round = 0; round < 24; round++) {
        uint64_t c0 = a[0] ^ a[5] ^ a[10] ^ a[15] ^ a[20];
        uint64_t c1 = a[1] ^ a[6] ^ a[11] ^ a[16] ^ a[21];
        uint64_t c2 = a[2] ^ a[7] ^ a[12] ^ a[17] ^ a[22];
        uint64_t c3 = a[3] ^ a[8] ^ a[13] ^ a[18] ^ a[23];
        uint64_t c4 = a[4] ^ a[9] ^ a[14] ^ a[19] ^ a[24];
        uint64_t d0 = c4 ^ ROTL64(c1, 1);
        uint64_t d1 = c0 ^ ROTL64(c2, 1);
        uint64_t d2 = c1 ^ ROTL64(c3, 1);
        uint64_t d3 = c2 ^ ROTL64(c4, 1);
        uint64_t d4 = c3 ^ ROTL64(c0, 1);
        b[0] = (a[0] ^ d0);
        b[10] = ROTL64((a[1] ^ d1), 1);
        b[20] = ROTL64((a[2] ^ d2), 62);
        b[5] = ROTL64((a[3] ^ d3), 28);
        b[15] = ROTL64((a[4] ^ d4), 27);
        b[16] = ROTL64((a[5] ^ d0), 36);
        b[1] = ROTL64((a[6] ^ d1), 44);
        b[11] = ROTL64((a[7] ^ d2), 6);
        b[21] = ROTL64((a[8] ^ d3), 55);
        b[6] = ROTL64((a[9] ^ d4), 20);
        b[7] = ROTL64((a[10] ^ d0), 3);
        b[17] = ROTL64((a[11] ^ d1), 10);
        b[2] = ROTL64((a[12] ^ d2), 43);
        b[12] = ROTL64((a[13] ^ d3), 25);
        b[22] = ROTL64((a[14] ^ d4), 39);
        b[23] = ROTL64((a[15] ^ d0), 41);
        b[8] = ROTL64((a[16] ^ d1), 45);
        b[18] = ROTL64((a[17] ^ d2), 15);
        b[3] = ROTL64((a[18] ^ d3), 21);
        b[13] = ROTL64((a[19] ^ d4), 8);
        b[14] = ROTL64((a[20] ^ d0), 18);
        b[24] = ROTL64((a[21] ^ d1), 2);
        b[9] = ROTL64((a[22] ^ d2), 61);
        b[19] = ROTL64((a[23] ^ d3), 56);
        b[4] = ROTL64((a[24] ^ d4), 14);
        a[0] = b[0] ^ (~b[1] & b[2]);
        a[1] = b[1] ^ (~b[2] & b[3]);
        a[2] = b[2] ^ (~b[3] & b[4]);
        a[3] = b[3] ^ (~b[4] & b[0]);
        a[4] = b[4] ^ (~b[0] & b[1]);
        a[5] = b[5] ^ (~b[6] & b[7]);
        a[6] = b[6] ^ (~b[7] & b[8]);
        a[7] = b[7] ^ (~b[8] & b[9]);
        a[8] = b[8] ^ (~b[9] & b[5]);
        a[9] = b[9] ^ (~b[5] & b[6]);
        a[10] = b[10] ^ (~b[11] & b[12]);
        a[11] = b[11] ^ (~b[12] & b[13]);
        a[12] = b[12] ^ (~b[13] & b[14]);
        a[13] = b[13] ^ (~b[14] & b[10]);
        a[14] = b[14] ^ (~b[10] & b[11]);
        a[15] = b[15] ^ (~b[16] & b[17]);
        a[16] = b[16] ^ (~b[17] & b[18]);
        a[17] = b[17] ^ (~b[18] & b[19]);
        a[18] = b[18] ^ (~b[19] & b[15]);
        a[19] = b[19] ^ (~b[15] & b[16]);
        a[20] = b[20] ^ (~b[21] & b[22]);
        a[21] = b[21] ^ (~b[22] & b[23]);
        a[22] = b[22] ^ (~b[23] & b[24]);
        a[23] = b[23] ^ (~b[24] & b[20]);
        a[24] = b[24] ^ (~b[20] & b[21]);
        a[0] ^= ROUND_CONSTANTS[round];
    }
}

/* Lanes are little-endian (FIPS 202's bit order); byte-wise so that any host byte order works. */
static uint64_t load64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static void store64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* keccak256 of `length` bytes into out[32]. */
static void keccak256(const uint8_t *data, size_t length, uint8_t out[HASH]) {
    uint64_t st[25] = {0};
    uint8_t block[RATE];
    while (length >= RATE) {
        for (int i = 0; i < RATE / 8; i++) st[i] ^= load64(data + 8 * i);
        keccak_f1600(st);
        data += RATE;
        length -= RATE;
    }
    memset(block, 0, RATE);
    memcpy(block, data, length);
    block[length] ^= 0x01;
    block[RATE - 1] ^= 0x80;
    for (int i = 0; i < RATE / 8; i++) st[i] ^= load64(block + 8 * i);
    keccak_f1600(st);
    for (int i = 0; i < HASH / 8; i++) store64(out + 8 * i, st[i]);
}

/* keccak256(min(a, b) || max(a, b)) of two 32-byte nodes (one block: 64 bytes < rate). */
static void hash_sorted_pair(const uint8_t *a, const uint8_t *b, uint8_t out[HASH]) {
    uint64_t st[25] = {0};
    if (memcmp(a, b, HASH) > 0) {
        const uint8_t *swap = a;
        a = b;
        b = swap;
    }
    for (int i = 0; i < 4; i++) st[i] = load64(a + 8 * i);
    for (int i = 0; i < 4; i++) st[4 + i] = load64(b + 8 * i);
    st[8] = 0x01;                       /* padding: first byte after the message */
    st[RATE / 8 - 1] = 0x8000000000000000ULL; /* padding: last byte of the rate */
    keccak_f1600(st);
    for (int i = 0; i < HASH / 8; i++) store64(out + 8 * i, st[i]);
}

/*
 * One parent of a sum tree (SumTree.parent): the pair is 128 bytes, `abi.encode(l.hash, l.sum, r.hash,
 * r.sum)` (each sum a big-endian uint256 word); the parent node, 64 bytes, is
 * `(keccak256(pair), l.sum + r.sum)`. Returns 0 when the sum exceeds 2^256 − 1 (nothing written). The
 * whole pair is read before `out` is written, so `out` may overlap it.
 */
static int sum_parent(const uint8_t *pair, uint8_t *out) {
    uint64_t st[25] = {0};
    for (int i = 0; i < 16; i++) st[i] = load64(pair + 8 * i);
    st[16] = 0x01 | 0x8000000000000000ULL; /* padding: byte 128 is the first after the message and the
                                               last of the rate */
    uint8_t sum[HASH];
    unsigned carry = 0;
    for (int i = HASH - 1; i >= 0; i--) {
        unsigned byte = (unsigned)pair[HASH + i] + (unsigned)pair[3 * HASH + i] + carry;
        sum[i] = (uint8_t)byte;
        carry = byte >> 8;
    }
    if (carry) return 0;
    keccak_f1600(st);
    for (int i = 0; i < HASH / 8; i++) store64(out + 8 * i, st[i]);
    memcpy(out + HASH, sum, HASH);
    return 1;
}

static void swap32(uint8_t *a, uint8_t *b) {
    uint8_t t[HASH];
    memcpy(t, a, HASH);
    memcpy(a, b, HASH);
    memcpy(b, t, HASH);
}

/*
 * Sorts `count` 32-byte records ascending (bytewise) in place: MSD radix sort by byte `depth` (American
 * flag sort, no second buffer), insertion sort for small runs. Equal records are identical bytes, so the
 * result does not depend on stability.
 */
static void sort_hashes(uint8_t *base, size_t count, int depth) {
    if (count < 32 || depth >= HASH) {
        for (size_t i = 1; i < count; i++) {
            for (size_t j = i; j > 0 && memcmp(base + (j - 1) * HASH, base + j * HASH, HASH) > 0; j--) {
                swap32(base + (j - 1) * HASH, base + j * HASH);
            }
        }
        return;
    }
    size_t counts[256] = {0};
    size_t start[256], next[256];
    for (size_t i = 0; i < count; i++) counts[base[i * HASH + depth]]++;
    size_t at = 0;
    for (int b = 0; b < 256; b++) {
        start[b] = next[b] = at;
        at += counts[b];
    }
    for (int b = 0; b < 256; b++) {
        size_t end = start[b] + counts[b];
        while (next[b] < end) {
            uint8_t *record = base + next[b] * HASH;
            int target = record[depth];
            if (target == b) {
                next[b]++;
            } else {
                swap32(record, base + next[target] * HASH);
                next[target]++;
            }
        }
    }
    for (int b = 0; b < 256; b++) {
        if (counts[b] > 1) sort_hashes(base + start[b] * HASH, counts[b], depth + 1);
    }
}

#define CHECK(call)                                                    \
    do {                                                               \
        if ((call) != napi_ok) {                                       \
            napi_throw_error(env, NULL, "keccak-tree: N-API failure"); \
            return NULL;                                               \
        }                                                              \
    } while (0)

/* Reads a Uint8Array argument (any typed array of bytes); throws a TypeError when it is not one. */
static int get_bytes(napi_env env, napi_value value, const char *name, uint8_t **data, size_t *length) {
    bool is_typed_array = false;
    napi_typedarray_type type;
    void *raw = NULL;
    if (napi_is_typedarray(env, value, &is_typed_array) != napi_ok || !is_typed_array ||
        napi_get_typedarray_info(env, value, &type, length, &raw, NULL, NULL) != napi_ok ||
        type != napi_uint8_array) {
        napi_throw_type_error(env, NULL, name);
        return 0;
    }
    *data = (uint8_t *)raw;
    return 1;
}

/* Reads a non-negative integer argument; throws a RangeError when it is not one. */
static int get_count(napi_env env, napi_value value, const char *name, size_t *out) {
    double number = -1;
    if (napi_get_value_double(env, value, &number) != napi_ok || !(number >= 0) || number > 9007199254740991.0 ||
        number != (double)(size_t)number) {
        napi_throw_range_error(env, NULL, name);
        return 0;
    }
    *out = (size_t)number;
    return 1;
}

/* keccak256(data: Uint8Array): Buffer (32 bytes). */
static napi_value js_keccak256(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    uint8_t *data;
    size_t length;
    if (argc < 1 || !get_bytes(env, argv[0], "keccak256: data must be a Uint8Array", &data, &length)) return NULL;
    napi_value result;
    void *out;
    CHECK(napi_create_buffer(env, HASH, &out, &result));
    keccak256(data, length, (uint8_t *)out);
    return result;
}

/*
 * hashPairs(src, dst, count, reversed): for k < count, dst[32k..] = keccak256 of the sorted 32-byte pair at
 * src[64j..64j + 64), j = k, or j = count − 1 − k when `reversed`. `dst` may be `src` itself (not
 * reversed): pair k is read before node k is written, and node k lies at or before pair k.
 */
static napi_value js_hash_pairs(napi_env env, napi_callback_info info) {
    size_t argc = MAX_ARGS;
    napi_value argv[MAX_ARGS];
    CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 4) {
        napi_throw_type_error(env, NULL, "hashPairs(src, dst, count, reversed)");
        return NULL;
    }
    uint8_t *src, *dst;
    size_t src_length, dst_length, count;
    bool reversed = false;
    if (!get_bytes(env, argv[0], "hashPairs: src must be a Uint8Array", &src, &src_length) ||
        !get_bytes(env, argv[1], "hashPairs: dst must be a Uint8Array", &dst, &dst_length) ||
        !get_count(env, argv[2], "hashPairs: count must be a non-negative integer", &count)) {
        return NULL;
    }
    CHECK(napi_get_value_bool(env, argv[3], &reversed));
    if (count > src_length / (2 * HASH) || count > dst_length / HASH) {
        napi_throw_range_error(env, NULL, "hashPairs: src needs count × 64 bytes, dst count × 32");
        return NULL;
    }
    uintptr_t src_at = (uintptr_t)src, dst_at = (uintptr_t)dst;
    if (reversed && count > 1 && src_at < dst_at + count * HASH && dst_at < src_at + count * 2 * HASH) {
        napi_throw_range_error(env, NULL, "hashPairs: reversed pairs cannot be hashed in place");
        return NULL;
    }
    uint8_t node[HASH];
    for (size_t k = 0; k < count; k++) {
        const uint8_t *pair = src + (reversed ? count - 1 - k : k) * 2 * HASH;
        hash_sorted_pair(pair, pair + HASH, node);
        memcpy(dst + k * HASH, node, HASH);
    }
    return NULL;
}

/*
 * sumPairs(src, dst, count): one level of a sum tree. For k < count, the 64-byte node k of `dst` (hash,
 * then the sum as a big-endian uint256) = the parent of the nodes 2k and 2k + 1 of `src`. `dst` may be
 * `src` itself: node k lies at or before pair k, which is read before node k is written. Returns false,
 * at the first pair whose sum exceeds 2^256 − 1, with the nodes before it written.
 */
static napi_value js_sum_pairs(napi_env env, napi_callback_info info) {
    size_t argc = 3;
    napi_value argv[3];
    CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    uint8_t *src, *dst;
    size_t src_length, dst_length, count;
    if (argc < 3 || !get_bytes(env, argv[0], "sumPairs: src must be a Uint8Array", &src, &src_length) ||
        !get_bytes(env, argv[1], "sumPairs: dst must be a Uint8Array", &dst, &dst_length) ||
        !get_count(env, argv[2], "sumPairs: count must be a non-negative integer", &count)) {
        return NULL;
    }
    if (count > src_length / (4 * HASH) || count > dst_length / (2 * HASH)) {
        napi_throw_range_error(env, NULL, "sumPairs: src needs count × 128 bytes, dst count × 64");
        return NULL;
    }
    uintptr_t src_at = (uintptr_t)src, dst_at = (uintptr_t)dst;
    if (dst_at > src_at && dst_at < src_at + count * 4 * HASH) {
        napi_throw_range_error(env, NULL, "sumPairs: dst may only overlap src from its start");
        return NULL;
    }
    int ok = 1;
    for (size_t k = 0; k < count && ok; k++) ok = sum_parent(src + k * 4 * HASH, dst + k * 2 * HASH);
    napi_value result;
    CHECK(napi_get_boolean(env, ok != 0, &result));
    return result;
}

/* sortHashes(hashes, count): sorts the first `count` 32-byte hashes of `hashes` ascending, in place. */
static napi_value js_sort_hashes(napi_env env, napi_callback_info info) {
    size_t argc = 2;
    napi_value argv[2];
    CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    uint8_t *data;
    size_t length, count;
    if (argc < 2 || !get_bytes(env, argv[0], "sortHashes: hashes must be a Uint8Array", &data, &length) ||
        !get_count(env, argv[1], "sortHashes: count must be a non-negative integer", &count)) {
        return NULL;
    }
    if (count > length / HASH) {
        napi_throw_range_error(env, NULL, "sortHashes: hashes needs count × 32 bytes");
        return NULL;
    }
    sort_hashes(data, count, 0);
    return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
    napi_property_descriptor functions[] = {
        {"keccak256", NULL, js_keccak256, NULL, NULL, NULL, napi_enumerable, NULL},
        {"hashPairs", NULL, js_hash_pairs, NULL, NULL, NULL, napi_enumerable, NULL},
        {"sortHashes", NULL, js_sort_hashes, NULL, NULL, NULL, napi_enumerable, NULL},
        {"sumPairs", NULL, js_sum_pairs, NULL, NULL, NULL, napi_enumerable, NULL},
    };
    CHECK(napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions));
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
