// SPDX-License-Identifier: MIT
#include "tt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

// A bucket is one 64-byte cache line only if the table starts on one (malloc's 16-byte
// alignment splits every bucket over two lines); tables of 2 MB and more start on a 2 MB
// boundary and ask Linux for transparent huge pages (madvise mode is Debian's default), so a
// probe's TLB miss is rare, as Stockfish's aligned_large_pages_alloc does.
enum { TT_HUGE = 2 * 1024 * 1024 };

static void *table_alloc(size_t bytes)
{
    size_t align = bytes >= TT_HUGE ? TT_HUGE : 64;
    void *p = aligned_alloc(align, (bytes + align - 1) / align * align);
    if (!p)
        return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align == TT_HUGE)
        (void)madvise(p, bytes, MADV_HUGEPAGE); // advice only: 4 KB pages still work
#endif
    memset(p, 0, bytes);
    return p;
}

// data: move 16 | score 16 | eval 16 | depth 8 | bound 2 | generation 6
static inline uint64_t pack(Move move, int score, int eval, int depth, Bound bound, uint8_t gen)
{
    return (uint64_t)move | (uint64_t)(uint16_t)score << 16 | (uint64_t)(uint16_t)eval << 32 |
           (uint64_t)(uint8_t)depth << 48 | (uint64_t)bound << 56 | (uint64_t)(gen & 63) << 58;
}

static inline int data_depth(uint64_t d) { return (int8_t)(d >> 48); }
static inline unsigned data_gen(uint64_t d) { return (unsigned)(d >> 58); }

int tt_resize(TT *tt, size_t mb)
{
    tt_free(tt);
    if (mb < 1)
        mb = 1;
    size_t want = mb * 1024 * 1024 / (sizeof(TTEntry) * TT_BUCKET), buckets = 1;
    while (buckets * 2 <= want)
        buckets *= 2;
    tt->entries = table_alloc(buckets * TT_BUCKET * sizeof(TTEntry));
    if (!tt->entries)
        return ENOMEM;
    tt->bucket_count = buckets;
    tt->generation = 0;
    return 0;
}

void tt_free(TT *tt)
{
    free(tt->entries);
    tt->entries = NULL;
    tt->bucket_count = 0;
}

void tt_clear(TT *tt)
{
    if (tt->entries)
        memset(tt->entries, 0, tt->bucket_count * TT_BUCKET * sizeof(TTEntry));
    tt->generation = 0;
}

void tt_new_search(TT *tt) { tt->generation = (uint8_t)((tt->generation + 1) & 63); }

static inline TTEntry *bucket_of(const TT *tt, uint64_t key)
{
    return &tt->entries[(key & (tt->bucket_count - 1)) * TT_BUCKET];
}

bool tt_probe(const TT *tt, uint64_t key, TTHit *hit)
{
    if (!tt->entries)
        return false;
    TTEntry *e = bucket_of(tt, key);
    for (int i = 0; i < TT_BUCKET; i++) {
        uint64_t d = atomic_load_explicit(&e[i].data, memory_order_relaxed);
        uint64_t c = atomic_load_explicit(&e[i].check, memory_order_relaxed);
        if ((c ^ d) != key || d == 0)
            continue;
        hit->move = (Move)(d & 0xffff);
        hit->score = (int16_t)(d >> 16);
        hit->eval = (int16_t)(d >> 32);
        hit->depth = (int8_t)(d >> 48);
        hit->bound = (Bound)((d >> 56) & 3);
        return true;
    }
    return false;
}

void tt_store(TT *tt, uint64_t key, Move move, int score, int eval, int depth, Bound bound)
{
    if (!tt->entries)
        return;
    TTEntry *e = bucket_of(tt, key), *victim = NULL;
    int worst = 1 << 30;
    for (int i = 0; i < TT_BUCKET; i++) {
        uint64_t d = atomic_load_explicit(&e[i].data, memory_order_relaxed);
        uint64_t c = atomic_load_explicit(&e[i].check, memory_order_relaxed);
        if ((c ^ d) == key && d != 0) {
            // Same position: keep a deeper exact result of this search, keep the old move
            // when the new result has none.
            if (depth + 2 < data_depth(d) && bound != BOUND_EXACT && data_gen(d) == tt->generation)
                return;
            if (move == MOVE_NONE)
                move = (Move)(d & 0xffff);
            victim = &e[i];
            break;
        }
        int age = (tt->generation - data_gen(d)) & 63;
        int value = d == 0 ? -1000 : data_depth(d) - 8 * age;
        if (value < worst) {
            worst = value;
            victim = &e[i];
        }
    }
    uint64_t d = pack(move, score, eval, depth, bound, tt->generation);
    atomic_store_explicit(&victim->data, d, memory_order_relaxed);
    atomic_store_explicit(&victim->check, key ^ d, memory_order_relaxed);
}

int tt_hashfull(const TT *tt)
{
    if (!tt->entries)
        return 0;
    int used = 0,
        sample = 1000 < tt->bucket_count * TT_BUCKET ? 1000 : (int)(tt->bucket_count * TT_BUCKET);
    for (int i = 0; i < sample; i++) {
        uint64_t d = atomic_load_explicit(&tt->entries[i].data, memory_order_relaxed);
        used += d != 0 && data_gen(d) == tt->generation;
    }
    return sample ? used * 1000 / sample : 0;
}
