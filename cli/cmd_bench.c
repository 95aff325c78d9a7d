// SPDX-License-Identifier: MIT
// xqforge bench [depth] [threads] [hash]: the engine's speed and node-count signature (with no
// depth, at BENCH_DEPTH_SIGNATURE).
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "commands.h"
#include "move.h"

static void bench_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge bench [DEPTH [THREADS [HASH_MB]]]\n\n"
            "Searches %d fixed positions to DEPTH (default %d, the signature depth) with a\n"
            "cleared table and prints one line per position, then 'Nodes searched: N' (with\n"
            "1 thread and the defaults, the engine's signature: a functional commit states it\n"
            "as 'Bench: N'; every rank of a run proves it with the same bench) and\n"
            "'Nodes/second: N'. THREADS defaults to 1, HASH_MB to 16. --fens lists the\n"
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
    if (argc > 4 || (argc > 1 && !cli_parse_int(argv[1], 1, 60, &depth)) ||
        (argc > 2 && !cli_parse_int(argv[2], 1, 256, &threads)) ||
        (argc > 3 && !cli_parse_int(argv[3], 1, 65536, &hash))) {
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
