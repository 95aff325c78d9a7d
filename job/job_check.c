// SPDX-License-Identifier: MIT
// The whole-job check (job_check.h): builtin engines on a fresh Engine of search/, external
// ones started once through games/player.h, which says what they advertised.
#include "job_check.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "params.h"
#include "search.h"

const char *job_check_strerror(JobCheckStatus st)
{
    static const char *const text[JOB_CHECK_STATUS_NB] = {"ok", "bad engine setting",
                                                          "out of memory"};
    return (unsigned)st < JOB_CHECK_STATUS_NB ? text[st] : "unknown job check status";
}

/// "engine 'NAME': KEY: reason" into why; returns JOB_CHECK_ERR_ENGINE.
__attribute__((format(printf, 5, 6))) static JobCheckStatus
refuse(const PlayerConfig *pc, const char *key, char *why, size_t len, const char *fmt, ...)
{
    char reason[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    snprintf(why, len, "engine '%s': %s: %s", pc->name, key, reason);
    return JOB_CHECK_ERR_ENGINE;
}

/// A builtin engine as its player makes it: the weights file, then every option in order.
static JobCheckStatus check_builtin(const PlayerConfig *pc, char *why, size_t len)
{
    Engine *e = engine_new();
    if (!e)
        return JOB_CHECK_ERR_NOMEM;
    JobCheckStatus st = JOB_CHECK_OK;
    char msg[512], key[PLAYER_TEXT_MAX + 8];
    if (pc->weights_file[0] &&
        weights_load(engine_weights(e), pc->weights_file, msg, sizeof msg) != PARAMS_OK)
        st = refuse(pc, "params", why, len, "%s", msg);
    for (int i = 0; !st && i < pc->option_count; i++) {
        const PlayerOption *o = &pc->options[i];
        EngineStatus es = engine_set_option(e, o->name, o->value);
        if (es == ENGINE_OK)
            continue;
        snprintf(key, sizeof key, "option.%s", o->name);
        if (es == ENGINE_ERR_NOMEM)
            st = JOB_CHECK_ERR_NOMEM;
        else if (es == ENGINE_ERR_UNKNOWN_OPTION)
            st = refuse(pc, key, why, len,
                        "the builtin engine has no option '%s' (`xqforge uci`, then `uci`, lists "
                        "them)",
                        o->name);
        else
            st = refuse(pc, key, why, len, "'%s': %s", o->value,
                        engine_error(e)[0] ? engine_error(e) : engine_strerror(es));
    }
    engine_free(e);
    return st;
}

static bool is_program(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/// The program exists and may be run: cmd in its workdir (no PATH search when cmd holds a
/// '/'), else a bare name in PATH, as the player's exec finds it.
static JobCheckStatus check_program(const PlayerConfig *pc, char *why, size_t len)
{
    char path[PATH_MAX + PLAYER_TEXT_MAX];
    if (pc->cmd[0] != '/' && pc->workdir[0])
        snprintf(path, sizeof path, "%s/%s", pc->workdir, pc->cmd);
    else
        snprintf(path, sizeof path, "%s", pc->cmd);
    if (is_program(path))
        return JOB_CHECK_OK;
    if (strchr(pc->cmd, '/')) {
        struct stat sb;
        if (stat(path, &sb) != 0)
            return refuse(pc, "cmd", why, len, "%s: %s", path, strerror(errno));
        return refuse(pc, "cmd", why, len, "%s: %s", path,
                      S_ISREG(sb.st_mode) ? "not executable" : "not a file");
    }
    const char *dirs = getenv("PATH");
    for (const char *p = dirs ? dirs : "/usr/local/bin:/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(path, sizeof path, "%.*s/%s", (int)n, n ? p : ".", pc->cmd);
        if (is_program(path))
            return JOB_CHECK_OK;
        p += n + (p[n] == ':');
    }
    return refuse(pc, "cmd", why, len, "'%s' is no program in %s%s%s", pc->cmd,
                  pc->workdir[0] ? pc->workdir : "", pc->workdir[0] ? " nor in " : "", "PATH");
}

/// What the protocol cannot say, refused before anything starts.
static JobCheckStatus check_limits(const JobPlayer *p, char *why, size_t len)
{
    if (p->cfg.proto == PROTO_XBOARD && p->tc.nodes > 0)
        return refuse(&p->cfg, "nodes", why, len,
                      "xboard has no node limit: give tc, st or depth for this engine");
    return JOB_CHECK_OK;
}

/// Whether two engines run the same program the same way (one start checks both).
static bool same_process(const PlayerConfig *a, const PlayerConfig *b)
{
    if (a->proto != b->proto || a->argc != b->argc || a->env_count != b->env_count ||
        a->rank_base != b->rank_base || strcmp(a->cmd, b->cmd) || strcmp(a->workdir, b->workdir) ||
        strcmp(a->passenv, b->passenv) || a->rlimit_as != b->rlimit_as ||
        a->rlimit_cpu_s != b->rlimit_cpu_s)
        return false;
    for (int i = 0; i < a->argc; i++)
        if (strcmp(a->args[i], b->args[i]))
            return false;
    for (int i = 0; i < a->env_count; i++)
        if (strcmp(a->env[i], b->env[i]))
            return false;
    return true;
}

/// "A, B, C" (or "none"), cut with "..." to fit.
static void offered_list(const PlayerOptionInfo *adv, int n, char *out, size_t cap)
{
    size_t used = (size_t)snprintf(out, cap, "%s", n ? "" : "none");
    for (int i = 0; i < n; i++) {
        size_t need = strlen(adv[i].name) + (i ? 2 : 0);
        if (used + need + 5 >= cap) {
            snprintf(out + used, cap - used, "%s...", i ? ", " : "");
            return;
        }
        used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? ", " : "", adv[i].name);
    }
}

/// One option.NAME=VALUE against what the engine advertised.
static JobCheckStatus check_option(const PlayerConfig *pc, const PlayerOption *o,
                                   const PlayerOptionInfo *adv, int n, char *why, size_t len)
{
    char key[PLAYER_TEXT_MAX + 8];
    snprintf(key, sizeof key, "option.%s", o->name);
    bool xb = pc->proto == PROTO_XBOARD; // CECP names are case-sensitive, UCI's are not
    const PlayerOptionInfo *a = NULL;
    for (int i = 0; i < n && !a; i++)
        if (xb ? !strcmp(adv[i].name, o->name) : !strcasecmp(adv[i].name, o->name))
            a = &adv[i];
    if (!a) {
        char list[400];
        offered_list(adv, n, list, sizeof list);
        return refuse(pc, key, why, len, "the engine has no option '%s' (it offers: %s)", o->name,
                      list);
    }
    if (a->type == PLAYER_OPT_SPIN && a->has_range) {
        char *end;
        errno = 0;
        long long v = strtoll(o->value, &end, 10);
        if (end == o->value || *end || errno || v < a->min || v > a->max)
            return refuse(pc, key, why, len,
                          "'%s': the engine takes a whole number from %lld to %lld", o->value,
                          a->min, a->max);
    }
    if (a->type == PLAYER_OPT_CHECK) {
        bool ok = xb ? !strcmp(o->value, "0") || !strcmp(o->value, "1")
                     : !strcmp(o->value, "true") || !strcmp(o->value, "false");
        if (!ok)
            return refuse(pc, key, why, len, "'%s': the engine takes %s", o->value,
                          xb ? "0 or 1" : "true or false");
    }
    return JOB_CHECK_OK;
}

/// Starts players[first]'s program once (without its options: nothing is sent before it is
/// checked) and checks it for every engine that runs the same program.
static JobCheckStatus check_external(const JobPlayer *players, int n, int first, char *why,
                                     size_t len)
{
    const PlayerConfig *pc = &players[first].cfg;
    JobCheckStatus st = check_program(pc, why, len);
    if (st)
        return st;
    PlayerConfig *bare = malloc(sizeof *bare);
    if (!bare)
        return JOB_CHECK_ERR_NOMEM;
    *bare = *pc;
    bare->option_count = 0;
    Player *p = NULL;
    char msg[512];
    PlayerStatus ps = player_new(bare, &p, msg, sizeof msg);
    free(bare);
    if (ps != PLAYER_OK) {
        // The player's message starts with the engine's name: the line names it once.
        size_t nl = strlen(pc->name);
        const char *m =
            !strncmp(msg, pc->name, nl) && !strncmp(msg + nl, ": ", 2) ? msg + nl + 2 : msg;
        return refuse(pc, strstr(m, " within ") ? "startup" : "cmd", why, len,
                      "it does not start as a %s engine: %s", player_proto_name(pc->proto), m);
    }
    PlayerOptionInfo *adv = calloc(PLAYER_ADVERTISED_MAX, sizeof *adv);
    if (!adv) {
        player_free(p);
        return JOB_CHECK_ERR_NOMEM;
    }
    int count = player_options(p, adv, PLAYER_ADVERTISED_MAX);
    if (count > PLAYER_ADVERTISED_MAX)
        count = PLAYER_ADVERTISED_MAX;
    for (int k = first; !st && k < n; k++) {
        const PlayerConfig *kc = &players[k].cfg;
        if (kc->proto == PROTO_BUILTIN || !same_process(pc, kc) || kc->skip_option_check)
            continue;
        for (int i = 0; !st && i < kc->option_count; i++)
            st = check_option(kc, &kc->options[i], adv, count, why, len);
    }
    free(adv);
    player_free(p); // `quit`, then the process is ended
    return st;
}

JobCheckStatus job_check_players(const JobPlayer *players, int n, char *why, size_t why_len)
{
    JobCheckStatus st = JOB_CHECK_OK;
    for (int i = 0; !st && i < n; i++)
        st = check_limits(&players[i], why, why_len);
    for (int i = 0; !st && i < n; i++) {
        const PlayerConfig *pc = &players[i].cfg;
        if (pc->proto == PROTO_BUILTIN) {
            st = check_builtin(pc, why, why_len);
            continue;
        }
        bool seen = false;
        for (int k = 0; k < i && !seen; k++)
            seen = players[k].cfg.proto != PROTO_BUILTIN && same_process(&players[k].cfg, pc);
        if (!seen)
            st = check_external(players, n, i, why, why_len);
    }
    return st;
}

JobCheckStatus job_check(const JobConfig *job, char *why, size_t why_len)
{
    return job_check_players(job->players, job->player_count, why, why_len);
}
