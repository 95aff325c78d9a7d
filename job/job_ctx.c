// SPDX-License-Identifier: MIT
// The job parser's context: errors and setters (job_ctx.h).
#include "job_ctx.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine_spec.h"
#include "job_source.h"
#include "match.h"

/// Records the first error as "where: [section] key: message"; later ones are dropped.
__attribute__((format(printf, 5, 6))) bool ctx_fail(JobCtx *c, JobStatus st, const char *section,
                                                    const char *key, const char *fmt, ...)
{
    // The first error is the one to fix; later ones are often its consequences. Always false,
    // so a setter may end with `return ctx_fail(...)`.
    if (c->st != JOB_OK)
        return false;
    c->st = st;
    char where[JOB_TEXT_MAX + 64], what[512];
    if (c->at.override)
        snprintf(where, sizeof where, "override '%s'", c->at.override);
    else if (c->at.line > 0)
        snprintf(where, sizeof where, "%s:%d", c->path, c->at.line);
    else
        snprintf(where, sizeof where, "%s", c->path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (section && key)
        snprintf(c->why, c->why_len, "%s: [%s] %s: %s", where, section, key, what);
    else if (section)
        snprintf(c->why, c->why_len, "%s: [%s] %s", where, section, what);
    else
        snprintf(c->why, c->why_len, "%s: %s", where, what);
    return false;
}

/// The index of v among names (exact and case-sensitive), -1 if none.
int ctx_parse_name(const char *v, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i]))
            return i;
    return -1;
}

/// Where a relative path written at c->at comes from: the job file's directory, or, for an
/// override, the current directory (NULL: kept as typed).
const char *ctx_path_base(const JobCtx *c)
{
    return c->at.override ? c->override_dir : c->job->file_dir;
}

/// A key whose value is one of names; sets *out to its index.
bool ctx_set_enum(JobCtx *c, const char *sec, const char *key, const char *v,
                  const char *const *names, int n, int *out)
{
    int i = ctx_parse_name(v, names, n);
    if (i < 0) {
        char list[256] = "";
        for (int k = 0; k < n; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "",
                     names[k]);
        return ctx_fail(c, JOB_ERR_VALUE, sec, key, "'%s': expected one of %s", v, list);
    }
    *out = i;
    return true;
}

bool ctx_set_long(JobCtx *c, const char *sec, const char *key, const char *v, long lo, long hi,
                  long *out)
{
    char why[256];
    return inifile_long(v, lo, hi, out, why, sizeof why) ||
           ctx_fail(c, JOB_ERR_VALUE, sec, key, "%s", why);
}

bool ctx_set_int(JobCtx *c, const char *sec, const char *key, const char *v, long lo, long hi,
                 int *out)
{
    long n;
    if (!ctx_set_long(c, sec, key, v, lo, hi, &n))
        return false;
    // An int key's lo..hi lie within int (its row says so): the value survives the cast.
    *out = (int)n;
    return true;
}

bool ctx_set_dbl(JobCtx *c, const char *sec, const char *key, const char *v, double lo, double hi,
                 double *out)
{
    char why[256];
    return inifile_double(v, lo, hi, out, why, sizeof why) ||
           ctx_fail(c, JOB_ERR_VALUE, sec, key, "%s", why);
}

bool ctx_set_bool(JobCtx *c, const char *sec, const char *key, const char *v, bool *out)
{
    return inifile_bool(v, out) ||
           ctx_fail(c, JOB_ERR_VALUE, sec, key, "'%s': expected true/false, yes/no or on/off", v);
}

bool ctx_set_text(JobCtx *c, const char *sec, const char *key, const char *v, char *dst, size_t cap)
{
    char why[256];
    return inifile_text(dst, cap, v, why, sizeof why) ||
           ctx_fail(c, JOB_ERR_VALUE, sec, key, "%s", why);
}

/// A path: from the file, taken from the job file's directory; from an override, as typed.
bool ctx_set_path(JobCtx *c, const char *sec, const char *key, const char *v, char *dst, size_t cap)
{
    char why[512];
    return inifile_path(ctx_path_base(c), v, dst, cap, why, sizeof why) == INIFILE_OK ||
           ctx_fail(c, JOB_ERR_VALUE, sec, key, "%s", why);
}

/// An output file name: a plain name inside [output] dir, so that a job file cannot write
/// outside the directory its runner chose (no '/', not "." or "..").
bool ctx_set_file_name(JobCtx *c, const char *sec, const char *key, const char *v, char *dst,
                       size_t cap)
{
    if (strchr(v, '/') || !strcmp(v, ".") || !strcmp(v, ".."))
        return ctx_fail(c, JOB_ERR_VALUE, sec, key,
                        "'%s': a file name in [output] dir, not a path (set dir instead)", v);
    return ctx_set_text(c, sec, key, v, dst, cap);
}

/// A misspelled key is an error, never ignored: a job must not run on a default the user
/// meant to change.
bool ctx_unknown(JobCtx *c, const char *sec, const char *key)
{
    return ctx_fail(c, JOB_ERR_KEY, sec, key, "unknown key");
}

/// Applies the settings of target to player i: time, each, then its own section.
bool ctx_apply_entries(JobCtx *c, int i, int target)
{
    JobPlayer *p = &c->job->players[i];
    char why[512], sec[64];
    // In the order written: within one section (or after it, an override) the later line wins.
    for (int k = 0; k < c->entry_count; k++) {
        const Entry *e = &c->entries[k];
        if (e->target != target)
            continue;
        const char *base = e->at.override ? c->override_dir : c->job->file_dir;
        bool ok = job_source_is_key(e->key)
                      ? job_source_set(&c->job->sources[i], e->key, e->value, base, why, sizeof why)
                      : engine_spec_set(&p->cfg, &p->tc, e->key, e->value, base, why, sizeof why) ==
                            ENGINE_SPEC_OK;
        if (!ok) {
            c->at = e->at;
            snprintf(sec, sizeof sec, "%s%s", target >= 0 ? "engine " : "",
                     target == TARGET_TIME   ? "time"
                     : target == TARGET_EACH ? "each"
                                             : c->engines[i]);
            return ctx_fail(c, JOB_ERR_VALUE, sec, e->key, "%s", why);
        }
    }
    return true;
}

bool ctx_build_player(JobCtx *c, int i, bool tunes_eval)
{
    JobPlayer *p = &c->job->players[i];
    char sec[64];
    snprintf(sec, sizeof sec, "engine %s", c->engines[i]);
    snprintf(p->cfg.name, sizeof p->cfg.name, "%s", c->engines[i]);
    // The default timemargin, which any entry below may change. Then [time], [each] and the
    // engine's own section, most general first: the most specific wins whatever the file's order.
    p->tc.margin_ms = 100;
    if (!ctx_apply_entries(c, i, TARGET_TIME) || !ctx_apply_entries(c, i, TARGET_EACH) ||
        !ctx_apply_entries(c, i, i))
        return false;
    // What follows is about the engine as a whole: errors name its section's line.
    c->at = (Origin){c->engine_lines[i], NULL};
    char why[512];
    const char *skey;
    if (!job_source_check(&c->job->sources[i], &p->cfg, &skey, why, sizeof why))
        return ctx_fail(c, JOB_ERR_VALUE, sec, skey, "%s", why);
    if (c->job->sources[i].source[0] && p->cfg.proto == PROTO_BUILTIN)
        p->cfg.proto = PROTO_UCI; // the built program speaks UCI unless proto says otherwise
    if (p->cfg.proto != PROTO_BUILTIN && !p->cfg.cmd[0] && !c->job->sources[i].source[0])
        return ctx_fail(c, JOB_ERR_MISSING, sec, "cmd", "proto %s needs cmd = PATH",
                        player_proto_name(p->cfg.proto));
    const TimeControl *tc = &p->tc;
    if (!tc->base_ms && !tc->inc_ms && !tc->movetime_ms && !tc->depth && !tc->nodes)
        return ctx_fail(c, JOB_ERR_MISSING, sec, NULL,
                        "no time control: give tc, st, depth or nodes (here, in [each] or [time])");
    if (!engine_spec_check_eval(&p->cfg, tunes_eval, why, sizeof why))
        return ctx_fail(c, JOB_ERR_VALUE, sec, "option.UseNNUE", "%s", why);
    return true;
}

// ---- Plain keys (job_keys.def) ------------------------------------------------------------

// A row's hi and default are numbers, or strings for a string key: each goes to its field.
#define KEY_NUM(x)  _Generic((x), char * : 0.0, default : (x))
#define KEY_TEXT(x) _Generic((x), char * : (x), default : NULL)
#define KEY(sec, nm, ty, fld, lo_, hi_, def_, fl)                                                  \
    {#sec,                                                                                         \
     #nm,                                                                                          \
     ty,                                                                                           \
     offsetof(JobConfig, fld),                                                                     \
     sizeof(((JobConfig *)0)->fld),                                                                \
     lo_,                                                                                          \
     KEY_NUM(hi_),                                                                                 \
     KEY_NUM(def_),                                                                                \
     KEY_TEXT(def_),                                                                               \
     KEY_TEXT(hi_),                                                                                \
     fl},
static const JobKeyDef KEYS[] = {
#include "job_keys.def"
};
#undef KEY
enum { KEY_NB = sizeof KEYS / sizeof KEYS[0] };

const JobKeyDef *job_keys(int *count)
{
    *count = KEY_NB;
    return KEYS;
}

const JobKeyDef *ctx_key_find(const char *section, const char *key)
{
    for (int i = 0; i < KEY_NB; i++)
        if (!strcmp(KEYS[i].section, section) && !strcmp(KEYS[i].name, key))
            return &KEYS[i];
    return NULL;
}

bool ctx_set_key(JobCtx *c, const JobKeyDef *k, const char *v)
{
    void *p = (char *)c->job + k->offset;
    const char *s = k->section, *key = k->name;
    long n;
    switch (k->type) {
    case KEY_INT: return ctx_set_int(c, s, key, v, (long)k->lo, (long)k->hi, p);
    case KEY_DBL: return ctx_set_dbl(c, s, key, v, k->lo, k->hi, p);
    case KEY_BOOL: return ctx_set_bool(c, s, key, v, p);
    case KEY_I64:
    // Read as a long: a 64-bit key's range must fit one (its row's lo..hi).
    case KEY_U64:
        if (!ctx_set_long(c, s, key, v, (long)k->lo, (long)k->hi, &n))
            return false;
        if (k->type == KEY_I64)
            *(int64_t *)p = n;
        else
            *(uint64_t *)p = (uint64_t)n;
        return true;
    case KEY_STR: break;
    }
    // An empty name elsewhere means no such file (pgn =); the run cannot do without these.
    if (!v[0] && (k->flags & KEY_REQUIRED))
        return ctx_fail(c, JOB_ERR_VALUE, s, key, "empty: give %s",
                        k->flags & KEY_DIR ? "a directory" : "a file name");
    if (k->flags & KEY_FILE_NAME)
        return ctx_set_file_name(c, s, key, v, p, k->size);
    if (k->flags & KEY_PATH)
        return ctx_set_path(c, s, key, v, p, k->size);
    return ctx_set_text(c, s, key, v, p, k->size);
}

/// Every plain key's default comes from its row: one place states it, next to its range.
void ctx_key_defaults(JobConfig *j)
{
    for (int i = 0; i < KEY_NB; i++) {
        const JobKeyDef *k = &KEYS[i];
        void *p = (char *)j + k->offset;
        switch (k->type) {
        case KEY_INT: *(int *)p = (int)k->def; break;
        case KEY_I64: *(int64_t *)p = (int64_t)k->def; break;
        case KEY_U64: *(uint64_t *)p = (uint64_t)k->def; break;
        case KEY_DBL: *(double *)p = k->def; break;
        case KEY_BOOL: *(bool *)p = k->def != 0; break;
        case KEY_STR: snprintf(p, k->size, "%s", k->def_text); break;
        }
    }
}
