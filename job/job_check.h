// SPDX-License-Identifier: MIT
// A job checked whole before anything is written: on rank 0 right after job_load (and by
// `xqforge play` before its games), everything about the engines that the workers would
// otherwise find only after the output directory and journal exist. Builtin engines: every
// option name and value on a fresh engine, the weights file read. External engines: each
// distinct program started once (it exists and runs, its handshake completes within its
// startup time) and stopped; the job's option.NAME settings compared with the options it
// advertised (unknown names, spin values outside their range, check values that are not
// booleans) unless the engine says check_options = false; limits its protocol cannot
// express (xboard has no node limit) refused.
#pragma once

#include <stddef.h>

#include "job.h"

typedef enum {
    JOB_CHECK_OK,
    JOB_CHECK_ERR_ENGINE, // an engine's setting is wrong: bad input (exit 2), why says which
    JOB_CHECK_ERR_NOMEM,
    JOB_CHECK_STATUS_NB
} JobCheckStatus;

const char *job_check_strerror(JobCheckStatus st);

/// Checks n engines (players[i].cfg with its time control). why gets one line naming the
/// engine, the key and the reason: "engine 'fsf': option.Hsh: the engine has no option 'Hsh'
/// (it offers: Hash, Threads, ...)".
JobCheckStatus job_check_players(const JobPlayer *players, int n, char *why, size_t why_len);

/// job_check_players on the job's engines.
JobCheckStatus job_check(const JobConfig *job, char *why, size_t why_len);
