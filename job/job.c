// SPDX-License-Identifier: MIT
// The job model's mechanics: the sections of a job file, the engine entries ([time], [each],
// [engine NAME]), the keys that are not plain (kind, rules, tournament, openings, urls, SPSA
// and Texel parameter lists, train data), overrides, and the driver of validation. The plain
// keys, their ranges and defaults are rows of job_keys.def (set by job_ctx.c); what differs
// between kinds is a row of job_kinds.c. The file itself is read by inifile.c (lines, size
// cap, overrides, file-relative paths), engine settings are parsed by engine_spec.c. Engine
// settings are kept as entries and applied at the end, [time] then [each] then the engine's
// own section, so that the order of sections in the file does not matter.
#include "job.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine_spec.h"
#include "job_ctx.h"
#include "job_kinds.h"
#include "job_source.h"
#include "match.h"

// In Section's order; job_keys.def's section column is these names.
static const char *const SECTION_NAMES[SEC_NB] = {
    "job",  "engine", "each",  "time",    "openings", "adjudication", "sprt",  "output", "report",
    "book", "spsa",   "texel", "datagen", "train",    "verify",       "build", "loop",   "doe"};
// In the enums' order (JobSprtModel, JobReportMethod): a name's index is its value.
static const char *const MODEL_NAMES[JOB_SPRT_MODEL_NB] = {"normalized", "logistic"};
static const char *const METHOD_NAMES[JOB_REPORT_METHOD_NB] = {"post", "put", "multipart"};

const char *job_strerror(JobStatus st)
{
    static const char *const text[JOB_STATUS_NB] = {"ok",
                                                    "cannot read the job file",
                                                    "job file too large",
                                                    "syntax error",
                                                    "unknown section or key",
                                                    "bad value",
                                                    "missing setting",
                                                    "bad override",
                                                    "not supported yet",
                                                    "out of memory"};
    return (unsigned)st < JOB_STATUS_NB ? text[st] : "unknown job status";
}

// ---- Sections -----------------------------------------------------------------------------

/// "[engine NAME]" or "[engine.NAME]" (name in *name), or one of the other section names.
/// -1 for a section we do not know; the engine's name is taken as written (engine_add judges
/// it).
static int section_parse(const char *raw, char *name, size_t cap)
{
    while (isspace((unsigned char)*raw))
        raw++;
    size_t n = strlen(raw);
    while (n && isspace((unsigned char)raw[n - 1]))
        n--;
    name[0] = '\0';
    if (n > 6 && !strncmp(raw, "engine", 6) && (raw[6] == ' ' || raw[6] == '.')) {
        const char *s = raw + 7;
        while (*s == ' ')
            s++;
        snprintf(name, cap, "%.*s", (int)(n - (size_t)(s - raw)), s);
        return SEC_ENGINE;
    }
    for (int i = 0; i < SEC_NB; i++)
        if (i != SEC_ENGINE && strlen(SECTION_NAMES[i]) == n && !strncmp(raw, SECTION_NAMES[i], n))
            return i;
    return -1;
}

/// The engine's index, or -1. Its section (or override) registered it before any of its keys
/// is set, so key_set always finds it: -1 would read as TARGET_EACH.
static int engine_find(const JobCtx *c, const char *name)
{
    for (int i = 0; i < c->job->player_count; i++)
        if (!strcmp(c->engines[i], name))
            return i;
    return -1;
}

/// Registers a new engine; its name must be unique and usable in an override.
static bool engine_add(JobCtx *c, const char *name)
{
    char sec[JOB_LINE_MAX + 16];
    snprintf(sec, sizeof sec, "engine %s", name);
    if (!name[0] || strlen(name) > ENGINE_NAME_MAX)
        return ctx_fail(c, JOB_ERR_VALUE, sec, NULL, "an engine name has 1..%d characters",
                        ENGINE_NAME_MAX);
    for (const char *s = name; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_-+", *s))
            return ctx_fail(c, JOB_ERR_VALUE, sec, NULL,
                            "an engine name has only letters, digits, '_', '-' and '+'");
    int i = engine_find(c, name);
    if (i >= 0)
        return ctx_fail(c, JOB_ERR_VALUE, sec, NULL, "duplicate engine name (first on line %d)",
                        c->engine_lines[i]);
    if (c->job->player_count == JOB_PLAYERS_MAX)
        return ctx_fail(c, JOB_ERR_VALUE, sec, NULL, "more than %d engines", JOB_PLAYERS_MAX);
    i = c->job->player_count++;
    snprintf(c->engines[i], sizeof c->engines[i], "%s", name);
    c->engine_lines[i] = c->at.line;
    return true;
}

// ---- Keys ---------------------------------------------------------------------------------

/// Keeps an engine setting for later, after checking it on a scratch player.
static bool engine_entry(JobCtx *c, int target, const char *sec, const char *key, const char *v)
{
    char why[512];
    if (!strcmp(key, "name"))
        return ctx_fail(c, JOB_ERR_KEY, sec, key,
                        "an engine's name is its section's: [engine NAME]");
    if (target == TARGET_TIME && !engine_spec_is_time_key(key))
        return ctx_fail(c, JOB_ERR_KEY, sec, key,
                        "unknown key (tc, st, depth, nodes, timemargin, scale, reference_nps, "
                        "nps_floor)");
    // Checked now, so an error names this line; applied only after the whole file (the order
    // [time], [each], [engine NAME]: the header of this file).
    c->scratch.option_count = 0;
    c->scratch.env_count = 0; // one key at a time: scratch holds only this key's setting
    EngineSpecStatus es = ENGINE_SPEC_OK;
    if (job_source_is_key(key)) { // an engine built from source (job_source.h)
        JobSource scratch = {0};
        if (!job_source_set(&scratch, key, v, ctx_path_base(c), why, sizeof why))
            es = ENGINE_SPEC_ERR_VALUE;
    } else {
        es =
            engine_spec_set(&c->scratch, &c->scratch_tc, key, v, ctx_path_base(c), why, sizeof why);
    }
    if (es != ENGINE_SPEC_OK)
        return ctx_fail(c, es == ENGINE_SPEC_ERR_KEY ? JOB_ERR_KEY : JOB_ERR_VALUE, sec, key, "%s",
                        why);
    if (c->entry_count == ENTRIES_MAX)
        return ctx_fail(c, JOB_ERR_VALUE, sec, key, "more than %d engine settings", ENTRIES_MAX);
    Entry *e = &c->entries[c->entry_count++];
    e->target = target;
    e->at = c->at;
    snprintf(e->key, sizeof e->key, "%s", key);
    snprintf(e->value, sizeof e->value, "%s", v);
    return true;
}

/// [job] kind: sprt, match, ... (job_kind_name).
static bool set_kind(JobCtx *c, const char *key, const char *v)
{
    const char *names[JOB_KIND_NB];
    for (int k = 0; k < JOB_KIND_NB; k++)
        names[k] = job_kind_name((JobKind)k);
    int i = 0;
    if (!ctx_set_enum(c, "job", key, v, names, JOB_KIND_NB, &i))
        return false;
    c->has_kind = true;
    return c->job->kind = (JobKind)i, true;
}

/// [job] rules: the set's defaults, keeping a counting already given.
static bool set_rules(JobCtx *c, const char *key, const char *v)
{
    JobConfig *j = c->job;
    RuleSet set;
    if (!rules_set_parse(v, &set))
        return ctx_fail(c, JOB_ERR_VALUE, "job", key, "'%s': expected seed or asian", v);
    // [job] counting may come before or after rules: the order of keys does not matter.
    int counting = j->rules.counting_default;
    j->rules = rules_config_default(set);
    j->rules.counting_default = counting;
    return true;
}

static bool set_tournament(JobCtx *c, const char *key, const char *v)
{
    if (strcmp(v, "gauntlet") && strcmp(v, "roundrobin"))
        return ctx_fail(c, JOB_ERR_VALUE, "job", key, "'%s': expected gauntlet or roundrobin", v);
    return c->job->round_robin = v[0] == 'r', true;
}

static bool set_resume(JobCtx *c, const char *key, const char *v)
{
    if (strcmp(v, "auto") && strcmp(v, "off"))
        return ctx_fail(c, JOB_ERR_VALUE, "job", key, "'%s': expected auto or off", v);
    return c->job->resume_auto = v[0] == 'a', true;
}

/// [time] scale = none | bench (mixed hardware; the other [time] keys of it are plain).
static bool set_scale(JobCtx *c, const char *key, const char *v)
{
    static const char *const scales[] = {"none", "bench"};
    int i = 0;
    if (!ctx_set_enum(c, "time", key, v, scales, 2, &i))
        return false;
    return c->job->scale.bench = i == 1, true;
}

/// [openings] file: a path, an embedded set (builtin:NAME) or 'default'.
static bool set_openings_file(JobCtx *c, const char *key, const char *v)
{
    JobConfig *j = c->job;
    const char *s = "openings";
    if (!v[0])
        return ctx_fail(c, JOB_ERR_VALUE, s, key,
                        "empty: give a path, builtin:balanced, builtin:unbalanced or 'default'");
    // An embedded set is a name, not a path: kept as written, checked here.
    if (!strncmp(v, OPENINGS_BUILTIN_PREFIX, strlen(OPENINGS_BUILTIN_PREFIX))) {
        if (!openings_builtin_find(v))
            return ctx_fail(c, JOB_ERR_VALUE, s, key,
                            "'%s': no such embedded set (builtin:balanced or builtin:unbalanced)",
                            v);
        return ctx_set_text(c, s, key, v, j->openings_file, sizeof j->openings_file);
    }
    return ctx_set_path(c, s, key, strcmp(v, "default") ? v : "", j->openings_file,
                        sizeof j->openings_file);
}

static bool set_openings_order(JobCtx *c, const char *key, const char *v)
{
    static const char *const orders[] = {"sequential", "random"};
    int i = 0;
    if (!ctx_set_enum(c, "openings", key, v, orders, 2, &i))
        return false;
    return c->job->openings_random = i == 1, true;
}

/// [openings] start: 1-based in the file, 0-based in the job.
static bool set_openings_start(JobCtx *c, const char *key, const char *v)
{
    long n;
    return ctx_set_long(c, "openings", key, v, 1, 100000000, &n) &&
           (c->job->openings_start = (int)n - 1, true);
}

/// [openings] format = epd | pgn (OpeningsFormat's order).
static bool set_openings_format(JobCtx *c, const char *key, const char *v)
{
    static const char *const formats[] = {"epd", "pgn"};
    return ctx_set_enum(c, "openings", key, v, formats, 2, &c->job->openings_format);
}

/// [output] pgn_notation = coordinate | iccs | wxf (PgnNotation's order).
static bool set_pgn_notation(JobCtx *c, const char *key, const char *v)
{
    static const char *const names[] = {"coordinate", "iccs", "wxf"};
    return ctx_set_enum(c, "output", key, v, names, 3, &c->job->output.pgn_notation);
}

static bool set_openings_seed(JobCtx *c, const char *key, const char *v)
{
    long n;
    return ctx_set_long(c, "openings", key, v, 0, 2000000000L, &n) &&
           (c->job->seed = (uint64_t)n, true);
}

static bool set_urls(JobCtx *c, const char *key, const char *v)
{
    JobConfig *j = c->job;
    char buf[JOB_TEXT_MAX];
    if (!ctx_set_text(c, "report", key, v, buf, sizeof buf))
        return false;
    // The last urls line (or an override) replaces the list rather than adding to it.
    j->report.url_count = 0;
    for (char *save, *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (j->report.url_count == JOB_URLS_MAX)
            return ctx_fail(c, JOB_ERR_VALUE, "report", key, "more than %d URLs", JOB_URLS_MAX);
        if (strncmp(t, "http://", 7) && strncmp(t, "https://", 8))
            return ctx_fail(c, JOB_ERR_VALUE, "report", key,
                            "'%s' is not an http:// or https:// URL", t);
        // A password in a URL ends up in logs, reports and process lists: the token has its
        // own keys. The message does not repeat the credentials.
        const char *host = strstr(t, "://") + 3, *at = memchr(host, '@', strcspn(host, "/?#"));
        if (at)
            return ctx_fail(c, JOB_ERR_VALUE, "report", key,
                            "'%.*s...@%s' has credentials in it (user:password@): give the token "
                            "with token_env or token_file instead",
                            (int)(host - t), t, at + 1);
        snprintf(j->report.urls[j->report.url_count++], JOB_TEXT_MAX, "%s", t);
    }
    return true;
}

static bool set_model(JobCtx *c, const char *key, const char *v)
{
    int i = 0;
    if (!ctx_set_enum(c, job_kind_section(JOB_SPRT), key, v, MODEL_NAMES, JOB_SPRT_MODEL_NB, &i))
        return false;
    return c->job->sprt.model = (JobSprtModel)i, true;
}

static bool set_method(JobCtx *c, const char *key, const char *v)
{
    int i = 0;
    if (!ctx_set_enum(c, "report", key, v, METHOD_NAMES, JOB_REPORT_METHOD_NB, &i))
        return false;
    return c->job->report.method = (JobReportMethod)i, true;
}

/// Only the variable's name is kept, never the token: the job file holds no secret.
static bool set_token_env(JobCtx *c, const char *key, const char *v)
{
    for (const char *p = v; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return ctx_fail(c, JOB_ERR_VALUE, "report", key,
                            "'%s' is not an environment variable name", v);
    return ctx_set_text(c, "report", key, v, c->job->report.token_env,
                        sizeof c->job->report.token_env);
}

static bool set_score_view(JobCtx *c, const char *key, const char *v)
{
    static const char *const views[] = {"red", "side_to_move"};
    int i = 0;
    if (!ctx_set_enum(c, job_kind_section(JOB_BOOK), key, v, views, 2, &i))
        return false;
    return c->job->book.side_to_move = i == 1, true;
}

// `params = all` must fit every row of the weight table (evaluation and search) in one job;
// worker/work_games.c ties the WORK message's limit to the same size.
_Static_assert((int)PARAM_NB <= (int)JOB_SPSA_PARAMS_MAX,
               "SPSA limit below the weight table's size");

/// Adds weight ids to the SPSA list (once each): "all" (every row), "psq" (piece-square
/// weights), "eval" (the other evaluation weights), "search" (search margins and time factors,
/// search/search_params.def) or weight names.
static bool spsa_add_one(void *ctx, int id)
{
    JobConfig *j = ctx;
    for (int k = 0; k < j->spsa.param_count; k++)
        if (j->spsa.params[k].id == id)
            return true; // listed already
    if (j->spsa.param_count >= JOB_SPSA_PARAMS_MAX)
        return false;
    // The row's own range and step; no start, so the engine's configured value (spsa_prepare).
    const ParamInfo *pi = &params_info[id];
    j->spsa.params[j->spsa.param_count++] =
        (JobSpsaParam){id, false, 0, pi->min, pi->max, pi->step, NAN};
    return true;
}

static bool spsa_add_names(JobCtx *c, const char *key, const char *v)
{
    const char *sec = job_kind_section(JOB_SPSA);
    char bad[64];
    switch (params_parse_list(v, spsa_add_one, c->job, bad, sizeof bad)) {
    case PARAMS_LIST_OK: return true;
    case PARAMS_LIST_UNKNOWN:
        return ctx_fail(c, JOB_ERR_VALUE, sec, key, "'%s' is not an engine weight", bad);
    case PARAMS_LIST_STOPPED:
        return ctx_fail(c, JOB_ERR_VALUE, sec, key,
                        "more than %d parameters (the table has %d rows: list psq, eval, search or "
                        "names)",
                        JOB_SPSA_PARAMS_MAX, PARAM_NB);
    default:
        return ctx_fail(c, JOB_ERR_VALUE, sec, key, "empty: give all, psq, eval, search or names");
    }
}

/// `param = NAME, start, min, max, c_end, r_end` as fishtest writes them.
static bool spsa_add_line(JobCtx *c, const char *key, const char *v)
{
    const char *sec = job_kind_section(JOB_SPSA);
    JobConfig *j = c->job;
    char name[64];
    double x[5];
    int used = 0;
    if (sscanf(v, " %63[^, \t] , %lf , %lf , %lf , %lf , %lf %n", name, &x[0], &x[1], &x[2], &x[3],
               &x[4], &used) != 6 ||
        v[used])
        return ctx_fail(c, JOB_ERR_VALUE, sec, key,
                        "'%s': expected NAME, start, min, max, c_end, r_end", v);
    int id = params_find(name);
    if (id < 0)
        return ctx_fail(c, JOB_ERR_VALUE, sec, key, "'%s' is not an engine weight", name);
    const ParamInfo *pi = &params_info[id];
    if (!(x[1] < x[2]) || x[0] < x[1] || x[0] > x[2] || x[1] < pi->min || x[2] > pi->max ||
        !(x[3] > 0) || !(x[4] > 0))
        return ctx_fail(c, JOB_ERR_VALUE, sec, key,
                        "%s: need %d <= min < max <= %d, min <= start <= max, c_end > 0, r_end > 0",
                        name, pi->min, pi->max);
    int k = 0;
    // A weight listed already (by params or an earlier param line) is replaced: the explicit
    // line wins whatever the order.
    while (k < j->spsa.param_count && j->spsa.params[k].id != id)
        k++;
    if (k >= JOB_SPSA_PARAMS_MAX)
        return ctx_fail(c, JOB_ERR_VALUE, sec, key, "more than %d parameters", JOB_SPSA_PARAMS_MAX);
    j->spsa.params[k] = (JobSpsaParam){id, true, x[0], x[1], x[2], x[3], x[4]};
    if (k == j->spsa.param_count)
        j->spsa.param_count++;
    return true;
}

/// Texel fits what the evaluation reads: "all" means every evaluation weight, and the search
/// rows (search_params.def) are never tuned by it.
static bool texel_tune_one(void *ctx, int id)
{
    ((bool *)ctx)[id] = !params_is_search(id);
    return true;
}

static bool texel_params(JobCtx *c, const char *key, const char *v)
{
    const char *sec = job_kind_section(JOB_TEXEL);
    JobConfig *j = c->job;
    char bad[64];
    if (params_list_names_search(v, bad, sizeof bad))
        return ctx_fail(c, JOB_ERR_VALUE, sec, key,
                        "'%s' is a search row: Texel fits only what the evaluation reads (tune the "
                        "search with kind = spsa)",
                        bad);
    // The first params line replaces the default (every evaluation weight); later ones add.
    if (!j->texel.has_params)
        memset(j->texel.tuned, 0, sizeof j->texel.tuned);
    j->texel.has_params = true;
    switch (params_parse_list(v, texel_tune_one, j->texel.tuned, bad, sizeof bad)) {
    case PARAMS_LIST_OK: return true;
    case PARAMS_LIST_UNKNOWN:
        return ctx_fail(c, JOB_ERR_VALUE, sec, key, "'%s' is not an engine weight", bad);
    default: return ctx_fail(c, JOB_ERR_VALUE, sec, key, "empty: give all, psq, eval or names");
    }
}

/// `data = A.xqp B.xqp ...`: blank-separated paths, each taken from the job file's directory.
static bool train_data(JobCtx *c, const char *key, const char *v)
{
    const char *sec = job_kind_section(JOB_TRAIN);
    JobConfig *j = c->job;
    char buf[JOB_LINE_MAX + 1];
    snprintf(buf, sizeof buf, "%s", v);
    // The last data line (or an override) replaces the list.
    j->train.data_count = 0;
    for (char *save, *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (j->train.data_count == JOB_TRAIN_DATA_MAX)
            return ctx_fail(c, JOB_ERR_VALUE, sec, key, "more than %d files", JOB_TRAIN_DATA_MAX);
        if (!ctx_set_path(c, sec, key, t, j->train.data[j->train.data_count], JOB_TEXT_MAX))
            return false;
        j->train.data_count++;
    }
    if (j->train.data_count == 0)
        return ctx_fail(c, JOB_ERR_VALUE, sec, key, "empty: give one or more .xqp files");
    return true;
}

typedef bool (*SetSpecial)(JobCtx *c, const char *key, const char *v);

/// The keys that are not plain (job_keys.def holds the plain ones).
static const struct {
    Section sec;
    const char *key;
    SetSpecial set;
} SPECIAL_KEYS[] = {
    {SEC_JOB, "kind", set_kind},
    {SEC_JOB, "rules", set_rules},
    {SEC_JOB, "tournament", set_tournament},
    {SEC_JOB, "resume", set_resume},
    {SEC_TIME, "scale", set_scale},
    {SEC_OPENINGS, "file", set_openings_file},
    {SEC_OPENINGS, "order", set_openings_order},
    {SEC_OPENINGS, "start", set_openings_start},
    {SEC_OPENINGS, "seed", set_openings_seed},
    {SEC_OPENINGS, "format", set_openings_format},
    {SEC_OUTPUT, "pgn_notation", set_pgn_notation},
    {SEC_SPRT, "model", set_model},
    {SEC_REPORT, "urls", set_urls},
    {SEC_REPORT, "method", set_method},
    {SEC_REPORT, "token_env", set_token_env},
    {SEC_BOOK, "score_view", set_score_view},
    {SEC_SPSA, "params", spsa_add_names},
    {SEC_SPSA, "param", spsa_add_line},
    {SEC_TEXEL, "params", texel_params},
    {SEC_TRAIN, "data", train_data},
};

/// A key of a section that is not an engine's: a special key, else a row of job_keys.def.
static bool key_plain(JobCtx *c, Section id, const char *key, const char *v)
{
    for (size_t i = 0; i < sizeof SPECIAL_KEYS / sizeof SPECIAL_KEYS[0]; i++)
        if (SPECIAL_KEYS[i].sec == id && !strcmp(SPECIAL_KEYS[i].key, key))
            return SPECIAL_KEYS[i].set(c, key, v);
    const JobKeyDef *k = ctx_key_find(SECTION_NAMES[id], key);
    if (id == SEC_VERIFY)
        c->job->verify.enabled = true; // a verify.* override asks for it as the section does
    // rounds has a default in its row, but a game job must write it (validate_games): that it
    // was written is remembered here.
    if (k && id == SEC_JOB && !strcmp(key, "rounds"))
        c->has_rounds = true;
    return k ? ctx_set_key(c, k, v) : ctx_unknown(c, SECTION_NAMES[id], key);
}

/// [time] keys of mixed hardware (scale, reference_nps, nps_floor); the section's other keys
/// are the engines' time control.
static bool is_scale_key(const char *key)
{
    return !strcmp(key, "scale") || !strcmp(key, "reference_nps") || !strcmp(key, "nps_floor");
}

/// One key = value in a section (a file line or an override). Values may end up in JSON
/// (report.json, result.json): they must be UTF-8.
static bool key_set(JobCtx *c, const char *section, const char *key, const char *v)
{
    char name[JOB_TEXT_MAX], sec[JOB_TEXT_MAX + 16], why[128];
    if (!inifile_utf8(v, why, sizeof why))
        return ctx_fail(c, JOB_ERR_VALUE, section, key, "%s", why);
    int id = section_parse(section, name, sizeof name);
    switch (id) {
    case SEC_ENGINE:
        snprintf(sec, sizeof sec, "engine %s", name);
        return engine_entry(c, engine_find(c, name), sec, key, v);
    case SEC_EACH: return engine_entry(c, TARGET_EACH, "each", key, v);
    case SEC_TIME:
        return is_scale_key(key) ? key_plain(c, SEC_TIME, key, v)
                                 : engine_entry(c, TARGET_TIME, "time", key, v);
    case -1:
        if (!section[0])
            return ctx_fail(c, JOB_ERR_KEY, NULL, NULL, "%s: key before any [section]", key);
        return ctx_fail(c, JOB_ERR_KEY, section, key, "unknown section");
    default: return key_plain(c, (Section)id, key, v);
    }
}

// ---- The file and the overrides -----------------------------------------------------------

/// A section header: known, and an engine's registers it (so an empty one counts).
static bool on_section(void *user, int line, const char *raw)
{
    JobCtx *c = user;
    char name[JOB_LINE_MAX + 1];
    c->at = (Origin){line, NULL};
    int id = section_parse(raw, name, sizeof name);
    if (id < 0)
        return ctx_fail(c, JOB_ERR_KEY, raw, NULL, "unknown section");
    // The first repetition is enough to refuse the file; it is said last
    // (refuse_repeated). Each [engine NAME] is a section of its own (a name twice: engine_add).
    if (id != SEC_ENGINE && c->section_lines[id] && !c->repeat_lines[1]) {
        c->repeated = id;
        c->repeat_lines[0] = c->section_lines[id];
        c->repeat_lines[1] = line;
    } else if (id != SEC_ENGINE && !c->section_lines[id]) {
        c->section_lines[id] = line;
    }
    if (id == SEC_VERIFY)
        c->job->verify.enabled = true; // an empty [verify] takes every default
    return id != SEC_ENGINE || engine_add(c, name);
}

/// A section written twice would be merged silently (a second [job] quietly changing the
/// first's kind): refused, both lines named. Said last, after the file's other faults (an
/// engine's name written twice is refused where it stands, by engine_add).
static bool refuse_repeated(JobCtx *c)
{
    if (!c->repeat_lines[1])
        return true;
    c->at = (Origin){c->repeat_lines[1], NULL};
    return ctx_fail(c, JOB_ERR_SYNTAX, SECTION_NAMES[c->repeated], NULL,
                    "written twice (lines %d and %d): give each section once", c->repeat_lines[0],
                    c->repeat_lines[1]);
}

static bool on_key(void *user, int line, const char *section, const char *key, const char *value)
{
    JobCtx *c = user;
    c->at = (Origin){line, NULL};
    return key_set(c, section, key, value);
}

static JobStatus status_of(IniStatus st)
{
    switch (st) {
    case INIFILE_OK: return JOB_OK;
    case INIFILE_ERR_IO: return JOB_ERR_IO;
    case INIFILE_ERR_TOO_BIG: return JOB_ERR_TOO_BIG;
    case INIFILE_ERR_NOMEM: return JOB_ERR_NOMEM;
    case INIFILE_ERR_OVERRIDE: return JOB_ERR_OVERRIDE;
    case INIFILE_ERR_VALUE: return JOB_ERR_VALUE;
    default: return JOB_ERR_SYNTAX;
    }
}

static void parse_file(JobCtx *c)
{
    const IniHandlers h = {on_section, on_key, c};
    char why[512];
    int line = 0;
    IniStatus st = inifile_parse(c->path, &h, &line, why, sizeof why);
    // STOPPED: a handler returned false, having recorded its error with its line.
    if (st == INIFILE_OK || st == INIFILE_ERR_STOPPED)
        return;     // a handler's error is recorded already
    c->st = JOB_OK; // the file's own error (e.g. a syntax error) came before any handler's
    c->at = (Origin){line, NULL};
    ctx_fail(c, status_of(st), NULL, NULL, "%s", why);
}

/// "section.key=value", or "engine.NAME.key=value" (a new NAME adds an engine).
static void apply_override(JobCtx *c, const char *text)
{
    c->at = (Origin){0, text};
    IniOverride o;
    char why[256];
    if (inifile_override(text, "engine", &o, why, sizeof why) != INIFILE_OK) {
        ctx_fail(c, JOB_ERR_OVERRIDE, NULL, NULL, "%s", why);
        return;
    }
    // Overrides come after the file and so win over it; one naming a new engine adds it.
    if (!strncmp(o.section, "engine ", 7) && engine_find(c, o.name) < 0 && !engine_add(c, o.name))
        return;
    key_set(c, o.section, o.key, o.value);
}

// ---- Validation ---------------------------------------------------------------------------

/// Every file the job writes in [output] dir has its own name: two keys naming one file
/// would have two writers overwrite each other (or a journal read back as a result).
static bool validate_outputs(JobCtx *c)
{
    JobOutput names[JOB_OUTPUTS_MAX];
    char diff[JOB_TEXT_MAX + 8];
    int n = job_outputs(c->job, names, diff, sizeof diff);
    for (int i = 0; i < n; i++) {
        if (!names[i].key || !names[i].name[0])
            continue;
        for (int k = 0; k < n; k++) {
            if (k == i || strcmp(names[i].name, names[k].name) || (names[k].key && k > i))
                continue; // of two keys, the later one is named first
            if (!names[k].key)
                return ctx_fail(c, JOB_ERR_VALUE, names[i].sec, names[i].key,
                                "'%s' is the name of %s, written in the same directory",
                                names[i].name, names[k].what);
            return ctx_fail(
                c, JOB_ERR_VALUE, names[i].sec, names[i].key,
                "'%s' is also the name of [%s] %s: every output file needs its own name",
                names[i].name, names[k].sec, names[k].key);
        }
    }
    return true;
}

/// scale = bench needs the reference machine's nps, and clocks to scale (game jobs).
static bool validate_scale(JobCtx *c)
{
    const JobConfig *j = c->job;
    c->at = (Origin){0, NULL};
    if (!j->scale.bench)
        return true;
    if (!job_kind_def(j->kind)->clocked)
        return ctx_fail(c, JOB_ERR_VALUE, "time", "scale",
                        "bench scales the clocks of games: a %s job plays none (remove it)",
                        job_kind_name(j->kind));
    if (!j->scale.reference_nps)
        return ctx_fail(c, JOB_ERR_MISSING, "time", "reference_nps",
                        "missing: scale = bench needs the bench nodes/s of the machine the time "
                        "control is meant for (`xqforge bench` prints it)");
    return true;
}

/// [verify] follows a tuning (spsa, texel): bounds as [sprt]'s, and a clock or nodes that the
/// engines' parser takes.
static bool validate_verify(JobCtx *c)
{
    const JobConfig *j = c->job;
    c->at = (Origin){c->section_lines[SEC_VERIFY], NULL};
    if (!j->verify.enabled)
        return true;
    if (j->kind != JOB_SPSA && j->kind != JOB_TEXEL)
        return ctx_fail(c, JOB_ERR_VALUE, "verify", NULL,
                        "verifies a tuning: only spsa and texel jobs have it (a %s job: remove "
                        "the section)",
                        job_kind_name(j->kind));
    if (!(j->verify.elo0 < j->verify.elo1))
        return ctx_fail(c, JOB_ERR_VALUE, "verify", "elo1", "elo0 (%g) must be below elo1 (%g)",
                        j->verify.elo0, j->verify.elo1);
    if (!(j->verify.alpha + j->verify.beta < 1))
        return ctx_fail(c, JOB_ERR_VALUE, "verify", "beta", "alpha + beta must be below 1");
    if (j->verify.nodes > 0)
        return true;
    if (!j->verify.tc[0])
        return ctx_fail(c, JOB_ERR_MISSING, "verify", "tc",
                        "empty: give a time control (10+0.1) or nodes = N");
    PlayerConfig *pc = calloc(1, sizeof *pc); // large: not on the stack
    TimeControl tc = {0};
    char why[256] = "out of memory";
    bool ok =
        pc && engine_spec_set(pc, &tc, "tc", j->verify.tc, NULL, why, sizeof why) == ENGINE_SPEC_OK;
    free(pc);
    return ok || ctx_fail(c, JOB_ERR_VALUE, "verify", "tc", "%s", why);
}

static bool validate(JobCtx *c)
{
    JobConfig *j = c->job;
    c->at = (Origin){0, NULL};
    if (!c->has_kind)
        return ctx_fail(c, JOB_ERR_MISSING, "job", "kind",
                        "missing (sprt, match, spsa, texel, book, doe, datagen, train or loop)");
    // The kind's own rules first (job_kinds.c), then what holds for every kind.
    bool ok = job_kind_def(j->kind)->validate(c);
    if (!ok || !validate_scale(c) || !validate_verify(c))
        return false;
    // The kind's check may have pointed at a line: what follows is about the job as a whole.
    c->at = (Origin){0, NULL};
    int64_t total = job_pairs_total(j);
    if (total > JOB_PAIRS_MAX)
        return ctx_fail(c, JOB_ERR_VALUE, "job", "rounds",
                        "%d rounds x %d pairings = %" PRId64 " %s, above the limit of %d "
                        "(JOB_PAIRS_MAX)",
                        j->rounds, job_pairing_count(j), total, j->repeat ? "game pairs" : "games",
                        JOB_PAIRS_MAX);
    if (j->report.token_env[0] && j->report.token_file[0])
        return ctx_fail(c, JOB_ERR_VALUE, "report", "token_file",
                        "give token_env or token_file, not both");
    return validate_outputs(c);
}

// ---- Loading ------------------------------------------------------------------------------

/// The defaults: the plain keys' from their rows, and those of the special keys.
static void job_defaults(JobConfig *j)
{
    memset(j, 0, sizeof *j); // kind: none, [job] kind is mandatory
    j->rules = rules_config_default(RULES_SEED);
    ctx_key_defaults(j);
    j->seed = 1;                                // [openings] seed
    for (int i = 0; i < JOB_PLAYERS_MAX; i++) { // engines built from source
        j->sources[i].build_timeout_s = 1800;
        j->sources[i].bench_mode = JOB_BENCH_AUTO; // every rank's build proves the same bench
        snprintf(j->sources[i].bench_cmd, sizeof j->sources[i].bench_cmd, "bench");
    }
    for (int id = 0; id < PARAM_NB; id++)
        j->texel.tuned[id] = !params_is_search(id); // the evaluation's weights
}

JobStatus job_load(const char *path, const char *const *overrides, int n_overrides, JobConfig *out,
                   char *why, size_t why_len)
{
    return job_load_at(path, NULL, NULL, overrides, n_overrides, out, why, why_len);
}

JobStatus job_load_at(const char *path, const char *file_dir, const char *override_dir,
                      const char *const *overrides, int n_overrides, JobConfig *out, char *why,
                      size_t why_len)
{
    char spare[8];
    JobCtx *c = calloc(1, sizeof *c);
    if (!why || !why_len)
        why = spare, why_len = sizeof spare;
    why[0] = '\0';
    if (!c) {
        snprintf(why, why_len, "%s: out of memory", path);
        return JOB_ERR_NOMEM;
    }
    job_defaults(out);
    c->path = path;
    c->override_dir = override_dir;
    c->job = out;
    c->why = why;
    c->why_len = why_len;
    // Relative paths in the file are taken from its directory (a missing directory is reported
    // after the parse, which names a missing file more plainly), or from file_dir when given.
    char dir_why[JOB_TEXT_MAX + 128];
    IniStatus ds = INIFILE_OK;
    if (file_dir && strlen(file_dir) < sizeof out->file_dir)
        snprintf(out->file_dir, sizeof out->file_dir, "%s", file_dir);
    else
        ds = inifile_dir(path, out->file_dir, sizeof out->file_dir, dir_why, sizeof dir_why);
    if (ds != INIFILE_OK)
        out->file_dir[0] = '\0';
    parse_file(c);
    if (ds != INIFILE_OK)
        ctx_fail(c, status_of(ds), NULL, NULL, "%s", dir_why);
    // Each stage only after a clean one before it: the error reported is the first one, in
    // the order a user reads a job (file, overrides, then the job as a whole).
    for (int i = 0; i < n_overrides && c->st == JOB_OK; i++)
        apply_override(c, overrides[i]);
    if (c->st == JOB_OK)
        validate(c);
    if (c->st == JOB_OK)
        refuse_repeated(c);
    JobStatus st = c->st;
    free(c);
    return st;
}

double job_time_scale(uint64_t reference_nps, uint64_t bench_nps)
{
    if (!reference_nps)
        return 1.0;
    // The factor stays within [1/JOB_SCALE_MAX, JOB_SCALE_MAX]; a rank without a bench gets
    // the largest, as the slowest would.
    if (!bench_nps)
        return JOB_SCALE_MAX;
    double s = (double)reference_nps / (double)bench_nps;
    return s > JOB_SCALE_MAX ? JOB_SCALE_MAX : s < 1.0 / JOB_SCALE_MAX ? 1.0 / JOB_SCALE_MAX : s;
}

/// ms x scale, rounded; a limit that was given stays at least 1 ms (0 would mean none).
static int64_t scale_ms(int64_t ms, double scale)
{
    if (ms <= 0)
        return ms;
    int64_t r = llround((double)ms * scale);
    return r > 0 ? r : 1;
}

TimeControl job_scale_time_control(const TimeControl *tc, double scale)
{
    TimeControl out = *tc;
    out.base_ms = scale_ms(tc->base_ms, scale);
    out.inc_ms = scale_ms(tc->inc_ms, scale);
    out.movetime_ms = scale_ms(tc->movetime_ms, scale);
    return out;
}

/// fishtest's estimate_game_duration for one player's time control: seconds of its clock in
/// a game of 68 moves (its half of the game).
static double player_seconds(const JobPlayer *p)
{
    const TimeControl *tc = &p->tc;
    const double moves = 68;
    double s;
    if (tc->base_ms > 0 || tc->inc_ms > 0)
        s = tc->base_ms / 1000.0 * (tc->moves > 0 ? moves / tc->moves : 1) +
            moves * tc->inc_ms / 1000.0;
    else if (tc->movetime_ms > 0)
        s = moves * tc->movetime_ms / 1000.0;
    else if (tc->nodes > 0)
        s = moves * (double)tc->nodes / JOB_NOMINAL_NPS;
    else
        return 10 + moves * 0.1; // depth or nothing: counted as the STC
    long threads = 1;
    for (int k = 0; k < p->cfg.option_count; k++)
        if (!strcasecmp(p->cfg.options[k].name, "Threads"))
            threads = strtol(p->cfg.options[k].value, NULL, 10);
    return s * (double)(threads > 1 ? threads : 1);
}

double job_tc_ratio(const JobConfig *job)
{
    if (job->player_count < 1)
        return 1;
    double sum = 0;
    for (int i = 0; i < job->player_count; i++)
        sum += player_seconds(&job->players[i]);
    // Both sides of a game: twice a player's mean, ended at 92% on average (fishtest).
    double game = 2 * 0.92 * sum / job->player_count, stc = 2 * 0.92 * (10 + 68 * 0.1);
    return game / stc;
}

void job_game_config(const JobConfig *job, int a, int b, GameConfig *out)
{
    memset(out, 0, sizeof *out);
    out->rules = job->rules;
    // Per player, not per colour: each engine keeps its own time control on either side.
    out->tc[0] = job->players[a].tc;
    out->tc[1] = job->players[b].tc;
    out->draw = job->draw;
    out->resign = job->resign;
    out->max_plies = job->max_plies;
}

int64_t job_pairs_total(const JobConfig *job)
{
    return (int64_t)job->rounds * job_pairing_count(job);
}
