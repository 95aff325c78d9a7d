// SPDX-License-Identifier: MIT
// Receiving wire messages, in two passes. wire_scan walks the raw bytes without allocating, so
// a hostile length can never make msgpack-c reserve memory the input does not back; then
// msgpack-c builds the object tree and the decoders read every field's type and range, and
// wire_check applies the rules the packers apply before sending.
#include "wire.h"

#include <string.h>

#include "wire_impl.h"

// ---------------------------------------------------------------------------------------------
// Receiving, pass 1: the raw bytes.

/// msgpack's length and value bytes are big-endian, whatever the host.
static uint64_t read_be(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/// For a type byte in 0xc4..0xdf whose h length/value bytes read v: the payload bytes to skip
/// and the child objects that follow. Returns whether v is in the shortest form for it.
static bool scan_typed(uint8_t b, uint64_t v, size_t h, uint64_t *skip, uint64_t *items)
{
    static const uint8_t fixext[5] = {2, 3, 5, 9, 17}; // 0xd4..0xd8: type byte + data
    int64_t sv = h == 1 ? (int8_t)v : h == 2 ? (int16_t)v : h == 4 ? (int32_t)v : (int64_t)v;
    if (b <= 0xc6) { // bin 8..32
        *skip = v;
        return h == 1 || v >= 1ull << (4 * h);
    } else if (b <= 0xc9) // ext 8..32
        *skip = v + 1;
    else if (b <= 0xcb) // float 32, 64
        *skip = b == 0xca ? 4 : 8;
    else if (b <= 0xcf) // uint 8..64
        return v >= (h == 1 ? 128u : 1ull << (4 * h));
    else if (b <= 0xd3) // int 8..64: only negatives below the fixint range
        return sv < (h == 1 ? -32 : -(1ll << (4 * h - 1)));
    else if (b <= 0xd8)
        *skip = fixext[b - 0xd4];
    else if (b <= 0xdb) { // str 8..32
        *skip = v;
        return v >= (h == 1 ? 32u : 1ull << (4 * h));
    } else { // array 16, 32 and map 16, 32
        *items = b <= 0xdd ? v : 2 * v;
        return v >= (h == 2 ? 16u : 65536u);
    }
    return true;
}

/// Walks one msgpack object without allocating. Every declared length must fit in the bytes
/// left (each pending child needs at least one byte), and every integer, string and container
/// header must use its shortest form, so a message that decodes re-packs byte for byte.
/// Sets *end just past the object.
static WireStatus wire_scan(WireCtx *c, const uint8_t *p, size_t len, size_t *end)
{
    // Type bytes 0xc4..0xdf: how many length/value bytes follow.
    static const uint8_t hdr_bytes[28] = {1, 2, 4, 1, 2, 4, 0, 0, 1, 2, 4, 8, 1, 2,
                                          4, 8, 0, 0, 0, 0, 0, 1, 2, 4, 2, 4, 2, 4};
    size_t pos = 0, pending = 1;
    while (pending > 0) {
        if (pos >= len)
            return wire_fail(c, WIRE_ERR_MALFORMED, "truncated at byte %zu", pos);
        uint8_t b = p[pos++];
        pending--;
        uint64_t skip = 0, items = 0;
        if (b >= 0x80 && b <= 0x8f) // fixmap
            items = 2u * (b & 0x0fu);
        else if (b >= 0x90 && b <= 0x9f) // fixarray
            items = b & 0x0fu;
        else if (b >= 0xa0 && b <= 0xbf) // fixstr
            skip = b & 0x1fu;
        else if (b == 0xc1)
            return wire_fail(c, WIRE_ERR_MALFORMED, "reserved byte 0xc1 at %zu", pos - 1);
        else if (b >= 0xc4 && b <= 0xdf) {
            size_t h = hdr_bytes[b - 0xc4];
            if (h > len - pos)
                return wire_fail(c, WIRE_ERR_MALFORMED, "truncated header at byte %zu", pos - 1);
            uint64_t v = read_be(p + pos, h);
            pos += h;
            if (!scan_typed(b, v, h, &skip, &items))
                return wire_fail(c, WIRE_ERR_MALFORMED, "non-shortest encoding at byte %zu",
                                 pos - h - 1);
        } // else a one-byte object: fixints, nil, booleans
        if (skip > len - pos)
            return wire_fail(c, WIRE_ERR_MALFORMED, "%llu bytes declared, %zu left",
                             (unsigned long long)skip, len - pos);
        pos += (size_t)skip;
        size_t avail = len - pos;
        if (pending > avail || items > avail - pending)
            return wire_fail(c, WIRE_ERR_MALFORMED, "%llu items declared, %zu bytes left",
                             (unsigned long long)items, avail);
        pending += (size_t)items;
    }
    *end = pos;
    return WIRE_OK;
}

// ---------------------------------------------------------------------------------------------
// Receiving, pass 2: the object tree, field by field.

// The get_* readers take the field's name for the message and its cap: a value is range
// checked as it is read, before it can size a loop or index an array.
static WireStatus get_uint(WireCtx *c, const msgpack_object *o, const char *name, uint64_t max,
                           uint64_t *v)
{
    if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return wire_fail(c, WIRE_ERR_FIELD, "%s: not an unsigned integer", name);
    if (o->via.u64 > max)
        return wire_fail(c, WIRE_ERR_FIELD, "%s: %llu above %llu", name,
                         (unsigned long long)o->via.u64, (unsigned long long)max);
    *v = o->via.u64;
    return WIRE_OK;
}

static WireStatus get_u32(WireCtx *c, const msgpack_object *o, const char *name, uint32_t *v)
{
    uint64_t x = 0;
    WireStatus st = get_uint(c, o, name, UINT32_MAX, &x);
    if (!st)
        *v = (uint32_t)x;
    return st;
}

static WireStatus get_u8(WireCtx *c, const msgpack_object *o, const char *name, uint8_t *v)
{
    uint64_t x = 0;
    WireStatus st = get_uint(c, o, name, UINT8_MAX, &x);
    if (!st)
        *v = (uint8_t)x;
    return st;
}

/// msgpack-c decodes a non-negative value as POSITIVE_INTEGER whatever its sender's type, so
/// a signed field accepts both kinds.
static WireStatus get_i32(WireCtx *c, const msgpack_object *o, const char *name, int32_t *v)
{
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= INT32_MAX)
        *v = (int32_t)o->via.u64;
    else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER && o->via.i64 >= INT32_MIN)
        *v = (int32_t)o->via.i64;
    else
        return wire_fail(c, WIRE_ERR_FIELD, "%s: not a 32-bit integer", name);
    return WIRE_OK;
}

/// Copies a string of at most size - 1 bytes with no NUL into dst, NUL-terminated.
static WireStatus get_text(WireCtx *c, const msgpack_object *o, const char *name, char *dst,
                           size_t size)
{
    if (o->type != MSGPACK_OBJECT_STR)
        return wire_fail(c, WIRE_ERR_FIELD, "%s: not a string", name);
    size_t n = o->via.str.size;
    if (n >= size)
        return wire_fail(c, WIRE_ERR_FIELD, "%s: %zu bytes, cap %zu", name, n, size - 1);
    if (n && memchr(o->via.str.ptr, 0, n))
        return wire_fail(c, WIRE_ERR_FIELD, "%s: contains a NUL byte", name);
    if (n)
        memcpy(dst, o->via.str.ptr, n);
    dst[n] = '\0';
    return WIRE_OK;
}

/// An array of min..max entries: the count bounds the loop that fills a fixed-size struct array.
static WireStatus get_array(WireCtx *c, const msgpack_object *o, const char *name, uint32_t min,
                            uint32_t max, const msgpack_object **items, int *n)
{
    if (o->type != MSGPACK_OBJECT_ARRAY)
        return wire_fail(c, WIRE_ERR_FIELD, "%s: not an array", name);
    if (o->via.array.size < min || o->via.array.size > max)
        return wire_fail(c, WIRE_ERR_FIELD, "%s: %u entries, expected %u..%u", name,
                         (unsigned)o->via.array.size, (unsigned)min, (unsigned)max);
    *items = o->via.array.ptr;
    *n = (int)o->via.array.size;
    return WIRE_OK;
}

/// Each decoder below reads its fields in order and stops at the first bad one.
#define GET(call)                                                                                  \
    do {                                                                                           \
        WireStatus st_ = (call);                                                                   \
        if (st_)                                                                                   \
            return st_;                                                                            \
    } while (0)

static WireStatus decode_hello(WireCtx *c, const msgpack_object *f, WireHello *m)
{
    GET(get_u32(c, &f[0], "rank", &m->rank));
    GET(get_text(c, &f[1], "hostname", m->hostname, sizeof m->hostname));
    GET(get_u32(c, &f[2], "threads", &m->threads));
    GET(get_u32(c, &f[3], "concurrency", &m->concurrency));
    GET(get_uint(c, &f[4], "bench signature", UINT64_MAX, &m->bench_signature));
    GET(get_uint(c, &f[5], "bench nps", UINT64_MAX, &m->bench_nps));
    GET(get_text(c, &f[6], "version", m->version, sizeof m->version));
    const msgpack_object *benches = NULL;
    GET(get_array(c, &f[7], "engine benches", 0, WIRE_MAX_ENGINES, &benches, &m->engine_count));
    for (int i = 0; i < m->engine_count; i++)
        GET(get_uint(c, &benches[i], "engine bench", UINT64_MAX, &m->engine_bench[i]));
    return WIRE_OK;
}

static WireStatus decode_refuse(WireCtx *c, const msgpack_object *f, WireRefuse *m)
{
    GET(get_text(c, &f[0], "reason", m->reason, sizeof m->reason));
    return WIRE_OK;
}

static WireStatus decode_request(WireCtx *c, const msgpack_object *f, WireRequest *m)
{
    GET(get_u32(c, &f[0], "rank", &m->rank));
    GET(get_u32(c, &f[1], "pairs", &m->units));
    return WIRE_OK;
}

/// WORK: the unit ids, then nil or an SPSA step whose three columns must be equally long,
/// then nil or a position per unit.
static WireStatus decode_work(WireCtx *c, const msgpack_object *f, WireWork *m)
{
    const msgpack_object *ids = NULL;
    GET(get_uint(c, &f[0], "job id", UINT64_MAX, &m->job_id));
    GET(get_array(c, &f[1], "pair ids", 1, WIRE_MAX_PAIRS_PER_WORK, &ids, &m->unit_count));
    for (int i = 0; i < m->unit_count; i++)
        GET(get_uint(c, &ids[i], "pair id", UINT64_MAX, &m->unit_ids[i]));
    m->spsa.count = 0;
    if (f[2].type != MSGPACK_OBJECT_NIL) {
        const msgpack_object *sf = NULL, *col = NULL;
        int n = 0, count = 0;
        GET(get_array(c, &f[2], "spsa step", 4, 4, &sf, &n));
        GET(get_uint(c, &sf[0], "spsa step id", UINT64_MAX, &m->spsa.id));
        for (int k = 0; k < 3; k++) {
            static const char *const names[3] = {"spsa ids", "spsa plus", "spsa minus"};
            GET(get_array(c, &sf[1 + k], names[k], 1, WIRE_MAX_SPSA_PARAMS, &col, &n));
            if (k > 0 && n != count)
                return wire_fail(c, WIRE_ERR_FIELD, "%s: %d values for %d ids", names[k], n, count);
            count = n;
            for (int i = 0; i < n; i++) {
                uint64_t id = 0;
                if (k == 0) {
                    GET(get_uint(c, &col[i], names[k], WIRE_MAX_PARAM_ID, &id));
                    m->spsa.param[i] = (uint16_t)id;
                } else {
                    GET(get_i32(c, &col[i], names[k],
                                k == 1 ? &m->spsa.plus[i] : &m->spsa.minus[i]));
                }
            }
        }
        m->spsa.count = count;
    }
    m->fen_count = 0;
    if (f[3].type != MSGPACK_OBJECT_NIL) {
        const msgpack_object *fens = NULL;
        int n = 0;
        GET(get_array(c, &f[3], "positions", m->unit_count, m->unit_count, &fens, &n));
        for (int i = 0; i < n; i++)
            GET(get_text(c, &fens[i], "position", m->fen[i], sizeof m->fen[i]));
        m->fen_count = n;
    }
    return WIRE_OK;
}

static WireStatus decode_move(WireCtx *c, const msgpack_object *o, WireGameMove *mv)
{
    const msgpack_object *f = NULL;
    int n = 0;
    uint64_t move = 0;
    GET(get_array(c, o, "move entry", 5, 5, &f, &n));
    GET(get_uint(c, &f[0], "move", UINT16_MAX, &move));
    mv->move = (Move)move;
    GET(get_i32(c, &f[1], "score", &mv->score));
    GET(get_u8(c, &f[2], "flags", &mv->flags));
    GET(get_u8(c, &f[3], "depth", &mv->depth));
    GET(get_u32(c, &f[4], "time", &mv->time_ms));
    return WIRE_OK;
}

static WireStatus decode_game(WireCtx *c, const msgpack_object *o, WireGame *g)
{
    const msgpack_object *f = NULL, *moves = NULL;
    int n = 0;
    uint64_t book = 0;
    GET(get_array(c, o, "game", 7, 7, &f, &n));
    GET(get_u8(c, &f[0], "red", &g->red));
    GET(get_u8(c, &f[1], "outcome", &g->outcome));
    GET(get_u8(c, &f[2], "termination", &g->term));
    GET(get_text(c, &f[3], "detail", g->detail, sizeof g->detail));
    GET(get_text(c, &f[4], "start fen", g->start_fen, sizeof g->start_fen));
    GET(get_uint(c, &f[5], "book plies", WIRE_MAX_PLIES, &book));
    g->book_plies = (int)book;
    GET(get_array(c, &f[6], "moves", 0, WIRE_MAX_PLIES, &moves, &g->ply_count));
    for (c->ply = 0; c->ply < g->ply_count; c->ply++)
        GET(decode_move(c, &moves[c->ply], &g->moves[c->ply]));
    c->ply = -1;
    return WIRE_OK;
}

/// RESULT: c->pair and c->game follow the loops, so a failure names the pair and game.
static WireStatus decode_result(WireCtx *c, const msgpack_object *f, WireResult *m)
{
    const msgpack_object *pairs = NULL;
    GET(get_uint(c, &f[0], "job id", UINT64_MAX, &m->job_id));
    GET(get_u32(c, &f[1], "rank", &m->rank));
    GET(get_array(c, &f[2], "pairs", 1, WIRE_MAX_PAIRS_PER_WORK, &pairs, &m->unit_count));
    for (c->pair = 0; c->pair < m->unit_count; c->pair++) {
        WirePair *p = &m->units[c->pair];
        const msgpack_object *pf = NULL, *games = NULL;
        int n = 0;
        GET(get_array(c, &pairs[c->pair], "pair", 3, 3, &pf, &n));
        GET(get_uint(c, &pf[0], "pair id", UINT64_MAX, &p->pair_id));
        GET(get_u32(c, &pf[1], "opening", &p->opening));
        GET(get_array(c, &pf[2], "games", 1, WIRE_MAX_GAMES_PER_PAIR, &games, &p->game_count));
        for (c->game = 0; c->game < p->game_count; c->game++)
            GET(decode_game(c, &games[c->game], &p->games[c->game]));
        c->game = -1;
    }
    c->pair = -1;
    GET(get_uint(c, &f[3], "games played", UINT64_MAX, &m->games_played));
    GET(get_uint(c, &f[4], "nodes", UINT64_MAX, &m->nodes));
    GET(get_uint(c, &f[5], "play time", UINT64_MAX, &m->play_ms));
    return WIRE_OK;
}

static WireStatus decode_stop(WireCtx *c, const msgpack_object *f, WireStop *m)
{
    GET(get_u32(c, &f[0], "code", &m->code));
    GET(get_text(c, &f[1], "text", m->text, sizeof m->text));
    return WIRE_OK;
}

static WireStatus decode_bye(WireCtx *c, const msgpack_object *f, WireBye *m)
{
    GET(get_u32(c, &f[0], "rank", &m->rank));
    GET(get_uint(c, &f[1], "games played", UINT64_MAX, &m->games_played));
    GET(get_text(c, &f[2], "error", m->error, sizeof m->error));
    return WIRE_OK;
}

static WireStatus decode_book_candidate(WireCtx *c, const msgpack_object *o, WireBookCandidate *k)
{
    const msgpack_object *f = NULL, *path = NULL;
    int n = 0;
    GET(get_array(c, o, "candidate", 3, 3, &f, &n));
    GET(get_text(c, &f[0], "start fen", k->start_fen, sizeof k->start_fen));
    GET(get_array(c, &f[1], "path", 0, WIRE_MAX_BOOK_PATH, &path, &k->path_len));
    for (int p = 0; p < k->path_len; p++) {
        const msgpack_object *mf = NULL;
        uint64_t move = 0;
        GET(get_array(c, &path[p], "path move", 2, 2, &mf, &n));
        GET(get_uint(c, &mf[0], "move", UINT16_MAX, &move));
        k->path[p].move = (Move)move;
        GET(get_i32(c, &mf[1], "score", &k->path[p].score));
    }
    return get_i32(c, &f[2], "score", &k->score);
}

static WireStatus decode_book_result(WireCtx *c, const msgpack_object *f, WireBookResult *m)
{
    const msgpack_object *cands = NULL;
    GET(get_uint(c, &f[0], "job id", UINT64_MAX, &m->job_id));
    GET(get_u32(c, &f[1], "rank", &m->rank));
    GET(get_uint(c, &f[2], "unit id", UINT64_MAX, &m->unit_id));
    GET(get_array(c, &f[3], "candidates", 0, WIRE_MAX_BOOK_CANDS, &cands, &m->candidate_count));
    for (int i = 0; i < m->candidate_count; i++)
        GET(decode_book_candidate(c, &cands[i], &m->candidates[i]));
    GET(get_uint(c, &f[4], "candidates done", UINT64_MAX, &m->candidates_done));
    GET(get_uint(c, &f[5], "nodes", UINT64_MAX, &m->nodes));
    GET(get_uint(c, &f[6], "busy time", UINT64_MAX, &m->busy_ms));
    return WIRE_OK;
}

/// The records arrive as one bin of whole records, within the cap.
static WireStatus decode_datagen(WireCtx *c, const msgpack_object *f, WireDatagenResult *m)
{
    uint64_t games = 0;
    GET(get_uint(c, &f[0], "job id", UINT64_MAX, &m->job_id));
    GET(get_u32(c, &f[1], "rank", &m->rank));
    GET(get_uint(c, &f[2], "unit id", UINT64_MAX, &m->unit_id));
    GET(get_uint(c, &f[3], "games", WIRE_MAX_DATAGEN_GAMES, &games));
    m->games = (uint32_t)games;
    if (f[4].type != MSGPACK_OBJECT_BIN)
        return wire_fail(c, WIRE_ERR_FIELD, "records: not a bin");
    size_t bytes = f[4].via.bin.size;
    if (bytes % WIRE_DATAGEN_RECORD || bytes / WIRE_DATAGEN_RECORD > WIRE_MAX_DATAGEN_RECORDS)
        return wire_fail(c, WIRE_ERR_FIELD, "records: %zu bytes, not whole records within %d",
                         bytes, WIRE_MAX_DATAGEN_RECORDS);
    m->count = (int)(bytes / WIRE_DATAGEN_RECORD);
    if (bytes)
        memcpy(m->records, f[4].via.bin.ptr, bytes);
    GET(get_uint(c, &f[5], "games done", UINT64_MAX, &m->games_done));
    GET(get_uint(c, &f[6], "nodes", UINT64_MAX, &m->nodes));
    GET(get_uint(c, &f[7], "busy time", UINT64_MAX, &m->busy_ms));
    const msgpack_object *fc;
    int n;
    GET(get_array(c, &f[8], "filter counts", WIRE_DATAGEN_FILTERS, WIRE_DATAGEN_FILTERS, &fc, &n));
    for (int i = 0; i < n; i++)
        GET(get_uint(c, &fc[i], "filter count", UINT64_MAX, &m->filtered[i]));
    return WIRE_OK;
}

/// The body of out->kind's layout, its heap struct (if any) already allocated.
static WireStatus decode_body(WireCtx *c, const msgpack_object *f, WireMessage *out)
{
    switch (out->kind) {
    case WIRE_HELLO: return decode_hello(c, f, &out->hello);
    case WIRE_REFUSE: return decode_refuse(c, f, &out->refuse);
    case WIRE_REQUEST: return decode_request(c, f, &out->request);
    case WIRE_WORK: return decode_work(c, f, &out->work);
    case WIRE_RESULT: return decode_result(c, f, out->result);
    case WIRE_STOP: return decode_stop(c, f, &out->stop);
    case WIRE_BYE: return decode_bye(c, f, &out->bye);
    case WIRE_BOOK: return decode_book_result(c, f, out->book);
    case WIRE_DATAGEN: return decode_datagen(c, f, out->datagen);
    default: return wire_fail(c, WIRE_ERR_KIND, "kind is not one of the %d known", WIRE_KIND_NB);
    }
}

/// Body field counts per kind (the layouts of proto/README.md).
static const uint32_t body_fields[WIRE_KIND_NB] = {
    [WIRE_HELLO] = 8, [WIRE_REFUSE] = 1, [WIRE_REQUEST] = 2, [WIRE_WORK] = 4,    [WIRE_RESULT] = 6,
    [WIRE_STOP] = 2,  [WIRE_BYE] = 3,    [WIRE_BOOK] = 7,    [WIRE_DATAGEN] = 9,
};

/// The envelope ["XQ", version, kind, body]; magic and version come first so that a later
/// version may change everything after them.
static WireStatus decode_message(WireCtx *c, const msgpack_object *o, WireMessage *out)
{
    const msgpack_object *e = o->via.array.ptr, *f = NULL;
    if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size < 2 ||
        e[0].type != MSGPACK_OBJECT_STR || e[0].via.str.size != strlen(WIRE_MAGIC) ||
        memcmp(e[0].via.str.ptr, WIRE_MAGIC, strlen(WIRE_MAGIC)) != 0)
        return wire_fail(c, WIRE_ERR_MAGIC, "no [\"" WIRE_MAGIC "\", version, ...] envelope");
    if (e[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER || e[1].via.u64 != WIRE_VERSION)
        return wire_fail(c, WIRE_ERR_VERSION, "this side speaks version %d", WIRE_VERSION);
    if (o->via.array.size != 4)
        return wire_fail(c, WIRE_ERR_MAGIC, "envelope of %u entries, expected 4",
                         (unsigned)o->via.array.size);
    if (e[2].type != MSGPACK_OBJECT_POSITIVE_INTEGER || e[2].via.u64 >= WIRE_KIND_NB)
        return wire_fail(c, WIRE_ERR_KIND, "kind is not one of the %d known", WIRE_KIND_NB);
    WireKind kind = (WireKind)e[2].via.u64;
    int n = 0;
    GET(get_array(c, &e[3], wire_kind_name(kind), body_fields[kind], body_fields[kind], &f, &n));
    // The large bodies live on the heap. kind is set once they exist, so that wire_unpack's
    // cleanup frees what a failed decode leaves.
    if (kind == WIRE_RESULT && !(out->result = wire_result_new()))
        return wire_fail(c, WIRE_ERR_NOMEM, "no memory for a result");
    if (kind == WIRE_BOOK && !(out->book = wire_book_result_new()))
        return wire_fail(c, WIRE_ERR_NOMEM, "no memory for a book result");
    if (kind == WIRE_DATAGEN && !(out->datagen = wire_datagen_result_new()))
        return wire_fail(c, WIRE_ERR_NOMEM, "no memory for a datagen result");
    out->kind = kind;
    GET(decode_body(c, f, out));
    // Types and ranges are read; what remains are the rules the sender checked too.
    return wire_check(c, out);
}

// The cheap refusals come first (size, then the allocation-free scan), so that hostile input
// costs little and never reaches msgpack-c's allocator unchecked.
WireStatus wire_unpack(const char *data, size_t len, WireMessage *out, char *why, size_t why_len)
{
    WireCtx c = {why, why_len, -1, -1, -1};
    if (why && why_len)
        why[0] = '\0';
    if (!out)
        return wire_fail(&c, WIRE_ERR_INVALID, "no output");
    out->kind = WIRE_KIND_NB;
    out->result = NULL;
    if (len > WIRE_MAX_MESSAGE)
        return wire_fail(&c, WIRE_ERR_TOO_LARGE, "%zu bytes, cap %d", len, WIRE_MAX_MESSAGE);
    if (!data || len == 0)
        return wire_fail(&c, WIRE_ERR_MALFORMED, "empty message");
    size_t end = 0;
    WireStatus st = wire_scan(&c, (const uint8_t *)data, len, &end);
    if (st)
        return st;
    if (end != len)
        return wire_fail(&c, WIRE_ERR_TRAILING, "%zu bytes after the message", len - end);

    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    msgpack_unpack_return r = msgpack_unpack_next(&u, data, len, &off);
    if (r == MSGPACK_UNPACK_SUCCESS && off == len)
        st = decode_message(&c, &u.data, out);
    else // nesting past msgpack-c's stack, or no memory
        st = wire_fail(&c, WIRE_ERR_MALFORMED, "msgpack-c refused it (%d)", (int)r);
    msgpack_unpacked_destroy(&u);
    if (st)
        wire_message_destroy(out);
    return st;
}
