// SPDX-License-Identifier: MIT
#include "plan.h"

#include <stdio.h>
#include <string.h>

/// Adds the pairing of engines a and b. b beyond the job's engines means a plays itself
/// (spsa has one engine, playing as "plus" and "minus").
static void pairing_init(const JobConfig *job, GamePlan *p, int a, int b)
{
    Pairing *pg = &p->pairings[p->pairing_count++];
    pg->a = a;
    pg->b = b;
    MatchConfig *m = &pg->m;
    memset(m, 0, sizeof *m);
    m->players[0] = job->players[a].cfg;
    m->players[1] = job->players[b < job->player_count ? b : a].cfg;
    job_game_config(job, a, b < job->player_count ? b : a, &m->game);
    // Every pairing shares the plan's openings: the plan must outlive its pairings' matches.
    m->openings = &p->openings;
    m->random_order = job->openings_random;
    m->seed = job->seed;
    m->start = job->openings_start;
    m->rounds = job->rounds;
    m->repeat = job->repeat;
}

bool plan_build(const JobConfig *job, FILE *warn, GamePlan *p, char *why, size_t why_len)
{
    memset(p, 0, sizeof *p);
    OpeningsStatus os = job->openings_file[0]
                            ? openings_load_as(&p->openings, job->openings_file,
                                               (OpeningsFormat)job->openings_format,
                                               job->openings_plies, warn, why, why_len)
                            : openings_load_default(&p->openings);
    // openings_load wrote why; the built-in openings have only a status to say.
    if (os != OPENINGS_OK) {
        if (!job->openings_file[0])
            snprintf(why, why_len, "%s", openings_strerror(os));
        return false;
    }
    if (job->kind == JOB_SPSA) {
        // The engine plays itself: "plus" and "minus" are its two weight sets of a step.
        pairing_init(job, p, 0, 1);
        MatchConfig *m = &p->pairings[0].m;
        snprintf(m->players[0].name, sizeof m->players[0].name, "plus");
        snprintf(m->players[1].name, sizeof m->players[1].name, "minus");
        m->repeat = true;
        p->players = 2;
    } else {
        // A gauntlet: engine 0 against each other one; a round robin: every pair once. The order
        // fixes the pairing index, part of every unit id (plan.h): it must not change.
        for (int a = 0; a < job->player_count; a++)
            for (int b = a + 1; b < job->player_count; b++)
                if (a == 0 || job->round_robin)
                    pairing_init(job, p, a, b);
        p->players = job->player_count;
    }
    // The same for every pairing (spsa forces it on its only one).
    p->repeat = p->pairings[0].m.repeat;
    p->pairs_total = (uint64_t)job->rounds * (uint64_t)p->pairing_count;
    return true;
}

void plan_free(GamePlan *p) { openings_free(&p->openings); }
