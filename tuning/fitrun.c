// SPDX-License-Identifier: MIT
#include "fitrun.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "why.h"

// ---- Checkpoint ----------------------------------------------------------------------------

/// A part's size in the file: elements as the host stores them (no conversion: a checkpoint
/// never leaves the machine that wrote it).
static size_t part_bytes(const FitRunPart *p)
{
    return p->n * (p->type == FITRUN_DOUBLE ? sizeof(double) : sizeof(float));
}

/// FNV-1a of the magic, the id and the payload: everything but the count, which the id
/// already fixes (the NNUE checkpoints in use were hashed so).
static uint64_t ckpt_hash(const FitRunCkpt *c, const void *id)
{
    uint64_t h = files_fnv(FILES_FNV_BASIS, c->fmt->magic, 8);
    h = files_fnv(h, id, c->fmt->id_size);
    for (int i = 0; i < c->parts; i++)
        h = files_fnv(h, c->part[i].p, part_bytes(&c->part[i]));
    return h;
}

/// The payload straight into the caller's buffers (no second copy of a model's megabytes).
static bool read_parts(FILE *f, const FitRunCkpt *c)
{
    for (int i = 0; i < c->parts; i++)
        if (fread(c->part[i].p, 1, part_bytes(&c->part[i]), f) != part_bytes(&c->part[i]))
            return false;
    return true;
}

/// The count field, u32 or u64 as the format says.
static bool read_count(FILE *f, int bytes, uint64_t *count)
{
    uint32_t n32 = 0;
    if (bytes == 4 && fread(&n32, 4, 1, f) != 1)
        return false;
    if (bytes == 4)
        *count = n32;
    return bytes == 4 || fread(count, 8, 1, f) == 1;
}

/// The reasons in the order a reader meets them: the format, the id (cheap, and names what
/// changed before any payload is read), the count, then the payload and its hash.
static FitRunStatus ckpt_parse(FILE *f, const FitRunCkpt *c, char *why, size_t why_len)
{
    const FitRunFormat *fmt = c->fmt;
    const char *path = c->path;
    _Alignas(16) unsigned char was[FITRUN_ID_MAX]; // the file's id, read as the trainer's struct
    char magic[8] = "", diff[300] = "";
    uint64_t count = 0, hash = 0;
    FitRunStatus st = FITRUN_ERR_STALE;
    bool head = fread(magic, 1, 8, f) == 8;
    if (head && fmt->old_magic && !memcmp(magic, fmt->old_magic, 8))
        return WHY_FAIL(st, why, why_len, "checkpoint %s was written by an older xqforge (%s)",
                        path, fmt->old_why);
    if (head && fmt->old_magic2 && !memcmp(magic, fmt->old_magic2, 8))
        return WHY_FAIL(st, why, why_len, "checkpoint %s was written by an older xqforge (%s)",
                        path, fmt->old_why2);
    if (!head || memcmp(magic, fmt->magic, 8))
        return WHY_FAIL(st, why, why_len, "%s is not %s", path, fmt->name);
    if (fread(was, fmt->id_size, 1, f) != 1 || !read_count(f, fmt->count_bytes, &count))
        return WHY_FAIL(st, why, why_len, "checkpoint %s is cut short", path);
    // Before the payload: a checkpoint of other inputs is named as such even when it is also
    // cut short, since what changed is what the user needs to know.
    if (fmt->differs(was, c->id, diff, sizeof diff))
        return WHY_FAIL(st, why, why_len, "checkpoint %s was %s", path, diff);
    if (count != c->count)
        return WHY_FAIL(st, why, why_len, "checkpoint %s holds %llu %s, this build has %llu", path,
                        (unsigned long long)count, fmt->unit, (unsigned long long)c->count);
    if (!read_parts(f, c) || (fmt->hashed && fread(&hash, 8, 1, f) != 1))
        return WHY_FAIL(st, why, why_len, "checkpoint %s is cut short", path);
    if (fmt->hashed && hash != ckpt_hash(c, was))
        return WHY_FAIL(st, why, why_len, "checkpoint %s is damaged (its checksum does not match)",
                        path);
    if (c->epoch && !(*c->epoch >= 0 && *c->epoch <= c->epochs)) // NaN too
        return WHY_FAIL(st, why, why_len, "checkpoint %s is damaged (epoch %g)", path, *c->epoch);
    return FITRUN_OK;
}

FitRunStatus fitrun_ckpt_read(const FitRunCkpt *c, bool *found, char *why, size_t why_len)
{
    *found = false;
    if (!c->path || c->fresh)
        return FITRUN_OK;
    // A trainer's format row out of the scaffold's bounds is a bug, refused rather than read.
    if (c->fmt->id_size > FITRUN_ID_MAX || c->parts > FITRUN_PARTS_MAX)
        return WHY_FAIL(FITRUN_ERR_STALE, why, why_len, "checkpoint %s: bad format", c->path);
    FILE *f = fopen(c->path, "rb");
    if (!f && errno == ENOENT)
        return FITRUN_OK; // the first run
    if (!f)
        return WHY_FAIL(FITRUN_ERR_STALE, why, why_len, "checkpoint %s: %s", c->path,
                        strerror(errno));
    FitRunStatus st = ckpt_parse(f, c, why, why_len);
    fclose(f);
    *found = st == FITRUN_OK;
    return st;
}

/// Test hook (the kill drills): XQ_TEST_PAUSE_CKPTS=N holds this process still once it has
/// written its Nth checkpoint, with PATH.paused made, until it is killed: a drill kills at a
/// state the run reached, never after a guessed time.
static void test_pause(const char *path)
{
    static atomic_long written;
    const char *v = getenv("XQ_TEST_PAUSE_CKPTS");
    if (!v || !v[0] || atomic_fetch_add(&written, 1) + 1 != strtol(v, NULL, 10))
        return;
    char marker[4200];
    snprintf(marker, sizeof marker, "%s.paused", path);
    int fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0)
        close(fd);
    for (;;)
        pause();
}

bool fitrun_ckpt_write(const FitRunCkpt *c)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", c->path);
    FILE *f = fopen(tmp, "wb");
    uint32_t n32 = (uint32_t)c->count;
    uint64_t hash = c->fmt->hashed ? ckpt_hash(c, c->id) : 0;
    bool ok = f && fwrite(c->fmt->magic, 1, 8, f) == 8 && fwrite(c->id, c->fmt->id_size, 1, f) == 1;
    ok = ok && (c->fmt->count_bytes == 4 ? fwrite(&n32, 4, 1, f) : fwrite(&c->count, 8, 1, f)) == 1;
    for (int i = 0; ok && i < c->parts; i++)
        ok = fwrite(c->part[i].p, 1, part_bytes(&c->part[i]), f) == part_bytes(&c->part[i]);
    if (ok && c->fmt->hashed)
        ok = fwrite(&hash, 8, 1, f) == 1;
    if (ok && c->fmt->sync)
        ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (f && fclose(f) != 0)
        ok = false;
    // Renamed only when whole: a reader sees the previous checkpoint or this one.
    ok = ok && rename(tmp, c->path) == 0;
    if (ok)
        test_pause(c->path);
    return ok;
}

/// Every rank's parts become the sum of every rank's buffer: this rank's payload when it read
/// the checkpoint, zeros elsewhere. Doubles carry floats exactly, so nothing is rounded.
static FitRunStatus share_parts(const FitRunCkpt *c, bool mine, FitRunReduceFn reduce, void *ctx)
{
    size_t n = 0;
    for (int i = 0; i < c->parts; i++)
        n += c->part[i].n;
    double *buf = calloc(n ? n : 1, sizeof *buf);
    if (!buf)
        return FITRUN_ERR_NOMEM;
    double *q = buf;
    for (int i = 0; mine && i < c->parts; i++)
        for (size_t j = 0; j < c->part[i].n; j++)
            *q++ = c->part[i].type == FITRUN_DOUBLE ? ((double *)c->part[i].p)[j]
                                                    : ((float *)c->part[i].p)[j];
    bool ok = n <= (size_t)INT_MAX && reduce(ctx, buf, (int)n);
    q = buf;
    for (int i = 0; ok && i < c->parts; i++)
        for (size_t j = 0; j < c->part[i].n; j++, q++)
            if (c->part[i].type == FITRUN_DOUBLE)
                ((double *)c->part[i].p)[j] = *q;
            else
                ((float *)c->part[i].p)[j] = (float)*q;
    free(buf);
    return ok ? FITRUN_OK : FITRUN_ERR_REDUCE;
}

FitRunStatus fitrun_resume(const FitRunCkpt *c, FitRunReduceFn reduce, void *ctx, bool *resumed,
                           char *why, size_t why_len)
{
    bool found = false;
    *resumed = false;
    FitRunStatus st = fitrun_ckpt_read(c, &found, why, why_len);
    // The reader's verdict, summed over ranks (the others add 0): 1 resume, 0 fresh, -1 refused.
    double flag = st != FITRUN_OK ? -1 : found ? 1 : 0;
    if (reduce && !reduce(ctx, &flag, 1))
        return FITRUN_ERR_REDUCE;
    if (flag < 0) {
        if (st == FITRUN_OK)
            why_set(why, why_len, "the checkpoint on another rank is of other inputs");
        return FITRUN_ERR_STALE;
    }
    // One process resumes from what it read; ranks receive it through the sum.
    if (flag > 0 && reduce && (st = share_parts(c, found, reduce, ctx)) != FITRUN_OK)
        return WHY_FAIL(st, why, why_len, "%s",
                        st == FITRUN_ERR_NOMEM ? "out of memory" : "another rank is gone");
    *resumed = flag > 0;
    return FITRUN_OK;
}

// ---- Loss CSV ------------------------------------------------------------------------------

FitRunStatus fitrun_loss_open(const char *path, const char *header, int rows, FILE **out, int *kept,
                              char *why, size_t why_len)
{
    *out = NULL;
    FILE *f = fopen(path, rows > 0 ? "r+" : "w");
    if (!f && rows > 0 && errno == ENOENT)
        f = fopen(path, "w"); // the rows are gone: the curve restarts at the checkpoint
    if (!f)
        return WHY_FAIL(FITRUN_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
    // Keep the header and the complete rows of epochs 0 .. rows - 1, in order; cut the rest.
    char line[256];
    long keep = 0;
    int next = 0;
    bool head = false;
    while (rows > 0 && fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n')
            break; // a row cut short by a kill
        char *end;
        long e = strtol(line, &end, 10);
        if (!head && end == line)
            head = true;
        else if (!head || end == line || *end != ',' || e != next || e >= rows)
            break; // a gap, a repeat or a row after the checkpoint: the rest is written again
        else
            next++;
        keep = ftell(f);
    }
    if (kept) // no header: nothing was kept, the file starts again
        *kept = keep > 0 ? next : 0;
    // Cut in place (the file may be watched or linked), then write from the cut on.
    if (fflush(f) != 0 || ftruncate(fileno(f), keep) != 0 || fseek(f, keep, SEEK_SET) != 0 ||
        (keep == 0 && fprintf(f, "%s\n", header) < 0) || fflush(f) != 0) {
        FitRunStatus st = WHY_FAIL(FITRUN_ERR_IO, why, why_len, "%s: %s", path, strerror(errno));
        fclose(f);
        return st;
    }
    *out = f;
    return FITRUN_OK;
}

void fitrun_loss_read(const char *path, int before,
                      void (*row)(void *ctx, int epoch, const double *v, int n), void *ctx)
{
    FILE *f = fopen(path, "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        char *end;
        long epoch = strtol(line, &end, 10);
        if (end == line || *end != ',' || epoch < 0 || epoch >= before)
            continue;                 // the header, or an epoch the fit will report itself
        double v[FITRUN_LOSS_VALUES]; // NAN marks a value that does not parse (an empty one)
        int n = 0;
        while (n < FITRUN_LOSS_VALUES && *end == ',') {
            char *from = end + 1;
            v[n] = strtod(from, &end);
            if (end == from)
                v[n] = NAN;
            n++;
        }
        row(ctx, (int)epoch, v, n);
    }
    if (f)
        fclose(f);
}
