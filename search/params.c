// SPDX-License-Identifier: MIT
#include "params.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "files.h"

const ParamInfo params_info[PARAM_NB] = {
#define PARAM(name, def, lo, hi, step) {#name, def, lo, hi, step},
#include "params.def"
#undef PARAM
};

const char *params_strerror(ParamsStatus st)
{
    static const char *const text[PARAMS_STATUS_NB] = {
        [PARAMS_OK] = "no error",
        [PARAMS_ERR_UNKNOWN] = "unknown weight name",
        [PARAMS_ERR_VALUE] = "value is not an integer within the weight's range",
        [PARAMS_ERR_SYNTAX] = "line is not 'name value'",
        [PARAMS_ERR_IO] = "cannot read or write the weights file",
    };
    return (unsigned)st < PARAMS_STATUS_NB ? text[st] : "unknown params status";
}

void weights_default(Weights *w)
{
    for (int i = 0; i < PARAM_NB; i++)
        w->v[i] = params_info[i].def;
}

int params_find(const char *name)
{
    for (int i = 0; name && i < PARAM_NB; i++)
        if (strcasecmp(params_info[i].name, name) == 0) // UCI option names ignore case
            return i;
    return -1;
}

bool params_is_psq(int id) { return strncmp(params_info[id].name, "psq_", 4) == 0; }

bool params_is_search(int id) { return id >= PARAM_SEARCH_FIRST && id < PARAM_NB; }

bool params_list_names_search(const char *list, char *word, size_t len)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, " \t,");
        snprintf(word, len, "%.*s", (int)n, p);
        int id = params_find(word);
        if (!strcmp(word, "search") || (id >= 0 && params_is_search(id)))
            return true;
        p += n + (p[n] != 0);
    }
    return false;
}

// search_params.def must close the table, or params_is_search would name eval rows.
_Static_assert((int)P_search_rfp_depth == (int)PARAM_SEARCH_FIRST, "search_params.def is not last");

static bool parse_value(const char *text, int id, int32_t *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < params_info[id].min || v > params_info[id].max)
        return false;
    *out = (int32_t)v;
    return true;
}

ParamsStatus weights_set(Weights *w, const char *name, const char *value)
{
    int id = params_find(name);
    if (id < 0)
        return PARAMS_ERR_UNKNOWN;
    return value && parse_value(value, id, &w->v[id]) ? PARAMS_OK : PARAMS_ERR_VALUE;
}

static ParamsStatus load_fail(ParamsStatus st, char *why, size_t wl, const char *path, int line,
                              const char *detail)
{
    if (why && wl)
        snprintf(why, wl, "%s:%d: %s (%s)", path, line, params_strerror(st), detail);
    return st;
}

ParamsStatus weights_load(Weights *w, const char *path, char *why, size_t wl)
{
    FILE *f = files_open_regular(path);
    if (!f) {
        if (why && wl)
            snprintf(why, wl, "%s: %s", path, strerror(errno));
        return PARAMS_ERR_IO;
    }
    Weights tmp = *w;
    char line[512];
    int lineno = 0;
    ParamsStatus st = PARAMS_OK;
    while (st == PARAMS_OK && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            st = load_fail(PARAMS_ERR_SYNTAX, why, wl, path, lineno, "line too long");
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char name[128], value[64], extra[8];
        int n = sscanf(line, "%127s %63s %7s", name, value, extra);
        if (n <= 0)
            continue;
        if (n != 2) {
            st = load_fail(PARAMS_ERR_SYNTAX, why, wl, path, lineno, line);
            break;
        }
        st = weights_set(&tmp, name, value);
        if (st != PARAMS_OK)
            load_fail(st, why, wl, path, lineno, name);
    }
    if (st == PARAMS_OK && ferror(f))
        st = load_fail(PARAMS_ERR_IO, why, wl, path, lineno, "read error");
    fclose(f);
    if (st == PARAMS_OK)
        *w = tmp;
    return st;
}

ParamsStatus weights_save(const Weights *w, const char *path)
{
    enum { LINE_MAX_ = 80 }; // a weight's name and value
    char *text = malloc((size_t)(PARAM_NB + 1) * LINE_MAX_);
    if (!text)
        return PARAMS_ERR_IO;
    size_t n = (size_t)snprintf(text, LINE_MAX_, "# xqforge weights: name value\n");
    for (int i = 0; i < PARAM_NB; i++)
        n += (size_t)snprintf(text + n, LINE_MAX_, "%.60s %d\n", params_info[i].name, (int)w->v[i]);
    int rc = files_write_atomic(path, text, n);
    free(text);
    return rc == 0 ? PARAMS_OK : PARAMS_ERR_IO;
}

typedef enum { GROUP_NONE, GROUP_ALL, GROUP_PSQ, GROUP_EVAL, GROUP_SEARCH, GROUP_ONE } ParamGroup;

/// Whether a list word's group holds the weight: "eval" is every evaluation weight that is not
/// piece-square, so "psq eval search" is "all".
static bool group_has(ParamGroup g, int id, int one)
{
    switch (g) {
    case GROUP_ALL: return true;
    case GROUP_PSQ: return params_is_psq(id);
    case GROUP_EVAL: return !params_is_psq(id) && !params_is_search(id);
    case GROUP_SEARCH: return params_is_search(id);
    case GROUP_ONE: return id == one;
    default: return false;
    }
}

ParamsListStatus params_parse_list(const char *list, bool (*add)(void *ctx, int id), void *ctx,
                                   char *bad, size_t bad_len)
{
    char buf[4096], *save = NULL;
    if (snprintf(buf, sizeof buf, "%s", list) >= (int)sizeof buf) {
        snprintf(bad, bad_len, "%.40s...", list);
        return PARAMS_LIST_TOO_LONG;
    }
    bool any = false;
    for (char *w = strtok_r(buf, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
        int one = params_find(w);
        ParamGroup g = !strcmp(w, "all")      ? GROUP_ALL
                       : !strcmp(w, "psq")    ? GROUP_PSQ
                       : !strcmp(w, "eval")   ? GROUP_EVAL
                       : !strcmp(w, "search") ? GROUP_SEARCH
                       : one >= 0             ? GROUP_ONE
                                              : GROUP_NONE;
        if (g == GROUP_NONE) {
            snprintf(bad, bad_len, "%s", w);
            return PARAMS_LIST_UNKNOWN;
        }
        any = true;
        for (int id = 0; id < PARAM_NB; id++)
            if (group_has(g, id, one) && !add(ctx, id))
                return PARAMS_LIST_STOPPED;
    }
    return any ? PARAMS_LIST_OK : PARAMS_LIST_EMPTY;
}
