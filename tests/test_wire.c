// SPDX-License-Identifier: MIT
// The wire protocol: every kind round-trips field for field; truncated, oversized, mistyped,
// out-of-range, unknown-kind, other-version and trailing-garbage messages are rejected with
// their own status; random bytes and mutated messages never crash and either fail or decode to
// a message that re-packs to the same bytes.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wire.h"

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static void fill_text(char *dst, size_t n, char base)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = (char)(base + (char)(i % 26));
    dst[n] = '\0';
}

static void make_hello(WireHello *m)
{
    memset(m, 0, sizeof *m);
    m->rank = 12;
    fill_text(m->hostname, WIRE_MAX_TEXT, 'a');
    m->threads = 4;
    m->concurrency = WIRE_MAX_THREADS;
    m->bench_signature = 668302;
    m->bench_nps = UINT64_MAX;
    snprintf(m->version, sizeof m->version, "0.1.0");
    m->engine_count = WIRE_MAX_ENGINES;
    for (int i = 0; i < WIRE_MAX_ENGINES; i++)
        m->engine_bench[i] = i == 3 ? UINT64_MAX : 1000u * (unsigned)i;
}

/// A game of `plies` moves whose first 8 are book moves; the has_score/mate bits cycle through
/// all four combinations inside and outside the book, and the extremes of every field appear.
static void make_game(WireGame *g, int plies, int salt)
{
    memset(g, 0, sizeof *g);
    g->red = (uint8_t)(salt & 1);
    g->outcome = (uint8_t)(salt % WIRE_OUTCOME_NB);
    g->term = (uint8_t)(WIRE_TERM_LIMIT - 1 - salt % 8);
    fill_text(g->detail, salt ? 10 : WIRE_MAX_TEXT, 'A');
    snprintf(g->start_fen, sizeof g->start_fen,
             "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1");
    g->ply_count = plies;
    g->book_plies = plies < 8 ? plies : 8;
    for (int i = 0; i < plies; i++) {
        WireGameMove *mv = &g->moves[i];
        int from = (i * 7 + salt) % SQUARE_NB, to = (from + 1 + i % 88) % SQUARE_NB;
        mv->move = move_make(from, to);
        mv->flags = (uint8_t)(i % 4 | (i < g->book_plies ? WIRE_MOVE_BOOK : 0));
        mv->score = i % 5 == 0 ? INT32_MIN : i % 5 == 1 ? INT32_MAX : (i - 150) * 37;
        mv->depth = (uint8_t)(i % 256);
        mv->time_ms = i % 3 == 0 ? UINT32_MAX : (uint32_t)i * 1000u;
    }
    if (plies > 0)
        g->moves[plies - 1].move = move_make(SQ_I9, SQ_A0 + 1);
}

static WireResult *make_result(int pairs, int games, int plies)
{
    WireResult *r = wire_result_new();
    assert_non_null(r);
    r->job_id = UINT64_MAX - 1;
    r->rank = WIRE_MAX_RANK;
    r->unit_count = pairs;
    for (int p = 0; p < pairs; p++) {
        r->units[p].pair_id = (uint64_t)p * 1000003u + 17;
        r->units[p].opening = UINT32_MAX - (uint32_t)p;
        r->units[p].game_count = games;
        for (int g = 0; g < games; g++)
            make_game(&r->units[p].games[g], plies, p * 2 + g);
    }
    r->games_played = (uint64_t)pairs * (uint64_t)games + 5;
    r->nodes = 1ull << 40;
    r->play_ms = 123456789;
    return r;
}

/// A book unit of n candidates: paths of every length up to the cap, extreme scores.
static WireBookResult *make_book(int n)
{
    WireBookResult *r = wire_book_result_new();
    assert_non_null(r);
    r->job_id = 42;
    r->rank = 3;
    r->unit_id = UINT64_MAX;
    r->candidate_count = n;
    for (int i = 0; i < n; i++) {
        WireBookCandidate *k = &r->candidates[i];
        snprintf(k->start_fen, sizeof k->start_fen, "%s",
                 "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1");
        k->path_len = i % (WIRE_MAX_BOOK_PATH + 1);
        for (int p = 0; p < k->path_len; p++)
            k->path[p] = (WireBookMove){move_make((p * 7 + i) % SQUARE_NB, (p * 7 + i + 1) % 90),
                                        p % 2 ? INT32_MIN : p * 13 - 40};
        k->score = i % 3 == 0 ? INT32_MAX : -i;
    }
    r->candidates_done = (uint64_t)n + 7;
    r->nodes = 1ull << 50;
    r->busy_ms = 99;
    return r;
}

static void assert_game_equal(const WireGame *a, const WireGame *b)
{
    assert_int_equal(a->red, b->red);
    assert_int_equal(a->outcome, b->outcome);
    assert_int_equal(a->term, b->term);
    assert_string_equal(a->detail, b->detail);
    assert_string_equal(a->start_fen, b->start_fen);
    assert_int_equal(a->book_plies, b->book_plies);
    assert_int_equal(a->ply_count, b->ply_count);
    for (int i = 0; i < a->ply_count; i++) {
        assert_int_equal(a->moves[i].move, b->moves[i].move);
        assert_int_equal(a->moves[i].flags, b->moves[i].flags);
        assert_int_equal(a->moves[i].depth, b->moves[i].depth);
        assert_int_equal(a->moves[i].score, b->moves[i].score);
        assert_int_equal(a->moves[i].time_ms, b->moves[i].time_ms);
    }
}

static void assert_result_equal(const WireResult *a, const WireResult *b)
{
    assert_int_equal(a->job_id, b->job_id);
    assert_int_equal(a->rank, b->rank);
    assert_int_equal(a->unit_count, b->unit_count);
    for (int p = 0; p < a->unit_count; p++) {
        assert_int_equal(a->units[p].pair_id, b->units[p].pair_id);
        assert_int_equal(a->units[p].opening, b->units[p].opening);
        assert_int_equal(a->units[p].game_count, b->units[p].game_count);
        for (int g = 0; g < a->units[p].game_count; g++)
            assert_game_equal(&a->units[p].games[g], &b->units[p].games[g]);
    }
    assert_int_equal(a->games_played, b->games_played);
    assert_int_equal(a->nodes, b->nodes);
    assert_int_equal(a->play_ms, b->play_ms);
}

/// Packs m, unpacks it (must succeed as the same kind) and checks re-packing gives the same
/// bytes. The decoded message is left in *out.
static void roundtrip(const WireMessage *m, WireMessage *out)
{
    msgpack_sbuffer a, b;
    char why[256];
    msgpack_sbuffer_init(&a);
    msgpack_sbuffer_init(&b);
    assert_int_equal(wire_pack(m, &a), WIRE_OK);
    assert_int_equal(wire_unpack(a.data, a.size, out, why, sizeof why), WIRE_OK);
    assert_int_equal(out->kind, m->kind);
    assert_int_equal(wire_pack(out, &b), WIRE_OK);
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.data, b.data, a.size);
    msgpack_sbuffer_destroy(&a);
    msgpack_sbuffer_destroy(&b);
}

/// Every small kind decodes to the same fields it was packed from.
static void test_roundtrip_small(void **state)
{
    (void)state;
    WireMessage m = {.kind = WIRE_HELLO}, d;
    make_hello(&m.hello);
    roundtrip(&m, &d);
    assert_int_equal(d.hello.rank, m.hello.rank);
    assert_string_equal(d.hello.hostname, m.hello.hostname);
    assert_int_equal(d.hello.threads, m.hello.threads);
    assert_int_equal(d.hello.concurrency, m.hello.concurrency);
    assert_int_equal(d.hello.bench_signature, m.hello.bench_signature);
    assert_int_equal(d.hello.bench_nps, m.hello.bench_nps);
    assert_string_equal(d.hello.version, m.hello.version);
    assert_int_equal(d.hello.engine_count, m.hello.engine_count);
    for (int i = 0; i < m.hello.engine_count; i++)
        assert_true(d.hello.engine_bench[i] == m.hello.engine_bench[i]);

    m = (WireMessage){.kind = WIRE_REFUSE};
    snprintf(m.refuse.reason, sizeof m.refuse.reason, "bench signature 1 differs from 2");
    roundtrip(&m, &d);
    assert_string_equal(d.refuse.reason, m.refuse.reason);

    m = (WireMessage){.kind = WIRE_REQUEST, .request = {.rank = 3, .units = 64}};
    roundtrip(&m, &d);
    assert_int_equal(d.request.rank, 3);
    assert_int_equal(d.request.units, 64);

    m = (WireMessage){.kind = WIRE_WORK, .work = {.job_id = 1ull << 63, .unit_count = 64}};
    for (int i = 0; i < 64; i++)
        m.work.unit_ids[i] = i == 63 ? UINT64_MAX : (uint64_t)i * 300;
    roundtrip(&m, &d);
    assert_int_equal(d.work.job_id, m.work.job_id);
    assert_int_equal(d.work.unit_count, 64);
    assert_memory_equal(d.work.unit_ids, m.work.unit_ids, sizeof m.work.unit_ids);
    assert_int_equal(d.work.spsa.count, 0);

    // A WORK carrying an SPSA step: ids, and both sides' values (negative ones too).
    m.work.spsa.id = 12345;
    m.work.spsa.count = WIRE_MAX_SPSA_PARAMS;
    for (int i = 0; i < WIRE_MAX_SPSA_PARAMS; i++) {
        m.work.spsa.param[i] = (uint16_t)(i * 3); // distinct, under WIRE_MAX_PARAM_ID
        m.work.spsa.plus[i] = i - 300;
        m.work.spsa.minus[i] = -i * 1000;
    }
    roundtrip(&m, &d);
    assert_int_equal(d.work.spsa.id, 12345);
    assert_int_equal(d.work.spsa.count, WIRE_MAX_SPSA_PARAMS);
    assert_memory_equal(d.work.spsa.param, m.work.spsa.param, sizeof m.work.spsa.param);
    assert_memory_equal(d.work.spsa.plus, m.work.spsa.plus, sizeof m.work.spsa.plus);
    assert_memory_equal(d.work.spsa.minus, m.work.spsa.minus, sizeof m.work.spsa.minus);
    // A repeated parameter id is refused on packing.
    m.work.spsa.param[1] = m.work.spsa.param[0];
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    assert_int_equal(wire_pack(&m, &sb), WIRE_ERR_INVALID);

    // A WORK with a position per unit (a DOE book's leaves): each comes back in its place, a
    // 127-byte one whole; a count other than the units' is refused on packing.
    m = (WireMessage){.kind = WIRE_WORK, .work = {.job_id = 9, .unit_count = 3}};
    for (int i = 0; i < 3; i++) {
        m.work.unit_ids[i] = (uint64_t)(10 + i);
        snprintf(m.work.fen[i], sizeof m.work.fen[i], "%s",
                 i == 1 ? "9/9/9/9/9/9/9/9/9/4K4 w - -"
                        : "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - -");
    }
    memset(m.work.fen[2], 'p', WIRE_MAX_FEN);
    m.work.fen[2][WIRE_MAX_FEN] = '\0';
    m.work.fen_count = 3;
    roundtrip(&m, &d);
    assert_int_equal(d.work.fen_count, 3);
    for (int i = 0; i < 3; i++)
        assert_string_equal(d.work.fen[i], m.work.fen[i]);
    m.work.fen_count = 2;
    assert_int_equal(wire_pack(&m, &sb), WIRE_ERR_INVALID);
    m.work.fen_count = 3;
    m.work.fen[0][0] = '\0';
    assert_int_equal(wire_pack(&m, &sb), WIRE_ERR_INVALID);
    msgpack_sbuffer_destroy(&sb);

    m = (WireMessage){.kind = WIRE_STOP, .stop = {.code = WIRE_STOP_INTERRUPTED}};
    roundtrip(&m, &d);
    assert_int_equal(d.stop.code, WIRE_STOP_INTERRUPTED);
    assert_string_equal(d.stop.text, "");

    m = (WireMessage){.kind = WIRE_BYE,
                      .bye = {.rank = 0, .games_played = 99, .error = "engine 'x' cannot start"}};
    roundtrip(&m, &d);
    assert_int_equal(d.bye.rank, 0);
    assert_int_equal(d.bye.games_played, 99);
    assert_string_equal(d.bye.error, "engine 'x' cannot start");
    wire_message_destroy(&d);
}

/// A result of one pair of two 300-ply games (all flag combinations, extreme values) plus a
/// one-game pair with no moves decodes field for field.
static void test_roundtrip_result(void **state)
{
    (void)state;
    WireMessage m = {.kind = WIRE_RESULT, .result = make_result(2, 2, 300)}, d;
    m.result->units[1].game_count = 1;
    make_game(&m.result->units[1].games[0], 0, 3);
    bool seen[8] = {false};
    for (int i = 0; i < 300; i++)
        seen[m.result->units[0].games[0].moves[i].flags] = true;
    for (int f = 0; f < 8; f++)
        assert_true(seen[f]);
    roundtrip(&m, &d);
    assert_result_equal(m.result, d.result);
    wire_message_destroy(&d);
    assert_null(d.result);
    wire_result_free(m.result);
    wire_result_free(NULL);
}

/// A book unit with the most candidates and every path length decodes field for field, an
/// empty unit too, and each rule on a candidate is enforced by the packer and on receipt.
static void test_roundtrip_book(void **state)
{
    (void)state;
    WireMessage m = {.kind = WIRE_BOOK, .book = make_book(WIRE_MAX_BOOK_CANDS)}, d;
    roundtrip(&m, &d);
    const WireBookResult *a = m.book, *b = d.book;
    assert_int_equal(a->unit_id, b->unit_id);
    assert_int_equal(a->candidate_count, b->candidate_count);
    for (int i = 0; i < a->candidate_count; i++) {
        assert_string_equal(a->candidates[i].start_fen, b->candidates[i].start_fen);
        assert_int_equal(a->candidates[i].score, b->candidates[i].score);
        assert_int_equal(a->candidates[i].path_len, b->candidates[i].path_len);
        assert_memory_equal(a->candidates[i].path, b->candidates[i].path,
                            sizeof(WireBookMove) * (size_t)a->candidates[i].path_len);
    }
    assert_int_equal(a->candidates_done, b->candidates_done);
    assert_int_equal(a->nodes, b->nodes);
    assert_int_equal(a->busy_ms, b->busy_ms);
    wire_message_destroy(&d);
    m.book->candidate_count = 0;
    roundtrip(&m, &d);
    assert_int_equal(d.book->candidate_count, 0);
    wire_message_destroy(&d);
    msgpack_sbuffer b2;
    msgpack_sbuffer_init(&b2);
    m.book->candidate_count = 2;
    m.book->candidates[1].path_len = 1;
    m.book->candidates[1].path[0].move = move_make(SQ_A0, SQ_A0);
    assert_int_equal(wire_pack(&m, &b2), WIRE_ERR_INVALID);
    m.book->candidates[1].path[0].move = move_make(SQ_A0, SQ_A0 + 9);
    m.book->candidates[1].start_fen[0] = '\0';
    assert_int_equal(wire_pack(&m, &b2), WIRE_ERR_INVALID);
    m.book->candidates[1].start_fen[0] = 'r';
    m.book->candidates_done = 1;
    assert_int_equal(wire_pack(&m, &b2), WIRE_ERR_INVALID);
    m.book->candidates_done = 2;
    assert_int_equal(wire_pack(&m, &b2), WIRE_OK);
    assert_int_equal(b2.size > 0, 1);
    msgpack_sbuffer_destroy(&b2);
    wire_book_result_free(m.book);
    wire_book_result_free(NULL);
}

/// The largest result the caps allow (64 pairs, 2 games of 1200 plies, full strings) packs
/// under WIRE_MAX_MESSAGE and round-trips.
static void test_roundtrip_largest(void **state)
{
    (void)state;
    WireMessage m = {.kind = WIRE_RESULT, .result = make_result(64, 2, WIRE_MAX_PLIES)}, d;
    msgpack_sbuffer b;
    msgpack_sbuffer_init(&b);
    assert_int_equal(wire_pack(&m, &b), WIRE_OK);
    assert_true(b.size > 2000000 && b.size < WIRE_MAX_MESSAGE);
    msgpack_sbuffer_destroy(&b);
    roundtrip(&m, &d);
    assert_result_equal(m.result, d.result);
    wire_message_destroy(&d);
    wire_result_free(m.result);
}

/// A datagen unit of n records with distinct bytes (this layer does not read them).
static WireDatagenResult *make_datagen(int n)
{
    WireDatagenResult *r = wire_datagen_result_new();
    assert_non_null(r);
    r->job_id = 43;
    r->rank = 2;
    r->unit_id = 1ull << 40;
    r->games = 2;
    r->count = n;
    for (size_t i = 0; i < (size_t)n * WIRE_DATAGEN_RECORD; i++)
        r->records[i] = (uint8_t)(i * 131 + 7);
    r->games_done = 9;
    r->nodes = 1ull << 45;
    r->busy_ms = 12345;
    // Seen: the records and one skip more of each filter's than the last.
    r->filtered[WIRE_DG_SEEN] = (uint64_t)n;
    for (int i = WIRE_DG_SEEN + 1; i < WIRE_DATAGEN_FILTERS; i++)
        r->filtered[WIRE_DG_SEEN] += r->filtered[i] = (uint64_t)i * 1000;
    return r;
}

/// A datagen unit at the record cap and an empty one decode byte for byte (under the size
/// cap); the packer refuses what the receiver would (no games, games done below games).
static void test_roundtrip_datagen(void **state)
{
    (void)state;
    WireMessage m = {.kind = WIRE_DATAGEN, .datagen = make_datagen(WIRE_MAX_DATAGEN_RECORDS)}, d;
    roundtrip(&m, &d);
    assert_int_equal(d.datagen->count, WIRE_MAX_DATAGEN_RECORDS);
    assert_memory_equal(d.datagen->records, m.datagen->records,
                        (size_t)WIRE_MAX_DATAGEN_RECORDS * WIRE_DATAGEN_RECORD);
    assert_int_equal(d.datagen->unit_id, m.datagen->unit_id);
    assert_int_equal(d.datagen->games, 2);
    assert_int_equal(d.datagen->games_done, 9);
    assert_int_equal(d.datagen->nodes, 1ull << 45);
    assert_int_equal(d.datagen->busy_ms, 12345);
    assert_memory_equal(d.datagen->filtered, m.datagen->filtered, sizeof d.datagen->filtered);
    wire_message_destroy(&d);
    assert_null(d.datagen);
    m.datagen->count = 0;
    m.datagen->filtered[WIRE_DG_SEEN] -= WIRE_MAX_DATAGEN_RECORDS;
    roundtrip(&m, &d);
    assert_int_equal(d.datagen->count, 0);
    wire_message_destroy(&d);
    msgpack_sbuffer b;
    msgpack_sbuffer_init(&b);
    // Filter counts that do not add up to the positions seen are refused.
    m.datagen->filtered[WIRE_DG_CAPTURE]++;
    assert_int_equal(wire_pack(&m, &b), WIRE_ERR_INVALID);
    m.datagen->filtered[WIRE_DG_CAPTURE]--;
    m.datagen->games = 0;
    assert_int_equal(wire_pack(&m, &b), WIRE_ERR_INVALID);
    m.datagen->games = WIRE_MAX_DATAGEN_GAMES + 1;
    assert_int_equal(wire_pack(&m, &b), WIRE_ERR_INVALID);
    m.datagen->games = 10;
    assert_int_equal(wire_pack(&m, &b), WIRE_ERR_INVALID); // games done 9 < 10
    m.datagen->count = WIRE_MAX_DATAGEN_RECORDS + 1;
    m.datagen->games = 1;
    assert_int_equal(wire_pack(&m, &b), WIRE_ERR_INVALID);
    assert_int_equal(b.size, 0);
    msgpack_sbuffer_destroy(&b);
    wire_datagen_result_free(m.datagen);
    wire_datagen_result_free(NULL);
}

static WireStatus unpack_status(const char *data, size_t len);

/// A DATAGEN body whose records field is `records` (packed by fill) from msgpack's packer.
static void pack_datagen_body(msgpack_sbuffer *b, void (*fill)(msgpack_packer *, size_t),
                              size_t bytes)
{
    msgpack_sbuffer_clear(b);
    msgpack_packer pk;
    msgpack_packer_init(&pk, b, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 4);
    msgpack_pack_str(&pk, 2);
    msgpack_pack_str_body(&pk, "XQ", 2);
    msgpack_pack_uint32(&pk, WIRE_VERSION);
    msgpack_pack_uint32(&pk, WIRE_DATAGEN);
    msgpack_pack_array(&pk, 9);
    msgpack_pack_uint64(&pk, 1);
    msgpack_pack_uint32(&pk, 1);
    msgpack_pack_uint64(&pk, 5);
    msgpack_pack_uint32(&pk, 1);
    fill(&pk, bytes);
    msgpack_pack_uint64(&pk, 1);
    msgpack_pack_uint64(&pk, 0);
    msgpack_pack_uint64(&pk, 0);
    // Seen: every whole record, nothing skipped.
    msgpack_pack_array(&pk, WIRE_DATAGEN_FILTERS);
    for (int i = 0; i < WIRE_DATAGEN_FILTERS; i++)
        msgpack_pack_uint64(&pk, i == WIRE_DG_SEEN ? bytes / WIRE_DATAGEN_RECORD : 0);
}

static void fill_bin(msgpack_packer *pk, size_t bytes)
{
    static uint8_t zeros[(WIRE_MAX_DATAGEN_RECORDS + 1) * WIRE_DATAGEN_RECORD];
    msgpack_pack_bin(pk, bytes);
    msgpack_pack_bin_body(pk, zeros, bytes);
}

static void fill_str(msgpack_packer *pk, size_t bytes)
{
    static const char text[64] = "x";
    msgpack_pack_str(pk, bytes);
    msgpack_pack_str_body(pk, text, bytes);
}

/// Records that are not whole 64-byte records, more than the cap, or not a bin are refused
/// with a reason (never copied past the struct's buffer).
static void test_datagen_refused(void **state)
{
    (void)state;
    msgpack_sbuffer b;
    msgpack_sbuffer_init(&b);
    pack_datagen_body(&b, fill_bin, 3 * WIRE_DATAGEN_RECORD);
    assert_int_equal(unpack_status(b.data, b.size), WIRE_OK);
    pack_datagen_body(&b, fill_bin, 3 * WIRE_DATAGEN_RECORD + 1);
    assert_int_equal(unpack_status(b.data, b.size), WIRE_ERR_FIELD);
    pack_datagen_body(&b, fill_bin, (WIRE_MAX_DATAGEN_RECORDS + 1) * WIRE_DATAGEN_RECORD);
    assert_int_equal(unpack_status(b.data, b.size), WIRE_ERR_FIELD);
    pack_datagen_body(&b, fill_str, WIRE_DATAGEN_RECORD);
    assert_int_equal(unpack_status(b.data, b.size), WIRE_ERR_FIELD);
    // A bin declaring more bytes than the message holds is malformed before any copy.
    pack_datagen_body(&b, fill_bin, 2 * WIRE_DATAGEN_RECORD);
    assert_int_equal(unpack_status(b.data, b.size - 40), WIRE_ERR_MALFORMED);
    msgpack_sbuffer_destroy(&b);
}

/// Builds one valid message of each kind (a small result) into bufs[0..WIRE_KIND_NB).
static void pack_samples(msgpack_sbuffer bufs[WIRE_KIND_NB], int plies)
{
    WireMessage m[WIRE_KIND_NB] = {
        {.kind = WIRE_HELLO},
        {.kind = WIRE_REFUSE, .refuse = {.reason = "version mismatch"}},
        {.kind = WIRE_REQUEST, .request = {.rank = 5, .units = 2}},
        {.kind = WIRE_WORK, .work = {.job_id = 77, .unit_count = 3, .unit_ids = {1, 2, 300}}},
        {.kind = WIRE_RESULT, .result = make_result(2, 2, plies)},
        {.kind = WIRE_STOP, .stop = {.code = WIRE_STOP_DONE, .text = "all pairs played"}},
        {.kind = WIRE_BYE, .bye = {.rank = 9, .games_played = 1000}},
        {.kind = WIRE_BOOK, .book = make_book(3)},
        {.kind = WIRE_DATAGEN, .datagen = make_datagen(3)},
    };
    make_hello(&m[WIRE_HELLO].hello);
    for (int k = 0; k < WIRE_KIND_NB; k++) {
        msgpack_sbuffer_init(&bufs[k]);
        assert_int_equal(wire_pack(&m[k], &bufs[k]), WIRE_OK);
    }
    wire_result_free(m[WIRE_RESULT].result);
    wire_book_result_free(m[WIRE_BOOK].book);
    wire_datagen_result_free(m[WIRE_DATAGEN].datagen);
}

static void free_samples(msgpack_sbuffer bufs[WIRE_KIND_NB])
{
    for (int k = 0; k < WIRE_KIND_NB; k++)
        msgpack_sbuffer_destroy(&bufs[k]);
}

static WireStatus unpack_status(const char *data, size_t len)
{
    WireMessage d;
    char why[256];
    WireStatus st = wire_unpack(data, len, &d, why, sizeof why);
    if (st != WIRE_OK) {
        assert_int_equal(d.kind, WIRE_KIND_NB);
        assert_true(strlen(why) > 0);
    }
    wire_message_destroy(&d);
    return st;
}

/// Every proper prefix of a valid message of each kind is rejected as malformed.
static void test_truncation(void **state)
{
    (void)state;
    msgpack_sbuffer bufs[WIRE_KIND_NB];
    pack_samples(bufs, 300);
    for (int k = 0; k < WIRE_KIND_NB; k++) {
        assert_int_equal(unpack_status(bufs[k].data, bufs[k].size), WIRE_OK);
        for (size_t len = 0; len < bufs[k].size; len++)
            assert_int_equal(unpack_status(bufs[k].data, len), WIRE_ERR_MALFORMED);
    }
    free_samples(bufs);
}

/// Messages over the size cap are refused before parsing; containers and strings declaring
/// more than the input holds are refused without allocating for them.
static void test_oversized(void **state)
{
    (void)state;
    size_t big = (size_t)WIRE_MAX_MESSAGE + 1;
    char *data = calloc(1, big);
    assert_non_null(data);
    data[0] = (char)0x94;
    assert_int_equal(unpack_status(data, big), WIRE_ERR_TOO_LARGE);
    free(data);

    static const char array32[] = "\xdd\xff\xff\xff\xff\x00";
    static const char map32[] = "\xdf\xff\xff\xff\xff\x00\x00";
    static const char str32[] = "\xdb\x7f\xff\xff\xff"
                                "abc";
    // Inside a real envelope: a WORK whose id list declares 2^32 - 1 entries.
    static const char work[] = "\x94\xa2XQ\x08\x03\x94\x01\xdd\xff\xff\xff\xff\x01\x02";
    const struct {
        const char *data;
        size_t len;
    } declared[] = {{array32, sizeof array32 - 1},
                    {map32, sizeof map32 - 1},
                    {str32, sizeof str32 - 1},
                    {work, sizeof work - 1}};
    for (size_t i = 0; i < sizeof declared / sizeof declared[0]; i++) {
        WireMessage d;
        char why[256];
        // Refused by the byte scan, before msgpack-c could reserve room for the entries.
        assert_int_equal(wire_unpack(declared[i].data, declared[i].len, &d, why, sizeof why),
                         WIRE_ERR_MALFORMED);
        assert_non_null(strstr(why, "declared"));
        wire_message_destroy(&d);
    }

    // A WORK listing more pair ids than the cap, well-formed otherwise.
    msgpack_sbuffer b;
    msgpack_packer pk;
    msgpack_sbuffer_init(&b);
    msgpack_packer_init(&pk, &b, msgpack_sbuffer_write);
    assert_int_equal(msgpack_pack_array(&pk, 4), 0);
    assert_int_equal(msgpack_pack_str_with_body(&pk, "XQ", 2), 0);
    assert_int_equal(msgpack_pack_uint8(&pk, WIRE_VERSION), 0);
    assert_int_equal(msgpack_pack_uint8(&pk, WIRE_WORK), 0);
    assert_int_equal(msgpack_pack_array(&pk, 2), 0);
    assert_int_equal(msgpack_pack_uint8(&pk, 1), 0);
    assert_int_equal(msgpack_pack_array(&pk, WIRE_MAX_PAIRS_PER_WORK + 1), 0);
    for (int i = 0; i <= WIRE_MAX_PAIRS_PER_WORK; i++)
        assert_int_equal(msgpack_pack_int(&pk, i), 0);
    assert_int_equal(unpack_status(b.data, b.size), WIRE_ERR_FIELD);
    msgpack_sbuffer_destroy(&b);
}

typedef struct {
    msgpack_object *root;
    int visited, rejected;
} Walk;

/// Replaces o (and, recursively, each object below it) by one of another type, re-packs the
/// whole tree and expects wire_unpack to refuse it.
static void replace_each(Walk *w, msgpack_object *o)
{
    msgpack_object saved = *o;
    msgpack_object other = {.type = MSGPACK_OBJECT_STR, .via.str = {.size = 1, .ptr = "x"}};
    if (o->type == MSGPACK_OBJECT_STR)
        other = (msgpack_object){.type = MSGPACK_OBJECT_POSITIVE_INTEGER, .via.u64 = 1};
    *o = other;
    msgpack_sbuffer b;
    msgpack_packer pk;
    msgpack_sbuffer_init(&b);
    msgpack_packer_init(&pk, &b, msgpack_sbuffer_write);
    assert_int_equal(msgpack_pack_object(&pk, *w->root), 0);
    WireStatus st = unpack_status(b.data, b.size);
    msgpack_sbuffer_destroy(&b);
    *o = saved;
    w->visited++;
    w->rejected += st != WIRE_OK;
    if (o->type == MSGPACK_OBJECT_ARRAY)
        for (uint32_t i = 0; i < o->via.array.size; i++)
            replace_each(w, &o->via.array.ptr[i]);
}

/// Every field of every kind, containers included, given a value of the wrong type (a string
/// for a number, a number for a string) makes the message invalid.
static void test_wrong_types(void **state)
{
    (void)state;
    msgpack_sbuffer bufs[WIRE_KIND_NB];
    pack_samples(bufs, 3);
    for (int k = 0; k < WIRE_KIND_NB; k++) {
        msgpack_unpacked u;
        msgpack_unpacked_init(&u);
        assert_int_equal(msgpack_unpack_next(&u, bufs[k].data, bufs[k].size, NULL),
                         MSGPACK_UNPACK_SUCCESS);
        Walk w = {.root = &u.data};
        for (uint32_t i = 0; i < u.data.via.array.size; i++)
            replace_each(&w, &u.data.via.array.ptr[i]);
        assert_true(w.visited >= 5); // the envelope and at least one field
        assert_int_equal(w.rejected, w.visited);
        msgpack_unpacked_destroy(&u);
    }
    free_samples(bufs);
}

static void edit_nothing(WireResult *r) { (void)r; }

/// Packs a result after `edit` breaks one rule, bypassing wire_pack's own checks, and returns
/// what wire_unpack says of it.
static WireStatus result_after(void (*edit)(WireResult *), char *why, size_t why_len)
{
    bool expect_invalid = edit != edit_nothing;
    WireResult *r = make_result(2, 2, 12);
    msgpack_sbuffer b;
    msgpack_sbuffer_init(&b);
    assert_int_equal(wire_pack_result(r, &b), WIRE_OK);
    edit(r);
    // The packer refuses the broken struct and appends nothing...
    size_t before = b.size;
    assert_int_equal(wire_pack_result(r, &b), expect_invalid ? WIRE_ERR_INVALID : WIRE_OK);
    if (expect_invalid)
        assert_int_equal(b.size, before);
    // ...so it goes on the wire through this copy of the RESULT layout.
    msgpack_sbuffer_clear(&b);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &b, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 4);
    msgpack_pack_str_with_body(&pk, "XQ", 2);
    msgpack_pack_uint8(&pk, WIRE_VERSION);
    msgpack_pack_uint8(&pk, WIRE_RESULT);
    msgpack_pack_array(&pk, 6);
    msgpack_pack_uint64(&pk, r->job_id);
    msgpack_pack_uint32(&pk, r->rank);
    msgpack_pack_array(&pk, (size_t)r->unit_count);
    for (int p = 0; p < r->unit_count; p++) {
        msgpack_pack_array(&pk, 3);
        msgpack_pack_uint64(&pk, r->units[p].pair_id);
        msgpack_pack_uint32(&pk, r->units[p].opening);
        msgpack_pack_array(&pk, (size_t)r->units[p].game_count);
        for (int i = 0; i < r->units[p].game_count; i++) {
            const WireGame *g = &r->units[p].games[i];
            msgpack_pack_array(&pk, 7);
            msgpack_pack_uint8(&pk, g->red);
            msgpack_pack_uint8(&pk, g->outcome);
            msgpack_pack_uint8(&pk, g->term);
            msgpack_pack_str_with_body(&pk, g->detail, strlen(g->detail));
            msgpack_pack_str_with_body(&pk, g->start_fen, strlen(g->start_fen));
            msgpack_pack_int(&pk, g->book_plies);
            msgpack_pack_array(&pk, (size_t)g->ply_count);
            for (int j = 0; j < g->ply_count; j++) {
                msgpack_pack_array(&pk, 5);
                msgpack_pack_uint16(&pk, g->moves[j].move);
                msgpack_pack_int32(&pk, g->moves[j].score);
                msgpack_pack_uint8(&pk, g->moves[j].flags);
                msgpack_pack_uint8(&pk, g->moves[j].depth);
                msgpack_pack_uint32(&pk, g->moves[j].time_ms);
            }
        }
    }
    msgpack_pack_uint64(&pk, r->games_played);
    msgpack_pack_uint64(&pk, r->nodes);
    msgpack_pack_uint64(&pk, r->play_ms);
    WireMessage d;
    WireStatus st = wire_unpack(b.data, b.size, &d, why, why_len);
    wire_message_destroy(&d);
    msgpack_sbuffer_destroy(&b);
    wire_result_free(r);
    return st;
}

static void edit_from_eq_to(WireResult *r) { r->units[1].games[0].moves[9].move = 5 | 5 << 7; }
static void edit_square_90(WireResult *r) { r->units[0].games[1].moves[10].move = 90 | 3 << 7; }
static void edit_to_90(WireResult *r) { r->units[0].games[1].moves[10].move = 3 | 90 << 7; }
static void edit_term(WireResult *r) { r->units[0].games[0].term = WIRE_TERM_LIMIT; }
static void edit_outcome(WireResult *r) { r->units[0].games[0].outcome = 4; }
static void edit_red(WireResult *r) { r->units[0].games[1].red = 2; }
static void edit_flags(WireResult *r) { r->units[0].games[0].moves[11].flags |= 8; }
static void edit_book(WireResult *r) { r->units[0].games[0].book_plies = 13; }
static void edit_book_bit(WireResult *r) { r->units[1].games[1].moves[8].flags |= 4; }
static void edit_dup_pair(WireResult *r) { r->units[1].pair_id = r->units[0].pair_id; }
static void edit_counter(WireResult *r) { r->games_played = 3; }
static void edit_rank(WireResult *r) { r->rank = 1u << 31; }
static void edit_fen_empty(WireResult *r) { r->units[1].games[1].start_fen[0] = '\0'; }

/// Each rule on a game, move or counter is enforced on receipt (and refused by the packer),
/// with a reason naming the field.
static void test_field_ranges(void **state)
{
    (void)state;
    static const struct {
        void (*edit)(WireResult *);
        const char *word;
    } cases[] = {
        {edit_from_eq_to, "move"},     {edit_square_90, "move"},       {edit_to_90, "move"},
        {edit_term, "termination"},    {edit_outcome, "outcome"},      {edit_red, "red"},
        {edit_flags, "flags"},         {edit_book, "book plies"},      {edit_book_bit, "book"},
        {edit_dup_pair, "repeated"},   {edit_counter, "games played"}, {edit_rank, "rank"},
        {edit_fen_empty, "start fen"},
    };
    char why[256];
    // The hand-written encoder agrees with wire_pack on a valid result.
    assert_int_equal(result_after(edit_nothing, why, sizeof why), WIRE_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(result_after(cases[i].edit, why, sizeof why), WIRE_ERR_FIELD);
        if (!strstr(why, cases[i].word))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, why, cases[i].word);
    }
    // A tiny or absent why buffer is safe.
    assert_int_equal(result_after(edit_term, why, 4), WIRE_ERR_FIELD);
    assert_int_equal(strlen(why), 3);
    assert_int_equal(result_after(edit_term, NULL, 0), WIRE_ERR_FIELD);
}

/// Builds ["XQ", version, kind, body] by hand with the given magic; body is a REQUEST's.
static void pack_envelope(msgpack_sbuffer *b, const char *magic, int64_t version, int64_t kind,
                          int body_fields)
{
    msgpack_packer pk;
    msgpack_sbuffer_clear(b);
    msgpack_packer_init(&pk, b, msgpack_sbuffer_write);
    assert_int_equal(msgpack_pack_array(&pk, 4), 0);
    assert_int_equal(msgpack_pack_str_with_body(&pk, magic, strlen(magic)), 0);
    assert_int_equal(msgpack_pack_int64(&pk, version), 0);
    assert_int_equal(msgpack_pack_int64(&pk, kind), 0);
    assert_int_equal(msgpack_pack_array(&pk, (size_t)body_fields), 0);
    for (int i = 0; i < body_fields; i++)
        assert_int_equal(msgpack_pack_uint8(&pk, 1), 0);
}

/// An unknown kind, another version and a foreign magic each get their own status; the
/// packers and the envelope agree on the layout.
static void test_envelope(void **state)
{
    (void)state;
    msgpack_sbuffer b;
    msgpack_sbuffer_init(&b);
    pack_envelope(&b, "XQ", WIRE_VERSION, WIRE_REQUEST, 2);
    assert_int_equal(unpack_status(b.data, b.size), WIRE_OK);
    pack_envelope(&b, "XQ", WIRE_VERSION, WIRE_KIND_NB, 2);
    assert_int_equal(unpack_status(b.data, b.size), WIRE_ERR_KIND);
    pack_envelope(&b, "XQ", WIRE_VERSION, 200, 0);
    assert_int_equal(unpack_status(b.data, b.size), WIRE_ERR_KIND);
    pack_envelope(&b, "XQ", WIRE_VERSION, -1, 2);
    assert_int_equal(unpack_status(b.data, b.size), WIRE_ERR_KIND);
    pack_envelope(&b, "XQ", WIRE_VERSION + 1, WIRE_REQUEST, 2);
    assert_int_equal(unpack_status(b.data, b.size), WIRE_ERR_VERSION);
    pack_envelope(&b, "XQ", 0, WIRE_REQUEST, 2);
    assert_int_equal(unpack_status(b.data, b.size), WIRE_ERR_VERSION);
    pack_envelope(&b, "XY", WIRE_VERSION, WIRE_REQUEST, 2);
    assert_int_equal(unpack_status(b.data, b.size), WIRE_ERR_MAGIC);
    pack_envelope(&b, "XQ", WIRE_VERSION, WIRE_REQUEST, 3);
    assert_int_equal(unpack_status(b.data, b.size), WIRE_ERR_FIELD);
    assert_int_equal(unpack_status("\x01", 1), WIRE_ERR_MAGIC);
    assert_int_equal(unpack_status("\x90", 1), WIRE_ERR_MAGIC);
    assert_int_equal(unpack_status("", 0), WIRE_ERR_MALFORMED);
    // A version-9 envelope of another length still reads as "version", not "magic".
    static const char v2[] = "\x95\xa2XQ\x09\x00\x90\xc0";
    assert_int_equal(unpack_status(v2, sizeof v2 - 1), WIRE_ERR_VERSION);
    msgpack_sbuffer_destroy(&b);
}

/// Bytes after a complete message, even a second valid message, are refused; so are
/// non-shortest encodings and the reserved byte.
static void test_trailing_and_encoding(void **state)
{
    (void)state;
    msgpack_sbuffer bufs[WIRE_KIND_NB];
    pack_samples(bufs, 3);
    for (int k = 0; k < WIRE_KIND_NB; k++) {
        size_t n = bufs[k].size;
        char *two = malloc(2 * n);
        assert_non_null(two);
        memcpy(two, bufs[k].data, n);
        memcpy(two + n, bufs[k].data, n);
        assert_int_equal(unpack_status(two, n + 1), WIRE_ERR_TRAILING);
        assert_int_equal(unpack_status(two, 2 * n), WIRE_ERR_TRAILING);
        free(two);
    }
    free_samples(bufs);
    // REQUEST [5, 2] with the 5 as uint8 (0xcc 0x05) instead of a fixint.
    static const char ok[] = "\x94\xa2XQ\x08\x02\x92\x05\x02";
    static const char wide[] = "\x94\xa2XQ\x08\x02\x92\xcc\x05\x02";
    static const char wide_str[] = "\x94\xd9\x02XQ\x08\x02\x92\x05\x02";
    static const char reserved[] = "\x94\xa2XQ\x08\x02\x92\xc1\x02";
    static const char wide_bin[] = "\x94\xa2XQ\x08\x02\x92\x05\xc5\x00\x01\x00";
    assert_int_equal(unpack_status(wide_bin, sizeof wide_bin - 1), WIRE_ERR_MALFORMED);
    assert_int_equal(unpack_status(ok, sizeof ok - 1), WIRE_OK);
    assert_int_equal(unpack_status(wide, sizeof wide - 1), WIRE_ERR_MALFORMED);
    assert_int_equal(unpack_status(wide_str, sizeof wide_str - 1), WIRE_ERR_MALFORMED);
    assert_int_equal(unpack_status(reserved, sizeof reserved - 1), WIRE_ERR_MALFORMED);
}

/// Strings over their cap or holding a NUL are refused.
static void test_text_caps(void **state)
{
    (void)state;
    char host[WIRE_MAX_TEXT + 2];
    memset(host, 'h', sizeof host);
    msgpack_sbuffer b;
    msgpack_packer pk;
    msgpack_sbuffer_init(&b);
    for (int variant = 0; variant < 3; variant++) {
        msgpack_sbuffer_clear(&b);
        msgpack_packer_init(&pk, &b, msgpack_sbuffer_write);
        msgpack_pack_array(&pk, 4);
        msgpack_pack_str_with_body(&pk, "XQ", 2);
        msgpack_pack_uint8(&pk, WIRE_VERSION);
        msgpack_pack_uint8(&pk, WIRE_HELLO);
        msgpack_pack_array(&pk, 8);
        msgpack_pack_uint8(&pk, 1);
        size_t len = variant == 0 ? WIRE_MAX_TEXT : WIRE_MAX_TEXT + 1;
        host[3] = variant == 2 ? '\0' : 'h';
        msgpack_pack_str_with_body(&pk, host, variant == 2 ? 10 : len);
        msgpack_pack_uint8(&pk, 1);
        msgpack_pack_uint8(&pk, 1);
        msgpack_pack_uint8(&pk, 1);
        msgpack_pack_uint8(&pk, 1);
        msgpack_pack_str_with_body(&pk, "v", 1);
        msgpack_pack_array(&pk, 0); // no engine benches
        assert_int_equal(unpack_status(b.data, b.size), variant == 0 ? WIRE_OK : WIRE_ERR_FIELD);
    }
    msgpack_sbuffer_destroy(&b);
}

/// Decodes data; if accepted, re-packing must give exactly the same bytes.
static void check_accept_repacks(const char *data, size_t len, int *accepted)
{
    WireMessage d;
    if (wire_unpack(data, len, &d, NULL, 0) == WIRE_OK) {
        msgpack_sbuffer b;
        msgpack_sbuffer_init(&b);
        assert_int_equal(wire_pack(&d, &b), WIRE_OK);
        assert_int_equal(b.size, len);
        assert_memory_equal(b.data, data, len);
        msgpack_sbuffer_destroy(&b);
        (*accepted)++;
    } else {
        assert_int_equal(d.kind, WIRE_KIND_NB);
    }
    wire_message_destroy(&d);
}

/// 100,000 seeded random byte strings (some starting like an envelope) never crash.
static void test_fuzz_random(void **state)
{
    (void)state;
    rng_state = 0x9e3779b97f4a7c15ull;
    char buf[96];
    int accepted = 0;
    for (int i = 0; i < 100000; i++) {
        size_t len = rng_next() % sizeof buf;
        for (size_t j = 0; j < len; j++)
            buf[j] = (char)(rng_next() >> 24);
        if (i % 2 && len >= 6)
            memcpy(buf, "\x94\xa2XQ\x01", 5);
        check_accept_repacks(buf, len, &accepted);
    }
    (void)accepted;
}

/// 100,000 seeded single-byte mutations of valid messages of every kind never crash, and
/// whatever is still accepted re-packs byte for byte.
static void test_fuzz_mutations(void **state)
{
    (void)state;
    msgpack_sbuffer bufs[WIRE_KIND_NB];
    pack_samples(bufs, 4);
    rng_state = 12345;
    int accepted = 0;
    for (int i = 0; i < 100000; i++) {
        const msgpack_sbuffer *src = &bufs[i % WIRE_KIND_NB];
        char buf[4096];
        assert_true(src->size <= sizeof buf);
        memcpy(buf, src->data, src->size);
        size_t at = rng_next() % src->size;
        uint8_t old = (uint8_t)buf[at], to = (uint8_t)(rng_next() >> 32);
        buf[at] = (char)(to == old ? old ^ 1 : to);
        check_accept_repacks(buf, src->size, &accepted);
    }
    // Many mutations hit free-valued fields (ids, scores, text) and stay valid.
    assert_true(accepted > 1000 && accepted < 100000);
    free_samples(bufs);
}

/// Statuses and kinds have distinct names, and out-of-range values do not crash.
static void test_names(void **state)
{
    (void)state;
    for (int s = 0; s < WIRE_STATUS_NB; s++) {
        assert_true(strlen(wire_strerror((WireStatus)s)) > 0);
        for (int t = 0; t < s; t++)
            assert_string_not_equal(wire_strerror((WireStatus)s), wire_strerror((WireStatus)t));
    }
    for (int k = 0; k < WIRE_KIND_NB; k++)
        for (int t = 0; t < k; t++)
            assert_string_not_equal(wire_kind_name((WireKind)k), wire_kind_name((WireKind)t));
    assert_string_equal(wire_kind_name(WIRE_KIND_NB), "unknown");
    assert_string_equal(wire_strerror(WIRE_STATUS_NB), "unknown wire status");
    assert_string_equal(wire_kind_name(WIRE_RESULT), "result");
}

/// A result message names the one unit it reports, its job and its rank: the pair of a
/// one-pair RESULT, the unit of a BOOK or DATAGEN; nothing for other kinds or a RESULT of
/// several pairs. Exactly those three kinds are unit results.
static void test_unit_of(void **state)
{
    (void)state;
    uint64_t unit = 0, job = 0;
    uint32_t rank = 0;
    WireMessage m = {.kind = WIRE_RESULT, .result = make_result(1, 2, 3)};
    assert_true(wire_unit_of(&m, &unit, &job, &rank));
    assert_true(unit == 17 && job == UINT64_MAX - 1 && rank == WIRE_MAX_RANK);
    wire_message_destroy(&m);
    m = (WireMessage){.kind = WIRE_RESULT, .result = make_result(2, 1, 0)};
    assert_false(wire_unit_of(&m, &unit, &job, &rank));
    wire_message_destroy(&m);
    m = (WireMessage){.kind = WIRE_BOOK, .book = make_book(1)};
    assert_true(wire_unit_of(&m, &unit, &job, &rank));
    assert_true(unit == UINT64_MAX && job == 42 && rank == 3);
    wire_message_destroy(&m);
    m = (WireMessage){.kind = WIRE_DATAGEN, .datagen = wire_datagen_result_new()};
    assert_non_null(m.datagen);
    *m.datagen = (WireDatagenResult){.job_id = 9, .rank = 2, .unit_id = 5};
    assert_true(wire_unit_of(&m, &unit, &job, &rank));
    assert_true(unit == 5 && job == 9 && rank == 2);
    wire_message_destroy(&m);
    m = (WireMessage){.kind = WIRE_HELLO, .hello = {.rank = 1}};
    assert_false(wire_unit_of(&m, &unit, &job, &rank));
    int results = 0;
    for (int k = 0; k < WIRE_KIND_NB; k++)
        results += wire_is_unit_result((WireKind)k);
    assert_int_equal(results, 3);
    assert_true(wire_is_unit_result(WIRE_RESULT) && wire_is_unit_result(WIRE_BOOK) &&
                wire_is_unit_result(WIRE_DATAGEN));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_small),   cmocka_unit_test(test_roundtrip_result),
        cmocka_unit_test(test_roundtrip_largest), cmocka_unit_test(test_roundtrip_book),
        cmocka_unit_test(test_truncation),        cmocka_unit_test(test_oversized),
        cmocka_unit_test(test_wrong_types),       cmocka_unit_test(test_field_ranges),
        cmocka_unit_test(test_envelope),          cmocka_unit_test(test_trailing_and_encoding),
        cmocka_unit_test(test_text_caps),         cmocka_unit_test(test_fuzz_random),
        cmocka_unit_test(test_fuzz_mutations),    cmocka_unit_test(test_names),
        cmocka_unit_test(test_roundtrip_datagen), cmocka_unit_test(test_datagen_refused),
        cmocka_unit_test(test_unit_of),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
