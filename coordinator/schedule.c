// SPDX-License-Identifier: MIT
#include "schedule.h"

#include <stdlib.h>

// A pair's state, one byte each (a run of millions of pairs costs megabytes, not more). calloc
// makes every pair TO_PLAY. Invariant: every id below next is HANDED_OUT or DONE, so take never
// has to look behind next.
enum { TO_PLAY, HANDED_OUT, DONE };

// At least one byte, so that a job of 0 pairs is not mistaken for out of memory.
int schedule_init(Schedule *s, uint64_t total)
{
    s->total = total;
    s->done = s->next = 0;
    s->limit = total;
    s->state = calloc(total ? total : 1, 1);
    return s->state ? 0 : -1;
}

void schedule_destroy(Schedule *s)
{
    free(s->state);
    s->state = NULL;
}

int schedule_take(Schedule *s, uint64_t *ids, int max)
{
    // Increasing ids, skipping the pairs the journal's replay already finished: the lowest go
    // first, so a kind that commits in unit order (books) waits as little as possible.
    int n = 0;
    uint64_t end = s->limit < s->total ? s->limit : s->total;
    while (n < max && s->next < end) {
        uint64_t id = s->next++;
        if (s->state[id] == TO_PLAY) {
            s->state[id] = HANDED_OUT;
            ids[n++] = id;
        }
    }
    return n;
}

// A released pair (its worker left, or its result was refused) moves next back to it, so it is
// the next one handed out, before any new pair, never left for the end of the run.
void schedule_release(Schedule *s, uint64_t id)
{
    if (id < s->total && s->state[id] == HANDED_OUT) {
        s->state[id] = TO_PLAY;
        if (id < s->next)
            s->next = id;
    }
}

// Any state may become DONE (a replayed pair was never handed out in this session); done counts
// each id once, which is what makes schedule_complete exact.
bool schedule_finish(Schedule *s, uint64_t id)
{
    if (id >= s->total || s->state[id] == DONE)
        return false;
    s->state[id] = DONE;
    s->done++;
    return true;
}

bool schedule_is_done(const Schedule *s, uint64_t id)
{
    return id < s->total && s->state[id] == DONE;
}

bool schedule_complete(const Schedule *s) { return s->done == s->total; }
