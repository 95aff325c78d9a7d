// SPDX-License-Identifier: MIT
// A small, fast, seedable random generator (xoshiro256**), one per thread or per task, so
// that runs are reproducible from a seed.
#pragma once

#include <stdint.h>

typedef struct {
    uint64_t s[4];
} Rng;

static inline uint64_t rng_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline void rng_seed(Rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) { // splitmix64 expands the seed
        uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        r->s[i] = z ^ (z >> 31);
    }
}

static inline uint64_t rng_next(Rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t;
    s[3] = rng_rotl(s[3], 45);
    return result;
}

/// Uniform in [0, n), n > 0 (Lemire's multiply-shift; the bias is negligible for small n).
static inline uint32_t rng_below(Rng *r, uint32_t n)
{
    return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}
