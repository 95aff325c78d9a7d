// SPDX-License-Identifier: MIT
// Move generation properties checked against brute-force definitions along random games:
// legal = pseudo-legal moves after which the mover's general is not attacked; captures are
// exactly the legal moves onto enemy pieces and quiets the rest; movegen_is_legal agrees with
// the lists; board_gives_check agrees with making the move, and no checking move is called
// unable to check by board_may_give_check; the direct quiet-check generator lists exactly
// the pseudo-legal quiet moves that board_gives_check accepts.
#include <setjmp.h>
#include <stdio.h>
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

/// The quiet checks by definition: pseudo-legal quiet moves that board_gives_check accepts.
static void quiet_checks_brute(const Board *b, MoveList *out)
{
    MoveList quiets;
    movegen_pseudo_quiets(b, &quiets);
    out->count = 0;
    for (int i = 0; i < quiets.count; i++)
        if (board_gives_check(b, quiets.moves[i]))
            out->moves[out->count++] = quiets.moves[i];
}

/// Checks movegen_quiet_checks against the definition in one position: the same moves, each
/// once; fails naming the position and the first move in one list but not the other.
static void expect_quiet_checks(const Board *b, int by_type[PIECE_TYPE_NB])
{
    MoveList gen, ref;
    movegen_quiet_checks(b, &gen);
    quiet_checks_brute(b, &ref);
    char fen[BOARD_FEN_MAX], text[MOVE_TEXT_MAX];
    for (int i = 0; i < gen.count; i++) {
        Move m = gen.moves[i];
        bool dup = false;
        for (int j = 0; j < i; j++)
            dup |= gen.moves[j] == m;
        if (dup || !list_has(&ref, m)) {
            board_fen(b, fen, sizeof fen);
            move_text(m, 0, text);
            fail_msg("%s: %s %s", fen, text, dup ? "generated twice" : "generated, not a check");
        }
        if (by_type)
            by_type[piece_type(board_piece(b, move_from(m)))]++;
    }
    for (int i = 0; i < ref.count; i++)
        if (!list_has(&gen, ref.moves[i])) {
            board_fen(b, fen, sizeof fen);
            move_text(ref.moves[i], 0, text);
            fail_msg("%s: quiet check %s not generated", fen, text);
        }
}

/// Along random games, the quiet checks generated directly are exactly the pseudo-legal
/// quiet moves that give check, and checks by every kind of piece occur among them.
static void test_quiet_checks_random_games(void **state)
{
    (void)state;
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    Rng rng;
    rng_seed(&rng, 11);
    int by_type[PIECE_TYPE_NB] = {0}, positions = 0;
    for (int game = 0; game < 400; game++) {
        assert_int_equal(board_set_fen(b, BOARD_START_FEN, NULL, 0), FEN_OK);
        for (int ply = 0; ply < 300; ply++, positions++) {
            expect_quiet_checks(b, by_type);
            MoveList l;
            if (movegen_legal(b, &l) == 0)
                break;
            board_make_move(b, l.moves[rng_below(&rng, (uint32_t)l.count)]);
        }
    }
    assert_true(positions > 50000);
    // Advisors and elephants check only through a screen or a discovery; kings only by
    // facing the other general.
    for (PieceType pt = KING; pt < PIECE_TYPE_NB; pt++)
        if (by_type[pt] == 0)
            fail_msg("no quiet check by a piece of type %d in %d positions", pt, positions);
    free(b);
}

/// In every position of the perft suite and every position one and two legal moves from
/// it, the quiet checks generated directly are exactly those of the definition.
static void test_quiet_checks_perft_suite(void **state)
{
    (void)state;
    char path[512], line[512];
    snprintf(path, sizeof path, "%s/perft.epd", XQ_TEST_DATA);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    int fens = 0;
    while (fgets(line, sizeof line, f)) {
        char *semi = strchr(line, ';');
        if (line[0] == '#' || !semi)
            continue;
        *semi = '\0';
        assert_int_equal(board_set_fen(b, line, NULL, 0), FEN_OK);
        fens++;
        MoveList l1, l2;
        expect_quiet_checks(b, NULL);
        movegen_legal(b, &l1);
        for (int i = 0; i < l1.count; i++) {
            board_make_move(b, l1.moves[i]);
            expect_quiet_checks(b, NULL);
            movegen_legal(b, &l2);
            for (int j = 0; j < l2.count; j++) {
                board_make_move(b, l2.moves[j]);
                expect_quiet_checks(b, NULL);
                board_unmake_move(b);
            }
            board_unmake_move(b);
        }
    }
    fclose(f);
    free(b);
    assert_true(fens >= 60);
}

typedef struct {
    const char *fen;
    const char *checks; // every quiet check, sorted, space-separated
    int legal;          // how many of them are legal
    const char *kind;
} CheckCase;

static int move_text_cmp(const void *a, const void *b) { return strcmp(a, b); }

/// One position per way a quiet move checks (Red to move, Black's general on e9), with
/// its full list of quiet checks written out by hand.
static void test_quiet_checks_by_kind(void **state)
{
    (void)state;
    static const CheckCase cases[] = {
        {"4k4/4a4/9/9/8R/9/9/9/9/R2K5 w", "a0a9 i5i9", 2, "chariot onto the general's rank"},
        {"3k5/9/9/9/9/9/9/9/9/R3K4 w", "a0a9 a0d0 e0d0", 2, "chariot onto the general's file"},
        // e5-d7 lands on a checking point whose leg d8 is blocked; h6-g8 is itself blocked.
        {"4k4/3n5/7n1/7N1/4N4/9/9/9/9/3K5 w", "e5f7 h6f7", 2, "horse, leg towards e9 free"},
        // g9 has no screen: moving it along rank 9 leaves none (g9h9 is no check); a piece
        // arriving on f9 becomes its screen (the chariot there also checks directly).
        {"2b1k1C2/4a4/9/9/5R3/9/9/C8/9/3K5 w", "a2a9 a2e2 f5f9", 3,
         "cannon onto a line with one screen"},
        {"4k4/9/9/R8/3P5/9/2N6/9/9/2BKCA3 w", "a6a9 a6e6 c0e2 c3e2 c3e4 d5e5 f0e1", 7,
         "a piece of every kind becomes the screen of cannon e0"},
        {"2P1k4/5P3/4P4/9/9/9/9/9/9/3K5 w", "c9d9 e7e8 f8e8 f8f9", 4, "soldier steps"},
        // The cannon leaving rank 9 along its file uncovers chariot a9, along the rank not.
        {"R1C1k4/9/9/2P6/4N4/9/9/4R4/9/3K5 w", "c9c7 c9c8 e5c4 e5d3 e5d7 e5f3 e5f7 e5g4 e5g6", 9,
         "discovered chariot check"},
        // Either screen of cannon e0 leaving checks; a third screen (a6e6) does not.
        {"4k4/4a4/9/R8/9/4N4/9/9/9/3KC4 w", "a6a9 e4c3 e4c5 e4d2 e4d6 e4f2 e4f6 e4g3 e4g5", 9,
         "discovered cannon check"},
        // d0e0 faces the other general (a check board_gives_check counts, but illegal).
        {"4k4/5NN2/9/9/9/9/9/9/9/3K5 w", "d0e0 f8d7 f8d9 f8e6 f8g6", 4,
         "discovered horse check (leg)"},
        // Generals facing count as a check for board_gives_check; such moves are illegal.
        {"4k4/9/9/9/9/9/9/9/9/3K5 w", "d0e0", 0, "general onto the open file"},
        {"4k4/9/9/9/4N4/9/9/9/9/4K4 w", "e5c4 e5c6 e5d3 e5d7 e5f3 e5f7 e5g4 e5g6", 0,
         "the only piece between the generals leaves"},
    };
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char why[160], got[MAX_MOVES][MOVE_TEXT_MAX], joined[MAX_MOVES * MOVE_TEXT_MAX] = "";
        if (board_set_fen(b, cases[i].fen, why, sizeof why) != FEN_OK)
            fail_msg("case %zu (%s): bad FEN: %s", i, cases[i].kind, why);
        MoveList l;
        movegen_quiet_checks(b, &l);
        int legal = 0;
        for (int j = 0; j < l.count; j++) {
            move_text(l.moves[j], 0, got[j]);
            legal += movegen_legal_after(b, l.moves[j]);
        }
        qsort(got, (size_t)l.count, sizeof got[0], move_text_cmp);
        for (int j = 0; j < l.count; j++) {
            strcat(joined, j ? " " : "");
            strcat(joined, got[j]);
        }
        if (strcmp(joined, cases[i].checks) != 0 || legal != cases[i].legal)
            fail_msg("case %zu (%s): got \"%s\" (%d legal), expected \"%s\" (%d legal)", i,
                     cases[i].kind, joined, legal, cases[i].checks, cases[i].legal);
        expect_quiet_checks(b, NULL);
    }
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_legal_matches_brute_force),
        cmocka_unit_test(test_is_legal_rejects_garbage),
        cmocka_unit_test(test_rule_cases),
        cmocka_unit_test(test_quiet_checks_random_games),
        cmocka_unit_test(test_quiet_checks_perft_suite),
        cmocka_unit_test(test_quiet_checks_by_kind),
    };
    return cmocka_run_group_tests_name("movegen", tests, NULL, NULL);
}
