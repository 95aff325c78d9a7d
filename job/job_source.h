// SPDX-License-Identifier: MIT
// The keys of an engine built from a commit ([engine NAME] source, commit, build, binary,
// build_env.NAME, build_timeout, bench, bench_cmd, net, net_sha256): their values, checked
// where they are written. Building is engine_build.h's.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "job.h"

/// Whether key is one of an engine's source keys (build_env.NAME included).
bool job_source_is_key(const char *key);
/// Sets one key; false with why when its value is bad. base_dir: a relative path's (NULL: as
/// typed).
bool job_source_set(JobSource *s, const char *key, const char *v, const char *base_dir, char *why,
                    size_t why_len);
/// The engine as a whole: an engine with a source has commit, build and binary and no cmd; an
/// engine without one has no other source key. false with why (naming the key) when not.
bool job_source_check(const JobSource *s, const PlayerConfig *pc, const char **key, char *why,
                      size_t why_len);
