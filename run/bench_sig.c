// SPDX-License-Identifier: MIT
// The bench signature every rank of a run proves (session.h: run_bench).
#include <stdlib.h>

#include "bench.h"
#include "search.h"
#include "session.h"

bool run_bench(uint64_t *signature, uint64_t *nps)
{
    const char *depth_env = getenv("XQFORGE_BENCH_DEPTH");
    long depth = BENCH_DEPTH_SIGNATURE;
    char *end = NULL;
    if (depth_env) {
        long d = strtol(depth_env, &end, 10);
        if (end != depth_env && !*end && d >= 1 && d <= 20)
            depth = d;
    }
    Engine *e = engine_new();
    BenchResult br = {0, 0};
    bool ok = e && bench_run(e, (int)depth, NULL, NULL, &br) == 0;
    engine_free(e);
    // The node count is the signature (deterministic for a build); nps is this rank's speed,
    // reported in HELLO for [time] scaling and the nps floor.
    *signature = br.nodes;
    *nps = br.time_ms > 0 ? br.nodes * 1000 / (uint64_t)br.time_ms : br.nodes;
    return ok;
}
