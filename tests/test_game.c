// SPDX-License-Identifier: MIT
// Games and their records: time-control parsing, score adjudication (fastchess meaning),
// openings files (EPD/FEN lines, bad lines by number, seeded order), PGN output, and whole
// games between builtin players ending by a rule of RULES.md.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "game.h"
#include "match.h"
#include "movegen.h"
#include "openings.h"
#include "pgn.h"

/// Time controls parse as testers write them; malformed ones are refused.
static void test_parse_tc(void **state)
{
    (void)state;
    TimeControl tc = {0};
    assert_true(game_parse_tc("10+0.1", &tc));
    assert_int_equal(tc.base_ms, 10000);
    assert_int_equal(tc.inc_ms, 100);
    assert_int_equal(tc.moves, 0);
    assert_true(game_parse_tc("40/60+0.5", &tc));
    assert_int_equal(tc.moves, 40);
    assert_int_equal(tc.base_ms, 60000);
    assert_true(game_parse_tc("1+0.01", &tc));
    assert_int_equal(tc.inc_ms, 10);
    assert_true(game_parse_tc("0+1", &tc));
    char text[32];
    assert_true(game_parse_tc("10+0.1", &tc));
    game_format_tc(&tc, text, sizeof text);
    assert_string_equal(text, "10+0.1");
    static const char *bad[] = {"", "x", "10+", "+1", "-5+1", "0+0", "0/10+1", "10+0.1x", "40/"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (game_parse_tc(bad[i], &tc))
            fail_msg("'%s' accepted", bad[i]);
}

static void push(GameRecord *r, int score)
{
    r->moves[r->ply_count++] = (GameMove){MOVE_NONE, score, true, false, 10, 5};
}

/// Resign: the mover's own score at or below -R for N of its moves; two-sided also needs
/// the opponent's at or above +R. Draw: both sides within +-D for N moves each, from move M.
static void test_score_adjudication(void **state)
{
    (void)state;
    GameRecord *r = calloc(1, sizeof *r);
    assert_non_null(r);
    ResignAdjudication ra = {true, false, 3, 600};
    int seq[] = {620, -650, 640, -700, 660, -601};
    for (int i = 0; i < 6; i++) {
        push(r, seq[i]);
        assert_int_equal(game_resigns(&ra, r), i == 5);
    }
    ra.twosided = true;
    assert_true(game_resigns(&ra, r));
    r->moves[2].score = 500; // the winner's score did not reach +600 once
    assert_false(game_resigns(&ra, r));
    r->moves[3].score = -599; // one of the loser's own scores above -600
    ra.twosided = false;
    assert_false(game_resigns(&ra, r));

    memset(r, 0, sizeof *r);
    DrawAdjudication da = {true, 10, 2, 10};
    int d[] = {300, 5, -8, 10, -10};
    for (int i = 0; i < 5; i++)
        push(r, d[i]);
    assert_true(game_agrees_draw(&da, r, 10));
    assert_false(game_agrees_draw(&da, r, 9)); // before move number 10
    push(r, 11);
    assert_false(game_agrees_draw(&da, r, 12));
    r->moves[r->ply_count - 1].mate = true;
    r->moves[r->ply_count - 1].score = 0;
    assert_false(game_agrees_draw(&da, r, 12)); // a mate score is never a draw
    free(r);
}

/// EPD lines with opcodes and FEN lines both load; bad lines are reported with their line
/// numbers and skipped; a file with no valid line is an error.
static void test_openings_file(void **state)
{
    (void)state;
    char path[] = "/tmp/xq-openings-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text =
        "# comment\n"
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - ce 12; id \"start\";\n"
        "\n"
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1\n"
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNQ w - -\n"
        "4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1\n"
        "garbage\n"
        "startpos moves h2e2 h9g7\n"
        "startpos moves h2e2 h2e3\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char log_path[] = "/tmp/xq-openings-log-XXXXXX";
    int lfd = mkstemp(log_path);
    assert_true(lfd >= 0);
    FILE *log = fdopen(lfd, "w+");
    Openings o;
    char why[256];
    assert_int_equal(openings_load(&o, path, log, why, sizeof why), OPENINGS_OK);
    assert_int_equal(o.count, 3);
    assert_int_equal(o.items[2].move_count, 2);
    assert_string_equal(o.items[0].fen,
                        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1");
    rewind(log);
    char buf[2048] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, log);
    buf[n] = '\0';
    assert_non_null(strstr(buf, ":5: unknown character 'Q'"));
    assert_non_null(strstr(buf, ":6: the generals face each other"));
    assert_non_null(strstr(buf, ":7: "));
    assert_non_null(strstr(buf, ":9: opening move 2 'h2e3': illegal move"));
    fclose(log);
    openings_free(&o);
    unlink(log_path);

    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "bad line\n", 9), 9);
    close(fd);
    assert_int_equal(openings_load(&o, path, NULL, why, sizeof why), OPENINGS_ERR_EMPTY);
    unlink(path);
    assert_int_equal(openings_load(&o, "/nonexistent/book.epd", NULL, why, sizeof why),
                     OPENINGS_ERR_IO);
}

/// The embedded set is large and valid; random order visits every opening once per pass
/// and depends on the seed; sequential order honours the start index.
/// Six fields of up to 127 bytes each (longer than any FEN) are refused with a reason, not
/// written past the FEN buffer (found by fuzz_openings).
static void test_openings_long_fields(void **state)
{
    (void)state;
    char line[1024], field[128];
    memset(field, 'p', 127);
    field[127] = '\0';
    snprintf(line, sizeof line, "%s %s %s %s 0 1", field, field, field, field);
    Opening op;
    char why[160] = "";
    assert_false(openings_parse_line(line, &op, why, sizeof why));
    assert_non_null(strstr(why, "position longer than"));
}

static void test_openings_order(void **state)
{
    (void)state;
    assert_true(openings_default_count >= 200);
    Openings o;
    assert_int_equal(openings_load_default(&o), OPENINGS_OK);
    assert_int_equal(o.count, openings_default_count);
    for (int i = 0; i < o.count; i++) {
        // Every default opening is given as moves from the start position (MaxQi can play it).
        assert_string_equal(o.items[i].fen, BOARD_START_FEN);
        assert_true(o.items[i].move_count >= 2);
    }
    int *seen = calloc((size_t)o.count, sizeof *seen);
    assert_non_null(seen);
    int same = 0;
    for (int i = 0; i < o.count; i++) {
        int k = openings_pick(&o, (uint64_t)i, true, 7, 0);
        assert_true(k >= 0 && k < o.count);
        seen[k]++;
        same += k == openings_pick(&o, (uint64_t)i, true, 8, 0);
    }
    for (int i = 0; i < o.count; i++)
        assert_int_equal(seen[i], 1);
    assert_true(same < o.count / 4);
    assert_int_equal(openings_pick(&o, 0, false, 0, 5), 5);
    assert_int_equal(openings_pick(&o, (uint64_t)o.count, false, 0, 0), 0);
    free(seen);
    openings_free(&o);
}

/// A whole game between two builtin players at fixed depth ends by a rule or the ply cap,
/// with only legal moves, and its PGN carries the tags and the result.
static void test_builtin_game_and_pgn(void **state)
{
    (void)state;
    PlayerConfig pc = {.name = "a", .proto = PROTO_BUILTIN};
    Player *p[2];
    char msg[256];
    assert_int_equal(player_new(&pc, &p[0], msg, sizeof msg), PLAYER_OK);
    snprintf(pc.name, sizeof pc.name, "b");
    assert_int_equal(player_new(&pc, &p[1], msg, sizeof msg), PLAYER_OK);
    GameConfig cfg = {0};
    cfg.rules = rules_config_default(RULES_ASIAN);
    cfg.tc[0].depth = cfg.tc[1].depth = 2;
    cfg.max_plies = 80;
    GameRecord *rec = calloc(1, sizeof *rec);
    assert_non_null(rec);
    snprintf(rec->names[0], PLAYER_NAME_MAX, "a");
    snprintf(rec->names[1], PLAYER_NAME_MAX, "b");
    Opening op;
    char why[160];
    assert_true(openings_parse_line(openings_default_lines[0], &op, why, sizeof why));
    assert_int_equal(game_play(p, 1, &cfg, &op, NULL, rec), 0);
    assert_int_equal(rec->book_plies, op.move_count);
    assert_true(rec->outcome != OUTCOME_NONE);
    assert_true(rec->term != TERM_NONE && rec->term <= TERM_PLY_LIMIT);
    assert_true(rec->ply_count <= 80);
    Board *b = malloc(sizeof *b);
    assert_int_equal(board_set_fen(b, rec->start_fen, NULL, 0), FEN_OK);
    for (int i = 0; i < rec->ply_count; i++) {
        assert_true(movegen_is_legal(b, rec->moves[i].move));
        board_make_move(b, rec->moves[i].move);
    }
    free(b);

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    PgnTags tags = {"test", "here", 3, "depth=2", "asian"};
    assert_int_equal(pgn_write(f, rec, &tags), 0);
    fclose(f);
    assert_non_null(strstr(text, "[Event \"test\"]"));
    assert_non_null(strstr(text, "[White \"b\"]"));
    assert_non_null(strstr(text, "[Black \"a\"]"));
    assert_non_null(strstr(text, "[Variant \"xiangqi\"]"));
    assert_non_null(strstr(text, "[SetUp \"1\"]"));
    char tag[128];
    snprintf(tag, sizeof tag, "[Result \"%s\"]", pgn_result(rec->outcome));
    assert_non_null(strstr(text, tag));
    snprintf(tag, sizeof tag, "[PlyCount \"%d\"]", rec->ply_count);
    assert_non_null(strstr(text, tag));
    assert_non_null(strstr(text, game_termination_name(rec->term)));
    assert_non_null(strstr(text, "{book}"));

    // Read back: the same start, moves, book plies, result, termination and players.
    FILE *rf = fmemopen(text, len, "r");
    GameRecord *back = calloc(1, sizeof *back);
    int lineno = 0;
    assert_int_equal(pgn_read(rf, back, &lineno, why, sizeof why), 1);
    assert_string_equal(back->start_fen, rec->start_fen);
    assert_int_equal(back->ply_count, rec->ply_count);
    assert_int_equal(back->book_plies, rec->book_plies);
    for (int i = 0; i < rec->ply_count; i++) {
        assert_int_equal(back->moves[i].move, rec->moves[i].move);
        if (i >= rec->book_plies && !rec->moves[i].mate)
            assert_int_equal(back->moves[i].score, rec->moves[i].score);
        assert_int_equal(back->moves[i].depth, rec->moves[i].depth);
    }
    assert_int_equal(back->outcome, rec->outcome);
    assert_int_equal(back->term, rec->term);
    assert_string_equal(back->names[0], "b"); // player 1 had Red
    assert_int_equal(pgn_read(rf, back, &lineno, why, sizeof why), 0);
    fclose(rf);
    free(back);
    free(text);
    free(rec);
    player_free(p[0]);
    player_free(p[1]);
}

/// A malformed game (illegal move) is reported with its line and skipped; the next game in
/// the stream still reads.
static void test_pgn_read_errors(void **state)
{
    (void)state;
    const char *text = "[Event \"x\"]\n[Result \"1-0\"]\n\n1. h2e2 h9g7 2. h0h9 1-0\n\n"
                       "[Event \"y\"]\n[Result \"0-1\"]\n\n1. h2e2 {+0.20/8 0.100s} h9g7 0-1\n\n"
                       "[Event \"z\"]\n\n1. h2e2\n";
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    GameRecord *rec = calloc(1, sizeof *rec);
    int lineno = 0;
    char why[256] = "";
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), -1);
    assert_non_null(strstr(why, "line 4: move 3 'h0h9': illegal move"));
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), 1);
    assert_int_equal(rec->ply_count, 2);
    assert_int_equal(rec->outcome, OUTCOME_BLACK_WINS);
    assert_int_equal(rec->moves[0].score, 20);
    assert_int_equal(rec->moves[0].depth, 8);
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), -1);
    assert_non_null(strstr(why, "without a result"));
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), 0);
    fclose(f);
    free(rec);
}

/// A misspelt result token ("1-O") is reported by its line and ends its game at the blank
/// line: the next game still reads whole (it was swallowed as more moves of the bad one).
static void test_pgn_bad_result_keeps_next_game(void **state)
{
    (void)state;
    const char *text = "[Event \"x\"]\n[Result \"1-0\"]\n\n1. h2e2 h9g7 1-O\n\n"
                       "[Event \"y\"]\n[Result \"0-1\"]\n\n1. h2e2 h9g7 2. h0g2 0-1\n";
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    GameRecord *rec = calloc(1, sizeof *rec);
    int lineno = 0;
    char why[256] = "";
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), -1);
    assert_non_null(strstr(why, "line 4: '1-O' is neither a result"));
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), 1);
    assert_int_equal(rec->ply_count, 3);
    assert_int_equal(rec->outcome, OUTCOME_BLACK_WINS);
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), 0);
    fclose(f);
    free(rec);
}

/// A game cut off without its result, followed at once by the next game's tags (no blank
/// line), and a game of tags only, are each one malformed game: the games after them read,
/// and move numbers glued to their moves ("2.h0g2") keep the move.
static void test_pgn_unfinished_games(void **state)
{
    (void)state;
    const char *text = "[Event \"cut\"]\n\n1. h2e2 h9g7\n"
                       "[Event \"a\"]\n[Result \"1-0\"]\n\n1. h2e2 h9g7 2.h0g2 1-0\n\n"
                       "[Event \"tags only\"]\n[Result \"1-0\"]\n\n"
                       "[Event \"b\"]\n\n1... h9g7 1/2-1/2\n";
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    GameRecord *rec = calloc(1, sizeof *rec);
    int lineno = 0;
    char why[256] = "";
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), -1);
    assert_non_null(strstr(why, "line 3: game without a result"));
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), 1);
    assert_int_equal(rec->ply_count, 3);
    assert_int_equal(rec->outcome, OUTCOME_RED_WINS);
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), -1);
    assert_non_null(strstr(why, "line 11: tags without moves or a result"));
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), -1); // h9g7 is Black's
    assert_non_null(strstr(why, "line 14: move 1 'h9g7'"));
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), 0);
    fclose(f);
    free(rec);
}

/// A line holding a NUL byte (a binary file) is a fault named by its line, and the line after
/// it still reads (it was swallowed as the "rest" of an over-long line); input of nothing but
/// such lines is one malformed game, not the end of the input.
static void test_pgn_binary_lines(void **state)
{
    (void)state;
    static const char text[] = "\x7f"
                               "ELF\0\x02\n[Result \"1-0\"]\n\n1. h2e2 1-0\n";
    FILE *f = fmemopen((void *)text, sizeof text - 1, "r");
    GameRecord *rec = calloc(1, sizeof *rec);
    int lineno = 0;
    char why[256] = "";
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), -1);
    assert_non_null(strstr(why, "line 1: a NUL byte: not a text file"));
    assert_int_equal(lineno, 4); // one line each: line 2 was not swallowed
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), 0);
    fclose(f);
    static const char binary[] = "\x01\0\x02\n\x03\0\n";
    f = fmemopen((void *)binary, sizeof binary - 1, "r");
    lineno = 0;
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), -1);
    assert_non_null(strstr(why, "line 1: a NUL byte"));
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), 0);
    fclose(f);
    free(rec);
}

/// Move comments whose score or time do not fit an int (or are not numbers) are ignored, the
/// game still reads (found by fuzz/fuzz_pgn.c: {+2.E8/5 0.001s} overflowed under UBSan).
static void test_pgn_read_huge_comment(void **state)
{
    (void)state;
    const char *text = "[Result \"1-0\"]\n\n1. h2e2 {+2.E8/5 0.001s} h9g7 {-M1e300/3 1s} 2. h0g2 "
                       "{+0.5/4 1e30s} i9h9 {+nan/2 0.1s} 3. i0h0 {+0.25/6 0.5s} 1-0\n";
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    GameRecord *rec = calloc(1, sizeof *rec);
    int lineno = 0;
    char why[256] = "";
    assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), 1);
    assert_int_equal(rec->ply_count, 5);
    for (int i = 0; i < 4; i++)
        assert_false(rec->moves[i].has_score);
    assert_int_equal(rec->moves[4].score, 25);
    assert_int_equal(rec->moves[4].time_ms, 500);
    fclose(f);
    free(rec);
}

/// Each failing fake engine loses every game with the right reason, is restarted, and the
/// match goes on to the end: crash, silence (time forfeit) and illegal moves; an xboard
/// engine that resigns loses at once by resignation (not a failure).
static void test_match_with_failing_engines(void **state)
{
    (void)state;
    static const struct {
        const char *mode;
        Termination term;
        Protocol proto;
        const char *script;
    } cases[] = {{"crash", TERM_CRASH, PROTO_UCI, "uci.sh"},
                 {"silent", TERM_TIME_FORFEIT, PROTO_UCI, "uci.sh"},
                 {"illegal", TERM_ILLEGAL_MOVE, PROTO_UCI, "uci.sh"},
                 {"resign", TERM_RESIGN, PROTO_XBOARD, "xboard.sh"}};
    Openings o;
    assert_int_equal(openings_load_default(&o), OPENINGS_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        MatchConfig cfg = {0};
        cfg.players[0] = (PlayerConfig){.name = "builtin", .proto = PROTO_BUILTIN};
        PlayerConfig *fake = &cfg.players[1];
        *fake =
            (PlayerConfig){.name = "fake", .proto = cases[i].proto, .cmd = "/bin/sh", .argc = 2};
        snprintf(fake->args[0], PLAYER_TEXT_MAX, "%s/fake-engines/%s", XQ_TEST_DATA,
                 cases[i].script);
        snprintf(fake->args[1], PLAYER_TEXT_MAX, "%s", cases[i].mode);
        cfg.game.rules = rules_config_default(RULES_ASIAN);
        cfg.game.tc[0].depth = 1;
        cfg.game.tc[1].movetime_ms = 100;
        cfg.game.tc[1].margin_ms = 100;
        cfg.openings = &o;
        cfg.rounds = 2;
        cfg.repeat = true;
        cfg.concurrency = 1;
        atomic_bool interrupt = false;
        MatchTotals t;
        char msg[512] = "";
        MatchStatus st = match_run(&cfg, NULL, &interrupt, &t, msg, sizeof msg);
        if (st != MATCH_OK)
            fail_msg("%s: %s", cases[i].mode, msg);
        assert_int_equal(t.games, 4);
        assert_int_equal(t.wins, 4);
        assert_int_equal(t.terms[cases[i].term], 4);
        assert_int_equal(t.ptnml[4], 2);
    }
    openings_free(&o);
}

/// A game from a position where Red mates at once ends in checkmate after one ply; a ply
/// cap ends a game as a draw by "ply limit".
static void test_game_ends_by_mate(void **state)
{
    (void)state;
    PlayerConfig pc = {.name = "m", .proto = PROTO_BUILTIN};
    Player *p[2];
    char msg[256];
    assert_int_equal(player_new(&pc, &p[0], msg, sizeof msg), PLAYER_OK);
    assert_int_equal(player_new(&pc, &p[1], msg, sizeof msg), PLAYER_OK);
    GameConfig cfg = {0};
    cfg.rules = rules_config_default(RULES_SEED);
    cfg.tc[0].depth = cfg.tc[1].depth = 3;
    GameRecord *rec = calloc(1, sizeof *rec);
    Opening op;
    char why[160];
    assert_true(openings_parse_line("4k4/R8/9/9/9/9/9/9/9/1R1K5 w", &op, why, sizeof why));
    assert_int_equal(game_play(p, 0, &cfg, &op, NULL, rec), 0);
    assert_int_equal(rec->outcome, OUTCOME_RED_WINS);
    assert_int_equal(rec->term, TERM_CHECKMATE);
    assert_int_equal(rec->ply_count, 1);

    // The engine-side ply cap draws the game once that many plies are on the board.
    cfg.max_plies = 6;
    assert_true(openings_parse_line(BOARD_START_FEN, &op, why, sizeof why));
    assert_int_equal(game_play(p, 0, &cfg, &op, NULL, rec), 0);
    assert_int_equal(rec->outcome, OUTCOME_DRAW);
    assert_int_equal(rec->term, TERM_PLY_LIMIT);
    assert_int_equal(rec->ply_count, 6);
    free(rec);
    player_free(p[0]);
    player_free(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_tc),
        cmocka_unit_test(test_score_adjudication),
        cmocka_unit_test(test_openings_file),
        cmocka_unit_test(test_openings_order),
        cmocka_unit_test(test_builtin_game_and_pgn),
        cmocka_unit_test(test_pgn_read_errors),
        cmocka_unit_test(test_pgn_read_huge_comment),
        cmocka_unit_test(test_pgn_bad_result_keeps_next_game),
        cmocka_unit_test(test_pgn_unfinished_games),
        cmocka_unit_test(test_pgn_binary_lines),
        cmocka_unit_test(test_openings_long_fields),
        cmocka_unit_test(test_match_with_failing_engines),
        cmocka_unit_test(test_game_ends_by_mate),
    };
    return cmocka_run_group_tests_name("game", tests, NULL, NULL);
}
