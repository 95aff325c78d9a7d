// SPDX-License-Identifier: MIT
// xqforge diffcheck: plays random games and compares our legal-move list with a reference
// engine's (Fairy-Stockfish, in UCCI mode where ranks are 0-9) in every position reached.
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "move.h"
#include "movegen.h"
#include "process.h"
#include "rng.h"

enum { BATCH = 32, ANSWER_TIMEOUT_MS = 20000, SHOW_MAX = 10 };

typedef struct {
    char fen[BOARD_FEN_MAX];
    MoveList ours;
} Pending;

static void diffcheck_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge diffcheck [options]\n\n"
            "Plays random games from the start position and, in every position reached,\n"
            "compares our legal moves with the reference engine's ('go perft 1' in UCCI mode).\n"
            "Exits 1 on any difference, 2 on bad usage or if the engine cannot be run.\n\n"
            "  --engine PATH     reference engine (default /usr/games/fairy-stockfish)\n"
            "  --positions N     positions to compare (default 10000)\n"
            "  --seed S          random seed (default 1)\n"
            "  --max-plies P     restart a game after P plies (default 200)\n"
            "  -h, --help        this help\n");
}

static int cmp_moves(const void *a, const void *b)
{
    return (int)*(const Move *)a - (int)*(const Move *)b;
}

static void print_moves(const char *label, const Move *m, int n)
{
    fprintf(stderr, "  %s:", label);
    for (int i = 0; i < n; i++) {
        char t[MOVE_TEXT_MAX];
        move_text(m[i], 0, t);
        fprintf(stderr, " %s", t);
    }
    fprintf(stderr, "\n");
}

/// Reads the engine's 'go perft 1' answer: "move: 1" lines, then "Nodes searched: N".
static int read_reference(Process *p, MoveList *ref, const char *fen)
{
    char line[256];
    ref->count = 0;
    for (;;) {
        ProcessStatus st = process_read_line(p, line, sizeof line, ANSWER_TIMEOUT_MS);
        if (st != PROCESS_OK) {
            fprintf(stderr, "xqforge diffcheck: reading the engine's answer for %s: %s\n", fen,
                    process_strerror(st));
            return -1;
        }
        if (strncmp(line, "Nodes searched", 14) == 0)
            return 0;
        char *colon = strchr(line, ':');
        if (!colon || colon == line)
            continue; // informational output
        *colon = '\0';
        Move m;
        if (move_parse(line, 0, &m) != MOVE_TEXT_OK || ref->count == MAX_MOVES) {
            fprintf(stderr, "xqforge diffcheck: unreadable engine line '%s' for %s\n", line, fen);
            return -1;
        }
        ref->moves[ref->count++] = m;
    }
}

/// Compares one position; returns 1 if the lists differ.
static int compare(Pending *pd, MoveList *ref, int shown)
{
    qsort(pd->ours.moves, (size_t)pd->ours.count, sizeof(Move), cmp_moves);
    qsort(ref->moves, (size_t)ref->count, sizeof(Move), cmp_moves);
    if (pd->ours.count == ref->count &&
        memcmp(pd->ours.moves, ref->moves, sizeof(Move) * (size_t)ref->count) == 0)
        return 0;
    if (shown < SHOW_MAX) {
        fprintf(stderr, "MISMATCH %s (ours %d, reference %d)\n", pd->fen, pd->ours.count,
                ref->count);
        print_moves("ours", pd->ours.moves, pd->ours.count);
        print_moves("reference", ref->moves, ref->count);
    }
    return 1;
}

static int start_engine(Process *p, const char *path)
{
    char *argv[] = {(char *)path, NULL};
    if (process_spawn(p, argv, NULL) != PROCESS_OK) {
        fprintf(stderr,
                "xqforge diffcheck: cannot run %s (install it: apt-get install "
                "fairy-stockfish)\n",
                path);
        return -1;
    }
    char line[PROCESS_LINE_MAX];
    if (process_write(p, "ucci\n") != PROCESS_OK)
        return -1;
    for (;;) {
        ProcessStatus st = process_read_line(p, line, sizeof line, ANSWER_TIMEOUT_MS);
        if (st != PROCESS_OK) {
            fprintf(stderr, "xqforge diffcheck: %s did not answer 'ucci': %s\n", path,
                    process_strerror(st));
            return -1;
        }
        if (strcmp(line, "ucciok") == 0)
            break;
    }
    return process_write(p, "setoption UCI_Variant xiangqi\n") == PROCESS_OK ? 0 : -1;
}

int cmd_diffcheck(int argc, char **argv)
{
    static const struct option opts[] = {
        {"engine", required_argument, NULL, 'e'}, {"positions", required_argument, NULL, 'n'},
        {"seed", required_argument, NULL, 's'},   {"max-plies", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    const char *engine = "/usr/games/fairy-stockfish";
    long positions = 10000, seed = 1, max_plies = 200;
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "e:n:s:p:h", opts, NULL)) != -1;) {
        long *target = c == 'n' ? &positions : c == 's' ? &seed : c == 'p' ? &max_plies : NULL;
        if (target && !cli_parse_int(optarg, c == 's' ? 0 : 1, 1000000000L, target)) {
            fprintf(stderr, "xqforge diffcheck: bad number '%s'\n", optarg);
            return EXIT_USAGE;
        }
        if (c == 'e')
            engine = optarg;
        else if (c == 'h')
            return diffcheck_usage(stdout), 0;
        else if (!target)
            return diffcheck_usage(stderr), EXIT_USAGE;
    }
    if (optind != argc)
        return diffcheck_usage(stderr), EXIT_USAGE;

    Board *b = malloc(sizeof *b);
    Pending *batch = malloc(sizeof *batch * BATCH);
    Process *p = malloc(sizeof *p);
    int rc = EXIT_USAGE;
    if (!b || !batch || !p || start_engine(p, engine) != 0)
        goto done;
    Rng rng;
    rng_seed(&rng, (uint64_t)seed);
    board_set_fen(b, BOARD_START_FEN, NULL, 0);
    long done_n = 0, mismatches = 0, games = 1;
    rc = 1;
    while (done_n < positions) {
        int n = 0;
        char cmd[BOARD_FEN_MAX + 64];
        for (; n < BATCH && done_n + n < positions; n++) {
            Pending *pd = &batch[n];
            board_fen(b, pd->fen, sizeof pd->fen);
            movegen_legal(b, &pd->ours);
            snprintf(cmd, sizeof cmd, "position fen %s\ngo perft 1\n", pd->fen);
            if (process_write(p, cmd) != PROCESS_OK) {
                fprintf(stderr, "xqforge diffcheck: the engine stopped reading\n");
                goto done;
            }
            if (pd->ours.count == 0 || b->hist_len >= max_plies) {
                board_set_fen(b, BOARD_START_FEN, NULL, 0);
                games++;
            } else {
                board_make_move(b, pd->ours.moves[rng_below(&rng, (uint32_t)pd->ours.count)]);
            }
        }
        for (int i = 0; i < n; i++) {
            MoveList ref;
            if (read_reference(p, &ref, batch[i].fen) != 0)
                goto done;
            mismatches += compare(&batch[i], &ref, (int)mismatches);
        }
        done_n += n;
        if (done_n % 20000 < n || done_n == positions)
            fprintf(stderr, "diffcheck: %ld positions, %ld games, %ld mismatches\n", done_n, games,
                    mismatches);
    }
    printf("diffcheck: %ld positions compared with %s, %ld mismatches\n", done_n, engine,
           mismatches);
    rc = mismatches ? 1 : 0;
done:
    if (p && p->pid > 0) {
        process_write(p, "quit\n");
        process_close(p);
    }
    free(p);
    free(batch);
    free(b);
    return rc;
}
