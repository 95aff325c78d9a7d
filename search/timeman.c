// SPDX-License-Identifier: MIT
#include "timeman.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

void limits_init(SearchLimits *l)
{
    *l = (SearchLimits){0};
    l->time[RED] = l->time[BLACK] = -1;
}

int64_t timeman_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int timeman_slowdown(void)
{
    static atomic_int cached; // 0: not read yet (every thread would read the same value)
    int k = atomic_load_explicit(&cached, memory_order_relaxed);
    if (k)
        return k;
    const char *v = getenv("XQFORGE_SLOWDOWN");
    char *end = NULL;
    long n = v ? strtol(v, &end, 10) : 1;
    k = v && end != v && !*end && n >= 2 && n <= 100 ? (int)n : 1;
    atomic_store_explicit(&cached, k, memory_order_relaxed);
    return k;
}

/// The calling thread's CPU time: time it waited for a core is no work of its own, so a
/// loaded machine does not stretch the slowdown beyond k.
static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t timeman_slow(int64_t since_ns, int k)
{
    int64_t now = thread_cpu_ns();
    if (!since_ns) // the thread's first call: what follows is measured from here
        return now;
    int64_t until = now + (now - since_ns) * (k - 1);
    while (now < until)
        now = thread_cpu_ns();
    return now;
}

TimeBudget timeman_budget(const SearchLimits *l, Color us, int overhead_ms, const Weights *w)
{
    const int32_t *tm = w->v;
    TimeBudget t = {0, 0};
    if (l->infinite)
        return t;
    if (l->movetime > 0) {
        int64_t ms = l->movetime - overhead_ms;
        t.soft_ms = t.hard_ms = ms > 1 ? ms : 1;
        return t;
    }
    if (l->time[us] < 0)
        return t;
    int64_t left = l->time[us], inc = l->inc[us] > 0 ? l->inc[us] : 0;
    int mtg = l->movestogo > 0 ? (l->movestogo < 40 ? l->movestogo : 40) : tm[P_tm_movestogo];
    // Never plan to use what the overhead needs on the remaining moves.
    int64_t usable = left - overhead_ms * 2;
    if (usable < 1)
        usable = 1;
    int64_t soft = usable / mtg + inc * tm[P_tm_inc] / 100;
    int64_t hard = soft * tm[P_tm_hard] / 100;
    int64_t cap = usable * tm[P_tm_cap] / 100; // never more than this on one move
    if (l->movestogo == 1)
        cap = usable * tm[P_tm_cap_last] / 100;
    if (hard > cap)
        hard = cap;
    if (soft > hard)
        soft = hard;
    t.soft_ms = soft > 1 ? soft : 1;
    t.hard_ms = hard > 1 ? hard : 1;
    return t;
}
