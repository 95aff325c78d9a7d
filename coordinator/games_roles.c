// SPDX-License-Identifier: MIT
// The roles of a two-engine game run as its outputs say them (games_impl.h): new is side 0
// (the job's loader put it first), and every figure is its own.
#include <stdio.h>

#include "games_impl.h"

/// Whether the run has roles: one pairing of two engines, new (side 0) against base.
bool games_has_roles(const GamesCoord *g)
{
    return g->job->roles != JOB_ROLES_NONE && g->plan->pairing_count == 1 &&
           g->job->player_count == 2;
}

/// Player i as the summary's first line names it: "new", and for an engine from source its
/// short commit and subject ("new 088b062 (HCE)").
void games_shown_name(const GamesCoord *g, int i, char *out, size_t cap)
{
    const JobSource *s = &g->job->sources[i];
    if (!s->commit_id[0])
        snprintf(out, cap, "%s", g->job->players[i].cfg.name);
    else if (s->subject[0])
        snprintf(out, cap, "%s %.7s (%s)", g->job->players[i].cfg.name, s->commit_id, s->subject);
    else
        snprintf(out, cap, "%s %.7s", g->job->players[i].cfg.name, s->commit_id);
}

/// The line saying whose figures these are and which rule chose the roles.
void games_roles_text(const GamesCoord *g, char *out, size_t cap)
{
    const char *n = g->job->players[0].cfg.name, *b = g->job->players[1].cfg.name;
    snprintf(out, cap, "Roles: new = %s, base = %s (chosen by %s); every figure is %s's.", n, b,
             job_roles_text(g->job->roles), n);
}

/// The roles in result.json and report.json: which engine every figure is from, and why.
json_t *games_roles_json(const GamesCoord *g)
{
    return json_pack("{s:s, s:s, s:s, s:s}", "new", g->job->players[0].cfg.name, "base",
                     g->job->players[1].cfg.name, "figures_of", g->job->players[0].cfg.name,
                     "chosen_by", job_roles_text(g->job->roles));
}
