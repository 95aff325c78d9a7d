// SPDX-License-Identifier: MIT
// The protocol loop. One thread reads commands; `go` hands the search (or `go perft`) to a
// second thread, which prints the info lines (through the engine's callback) and the
// bestmove. The reading thread owns every other piece of state and never changes the engine
// while a search runs: go, position, setoption, ucinewgame and quit first stop and join the
// running search. End of input is quit, except that a running perft may finish first.
//
// UCCI (after `ucci`) is a subset: `setoption <name> [<value>]` (usemillisec, hashsize,
// threads, newgame, clearhash, and any UCI option or weight whose name is one word),
// `position` as in UCI, `go [draw] time T [movestogo N | increment I] [opptime T2
// [oppmovestogo N2 | oppincrement I2]]`, `go depth D | depth infinite | nodes N | infinite`,
// `stop`, `isready`, `quit` (answered `bye`). Clock values are milliseconds unless
// `setoption usemillisec false` asks for seconds. Info lines are `info depth D score S time T
// nodes N pv ...`; a position without a legal move gets `nobestmove`. Not supported: ponder,
// banmoves, probe.
#include "uci.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "board.h"
#include "eval.h"
#include "move.h"
#include "movegen.h"
#include "nnue.h"
#include "params.h"
#include "rules.h"
#include "search.h"
#include "timeman.h"

enum {
    UCI_TOKENS_MAX = UCI_LINE_MAX / 2 + 1,                // a line of single letters and spaces
    UCI_MAX_GAME_PLIES = BOARD_HISTORY_MAX - 2 * MAX_PLY, // the search plays on above the root
    UCI_PERFT_MAX_DEPTH = 10,
    UCI_MSG_MAX = 512,  // bytes of one info string
    UCI_ECHO_MAX = 40,  // bytes of the user's text quoted back in a message
    UCI_TEXT_MAX = 4096 // bytes of one composed reply (an info line with a full pv, `d`)
};

static const int64_t UCI_TIME_MAX = INT64_C(1000000000000); // ms; keeps timeman far from overflow
static const long UCI_STOP_POLL_NS = 5000000;

typedef enum { DIALECT_UCI, DIALECT_UCCI } Dialect;

typedef struct {
    FILE *out;
    pthread_mutex_t out_lock; // held for each whole line, by either thread
    Engine *engine;
    Board *board;   // the position of the last good `position` command
    Board *scratch; // a `position` command is built here, then swapped with board
    Dialect dialect;
    bool millisec; // UCCI usemillisec: clock values in ms, else seconds

    // The search thread runs one job, a search or a perft. searching: started and not yet
    // joined (reading thread only). The job's inputs below are set before the thread starts
    // and only read while it runs.
    bool searching;
    pthread_t thread;
    pthread_mutex_t done_lock;
    pthread_cond_t done_cond;
    bool done;         // the job has printed its last line
    atomic_bool abort; // stop a perft
    SearchLimits limits;
    Dialect search_dialect;
    Board *perft_board;
    int perft_depth;
    bool job_is_perft;

    char *line; // UCI_LINE_MAX + 1 bytes
    char **tok; // UCI_TOKENS_MAX words of line
} Uci;

typedef struct {
    char buf[UCI_TEXT_MAX];
    size_t len;
} Text;

// ---------------------------------------------------------------------------------------
// Output

__attribute__((format(printf, 2, 3))) static void out_line(Uci *u, const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&u->out_lock);
    va_start(ap, fmt);
    vfprintf(u->out, fmt, ap);
    va_end(ap);
    fputc('\n', u->out);
    fflush(u->out);
    pthread_mutex_unlock(&u->out_lock);
}

/// `info string` with what was wrong; bytes that are not printable ASCII (the user's own
/// garbage quoted back) become '?', so a reply is always one clean line.
__attribute__((format(printf, 2, 3))) static void info_string(Uci *u, const char *fmt, ...)
{
    char msg[UCI_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
            *p = '?';
    out_line(u, "info string %s", msg);
}

/// Appends to t; text past the buffer is dropped, never written beyond it.
__attribute__((format(printf, 2, 3))) static void text_add(Text *t, const char *fmt, ...)
{
    if (t->len + 1 >= sizeof t->buf)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, sizeof t->buf - t->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n;
    if (t->len >= sizeof t->buf)
        t->len = sizeof t->buf - 1;
}

// ---------------------------------------------------------------------------------------
// The search thread

static void on_info(void *ctx, const SearchInfo *in)
{
    Uci *u = ctx;
    Text t = {.len = 0};
    if (u->search_dialect == DIALECT_UCCI) {
        text_add(&t, "info depth %d score %d time %" PRId64 " nodes %" PRIu64, in->depth, in->score,
                 in->time_ms, in->nodes);
    } else {
        text_add(&t, "info depth %d seldepth %d multipv %d score ", in->depth, in->seldepth,
                 in->multipv);
        if (in->mate)
            text_add(&t, "mate %d", in->mate);
        else
            text_add(&t, "cp %d", in->score);
        if (in->bound == BOUND_LOWER)
            text_add(&t, " lowerbound");
        else if (in->bound == BOUND_UPPER)
            text_add(&t, " upperbound");
        text_add(&t, " nodes %" PRIu64 " nps %" PRIu64 " hashfull %d time %" PRId64, in->nodes,
                 in->nps, in->hashfull, in->time_ms);
    }
    if (in->pv_len > 0)
        text_add(&t, " pv");
    for (int i = 0; i < in->pv_len; i++) {
        char mv[MOVE_TEXT_MAX];
        move_text(in->pv[i], 0, mv);
        text_add(&t, " %s", mv);
    }
    out_line(u, "%s", t.buf);
}

static void print_bestmove(Uci *u, const SearchResult *r)
{
    char best[MOVE_TEXT_MAX], ponder[MOVE_TEXT_MAX];
    if (r->best == MOVE_NONE) {
        out_line(u, "%s", u->search_dialect == DIALECT_UCCI ? "nobestmove" : "bestmove (none)");
        return;
    }
    move_text(r->best, 0, best);
    if (r->ponder == MOVE_NONE) {
        out_line(u, "bestmove %s", best);
        return;
    }
    move_text(r->ponder, 0, ponder);
    out_line(u, "bestmove %s ponder %s", best, ponder);
}

static void job_done(Uci *u)
{
    pthread_mutex_lock(&u->done_lock);
    u->done = true;
    pthread_cond_signal(&u->done_cond);
    pthread_mutex_unlock(&u->done_lock);
}

static void *search_main(void *arg)
{
    Uci *u = arg;
    SearchResult r = engine_search(u->engine, &u->limits, on_info, u);
    print_bestmove(u, &r);
    job_done(u);
    return NULL;
}

/// perft (as perft.c counts: the last ply bulk-counted) that gives up when abort is set.
static uint64_t perft_abortable(Board *b, int depth, const atomic_bool *abort)
{
    if (depth <= 0)
        return 1;
    MoveList list;
    int n = movegen_legal(b, &list);
    if (depth == 1)
        return (uint64_t)n;
    uint64_t nodes = 0;
    for (int i = 0; i < n && !atomic_load_explicit(abort, memory_order_relaxed); i++) {
        board_make_move(b, list.moves[i]);
        nodes += perft_abortable(b, depth - 1, abort);
        board_unmake_move(b);
    }
    return nodes;
}

/// `go perft N`: a `move: count` line per root move, then the total, like `xqforge perft
/// --divide`; `stop` or `quit` cut it short.
static void *perft_main(void *arg)
{
    Uci *u = arg;
    Board *b = u->perft_board;
    MoveList list;
    int n = movegen_legal(b, &list);
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        char mv[MOVE_TEXT_MAX];
        board_make_move(b, list.moves[i]);
        uint64_t count = perft_abortable(b, u->perft_depth - 1, &u->abort);
        board_unmake_move(b);
        if (atomic_load(&u->abort))
            break;
        move_text(list.moves[i], 0, mv);
        out_line(u, "%s: %" PRIu64, mv, count);
        total += count;
    }
    if (atomic_load(&u->abort))
        info_string(u, "go perft: stopped");
    else
        out_line(u, "\nNodes searched: %" PRIu64 "\n", total);
    job_done(u);
    return NULL;
}

/// Runs job in the search thread (in this one if no thread can be started, so a `go`
/// always gets its reply).
static void job_start(Uci *u, void *(*job)(void *))
{
    u->search_dialect = u->dialect;
    u->done = false;
    atomic_store(&u->abort, false);
    if (pthread_create(&u->thread, NULL, job, u) == 0) {
        u->searching = true;
        return;
    }
    info_string(u, "cannot start a search thread (%s); running in the foreground", strerror(errno));
    job(u);
}

/// Waits for the running job, if any, to print its last line; with stop, asks it to stop
/// first. engine_search clears the engine's stop flag when it begins, so a stop sent before
/// the thread got there would be lost: the flag is raised again every few milliseconds
/// until the job is done.
static void job_join(Uci *u, bool stop)
{
    if (!u->searching)
        return;
    pthread_mutex_lock(&u->done_lock);
    while (!u->done) {
        if (stop) {
            atomic_store(&u->abort, true);
            engine_stop(u->engine);
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += UCI_STOP_POLL_NS;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&u->done_cond, &u->done_lock, &ts);
    }
    pthread_mutex_unlock(&u->done_lock);
    pthread_join(u->thread, NULL);
    u->searching = false;
}

static void search_stop(Uci *u) { job_join(u, true); }

// ---------------------------------------------------------------------------------------
// Words of a command line

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/// Splits s in place into at most max words.
static int tokenize(char *s, char **tok, int max)
{
    int n = 0;
    while (n < max) {
        while (is_space(*s))
            s++;
        if (!*s)
            break;
        tok[n++] = s;
        while (*s && !is_space(*s))
            s++;
        if (*s)
            *s++ = '\0';
    }
    return n;
}

/// Joins argv[from..to) into one string in place, one space between words. The words lie in
/// order in one buffer, each separated from the next by at least one byte, so every word
/// moves only leftwards and no later word is touched.
static const char *join_words(char **argv, int from, int to)
{
    if (from >= to)
        return "";
    char *dst = argv[from] + strlen(argv[from]);
    for (int i = from + 1; i < to; i++) {
        size_t n = strlen(argv[i]);
        *dst++ = ' ';
        memmove(dst, argv[i], n + 1);
        dst += n;
    }
    return argv[from];
}

static bool parse_int64(const char *text, int64_t *out)
{
    if (!text || !*text)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0')
        return false;
    *out = v;
    return true;
}

typedef enum { LINE_OK, LINE_EOF, LINE_TOO_LONG, LINE_NUL } LineStatus;

/// Reads one line (without its newline) into buf, which holds UCI_LINE_MAX bytes and a
/// terminator. A longer line is consumed to its end and reported, never stored past buf.
static LineStatus read_line(FILE *in, char *buf)
{
    size_t n = 0;
    bool too_long = false, nul = false, any = false;
    int c;
    while ((c = getc(in)) != EOF && c != '\n') {
        any = true;
        if (c == '\0')
            nul = true;
        if (n < UCI_LINE_MAX)
            buf[n++] = (char)c;
        else
            too_long = true;
    }
    buf[n] = '\0';
    if (c == EOF && !any)
        return LINE_EOF;
    return too_long ? LINE_TOO_LONG : nul ? LINE_NUL : LINE_OK;
}

// ---------------------------------------------------------------------------------------
// Options

/// A weight's name as params.def spells it (option names are case-insensitive in UCI), or
/// name itself if no weight has it.
static const char *canonical_name(const char *name)
{
    for (int i = 0; i < PARAM_NB; i++)
        if (strcasecmp(params_info[i].name, name) == 0)
            return params_info[i].name;
    return name;
}

static void load_weights(Uci *u, const char *path)
{
    if (!path || !*path || strcmp(path, "<empty>") == 0)
        return;
    char why[UCI_MSG_MAX - 64] = "";
    Weights *w = engine_weights(u->engine);
    Weights before = *w;
    ParamsStatus st = weights_load(w, path, why, sizeof why);
    bool eval_changed = false;
    for (int i = 0; i < PARAM_NB; i++)
        eval_changed |= !params_is_search(i) && w->v[i] != before.v[i];
    if (st != PARAMS_OK)
        info_string(u, "WeightsFile: %s", why[0] ? why : params_strerror(st));
    else if (eval_changed && engine_uses_nnue(u->engine, NULL))
        info_string(u, "WeightsFile: loaded, but the NNUE net the engine evaluates with never "
                       "reads its evaluation weights (setoption name UseNNUE value false to "
                       "evaluate with them)");
}

/// A GUI has no place for a refusal: a weight the net ignores is set, with a note saying so.
static void note_ignored_weight(Uci *u, const char *name)
{
    int id = params_find(name);
    if (id >= 0 && !params_is_search(id) && engine_uses_nnue(u->engine, NULL))
        info_string(u,
                    "setoption %s: set, but the NNUE net the engine evaluates with never "
                    "reads it (setoption name UseNNUE value false to evaluate with it)",
                    name);
}

/// Sets one option by its UCI name; value is NULL when the command gave none (buttons).
static void set_option(Uci *u, const char *name, const char *value)
{
    if (strcasecmp(name, engine_options[ENGINE_OPT_WEIGHTS_FILE].name) == 0) {
        load_weights(u, value);
        return;
    }
    name = canonical_name(name);
    EngineStatus st = engine_set_option(u->engine, name, value);
    if (st == ENGINE_OK) {
        note_ignored_weight(u, name);
        return;
    }
    if (st == ENGINE_ERR_UNKNOWN_OPTION) {
        info_string(u, "setoption: unknown option '%.*s'", UCI_ECHO_MAX, name);
        return;
    }
    if (st != ENGINE_ERR_VALUE) {
        info_string(u, "setoption %.*s: %s", UCI_ECHO_MAX, name, engine_strerror(st));
        return;
    }
    if (engine_error(u->engine)[0]) { // a sentence naming the fault (a bad net file, ...)
        info_string(u, "setoption: %s", engine_error(u->engine));
        return;
    }
    int id = params_find(name);
    if (!value)
        info_string(u, "setoption: option '%.*s' needs a value", UCI_ECHO_MAX, name);
    else if (id >= 0)
        info_string(u, "setoption: bad value '%.*s' for %s (an integer %d to %d)", UCI_ECHO_MAX,
                    value, name, params_info[id].min, params_info[id].max);
    else
        info_string(u, "setoption: bad value '%.*s' for option '%.*s'", UCI_ECHO_MAX, value,
                    UCI_ECHO_MAX, name);
}

/// One line of options.def as `uci` lists it.
static void list_uci_option(Uci *u, EngineOptionId id)
{
    const EngineOptionInfo *o = &engine_options[id];
    int def = engine_option_default(id);
    Text t = {.len = 0};
    switch (o->type) {
    case OPTION_SPIN:
        out_line(u, "option name %s type spin default %d min %d max %d", o->name, def, o->min,
                 o->max);
        break;
    case OPTION_CHECK:
        out_line(u, "option name %s type check default %s", o->name, def ? "true" : "false");
        break;
    case OPTION_COMBO: // the rule sets
        text_add(&t, "option name %s type combo default %s", o->name, rules_set_name(def));
        for (int s = o->min; s <= o->max; s++)
            text_add(&t, " var %s", rules_set_name((RuleSet)s));
        out_line(u, "%s", t.buf);
        break;
    case OPTION_BUTTON: out_line(u, "option name %s type button", o->name); break;
    case OPTION_STRING:
    default: out_line(u, "option name %s type string default %s", o->name, o->text); break;
    }
}

static void list_uci_options(Uci *u)
{
    for (int id = 0; id < ENGINE_OPT_NB; id++)
        list_uci_option(u, (EngineOptionId)id);
    // Piece-square weights (hundreds) are settable by name but not listed.
    for (int i = 0; i < PARAM_NB; i++)
        if (!params_is_psq(i))
            out_line(u, "option name %s type spin default %d min %d max %d", params_info[i].name,
                     params_info[i].def, params_info[i].min, params_info[i].max);
}

// ---------------------------------------------------------------------------------------
// Commands. Each gets the words of its line, argv[0] being the command.

static void cmd_uci(Uci *u, int argc, char **argv)
{
    (void)argc, (void)argv;
    u->dialect = DIALECT_UCI;
    out_line(u, "id name xqforge");
    out_line(u, "id author the xqforge developers");
    list_uci_options(u);
    out_line(u, "uciok");
}

static void cmd_ucci(Uci *u, int argc, char **argv)
{
    (void)argc, (void)argv;
    u->dialect = DIALECT_UCCI;
    out_line(u, "id name xqforge");
    out_line(u, "id author the xqforge developers");
    out_line(u, "option usemillisec type check default true");
    const EngineOptionInfo *hash = &engine_options[ENGINE_OPT_HASH],
                           *threads = &engine_options[ENGINE_OPT_THREADS];
    out_line(u, "option hashsize type spin min %d max %d default %d", hash->min, hash->max,
             hash->def);
    out_line(u, "option threads type spin min %d max %d default %d", threads->min, threads->max,
             threads->def);
    out_line(u, "option newgame type button");
    out_line(u, "ucciok");
}

static void cmd_isready(Uci *u, int argc, char **argv)
{
    (void)argc, (void)argv;
    out_line(u, "readyok");
}

static void cmd_ignore(Uci *u, int argc, char **argv) { (void)u, (void)argc, (void)argv; }

static void cmd_ucinewgame(Uci *u, int argc, char **argv)
{
    (void)argc, (void)argv;
    search_stop(u);
    engine_new_game(u->engine);
}

/// UCCI: `setoption <name> [<value>]`, with UCCI's own names mapped onto ours.
static void setoption_ucci(Uci *u, int argc, char **argv)
{
    static const char *const alias[][2] = {
        {"hashsize", "Hash"}, {"threads", "Threads"}, {"clearhash", "Clear Hash"}};
    const char *name = argv[1];
    const char *value = argc > 2 ? join_words(argv, 2, argc) : NULL;
    if (strcasecmp(name, "newgame") == 0) {
        engine_new_game(u->engine);
        return;
    }
    if (strcasecmp(name, "usemillisec") == 0) {
        if (value && (strcmp(value, "true") == 0 || strcmp(value, "false") == 0))
            u->millisec = strcmp(value, "true") == 0;
        else
            info_string(u, "setoption: usemillisec needs true or false");
        return;
    }
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (strcasecmp(name, alias[i][0]) == 0)
            name = alias[i][1];
    set_option(u, name, value);
}

/// UCI: `setoption name <name words> [value <value words>]`.
static void cmd_setoption(Uci *u, int argc, char **argv)
{
    search_stop(u);
    if (argc >= 2 && strcmp(argv[1], "name") != 0 && u->dialect == DIALECT_UCCI) {
        setoption_ucci(u, argc, argv);
        return;
    }
    if (argc < 2 || strcmp(argv[1], "name") != 0) {
        info_string(u, "setoption: expected 'setoption name <name> [value <value>]'");
        return;
    }
    int v = 2;
    while (v < argc && strcasecmp(argv[v], "value") != 0)
        v++;
    if (v == 2) {
        info_string(u, "setoption: no option name after 'name'");
        return;
    }
    const char *name = join_words(argv, 2, v);
    const char *value = v < argc ? join_words(argv, v + 1, argc) : NULL;
    set_option(u, name, value);
}

/// `position startpos|fen <FEN> [moves m1 m2 ...]`: the moves are played on the board, so
/// the engine sees the game's history. On any fault the previous position stays.
static void cmd_position(Uci *u, int argc, char **argv)
{
    search_stop(u);
    Board *b = u->scratch;
    int i;
    if (argc >= 2 && strcmp(argv[1], "startpos") == 0) {
        board_set_fen(b, BOARD_START_FEN, NULL, 0);
        i = 2;
    } else if (argc >= 2 && strcmp(argv[1], "fen") == 0) {
        for (i = 2; i < argc && strcmp(argv[i], "moves") != 0;)
            i++;
        if (i == 2) {
            info_string(u, "position: no FEN after 'fen'");
            return;
        }
        char why[160] = "";
        FenStatus st = board_set_fen(b, join_words(argv, 2, i), why, sizeof why);
        if (st != FEN_OK) {
            info_string(u, "position: bad FEN: %s", why[0] ? why : fen_strerror(st));
            return;
        }
    } else {
        info_string(u, "position: expected 'startpos' or 'fen <FEN>', got '%.*s'", UCI_ECHO_MAX,
                    argc >= 2 ? argv[1] : "");
        return;
    }
    if (i < argc && strcmp(argv[i], "moves") != 0) {
        info_string(u, "position: unexpected '%.*s' (expected 'moves')", UCI_ECHO_MAX, argv[i]);
        return;
    }
    for (int k = i + 1; k < argc; k++) {
        Move m;
        if (b->hist_len >= UCI_MAX_GAME_PLIES) {
            info_string(u, "position: more than %d moves; position unchanged", UCI_MAX_GAME_PLIES);
            return;
        }
        MoveTextStatus st = move_parse_legal(b, argv[k], 0, &m);
        if (st != MOVE_TEXT_OK) {
            info_string(u, "position: move %d '%.*s': %s; position unchanged", k - i, UCI_ECHO_MAX,
                        argv[k], move_text_strerror(st));
            return;
        }
        board_make_move(b, m);
    }
    u->scratch = u->board;
    u->board = b;
}

/// Reads the number after the keyword argv[*i] into *out, within [lo, hi].
static bool go_number(Uci *u, int argc, char **argv, int *i, int64_t lo, int64_t hi, int64_t *out)
{
    const char *key = argv[*i];
    if (*i + 1 >= argc) {
        info_string(u, "go: '%.*s' needs a number", UCI_ECHO_MAX, key);
        return false;
    }
    const char *text = argv[++*i];
    if (!parse_int64(text, out)) {
        info_string(u, "go: '%.*s' needs a number, got '%.*s'", UCI_ECHO_MAX, key, UCI_ECHO_MAX,
                    text);
        return false;
    }
    if (*out < 0 && lo == 0) {
        info_string(u, "go: negative time '%s %" PRId64 "'", key, *out);
        return false;
    }
    if (*out < lo || *out > hi) {
        info_string(u, "go: %s %" PRId64 " is out of range %" PRId64 "-%" PRId64, key, *out, lo,
                    hi);
        return false;
    }
    return true;
}

static void go_perft(Uci *u, int argc, char **argv)
{
    int i = 1;
    int64_t depth;
    if (!go_number(u, argc, argv, &i, 1, UCI_PERFT_MAX_DEPTH, &depth))
        return;
    if (argc > 3) {
        info_string(u, "go: unexpected '%.*s' after perft depth", UCI_ECHO_MAX, argv[3]);
        return;
    }
    *u->perft_board = *u->board;
    u->perft_depth = (int)depth;
    u->job_is_perft = true;
    job_start(u, perft_main);
}

/// Fills l from UCI `go` parameters; false (after saying why) if any is wrong.
static bool go_parse_uci(Uci *u, int argc, char **argv, SearchLimits *l)
{
    int64_t v = 0;
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i];
        bool ok = true;
        if (strcmp(k, "wtime") == 0 || strcmp(k, "btime") == 0) {
            ok = go_number(u, argc, argv, &i, 0, UCI_TIME_MAX, &v);
            l->time[k[0] == 'w' ? RED : BLACK] = v;
        } else if (strcmp(k, "winc") == 0 || strcmp(k, "binc") == 0) {
            ok = go_number(u, argc, argv, &i, 0, UCI_TIME_MAX, &v);
            l->inc[k[0] == 'w' ? RED : BLACK] = v;
        } else if (strcmp(k, "movestogo") == 0) {
            ok = go_number(u, argc, argv, &i, 1, 100000, &v);
            l->movestogo = (int)v;
        } else if (strcmp(k, "depth") == 0) {
            ok = go_number(u, argc, argv, &i, 1, 10000, &v); // the engine caps it at its maximum
            l->depth = (int)v;
        } else if (strcmp(k, "nodes") == 0) {
            ok = go_number(u, argc, argv, &i, 1, INT64_MAX, &v);
            l->nodes = (uint64_t)v;
        } else if (strcmp(k, "movetime") == 0) {
            ok = go_number(u, argc, argv, &i, 0, UCI_TIME_MAX, &v);
            l->movetime = v > 0 ? v : 1; // 0 would mean no limit at all
        } else if (strcmp(k, "mate") == 0) {
            ok = go_number(u, argc, argv, &i, 1, MAX_PLY, &v);
            l->mate = (int)v;
        } else if (strcmp(k, "infinite") == 0) {
            l->infinite = true;
        } else if (strcmp(k, "ponder") == 0 || strcmp(k, "searchmoves") == 0) {
            info_string(u, "go: '%s' is not supported", k);
            return false;
        } else {
            info_string(u, "go: unknown parameter '%.*s'", UCI_ECHO_MAX, k);
            return false;
        }
        if (!ok)
            return false;
    }
    return true;
}

/// Fills l from UCCI `go` parameters (see the top of this file).
static bool go_parse_ucci(Uci *u, int argc, char **argv, SearchLimits *l)
{
    const Color us = u->board->side, them = (Color)(us ^ 1);
    const int64_t unit = u->millisec ? 1 : 1000, max = UCI_TIME_MAX / 1000;
    int64_t v = 0;
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i];
        bool ok = true;
        if (strcmp(k, "draw") == 0) {
            continue; // the opponent offers a draw: we play on
        } else if (strcmp(k, "time") == 0 || strcmp(k, "opptime") == 0) {
            ok = go_number(u, argc, argv, &i, 0, max, &v);
            l->time[k[0] == 't' ? us : them] = v * unit;
        } else if (strcmp(k, "increment") == 0 || strcmp(k, "oppincrement") == 0) {
            ok = go_number(u, argc, argv, &i, 0, max, &v);
            l->inc[k[0] == 'i' ? us : them] = v * unit;
        } else if (strcmp(k, "movestogo") == 0) {
            ok = go_number(u, argc, argv, &i, 1, 100000, &v);
            l->movestogo = (int)v;
        } else if (strcmp(k, "oppmovestogo") == 0) {
            ok = go_number(u, argc, argv, &i, 1, 100000, &v);
        } else if (strcmp(k, "depth") == 0 && i + 1 < argc &&
                   strcmp(argv[i + 1], "infinite") == 0) {
            l->infinite = true;
            i++;
        } else if (strcmp(k, "depth") == 0) {
            ok = go_number(u, argc, argv, &i, 1, 10000, &v);
            l->depth = (int)v;
        } else if (strcmp(k, "nodes") == 0) {
            ok = go_number(u, argc, argv, &i, 1, INT64_MAX, &v);
            l->nodes = (uint64_t)v;
        } else if (strcmp(k, "infinite") == 0) {
            l->infinite = true;
        } else {
            info_string(u, "go: unknown or unsupported UCCI parameter '%.*s'", UCI_ECHO_MAX, k);
            return false;
        }
        if (!ok)
            return false;
    }
    return true;
}

static void cmd_go(Uci *u, int argc, char **argv)
{
    search_stop(u);
    if (argc >= 2 && strcmp(argv[1], "perft") == 0) {
        go_perft(u, argc, argv);
        return;
    }
    SearchLimits l;
    limits_init(&l);
    bool ok = u->dialect == DIALECT_UCCI ? go_parse_ucci(u, argc, argv, &l)
                                         : go_parse_uci(u, argc, argv, &l);
    if (!ok)
        return;
    u->limits = l;
    if (engine_set_position(u->engine, u->board) != ENGINE_OK) {
        info_string(u, "go: the game is too long to search");
        return;
    }
    u->job_is_perft = false;
    job_start(u, search_main);
}

static void cmd_stop(Uci *u, int argc, char **argv)
{
    (void)argc, (void)argv;
    search_stop(u);
}

/// `d`: the board as text, rank 9 at the top, then the FEN and the key.
static void cmd_d(Uci *u, int argc, char **argv)
{
    (void)argc, (void)argv;
    static const char letters[] = " KABNRCP";
    static const char rule[] = " +---+---+---+---+---+---+---+---+---+";
    const Board *b = u->board;
    Text t = {.len = 0};
    text_add(&t, "%s\n", rule);
    for (int r = RANK_NB - 1; r >= 0; r--) {
        text_add(&t, " |");
        for (int f = 0; f < FILE_NB; f++) {
            Piece p = board_piece(b, sq_make(f, r));
            char c = letters[piece_type(p)];
            text_add(&t, " %c |", p != NO_PIECE && piece_color(p) == BLACK ? c - 'A' + 'a' : c);
        }
        text_add(&t, " %d\n%s\n", r, rule);
    }
    char fen[BOARD_FEN_MAX];
    board_fen(b, fen, sizeof fen);
    text_add(&t, "   a   b   c   d   e   f   g   h   i\n\nFen: %s\nKey: %016" PRIX64, fen, b->key);
    out_line(u, "%s", t.buf);
}

/// `eval`: the static evaluation the search uses (UseNNUE: the net), from both points of view.
static void cmd_eval(Uci *u, int argc, char **argv)
{
    (void)argc, (void)argv;
    int stm = engine_evaluate(u->engine, u->board);
    int red = u->board->side == RED ? stm : -stm;
    char id[NNUE_ID_MAX];
    bool net = engine_uses_nnue(u->engine, id);
    out_line(u, "Eval (side to move): %d cp\nEval (Red's view): %d cp\nEval function: %s%s", stm,
             red, net ? "NNUE " : "linear", net ? id : "");
}

typedef void (*CommandFn)(Uci *u, int argc, char **argv);

static const struct {
    const char *name;
    CommandFn run;
} COMMANDS[] = {
    {"uci", cmd_uci},
    {"ucci", cmd_ucci},
    {"isready", cmd_isready},
    {"ucinewgame", cmd_ucinewgame},
    {"setoption", cmd_setoption},
    {"position", cmd_position},
    {"go", cmd_go},
    {"stop", cmd_stop},
    {"d", cmd_d},
    {"eval", cmd_eval},
    {"debug", cmd_ignore},     // no debug output to switch
    {"ponderhit", cmd_ignore}, // we never ponder
};

// ---------------------------------------------------------------------------------------
// The loop

static void uci_free(Uci *u)
{
    if (!u)
        return;
    engine_free(u->engine);
    free(u->board);
    free(u->scratch);
    free(u->perft_board);
    free(u->line);
    free(u->tok);
    pthread_cond_destroy(&u->done_cond);
    pthread_mutex_destroy(&u->done_lock);
    pthread_mutex_destroy(&u->out_lock);
    free(u);
}

static Uci *uci_new(FILE *out)
{
    Uci *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&u->done_cond, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&u->done_lock, NULL);
    pthread_mutex_init(&u->out_lock, NULL);
    u->out = out;
    u->dialect = DIALECT_UCI;
    u->millisec = true;
    atomic_init(&u->abort, false);
    u->engine = engine_new();
    u->board = malloc(sizeof *u->board);
    u->scratch = malloc(sizeof *u->scratch);
    u->perft_board = malloc(sizeof *u->perft_board);
    u->line = malloc(UCI_LINE_MAX + 1);
    u->tok = malloc(sizeof *u->tok * UCI_TOKENS_MAX);
    if (!u->engine || !u->board || !u->scratch || !u->perft_board || !u->line || !u->tok) {
        uci_free(u);
        return NULL;
    }
    board_set_fen(u->board, BOARD_START_FEN, NULL, 0);
    return u;
}

/// Runs one command line; false when it was `quit`.
static bool uci_execute(Uci *u, int argc, char **argv)
{
    if (strcmp(argv[0], "quit") == 0)
        return false;
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++) {
        if (strcmp(argv[0], COMMANDS[i].name) == 0) {
            COMMANDS[i].run(u, argc, argv);
            return true;
        }
    }
    info_string(u, "unknown command '%.*s'", UCI_ECHO_MAX, argv[0]);
    return true;
}

int uci_loop(FILE *in, FILE *out)
{
    Uci *u = uci_new(out);
    if (!u) {
        fprintf(out, "info string out of memory\n");
        fflush(out);
        return 1;
    }
    bool quit = false;
    while (!quit) {
        LineStatus st = read_line(in, u->line);
        if (st == LINE_EOF)
            break;
        if (st == LINE_TOO_LONG) {
            info_string(u, "line longer than %d bytes ignored", UCI_LINE_MAX);
            continue;
        }
        if (st == LINE_NUL) {
            info_string(u, "line with a NUL byte ignored");
            continue;
        }
        int argc = tokenize(u->line, u->tok, UCI_TOKENS_MAX);
        if (argc > 0)
            quit = !uci_execute(u, argc, u->tok);
    }
    // quit stops a running job; at the end of the input a perft may finish (scripts pipe
    // `go perft N` in), a search may not (the GUI has gone).
    if (!quit && u->job_is_perft)
        job_join(u, false);
    search_stop(u);
    if (quit && u->dialect == DIALECT_UCCI)
        out_line(u, "bye");
    uci_free(u);
    return 0;
}
