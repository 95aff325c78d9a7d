// SPDX-License-Identifier: MIT
// Rank 0's part of a tuning job's [verify] (job/job_verify.h): the start weights the SPRT's
// "start" engine loads, the check that every rank reads the same weights files, and the
// verdict carried from the SPRT's result.json into the tuning's console, result.json and
// report (report.json and the page).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job.h"

/// Rank 0, before the SPRT: creates output.dir/verify and (spsa) writes the start weights
/// there: the engine's configured weights with each tuned parameter at its SPSA start (as
/// the tuning began, clipped to its range, rounded). false with why.
bool verify_write_start(const JobConfig *t, char *why, size_t why_len);

/// A hash of the contents of the SPRT's two weights files (v: job_verify_make's job), so
/// that every rank can be checked to read the files rank 0 wrote; false with why when one
/// cannot be read.
bool verify_weights_hash(const JobConfig *v, uint64_t *out, char *why, size_t why_len);

/// Rank 0, after the SPRT (rc: its exit status): reads its result.json, prints the verdict
/// line and adds it as "verify" to the tuning's result.json (when the kind writes one) and to
/// its report.json and report.html. Returns rc, or 1 when the verdict cannot be recorded.
int verify_record(const JobConfig *t, const JobConfig *v, int rc);
