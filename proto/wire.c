// SPDX-License-Identifier: MIT
// Packing and validating wire messages. Receiving is two passes: wire_scan walks the raw bytes
// without allocating (so a hostile length can never make msgpack-c reserve memory the input
// does not back), then msgpack-c builds the object tree and the decoders check every field.
// The semantic checks (check_*) are shared with the packers, so nothing is sent that the
// other side would refuse.
#include "wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Where a failure happened (-1: not inside a pair/game/ply) and where to write why.
typedef struct {
    char *why;
    size_t why_len;
    int pair, game, ply;
} Ctx;

__attribute__((format(printf, 3, 4))) static WireStatus fail(Ctx *c, WireStatus s, const char *fmt,
                                                             ...)
{
    if (!c->why || c->why_len == 0)
        return s;
    char msg[160], where[64] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->pair >= 0 && c->ply >= 0)
        snprintf(where, sizeof where, "pair %d game %d ply %d: ", c->pair, c->game, c->ply);
    else if (c->pair >= 0 && c->game >= 0)
        snprintf(where, sizeof where, "pair %d game %d: ", c->pair, c->game);
    else if (c->pair >= 0)
        snprintf(where, sizeof where, "pair %d: ", c->pair);
    snprintf(c->why, c->why_len, "%s: %s%s", wire_strerror(s), where, msg);
    return s;
}

const char *wire_strerror(WireStatus s)
{
    static const char *const text[WIRE_STATUS_NB] = {
        [WIRE_OK] = "ok",
        [WIRE_ERR_TOO_LARGE] = "message too large",
        [WIRE_ERR_MALFORMED] = "malformed msgpack",
        [WIRE_ERR_TRAILING] = "trailing bytes",
        [WIRE_ERR_MAGIC] = "not an xqforge message",
        [WIRE_ERR_VERSION] = "unsupported protocol version",
        [WIRE_ERR_KIND] = "unknown message kind",
        [WIRE_ERR_FIELD] = "invalid field",
        [WIRE_ERR_INVALID] = "message breaks the protocol rules",
        [WIRE_ERR_PACK] = "packing failed",
        [WIRE_ERR_NOMEM] = "out of memory",
    };
    return (unsigned)s < WIRE_STATUS_NB ? text[s] : "unknown wire status";
}

const char *wire_kind_name(WireKind k)
{
    static const char *const names[WIRE_KIND_NB] = {
        [WIRE_HELLO] = "hello", [WIRE_REFUSE] = "refuse",    [WIRE_REQUEST] = "request",
        [WIRE_WORK] = "work",   [WIRE_RESULT] = "result",    [WIRE_STOP] = "stop",
        [WIRE_BYE] = "bye",     [WIRE_BOOK] = "book result", [WIRE_DATAGEN] = "datagen result",
    };
    return (unsigned)k < WIRE_KIND_NB ? names[k] : "unknown";
}

WireResult *wire_result_new(void) { return calloc(1, sizeof(WireResult)); }

void wire_result_free(WireResult *r) { free(r); }

WireBookResult *wire_book_result_new(void) { return calloc(1, sizeof(WireBookResult)); }

void wire_book_result_free(WireBookResult *r) { free(r); }

WireDatagenResult *wire_datagen_result_new(void) { return calloc(1, sizeof(WireDatagenResult)); }

void wire_datagen_result_free(WireDatagenResult *r) { free(r); }

void wire_message_destroy(WireMessage *m)
{
    if (!m)
        return;
    if (m->kind == WIRE_RESULT)
        wire_result_free(m->result);
    if (m->kind == WIRE_BOOK)
        wire_book_result_free(m->book);
    if (m->kind == WIRE_DATAGEN)
        wire_datagen_result_free(m->datagen);
    m->kind = WIRE_KIND_NB;
    m->result = NULL;
}

// ---------------------------------------------------------------------------------------------
// Semantic rules, shared by both directions.

/// A text field is NUL-terminated inside its buffer (so within its cap) and, if required,
/// not empty.
static WireStatus check_text(Ctx *c, const char *name, const char *s, size_t size, bool need)
{
    const char *nul = memchr(s, 0, size);
    if (!nul)
        return fail(c, WIRE_ERR_FIELD, "%s: longer than %zu bytes", name, size - 1);
    if (need && nul == s)
        return fail(c, WIRE_ERR_FIELD, "%s: empty", name);
    return WIRE_OK;
}

static WireStatus check_rank(Ctx *c, uint32_t rank)
{
    if (rank > WIRE_MAX_RANK)
        return fail(c, WIRE_ERR_FIELD, "rank: %u out of range", (unsigned)rank);
    return WIRE_OK;
}

/// Pair ids in one message are distinct (a pair is played and reported once).
static WireStatus check_distinct(Ctx *c, const uint64_t *ids, int n, size_t stride)
{
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++) {
            uint64_t a = *(const uint64_t *)((const char *)ids + (size_t)i * stride);
            uint64_t b = *(const uint64_t *)((const char *)ids + (size_t)j * stride);
            if (a == b)
                return fail(c, WIRE_ERR_FIELD, "pair id %llu repeated", (unsigned long long)a);
        }
    return WIRE_OK;
}

static WireStatus check_hello(Ctx *c, const WireHello *m)
{
    WireStatus st = check_rank(c, m->rank);
    if (st)
        return st;
    if (m->threads < 1 || m->threads > WIRE_MAX_THREADS)
        return fail(c, WIRE_ERR_FIELD, "threads: %u out of range", (unsigned)m->threads);
    if (m->concurrency < 1 || m->concurrency > WIRE_MAX_THREADS)
        return fail(c, WIRE_ERR_FIELD, "concurrency: %u out of range", (unsigned)m->concurrency);
    st = check_text(c, "hostname", m->hostname, sizeof m->hostname, true);
    if (st)
        return st;
    return check_text(c, "version", m->version, sizeof m->version, true);
}

static WireStatus check_refuse(Ctx *c, const WireRefuse *m)
{
    return check_text(c, "reason", m->reason, sizeof m->reason, false);
}

static WireStatus check_request(Ctx *c, const WireRequest *m)
{
    WireStatus st = check_rank(c, m->rank);
    if (st)
        return st;
    if (m->pairs < 1 || m->pairs > WIRE_MAX_PAIRS_PER_WORK)
        return fail(c, WIRE_ERR_FIELD, "pairs: %u out of range", (unsigned)m->pairs);
    return WIRE_OK;
}

static WireStatus check_work(Ctx *c, const WireWork *m)
{
    if (m->pair_count < 1 || m->pair_count > WIRE_MAX_PAIRS_PER_WORK)
        return fail(c, WIRE_ERR_FIELD, "pair count %d out of range", m->pair_count);
    WireStatus st = check_distinct(c, m->pair_ids, m->pair_count, sizeof m->pair_ids[0]);
    if (st)
        return st;
    const WireSpsaStep *s = &m->spsa;
    if (s->count < 0 || s->count > WIRE_MAX_SPSA_PARAMS)
        return fail(c, WIRE_ERR_FIELD, "spsa: %d parameters", s->count);
    for (int i = 0; i < s->count; i++) {
        if (s->param[i] > WIRE_MAX_PARAM_ID)
            return fail(c, WIRE_ERR_FIELD, "spsa: parameter id %u out of range",
                        (unsigned)s->param[i]);
        for (int j = 0; j < i; j++)
            if (s->param[i] == s->param[j])
                return fail(c, WIRE_ERR_FIELD, "spsa: parameter id %u repeated",
                            (unsigned)s->param[i]);
    }
    return WIRE_OK;
}

/// A move joins two different points of the board; the book bit marks exactly the opening's
/// moves.
static WireStatus check_move(Ctx *c, const WireGameMove *mv, bool book)
{
    int from = move_from(mv->move), to = move_to(mv->move);
    if (from >= SQUARE_NB || to >= SQUARE_NB || from == to)
        return fail(c, WIRE_ERR_FIELD, "move: %u is not a move on the board", mv->move);
    if (mv->flags & ~WIRE_MOVE_FLAGS)
        return fail(c, WIRE_ERR_FIELD, "flags: unknown bits in %u", mv->flags);
    if (!(mv->flags & WIRE_MOVE_BOOK) != !book)
        return fail(c, WIRE_ERR_FIELD, "flags: book bit disagrees with book plies");
    return WIRE_OK;
}

static WireStatus check_game(Ctx *c, const WireGame *g)
{
    if (g->red > 1)
        return fail(c, WIRE_ERR_FIELD, "red: %u is not 0 or 1", g->red);
    if (g->outcome >= WIRE_OUTCOME_NB)
        return fail(c, WIRE_ERR_FIELD, "outcome: %u out of range", g->outcome);
    if (g->term >= WIRE_TERM_LIMIT)
        return fail(c, WIRE_ERR_FIELD, "termination: %u out of range", g->term);
    WireStatus st = check_text(c, "detail", g->detail, sizeof g->detail, false);
    if (st)
        return st;
    st = check_text(c, "start fen", g->start_fen, sizeof g->start_fen, true);
    if (st)
        return st;
    if (g->ply_count < 0 || g->ply_count > WIRE_MAX_PLIES)
        return fail(c, WIRE_ERR_FIELD, "ply count %d out of range", g->ply_count);
    if (g->book_plies < 0 || g->book_plies > g->ply_count)
        return fail(c, WIRE_ERR_FIELD, "book plies %d exceed %d plies", g->book_plies,
                    g->ply_count);
    for (c->ply = 0; c->ply < g->ply_count; c->ply++) {
        st = check_move(c, &g->moves[c->ply], c->ply < g->book_plies);
        if (st)
            return st;
    }
    c->ply = -1;
    return WIRE_OK;
}

static WireStatus check_result(Ctx *c, const WireResult *m)
{
    WireStatus st = check_rank(c, m->rank);
    if (st)
        return st;
    if (m->pair_count < 1 || m->pair_count > WIRE_MAX_PAIRS_PER_WORK)
        return fail(c, WIRE_ERR_FIELD, "pair count %d out of range", m->pair_count);
    st = check_distinct(c, &m->pairs[0].pair_id, m->pair_count, sizeof m->pairs[0]);
    if (st)
        return st;
    uint64_t games = 0;
    for (c->pair = 0; c->pair < m->pair_count; c->pair++) {
        const WirePair *p = &m->pairs[c->pair];
        if (p->game_count < 1 || p->game_count > WIRE_MAX_GAMES_PER_PAIR)
            return fail(c, WIRE_ERR_FIELD, "game count %d out of range", p->game_count);
        for (c->game = 0; c->game < p->game_count; c->game++) {
            st = check_game(c, &p->games[c->game]);
            if (st)
                return st;
        }
        c->game = -1;
        games += (uint64_t)p->game_count;
    }
    c->pair = -1;
    if (m->games_played < games)
        return fail(c, WIRE_ERR_FIELD, "games played %llu below the %llu games sent",
                    (unsigned long long)m->games_played, (unsigned long long)games);
    return WIRE_OK;
}

static WireStatus check_stop(Ctx *c, const WireStop *m)
{
    if (m->code >= WIRE_STOP_NB)
        return fail(c, WIRE_ERR_FIELD, "stop code %u out of range", (unsigned)m->code);
    return check_text(c, "text", m->text, sizeof m->text, false);
}

static WireStatus check_bye(Ctx *c, const WireBye *m)
{
    WireStatus st = check_rank(c, m->rank);
    if (st)
        return st;
    return check_text(c, "error", m->error, sizeof m->error, false);
}

/// Book candidates: a start FEN, moves on the board, at most the caps.
static WireStatus check_book_result(Ctx *c, const WireBookResult *m)
{
    WireStatus st = check_rank(c, m->rank);
    if (st)
        return st;
    if (m->candidate_count < 0 || m->candidate_count > WIRE_MAX_BOOK_CANDS)
        return fail(c, WIRE_ERR_FIELD, "candidate count %d out of range", m->candidate_count);
    for (int i = 0; i < m->candidate_count; i++) {
        const WireBookCandidate *k = &m->candidates[i];
        st = check_text(c, "start fen", k->start_fen, sizeof k->start_fen, true);
        if (st)
            return st;
        if (k->path_len < 0 || k->path_len > WIRE_MAX_BOOK_PATH)
            return fail(c, WIRE_ERR_FIELD, "candidate %d: path of %d moves", i, k->path_len);
        for (int p = 0; p < k->path_len; p++) {
            int from = move_from(k->path[p].move), to = move_to(k->path[p].move);
            if (from >= SQUARE_NB || to >= SQUARE_NB || from == to)
                return fail(c, WIRE_ERR_FIELD, "candidate %d move %d: %u is not a move", i, p,
                            k->path[p].move);
        }
    }
    if (m->candidates_done < (uint64_t)m->candidate_count)
        return fail(c, WIRE_ERR_FIELD, "candidates done %llu below the %d sent",
                    (unsigned long long)m->candidates_done, m->candidate_count);
    return WIRE_OK;
}

/// Datagen: the unit's games and records within their caps; the records' content is the
/// coordinator's to check (it decodes every board).
static WireStatus check_datagen(Ctx *c, const WireDatagenResult *m)
{
    WireStatus st = check_rank(c, m->rank);
    if (st)
        return st;
    if (m->games < 1 || m->games > WIRE_MAX_DATAGEN_GAMES)
        return fail(c, WIRE_ERR_FIELD, "games: %u out of range", (unsigned)m->games);
    if (m->count < 0 || m->count > WIRE_MAX_DATAGEN_RECORDS)
        return fail(c, WIRE_ERR_FIELD, "record count %d out of range", m->count);
    if (m->games_done < m->games)
        return fail(c, WIRE_ERR_FIELD, "games done %llu below the %u sent",
                    (unsigned long long)m->games_done, (unsigned)m->games);
    return WIRE_OK;
}

// ---------------------------------------------------------------------------------------------
// Packing. msgpack-c writes every integer, string and container header in its shortest form,
// which is the only form wire_scan accepts.

#define PACK(call)                                                                                 \
    do {                                                                                           \
        if ((call) != 0)                                                                           \
            return WIRE_ERR_PACK;                                                                  \
    } while (0)

static WireStatus pack_text(msgpack_packer *pk, const char *s)
{
    PACK(msgpack_pack_str_with_body(pk, s, strlen(s)));
    return WIRE_OK;
}

static WireStatus pack_envelope(msgpack_packer *pk, WireKind kind, size_t fields)
{
    PACK(msgpack_pack_array(pk, 4));
    PACK(msgpack_pack_str_with_body(pk, WIRE_MAGIC, strlen(WIRE_MAGIC)));
    PACK(msgpack_pack_unsigned_int(pk, WIRE_VERSION));
    PACK(msgpack_pack_unsigned_int(pk, (unsigned)kind));
    PACK(msgpack_pack_array(pk, fields));
    return WIRE_OK;
}

static WireStatus body_hello(msgpack_packer *pk, const WireHello *m)
{
    WireStatus st = pack_envelope(pk, WIRE_HELLO, 7);
    if (st)
        return st;
    PACK(msgpack_pack_uint32(pk, m->rank));
    PACK(pack_text(pk, m->hostname));
    PACK(msgpack_pack_uint32(pk, m->threads));
    PACK(msgpack_pack_uint32(pk, m->concurrency));
    PACK(msgpack_pack_uint64(pk, m->bench_signature));
    PACK(msgpack_pack_uint64(pk, m->bench_nps));
    return pack_text(pk, m->version);
}

static WireStatus body_refuse(msgpack_packer *pk, const WireRefuse *m)
{
    WireStatus st = pack_envelope(pk, WIRE_REFUSE, 1);
    return st ? st : pack_text(pk, m->reason);
}

static WireStatus body_request(msgpack_packer *pk, const WireRequest *m)
{
    WireStatus st = pack_envelope(pk, WIRE_REQUEST, 2);
    if (st)
        return st;
    PACK(msgpack_pack_uint32(pk, m->rank));
    PACK(msgpack_pack_uint32(pk, m->pairs));
    return WIRE_OK;
}

static WireStatus body_work(msgpack_packer *pk, const WireWork *m)
{
    WireStatus st = pack_envelope(pk, WIRE_WORK, 3);
    if (st)
        return st;
    PACK(msgpack_pack_uint64(pk, m->job_id));
    PACK(msgpack_pack_array(pk, (size_t)m->pair_count));
    for (int i = 0; i < m->pair_count; i++)
        PACK(msgpack_pack_uint64(pk, m->pair_ids[i]));
    const WireSpsaStep *s = &m->spsa;
    if (s->count == 0)
        return msgpack_pack_nil(pk) ? WIRE_ERR_PACK : WIRE_OK;
    PACK(msgpack_pack_array(pk, 4));
    PACK(msgpack_pack_uint64(pk, s->id));
    const void *cols[3] = {s->param, s->plus, s->minus};
    for (int k = 0; k < 3; k++) {
        PACK(msgpack_pack_array(pk, (size_t)s->count));
        for (int i = 0; i < s->count; i++)
            PACK(k == 0 ? msgpack_pack_uint16(pk, ((const uint16_t *)cols[k])[i])
                        : msgpack_pack_int32(pk, ((const int32_t *)cols[k])[i]));
    }
    return WIRE_OK;
}

static WireStatus pack_game(msgpack_packer *pk, const WireGame *g)
{
    PACK(msgpack_pack_array(pk, 7));
    PACK(msgpack_pack_uint8(pk, g->red));
    PACK(msgpack_pack_uint8(pk, g->outcome));
    PACK(msgpack_pack_uint8(pk, g->term));
    PACK(pack_text(pk, g->detail));
    PACK(pack_text(pk, g->start_fen));
    PACK(msgpack_pack_int(pk, g->book_plies));
    PACK(msgpack_pack_array(pk, (size_t)g->ply_count));
    for (int i = 0; i < g->ply_count; i++) {
        const WireGameMove *mv = &g->moves[i];
        PACK(msgpack_pack_array(pk, 5));
        PACK(msgpack_pack_uint16(pk, mv->move));
        PACK(msgpack_pack_int32(pk, mv->score));
        PACK(msgpack_pack_uint8(pk, mv->flags));
        PACK(msgpack_pack_uint8(pk, mv->depth));
        PACK(msgpack_pack_uint32(pk, mv->time_ms));
    }
    return WIRE_OK;
}

static WireStatus body_result(msgpack_packer *pk, const WireResult *m)
{
    WireStatus st = pack_envelope(pk, WIRE_RESULT, 6);
    if (st)
        return st;
    PACK(msgpack_pack_uint64(pk, m->job_id));
    PACK(msgpack_pack_uint32(pk, m->rank));
    PACK(msgpack_pack_array(pk, (size_t)m->pair_count));
    for (int i = 0; i < m->pair_count; i++) {
        const WirePair *p = &m->pairs[i];
        PACK(msgpack_pack_array(pk, 3));
        PACK(msgpack_pack_uint64(pk, p->pair_id));
        PACK(msgpack_pack_uint32(pk, p->opening));
        PACK(msgpack_pack_array(pk, (size_t)p->game_count));
        for (int g = 0; g < p->game_count; g++) {
            st = pack_game(pk, &p->games[g]);
            if (st)
                return st;
        }
    }
    PACK(msgpack_pack_uint64(pk, m->games_played));
    PACK(msgpack_pack_uint64(pk, m->nodes));
    PACK(msgpack_pack_uint64(pk, m->play_ms));
    return WIRE_OK;
}

static WireStatus body_stop(msgpack_packer *pk, const WireStop *m)
{
    WireStatus st = pack_envelope(pk, WIRE_STOP, 2);
    if (st)
        return st;
    PACK(msgpack_pack_uint32(pk, m->code));
    return pack_text(pk, m->text);
}

static WireStatus body_bye(msgpack_packer *pk, const WireBye *m)
{
    WireStatus st = pack_envelope(pk, WIRE_BYE, 3);
    if (st)
        return st;
    PACK(msgpack_pack_uint32(pk, m->rank));
    PACK(msgpack_pack_uint64(pk, m->games_played));
    return pack_text(pk, m->error);
}

static WireStatus body_book_result(msgpack_packer *pk, const WireBookResult *m)
{
    WireStatus st = pack_envelope(pk, WIRE_BOOK, 7);
    if (st)
        return st;
    PACK(msgpack_pack_uint64(pk, m->job_id));
    PACK(msgpack_pack_uint32(pk, m->rank));
    PACK(msgpack_pack_uint64(pk, m->unit_id));
    PACK(msgpack_pack_array(pk, (size_t)m->candidate_count));
    for (int i = 0; i < m->candidate_count; i++) {
        const WireBookCandidate *k = &m->candidates[i];
        PACK(msgpack_pack_array(pk, 3));
        PACK(pack_text(pk, k->start_fen));
        PACK(msgpack_pack_array(pk, (size_t)k->path_len));
        for (int p = 0; p < k->path_len; p++) {
            PACK(msgpack_pack_array(pk, 2));
            PACK(msgpack_pack_uint16(pk, k->path[p].move));
            PACK(msgpack_pack_int32(pk, k->path[p].score));
        }
        PACK(msgpack_pack_int32(pk, k->score));
    }
    PACK(msgpack_pack_uint64(pk, m->candidates_done));
    PACK(msgpack_pack_uint64(pk, m->nodes));
    PACK(msgpack_pack_uint64(pk, m->busy_ms));
    return WIRE_OK;
}

static WireStatus body_datagen(msgpack_packer *pk, const WireDatagenResult *m)
{
    WireStatus st = pack_envelope(pk, WIRE_DATAGEN, 8);
    if (st)
        return st;
    size_t bytes = (size_t)m->count * WIRE_DATAGEN_RECORD;
    PACK(msgpack_pack_uint64(pk, m->job_id));
    PACK(msgpack_pack_uint32(pk, m->rank));
    PACK(msgpack_pack_uint64(pk, m->unit_id));
    PACK(msgpack_pack_uint32(pk, m->games));
    PACK(msgpack_pack_bin(pk, bytes));
    PACK(msgpack_pack_bin_body(pk, m->records, bytes));
    PACK(msgpack_pack_uint64(pk, m->games_done));
    PACK(msgpack_pack_uint64(pk, m->nodes));
    PACK(msgpack_pack_uint64(pk, m->busy_ms));
    return WIRE_OK;
}

/// Checks, packs, and refuses a result past the size cap (a valid message never is: the
/// largest possible RESULT is about 2.7 MB).
#define WIRE_PACK_BODY(check, body, m, out)                                                        \
    do {                                                                                           \
        Ctx c_ = {NULL, 0, -1, -1, -1};                                                            \
        if (!(m) || !(out))                                                                        \
            return WIRE_ERR_INVALID;                                                               \
        if (check(&c_, m))                                                                         \
            return WIRE_ERR_INVALID;                                                               \
        size_t before_ = (out)->size;                                                              \
        msgpack_packer pk_;                                                                        \
        msgpack_packer_init(&pk_, out, msgpack_sbuffer_write);                                     \
        WireStatus st_ = body(&pk_, m);                                                            \
        if (st_)                                                                                   \
            return st_;                                                                            \
        if ((out)->size - before_ > WIRE_MAX_MESSAGE) {                                            \
            (out)->size = before_;                                                                 \
            return WIRE_ERR_TOO_LARGE;                                                             \
        }                                                                                          \
        return WIRE_OK;                                                                            \
    } while (0)

WireStatus wire_pack_hello(const WireHello *m, msgpack_sbuffer *out)
{
    WIRE_PACK_BODY(check_hello, body_hello, m, out);
}

WireStatus wire_pack_refuse(const WireRefuse *m, msgpack_sbuffer *out)
{
    WIRE_PACK_BODY(check_refuse, body_refuse, m, out);
}

WireStatus wire_pack_request(const WireRequest *m, msgpack_sbuffer *out)
{
    WIRE_PACK_BODY(check_request, body_request, m, out);
}

WireStatus wire_pack_work(const WireWork *m, msgpack_sbuffer *out)
{
    WIRE_PACK_BODY(check_work, body_work, m, out);
}

WireStatus wire_pack_result(const WireResult *m, msgpack_sbuffer *out)
{
    WIRE_PACK_BODY(check_result, body_result, m, out);
}

WireStatus wire_pack_stop(const WireStop *m, msgpack_sbuffer *out)
{
    WIRE_PACK_BODY(check_stop, body_stop, m, out);
}

WireStatus wire_pack_bye(const WireBye *m, msgpack_sbuffer *out)
{
    WIRE_PACK_BODY(check_bye, body_bye, m, out);
}

WireStatus wire_pack_book(const WireBookResult *m, msgpack_sbuffer *out)
{
    WIRE_PACK_BODY(check_book_result, body_book_result, m, out);
}

WireStatus wire_pack_datagen(const WireDatagenResult *m, msgpack_sbuffer *out)
{
    WIRE_PACK_BODY(check_datagen, body_datagen, m, out);
}

WireStatus wire_pack(const WireMessage *m, msgpack_sbuffer *out)
{
    if (!m)
        return WIRE_ERR_INVALID;
    switch (m->kind) {
    case WIRE_HELLO: return wire_pack_hello(&m->hello, out);
    case WIRE_REFUSE: return wire_pack_refuse(&m->refuse, out);
    case WIRE_REQUEST: return wire_pack_request(&m->request, out);
    case WIRE_WORK: return wire_pack_work(&m->work, out);
    case WIRE_RESULT: return wire_pack_result(m->result, out);
    case WIRE_STOP: return wire_pack_stop(&m->stop, out);
    case WIRE_BYE: return wire_pack_bye(&m->bye, out);
    case WIRE_BOOK: return wire_pack_book(m->book, out);
    case WIRE_DATAGEN: return wire_pack_datagen(m->datagen, out);
    default: return WIRE_ERR_INVALID;
    }
}

// ---------------------------------------------------------------------------------------------
// Receiving, pass 1: the raw bytes.

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
static WireStatus wire_scan(Ctx *c, const uint8_t *p, size_t len, size_t *end)
{
    // Type bytes 0xc4..0xdf: how many length/value bytes follow.
    static const uint8_t hdr_bytes[28] = {1, 2, 4, 1, 2, 4, 0, 0, 1, 2, 4, 8, 1, 2,
                                          4, 8, 0, 0, 0, 0, 0, 1, 2, 4, 2, 4, 2, 4};
    size_t pos = 0, pending = 1;
    while (pending > 0) {
        if (pos >= len)
            return fail(c, WIRE_ERR_MALFORMED, "truncated at byte %zu", pos);
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
            return fail(c, WIRE_ERR_MALFORMED, "reserved byte 0xc1 at %zu", pos - 1);
        else if (b >= 0xc4 && b <= 0xdf) {
            size_t h = hdr_bytes[b - 0xc4];
            if (h > len - pos)
                return fail(c, WIRE_ERR_MALFORMED, "truncated header at byte %zu", pos - 1);
            uint64_t v = read_be(p + pos, h);
            pos += h;
            if (!scan_typed(b, v, h, &skip, &items))
                return fail(c, WIRE_ERR_MALFORMED, "non-shortest encoding at byte %zu",
                            pos - h - 1);
        } // else a one-byte object: fixints, nil, booleans
        if (skip > len - pos)
            return fail(c, WIRE_ERR_MALFORMED, "%llu bytes declared, %zu left",
                        (unsigned long long)skip, len - pos);
        pos += (size_t)skip;
        size_t avail = len - pos;
        if (pending > avail || items > avail - pending)
            return fail(c, WIRE_ERR_MALFORMED, "%llu items declared, %zu bytes left",
                        (unsigned long long)items, avail);
        pending += (size_t)items;
    }
    *end = pos;
    return WIRE_OK;
}

// ---------------------------------------------------------------------------------------------
// Receiving, pass 2: the object tree, field by field.

static WireStatus get_uint(Ctx *c, const msgpack_object *o, const char *name, uint64_t max,
                           uint64_t *v)
{
    if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return fail(c, WIRE_ERR_FIELD, "%s: not an unsigned integer", name);
    if (o->via.u64 > max)
        return fail(c, WIRE_ERR_FIELD, "%s: %llu above %llu", name, (unsigned long long)o->via.u64,
                    (unsigned long long)max);
    *v = o->via.u64;
    return WIRE_OK;
}

static WireStatus get_u32(Ctx *c, const msgpack_object *o, const char *name, uint32_t *v)
{
    uint64_t x = 0;
    WireStatus st = get_uint(c, o, name, UINT32_MAX, &x);
    if (!st)
        *v = (uint32_t)x;
    return st;
}

static WireStatus get_u8(Ctx *c, const msgpack_object *o, const char *name, uint8_t *v)
{
    uint64_t x = 0;
    WireStatus st = get_uint(c, o, name, UINT8_MAX, &x);
    if (!st)
        *v = (uint8_t)x;
    return st;
}

static WireStatus get_i32(Ctx *c, const msgpack_object *o, const char *name, int32_t *v)
{
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= INT32_MAX)
        *v = (int32_t)o->via.u64;
    else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER && o->via.i64 >= INT32_MIN)
        *v = (int32_t)o->via.i64;
    else
        return fail(c, WIRE_ERR_FIELD, "%s: not a 32-bit integer", name);
    return WIRE_OK;
}

/// Copies a string of at most size - 1 bytes with no NUL into dst, NUL-terminated.
static WireStatus get_text(Ctx *c, const msgpack_object *o, const char *name, char *dst,
                           size_t size)
{
    if (o->type != MSGPACK_OBJECT_STR)
        return fail(c, WIRE_ERR_FIELD, "%s: not a string", name);
    size_t n = o->via.str.size;
    if (n >= size)
        return fail(c, WIRE_ERR_FIELD, "%s: %zu bytes, cap %zu", name, n, size - 1);
    if (n && memchr(o->via.str.ptr, 0, n))
        return fail(c, WIRE_ERR_FIELD, "%s: contains a NUL byte", name);
    if (n)
        memcpy(dst, o->via.str.ptr, n);
    dst[n] = '\0';
    return WIRE_OK;
}

static WireStatus get_array(Ctx *c, const msgpack_object *o, const char *name, uint32_t min,
                            uint32_t max, const msgpack_object **items, int *n)
{
    if (o->type != MSGPACK_OBJECT_ARRAY)
        return fail(c, WIRE_ERR_FIELD, "%s: not an array", name);
    if (o->via.array.size < min || o->via.array.size > max)
        return fail(c, WIRE_ERR_FIELD, "%s: %u entries, expected %u..%u", name,
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

static WireStatus decode_hello(Ctx *c, const msgpack_object *f, WireHello *m)
{
    GET(get_u32(c, &f[0], "rank", &m->rank));
    GET(get_text(c, &f[1], "hostname", m->hostname, sizeof m->hostname));
    GET(get_u32(c, &f[2], "threads", &m->threads));
    GET(get_u32(c, &f[3], "concurrency", &m->concurrency));
    GET(get_uint(c, &f[4], "bench signature", UINT64_MAX, &m->bench_signature));
    GET(get_uint(c, &f[5], "bench nps", UINT64_MAX, &m->bench_nps));
    GET(get_text(c, &f[6], "version", m->version, sizeof m->version));
    return check_hello(c, m);
}

static WireStatus decode_refuse(Ctx *c, const msgpack_object *f, WireRefuse *m)
{
    GET(get_text(c, &f[0], "reason", m->reason, sizeof m->reason));
    return check_refuse(c, m);
}

static WireStatus decode_request(Ctx *c, const msgpack_object *f, WireRequest *m)
{
    GET(get_u32(c, &f[0], "rank", &m->rank));
    GET(get_u32(c, &f[1], "pairs", &m->pairs));
    return check_request(c, m);
}

static WireStatus decode_work(Ctx *c, const msgpack_object *f, WireWork *m)
{
    const msgpack_object *ids = NULL;
    GET(get_uint(c, &f[0], "job id", UINT64_MAX, &m->job_id));
    GET(get_array(c, &f[1], "pair ids", 1, WIRE_MAX_PAIRS_PER_WORK, &ids, &m->pair_count));
    for (int i = 0; i < m->pair_count; i++)
        GET(get_uint(c, &ids[i], "pair id", UINT64_MAX, &m->pair_ids[i]));
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
                return fail(c, WIRE_ERR_FIELD, "%s: %d values for %d ids", names[k], n, count);
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
    return check_work(c, m);
}

static WireStatus decode_move(Ctx *c, const msgpack_object *o, WireGameMove *mv)
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

static WireStatus decode_game(Ctx *c, const msgpack_object *o, WireGame *g)
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

static WireStatus decode_result(Ctx *c, const msgpack_object *f, WireResult *m)
{
    const msgpack_object *pairs = NULL;
    GET(get_uint(c, &f[0], "job id", UINT64_MAX, &m->job_id));
    GET(get_u32(c, &f[1], "rank", &m->rank));
    GET(get_array(c, &f[2], "pairs", 1, WIRE_MAX_PAIRS_PER_WORK, &pairs, &m->pair_count));
    for (c->pair = 0; c->pair < m->pair_count; c->pair++) {
        WirePair *p = &m->pairs[c->pair];
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
    return check_result(c, m);
}

static WireStatus decode_stop(Ctx *c, const msgpack_object *f, WireStop *m)
{
    GET(get_u32(c, &f[0], "code", &m->code));
    GET(get_text(c, &f[1], "text", m->text, sizeof m->text));
    return check_stop(c, m);
}

static WireStatus decode_bye(Ctx *c, const msgpack_object *f, WireBye *m)
{
    GET(get_u32(c, &f[0], "rank", &m->rank));
    GET(get_uint(c, &f[1], "games played", UINT64_MAX, &m->games_played));
    GET(get_text(c, &f[2], "error", m->error, sizeof m->error));
    return check_bye(c, m);
}

static WireStatus decode_book_candidate(Ctx *c, const msgpack_object *o, WireBookCandidate *k)
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

static WireStatus decode_book_result(Ctx *c, const msgpack_object *f, WireBookResult *m)
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
    return check_book_result(c, m);
}

/// The records arrive as one bin of whole records, within the cap.
static WireStatus decode_datagen(Ctx *c, const msgpack_object *f, WireDatagenResult *m)
{
    uint64_t games = 0;
    GET(get_uint(c, &f[0], "job id", UINT64_MAX, &m->job_id));
    GET(get_u32(c, &f[1], "rank", &m->rank));
    GET(get_uint(c, &f[2], "unit id", UINT64_MAX, &m->unit_id));
    GET(get_uint(c, &f[3], "games", WIRE_MAX_DATAGEN_GAMES, &games));
    m->games = (uint32_t)games;
    if (f[4].type != MSGPACK_OBJECT_BIN)
        return fail(c, WIRE_ERR_FIELD, "records: not a bin");
    size_t bytes = f[4].via.bin.size;
    if (bytes % WIRE_DATAGEN_RECORD || bytes / WIRE_DATAGEN_RECORD > WIRE_MAX_DATAGEN_RECORDS)
        return fail(c, WIRE_ERR_FIELD, "records: %zu bytes, not whole records within %d", bytes,
                    WIRE_MAX_DATAGEN_RECORDS);
    m->count = (int)(bytes / WIRE_DATAGEN_RECORD);
    if (bytes)
        memcpy(m->records, f[4].via.bin.ptr, bytes);
    GET(get_uint(c, &f[5], "games done", UINT64_MAX, &m->games_done));
    GET(get_uint(c, &f[6], "nodes", UINT64_MAX, &m->nodes));
    GET(get_uint(c, &f[7], "busy time", UINT64_MAX, &m->busy_ms));
    return check_datagen(c, m);
}

/// Body field counts per kind (the layouts of proto/README.md).
static const uint32_t body_fields[WIRE_KIND_NB] = {
    [WIRE_HELLO] = 7, [WIRE_REFUSE] = 1, [WIRE_REQUEST] = 2, [WIRE_WORK] = 3,    [WIRE_RESULT] = 6,
    [WIRE_STOP] = 2,  [WIRE_BYE] = 3,    [WIRE_BOOK] = 7,    [WIRE_DATAGEN] = 8,
};

/// The envelope ["XQ", version, kind, body]; magic and version come first so that a later
/// version may change everything after them.
static WireStatus decode_message(Ctx *c, const msgpack_object *o, WireMessage *out)
{
    const msgpack_object *e = o->via.array.ptr, *f = NULL;
    if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size < 2 ||
        e[0].type != MSGPACK_OBJECT_STR || e[0].via.str.size != strlen(WIRE_MAGIC) ||
        memcmp(e[0].via.str.ptr, WIRE_MAGIC, strlen(WIRE_MAGIC)) != 0)
        return fail(c, WIRE_ERR_MAGIC, "no [\"" WIRE_MAGIC "\", version, ...] envelope");
    if (e[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER || e[1].via.u64 != WIRE_VERSION)
        return fail(c, WIRE_ERR_VERSION, "this side speaks version %d", WIRE_VERSION);
    if (o->via.array.size != 4)
        return fail(c, WIRE_ERR_MAGIC, "envelope of %u entries, expected 4",
                    (unsigned)o->via.array.size);
    if (e[2].type != MSGPACK_OBJECT_POSITIVE_INTEGER || e[2].via.u64 >= WIRE_KIND_NB)
        return fail(c, WIRE_ERR_KIND, "kind is not one of the %d known", WIRE_KIND_NB);
    WireKind kind = (WireKind)e[2].via.u64;
    int n = 0;
    GET(get_array(c, &e[3], wire_kind_name(kind), body_fields[kind], body_fields[kind], &f, &n));
    switch (kind) {
    case WIRE_HELLO: out->kind = kind; return decode_hello(c, f, &out->hello);
    case WIRE_REFUSE: out->kind = kind; return decode_refuse(c, f, &out->refuse);
    case WIRE_REQUEST: out->kind = kind; return decode_request(c, f, &out->request);
    case WIRE_WORK: out->kind = kind; return decode_work(c, f, &out->work);
    case WIRE_STOP: out->kind = kind; return decode_stop(c, f, &out->stop);
    case WIRE_BYE: out->kind = kind; return decode_bye(c, f, &out->bye);
    case WIRE_BOOK:
        if (!(out->book = wire_book_result_new()))
            return fail(c, WIRE_ERR_NOMEM, "no memory for a book result");
        out->kind = kind;
        return decode_book_result(c, f, out->book);
    case WIRE_DATAGEN:
        if (!(out->datagen = wire_datagen_result_new()))
            return fail(c, WIRE_ERR_NOMEM, "no memory for a datagen result");
        out->kind = kind;
        return decode_datagen(c, f, out->datagen);
    default: break;
    }
    out->result = wire_result_new();
    if (!out->result)
        return fail(c, WIRE_ERR_NOMEM, "no memory for a result");
    out->kind = WIRE_RESULT;
    return decode_result(c, f, out->result);
}

WireStatus wire_unpack(const char *data, size_t len, WireMessage *out, char *why, size_t why_len)
{
    Ctx c = {why, why_len, -1, -1, -1};
    if (why && why_len)
        why[0] = '\0';
    if (!out)
        return fail(&c, WIRE_ERR_INVALID, "no output");
    out->kind = WIRE_KIND_NB;
    out->result = NULL;
    if (len > WIRE_MAX_MESSAGE)
        return fail(&c, WIRE_ERR_TOO_LARGE, "%zu bytes, cap %d", len, WIRE_MAX_MESSAGE);
    if (!data || len == 0)
        return fail(&c, WIRE_ERR_MALFORMED, "empty message");
    size_t end = 0;
    WireStatus st = wire_scan(&c, (const uint8_t *)data, len, &end);
    if (st)
        return st;
    if (end != len)
        return fail(&c, WIRE_ERR_TRAILING, "%zu bytes after the message", len - end);

    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    msgpack_unpack_return r = msgpack_unpack_next(&u, data, len, &off);
    if (r == MSGPACK_UNPACK_SUCCESS && off == len)
        st = decode_message(&c, &u.data, out);
    else // nesting past msgpack-c's stack, or no memory
        st = fail(&c, WIRE_ERR_MALFORMED, "msgpack-c refused it (%d)", (int)r);
    msgpack_unpacked_destroy(&u);
    if (st)
        wire_message_destroy(out);
    return st;
}
