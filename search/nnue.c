// SPDX-License-Identifier: MIT
// NNUE: net files (parse, check, write), features, and the evaluation, from scratch (plain C,
// the reference) and through a search thread's lazily updated accumulator stack (AVX2 when
// the build targets it). Every int16 sum wraps modulo 2^16 and the output sum modulo 2^32 in
// both paths, so the order of additions never changes a result: incremental == from scratch.
#include "nnue.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "files.h"
#include "rng.h"
#include "why.h"

#ifdef __AVX2__
#include <immintrin.h>
#endif

static const char NNUE_MAGIC[8] = {'X', 'Q', 'N', 'N', 'U', 'E', 0, 0};

const char *nnue_strerror(NnueStatus st)
{
    switch (st) {
    case NNUE_OK: return "no error";
    case NNUE_ERR_IO: return "the net file cannot be read or written";
    case NNUE_ERR_FORMAT: return "not a valid net file (magic, header CRC or sizes)";
    case NNUE_ERR_VERSION: return "a net of another version or feature set";
    case NNUE_ERR_HASH: return "the net's content hash does not match: a damaged file";
    case NNUE_ERR_NOMEM: return "out of memory";
    default: return "unknown NNUE status";
    }
}

// ---------------------------------------------------------------------------------------
// Checksums and little-endian fields

/// CRC-32 (IEEE, zlib's) of the header's first 60 bytes.
static uint32_t crc32_ieee(const uint8_t *p, size_t n) { return (uint32_t)crc32(0, p, (uInt)n); }

/// FNV-1a over int16 values as their little-endian bytes (the file's bytes).
static uint64_t fnv_i16s(uint64_t h, const int16_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t b[2];
        files_put_le(b, (uint16_t)v[i], 2);
        h = files_fnv(h, b, 2);
    }
    return h;
}

static void get_i16s(int16_t *v, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (int16_t)(uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
}

static size_t payload_bytes(int features, int hidden)
{
    return 2 * ((size_t)features * (size_t)hidden + 3 * (size_t)hidden) + 4;
}

int nnue_version_features(int version)
{
    return version == NNUE_VERSION       ? NNUE_FEATURES
           : version == NNUE_VERSION_XQ2 ? NNUE_FEATURES_XQ2
                                         : 0;
}

const char *nnue_version_name(int version)
{
    return version == NNUE_VERSION ? "XQ1" : version == NNUE_VERSION_XQ2 ? "XQ2" : "?";
}

static bool hidden_ok(long hidden)
{
    return hidden >= 32 && hidden <= NNUE_HIDDEN_MAX && hidden % 32 == 0;
}

// ---------------------------------------------------------------------------------------
// The net object

static void *alloc64(size_t bytes) { return aligned_alloc(64, (bytes + 63) / 64 * 64); }

NnueStatus nnue_alloc(NnueNet *net, int hidden)
{
    return nnue_alloc_version(net, NNUE_VERSION, hidden);
}

NnueStatus nnue_alloc_version(NnueNet *net, int version, int hidden)
{
    memset(net, 0, sizeof *net);
    size_t nf = (size_t)nnue_version_features(version);
    if (!nf)
        return NNUE_ERR_VERSION;
    if (!hidden_ok(hidden))
        return NNUE_ERR_FORMAT;
    size_t h = (size_t)hidden;
    net->ft_weight = alloc64(nf * h * sizeof(int16_t));
    net->ft_bias = alloc64(h * sizeof(int16_t));
    net->out_weight = alloc64(2 * h * sizeof(int16_t));
    if (!net->ft_weight || !net->ft_bias || !net->out_weight) {
        nnue_free(net);
        return NNUE_ERR_NOMEM;
    }
    memset(net->ft_weight, 0, nf * h * sizeof(int16_t));
    memset(net->ft_bias, 0, h * sizeof(int16_t));
    memset(net->out_weight, 0, 2 * h * sizeof(int16_t));
    net->version = version;
    net->features = (int)nf;
    net->hidden = hidden;
    net->qa = NNUE_QA;
    net->qb = NNUE_QB;
    net->scale = NNUE_SCALE;
    nnue_rehash(net);
    return NNUE_OK;
}

void nnue_free(NnueNet *net)
{
    if (!net)
        return;
    free(net->ft_weight);
    free(net->ft_bias);
    free(net->out_weight);
    memset(net, 0, sizeof *net);
}

void nnue_rehash(NnueNet *net)
{
    size_t h = (size_t)net->hidden;
    uint64_t x = FILES_FNV_BASIS;
    x = fnv_i16s(x, net->ft_weight, (size_t)net->features * h);
    x = fnv_i16s(x, net->ft_bias, h);
    x = fnv_i16s(x, net->out_weight, 2 * h);
    uint8_t b[4];
    files_put_le32(b, (uint32_t)net->out_bias);
    net->hash = files_fnv(x, b, 4);
}

void nnue_id(const NnueNet *net, char out[NNUE_ID_MAX])
{
    snprintf(out, NNUE_ID_MAX, "%012llx", (unsigned long long)(net->hash >> 16));
}

// ---------------------------------------------------------------------------------------
// Reading and writing

/// Checks a header (all but the content hash); on success sets *version and *hidden.
static NnueStatus header_check(const uint8_t *p, size_t len, int *version_out, int *hidden,
                               char *why, size_t why_len)
{
    if (len < NNUE_HEADER)
        return WHY_FAIL(NNUE_ERR_FORMAT, why, why_len,
                        "the file is %zu bytes, shorter than a net header (%d bytes)", len,
                        NNUE_HEADER);
    if (memcmp(p, NNUE_MAGIC, sizeof NNUE_MAGIC) != 0)
        return WHY_FAIL(NNUE_ERR_FORMAT, why, why_len,
                        "bad magic: not an xqforge net file (it must start with \"XQNNUE\")");
    uint32_t crc = crc32_ieee(p, NNUE_HEADER - 4);
    if (crc != files_get_le32(p + 60))
        return WHY_FAIL(
            NNUE_ERR_FORMAT, why, why_len,
            "the header's CRC-32 is %08x, the header's bytes give %08x: a damaged header",
            files_get_le32(p + 60), crc);
    uint32_t version = files_get_le32(p + 8), features = files_get_le32(p + 12),
             h = files_get_le32(p + 16);
    if (version != NNUE_VERSION && version != NNUE_VERSION_XQ2)
        return WHY_FAIL(NNUE_ERR_VERSION, why, why_len,
                        "net format version %u, this engine reads versions %d (XQ1) and %d (XQ2)",
                        version, NNUE_VERSION, NNUE_VERSION_XQ2);
    int nf = nnue_version_features((int)version);
    if (features != (uint32_t)nf)
        return WHY_FAIL(
            NNUE_ERR_VERSION, why, why_len,
            "the net has %u input features, this engine's feature set of version %u (%s) "
            "has %d",
            features, version, nnue_version_name((int)version), nf);
    if (!hidden_ok(h))
        return WHY_FAIL(NNUE_ERR_FORMAT, why, why_len,
                        "hidden size %u: it must be a multiple of 32 from 32 to %d", h,
                        NNUE_HIDDEN_MAX);
    uint32_t qa = files_get_le32(p + 20), qb = files_get_le32(p + 24),
             scale = files_get_le32(p + 28);
    if (qa < 1 || qa > 32767 || qb < 1 || qb > 32767 || scale < 1 || scale > 100000)
        return WHY_FAIL(NNUE_ERR_FORMAT, why, why_len,
                        "quantization qa %u, qb %u, scale %u out of range (qa, qb 1..32767, "
                        "scale 1..100000)",
                        qa, qb, scale);
    uint64_t claimed = files_get_le64(p + 32);
    if (claimed != payload_bytes(nf, (int)h))
        return WHY_FAIL(NNUE_ERR_FORMAT, why, why_len,
                        "the header gives %llu payload bytes, a net of hidden size %u has %zu",
                        (unsigned long long)claimed, h, payload_bytes(nf, (int)h));
    if (len - NNUE_HEADER < claimed)
        return WHY_FAIL(NNUE_ERR_FORMAT, why, why_len,
                        "truncated: %zu payload bytes of the %llu the header gives",
                        len - NNUE_HEADER, (unsigned long long)claimed);
    if (len - NNUE_HEADER > claimed)
        return WHY_FAIL(NNUE_ERR_FORMAT, why, why_len,
                        "%zu bytes after the %llu payload bytes the header gives",
                        (size_t)(len - NNUE_HEADER - claimed), (unsigned long long)claimed);
    *version_out = (int)version;
    *hidden = (int)h;
    return NNUE_OK;
}

NnueStatus nnue_load_memory(NnueNet *net, const void *data, size_t len, char *why, size_t why_len)
{
    memset(net, 0, sizeof *net);
    const uint8_t *p = data;
    int version = 0, hidden = 0;
    NnueStatus st = header_check(p, len, &version, &hidden, why, why_len);
    if (st)
        return st;
    const uint8_t *q = p + NNUE_HEADER;
    size_t nf = (size_t)nnue_version_features(version), n = payload_bytes((int)nf, hidden);
    uint64_t want = files_get_le64(p + 40), got = files_fnv(FILES_FNV_BASIS, q, n);
    if (got != want)
        return WHY_FAIL(NNUE_ERR_HASH, why, why_len,
                        "the payload's content hash is %016llx, the header gives %016llx: a "
                        "damaged file",
                        (unsigned long long)got, (unsigned long long)want);
    st = nnue_alloc_version(net, version, hidden);
    if (st)
        return WHY_FAIL(st, why, why_len, "out of memory for a net of hidden size %d", hidden);
    size_t h = (size_t)hidden;
    get_i16s(net->ft_weight, q, nf * h);
    q += 2 * nf * h;
    get_i16s(net->ft_bias, q, h);
    q += 2 * h;
    get_i16s(net->out_weight, q, 2 * h);
    q += 4 * h;
    net->out_bias = (int32_t)files_get_le32(q);
    net->qa = (int)files_get_le32(p + 20);
    net->qb = (int)files_get_le32(p + 24);
    net->scale = (int)files_get_le32(p + 28);
    net->hash = want;
    memcpy(net->description, p + 48, NNUE_DESCRIPTION);
    net->description[NNUE_DESCRIPTION] = '\0';
    return NNUE_OK;
}

NnueStatus nnue_load_file(NnueNet *net, const char *path, char *why, size_t why_len)
{
    memset(net, 0, sizeof *net);
    FILE *f = files_open_regular(path); // a FIFO in a net's place is refused, never waited on
    if (!f)
        return WHY_FAIL(NNUE_ERR_IO, why, why_len, "cannot open %s: %s", path,
                        errno == EINVAL ? "not a regular file" : strerror(errno));
    // One byte more than the largest net, so a longer file is seen as such.
    size_t cap = NNUE_HEADER + payload_bytes(NNUE_FEATURES_XQ2, NNUE_HIDDEN_MAX) + 1;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return WHY_FAIL(NNUE_ERR_NOMEM, why, why_len, "out of memory reading %s", path);
    }
    size_t len = fread(buf, 1, cap, f);
    bool bad = ferror(f);
    fclose(f);
    NnueStatus st;
    if (bad) {
        st = WHY_FAIL(NNUE_ERR_IO, why, why_len, "cannot read %s", path);
    } else if (len == cap) {
        st = WHY_FAIL(NNUE_ERR_FORMAT, why, why_len, "%s is larger than any net file", path);
    } else {
        char inner[256] = "";
        st = nnue_load_memory(net, buf, len, inner, sizeof inner);
        if (st)
            why_set(why, why_len, "%s: %s", path, inner);
    }
    free(buf);
    return st;
}

static void header_write(const NnueNet *net, uint8_t *p)
{
    memset(p, 0, NNUE_HEADER);
    memcpy(p, NNUE_MAGIC, sizeof NNUE_MAGIC);
    files_put_le32(p + 8, (uint32_t)net->version);
    files_put_le32(p + 12, (uint32_t)net->features);
    files_put_le32(p + 16, (uint32_t)net->hidden);
    files_put_le32(p + 20, (uint32_t)net->qa);
    files_put_le32(p + 24, (uint32_t)net->qb);
    files_put_le32(p + 28, (uint32_t)net->scale);
    files_put_le64(p + 32, payload_bytes(net->features, net->hidden));
    files_put_le64(p + 40, net->hash);
    // NUL-padded by the memset; the CRC follows at 60.
    memcpy(p + 48, net->description, strnlen(net->description, NNUE_DESCRIPTION));
    files_put_le32(p + 60, crc32_ieee(p, NNUE_HEADER - 4));
}

static bool write_i16s(FILE *f, const int16_t *v, size_t n)
{
    uint8_t buf[4096];
    while (n) {
        size_t k = n < sizeof buf / 2 ? n : sizeof buf / 2;
        for (size_t i = 0; i < k; i++) {
            buf[2 * i] = (uint8_t)((uint16_t)v[i] & 0xff);
            buf[2 * i + 1] = (uint8_t)((uint16_t)v[i] >> 8);
        }
        if (fwrite(buf, 2, k, f) != k)
            return false;
        v += k;
        n -= k;
    }
    return true;
}

NnueStatus nnue_save_file(const NnueNet *net, const char *path)
{
    if (!hidden_ok(net->hidden))
        return NNUE_ERR_FORMAT;
    if (!nnue_version_features(net->version) ||
        net->features != nnue_version_features(net->version))
        return NNUE_ERR_VERSION;
    // Written beside the target and renamed, so a reader never sees half a net.
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return NNUE_ERR_IO;
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return NNUE_ERR_IO;
    uint8_t head[NNUE_HEADER], tail[4];
    header_write(net, head);
    files_put_le32(tail, (uint32_t)net->out_bias);
    size_t h = (size_t)net->hidden;
    bool ok = fwrite(head, 1, sizeof head, f) == sizeof head &&
              write_i16s(f, net->ft_weight, (size_t)net->features * h) &&
              write_i16s(f, net->ft_bias, h) && write_i16s(f, net->out_weight, 2 * h) &&
              fwrite(tail, 1, 4, f) == 4;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return NNUE_ERR_IO;
    }
    return NNUE_OK;
}

#ifdef XQ_NNUE_DEFAULT_FILE
// The default net's bytes, embedded by the assembler at build time (search/CMakeLists.txt:
// search/nets/default.nnue when it exists at configure time), parsed and checked once.
__asm__(".pushsection .rodata\n"
        ".balign 64\n"
        ".global xq_nnue_default_begin\n"
        ".hidden xq_nnue_default_begin\n"
        "xq_nnue_default_begin:\n"
        ".incbin \"" XQ_NNUE_DEFAULT_FILE "\"\n"
        ".global xq_nnue_default_end\n"
        ".hidden xq_nnue_default_end\n"
        "xq_nnue_default_end:\n"
        ".popsection\n");
extern const uint8_t xq_nnue_default_begin[], xq_nnue_default_end[];

static NnueNet default_net;
static bool default_ok;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void default_load(void)
{
    size_t len = (size_t)(xq_nnue_default_end - xq_nnue_default_begin);
    default_ok = nnue_load_memory(&default_net, xq_nnue_default_begin, len, NULL, 0) == NNUE_OK;
}

const NnueNet *nnue_default(void)
{
    pthread_once(&default_once, default_load);
    return default_ok ? &default_net : NULL;
}
#else
const NnueNet *nnue_default(void) { return NULL; }
#endif

void nnue_randomize(NnueNet *net, uint64_t seed)
{
    Rng rng;
    rng_seed(&rng, seed);
    size_t h = (size_t)net->hidden;
    for (size_t i = 0; i < (size_t)net->features * h; i++)
        net->ft_weight[i] = (int16_t)((int)rng_below(&rng, 97) - 48);
    for (size_t i = 0; i < h; i++)
        net->ft_bias[i] = (int16_t)((int)rng_below(&rng, 161) - 40);
    for (size_t i = 0; i < 2 * h; i++)
        net->out_weight[i] = (int16_t)((int)rng_below(&rng, 17) - 8);
    net->out_bias = (int32_t)rng_below(&rng, 2001) - 1000;
    snprintf(net->description, sizeof net->description, "random");
    nnue_rehash(net);
}

// ---------------------------------------------------------------------------------------
// Features

/// Seen from perspective c: Black flips ranks and swaps colours, so either side sees itself
/// as Red, playing up the board.
int nnue_feature(Color c, Piece p, Square s)
{
    int rel_colour = piece_color(p) ^ c;
    Square rel = c == RED ? s : sq_make(sq_file(s), RANK_NB - 1 - sq_rank(s));
    return (rel_colour * 7 + (piece_type(p) - 1)) * SQUARE_NB + rel;
}

int nnue_features(const Board *b, Color c, uint16_t *out)
{
    int n = 0;
    for (Square s = 0; s < SQUARE_NB; s++) {
        Piece p = board_piece(b, s);
        if (p != NO_PIECE)
            out[n++] = (uint16_t)nnue_feature(c, p, s);
    }
    return n;
}

/// The palace point of c's general in c's view: rank 0..2 from c's own back rank, files d..f
/// folded onto two columns (d and f mirrored). A square outside the palace (never in a legal
/// position) is clamped to the nearest point, so any board gives a valid index.
int nnue_bucket(Color c, Square king, bool *mirror)
{
    int f = sq_file(king), r = c == RED ? sq_rank(king) : RANK_NB - 1 - sq_rank(king);
    f = f < 3 ? 3 : f > 5 ? 5 : f;
    r = r > 2 ? 2 : r;
    *mirror = f == 5;
    return r * 2 + (f == 4);
}

int nnue_feature_xq2(Color c, Square king, Piece p, Square s)
{
    bool mirror;
    int bucket = nnue_bucket(c, king, &mirror);
    if (mirror)
        s = sq_make(FILE_NB - 1 - sq_file(s), sq_rank(s));
    return bucket * NNUE_FEATURES + nnue_feature(c, p, s);
}

int nnue_features_version(int version, const Board *b, Color c, uint16_t *out)
{
    if (version != NNUE_VERSION_XQ2)
        return nnue_features(b, c, out);
    int n = 0;
    Square king = b->king_sq[c];
    for (Square s = 0; s < SQUARE_NB; s++) {
        Piece p = board_piece(b, s);
        if (p != NO_PIECE)
            out[n++] = (uint16_t)nnue_feature_xq2(c, king, p, s);
    }
    return n;
}

// ---------------------------------------------------------------------------------------
// The evaluation, plain C (the reference)

static const int16_t *column(const NnueNet *net, int feature)
{
    return net->ft_weight + (size_t)feature * (size_t)net->hidden;
}

static void refresh_c(const NnueNet *net, const Board *b, Color c, int16_t *acc)
{
    uint16_t f[SQUARE_NB];
    int n = nnue_features_version(net->version, b, c, f);
    memcpy(acc, net->ft_bias, (size_t)net->hidden * sizeof *acc);
    for (int k = 0; k < n; k++) {
        const int16_t *w = column(net, f[k]);
        for (int i = 0; i < net->hidden; i++)
            acc[i] = (int16_t)(uint16_t)((uint16_t)acc[i] + (uint16_t)w[i]);
    }
}

/// One perspective's share of the output sum, modulo 2^32.
static uint32_t output_c(const int16_t *acc, const int16_t *w, int hidden, int qa)
{
    uint32_t sum = 0;
    for (int i = 0; i < hidden; i++) {
        int x = acc[i] < 0 ? 0 : acc[i] > qa ? qa : acc[i];
        sum += (uint32_t)(x * w[i]);
    }
    return sum;
}

/// out * scale / (qa * qb), truncating toward zero, clamped inside the non-mate range.
static int scale_out(const NnueNet *net, uint32_t sum)
{
    int64_t out = (int32_t)(sum + (uint32_t)net->out_bias);
    int64_t v = out * net->scale / ((int64_t)net->qa * net->qb);
    return v > NNUE_EVAL_MAX ? NNUE_EVAL_MAX : v < -NNUE_EVAL_MAX ? -NNUE_EVAL_MAX : (int)v;
}

int nnue_evaluate_full(const NnueNet *net, const Board *b)
{
    _Alignas(64) int16_t acc[COLOR_NB][NNUE_HIDDEN_MAX];
    Color us = b->side, them = (Color)(us ^ 1);
    refresh_c(net, b, us, acc[0]);
    refresh_c(net, b, them, acc[1]);
    int h = net->hidden;
    return scale_out(net, output_c(acc[0], net->out_weight, h, net->qa) +
                              output_c(acc[1], net->out_weight + h, h, net->qa));
}

// ---------------------------------------------------------------------------------------
// Accumulators (SIMD where the build has it; the same sums modulo 2^16 / 2^32)

/// out = in + add[0..nadd) - sub[0..nsub) over hidden units (in may equal out).
static void acc_update(int16_t *out, const int16_t *in, int hidden, const int16_t *const *add,
                       int nadd, const int16_t *const *sub, int nsub)
{
#ifdef __AVX2__
    for (int i = 0; i < hidden; i += 16) {
        __m256i v = _mm256_load_si256((const __m256i *)(in + i));
        for (int k = 0; k < nadd; k++)
            v = _mm256_add_epi16(v, _mm256_load_si256((const __m256i *)(add[k] + i)));
        for (int k = 0; k < nsub; k++)
            v = _mm256_sub_epi16(v, _mm256_load_si256((const __m256i *)(sub[k] + i)));
        _mm256_store_si256((__m256i *)(out + i), v);
    }
#else
    for (int i = 0; i < hidden; i++) {
        uint16_t v = (uint16_t)in[i];
        for (int k = 0; k < nadd; k++)
            v = (uint16_t)(v + (uint16_t)add[k][i]);
        for (int k = 0; k < nsub; k++)
            v = (uint16_t)(v - (uint16_t)sub[k][i]);
        out[i] = (int16_t)v;
    }
#endif
}

/// Perspective c's accumulator of b from scratch, through the SIMD adds.
static void refresh_side(const NnueNet *net, const Board *b, Color c, int16_t *out)
{
    uint16_t f[SQUARE_NB];
    int n = nnue_features_version(net->version, b, c, f);
    const int16_t *cols[SQUARE_NB];
    for (int k = 0; k < n; k++)
        cols[k] = column(net, f[k]);
    acc_update(out, net->ft_bias, net->hidden, cols, n, NULL, 0);
}

void nnue_accumulator_refresh(const NnueNet *net, const Board *b, NnueAccumulator *acc)
{
    for (int c = 0; c < COLOR_NB; c++)
        refresh_side(net, b, (Color)c, acc->v[c]);
    acc->key = b->key;
    acc->valid[RED] = acc->valid[BLACK] = true;
}

static uint32_t output_simd(const int16_t *acc, const int16_t *w, int hidden, int qa)
{
#ifdef __AVX2__
    const __m256i zero = _mm256_setzero_si256(), top = _mm256_set1_epi16((int16_t)qa);
    __m256i sum = _mm256_setzero_si256();
    for (int i = 0; i < hidden; i += 16) {
        __m256i x = _mm256_load_si256((const __m256i *)(acc + i));
        x = _mm256_min_epi16(_mm256_max_epi16(x, zero), top);
        // Pairs of products fit in int32: 2 * 32767 * 32768 < 2^31.
        x = _mm256_madd_epi16(x, _mm256_load_si256((const __m256i *)(w + i)));
        sum = _mm256_add_epi32(sum, x);
    }
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return (uint32_t)_mm_cvtsi128_si32(s);
#else
    return output_c(acc, w, hidden, qa);
#endif
}

int nnue_accumulator_evaluate(const NnueNet *net, const NnueAccumulator *acc, Color stm)
{
    int h = net->hidden;
    return scale_out(net, output_simd(acc->v[stm], net->out_weight, h, net->qa) +
                              output_simd(acc->v[stm ^ 1], net->out_weight + h, h, net->qa));
}

void nnue_stack_reset(NnueStack *st, const NnueNet *net, int base)
{
    st->net = net;
    st->base = base;
    // The key too: entry_claim compares it (valgrind: a read of an uninitialised key).
    for (int i = 0; i < NNUE_STACK_MAX; i++) {
        st->acc[i].key = 0;
        st->acc[i].valid[RED] = st->acc[i].valid[BLACK] = false;
    }
    for (int c = 0; c < COLOR_NB; c++)
        for (int k = 0; k < NNUE_REFRESH_SLOTS; k++)
            st->cache[c][k].valid = false;
}

/// The key of the position at history length len of b.
static uint64_t key_at(const Board *b, int len)
{
    return len == b->hist_len ? b->key : b->hist[len].key;
}

/// Whether history move u starts perspective c over: in XQ2 a move of c's own general changes
/// c's bucket (every general move leaves its palace point), so every column of c changes.
static bool move_refreshes(const NnueNet *net, const BoardUndo *u, Color c)
{
    return net->version == NNUE_VERSION_XQ2 && u->move != MOVE_NONE &&
           (Piece)u->piece == piece_make(c, KING);
}

/// The feature of p on s for perspective c of the net's version (king: c's general's square).
static int feature_of(const NnueNet *net, Color c, Square king, Piece p, Square s)
{
    return net->version == NNUE_VERSION_XQ2 ? nnue_feature_xq2(c, king, p, s)
                                            : nnue_feature(c, p, s);
}

/// Perspective c's accumulator `to` = `from` (the position before history move u) updated by
/// that move; c's general stands on king throughout (a move of it refreshes instead).
static void apply_side(const NnueNet *net, const int16_t *from, int16_t *to, const BoardUndo *u,
                       Color c, Square king)
{
    if (u->move == MOVE_NONE) { // a null move: only the side to move changes
        memcpy(to, from, (size_t)net->hidden * sizeof(int16_t));
        return;
    }
    Piece p = (Piece)u->piece, cap = (Piece)u->captured;
    Square sf = move_from(u->move), stq = move_to(u->move);
    const int16_t *add[1] = {column(net, feature_of(net, c, king, p, stq))};
    const int16_t *sub[2] = {column(net, feature_of(net, c, king, p, sf)),
                             cap != NO_PIECE ? column(net, feature_of(net, c, king, cap, stq))
                                             : NULL};
    acc_update(to, from, net->hidden, add, 1, sub, cap != NO_PIECE ? 2 : 1);
}

/// Marks entry e as holding perspective c of the position with this key; an entry that held
/// another position forgets its other perspective.
static void entry_claim(NnueAccumulator *e, uint64_t key, Color c)
{
    if (e->key != key) {
        e->key = key;
        e->valid[RED] = e->valid[BLACK] = false;
    }
    e->valid[c] = true;
}

/// Perspective c's accumulator of b into out, from the cached one of c's general's bucket and
/// mirroring (what the XQ2 features depend on; XQ1's do not depend on the general at all): the
/// columns of the points whose piece changed since are subtracted and added (in chunks the
/// size of acc_update's lists), then the cache holds b. The same sums modulo 2^16 as
/// refresh_side, so the same accumulator.
static void refresh_cached(NnueStack *st, const Board *b, Color c, int16_t *out)
{
    const NnueNet *net = st->net;
    Square king = b->king_sq[c];
    bool mirror;
    int bucket = nnue_bucket(c, king, &mirror);
    NnueRefreshEntry *e = &st->cache[c][bucket * 2 + mirror];
    if (!e->valid) {
        refresh_side(net, b, c, e->v);
        memcpy(e->squares, b->squares, sizeof e->squares);
        e->valid = true;
    } else {
        enum { CHUNK = 8 };
        const int16_t *add[CHUNK], *sub[CHUNK];
        int nadd = 0, nsub = 0;
        for (Square s = 0; s < SQUARE_NB; s++) {
            Piece was = (Piece)e->squares[s], now = board_piece(b, s);
            if (was == now)
                continue;
            if (was != NO_PIECE)
                sub[nsub++] = column(net, feature_of(net, c, king, was, s));
            if (now != NO_PIECE)
                add[nadd++] = column(net, feature_of(net, c, king, now, s));
            if (nadd == CHUNK || nsub == CHUNK) {
                acc_update(e->v, e->v, net->hidden, add, nadd, sub, nsub);
                nadd = nsub = 0;
            }
        }
        if (nadd || nsub)
            acc_update(e->v, e->v, net->hidden, add, nadd, sub, nsub);
        memcpy(e->squares, b->squares, sizeof e->squares);
    }
    memcpy(out, e->v, (size_t)net->hidden * sizeof *out);
}

/// Entry i's perspective c made valid for b: replayed from the nearest entry on the path from
/// the root that holds its own position for c, unless that is too far back or behind a move
/// of c's general (XQ2), then refreshed from b.
static void stack_side(NnueStack *st, const Board *b, int i, Color c)
{
    const NnueNet *net = st->net;
    int j = i;
    while (j >= 0 && i - j <= NNUE_LOOKBACK &&
           !(st->acc[j].valid[c] && st->acc[j].key == key_at(b, st->base + j))) {
        if (j > 0 && move_refreshes(net, &b->hist[st->base + j - 1], c)) {
            j = -1;
            break;
        }
        j--;
    }
    if (j < 0 || i - j > NNUE_LOOKBACK) {
        refresh_cached(st, b, c, st->acc[i].v[c]);
        entry_claim(&st->acc[i], b->key, c);
        return;
    }
    for (; j < i; j++) {
        apply_side(net, st->acc[j].v[c], st->acc[j + 1].v[c], &b->hist[st->base + j], c,
                   b->king_sq[c]);
        entry_claim(&st->acc[j + 1], key_at(b, st->base + j + 1), c);
    }
}

int nnue_stack_evaluate(NnueStack *st, const Board *b)
{
    const NnueNet *net = st->net;
    int i = b->hist_len - st->base;
    if (i < 0 || i >= NNUE_STACK_MAX)
        return nnue_evaluate_full(net, b);
    stack_side(st, b, i, RED);
    stack_side(st, b, i, BLACK);
    return nnue_accumulator_evaluate(net, &st->acc[i], b->side);
}
