// SPDX-License-Identifier: MIT
// TEMPORARY shim (replaced by the job-kinds table).
#include "job_kinds.h"

#include <stdio.h>

const char *job_state_file(const JobConfig *j)
{
    return j->kind == JOB_TEXEL   ? "texel.ckpt"
           : j->kind == JOB_TRAIN ? "train.ckpt"
                                  : j->output.journal;
}

int job_output_files(const JobConfig *j, const char **names, int cap, char *diff, size_t len)
{
    (void)cap;
    int n = 0;
    names[n++] = "report.json";
    names[n++] = "report.html";
    if (j->kind == JOB_TEXEL) {
        snprintf(diff, len, "%s.diff", j->texel.weights);
        names[n++] = "texel.ckpt";
        names[n++] = j->texel.weights;
        names[n++] = j->texel.loss;
        names[n++] = diff;
        return n;
    }
    if (j->kind == JOB_TRAIN) {
        names[n++] = "train.ckpt";
        names[n++] = j->train.net;
        names[n++] = j->train.loss;
        return n;
    }
    names[n++] = j->output.journal;
    names[n++] = j->output.result;
    if (j->kind == JOB_DATAGEN) {
        names[n++] = j->datagen.file;
        return n;
    }
    if (j->kind == JOB_BOOK) {
        names[n++] = j->book.epd;
        names[n++] = j->book.moves;
        names[n++] = j->book.html;
        return n;
    }
    names[n++] = j->output.pgn;
    names[n++] = j->output.positions;
    if (j->kind == JOB_SPSA) {
        names[n++] = j->spsa.weights;
        names[n++] = j->spsa.trajectory;
    }
    return n;
}

uint64_t job_units_total(const JobConfig *job)
{
    if (job->kind == JOB_BOOK) {
        int64_t max = job->book.max_candidates ? job->book.max_candidates
                                               : 100 * (int64_t)job->book.positions;
        return (uint64_t)((max + job->book.unit - 1) / job->book.unit);
    }
    if (job->kind == JOB_DATAGEN) {
        int64_t games = job->datagen.max_games ? job->datagen.max_games : job->datagen.positions;
        return (uint64_t)((games + job->datagen.unit - 1) / job->datagen.unit);
    }
    if (job->kind == JOB_TEXEL || job->kind == JOB_TRAIN)
        return 0;
    return (uint64_t)job_pairs_total(job);
}
