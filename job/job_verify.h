// SPDX-License-Identifier: MIT
// A tuning job's [verify] as a job of its own: the sprt job that plays the tuned weights
// ("tuned") against the start weights ("start") once the tuning is complete, in
// output.dir/verify, on the same ranks (run/derived.c runs it; run/verify.c writes
// the start weights and carries the verdict into the tuning's result and report).
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "job.h"

/// The directory of the SPRT, below the tuning's output.dir.
#define JOB_VERIFY_DIR "verify"
/// The start weights file the SPRT's "start" engine loads (spsa), in JOB_VERIFY_DIR.
#define JOB_VERIFY_START "start-weights.txt"

/// The SPRT of tuning job t (verify.enabled): two builtin engines, "tuned" with the tuning's
/// weights file and "start" with the start weights (spsa: JOB_VERIFY_START, written by
/// verify_write_start; texel: [texel] start or the defaults), each without weight options, on
/// the linear evaluation where the tuning fitted it; [verify]'s clock (or nodes), bounds, game
/// limit and book; the tuning's rules, adjudication, seed, concurrency and [time] scale; no
/// report upload (the tuning's report carries the verdict). false with why when a value does
/// not fit.
bool job_verify_make(const JobConfig *t, JobConfig *out, char *why, size_t why_len);
