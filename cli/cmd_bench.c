// SPDX-License-Identifier: MIT
// xqforge bench [depth] [threads] [hash] [--option NAME=VALUE]...: the engine's speed and
// node-count signature (with no depth and no options, at BENCH_DEPTH_SIGNATURE).
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "commands.h"
#include "move.h"

enum { BENCH_OPTIONS_MAX = 32 };

static void bench_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge bench [DEPTH [THREADS [HASH_MB]]] [--option NAME=VALUE]...\n\n"
            "Searches %d fixed positions to DEPTH (default %d, the signature depth) with a\n"
            "cleared table and prints one line per position, then 'Nodes searched: N' (with\n"
            "1 thread and the defaults, the engine's signature: a functional commit states it\n"
            "as 'Bench: N'; every rank of a run proves it with the same bench) and\n"
            "'Nodes/second: N'. THREADS defaults to 1, HASH_MB to 16. --option sets an engine\n"
            "option first (e.g. --option EvalFile=net.nnue: the signature is then that\n"
            "net's; --option UseNNUE=false: the linear evaluation's). --fens lists the\n"
            "positions.\n",
            bench_position_count, BENCH_DEPTH_SIGNATURE);
}

static void bench_line(void *ctx, int i, const char *fen, const SearchResult *r)
{
    (void)ctx;
    char mv[MOVE_TEXT_MAX];
    move_text(r->best, 0, mv);
    fprintf(stderr, "%2d/%d %-6s score %6d nodes %10llu  %s\n", i + 1, bench_position_count, mv,
            r->score, (unsigned long long)r->nodes, fen);
}

int cmd_bench(int argc, char **argv)
{
    long depth = BENCH_DEPTH_SIGNATURE, threads = 1, hash = 16;
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        bench_usage(stdout);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--fens") == 0) {
        for (int i = 0; i < bench_position_count; i++)
            printf("%s\n", bench_positions[i]);
        return 0;
    }
    // Positional numbers first; --option pairs anywhere after the command.
    char *pos[4];
    const char *opts[BENCH_OPTIONS_MAX];
    int npos = 0, nopts = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--option") == 0 && i + 1 < argc && nopts < BENCH_OPTIONS_MAX &&
            strchr(argv[i + 1], '='))
            opts[nopts++] = argv[++i];
        else if (npos < 3 && argv[i][0] != '-')
            pos[npos++] = argv[i];
        else
            return bench_usage(stderr), EXIT_USAGE;
    }
    if ((npos > 0 && !cli_parse_int(pos[0], 1, 60, &depth)) ||
        (npos > 1 && !cli_parse_int(pos[1], 1, 256, &threads)) ||
        (npos > 2 && !cli_parse_int(pos[2], 1, 65536, &hash))) {
        bench_usage(stderr);
        return EXIT_USAGE;
    }
    Engine *e = engine_new();
    char value[32];
    if (!e)
        return fprintf(stderr, "xqforge bench: out of memory\n"), 1;
    snprintf(value, sizeof value, "%ld", threads);
    EngineStatus st = engine_set_option(e, "Threads", value);
    snprintf(value, sizeof value, "%ld", hash);
    if (st == ENGINE_OK)
        st = engine_set_option(e, "Hash", value);
    if (st != ENGINE_OK) {
        fprintf(stderr, "xqforge bench: %s\n", engine_strerror(st));
        engine_free(e);
        return 1;
    }
    for (int i = 0; i < nopts; i++) {
        char name[128];
        const char *eq = strchr(opts[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - opts[i]), opts[i]);
        st = engine_set_option(e, name, eq + 1);
        if (st != ENGINE_OK) {
            const char *why = engine_error(e);
            fprintf(stderr, "xqforge bench: option %s: %s\n", opts[i],
                    why[0] ? why : engine_strerror(st));
            engine_free(e);
            return EXIT_USAGE;
        }
    }
    BenchResult r;
    int rc = bench_run(e, (int)depth, bench_line, NULL, &r);
    engine_free(e);
    if (rc != 0) {
        fprintf(stderr, "xqforge bench: %s\n", rc < 0 ? "out of memory" : "bad bench position");
        return 1;
    }
    printf("Total time (ms) : %lld\n", (long long)r.time_ms);
    printf("Nodes searched  : %llu\n", (unsigned long long)r.nodes);
    printf("Nodes/second    : %llu\n",
           (unsigned long long)(r.time_ms > 0 ? r.nodes * 1000 / (uint64_t)r.time_ms : r.nodes));
    return 0;
}
