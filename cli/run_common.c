// SPDX-License-Identifier: MIT
#include "run_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "commands.h"
#include "files.h"
#include "search.h"

uint64_t run_fingerprint(const char *path, char *const *sets, int n)
{
    uint64_t h = FILES_FNV_BASIS;
    files_hash(path, &h);
    // Where the output goes and how reports travel do not change the games: a job whose
    // directory moved (e.g. off a full disk) is the same job.
    for (int i = 0; i < n; i++)
        if (strncmp(sets[i], "output.", 7) && strncmp(sets[i], "report.", 7))
            h = files_fnv(h, sets[i], strlen(sets[i]));
    return h;
}

bool run_bench(uint64_t *signature, uint64_t *nps)
{
    const char *depth_env = getenv("XQFORGE_BENCH_DEPTH");
    long depth = BENCH_DEPTH_SIGNATURE;
    if (depth_env && !cli_parse_int(depth_env, 1, 20, &depth))
        depth = BENCH_DEPTH_SIGNATURE;
    Engine *e = engine_new();
    BenchResult br = {0, 0};
    bool ok = e && bench_run(e, (int)depth, NULL, NULL, &br) == 0;
    engine_free(e);
    *signature = br.nodes;
    *nps = br.time_ms > 0 ? br.nodes * 1000 / (uint64_t)br.time_ms : br.nodes;
    return ok;
}
