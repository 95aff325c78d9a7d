// SPDX-License-Identifier: MIT
// Engines built from a commit (job_source.h keys): the commit resolved once on rank 0, a
// content-addressed build cache shared by the ranks of a node type (one builds under a lock,
// the others wait and reuse it; installed by atomic rename), a failed build recorded with its
// log's end, the bench signature of a built engine, nets kept by content hash, and what the
// report says about the code. Programs run without a shell except the build command; git never
// fetches.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job.h"

enum { ENGINE_BUILD_CODE_MAX = 8192 };

/// Whether the job has an engine built from source.
bool engine_build_any(const JobConfig *job);
/// Rank 0: every source engine's commit resolved to its full id and tree (and its repository
/// checked). false with why.
bool engine_build_resolve(JobConfig *job, char *why, size_t why_len);
/// The CPU level the builds target, from the CPU's flags: "x86-64", "x86-64-v2", "-v3", "-v4"
/// (another architecture: its uname -m). Never "native": a binary runs on every node of the
/// level. XQ_CPU_LEVEL in the environment overrides it (a test hook, and for a cluster that
/// wants one level everywhere).
const char *engine_build_cpu_level(void);
/// The build cache directory: [build] cache, else "build-cache" beside output.dir.
void engine_build_cache_dir(const JobConfig *job, char *out, size_t cap);
/// Every rank: builds each source engine or takes it from the cache, and points its cmd at
/// the binary (and, with a net, its option EvalFile at the cached net). Says on stdout what
/// it did when say is true. false with why (a failed build: the end of its log).
bool engine_build_all(JobConfig *job, bool say, char *why, size_t why_len);
/// Every rank: the bench signature of each engine whose bench is not none (0 for the others),
/// from `BINARY bench_cmd` (its last "Nodes searched" or "Bench:" count), and its speed (its
/// last "Nodes/second" figure; 0 when it prints none).
bool engine_build_bench(const JobConfig *job, uint64_t sig[JOB_PLAYERS_MAX],
                        uint64_t nps[JOB_PLAYERS_MAX], char *why, size_t why_len);

/// What the report says about the code (rank 0, after engine_build_resolve).
typedef struct {
    char subject[JOB_PLAYERS_MAX][256]; // each source engine's commit subject
    int base, head;                     // two engines of one repository (-1: none)
    char log[ENGINE_BUILD_CODE_MAX];    // `git log --oneline base..head`
    char stat[ENGINE_BUILD_CODE_MAX];   // `git diff --stat base head`
    char url[JOB_TEXT_MAX * 2];         // [build] diff_url rendered (empty: none)
} EngineBuildCode;

/// Fills *code. Two engines of a game job from one repository: head is new and base base (the
/// job's roles); else base is the first source engine, head the next one of its repository.
void engine_build_code(const JobConfig *job, EngineBuildCode *code);

/// The sha256 of a file in lower-case hex (how nets are named: nn-<sha256[:12]>.nnue); false
/// with errno when it cannot be read.
bool engine_build_sha256(const char *path, char hex[JOB_NET_HASH_MAX]);
