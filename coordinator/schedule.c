// SPDX-License-Identifier: MIT
#include "schedule.h"

#include <stdlib.h>

enum { TO_PLAY, HANDED_OUT, DONE };

int schedule_init(Schedule *s, uint64_t total)
{
    s->total = total;
    s->done = s->next = 0;
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
    int n = 0;
    while (n < max && s->next < s->total) {
        uint64_t id = s->next++;
        if (s->state[id] == TO_PLAY) {
            s->state[id] = HANDED_OUT;
            ids[n++] = id;
        }
    }
    return n;
}

void schedule_release(Schedule *s, uint64_t id)
{
    if (id < s->total && s->state[id] == HANDED_OUT) {
        s->state[id] = TO_PLAY;
        if (id < s->next)
            s->next = id;
    }
}

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
