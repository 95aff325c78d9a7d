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
#include "openings.h"

enum { UNIT = 6 };

static BookgenConfig config(const Openings *starts)
{
    return (BookgenConfig){2, 6, 4, 2, 40, 0, 4, 1, UNIT, 7, RULES_SEED, starts};
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

/// Settings outside the generator's limits are refused before any search.
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
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_replay_and_research),
        cmocka_unit_test(test_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
