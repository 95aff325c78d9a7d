// SPDX-License-Identifier: MIT
// Engine settings (engine_spec.h): one parser for `xqforge play -engine` and job files. The
// value rules are the INI module's, so a number means the same on the command line and in a
// file.
#include "engine_spec.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "inifile.h"
#include "nnue.h"
#include "params.h"

static const char *const TIME_KEYS[] = {"tc", "st", "depth", "nodes", "timemargin"};

const char *engine_spec_strerror(EngineSpecStatus st)
{
    static const char *const text[ENGINE_SPEC_STATUS_NB] = {"ok", "unknown engine setting",
                                                            "bad engine setting value"};
    return (unsigned)st < ENGINE_SPEC_STATUS_NB ? text[st] : "unknown engine spec status";
}

bool engine_spec_is_time_key(const char *key)
{
    for (size_t i = 0; i < sizeof TIME_KEYS / sizeof TIME_KEYS[0]; i++)
        if (!strcmp(key, TIME_KEYS[i]))
            return true;
    return false;
}

/// option.NAME: a later setting of the same NAME replaces the earlier one.
static bool set_option(PlayerConfig *pc, const char *name, const char *v, char *why, size_t len)
{
    if (!name[0]) {
        snprintf(why, len, "option. needs a name (option.NAME)");
        return false;
    }
    PlayerOption *o = NULL;
    for (int i = 0; i < pc->option_count && !o; i++)
        if (!strcmp(pc->options[i].name, name))
            o = &pc->options[i];
    if (!o) {
        if (pc->option_count == PLAYER_OPTIONS_MAX) {
            snprintf(why, len, "more than %d options", PLAYER_OPTIONS_MAX);
            return false;
        }
        o = &pc->options[pc->option_count];
        if (!inifile_text(o->name, sizeof o->name, name, why, len))
            return false;
        pc->option_count++;
    }
    return inifile_text(o->value, sizeof o->value, v, why, len);
}

/// EvalFile (a net file): a relative path is the job file's, like params, so a job runs the
/// same net from any working directory; the special values (empty, <default>) stay as they are.
static bool set_evalfile(PlayerConfig *pc, const char *name, const char *v, const char *base_dir,
                         char *why, size_t len)
{
    char path[sizeof pc->options[0].value];
    if (!base_dir || !v[0] || v[0] == '<' || v[0] == '/')
        return set_option(pc, name, v, why, len);
    return inifile_path(base_dir, v, path, sizeof path, why, len) == INIFILE_OK &&
           set_option(pc, name, path, why, len);
}

/// A variable name: letters, digits and '_', not starting with a digit.
static bool env_name_ok(const char *name, size_t n)
{
    if (n == 0 || isdigit((unsigned char)name[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && name[i] != '_')
            return false;
    return true;
}

/// env.NAME: set for the engine; a later setting of the same NAME replaces the earlier one.
static bool set_env(PlayerConfig *pc, const char *name, const char *v, char *why, size_t len)
{
    size_t n = strlen(name);
    if (!env_name_ok(name, n)) {
        snprintf(why, len, "env.%s: a variable name has letters, digits and '_' (env.NAME)", name);
        return false;
    }
    int i = 0;
    while (i < pc->env_count && !(!strncmp(pc->env[i], name, n) && pc->env[i][n] == '='))
        i++;
    if (i == PLAYER_ENV_MAX) {
        snprintf(why, len, "more than %d env settings", PLAYER_ENV_MAX);
        return false;
    }
    char entry[PLAYER_TEXT_MAX];
    if (snprintf(entry, sizeof entry, "%s=%s", name, v) >= (int)sizeof entry) {
        snprintf(why, len, "env.%s: longer than %d characters with its name", name,
                 PLAYER_TEXT_MAX - 1);
        return false;
    }
    memcpy(pc->env[i], entry, sizeof entry);
    if (i == pc->env_count)
        pc->env_count++;
    return true;
}

/// passenv: names of our variables the engine sees (if we have them); replaces a former list.
static bool set_passenv(PlayerConfig *pc, const char *v, char *why, size_t len)
{
    for (const char *w = v + strspn(v, " \t"); *w; w += strspn(w, " \t")) {
        size_t n = strcspn(w, " \t");
        if (!env_name_ok(w, n)) {
            snprintf(why, len, "passenv: '%.*s' is not a variable name", (int)n, w);
            return false;
        }
        w += n;
    }
    return inifile_text(pc->passenv, sizeof pc->passenv, v, why, len);
}

/// A whole number with an optional binary suffix K, M, G or T (rlimit_as = 512M), in lo..hi
/// or 0 (no limit).
static bool parse_size(const char *v, uint64_t lo, uint64_t hi, uint64_t *out, char *why,
                       size_t len)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    const char *units = "KMGT", *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
    int shift = u ? 10 * (int)(u - units + 1) : 0;
    bool ok = end != v && isdigit((unsigned char)v[0]) && errno == 0 && (!*end || (u && !end[1]));
    if (ok && shift && n > (UINT64_MAX >> shift))
        ok = false;
    uint64_t bytes = ok ? (uint64_t)n << shift : 0;
    if (!ok || (bytes != 0 && (bytes < lo || bytes > hi))) {
        snprintf(why, len,
                 "'%s': expected 0 (no limit) or a size from %lluM to %lluT (bytes, or with "
                 "K, M, G, T)",
                 v, (unsigned long long)(lo >> 20), (unsigned long long)(hi >> 40));
        return false;
    }
    *out = bytes;
    return true;
}

/// args: words separated by spaces or tabs (no quoting: the engine runs without a shell).
static bool set_args(PlayerConfig *pc, const char *v, char *why, size_t len)
{
    char buf[PLAYER_TEXT_MAX];
    if (!inifile_text(buf, sizeof buf, v, why, len))
        return false;
    pc->argc = 0;
    for (char *save, *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (pc->argc == PLAYER_ARGS_MAX) {
            snprintf(why, len, "more than %d args", PLAYER_ARGS_MAX);
            return false;
        }
        snprintf(pc->args[pc->argc++], PLAYER_TEXT_MAX, "%s", t);
    }
    return true;
}

static bool set_time(TimeControl *tc, const char *key, const char *v, char *why, size_t len)
{
    long n;
    double s;
    if (!strcmp(key, "tc")) {
        if (game_parse_tc(v, tc))
            return true;
        snprintf(why, len,
                 "expected base+inc in seconds (10+0.1), moves/base+inc (40/60+0.5) or inf, "
                 "not '%s'",
                 v);
        return false;
    }
    if (!strcmp(key, "st")) {
        if (!inifile_double(v, 0.001, 1e6, &s, why, len))
            return false;
        tc->movetime_ms = (int64_t)(s * 1000 + 0.5);
        return true;
    }
    if (!strcmp(key, "depth") && inifile_long(v, 1, 100, &n, why, len))
        return tc->depth = (int)n, true;
    if (!strcmp(key, "nodes") && inifile_long(v, 1, 2000000000L, &n, why, len))
        return tc->nodes = (uint64_t)n, true;
    if (!strcmp(key, "timemargin") && inifile_long(v, 0, 600000, &n, why, len))
        return tc->margin_ms = n, true;
    return false; // inifile_long said why
}

/// A path: taken from base_dir when relative and base_dir is given.
static bool set_path(char *dst, size_t cap, const char *base_dir, const char *v, char *why,
                     size_t len)
{
    return inifile_path(base_dir, v, dst, cap, why, len) == INIFILE_OK;
}

/// The settings of external engines and of every engine, but not the time control.
static EngineSpecStatus set_player(PlayerConfig *pc, const char *key, const char *v,
                                   const char *base_dir, char *why, size_t len)
{
    long n;
    bool ok;
    if (!strcmp(key, "cmd")) {
        if (pc->proto == PROTO_BUILTIN)
            pc->proto = PROTO_UCI;
        ok = set_path(pc->cmd, sizeof pc->cmd, strchr(v, '/') ? base_dir : NULL, v, why, len);
    } else if (!strcmp(key, "name")) {
        ok = inifile_text(pc->name, sizeof pc->name, v, why, len);
    } else if (!strcmp(key, "dir")) {
        ok = set_path(pc->workdir, sizeof pc->workdir, base_dir, v, why, len);
    } else if (!strcmp(key, "params")) {
        ok = set_path(pc->weights_file, sizeof pc->weights_file, base_dir, v, why, len);
    } else if (!strcmp(key, "proto")) {
        if (!(ok = player_proto_parse(v, &pc->proto)))
            snprintf(why, len, "'%s': expected uci, ucci, xboard or builtin", v);
    } else if (!strcmp(key, "args")) {
        ok = set_args(pc, v, why, len);
    } else if (!strncasecmp(key, "option.evalfile", 16)) {
        ok = set_evalfile(pc, key + 7, v, base_dir, why, len);
    } else if (!strncmp(key, "option.", 7)) {
        ok = set_option(pc, key + 7, v, why, len);
    } else if (!strncmp(key, "env.", 4)) {
        ok = set_env(pc, key + 4, v, why, len);
    } else if (!strcmp(key, "passenv")) {
        ok = set_passenv(pc, v, why, len);
    } else if (!strcmp(key, "rlimit_as")) {
        ok = parse_size(v, (uint64_t)16 << 20, (uint64_t)1 << 50, &pc->rlimit_as, why, len);
    } else if (!strcmp(key, "rlimit_cpu")) {
        if ((ok = inifile_long(v, 0, 100000000L, &n, why, len)))
            pc->rlimit_cpu_s = (uint64_t)n;
    } else if (!strcmp(key, "ranks")) {
        if ((ok = inifile_long(v, 0, 1, &n, why, len)))
            pc->rank_base = (int)n;
    } else if (!strcmp(key, "startup")) {
        if ((ok = inifile_long(v, 1, 600000, &n, why, len)))
            pc->startup_timeout_ms = (int)n;
    } else if (!strcmp(key, "ping")) {
        if ((ok = inifile_long(v, 1, 600000, &n, why, len)))
            pc->ping_timeout_ms = (int)n;
    } else if (!strcmp(key, "check_options")) {
        bool b = true;
        if (!(ok = inifile_bool(v, &b)))
            snprintf(why, len, "'%s': expected true or false", v);
        pc->skip_option_check = !b;
    } else {
        snprintf(why, len, "unknown engine setting '%s'", key);
        return ENGINE_SPEC_ERR_KEY;
    }
    return ok ? ENGINE_SPEC_OK : ENGINE_SPEC_ERR_VALUE;
}

EngineSpecStatus engine_spec_set(PlayerConfig *pc, TimeControl *tc, const char *key,
                                 const char *value, const char *base_dir, char *why, size_t why_len)
{
    bool b;
    if (!strcmp(key, "builtin")) {
        if (value[0] && (!inifile_bool(value, &b) || !b)) {
            snprintf(why, why_len, "'%s': builtin takes no value (or true)", value);
            return ENGINE_SPEC_ERR_VALUE;
        }
        pc->proto = PROTO_BUILTIN;
        return ENGINE_SPEC_OK;
    }
    if (engine_spec_is_time_key(key))
        return set_time(tc, key, value, why, why_len) ? ENGINE_SPEC_OK : ENGINE_SPEC_ERR_VALUE;
    return set_player(pc, key, value, base_dir, why, why_len);
}

EngineSpecStatus engine_spec_word(PlayerConfig *pc, TimeControl *tc, const char *word, char *why,
                                  size_t why_len)
{
    const char *eq = strchr(word, '=');
    if (!eq && !strcmp(word, "builtin"))
        return engine_spec_set(pc, tc, word, "", NULL, why, why_len);
    if (!eq || eq == word) {
        snprintf(why, why_len, "'%s' is not key=value", word);
        return ENGINE_SPEC_ERR_KEY;
    }
    char key[PLAYER_TEXT_MAX + 8]; // option.NAME
    if (eq - word >= (ptrdiff_t)sizeof key) {
        snprintf(why, why_len, "unknown engine setting '%.*s...'", 32, word);
        return ENGINE_SPEC_ERR_KEY;
    }
    snprintf(key, sizeof key, "%.*s", (int)(eq - word), word);
    return engine_spec_set(pc, tc, key, eq + 1, NULL, why, why_len);
}

/// The value of the last UseNNUE option: 1 true, 0 false, -1 not set, 2 not a boolean (the
/// engine refuses that when the player starts, with its own sentence).
static int use_nnue_option(const PlayerConfig *pc)
{
    int v = -1;
    for (int i = 0; i < pc->option_count; i++) {
        const char *name = pc->options[i].name, *val = pc->options[i].value;
        if (strcasecmp(name, "UseNNUE"))
            continue;
        v = !strcasecmp(val, "true") || !strcasecmp(val, "on") || !strcmp(val, "1")     ? 1
            : !strcasecmp(val, "false") || !strcasecmp(val, "off") || !strcmp(val, "0") ? 0
                                                                                        : 2;
    }
    return v;
}

bool engine_spec_check_eval(const PlayerConfig *pc, bool tunes_eval, char *why, size_t why_len)
{
    if (pc->proto != PROTO_BUILTIN)
        return true;
    int use = use_nnue_option(pc);
    if (use == 2)
        return true;
    if (tunes_eval && use != 0) {
        snprintf(why, why_len,
                 "spsa tunes evaluation rows, which the NNUE net never reads (UseNNUE is %s): "
                 "set option.UseNNUE = false to tune the linear evaluation",
                 use == 1 ? "true" : "on by default");
        return false;
    }
    if (use != -1 || !nnue_default())
        return true;
    Weights w, def;
    weights_default(&def);
    char ignored[1024];
    if (!player_builtin_weights(pc, &w, ignored, sizeof ignored))
        return true; // a bad file or value is refused with its own words by whoever sets it
    const char *from = pc->weights_file;
    for (int id = 0; id < PARAM_NB; id++) {
        if (params_is_search(id) || w.v[id] == def.v[id])
            continue;
        for (int i = 0; i < pc->option_count; i++)
            if (!strcasecmp(pc->options[i].name, params_info[id].name))
                from = "its options";
        snprintf(why, why_len,
                 "its evaluation weights are not the defaults (%s %d, not %d, from %s), and the "
                 "NNUE net it evaluates with by default never reads them: set "
                 "option.UseNNUE=false to evaluate with them, or option.UseNNUE=true to keep "
                 "the net",
                 params_info[id].name, (int)w.v[id], (int)def.v[id], from);
        return false;
    }
    return true;
}

bool engine_spec_check_pair(const PlayerConfig *a, const PlayerConfig *b, char *why, size_t why_len)
{
    if (a->proto != PROTO_BUILTIN || b->proto != PROTO_BUILTIN)
        return true;
    int ua = use_nnue_option(a), ub = use_nnue_option(b), def = nnue_default() != NULL;
    if (ua == 2 || ub == 2 || (ua == -1) == (ub == -1) ||
        (ua == -1 ? def : ua) == (ub == -1 ? def : ub))
        return true;
    const PlayerConfig *set = ua == -1 ? b : a, *unset = ua == -1 ? a : b;
    snprintf(why, why_len,
             "engine '%s' sets UseNNUE=%s and engine '%s' evaluates with the %s by default: "
             "set option.UseNNUE on both (or for each) so the match compares what you mean",
             set->name, def ? "false" : "true", unset->name,
             def ? "NNUE net" : "linear evaluation");
    return false;
}
