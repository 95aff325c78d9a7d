// SPDX-License-Identifier: MIT
// Search and engine API: mates are found and scored as mates, a side with no move gets no
// move, results are deterministic with one thread, limits are honoured, several engines
// coexist in one process, and time budgets never exceed the clock; the NNUE options load and
// refuse nets with a reason, and a search with a net is deterministic (and, in debug builds,
// checks its incremental evaluation against the full one at every node).
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench.h"
#include "move.h"
#include "movegen.h"
#include "search.h"

static Board *board_from(const char *fen)
{
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    char why[160];
    if (board_set_fen(b, fen, why, sizeof why) != FEN_OK)
        fail_msg("bad FEN %s: %s", fen, why);
    return b;
}

static SearchResult search_depth(Engine *e, const char *fen, int depth)
{
    Board *b = board_from(fen);
    assert_int_equal(engine_set_position(e, b), ENGINE_OK);
    free(b);
    SearchLimits l;
    limits_init(&l);
    l.depth = depth;
    return engine_search(e, &l, NULL, NULL);
}

static bool mark_id(void *ctx, int id)
{
    ((int *)ctx)[id]++;
    return true;
}

static void expect_move(SearchResult r, const char *text)
{
    char t[MOVE_TEXT_MAX];
    move_text(r.best, 0, t);
    assert_string_equal(t, text);
}

/// A mate in one (two chariots) is played and scored as mate in one move.
static void test_mate_in_one(void **state)
{
    (void)state;
    Engine *e = engine_new();
    assert_non_null(e);
    SearchResult r = search_depth(e, "4k4/R8/9/9/9/9/9/9/9/1R1K5 w", 4);
    expect_move(r, "b0b9");
    assert_int_equal(r.score, VALUE_MATE - 1);
    engine_free(e);
}

/// Stalemate loses in xiangqi (rule 2): the engine seeks it as it seeks mate.
static void test_stalemate_is_a_win(void **state)
{
    (void)state;
    Engine *e = engine_new();
    assert_non_null(e);
    // Black's general on d9 has only d8 and e9 (e9 faces Red's general on e0); Rb8 or Ra8
    // takes d8 away without giving check: stalemate, a win for Red.
    SearchResult r = search_depth(e, "3k5/9/R8/9/9/9/9/9/9/4K4 w", 3);
    assert_true(r.score >= VALUE_MATE_IN_MAX);
    Board *b = board_from("3k5/9/R8/9/9/9/9/9/9/4K4 w");
    assert_true(movegen_is_legal(b, r.best));
    board_make_move(b, r.best);
    MoveList l;
    assert_int_equal(movegen_legal(b, &l), 0);
    free(b);
    engine_free(e);
}

/// A side with no legal move gets MOVE_NONE and a mated score.
static void test_no_legal_move(void **state)
{
    (void)state;
    Engine *e = engine_new();
    assert_non_null(e);
    SearchResult r = search_depth(e, "3k5/8R/9/9/9/9/9/9/9/4K4 b", 5);
    assert_int_equal(r.best, MOVE_NONE);
    assert_true(r.score <= -VALUE_MATE_IN_MAX);
    engine_free(e);
}

/// With one thread and a cleared table, the same search gives the same move and node count.
static void test_deterministic(void **state)
{
    (void)state;
    Engine *e = engine_new();
    assert_non_null(e);
    const char *fen = "r1bakab1r/9/1cn3nc1/p1p1p3p/6p2/2P6/P3P1P1P/1CN3NC1/9/R1BAKAB1R w - - 0 4";
    engine_new_game(e);
    SearchResult a = search_depth(e, fen, 7);
    engine_new_game(e);
    SearchResult b = search_depth(e, fen, 7);
    assert_int_equal(a.best, b.best);
    assert_int_equal(a.nodes, b.nodes);
    assert_int_equal(a.score, b.score);
    engine_free(e);
}

/// A node limit stops the search close to the limit (one thread checks at every node).
static void test_node_limit(void **state)
{
    (void)state;
    Engine *e = engine_new();
    assert_non_null(e);
    Board *b = board_from(BOARD_START_FEN);
    assert_int_equal(engine_set_position(e, b), ENGINE_OK);
    SearchLimits l;
    limits_init(&l);
    l.nodes = 20000;
    SearchResult r = engine_search(e, &l, NULL, NULL);
    assert_true(movegen_is_legal(b, r.best));
    assert_true(r.nodes >= 20000 && r.nodes < 20000 + 64);
    free(b);
    engine_free(e);
}

static void count_info(void *ctx, const SearchInfo *info)
{
    int *lines = ctx;
    assert_true(info->multipv >= 1 && info->multipv <= 3);
    assert_true(info->pv_len >= 1);
    (*lines)++;
}

/// MultiPV reports distinct first moves, one line per PV per depth; Lazy SMP with several
/// threads returns a legal move.
static void test_multipv_and_threads(void **state)
{
    (void)state;
    Engine *e = engine_new();
    assert_non_null(e);
    assert_int_equal(engine_set_option(e, "MultiPV", "3"), ENGINE_OK);
    assert_int_equal(engine_set_option(e, "Threads", "3"), ENGINE_OK);
    Board *b = board_from(BOARD_START_FEN);
    assert_int_equal(engine_set_position(e, b), ENGINE_OK);
    SearchLimits l;
    limits_init(&l);
    l.depth = 5;
    int lines = 0;
    SearchResult r = engine_search(e, &l, count_info, &lines);
    assert_int_equal(lines, 3 * 5);
    assert_true(movegen_is_legal(b, r.best));
    assert_int_equal(engine_set_option(e, "Threads", "0"), ENGINE_ERR_VALUE);
    assert_int_equal(engine_set_option(e, "NoSuchOption", "1"), ENGINE_ERR_UNKNOWN_OPTION);
    assert_int_equal(engine_set_option(e, "Rules", "asian"), ENGINE_OK);
    assert_int_equal(engine_rules(e)->set, RULES_ASIAN);
    assert_int_equal(engine_set_option(e, "Rules", "western"), ENGINE_ERR_VALUE);
    assert_int_equal(engine_set_option(e, "horse_mg", "300"), ENGINE_OK);
    assert_int_equal(engine_weights(e)->v[P_horse_mg], 300);
    assert_int_equal(engine_set_option(e, "horse_mg", "100000"), ENGINE_ERR_VALUE);
    free(b);
    engine_free(e);
}

/// options.def is the contract: a new engine holds every default; each engine row takes its
/// default and the ends of its range and refuses one past them; no option shares a weight's
/// name (the weight could not be reached); engine_option_exists knows the engine rows and the
/// weights in any case, and not the front end's WeightsFile nor a misspelling.
static void test_option_table(void **state)
{
    (void)state;
    Engine *e = engine_new();
    assert_non_null(e);
    assert_int_equal(engine_threads(e), engine_options[ENGINE_OPT_THREADS].def);
    assert_int_equal(engine_multipv(e), engine_options[ENGINE_OPT_MULTIPV].def);
    assert_int_equal(engine_rules(e)->set, engine_options[ENGINE_OPT_RULES].def);
    assert_int_equal(engine_rules(e)->counting_default,
                     engine_options[ENGINE_OPT_COUNTING_DEFAULT].def);
    assert_int_equal(engine_uses_nnue(e, NULL), engine_option_default(ENGINE_OPT_USE_NNUE));
    for (int id = 0; id < ENGINE_OPT_NB; id++) {
        const EngineOptionInfo *o = &engine_options[id];
        assert_int_equal(params_find(o->name), -1);
        assert_int_equal(engine_option_exists(o->name), !o->front_end);
        if (o->front_end)
            assert_int_equal(engine_set_option(e, o->name, o->text), ENGINE_ERR_UNKNOWN_OPTION);
        if (o->front_end || o->type != OPTION_SPIN)
            continue;
        // Threads and Hash at their maximum would allocate 256 threads or 64 GB.
        bool big = id == ENGINE_OPT_THREADS || id == ENGINE_OPT_HASH;
        const struct {
            long v;
            EngineStatus want;
        } tries[] = {{o->min - 1L, ENGINE_ERR_VALUE},
                     {o->max + 1L, ENGINE_ERR_VALUE},
                     {o->min, ENGINE_OK},
                     {big ? o->min : o->max, ENGINE_OK},
                     {o->def, ENGINE_OK}};
        for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
            char text[32];
            snprintf(text, sizeof text, "%ld", tries[i].v);
            if (engine_set_option(e, o->name, text) != tries[i].want)
                fail_msg("%s = %s: not %s", o->name, text, engine_strerror(tries[i].want));
        }
    }
    assert_true(engine_option_exists("move overhead"));
    assert_true(engine_option_exists("HORSE_MG"));
    assert_true(engine_option_exists("search_lmr_base"));
    assert_false(engine_option_exists("hors_mg"));
    assert_false(engine_option_exists("WeightsFile"));
    assert_false(engine_option_exists(NULL));
    // Rules and CountingDefault are two options: setting the rule set keeps the count.
    assert_int_equal(engine_set_option(e, "CountingDefault", "100"), ENGINE_OK);
    assert_int_equal(engine_set_option(e, "Rules", "asian"), ENGINE_OK);
    assert_int_equal(engine_rules(e)->counting_default, 100);
    engine_free(e);
}

/// Every search feature can be switched off and on by name; switching one away from its
/// default changes the search (its node count) and switching it back restores it; bad values
/// are refused.
static void test_feature_switches(void **state)
{
    (void)state;
    const char *fen = "r1bakab1r/9/1cn3nc1/p1p1p3p/6p2/2P6/P3P1P1P/1CN3NC1/9/R1BAKAB1R w - - 0 4";
    Engine *e = engine_new();
    assert_non_null(e);
    SearchResult all = search_depth(e, fen, 8);
    assert_null(engine_feature_name(SEARCH_FEATURE_NB));
    for (int i = 0; i < SEARCH_FEATURE_NB; i++) {
        const char *name = engine_feature_name(i);
        assert_non_null(name);
        bool on = (SEARCH_FEATURE_DEFAULT >> i) & 1u;
        assert_int_equal(engine_set_option(e, name, on ? "false" : "true"), ENGINE_OK);
        engine_new_game(e);
        SearchResult flipped = search_depth(e, fen, 8);
        // ChaseRule acts on asian repetitions only; test_chase_rule shows that it changes those.
        if (i != SEARCH_CHASE_RULE && flipped.nodes == all.nodes)
            fail_msg("switching %s %s did not change the search", name, on ? "off" : "on");
        assert_int_equal(engine_set_option(e, name, on ? "true" : "false"), ENGINE_OK);
        assert_int_equal(engine_set_option(e, name, "maybe"), ENGINE_ERR_VALUE);
    }
    engine_new_game(e);
    assert_int_equal(search_depth(e, fen, 8).nodes, all.nodes);
    engine_free(e);
}

/// The search rows (search_params.def) default to the constants the search had before they
/// became rows, so the bench signature did not move; "search" lists exactly them; weight
/// files without them keep the defaults.
static void test_search_row_defaults(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int value;
    } old[] = {{"search_rfp_depth", 7},
               {"search_rfp_margin", 90},
               {"search_rfp_improving", 30},
               {"search_nmp_depth", 3},
               {"search_nmp_base", 3},
               {"search_nmp_div", 4},
               {"search_nmp_eval_margin", 200},
               {"search_iir_depth", 4},
               {"search_lmp_depth", 4},
               {"search_lmp_base", 3},
               {"search_lmp_factor", 100},
               {"search_fut_depth", 5},
               {"search_fut_base", 120},
               {"search_fut_margin", 90},
               {"search_see_depth", 5},
               {"search_see_margin", 90},
               {"search_hist_prune_depth", 0},
               {"search_ext_ply_factor", 2},
               {"search_ext_see", 0},
               {"search_lmr_depth", 3},
               {"search_lmr_base", 75},
               {"search_lmr_div", 225},
               {"search_lmr_hist", 10000},
               {"search_lmr_hist_single", 6000},
               {"search_hist_bonus_scale", 100},
               {"search_hist_bonus_max", 1200},
               {"search_asp_depth", 4},
               {"search_asp_delta", 30},
               {"search_asp_growth", 50},
               {"search_asp_growth_add", 10},
               {"tm_movestogo", 35},
               {"tm_inc", 75},
               {"tm_hard", 400},
               {"tm_cap", 40},
               {"tm_cap_last", 90},
               {"tm_soft_stop", 50}};
    int n = 0;
    for (size_t i = 0; i < sizeof old / sizeof *old; i++) {
        int id = params_find(old[i].name);
        assert_true(id >= 0 && params_is_search(id));
        assert_int_equal(params_info[id].def, old[i].value);
        assert_true(params_info[id].min <= old[i].value && old[i].value <= params_info[id].max);
    }
    for (int id = 0; id < PARAM_NB; id++) {
        const char *name = params_info[id].name;
        bool prefixed = !strncmp(name, "search_", 7) || !strncmp(name, "tm_", 3);
        assert_int_equal(params_is_search(id), prefixed);
        assert_false(params_is_search(id) && params_is_psq(id));
        n += params_is_search(id);
    }
    assert_int_equal(n, PARAM_SEARCH_NB);
    // The list words: "search" is exactly these rows, "eval" none of them, and
    // "psq eval search" every row once.
    static int seen[PARAM_NB];
    char bad[64];
    assert_int_equal(params_parse_list("search", mark_id, seen, bad, sizeof bad), PARAMS_LIST_OK);
    for (int id = 0; id < PARAM_NB; id++)
        assert_int_equal(seen[id], params_is_search(id));
    memset(seen, 0, sizeof seen);
    assert_int_equal(params_parse_list("eval", mark_id, seen, bad, sizeof bad), PARAMS_LIST_OK);
    for (int id = 0; id < PARAM_NB; id++)
        assert_int_equal(seen[id], !params_is_search(id) && !params_is_psq(id));
    memset(seen, 0, sizeof seen);
    assert_int_equal(params_parse_list("psq,eval search", mark_id, seen, bad, sizeof bad),
                     PARAMS_LIST_OK);
    for (int id = 0; id < PARAM_NB; id++)
        assert_int_equal(seen[id], 1);
    assert_int_equal(params_parse_list("searches", mark_id, seen, bad, sizeof bad),
                     PARAMS_LIST_UNKNOWN);
    // A weights file of older days (no search rows) leaves them at their defaults; a saved
    // file carries them and loads back.
    char path[] = "/tmp/xq_test_search_XXXXXX", why[256];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char text[] = "horse_mg 300\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    Weights w, back;
    weights_default(&w);
    assert_int_equal(weights_load(&w, path, why, sizeof why), PARAMS_OK);
    assert_int_equal(w.v[P_horse_mg], 300);
    for (int id = PARAM_SEARCH_FIRST; id < PARAM_NB; id++)
        assert_int_equal(w.v[id], params_info[id].def);
    w.v[P_search_lmr_div] = 300;
    assert_int_equal(weights_save(&w, path), PARAMS_OK);
    weights_default(&back);
    assert_int_equal(weights_load(&back, path, why, sizeof why), PARAMS_OK);
    assert_memory_equal(back.v, w.v, sizeof w.v);
    remove(path);
}

/// Each pruning, reduction and window row steers the search: set to another value it changes
/// the node count at depth 8, and set back the count is the default's again (the reduction
/// and pruning tables are rebuilt on a change, also when the weights are written directly as
/// SPSA does); a value outside the row's range is refused.
static void test_search_rows_steer(void **state)
{
    (void)state;
    static const struct {
        const char *name, *value;
    } rows[] = {{"search_rfp_margin", "40"},
                {"search_nmp_base", "5"},
                {"search_nmp_div", "2"},
                {"search_lmp_base", "0"},
                {"search_lmp_factor", "300"},
                {"search_fut_margin", "30"},
                {"search_see_margin", "20"},
                {"search_lmr_base", "150"},
                {"search_lmr_div", "120"},
                {"search_lmr_hist", "500"},
                {"search_asp_delta", "5"},
                {"search_ext_see", "-300"},
                {"search_hist_bonus_scale", "1000"}};
    const char *fen = "r1bakab1r/9/1cn3nc1/p1p1p3p/6p2/2P6/P3P1P1P/1CN3NC1/9/R1BAKAB1R w - - 0 4";
    Engine *e = engine_new();
    assert_non_null(e);
    SearchResult def = search_depth(e, fen, 8);
    char text[16];
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        int id = params_find(rows[i].name);
        assert_true(id >= 0);
        assert_int_equal(engine_set_option(e, rows[i].name, rows[i].value), ENGINE_OK);
        engine_new_game(e);
        if (search_depth(e, fen, 8).nodes == def.nodes)
            fail_msg("%s = %s did not change the search", rows[i].name, rows[i].value);
        snprintf(text, sizeof text, "%d", params_info[id].def);
        assert_int_equal(engine_set_option(e, rows[i].name, text), ENGINE_OK);
        snprintf(text, sizeof text, "%d", params_info[id].max + 1);
        assert_int_equal(engine_set_option(e, rows[i].name, text), ENGINE_ERR_VALUE);
        snprintf(text, sizeof text, "%d", params_info[id].min - 1);
        assert_int_equal(engine_set_option(e, rows[i].name, text), ENGINE_ERR_VALUE);
        assert_int_equal(engine_weights(e)->v[id], params_info[id].def);
    }
    // History pruning is off by default; switched on, with histories grown by a larger bonus,
    // it prunes here.
    assert_int_equal(engine_set_option(e, "search_hist_bonus_scale", "1000"), ENGINE_OK);
    assert_int_equal(engine_set_option(e, "search_hist_prune_margin", "50"), ENGINE_OK);
    engine_new_game(e);
    uint64_t scaled = search_depth(e, fen, 8).nodes;
    assert_int_equal(engine_set_option(e, "search_hist_prune_depth", "6"), ENGINE_OK);
    engine_new_game(e);
    assert_true(search_depth(e, fen, 8).nodes != scaled);
    assert_int_equal(engine_set_option(e, "search_hist_prune_depth", "0"), ENGINE_OK);
    assert_int_equal(engine_set_option(e, "search_hist_bonus_scale", "100"), ENGINE_OK);
    engine_weights(e)->v[P_search_lmr_div] = 120; // as builtin_player_set_weights does
    engine_new_game(e);
    assert_true(search_depth(e, fen, 8).nodes != def.nodes);
    engine_weights(e)->v[P_search_lmr_div] = params_info[P_search_lmr_div].def;
    engine_new_game(e);
    assert_int_equal(search_depth(e, fen, 8).nodes, def.nodes);
    engine_free(e);
}

/// QuiescenceChecks: at depth 1, taking the chariot on a9 lets the other black chariot mate (rule
/// 1) with a quiet check from d7 (the red general cannot step onto the e-file, where it would face
/// the black one, rule 3). Only the quiet checks of the quiescence search see it; without them the
/// engine takes the chariot.
static void test_quiescence_checks(void **state)
{
    (void)state;
    const char *fen = "r8/4k4/7r1/6p1p/R8/9/6P1P/9/9/3K5 w - - 0 1";
    Engine *e = engine_new();
    assert_non_null(e);
    assert_int_equal(engine_set_option(e, "QuiescenceChecks", "true"), ENGINE_OK);
    SearchResult r = search_depth(e, fen, 1);
    char t[MOVE_TEXT_MAX];
    move_text(r.best, 0, t);
    if (strcmp(t, "a5a9") == 0 || r.score <= -VALUE_MATE_IN_MAX)
        fail_msg("depth 1 played %s (score %d) into a quiet-check mate", t, r.score);
    assert_int_equal(engine_set_option(e, "QuiescenceChecks", "false"), ENGINE_OK);
    engine_new_game(e);
    expect_move(search_depth(e, fen, 1), "a5a9");
    engine_free(e);
}

/// ChaseRule (asian, rule C): Red, a chariot down, has chased Black's chariot with its horse
/// once around (b5d4 c6c7 d4b5 c7c6). Without the rule the search walks into the repetition,
/// b5d4 again, as a draw; with it that move loses (Red chases perpetually) and the engine
/// plays another move with a losing score.
static void test_chase_rule(void **state)
{
    (void)state;
    Engine *e = engine_new();
    assert_non_null(e);
    assert_int_equal(engine_set_option(e, "Rules", "asian"), ENGINE_OK);
    Board *b = board_from("4k4/9/9/2r6/1N7/9/9/9/9/3K5 w - - 0 1");
    static const char *const line[] = {"b5d4", "c6c7", "d4b5", "c7c6"};
    for (size_t i = 0; i < sizeof line / sizeof line[0]; i++) {
        Move m;
        assert_int_equal(move_parse_legal(b, line[i], 0, &m), MOVE_TEXT_OK);
        board_make_move(b, m);
    }
    SearchLimits l;
    limits_init(&l);
    l.depth = 8;
    assert_int_equal(engine_set_option(e, "ChaseRule", "false"), ENGINE_OK);
    assert_int_equal(engine_set_position(e, b), ENGINE_OK);
    SearchResult off = engine_search(e, &l, NULL, NULL);
    expect_move(off, "b5d4");
    assert_int_equal(off.score, 0);
    assert_int_equal(engine_set_option(e, "ChaseRule", "true"), ENGINE_OK);
    engine_new_game(e);
    SearchResult on = engine_search(e, &l, NULL, NULL);
    char t[MOVE_TEXT_MAX];
    move_text(on.best, 0, t);
    if (strcmp(t, "b5d4") == 0 || on.score >= -100)
        fail_msg("with the chase rule the engine played %s (score %d)", t, on.score);
    assert_true(movegen_is_legal(b, on.best));
    assert_true(on.nodes != off.nodes);
    free(b);
    engine_free(e);
}

typedef struct {
    const char *fen;
    SearchResult r;
} Job;

static void *run_job(void *arg)
{
    Job *j = arg;
    Engine *e = engine_new();
    if (!e)
        return NULL;
    j->r = search_depth(e, j->fen, 7);
    engine_free(e);
    return NULL;
}

/// Two engines searching at once in one process give the results each gives alone: no
/// search state is shared between engines.
static void test_engines_are_independent(void **state)
{
    (void)state;
    Job jobs[2] = {
        {"r1bakab1r/9/1cn3nc1/p1p1p3p/6p2/2P6/P3P1P1P/1CN3NC1/9/R1BAKAB1R w - - 0 4", {0}},
        {"2bak4/4a4/2R1b1n2/3rp3p/p1P3p2/9/Pc2P1P1c/1CN3C2/4Nr3/2BAKABR1 w - - 1 16", {0}}};
    Job alone[2] = {jobs[0], jobs[1]};
    run_job(&alone[0]);
    run_job(&alone[1]);
    pthread_t tid[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&tid[i], NULL, run_job, &jobs[i]), 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(tid[i], NULL);
        assert_int_equal(jobs[i].r.best, alone[i].r.best);
        assert_int_equal(jobs[i].r.nodes, alone[i].r.nodes);
    }
}

/// Time budgets stay inside the clock: the hard limit never exceeds 40% of what is left
/// after the overhead (90% with one move to go), for clocks from 1 ms to an hour; the tm_*
/// rows give the old constants' budgets by default and steer them when changed.
static void test_time_budget(void **state)
{
    (void)state;
    Weights w;
    weights_default(&w);
    static const int64_t clocks[] = {1, 10, 50, 100, 500, 1000, 3000, 60000, 3600000};
    static const int64_t incs[] = {0, 10, 100, 1000};
    for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
        for (size_t j = 0; j < sizeof incs / sizeof incs[0]; j++) {
            for (int mtg = 0; mtg <= 40; mtg += 1 + 19 * (mtg > 0)) {
                SearchLimits l;
                limits_init(&l);
                l.time[RED] = clocks[i];
                l.inc[RED] = incs[j];
                l.movestogo = mtg;
                TimeBudget t = timeman_budget(&l, RED, 30, &w);
                int64_t usable = clocks[i] - 60 > 1 ? clocks[i] - 60 : 1;
                int64_t cap = mtg == 1 ? usable * 9 / 10 : usable * 2 / 5;
                assert_true(t.soft_ms >= 1 && t.soft_ms <= t.hard_ms);
                assert_true(t.hard_ms <= (cap > 1 ? cap : 1));
                // The tm_* rows' defaults are the old constants: the very same budgets.
                int64_t soft = usable / (mtg ? mtg : 35) + incs[j] * 3 / 4, hard = soft * 4;
                hard = hard < cap ? hard : cap;
                soft = soft < hard ? soft : hard;
                assert_int_equal(t.soft_ms, soft > 1 ? soft : 1);
                assert_int_equal(t.hard_ms, hard > 1 ? hard : 1);
            }
        }
    }
    SearchLimits l;
    limits_init(&l);
    l.movetime = 500;
    TimeBudget t = timeman_budget(&l, BLACK, 30, &w);
    assert_int_equal(t.hard_ms, 470);
    l.movetime = 0;
    l.infinite = true;
    t = timeman_budget(&l, BLACK, 30, &w);
    assert_int_equal(t.hard_ms, 0);
    // The rows steer it: 60 s + 1 s, sudden death, soft 59940 / 35 + 750 = 2462; hard twice
    // that with tm_hard 200, and a tenth of the clock at most with tm_cap 10.
    l.infinite = false;
    l.time[BLACK] = 60000;
    l.inc[BLACK] = 1000;
    t = timeman_budget(&l, BLACK, 30, &w);
    assert_true(t.soft_ms == 2462 && t.hard_ms == 4 * 2462);
    w.v[P_tm_hard] = 200;
    t = timeman_budget(&l, BLACK, 30, &w);
    assert_true(t.soft_ms == 2462 && t.hard_ms == 2 * 2462);
    w.v[P_tm_cap] = 10;
    w.v[P_tm_hard] = 400;
    t = timeman_budget(&l, BLACK, 30, &w);
    assert_true(t.soft_ms == 2462 && t.hard_ms == 5994);
}

/// Every bench position is a valid FEN, and there are at least 40 of them.
static void test_bench_positions(void **state)
{
    (void)state;
    assert_true(bench_position_count >= 40);
    for (int i = 0; i < bench_position_count; i++) {
        Board *b = board_from(bench_positions[i]);
        free(b);
    }
}

/// A random net of `hidden` units saved under /tmp; returns its path in out.
static void random_net_file(char *out, size_t len, int hidden)
{
    NnueNet net;
    assert_int_equal(nnue_alloc(&net, hidden), NNUE_OK);
    nnue_randomize(&net, 77);
    snprintf(out, len, "/tmp/xq_test_search_%ld_%d.nnue", (long)getpid(), hidden);
    assert_int_equal(nnue_save_file(&net, out), NNUE_OK);
    nnue_free(&net);
}

/// A new engine evaluates with the embedded net exactly when the build has one; UseNNUE
/// without a net and a bad EvalFile are refused with a sentence (the engine keeps working); a
/// good file switches the evaluation to the net's, and UseNNUE false back.
static void test_nnue_options(void **state)
{
    (void)state;
    Engine *e = engine_new();
    assert_non_null(e);
    Board *b = board_from(BOARD_START_FEN);
    assert_int_equal(engine_uses_nnue(e, NULL), nnue_default() != NULL);
    assert_int_equal(engine_set_option(e, "UseNNUE", "false"), ENGINE_OK);
    int linear = engine_evaluate(e, b);
    if (!nnue_default()) {
        assert_int_equal(engine_set_option(e, "UseNNUE", "true"), ENGINE_ERR_VALUE);
        assert_non_null(strstr(engine_error(e), "EvalFile"));
        assert_false(engine_uses_nnue(e, NULL));
    }
    assert_int_equal(engine_set_option(e, "UseNNUE", "maybe"), ENGINE_ERR_VALUE);
    assert_int_equal(engine_set_option(e, "EvalFile", "/nonexistent/net.nnue"), ENGINE_ERR_VALUE);
    assert_non_null(strstr(engine_error(e), "/nonexistent/net.nnue"));
    char path[256];
    random_net_file(path, sizeof path, 64);
    // A damaged copy: one payload byte flipped.
    char bad[300];
    snprintf(bad, sizeof bad, "%s.bad", path);
    FILE *in = fopen(path, "rb"), *out = fopen(bad, "wb");
    assert_true(in && out);
    for (int c, i = 0; (c = fgetc(in)) != EOF; i++)
        fputc(i == 5000 ? c ^ 1 : c, out);
    fclose(in);
    fclose(out);
    assert_int_equal(engine_set_option(e, "EvalFile", bad), ENGINE_ERR_VALUE);
    assert_non_null(strstr(engine_error(e), "content hash"));
    assert_int_equal(engine_set_option(e, "EvalFile", path), ENGINE_OK);
    assert_string_equal(engine_error(e), "");
    assert_int_equal(engine_evaluate(e, b), linear); // loaded, not yet used
    assert_int_equal(engine_set_option(e, "UseNNUE", "true"), ENGINE_OK);
    char id[NNUE_ID_MAX];
    assert_true(engine_uses_nnue(e, id));
    assert_int_equal(strlen(id), 12);
    NnueNet net;
    assert_int_equal(nnue_load_file(&net, path, NULL, 0), NNUE_OK);
    assert_int_equal(engine_evaluate(e, b), nnue_evaluate_full(&net, b));
    nnue_free(&net);
    assert_int_equal(engine_set_option(e, "UseNNUE", "false"), ENGINE_OK);
    assert_int_equal(engine_evaluate(e, b), linear);
    unlink(bad);
    unlink(path);
    free(b);
    engine_free(e);
}

/// With a net, a one-thread search is deterministic and differs from the linear one; the
/// root has game history before it (the accumulator stack starts at the root); more threads
/// give a legal move; switching back to the linear evaluation gives its node count again.
static void test_nnue_search(void **state)
{
    (void)state;
    char path[256];
    random_net_file(path, sizeof path, 32);
    Engine *e = engine_new();
    assert_non_null(e);
    Board *b = board_from(BOARD_START_FEN);
    const Move moves[] = {move_make(sq_make(7, 2), sq_make(4, 2)),
                          move_make(sq_make(7, 9), sq_make(6, 7))};
    for (int i = 0; i < 2; i++)
        board_make_move(b, moves[i]);
    assert_int_equal(engine_set_position(e, b), ENGINE_OK);
    SearchLimits l;
    limits_init(&l);
    l.depth = 6;
    assert_int_equal(engine_set_option(e, "UseNNUE", "false"), ENGINE_OK);
    SearchResult lin = engine_search(e, &l, NULL, NULL);
    assert_int_equal(engine_set_option(e, "EvalFile", path), ENGINE_OK);
    assert_int_equal(engine_set_option(e, "UseNNUE", "true"), ENGINE_OK);
    engine_new_game(e);
    SearchResult a = engine_search(e, &l, NULL, NULL);
    engine_new_game(e);
    SearchResult c = engine_search(e, &l, NULL, NULL);
    assert_true(movegen_is_legal(b, a.best));
    assert_int_equal(a.best, c.best);
    assert_int_equal(a.score, c.score);
    assert_int_equal(a.nodes, c.nodes);
    assert_true(a.nodes != lin.nodes);
    assert_true(abs(a.score) < VALUE_MATE_IN_MAX);
    assert_int_equal(engine_set_option(e, "Threads", "3"), ENGINE_OK);
    SearchResult smp = engine_search(e, &l, NULL, NULL);
    assert_true(movegen_is_legal(b, smp.best));
    assert_int_equal(engine_set_option(e, "Threads", "1"), ENGINE_OK);
    assert_int_equal(engine_set_option(e, "UseNNUE", "false"), ENGINE_OK);
    engine_new_game(e);
    SearchResult back = engine_search(e, &l, NULL, NULL);
    assert_int_equal(back.nodes, lin.nodes);
    unlink(path);
    free(b);
    engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mate_in_one),         cmocka_unit_test(test_stalemate_is_a_win),
        cmocka_unit_test(test_no_legal_move),       cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_node_limit),          cmocka_unit_test(test_multipv_and_threads),
        cmocka_unit_test(test_option_table),        cmocka_unit_test(test_engines_are_independent),
        cmocka_unit_test(test_time_budget),         cmocka_unit_test(test_feature_switches),
        cmocka_unit_test(test_search_row_defaults), cmocka_unit_test(test_search_rows_steer),
        cmocka_unit_test(test_quiescence_checks),   cmocka_unit_test(test_chase_rule),
        cmocka_unit_test(test_nnue_options),        cmocka_unit_test(test_nnue_search),
        cmocka_unit_test(test_bench_positions),
    };
    return cmocka_run_group_tests_name("search", tests, NULL, NULL);
}
