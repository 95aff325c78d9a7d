// SPDX-License-Identifier: MIT
// The coordinator's set of position keys (64-bit Zobrist keys) for deduplicating a book: an
// open-addressing table with linear probing that doubles when 70% full, so it costs 11.4 to
// 22.9 bytes per key (8-byte slots); a million positions fit in 16 MiB.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t *slots; // 0 marks an empty slot; key 0 is kept in has_zero
    size_t mask, count;
    bool has_zero;
} KeySet;

/// 0, or -1 when out of memory. expected sizes the first table (0 is fine).
int keyset_init(KeySet *s, size_t expected);
void keyset_destroy(KeySet *s);
/// 1 if key was added, 0 if it was there already, -1 when out of memory (set unchanged).
int keyset_add(KeySet *s, uint64_t key);
bool keyset_has(const KeySet *s, uint64_t key);
/// Bytes the set holds on the heap.
size_t keyset_bytes(const KeySet *s);
