// SPDX-License-Identifier: MIT
// The UCI front end, driven the way a GUI drives it: uci_loop runs in its own thread on two
// pipes; each test writes command lines and reads the replies with a timeout, so a hang
// fails the test instead of blocking it.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "board.h"
#include "move.h"
#include "nnue.h"
#include "uci.h"

enum {
    WAIT_MS = 20000, // generous: only a broken engine waits this long
    QUIET_MS = 200,  // how long "nothing happens" is watched for
    // An infinite search that ignored stop or quit would never answer: the bound only has to
    // tell "never" from "late", and ThreadSanitizer on a loaded machine took over 1 s.
    PROMPT_MS = 20000,
    LINES_MAX = 4096
};

typedef struct {
    int to_engine, from_engine; // our ends of the two pipes
    FILE *engine_in, *engine_out;
    pthread_t thread;
    int rc;
    char pending[8192]; // bytes read but not yet split into lines
    size_t pending_len;
    char *lines[LINES_MAX];
    int n_lines, cursor;
    bool eof;
} Session;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *engine_main(void *arg)
{
    Session *s = arg;
    s->rc = uci_loop(s->engine_in, s->engine_out);
    fclose(s->engine_in);
    fclose(s->engine_out); // our reader sees end of file
    return NULL;
}

static Session *session_start(void)
{
    Session *s = calloc(1, sizeof *s);
    assert_non_null(s);
    int in[2], out[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(out), 0);
    s->to_engine = in[1];
    s->from_engine = out[0];
    s->engine_in = fdopen(in[0], "r");
    s->engine_out = fdopen(out[1], "w");
    assert_non_null(s->engine_in);
    assert_non_null(s->engine_out);
    assert_int_equal(pthread_create(&s->thread, NULL, engine_main, s), 0);
    return s;
}

static void session_send(Session *s, const char *text, size_t len)
{
    while (len > 0) {
        ssize_t n = write(s->to_engine, text, len);
        if (n < 0 && errno == EINTR)
            continue;
        assert_true(n > 0);
        text += n;
        len -= (size_t)n;
    }
}

static void send_line(Session *s, const char *line)
{
    session_send(s, line, strlen(line));
    session_send(s, "\n", 1);
}

static void add_line(Session *s, const char *text, size_t len)
{
    assert_true(s->n_lines < LINES_MAX);
    char *line = malloc(len + 1);
    assert_non_null(line);
    memcpy(line, text, len);
    line[len] = '\0';
    s->lines[s->n_lines++] = line;
}

/// Reads what the engine wrote within timeout_ms; false on timeout or end of output.
static bool session_pump(Session *s, int timeout_ms)
{
    if (s->eof)
        return false;
    struct pollfd p = {s->from_engine, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0)
        return false;
    ssize_t n =
        read(s->from_engine, s->pending + s->pending_len, sizeof s->pending - s->pending_len);
    if (n <= 0) {
        s->eof = true;
        return false;
    }
    s->pending_len += (size_t)n;
    char *start = s->pending, *nl;
    while ((nl = memchr(start, '\n', s->pending_len - (size_t)(start - s->pending)))) {
        add_line(s, start, (size_t)(nl - start));
        start = nl + 1;
    }
    s->pending_len -= (size_t)(start - s->pending);
    memmove(s->pending, start, s->pending_len);
    assert_true(s->pending_len < sizeof s->pending); // no reply line is that long
    return true;
}

/// The next reply line starting with prefix (lines before it are passed over), or NULL if
/// none comes within timeout_ms.
static const char *session_expect(Session *s, const char *prefix, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        while (s->cursor < s->n_lines) {
            const char *line = s->lines[s->cursor++];
            if (strncmp(line, prefix, strlen(prefix)) == 0)
                return line;
        }
        int64_t left = deadline - now_ms();
        if (left <= 0 || (!session_pump(s, (int)left) && s->eof))
            return NULL;
    }
}

/// Lines received so far that start with prefix.
static int count_lines(const Session *s, const char *prefix)
{
    int n = 0;
    for (int i = 0; i < s->n_lines; i++)
        n += strncmp(s->lines[i], prefix, strlen(prefix)) == 0;
    return n;
}

static bool contains_line(const Session *s, const char *text)
{
    for (int i = 0; i < s->n_lines; i++)
        if (strstr(s->lines[i], text))
            return true;
    return false;
}

/// Closes the engine's input (or not, if the engine already quit), waits for the loop to
/// return, and gives the milliseconds that took.
static int64_t session_finish(Session *s, bool close_input)
{
    int64_t t0 = now_ms();
    if (close_input) {
        close(s->to_engine);
        s->to_engine = -1;
    }
    while (!s->eof && now_ms() - t0 < WAIT_MS)
        session_pump(s, WAIT_MS);
    assert_true(s->eof);
    pthread_join(s->thread, NULL);
    assert_int_equal(s->rc, 0);
    return now_ms() - t0;
}

static void session_free(Session *s)
{
    if (s->to_engine >= 0)
        close(s->to_engine);
    close(s->from_engine);
    for (int i = 0; i < s->n_lines; i++)
        free(s->lines[i]);
    free(s);
}

/// Sends isready and waits for readyok: everything sent before has been handled.
static void sync_ready(Session *s)
{
    send_line(s, "isready");
    assert_non_null(session_expect(s, "readyok", WAIT_MS));
}

/// The move of a bestmove line, checked to be legal in the position given by fen + moves.
static void assert_bestmove_legal(const char *line, const char *fen, const char *const *moves,
                                  int n)
{
    assert_non_null(line);
    char text[16] = "";
    assert_int_equal(sscanf(line, "bestmove %15s", text), 1);
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    assert_int_equal(board_set_fen(b, fen, NULL, 0), FEN_OK);
    Move m;
    for (int i = 0; i < n; i++) {
        assert_int_equal(move_parse_legal(b, moves[i], 0, &m), MOVE_TEXT_OK);
        board_make_move(b, m);
    }
    if (move_parse_legal(b, text, 0, &m) != MOVE_TEXT_OK)
        fail_msg("bestmove '%s' is not legal", text);
    free(b);
}

static int eval_red(Session *s)
{
    send_line(s, "eval");
    const char *line = session_expect(s, "Eval (Red's view): ", WAIT_MS);
    assert_non_null(line);
    return atoi(line + strlen("Eval (Red's view): "));
}

/// The handshake names the engine, lists the options with their ranges, word for word and in
/// this order (options.def, then the weights but no piece-square weights), and ends with uciok.
static void test_handshake(void **state)
{
    (void)state;
    Session *s = session_start();
    send_line(s, "uci");
    assert_non_null(session_expect(s, "uciok", WAIT_MS));
    char use_nnue[64];
    snprintf(use_nnue, sizeof use_nnue, "option name UseNNUE type check default %s",
             nnue_default() ? "true" : "false");
    const char *const head[] = {
        "id name xqforge",
        "id author the xqforge developers",
        "option name Threads type spin default 1 min 1 max 256",
        "option name Hash type spin default 16 min 1 max 65536",
        "option name Clear Hash type button",
        "option name MultiPV type spin default 1 min 1 max 64",
        "option name Move Overhead type spin default 30 min 0 max 5000",
        "option name Rules type combo default seed var seed var asian",
        "option name CountingDefault type spin default 60 min 1 max 1000",
        "option name WeightsFile type string default <empty>",
        "option name EvalFile type string default <default>",
        use_nnue,
        "option name ReverseFutility type check default true",
        "option name NullMove type check default true",
        "option name LateMovePruning type check default true",
        "option name Futility type check default true",
        "option name SeePruning type check default true",
        "option name LateMoveReductions type check default true",
        "option name CheckExtension type check default true",
        "option name Aspiration type check default true",
        "option name KillerHistory type check default true",
        "option name ContinuationHistory type check default true",
        "option name InternalReduction type check default false",
        "option name QuiescenceChecks type check default false",
        "option name ChaseRule type check default true",
        "option name advisor_mg type spin default 120 min 40 max 300",
    };
    int n = (int)(sizeof head / sizeof head[0]);
    assert_true(s->n_lines > n);
    for (int i = 0; i < n; i++)
        assert_string_equal(s->lines[i], head[i]);
    assert_true(contains_line(s, "option name chariot_mg type spin default 600 min 300 max 1200"));
    assert_false(contains_line(s, "option name psq_"));
    assert_string_equal(s->lines[s->n_lines - 1], "uciok");
    session_finish(s, true);
    session_free(s);
}

/// isready is answered with readyok, whatever whitespace or CR LF surrounds it; blank lines
/// get no reply at all.
static void test_isready(void **state)
{
    (void)state;
    Session *s = session_start();
    static const char input[] = "isready\r\n\n   \r\n \t isready \t \r\n";
    session_send(s, input, sizeof input - 1);
    assert_non_null(session_expect(s, "readyok", WAIT_MS));
    assert_non_null(session_expect(s, "readyok", WAIT_MS));
    session_finish(s, true);
    assert_int_equal(s->n_lines, 2);
    session_free(s);
}

/// go depth 4 after position with moves reports depth 4 and returns a legal bestmove.
static void test_go_depth(void **state)
{
    (void)state;
    static const char *const moves[] = {"h2e2", "h9g7"};
    Session *s = session_start();
    send_line(s, "position startpos moves h2e2 h9g7");
    send_line(s, "go depth 4");
    const char *best = session_expect(s, "bestmove ", WAIT_MS);
    assert_bestmove_legal(best, BOARD_START_FEN, moves, 2);
    assert_int_equal(count_lines(s, "info depth 4 "), 1);
    assert_true(contains_line(s, " score cp "));
    assert_true(contains_line(s, " pv "));
    session_finish(s, true);
    session_free(s);
}

/// go perft 3 from the start position prints one count per root move and the published
/// total, 79666.
static void test_go_perft(void **state)
{
    (void)state;
    Session *s = session_start();
    send_line(s, "position startpos");
    send_line(s, "go perft 3");
    assert_non_null(session_expect(s, "Nodes searched: 79666", WAIT_MS));
    int root_lines = 0;
    for (int i = 0; i < s->n_lines; i++) {
        char mv[8];
        unsigned long long n;
        root_lines += sscanf(s->lines[i], "%7[a-i0-9]: %llu", mv, &n) == 2;
    }
    assert_int_equal(root_lines, 44);
    session_finish(s, true);
    session_free(s);
}

/// A long perft runs in the background (isready is answered) and stop cuts it short; at the
/// end of the input a perft is finished, not cut.
static void test_go_perft_stop(void **state)
{
    (void)state;
    Session *s = session_start();
    send_line(s, "go perft 9");
    sync_ready(s);
    send_line(s, "stop");
    assert_non_null(session_expect(s, "info string go perft: stopped", PROMPT_MS));
    assert_int_equal(count_lines(s, "Nodes searched"), 0);
    send_line(s, "go perft 4");
    session_finish(s, true);
    assert_int_equal(count_lines(s, "Nodes searched: 3290240"), 1);
    session_free(s);
}

/// d after position startpos moves shows the FEN reached by those moves.
static void test_position_d(void **state)
{
    (void)state;
    Session *s = session_start();
    send_line(s, "position startpos moves h2e2 h9g7");
    send_line(s, "d");
    const char *fen = session_expect(s, "Fen: ", WAIT_MS);
    assert_non_null(fen);
    assert_string_equal(fen, "Fen: rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR "
                             "w - - 2 2");
    assert_non_null(session_expect(s, "Key: ", WAIT_MS));
    session_finish(s, true);
    session_free(s);
}

/// An illegal or malformed move is reported with its index and text, and the position stays
/// what the previous good command set.
static void test_bad_move(void **state)
{
    (void)state;
    static const char after_b0c2[] =
        "Fen: rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1CN4C1/9/R1BAKABNR b - - 1 1";
    Session *s = session_start();
    send_line(s, "position startpos moves b0c2");
    send_line(s, "position startpos moves h2e2 h2e2");
    const char *err = session_expect(s, "info string ", WAIT_MS);
    assert_non_null(err);
    assert_non_null(strstr(err, "move 2"));
    assert_non_null(strstr(err, "h2e2"));
    send_line(s, "position startpos moves zz99");
    err = session_expect(s, "info string ", WAIT_MS);
    assert_non_null(err);
    assert_non_null(strstr(err, "move 1 'zz99'"));
    send_line(s, "d");
    const char *fen = session_expect(s, "Fen: ", WAIT_MS);
    assert_non_null(fen);
    assert_string_equal(fen, after_b0c2);
    session_finish(s, true);
    session_free(s);
}

/// A bad FEN is reported with the reason board_set_fen gives, and the position is kept.
static void test_bad_fen(void **state)
{
    (void)state;
    Session *s = session_start();
    send_line(s, "position fen rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/8/RNBAKABNR w - - "
                 "0 1 moves h2e2");
    const char *err = session_expect(s, "info string ", WAIT_MS);
    assert_non_null(err);
    assert_non_null(strstr(err, "rank 1 has 8 points"));
    send_line(s, "d");
    const char *fen = session_expect(s, "Fen: ", WAIT_MS);
    assert_non_null(fen);
    assert_string_equal(fen + 5, BOARD_START_FEN);
    session_finish(s, true);
    session_free(s);
}

/// Unknown commands, binary garbage, a NUL byte, a 100 KB line and commands missing their
/// arguments each get one info string, start no search, and the loop keeps answering.
static void test_garbage(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "foo",
        "\x01\x02\xff\xfe\x80 garbage \x7f",
        "position",
        "position fen",
        "position fen moves",
        "position startpos junk",
        "position kiwipete",
        "setoption",
        "setoption name",
        "setoption name value 3",
        "setoption name Hash value",
        "setoption name Hash value lots",
        "setoption name Threads value 0",
        "setoption name Rules value bogus",
        "setoption name NoSuchOption value 1",
        "go depth",
        "go depth x",
        "go depth 0",
        "go nodes -5",
        "go wtime -1000 btime 1000",
        "go movetime -1",
        "go perft",
        "go perft 99",
        "go banana",
        "go ponder",
    };
    enum { BAD_NB = sizeof bad / sizeof bad[0] };
    Session *s = session_start();
    for (int i = 0; i < BAD_NB; i++)
        send_line(s, bad[i]);
    static const char nul_line[] = "isready\0junk\n";
    session_send(s, nul_line, sizeof nul_line - 1);
    size_t big = 100 * 1024;
    char *line = malloc(big + 1);
    assert_non_null(line);
    memset(line, 'a', big);
    line[big] = '\n';
    session_send(s, line, big + 1);
    free(line);
    sync_ready(s);
    assert_int_equal(count_lines(s, "info string "), BAD_NB + 2);
    assert_int_equal(count_lines(s, "readyok"), 1);
    assert_int_equal(count_lines(s, "bestmove"), 0);
    assert_true(contains_line(s, "unknown command 'foo'"));
    assert_true(contains_line(s, "negative time"));
    assert_true(contains_line(s, "longer than"));
    for (int i = 0; i < s->n_lines; i++) // garbage quoted back is made printable
        for (const char *p = s->lines[i]; *p; p++)
            assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
    session_finish(s, true);
    session_free(s);
}

/// setoption of an evaluation weight (case-insensitive name) changes what the linear
/// evaluation prints; a piece-square weight is accepted by name though not listed, and
/// checked against its range.
static void test_setoption_weight(void **state)
{
    (void)state;
    Session *s = session_start();
    send_line(s, "setoption name UseNNUE value false"); // the net never reads the weights
    // Red has a chariot more than Black.
    send_line(s, "position fen rnbakabn1/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w");
    int before = eval_red(s);
    send_line(s, "setoption name chariot_mg value 1000");
    send_line(s, "setoption name CHARIOT_EG value 1000");
    int after = eval_red(s);
    assert_true(after >= before + 300);
    send_line(s, "setoption name psq_horse_mg_c2 value 5");
    sync_ready(s);
    assert_int_equal(count_lines(s, "info string "), 0);
    send_line(s, "setoption name psq_horse_mg_c2 value 99999");
    const char *err = session_expect(s, "info string ", WAIT_MS);
    assert_non_null(err);
    assert_non_null(strstr(err, "psq_horse_mg_c2"));
    session_finish(s, true);
    session_free(s);
}

/// The node count of the last `info depth D` line received so far (0 if none).
static unsigned long long info_nodes(const Session *s, int depth)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "info depth %d ", depth);
    unsigned long long nodes = 0;
    for (int i = 0; i < s->n_lines; i++) {
        const char *at = strstr(s->lines[i], " nodes ");
        if (!strncmp(s->lines[i], prefix, strlen(prefix)) && at)
            nodes = strtoull(at + 7, NULL, 10);
    }
    return nodes;
}

/// Nodes of a fresh `go depth 7` from the start position.
static unsigned long long depth7_nodes(Session *s)
{
    send_line(s, "ucinewgame");
    send_line(s, "position startpos");
    send_line(s, "go depth 7");
    assert_non_null(session_expect(s, "bestmove ", WAIT_MS));
    unsigned long long n = info_nodes(s, 7);
    assert_true(n > 0);
    return n;
}

/// Writes text to a new temporary file; path (a mkstemp template) gets its name.
static void write_temp(char *path, const char *text)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len = strlen(text);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
}

/// A search row (search_params.def) is a listed option with its range; setoption of it
/// changes the search (the node count at depth 7), a value outside the range is refused
/// naming it and changes nothing, and a weights file of only search rows sets just those.
static void test_setoption_search_row(void **state)
{
    (void)state;
    Session *s = session_start();
    send_line(s, "uci");
    assert_non_null(session_expect(s, "uciok", WAIT_MS));
    assert_true(contains_line(s, "option name search_lmr_base type spin default 75 min 0 max 200"));
    assert_true(contains_line(s, "option name tm_hard type spin default 400 min 150 max 800"));
    unsigned long long def = depth7_nodes(s);
    send_line(s, "setoption name search_nmp_div value 1");
    const char *err = session_expect(s, "info string ", WAIT_MS);
    assert_non_null(err);
    assert_non_null(strstr(err, "search_nmp_div (an integer 2 to 10)"));
    assert_true(depth7_nodes(s) == def);
    send_line(s, "setoption name Search_LMR_Base value 150");
    assert_true(depth7_nodes(s) != def);
    send_line(s, "setoption name search_lmr_base value 75");
    assert_true(depth7_nodes(s) == def);
    char path[] = "/tmp/xq_test_uci_XXXXXX";
    write_temp(path, "search_rfp_margin 40\nsearch_fut_margin 30\n");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "setoption name WeightsFile value %s", path);
    send_line(s, cmd);
    assert_true(depth7_nodes(s) != def);
    assert_int_equal(count_lines(s, "info string "), 1);
    session_finish(s, true);
    session_free(s);
    remove(path);
}

/// WeightsFile loads a weights file into the engine's weights; a missing file is reported.
static void test_weights_file(void **state)
{
    (void)state;
    char path[] = "/tmp/xq_test_uci_XXXXXX";
    write_temp(path, "# test\nchariot_mg 1000\nchariot_eg 1000\n");
    Session *s = session_start();
    send_line(s, "setoption name UseNNUE value false"); // the net never reads the weights
    send_line(s, "position fen rnbakabn1/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w");
    int before = eval_red(s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "setoption name WeightsFile value %s", path);
    send_line(s, cmd);
    assert_true(eval_red(s) >= before + 300);
    assert_int_equal(count_lines(s, "info string "), 0);
    send_line(s, "setoption name WeightsFile value /nonexistent/weights.txt");
    const char *err = session_expect(s, "info string ", WAIT_MS);
    assert_non_null(err);
    assert_non_null(strstr(err, "WeightsFile"));
    session_finish(s, true);
    session_free(s);
    remove(path);
}

/// With the net on (the default when the build embeds one), an evaluation weight set by
/// setoption or a weights file is taken but answered with an info string saying the net
/// ignores it and how to use it; a search row, which the net's search does read, is not.
static void test_weight_under_net_noted(void **state)
{
    (void)state;
    if (!nnue_default())
        skip();
    char path[] = "/tmp/xq_test_uci_XXXXXX";
    write_temp(path, "chariot_mg 1000\n");
    Session *s = session_start();
    send_line(s, "setoption name search_lmr_base value 100");
    sync_ready(s);
    assert_int_equal(count_lines(s, "info string "), 0);
    send_line(s, "setoption name Chariot_MG value 900");
    const char *note = session_expect(s, "info string setoption chariot_mg: set, but", WAIT_MS);
    assert_non_null(note);
    assert_non_null(strstr(note, "UseNNUE value false"));
    char cmd[128];
    snprintf(cmd, sizeof cmd, "setoption name WeightsFile value %s", path);
    send_line(s, cmd);
    note = session_expect(s, "info string WeightsFile: loaded, but", WAIT_MS);
    assert_non_null(note);
    send_line(s, "setoption name UseNNUE value false");
    send_line(s, "setoption name chariot_mg value 800");
    sync_ready(s);
    assert_int_equal(count_lines(s, "info string "), 2);
    session_finish(s, true);
    session_free(s);
    remove(path);
}

/// EvalFile and UseNNUE are listed, UseNNUE true by default exactly when the build embeds a
/// net; a damaged net and UseNNUE without a net are answered with an info string naming the
/// fault; a good net switches `eval` to the net (its id shown) and the search still answers
/// with a legal move.
static void test_nnue_options(void **state)
{
    (void)state;
    NnueNet net;
    assert_int_equal(nnue_alloc(&net, 32), NNUE_OK);
    nnue_randomize(&net, 5);
    char path[128], bad[160], id[NNUE_ID_MAX], want[64];
    snprintf(path, sizeof path, "/tmp/xq_test_uci_%ld.nnue", (long)getpid());
    snprintf(bad, sizeof bad, "%s.short", path);
    assert_int_equal(nnue_save_file(&net, path), NNUE_OK);
    FILE *f = fopen(bad, "wb");
    assert_non_null(f);
    fwrite("XQNNUE", 1, 6, f);
    fclose(f);
    nnue_id(&net, id);
    nnue_free(&net);

    Session *s = session_start();
    send_line(s, "uci");
    assert_non_null(session_expect(s, "uciok", WAIT_MS));
    assert_true(contains_line(s, "option name EvalFile type string default <default>"));
    assert_true(contains_line(s, nnue_default() ? "option name UseNNUE type check default true"
                                                : "option name UseNNUE type check default false"));
    if (nnue_default()) {
        char def_id[NNUE_ID_MAX], def_want[64];
        nnue_id(nnue_default(), def_id);
        snprintf(def_want, sizeof def_want, "Eval function: NNUE %s", def_id);
        send_line(s, "eval");
        assert_non_null(session_expect(s, def_want, WAIT_MS));
        send_line(s, "setoption name UseNNUE value false");
    }
    send_line(s, "eval");
    assert_non_null(session_expect(s, "Eval function: linear", WAIT_MS));
    if (!nnue_default()) {
        send_line(s, "setoption name UseNNUE value true");
        const char *err = session_expect(s, "info string ", WAIT_MS);
        assert_non_null(err);
        assert_non_null(strstr(err, "EvalFile"));
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "setoption name EvalFile value %s", bad);
    send_line(s, cmd);
    const char *err = session_expect(s, "info string setoption: EvalFile", WAIT_MS);
    assert_non_null(err);
    assert_non_null(strstr(err, "shorter than a net header"));
    snprintf(cmd, sizeof cmd, "setoption name EvalFile value %s", path);
    send_line(s, cmd);
    send_line(s, "setoption name UseNNUE value true");
    send_line(s, "eval");
    snprintf(want, sizeof want, "Eval function: NNUE %s", id);
    assert_non_null(session_expect(s, want, WAIT_MS));
    send_line(s, "go depth 4");
    assert_bestmove_legal(session_expect(s, "bestmove ", WAIT_MS), BOARD_START_FEN, NULL, 0);
    session_finish(s, true);
    session_free(s);
    unlink(path);
    unlink(bad);
}

/// go nodes 2000 returns a bestmove, and the same one again after ucinewgame (a node-limited
/// search on one thread is deterministic).
static void test_go_nodes_deterministic(void **state)
{
    (void)state;
    Session *s = session_start();
    char first[64] = "";
    for (int run = 0; run < 2; run++) {
        send_line(s, "ucinewgame");
        send_line(s, "position startpos moves h2e2");
        send_line(s, "go nodes 2000");
        const char *best = session_expect(s, "bestmove ", WAIT_MS);
        static const char *const moves[] = {"h2e2"};
        assert_bestmove_legal(best, BOARD_START_FEN, moves, 1);
        if (run == 0)
            snprintf(first, sizeof first, "%s", best);
        else
            assert_string_equal(best, first);
    }
    session_finish(s, true);
    session_free(s);
}

/// go infinite searches until stop (isready is answered meanwhile), then prints a bestmove.
static void test_go_infinite_stop(void **state)
{
    (void)state;
    Session *s = session_start();
    send_line(s, "go infinite");
    assert_non_null(session_expect(s, "info depth 1 ", WAIT_MS));
    assert_null(session_expect(s, "bestmove", QUIET_MS));
    sync_ready(s);
    assert_int_equal(count_lines(s, "bestmove"), 0);
    send_line(s, "stop");
    assert_bestmove_legal(session_expect(s, "bestmove ", PROMPT_MS), BOARD_START_FEN, NULL, 0);
    sync_ready(s);
    assert_int_equal(count_lines(s, "bestmove"), 1);
    session_finish(s, true);
    session_free(s);
}

/// A stop that arrives right behind go (before the search has begun) still ends the search.
static void test_stop_right_after_go(void **state)
{
    (void)state;
    Session *s = session_start();
    for (int i = 0; i < 5; i++) {
        static const char input[] = "go infinite\nstop\n";
        session_send(s, input, sizeof input - 1);
        assert_non_null(session_expect(s, "bestmove ", PROMPT_MS));
    }
    session_finish(s, true);
    session_free(s);
}

/// A new go while searching stops the running search first: two bestmoves, never two
/// searches at once.
static void test_go_while_searching(void **state)
{
    (void)state;
    Session *s = session_start();
    send_line(s, "go infinite");
    assert_non_null(session_expect(s, "info depth 1 ", WAIT_MS));
    send_line(s, "go depth 3");
    assert_non_null(session_expect(s, "bestmove ", PROMPT_MS));
    assert_non_null(session_expect(s, "bestmove ", WAIT_MS));
    session_finish(s, true);
    assert_int_equal(count_lines(s, "bestmove"), 2);
    session_free(s);
}

/// quit during a search stops it and returns from the loop promptly.
static void test_quit_during_search(void **state)
{
    (void)state;
    Session *s = session_start();
    send_line(s, "go infinite");
    assert_non_null(session_expect(s, "info depth 1 ", WAIT_MS));
    send_line(s, "quit");
    assert_true(session_finish(s, false) < PROMPT_MS);
    session_free(s);
}

/// A position without a legal move gets bestmove (none).
static void test_no_legal_move(void **state)
{
    (void)state;
    Session *s = session_start();
    send_line(s, "position fen 3k5/8R/9/9/9/9/9/9/9/4K4 b");
    send_line(s, "go depth 3");
    const char *best = session_expect(s, "bestmove", WAIT_MS);
    assert_non_null(best);
    assert_string_equal(best, "bestmove (none)");
    session_finish(s, true);
    session_free(s);
}

/// Threads, Clear Hash, Rules and MultiPV take effect without complaint, and a two-thread
/// search with two lines still returns a legal move.
static void test_options(void **state)
{
    (void)state;
    Session *s = session_start();
    send_line(s, "setoption name Threads value 2");
    send_line(s, "setoption name Clear Hash");
    send_line(s, "setoption name Rules value asian");
    send_line(s, "setoption name MultiPV value 2");
    send_line(s, "setoption name Move Overhead value 10");
    send_line(s, "go depth 4");
    assert_bestmove_legal(session_expect(s, "bestmove ", WAIT_MS), BOARD_START_FEN, NULL, 0);
    assert_true(contains_line(s, " multipv 2 "));
    assert_int_equal(count_lines(s, "info string "), 0);
    session_finish(s, true);
    session_free(s);
}

/// A game longer than the board's history can hold is refused, not overflowed.
static void test_too_many_moves(void **state)
{
    (void)state;
    enum { CYCLES = 600 }; // 2400 plies of horses going out and back
    size_t cap = 32 + CYCLES * 20;
    char *line = malloc(cap);
    assert_non_null(line);
    size_t n = (size_t)snprintf(line, cap, "position startpos moves");
    for (int i = 0; i < CYCLES; i++)
        n += (size_t)snprintf(line + n, cap - n, " b0c2 b9c7 c2b0 c7b9");
    Session *s = session_start();
    send_line(s, line);
    free(line);
    const char *err = session_expect(s, "info string ", WAIT_MS);
    assert_non_null(err);
    assert_non_null(strstr(err, "more than"));
    send_line(s, "d");
    const char *fen = session_expect(s, "Fen: ", WAIT_MS);
    assert_non_null(fen);
    assert_string_equal(fen + 5, BOARD_START_FEN);
    session_finish(s, true);
    session_free(s);
}

/// The UCCI handshake ends with ucciok; UCCI setoption and go time work; quit says bye.
static void test_ucci(void **state)
{
    (void)state;
    Session *s = session_start();
    send_line(s, "ucci");
    assert_non_null(session_expect(s, "ucciok", WAIT_MS));
    assert_true(contains_line(s, "id name xqforge"));
    send_line(s, "setoption hashsize 8");
    send_line(s, "setoption usemillisec true");
    send_line(s, "position startpos moves h2e2");
    send_line(s, "go time 200 increment 0 opptime 200 oppincrement 0");
    static const char *const moves[] = {"h2e2"};
    assert_bestmove_legal(session_expect(s, "bestmove ", WAIT_MS), BOARD_START_FEN, moves, 1);
    assert_true(contains_line(s, "info depth 1 score "));
    send_line(s, "go depth 3");
    assert_non_null(session_expect(s, "bestmove ", WAIT_MS));
    assert_int_equal(count_lines(s, "info string "), 0);
    send_line(s, "quit");
    assert_non_null(session_expect(s, "bye", WAIT_MS));
    session_finish(s, false);
    session_free(s);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    board_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handshake),
        cmocka_unit_test(test_isready),
        cmocka_unit_test(test_go_depth),
        cmocka_unit_test(test_go_perft),
        cmocka_unit_test(test_go_perft_stop),
        cmocka_unit_test(test_position_d),
        cmocka_unit_test(test_bad_move),
        cmocka_unit_test(test_bad_fen),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_setoption_weight),
        cmocka_unit_test(test_weights_file),
        cmocka_unit_test(test_weight_under_net_noted),
        cmocka_unit_test(test_nnue_options),
        cmocka_unit_test(test_setoption_search_row),
        cmocka_unit_test(test_go_nodes_deterministic),
        cmocka_unit_test(test_go_infinite_stop),
        cmocka_unit_test(test_stop_right_after_go),
        cmocka_unit_test(test_go_while_searching),
        cmocka_unit_test(test_quit_during_search),
        cmocka_unit_test(test_no_legal_move),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_too_many_moves),
        cmocka_unit_test(test_ucci),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
