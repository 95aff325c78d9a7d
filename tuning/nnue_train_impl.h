// SPDX-License-Identifier: MIT
// The insides of the NNUE trainer, shared by nnue_set.c (positions files made samples) and
// nnue_train.c (the float model, its loss and the training run). Not for other modules: they
// see nnue_train.h.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnue_train.h"

/// splitmix64: a tiny generator whose whole state is one integer, so an epoch's shuffle and a
/// game's validation draw are functions of their seeds (an exact resume recomputes them).
static inline uint64_t nnue_splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/// A uniform double in [0, 1) from the generator.
static inline double nnue_uniform(uint64_t *s)
{
    return (double)(nnue_splitmix(s) >> 11) * 0x1.0p-53;
}

enum { SAMPLE_FEATURES = 32 }; // a side's pieces at most (16) twice over: room to spare

/// One position: perspective 0 is the side to move's, 1 the other's. Only the active features
/// are kept (the input is sparse), about 70 bytes a position instead of its 2 x 1260 inputs.
typedef struct {
    uint16_t f[2][SAMPLE_FEATURES];
    uint8_t n[2];
    uint8_t result; // for the side to move, x 2 (0 loss, 1 draw, 2 win)
    int16_t score;  // centipawns for the side to move
} Sample;

/// Samples in one growing array (cap doubles), so a shard of millions is a few reallocations.
struct NnueSet {
    uint64_t n, cap;
    Sample *s;
    uint8_t *recs; // the records (validation sets only), POSDATA_RECORD bytes each
    bool keep_records;
    int version; // the net version whose features the samples hold (NNUE_VERSION or _XQ2)
};

/// The version a setting names: 0 is XQ1.
static inline int nnue_train_version(int v) { return v == 0 ? NNUE_VERSION : v; }
