// SPDX-License-Identifier: MIT
// The transposition table, shared by all search threads without locks. Each entry stores
// key ^ data beside data (Hyatt's lockless hashing): a torn write from a racing thread
// fails the key check and reads as a miss. Both words are relaxed atomics, so concurrent
// access is free of data races in the C11 sense. Buckets of four entries; replacement
// prefers the shallowest entry of an older search.
#pragma once

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

typedef enum { BOUND_NONE, BOUND_UPPER, BOUND_LOWER, BOUND_EXACT } Bound;

typedef struct {
    _Atomic uint64_t check; // key ^ data
    _Atomic uint64_t data;
} TTEntry;

typedef struct {
    Move move;
    int16_t score;
    int16_t eval;
    int8_t depth;
    Bound bound;
} TTHit;

typedef struct {
    TTEntry *entries;
    size_t bucket_count; // a power of two
    uint8_t generation;
} TT;

enum { TT_BUCKET = 4 };

/// Allocates mb megabytes (rounded down to a power of two of buckets, at least 1 MB).
/// Returns 0 or ENOMEM; on failure the table is left empty but valid.
int tt_resize(TT *tt, size_t mb);
void tt_free(TT *tt);
void tt_clear(TT *tt);
void tt_new_search(TT *tt);
bool tt_probe(const TT *tt, uint64_t key, TTHit *hit);
void tt_store(TT *tt, uint64_t key, Move move, int score, int eval, int depth, Bound bound);
/// Starts loading the bucket of a key about to be probed.
static inline void tt_prefetch(const TT *tt, uint64_t key)
{
    if (tt->entries)
        __builtin_prefetch(&tt->entries[(key & (tt->bucket_count - 1)) * TT_BUCKET]);
}

/// Permille of a sample of entries written by the current search (UCI hashfull).
int tt_hashfull(const TT *tt);
