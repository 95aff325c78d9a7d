// SPDX-License-Identifier: MIT
// The training loop's state, derived from its steps' result files (job_loop.h): which step
// runs next, the promotions (nets/nn-<sha256[:12]>.nnue and best.nnue) and output.dir/
// history.json, one row per generation, with its page (report.html and report.json:
// loop_report.h) made from it. Rank 0 calls these between the steps; nothing here is
// kept in memory across a kill: a resumed loop derives the same state from the same files.
// The driver (run_loop, run_impl.h) runs each step as a derived run on the same ranks.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "job.h"
#include "job_loop.h"

/// What the loop does next: step of generation gen, with best the best net's path (empty:
/// the engine's own net); done once every generation's gate has finished.
typedef struct {
    int gen;
    int step; // JobLoopStep
    bool done;
    char best[JOB_TEXT_MAX];
} LoopNext;

/// Rank 0: reads every generation's result files, promotes each net its gate accepted (copies
/// it into nets/ under its id, once) and best.nnue, writes history.json atomically (its run id
/// kept) and the page from it, and says what runs next. false with why when a file cannot be
/// read or written (a page that cannot be written is said on stderr: the record is the truth).
bool loop_record(const JobConfig *t, LoopNext *next, char *why, size_t why_len);

/// Rank 0, after the train step tr finished: its result.json (the net's sha256 and id, the
/// kept epoch and its losses, read back from the loss file, and the quantization error its
/// page gives), the step's mark of completion.
bool loop_train_done(const JobConfig *tr, char *why, size_t why_len);

/// --fresh: moves output.dir's gen-* directories into moved (the directory the loop's other
/// outputs went to). false with why.
bool loop_move_aside(const char *dir, const char *moved, char *why, size_t why_len);
