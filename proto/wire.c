// SPDX-License-Identifier: MIT
// Wire messages: their names, the semantic rules of every body, and packing. Receiving is in
// wire_unpack.c. The rules (check_*) are shared by both directions (wire_check), so nothing is
// sent that the other side would refuse, and a message that decodes is one we could send.
#include "wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire_impl.h"

WireStatus wire_fail(WireCtx *c, WireStatus s, const char *fmt, ...)
{
    // The packers check with no why buffer: they need the verdict only, not the text.
    if (!c->why || c->why_len == 0)
        return s;
    char msg[160], where[64] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    // Where in a RESULT it failed, so that a log line points at the one bad move.
    if (c->pair >= 0 && c->ply >= 0)
        snprintf(where, sizeof where, "pair %d game %d ply %d: ", c->pair, c->game, c->ply);
    else if (c->pair >= 0 && c->game >= 0)
        snprintf(where, sizeof where, "pair %d game %d: ", c->pair, c->game);
    else if (c->pair >= 0)
        snprintf(where, sizeof where, "pair %d: ", c->pair);
    snprintf(c->why, c->why_len, "%s: %s%s", wire_strerror(s), where, msg);
    return s;
}

/// Designated initializers keep each text beside its status, whatever the enum's order.
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

// The kinds a job kind may name as its result: adding one here (and in wire_unit_of) is all
// the coordinator's loop needs to stage and journal a new kind's results.
bool wire_is_unit_result(WireKind kind)
{
    return kind == WIRE_RESULT || kind == WIRE_BOOK || kind == WIRE_DATAGEN;
}

bool wire_unit_of(const WireMessage *m, uint64_t *unit, uint64_t *job_id, uint32_t *rank)
{
    switch (m->kind) {
    case WIRE_RESULT:
        // A games unit is one pair; a RESULT of several could not be journaled as one unit.
        if (m->result->unit_count != 1)
            return false;
        *unit = m->result->units[0].pair_id;
        *job_id = m->result->job_id;
        *rank = m->result->rank;
        return true;
    case WIRE_BOOK:
        *unit = m->book->unit_id;
        *job_id = m->book->job_id;
        *rank = m->book->rank;
        return true;
    case WIRE_DATAGEN:
        *unit = m->datagen->unit_id;
        *job_id = m->datagen->job_id;
        *rank = m->datagen->rank;
        return true;
    default: return false;
    }
}

// The result structs are megabytes of fixed capacity: calloc, never the stack, and zeroed so
// that unused slots never leak old data onto the wire.
WireResult *wire_result_new(void) { return calloc(1, sizeof(WireResult)); }

void wire_result_free(WireResult *r) { free(r); }

WireBookResult *wire_book_result_new(void) { return calloc(1, sizeof(WireBookResult)); }

void wire_book_result_free(WireBookResult *r) { free(r); }

WireDatagenResult *wire_datagen_result_new(void) { return calloc(1, sizeof(WireDatagenResult)); }

void wire_datagen_result_free(WireDatagenResult *r) { free(r); }

/// Safe on any message wire_unpack filled, decoded or not (it sets kind only once the heap
/// body exists), and on one destroyed before.
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
static WireStatus check_text(WireCtx *c, const char *name, const char *s, size_t size, bool need)
{
    const char *nul = memchr(s, 0, size);
    if (!nul)
        return wire_fail(c, WIRE_ERR_FIELD, "%s: longer than %zu bytes", name, size - 1);
    if (need && nul == s)
        return wire_fail(c, WIRE_ERR_FIELD, "%s: empty", name);
    return WIRE_OK;
}

/// MPI ranks are ints: a larger one cannot be a real sender and would wrap on the way back.
static WireStatus check_rank(WireCtx *c, uint32_t rank)
{
    if (rank > WIRE_MAX_RANK)
        return wire_fail(c, WIRE_ERR_FIELD, "rank: %u out of range", (unsigned)rank);
    return WIRE_OK;
}

/// Pair ids in one message are distinct (a pair is played and reported once). stride lets the
/// one check read both WORK's id array and RESULT's ids inside WirePair. Quadratic, but n is at
/// most WIRE_MAX_PAIRS_PER_WORK.
static WireStatus check_distinct(WireCtx *c, const uint64_t *ids, int n, size_t stride)
{
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++) {
            uint64_t a = *(const uint64_t *)((const char *)ids + (size_t)i * stride);
            uint64_t b = *(const uint64_t *)((const char *)ids + (size_t)j * stride);
            if (a == b)
                return wire_fail(c, WIRE_ERR_FIELD, "pair id %llu repeated", (unsigned long long)a);
        }
    return WIRE_OK;
}

/// A worker's identity: the coordinator sizes its schedule by threads and concurrency, and
/// prints hostname and version in its roll call, so none may be zero or empty.
static WireStatus check_hello(WireCtx *c, const WireHello *m)
{
    WireStatus st = check_rank(c, m->rank);
    if (st)
        return st;
    if (m->threads < 1 || m->threads > WIRE_MAX_THREADS)
        return wire_fail(c, WIRE_ERR_FIELD, "threads: %u out of range", (unsigned)m->threads);
    if (m->concurrency < 1 || m->concurrency > WIRE_MAX_THREADS)
        return wire_fail(c, WIRE_ERR_FIELD, "concurrency: %u out of range",
                         (unsigned)m->concurrency);
    if (m->engine_count < 0 || m->engine_count > WIRE_MAX_ENGINES)
        return wire_fail(c, WIRE_ERR_FIELD, "engine benches: %d out of range", m->engine_count);
    st = check_text(c, "hostname", m->hostname, sizeof m->hostname, true);
    if (st)
        return st;
    return check_text(c, "version", m->version, sizeof m->version, true);
}

static WireStatus check_refuse(WireCtx *c, const WireRefuse *m)
{
    return check_text(c, "reason", m->reason, sizeof m->reason, false);
}

/// A request for at least one unit (zero would be a no-op the coordinator has to answer) and
/// no more than one WORK can carry.
static WireStatus check_request(WireCtx *c, const WireRequest *m)
{
    WireStatus st = check_rank(c, m->rank);
    if (st)
        return st;
    if (m->units < 1 || m->units > WIRE_MAX_PAIRS_PER_WORK)
        return wire_fail(c, WIRE_ERR_FIELD, "pairs: %u out of range", (unsigned)m->units);
    return WIRE_OK;
}

/// Distinct unit ids, since the worker reports each once; an SPSA step's parameter ids are
/// distinct weights, or one weight would get two values in the same game.
static WireStatus check_work(WireCtx *c, const WireWork *m)
{
    if (m->unit_count < 1 || m->unit_count > WIRE_MAX_PAIRS_PER_WORK)
        return wire_fail(c, WIRE_ERR_FIELD, "pair count %d out of range", m->unit_count);
    WireStatus st = check_distinct(c, m->unit_ids, m->unit_count, sizeof m->unit_ids[0]);
    if (st)
        return st;
    if (m->fen_count != 0 && m->fen_count != m->unit_count)
        return wire_fail(c, WIRE_ERR_FIELD, "%d positions for %d units", m->fen_count,
                         m->unit_count);
    for (int i = 0; i < m->fen_count; i++)
        if (!memchr(m->fen[i], 0, sizeof m->fen[i]) || !m->fen[i][0])
            return wire_fail(c, WIRE_ERR_FIELD, "position %d: empty or not terminated", i);
    const WireSpsaStep *s = &m->spsa;
    if (s->count < 0 || s->count > WIRE_MAX_SPSA_PARAMS)
        return wire_fail(c, WIRE_ERR_FIELD, "spsa: %d parameters", s->count);
    for (int i = 0; i < s->count; i++) {
        if (s->param[i] > WIRE_MAX_PARAM_ID)
            return wire_fail(c, WIRE_ERR_FIELD, "spsa: parameter id %u out of range",
                             (unsigned)s->param[i]);
        for (int j = 0; j < i; j++)
            if (s->param[i] == s->param[j])
                return wire_fail(c, WIRE_ERR_FIELD, "spsa: parameter id %u repeated",
                                 (unsigned)s->param[i]);
    }
    return WIRE_OK;
}

/// A move joins two different points of the board; the book bit marks exactly the opening's
/// moves.
static WireStatus check_move(WireCtx *c, const WireGameMove *mv, bool book)
{
    int from = move_from(mv->move), to = move_to(mv->move);
    if (from >= SQUARE_NB || to >= SQUARE_NB || from == to)
        return wire_fail(c, WIRE_ERR_FIELD, "move: %u is not a move on the board", mv->move);
    if (mv->flags & ~WIRE_MOVE_FLAGS)
        return wire_fail(c, WIRE_ERR_FIELD, "flags: unknown bits in %u", mv->flags);
    if (!(mv->flags & WIRE_MOVE_BOOK) != !book)
        return wire_fail(c, WIRE_ERR_FIELD, "flags: book bit disagrees with book plies");
    return WIRE_OK;
}

/// A game the coordinator can replay and write as PGN: codes within their enums, a start
/// position, and the moves (c->ply names the bad one).
static WireStatus check_game(WireCtx *c, const WireGame *g)
{
    if (g->red > 1)
        return wire_fail(c, WIRE_ERR_FIELD, "red: %u is not 0 or 1", g->red);
    if (g->outcome >= WIRE_OUTCOME_NB)
        return wire_fail(c, WIRE_ERR_FIELD, "outcome: %u out of range", g->outcome);
    if (g->term >= WIRE_TERM_LIMIT)
        return wire_fail(c, WIRE_ERR_FIELD, "termination: %u out of range", g->term);
    WireStatus st = check_text(c, "detail", g->detail, sizeof g->detail, false);
    if (st)
        return st;
    st = check_text(c, "start fen", g->start_fen, sizeof g->start_fen, true);
    if (st)
        return st;
    if (g->ply_count < 0 || g->ply_count > WIRE_MAX_PLIES)
        return wire_fail(c, WIRE_ERR_FIELD, "ply count %d out of range", g->ply_count);
    if (g->book_plies < 0 || g->book_plies > g->ply_count)
        return wire_fail(c, WIRE_ERR_FIELD, "book plies %d exceed %d plies", g->book_plies,
                         g->ply_count);
    for (c->ply = 0; c->ply < g->ply_count; c->ply++) {
        st = check_move(c, &g->moves[c->ply], c->ply < g->book_plies);
        if (st)
            return st;
    }
    c->ply = -1;
    return WIRE_OK;
}

/// Pairs of 1 or 2 games each, distinct pair ids, and running totals that cover this message
/// (a worker cannot have played fewer games than it sends).
static WireStatus check_result(WireCtx *c, const WireResult *m)
{
    WireStatus st = check_rank(c, m->rank);
    if (st)
        return st;
    if (m->unit_count < 1 || m->unit_count > WIRE_MAX_PAIRS_PER_WORK)
        return wire_fail(c, WIRE_ERR_FIELD, "pair count %d out of range", m->unit_count);
    st = check_distinct(c, &m->units[0].pair_id, m->unit_count, sizeof m->units[0]);
    if (st)
        return st;
    uint64_t games = 0;
    for (c->pair = 0; c->pair < m->unit_count; c->pair++) {
        const WirePair *p = &m->units[c->pair];
        if (p->game_count < 1 || p->game_count > WIRE_MAX_GAMES_PER_PAIR)
            return wire_fail(c, WIRE_ERR_FIELD, "game count %d out of range", p->game_count);
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
        return wire_fail(c, WIRE_ERR_FIELD, "games played %llu below the %llu games sent",
                         (unsigned long long)m->games_played, (unsigned long long)games);
    return WIRE_OK;
}

/// A known stop code: the worker's exit status follows from it.
static WireStatus check_stop(WireCtx *c, const WireStop *m)
{
    if (m->code >= WIRE_STOP_NB)
        return wire_fail(c, WIRE_ERR_FIELD, "stop code %u out of range", (unsigned)m->code);
    return check_text(c, "text", m->text, sizeof m->text, false);
}

/// The error may be empty: a worker that simply ran out of work says nothing.
static WireStatus check_bye(WireCtx *c, const WireBye *m)
{
    WireStatus st = check_rank(c, m->rank);
    if (st)
        return st;
    return check_text(c, "error", m->error, sizeof m->error, false);
}

/// Book candidates: a start FEN, moves on the board, at most the caps.
static WireStatus check_book_result(WireCtx *c, const WireBookResult *m)
{
    WireStatus st = check_rank(c, m->rank);
    if (st)
        return st;
    if (m->candidate_count < 0 || m->candidate_count > WIRE_MAX_BOOK_CANDS)
        return wire_fail(c, WIRE_ERR_FIELD, "candidate count %d out of range", m->candidate_count);
    for (int i = 0; i < m->candidate_count; i++) {
        const WireBookCandidate *k = &m->candidates[i];
        st = check_text(c, "start fen", k->start_fen, sizeof k->start_fen, true);
        if (st)
            return st;
        if (k->path_len < 0 || k->path_len > WIRE_MAX_BOOK_PATH)
            return wire_fail(c, WIRE_ERR_FIELD, "candidate %d: path of %d moves", i, k->path_len);
        for (int p = 0; p < k->path_len; p++) {
            int from = move_from(k->path[p].move), to = move_to(k->path[p].move);
            if (from >= SQUARE_NB || to >= SQUARE_NB || from == to)
                return wire_fail(c, WIRE_ERR_FIELD, "candidate %d move %d: %u is not a move", i, p,
                                 k->path[p].move);
        }
    }
    if (m->candidates_done < (uint64_t)m->candidate_count)
        return wire_fail(c, WIRE_ERR_FIELD, "candidates done %llu below the %d sent",
                         (unsigned long long)m->candidates_done, m->candidate_count);
    return WIRE_OK;
}

/// Datagen: the unit's games and records within their caps; the records' content is the
/// coordinator's to check (it decodes every board).
static WireStatus check_datagen(WireCtx *c, const WireDatagenResult *m)
{
    WireStatus st = check_rank(c, m->rank);
    if (st)
        return st;
    if (m->games < 1 || m->games > WIRE_MAX_DATAGEN_GAMES)
        return wire_fail(c, WIRE_ERR_FIELD, "games: %u out of range", (unsigned)m->games);
    if (m->count < 0 || m->count > WIRE_MAX_DATAGEN_RECORDS)
        return wire_fail(c, WIRE_ERR_FIELD, "record count %d out of range", m->count);
    if (m->games_done < m->games)
        return wire_fail(c, WIRE_ERR_FIELD, "games done %llu below the %u sent",
                         (unsigned long long)m->games_done, (unsigned)m->games);
    // Every position seen is either a record or one filter's skip.
    uint64_t sum = (uint64_t)m->count;
    for (int i = WIRE_DG_SEEN + 1; i < WIRE_DATAGEN_FILTERS; i++) {
        if (m->filtered[i] > m->filtered[WIRE_DG_SEEN])
            return wire_fail(c, WIRE_ERR_FIELD, "filter counts above the positions seen");
        sum += m->filtered[i];
    }
    if (sum != m->filtered[WIRE_DG_SEEN])
        return wire_fail(c, WIRE_ERR_FIELD, "filter counts: %llu records and skips of %llu seen",
                         (unsigned long long)sum, (unsigned long long)m->filtered[WIRE_DG_SEEN]);
    return WIRE_OK;
}

// One dispatcher, so that wire_unpack runs the very rules the packers below run.
WireStatus wire_check(WireCtx *c, const WireMessage *m)
{
    switch (m->kind) {
    case WIRE_HELLO: return check_hello(c, &m->hello);
    case WIRE_REFUSE: return check_refuse(c, &m->refuse);
    case WIRE_REQUEST: return check_request(c, &m->request);
    case WIRE_WORK: return check_work(c, &m->work);
    case WIRE_RESULT: return check_result(c, m->result);
    case WIRE_STOP: return check_stop(c, &m->stop);
    case WIRE_BYE: return check_bye(c, &m->bye);
    case WIRE_BOOK: return check_book_result(c, m->book);
    case WIRE_DATAGEN: return check_datagen(c, m->datagen);
    default: return wire_fail(c, WIRE_ERR_KIND, "kind is not one of the %d known", WIRE_KIND_NB);
    }
}

// ---------------------------------------------------------------------------------------------
// Packing. msgpack-c writes every integer, string and container header in its shortest form,
// which is the only form wire_scan accepts.

/// Any non-zero return of msgpack-c means the sink refused bytes: the message is lost.
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

/// The envelope of every message, then the body array's header: the body fields follow. The
/// field counts must agree with wire_unpack.c's body_fields.
static WireStatus pack_envelope(msgpack_packer *pk, WireKind kind, size_t fields)
{
    PACK(msgpack_pack_array(pk, 4));
    PACK(msgpack_pack_str_with_body(pk, WIRE_MAGIC, strlen(WIRE_MAGIC)));
    PACK(msgpack_pack_unsigned_int(pk, WIRE_VERSION));
    PACK(msgpack_pack_unsigned_int(pk, (unsigned)kind));
    PACK(msgpack_pack_array(pk, fields));
    return WIRE_OK;
}

// The body_* writers emit the fields in README order; each is the mirror of a decode_* in
// wire_unpack.c. Widths are the struct's, and msgpack-c shortens them on the wire anyway.
static WireStatus body_hello(msgpack_packer *pk, const WireHello *m)
{
    WireStatus st = pack_envelope(pk, WIRE_HELLO, 8);
    if (st)
        return st;
    PACK(msgpack_pack_uint32(pk, m->rank));
    PACK(pack_text(pk, m->hostname));
    PACK(msgpack_pack_uint32(pk, m->threads));
    PACK(msgpack_pack_uint32(pk, m->concurrency));
    PACK(msgpack_pack_uint64(pk, m->bench_signature));
    PACK(msgpack_pack_uint64(pk, m->bench_nps));
    PACK(pack_text(pk, m->version));
    PACK(msgpack_pack_array(pk, (size_t)m->engine_count));
    for (int i = 0; i < m->engine_count; i++)
        PACK(msgpack_pack_uint64(pk, m->engine_bench[i]));
    return WIRE_OK;
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
    PACK(msgpack_pack_uint32(pk, m->units));
    return WIRE_OK;
}

/// An SPSA step, or nil: every job but SPSA sends WORK without one, and a byte is enough.
static WireStatus body_spsa(msgpack_packer *pk, const WireSpsaStep *s)
{
    if (s->count == 0)
        return msgpack_pack_nil(pk) ? WIRE_ERR_PACK : WIRE_OK;
    // Three columns (ids, plus, minus) rather than triples: one array header each.
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

static WireStatus body_work(msgpack_packer *pk, const WireWork *m)
{
    WireStatus st = pack_envelope(pk, WIRE_WORK, 4);
    if (st)
        return st;
    PACK(msgpack_pack_uint64(pk, m->job_id));
    PACK(msgpack_pack_array(pk, (size_t)m->unit_count));
    for (int i = 0; i < m->unit_count; i++)
        PACK(msgpack_pack_uint64(pk, m->unit_ids[i]));
    st = body_spsa(pk, &m->spsa);
    if (st)
        return st;
    // nil when the units need no position (every kind but a DOE book).
    if (m->fen_count == 0)
        return msgpack_pack_nil(pk) ? WIRE_ERR_PACK : WIRE_OK;
    PACK(msgpack_pack_array(pk, (size_t)m->fen_count));
    for (int i = 0; i < m->fen_count; i++)
        PACK(pack_text(pk, m->fen[i]));
    return WIRE_OK;
}

/// One game: the header fields, then each move as [move, score, flags, depth, time]. The PGN
/// is not sent; the coordinator rebuilds it from these.
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
    PACK(msgpack_pack_array(pk, (size_t)m->unit_count));
    for (int i = 0; i < m->unit_count; i++) {
        const WirePair *p = &m->units[i];
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

/// The records travel as one bin, not an array of them: 20000 records are one header and a
/// memcpy on each side, and their content is checked by the coordinator, not here.
static WireStatus body_datagen(msgpack_packer *pk, const WireDatagenResult *m)
{
    WireStatus st = pack_envelope(pk, WIRE_DATAGEN, 9);
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
    PACK(msgpack_pack_array(pk, WIRE_DATAGEN_FILTERS));
    for (int i = 0; i < WIRE_DATAGEN_FILTERS; i++)
        PACK(msgpack_pack_uint64(pk, m->filtered[i]));
    return WIRE_OK;
}

/// Checks, packs, and refuses a result past the size cap (a valid message never is: the
/// largest possible RESULT is about 2.7 MB).
#define WIRE_PACK_BODY(check, body, m, out)                                                        \
    do {                                                                                           \
        WireCtx c_ = {NULL, 0, -1, -1, -1};                                                        \
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

// A macro rather than one function over callbacks: each check and body keeps its own struct
// type, so a mismatched pair does not compile.
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
