// SPDX-License-Identifier: MIT
#include "job_loop.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "engine_spec.h"

static const char *const STEP_NAMES[JOB_LOOP_STEP_NB] = {"data", "train", "gate"};

const char *job_loop_step_name(JobLoopStep s)
{
    return (unsigned)s < JOB_LOOP_STEP_NB ? STEP_NAMES[s] : "?";
}

bool job_loop_dir(const JobConfig *t, int gen, JobLoopStep s, char *out, size_t len)
{
    const char *dir = t->output.dir[0] ? t->output.dir : ".";
    int n = snprintf(out, len, "%s/gen-%03d/%s", dir, gen, job_loop_step_name(s));
    return n > 0 && (size_t)n < len;
}

/// base's engine named name, with net as its EvalFile (empty: none, the embedded net).
static bool loop_player(const JobPlayer *base, const char *name, const char *net, JobPlayer *out)
{
    *out = *base;
    PlayerConfig *pc = &out->cfg;
    snprintf(pc->name, sizeof pc->name, "%s", name);
    int n = 0;
    for (int i = 0; i < pc->option_count; i++)
        if (strcasecmp(pc->options[i].name, "EvalFile"))
            pc->options[n++] = pc->options[i];
    pc->option_count = n;
    if (!net[0])
        return true;
    if (n == PLAYER_OPTIONS_MAX)
        return false;
    PlayerOption *o = &pc->options[pc->option_count++];
    snprintf(o->name, sizeof o->name, "EvalFile");
    int w = snprintf(o->value, sizeof o->value, "%s", net);
    return w >= 0 && (size_t)w < sizeof o->value;
}

/// The gate's limit a move: nodes, else the clock (checked when the job was loaded).
static bool loop_gate_tc(const JobConfig *t, PlayerConfig *pc, TimeControl *tc, char *why,
                         size_t why_len)
{
    char nodes[32];
    *tc = (TimeControl){.margin_ms = 100};
    snprintf(nodes, sizeof nodes, "%lld", (long long)t->loop.gate_nodes);
    EngineSpecStatus st = t->loop.gate_nodes > 0
                              ? engine_spec_set(pc, tc, "nodes", nodes, NULL, why, why_len)
                              : engine_spec_set(pc, tc, "tc", t->loop.gate_tc, NULL, why, why_len);
    return st == ENGINE_SPEC_OK;
}

/// The outputs every step keeps in its own directory, with resume = auto.
static bool loop_outputs(JobConfig *out, const char *dir)
{
    int n = snprintf(out->output.dir, sizeof out->output.dir, "%s", dir);
    snprintf(out->output.pgn, sizeof out->output.pgn, "games.pgn");
    snprintf(out->output.journal, sizeof out->output.journal, "journal.xqj");
    snprintf(out->output.result, sizeof out->output.result, "result.json");
    out->output.positions[0] = '\0';
    out->report.url_count = 0;
    out->resume_auto = true;
    return n > 0 && (size_t)n < sizeof out->output.dir;
}

bool job_loop_make(const JobConfig *t, int gen, JobLoopStep s, const char *best, JobConfig *out,
                   char *why, size_t why_len)
{
    char dir[JOB_TEXT_MAX];
    if (!job_loop_dir(t, gen, s, dir, sizeof dir)) {
        snprintf(why, why_len, "[loop]: the output directory's path is too long");
        return false;
    }
    *out = *t;
    snprintf(out->name, sizeof out->name, "%.900s: gen %d %s", t->name, gen, job_loop_step_name(s));
    if (!loop_outputs(out, dir)) {
        snprintf(why, why_len, "[loop]: the output directory's path is too long");
        return false;
    }
    switch (s) {
    case JOB_LOOP_DATA:
        out->kind = JOB_DATAGEN;
        if (t->loop.positions > 0)
            out->datagen.positions = t->loop.positions;
        // Each generation plays other games, even when its net is the one before.
        out->datagen.seed = t->datagen.seed + (uint64_t)gen - 1;
        out->player_count = 1;
        if (!loop_player(&t->players[0], t->players[0].cfg.name, best, &out->players[0])) {
            snprintf(why, why_len, "[loop]: the best net's path is too long");
            return false;
        }
        return true;
    case JOB_LOOP_TRAIN: {
        out->kind = JOB_TRAIN;
        out->player_count = 0;
        out->train.data_count = 0;
        // From the best net (the one that made this data), or from fresh weights.
        snprintf(out->train.init, sizeof out->train.init, "%s", t->loop.from_scratch ? "" : best);
        int first = gen - t->loop.keep + 1 > 1 ? gen - t->loop.keep + 1 : 1;
        for (int g = first; g <= gen; g++) {
            char data[JOB_TEXT_MAX];
            int n = job_loop_dir(t, g, JOB_LOOP_DATA, data, sizeof data)
                        ? snprintf(out->train.data[out->train.data_count], JOB_TEXT_MAX, "%s/%s",
                                   data, t->datagen.file)
                        : -1;
            if (n < 0 || n >= JOB_TEXT_MAX) {
                snprintf(why, why_len, "[loop]: a positions file's path is too long");
                return false;
            }
            out->train.data_count++;
        }
        return true;
    }
    case JOB_LOOP_GATE: {
        out->kind = JOB_SPRT;
        char net[JOB_TEXT_MAX + 16], train[JOB_TEXT_MAX];
        if (!job_loop_dir(t, gen, JOB_LOOP_TRAIN, train, sizeof train) ||
            snprintf(net, sizeof net, "%s/%s", train, t->train.net) >= (int)sizeof net ||
            !loop_player(&t->players[0], "new", net, &out->players[0]) ||
            !loop_player(&t->players[0], "best", best, &out->players[1])) {
            snprintf(why, why_len, "[loop]: a net's path is too long");
            return false;
        }
        out->player_count = 2;
        out->roles = JOB_ROLES_DERIVED; // players[0] is new: what the run made
        out->sprt.new_name[0] = out->sprt.base_name[0] = '\0';
        for (int i = 0; i < 2; i++)
            if (!loop_gate_tc(t, &out->players[i].cfg, &out->players[i].tc, why, why_len))
                return false;
        out->sprt.enabled = true;
        out->sprt.elo0 = t->loop.elo0;
        out->sprt.elo1 = t->loop.elo1;
        out->sprt.alpha = t->loop.alpha;
        out->sprt.beta = t->loop.beta;
        out->sprt.model = JOB_SPRT_NORMALIZED;
        out->repeat = true;
        out->rounds = (t->loop.gate_games + 1) / 2;
        out->round_robin = false;
        out->anchor[0] = '\0';
        return true;
    }
    default: snprintf(why, why_len, "[loop]: no such step"); return false;
    }
}
