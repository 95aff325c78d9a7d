// SPDX-License-Identifier: MIT
// A training loop's steps as jobs of their own (kind = loop): each generation N runs, in
// output.dir/gen-NNN, a datagen job with the best net (data), a train job on the last [loop]
// keep generations' data (train) and an SPRT of the new net against the best (gate), each
// with its own journal or checkpoint and resume = auto, on the same ranks (run/loop.c finds
// the next step, promotes, writes history.json and runs each step as a derived run).
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "job.h"

typedef enum { JOB_LOOP_DATA, JOB_LOOP_TRAIN, JOB_LOOP_GATE, JOB_LOOP_STEP_NB } JobLoopStep;

/// The step's directory name below gen-NNN ("data", "train", "gate").
const char *job_loop_step_name(JobLoopStep s);

/// dir/gen-NNN/STEP into out; false when it does not fit.
bool job_loop_dir(const JobConfig *t, int gen, JobLoopStep s, char *out, size_t len);

/// The job of step s of generation gen (1-based) of loop job t; best is the best net's path
/// (empty: the engine's own, the embedded net). datagen: t's engine with best as EvalFile, the
/// positions of [loop] positions (else [datagen]'s), the seed [datagen] seed + gen - 1; train:
/// [train] on the data of generations gen - keep + 1 .. gen, from best's weights unless
/// [loop] from_scratch (or no net was promoted yet); gate: an SPRT of "new" (the
/// train step's net) against "best" at [loop] gate_tc or gate_nodes, bounds and gate_games,
/// with t's openings, rules and adjudication. false with why when a value does not fit.
bool job_loop_make(const JobConfig *t, int gen, JobLoopStep s, const char *best, JobConfig *out,
                   char *why, size_t why_len);
