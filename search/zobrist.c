// SPDX-License-Identifier: MIT
#include "zobrist.h"

#include <pthread.h>

uint64_t zobrist_psq[PIECE_NB][SQUARE_NB];
uint64_t zobrist_side;

/// splitmix64: a fixed, well-mixed sequence, so keys never depend on the C library's rand().
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void zobrist_build(void)
{
    uint64_t state = 0x58514647u; // "XQFG"
    for (int p = 0; p < PIECE_NB; p++)
        for (Square s = 0; s < SQUARE_NB; s++)
            zobrist_psq[p][s] = (p == NO_PIECE || p == 8) ? 0 : splitmix64(&state);
    zobrist_side = splitmix64(&state);
}

void zobrist_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, zobrist_build);
}
