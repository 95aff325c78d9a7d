// SPDX-License-Identifier: MIT
// The identity of a run (what is in it and why: identity.h). Hashes are 64-bit FNV-1a,
// written as 16 hex digits: files by their bytes, weight tables by name and value of every
// weight, so a weight added to params.def changes them too.
#include "identity.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <limits.h>
#include <math.h>

#include "files.h"
#include "job_kinds.h"
#include "openings.h"
#include "params.h"
#include "search.h"
#include "why.h"

#define FNV_OFFSET FILES_FNV_BASIS

enum { HASH_TEXT = 17, SHOWN_MAX = 60 }; // 16 hex digits and NUL; value chars in a diff line

/// A bounded text being built: n counts every byte asked for, buf holds what fits.
typedef struct {
    char *buf;
    // n past cap is what identity_encode reports: the size needed, whatever fit.
    size_t cap, n;
    uint64_t hash; // FNV-1a of every byte, written or not
} Text;

static const char *const STATUS_TEXT[IDENTITY_STATUS_NB] = {
    [IDENTITY_OK] = "ok",
    [IDENTITY_ERR_NOMEM] = "out of memory",
    [IDENTITY_ERR_ENGINE] = "an engine's weights cannot be resolved",
    [IDENTITY_ERR_TOO_LARGE] = "identity too large",
    [IDENTITY_ERR_SYNTAX] = "not an identity text",
};

const char *identity_strerror(IdentityStatus st)
{
    return (unsigned)st < IDENTITY_STATUS_NB ? STATUS_TEXT[st] : "unknown identity status";
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) { return files_fnv(h, data, n); }

static void text_putc(Text *t, char c)
{
    if (t->n + 1 < t->cap)
        t->buf[t->n] = c;
    t->n++;
    t->hash = files_fnv(t->hash, &c, 1);
}

static void text_puts(Text *t, const char *s)
{
    for (; *s; s++)
        text_putc(t, *s);
}

/// For short pieces (a time control's parts); one longer than 256 bytes would be dropped
/// whole, never cut.
__attribute__((format(printf, 2, 3))) static void text_printf(Text *t, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof small)
        text_puts(t, small);
}

/// NUL-terminates what fits.
static void text_end(Text *t)
{
    if (t->cap)
        t->buf[t->n < t->cap ? t->n : t->cap - 1] = '\0';
}

// ---- Items --------------------------------------------------------------------------------

void identity_init(Identity *id) { *id = (Identity){0}; }

void identity_destroy(Identity *id)
{
    for (int i = 0; i < id->count; i++) {
        free(id->items[i].key);
        free(id->items[i].value);
    }
    free(id->items);
    identity_init(id);
}

/// Takes ownership of key and value (both freed on failure).
static IdentityStatus add_owned(Identity *id, char *key, char *value)
{
    IdentityStatus st = IDENTITY_OK;
    if (!key || !value) {
        st = IDENTITY_ERR_NOMEM;
        // A bound before the text's: a runaway list fails here, before it is encoded.
    } else if (id->count >= IDENTITY_ITEMS_MAX) {
        st = IDENTITY_ERR_TOO_LARGE;
    } else if (id->count == id->cap) {
        int cap = id->cap ? 2 * id->cap : 32;
        IdentityItem *items = realloc(id->items, (size_t)cap * sizeof *items);
        if (items) {
            id->items = items;
            id->cap = cap;
        } else {
            st = IDENTITY_ERR_NOMEM;
        }
    }
    if (st != IDENTITY_OK) {
        free(key);
        free(value);
        return st;
    }
    id->items[id->count++] = (IdentityItem){key, value};
    return IDENTITY_OK;
}

IdentityStatus identity_add(Identity *id, const char *key, const char *value)
{
    return add_owned(id, strdup(key), strdup(value));
}

const char *identity_get(const Identity *id, const char *key)
{
    for (int i = 0; i < id->count; i++)
        if (!strcmp(id->items[i].key, key))
            return id->items[i].value;
    return NULL;
}

/// A new string of the formatted text, or NULL when out of memory.
__attribute__((format(printf, 1, 0))) static char *str_vprintf(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *s = n < 0 ? NULL : malloc((size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, again);
    va_end(again);
    return s;
}

__attribute__((format(printf, 1, 2))) static char *str_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = str_vprintf(fmt, ap);
    va_end(ap);
    return s;
}

IdentityStatus identity_addf(Identity *id, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *value = str_vprintf(fmt, ap);
    va_end(ap);
    return add_owned(id, strdup(key), value);
}

/// "engine.NAME.SUB" with '.' and '\' in the name escaped, so that the name can be read back.
/// engine_add allows no '.' in a name, but the escape keeps engine_sub's split at the first
/// plain '.' right whatever a name holds.
static char *engine_key(const char *name, const char *sub)
{
    size_t len = strlen(name), sub_len = strlen(sub);
    char *key = malloc(7 + 2 * len + 1 + sub_len + 1);
    if (!key)
        return NULL;
    char *p = key;
    memcpy(p, "engine.", 7);
    p += 7;
    for (const char *s = name; *s; s++) {
        if (*s == '.' || *s == '\\')
            *p++ = '\\';
        *p++ = *s;
    }
    *p++ = '.';
    memcpy(p, sub, sub_len + 1);
    return key;
}

__attribute__((format(printf, 4, 5))) static IdentityStatus
add_engine(Identity *id, const char *name, const char *sub, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *value = str_vprintf(fmt, ap);
    va_end(ap);
    return add_owned(id, engine_key(name, sub), value);
}

// ---- Resolving what a job names -----------------------------------------------------------

/// The content hash of a file as 16 hex digits, or "unreadable (path: why)".
/// A file that cannot be read is not an error here: the value names the path and why, and
/// it differs from every hash, so a resume sees the item change.
static char *file_hash(const char *path)
{
    FILE *f = files_open_regular(path); // a FIFO in a file's place never blocks the run
    uint64_t h = FNV_OFFSET;
    if (f) {
        unsigned char buf[1 << 14];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0)
            h = fnv1a(h, buf, n);
        if (ferror(f)) {
            int err = errno ? errno : EIO;
            fclose(f);
            f = NULL;
            errno = err;
        } else {
            fclose(f);
            return str_printf("%016llx", (unsigned long long)h);
        }
    }
    return str_printf("unreadable (%s: %s)", path,
                      errno == EINVAL ? "not a regular file" : strerror(errno));
}

/// What exec accepts: a regular file we may execute.
static bool is_program(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/// The program an external player runs: cmd, relative to its workdir when it has one (the
/// player execs it there, without a PATH search). A bare name that is no program there is
/// looked up in PATH, as a shell would.
static void program_path(const PlayerConfig *pc, char *out, size_t len)
{
    if (pc->cmd[0] != '/' && pc->workdir[0])
        snprintf(out, len, "%s/%s", pc->workdir, pc->cmd);
    else
        snprintf(out, len, "%s", pc->cmd);
    // The file hashed must be the one the player runs: a cmd with a '/' is never searched for
    // in PATH, as with execvp.
    if (strchr(pc->cmd, '/') || is_program(out))
        return;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;;) {
        const char *end = strchr(p, ':');
        // An empty PATH entry is the current directory, as for a shell.
        size_t dir_len = end ? (size_t)(end - p) : strlen(p);
        char cand[PATH_MAX];
        int n = dir_len ? snprintf(cand, sizeof cand, "%.*s/%s", (int)dir_len, p, pc->cmd)
                        : snprintf(cand, sizeof cand, "%s", pc->cmd);
        if (n > 0 && (size_t)n < sizeof cand && is_program(cand)) {
            snprintf(out, len, "%s", cand);
            return;
        }
        if (!end)
            return;
        p = end + 1;
    }
}

/// Every row's name and value, the value as 4 little-endian bytes: the same hash on any
/// host, and a row added to params.def changes it.
static uint64_t weights_hash(const Weights *w)
{
    uint64_t h = FNV_OFFSET;
    for (int i = 0; i < PARAM_NB; i++) {
        uint8_t v[4];
        for (int b = 0; b < 4; b++)
            v[b] = (uint8_t)((uint32_t)w->v[i] >> (8 * b));
        h = fnv1a(h, params_info[i].name, strlen(params_info[i].name) + 1);
        h = fnv1a(h, v, sizeof v);
    }
    return h;
}

/// The hash of the weights a builtin player searches with (games/player.h resolves them).
static IdentityStatus builtin_weights(const PlayerConfig *pc, uint64_t *hash, char *why,
                                      size_t why_len)
{
    Weights w;
    char msg[1024];
    if (!player_builtin_weights(pc, &w, msg, sizeof msg)) {
        why_set(why, why_len, "engine '%s': %s", pc->name, msg);
        return IDENTITY_ERR_ENGINE;
    }
    *hash = weights_hash(&w);
    return IDENTITY_OK;
}

/// Options that do not make the builtin player's engine: its weights (in the weights hash),
/// the rules (the job's rules are set before every game) and a button.
static bool builtin_option_ignored(const char *name)
{
    return params_find(name) >= 0 || !strcasecmp(name, "Rules") ||
           !strcasecmp(name, "CountingDefault") || !strcasecmp(name, "Clear Hash");
}

/// Case-insensitive first (UCI option names are), then exact: a total order, so the sorted
/// list is the same whatever order the job gave.
static int option_cmp(const void *a, const void *b)
{
    const PlayerOption *x = *(const PlayerOption *const *)a, *y = *(const PlayerOption *const *)b;
    int c = strcasecmp(x->name, y->name);
    return c ? c : strcmp(x->name, y->name);
}

/// Options whose value names a file the engine reads (a net): the experiment is the file's
/// bytes, not its name, so a net retrained to the same path is another experiment.
static bool option_is_file(const char *name) { return !strcasecmp(name, "EvalFile"); }

/// A file option's value as its content hash; the special values that name no file (empty,
/// <default>, <empty>: the embedded net) stay as they are. A relative path is the engine's
/// working directory's when it has one (as the engine opens it), else ours.
static char *option_file_value(const PlayerConfig *pc, const char *v)
{
    if (!v[0] || v[0] == '<')
        return strdup(v);
    // A builtin engine runs in our process, so in our directory whatever its workdir.
    if (v[0] != '/' && pc->proto != PROTO_BUILTIN && pc->workdir[0]) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", pc->workdir, v);
        return file_hash(path);
    }
    return file_hash(v);
}

/// One item per option, sorted by name; an option set twice counts with its last value.
static IdentityStatus add_options(Identity *id, const PlayerConfig *pc)
{
    const PlayerOption *opts[PLAYER_OPTIONS_MAX];
    int n = 0;
    for (int i = 0; i < pc->option_count && i < PLAYER_OPTIONS_MAX; i++) {
        const PlayerOption *o = &pc->options[i];
        bool later = false;
        // The engine is sent every setting in order, so the last of a name is the one it uses.
        for (int k = i + 1; k < pc->option_count && !later; k++)
            later = !strcasecmp(pc->options[k].name, o->name);
        if (!later && !(pc->proto == PROTO_BUILTIN && builtin_option_ignored(o->name)))
            opts[n++] = o;
    }
    qsort(opts, (size_t)n, sizeof *opts, option_cmp);
    IdentityStatus st = IDENTITY_OK;
    for (int i = 0; i < n && !st; i++) {
        char sub[PLAYER_TEXT_MAX + 8];
        snprintf(sub, sizeof sub, "option.%s", opts[i]->name);
        if (option_is_file(opts[i]->name))
            st = add_owned(id, engine_key(pc->name, sub), option_file_value(pc, opts[i]->value));
        else
            st = add_engine(id, pc->name, sub, "%s", opts[i]->value);
    }
    return st;
}

/// The arguments, each quoted as a shell would need it.
static IdentityStatus add_args(Identity *id, const PlayerConfig *pc)
{
    size_t cap = 1;
    for (int i = 0; i < pc->argc; i++)
        cap += 4 * strlen(pc->args[i]) + 3;
    char *value = malloc(cap);
    if (!value)
        return IDENTITY_ERR_NOMEM;
    Text t = {value, cap, 0, 0};
    // Quoted, so that arguments that differ only in how they split ("a b" against a, b) make
    // different items, and the item reads as the command line it is.
    for (int i = 0; i < pc->argc; i++) {
        const char *a = pc->args[i];
        bool plain = *a && !a[strcspn(a, " \t'\"\\$`*?[]{}()<>|&;#~")];
        if (i)
            text_putc(&t, ' ');
        if (plain) {
            text_puts(&t, a);
            continue;
        }
        text_putc(&t, '\'');
        for (; *a; a++)
            *a == '\'' ? text_puts(&t, "'\\''") : text_putc(&t, *a);
        text_putc(&t, '\'');
    }
    text_end(&t);
    return add_owned(id, engine_key(pc->name, "args"), value);
}

/// The limits a player is given: clock, fixed time per move, depth, nodes ("inf": none).
static void tc_text(const TimeControl *tc, char *out, size_t len)
{
    Text t = {out, len, 0, 0};
    if (tc->base_ms || tc->inc_ms) {
        if (tc->moves)
            text_printf(&t, "%d/", tc->moves);
        text_printf(&t, "%g+%g", tc->base_ms / 1000.0, tc->inc_ms / 1000.0);
    }
    if (tc->movetime_ms)
        text_printf(&t, "%sst=%g", t.n ? " " : "", tc->movetime_ms / 1000.0);
    if (tc->depth)
        text_printf(&t, "%sdepth=%d", t.n ? " " : "", tc->depth);
    if (tc->nodes)
        text_printf(&t, "%snodes=%llu", t.n ? " " : "", (unsigned long long)tc->nodes);
    if (!t.n)
        text_puts(&t, "inf");
    text_end(&t);
}

static int text_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/// An external engine's process settings that change what it does: the variables the job
/// sets (sorted by name, the last of a name counting), the names it passes through (not their
/// values, which are the host's) and its resource limits. Nothing when unused.
static IdentityStatus add_process_items(Identity *id, const PlayerConfig *pc)
{
    const char *set[PLAYER_ENV_MAX];
    int n = 0;
    for (int i = 0; i < pc->env_count && i < PLAYER_ENV_MAX; i++)
        set[n++] = pc->env[i];
    qsort(set, (size_t)n, sizeof *set, text_cmp);
    IdentityStatus st = IDENTITY_OK;
    for (int i = 0; i < n && !st; i++) {
        const char *eq = strchr(set[i], '=');
        char sub[PLAYER_TEXT_MAX + 8];
        snprintf(sub, sizeof sub, "env.%.*s", eq ? (int)(eq - set[i]) : (int)strlen(set[i]),
                 set[i]);
        st = add_engine(id, pc->name, sub, "%s", eq ? eq + 1 : "");
    }
    if (!st && pc->passenv[0]) {
        char buf[PLAYER_TEXT_MAX], *save = NULL, *names[PLAYER_TEXT_MAX / 2], list[PLAYER_TEXT_MAX];
        int k = 0;
        snprintf(buf, sizeof buf, "%s", pc->passenv);
        for (char *w = strtok_r(buf, " \t,", &save); w && k < PLAYER_TEXT_MAX / 2;
             w = strtok_r(NULL, " \t,", &save))
            names[k++] = w;
        qsort(names, (size_t)k, sizeof *names, text_cmp);
        size_t used = 0;
        list[0] = '\0';
        for (int i = 0; i < k && used < sizeof list; i++)
            used +=
                (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? " " : "", names[i]);
        st = add_engine(id, pc->name, "passenv", "%s", list);
    }
    if (!st && pc->rlimit_as)
        st = add_engine(id, pc->name, "rlimit_as", "%llu", (unsigned long long)pc->rlimit_as);
    if (!st && pc->rlimit_cpu_s)
        st = add_engine(id, pc->name, "rlimit_cpu", "%llu", (unsigned long long)pc->rlimit_cpu_s);
    return st;
}

/// An engine built from source is its commit, its build and the compiler (a build of the cache
/// may be redone on another node type, never byte for byte: the binary's hash is no identity).
static IdentityStatus add_source_items(Identity *id, const char *name, const JobSource *s)
{
    IdentityStatus st = add_engine(id, name, "commit", "%s", s->commit_id);
    if (!st)
        st = add_engine(id, name, "build", "%s", s->build);
    if (!st)
        st = add_engine(id, name, "binary", "%s", s->binary);
    for (int i = 0; i < s->env_count && !st; i++) {
        char sub[JOB_BUILD_TEXT_MAX + 16];
        const char *eq = strchr(s->env[i], '=');
        snprintf(sub, sizeof sub, "build_env.%.*s", (int)(eq - s->env[i]), s->env[i]);
        st = add_engine(id, name, sub, "%s", eq + 1);
    }
    if (!st)
        st = add_engine(id, name, "compiler", "%s", s->compiler);
    if (!st && s->bench_mode == JOB_BENCH_VALUE)
        st = add_engine(id, name, "bench", "%llu", (unsigned long long)s->bench);
    if (!st && s->net_hash[0])
        st = add_engine(id, name, "net", "%s", s->net_hash);
    return st;
}

static IdentityStatus add_engine_items(Identity *id, const JobPlayer *jp, const JobSource *src,
                                       uint64_t bench, char *why, size_t why_len)
{
    const PlayerConfig *pc = &jp->cfg;
    IdentityStatus st;
    if (pc->proto == PROTO_BUILTIN) {
        uint64_t wh = 0;
        st = builtin_weights(pc, &wh, why, why_len);
        if (!st)
            st = add_engine(id, pc->name, "protocol", "builtin");
        if (!st)
            st = add_engine(id, pc->name, "weights", "%016llx", (unsigned long long)wh);
        if (!st)
            // The bench signature stands for the builtin search's code: another build is another
            // engine.
            st = add_engine(id, pc->name, "bench", "%llu", (unsigned long long)bench);
    } else {
        char path[PATH_MAX];
        program_path(pc, path, sizeof path);
        st = add_engine(id, pc->name, "protocol", "%s%s", player_proto_name(pc->proto),
                        pc->rank_base ? " ranks=1-10" : "");
        if (!st && src->source[0])
            st = add_source_items(id, pc->name, src);
        else if (!st)
            // By content: an engine rebuilt at the same path is another engine.
            st = add_owned(id, engine_key(pc->name, "binary"), file_hash(path));
        if (!st)
            st = add_args(id, pc);
        if (!st)
            st = add_process_items(id, pc);
    }
    if (!st)
        st = add_options(id, pc);
    char tc[256];
    tc_text(&jp->tc, tc, sizeof tc);
    if (!st)
        st = add_engine(id, pc->name, "tc", "%s", tc);
    return st;
}

/// The engines in order (the first is the gauntlet's base), the pairing scheme, each engine.
static IdentityStatus add_engines(Identity *id, const JobConfig *job, uint64_t bench, char *why,
                                  size_t why_len)
{
    size_t cap = 1;
    for (int i = 0; i < job->player_count; i++)
        cap += strlen(job->players[i].cfg.name) + 1;
    char *names = malloc(cap);
    if (!names)
        return IDENTITY_ERR_NOMEM;
    Text t = {names, cap, 0, 0};
    // In the job's order: the first engine is the gauntlet's base, so the order is part of it.
    for (int i = 0; i < job->player_count; i++) {
        if (i)
            text_putc(&t, ',');
        text_puts(&t, job->players[i].cfg.name);
    }
    text_end(&t);
    IdentityStatus st = add_owned(id, strdup("engines"), names);
    // Two engines make one pairing whichever scheme is asked for.
    const char *pairing = job_kind_def(job->kind)->engines == JOB_ENGINES_ONE_BUILTIN ? "self"
                          : job->player_count <= 2                                    ? "single"
                          : job->round_robin ? "round robin"
                                             : "gauntlet";
    if (!st)
        st = identity_add(id, "pairing", pairing);
    for (int i = 0; i < job->player_count && !st; i++)
        st = add_engine_items(id, &job->players[i], &job->sources[i], bench, why, why_len);
    return st;
}

IdentityStatus identity_add_rules(Identity *id, const RulesConfig *r)
{
    return identity_addf(id, "rules", "%s counting_default=%d ply_limit=%d", rules_set_name(r->set),
                         r->counting_default, r->ply_limit);
}

/// What games are played from and how they end: openings, repeat, adjudication.
static IdentityStatus add_games(Identity *id, const JobConfig *job)
{
    IdentityStatus st = identity_add_rules(id, &job->rules);
    bool is_builtin =
        !strncmp(job->openings_file, OPENINGS_BUILTIN_PREFIX, strlen(OPENINGS_BUILTIN_PREFIX));
    const OpeningsBuiltin *builtin = is_builtin ? openings_builtin_find(job->openings_file) : NULL;
    if (!st && builtin) { // builtin:NAME: a hash of its lines
        st = identity_addf(id, "openings", "%s %016llx", job->openings_file,
                           (unsigned long long)openings_builtin_hash(builtin));
        // A file by content: an edited openings file is another experiment, a moved one is not.
    } else if (!st && job->openings_file[0]) {
        st = add_owned(id, strdup("openings"), file_hash(job->openings_file));
    } else if (!st) {
        // No file: the built-in default set, by the hash of its lines like the embedded sets.
        uint64_t h = FNV_OFFSET;
        for (int i = 0; i < openings_default_count; i++)
            h = fnv1a(fnv1a(h, openings_default_lines[i], strlen(openings_default_lines[i])), "\n",
                      1);
        st = identity_addf(id, "openings", "default %016llx", (unsigned long long)h);
    }
    // How the file is read: nothing at the defaults (EPD, every move), so that the identity of
    // a job written before these keys stays what it was.
    if (!st && (job->openings_format != OPENINGS_FORMAT_EPD || job->openings_plies != 0))
        st = identity_addf(id, "openings.read", "format=%s plies=%d",
                           openings_format_name((OpeningsFormat)job->openings_format),
                           job->openings_plies);
    if (!st && job->openings_random)
        // start as the job file writes it (1-based).
        st = identity_addf(id, "openings.order", "random seed=%llu start=%d",
                           (unsigned long long)job->seed, job->openings_start + 1);
    else if (!st)
        st = identity_addf(id, "openings.order", "sequential start=%d", job->openings_start + 1);
    if (!st)
        st = identity_add(id, "repeat", job->repeat ? "true" : "false");
    const DrawAdjudication *d = &job->draw;
    if (!st && d->enabled)
        st = identity_addf(id, "adjudication.draw", "movenumber=%d movecount=%d score=%d",
                           d->movenumber, d->movecount, d->score);
    else if (!st)
        st = identity_add(id, "adjudication.draw", "off");
    const ResignAdjudication *r = &job->resign;
    if (!st && r->enabled)
        st = identity_addf(id, "adjudication.resign", "movecount=%d score=%d twosided=%s",
                           r->movecount, r->score, r->twosided ? "true" : "false");
    else if (!st)
        st = identity_add(id, "adjudication.resign", "off");
    if (!st)
        st = identity_addf(id, "adjudication.max_plies", "%d", job->max_plies);
    // [time] scale = bench changes every rank's clock: part of the experiment (nothing added
    // without it, so earlier journals still match). nps_floor only admits ranks: not part.
    if (!st && job->scale.bench)
        st = identity_addf(id, "time.scale", "bench reference_nps=%llu",
                           (unsigned long long)job->scale.reference_nps);
    return st;
}

IdentityStatus identity_add_file(Identity *id, const char *key, const char *path)
{
    return add_owned(id, strdup(key), file_hash(path));
}

/// One plain key of the kind's section as "section.name=value": numbers as the job holds
/// them, a file by its content (or the row's text for none).
static IdentityStatus add_row(Identity *id, const JobConfig *job, const JobKeyDef *k)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", k->section, k->name);
    const void *p = (const char *)job + k->offset;
    switch (k->type) {
    case KEY_INT: return identity_addf(id, key, "%d", *(const int *)p);
    case KEY_I64: return identity_addf(id, key, "%lld", (long long)*(const int64_t *)p);
    case KEY_U64: return identity_addf(id, key, "%llu", (unsigned long long)*(const uint64_t *)p);
    case KEY_DBL: return identity_addf(id, key, "%.12g", *(const double *)p);
    case KEY_BOOL: return identity_add(id, key, *(const bool *)p ? "true" : "false");
    case KEY_STR: break;
    }
    const char *v = p;
    if (!(k->flags & KEY_CONTENT))
        return identity_add(id, key, v);
    return v[0] ? identity_add_file(id, key, v) : identity_add(id, key, k->empty_text);
}

/// The kind's items: the IDENTITY rows of its section in job_keys.def, in their order, with
/// what the kind adds (identity_extra) before its KEY_HOOK rows and after the rows.
static IdentityStatus add_kind_items(Identity *id, const JobConfig *job, const JobKindDef *kd,
                                     uint64_t bench)
{
    int n = 0;
    const JobKeyDef *keys = job_keys(&n);
    IdentityStatus st = IDENTITY_OK;
    for (int i = 0; i < n && !st && kd->section; i++) {
        const JobKeyDef *k = &keys[i];
        if (strcmp(k->section, kd->section))
            continue;
        if ((k->flags & KEY_HOOK) && kd->identity_extra)
            st = kd->identity_extra(id, job, bench, k->name);
        if (!st && (k->flags & KEY_IDENTITY))
            st = add_row(id, job, k);
    }
    if (!st && kd->identity_extra)
        st = kd->identity_extra(id, job, bench, NULL);
    return st;
}

IdentityStatus identity_of_job(const JobConfig *job, uint64_t bench_signature, Identity *out,
                               char *why, size_t why_len)
{
    identity_init(out);
    // Apart from the items: a resume may raise them (identity.h).
    out->rounds = job->rounds;
    why_set(why, why_len, "ok");
    const JobKindDef *kd = job_kind_def(job->kind); // NULL: not a kind, only "kind=?"
    IdentityStatus st = identity_add(out, "kind", job_kind_name(job->kind));
    if (!st && kd && kd->plays_games)
        st = add_engines(out, job, bench_signature, why, why_len);
    if (!st && kd && kd->plays_games)
        st = add_games(out, job);
    if (!st && kd)
        st = add_kind_items(out, job, kd, bench_signature);
    size_t len = st ? 0 : identity_encode(out, NULL, 0);
    // The journal cannot store a larger text: it fails here, before anything is created.
    if (!st && len > IDENTITY_TEXT_MAX) {
        why_set(why, why_len, "identity of %zu bytes, above the %d-byte cap", len,
                IDENTITY_TEXT_MAX);
        st = IDENTITY_ERR_TOO_LARGE;
    }
    // Those two wrote their own why, naming the engine or the size.
    if (st && st != IDENTITY_ERR_ENGINE && st != IDENTITY_ERR_TOO_LARGE)
        why_set(why, why_len, "%s", identity_strerror(st));
    return st;
}

// ---- Text form ----------------------------------------------------------------------------

static void put_escaped(Text *t, const char *s, bool is_key)
{
    for (; *s; s++) {
        if (*s == '\\')
            text_puts(t, "\\\\");
        else if (*s == '\n')
            text_puts(t, "\\n");
        // Only a key ends at an '=': a value runs to the end of its line, so its '=' stay plain.
        else if (*s == '=' && is_key)
            text_puts(t, "\\=");
        else
            text_putc(t, *s);
    }
}

/// Writes the text into t (its hash included).
static void encode_into(const Identity *id, Text *t)
{
    for (int i = 0; i < id->count; i++) {
        put_escaped(t, id->items[i].key, true);
        text_putc(t, '=');
        put_escaped(t, id->items[i].value, false);
        text_putc(t, '\n');
    }
}

size_t identity_encode(const Identity *id, char *buf, size_t len)
{
    Text t = {buf, buf ? len : 0, 0, FNV_OFFSET};
    encode_into(id, &t);
    text_end(&t);
    return t.n;
}

/// The hash of the text identity_encode writes, computed without building it (cap 0).
uint64_t identity_hash(const Identity *id)
{
    Text t = {NULL, 0, 0, FNV_OFFSET};
    encode_into(id, &t);
    return t.hash;
}

/// Unescapes s[0..n) into a new string; a key ends at its first unescaped '=' (*used tells
/// where). NULL with *bad set on a bad escape.
static char *unescape(const char *s, size_t n, bool is_key, size_t *used, bool *bad)
{
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t k = 0, i = 0;
    for (; i < n; i++) {
        if (is_key && s[i] == '=')
            break;
        if (s[i] != '\\') {
            out[k++] = s[i];
            continue;
        }
        char e = i + 1 < n ? s[++i] : '\0';
        if (e == '\\' || (e == '=' && is_key))
            out[k++] = e;
        else if (e == 'n')
            out[k++] = '\n';
        else {
            *bad = true;
            free(out);
            return NULL;
        }
    }
    out[k] = '\0';
    *used = i;
    return out;
}

IdentityStatus identity_decode(const char *text, size_t len, Identity *out)
{
    identity_init(out);
    size_t pos = 0;
    while (pos < len) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - line) : len - pos;
        pos += n + (nl != NULL);
        size_t used = 0, ignored = 0;
        // Items are C strings: a NUL inside a line would cut one silently.
        bool bad = memchr(line, '\0', n) != NULL;
        char *key = bad ? NULL : unescape(line, n, true, &used, &bad);
        if (!bad && key && (used == n || !key[0])) // no '=' or an empty key
            bad = true;
        char *value =
            bad || !key ? NULL : unescape(line + used + 1, n - used - 1, false, &ignored, &bad);
        if (bad) {
            free(key);
            free(value);
            identity_destroy(out);
            return IDENTITY_ERR_SYNTAX;
        }
        IdentityStatus st = add_owned(out, key, value);
        if (st) {
            identity_destroy(out);
            return st;
        }
    }
    return IDENTITY_OK;
}

// ---- Differences --------------------------------------------------------------------------

/// Splits an engine key into the engine's name (unescaped, into name) and what follows.
/// The inverse of engine_key: NULL when key is not an engine's.
static const char *engine_sub(const char *key, char *name, size_t len)
{
    if (strncmp(key, "engine.", 7) != 0)
        return NULL;
    size_t k = 0;
    for (const char *p = key + 7; *p; p++) {
        if (*p == '\\' && p[1])
            p++;
        else if (*p == '.') {
            name[k] = '\0';
            return p + 1;
        }
        if (k + 1 < len)
            name[k++] = *p;
    }
    return NULL;
}

/// What an item is, in words: "engine 'new': weights", "time control of 'base'", "rules".
static void describe(const char *key, char *out, size_t len)
{
    static const struct {
        const char *sub, *words;
    } SUBS[] = {{"protocol", "protocol"},
                {"weights", "weights"},
                {"bench", "bench signature"},
                {"binary", "program file"},
                {"args", "arguments"}};
    char name[PLAYER_NAME_MAX * 2];
    const char *sub = engine_sub(key, name, sizeof name);
    if (!sub) {
        snprintf(out, len, "%s", key);
        return;
    }
    if (!strcmp(sub, "tc")) {
        snprintf(out, len, "time control of '%s'", name);
        return;
    }
    if (!strncmp(sub, "option.", 7)) {
        snprintf(out, len, "engine '%s': option %s", name, sub + 7);
        return;
    }
    for (size_t i = 0; i < sizeof SUBS / sizeof SUBS[0]; i++)
        if (!strcmp(sub, SUBS[i].sub)) {
            snprintf(out, len, "engine '%s': %s", name, SUBS[i].words);
            return;
        }
    snprintf(out, len, "engine '%s': %s", name, sub);
}

/// Whether a value ends in a 16-hex-digit hash (nothing more to show than "changed").
static bool ends_in_hash(const char *v)
{
    size_t n = strlen(v);
    if (n < 16 || (n > 16 && v[n - 17] != ' '))
        return false;
    for (size_t i = n - 16; i < n; i++)
        if (!isxdigit((unsigned char)v[i]))
            return false;
    return true;
}

/// A value for a message: at most SHOWN_MAX characters, newlines as spaces.
static void shown(const char *v, char *out, size_t len)
{
    size_t n = strlen(v);
    snprintf(out, len, "%.*s%s", SHOWN_MAX, v, n > SHOWN_MAX ? "..." : "");
    for (char *p = out; *p; p++)
        if (*p == '\n')
            *p = ' ';
}

/// Appends one difference; they are joined by "; " into the one line of the refusal.
static void note(Text *t, int *count, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(Text *t, int *count, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (*count)
        text_puts(t, "; ");
    text_puts(t, line);
    ++*count;
}

/// Linear: an identity has tens of items, and a diff runs once, when a resume is refused.
static int find(const Identity *id, const char *key)
{
    for (int i = 0; i < id->count; i++)
        if (!strcmp(id->items[i].key, key))
            return i;
    return -1;
}

/// Whether an engine of this name has any item in id.
static bool has_engine(const Identity *id, const char *name)
{
    char other[PLAYER_NAME_MAX * 2];
    for (int i = 0; i < id->count; i++)
        if (engine_sub(id->items[i].key, other, sizeof other) && !strcmp(other, name))
            return true;
    return false;
}

/// Items of a and not of b: one line per item, or one per engine that b lacks altogether.
static void note_missing(const Identity *a, const Identity *b, const char *verb, Text *t,
                         int *count)
{
    char last[PLAYER_NAME_MAX * 2] = "";
    bool have_last = false;
    for (int i = 0; i < a->count; i++) {
        const IdentityItem *it = &a->items[i];
        if (find(b, it->key) >= 0)
            continue;
        char name[PLAYER_NAME_MAX * 2], what[PLAYER_TEXT_MAX + 64], v[SHOWN_MAX + 4];
        if (engine_sub(it->key, name, sizeof name) && !has_engine(b, name)) {
            if (!have_last || strcmp(last, name)) {
                note(t, count, "engine '%s' %s", name, verb);
                snprintf(last, sizeof last, "%s", name);
                have_last = true;
            } else {
                ++*count; // the engine was named already
            }
            continue;
        }
        describe(it->key, what, sizeof what);
        shown(it->value, v, sizeof v);
        note(t, count, "%s %s (%s)", what, verb, v);
    }
}

bool identity_roles_swapped(const Identity *journal, const Identity *now, char *a, char *b,
                            size_t cap)
{
    // "A,B" in the journal, "B,A" now (A and B different), and nothing else changed.
    const char *was = identity_get(journal, "engines"), *is = identity_get(now, "engines");
    const char *comma = was ? strchr(was, ',') : NULL;
    char swapped[2 * PLAYER_NAME_MAX + 2];
    if (!comma || strchr(comma + 1, ',') || !is || !strcmp(was, is) ||
        snprintf(swapped, sizeof swapped, "%s,%.*s", comma + 1, (int)(comma - was), was) >=
            (int)sizeof swapped ||
        strcmp(swapped, is) || identity_diff(journal, now, NULL, 0) != 1)
        return false;
    snprintf(a, cap, "%.*s", (int)(comma - was), was);
    snprintf(b, cap, "%s", comma + 1);
    return true;
}

int identity_diff(const Identity *journal, const Identity *now, char *why, size_t why_len)
{
    char small[1];
    Text t = {why && why_len ? why : small, why && why_len ? why_len : sizeof small, 0, 0};
    int count = 0;
    for (int i = 0; i < journal->count; i++) {
        const IdentityItem *was = &journal->items[i];
        int k = find(now, was->key);
        if (k < 0 || !strcmp(was->value, now->items[k].value))
            continue;
        char what[PLAYER_TEXT_MAX + 64], a[SHOWN_MAX + 4], b[SHOWN_MAX + 4];
        describe(was->key, what, sizeof what);
        if (ends_in_hash(was->value) && ends_in_hash(now->items[k].value)) {
            note(&t, &count, "%s changed", what);
            continue;
        }
        shown(was->value, a, sizeof a);
        shown(now->items[k].value, b, sizeof b);
        note(&t, &count, "%s changed (%s -> %s)", what, a, b);
    }
    note_missing(journal, now, "removed", &t, &count);
    note_missing(now, journal, "added", &t, &count);
    // Every item the same, yet the texts differ: only their order can have changed.
    if (!count && identity_hash(journal) != identity_hash(now))
        note(&t, &count, "the same items in another order");
    // A message cut short ends in "...", so it is not read as the whole list.
    if (t.n >= t.cap && t.cap > 4)
        memcpy(t.buf + t.cap - 4, "...", 4);
    else
        text_end(&t);
    if (!count)
        text_end(&t);
    return count;
}
