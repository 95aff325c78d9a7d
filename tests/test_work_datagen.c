// SPDX-License-Identifier: MIT
// Datagen's filters (worker/work_datagen.c): which filter skips a position, in their order,
// each one off when its key says so, and the soft early-ply filter's odds and determinism.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "board.h"
#include "move.h"
#include "work_datagen.h"

#define START "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
// Red's general on e0 in check from Black's rook on e1.
#define CHECK "3k5/9/9/9/9/9/9/9/4r4/4K4 w - - 0 1"

static JobConfig job_defaults(void)
{
    JobConfig j;
    memset(&j, 0, sizeof j);
    j.datagen.skip_capture = j.datagen.skip_in_check = true;
    j.datagen.seed = 1;
    return j;
}

static GameMove scored(const char *move, int score)
{
    GameMove m = {.score = score, .has_score = true, .depth = 4};
    assert_int_equal(move_parse(move, 0, &m.move), MOVE_TEXT_OK);
    return m;
}

static WireDatagenFilter filter(const JobConfig *j, const char *fen, GameMove m, int ply,
                                double red)
{
    Board b;
    assert_int_equal(board_set_fen(&b, fen, NULL, 0), FEN_OK);
    return datagen_filter(j, &b, &m, ply, 4, 7, red);
}

/// Each filter in turn, the first that applies named; the anchors' two switched off let
/// their positions through.
static void test_filter_order(void **state)
{
    (void)state;
    JobConfig j = job_defaults();
    j.datagen.min_ply = 10;
    assert_int_equal(filter(&j, START, scored("h2e2", 20), 20, 0.5), WIRE_DG_SEEN);
    assert_int_equal(filter(&j, START, scored("h2e2", 20), 3, 0.5), WIRE_DG_OPENING); // book
    assert_int_equal(filter(&j, START, scored("h2e2", 20), 9, 0.5), WIRE_DG_OPENING); // min_ply
    GameMove m = scored("h2e2", 3);
    m.mate = true;
    assert_int_equal(filter(&j, START, m, 20, 0.5), WIRE_DG_UNSCORED);
    m = scored("h2e2", 0);
    m.has_score = false;
    assert_int_equal(filter(&j, START, m, 20, 0.5), WIRE_DG_UNSCORED);
    // In check, with a capture for a best move: the check is named first.
    assert_int_equal(filter(&j, CHECK, scored("e0e1", 900), 20, 1), WIRE_DG_IN_CHECK);
    assert_int_equal(filter(&j, START, scored("b2b9", 300), 20, 1), WIRE_DG_CAPTURE);
    j.datagen.skip_in_check = false;
    assert_int_equal(filter(&j, CHECK, scored("e0e1", 900), 20, 1), WIRE_DG_CAPTURE);
    j.datagen.skip_capture = false;
    assert_int_equal(filter(&j, CHECK, scored("e0e1", 900), 20, 1), WIRE_DG_SEEN);
    assert_int_equal(filter(&j, START, scored("b2b9", 300), 20, 1), WIRE_DG_SEEN);
}

/// WDL: a score of at least skip_wdl for the side that lost (or at most -skip_wdl for the
/// side that won) is skipped; draws, smaller scores and skip_wdl = 0 are not.
static void test_filter_wdl(void **state)
{
    (void)state;
    JobConfig j = job_defaults();
    const char *black = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1";
    assert_int_equal(filter(&j, START, scored("h2e2", 800), 20, 0), WIRE_DG_SEEN);
    j.datagen.skip_wdl = 500;
    assert_int_equal(filter(&j, START, scored("h2e2", 800), 20, 0), WIRE_DG_WDL);  // Red lost
    assert_int_equal(filter(&j, START, scored("h2e2", 500), 20, 0), WIRE_DG_WDL);  // at the bound
    assert_int_equal(filter(&j, START, scored("h2e2", 499), 20, 0), WIRE_DG_SEEN); // under it
    assert_int_equal(filter(&j, START, scored("h2e2", 800), 20, 1), WIRE_DG_SEEN); // Red won
    assert_int_equal(filter(&j, START, scored("h2e2", 800), 20, 0.5), WIRE_DG_SEEN);
    assert_int_equal(filter(&j, START, scored("h2e2", -800), 20, 1), WIRE_DG_WDL);
    // Black to move: the score is Black's, the result Red's.
    assert_int_equal(filter(&j, black, scored("h7e7", 800), 20, 1), WIRE_DG_WDL);
    assert_int_equal(filter(&j, black, scored("h7e7", 800), 20, 0), WIRE_DG_SEEN);
}

/// Early plies: kept with odds (ply + 1) / (plies + 1), the same answer every time, every
/// position from `plies` on kept; 0 keeps everything.
static void test_early_plies(void **state)
{
    (void)state;
    enum { PLIES = 9, GAMES = 20000 };
    for (int ply = 0; ply < PLIES + 3; ply++) {
        int kept = 0;
        for (uint64_t g = 0; g < GAMES; g++) {
            bool k = datagen_early_keeps(5, g, ply, PLIES);
            assert_int_equal(k, datagen_early_keeps(5, g, ply, PLIES));
            kept += k;
            assert_true(datagen_early_keeps(5, g, ply, 0));
        }
        double want = ply >= PLIES ? 1 : (ply + 1.0) / (PLIES + 1.0);
        assert_true(kept > (want - 0.02) * GAMES && kept <= (want + 0.02) * GAMES);
    }
    // Another seed draws other games.
    int same = 0;
    for (uint64_t g = 0; g < 1000; g++)
        same += datagen_early_keeps(5, g, 4, PLIES) == datagen_early_keeps(6, g, 4, PLIES);
    assert_true(same < 900);
    JobConfig j = job_defaults();
    j.datagen.skip_early_plies = PLIES;
    // Ply 0 of 9 is kept 1 time in 10: some game of 100 skips it.
    int early = 0;
    for (uint64_t g = 0; g < 100; g++) {
        Board b;
        board_set_fen(&b, START, NULL, 0);
        GameMove m = scored("h2e2", 20);
        early += datagen_filter(&j, &b, &m, 0, 0, g, 0.5) == WIRE_DG_EARLY;
    }
    assert_true(early > 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_order),
        cmocka_unit_test(test_filter_wdl),
        cmocka_unit_test(test_early_plies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
