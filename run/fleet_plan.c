// SPDX-License-Identifier: MIT
// The fleet's plan (fleet_plan.h): the shares, the starts and at most one drain.
#include "fleet_plan.h"

#include <stdlib.h>
#include <string.h>

#include "share.h"

static int plan_order(const void *pa, const void *pb)
{
    const FleetPlanTest *a = pa, *b = pb;
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    if (a->running != b->running)
        return a->running ? -1 : 1;
    if (a->was_running != b->was_running)
        return a->was_running ? -1 : 1;
    return strcmp(a->id, b->id);
}

void fleet_plan_sort(FleetPlanTest *tests, int n)
{
    if (n > 1)
        qsort(tests, (size_t)n, sizeof *tests, plan_order);
}

/// Whether test i holds ranks once the plan's starts are made, and how many.
static bool plan_holds(const FleetPlanIn *in, const FleetPlan *plan, int i, int *have)
{
    *have = in->tests[i].running ? in->tests[i].ranks : plan->start[i];
    return in->tests[i].running || plan->start[i] >= 0;
}

/// The tests waiting with a share take the free ranks, each its share; the last one gets what
/// is left, unless a running test below its share will take it (drained and started again).
static void plan_starts(const FleetPlanIn *in, FleetPlan *plan)
{
    const int *want = plan->want;
    bool grow = false;
    int last = -1, next = 0;
    for (int i = 0; i < in->n; i++) {
        const FleetPlanTest *t = &in->tests[i];
        grow = grow || (t->running && t->ranks < 0.75 * want[i]);
        if (!t->running && want[i] > 0)
            last = i;
    }
    for (int i = 0; i <= last && next < in->free_ranks; i++) {
        if (in->tests[i].running || want[i] == 0)
            continue;
        int left = in->free_ranks - next;
        plan->start[i] = want[i] < left ? want[i] : left;
        if (i == last && !grow)
            plan->start[i] = left;
        next += plan->start[i];
    }
}

void fleet_plan_drain(const FleetPlanIn *in, FleetPlan *plan)
{
    const int *want = plan->want;
    plan->drain = -1;
    plan->reason = NULL;
    if (in->workers == 0 || in->draining || in->signalled)
        return;
    bool below = false, short_run = false;
    int free_n = in->free_ranks, have;
    for (int i = 0; i < in->n; i++) {
        bool holds = plan_holds(in, plan, i, &have);
        below = below || (!holds && want[i] > 0);
        short_run = short_run || (holds && have < 0.75 * want[i]);
        free_n -= plan->start[i] > 0 ? plan->start[i] : 0;
    }
    double worst = 0;
    for (int i = 0; i < in->n; i++) {
        // A test started now has run 0 s: only a settle of 0 lets it drain in this pass.
        double age = in->tests[i].running ? in->tests[i].age : 0;
        if (!plan_holds(in, plan, i, &have) || age < in->settle || share_fair(have, want[i]))
            continue;
        if (want[i] == 0) {
            if (below) {
                plan->drain = i, plan->reason = "tests of higher priority wait";
                return;
            }
            continue;
        }
        double ratio = (double)have / want[i];
        // Free ranks raise a test below its share first; without them, the one most above its
        // share gives ranks back.
        bool give_back = below || (short_run && free_n == 0);
        if (give_back && have > want[i] && ratio > worst)
            plan->drain = i, worst = ratio,
            plan->reason = below ? "a test waits for its share" : "a test runs below its share";
        else if (!below && free_n > 0 && have < want[i] && plan->drain < 0)
            plan->drain = i, plan->reason = "free ranks raise its share";
    }
}

bool fleet_plan(const FleetPlanIn *in, FleetPlan *plan)
{
    size_t n = (size_t)in->n + 1;
    *plan = (FleetPlan){.want = calloc(n, sizeof(int)), .start = malloc(n * sizeof(int))};
    double *itp = malloc(n * sizeof *itp), *target = malloc(n * sizeof *target);
    bool ok = plan->want && plan->start && itp && target;
    if (ok) {
        for (int i = 0; i < in->n; i++)
            plan->start[i] = -1;
        if (in->workers == 0) {
            // No worker rank: rank 0 plays each test itself, one at a time.
            bool any = in->draining;
            for (int i = 0; i < in->n; i++)
                any = any || in->tests[i].running;
            if (in->n > 0 && !any)
                plan->start[0] = 0;
        } else {
            for (int i = 0; i < in->n; i++) {
                const FleetPlanTest *t = &in->tests[i];
                itp[i] = share_itp(t->throughput, t->tc_ratio, t->sprt, t->llr, t->games);
            }
            share_split(itp, in->n, in->workers, target, plan->want);
            plan_starts(in, plan);
        }
        fleet_plan_drain(in, plan);
    } else {
        fleet_plan_destroy(plan);
    }
    free(itp);
    free(target);
    return ok;
}

void fleet_plan_destroy(FleetPlan *plan)
{
    free(plan->want);
    free(plan->start);
    *plan = (FleetPlan){.drain = -1};
}
