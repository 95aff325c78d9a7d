// SPDX-License-Identifier: MIT
// Move generation properties checked against brute-force definitions along random games:
// legal = pseudo-legal moves after which the mover's general is not attacked; captures are
// exactly the legal moves onto enemy pieces and quiets the rest; movegen_is_legal agrees with
// the lists; board_gives_check agrees with making the move, and no checking move is called
// unable to check by board_may_give_check.
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

static bool list_has(const MoveList *l, Move m)
{
    for (int i = 0; i < l->count; i++)
        if (l->moves[i] == m)
            return true;
    return false;
}

/// Brute force: make the move, then ask whether the mover's general is attacked (which
/// includes facing the other general).
static bool leaves_general_safe(Board *b, Move m)
{
    Color us = b->side;
    board_make_move(b, m);
    bool attacked = board_attacked_after(b, us, b->king_sq[us], SQ_NONE, SQ_NONE);
    board_unmake_move(b);
    return !attacked;
}

static void check_position(Board *b)
{
    MoveList pseudo, legal, caps, quiets;
    movegen_pseudo(b, &pseudo);
    movegen_legal(b, &legal);
    movegen_captures(b, &caps);
    movegen_quiets(b, &quiets);
    int expect_legal = 0, expect_caps = 0;
    for (int i = 0; i < pseudo.count; i++) {
        Move m = pseudo.moves[i];
        Piece mover = board_piece(b, move_from(m)), target = board_piece(b, move_to(m));
        assert_int_equal(piece_color(mover), b->side);
        assert_true(target == NO_PIECE || piece_color(target) != b->side);
        bool safe = leaves_general_safe(b, m);
        assert_int_equal(list_has(&legal, m), safe);
        assert_int_equal(movegen_is_legal(b, m), safe);
        expect_legal += safe;
        if (safe && target != NO_PIECE) {
            expect_caps++;
            assert_true(list_has(&caps, m));
        }
        assert_int_equal(list_has(&quiets, m), safe && target == NO_PIECE);
        if (safe) {
            // Make, then scan for attacks on the general (make itself asks board_gives_check).
            board_make_move(b, m);
            Color them = b->side;
            bool check = board_attacked_after(b, them, b->king_sq[them], SQ_NONE, SQ_NONE);
            board_unmake_move(b);
            if (check)
                assert_true(board_may_give_check(b, m));
            assert_int_equal(board_gives_check(b, m), check);
        }
    }
    assert_int_equal(quiets.count, expect_legal - expect_caps);
    assert_int_equal(legal.count, expect_legal);
    assert_int_equal(movegen_count_legal(b), expect_legal);
    assert_int_equal(caps.count, expect_caps);
    // Every from-to pair of the side to move's pieces: the fast single-move check agrees
    // with the generated list (it must also reject what the generator never produces).
    for (Bitboard own = b->pieces[b->side][NO_PIECE_TYPE]; own;) {
        Square from = bb_pop(&own);
        for (Square to = 0; to < SQUARE_NB; to++) {
            Move m = move_make(from, to);
            assert_int_equal(movegen_is_legal(b, m), list_has(&legal, m));
            assert_int_equal(movegen_is_pseudo_legal(b, m), list_has(&pseudo, m));
        }
    }
}

/// In every position along random games, the fast legality filter agrees with the brute
/// force definition for every pseudo-legal move.
static void test_legal_matches_brute_force(void **state)
{
    (void)state;
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    Rng rng;
    rng_seed(&rng, 7);
    for (int game = 0; game < 40; game++) {
        assert_int_equal(board_set_fen(b, BOARD_START_FEN, NULL, 0), FEN_OK);
        for (int ply = 0; ply < 250; ply++) {
            check_position(b);
            MoveList l;
            if (movegen_legal(b, &l) == 0)
                break;
            board_make_move(b, l.moves[rng_below(&rng, (uint32_t)l.count)]);
        }
    }
    free(b);
}

/// Moves that are not pseudo-legal are never called legal: off-board values, empty
/// from-points, the opponent's pieces, and moves breaking a movement rule.
static void test_is_legal_rejects_garbage(void **state)
{
    (void)state;
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    assert_int_equal(board_set_fen(b, BOARD_START_FEN, NULL, 0), FEN_OK);
    MoveList legal;
    movegen_legal(b, &legal);
    int accepted = 0;
    for (unsigned v = 0; v < 1u << 14; v++) {
        Move m = (Move)v;
        bool ok = movegen_is_legal(b, m);
        assert_int_equal(ok, list_has(&legal, m));
        accepted += ok;
    }
    assert_int_equal(accepted, 44);
    free(b);
}

typedef struct {
    const char *fen;
    const char *move;
    bool legal;
    const char *rule; // RULES.md rule the case illustrates
} Case;

/// Single moves that illustrate each movement rule of RULES.md, legal or not.
static void test_rule_cases(void **state)
{
    (void)state;
    static const Case cases[] = {
        // Horse: the horse on b0 going up has its leg on b1.
        {"3k5/9/9/9/9/9/9/9/1p7/1N2K4 w", "b0c2", false, "horse leg b1 blocked"},
        {"3k5/9/9/9/9/9/9/9/9/1N2K4 w", "b0c2", true, "horse leg free"},
        {"3k5/9/9/9/9/9/9/9/9/1N2K4 w", "b0a2", true, "horse to the edge"},
        // Elephant eye and river.
        {"3k5/9/9/9/9/9/9/9/3p5/2B1K4 w", "c0e2", false, "elephant eye d1 blocked"},
        {"3k5/9/9/9/9/9/9/9/9/2B1K4 w", "c0e2", true, "elephant eye free"},
        {"3k5/9/9/9/9/2B6/9/9/9/4K4 w", "c4e6", false, "elephant may not cross the river"},
        // Palace.
        {"5k3/9/9/9/9/9/9/9/9/3K5 w", "d0c0", false, "general may not leave the palace"},
        {"3k5/9/9/9/9/9/9/9/9/3AK4 w", "d0c1", false, "advisor may not leave the palace"},
        {"3k5/9/9/9/9/9/9/9/4A4/4K4 w", "e1d2", true, "advisor diagonal in the palace"},
        // Cannon.
        {"3k5/9/9/9/9/9/p8/9/9/C3K4 w", "a0a4", false,
         "cannon cannot pass a piece without capturing"},
        {"3k5/9/9/9/p8/9/P8/9/9/C3K4 w", "a0a5", true, "cannon captures over one screen"},
        {"3k5/9/9/9/p8/9/P8/9/9/C3K4 w", "a0a3", false, "cannon cannot land on own screen"},
        {"3k5/9/9/9/p8/p8/P8/9/9/C3K4 w", "a0a5", false, "cannon cannot jump two screens"},
        // Flying general: the e-file piece between the generals is pinned.
        {"4k4/9/9/9/9/4N4/9/9/9/4K4 w", "e4d6", false, "flying general pins the horse"},
        {"4k4/9/9/9/9/4R4/9/9/9/4K4 b", "e9d9", true, "general steps out of the chariot's check"},
        {"4k4/9/9/9/9/4R4/9/9/9/4K4 b", "e9e8", false, "general stays in the chariot's check"},
        {"3k5/9/9/9/9/9/9/9/9/4K4 w", "e0d0", false, "general may not face the other"},
        // Soldiers.
        {"3k5/9/9/9/9/9/P8/9/9/4K4 w", "a3b3", false, "soldier not yet across moves only forward"},
        {"3k5/9/9/9/P8/9/9/9/9/4K4 w", "a5b5", true, "soldier across the river moves sideways"},
        {"3k5/9/9/9/P8/9/9/9/9/4K4 w", "a5a4", false, "soldier never moves back"},
        {"P2k5/9/9/9/9/9/9/9/9/4K4 w", "a9b9", true, "soldier on the last rank moves sideways"},
    };
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char why[160];
        if (board_set_fen(b, cases[i].fen, why, sizeof why) != FEN_OK)
            fail_msg("case %zu (%s): bad FEN: %s", i, cases[i].rule, why);
        Move m;
        MoveTextStatus st = move_parse_legal(b, cases[i].move, 0, &m);
        if ((st == MOVE_TEXT_OK) != cases[i].legal)
            fail_msg("case %zu: %s %s: expected %s (%s)", i, cases[i].fen, cases[i].move,
                     cases[i].legal ? "legal" : "illegal", cases[i].rule);
    }
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_legal_matches_brute_force),
        cmocka_unit_test(test_is_legal_rejects_garbage),
        cmocka_unit_test(test_rule_cases),
    };
    return cmocka_run_group_tests_name("movegen", tests, NULL, NULL);
}
