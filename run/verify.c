// SPDX-License-Identifier: MIT
#include "verify.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "files.h"
#include "job_verify.h"
#include "params.h"
#include "player.h"
#include "report.h"
#include "run_report.h"

bool verify_write_start(const JobConfig *t, char *why, size_t why_len)
{
    char dir[2 * JOB_TEXT_MAX], path[3 * JOB_TEXT_MAX];
    snprintf(dir, sizeof dir, "%s/%s", t->output.dir[0] ? t->output.dir : ".", JOB_VERIFY_DIR);
    if (files_mkdir_p(dir) != 0) {
        snprintf(why, why_len, "[verify]: cannot create %.900s: %s", dir, strerror(errno));
        return false;
    }
    if (t->kind != JOB_SPSA)
        return true; // texel's start is [texel] start's file, or the defaults
    Weights w;
    char msg[512];
    if (!player_builtin_weights(&t->players[0].cfg, &w, msg, sizeof msg)) {
        snprintf(why, why_len, "[verify]: %s", msg);
        return false;
    }
    // As games.c's spsa_prepare starts theta: the line's start, else the engine's value, inside
    // the parameter's range.
    for (int i = 0; i < t->spsa.param_count; i++) {
        const JobSpsaParam *p = &t->spsa.params[i];
        double s = p->has_start ? p->start : w.v[p->id];
        s = s < p->min ? p->min : s > p->max ? p->max : s;
        w.v[p->id] = (int32_t)lround(s);
    }
    snprintf(path, sizeof path, "%s/%s", dir, JOB_VERIFY_START);
    if (weights_save(&w, path) != PARAMS_OK) {
        snprintf(why, why_len, "[verify]: cannot write %.900s", path);
        return false;
    }
    return true;
}

bool verify_weights_hash(const JobConfig *v, uint64_t *out, char *why, size_t why_len)
{
    uint64_t h = FILES_FNV_BASIS;
    for (int i = 0; i < 2; i++) {
        const char *path = v->players[i].cfg.weights_file;
        // No file: the defaults, the same on every rank (the bench proves the engine is).
        if (path[0] && !files_hash(path, &h)) {
            snprintf(why, why_len, "[verify]: cannot read %.900s: %s", path, strerror(errno));
            return false;
        }
        h = files_fnv(h, "|", 1);
    }
    *out = h;
    return true;
}

/// The SPRT's outcome as the tuning's records hold it, from its result.json (NULL: none).
static json_t *verdict_json(const JobConfig *t, const json_t *res)
{
    const char *state, *run_id = json_string_value(json_object_get(res, "run_id"));
    state = json_string_value(json_object_get(res, "state"));
    if (!state)
        return NULL;
    char tc[80];
    if (t->verify.nodes > 0)
        snprintf(tc, sizeof tc, "%lld nodes", (long long)t->verify.nodes);
    else
        snprintf(tc, sizeof tc, "%.60s", t->verify.tc);
    // "no verdict" is the SPRT's name for a game limit reached first: said so here.
    json_t *o = json_pack(
        "{s:s, s:s, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:f, s:f, s:f, s:f, s:i, s:s, s:s}",
        "state", !strcmp(state, "no verdict") ? "limit reached" : state, "time_control", tc, "llr",
        json_object_get(res, "llr"), "lower", json_object_get(res, "lower"), "upper",
        json_object_get(res, "upper"), "games", json_object_get(res, "games"), "elo",
        json_object_get(res, "elo"), "error", json_object_get(res, "error"), "text",
        json_object_get(res, "text"), "elo0", t->verify.elo0, "elo1", t->verify.elo1, "alpha",
        t->verify.alpha, "beta", t->verify.beta, "max_games", t->verify.max_games, "dir",
        JOB_VERIFY_DIR, "run_id", run_id ? run_id : "");
    return o;
}

/// The verdict in one line, as the console and the page say it.
static void verdict_text(const json_t *o, char *buf, size_t len)
{
    const char *text = json_string_value(json_object_get(o, "text"));
    snprintf(buf, len, "%s: LLR %.2f (%.2f, %.2f), %lld games, Elo %s at %s (elo0 %g, elo1 %g)",
             json_string_value(json_object_get(o, "state")),
             json_number_value(json_object_get(o, "llr")),
             json_number_value(json_object_get(o, "lower")),
             json_number_value(json_object_get(o, "upper")),
             (long long)json_integer_value(json_object_get(o, "games")), text ? text : "none",
             json_string_value(json_object_get(o, "time_control")),
             json_number_value(json_object_get(o, "elo0")),
             json_number_value(json_object_get(o, "elo1")));
}

/// report.json (and so report.html) of the tuning with the verdict as a field and a fact.
static bool record_report(const char *dir, const json_t *o, const char *line)
{
    char path[2 * JOB_TEXT_MAX], why[512];
    snprintf(path, sizeof path, "%s/report.json", dir);
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    Report *r = NULL;
    if (!j || report_from_json(j, &r, why, sizeof why) != REPORT_OK) {
        fprintf(stderr, "xqforge run: [verify]: cannot read %s\n", path);
        json_decref(j);
        return false;
    }
    json_decref(j);
    report_set(r, "verify", json_incref((json_t *)o));
    report_fact(r, "Verify (tuned vs start)", "SPRT", "%s", line);
    report_set_version(r, report_version(r) + 1, true);
    bool ok = report_write(r, dir, why, sizeof why) == REPORT_OK;
    if (!ok)
        fprintf(stderr, "xqforge run: [verify]: %s\n", why);
    report_free(r);
    return ok;
}

int verify_record(const JobConfig *t, const JobConfig *v, int rc)
{
    const char *dir = t->output.dir[0] ? t->output.dir : ".";
    char path[2 * JOB_TEXT_MAX], line[512];
    snprintf(path, sizeof path, "%s/%s", v->output.dir, v->output.result);
    json_error_t err;
    json_t *res = json_load_file(path, 0, &err);
    json_t *o = res ? verdict_json(t, res) : NULL;
    json_decref(res);
    if (!o) {
        fprintf(stderr, "xqforge run: [verify]: no verdict: cannot read %s\n", path);
        return rc ? rc : 1;
    }
    verdict_text(o, line, sizeof line);
    printf("Verify (tuned vs start): %s\n", line);
    bool ok = true;
    if (t->kind == JOB_SPSA && t->output.result[0]) {
        snprintf(path, sizeof path, "%s/%s", dir, t->output.result);
        json_t *main = json_load_file(path, 0, &err);
        ok = main && !json_object_set(main, "verify", o) && run_write_json(path, main);
        json_decref(main);
        if (!ok)
            fprintf(stderr, "xqforge run: [verify]: cannot add the verdict to %s\n", path);
    }
    ok = record_report(dir, o, line) && ok;
    json_decref(o);
    return rc ? rc : ok ? 0 : 1;
}
