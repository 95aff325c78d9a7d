// SPDX-License-Identifier: MIT
// Book candidates: a unit is a pure function of the job and its number, every candidate is
// legal and replays to a valid position, and re-searching a sample gives the score sent.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bookgen.h"
#include "job.h"
#include "openings.h"

enum { UNIT = 6 };

static BookgenConfig config(const Openings *starts)
{
    return (BookgenConfig){2, 6, 4, 2, 40, 0, 4, 1, UNIT, 7, RULES_SEED, starts, NULL, NULL, 0};
}

/// The same unit gives the same candidates from a fresh generator and from one that has
/// generated other units first (the cache and the table do not leak into the result).
static void test_deterministic(void **state)
{
    (void)state;
    BookgenConfig cfg = config(NULL);
    Bookgen *a, *b;
    assert_int_equal(bookgen_new(&cfg, &a), BOOKGEN_OK);
    assert_int_equal(bookgen_new(&cfg, &b), BOOKGEN_OK);
    BookgenCandidate *x = calloc(UNIT, sizeof *x), *y = calloc(UNIT, sizeof *y);
    assert_int_equal(bookgen_unit(b, 5, NULL, y, NULL), BOOKGEN_OK);
    assert_int_equal(bookgen_unit(b, 3, NULL, y, NULL), BOOKGEN_OK);
    uint64_t nodes = 0;
    assert_int_equal(bookgen_unit(a, 3, NULL, x, &nodes), BOOKGEN_OK);
    assert_true(nodes > 0);
    for (int i = 0; i < UNIT; i++) {
        assert_string_equal(x[i].start_fen, y[i].start_fen);
        assert_int_equal(x[i].path_len, y[i].path_len);
        assert_memory_equal(x[i].path, y[i].path, sizeof(Move) * (size_t)x[i].path_len);
        assert_int_equal(x[i].score, y[i].score);
        assert_true(x[i].path_len >= cfg.plies_min && x[i].path_len <= cfg.plies_max);
    }
    // Another unit differs somewhere.
    assert_int_equal(bookgen_unit(b, 4, NULL, y, NULL), BOOKGEN_OK);
    bool differ = false;
    for (int i = 0; i < UNIT; i++)
        differ |= x[i].path_len != y[i].path_len ||
                  memcmp(x[i].path, y[i].path, sizeof(Move) * (size_t)x[i].path_len) != 0;
    assert_true(differ);
    atomic_bool stop = true;
    assert_int_equal(bookgen_unit(a, 1, &stop, x, NULL), BOOKGEN_ABORTED);
    free(x);
    free(y);
    bookgen_free(a);
    bookgen_free(b);
}

/// Each candidate replays legally from its start to a valid position whose re-searched
/// score (a fresh engine, from the EPD position alone) equals the score sent; a corrupted
/// move is refused by the replay.
static void test_replay_and_research(void **state)
{
    (void)state;
    Openings seeds = {0};
    Opening op;
    char why[256];
    assert_true(openings_parse_line("startpos moves h2e2 h9g7", &op, why, sizeof why));
    seeds.items = &op;
    seeds.count = 1;
    BookgenConfig cfg = config(&seeds);
    Bookgen *g, *fresh;
    assert_int_equal(bookgen_new(&cfg, &g), BOOKGEN_OK);
    assert_int_equal(bookgen_new(&cfg, &fresh), BOOKGEN_OK);
    BookgenCandidate c[UNIT];
    assert_int_equal(bookgen_unit(g, 11, NULL, c, NULL), BOOKGEN_OK);
    for (int i = 0; i < UNIT; i++) {
        BookgenLine line;
        assert_true(
            bookgen_replay(c[i].start_fen, c[i].path, c[i].path_len, &line, why, sizeof why));
        assert_int_equal(line.ply, 2 + c[i].path_len); // the seed line played two plies
        Opening back;
        assert_true(openings_parse_line(line.epd, &back, why, sizeof why));
        int score = 0;
        assert_int_equal(bookgen_verify(fresh, line.epd, &score, NULL), BOOKGEN_OK);
        assert_int_equal(score, c[i].score);
    }
    c[0].path[0] = 0; // a0 to a0
    BookgenLine line;
    assert_false(bookgen_replay(c[0].start_fen, c[0].path, c[0].path_len, &line, why, sizeof why));
    assert_non_null(strstr(why, "illegal"));
    bookgen_free(g);
    bookgen_free(fresh);
}

/// A replay reports a check given by the last move, and the key of the position's left-right
/// mirror: the key the mirrored line reaches; the start position is its own mirror.
static void test_check_and_mirror(void **state)
{
    (void)state;
    char why[256], mirrored[BOARD_FEN_MAX];
    const char *fen = "3k5/9/9/9/9/9/9/9/9/4K3R w - - 0 1";
    assert_true(bookgen_mirror_fen(fen, mirrored, sizeof mirrored));
    assert_string_equal(mirrored, "5k3/9/9/9/9/9/9/9/9/R3K4 w - - 0 1");
    // Squares are rank * 9 + file: i0 is 8, h0 7, i9 89, a0 0, b0 1.
    Move rook_up = move_make(8, 89), rook_side = move_make(8, 7);
    BookgenLine line, mline;
    assert_true(bookgen_replay(fen, &rook_up, 1, &line, why, sizeof why));
    assert_true(line.in_check); // the rook on i9 sees the king on d9
    assert_true(bookgen_replay(fen, &rook_side, 1, &line, why, sizeof why));
    assert_false(line.in_check);
    Move mirror_side = move_make(0, 1);
    assert_true(bookgen_replay(mirrored, &mirror_side, 1, &mline, why, sizeof why));
    assert_true(line.key != mline.key);
    assert_true(line.mirror_key == mline.key);
    assert_true(mline.mirror_key == line.key);
    assert_true(bookgen_replay(BOARD_START_FEN, NULL, 0, &line, why, sizeof why));
    assert_true(line.mirror_key == line.key);
}

/// Whether key is among keys[0..n).
static bool key_among(const uint64_t *keys, int n, uint64_t key)
{
    for (int i = 0; i < n; i++)
        if (keys[i] == key)
            return true;
    return false;
}

/// The embedded unbalanced set (builtin:unbalanced) loads by name, holds several hundred legal
/// lines from the start position, none ending with the side to move in check, no position
/// twice and none the left-right mirror of another; re-searching every fifth position as the
/// job that made it (jobs/book-unbalanced.ini) gives the side to move a score in its window.
static void test_embedded_unbalanced(void **state)
{
    (void)state;
    Openings o;
    char why[256];
    assert_int_equal(openings_load(&o, "builtin:unbalanced", NULL, why, sizeof why), OPENINGS_OK);
    assert_int_equal(o.count, openings_unbalanced_count);
    assert_true(o.count >= 300);
    openings_free(&o);
    assert_int_equal(openings_load(&o, "builtin:nonesuch", NULL, why, sizeof why), OPENINGS_ERR_IO);
    assert_non_null(strstr(why, "no such embedded set"));
    assert_int_equal(openings_load(&o, "builtin:unbalanced", NULL, why, sizeof why), OPENINGS_OK);
    JobConfig *job = calloc(1, sizeof *job);
    assert_non_null(job);
    assert_int_equal(job_load(XQ_JOBS_DIR "/book-unbalanced.ini", NULL, 0, job, why, sizeof why),
                     JOB_OK);
    assert_true(job->book.side_to_move);
    BookgenConfig cfg = {job->book.plies_min,
                         job->book.plies_max,
                         job->book.multipv,
                         job->book.select_depth,
                         job->book.margin,
                         job->book.temperature,
                         job->book.verify_depth,
                         job->book.hash_mb,
                         job->book.unit,
                         job->book.seed,
                         job->rules.set,
                         NULL,
                         NULL,
                         NULL,
                         0};
    Bookgen *g;
    assert_int_equal(bookgen_new(&cfg, &g), BOOKGEN_OK);
    uint64_t *keys = calloc((size_t)o.count, sizeof *keys);
    assert_non_null(keys);
    for (int i = 0; i < o.count; i++) {
        const Opening *op = &o.items[i];
        assert_string_equal(op->fen, BOARD_START_FEN);
        BookgenLine line;
        assert_true(bookgen_replay(op->fen, op->moves, op->move_count, &line, why, sizeof why));
        assert_false(line.in_check);
        assert_false(key_among(keys, i, line.key));
        assert_false(key_among(keys, i, line.mirror_key));
        keys[i] = line.key;
        if (i % 5)
            continue;
        int score = 0, mover;
        assert_int_equal(bookgen_verify(g, line.epd, &score, NULL), BOOKGEN_OK);
        mover = line.black_to_move ? -score : score;
        assert_in_range(mover, job->book.score_min, job->book.score_max);
    }
    free(keys);
    bookgen_free(g);
    free(job);
    openings_free(&o);
}

/// Settings outside the generator's limits are refused before any search.
/// Counts the abort test's calls; fires when told to.
typedef struct {
    bool fire;
    int calls;
} AbortProbe;

static bool probe_abort(void *ctx, const Board *b, int score)
{
    (void)b, (void)score;
    AbortProbe *p = ctx;
    p->calls++;
    return p->fire;
}

/// The early abort: a test that never fires leaves the score as it was (and is asked once per
/// iteration from abort_depth below verify_depth); one that fires gives up after the first
/// such iteration, with fewer nodes, the same score each time.
static void test_early_abort(void **state)
{
    (void)state;
    const char *fen = "r1bakabnr/9/1cn4c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C1N2/9/RNBAKAB1R b - -";
    BookgenConfig plain = config(NULL);
    plain.verify_depth = 6;
    Bookgen *g;
    int s0 = 0, s1 = 0, s2 = 0;
    uint64_t n0 = 0, n1 = 0, n2 = 0;
    assert_int_equal(bookgen_new(&plain, &g), BOOKGEN_OK);
    assert_int_equal(bookgen_verify(g, fen, &s0, &n0), BOOKGEN_OK);
    bookgen_free(g);
    AbortProbe never = {false, 0}, always = {true, 0};
    BookgenConfig quiet = plain, eager = plain;
    quiet.abort = eager.abort = probe_abort;
    quiet.abort_ctx = &never;
    eager.abort_ctx = &always;
    quiet.abort_depth = eager.abort_depth = 3;
    assert_int_equal(bookgen_new(&quiet, &g), BOOKGEN_OK);
    assert_int_equal(bookgen_verify(g, fen, &s1, &n1), BOOKGEN_OK);
    bookgen_free(g);
    assert_int_equal(s1, s0);
    assert_int_equal(n1, n0);
    assert_int_equal(never.calls, 3); // depths 3, 4 and 5
    for (int run = 0; run < 2; run++) {
        uint64_t n = 0;
        int sc = 0;
        assert_int_equal(bookgen_new(&eager, &g), BOOKGEN_OK);
        assert_int_equal(bookgen_verify(g, fen, &sc, &n), BOOKGEN_OK);
        bookgen_free(g);
        if (run == 0)
            s2 = sc, n2 = n;
        assert_int_equal(sc, s2);
        assert_int_equal(n, n2);
    }
    assert_true(n2 < n0);
}

static void test_config(void **state)
{
    (void)state;
    BookgenConfig cfg = config(NULL);
    Bookgen *g;
    cfg.plies_max = BOOKGEN_MAX_PLIES + 1;
    assert_int_equal(bookgen_new(&cfg, &g), BOOKGEN_ERR_CONFIG);
    cfg = config(NULL);
    cfg.unit = 0;
    assert_int_equal(bookgen_new(&cfg, &g), BOOKGEN_ERR_CONFIG);
    assert_null(g);
    bookgen_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic),    cmocka_unit_test(test_replay_and_research),
        cmocka_unit_test(test_check_and_mirror), cmocka_unit_test(test_embedded_unbalanced),
        cmocka_unit_test(test_config),           cmocka_unit_test(test_early_abort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
