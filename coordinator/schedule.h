// SPDX-License-Identifier: MIT
// Which game pairs are still to be played. Pair ids are handed out in increasing order, each
// once unless its worker leaves without a result; a pair counts once, whatever arrives twice; pairs
// already in the journal are never handed out again.
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    uint8_t *state; // per pair: 0 to play, 1 handed out, 2 done
    uint64_t total, done, next;
    uint64_t limit; // ids at or above it are not handed out yet (total after init)
} Schedule;

/// 0, or -1 when out of memory.
int schedule_init(Schedule *s, uint64_t total);
void schedule_destroy(Schedule *s);
/// Hands out up to max pairs not yet handed out or done; returns how many went into ids.
int schedule_take(Schedule *s, uint64_t *ids, int max);
/// Gives a handed-out pair back (its worker left without a result): it goes out again.
void schedule_release(Schedule *s, uint64_t id);
/// Records pair id as done: false if it is out of range or was done already (a duplicate).
bool schedule_finish(Schedule *s, uint64_t id);
bool schedule_is_done(const Schedule *s, uint64_t id);
bool schedule_complete(const Schedule *s);
