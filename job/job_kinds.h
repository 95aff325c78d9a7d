// SPDX-License-Identifier: MIT
// TEMPORARY shim (replaced by the job-kinds table): what cli/cmd_run.c reads of a kind.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "job.h"

const char *job_state_file(const JobConfig *j);
int job_output_files(const JobConfig *j, const char **names, int cap, char *scratch,
                     size_t scratch_len);
uint64_t job_units_total(const JobConfig *j);
