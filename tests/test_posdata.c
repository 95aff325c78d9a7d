// SPDX-License-Identifier: MIT
// The training positions format (.xqp): records round trip, files are checked block by block,
// shards partition a file, and appending continues a file as if it had been written at once.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "board.h"
#include "movegen.h"
#include "posdata.h"
#include "rng.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    board_init();
    snprintf(dir, sizeof dir, "/tmp/test_posdata.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/// Record i of a deterministic sequence: a position along a random game, with made-up fields.
static void make_record(uint64_t i, uint8_t rec[POSDATA_RECORD], Board *b)
{
    Rng rng;
    rng_seed(&rng, i);
    board_set_fen(b, BOARD_START_FEN, NULL, 0);
    int plies = (int)(i % 40);
    for (int p = 0; p < plies; p++) {
        MoveList ml;
        movegen_legal(b, &ml);
        if (ml.count == 0)
            break;
        board_make_move(b, ml.moves[rng_next(&rng) % (uint64_t)ml.count]);
    }
    Board flat;
    char fen[BOARD_FEN_MAX];
    board_fen(b, fen, sizeof fen);
    board_set_fen(&flat, fen, NULL, 0);
    *b = flat;
    posdata_encode(b, (int)(i * 37 % 2001) - 1000, move_make(3, 12), plies, (int)(i % 20),
                   (uint32_t)(i / 3), (double)(i % 3) / 2, rec);
}

static void write_file(const char *path, uint64_t from, uint64_t to, bool append)
{
    PosWriter *w;
    char why[256];
    uint8_t rec[POSDATA_RECORD];
    Board b;
    assert_int_equal(posdata_writer_open(path, append, &w, why, sizeof why), POSDATA_OK);
    for (uint64_t i = from; i < to; i++) {
        make_record(i, rec, &b);
        assert_int_equal(posdata_writer_add(w, rec), POSDATA_OK);
    }
    assert_int_equal(posdata_writer_count(w), to);
    assert_int_equal(posdata_writer_close(w, why, sizeof why), POSDATA_OK);
}

/// Every field of a record survives encoding and decoding, the board as the same position.
static void test_record_round_trip(void **state)
{
    (void)state;
    for (uint64_t i = 0; i < 200; i++) {
        uint8_t rec[POSDATA_RECORD];
        Board b;
        PosRecord r;
        make_record(i, rec, &b);
        assert_int_equal(posdata_decode(rec, &r, NULL, 0), POSDATA_OK);
        assert_int_equal(r.board.key, b.key);
        assert_int_equal(r.board.side, b.side);
        assert_int_equal(r.score, (int)(i * 37 % 2001) - 1000);
        assert_int_equal(r.move, move_make(3, 12));
        assert_int_equal(r.depth, (int)(i % 20));
        assert_int_equal(r.game, (uint32_t)(i / 3));
        assert_true(r.red_result == (double)(i % 3) / 2);
    }
}

/// Scores are clamped to the format's range, and a record that is not a position is refused.
static void test_record_limits(void **state)
{
    (void)state;
    uint8_t rec[POSDATA_RECORD];
    Board b;
    PosRecord r;
    char why[256] = "";
    board_set_fen(&b, BOARD_START_FEN, NULL, 0);
    posdata_encode(&b, 99999, MOVE_NONE, 0, 0, 0, 1, rec);
    assert_int_equal(posdata_decode(rec, &r, NULL, 0), POSDATA_OK);
    assert_int_equal(r.score, POSDATA_SCORE_MAX);
    rec[0] = 0; // the red chariot on a0 and the horse on b0 become empty: still legal
    rec[1] = (uint8_t)(rec[1] & 0x0f); // the red advisor on d0 gone too
    assert_int_equal(posdata_decode(rec, &r, why, sizeof why), POSDATA_OK);
    rec[2] = (uint8_t)(rec[2] & 0xf0); // and the general on e0: no red general
    assert_int_equal(posdata_decode(rec, &r, why, sizeof why), POSDATA_ERR_POSITION);
    assert_true(strlen(why) > 0);
    posdata_encode(&b, 0, MOVE_NONE, 0, 0, 0, 1, rec);
    rec[46] = 3;
    assert_int_equal(posdata_decode(rec, &r, why, sizeof why), POSDATA_ERR_POSITION);
}

/// A file reads back every record in order; shards are a partition of it in file order.
static void test_file_and_shards(void **state)
{
    (void)state;
    char path[128], why[256];
    snprintf(path, sizeof path, "%s/a.xqp", dir);
    const uint64_t n = 2 * POSDATA_BLOCK + 77;
    write_file(path, 0, n, false);
    uint8_t *all, *part;
    uint64_t count, total, seen = 0;
    assert_int_equal(posdata_read_file(path, 0, 1, &all, &count, &total, why, sizeof why),
                     POSDATA_OK);
    assert_int_equal(count, n);
    assert_int_equal(total, n);
    for (int s = 0; s < 3; s++) {
        assert_int_equal(posdata_read_file(path, s, 3, &part, &count, NULL, why, sizeof why),
                         POSDATA_OK);
        for (uint64_t k = 0; k < count; k++)
            assert_memory_equal(part + k * POSDATA_RECORD, all + (k * 3 + s) * POSDATA_RECORD,
                                POSDATA_RECORD);
        seen += count;
        free(part);
    }
    assert_int_equal(seen, n);
    free(all);
}

/// A file written in two sessions (the second appending) equals the file written at once,
/// byte for byte, whether the first session ended inside a block or on its boundary.
static void test_append_equals_whole(void **state)
{
    (void)state;
    char whole[128], parts[128], cmd[300];
    snprintf(whole, sizeof whole, "%s/whole.xqp", dir);
    snprintf(parts, sizeof parts, "%s/parts.xqp", dir);
    const uint64_t cuts[] = {0, 5, POSDATA_BLOCK, POSDATA_BLOCK + 1};
    write_file(whole, 0, POSDATA_BLOCK + 300, false);
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        remove(parts);
        write_file(parts, 0, cuts[c], false);
        write_file(parts, cuts[c], POSDATA_BLOCK + 300, true);
        snprintf(cmd, sizeof cmd, "cmp -s %s %s", whole, parts);
        assert_int_equal(system(cmd), 0);
    }
    // Appending to a file that does not exist creates it.
    remove(parts);
    write_file(parts, 0, 10, true);
}

/// A flipped byte, a cut file, a wrong magic or header each are refused with the reason.
static void test_damage_refused(void **state)
{
    (void)state;
    char path[128], why[256];
    snprintf(path, sizeof path, "%s/d.xqp", dir);
    const uint64_t n = POSDATA_BLOCK + 10;
    uint8_t *recs;
    uint64_t count;
    struct {
        long offset; // byte to flip (negative: truncate by that many bytes)
        PosdataStatus want;
    } cases[] = {
        {POSDATA_HEADER + 100, POSDATA_ERR_CHECKSUM},
        {POSDATA_HEADER + (POSDATA_BLOCK + 3) * POSDATA_RECORD + 4, POSDATA_ERR_CHECKSUM},
        {2, POSDATA_ERR_FORMAT},
        {17, POSDATA_ERR_FORMAT}, // the count, under the header's checksum
        {-1, POSDATA_ERR_TRUNCATED},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        write_file(path, 0, n, false);
        FILE *f = fopen(path, "r+b");
        assert_non_null(f);
        if (cases[c].offset >= 0) {
            fseek(f, cases[c].offset, SEEK_SET);
            int ch = fgetc(f);
            fseek(f, cases[c].offset, SEEK_SET);
            fputc(ch ^ 0x10, f);
            fclose(f);
        } else {
            fseek(f, 0, SEEK_END);
            long size = ftell(f);
            fclose(f);
            assert_int_equal(truncate(path, size + cases[c].offset), 0);
        }
        why[0] = 0;
        assert_int_equal(posdata_read_file(path, 0, 1, &recs, &count, NULL, why, sizeof why),
                         cases[c].want);
        assert_non_null(strstr(why, "d.xqp"));
        assert_null(recs);
    }
    assert_int_equal(
        posdata_read_file("/nonexistent/x.xqp", 0, 1, &recs, &count, NULL, why, sizeof why),
        POSDATA_ERR_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_round_trip), cmocka_unit_test(test_record_limits),
        cmocka_unit_test(test_file_and_shards),   cmocka_unit_test(test_append_equals_whole),
        cmocka_unit_test(test_damage_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
