// SPDX-License-Identifier: MIT
#include "run_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"
#include "commands.h"
#include "search.h"

enum { BENCH_DEPTH = 5 };

uint64_t run_fingerprint(const char *path, char *const *sets, int n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    FILE *f = fopen(path, "rb");
    for (int ch; f && (ch = fgetc(f)) != EOF;)
        h = (h ^ (uint64_t)ch) * 0x100000001b3ull;
    if (f)
        fclose(f);
    // Where the output goes and how reports travel do not change the games: a job whose
    // directory moved (e.g. off a full disk) is the same job.
    for (int i = 0; i < n; i++) {
        if (!strncmp(sets[i], "output.", 7) || !strncmp(sets[i], "report.", 7))
            continue;
        for (const char *p = sets[i]; *p; p++)
            h = (h ^ (uint64_t)(unsigned char)*p) * 0x100000001b3ull;
    }
    return h;
}

int run_make_dirs(const char *path)
{
    char buf[JOB_TEXT_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        if (!c)
            return 0;
        *p = c;
    }
}

bool run_job_is(const char *path, char *const *sets, int n, JobKind kind)
{
    JobConfig *job = malloc(sizeof *job);
    bool is = job && job_load(path, (const char *const *)sets, n, job, NULL, 0) == JOB_OK &&
              job->kind == kind;
    free(job);
    return is;
}

bool run_bench(uint64_t *signature, uint64_t *nps)
{
    const char *depth_env = getenv("XQFORGE_BENCH_DEPTH");
    long depth = BENCH_DEPTH;
    if (depth_env && !cli_parse_int(depth_env, 1, 20, &depth))
        depth = BENCH_DEPTH;
    Engine *e = engine_new();
    BenchResult br = {0, 0};
    bool ok = e && bench_run(e, (int)depth, NULL, NULL, &br) == 0;
    engine_free(e);
    *signature = br.nodes;
    *nps = br.time_ms > 0 ? br.nodes * 1000 / (uint64_t)br.time_ms : br.nodes;
    return ok;
}

bool run_send(Link *l, int dest, LinkTag tag, WireStatus ws, msgpack_sbuffer *buf)
{
    bool ok = ws == WIRE_OK && link_send(l, dest, tag, buf->data, buf->size) == LINK_OK;
    msgpack_sbuffer_clear(buf);
    return ok;
}

bool run_receive(Link *l, LinkTag first, LinkTag second, int *src, WireMessage *msg)
{
    LinkTag tags[2] = {first, second};
    for (int i = 0; i < 2; i++) {
        LinkTag tag;
        void *data;
        size_t len;
        LinkStatus ls = link_poll(l, tags[i], src, &tag, &data, &len);
        if (ls == LINK_ERR_TOO_BIG || ls == LINK_ERR_BAD_TAG)
            fprintf(stderr, "\nrank %d: %s\n", link_rank(l), link_strerror(ls));
        if (ls != LINK_OK)
            continue;
        char why[256];
        WireStatus st = wire_unpack(data, len, msg, why, sizeof why);
        free(data);
        if (st == WIRE_OK)
            return true;
        fprintf(stderr, "\nrank %d: rejected a message from rank %d: %s (%s)\n", link_rank(l), *src,
                wire_strerror(st), why);
    }
    return false;
}
