// SPDX-License-Identifier: MIT
// bench: a fixed list of positions searched to a fixed depth with a cleared table. With one
// thread the total node count is deterministic: the engine's signature, which changes with
// any functional change to search or evaluation.
#pragma once

#include "search.h"

/// The depth of the signature: `xqforge bench` with no depth, the bench_signature test, the
/// `Bench: N` of commit messages and every rank's admission bench at a run's start (so it
/// must stay cheap: about 0.2 s on one core). Changing it changes every signature.
enum { BENCH_DEPTH_SIGNATURE = 7 };

extern const char *const bench_positions[];
extern const int bench_position_count;

typedef struct {
    uint64_t nodes;
    int64_t time_ms;
} BenchResult;

typedef void (*BenchLineFn)(void *ctx, int index, const char *fen, const SearchResult *r);

/// Searches every position; returns 0, -1 if out of memory, or 1 + the index of a bad FEN.
int bench_run(Engine *e, int depth, BenchLineFn line, void *ctx, BenchResult *out);
