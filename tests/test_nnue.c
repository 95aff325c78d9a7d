// SPDX-License-Identifier: MIT
// NNUE: net files round-trip and every kind of damage is refused with its status and a
// sentence; features follow nnue.h's definition; the evaluation is symmetric under the colour
// flip; a tiny net's evaluation matches a hand computation; the incremental accumulator stack
// gives exactly the from-scratch evaluation at every node of random walks. XQ2 (king-bucketed,
// version 2) nets: the same, plus buckets and mirroring as nnue.h defines them, general moves
// refreshing their side; version 1 files still load and evaluate as before (golden numbers).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "movegen.h"
#include "nnue.h"
#include "rng.h"

static void temp_path(char *out, size_t len, const char *name)
{
    snprintf(out, len, "/tmp/xq_test_nnue_%ld_%s", (long)getpid(), name);
}

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *buf = malloc(4 << 20);
    assert_non_null(buf);
    *len = fread(buf, 1, 4 << 20, f);
    fclose(f);
    return buf;
}

static void random_net(NnueNet *net, int hidden, uint64_t seed)
{
    assert_int_equal(nnue_alloc(net, hidden), NNUE_OK);
    nnue_randomize(net, seed);
}

/// A saved net loads back identical: arrays, quantization, description, hash and id.
static void test_round_trip(void **state)
{
    (void)state;
    NnueNet a, b;
    random_net(&a, 64, 1);
    snprintf(a.description, sizeof a.description, "gen1-test-run-16"); // cut to 12 in the file
    a.out_bias = -123456;
    nnue_rehash(&a);
    char path[256], why[256] = "";
    temp_path(path, sizeof path, "rt.nnue");
    assert_int_equal(nnue_save_file(&a, path), NNUE_OK);
    assert_int_equal(nnue_load_file(&b, path, why, sizeof why), NNUE_OK);
    assert_int_equal(b.hidden, 64);
    assert_int_equal(b.qa, NNUE_QA);
    assert_int_equal(b.qb, NNUE_QB);
    assert_int_equal(b.scale, NNUE_SCALE);
    assert_int_equal(b.out_bias, -123456);
    assert_string_equal(b.description, "gen1-test-ru");
    assert_true(a.hash == b.hash);
    assert_memory_equal(a.ft_weight, b.ft_weight, (size_t)NNUE_FEATURES * 64 * 2);
    assert_memory_equal(a.ft_bias, b.ft_bias, 64 * 2);
    assert_memory_equal(a.out_weight, b.out_weight, 2 * 64 * 2);
    assert_true(((uintptr_t)b.ft_weight & 63) == 0 && ((uintptr_t)b.out_weight & 63) == 0);
    char ida[NNUE_ID_MAX], idb[NNUE_ID_MAX];
    nnue_id(&a, ida);
    nnue_id(&b, idb);
    assert_int_equal(strlen(ida), 12);
    assert_string_equal(ida, idb);
    // The file's size is the header plus the payload the format defines.
    size_t len;
    uint8_t *bytes = read_all(path, &len);
    assert_int_equal(len, NNUE_HEADER + 2 * (NNUE_FEATURES * 64 + 3 * 64) + 4);
    free(bytes);
    unlink(path);
    nnue_free(&a);
    nnue_free(&b);
    nnue_free(&b); // a freed net frees again as a no-op
}

static uint32_t crc32_ref(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
    }
    return ~c;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/// Loads a damaged copy and checks the status and that the reason is a sentence.
static void expect_refused(const uint8_t *bytes, size_t len, NnueStatus want, const char *word)
{
    NnueNet net;
    char why[256] = "";
    NnueStatus st = nnue_load_memory(&net, bytes, len, why, sizeof why);
    if (st != want)
        fail_msg("status %d (%s), want %d: %s", st, nnue_strerror(st), want, why);
    if (!strstr(why, word))
        fail_msg("reason '%s' does not name '%s'", why, word);
    assert_null(net.ft_weight);
    nnue_free(&net);
}

/// Each corruption is refused with its own status and a reason naming it: a flipped payload
/// byte (content hash), truncation, a trailing byte, bad magic, a header byte changed without
/// its CRC, another version, feature count or hidden size (with a valid CRC), a missing file.
static void test_corruption_refused(void **state)
{
    (void)state;
    NnueNet a;
    random_net(&a, 32, 2);
    char path[256];
    temp_path(path, sizeof path, "bad.nnue");
    assert_int_equal(nnue_save_file(&a, path), NNUE_OK);
    size_t len;
    uint8_t *good = read_all(path, &len);
    uint8_t *b = malloc(len + 1);
    assert_non_null(b);
    unlink(path);

    NnueNet ok;
    assert_int_equal(nnue_load_memory(&ok, good, len, NULL, 0), NNUE_OK);
    nnue_free(&ok);
    // The header CRC is zlib's CRC-32 of bytes 0..59.
    assert_int_equal(crc32_ref(good, 60),
                     good[60] | good[61] << 8 | good[62] << 16 | (uint32_t)good[63] << 24);

    memcpy(b, good, len);
    b[NNUE_HEADER + 1000] ^= 0x10;
    expect_refused(b, len, NNUE_ERR_HASH, "content hash");
    memcpy(b, good, len);
    b[len - 1] ^= 1; // the output bias is covered too
    expect_refused(b, len, NNUE_ERR_HASH, "content hash");
    expect_refused(good, len - 1, NNUE_ERR_FORMAT, "truncated");
    expect_refused(good, 10, NNUE_ERR_FORMAT, "shorter than a net header");
    memcpy(b, good, len);
    b[len] = 0;
    expect_refused(b, len + 1, NNUE_ERR_FORMAT, "after the");
    memcpy(b, good, len);
    b[0] = 'Y';
    expect_refused(b, len, NNUE_ERR_FORMAT, "magic");
    memcpy(b, good, len);
    b[50] ^= 0x20; // description, CRC left as it was
    expect_refused(b, len, NNUE_ERR_FORMAT, "CRC");

    struct {
        int offset;
        uint32_t value;
        NnueStatus st;
        const char *word;
    } fields[] = {
        {8, 2, NNUE_ERR_VERSION, "version 2 (XQ2) has 7560"},
        {8, 3, NNUE_ERR_VERSION, "version 3, this engine reads versions 1 (XQ1) and 2 (XQ2)"},
        {8, 0, NNUE_ERR_VERSION, "version 0"},
        {12, 1000, NNUE_ERR_VERSION, "features"},
        {16, 48, NNUE_ERR_FORMAT, "multiple of 32"},
        {16, 2048, NNUE_ERR_FORMAT, "multiple of 32"},
        {16, 64, NNUE_ERR_FORMAT, "payload bytes"},
        {20, 0, NNUE_ERR_FORMAT, "quantization"},
        {32, 12, NNUE_ERR_FORMAT, "payload bytes"}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        memcpy(b, good, len);
        put32(b + fields[i].offset, fields[i].value);
        put32(b + 60, crc32_ref(b, 60));
        expect_refused(b, len, fields[i].st, fields[i].word);
    }

    NnueNet net;
    char why[256] = "";
    assert_int_equal(nnue_load_file(&net, "/nonexistent/x.nnue", why, sizeof why), NNUE_ERR_IO);
    assert_non_null(strstr(why, "/nonexistent/x.nnue"));
    for (int s = 0; s < NNUE_STATUS_NB; s++)
        assert_true(strlen(nnue_strerror((NnueStatus)s)) > 0);
    free(b);
    free(good);
    nnue_free(&a);
}

/// nnue_alloc refuses hidden sizes the format cannot hold.
static void test_alloc_sizes(void **state)
{
    (void)state;
    NnueNet n;
    assert_int_equal(nnue_alloc(&n, 0), NNUE_ERR_FORMAT);
    assert_int_equal(nnue_alloc(&n, 40), NNUE_ERR_FORMAT);
    assert_int_equal(nnue_alloc(&n, NNUE_HIDDEN_MAX + 32), NNUE_ERR_FORMAT);
    assert_int_equal(nnue_alloc(&n, NNUE_HIDDEN_MAX), NNUE_OK);
    nnue_free(&n);
}

/// Features as nnue.h defines them: own pieces first, Black's view with ranks flipped.
static void test_feature_definition(void **state)
{
    (void)state;
    assert_int_equal(nnue_feature(RED, RED_KING, sq_make(4, 0)), 4);
    assert_int_equal(nnue_feature(BLACK, RED_KING, sq_make(4, 0)), 7 * 90 + sq_make(4, 9));
    assert_int_equal(nnue_feature(BLACK, BLACK_KING, sq_make(3, 9)), 3);
    assert_int_equal(nnue_feature(RED, BLACK_SOLDIER, sq_make(8, 6)), (7 + 6) * 90 + sq_make(8, 6));
    assert_int_equal(nnue_feature(BLACK, BLACK_CANNON, sq_make(1, 7)), 5 * 90 + sq_make(1, 2));
    // The start position looks the same from both sides: the same 32 distinct features.
    Board b;
    assert_int_equal(board_set_fen(&b, BOARD_START_FEN, NULL, 0), FEN_OK);
    uint16_t fr[32], fb[32];
    assert_int_equal(nnue_features(&b, RED, fr), 32);
    assert_int_equal(nnue_features(&b, BLACK, fb), 32);
    bool seen_r[NNUE_FEATURES] = {0}, seen_b[NNUE_FEATURES] = {0};
    for (int i = 0; i < 32; i++) {
        assert_true(fr[i] < NNUE_FEATURES && !seen_r[fr[i]]);
        seen_r[fr[i]] = true;
        seen_b[fb[i]] = true;
    }
    assert_memory_equal(seen_r, seen_b, sizeof seen_r);
}

/// The colour-flipped FEN of b: ranks mirrored, colours swapped, the other side to move.
static void flip_fen(const Board *b, char *fen, size_t len)
{
    char buf[BOARD_FEN_MAX];
    size_t n = 0;
    for (int r = RANK_NB - 1; r >= 0; r--) {
        int empty = 0;
        for (int f = 0; f < FILE_NB; f++) {
            Piece p = board_piece(b, sq_make(f, 9 - r));
            if (p == NO_PIECE) {
                empty++;
                continue;
            }
            if (empty)
                buf[n++] = (char)('0' + empty), empty = 0;
            char c = " KABNRCP"[piece_type(p)];
            buf[n++] = piece_color(p) == RED ? (char)(c + 32) : c;
        }
        if (empty)
            buf[n++] = (char)('0' + empty);
        if (r)
            buf[n++] = '/';
    }
    buf[n] = '\0';
    snprintf(fen, len, "%s %c", buf, b->side == RED ? 'b' : 'w');
}

/// The colour-flipped position (ranks mirrored, colours and side to move swapped) has the
/// same evaluation for a random net, along random games.
static void test_colour_flip_symmetry(void **state)
{
    (void)state;
    NnueNet net;
    random_net(&net, 64, 3);
    Board *b = malloc(sizeof *b), *t = malloc(sizeof *t);
    assert_true(b && t);
    Rng rng;
    rng_seed(&rng, 7);
    int nonzero = 0;
    for (int g = 0; g < 6; g++) {
        assert_int_equal(board_set_fen(b, BOARD_START_FEN, NULL, 0), FEN_OK);
        for (int ply = 0; ply < 120; ply++) {
            char fen[BOARD_FEN_MAX + 8], why[160];
            flip_fen(b, fen, sizeof fen);
            if (board_set_fen(t, fen, why, sizeof why) != FEN_OK)
                fail_msg("flipped FEN %s: %s", fen, why);
            int v = nnue_evaluate_full(&net, b);
            if (nnue_evaluate_full(&net, t) != v)
                fail_msg("eval %d, flipped %d: %s", v, nnue_evaluate_full(&net, t), fen);
            nonzero += v != 0;
            MoveList l;
            if (movegen_legal(b, &l) == 0)
                break;
            board_make_move(b, l.moves[rng_below(&rng, (uint32_t)l.count)]);
        }
    }
    assert_true(nonzero > 100);
    free(b);
    free(t);
    nnue_free(&net);
}

/// A 32-unit net with a handful of nonzero weights, evaluated by hand (see the comments).
static void test_hand_computed(void **state)
{
    (void)state;
    NnueNet net;
    assert_int_equal(nnue_alloc(&net, 32), NNUE_OK);
    // Red general e0 (Red's view: feature 4, Black's: 715); Black general d9 (714 and 3).
    net.ft_weight[4 * 32 + 0] = 100;
    net.ft_weight[714 * 32 + 0] = 50;
    net.ft_weight[3 * 32 + 1] = 300;
    net.ft_weight[715 * 32 + 1] = -20;
    net.ft_bias[0] = 10;
    net.out_weight[0] = 64;
    net.out_weight[1] = 2;
    net.out_weight[32] = -64;
    net.out_weight[33] = 3;
    net.out_bias = 1000;
    nnue_rehash(&net);
    Board b;
    assert_int_equal(board_set_fen(&b, "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1", NULL, 0), FEN_OK);
    // Red: acc[0] = 10 + 100 + 50 = 160, acc[1] = 0; Black: acc[0] = 10, acc[1] = 280 -> 255.
    // out = 160 * 64 + 10 * -64 + 255 * 3 + 1000 = 11365; 11365 * 400 / (255 * 64) = 278.55
    assert_int_equal(nnue_evaluate_full(&net, &b), 278);
    // Black to move: 10 * 64 + 255 * 2 + 160 * -64 + 1000 = -8090 -> -198.28, toward zero.
    assert_int_equal(board_set_fen(&b, "3k5/9/9/9/9/9/9/9/9/4K4 b - - 0 1", NULL, 0), FEN_OK);
    assert_int_equal(nnue_evaluate_full(&net, &b), -198);
    NnueAccumulator *acc = aligned_alloc(64, sizeof *acc);
    assert_non_null(acc);
    nnue_accumulator_refresh(&net, &b, acc);
    assert_int_equal(nnue_accumulator_evaluate(&net, acc, BLACK), -198);
    // A huge output stays inside the non-mate range.
    net.out_bias = 2000000000;
    assert_int_equal(nnue_evaluate_full(&net, &b), NNUE_EVAL_MAX);
    net.out_bias = -2000000000;
    assert_int_equal(nnue_evaluate_full(&net, &b), -NNUE_EVAL_MAX);
    free(acc);
    nnue_free(&net);
}

/// Random walks of makes, unmakes and null moves: the stack's evaluation equals the full one
/// at every node (also for a net whose sums wrap, which the two paths must wrap alike).
static int walk_from(const NnueNet *net, const char *fen, uint64_t seed, int steps)
{
    int general_moves = 0;
    Board *b = malloc(sizeof *b);
    NnueStack *st = aligned_alloc(64, sizeof *st);
    assert_true(b && st);
    Rng rng;
    rng_seed(&rng, seed);
    assert_int_equal(board_set_fen(b, fen, NULL, 0), FEN_OK);
    // A few game moves before the root, as a search's board has.
    for (int i = 0; i < 6; i++) {
        MoveList l;
        movegen_legal(b, &l);
        board_make_move(b, l.moves[rng_below(&rng, (uint32_t)l.count)]);
    }
    int root = b->hist_len;
    nnue_stack_reset(st, net, root);
    for (int s = 0; s < steps; s++) {
        int full = nnue_evaluate_full(net, b), inc = nnue_stack_evaluate(st, b);
        if (full != inc)
            fail_msg("step %d, depth %d: incremental %d, full %d", s, b->hist_len - root, inc,
                     full);
        uint32_t r = rng_below(&rng, 100);
        MoveList l;
        int n = movegen_legal(b, &l);
        if ((r < 35 || n == 0 || b->hist_len - root > 40) && b->hist_len > root) {
            if (b->hist[b->hist_len - 1].move == MOVE_NONE)
                board_unmake_null(b);
            else
                board_unmake_move(b);
        } else if (r < 42 && !b->in_check) {
            board_make_null(b);
        } else if (n > 0) {
            Move m = l.moves[rng_below(&rng, (uint32_t)n)];
            general_moves += piece_type(board_piece(b, move_from(m))) == KING;
            board_make_move(b, m);
        }
    }
    free(st);
    free(b);
    return general_moves;
}

static void walk(const NnueNet *net, uint64_t seed, int steps)
{
    walk_from(net, BOARD_START_FEN, seed, steps);
}

static void test_incremental_equals_full(void **state)
{
    (void)state;
    NnueNet net;
    random_net(&net, 64, 4);
    walk(&net, 11, 20000);
    nnue_free(&net);
    random_net(&net, 256, 5);
    walk(&net, 12, 5000);
    // Full-range weights: accumulators wrap modulo 2^16, output sums modulo 2^32.
    Rng rng;
    rng_seed(&rng, 6);
    for (size_t i = 0; i < (size_t)NNUE_FEATURES * 256; i++)
        net.ft_weight[i] = (int16_t)rng_next(&rng);
    for (int i = 0; i < 512; i++)
        net.out_weight[i] = (int16_t)rng_next(&rng);
    net.qa = 32767;
    walk(&net, 13, 3000);
    nnue_free(&net);
}

/// XQ2 buckets: the general's palace point in its side's view, files d and f one column (f read
/// mirrored), 6 buckets; features offset by bucket * 1260 over XQ1's.
static void test_xq2_features(void **state)
{
    (void)state;
    bool mirror;
    assert_int_equal(nnue_bucket(RED, sq_make(3, 0), &mirror), 0);
    assert_false(mirror);
    assert_int_equal(nnue_bucket(RED, sq_make(4, 0), &mirror), 1);
    assert_false(mirror);
    assert_int_equal(nnue_bucket(RED, sq_make(5, 0), &mirror), 0);
    assert_true(mirror);
    assert_int_equal(nnue_bucket(RED, sq_make(4, 2), &mirror), 5);
    assert_int_equal(nnue_bucket(BLACK, sq_make(4, 9), &mirror), 1); // its own back rank
    assert_false(mirror);
    assert_int_equal(nnue_bucket(BLACK, sq_make(5, 8), &mirror), 2);
    assert_true(mirror);
    // Red general e1 (bucket 3): a Red chariot on a0 is XQ1's feature, offset by 3 * 1260.
    assert_int_equal(nnue_feature_xq2(RED, sq_make(4, 1), RED_CHARIOT, sq_make(0, 0)),
                     3 * NNUE_FEATURES + nnue_feature(RED, RED_CHARIOT, sq_make(0, 0)));
    // General f0: read mirrored, the chariot on a0 is seen on i0.
    assert_int_equal(nnue_feature_xq2(RED, sq_make(5, 0), RED_CHARIOT, sq_make(0, 0)),
                     nnue_feature(RED, RED_CHARIOT, sq_make(8, 0)));
    // A position and its left-right mirror give Red the same features when Red's general
    // stands on d / f (the mirror's point), and every index is inside the XQ2 range.
    Board a, m;
    assert_int_equal(board_set_fen(&a, "4k4/9/2n6/9/9/2P6/9/9/4A4/1R1K5 w - - 0 1", NULL, 0),
                     FEN_OK);
    assert_int_equal(board_set_fen(&m, "4k4/9/6n2/9/9/6P2/9/9/4A4/5K1R1 w - - 0 1", NULL, 0),
                     FEN_OK);
    uint16_t fa[32], fm[32];
    int na = nnue_features_version(NNUE_VERSION_XQ2, &a, RED, fa);
    int nm = nnue_features_version(NNUE_VERSION_XQ2, &m, RED, fm);
    assert_int_equal(na, 6);
    assert_int_equal(nm, 6);
    bool seen[NNUE_FEATURES_XQ2] = {0};
    for (int i = 0; i < na; i++) {
        assert_true(fa[i] < NNUE_BUCKETS * NNUE_FEATURES);
        seen[fa[i]] = true;
    }
    for (int i = 0; i < nm; i++)
        assert_true(seen[fm[i]]);
    // Version 1 asks for XQ1's features.
    assert_int_equal(nnue_features_version(NNUE_VERSION, &a, RED, fa), 6);
    for (int i = 0; i < na; i++)
        assert_true(fa[i] < NNUE_FEATURES);
    assert_int_equal(nnue_version_features(NNUE_VERSION_XQ2), 7560);
    assert_int_equal(nnue_version_features(3), 0);
    NnueNet n;
    assert_int_equal(nnue_alloc_version(&n, 3, 64), NNUE_ERR_VERSION);
}

static void random_net_xq2(NnueNet *net, int hidden, uint64_t seed)
{
    assert_int_equal(nnue_alloc_version(net, NNUE_VERSION_XQ2, hidden), NNUE_OK);
    nnue_randomize(net, seed);
    assert_int_equal(net->version, NNUE_VERSION_XQ2);
    assert_int_equal(net->features, NNUE_FEATURES_XQ2);
}

/// An XQ2 net: the stack (AVX2 where the build has it, each general move refreshing its own
/// side only) equals nnue_evaluate_full (plain C) at every node of random walks, from the
/// start and from an ending where the generals move often, also with sums that wrap.
static void test_xq2_incremental_equals_full(void **state)
{
    (void)state;
    NnueNet net;
    random_net_xq2(&net, 64, 14);
    assert_true(walk_from(&net, BOARD_START_FEN, 21, 20000) > 50);
    assert_true(walk_from(&net, "3ak4/4a4/4b4/9/9/9/2p3P2/4B4/4A4/3AK4 w - - 0 1", 22, 8000) > 500);
    nnue_free(&net);
    random_net_xq2(&net, 256, 15);
    walk(&net, 23, 4000);
    Rng rng;
    rng_seed(&rng, 16);
    for (size_t i = 0; i < (size_t)NNUE_FEATURES_XQ2 * 256; i++)
        net.ft_weight[i] = (int16_t)rng_next(&rng);
    for (int i = 0; i < 512; i++)
        net.out_weight[i] = (int16_t)rng_next(&rng);
    net.qa = 32767;
    walk_from(&net, "3ak4/4a4/4b4/9/9/9/2p3P2/4B4/4A4/3AK4 w - - 0 1", 24, 3000);
    nnue_free(&net);
}

/// A version-2 net saves and loads back identical (version, features, arrays, hash), its file
/// is the header plus 7560 columns; a version-1 loader field stays version 1.
static void test_xq2_round_trip(void **state)
{
    (void)state;
    NnueNet a, b;
    random_net_xq2(&a, 64, 8);
    char path[256], why[256] = "";
    temp_path(path, sizeof path, "xq2.nnue");
    assert_int_equal(nnue_save_file(&a, path), NNUE_OK);
    assert_int_equal(nnue_load_file(&b, path, why, sizeof why), NNUE_OK);
    assert_int_equal(b.version, NNUE_VERSION_XQ2);
    assert_int_equal(b.features, NNUE_FEATURES_XQ2);
    assert_int_equal(b.hidden, 64);
    assert_true(a.hash == b.hash);
    assert_memory_equal(a.ft_weight, b.ft_weight, (size_t)NNUE_FEATURES_XQ2 * 64 * 2);
    assert_memory_equal(a.out_weight, b.out_weight, 2 * 64 * 2);
    size_t len;
    uint8_t *bytes = read_all(path, &len);
    assert_int_equal(len, NNUE_HEADER + 2 * (NNUE_FEATURES_XQ2 * 64 + 3 * 64) + 4);
    assert_int_equal(bytes[8], 2);
    assert_int_equal(bytes[12] | bytes[13] << 8, NNUE_FEATURES_XQ2);
    // The header's feature count must be XQ2's: 1260 under version 2 is refused.
    put32(bytes + 12, NNUE_FEATURES);
    put32(bytes + 60, crc32_ref(bytes, 60));
    expect_refused(bytes, len, NNUE_ERR_VERSION, "1260 input features");
    Board pos;
    assert_int_equal(board_set_fen(&pos, BOARD_START_FEN, NULL, 0), FEN_OK);
    assert_int_equal(nnue_evaluate_full(&a, &pos), nnue_evaluate_full(&b, &pos));
    // A net whose version and feature count disagree is not written.
    b.features = NNUE_FEATURES;
    assert_int_equal(nnue_save_file(&b, path), NNUE_ERR_VERSION);
    b.features = NNUE_FEATURES_XQ2;
    free(bytes);
    unlink(path);
    nnue_free(&a);
    nnue_free(&b);
}

/// Version 1 as before the XQ2 format: a random net of seed 3 has the id and the evaluations
/// along a fixed random game that the engine gave before (golden numbers from that build),
/// from memory and after a save and load.
static void test_xq1_unchanged(void **state)
{
    (void)state;
    NnueNet a, b;
    random_net(&a, 64, 3);
    assert_int_equal(a.version, NNUE_VERSION);
    assert_int_equal(a.features, NNUE_FEATURES);
    char path[256], why[256] = "", id[NNUE_ID_MAX];
    temp_path(path, sizeof path, "xq1.nnue");
    assert_int_equal(nnue_save_file(&a, path), NNUE_OK);
    assert_int_equal(nnue_load_file(&b, path, why, sizeof why), NNUE_OK);
    size_t len;
    uint8_t *bytes = read_all(path, &len);
    assert_int_equal(bytes[8], 1);
    assert_int_equal(bytes[12] | bytes[13] << 8, NNUE_FEATURES);
    free(bytes);
    unlink(path);
    assert_int_equal(b.version, NNUE_VERSION);
    for (int k = 0; k < 2; k++) {
        const NnueNet *n = k ? &b : &a;
        nnue_id(n, id);
        assert_string_equal(id, "169654b01ace");
        Board *pos = malloc(sizeof *pos);
        assert_non_null(pos);
        assert_int_equal(board_set_fen(pos, BOARD_START_FEN, NULL, 0), FEN_OK);
        Rng rng;
        rng_seed(&rng, 21);
        long sum = 0, wsum = 0;
        for (int ply = 0; ply < 150; ply++) {
            int v = nnue_evaluate_full(n, pos);
            sum += v;
            wsum += (long)(ply + 1) * v;
            MoveList l;
            if (movegen_legal(pos, &l) == 0)
                break;
            board_make_move(pos, l.moves[rng_below(&rng, (uint32_t)l.count)]);
        }
        assert_int_equal(sum, -34774);
        assert_int_equal(wsum, -2298496);
        free(pos);
    }
    nnue_free(&a);
    nnue_free(&b);
}

/// The embedded default net, when the build has one, is a checked net returned once and
/// for all (the same object every call); without one, NULL.
static void test_default_net(void **state)
{
    (void)state;
    const NnueNet *d = nnue_default();
    assert_ptr_equal(d, nnue_default());
    if (!d)
        return;
    assert_true(d->hidden >= 32 && d->hidden % 32 == 0 && d->hidden <= NNUE_HIDDEN_MAX);
    assert_true(d->version == NNUE_VERSION || d->version == NNUE_VERSION_XQ2);
    assert_int_equal(d->features, nnue_version_features(d->version));
    char id[NNUE_ID_MAX];
    nnue_id(d, id);
    assert_int_equal(strlen(id), 12);
    Board b;
    assert_int_equal(board_set_fen(&b, BOARD_START_FEN, NULL, 0), FEN_OK);
    int v = nnue_evaluate_full(d, &b);
    assert_true(v >= -NNUE_EVAL_MAX && v <= NNUE_EVAL_MAX);
}

int main(void)
{
    board_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_corruption_refused),
        cmocka_unit_test(test_alloc_sizes),
        cmocka_unit_test(test_feature_definition),
        cmocka_unit_test(test_colour_flip_symmetry),
        cmocka_unit_test(test_hand_computed),
        cmocka_unit_test(test_incremental_equals_full),
        cmocka_unit_test(test_default_net),
        cmocka_unit_test(test_xq2_features),
        cmocka_unit_test(test_xq2_incremental_equals_full),
        cmocka_unit_test(test_xq2_round_trip),
        cmocka_unit_test(test_xq1_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
