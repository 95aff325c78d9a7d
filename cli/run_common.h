// SPDX-License-Identifier: MIT
// What `xqforge run` computes the same way on every rank before the roles split: the bench
// that proves every rank runs the same build.
#pragma once

#include <stdbool.h>
#include <stdint.h>

/// The bench of this build at the signature depth (BENCH_DEPTH_SIGNATURE, the `Bench: N` of
/// commits): its node count is the signature every rank must share. XQFORGE_BENCH_DEPTH
/// changes it for one rank (how the tests make a rank to refuse).
bool run_bench(uint64_t *signature, uint64_t *nps);
