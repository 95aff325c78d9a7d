// SPDX-License-Identifier: MIT
#include "params.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
    FILE *f = fopen(path, "r");
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
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return PARAMS_ERR_IO;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return PARAMS_ERR_IO;
    fprintf(f, "# xqforge evaluation weights: name value\n");
    for (int i = 0; i < PARAM_NB; i++)
        fprintf(f, "%s %d\n", params_info[i].name, (int)w->v[i]);
    bool ok = !ferror(f);
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return PARAMS_ERR_IO;
    }
    return PARAMS_OK;
}
