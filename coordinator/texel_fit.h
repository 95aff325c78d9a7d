// SPDX-License-Identifier: MIT
// The Texel fit as a run: every rank loads its shard of the dataset, gradients are summed
// over the ranks (link_sum, MPI_Allreduce), and rank 0 checkpoints at an interval, writes the
// weights, their diff and the loss curve, and the report (delivered as [report] says). Used
// by `xqforge run` for kind = texel and by `xqforge texel fit` (one machine, no link).
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "job.h"
#include "link.h"
#include "params.h"

typedef struct {
    const JobConfig *job; // the job whose [report] to honour (NULL: texel fit)
    char data[JOB_TEXT_MAX], start[JOB_TEXT_MAX], out_dir[JOB_TEXT_MAX];
    char weights[JOB_TEXT_MAX], loss[JOB_TEXT_MAX];
    bool tuned[PARAM_NB];
    int epochs, threads;
    double lr, l2, k;
    double val;                // the fraction of games held out for validation (0: none)
    int checkpoint_every;      // epochs between checkpoints (0: TEXEL_CHECKPOINT_EVERY)
    double checkpoint_seconds; // and at most this long between them (0: by epochs only)
    bool fresh;           // an existing checkpoint is replaced, not resumed (texel fit --fresh)
    uint64_t fingerprint; // the job's identity (0: texel fit); the checkpoint records it
} TexelFitJob;

/// Fits on every rank of link (NULL: this process alone), resuming from out_dir/texel.ckpt
/// when it was made from these very inputs (the dataset's and start weights' bytes, the
/// settings, the rank count, the job) and refusing it, with the difference, otherwise.
/// stop (main's signal handler sets it; NULL: never) ends the fit after the epoch it is in,
/// with a checkpoint. Returns the exit status: 2 for unusable inputs (a dataset or weights file
/// that cannot be used, a checkpoint of other inputs), 1 for a failure while fitting, 130 when
/// stopped.
int texel_fit_run(const TexelFitJob *fj, Link *link, const atomic_bool *stop);
/// A kind = texel job over link, outputs in dir (which exists); returns the exit status.
int texel_fit_job(Link *link, const JobConfig *job, const char *dir, uint64_t fingerprint,
                  const atomic_bool *stop);
