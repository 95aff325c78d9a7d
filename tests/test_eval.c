// SPDX-License-Identifier: MIT
// Evaluation and weights: the trace reproduces the evaluation exactly from the weights (the
// linearity the Texel tuner relies on), the evaluation is symmetric under colour flip and
// left-right mirror, each positional term counts its feature as documented in params.def, and
// weight files round-trip and reject bad lines by line number.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "eval.h"
#include "movegen.h"
#include "rng.h"

/// Plays random games and calls fn on every position reached, with weights w.
static void random_positions(void (*fn)(Board *b, const Weights *w), const Weights *w, int games)
{
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    Rng rng;
    rng_seed(&rng, 99);
    for (int g = 0; g < games; g++) {
        assert_int_equal(board_set_fen(b, BOARD_START_FEN, NULL, 0), FEN_OK);
        for (int ply = 0; ply < 160; ply++) {
            fn(b, w);
            MoveList l;
            if (movegen_legal(b, &l) == 0)
                break;
            board_make_move(b, l.moves[rng_below(&rng, (uint32_t)l.count)]);
        }
    }
    free(b);
}

static void check_trace(Board *b, const Weights *w)
{
    EvalTrace t;
    int v = eval_trace(b, w, &t);
    assert_int_equal(v, eval_evaluate(b, w));
    long mg = 0, eg = 0;
    for (int i = 0; i < PARAM_NB; i++) {
        if (eval_param_is_mg(i))
            mg += (long)t.coef[i] * w->v[i];
        else
            eg += (long)t.coef[i] * w->v[i];
    }
    long red = (mg * t.phase + eg * (EVAL_PHASE_MAX - t.phase)) / EVAL_PHASE_MAX;
    assert_int_equal(b->side == RED ? red : -red, v);
}

/// Every weight, also those whose default is 0, set to a value of -100..100 (nonzero).
static void weights_random(Weights *w, uint64_t seed)
{
    Rng rng;
    rng_seed(&rng, seed);
    for (int i = 0; i < PARAM_NB; i++) {
        int v = (int)rng_below(&rng, 200) - 100;
        w->v[i] = v >= 0 ? v + 1 : v;
    }
}

/// The trace's coefficients times the weights give back the evaluation exactly, with the
/// default weights and with every weight nonzero.
static void test_trace_is_linear(void **state)
{
    (void)state;
    Weights w;
    weights_default(&w);
    random_positions(check_trace, &w, 20);
    weights_random(&w, 7);
    random_positions(check_trace, &w, 20);
}

/// Builds the FEN of b with colours swapped and the board turned upside down (rank r ->
/// 9 - r), or mirrored left-right (file f -> 8 - f).
static void transform(const Board *b, bool flip_colours, char *fen, size_t len)
{
    char buf[BOARD_FEN_MAX];
    size_t n = 0;
    for (int r = RANK_NB - 1; r >= 0; r--) {
        int empty = 0;
        for (int f = 0; f < FILE_NB; f++) {
            int sr = flip_colours ? 9 - r : r, sf = flip_colours ? f : 8 - f;
            Piece p = board_piece(b, sq_make(sf, sr));
            if (p == NO_PIECE) {
                empty++;
                continue;
            }
            if (empty)
                buf[n++] = (char)('0' + empty), empty = 0;
            char c = " KABNRCP"[piece_type(p)];
            bool black = piece_color(p) == BLACK;
            if (flip_colours)
                black = !black;
            buf[n++] = black ? (char)(c + 32) : c;
        }
        if (empty)
            buf[n++] = (char)('0' + empty);
        if (r)
            buf[n++] = '/';
    }
    buf[n] = '\0';
    Color side = flip_colours ? (Color)(b->side ^ 1) : b->side;
    snprintf(fen, len, "%s %c", buf, side == RED ? 'w' : 'b');
}

static void check_symmetry(Board *b, const Weights *w)
{
    Board *t = malloc(sizeof *t);
    assert_non_null(t);
    char fen[BOARD_FEN_MAX + 8];
    int v = eval_evaluate(b, w);
    for (int k = 0; k < 2; k++) {
        transform(b, k == 0, fen, sizeof fen);
        char why[160];
        if (board_set_fen(t, fen, why, sizeof why) != FEN_OK)
            fail_msg("transformed FEN %s: %s", fen, why);
        if (eval_evaluate(t, w) != v)
            fail_msg("eval %d, transformed (%s) %d: %s", v, k ? "mirror" : "colours",
                     eval_evaluate(t, w), fen);
    }
    free(t);
}

/// Swapping the colours (board turned around, other side to move) and mirroring left-right
/// leave the side-to-move evaluation unchanged, with the default weights and with every
/// weight nonzero (so terms whose default is 0 are checked too).
static void test_symmetry(void **state)
{
    (void)state;
    Weights w;
    weights_default(&w);
    random_positions(check_symmetry, &w, 10);
    weights_random(&w, 11);
    random_positions(check_symmetry, &w, 10);
}

/// Checks one weight's feature in a position: the trace's coefficient (Red minus Black) is
/// count, and with every other weight 0 and this one EVAL_PHASE_MAX the evaluation from Red's
/// side is count times the phase blend (phase for _mg weights, EVAL_PHASE_MAX - phase for _eg).
static void check_term(const char *fen, const char *name, int count)
{
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    char why[160];
    if (board_set_fen(b, fen, why, sizeof why) != FEN_OK)
        fail_msg("%s: %s", fen, why);
    int id = params_find(name);
    assert_true(id >= 0);
    Weights w;
    weights_default(&w);
    EvalTrace t;
    eval_trace(b, &w, &t);
    if (t.coef[id] != count)
        fail_msg("%s: count %d, expected %d in %s", name, t.coef[id], count, fen);
    memset(&w, 0, sizeof w);
    w.v[id] = EVAL_PHASE_MAX;
    int red = b->side == RED ? eval_evaluate(b, &w) : -eval_evaluate(b, &w);
    int blend = eval_param_is_mg(id) ? t.phase : EVAL_PHASE_MAX - t.phase;
    assert_true(t.phase > 0 && t.phase < EVAL_PHASE_MAX);
    if (red != count * blend)
        fail_msg("%s: eval %d, expected %d x %d in %s", name, red, count, blend, fen);
    free(b);
}

/// Each added term fires with a known count (Red's features minus Black's) in a position
/// built for it, and adds exactly weight x count x phase blend to the evaluation.
static void test_term_counts(void **state)
{
    (void)state;
    static const struct {
        const char *fen, *name;
        int count;
    } cases[] = {
        // Red cannons on a9 and i9, Black's back rank.
        {"C2k4C/9/9/9/9/9/9/9/9/4K4 w", "cannon_bottom_mg", 2},
        {"C2k4C/9/9/9/9/9/9/9/9/4K4 w", "cannon_bottom_eg", 2},
        // Red cannon e2; Black's horse e8 in front of its general e9, soldier e6 between.
        {"4k4/4n4/9/4p4/9/9/9/4C4/9/3K5 w", "cannon_central_horse_mg", 1},
        {"4k4/4n4/9/4p4/9/9/9/4C4/9/3K5 w", "cannon_central_horse_eg", 1},
        // The horse alone between: a check, still counted; a horse not next to the general not.
        {"4k4/4n4/9/9/9/9/9/4C4/9/3K5 b", "cannon_central_horse_mg", 1},
        {"4k4/9/4n4/9/9/9/9/4C4/9/3K5 b", "cannon_central_horse_mg", 0},
        // Red has both advisors and both elephants, Black none.
        {"3k5/9/9/9/9/9/9/9/4N4/2BAKAB2 w", "guard_full_mg", 1},
        {"3k5/9/9/9/9/9/9/9/4N4/2BAKAB2 w", "guard_full_eg", 1},
        // Red lacks one advisor and both elephants; Black's horse c3 and chariot a2 crossed.
        {"2bakab2/9/9/9/9/9/2n6/r8/4A4/4K4 w", "advisor_missing_attack_mg", 2},
        {"2bakab2/9/9/9/9/9/2n6/r8/4A4/4K4 w", "advisor_missing_attack_eg", 2},
        {"2bakab2/9/9/9/9/9/2n6/r8/4A4/4K4 w", "elephant_missing_attack_mg", 4},
        {"2bakab2/9/9/9/9/9/2n6/r8/4A4/4K4 w", "elephant_missing_attack_eg", 4},
        {"2bakab2/9/9/9/9/9/2n6/r8/4A4/4K4 w", "guard_full_mg", -1},
        // Black's chariot c3, cannon d3 and horse g2 in Red's palace zone: three pairs.
        {"5k3/9/9/9/9/9/2rc5/6n2/9/4K4 w", "attacker_pairs_mg", 3},
        // Two crossed Red soldiers, Black without advisors.
        {"5k3/9/9/2P6/6P2/9/9/9/4N4/3K5 w", "soldier_vs_advisor_mg", 4},
        {"5k3/9/9/2P6/6P2/9/9/9/4N4/3K5 w", "soldier_vs_advisor_eg", 4},
        // Red horses a3 and i5, Black horse a7.
        {"5k3/9/n8/9/8N/9/N8/9/9/4K4 w", "horse_rim_mg", 1},
        {"5k3/9/n8/9/8N/9/N8/9/9/4K4 w", "horse_rim_eg", 1},
        // Red chariots a0 and c1 face Black soldiers a5 and c3; Black's i8 faces Red's i6.
        {"4k4/8r/9/8P/p8/9/2p6/9/2R6/R2K5 w", "chariot_half_open_mg", 1},
        {"4k4/8r/9/8P/p8/9/2p6/9/2R6/R2K5 w", "chariot_half_open_eg", 1},
        {"4k4/8r/9/8P/p8/9/2p6/9/2R6/R2K5 w", "chariot_open_file_mg", 0},
        // Red chariots a9 and h8, Black's a1.
        {"R2ak4/7R1/9/9/9/9/9/9/r8/3K5 w", "chariot_back_ranks_mg", 1},
        {"R2ak4/7R1/9/9/9/9/9/9/r8/3K5 w", "chariot_back_ranks_eg", 1},
        // Red soldier pairs d7-e7 (deep) and a5-b5.
        {"5k3/9/3PP4/9/PP7/9/9/9/4N4/3K5 w", "soldier_connected_deep_mg", 1},
        {"5k3/9/3PP4/9/PP7/9/9/9/4N4/3K5 w", "soldier_connected_deep_eg", 1},
        {"5k3/9/3PP4/9/PP7/9/9/9/4N4/3K5 w", "soldier_connected_mg", 2},
        // Red horse e4 reaches 8 points, Black's a9 2.
        {"n4k3/9/9/9/9/4N4/9/9/9/3K5 w", "horse_mobility_8_mg", 1},
        {"n4k3/9/9/9/9/4N4/9/9/9/3K5 w", "horse_mobility_8_eg", 1},
        {"n4k3/9/9/9/9/4N4/9/9/9/3K5 w", "horse_mobility_2_eg", -1},
        // Red chariot a0 reaches 11 points (bucket 10-13), Black's i9 4 (bucket 4-6).
        {"5k2r/9/9/8p/9/9/9/9/9/R2K5 w", "chariot_mobility_4_mg", 1},
        {"5k2r/9/9/8p/9/9/9/9/9/R2K5 w", "chariot_mobility_2_eg", -1},
        // Red cannon a0 reaches 12 points (bucket 10-13), Black's i9 7 (bucket 7-9).
        {"3k4c/9/9/9/8P/9/9/9/9/C3K4 w", "cannon_mobility_4_mg", 1},
        {"3k4c/9/9/9/8P/9/9/9/9/C3K4 w", "cannon_mobility_3_eg", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_term(cases[i].fen, cases[i].name, cases[i].count);
}

/// Sums a trace's coefficients over the n rows of a one-hot table from first (mg rows only).
static int bucket_sum(const EvalTrace *t, const char *first, int n)
{
    int id = params_find(first), sum = 0;
    for (int k = 0; k < n; k++)
        sum += t->coef[id + 2 * k];
    return sum;
}

/// Each table's coefficients sum to Red's pieces of its type minus Black's (one bucket each).
static void check_one_hot(Board *b, const Weights *w)
{
    EvalTrace t;
    eval_trace(b, w, &t);
    static const struct {
        PieceType type;
        const char *first;
        int n;
    } tables[] = {
        {HORSE, "horse_mobility_0_mg", 9},
        {CHARIOT, "chariot_mobility_0_mg", 6},
        {CANNON, "cannon_mobility_0_mg", 6},
    };
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        int pieces =
            bb_count(b->pieces[RED][tables[i].type]) - bb_count(b->pieces[BLACK][tables[i].type]);
        assert_int_equal(bucket_sum(&t, tables[i].first, tables[i].n), pieces);
    }
}

/// The mobility tables are one-hot: each horse, chariot and cannon counts in exactly one
/// bucket of its table.
static void test_mobility_one_hot(void **state)
{
    (void)state;
    Weights w;
    weights_default(&w);
    random_positions(check_one_hot, &w, 10);
}

/// Saving the weights and loading them back gives the same set; a changed weight survives.
static void test_weights_round_trip(void **state)
{
    (void)state;
    char path[] = "/tmp/xq-weights-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    Weights w, back;
    weights_default(&w);
    assert_int_equal(weights_set(&w, "psq_horse_mg_c2", "17"), PARAMS_OK);
    assert_int_equal(weights_set(&w, "chariot_eg", "700"), PARAMS_OK);
    assert_int_equal(weights_save(&w, path), PARAMS_OK);
    weights_default(&back);
    char why[256];
    assert_int_equal(weights_load(&back, path, why, sizeof why), PARAMS_OK);
    assert_memory_equal(&w, &back, sizeof w);
    unlink(path);
}

/// Bad weight files are refused whole, naming the file and line; good lines before the bad
/// one do not leak into the weights.
static void test_weights_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        ParamsStatus st;
        const char *where;
    } cases[] = {
        {"horse_mg 300\nno_such_weight 5\n", PARAMS_ERR_UNKNOWN, ":2:"},
        {"# comment\nhorse_mg 999999\n", PARAMS_ERR_VALUE, ":2:"},
        {"horse_mg abc\n", PARAMS_ERR_VALUE, ":1:"},
        {"horse_mg 300 extra\n", PARAMS_ERR_SYNTAX, ":1:"},
        {"horse_mg\n", PARAMS_ERR_SYNTAX, ":1:"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[] = "/tmp/xq-weights-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, cases[i].text, strlen(cases[i].text)),
                         (ssize_t)strlen(cases[i].text));
        close(fd);
        Weights w;
        weights_default(&w);
        char why[256] = "";
        assert_int_equal(weights_load(&w, path, why, sizeof why), cases[i].st);
        assert_non_null(strstr(why, cases[i].where));
        assert_int_equal(w.v[P_horse_mg], params_info[P_horse_mg].def);
        unlink(path);
    }
    Weights w;
    char why[256];
    assert_int_equal(weights_load(&w, "/nonexistent/weights.txt", why, sizeof why), PARAMS_ERR_IO);
}

/// Every weight's default lies in its range, names are unique, and a weight changes the
/// evaluation of a position where its feature is present.
static void test_param_table(void **state)
{
    (void)state;
    for (int i = 0; i < PARAM_NB; i++) {
        assert_true(params_info[i].min <= params_info[i].def);
        assert_true(params_info[i].def <= params_info[i].max);
        assert_true(params_info[i].step > 0);
        assert_int_equal(params_find(params_info[i].name), i);
    }
    assert_int_equal(params_find("nonexistent"), -1);
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    // No chariot, horse or cannon: phase 0, so an endgame weight counts in full.
    assert_int_equal(board_set_fen(b, "4k4/9/9/9/9/4P4/9/9/9/3K5 w", NULL, 0), FEN_OK);
    Weights w;
    weights_default(&w);
    int before = eval_evaluate(b, &w);
    w.v[P_soldier_eg] += 100;
    assert_int_equal(eval_evaluate(b, &w), before + 100);
    free(b);
}

static bool count_id(void *ctx, int id)
{
    int *seen = ctx;
    seen[id]++;
    return true;
}

static bool stop_at_two(void *ctx, int id)
{
    (void)id;
    return ++*(int *)ctx < 2;
}

/// The one weight-list reader: groups expand to their weights in table order, names to one
/// weight, a repeated name comes twice, an unknown word is named, add may stop the list.
static void test_param_lists(void **state)
{
    (void)state;
    static int seen[PARAM_NB];
    char bad[64] = "";
    assert_int_equal(params_parse_list("psq, horse_mg\thorse_mg", count_id, seen, bad, sizeof bad),
                     PARAMS_LIST_OK);
    int psq = 0, eval = 0;
    for (int id = 0; id < PARAM_NB; id++) {
        psq += params_is_psq(id);
        eval += !params_is_psq(id);
        if (params_is_psq(id))
            assert_int_equal(seen[id], 1);
        else
            assert_int_equal(seen[id], id == params_find("horse_mg") ? 2 : 0);
    }
    assert_true(psq > 0 && eval > 0);
    memset(seen, 0, sizeof seen);
    assert_int_equal(params_parse_list("all", count_id, seen, bad, sizeof bad), PARAMS_LIST_OK);
    for (int id = 0; id < PARAM_NB; id++)
        assert_int_equal(seen[id], 1);
    assert_int_equal(params_parse_list("eval horse", count_id, seen, bad, sizeof bad),
                     PARAMS_LIST_UNKNOWN);
    assert_string_equal(bad, "horse");
    assert_int_equal(params_parse_list(" , ", count_id, seen, bad, sizeof bad), PARAMS_LIST_EMPTY);
    int n = 0;
    assert_int_equal(params_parse_list("all", stop_at_two, &n, bad, sizeof bad),
                     PARAMS_LIST_STOPPED);
    assert_int_equal(n, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_is_linear),    cmocka_unit_test(test_symmetry),
        cmocka_unit_test(test_term_counts),        cmocka_unit_test(test_mobility_one_hot),
        cmocka_unit_test(test_weights_round_trip), cmocka_unit_test(test_weights_errors),
        cmocka_unit_test(test_param_table),        cmocka_unit_test(test_param_lists),
    };
    return cmocka_run_group_tests_name("eval", tests, NULL, NULL);
}
