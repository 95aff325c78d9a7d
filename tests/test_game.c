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
#include "move.h"
#include "movegen.h"
#include "openings.h"
#include "pgn.h"
#include "pgn_read.h"
#include "rng.h"

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

/// The weights a builtin player searches with: defaults, then its weights file, then the
/// options that name a weight in order (any case, the last wins; other options leave them
/// alone); a bad file or value is refused with the words the player gives when it starts.
static void test_builtin_weights(void **state)
{
    (void)state;
    char path[] = "/tmp/xq-weights-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char text[] = "horse_mg 280\nhorse_eg 290\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    PlayerConfig pc = {.name = "w", .proto = PROTO_BUILTIN};
    Weights w, def;
    weights_default(&def);
    char why[256] = "";
    assert_true(player_builtin_weights(&pc, &w, why, sizeof why));
    assert_memory_equal(&w, &def, sizeof w);
    snprintf(pc.weights_file, sizeof pc.weights_file, "%s", path);
    const char *opts[][2] = {
        {"horse_mg", "300"}, {"Threads", "2"}, {"HORSE_MG", "310"}, {"cannon_eg", "250"}};
    for (int i = 0; i < 4; i++) {
        snprintf(pc.options[i].name, sizeof pc.options[i].name, "%s", opts[i][0]);
        snprintf(pc.options[i].value, sizeof pc.options[i].value, "%s", opts[i][1]);
    }
    pc.option_count = 4;
    assert_true(player_builtin_weights(&pc, &w, why, sizeof why));
    def.v[P_horse_mg] = 310;
    def.v[P_horse_eg] = 290;
    def.v[P_cannon_eg] = 250;
    assert_memory_equal(&w, &def, sizeof w);
    snprintf(pc.options[3].value, sizeof pc.options[3].value, "99999");
    assert_false(player_builtin_weights(&pc, &w, why, sizeof why));
    assert_string_equal(why, "option cannon_eg=99999: bad option value");
    Player *p = NULL;
    char msg[512];
    assert_int_equal(player_new(&pc, &p, msg, sizeof msg), PLAYER_ERR_CONFIG);
    assert_string_equal(msg, "w: option cannon_eg=99999: bad option value");
    unlink(path);
    assert_false(player_builtin_weights(&pc, &w, why, sizeof why));
    assert_non_null(strstr(why, "weights: "));
    assert_non_null(strstr(why, path));
    assert_int_equal(player_new(&pc, &p, msg, sizeof msg), PLAYER_ERR_CONFIG);
    assert_true(strncmp(msg, "w: weights: ", 12) == 0);
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
    PgnTags tags = {"test", "here", 3, "depth=2", "asian", PGN_NOTATION_COORDINATE, 0};
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

/// Reads every game of a PGN file of tests/data/pgn into g[] (at most max): the count.
static int read_data_pgn(const char *name, PgnText *g, int max)
{
    char path[512], why[256] = "";
    snprintf(path, sizeof path, "%s/pgn/%s", XQ_TEST_DATA, name);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("%s: cannot open", path);
    int n = 0, lineno = 0, got;
    while (n < max && (got = pgn_read_text(f, &g[n], &lineno, why, sizeof why)) != 0) {
        if (got < 0)
            fail_msg("%s: %s", name, why);
        n++;
    }
    fclose(f);
    return n;
}

/// The move text's squares, 0-based ranks, as a move.
static Move mv(const char *text)
{
    Move m = MOVE_NONE;
    assert_int_equal(move_parse(text, 0, &m), MOVE_TEXT_OK);
    return m;
}

/// Checks that b's game is exactly the moves of line (ranks 0-9).
static void assert_line(const Board *b, const char *line)
{
    char copy[512];
    snprintf(copy, sizeof copy, "%s", line);
    int i = 0;
    for (char *save, *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save), i++) {
        if (i >= b->hist_len || b->hist[i].move != mv(t))
            fail_msg("ply %d of '%s' differs", i + 1, line);
    }
    assert_int_equal(b->hist_len, i);
}

/// cutechess's xiangqi PGNs (SAN with ranks 1-10, no Termination after a rule ending, the end
/// described in the last comment) and fastchess's (coordinates as the engines wrote them, ranks
/// 1-10, Termination "normal" or "adjudication") read and replay as the games that were played.
static void test_pgn_text_other_tools(void **state)
{
    (void)state;
    PgnText *g = calloc(3, sizeof *g);
    Board *b = malloc(sizeof *b);
    PgnReplay r;
    assert_int_equal(read_data_pgn("cutechess.pgn", g, 3), 3);
    assert_string_equal(g[0].moves[0], "Rb10#");
    assert_string_equal(g[0].end_comment, "+M1/1 0.001s, White mates");
    assert_int_equal(g[0].outcome, OUTCOME_RED_WINS);
    assert_true(pgn_text_replay(&g[0], PGN_RANKS_AUTO, b, &r));
    assert_string_equal(r.why, "");
    assert_int_equal(r.rank_base, 1);
    assert_line(b, "b1b9");
    PgnEnd e = pgn_text_end(&g[0]);
    assert_int_equal(e.kind, PGN_END_RULE);
    assert_int_equal(e.rule, END_CHECKMATE);
    assert_string_equal(e.text, "White mates");
    assert_true(pgn_text_replay(&g[1], PGN_RANKS_AUTO, b, &r));
    assert_int_equal(r.rank_base, 1);
    assert_line(b, "b0c2 b9c7 c2b0 c7b9 b0c2 b9c7 c2b0 c7b9");
    assert_int_equal(pgn_text_end(&g[1]).rule, END_REPETITION);
    assert_true(pgn_text_replay(&g[2], PGN_RANKS_AUTO, b, &r));
    assert_line(b, "h2e2 b9c7 b0c2 i9i8");
    assert_int_equal(pgn_text_end(&g[2]).kind, PGN_END_OTHER);

    assert_int_equal(read_data_pgn("fastchess.pgn", g, 3), 2);
    assert_true(pgn_text_replay(&g[0], PGN_RANKS_AUTO, b, &r));
    assert_int_equal(r.rank_base, 1);
    assert_line(b, "b0c2 b9c7 c2b0 c7b9 b0c2 b9c7 c2b0 c7b9");
    e = pgn_text_end(&g[0]);
    assert_int_equal(e.kind, PGN_END_RULE);
    assert_int_equal(e.rule, END_REPETITION);
    assert_true(pgn_text_replay(&g[1], PGN_RANKS_AUTO, b, &r));
    assert_line(b, "h2e2 h9g7 h0g2 i9h9");
    e = pgn_text_end(&g[1]);
    assert_int_equal(e.kind, PGN_END_OTHER);
    assert_string_equal(e.text, "adjudication");
    free(b);
    free(g);
}

/// Replays a space-separated line of move texts from fen (NULL: the start) in rank_base.
static PgnReplay replay_line(PgnText *g, Board *b, const char *fen, const char *line, int rank_base)
{
    memset(g, 0, sizeof *g);
    snprintf(g->fen, sizeof g->fen, "%s", fen ? fen : "");
    char copy[512];
    snprintf(copy, sizeof copy, "%s", line);
    for (char *save, *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
        snprintf(g->moves[g->ply_count++], PGN_TOKEN_MAX, "%s", t);
    PgnReplay r;
    assert_true(pgn_text_replay(g, rank_base, b, &r));
    return r;
}

/// The ranks rule: a move naming rank 10 means ranks 1-10, one naming rank 0 ranks 0-9; else
/// ranks 0-9 unless only ranks 1-10 make every move legal (a line legal both ways stays 0-9);
/// when neither reading is legal, the one that goes further names the refused move; a fixed
/// base is not second-guessed.
static void test_pgn_text_ranks_rule(void **state)
{
    (void)state;
    PgnText *g = malloc(sizeof *g);
    Board *b = malloc(sizeof *b);
    PgnReplay r = replay_line(g, b, NULL, "h2e2 h9g7", PGN_RANKS_AUTO);
    assert_int_equal(r.rank_base, 0);
    assert_line(b, "h2e2 h9g7");
    r = replay_line(g, b, NULL, "h3e3 h10g8", PGN_RANKS_AUTO);
    assert_int_equal(r.rank_base, 1);
    assert_line(b, "h2e2 h9g7");
    r = replay_line(g, b, NULL, "h3e3", PGN_RANKS_AUTO); // h3 is empty in ranks 0-9
    assert_int_equal(r.rank_base, 1);
    assert_line(b, "h2e2");
    r = replay_line(g, b, NULL, "h0g2 h8h9", PGN_RANKS_AUTO); // rank 0 named: no second reading
    assert_int_equal(r.rank_base, 0);
    assert_int_equal(r.plies, 1);
    assert_non_null(strstr(r.why, "'h8h9' (ranks 0-9): illegal"));
    static const char two_chariots[] = "3k5/9/9/9/9/9/9/R8/R8/4K4 w - - 0 1";
    r = replay_line(g, b, two_chariots, "a2b2", PGN_RANKS_AUTO); // legal both ways
    assert_int_equal(r.rank_base, 0);
    assert_line(b, "a2b2");
    r = replay_line(g, b, NULL, "h2e2 zz", PGN_RANKS_AUTO); // 0-9 goes further
    assert_int_equal(r.plies, 1);
    assert_non_null(strstr(r.why, "'zz' (ranks 0-9): not a move"));
    r = replay_line(g, b, NULL, "h2e2", 1);
    assert_int_equal(r.plies, 0);
    assert_non_null(strstr(r.why, "(ranks 1-10): illegal"));
    r = replay_line(g, b, NULL, "Ce3", 1); // both cannons reach e3
    assert_non_null(strstr(r.why, "ambiguous"));
    // Marks, separators, ICCS and piece letters around coordinates.
    r = replay_line(g, b, NULL, "H2-E2 h9-g7 Cb2xb9+ Ra9xb9 b0c2!? Rb9b8?", 0);
    assert_string_equal(r.why, "");
    assert_line(b, "h2e2 h9g7 b2b9 a9b9 b0c2 b9b8");
    free(b);
    free(g);
}

/// The tolerant reader skips escape lines, ';' comments, NAGs and nested variations with
/// their comments, joins the comments after the last move, reads a game that starts with
/// Black, steps over a stray '}', and reports a bad token by its line without losing the next
/// game.
static void test_pgn_text_tolerant(void **state)
{
    (void)state;
    const char *text = "% exported by some tool\n"
                       "[Event \"x\"]\n[Variant \"Xiangqi\"]\n[Result \"1-0\"]\n\n"
                       "1. h2e2 $1 {a comment\nover two lines} h9g7 (1... b9c7 {side} (1... "
                       "i9i8) 2. b0c2) 2.h0g2 ; the rest is a comment\n"
                       "i9h9 {+0.10/3 0.1s} {Red wins} 1-0\n"
                       "[Event \"tags only\"]\n[Result \"*\"]\n\n"
                       "[Event \"b\"]\n[FEN \"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/"
                       "RNBAKABNR b - - 1 1\"]\n\n1... h9g7 2. h0g2 *\n\n"
                       "[Event \"c\"]\n\n1. h2e2 h9g7 2-0\n\n[Event \"d\"]\n\n1. h2e2 } 0-1\n";
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    PgnText *g = malloc(sizeof *g);
    Board *b = malloc(sizeof *b);
    int lineno = 0;
    char why[256] = "";
    assert_int_equal(pgn_read_text(f, g, &lineno, why, sizeof why), 1);
    assert_int_equal(g->ply_count, 4);
    assert_string_equal(g->moves[2], "h0g2");
    assert_string_equal(g->moves[3], "i9h9");
    assert_int_equal(g->move_line[3], 8);
    assert_string_equal(g->end_comment, "+0.10/3 0.1s, Red wins");
    assert_int_equal(g->first_line, 2);
    assert_int_equal(pgn_read_text(f, g, &lineno, why, sizeof why), -1);
    assert_non_null(strstr(why, "line 11: tags without moves"));
    assert_int_equal(pgn_read_text(f, g, &lineno, why, sizeof why), 1);
    assert_int_equal(g->outcome, OUTCOME_NONE);
    PgnReplay r;
    assert_true(pgn_text_replay(g, PGN_RANKS_AUTO, b, &r));
    assert_string_equal(r.why, "");
    assert_int_equal(r.plies, 2);
    assert_int_equal(pgn_read_text(f, g, &lineno, why, sizeof why), -1);
    assert_non_null(strstr(why, "line 19: '2-0' is neither a result"));
    assert_int_equal(pgn_read_text(f, g, &lineno, why, sizeof why), 1);
    assert_int_equal(g->outcome, OUTCOME_BLACK_WINS);
    assert_int_equal(g->ply_count, 1);
    assert_int_equal(pgn_read_text(f, g, &lineno, why, sizeof why), 0);
    fclose(f);
    free(b);
    free(g);
}

/// Sets the Termination tag and the last comment of g, and says how the game ended.
static PgnEnd end_of(PgnText *g, const char *termination, const char *comment)
{
    snprintf(g->termination, sizeof g->termination, "%s", termination);
    snprintf(g->end_comment, sizeof g->end_comment, "%s", comment);
    return pgn_text_end(g);
}

/// Terminations map to rule endings (every rules_end_name, our PGN's names with a detail,
/// cutechess's and fastchess's descriptions) or to endings outside the rules with the result
/// they need; "normal" and a score-only comment say nothing.
static void test_pgn_text_end_names(void **state)
{
    (void)state;
    PgnText *g = calloc(1, sizeof *g);
    for (int r = END_NONE + 1; r < END_REASON_NB; r++) {
        PgnEnd e = end_of(g, rules_end_name((EndReason)r), "");
        assert_int_equal(e.kind, PGN_END_RULE);
        assert_int_equal(e.rule, r);
    }
    static const struct {
        const char *termination, *comment;
        PgnEndKind kind;
        EndReason rule;
        PgnEndNeeds needs;
    } cases[] = {
        {"time forfeit: used 120 ms, 20 ms over", "", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"draw adjudication", "", PGN_END_OTHER, END_NONE, PGN_NEEDS_DRAW},
        {"resign adjudication", "", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"resignation", "", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"illegal move: h2h3", "", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"crash: exited", "", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"aborted", "", PGN_END_UNFINISHED, END_NONE, PGN_NEEDS_ANY},
        {"", "+M1/1 0.001s, Black mates", PGN_END_RULE, END_CHECKMATE, PGN_NEEDS_DECISIVE},
        {"", "+0.00/9 0.1s, Draw by fifty moves rule", PGN_END_RULE, END_MOVE_RULE, PGN_NEEDS_DRAW},
        {"", "Draw by insufficient mating material", PGN_END_RULE, END_INSUFFICIENT,
         PGN_NEEDS_DRAW},
        {"", "-1.00/5 0.2s, White resigns", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"normal", "+0.00/5 0.010s, Draw by 3-fold repetition", PGN_END_RULE, END_REPETITION,
         PGN_NEEDS_ANY},
        {"adjudication", "-9.0/12 0.3s, Black wins by adjudication", PGN_END_OTHER, END_NONE,
         PGN_NEEDS_ANY},
        {"", "+0.00/5 0.010s, Black wins by adjudication", PGN_END_OTHER, END_NONE,
         PGN_NEEDS_DECISIVE},
        {"abandoned", "", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"stalled connection", "", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"unterminated", "", PGN_END_UNFINISHED, END_NONE, PGN_NEEDS_ANY},
        {"normal", "+0.12/10 0.100s", PGN_END_UNKNOWN, END_NONE, PGN_NEEDS_ANY},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        PgnEnd e = end_of(g, cases[i].termination, cases[i].comment);
        if (e.kind != cases[i].kind || e.rule != cases[i].rule || e.needs != cases[i].needs)
            fail_msg("'%s' / '%s': kind %d rule %d needs %d", cases[i].termination,
                     cases[i].comment, e.kind, e.rule, e.needs);
    }
    assert_string_equal(end_of(g, "normal", "+0.12/10 0.100s").text, "normal");
    assert_string_equal(end_of(g, "", "").text, "");
    free(g);
}

/// Our own PGN (pgn_write) reads back through the tolerant reader: players, rules, the same
/// moves, and its termination name as the rule that ended the game.
static void test_pgn_text_reads_ours(void **state)
{
    (void)state;
    GameRecord *rec = calloc(1, sizeof *rec);
    snprintf(rec->start_fen, sizeof rec->start_fen, "%s", BOARD_START_FEN);
    snprintf(rec->names[0], PLAYER_NAME_MAX, "x");
    snprintf(rec->names[1], PLAYER_NAME_MAX, "y");
    rec->red = 1;
    static const char *line[] = {"b0c2", "b9c7", "c2b0", "c7b9", "b0c2", "b9c7", "c2b0", "c7b9"};
    for (int i = 0; i < 8; i++)
        rec->moves[rec->ply_count++] = (GameMove){mv(line[i]), 12, true, false, 9, 100};
    rec->book_plies = 2;
    rec->outcome = OUTCOME_DRAW;
    rec->term = TERM_REPETITION;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    PgnTags tags = {"t", "s", 1, "10+0.1", "asian", PGN_NOTATION_COORDINATE, 0};
    assert_int_equal(pgn_write(f, rec, &tags), 0);
    fclose(f);
    f = fmemopen(text, len, "r");
    PgnText *g = malloc(sizeof *g);
    Board *b = malloc(sizeof *b);
    int lineno = 0;
    char why[256] = "";
    assert_int_equal(pgn_read_text(f, g, &lineno, why, sizeof why), 1);
    assert_string_equal(g->white, "y");
    assert_string_equal(g->black, "x");
    assert_string_equal(g->rules, "asian");
    assert_int_equal(g->outcome, OUTCOME_DRAW);
    PgnReplay r;
    assert_true(pgn_text_replay(g, PGN_RANKS_AUTO, b, &r));
    assert_int_equal(r.plies, 8);
    for (int i = 0; i < 8; i++)
        assert_int_equal(b->hist[i].move, rec->moves[i].move);
    PgnEnd e = pgn_text_end(g);
    assert_int_equal(e.kind, PGN_END_RULE);
    assert_int_equal(e.rule, END_REPETITION);
    assert_int_equal(pgn_read_text(f, g, &lineno, why, sizeof why), 0);
    fclose(f);
    free(text);
    free(b);
    free(g);
    free(rec);
}

/// A match of the builtin engine (depth 1) against the fake engine SCRIPT MODE [EXTRA], 100 ms
/// a move, asian rules, `rounds` game pairs one at a time.
static MatchConfig fake_match(const Openings *o, Protocol proto, const char *script,
                              const char *mode, const char *extra, int rounds)
{
    MatchConfig cfg = {0};
    cfg.players[0] = (PlayerConfig){.name = "builtin", .proto = PROTO_BUILTIN};
    PlayerConfig *fake = &cfg.players[1];
    *fake = (PlayerConfig){.name = "fake", .proto = proto, .cmd = "/bin/sh", .argc = extra ? 3 : 2};
    snprintf(fake->args[0], PLAYER_TEXT_MAX, "%s/fake-engines/%s", XQ_TEST_DATA, script);
    snprintf(fake->args[1], PLAYER_TEXT_MAX, "%s", mode);
    if (extra)
        snprintf(fake->args[2], PLAYER_TEXT_MAX, "%s", extra);
    cfg.game.rules = rules_config_default(RULES_ASIAN);
    cfg.game.tc[0].depth = 1;
    cfg.game.tc[1].movetime_ms = 100;
    cfg.game.tc[1].margin_ms = 100;
    cfg.openings = o;
    cfg.rounds = rounds;
    cfg.repeat = true;
    cfg.concurrency = 1;
    return cfg;
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
        MatchConfig cfg = fake_match(&o, cases[i].proto, cases[i].script, cases[i].mode, NULL, 2);
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

/// An engine that crashes in a game and again in its restart's handshake is started once
/// more, and the match plays on (before, the second crash failed the match).
static void test_match_restart_retried(void **state)
{
    (void)state;
    Openings o;
    assert_int_equal(openings_load_default(&o), OPENINGS_OK);
    char counter[] = "/tmp/xq-restart-XXXXXX";
    int fd = mkstemp(counter);
    assert_true(fd >= 0);
    close(fd);
    unlink(counter);
    MatchConfig cfg = fake_match(&o, PROTO_UCI, "uci.sh", "crashrestart", counter, 1);
    cfg.game.max_plies = 6;
    atomic_bool interrupt = false;
    MatchTotals t;
    char msg[512] = "";
    MatchStatus st = match_run(&cfg, NULL, &interrupt, &t, msg, sizeof msg);
    if (st != MATCH_OK)
        fail_msg("%s", msg);
    assert_int_equal(t.games, 2);
    assert_int_equal(t.terms[TERM_CRASH], 1);
    unlink(counter);
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

/// The WXF text of a move given in coordinates, in position fen.
static const char *wxf_of(const char *fen, const char *coord)
{
    static char out[PGN_TOKEN_MAX];
    Board *b = malloc(sizeof *b);
    assert_int_equal(board_set_fen(b, fen, NULL, 0), FEN_OK);
    Move m = mv(coord);
    assert_true(movegen_is_legal(b, m));
    pgn_move_wxf(b, m, out);
    free(b);
    return out;
}

// Positions with pieces in tandem: chariots and cannons two on a file, soldiers two on file c
// and three on file e (Red); advisors and elephants two on a file; chariots, cannons and
// soldiers in tandem for Black; five soldiers on one file.
static const char *const TANDEM_FENS[] = {
    "3k5/9/9/2P1P4/2P1P4/4P4/9/R1C6/R1C6/4K4 w - - 0 1",
    "3k5/9/9/9/9/2B6/9/3A5/9/2BAK4 w - - 0 1",
    "4k4/r1c6/r1c6/9/4p4/2p1p4/2p1p4/9/9/3K5 b - - 0 1",
    "4k4/9/4P4/4P4/4P4/4P4/4P4/9/9/3K5 w - - 0 1",
};

/// WXF as the World Xiangqi Federation writes it: files from the mover's right, + - . for
/// forward, backward and along the rank, the file reached by the diagonal movers, + and - for
/// the front and rear of two pieces on a file, a file digit for the letter when soldiers stand
/// in tandem on two files, ++ and -- at the ends of four or five.
static void test_pgn_wxf_texts(void **state)
{
    (void)state;
    const char *start = BOARD_START_FEN;
    assert_string_equal(wxf_of(start, "h2e2"), "C2.5");
    assert_string_equal(wxf_of(start, "b0c2"), "H8+7");
    assert_string_equal(wxf_of(start, "h0g2"), "H2+3");
    assert_string_equal(wxf_of(start, "a0a1"), "R9+1");
    assert_string_equal(wxf_of(start, "d0e1"), "A6+5");
    assert_string_equal(wxf_of(start, "c0e2"), "E7+5");
    assert_string_equal(wxf_of(start, "e3e4"), "P5+1");
    assert_string_equal(wxf_of(start, "h2h9"), "C2+7");
    const char *black = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1";
    assert_string_equal(wxf_of(black, "b9c7"), "H2+3");
    assert_string_equal(wxf_of(black, "h7e7"), "C8.5");
    assert_string_equal(wxf_of(black, "a9a8"), "R1+1");
    const char *t = TANDEM_FENS[0];
    assert_string_equal(wxf_of(t, "a2b2"), "R+.8");
    assert_string_equal(wxf_of(t, "a1a0"), "R--1");
    assert_string_equal(wxf_of(t, "c2c3"), "C++1");
    assert_string_equal(wxf_of(t, "c1b1"), "C-.8");
    assert_string_equal(wxf_of(t, "e6d6"), "5+.6");
    assert_string_equal(wxf_of(t, "e5d5"), "55.6");
    assert_string_equal(wxf_of(t, "c6b6"), "7+.8");
    assert_string_equal(wxf_of(t, "c5b5"), "7-.8");
    assert_string_equal(wxf_of(t, "e6e7"), "5++1");
    const char *tb = TANDEM_FENS[2];
    assert_string_equal(wxf_of(tb, "a7b7"), "R+.2");
    assert_string_equal(wxf_of(tb, "c3d3"), "3+.4");
    assert_string_equal(wxf_of(tb, "e4f4"), "55.6");
    // Two advisors (and elephants) on a file keep their file: the direction tells them apart.
    const char *adv = "3k5/9/9/9/9/2B6/9/3A5/9/2BAK4 w - - 0 1";
    assert_string_equal(wxf_of(adv, "d2e1"), "A6-5");
    assert_string_equal(wxf_of(adv, "d0e1"), "A6+5");
    assert_string_equal(wxf_of(adv, "c0e2"), "E7+5");
    assert_string_equal(wxf_of(adv, "c4e2"), "E7-5");
    assert_string_equal(wxf_of(adv, "c4a2"), "E7-9");
    const char *five = TANDEM_FENS[3];
    assert_string_equal(wxf_of(five, "e7d7"), "++.6");
    assert_string_equal(wxf_of(five, "e6d6"), "P+.6");
    assert_string_equal(wxf_of(five, "e5d5"), "P5.6");
    const char *four = "4k4/9/4P4/4P4/4P4/4P4/9/9/9/3K5 w - - 0 1";
    assert_string_equal(wxf_of(four, "e7d7"), "++.6");
    assert_string_equal(wxf_of(four, "e6d6"), "P+.6");
    assert_string_equal(wxf_of(four, "e5d5"), "P-.6");
}

/// Random games from the start and from positions with pieces in tandem: every legal move has
/// its own WXF text, and each game written in every notation (coordinates in ranks 0-9 and
/// 1-10, ICCS, WXF) by pgn_write reads back through the referee's reader (pgn_read_text,
/// pgn_text_replay) as the same moves, and all but ranks 1-10 through the strict reader
/// (pgn_read), with its ending: Termination the PGN standard's value, TerminationDetails ours.
static void test_pgn_notations_round_trip(void **state)
{
    (void)state;
    Board *b = malloc(sizeof *b), *c = malloc(sizeof *c);
    GameRecord *rec = calloc(1, sizeof *rec), *back = calloc(1, sizeof *back);
    PgnText *g = malloc(sizeof *g);
    Rng rng;
    rng_seed(&rng, 34);
    const char *fens[] = {BOARD_START_FEN, TANDEM_FENS[0], TANDEM_FENS[1], TANDEM_FENS[2],
                          TANDEM_FENS[3]};
    for (int game = 0; game < 25; game++) {
        const char *fen = fens[game % 5];
        assert_int_equal(board_set_fen(b, fen, NULL, 0), FEN_OK);
        memset(rec, 0, offsetof(GameRecord, moves));
        snprintf(rec->start_fen, sizeof rec->start_fen, "%s", fen);
        snprintf(rec->names[0], PLAYER_NAME_MAX, "r");
        snprintf(rec->names[1], PLAYER_NAME_MAX, "b");
        for (int ply = 0; ply < 160; ply++) {
            MoveList list;
            movegen_legal(b, &list);
            if (list.count == 0)
                break;
            char texts[MAX_MOVES][PGN_TOKEN_MAX];
            for (int k = 0; k < list.count; k++) {
                pgn_move_wxf(b, list.moves[k], texts[k]);
                for (int j = 0; j < k; j++)
                    if (!strcmp(texts[j], texts[k]))
                        fail_msg("%s: two moves written %s", fen, texts[k]);
            }
            Move m = list.moves[rng_below(&rng, (uint32_t)list.count)];
            rec->moves[rec->ply_count++] = (GameMove){m, 0, false, false, 0, 0};
            board_make_move(b, m);
        }
        rec->outcome = OUTCOME_BLACK_WINS;
        rec->term = TERM_PERPETUAL_CHASE;
        snprintf(rec->detail, sizeof rec->detail, "by Red");
        for (int n = 0; n < 4; n++) {
            PgnTags tags = {
                "t",
                "s",
                1,
                "-",
                "asian",
                n == 3 ? PGN_NOTATION_WXF : n == 2 ? PGN_NOTATION_ICCS : PGN_NOTATION_COORDINATE,
                n == 1};
            char *text = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&text, &len);
            assert_int_equal(pgn_write(f, rec, &tags), 0);
            fclose(f);
            assert_non_null(strstr(text, "[Termination \"normal\"]"));
            assert_non_null(strstr(text, "[TerminationDetails \"perpetual chase: by Red\"]"));
            if (n >= 2)
                assert_non_null(strstr(text, n == 3 ? "[Format \"WXF\"]" : "[Format \"ICCS\"]"));
            f = fmemopen(text, len, "r");
            int lineno = 0;
            char why[256] = "";
            assert_int_equal(pgn_read_text(f, g, &lineno, why, sizeof why), 1);
            PgnReplay r;
            assert_true(pgn_text_replay(g, PGN_RANKS_AUTO, c, &r));
            if (r.why[0] || r.plies != rec->ply_count)
                fail_msg("game %d notation %d: %s", game, n, r.why);
            for (int i = 0; i < rec->ply_count; i++)
                assert_int_equal(c->hist[i].move, rec->moves[i].move);
            PgnEnd e = pgn_text_end(g);
            assert_int_equal(e.kind, PGN_END_RULE);
            assert_int_equal(e.rule, END_PERPETUAL_CHASE);
            fclose(f);
            // The strict reader (texel, nnue extract) takes all but ranks 1-10 back too.
            if (n != 1) {
                f = fmemopen(text, len, "r");
                lineno = 0;
                if (pgn_read(f, back, &lineno, why, sizeof why) != 1)
                    fail_msg("game %d notation %d: %s", game, n, why);
                assert_int_equal(back->ply_count, rec->ply_count);
                for (int i = 0; i < rec->ply_count; i++)
                    assert_int_equal(back->moves[i].move, rec->moves[i].move);
                assert_int_equal(back->term, TERM_PERPETUAL_CHASE);
                assert_string_equal(back->detail, "by Red");
                fclose(f);
            }
            free(text);
        }
    }
    free(g);
    free(back);
    free(rec);
    free(c);
    free(b);
}

/// The strict reader (texel, nnue extract) takes the ending in both forms: our name in
/// Termination (PGNs written before) and the standard's value with TerminationDetails.
static void test_pgn_termination_forms(void **state)
{
    (void)state;
    static const char *const text[] = {
        "[Result \"0-1\"]\n[Termination \"perpetual chase: by Red\"]\n\n1. h2e2 h9g7 0-1\n\n",
        "[Result \"0-1\"]\n[Termination \"normal\"]\n[TerminationDetails \"perpetual chase: by "
        "Red\"]\n\n1. h2e2 h9g7 0-1\n\n",
        "[Result \"1-0\"]\n[Termination \"adjudication\"]\n[TerminationDetails \"resign "
        "adjudication\"]\n\n1. h2e2 h9g7 1-0\n\n",
        "[Result \"1-0\"]\n[Termination \"time forfeit\"]\n[TerminationDetails \"time forfeit: "
        "late\"]\n\n1. h2e2 h9g7 1-0\n\n",
    };
    static const Termination want[] = {TERM_PERPETUAL_CHASE, TERM_PERPETUAL_CHASE, TERM_RESIGN_ADJ,
                                       TERM_TIME_FORFEIT};
    static const char *const detail[] = {"by Red", "by Red", "", "late"};
    GameRecord *rec = calloc(1, sizeof *rec);
    for (int i = 0; i < 4; i++) {
        FILE *f = fmemopen((void *)text[i], strlen(text[i]), "r");
        int lineno = 0;
        char why[256] = "";
        assert_int_equal(pgn_read(f, rec, &lineno, why, sizeof why), 1);
        assert_int_equal(rec->term, want[i]);
        assert_string_equal(rec->detail, detail[i]);
        fclose(f);
    }
    free(rec);
    assert_string_equal(pgn_termination_standard(TERM_REPETITION), "normal");
    assert_string_equal(pgn_termination_standard(TERM_DRAW_ADJ), "adjudication");
    assert_string_equal(pgn_termination_standard(TERM_ILLEGAL_MOVE), "rules infraction");
    assert_string_equal(pgn_termination_standard(TERM_CRASH), "abandoned");
}

/// A PGN opening book: the first plies of each game of ours, cutechess's (SAN, ranks 1-10),
/// XQBase's ICCS and WXF, from the game's FEN; a game whose opening holds an illegal move is
/// named by line and skipped; moves after the opening's plies may be wrong.
static void test_openings_pgn(void **state)
{
    (void)state;
    char path[] = "/tmp/xq-openings-pgn-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text =
        "[Event \"ours\"]\n[FEN \"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - "
        "- 0 1\"]\n\n"
        "1. h2e2 {book} h9g7 {book} 2. h0g2 {+0.1/2 0.1s} i9h9 1/2-1/2\n\n"
        "[Event \"cutechess\"]\n[Variant \"xiangqi\"]\n\n1. Che3 Hg8 2. Hg3 zz 1/2-1/2\n\n"
        "[Event \"iccs\"]\n[Format \"ICCS\"]\n\n1. H2-E2 H9-G7 2. H0-G2 1-0\n\n"
        "[Event \"wxf\"]\n[Format \"WXF\"]\n\n1. C2.5 H8+7 2. H2+3 R9.8 1-0\n\n"
        "[Event \"bad\"]\n\n1. h2e2 h2e3 1-0\n\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char log_path[] = "/tmp/xq-openings-pgnlog-XXXXXX";
    int lfd = mkstemp(log_path);
    assert_true(lfd >= 0);
    FILE *log = fdopen(lfd, "w+");
    Openings o;
    char why[256];
    assert_int_equal(openings_load_as(&o, path, OPENINGS_FORMAT_PGN, 3, log, why, sizeof why),
                     OPENINGS_OK);
    assert_int_equal(o.count, 4);
    const char *line3[] = {"h2e2", "h9g7", "h0g2"};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(o.items[i].fen, BOARD_START_FEN);
        assert_int_equal(o.items[i].move_count, 3);
        for (int k = 0; k < 3; k++)
            assert_int_equal(o.items[i].moves[k], mv(line3[k]));
    }
    rewind(log);
    char buf[1024] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, log);
    buf[n] = '\0';
    assert_non_null(strstr(buf, ": line 23: move 2 'h2e3'"));
    fclose(log);
    unlink(log_path);
    openings_free(&o);
    // Read as EPD, a PGN is refused at its first tag, not line by line.
    assert_int_equal(openings_load(&o, path, NULL, why, sizeof why), OPENINGS_ERR_PGN);
    assert_non_null(strstr(why, "format=pgn"));
    // plies cuts the moves of an EPD line too.
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, "startpos moves h2e2 h9g7 h0g2\n", 30), 30);
    close(fd);
    assert_int_equal(openings_load_as(&o, path, OPENINGS_FORMAT_EPD, 2, NULL, why, sizeof why),
                     OPENINGS_OK);
    assert_int_equal(o.items[0].move_count, 2);
    openings_free(&o);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_tc),
        cmocka_unit_test(test_score_adjudication),
        cmocka_unit_test(test_openings_file),
        cmocka_unit_test(test_openings_order),
        cmocka_unit_test(test_builtin_weights),
        cmocka_unit_test(test_builtin_game_and_pgn),
        cmocka_unit_test(test_pgn_read_errors),
        cmocka_unit_test(test_pgn_read_huge_comment),
        cmocka_unit_test(test_pgn_bad_result_keeps_next_game),
        cmocka_unit_test(test_pgn_unfinished_games),
        cmocka_unit_test(test_pgn_binary_lines),
        cmocka_unit_test(test_pgn_text_other_tools),
        cmocka_unit_test(test_pgn_text_ranks_rule),
        cmocka_unit_test(test_pgn_text_tolerant),
        cmocka_unit_test(test_pgn_text_end_names),
        cmocka_unit_test(test_pgn_text_reads_ours),
        cmocka_unit_test(test_pgn_wxf_texts),
        cmocka_unit_test(test_pgn_notations_round_trip),
        cmocka_unit_test(test_pgn_termination_forms),
        cmocka_unit_test(test_openings_pgn),
        cmocka_unit_test(test_openings_long_fields),
        cmocka_unit_test(test_match_with_failing_engines),
        cmocka_unit_test(test_match_restart_retried),
        cmocka_unit_test(test_game_ends_by_mate),
    };
    return cmocka_run_group_tests_name("game", tests, NULL, NULL);
}
