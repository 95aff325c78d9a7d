// SPDX-License-Identifier: MIT
// ElephantEye's BOOK.DAT: its Zobrist locks (pinned to values found in ElephantEye's own
// BOOK.DAT), its move encoding, the file's checks, and the round trip .xqb -> BOOK.DAT ->
// probe giving every position's moves and weights.
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
#include "bookgen.h"
#include "eebook.h"
#include "keyset.h"
#include "move.h"
#include "movebook.h"
#include "movegen.h"

// Found by probing xqbase/eleeye's BOOK/BOOK.DAT (commit a9d3914) with `xqforge book probe`:
// 16 moves at the start (b2e2 and h2e2 1473 each), 4 after h2e2 (as the mirror of b2e2's
// position; h9g7 761), 3 after h2e2 h9g7 (h0g2 955).
#define EE_START_LOCK1     0x052656d5u
#define EE_H2E2_LOCK1      0x5396644fu
#define EE_H2E2_H9G7_LOCK1 0xdf3ad30du

static Board *board_from(const char *fen, const char *moves)
{
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    assert_int_equal(board_set_fen(b, fen, NULL, 0), FEN_OK);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", moves);
    for (char *t = strtok(buf, " "); t; t = strtok(NULL, " ")) {
        Move m;
        assert_int_equal(move_parse_legal(b, t, 0, &m), MOVE_TEXT_OK);
        board_make_move(b, m);
    }
    return b;
}

/// The start position's lock and those after h2e2 and after h2e2 h9g7 are the locks
/// ElephantEye's BOOK.DAT (xqbase/eleeye BOOK/BOOK.DAT, 12,081 entries) files those
/// positions under: h2e2 is its heaviest first move there, h9g7 its heaviest reply. They
/// hold only if the RC4 stream, the order of the tables and the square encoding are all
/// ElephantEye's.
static void test_locks_pinned(void **state)
{
    (void)state;
    Board *b = board_from(BOARD_START_FEN, "");
    uint32_t l0, l1, m0, m1;
    eebook_locks(b, &l0, &l1);
    eebook_mirror_locks(b, &m0, &m1);
    assert_int_equal(l1, EE_START_LOCK1);
    assert_int_equal(l0, m0); // the start position is its own mirror
    assert_int_equal(l1, m1);
    free(b);
    b = board_from(BOARD_START_FEN, "h2e2");
    eebook_locks(b, &l0, &l1);
    eebook_mirror_locks(b, &m0, &m1);
    assert_int_equal(l1 < m1 ? l1 : m1, EE_H2E2_LOCK1);
    free(b);
    b = board_from(BOARD_START_FEN, "h2e2 h9g7");
    eebook_locks(b, &l0, &l1);
    eebook_mirror_locks(b, &m0, &m1);
    assert_int_equal(l1 < m1 ? l1 : m1, EE_H2E2_H9G7_LOCK1);
    free(b);
}

/// Squares map to ElephantEye's 16x16 board (a0 = 0xc3, i9 = 0x3b, e0 = 0xc7) and back, off-
/// board squares give SQ_NONE, h2e2 is 0xa7aa, and every legal move of the start position
/// survives the round trip through the encoding and the mirror twice.
static void test_move_encoding(void **state)
{
    (void)state;
    assert_int_equal(eebook_square(SQ_A0), 0xc3);
    assert_int_equal(eebook_square(SQ_I9), 0x3b);
    assert_int_equal(eebook_square(4), 0xc7);
    for (Square s = 0; s < SQUARE_NB; s++)
        assert_int_equal(eebook_square_from(eebook_square(s)), s);
    assert_int_equal(eebook_square_from(0x00), SQ_NONE);
    assert_int_equal(eebook_square_from(0xc2), SQ_NONE);
    assert_int_equal(eebook_square_from(0xcc), SQ_NONE);
    Move m;
    assert_int_equal(move_parse("h2e2", 0, &m), MOVE_TEXT_OK);
    assert_int_equal(eebook_move(m), 0xa7aa);
    assert_int_equal(eebook_move_from(0xa7aa), m);
    assert_int_equal(eebook_move_from(0x0000), MOVE_NONE);
    Board *b = board_from(BOARD_START_FEN, "");
    MoveList list;
    movegen_legal(b, &list);
    for (int i = 0; i < list.count; i++) {
        assert_int_equal(eebook_move_from(eebook_move(list.moves[i])), list.moves[i]);
        assert_int_equal(eebook_move_mirror(eebook_move_mirror(list.moves[i])), list.moves[i]);
    }
    free(b);
}

static char dir[] = "/tmp/xq_eebook_XXXXXX";

/// A file whose size is not a multiple of 8, or whose locks are out of order, is refused
/// with a sentence naming the file; an empty file is an empty book.
static void test_read_refuses(void **state)
{
    (void)state;
    char path[256], why[512];
    snprintf(path, sizeof path, "%s/bad.dat", dir);
    FILE *f = fopen(path, "wb");
    fwrite("1234567", 1, 7, f);
    fclose(f);
    EebookEntry *e = NULL;
    size_t n = 0;
    assert_int_equal(eebook_read(path, &e, &n, why, sizeof why), EEBOOK_ERR_FORMAT);
    assert_non_null(strstr(why, "bad.dat"));
    EebookEntry two[2] = {{20, 0xa7aa, 1}, {10, 0xa7aa, 1}};
    assert_int_equal(eebook_write(path, two, 2, why, sizeof why), EEBOOK_OK);
    assert_int_equal(eebook_read(path, &e, &n, why, sizeof why), EEBOOK_ERR_FORMAT);
    assert_non_null(strstr(why, "order"));
    assert_int_equal(eebook_write(path, two, 0, why, sizeof why), EEBOOK_OK);
    assert_int_equal(eebook_read(path, &e, &n, why, sizeof why), EEBOOK_OK);
    assert_int_equal(n, 0);
    free(e);
    unlink(path);
}

/// Lines of a small book, with a transposition (two move orders to one position) and a line
/// that is the mirror of another (its moves must be merged into the same entries).
static const char *const lines[] = {
    "h2e2 h9g7 h0g2 i9h9",      "h2e2 h9g7 h0g2 i9h9", "h2e2 b9c7 h0g2",
    "b2e2 b9c7 b0c2",           "c3c4 h9g7 g3g4 b9c7", "g3g4 h9g7 c3c4",
    "h2e2 h9g7 h0g2 b9c7 g3g4", "b2e2 b9c7",           "g3g4 c6c5",
};

typedef struct {
    Move move;
    uint64_t weight;
} Expect;

/// The moves that BOOK.DAT must give for b: the move book's at b, plus (unless b is its own
/// mirror) the mirrored moves of the move book's entries at b's mirror.
static int expected(const MovebookEntry *e, size_t n, Board *b, Expect *out)
{
    int k = 0;
    size_t first = 0, c = movebook_probe(e, n, b->key, &first);
    for (size_t i = first; i < first + c; i++)
        out[k++] = (Expect){e[i].move, e[i].count};
    char fen[BOARD_FEN_MAX], mfen[BOARD_FEN_MAX];
    board_fen(b, fen, sizeof fen);
    Board *m = malloc(sizeof *m);
    assert_non_null(m);
    assert_true(bookgen_mirror_fen(fen, mfen, sizeof mfen));
    assert_int_equal(board_set_fen(m, mfen, NULL, 0), FEN_OK);
    if (m->key != b->key) {
        c = movebook_probe(e, n, m->key, &first);
        for (size_t i = first; i < first + c; i++) {
            Move mv = eebook_move_mirror(e[i].move);
            int j = 0;
            while (j < k && out[j].move != mv)
                j++;
            if (j == k)
                out[k++] = (Expect){mv, 0};
            out[j].weight += e[i].count;
        }
    }
    free(m);
    return k;
}

static int positions_checked;

/// Walks every book position from b and compares the BOOK.DAT probe with expected().
static void check_walk(const MovebookEntry *e, size_t n, const EebookEntry *dat, size_t dat_n,
                       Board *b, KeySet *seen)
{
    if (keyset_add(seen, b->key) != 1)
        return;
    Expect want[EEBOOK_PROBE_MAX];
    EebookMove got[EEBOOK_PROBE_MAX];
    bool mirrored;
    int kw = expected(e, n, b, want), kg = eebook_probe(dat, dat_n, b, got, &mirrored);
    assert_int_equal(kg, kw);
    if (kw == 0)
        return;
    positions_checked++;
    for (int i = 0; i < kw; i++) {
        int j = 0;
        while (j < kg && got[j].move != want[i].move)
            j++;
        assert_true(j < kg);
        assert_int_equal(got[j].weight, want[i].weight);
    }
    for (int i = 0; i < kg; i++) {
        board_make_move(b, got[i].move);
        check_walk(e, n, dat, dat_n, b, seen);
        board_unmake_move(b);
    }
}

/// Export then read back: every position reached through the book gives the same moves with
/// the same weights (its own and its mirror's merged), transpositions are exported once, the
/// file is sorted, and nothing the walk reaches is left out.
static void test_round_trip(void **state)
{
    (void)state;
    char xqb[256], dat[256], why[512];
    snprintf(xqb, sizeof xqb, "%s/book.xqb", dir);
    snprintf(dat, sizeof dat, "%s/BOOK.DAT", dir);
    Movebook *mb = movebook_new();
    for (size_t l = 0; l < sizeof lines / sizeof *lines; l++) {
        Board *b = board_from(BOARD_START_FEN, "");
        char buf[256];
        snprintf(buf, sizeof buf, "%s", lines[l]);
        for (char *t = strtok(buf, " "); t; t = strtok(NULL, " ")) {
            Move m;
            assert_int_equal(move_parse_legal(b, t, 0, &m), MOVE_TEXT_OK);
            assert_int_equal(movebook_add(mb, b->key, m, 0), MOVEBOOK_OK);
            board_make_move(b, m);
        }
        free(b);
    }
    assert_int_equal(movebook_write(mb, xqb, why, sizeof why), MOVEBOOK_OK);
    movebook_free(mb);
    MovebookEntry *e = NULL;
    size_t n = 0;
    assert_int_equal(movebook_read(xqb, &e, &n, why, sizeof why), MOVEBOOK_OK);
    Board *root = board_from(BOARD_START_FEN, "");
    EebookEntry *out = NULL;
    size_t out_n = 0;
    EebookExportStats st;
    assert_int_equal(eebook_from_movebook(e, n, root, &out, &out_n, &st), EEBOOK_OK);
    assert_int_equal(st.moves, n);
    assert_int_equal(st.unreached, 0);
    assert_true(out_n < n); // b2e2 and h2e2 lines share entries with their mirrors
    assert_int_equal(eebook_write(dat, out, out_n, why, sizeof why), EEBOOK_OK);
    free(out);
    EebookEntry *back = NULL;
    size_t back_n = 0;
    assert_int_equal(eebook_read(dat, &back, &back_n, why, sizeof why), EEBOOK_OK);
    assert_int_equal(back_n, out_n);
    KeySet seen;
    assert_int_equal(keyset_init(&seen, 0), 0);
    positions_checked = 0;
    check_walk(e, n, back, back_n, root, &seen);
    // Each position the export reached, and the mirrors of those that share its entries.
    assert_true((size_t)positions_checked > st.positions);
    // The start position is its own mirror: h2e2 (4 lines) and b2e2 (2) stay apart,
    // beside g3g4 (2) and c3c4 (1).
    EebookMove got[EEBOOK_PROBE_MAX];
    bool mirrored;
    int k = eebook_probe(back, back_n, root, got, &mirrored);
    assert_false(mirrored);
    assert_int_equal(k, 4);
    assert_int_equal(got[0].weight, 4);
    assert_int_equal(got[1].weight, 2);
    assert_int_equal(got[3].weight, 1);
    keyset_destroy(&seen);
    free(back);
    free(e);
    free(root);
    unlink(xqb);
    unlink(dat);
}

static int setup(void **state)
{
    (void)state;
    board_init();
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_locks_pinned),
        cmocka_unit_test(test_move_encoding),
        cmocka_unit_test(test_read_refuses),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
