// SPDX-License-Identifier: MIT
// Board tests: FEN parsing and printing, every validation error, make/unmake, Zobrist keys,
// move text.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "board.h"
#include "move.h"
#include "movegen.h"
#include "rng.h"

static int setup_board(void **state)
{
    Board *b = malloc(sizeof *b);
    if (!b)
        return -1;
    *state = b;
    return 0;
}

static int teardown_board(void **state)
{
    free(*state);
    return 0;
}

/// Printing a parsed FEN gives back exactly the same text.
static void test_fen_round_trip(void **state)
{
    static const char *fens[] = {
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
        "r1bakabnr/9/1cn4c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C1N2/9/RNBAKAB1R w - - 2 2",
        "3k5/9/9/9/9/9/9/9/9/4K4 b - - 17 80",
        "2bak4/4a4/4b4/9/2P3p2/6P2/9/4B4/4A4/2B1KA3 w - - 0 40",
        "3akab2/9/4b4/p1p1C4/4c4/2P6/P3P1r1P/4B4/4A4/2BK1A3 b - - 5 23",
    };
    Board *b = *state;
    for (size_t i = 0; i < sizeof fens / sizeof fens[0]; i++) {
        char why[128], out[BOARD_FEN_MAX];
        assert_int_equal(board_set_fen(b, fens[i], why, sizeof why), FEN_OK);
        board_fen(b, out, sizeof out);
        assert_string_equal(out, fens[i]);
        assert_true(board_is_ok(b));
    }
}

/// Board + side alone is accepted with counters 0 and 1; H/E letters and surrounding
/// whitespace are accepted; the printed FEN is canonical.
static void test_fen_short_forms(void **state)
{
    Board *b = *state;
    char out[BOARD_FEN_MAX];
    assert_int_equal(
        board_set_fen(b, "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b", NULL, 0),
        FEN_OK);
    board_fen(b, out, sizeof out);
    assert_string_equal(out,
                        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1");
    assert_int_equal(
        board_set_fen(b,
                      "  rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR w - - 0 1\n",
                      NULL, 0),
        FEN_OK);
    board_fen(b, out, sizeof out);
    assert_string_equal(out, BOARD_START_FEN);
}

typedef struct {
    const char *fen;
    FenStatus status;
    const char *why_contains; // the detail must name the fault's place
} BadFen;

/// Every malformed or impossible FEN is rejected with its specific status and a message
/// naming the rank, point or field at fault.
static void test_fen_errors(void **state)
{
    static const BadFen bad[] = {
        {"", FEN_ERR_EMPTY, "empty"},
        {"   ", FEN_ERR_EMPTY, "empty"},
        {"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/RNBAKABNR w", FEN_ERR_RANK_COUNT,
         "9 ranks"},
        {"rnbakabnr/9/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", FEN_ERR_RANK_COUNT,
         "more than 10"},
        {"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/8/RNBAKABNR w", FEN_ERR_FILE_COUNT,
         "rank 1 has 8"},
        {"rnbakabnr/9/1c5c1/p1p1p1p1p1/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", FEN_ERR_FILE_COUNT,
         "rank 6 has more"},
        {"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNQ w", FEN_ERR_BAD_CHAR,
         "'Q' in rank 0"},
        {"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/0/RNBAKABNR w", FEN_ERR_BAD_CHAR, "'0'"},
        {"rnba1abnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", FEN_ERR_KING_MISSING,
         "Black has no general"},
        {"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/4K4/RNBAKABNR w", FEN_ERR_KING_EXTRA,
         "Red has 2 generals"},
        {"3k5/9/9/9/9/9/9/9/9/2K6 w", FEN_ERR_KING_PALACE, "c0"},
        {"3k5/9/9/9/9/9/9/9/9/3KA4 w", FEN_ERR_ADVISOR_POINT, "Red advisor on e0"},
        {"3k5/9/9/9/9/9/9/9/9/2A1K4 w", FEN_ERR_ADVISOR_POINT, "Red advisor on c0"},
        {"3k5/9/4a4/9/9/9/9/9/9/4K4 w", FEN_ERR_ADVISOR_POINT, "Black advisor on e7"},
        {"3k5/9/9/9/9/9/9/9/9/1B2K4 w", FEN_ERR_ELEPHANT_POINT, "b0"},
        {"3k5/9/9/9/2B6/9/9/9/9/4K4 w", FEN_ERR_ELEPHANT_POINT, "c5"},
        {"3k5/9/9/9/9/9/9/9/4b4/4K4 w", FEN_ERR_ELEPHANT_POINT, "Black elephant on e1"},
        {"3k5/9/9/9/9/9/9/9/P8/4K4 w", FEN_ERR_SOLDIER_RANK, "a1"},
        {"3k5/p8/9/9/9/9/9/9/9/4K4 w", FEN_ERR_SOLDIER_RANK, "a8"},
        {"3k5/9/9/9/9/9/9/9/9/R1R1K1R2 w", FEN_ERR_PIECE_COUNT, "3 chariots"},
        {"3k5/9/9/PPP6/PPP6/9/9/9/9/4K4 w", FEN_ERR_PIECE_COUNT, "6 soldiers"},
        {"3k5/9/9/9/9/9/9/9/9/4K4", FEN_ERR_SIDE, "missing"},
        {"3k5/9/9/9/9/9/9/9/9/4K4 x", FEN_ERR_SIDE, "'x'"},
        {"3k5/9/9/9/9/9/9/9/9/4K4 white", FEN_ERR_SIDE, "'white'"},
        {"3k5/9/9/9/9/9/9/9/9/4K4 w KQ - 0 1", FEN_ERR_FIELDS, "field 3"},
        {"3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1 extra", FEN_ERR_FIELDS, "more than 6"},
        {"3k5/9/9/9/9/9/9/9/9/4K4 w - - -1 1", FEN_ERR_COUNTERS, "halfmove"},
        {"3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 0", FEN_ERR_COUNTERS, "move number"},
        {"3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1x", FEN_ERR_COUNTERS, "move number"},
        {"4k4/9/9/9/9/9/9/9/9/4K4 w", FEN_ERR_KINGS_FACING, "file e"},
        {"3k5/9/9/9/9/9/9/9/9/3RK4 w", FEN_ERR_OPPONENT_IN_CHECK, "Black is in check"},
        {"5k3/9/9/9/9/9/9/9/9/5K3 b", FEN_ERR_KINGS_FACING, "file f"},
        {"3k5/9/9/9/9/3P5/3C5/9/9/4K4 w", FEN_ERR_OPPONENT_IN_CHECK, "in check"},
        {"3Pk4/9/9/9/9/9/9/9/9/3K5 w", FEN_ERR_OPPONENT_IN_CHECK, "in check"},
        {"4k4/4P4/9/9/9/9/9/9/9/3K5 w", FEN_ERR_OPPONENT_IN_CHECK, "in check"},
        {"3k5/9/9/9/9/9/9/9/9/4K4 b - - 0 1", FEN_OK, ""},
        {"3k5/9/4N4/9/9/9/9/9/9/4K4 w", FEN_ERR_OPPONENT_IN_CHECK, "in check"},
    };
    Board *b = *state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char why[160];
        FenStatus st = board_set_fen(b, bad[i].fen, why, sizeof why);
        if (st != bad[i].status || !strstr(why, bad[i].why_contains))
            fail_msg("FEN '%s': got %d (%s: %s), expected %d with '%s'", bad[i].fen, st,
                     fen_strerror(st), why, bad[i].status, bad[i].why_contains);
    }
}

/// A NULL or over-long FEN is rejected without reading past the limit.
static void test_fen_limits(void **state)
{
    Board *b = *state;
    char longfen[BOARD_FEN_INPUT_MAX + 50];
    memset(longfen, '9', sizeof longfen - 1);
    longfen[sizeof longfen - 1] = '\0';
    assert_int_equal(board_set_fen(b, NULL, NULL, 0), FEN_ERR_EMPTY);
    assert_int_equal(board_set_fen(b, longfen, NULL, 0), FEN_ERR_TOO_LONG);
    assert_string_not_equal(fen_strerror(FEN_ERR_KINGS_FACING), fen_strerror(FEN_OK));
    assert_non_null(fen_strerror((FenStatus)999));
}

/// Along random games, the incremental key always equals a full recomputation, the board
/// stays consistent, and unmaking every move restores the starting position bit for bit.
static void test_make_unmake_zobrist(void **state)
{
    Board *b = *state;
    Board *start = malloc(sizeof *start);
    assert_non_null(start);
    Rng rng;
    rng_seed(&rng, 42);
    for (int game = 0; game < 60; game++) {
        board_set_fen(b, BOARD_START_FEN, NULL, 0);
        *start = *b;
        int plies = 0;
        for (; plies < 200; plies++) {
            MoveList l;
            if (movegen_legal(b, &l) == 0)
                break;
            board_make_move(b, l.moves[rng_below(&rng, (uint32_t)l.count)]);
            assert_int_equal(b->key, board_compute_key(b));
            assert_true(board_is_ok(b));
        }
        while (plies--)
            board_unmake_move(b);
        assert_int_equal(b->key, start->key);
        assert_memory_equal(b, start, offsetof(Board, hist));
    }
    free(start);
}

/// Keys differ by side to move and transpositions reach the same key.
static void test_zobrist_transposition(void **state)
{
    Board *b = *state;
    board_set_fen(b, BOARD_START_FEN, NULL, 0);
    uint64_t red = b->key;
    board_set_fen(b, "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b", NULL, 0);
    assert_int_not_equal(red, b->key);
    static const char *line1[] = {"h2e2", "h9g7", "b0c2", "b9c7"};
    static const char *line2[] = {"b0c2", "b9c7", "h2e2", "h9g7"};
    uint64_t keys[2];
    const char **lines[2] = {line1, line2};
    for (int l = 0; l < 2; l++) {
        board_set_fen(b, BOARD_START_FEN, NULL, 0);
        for (int i = 0; i < 4; i++) {
            Move m;
            assert_int_equal(move_parse_legal(b, lines[l][i], 0, &m), MOVE_TEXT_OK);
            board_make_move(b, m);
        }
        keys[l] = b->key;
    }
    assert_int_equal(keys[0], keys[1]);
}

/// Move text round-trips in both rank conventions; malformed or illegal text is refused.
static void test_move_text(void **state)
{
    Board *b = *state;
    board_set_fen(b, BOARD_START_FEN, NULL, 0);
    Move m;
    char t[MOVE_TEXT_MAX];
    assert_int_equal(move_parse("h2e2", 0, &m), MOVE_TEXT_OK);
    assert_int_equal(move_from(m), sq_make(7, 2));
    assert_int_equal(move_to(m), sq_make(4, 2));
    move_text(m, 0, t);
    assert_string_equal(t, "h2e2");
    move_text(m, 1, t);
    assert_string_equal(t, "h3e3");
    assert_int_equal(move_parse("b3b10", 1, &m), MOVE_TEXT_OK);
    assert_int_equal(move_to(m), sq_make(1, 9));
    move_text(m, 1, t);
    assert_string_equal(t, "b3b10");
    move_text(MOVE_NONE, 0, t);
    assert_string_equal(t, "0000");
    static const char *syntax[] = {"",     "h2",   "h2e",   "j2e2",  "h2e2x",
                                   "H2E2", "h2h2", "b0b10", "a0a9 ", NULL};
    for (int i = 0; syntax[i]; i++)
        assert_int_equal(move_parse(syntax[i], 0, &m), MOVE_TEXT_SYNTAX);
    assert_int_equal(move_parse(NULL, 0, &m), MOVE_TEXT_SYNTAX);
    assert_int_equal(move_parse("a0a0", 1, &m), MOVE_TEXT_SYNTAX);
    assert_int_equal(move_parse_legal(b, "h2e2", 0, &m), MOVE_TEXT_OK);
    assert_int_equal(move_parse_legal(b, "h2h9", 0, &m), MOVE_TEXT_OK); // cannon captures
    assert_int_equal(move_parse_legal(b, "h2h8", 0, &m), MOVE_TEXT_ILLEGAL);
    assert_int_equal(move_parse_legal(b, "e0e2", 0, &m), MOVE_TEXT_ILLEGAL);
    assert_int_equal(move_parse_legal(b, "h9g7", 0, &m), MOVE_TEXT_ILLEGAL); // not Red's piece
    assert_int_equal(move_parse_legal(b, "e3e5", 0, &m), MOVE_TEXT_ILLEGAL);
}

/// The null move flips the side and key and is undone exactly.
static void test_null_move(void **state)
{
    Board *b = *state;
    board_set_fen(b, BOARD_START_FEN, NULL, 0);
    uint64_t key = b->key;
    board_make_null(b);
    assert_int_equal(b->side, BLACK);
    assert_int_equal(b->key, board_compute_key(b));
    board_unmake_null(b);
    assert_int_equal(b->key, key);
    assert_int_equal(b->side, RED);
    assert_true(board_is_ok(b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fen_round_trip, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_fen_short_forms, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_fen_errors, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_fen_limits, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_make_unmake_zobrist, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_zobrist_transposition, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_move_text, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_null_move, setup_board, teardown_board),
    };
    return cmocka_run_group_tests_name("board", tests, NULL, NULL);
}
