// SPDX-License-Identifier: MIT
// Game-ending rules of ../shared/RULES.md (rule numbers are that page's): mate and stalemate,
// perpetual check, repetition under `seed` and `asian`, rule C's perpetual chase (one test per
// consequence RULES.md lists, and Fairy-Stockfish's 33 chasing cycles with Pikafish's verdicts),
// the asian 60-move rule, counting, insufficient material, the ply limit, the search's probe,
// and the names of sets and reasons.
// Every game is played from a FEN with a fixed move list, and the referee is asked after every
// ply, so each test also checks that the game does not end one ply early.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "board.h"
#include "move.h"
#include "movegen.h"
#include "rules.h"

// Red's chariot on a7 shuttles between a9 and a8, checking Black's general on e9/e8 (Black
// keeps an elephant so that it is not a bare general; Red's soldier on i3 gives quiet moves).
static const char PERP_FEN[] = "4k1b2/9/R8/9/9/9/8P/9/9/3K5 w - - 0 1";
// Checks A (to a9) on plies 1, 5, 9, 13 and B (to a8) on plies 3, 7, 11: the fourth identical
// check is ply 13; the position after ply 1 occurs for the third time at ply 9.
static const char PERP_LINE[] = "a7a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e9 a8a9";
// The same with colours swapped: Black's chariot on a2 checks Red's general on e0/e1.
static const char PERP_BLACK_FEN[] = "3k5/9/9/9/9/9/9/r8/9/4K1B2 b - - 0 1";
static const char PERP_BLACK_LINE[] =
    "a2a0 e0e1 a0a1 e1e0 a1a0 e0e1 a0a1 e1e0 a1a0 e0e1 a0a1 e1e0 a1a0";
// Both sides check with every move: Red's cannon to g9 (screen f9), Black's cannon f9f2
// (discovering the i2 cannon over it), Red's cannon back to g2 (discovering the h9 chariot),
// Black's cannon back to f9 (the i2 cannon now screens over g2). Red starts in check.
static const char MUTUAL_FEN[] = "4kc1R1/3P5/9/9/9/9/9/3K2C1c/9/9 w - - 0 1";
static const char MUTUAL_LINE[] =
    "g2g9 f9f2 g9g2 f2f9 g2g9 f9f2 g9g2 f2f9 g2g9 f9f2 g9g2 f2f9 g2g9";
// Horses out and back from the start: the start position occurs for the third time at ply 8.
static const char HORSE_LINE[] = "b0c2 b9c7 c2b0 c7b9 b0c2 b9c7 c2b0 c7b9";
// From PERP_FEN, Red checks only every other move (a9 checks, a7 does not): the start position
// occurs for the third time at ply 8.
static const char MIXED_LINE[] = "a7a9 e9e8 a9a7 e8e9 a7a9 e9e8 a9a7 e8e9";
// Red's chariots: a8 holds rank 8, b1b9 mates the general on e9 (elephant on g9 cannot help).
static const char MATE_RED_FEN[] = "4k1b2/R8/9/9/9/9/9/9/1R7/3K5 w - - 0 1";
// Black's chariots: a1 holds rank 1, b8b0 mates the general on e0.
static const char MATE_BLACK_FEN[] = "3k5/1r7/9/9/9/9/9/9/r8/4K4 b - - 0 1";
// f7f8: the soldier takes e8 and f9 from Black's general, the Red general (d0) takes d9.
static const char STALE_RED_FEN[] = "4k4/9/5P3/9/9/9/9/9/9/3K5 w - - 0 1";
// f2f1: the soldier takes e1 and f0 from Red's general, the Black general (d9) takes d0.
static const char STALE_BLACK_FEN[] = "3k5/9/9/9/9/9/9/5p3/9/4K4 b - - 0 1";
// A lone horse (no counting row) against a bare general.
static const char HORSE_VS_BARE_FEN[] = "4k4/9/9/9/9/9/9/9/9/1N1K5 w - - 0 1";
static const char HORSE_VS_BARE_LINE[] = "b0c2 e9e8 c2e3 e8e9 e3g4";

static const char *outcome_name(Outcome o)
{
    switch (o) {
    case OUTCOME_NONE: return "none";
    case OUTCOME_RED_WINS: return "red wins";
    case OUTCOME_BLACK_WINS: return "black wins";
    case OUTCOME_DRAW: return "draw";
    }
    return "?";
}

static const char *probe_name(SearchRule r)
{
    switch (r) {
    case SEARCH_RULE_NONE: return "none";
    case SEARCH_RULE_DRAW: return "draw";
    case SEARCH_RULE_WIN: return "win";
    case SEARCH_RULE_LOSS: return "loss";
    }
    return "?";
}

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

static void set_fen(Board *b, const char *fen)
{
    char why[160];
    if (board_set_fen(b, fen, why, sizeof why) != FEN_OK)
        fail_msg("bad FEN %s: %s", fen, why);
}

/// Plays one move given as text, failing the test if it is not legal.
static void play(Board *b, const char *text)
{
    Move m;
    if (move_parse_legal(b, text, 0, &m) != MOVE_TEXT_OK) {
        char fen[BOARD_FEN_MAX];
        board_fen(b, fen, sizeof fen);
        fail_msg("move %s is not legal in %s", text, fen);
    }
    board_make_move(b, m);
}

/// Copies the next space-separated move of *line into text; false at the end.
static bool next_move(const char **line, char text[MOVE_TEXT_MAX])
{
    const char *p = *line;
    while (*p == ' ')
        p++;
    size_t n = 0;
    while (p[n] && p[n] != ' ')
        n++;
    if (n == 0)
        return false;
    assert_true(n < MOVE_TEXT_MAX);
    memcpy(text, p, n);
    text[n] = '\0';
    *line = p + n;
    return true;
}

static void expect_end(const Board *b, const RulesConfig *cfg, Outcome outcome, EndReason reason,
                       const char *what, int ply)
{
    GameEnd e = rules_game_end(b, cfg);
    if (e.outcome != outcome || e.reason != reason) {
        char fen[BOARD_FEN_MAX];
        board_fen(b, fen, sizeof fen);
        fail_msg("%s (%s), ply %d, %s: expected %s by %s, got %s by %s", what,
                 rules_set_name(cfg->set), ply, fen, outcome_name(outcome), rules_end_name(reason),
                 outcome_name(e.outcome), rules_end_name(e.reason));
    }
}

/// Sets fen and plays line, asking the referee after every ply: the game must go on before
/// ply end_ply and end there with (outcome, reason); end_ply 0 means it never ends. Plays the
/// whole line either way (the line must not go past end_ply).
static void run_game(Board *b, const char *fen, const char *line, const RulesConfig *cfg,
                     int end_ply, Outcome outcome, EndReason reason, const char *what)
{
    set_fen(b, fen);
    char text[MOVE_TEXT_MAX];
    int ply = 0;
    while (next_move(&line, text)) {
        if (end_ply && ply >= end_ply)
            fail_msg("%s: line goes past ply %d", what, end_ply);
        play(b, text);
        ply++;
        if (ply == end_ply)
            expect_end(b, cfg, outcome, reason, what, ply);
        else
            expect_end(b, cfg, OUTCOME_NONE, END_NONE, what, ply);
    }
    if (end_ply && ply != end_ply)
        fail_msg("%s: line has %d plies, not %d", what, ply, end_ply);
}

/// Sets fen and plays the first plies moves of line, without asking the referee.
static void play_prefix(Board *b, const char *fen, const char *line, int plies)
{
    set_fen(b, fen);
    char text[MOVE_TEXT_MAX];
    for (int i = 0; i < plies; i++) {
        if (!next_move(&line, text))
            fail_msg("line is shorter than %d plies", plies);
        play(b, text);
    }
}

static void expect_probe_chase(const Board *b, const RulesConfig *cfg, bool chase, SearchRule want,
                               const char *what)
{
    SearchRule got = rules_search_probe(b, cfg, chase);
    if (got != want) {
        char fen[BOARD_FEN_MAX];
        board_fen(b, fen, sizeof fen);
        fail_msg("%s (%s, chase rule %s), %s after %d plies: expected %s, got %s", what,
                 rules_set_name(cfg->set), chase ? "on" : "off", fen, b->hist_len, probe_name(want),
                 probe_name(got));
    }
}

/// The probe as the engine calls it by default (ChaseRule on).
static void expect_probe(const Board *b, const RulesConfig *cfg, SearchRule want, const char *what)
{
    expect_probe_chase(b, cfg, true, want, what);
}

/// Rules 1-2: a side left without a legal move loses, by checkmate when in check and by
/// stalemate otherwise, under both rule sets; a side with moves left plays on.
static void test_mate_and_stalemate(void **state)
{
    Board *b = *state;
    for (RuleSet set = RULES_SEED; set < RULES_SET_NB; set++) {
        RulesConfig cfg = rules_config_default(set);
        run_game(b, MATE_RED_FEN, "b1b9", &cfg, 1, OUTCOME_RED_WINS, END_CHECKMATE, "red mates");
        run_game(b, MATE_BLACK_FEN, "b8b0", &cfg, 1, OUTCOME_BLACK_WINS, END_CHECKMATE,
                 "black mates");
        run_game(b, STALE_RED_FEN, "f7f8", &cfg, 1, OUTCOME_RED_WINS, END_STALEMATE,
                 "black is stalemated");
        run_game(b, STALE_BLACK_FEN, "f2f1", &cfg, 1, OUTCOME_BLACK_WINS, END_STALEMATE,
                 "red is stalemated");
        // The same positions one move earlier, and the start position, have moves left.
        set_fen(b, MATE_RED_FEN);
        expect_end(b, &cfg, OUTCOME_NONE, END_NONE, "before the mate", 0);
        set_fen(b, STALE_RED_FEN);
        expect_end(b, &cfg, OUTCOME_NONE, END_NONE, "before the stalemate", 0);
        set_fen(b, BOARD_START_FEN);
        expect_end(b, &cfg, OUTCOME_NONE, END_NONE, "start position", 0);
        run_game(b, BOARD_START_FEN, "h2e2 h9g7 h0g2", &cfg, 0, OUTCOME_NONE, END_NONE, "opening");
    }
}

/// Rule 4 (seed): a chariot checking back and forth is allowed its third identical check and
/// loses at once with the fourth (same piece type, same destination), for either colour.
static void test_perpetual_check_seed(void **state)
{
    Board *b = *state;
    RulesConfig cfg = rules_config_default(RULES_SEED);
    run_game(b, PERP_FEN, PERP_LINE, &cfg, 13, OUTCOME_BLACK_WINS, END_PERPETUAL_CHECK,
             "red checks a9/a8");
    run_game(b, PERP_BLACK_FEN, PERP_BLACK_LINE, &cfg, 13, OUTCOME_RED_WINS, END_PERPETUAL_CHECK,
             "black checks a0/a1");
}

/// Rule 4 (seed): a non-checking move by the checking side ends its run, so the check that
/// would have been the fourth a9 check goes unpunished and the count starts again from one.
static void test_perpetual_check_run_restarts(void **state)
{
    Board *b = *state;
    RulesConfig cfg = rules_config_default(RULES_SEED);
    // Plies 1-10: checks a9, a8, a9, a8, a9 (a9 three times); ply 11: the soldier moves (no
    // check); ply 12: Black's elephant moves. New run: a8 (13), a9 (15: the old run's fourth
    // a9), a8, a9, a8, a9, a8 (25: fourth a8 of the new run).
    static const char line[] = "a7a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e9 a8a9 e9e8 i3i4 g9i7 "
                               "a9a8 e8e9 a8a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8";
    run_game(b, PERP_FEN, line, &cfg, 25, OUTCOME_BLACK_WINS, END_PERPETUAL_CHECK,
             "quiet move splits the run");
}

/// Rule 4 (seed) with mutual checks: when both sides check with every move the third occurrence
/// does not end the game, and the side that first gives the same check a fourth time loses.
static void test_perpetual_check_mutual_seed(void **state)
{
    Board *b = *state;
    RulesConfig cfg = rules_config_default(RULES_SEED);
    // Red's g9 check is given on plies 1, 5, 9, 13; Black's f2 check on 2, 6, 10 (14).
    run_game(b, MUTUAL_FEN, MUTUAL_LINE, &cfg, 13, OUTCOME_BLACK_WINS, END_PERPETUAL_CHECK,
             "both sides check");
}

/// Rule sets, seed repetition: the third occurrence of a position is a draw, not the second,
/// when no side checked with every move since the first, even if one side checked sometimes.
static void test_repetition_seed_draw(void **state)
{
    Board *b = *state;
    RulesConfig cfg = rules_config_default(RULES_SEED);
    run_game(b, BOARD_START_FEN, HORSE_LINE, &cfg, 8, OUTCOME_DRAW, END_REPETITION,
             "horses out and back");
    run_game(b, PERP_FEN, MIXED_LINE, &cfg, 8, OUTCOME_DRAW, END_REPETITION,
             "red checks every other move");
}

/// Rule sets, seed repetition, with rule 4: when one side checked with every move since the first
/// occurrence, the third occurrence does not end the game (rule 4 decides later).
static void test_repetition_seed_perpetual_goes_on(void **state)
{
    Board *b = *state;
    RulesConfig cfg = rules_config_default(RULES_SEED);
    uint64_t keys[11];
    set_fen(b, PERP_FEN);
    const char *line = PERP_LINE;
    char text[MOVE_TEXT_MAX];
    for (int ply = 1; ply <= 10; ply++) {
        assert_true(next_move(&line, text));
        play(b, text);
        keys[ply] = b->key;
    }
    // The positions after plies 1 and 2 occur for the third time after plies 9 and 10.
    assert_true(keys[1] == keys[5] && keys[5] == keys[9]);
    assert_true(keys[2] == keys[6] && keys[6] == keys[10]);
    expect_end(b, &cfg, OUTCOME_NONE, END_NONE, "third occurrence after red's checks", 10);
    board_unmake_move(b);
    expect_end(b, &cfg, OUTCOME_NONE, END_NONE, "third occurrence after red's checks", 9);
    // Black checking every move is treated the same way.
    play_prefix(b, PERP_BLACK_FEN, PERP_BLACK_LINE, 10);
    expect_end(b, &cfg, OUTCOME_NONE, END_NONE, "third occurrence after black's checks", 10);
}

/// Rule sets, asian repetition: at the third occurrence the side that checked with every move since
/// the first (the other did not) loses by perpetual check; without such a side it is a draw.
static void test_repetition_asian(void **state)
{
    Board *b = *state;
    RulesConfig cfg = rules_config_default(RULES_ASIAN);
    run_game(b, PERP_FEN, "a7a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e9 a8a9", &cfg, 9,
             OUTCOME_BLACK_WINS, END_PERPETUAL_CHECK, "red checks every move");
    run_game(b, PERP_BLACK_FEN, "a2a0 e0e1 a0a1 e1e0 a1a0 e0e1 a0a1 e1e0 a1a0", &cfg, 9,
             OUTCOME_RED_WINS, END_PERPETUAL_CHECK, "black checks every move");
    run_game(b, BOARD_START_FEN, HORSE_LINE, &cfg, 8, OUTCOME_DRAW, END_REPETITION,
             "horses out and back");
    run_game(b, PERP_FEN, MIXED_LINE, &cfg, 8, OUTCOME_DRAW, END_REPETITION,
             "red checks every other move");
    // Both sides checked with every move: a draw, not a loss for either.
    play_prefix(b, MUTUAL_FEN, MUTUAL_LINE, 7);
    expect_end(b, &cfg, OUTCOME_NONE, END_NONE, "both sides check", 7);
    play(b, "f2f9");
    expect_end(b, &cfg, OUTCOME_DRAW, END_REPETITION, "both sides check", 8);
}

/// Rule sets, asian 60-move rule (and rules 1-2): the 120th ply without a capture draws, a capture
/// resets the count, the rule does not exist under seed, and a side with no legal move at that
/// point loses.
static void test_move_rule_asian(void **state)
{
    Board *b = *state;
    RulesConfig asian = rules_config_default(RULES_ASIAN);
    RulesConfig seed = rules_config_default(RULES_SEED);
    static const char quiet[] = "4k1b2/9/9/9/p8/9/9/9/9/R2K5 w - - 119 70";
    run_game(b, quiet, "a0a1", &asian, 1, OUTCOME_DRAW, END_MOVE_RULE, "120th quiet ply");
    run_game(b, quiet, "a0a1", &seed, 0, OUTCOME_NONE, END_NONE, "120th quiet ply");
    run_game(b, quiet, "a0a5 e9e8", &asian, 0, OUTCOME_NONE, END_NONE, "capture at ply 120");
    assert_int_equal(b->halfmove, 1);
    // One ply short: the 119th.
    run_game(b, "4k1b2/9/9/9/p8/9/9/9/9/R2K5 w - - 118 70", "a0a1", &asian, 0, OUTCOME_NONE,
             END_NONE, "119th quiet ply");
    // Mate and stalemate on the 120th ply are decided by rules 1-2.
    run_game(b, "4k1b2/R8/9/9/9/9/9/9/1R7/3K5 w - - 119 70", "b1b9", &asian, 1, OUTCOME_RED_WINS,
             END_CHECKMATE, "mate on the 120th ply");
    run_game(b, "4k4/9/5P3/9/9/9/9/9/9/3K5 w - - 119 70", "f7f8", &asian, 1, OUTCOME_RED_WINS,
             END_STALEMATE, "stalemate on the 120th ply");
}

/// Rule sets, asian 60-move rule: a side's checking moves after its tenth since the last capture
/// are not counted, so fifteen checks by Red delay the draw by five plies.
static void test_move_rule_asian_checks_not_counted(void **state)
{
    Board *b = *state;
    RulesConfig cfg = rules_config_default(RULES_ASIAN);
    // Three rounds of 12 plies, each with five chariot checks (a9, a8, a9, a8, a7) and a soldier
    // step (no position occurs three times), then three quiet plies. The count starts at 86:
    // raw 120 is ply 34 (where 5 checks are over ten: 115 counted); the draw is at ply 39.
    static const char fen[] = "4k1b2/9/R8/9/9/9/2P6/9/9/3K5 w - - 86 40";
    static const char line[] = "a7a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e7 a8a7 e7e8 c3c4 e8e9 "
                               "a7a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e7 a8a7 e7e8 c4c5 e8e9 "
                               "a7a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e7 a8a7 e7e8 c5c6 e8e9 "
                               "d0d1 e9e8 d1d0";
    run_game(b, fen, line, &cfg, 39, OUTCOME_DRAW, END_MOVE_RULE, "fifteen checks by red");
    // Ten checks are all counted: two rounds from 96 reach 120 at ply 24.
    static const char line10[] = "a7a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e7 a8a7 e7e8 c3c4 e8e9 "
                                 "a7a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e7 a8a7 e7e8 c4c5 e8e9";
    run_game(b, "4k1b2/9/R8/9/9/9/2P6/9/9/3K5 w - - 96 40", line10, &cfg, 24, OUTCOME_DRAW,
             END_MOVE_RULE, "ten checks by red");
}

static int limit_of(Board *b, const char *fen, Color strong, int counting_default)
{
    set_fen(b, fen);
    return rules_counting_limit(b, strong, counting_default);
}

/// Rule 6: the count is the smallest table row the stronger side's material meets
/// (advisors and elephants not counted), else the configured default.
static void test_counting_limits(void **state)
{
    Board *b = *state;
    static const struct {
        const char *fen;
        Color strong;
        int limit;
        const char *what;
    } rows[] = {
        {"4k4/9/9/9/9/9/9/9/9/RR1K5 w", RED, 9, "2 chariots"},
        {"4k4/9/9/9/9/9/9/9/9/R2K5 w", RED, 18, "1 chariot"},
        {"4k4/9/9/9/9/9/P1P1P1P1P/9/9/3K5 w", RED, 18, "5 soldiers"},
        {"4k4/9/9/9/9/9/P1P1P1P2/9/9/3K5 w", RED, 27, "4 soldiers"},
        {"4k4/9/9/9/9/9/9/9/9/NN1K5 w", RED, 27, "2 horses"},
        {"4k4/9/9/9/9/9/9/9/9/CC1K5 w", RED, 27, "2 cannons"},
        {"4k4/9/9/9/9/9/P1P1P4/9/9/3K5 w", RED, 36, "3 soldiers"},
        {"4k4/9/9/9/9/9/P1P6/9/9/3K5 w", RED, 45, "2 soldiers"},
        {"4k4/9/9/9/9/9/P1P6/9/9/R2K5 w", RED, 18, "chariot and 2 soldiers"},
        {"4k4/9/9/9/9/9/9/9/9/N2K5 w", RED, 60, "1 horse"},
        {"4k4/9/9/9/9/9/P8/9/9/3K5 w", RED, 60, "1 soldier"},
        {"4k4/9/9/9/9/9/9/9/9/NC1K5 w", RED, 60, "horse and cannon"},
        {"4k4/9/9/9/9/9/P8/9/4A4/2BK1A3 w", RED, 60, "soldier, advisors, elephant"},
        {"3k5/rr7/9/9/9/9/9/9/9/4K4 b", BLACK, 9, "black's 2 chariots"},
        {"3k5/9/9/9/p1p1p1p1p/9/9/9/9/4K4 b", BLACK, 18, "black's 5 soldiers"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int got = limit_of(b, rows[i].fen, rows[i].strong, 60);
        if (got != rows[i].limit)
            fail_msg("%s (%s): expected %d, got %d", rows[i].what, rows[i].fen, rows[i].limit, got);
    }
    // A custom default applies where no row does, and nowhere else.
    assert_int_equal(limit_of(b, "4k4/9/9/9/9/9/9/9/9/N2K5 w", RED, 7), 7);
    assert_int_equal(limit_of(b, "4k4/9/9/9/9/9/9/9/9/R2K5 w", RED, 7), 18);
}

/// Rule 6 (seed): against a bare general the game is drawn right after the stronger side's
/// N-th move, counted from its first move after the general became bare; not under asian.
static void test_counting_game(void **state)
{
    Board *b = *state;
    RulesConfig cfg = rules_config_default(RULES_SEED);
    cfg.counting_default = 3;
    run_game(b, HORSE_VS_BARE_FEN, HORSE_VS_BARE_LINE, &cfg, 5, OUTCOME_DRAW, END_COUNTING,
             "horse vs bare general, count 3");
    // With the default count of 60 the same game goes on.
    RulesConfig dflt = rules_config_default(RULES_SEED);
    run_game(b, HORSE_VS_BARE_FEN, HORSE_VS_BARE_LINE, &dflt, 0, OUTCOME_NONE, END_NONE,
             "horse vs bare general, count 60");
    // The capture that leaves the general bare is not one of the counted moves.
    run_game(b, "4k4/9/9/9/9/9/9/2p6/9/1N1K5 w - - 0 1", "b0c2 e9e8 c2e3 e8e9 e3g4 e9e8 g4h6", &cfg,
             7, OUTCOME_DRAW, END_COUNTING, "count starts after the capture");
    // Black is the stronger side.
    run_game(b, "3k1n3/9/9/9/9/9/9/9/9/4K4 b - - 0 1", "f9g7 e0e1 g7f5 e1e0 f5d4", &cfg, 5,
             OUTCOME_DRAW, END_COUNTING, "black's horse vs bare general");
    // Under asian there is no counting.
    RulesConfig asian = rules_config_default(RULES_ASIAN);
    asian.counting_default = 3;
    run_game(b, HORSE_VS_BARE_FEN, HORSE_VS_BARE_LINE, &asian, 0, OUTCOME_NONE, END_NONE,
             "horse vs bare general, count 3");
}

/// Rule 6 (seed): when the stronger side's material changes so that another row applies (the
/// bare general takes the chariot), the count starts again from the new row.
static void test_counting_restarts(void **state)
{
    Board *b = *state;
    RulesConfig cfg = rules_config_default(RULES_SEED);
    cfg.counting_default = 3;
    // Chariot and horse (18): two Red moves, the general takes the chariot on f8, then the
    // lone horse (3) gets three more moves.
    run_game(b, "4k4/9/9/9/9/9/9/9/9/RN1K5 w - - 0 1",
             "a0a8 e9f9 a8f8 f9f8 b0c2 f8f9 c2e3 f9f8 e3g4", &cfg, 9, OUTCOME_DRAW, END_COUNTING,
             "chariot lost, horse counts anew");
}

/// Rule 7: with no chariot, horse, cannon or soldier on the board the game is drawn at once
/// under both rule sets; one soldier is enough to play on.
static void test_insufficient_material(void **state)
{
    Board *b = *state;
    static const char *const drawn[] = {
        "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1",
        "2bak4/9/9/9/9/9/9/9/9/2BK1A3 w - - 0 1",
        "2bakab2/9/9/9/9/9/9/9/9/2BK1AB2 b - - 0 1",
    };
    for (RuleSet set = RULES_SEED; set < RULES_SET_NB; set++) {
        RulesConfig cfg = rules_config_default(set);
        for (size_t i = 0; i < sizeof drawn / sizeof drawn[0]; i++) {
            set_fen(b, drawn[i]);
            assert_true(rules_insufficient_material(b));
            expect_end(b, &cfg, OUTCOME_DRAW, END_INSUFFICIENT, drawn[i], 0);
        }
        run_game(b, "2bak4/9/9/9/9/9/4P4/9/9/2BK1A3 w - - 0 1", "e3e4", &cfg, 0, OUTCOME_NONE,
                 END_NONE, "one soldier left");
        assert_false(rules_insufficient_material(b));
        set_fen(b, "2bak4/9/9/9/9/9/9/9/9/1nBK1A3 w - - 0 1");
        assert_false(rules_insufficient_material(b));
    }
    // The last piece that could mate is captured: drawn right after the capture.
    for (RuleSet set = RULES_SEED; set < RULES_SET_NB; set++) {
        RulesConfig cfg = rules_config_default(set);
        run_game(b, "3ak4/9/9/9/9/9/9/9/4r4/3K1A3 w - - 0 1", "f0e1", &cfg, 1, OUTCOME_DRAW,
                 END_INSUFFICIENT, "advisor takes the last chariot");
    }
}

/// Rule 9 (seed): the configured ply limit draws the game once that many plies are played, 0
/// means no limit, the seed default is 300 plies and asian has none; mate still wins there.
static void test_ply_limit(void **state)
{
    Board *b = *state;
    RulesConfig seed = rules_config_default(RULES_SEED);
    RulesConfig asian = rules_config_default(RULES_ASIAN);
    assert_int_equal(seed.set, RULES_SEED);
    assert_int_equal(seed.ply_limit, 300);
    assert_int_equal(seed.counting_default, 60);
    assert_int_equal(asian.set, RULES_ASIAN);
    assert_int_equal(asian.ply_limit, 0);
    assert_int_equal(asian.counting_default, 60);

    static const char line[] = "h2e2 h9g7 h0g2 i9h9";
    RulesConfig cfg = seed;
    cfg.ply_limit = 4;
    run_game(b, BOARD_START_FEN, line, &cfg, 4, OUTCOME_DRAW, END_PLY_LIMIT, "limit 4");
    cfg.ply_limit = 0;
    run_game(b, BOARD_START_FEN, line, &cfg, 0, OUTCOME_NONE, END_NONE, "no limit");
    // A mate on the last allowed ply is a mate.
    cfg.ply_limit = 1;
    run_game(b, MATE_RED_FEN, "b1b9", &cfg, 1, OUTCOME_RED_WINS, END_CHECKMATE, "mate at limit");
}

/// The search's probe (rules 4, 6, 7 and repetition): a repetition in the line is a win for
/// the side to move when only the opponent checked throughout, a loss when only it did, a
/// draw otherwise; a fresh position is undecided; material and counting draws are draws.
static void test_search_probe(void **state)
{
    Board *b = *state;
    RulesConfig seed = rules_config_default(RULES_SEED);
    RulesConfig asian = rules_config_default(RULES_ASIAN);
    for (RuleSet set = RULES_SEED; set < RULES_SET_NB; set++) {
        RulesConfig cfg = rules_config_default(set);
        set_fen(b, BOARD_START_FEN);
        expect_probe(b, &cfg, SEARCH_RULE_NONE, "start position");
        for (int plies = 1; plies <= 4; plies++) {
            play_prefix(b, PERP_FEN, PERP_LINE, plies);
            expect_probe(b, &cfg, SEARCH_RULE_NONE, "no repetition yet");
        }
        // Ply 5 repeats ply 1 with Black to move: Red checked throughout, Black did not.
        play_prefix(b, PERP_FEN, PERP_LINE, 5);
        expect_probe(b, &cfg, SEARCH_RULE_WIN, "black to move after red's perpetual");
        // Ply 6 repeats ply 2 with Red, the checking side, to move.
        play_prefix(b, PERP_FEN, PERP_LINE, 6);
        expect_probe(b, &cfg, SEARCH_RULE_LOSS, "red to move after its perpetual");
        // The same with Black checking.
        play_prefix(b, PERP_BLACK_FEN, PERP_BLACK_LINE, 5);
        expect_probe(b, &cfg, SEARCH_RULE_WIN, "red to move after black's perpetual");
        play_prefix(b, PERP_BLACK_FEN, PERP_BLACK_LINE, 6);
        expect_probe(b, &cfg, SEARCH_RULE_LOSS, "black to move after its perpetual");
        // Plain repetitions.
        play_prefix(b, BOARD_START_FEN, HORSE_LINE, 4);
        expect_probe(b, &cfg, SEARCH_RULE_DRAW, "horses back home");
        play_prefix(b, PERP_FEN, MIXED_LINE, 4);
        expect_probe(b, &cfg, SEARCH_RULE_DRAW, "red checked every other move");
        play_prefix(b, MUTUAL_FEN, MUTUAL_LINE, 4);
        expect_probe(b, &cfg, SEARCH_RULE_DRAW, "both sides checked every move");
        // Insufficient material.
        set_fen(b, "2bak4/9/9/9/9/9/9/9/9/2BK1A3 w - - 0 1");
        expect_probe(b, &cfg, SEARCH_RULE_DRAW, "generals, advisors, elephants");
    }
    // Counting (seed only): the horse's third move against a bare general with a count of 3.
    RulesConfig counting = seed;
    counting.counting_default = 3;
    play_prefix(b, HORSE_VS_BARE_FEN, HORSE_VS_BARE_LINE, 5);
    expect_probe(b, &counting, SEARCH_RULE_DRAW, "count used up");
    play_prefix(b, HORSE_VS_BARE_FEN, HORSE_VS_BARE_LINE, 4);
    expect_probe(b, &counting, SEARCH_RULE_NONE, "one move of the count left");
    RulesConfig asian_counting = asian;
    asian_counting.counting_default = 3;
    play_prefix(b, HORSE_VS_BARE_FEN, HORSE_VS_BARE_LINE, 5);
    expect_probe(b, &asian_counting, SEARCH_RULE_NONE, "no counting under asian");
    // The 60-move rule (asian only).
    play_prefix(b, "4k1b2/9/9/9/p8/9/9/9/9/R2K5 w - - 119 70", "a0a1", 1);
    expect_probe(b, &asian, SEARCH_RULE_DRAW, "120th quiet ply");
    expect_probe(b, &seed, SEARCH_RULE_NONE, "120th quiet ply");
}

// ---------------------------------------------------------------------------------------
// Rule C, perpetual chase (asian). Every cycle below was built for this file; each move was
// checked against Fairy-Stockfish's legal moves while building it, and each verdict against
// Pikafish's rule_judge. A cycle is played twice from its FEN, so the position after ply 0
// stands for the third time after ply 8 (17 for the mutual chase), and run_game checks that
// the game goes on until exactly that ply.

// Red's horse shuttles b5-d4 and attacks Black's chariot, which shuttles c6-c7; the chariot on
// c9 could take back on either point.
static const char CHASE_PROTECTED_FEN[] = "2r1k4/9/9/2r6/1N7/9/9/9/9/3K5 w - - 0 1";
static const char CHASE_PROTECTED_LINE[] = "b5d4 c6c7 d4b5 c7c6 b5d4 c6c7 d4b5 c7c6";
// Red's chariot shuttles f1-d1 after Black's cannon (d5-f5); the black horse on e7 attacks both
// points but is the only piece between the generals. In the second FEN Red's soldier on e3
// stands between them too, so the horse protects.
static const char CHASE_PINNED_FEN[] = "4k4/9/4n4/9/3c5/9/9/9/5R3/4K4 w - - 0 1";
static const char CHASE_UNPINNED_FEN[] = "4k4/9/4n4/9/3c5/9/4P4/9/5R3/4K4 w - - 0 1";
static const char CHASE_PINNED_LINE[] = "f1d1 d5f5 d1f1 f5d5 f1d1 d5f5 d1f1 f5d5";
// Red's chariot shuttles f2-g2 after Black's horse (g7-f9); on f9 only Black's general could
// take back, onto a point Red's soldier on g9 attacks. Without that soldier it protects.
static const char CHASE_GENERAL_FEN[] = "4k1P2/9/6n2/9/9/9/9/5R3/9/3K5 w - - 0 1";
static const char CHASE_GENERAL_FREE_FEN[] = "4k4/9/6n2/9/9/9/9/5R3/9/3K5 w - - 0 1";
static const char CHASE_GENERAL_LINE[] = "f2g2 g7f9 g2f2 f9g7 f2g2 g7f9 g2f2 f9g7";
// Red's cannon on a0 aims up the a-file at a black soldier that never moves: Red's elephant
// (c0-a2) and Black's crossed soldier (b3-a3) take turns as its one screen, so each elephant
// move attacks the soldier anew. On a4 it has crossed the river; on a5 it has not.
static const char CHASE_SOLDIER_CROSSED_FEN[] = "4k4/9/9/9/9/p8/1p7/9/9/C1BK5 w - - 0 1";
static const char CHASE_SOLDIER_HOME_FEN[] = "4k4/9/9/9/p8/9/1p7/9/9/C1BK5 w - - 0 1";
static const char CHASE_SOLDIER_LINE[] = "c0a2 b3a3 a2c0 a3b3 c0a2 b3a3 a2c0 a3b3";
// A red soldier (or chariot) on c5/b5 attacks Black's cannon as it shuttles b6-c6.
static const char CHASE_BY_SOLDIER_FEN[] = "4k4/9/9/1c7/2P6/9/9/9/9/3K5 w - - 0 1";
static const char CHASE_BY_CHARIOT_FEN[] = "4k4/9/9/1c7/2R6/9/9/9/9/3K5 w - - 0 1";
static const char CHASE_BY_SOLDIER_LINE[] = "c5b5 b6c6 b5c5 c6b6 c5b5 b6c6 b5c5 c6b6";
// Black's general (e8-e9) attacks Red's unprotected cannon as it shuttles d9-d8.
static const char CHASE_BY_GENERAL_FEN[] = "3C5/4k4/9/9/9/9/9/9/9/5K3 b - - 0 1";
static const char CHASE_BY_GENERAL_LINE[] = "e8e9 d9d8 e9e8 d8d9 e8e9 d9d8 e9e8 d8d9";
// Red's chariot shuttles a1-b1, attacking the horse on a6 from a1 and the one on b7 from b1;
// Black's general steps e9-e8 and back.
static const char CHASE_TWO_TARGETS_FEN[] = "4k4/9/1n7/n8/9/9/9/9/R8/3K5 w - - 0 1";
static const char CHASE_TWO_TARGETS_LINE[] = "a1b1 e9e8 b1a1 e8e9 a1b1 e9e8 b1a1 e8e9";
// Red's chariot steps a1-a2 and back, attacking the unprotected horse on a6 from both points;
// Black's general steps e9-e8 and back.
static const char CHASE_STANDING_FEN[] = "4k4/9/9/n8/9/9/9/9/R8/3K5 w - - 0 1";
static const char CHASE_STANDING_LINE[] = "a1a2 e9e8 a2a1 e8e9 a1a2 e9e8 a2a1 e8e9";
// Black's chariot chases Red's horse around b1-d2-c4-a3 and the horse attacks the chariot
// back from each point (Fairy-Stockfish's "mutual chase" cycle, colours and sides swapped).
static const char CHASE_MUTUAL_FEN[] = "4k4/9/9/4p4/9/9/3rP4/9/1N7/4K4 b - - 0 1";
static const char CHASE_MUTUAL_LINE[] = "d3b3 b1d2 b3b2 d2c4 b2c2 c4a3 c2c3 a3b1 c3b3 b1d2 b3b2 "
                                        "d2c4 b2c2 c4a3 c2c3 a3b1 c3b3";
// Red's horse (b7-a5) attacks Black's horse (c4-d6), which could take it back unless its leg
// towards Red's horse is blocked (b4 and c6 in the second FEN).
static const char CHASE_HORSES_FEN[] = "4k4/9/1N7/9/9/2n6/9/9/9/3K5 w - - 0 1";
static const char CHASE_HORSES_BLOCKED_FEN[] = "4k4/9/1N7/2p6/9/1Pn6/9/9/9/3K5 w - - 0 1";
static const char CHASE_HORSES_LINE[] = "b7a5 c4d6 a5b7 d6c4 b7a5 c4d6 a5b7 d6c4";
// Black's cannon on d3 chases Red's crossed soldier on d8 through screens (as in the soldier
// cycle above); the black cannon's return to d5 checks Red's general over two screens. With
// Red's advisor on d1 and horse on d2 in the way there is no check.
static const char CHASE_CHECK_FEN[] = "4k4/3P5/9/9/3c5/3C5/3c5/9/9/3K5 b - - 0 1";
static const char CHASE_NO_CHECK_FEN[] = "4k4/3P5/9/9/3c5/3C5/3c5/3A5/3N5/3K5 b - - 0 1";
static const char CHASE_CHECK_LINE[] = "d5f5 d4f4 f5d5 f4d4 d5f5 d4f4 f5d5 f4d4";

static void run_asian(Board *b, const char *fen, const char *line, int end_ply, Outcome outcome,
                      EndReason reason, const char *what)
{
    RulesConfig cfg = rules_config_default(RULES_ASIAN);
    run_game(b, fen, line, &cfg, end_ply, outcome, reason, what);
}

/// Rule C: a chariot attacked by a horse is chased even when protected, and the chasing side
/// loses at the third occurrence, not one ply earlier; under seed the same cycle is a draw.
static void test_chase_protected_chariot(void **state)
{
    Board *b = *state;
    run_asian(b, CHASE_PROTECTED_FEN, CHASE_PROTECTED_LINE, 8, OUTCOME_BLACK_WINS,
              END_PERPETUAL_CHASE, "horse chases a protected chariot");
    RulesConfig seed = rules_config_default(RULES_SEED);
    run_game(b, CHASE_PROTECTED_FEN, CHASE_PROTECTED_LINE, &seed, 8, OUTCOME_DRAW, END_REPETITION,
             "horse chases a protected chariot");
}

/// Rule C5 e: a protector that cannot legally take back, being the only piece between the
/// generals, does not protect; once another piece stands between them it does (a draw).
static void test_chase_fake_protector_pinned(void **state)
{
    Board *b = *state;
    run_asian(b, CHASE_PINNED_FEN, CHASE_PINNED_LINE, 8, OUTCOME_BLACK_WINS, END_PERPETUAL_CHASE,
              "cannon protected by a pinned horse");
    run_asian(b, CHASE_UNPINNED_FEN, CHASE_PINNED_LINE, 8, OUTCOME_DRAW, END_REPETITION,
              "cannon protected by a free horse");
}

/// Rule C5 e: a general that would step into an attack to take back does not protect; with
/// the point safe it does (a draw).
static void test_chase_fake_protector_general(void **state)
{
    Board *b = *state;
    run_asian(b, CHASE_GENERAL_FEN, CHASE_GENERAL_LINE, 8, OUTCOME_BLACK_WINS, END_PERPETUAL_CHASE,
              "horse next to its general, point attacked");
    run_asian(b, CHASE_GENERAL_FREE_FEN, CHASE_GENERAL_LINE, 8, OUTCOME_DRAW, END_REPETITION,
              "horse next to its general, point safe");
}

/// Rule C5 b: a soldier that has crossed the river can be chased, one on its own side cannot.
static void test_chase_soldier_crossed(void **state)
{
    Board *b = *state;
    run_asian(b, CHASE_SOLDIER_CROSSED_FEN, CHASE_SOLDIER_LINE, 8, OUTCOME_BLACK_WINS,
              END_PERPETUAL_CHASE, "cannon chases a crossed soldier");
    run_asian(b, CHASE_SOLDIER_HOME_FEN, CHASE_SOLDIER_LINE, 8, OUTCOME_DRAW, END_REPETITION,
              "cannon attacks a soldier at home");
}

/// Rule C5 a: soldiers never chase: a soldier attacking a cannon with every move draws where a
/// chariot making the same moves loses.
static void test_chase_soldier_never_chases(void **state)
{
    Board *b = *state;
    run_asian(b, CHASE_BY_SOLDIER_FEN, CHASE_BY_SOLDIER_LINE, 8, OUTCOME_DRAW, END_REPETITION,
              "soldier attacks a cannon");
    run_asian(b, CHASE_BY_CHARIOT_FEN, CHASE_BY_SOLDIER_LINE, 8, OUTCOME_BLACK_WINS,
              END_PERPETUAL_CHASE, "chariot attacks a cannon");
}

/// Rule C5 a: generals never chase: a general attacking an unprotected cannon with every move
/// draws.
static void test_chase_general_never_chases(void **state)
{
    Board *b = *state;
    run_asian(b, CHASE_BY_GENERAL_FEN, CHASE_BY_GENERAL_LINE, 8, OUTCOME_DRAW, END_REPETITION,
              "general attacks a cannon");
}

/// Rule C6: attacking two different pieces in turn (two horses of one type, told apart by
/// their ids) is not a perpetual chase.
static void test_chase_two_targets(void **state)
{
    Board *b = *state;
    run_asian(b, CHASE_TWO_TARGETS_FEN, CHASE_TWO_TARGETS_LINE, 8, OUTCOME_DRAW, END_REPETITION,
              "chariot attacks two horses in turn");
}

/// Rule C6: an attack that stands before and after every move is no new chase, so keeping a
/// piece attacked while moving is not a perpetual chase.
static void test_chase_standing_attack(void **state)
{
    Board *b = *state;
    run_asian(b, CHASE_STANDING_FEN, CHASE_STANDING_LINE, 8, OUTCOME_DRAW, END_REPETITION,
              "chariot keeps a horse attacked");
}

/// Rule C7: when both sides chase perpetually the repetition is a draw.
static void test_chase_mutual(void **state)
{
    Board *b = *state;
    run_asian(b, CHASE_MUTUAL_FEN, CHASE_MUTUAL_LINE, 17, OUTCOME_DRAW, END_REPETITION,
              "chariot and horse chase each other");
}

/// Rule C5 e: an attack on a piece of the same type that could take the attacker back is an
/// exchange offer, not a chase; with its horse leg blocked it cannot, and the attack chases.
static void test_chase_exchange_offer(void **state)
{
    Board *b = *state;
    run_asian(b, CHASE_HORSES_FEN, CHASE_HORSES_LINE, 8, OUTCOME_DRAW, END_REPETITION,
              "horse offers an exchange");
    run_asian(b, CHASE_HORSES_BLOCKED_FEN, CHASE_HORSES_LINE, 8, OUTCOME_BLACK_WINS,
              END_PERPETUAL_CHASE, "horse attacks a horse with a blocked leg");
}

/// Rule C4: a check inside the cycle (not a perpetual one) makes it a draw even when a side
/// chases perpetually; the same cycle without the check is lost by the chasing side.
static void test_chase_check_in_cycle(void **state)
{
    Board *b = *state;
    run_asian(b, CHASE_CHECK_FEN, CHASE_CHECK_LINE, 8, OUTCOME_DRAW, END_REPETITION,
              "chase with one check");
    run_asian(b, CHASE_NO_CHECK_FEN, CHASE_CHECK_LINE, 8, OUTCOME_RED_WINS, END_PERPETUAL_CHASE,
              "chase without a check");
}

typedef struct {
    const char *result, *rule, *fsf, *fen, *moves; // fields of the line, cut in place
} ChaseCase;

/// Splits one data line into its " | "-separated fields; false if it has too few.
static bool parse_chase_case(char *line, ChaseCase *c)
{
    char *field[6];
    int n = 0;
    for (char *p = line; n < 6 && p; n++) {
        field[n] = p;
        char *bar = strstr(p, " | ");
        if (bar)
            *bar = '\0';
        p = bar ? bar + 3 : NULL;
    }
    if (n < 5)
        return false;
    *c = (ChaseCase){field[0], field[1], field[2], field[3], field[4]};
    return true;
}

static Outcome outcome_for_mover(const char *result, Color side)
{
    if (!strcmp(result, "draw"))
        return OUTCOME_DRAW;
    bool red_wins = (side == RED) == !strcmp(result, "win");
    return red_wins ? OUTCOME_RED_WINS : OUTCOME_BLACK_WINS;
}

/// Rule C on public material: the 33 chasing cycles of Fairy-Stockfish's test.py end, at their
/// last position, as Pikafish judges them (tests/data/chase-fsf.txt); Fairy-Stockfish itself
/// expects otherwise on 6 of them, as RULES.md says.
static void test_chase_fsf_cycles(void **state)
{
    Board *b = *state;
    RulesConfig cfg = rules_config_default(RULES_ASIAN);
    char path[512], line[1024];
    snprintf(path, sizeof path, "%s/chase-fsf.txt", XQ_TEST_DATA);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    int cases = 0, fsf_differs = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        ChaseCase c = {NULL, NULL, NULL, NULL, NULL};
        if (!parse_chase_case(line, &c))
            fail_msg("bad line in %s: %s", path, line);
        play_prefix(b, c.fen, c.moves, (int)(strlen(c.moves) + 1) / 5);
        GameEnd e = rules_game_end(b, &cfg);
        Outcome want = outcome_for_mover(c.result, b->side);
        if (e.outcome != want || strcmp(rules_end_name(e.reason), c.rule) != 0)
            fail_msg("%s | %s: expected %s by %s, got %s by %s", c.fen, c.moves, outcome_name(want),
                     c.rule, outcome_name(e.outcome), rules_end_name(e.reason));
        cases++;
        fsf_differs += strcmp(c.result, c.fsf) != 0;
    }
    fclose(f);
    assert_int_equal(cases, 33);
    assert_int_equal(fsf_differs, 6);
}

/// The search's probe under asian: a repetition inside the line is a loss for the side that
/// chased perpetually (a win for the other), from either side's turn; with the chase rule
/// switched off, or under seed, it is a draw; a chase broken by a check is a draw.
static void test_search_probe_chase(void **state)
{
    Board *b = *state;
    RulesConfig asian = rules_config_default(RULES_ASIAN);
    RulesConfig seed = rules_config_default(RULES_SEED);
    for (int plies = 1; plies <= 3; plies++) {
        play_prefix(b, CHASE_PROTECTED_FEN, CHASE_PROTECTED_LINE, plies);
        expect_probe(b, &asian, SEARCH_RULE_NONE, "no repetition yet");
    }
    // Ply 4 repeats the start with Red (chasing) to move, ply 5 repeats ply 1 with Black to
    // move, ply 6 repeats ply 2.
    play_prefix(b, CHASE_PROTECTED_FEN, CHASE_PROTECTED_LINE, 4);
    expect_probe(b, &asian, SEARCH_RULE_LOSS, "red to move after its chase");
    play_prefix(b, CHASE_PROTECTED_FEN, CHASE_PROTECTED_LINE, 5);
    expect_probe(b, &asian, SEARCH_RULE_WIN, "black to move after red's chase");
    expect_probe_chase(b, &asian, false, SEARCH_RULE_DRAW, "black to move after red's chase");
    expect_probe(b, &seed, SEARCH_RULE_DRAW, "black to move after red's chase");
    play_prefix(b, CHASE_PROTECTED_FEN, CHASE_PROTECTED_LINE, 6);
    expect_probe(b, &asian, SEARCH_RULE_LOSS, "red to move after its chase");
    expect_probe_chase(b, &asian, false, SEARCH_RULE_DRAW, "red to move after its chase");
    // Black chases (and loses) in the no-check cycle; with the check it is a draw.
    play_prefix(b, CHASE_NO_CHECK_FEN, CHASE_CHECK_LINE, 5);
    expect_probe(b, &asian, SEARCH_RULE_WIN, "red to move after black's chase");
    play_prefix(b, CHASE_CHECK_FEN, CHASE_CHECK_LINE, 5);
    expect_probe(b, &asian, SEARCH_RULE_DRAW, "red to move, a check in the cycle");
    // Mutual chase and a non-chase: draws.
    play_prefix(b, CHASE_MUTUAL_FEN, CHASE_MUTUAL_LINE, 9);
    expect_probe(b, &asian, SEARCH_RULE_DRAW, "mutual chase");
    play_prefix(b, CHASE_TWO_TARGETS_FEN, CHASE_TWO_TARGETS_LINE, 5);
    expect_probe(b, &asian, SEARCH_RULE_DRAW, "two targets in turn");
}

/// Rule sets and the rules that end a game: names parse and print as the job files and results
/// write them.
static void test_names(void **state)
{
    (void)state;
    RuleSet set = RULES_SET_NB;
    assert_true(rules_set_parse("seed", &set));
    assert_int_equal(set, RULES_SEED);
    assert_true(rules_set_parse("asian", &set));
    assert_int_equal(set, RULES_ASIAN);
    set = RULES_ASIAN;
    assert_false(rules_set_parse("bogus", &set));
    assert_false(rules_set_parse("", &set));
    assert_false(rules_set_parse("Seed", &set));
    assert_false(rules_set_parse("seedy", &set));
    assert_false(rules_set_parse("asia", &set));
    assert_false(rules_set_parse(NULL, &set));
    assert_int_equal(set, RULES_ASIAN); // untouched on failure
    assert_string_equal(rules_set_name(RULES_SEED), "seed");
    assert_string_equal(rules_set_name(RULES_ASIAN), "asian");
    assert_string_equal(rules_set_name(RULES_SET_NB), "unknown");

    static const char *const names[END_REASON_NB] = {
        [END_NONE] = "none",
        [END_CHECKMATE] = "checkmate",
        [END_STALEMATE] = "stalemate",
        [END_PERPETUAL_CHECK] = "perpetual check",
        [END_COUNTING] = "counting",
        [END_REPETITION] = "repetition",
        [END_MOVE_RULE] = "60-move rule",
        [END_INSUFFICIENT] = "insufficient material",
        [END_PLY_LIMIT] = "ply limit",
        [END_PERPETUAL_CHASE] = "perpetual chase",
    };
    for (int r = 0; r < END_REASON_NB; r++)
        assert_string_equal(rules_end_name((EndReason)r), names[r]);
    assert_string_equal(rules_end_name(END_REASON_NB), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mate_and_stalemate, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_perpetual_check_seed, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_perpetual_check_run_restarts, setup_board,
                                        teardown_board),
        cmocka_unit_test_setup_teardown(test_perpetual_check_mutual_seed, setup_board,
                                        teardown_board),
        cmocka_unit_test_setup_teardown(test_repetition_seed_draw, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_repetition_seed_perpetual_goes_on, setup_board,
                                        teardown_board),
        cmocka_unit_test_setup_teardown(test_repetition_asian, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_move_rule_asian, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_move_rule_asian_checks_not_counted, setup_board,
                                        teardown_board),
        cmocka_unit_test_setup_teardown(test_counting_limits, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_counting_game, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_counting_restarts, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_insufficient_material, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_ply_limit, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_search_probe, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_chase_protected_chariot, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_chase_fake_protector_pinned, setup_board,
                                        teardown_board),
        cmocka_unit_test_setup_teardown(test_chase_fake_protector_general, setup_board,
                                        teardown_board),
        cmocka_unit_test_setup_teardown(test_chase_soldier_crossed, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_chase_soldier_never_chases, setup_board,
                                        teardown_board),
        cmocka_unit_test_setup_teardown(test_chase_general_never_chases, setup_board,
                                        teardown_board),
        cmocka_unit_test_setup_teardown(test_chase_two_targets, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_chase_standing_attack, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_chase_mutual, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_chase_exchange_offer, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_chase_check_in_cycle, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_chase_fsf_cycles, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_search_probe_chase, setup_board, teardown_board),
        cmocka_unit_test_setup_teardown(test_names, setup_board, teardown_board),
    };
    return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
