// SPDX-License-Identifier: MIT
// NNUE training as a run (kind = train): every rank loads its shard of the positions,
// gradients are summed over the ranks (link_sum, MPI_Allreduce), rank 0 checkpoints, writes
// the net, the loss curves and the report. Used by `xqforge run` for kind = train.
#pragma once

#include <stdatomic.h>
#include <stdint.h>

#include "job.h"
#include "link.h"

/// A kind = train job over link, outputs in dir (which exists); stop (main's signal handler
/// sets it; NULL: never) ends it after the step it is in, with a checkpoint. Returns the exit
/// status (0 done, 1 failure while training, 2 unusable inputs, 130 stopped).
int nnue_fit_job(Link *link, const JobConfig *job, const char *dir, uint64_t fingerprint,
                 const atomic_bool *stop);
