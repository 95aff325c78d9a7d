// SPDX-License-Identifier: MIT
// Engine output lines (games/player_ext.c, UCI/UCCI/xboard): whatever an engine prints, the
// player starts, plays and quits or fails with a message, never hangs, and a move it returns
// is legal. The harness compiles player_ext.c itself with process_spawn replaced: the
// "engine" is a pipe holding the input (after two control bytes), read by the real
// process_read_line, and our commands go to /dev/null.
#define _GNU_SOURCE
#include <fcntl.h>

#include "fuzz_util.h"

#include "process.h"

ProcessStatus fuzz_process_spawn(Process *p, char *const argv[], const ProcessOptions *opt);
#define process_spawn fuzz_process_spawn
#include "../games/player_ext.c"
#undef process_spawn

static const uint8_t *engine_out;
static size_t engine_len;

ProcessStatus fuzz_process_spawn(Process *p, char *const argv[], const ProcessOptions *opt)
{
    (void)argv;
    (void)opt;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        abort();
    fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    if (engine_len && write(fds[1], engine_out, engine_len) < 0)
        abort();
    close(fds[1]); // the engine has said all it will say: then EOF
    p->pid = -1;
    p->out_fd = fds[0];
    p->in_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    p->len = 0;
    p->skipping = false;
    return PROCESS_OK;
}

static Board game;

/// One move request; a move that comes back must be legal here.
static void go(void *impl, const PlayerLimits *limits)
{
    PlayerMove pm;
    char msg[512] = "";
    PlayerStatus st =
        external_player_go(impl, &game, limits, timeman_now_ms() + 60000, &pm, msg, sizeof msg);
    if (st == PLAYER_OK && !movegen_is_legal(&game, pm.move))
        abort();
    if (st != PLAYER_OK && !*msg)
        abort();
    if (st == PLAYER_OK)
        board_make_move(&game, pm.move);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    board_init();
    static PlayerConfig cfg;
    static const Protocol protos[] = {PROTO_UCI, PROTO_UCCI, PROTO_XBOARD};
    memset(&cfg, 0, sizeof cfg);
    snprintf(cfg.name, sizeof cfg.name, "fuzz");
    snprintf(cfg.cmd, sizeof cfg.cmd, "/nonexistent/engine");
    cfg.proto = protos[(data[0] & 3) % 3];
    cfg.rank_base = (data[0] >> 2) & 1;
    cfg.option_count = 1;
    snprintf(cfg.options[0].name, PLAYER_TEXT_MAX, "Hash");
    snprintf(cfg.options[0].value, PLAYER_TEXT_MAX, "16");
    PlayerLimits limits = {.time_ms = {-1, -1}};
    switch (data[1] % 4) {
    case 0: limits.movetime_ms = 1500; break; // xboard: `st 2` and a `?` after 1.5 s
    case 1: limits.depth = 7; break;
    case 2: limits = (PlayerLimits){.time_ms = {60000, 59000}, .inc_ms = {1000, 1000}}; break;
    default: limits.nodes = 100000; break; // refused for xboard: no node limit
    }
    engine_out = data + 2;
    engine_len = size - 2;
    void *impl = NULL;
    char msg[512] = "";
    if (external_player_new(&cfg, &impl, msg, sizeof msg) != PLAYER_OK) {
        if (impl || !*msg)
            abort();
        return 0;
    }
    char why[64];
    RulesConfig rules;
    memset(&rules, 0, sizeof rules);
    // A game from the start, two moves in it, then a game from another position (setboard).
    board_set_fen(&game, BOARD_START_FEN, why, sizeof why);
    if (external_player_new_game(impl, &rules, msg, sizeof msg) == PLAYER_OK) {
        go(impl, &limits);
        go(impl, &limits);
    }
    board_set_fen(&game, "3akab2/9/4b4/p3p1C1p/2p6/6P2/P3P3P/1C2B4/9/2BAKA3 b - - 0 20", why,
                  sizeof why);
    if (external_player_new_game(impl, &rules, msg, sizeof msg) == PLAYER_OK)
        go(impl, &limits);
    external_player_free(impl);
    return 0;
}
