// SPDX-License-Identifier: MIT
// The coordinator's book: the key set, the move book file, and the bookstore's window,
// deduplication, EPD lines and diversity counts.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bookstore.h"
#include "keyset.h"
#include "movebook.h"

/// Every key added is found, none other is, a second add reports the duplicate, key 0 works,
/// and growth keeps the table between 11.4 and 22.9 bytes per key.
static void test_keyset(void **state)
{
    (void)state;
    KeySet s;
    assert_int_equal(keyset_init(&s, 0), 0);
    for (uint64_t i = 0; i < 100000; i++)
        assert_int_equal(keyset_add(&s, i * 0x9E3779B97F4A7C15ull), 1);
    for (uint64_t i = 0; i < 100000; i++) {
        assert_true(keyset_has(&s, i * 0x9E3779B97F4A7C15ull));
        assert_false(keyset_has(&s, i * 0x9E3779B97F4A7C15ull + 1));
        assert_int_equal(keyset_add(&s, i * 0x9E3779B97F4A7C15ull), 0);
    }
    assert_int_equal(s.count, 100000);
    double per = (double)keyset_bytes(&s) / (double)s.count;
    assert_true(per >= 8 / 0.7 && per <= 16 / 0.7 + 0.01);
    keyset_destroy(&s);
}

/// A written move book reads back sorted by key then count, probes find exactly a key's
/// moves with the mean score, and a flipped byte or a truncated file is refused.
static void test_movebook_file(void **state)
{
    (void)state;
    char path[] = "/tmp/xq-test-movebook-XXXXXX", why[256];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    Movebook *b = movebook_new();
    assert_non_null(b);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(movebook_add(b, (uint64_t)(i % 37) << 40, (uint16_t)(i % 5 + 1), i % 5),
                         MOVEBOOK_OK);
    assert_int_equal(movebook_add(b, 7, 100, -10), MOVEBOOK_OK);
    assert_int_equal(movebook_add(b, 7, 100, -21), MOVEBOOK_OK);
    assert_int_equal(movebook_add(b, 7, 101, 5), MOVEBOOK_OK);
    assert_int_equal(movebook_entries(b), 37 * 5 + 2);
    assert_int_equal(movebook_write(b, path, why, sizeof why), MOVEBOOK_OK);
    movebook_free(b);
    MovebookEntry *e;
    size_t n, first;
    assert_int_equal(movebook_read(path, &e, &n, why, sizeof why), MOVEBOOK_OK);
    assert_int_equal(n, 37 * 5 + 2);
    assert_int_equal(movebook_probe(e, n, 7, &first), 2);
    assert_int_equal(e[first].move, 100);
    assert_int_equal(e[first].count, 2);
    assert_int_equal(e[first].score, -16); // -15.5 rounds away from zero
    assert_int_equal(e[first + 1].move, 101);
    assert_int_equal(movebook_probe(e, n, 8, &first), 0);
    uint32_t total = 0;
    size_t k = movebook_probe(e, n, 3ull << 40, &first);
    for (size_t i = first; i < first + k; i++)
        total += e[i].count;
    assert_int_equal(k, 5);
    assert_int_equal(total, 27 + (3 < 1000 % 37 ? 1 : 0));
    free(e);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, MOVEBOOK_HEADER_SIZE + 3, SEEK_SET);
    fputc(0x5a, f);
    fclose(f);
    assert_int_equal(movebook_read(path, &e, &n, why, sizeof why), MOVEBOOK_ERR_FORMAT);
    assert_int_equal(truncate(path, MOVEBOOK_HEADER_SIZE + 8), 0);
    assert_int_equal(movebook_read(path, &e, &n, why, sizeof why), MOVEBOOK_ERR_FORMAT);
    assert_non_null(strstr(why, "not a valid move book"));
    unlink(path);
}

static BookEntry entry(uint64_t key, int score, const uint64_t *keys, const uint16_t *moves,
                       const int32_t *scores)
{
    return (BookEntry){key,    "4k4/9/9/9/9/9/9/9/9/4K4 b - -",
                       true,   3,
                       score,  2,
                       keys,   moves,
                       scores, key ^ 0x5555,
                       false,  false};
}

/// A book of `target` positions in a fresh temporary EPD file; the path is written to path.
static Bookstore *open_store(const BookstoreConfig *cfg, char *path)
{
    snprintf(path, 64, "/tmp/xq-test-bookstore-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    Bookstore *bs;
    char why[256];
    assert_int_equal(bookstore_open(&bs, cfg, path, false, why, sizeof why), BOOKSTORE_OK);
    return bs;
}

/// With score_view = side_to_move the window applies to the mover's score: a position with
/// Black to move and Red's score -100 is Black +100, in a 60..150 window; Red's +100 with Black
/// to move is not; the histogram counts the mover's score.
static void test_side_to_move_window(void **state)
{
    (void)state;
    BookstoreConfig cfg = {10, 60, 150, false, BOOK_VIEW_SIDE_TO_MOVE, 0, 0};
    assert_true(bookstore_in_window(&cfg, -100, true));
    assert_false(bookstore_in_window(&cfg, 100, true));
    assert_true(bookstore_in_window(&cfg, 100, false));
    assert_false(bookstore_in_window(&cfg, -100, false));
    assert_int_equal(bookstore_view_score(&cfg, -100, true), 100);
    cfg.view = BOOK_VIEW_RED;
    assert_false(bookstore_in_window(&cfg, -100, true));
    cfg.view = BOOK_VIEW_SIDE_TO_MOVE;
    char path[64];
    Bookstore *bs = open_store(&cfg, path);
    uint64_t keys[2] = {1, 2};
    uint16_t moves[2] = {(uint16_t)(64 | 67 << 7), 5 | 9 << 7};
    int32_t scores[2] = {10, -3};
    BookVerdict v;
    BookEntry e = entry(20, -100, keys, moves, scores); // Black to move, Black +100
    assert_int_equal(bookstore_offer(bs, &e, &v), BOOKSTORE_OK);
    assert_int_equal(v, BOOK_ACCEPTED);
    e = entry(21, 100, keys, moves, scores);
    assert_int_equal(bookstore_offer(bs, &e, &v), BOOKSTORE_OK);
    assert_int_equal(v, BOOK_OUTSIDE);
    const BookstoreStats *st = bookstore_stats(bs);
    int bin100 = 1 + (100 + BOOKSTORE_BIN_RANGE) / BOOKSTORE_BIN_CP;
    assert_int_equal(st->hist_accepted[bin100], 1);
    assert_int_equal(st->hist_all[bin100], 1);
    bookstore_close(bs);
    unlink(path);
}

/// A position whose side to move is in check is refused (and counted), whatever its score; one
/// the caller judged outside its draw-rate window is refused as outside.
static void test_in_check_rejected(void **state)
{
    (void)state;
    BookstoreConfig cfg = {10, -60, 60, false, BOOK_VIEW_RED, 0, 0};
    char path[64];
    Bookstore *bs = open_store(&cfg, path);
    uint64_t keys[2] = {1, 2};
    uint16_t moves[2] = {(uint16_t)(64 | 67 << 7), 5 | 9 << 7};
    int32_t scores[2] = {10, -3};
    BookVerdict v;
    BookEntry e = entry(30, 0, keys, moves, scores);
    e.in_check = true;
    assert_int_equal(bookstore_offer(bs, &e, &v), BOOKSTORE_OK);
    assert_int_equal(v, BOOK_IN_CHECK);
    e.in_check = false;
    e.outside = true; // in the cp window, outside the caller's (draw-rate) window
    assert_int_equal(bookstore_offer(bs, &e, &v), BOOKSTORE_OK);
    assert_int_equal(v, BOOK_OUTSIDE);
    e.outside = false; // the same position out of check, in both windows, is fine
    assert_int_equal(bookstore_offer(bs, &e, &v), BOOKSTORE_OK);
    assert_int_equal(v, BOOK_ACCEPTED);
    assert_int_equal(bookstore_stats(bs)->in_check, 1);
    assert_int_equal(bookstore_stats(bs)->outside, 1);
    assert_int_equal(bookstore_stats(bs)->accepted, 1);
    bookstore_close(bs);
    unlink(path);
}

/// A position whose mirror is in the book, or in an excluded existing book, is refused as a
/// mirror; a symmetric position (its own mirror) is not.
static void test_mirror_rejected(void **state)
{
    (void)state;
    BookstoreConfig cfg = {10, -60, 60, false, BOOK_VIEW_RED, 0, 0};
    char path[64];
    Bookstore *bs = open_store(&cfg, path);
    uint64_t keys[2] = {1, 2};
    uint16_t moves[2] = {(uint16_t)(64 | 67 << 7), 5 | 9 << 7};
    int32_t scores[2] = {10, -3};
    BookVerdict v;
    BookEntry e = entry(40, 0, keys, moves, scores);
    e.mirror_key = 41;
    assert_int_equal(bookstore_offer(bs, &e, &v), BOOKSTORE_OK);
    assert_int_equal(v, BOOK_ACCEPTED);
    e = entry(41, 0, keys, moves, scores);
    e.mirror_key = 40;
    assert_int_equal(bookstore_offer(bs, &e, &v), BOOKSTORE_OK);
    assert_int_equal(v, BOOK_MIRROR);
    assert_int_equal(bookstore_exclude(bs, 50), BOOKSTORE_OK);
    e = entry(51, 0, keys, moves, scores);
    e.mirror_key = 50;
    assert_int_equal(bookstore_offer(bs, &e, &v), BOOKSTORE_OK);
    assert_int_equal(v, BOOK_MIRROR);
    e = entry(60, 0, keys, moves, scores);
    e.mirror_key = 60;
    assert_int_equal(bookstore_offer(bs, &e, &v), BOOKSTORE_OK);
    assert_int_equal(v, BOOK_ACCEPTED);
    assert_int_equal(bookstore_stats(bs)->mirrors, 2);
    assert_int_equal(bookstore_stats(bs)->accepted, 2);
    bookstore_close(bs);
    unlink(path);
}

/// With family_plies = 2 and family_cap = 2 a third line opening with the same two moves is
/// refused, a line differing in its second move is a new family, and families are counted.
static void test_family_cap(void **state)
{
    (void)state;
    BookstoreConfig cfg = {10, -60, 60, false, BOOK_VIEW_RED, 2, 2};
    char path[64];
    Bookstore *bs = open_store(&cfg, path);
    uint64_t keys[3] = {1, 2, 3};
    uint16_t moves[3] = {(uint16_t)(64 | 67 << 7), 5 | 9 << 7, 7 | 8 << 7};
    uint16_t other[3] = {(uint16_t)(64 | 67 << 7), 6 | 9 << 7, 7 | 8 << 7};
    int32_t scores[3] = {10, -3, 0};
    BookVerdict v;
    static const BookVerdict want[] = {BOOK_ACCEPTED, BOOK_ACCEPTED, BOOK_FAMILY};
    for (int i = 0; i < 3; i++) {
        BookEntry e = entry(70 + (uint64_t)i, 0, keys, moves, scores);
        e.path_len = 3; // the third move differs nothing: the family is the first two
        assert_int_equal(bookstore_offer(bs, &e, &v), BOOKSTORE_OK);
        assert_int_equal(v, want[i]);
    }
    BookEntry e = entry(80, 0, keys, other, scores);
    assert_int_equal(bookstore_offer(bs, &e, &v), BOOKSTORE_OK);
    assert_int_equal(v, BOOK_ACCEPTED);
    const BookstoreStats *st = bookstore_stats(bs);
    assert_int_equal(st->family_capped, 1);
    assert_int_equal(st->families, 2);
    assert_int_equal(bookstore_distinct_first_moves(st), 1);
    assert_int_equal(st->accepted, 3);
    bookstore_close(bs);
    unlink(path);
}

/// The window is applied to Red's score (either side on request); a key is accepted once,
/// never when an existing book has it, and no more once the target is reached; the EPD line
/// has ce from the side to move, the ply and the line's moves (c0); the counts add up.
static void test_bookstore(void **state)
{
    (void)state;
    char path[] = "/tmp/xq-test-bookstore-XXXXXX", why[256];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    BookstoreConfig cfg = {3, 80, 150, true, BOOK_VIEW_RED, 0, 0};
    assert_true(bookstore_in_window(&cfg, -100, false));
    assert_false(bookstore_in_window(&cfg, 20, false));
    cfg.either_side = false;
    assert_false(bookstore_in_window(&cfg, -100, false));
    cfg = (BookstoreConfig){3, -60, 60, false, BOOK_VIEW_RED, 0, 0};
    Bookstore *bs;
    assert_int_equal(bookstore_open(&bs, &cfg, path, true, why, sizeof why), BOOKSTORE_OK);
    assert_int_equal(bookstore_exclude(bs, 99), BOOKSTORE_OK);
    uint64_t keys[2] = {1, 2};
    uint16_t moves[2] = {(uint16_t)(64 | 67 << 7), 5 | 9 << 7};
    int32_t scores[2] = {10, -3};
    BookVerdict v;
    static const struct {
        uint64_t key;
        int score;
        BookVerdict want;
    } offers[] = {{10, 20, BOOK_ACCEPTED}, {10, 30, BOOK_DUPLICATE}, {99, 0, BOOK_DUPLICATE},
                  {11, 61, BOOK_OUTSIDE},  {11, -60, BOOK_ACCEPTED}, {12, 60, BOOK_ACCEPTED},
                  {13, 0, BOOK_FULL}};
    for (size_t i = 0; i < sizeof offers / sizeof offers[0]; i++) {
        BookEntry e = entry(offers[i].key, offers[i].score, keys, moves, scores);
        assert_int_equal(bookstore_offer(bs, &e, &v), BOOKSTORE_OK);
        assert_int_equal(v, offers[i].want);
    }
    assert_true(bookstore_full(bs));
    const BookstoreStats *st = bookstore_stats(bs);
    assert_int_equal(st->accepted, 3);
    assert_int_equal(st->duplicates, 2);
    assert_int_equal(st->outside, 1);
    assert_int_equal(st->existing, 1);
    assert_int_equal(st->candidates, 6);
    assert_int_equal(st->per_ply[3], 3);
    assert_int_equal(st->first_move[moves[0]], 3);
    char mv[8];
    bookstore_move_text(moves[0], mv);
    assert_string_equal(mv, "b7e7");
    assert_int_equal(bookstore_finish(bs, NULL, why, sizeof why), BOOKSTORE_OK);
    bookstore_close(bs);
    FILE *f = fopen(path, "r");
    char line[256];
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "4k4/9/9/9/9/9/9/9/9/4K4 b - - ce -20; ply 3; c0 \"b7e7 f0a1\";\n");
    int lines = 1;
    while (fgets(line, sizeof line, f))
        lines++;
    assert_int_equal(lines, 3);
    fclose(f);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyset),
        cmocka_unit_test(test_movebook_file),
        cmocka_unit_test(test_bookstore),
        cmocka_unit_test(test_side_to_move_window),
        cmocka_unit_test(test_in_check_rejected),
        cmocka_unit_test(test_mirror_rejected),
        cmocka_unit_test(test_family_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
