// SPDX-License-Identifier: MIT
// Fairy-Stockfish's 72-byte bin records (tuning/psv.c): the start position's first bytes and
// a move worked out by hand from the format, positions along random games round trip, and
// records that are not xiangqi positions are refused with a reason.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "board.h"
#include "move.h"
#include "movegen.h"
#include "psv.h"
#include "rng.h"

static int setup(void **state)
{
    (void)state;
    board_init();
    return 0;
}

static PosRecord start_record(void)
{
    PosRecord r = {.score = -35, .ply = 0, .red_result = 1};
    board_set_fen(&r.board, BOARD_START_FEN, NULL, 0);
    assert_int_equal(move_parse("h2e2", 0, &r.move), MOVE_TEXT_OK);
    return r;
}

/// Bits by hand: side 0; Red's general e0 = 4 in bits 1..7 (byte 0 = 0x08); Black's e9 = 85
/// in bits 8..14; a9's black chariot: code 1 in 5 bits, colour 1; b9's horse code 9, colour
/// 1; c9's elephant code 11... The move h2e2 on the 12-file board: (2*12+7) << 7 | (2*12+4).
static void test_start_by_hand(void **state)
{
    (void)state;
    PosRecord r = start_record();
    uint8_t rec[PSV_RECORD];
    psv_encode(&r, rec);
    static const uint8_t head[4] = {0x08, 0xd5, 0x30, 0x5d};
    assert_memory_equal(rec, head, sizeof head);
    assert_int_equal(rec[64] | rec[65] << 8, (uint16_t)-35);
    assert_int_equal(rec[66] | rec[67] << 8, 31 << 7 | 28);
    assert_int_equal(rec[68] | rec[69] << 8, 0);
    assert_int_equal((int8_t)rec[70], 1);
    assert_int_equal(rec[71], 0);
    // 1 + 14 bits, 88 points (58 empty, 30 pieces of 6 bits), 70 + 4 + 1 + 6 zero bits, then
    // the move number 1 in 8 bits: bit 1 + 14 + 58 + 180 + 81 = 334.
    assert_int_equal(rec[334 / 8] >> (334 % 8) & 1, 1);
    for (int bit = 335; bit < 512; bit++)
        assert_int_equal(rec[bit / 8] >> (bit % 8) & 1, 0);
}

/// Positions along random games, both sides to move, every result: the board, move, score,
/// ply and result come back.
static void test_roundtrip(void **state)
{
    (void)state;
    Rng rng;
    rng_seed(&rng, 7);
    for (int game = 0; game < 40; game++) {
        Board b;
        board_set_fen(&b, BOARD_START_FEN, NULL, 0);
        for (int ply = 0; ply < 150; ply++) {
            MoveList ml;
            if (movegen_legal(&b, &ml) == 0)
                break;
            Move m = ml.moves[rng_below(&rng, (uint32_t)ml.count)];
            char fen[BOARD_FEN_MAX];
            board_fen(&b, fen, sizeof fen);
            PosRecord r = {.score = (int)rng_below(&rng, 4001) - 2000,
                           .move = m,
                           .ply = ply,
                           .red_result = (double)(ply % 3) / 2};
            board_set_fen(&r.board, fen, NULL, 0);
            uint8_t rec[PSV_RECORD];
            psv_encode(&r, rec);
            PosRecord d;
            char why[256];
            assert_int_equal(psv_decode(rec, &d, why, sizeof why), 0);
            char back[BOARD_FEN_MAX];
            board_fen(&d.board, back, sizeof back);
            // The board and the side to move (a record has no counters).
            *strstr(back, " - - ") = '\0';
            *strstr(fen, " - - ") = '\0';
            assert_string_equal(back, fen);
            assert_int_equal(d.move, m);
            assert_int_equal(d.score, r.score);
            assert_int_equal(d.ply, ply);
            assert_true(d.red_result == r.red_result);
            board_make_move(&b, m);
        }
    }
}

/// Not a xiangqi record: an unknown piece code, pieces in hand, a move off the 9 files, a
/// result of 2; each named.
static void test_refused(void **state)
{
    (void)state;
    PosRecord r = start_record(), d;
    uint8_t rec[PSV_RECORD], bad[PSV_RECORD];
    char why[256];
    psv_encode(&r, rec);
    memcpy(bad, rec, sizeof bad);
    bad[2] |= 0xe0; // a9's code: 1 + bits 16..19 -> 0b11111 = 31, no xiangqi piece
    assert_int_equal(psv_decode(bad, &d, why, sizeof why), -1);
    assert_non_null(strstr(why, "not a xiangqi piece"));
    memcpy(bad, rec, sizeof bad);
    bad[260 / 8] |= 1 << (260 % 8); // a hand count's bit (the hands start at bit 253)
    assert_int_equal(psv_decode(bad, &d, why, sizeof why), -1);
    assert_non_null(strstr(why, "in hand"));
    memcpy(bad, rec, sizeof bad);
    bad[66] = 9; // to = 9: file 9 of the 12-file board
    assert_int_equal(psv_decode(bad, &d, why, sizeof why), -1);
    assert_non_null(strstr(why, "move"));
    memcpy(bad, rec, sizeof bad);
    bad[70] = 2;
    assert_int_equal(psv_decode(bad, &d, why, sizeof why), -1);
    assert_non_null(strstr(why, "result 2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_start_by_hand),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
