// SPDX-License-Identifier: MIT
// External players over UCI, UCCI and xboard: the real Debian engines (Fairy-Stockfish in
// UCI and UCCI mode, Sjaak II, MaxQi, HoiXiangqi) start, play legal moves under depth,
// movetime and clock limits, from the start and from later positions; scripted fake engines
// show that a crash, a silent engine, an illegal or unparsable move and a flood of output
// each give their status in bounded time; that an engine sees none of our secrets (token
// variables, descriptors), that its exit is a crash at once even while a process it started
// holds its pipe and that nothing it started survives, that rlimit_cpu names itself, and that
// an xboard `resign` is a loss at once; the engine log (games/englog.h): its lines, their
// timestamps, the clocks at each go, rotation, threads sharing one log, and no secret in it.
#define _GNU_SOURCE // setenv
#include <pthread.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine_spec.h"
#include "englog.h"
#include "job_check.h"
#include "move.h"
#include "movegen.h"
#include "player.h"
#include "timeman.h"

#define FSF      "/usr/games/fairy-stockfish"
#define SJAAK    "/usr/games/sjaakii"
#define MAXQI    "/usr/games/maxqi"
#define HOI      "/usr/games/hoixiangqi"
#define FAKE_DIR XQ_TEST_DATA "/fake-engines"

// A middlegame-ish position (Red to move) that no engine reaches by `new`.
static const char *const OTHER_FEN =
    "r1bakabr1/9/1cn3nc1/p1p1p1p1p/9/2P6/P3P1P1P/1C2C1N2/9/RNBAKAB1R w - - 4 3";

typedef struct {
    PlayerConfig cfg;
    Board *board;
    Player *player;
    char msg[512];
    EngineLog *log; // with_log: the engine log in log_dir/engine.log
    char log_dir[64], log_path[128];
} Fixture;

static int setup(void **state)
{
    Fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->board = malloc(sizeof *f->board);
    if (!f->board || board_set_fen(f->board, BOARD_START_FEN, NULL, 0) != FEN_OK)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    player_free(f->player); // before the log: its last note goes there
    englog_free(f->log);
    if (f->log_dir[0]) {
        char path[160];
        unlink(f->log_path);
        snprintf(path, sizeof path, "%s.1", f->log_path);
        unlink(path);
        rmdir(f->log_dir);
    }
    free(f->board);
    free(f);
    return 0;
}

static void skip_unless_installed(const char *path)
{
    if (access(path, X_OK) != 0) {
        print_message("%s is not installed: skipped\n", path);
        skip();
    }
}

static void configure(Fixture *f, const char *name, Protocol proto, const char *cmd, int rank_base)
{
    snprintf(f->cfg.name, sizeof f->cfg.name, "%s", name);
    f->cfg.proto = proto;
    snprintf(f->cfg.cmd, sizeof f->cfg.cmd, "%s", cmd);
    f->cfg.rank_base = rank_base;
}

/// A fake engine: /bin/sh running tests/data/fake-engines/<script> <mode>.
static void configure_fake(Fixture *f, Protocol proto, const char *script, const char *mode)
{
    configure(f, mode, proto, "/bin/sh", 0);
    snprintf(f->cfg.args[0], sizeof f->cfg.args[0], "%s/%s", FAKE_DIR, script);
    snprintf(f->cfg.args[1], sizeof f->cfg.args[1], "%s", mode);
    f->cfg.argc = 2;
    // Generous: a loaded test machine starts processes slowly; the timeouts themselves are
    // tested with tight values where that is the point.
    f->cfg.startup_timeout_ms = 8000;
    f->cfg.ping_timeout_ms = 4000;
}

/// One engine setting, as `xqforge play -engine` and job files give it (engine_spec).
static void spec(Fixture *f, const char *word)
{
    TimeControl tc = {0};
    char why[256] = "";
    EngineSpecStatus st = engine_spec_word(&f->cfg, &tc, word, why, sizeof why);
    if (st != ENGINE_SPEC_OK)
        print_message("%s: %s\n", word, why);
    assert_int_equal(st, ENGINE_SPEC_OK);
}

/// A setting refused as a bad value, with a reason.
static void spec_bad(Fixture *f, const char *word)
{
    TimeControl tc = {0};
    char why[256] = "";
    EngineSpecStatus st = engine_spec_word(&f->cfg, &tc, word, why, sizeof why);
    if (st != ENGINE_SPEC_ERR_VALUE)
        print_message("%s: accepted\n", word);
    assert_int_equal(st, ENGINE_SPEC_ERR_VALUE);
    assert_true(why[0] != '\0');
}

/// Whether process pid is gone (no such process, or a zombie nobody has reaped yet),
/// waiting up to 2 s for it.
static bool pid_gone(pid_t pid)
{
    for (int i = 0; i < 200; i++) {
        char path[64], stat[256] = "";
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (!f)
            return true;
        size_t n = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[n] = '\0';
        const char *paren = strrchr(stat, ')');
        if (paren && (paren[2] == 'Z' || paren[2] == 'X'))
            return true;
        usleep(10000);
    }
    return false;
}

static void start(Fixture *f)
{
    PlayerStatus st = player_new(&f->cfg, &f->player, f->msg, sizeof f->msg);
    if (st != PLAYER_OK)
        print_message("player_new: %s: %s\n", player_strerror(st), f->msg);
    assert_int_equal(st, PLAYER_OK);
    RulesConfig rules = rules_config_default(RULES_ASIAN);
    st = player_new_game(f->player, &rules, f->msg, sizeof f->msg);
    if (st != PLAYER_OK)
        print_message("player_new_game: %s\n", f->msg);
    assert_int_equal(st, PLAYER_OK);
}

static void set_position(Fixture *f, const char *fen, const char *moves)
{
    assert_int_equal(board_set_fen(f->board, fen, NULL, 0), FEN_OK);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", moves);
    for (char *t = strtok(buf, " "); t; t = strtok(NULL, " ")) {
        Move m;
        assert_int_equal(move_parse_legal(f->board, t, 0, &m), MOVE_TEXT_OK);
        board_make_move(f->board, m);
    }
}

static PlayerLimits depth_limits(int depth)
{
    return (PlayerLimits){{-1, -1}, {0, 0}, 0, 0, depth, 0};
}

static PlayerLimits movetime_limits(int64_t ms)
{
    return (PlayerLimits){{-1, -1}, {0, 0}, 0, ms, 0, 0};
}

static PlayerLimits clock_limits(int64_t red, int64_t black, int64_t inc)
{
    return (PlayerLimits){{red, black}, {inc, inc}, 0, 0, 0, 0};
}

/// Asks for a move within budget_ms (the deadline given to the player, generous: the limits
/// make the engine answer far sooner) and checks that it came, legal, in time.
static PlayerMove go_legal(Fixture *f, PlayerLimits lim, int64_t budget_ms)
{
    PlayerMove pm;
    int64_t t0 = timeman_now_ms();
    PlayerStatus st =
        player_go(f->player, f->board, &lim, t0 + budget_ms, &pm, f->msg, sizeof f->msg);
    if (st != PLAYER_OK)
        print_message("player_go: %s: %s\n", player_strerror(st), f->msg);
    assert_int_equal(st, PLAYER_OK);
    assert_true(timeman_now_ms() - t0 <= budget_ms + 3000); // slack: a loaded machine
    assert_true(movegen_is_legal(f->board, pm.move));
    return pm;
}

/// Asks for a move expecting a failure st, returned by the deadline (plus slack).
static void go_fails(Fixture *f, PlayerLimits lim, int64_t budget_ms, PlayerStatus want)
{
    PlayerMove pm;
    int64_t t0 = timeman_now_ms();
    PlayerStatus st =
        player_go(f->player, f->board, &lim, t0 + budget_ms, &pm, f->msg, sizeof f->msg);
    int64_t spent = timeman_now_ms() - t0;
    if (st != want)
        print_message("player_go: %s (%s), wanted %s\n", player_strerror(st), f->msg,
                      player_strerror(want));
    assert_int_equal(st, want);
    assert_true(f->msg[0] != '\0');
    // Returned by the deadline: the slack only absorbs a loaded machine's scheduling delays
    // (a player that waited for the engine would overrun by far more).
    assert_true(spent <= budget_ms + 3000);
}

/// The engine plays `plies` moves against itself (one player, both sides), each legal.
static void self_play(Fixture *f, PlayerLimits lim, int plies)
{
    for (int i = 0; i < plies; i++) {
        PlayerMove pm = go_legal(f, lim, 5000);
        board_make_move(f->board, pm.move);
    }
}

// ---------------------------------------------------------------------------------------
// Fairy-Stockfish

/// UCI mode with ranks 1-10: depth, movetime and clock limits all give legal moves from
/// the start, and the reported depth and score come through.
static void test_fsf_uci_start(void **state)
{
    Fixture *f = *state;
    skip_unless_installed(FSF);
    configure(f, "fsf-uci", PROTO_UCI, FSF, 1);
    start(f);
    PlayerMove pm = go_legal(f, depth_limits(6), 5000);
    assert_true(pm.has_score);
    assert_int_equal(pm.depth, 6);
    assert_true(pm.nodes > 0);
    go_legal(f, movetime_limits(100), 4000);
    go_legal(f, clock_limits(2000, 2000, 100), 5000);
}

/// UCI mode from a game: a FEN start plus moves (including a rank-10 point) and a self-played
/// continuation.
static void test_fsf_uci_game(void **state)
{
    Fixture *f = *state;
    skip_unless_installed(FSF);
    configure(f, "fsf-uci", PROTO_UCI, FSF, 1);
    start(f);
    set_position(f, BOARD_START_FEN, "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7");
    self_play(f, depth_limits(5), 4);
    set_position(f, OTHER_FEN, "a0a1");
    go_legal(f, clock_limits(1500, 1500, 0), 4500);
}

/// UCCI mode with ranks 0-9, from the start and from a FEN game.
static void test_fsf_ucci(void **state)
{
    Fixture *f = *state;
    skip_unless_installed(FSF);
    configure(f, "fsf-ucci", PROTO_UCCI, FSF, 0);
    start(f);
    PlayerMove pm = go_legal(f, depth_limits(5), 5000);
    assert_true(pm.has_score);
    go_legal(f, clock_limits(1000, 1000, 100), 4000);
    set_position(f, OTHER_FEN, "a0a1 a9a8");
    self_play(f, depth_limits(4), 3);
}

/// A search cut at the deadline is a timeout; the next call collects the stale bestmove
/// first and then answers the new request.
static void test_fsf_timeout_recovers(void **state)
{
    Fixture *f = *state;
    skip_unless_installed(FSF);
    configure(f, "fsf-uci", PROTO_UCI, FSF, 1);
    start(f);
    go_fails(f, depth_limits(60), 300, PLAYER_ERR_TIMEOUT);
    set_position(f, BOARD_START_FEN, "h2e2");
    go_legal(f, depth_limits(4), 5000);
}

// ---------------------------------------------------------------------------------------
// xboard engines

/// Sjaak II: depth and sub-second movetime (st rounded up, then `?`), moves fed one by one
/// over a self-played game, a FEN start (letters H/E), and recovery after a timeout.
static void test_sjaak(void **state)
{
    Fixture *f = *state;
    skip_unless_installed(SJAAK);
    configure(f, "sjaak", PROTO_XBOARD, SJAAK, 0);
    start(f);
    self_play(f, depth_limits(3), 4);
    int64_t t0 = timeman_now_ms();
    go_legal(f, movetime_limits(300), 4000);
    assert_true(timeman_now_ms() - t0 < 800);
    set_position(f, OTHER_FEN, "a0a1");
    RulesConfig rules = rules_config_default(RULES_ASIAN);
    assert_int_equal(player_new_game(f->player, &rules, f->msg, sizeof f->msg), PLAYER_OK);
    self_play(f, depth_limits(3), 2);
    go_fails(f, depth_limits(60), 300, PLAYER_ERR_TIMEOUT);
    go_legal(f, depth_limits(2), 5000);
}

/// MaxQi: a clocked game from the start (level, time, otim), a sub-second movetime; a game
/// from another position is refused as a configuration error (it has no setboard).
static void test_maxqi(void **state)
{
    Fixture *f = *state;
    skip_unless_installed(MAXQI);
    configure(f, "maxqi", PROTO_XBOARD, MAXQI, 0);
    start(f);
    self_play(f, clock_limits(3000, 3000, 50), 4);
    go_legal(f, depth_limits(3), 5000);
    go_legal(f, movetime_limits(400), 4000); // sub-second: no wall-clock check (noisy)
    set_position(f, OTHER_FEN, "");
    go_fails(f, depth_limits(3), 2000, PLAYER_ERR_CONFIG);
    assert_non_null(strstr(f->msg, "setboard"));
    set_position(f, BOARD_START_FEN, "h2e2");
    go_legal(f, depth_limits(3), 5000);
}

/// HoiXiangqi (four-field FEN with H/E letters) from another position.
static void test_hoixiangqi(void **state)
{
    Fixture *f = *state;
    skip_unless_installed(HOI);
    configure(f, "hoi", PROTO_XBOARD, HOI, 0);
    start(f);
    set_position(f, OTHER_FEN, "a0a1");
    self_play(f, depth_limits(2), 2);
}

// ---------------------------------------------------------------------------------------
// Fake engines

/// A well-behaved fake: the move, and the score/depth/nodes of the last first-PV info line.
static void test_fake_info(void **state)
{
    Fixture *f = *state;
    configure_fake(f, PROTO_UCI, "uci.sh", "good");
    start(f);
    PlayerMove pm = go_legal(f, depth_limits(7), 2000);
    char text[MOVE_TEXT_MAX];
    move_text(pm.move, 0, text);
    assert_string_equal(text, "h2e2");
    assert_true(pm.has_score);
    assert_false(pm.mate);
    assert_int_equal(pm.score, 33);
    assert_int_equal(pm.depth, 7);
    assert_int_equal((int)pm.nodes, 1234);
    player_free(f->player);
    f->player = NULL;
    configure_fake(f, PROTO_UCI, "uci.sh", "mate");
    start(f);
    pm = go_legal(f, depth_limits(7), 2000);
    assert_true(pm.mate);
    assert_int_equal(pm.score, -3);
}

/// An engine that exits after the handshake is a crash, and stays one.
static void test_fake_crash(void **state)
{
    Fixture *f = *state;
    configure_fake(f, PROTO_UCI, "uci.sh", "crash");
    start(f);
    go_fails(f, depth_limits(5), 2000, PLAYER_ERR_CRASH);
    assert_non_null(strstr(f->msg, "the engine exited with status 3"));
    go_fails(f, depth_limits(5), 2000, PLAYER_ERR_CRASH);
}

/// An engine sees none of our secrets: no report token or cloud key in its environment, no
/// descriptor of ours (a file, a socket) above 2; it does see what env.NAME sets and what
/// passenv passes through.
static void test_fake_clean_start(void **state)
{
    Fixture *f = *state;
    assert_int_equal(setenv("XQ_REPORT_TOKEN", "secret-token", 1), 0);
    assert_int_equal(setenv("AWS_SECRET_ACCESS_KEY", "secret-key", 1), 0);
    assert_int_equal(setenv("XQ_TEST_PASSED", "passed", 1), 0);
    char tmpl[] = "/tmp/xq-leak-XXXXXX";
    int file = mkstemp(tmpl), sv[2];
    assert_true(file >= 0);
    unlink(tmpl);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    configure_fake(f, PROTO_UCI, "uci.sh", "inspect");
    spec(f, "env.XQ_TEST_SET=yes");
    spec(f, "passenv=XQ_TEST_PASSED");
    start(f);
    go_legal(f, depth_limits(5), 3000);
    close(file);
    close(sv[0]);
    close(sv[1]);
}

/// An engine that exits while a process it started keeps its output open is a crash at once
/// (not at the deadline), with its exit status named, and leaves no process behind.
static void test_fake_fork_exit(void **state)
{
    Fixture *f = *state;
    char pidfile[] = "/tmp/xq-pid-XXXXXX", word[64], text[32] = "";
    int fd = mkstemp(pidfile);
    assert_true(fd >= 0);
    configure_fake(f, PROTO_UCI, "uci.sh", "forkexit");
    snprintf(word, sizeof word, "env.XQ_TEST_PIDFILE=%s", pidfile);
    spec(f, word);
    start(f);
    int64_t t0 = timeman_now_ms();
    go_fails(f, depth_limits(5), 8000, PLAYER_ERR_CRASH);
    assert_true(timeman_now_ms() - t0 < 2000);
    assert_non_null(strstr(f->msg, "the engine exited with status 3; a process it started"));
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    unlink(pidfile);
    assert_true(n > 0);
    pid_t child = (pid_t)atoi(text);
    assert_true(child > 1);
    assert_true(pid_gone(child));
}

/// rlimit_cpu: an engine that spins past its CPU seconds is a crash naming the limit.
static void test_fake_rlimit_cpu(void **state)
{
    Fixture *f = *state;
    configure_fake(f, PROTO_UCI, "uci.sh", "burn");
    spec(f, "rlimit_cpu=1");
    start(f);
    go_fails(f, depth_limits(5), 10000, PLAYER_ERR_CRASH);
    assert_non_null(strstr(f->msg, "killed by SIGXCPU (over rlimit_cpu 1 s)"));
}

/// The keys of the engine's environment and limits take the documented values and refuse
/// bad ones with a reason.
static void test_engine_keys(void **state)
{
    Fixture *f = *state;
    PlayerConfig *pc = &f->cfg;
    spec(f, "rlimit_as=512M");
    assert_true(pc->rlimit_as == (uint64_t)512 << 20);
    spec(f, "rlimit_as=2g");
    assert_true(pc->rlimit_as == (uint64_t)2 << 30);
    spec(f, "rlimit_as=100000000");
    assert_true(pc->rlimit_as == 100000000);
    spec(f, "rlimit_as=0");
    assert_true(pc->rlimit_as == 0);
    spec(f, "rlimit_cpu=30");
    assert_true(pc->rlimit_cpu_s == 30);
    spec(f, "env.A=1");
    spec(f, "env.B_2=x=y");
    spec(f, "env.A=2");
    assert_int_equal(pc->env_count, 2);
    assert_string_equal(pc->env[0], "A=2");
    assert_string_equal(pc->env[1], "B_2=x=y");
    spec(f, "passenv=HOME  XQ_ONE");
    assert_string_equal(pc->passenv, "HOME  XQ_ONE");
    static const char *const bad[] = {"rlimit_as=1M",  "rlimit_as=12Q", "rlimit_as=-5",
                                      "rlimit_as=5MB", "rlimit_as=",    "rlimit_cpu=-1",
                                      "rlimit_cpu=x",  "env.1X=a",      "env.=a",
                                      "env.A-B=1",     "passenv=A-B",   "passenv=*"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        spec_bad(f, bad[i]);
    for (int i = pc->env_count; i < PLAYER_ENV_MAX; i++) {
        char word[32];
        snprintf(word, sizeof word, "env.V%d=1", i);
        spec(f, word);
    }
    spec(f, "env.A=3"); // a name already set still fits
    spec_bad(f, "env.ONE_TOO_MANY=1");
}

/// An engine that never answers go times out by the deadline.
static void test_fake_silent(void **state)
{
    Fixture *f = *state;
    configure_fake(f, PROTO_UCI, "uci.sh", "silent");
    start(f);
    go_fails(f, depth_limits(5), 300, PLAYER_ERR_TIMEOUT);
}

/// A legal-looking but illegal move, no move at all, and an unparsable move.
static void test_fake_bad_moves(void **state)
{
    Fixture *f = *state;
    static const struct {
        const char *mode;
        PlayerStatus want;
    } cases[] = {{"illegal", PLAYER_ERR_ILLEGAL},
                 {"none", PLAYER_ERR_ILLEGAL},
                 {"garbage", PLAYER_ERR_PROTOCOL}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        configure_fake(f, PROTO_UCI, "uci.sh", cases[i].mode);
        start(f);
        go_fails(f, depth_limits(5), 2000, cases[i].want);
        player_free(f->player);
        f->player = NULL;
    }
}

/// Over-long lines are skipped: a move after them still arrives, and an endless flood ends
/// at the deadline.
static void test_fake_flood(void **state)
{
    Fixture *f = *state;
    configure_fake(f, PROTO_UCI, "uci.sh", "floodmove");
    start(f);
    go_legal(f, depth_limits(5), 3000);
    player_free(f->player);
    f->player = NULL;
    configure_fake(f, PROTO_UCI, "uci.sh", "flood");
    start(f);
    go_fails(f, depth_limits(5), 300, PLAYER_ERR_TIMEOUT);
}

/// No handshake in time, an engine that exits at once, and a missing program fail to start.
static void test_fake_start_failures(void **state)
{
    Fixture *f = *state;
    static const char *const modes[] = {"hang", "exit"};
    for (size_t i = 0; i < 2; i++) {
        configure_fake(f, PROTO_UCI, "uci.sh", modes[i]);
        f->cfg.startup_timeout_ms = 300;
        int64_t t0 = timeman_now_ms();
        PlayerStatus st = player_new(&f->cfg, &f->player, f->msg, sizeof f->msg);
        assert_int_equal(st, PLAYER_ERR_START);
        assert_null(f->player);
        assert_true(timeman_now_ms() - t0 < 400);
    }
    configure(f, "missing", PROTO_UCI, "/nonexistent/engine", 0);
    assert_int_equal(player_new(&f->cfg, &f->player, f->msg, sizeof f->msg), PLAYER_ERR_START);
    assert_non_null(strstr(f->msg, "/nonexistent/engine"));
}

/// xboard: an engine whose features come after the 2 s given to one without done=0
/// (HoiXiangqi on a loaded machine) still plays a game from a FEN: it is refused for want of
/// setboard only once its startup time is over, not while its features are on their way.
static void test_fake_xboard_late_features(void **state)
{
    Fixture *f = *state;
    configure_fake(f, PROTO_XBOARD, "xboard.sh", "late");
    start(f);
    set_position(f, "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1", "");
    go_legal(f, depth_limits(4), 4000);
}

/// xboard: features over two lines, usermove, result claims ignored; without setboard a
/// FEN game is refused; a rejected move is a protocol error.
static void test_fake_xboard(void **state)
{
    Fixture *f = *state;
    configure_fake(f, PROTO_XBOARD, "xboard.sh", "plain");
    start(f);
    set_position(f, BOARD_START_FEN, "h2e2");
    PlayerMove pm = go_legal(f, depth_limits(4), 2000);
    assert_int_equal(pm.score, -25);
    assert_int_equal(pm.depth, 4);
    set_position(f, OTHER_FEN, "");
    go_fails(f, depth_limits(4), 2000, PLAYER_ERR_CONFIG);
    set_position(f, BOARD_START_FEN, "h0g2");
    go_fails(f, depth_limits(4), 2000, PLAYER_ERR_PROTOCOL); // it answers `move junk`
    player_free(f->player);
    f->player = NULL;
    configure_fake(f, PROTO_XBOARD, "xboard.sh", "rejects");
    start(f);
    set_position(f, BOARD_START_FEN, "h2e2");
    go_fails(f, depth_limits(4), 2000, PLAYER_ERR_PROTOCOL);
    assert_non_null(strstr(f->msg, "Illegal move"));
}

/// xboard: `resign` is the engine's loss at once, not a wait until the deadline; the engine
/// plays on in the next game.
static void test_fake_xboard_resign(void **state)
{
    Fixture *f = *state;
    configure_fake(f, PROTO_XBOARD, "xboard.sh", "resign");
    start(f);
    set_position(f, BOARD_START_FEN, "h2e2");
    int64_t t0 = timeman_now_ms();
    go_fails(f, depth_limits(4), 8000, PLAYER_RESIGNED);
    assert_true(timeman_now_ms() - t0 < 2000);
    assert_non_null(strstr(f->msg, "resigns"));
    RulesConfig rules = rules_config_default(RULES_ASIAN);
    assert_int_equal(player_new_game(f->player, &rules, f->msg, sizeof f->msg), PLAYER_OK);
    go_fails(f, depth_limits(4), 8000, PLAYER_RESIGNED);
}

/// xboard has only whole seconds (`st`): a sub-second movetime ends with `?` on time.
static void test_fake_xboard_movetime(void **state)
{
    Fixture *f = *state;
    configure_fake(f, PROTO_XBOARD, "xboard.sh", "waitq");
    start(f);
    set_position(f, BOARD_START_FEN, "h2e2");
    int64_t t0 = timeman_now_ms();
    go_legal(f, movetime_limits(300), 2000);
    int64_t spent = timeman_now_ms() - t0;
    assert_true(spent >= 300 && spent < 600);
}

/// No limit at all is refused before the engine is asked.
static void test_no_limits(void **state)
{
    Fixture *f = *state;
    configure_fake(f, PROTO_UCI, "uci.sh", "good");
    start(f);
    go_fails(f, depth_limits(0), 2000, PLAYER_ERR_CONFIG);
}

/// One advertised option: its name, type and (spin) range.
static void assert_option(const PlayerOptionInfo *o, const char *name, PlayerOptionType type,
                          long long min, long long max)
{
    assert_string_equal(o->name, name);
    assert_int_equal(o->type, type);
    assert_int_equal(o->has_range, type == PLAYER_OPT_SPIN);
    if (type == PLAYER_OPT_SPIN) {
        assert_int_equal(o->min, min);
        assert_int_equal(o->max, max);
    }
}

/// The options an engine advertises in its handshake are kept in its order with their types
/// and ranges: UCI `option name N type T`, UCCI `option N type T` and xboard
/// `feature option="N -T ..."`, names with blanks and dashes whole; the builtin player has none.
static void test_fake_advertised_options(void **state)
{
    Fixture *f = *state;
    PlayerOptionInfo o[8];
    configure_fake(f, PROTO_UCI, "options.sh", "uci");
    start(f);
    assert_int_equal(player_options(f->player, NULL, 0), 5);
    assert_int_equal(player_options(f->player, o, 8), 5);
    assert_option(&o[0], "Hash", PLAYER_OPT_SPIN, 1, 64);
    assert_option(&o[1], "Skill Level", PLAYER_OPT_SPIN, 0, 20);
    assert_option(&o[2], "Ponder", PLAYER_OPT_CHECK, 0, 0);
    assert_option(&o[3], "Clear Hash", PLAYER_OPT_BUTTON, 0, 0);
    assert_option(&o[4], "EvalFile", PLAYER_OPT_OTHER, 0, 0);
    assert_string_equal(player_engine_name(f->player), "Fake options");
    player_free(f->player);
    f->player = NULL;
    configure_fake(f, PROTO_UCCI, "options.sh", "ucci");
    start(f);
    assert_int_equal(player_options(f->player, o, 8), 3);
    assert_option(&o[0], "usebook", PLAYER_OPT_CHECK, 0, 0);
    assert_option(&o[1], "hashsize", PLAYER_OPT_SPIN, 0, 1024);
    assert_option(&o[2], "bookfiles", PLAYER_OPT_OTHER, 0, 0);
    player_free(f->player);
    f->player = NULL;
    configure_fake(f, PROTO_XBOARD, "options.sh", "xboard");
    start(f);
    assert_int_equal(player_options(f->player, o, 2), 4); // the count, two of them copied
    assert_int_equal(player_options(f->player, o, 8), 4);
    assert_option(&o[0], "Claim repetitions", PLAYER_OPT_CHECK, 0, 0);
    assert_option(&o[1], "Depth Limit", PLAYER_OPT_SPIN, 0, 99);
    assert_option(&o[2], "Book-File", PLAYER_OPT_OTHER, 0, 0);
    assert_option(&o[3], "Resign", PLAYER_OPT_BUTTON, 0, 0);
    player_free(f->player);
    f->player = NULL;
    configure(f, "b", PROTO_BUILTIN, "", 0);
    start(f);
    assert_int_equal(player_options(f->player, o, 8), 0);
}

/// job_check_players: two engines that run one program start it once and stop it with
/// `quit`; each one's options are compared with what it offers (an unknown name is refused
/// with the offered names, unless check_options = false; a spin value outside its range, a
/// check value that is no boolean); nodes= for xboard is refused without starting anything; a
/// missing program and a handshake that does not come within startup are named.
static void test_job_check_players(void **state)
{
    Fixture *f = *state;
    char starts[] = "/tmp/xq-check-XXXXXX", why[1024] = "";
    int fd = mkstemp(starts);
    assert_true(fd >= 0);
    close(fd);
    configure_fake(f, PROTO_UCI, "options.sh", "uci");
    char env[64 + sizeof starts];
    snprintf(env, sizeof env, "env.XQ_TEST_STARTS=%s", starts);
    spec(f, env);
    JobPlayer p[2] = {{f->cfg, {.depth = 1}}, {f->cfg, {.depth = 1}}};
    snprintf(p[1].cfg.name, sizeof p[1].cfg.name, "second");
    snprintf(p[1].cfg.options[0].name, sizeof p[1].cfg.options[0].name, "hash"); // any case
    snprintf(p[1].cfg.options[0].value, sizeof p[1].cfg.options[0].value, "64");
    p[1].cfg.option_count = 1;
    assert_int_equal(job_check_players(p, 2, why, sizeof why), JOB_CHECK_OK);
    FILE *in = fopen(starts, "r");
    assert_non_null(in);
    char log[64] = "";
    size_t n = fread(log, 1, sizeof log - 1, in);
    fclose(in);
    log[n] = '\0';
    assert_string_equal(log, "start\nquit\n");
    unlink(starts);
    snprintf(p[1].cfg.options[0].name, sizeof p[1].cfg.options[0].name, "Hsh");
    assert_int_equal(job_check_players(p, 2, why, sizeof why), JOB_CHECK_ERR_ENGINE);
    assert_string_equal(why, "engine 'second': option.Hsh: the engine has no option 'Hsh' (it "
                             "offers: Hash, Skill Level, Ponder, Clear Hash, EvalFile)");
    p[1].cfg.skip_option_check = true;
    assert_int_equal(job_check_players(p, 2, why, sizeof why), JOB_CHECK_OK);
    p[1].cfg.skip_option_check = false;
    snprintf(p[1].cfg.options[0].name, sizeof p[1].cfg.options[0].name, "Hash");
    snprintf(p[1].cfg.options[0].value, sizeof p[1].cfg.options[0].value, "65");
    assert_int_equal(job_check_players(p, 2, why, sizeof why), JOB_CHECK_ERR_ENGINE);
    assert_non_null(strstr(why, "option.Hash: '65': the engine takes a whole number from 1 to 64"));
    snprintf(p[1].cfg.options[0].name, sizeof p[1].cfg.options[0].name, "Ponder");
    snprintf(p[1].cfg.options[0].value, sizeof p[1].cfg.options[0].value, "on");
    assert_int_equal(job_check_players(p, 2, why, sizeof why), JOB_CHECK_ERR_ENGINE);
    assert_non_null(strstr(why, "option.Ponder: 'on': the engine takes true or false"));
    p[0].cfg.proto = PROTO_XBOARD;
    p[0].tc = (TimeControl){.nodes = 1000};
    snprintf(p[0].cfg.cmd, sizeof p[0].cfg.cmd, "/nonexistent/engine");
    assert_int_equal(job_check_players(p, 1, why, sizeof why), JOB_CHECK_ERR_ENGINE);
    assert_string_equal(why, "engine 'uci': nodes: xboard has no node limit: give tc, st or "
                             "depth for this engine");
    p[0].tc = (TimeControl){.depth = 1};
    assert_int_equal(job_check_players(p, 1, why, sizeof why), JOB_CHECK_ERR_ENGINE);
    assert_string_equal(why, "engine 'uci': cmd: /nonexistent/engine: No such file or directory");
    configure_fake(f, PROTO_UCI, "uci.sh", "hang"); // no handshake within startup
    f->cfg.startup_timeout_ms = 300;
    p[0].cfg = f->cfg;
    assert_int_equal(job_check_players(p, 1, why, sizeof why), JOB_CHECK_ERR_ENGINE);
    assert_string_equal(why, "engine 'hang': startup: it does not start as a uci engine: no "
                             "'uciok' within 300 ms");
}

/// check_options is an engine key: false turns the comparison off, anything else is refused.
static void test_check_options_key(void **state)
{
    Fixture *f = *state;
    assert_false(f->cfg.skip_option_check);
    spec(f, "check_options=false");
    assert_true(f->cfg.skip_option_check);
    spec(f, "check_options=true");
    assert_false(f->cfg.skip_option_check);
    spec_bad(f, "check_options=maybe");
}

// ---------------------------------------------------------------------------------------
// The engine log

/// The fixture's engine gets a log of at most cap bytes a file, in a fresh directory.
static void with_log(Fixture *f, uint64_t cap)
{
    snprintf(f->log_dir, sizeof f->log_dir, "/tmp/xq-englog-XXXXXX");
    assert_non_null(mkdtemp(f->log_dir));
    snprintf(f->log_path, sizeof f->log_path, "%s/engine.log", f->log_dir);
    f->log = englog_new(f->log_path, f->cfg.name, cap);
    assert_non_null(f->log);
    char why[256];
    assert_true(englog_open(f->log, why, sizeof why));
    f->cfg.log = f->log;
}

/// The whole of a file (NULL when there is none).
static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    char *text = calloc(1, 1 << 20);
    assert_non_null(text);
    text[fread(text, 1, (1 << 20) - 1, fp)] = '\0';
    fclose(fp);
    return text;
}

static bool has(const char *text, const char *what)
{
    if (strstr(text, what))
        return true;
    print_message("the log lacks '%s'\n", what);
    return false;
}

/// Every line of a log file: the header first, then `TIME ENGINE#N D TEXT` with a UTC time to
/// the millisecond that never goes back and D one of '>', '<', '!'. Returns the lines.
static int check_log_lines(const char *text, const char *engine)
{
    char head[128], pattern[256];
    snprintf(head, sizeof head, "# xqforge engine log of %s, from ", engine);
    assert_int_equal(strncmp(text, head, strlen(head)), 0);
    snprintf(pattern, sizeof pattern,
             "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z %s#[0-9]+ [<>!] ",
             engine);
    regex_t re;
    assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
    int lines = 0;
    char last[32] = "";
    for (const char *p = strchr(text, '\n') + 1; *p;) {
        const char *nl = strchr(p, '\n');
        assert_non_null(nl); // whole lines only
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(nl - p < 511 ? nl - p : 511), p);
        if (regexec(&re, line, 0, NULL, 0) != 0)
            print_message("a malformed log line: '%s'\n", line);
        assert_int_equal(regexec(&re, line, 0, NULL, 0), 0);
        assert_true(strncmp(last, line, 24) <= 0);
        snprintf(last, sizeof last, "%.24s", line);
        lines++;
        p = nl + 1;
    }
    regfree(&re);
    return lines;
}

/// Fairy-Stockfish over UCI with the log on: the handshake both ways, each go's note with
/// the clocks given and the deadline, before the go line that carries them, the answer, and
/// a timeout named as such; every line timestamped.
static void test_englog_fsf(void **state)
{
    Fixture *f = *state;
    skip_unless_installed(FSF);
    configure(f, "fsf", PROTO_UCI, FSF, 1);
    with_log(f, 0);
    start(f);
    go_legal(f, clock_limits(5000, 4000, 100), 6000);
    go_fails(f, depth_limits(60), 300, PLAYER_ERR_TIMEOUT);
    player_free(f->player);
    f->player = NULL;
    char *text = slurp(f->log_path);
    assert_non_null(text);
    assert_true(check_log_lines(text, "fsf") > 20);
    assert_true(has(text, " fsf#1 ! started uci, pid "));
    assert_true(has(text, " fsf#1 > uci\n"));
    assert_true(has(text, " fsf#1 < uciok\n"));
    assert_true(has(text, " fsf#1 > setoption name UCI_Variant value xiangqi\n"));
    const char *note = strstr(text, " fsf#1 ! go: red to move, ply 0; clocks red 5000+100 ms, "
                                    "black 4000+100 ms, movestogo 0; deadline in ");
    assert_non_null(note);
    const char *go = strstr(note, " fsf#1 > go wtime 5000 winc 100 btime 4000 binc 100\n");
    assert_non_null(go);
    assert_non_null(strstr(go, " fsf#1 < bestmove "));
    assert_true(has(text, " fsf#1 ! go: red to move, ply 0; depth 60; deadline in "));
    assert_true(has(text, " fsf#1 ! engine lost on time: no bestmove by the deadline\n"));
    assert_true(has(text, " fsf#1 > stop\n"));
    assert_true(has(text, " fsf#1 > quit\n"));
    assert_true(has(text, " fsf#1 ! closed\n"));
    free(text);
}

/// xboard (a fake): the clocks as CECP sends them (`time`/`otim` in centiseconds) after the
/// note that gives them in ms, then `go` and the engine's `move`.
static void test_englog_xboard(void **state)
{
    Fixture *f = *state;
    configure_fake(f, PROTO_XBOARD, "xboard.sh", "plain");
    with_log(f, 0);
    start(f);
    set_position(f, BOARD_START_FEN, "h2e2");
    go_legal(f, clock_limits(5000, 4000, 100), 3000);
    char *text = slurp(f->log_path);
    assert_non_null(text);
    check_log_lines(text, "plain");
    assert_true(has(text, " plain#1 > protover 2\n"));
    assert_true(has(text, " plain#1 < feature "));
    const char *t = strstr(text, " plain#1 > time 400\n");
    assert_non_null(t);
    assert_non_null(strstr(t, " plain#1 > otim 500\n"));
    const char *note = strstr(t, " plain#1 ! go: black to move, ply 1; clocks red 5000+100 ms, "
                                 "black 4000+100 ms, movestogo 0; deadline in ");
    assert_non_null(note);
    assert_non_null(strstr(note, " plain#1 > go\n"));
    assert_non_null(strstr(note, " plain#1 < move h9g7\n"));
    free(text);
}

/// A log at its size cap becomes NAME.1 (the older .1 replaced) and NAME starts afresh with
/// its header: never more than the two files, neither over the cap.
static void test_englog_rotation(void **state)
{
    Fixture *f = *state;
    configure_fake(f, PROTO_UCI, "uci.sh", "good");
    with_log(f, ENGLOG_SIZE_MIN);
    start(f);
    for (int i = 0; i < 40; i++)
        go_legal(f, clock_limits(5000, 4000, 100), 3000);
    char old[160], older[160];
    snprintf(old, sizeof old, "%s.1", f->log_path);
    snprintf(older, sizeof older, "%s.2", f->log_path);
    struct stat a, b;
    assert_int_equal(stat(f->log_path, &a), 0);
    assert_int_equal(stat(old, &b), 0);
    assert_int_not_equal(access(older, F_OK), 0);
    assert_true(a.st_size <= ENGLOG_SIZE_MIN && b.st_size <= ENGLOG_SIZE_MIN);
    assert_true(b.st_size > ENGLOG_SIZE_MIN / 2); // it was full
    char *now = slurp(f->log_path), *then = slurp(old);
    check_log_lines(now, "good");
    check_log_lines(then, "good");
    // The first 40 goes' lines do not fit in two files: the start is gone, the end is there.
    assert_null(strstr(then, "> uci\n"));
    assert_true(has(now, "< bestmove h2e2 ponder h9g7\n") ||
                has(then, "< bestmove h2e2 ponder h9g7\n"));
    free(now);
    free(then);
}

typedef struct {
    PlayerConfig *cfg;
    int moves; // legal moves it got
} LogThread;

static void *log_thread(void *arg)
{
    LogThread *lt = arg;
    Player *p = NULL;
    Board *b = malloc(sizeof *b);
    char msg[256];
    if (b && board_set_fen(b, BOARD_START_FEN, NULL, 0) == FEN_OK &&
        player_new(lt->cfg, &p, msg, sizeof msg) == PLAYER_OK) {
        PlayerLimits lim = clock_limits(5000, 4000, 100);
        for (int i = 0; i < 25; i++) {
            PlayerMove pm;
            if (player_go(p, b, &lim, timeman_now_ms() + 5000, &pm, msg, sizeof msg) == PLAYER_OK)
                lt->moves++;
        }
    }
    player_free(p);
    free(b);
    return NULL;
}

/// Four game threads, each with its own engine process, share one engine's log: every line
/// whole, each process a session of its own, every answer there.
static void test_englog_threads(void **state)
{
    Fixture *f = *state;
    configure_fake(f, PROTO_UCI, "uci.sh", "good");
    with_log(f, 0);
    enum { THREADS = 4 };
    pthread_t tid[THREADS];
    LogThread lt[THREADS];
    for (int i = 0; i < THREADS; i++) {
        lt[i] = (LogThread){&f->cfg, 0};
        assert_int_equal(pthread_create(&tid[i], NULL, log_thread, &lt[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(tid[i], NULL);
        assert_int_equal(lt[i].moves, 25);
    }
    char *text = slurp(f->log_path);
    assert_non_null(text);
    check_log_lines(text, "good");
    int answers = 0;
    for (const char *p = text; (p = strstr(p, "< bestmove h2e2 ponder h9g7\n")); p++)
        answers++;
    assert_int_equal(answers, THREADS * 25);
    for (int i = 1; i <= THREADS; i++) {
        char session[64];
        snprintf(session, sizeof session, " good#%d ! closed\n", i);
        assert_true(has(text, session));
    }
    free(text);
}

/// The log holds the protocol only: the lines the engine wrote (here its whole environment,
/// which holds what env.NAME set) but not our report token (the engine never sees it), nor
/// the engine's command line.
static void test_englog_no_secrets(void **state)
{
    Fixture *f = *state;
    assert_int_equal(setenv("XQ_REPORT_TOKEN", "tok-3f9a1c77", 1), 0);
    configure_fake(f, PROTO_UCI, "uci.sh", "env");
    spec(f, "env.XQ_TEST_SET=engine-visible");
    with_log(f, 0);
    start(f);
    go_legal(f, depth_limits(3), 3000);
    char *text = slurp(f->log_path);
    assert_non_null(text);
    check_log_lines(text, "env");
    assert_true(has(text, " env#1 < info string env XQ_TEST_SET=engine-visible\n"));
    assert_null(strstr(text, "tok-3f9a1c77"));
    assert_null(strstr(text, "fake-engines"));
    free(text);
    unsetenv("XQ_REPORT_TOKEN");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    // clang-format off
    const struct CMUnitTest tests[] = {
        T(test_fsf_uci_start),
        T(test_fsf_uci_game),
        T(test_fsf_ucci),
        T(test_fsf_timeout_recovers),
        T(test_sjaak),
        T(test_maxqi),
        T(test_hoixiangqi),
        T(test_fake_info),
        T(test_fake_crash),
        T(test_fake_clean_start),
        T(test_fake_fork_exit),
        T(test_fake_rlimit_cpu),
        T(test_engine_keys),
        T(test_fake_silent),
        T(test_fake_bad_moves),
        T(test_fake_flood),
        T(test_fake_start_failures),
        T(test_fake_xboard),
        T(test_fake_xboard_late_features),
        T(test_fake_xboard_movetime),
        T(test_fake_xboard_resign),
        T(test_no_limits),
        T(test_fake_advertised_options),
        T(test_job_check_players),
        T(test_check_options_key),
        T(test_englog_fsf),
        T(test_englog_xboard),
        T(test_englog_rotation),
        T(test_englog_threads),
        T(test_englog_no_secrets),
    };
    // clang-format on
#undef T
    return cmocka_run_group_tests_name("player_ext", tests, NULL, NULL);
}
