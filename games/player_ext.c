// SPDX-License-Identifier: MIT
// External engines over pipes: UCI (the Pikafish / Fairy-Stockfish dialect), UCCI and
// xboard/CECP. Every wait is bounded (the handshake by startup_timeout_ms, pings by
// ping_timeout_ms, a move by the caller's deadline), so a silent, crashing or flooding engine
// can never hang the game manager. This file holds the process, the text helpers and the
// calls player.c makes; the protocols are player_uci.c and player_xboard.c. The quirks of the
// Debian engines (../shared/ENGINES.md) handled across the three:
// - Fairy-Stockfish's UCI ranks 1-10 (cfg->rank_base), UCI_Variant set only when advertised;
//   in UCCI mode its options come before `ucciok`, so they are seen during the handshake.
// - Sjaak II and HoiXiangqi read FEN letters H/E for horse/elephant, HoiXiangqi only the
//   four-field FEN `board side halfmove fullmove`; the dialect is guessed from the engine's
//   name and, when the engine answers a bad setboard with an error line, the others are tried.
// - `new` resets Sjaak's variant, so it is always followed by `variant xiangqi`.
// - MaxQi has no setboard (feature setboard=0): a game from another position is refused.
// - MaxQi's result claims (`1/2-1/2 {...}`) are ignored: only a move (or `resign`, a loss
//   at once) ends the wait.
// - Sjaak's repetition claims are switched off (`option Claim repetitions=0`) when offered.
#include "player_ext_impl.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"
#include "movegen.h"
#include "timeman.h"

void ext_copy_text(char *dst, size_t cap, const char *src, size_t len)
{
    if (!dst || cap == 0)
        return;
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/// The caller's message buffer (which may be NULL).
static void put_msg(char *msg, size_t msg_len, const char *text)
{
    ext_copy_text(msg, msg_len, text, strlen(text));
}

/// Records a failure message (prefixed with the player's name) and returns st.
__attribute__((format(printf, 3, 4))) PlayerStatus ext_fail(ExternalPlayer *ep, PlayerStatus st,
                                                            const char *fmt, ...)
{
    char text[ERR_MAX - PLAYER_NAME_MAX - 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    snprintf(ep->err, sizeof ep->err, "%s: %s", ep->label, text);
    if (ep->log)
        englog_note(ep->log, ep->log_session, "%s: %s", player_strerror(st), text);
    return st;
}

/// The process is gone (or its pipes failed): nothing more can be said to it. The message
/// says how it ended where it did (an exit status, a signal, a limit); its process group is
/// ended now, so nothing it started outlives it.
PlayerStatus ext_crashed(ExternalPlayer *ep, ProcessStatus ps, const char *doing)
{
    ep->dead = true;
    char how[160];
    int wait_ms = ps == PROCESS_ERR_EOF || ps == PROCESS_ERR_WRITE ? EXIT_WAIT_MS : 0;
    bool exited = process_exit_text(&ep->proc, wait_ms, how, sizeof how);
    process_close(&ep->proc);
    if (!exited)
        return ext_fail(ep, PLAYER_ERR_CRASH, "%s: %s", doing, process_strerror(ps));
    return ext_fail(ep, PLAYER_ERR_CRASH, "%s: the engine %s%s", doing, how,
                    ps == PROCESS_ERR_EXITED ? "; a process it started held its output open" : "");
}

/// Each line of text (which ends with a newline) into the log, as sent.
static void log_sent(ExternalPlayer *ep, const char *text)
{
    for (const char *nl; *text; text = nl + 1) {
        nl = strchr(text, '\n');
        if (!nl)
            nl = text + strlen(text) - 1; // a last line without its newline
        englog_line(ep->log, ep->log_session, '>', text, (size_t)(nl - text) + (*nl != '\n'));
    }
}

PlayerStatus ext_send_text(ExternalPlayer *ep, const char *text)
{
    if (ep->dead)
        return ext_fail(ep, PLAYER_ERR_CRASH, "the engine has exited");
    if (ep->log)
        log_sent(ep, text);
    ProcessStatus ps = process_write(&ep->proc, text);
    return ps == PROCESS_OK ? PLAYER_OK : ext_crashed(ep, ps, "writing to the engine");
}

/// Sends one command line (the newline is added).
__attribute__((format(printf, 2, 3))) PlayerStatus ext_send_line(ExternalPlayer *ep,
                                                                 const char *fmt, ...)
{
    char text[SEND_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof text - 1)
        return ext_fail(ep, PLAYER_ERR_CONFIG, "command too long: %.40s...", text);
    text[n] = '\n';
    text[n + 1] = '\0';
    return ext_send_text(ep, text);
}

/// Next line from the engine into ep->line, waiting at most until deadline (absolute ms).
/// Over-long lines are skipped; the deadline bounds the wait however much the engine writes.
ProcessStatus ext_next_line(ExternalPlayer *ep, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - timeman_now_ms();
        if (left <= 0)
            return PROCESS_ERR_TIMEOUT;
        if (left > INT_MAX)
            left = INT_MAX;
        ProcessStatus ps = process_read_line(&ep->proc, ep->line, sizeof ep->line, (int)left);
        if (ep->log && ps == PROCESS_OK)
            englog_line(ep->log, ep->log_session, '<', ep->line, strlen(ep->line));
        else if (ep->log && ps != PROCESS_ERR_TIMEOUT)
            englog_note(ep->log, ep->log_session, "reading: %s", process_strerror(ps));
        if (ps != PROCESS_ERR_LINE_LONG)
            return ps;
    }
}

// ---------------------------------------------------------------------------------------
// Text helpers

const char *ext_skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/// Whether s starts with the word w (followed by the end or a blank); returns what follows.
const char *ext_word_is(const char *s, const char *w)
{
    size_t n = strlen(w);
    if (strncmp(s, w, n) != 0 || (s[n] && s[n] != ' ' && s[n] != '\t'))
        return NULL;
    return ext_skip_ws(s + n);
}

/// Copies the next blank-separated token of *s into tok and advances *s past it.
bool ext_next_token(const char **s, char *tok, size_t cap)
{
    const char *p = ext_skip_ws(*s);
    size_t n = strcspn(p, " \t");
    if (n == 0)
        return false;
    ext_copy_text(tok, cap, p, n);
    *s = p + n;
    return true;
}

bool ext_parse_ll(const char *tok, long long lo, long long hi, long long *out)
{
    char *end;
    long long v = strtoll(tok, &end, 10);
    if (end == tok || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

bool ext_advertise(ExternalPlayer *ep, const char *name, size_t n, PlayerOptionType type,
                   bool has_range, long long min, long long max)
{
    while (n > 0 && (name[n - 1] == ' ' || name[n - 1] == '\t'))
        n--;
    if (n == 0 || ep->adv_count == PLAYER_ADVERTISED_MAX || ep->adv_used + n + 1 > ADV_POOL_MAX)
        return false;
    char *dst = ep->adv_pool + ep->adv_used;
    memcpy(dst, name, n);
    dst[n] = '\0';
    ep->adv_used += n + 1;
    ep->adv[ep->adv_count++] = (PlayerOptionInfo){dst, type, has_range, min, max};
    return true;
}

/// Whether the FEN has the standard start position's board and side to move.
bool ext_fen_is_start(const char *fen)
{
    size_t n = strcspn(BOARD_START_FEN, " ") + 2; // board, blank and side
    return strncmp(fen, BOARD_START_FEN, n) == 0 && (fen[n] == ' ' || fen[n] == '\0');
}

/// Start FEN of the game (undoing its whole history) into ep->start_fen.
static void game_start_fen(ExternalPlayer *ep, const Board *game)
{
    memcpy(ep->scratch, game, sizeof *game);
    for (int i = 0; i < game->hist_len; i++)
        board_unmake_move(ep->scratch);
    board_fen(ep->scratch, ep->start_fen, sizeof ep->start_fen);
}

/// Checks the engine's move text against the game position.
PlayerStatus ext_take_move(ExternalPlayer *ep, const Board *game, const char *text, PlayerMove *out)
{
    if (!*text || strcmp(text, "(none)") == 0 || strcmp(text, "0000") == 0 ||
        strcmp(text, "none") == 0)
        return ext_fail(ep, PLAYER_ERR_ILLEGAL, "no move ('%.32s') in a position with legal moves",
                        text);
    Move m;
    MoveTextStatus mt = move_parse(text, ep->rank_base, &m);
    if (mt != MOVE_TEXT_OK)
        return ext_fail(ep, PLAYER_ERR_PROTOCOL, "unparsable move '%.32s'", text);
    mt = move_parse_legal(game, text, ep->rank_base, &m);
    if (mt != MOVE_TEXT_OK)
        return ext_fail(ep, PLAYER_ERR_ILLEGAL, "illegal move '%.32s'", text);
    out->move = m;
    return PLAYER_OK;
}

void ext_log_go(ExternalPlayer *ep, const Board *game, const PlayerLimits *l, int64_t deadline)
{
    if (!ep->log)
        return;
    char what[256] = "";
    size_t n = 0;
    if (l->time_ms[game->side] >= 0)
        n += (size_t)snprintf(what + n, sizeof what - n,
                              "; clocks red %lld+%lld ms, black %lld+%lld ms, movestogo %d",
                              (long long)l->time_ms[RED], (long long)l->inc_ms[RED],
                              (long long)l->time_ms[BLACK], (long long)l->inc_ms[BLACK],
                              l->movestogo);
    if (l->movetime_ms > 0 && n < sizeof what)
        n += (size_t)snprintf(what + n, sizeof what - n, "; movetime %lld ms",
                              (long long)l->movetime_ms);
    if (l->depth > 0 && n < sizeof what)
        n += (size_t)snprintf(what + n, sizeof what - n, "; depth %d", l->depth);
    if (l->nodes > 0 && n < sizeof what)
        snprintf(what + n, sizeof what - n, "; nodes %llu", (unsigned long long)l->nodes);
    englog_note(ep->log, ep->log_session, "go: %s to move, ply %d%s; deadline in %lld ms",
                game->side == RED ? "red" : "black", game->hist_len, what,
                (long long)(deadline - timeman_now_ms()));
}

// ---------------------------------------------------------------------------------------
// Common

/// After a search abandoned at the deadline: collect its answer so that it is not taken
/// for the next one.
static PlayerStatus settle(ExternalPlayer *ep)
{
    if (ep->dead)
        return ext_fail(ep, PLAYER_ERR_CRASH, "the engine has exited");
    if (!ep->searching)
        return PLAYER_OK;
    return ep->pr->settle(ep, timeman_now_ms() + ep->ping_timeout_ms);
}

static PlayerStatus apply_options(ExternalPlayer *ep, const PlayerConfig *cfg)
{
    PlayerStatus st = ep->pr->configure(ep);
    for (int i = 0; !st && i < cfg->option_count; i++)
        st = ep->pr->set_option(ep, cfg->options[i].name, cfg->options[i].value);
    return st;
}

/// The row of an engine protocol, or NULL (the builtin player, or not a protocol).
static const ExtProtocol *ext_protocol(Protocol p)
{
    static const ExtProtocol *const rows[PROTO_NB] = {
        [PROTO_UCI] = &ext_uci, [PROTO_UCCI] = &ext_ucci, [PROTO_XBOARD] = &ext_xboard};
    return (unsigned)p < PROTO_NB ? rows[p] : NULL;
}

static PlayerStatus start_engine(ExternalPlayer *ep, const PlayerConfig *cfg)
{
    char *argv[PLAYER_ARGS_MAX + 2];
    int argc = 0;
    argv[argc++] = (char *)cfg->cmd;
    for (int i = 0; i < cfg->argc && i < PLAYER_ARGS_MAX; i++)
        argv[argc++] = (char *)cfg->args[i];
    argv[argc] = NULL;
    const char *env[PLAYER_ENV_MAX + 1];
    int envc = 0;
    for (int i = 0; i < cfg->env_count && i < PLAYER_ENV_MAX; i++)
        env[envc++] = cfg->env[i];
    env[envc] = NULL;
    ProcessOptions opt = {cfg->workdir, env, cfg->passenv, cfg->rlimit_as, cfg->rlimit_cpu_s};
    int64_t start = timeman_now_ms();
    int timeout = cfg->startup_timeout_ms > 0 ? cfg->startup_timeout_ms : DEFAULT_STARTUP_MS;
    ProcessStatus ps = process_spawn(&ep->proc, argv, &opt);
    if (ep->log && ps == PROCESS_OK) // the pid only: its arguments and environment stay out
        englog_note(ep->log, ep->log_session, "started %s, pid %d", player_proto_name(ep->proto),
                    (int)ep->proc.pid);
    if (ps != PROCESS_OK) {
        int err = errno;
        ep->dead = true;
        return ext_fail(ep, PLAYER_ERR_START, "cannot run %s%s%s: %s (%s)", cfg->cmd,
                        cfg->workdir[0] ? " in " : "", cfg->workdir, process_strerror(ps),
                        strerror(err));
    }
    PlayerStatus st = ep->pr->handshake(ep, start, timeout);
    if (!st)
        st = apply_options(ep, cfg);
    if (!st)
        st = ep->pr->ping(ep);
    return st;
}

PlayerStatus external_player_new(const PlayerConfig *cfg, void **impl, char *msg, size_t msg_len)
{
    *impl = NULL;
    const ExtProtocol *pr = ext_protocol(cfg->proto);
    if (!pr) {
        put_msg(msg, msg_len, "not an external engine protocol");
        return PLAYER_ERR_CONFIG;
    }
    ExternalPlayer *ep = calloc(1, sizeof *ep);
    Board *scratch = malloc(sizeof *scratch);
    if (!ep || !scratch) {
        free(ep);
        free(scratch);
        put_msg(msg, msg_len, "out of memory");
        return PLAYER_ERR_START;
    }
    ep->scratch = scratch;
    ep->pr = pr;
    ep->proto = cfg->proto;
    ep->rank_base = cfg->rank_base;
    ep->ping_timeout_ms = cfg->ping_timeout_ms > 0 ? cfg->ping_timeout_ms : DEFAULT_PING_MS;
    snprintf(ep->label, sizeof ep->label, "%s", cfg->name[0] ? cfg->name : "engine");
    ep->proc.pid = -1;
    ep->proc.in_fd = ep->proc.out_fd = ep->proc.pidfd = -1;
    if ((ep->log = cfg->log))
        ep->log_session = englog_session(ep->log);
    PlayerStatus st = start_engine(ep, cfg);
    if (st) {
        put_msg(msg, msg_len, ep->err);
        process_close(&ep->proc);
        free(ep->scratch);
        free(ep);
        return st;
    }
    *impl = ep;
    return PLAYER_OK;
}

void external_player_free(void *impl)
{
    ExternalPlayer *ep = impl;
    if (!ep)
        return;
    if (!ep->dead && ext_send_line(ep, "quit") == PLAYER_OK) {
        // Give it a moment to exit by itself (EOF on its output), then process_close kills.
        int64_t deadline = timeman_now_ms() + QUIT_GRACE_MS;
        while (ext_next_line(ep, deadline) == PROCESS_OK)
            ;
    }
    process_close(&ep->proc);
    if (ep->log)
        englog_note(ep->log, ep->log_session, "closed");
    free(ep->scratch);
    free(ep);
}

int external_player_options(const void *impl, PlayerOptionInfo *out, int cap)
{
    const ExternalPlayer *ep = impl;
    for (int i = 0; i < ep->adv_count && i < cap; i++)
        out[i] = ep->adv[i];
    return ep->adv_count;
}

const char *external_player_engine_name(const void *impl)
{
    return ((const ExternalPlayer *)impl)->engine_name;
}

PlayerStatus external_player_new_game(void *impl, const RulesConfig *rules, char *msg,
                                      size_t msg_len)
{
    (void)rules; // no protocol here can tell an engine our rule set
    ExternalPlayer *ep = impl;
    PlayerStatus st = settle(ep);
    if (!st)
        st = ep->pr->new_game(ep);
    if (st)
        put_msg(msg, msg_len, ep->err);
    return st;
}

/// Whether the limits say when to stop: a clock, a movetime, a depth or (UCI/UCCI) nodes.
static PlayerStatus check_limits(ExternalPlayer *ep, const Board *game, const PlayerLimits *l)
{
    bool bounded = l->time_ms[game->side] >= 0 || l->movetime_ms > 0 || l->depth > 0;
    if (!bounded && l->nodes > 0 && !ep->pr->node_limit)
        return ext_fail(ep, PLAYER_ERR_CONFIG,
                        "xboard has no node limit: give a clock, a movetime or a depth");
    if (!bounded && l->nodes == 0)
        return ext_fail(ep, PLAYER_ERR_CONFIG, "no clock, movetime, depth or nodes to search by");
    MoveList list;
    if (movegen_legal(game, &list) == 0)
        return ext_fail(ep, PLAYER_ERR_CONFIG, "asked to move in a position without legal moves");
    return PLAYER_OK;
}

PlayerStatus external_player_go(void *impl, const Board *game, const PlayerLimits *limits,
                                int64_t deadline_ms, PlayerMove *out, char *msg, size_t msg_len)
{
    ExternalPlayer *ep = impl;
    memset(out, 0, sizeof *out);
    PlayerStatus st = check_limits(ep, game, limits);
    if (!st)
        st = settle(ep);
    if (!st) {
        game_start_fen(ep, game);
        st = ep->pr->go(ep, game, limits, deadline_ms, out);
    }
    if (st)
        put_msg(msg, msg_len, ep->err);
    return st;
}
