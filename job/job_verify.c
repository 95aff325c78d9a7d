// SPDX-License-Identifier: MIT
#include "job_verify.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "engine_spec.h"
#include "params.h"

/// path = dir/name; false when it does not fit.
static bool join(char *out, size_t len, const char *dir, const char *name)
{
    int n = snprintf(out, len, "%s/%s", dir, name);
    return n > 0 && (size_t)n < len;
}

/// One engine of the SPRT: base's settings with name and weights file, and no option that
/// sets a weight (the file holds every weight; an option would override it on both sides).
static bool verify_player(const PlayerConfig *base, const char *name, const char *weights,
                          JobPlayer *out)
{
    PlayerConfig *pc = &out->cfg;
    *pc = *base;
    snprintf(pc->name, sizeof pc->name, "%s", name);
    pc->option_count = 0;
    for (int i = 0; i < base->option_count; i++)
        if (params_find(base->options[i].name) < 0)
            pc->options[pc->option_count++] = base->options[i];
    int n = snprintf(pc->weights_file, sizeof pc->weights_file, "%s", weights);
    return n >= 0 && (size_t)n < sizeof pc->weights_file;
}

/// [verify]'s limit a move: nodes, else the clock (checked when the job was loaded).
static bool verify_tc(const JobConfig *t, PlayerConfig *scratch, TimeControl *tc, char *why,
                      size_t why_len)
{
    char nodes[32];
    *tc = (TimeControl){.margin_ms = 100};
    snprintf(nodes, sizeof nodes, "%lld", (long long)t->verify.nodes);
    EngineSpecStatus st =
        t->verify.nodes > 0 ? engine_spec_set(scratch, tc, "nodes", nodes, NULL, why, why_len)
                            : engine_spec_set(scratch, tc, "tc", t->verify.tc, NULL, why, why_len);
    return st == ENGINE_SPEC_OK;
}

bool job_verify_make(const JobConfig *t, JobConfig *out, char *why, size_t why_len)
{
    char tuned[JOB_TEXT_MAX], start[JOB_TEXT_MAX] = "", dir[JOB_TEXT_MAX];
    const char *out_dir = t->output.dir[0] ? t->output.dir : ".";
    bool spsa = t->kind == JOB_SPSA;
    if (!join(dir, sizeof dir, out_dir, JOB_VERIFY_DIR) ||
        !join(tuned, sizeof tuned, out_dir, spsa ? t->spsa.weights : t->texel.weights) ||
        (spsa && !join(start, sizeof start, dir, JOB_VERIFY_START))) {
        snprintf(why, why_len, "[verify]: the output directory's path is too long");
        return false;
    }
    if (!spsa)
        snprintf(start, sizeof start, "%s", t->texel.start);
    *out = *t;
    out->kind = JOB_SPRT;
    snprintf(out->name, sizeof out->name, "%.900s: verify", t->name);
    // Texel fits the linear evaluation, which the net never reads: both sides evaluate with it.
    JobPlayer base = {0};
    if (spsa)
        base.cfg = t->players[0].cfg;
    else
        base.cfg = (PlayerConfig){
            .proto = PROTO_BUILTIN, .option_count = 1, .options = {{"UseNNUE", "false"}}};
    if (!verify_player(&base.cfg, "tuned", tuned, &out->players[0]) ||
        !verify_player(&base.cfg, "start", start, &out->players[1])) {
        snprintf(why, why_len, "[verify]: a weights file's path is too long");
        return false;
    }
    out->player_count = 2;
    out->roles = JOB_ROLES_DERIVED; // players[0] is new: what the run made
    out->sprt.new_name[0] = out->sprt.base_name[0] = '\0';
    for (int i = 0; i < 2; i++)
        if (!verify_tc(t, &base.cfg, &out->players[i].tc, why, why_len))
            return false;
    out->sprt.enabled = true;
    out->sprt.elo0 = t->verify.elo0;
    out->sprt.elo1 = t->verify.elo1;
    out->sprt.alpha = t->verify.alpha;
    out->sprt.beta = t->verify.beta;
    out->sprt.model = JOB_SPRT_NORMALIZED;
    out->repeat = true;
    out->rounds = (t->verify.max_games + 1) / 2;
    out->round_robin = false;
    out->anchor[0] = '\0';
    // A book of its own, else the openings the tuning played (texel: the builtin book).
    if (t->verify.book[0]) {
        snprintf(out->openings_file, sizeof out->openings_file, "%s", t->verify.book);
        out->openings_random = true;
        out->openings_start = 0;
    } else if (!spsa) {
        out->openings_file[0] = '\0';
        out->openings_random = true;
    }
    snprintf(out->output.dir, sizeof out->output.dir, "%s", dir);
    snprintf(out->output.pgn, sizeof out->output.pgn, "games.pgn");
    snprintf(out->output.journal, sizeof out->output.journal, "journal.xqj");
    snprintf(out->output.result, sizeof out->output.result, "result.json");
    out->output.positions[0] = '\0';
    out->report.url_count = 0;
    out->spsa.param_count = 0;
    out->verify.enabled = false;
    return true;
}
