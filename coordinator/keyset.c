// SPDX-License-Identifier: MIT
#include "keyset.h"

#include <stdlib.h>

// A power of two (slot_of masks with mask = slots - 1); 8 KiB is nothing next to a book.
enum { MIN_SLOTS = 1024 };

/// Zobrist keys are random already; the multiply spreads keys of other origins too.
static size_t slot_of(const KeySet *s, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & s->mask;
}

int keyset_init(KeySet *s, size_t expected)
{
    size_t n = MIN_SLOTS;
    // Sized so that the expected keys stay under the 70% load at which keyset_add grows.
    while (n * 7 / 10 < expected)
        n *= 2;
    s->slots = calloc(n, sizeof *s->slots);
    s->mask = n - 1;
    s->count = 0;
    s->has_zero = false;
    return s->slots ? 0 : -1;
}

void keyset_destroy(KeySet *s)
{
    free(s->slots);
    s->slots = NULL;
    s->count = 0;
}

/// Linear probing into a table known to have a free slot (the load stays under 70%) and not
/// to hold key: the caller checked both, so the loop ends at an empty slot.
static void insert(KeySet *s, uint64_t key)
{
    size_t i = slot_of(s, key);
    while (s->slots[i])
        i = (i + 1) & s->mask;
    s->slots[i] = key;
}

/// Doubles the table and reinserts every key (their slots move with the mask). On failure
/// the old table stays as it was, so keyset_add can leave the set unchanged.
static int grow(KeySet *s)
{
    size_t n = (s->mask + 1) * 2;
    uint64_t *old = s->slots, *fresh = calloc(n, sizeof *fresh);
    if (!fresh)
        return -1;
    size_t old_n = s->mask + 1;
    s->slots = fresh;
    s->mask = n - 1;
    for (size_t i = 0; i < old_n; i++)
        if (old[i])
            insert(s, old[i]);
    free(old);
    return 0;
}

bool keyset_has(const KeySet *s, uint64_t key)
{
    // 0 marks an empty slot, so key 0 lives outside the table.
    if (key == 0)
        return s->has_zero;
    for (size_t i = slot_of(s, key); s->slots[i]; i = (i + 1) & s->mask)
        if (s->slots[i] == key)
            return true;
    return false;
}

int keyset_add(KeySet *s, uint64_t key)
{
    if (keyset_has(s, key))
        return 0;
    if (key == 0) {
        s->has_zero = true;
        s->count++;
        return 1;
    }
    // Grow before the load would pass 70%: probes stay short and an empty slot always exists.
    if ((s->count + 1) * 10 > (s->mask + 1) * 7 && grow(s) != 0)
        return -1;
    insert(s, key);
    s->count++;
    return 1;
}

size_t keyset_bytes(const KeySet *s) { return (s->mask + 1) * sizeof *s->slots; }
