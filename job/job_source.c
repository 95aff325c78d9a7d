// SPDX-License-Identifier: MIT
// Source keys of an engine (job_source.h).
#include "job_source.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inifile.h"

static const char *const SOURCE_KEYS[] = {"source",    "commit",        "build",
                                          "binary",    "build_timeout", "bench",
                                          "bench_cmd", "net",           "net_sha256"};

bool job_source_is_key(const char *key)
{
    if (!strncmp(key, "build_env.", 10))
        return true;
    for (size_t i = 0; i < sizeof SOURCE_KEYS / sizeof SOURCE_KEYS[0]; i++)
        if (!strcmp(key, SOURCE_KEYS[i]))
            return true;
    return false;
}

/// A URL or scp-like remote (https://, git@host:path, host:path): the build never fetches, a
/// compute node has no network and the commit must be the one on the shared file system.
static bool is_remote(const char *v)
{
    const char *colon = strchr(v, ':'), *slash = strchr(v, '/');
    return strstr(v, "://") || (colon && (!slash || colon < slash));
}

/// build_env.NAME: a later setting of the same NAME replaces the earlier one.
static bool set_build_env(JobSource *s, const char *name, const char *v, char *why, size_t len)
{
    size_t n = strlen(name);
    bool ok = n > 0 && !isdigit((unsigned char)name[0]);
    for (size_t i = 0; i < n; i++)
        ok = ok && (isalnum((unsigned char)name[i]) || name[i] == '_');
    if (!ok) {
        snprintf(why, len, "build_env.%s: a variable name has letters, digits and '_'", name);
        return false;
    }
    int i = 0;
    while (i < s->env_count && !(!strncmp(s->env[i], name, n) && s->env[i][n] == '='))
        i++;
    if (i == JOB_BUILD_ENV_MAX) {
        snprintf(why, len, "more than %d build_env settings", JOB_BUILD_ENV_MAX);
        return false;
    }
    if (snprintf(s->env[i], sizeof s->env[i], "%s=%s", name, v) >= (int)sizeof s->env[i]) {
        snprintf(why, len, "build_env.%s: longer than %d characters with its name", name,
                 JOB_BUILD_TEXT_MAX - 1);
        return false;
    }
    if (i == s->env_count)
        s->env_count++;
    return true;
}

/// bench = N | auto | none.
static bool set_bench(JobSource *s, const char *v, char *why, size_t len)
{
    if (!strcmp(v, "auto") || !strcmp(v, "none")) {
        s->bench_mode = v[0] == 'a' ? JOB_BENCH_AUTO : JOB_BENCH_NONE;
        return true;
    }
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (!isdigit((unsigned char)v[0]) || *end || errno || n == 0) {
        snprintf(why, len, "'%s': expected the bench signature (a node count), auto or none", v);
        return false;
    }
    s->bench_mode = JOB_BENCH_VALUE;
    s->bench = n;
    return true;
}

/// net_sha256: a prefix of a sha256 in lower-case hex (fishtest names nets by its first 12).
static bool set_net_expect(JobSource *s, const char *v, char *why, size_t len)
{
    size_t n = strlen(v);
    bool ok = n >= 1 && n < sizeof s->net_expect;
    for (size_t i = 0; ok && i < n; i++)
        ok = isdigit((unsigned char)v[i]) || (v[i] >= 'a' && v[i] <= 'f');
    if (!ok) {
        snprintf(why, len, "'%s': expected a prefix of the net's sha256 in lower-case hex", v);
        return false;
    }
    memcpy(s->net_expect, v, n + 1);
    return true;
}

bool job_source_set(JobSource *s, const char *key, const char *v, const char *base_dir, char *why,
                    size_t why_len)
{
    long n;
    if (!strcmp(key, "source")) {
        if (is_remote(v)) {
            snprintf(why, why_len,
                     "'%s' is not a local path: builds never fetch (compute nodes have no "
                     "network); give a clone or bare mirror on the shared file system",
                     v);
            return false;
        }
        return inifile_path(base_dir, v, s->source, sizeof s->source, why, why_len) == INIFILE_OK;
    }
    if (!strcmp(key, "net"))
        return inifile_path(base_dir, v, s->net, sizeof s->net, why, why_len) == INIFILE_OK;
    if (!strcmp(key, "commit")) {
        // A ref is handed to git as one argument: no option may hide in it.
        if (v[0] == '-' || strpbrk(v, " \t")) {
            snprintf(why, why_len, "'%s': expected a commit id, branch or tag", v);
            return false;
        }
        return inifile_text(s->commit, sizeof s->commit, v, why, why_len);
    }
    if (!strcmp(key, "build"))
        return inifile_text(s->build, sizeof s->build, v, why, why_len);
    if (!strcmp(key, "binary")) {
        if (v[0] == '/' || strstr(v, "..")) {
            snprintf(why, why_len,
                     "'%s': expected a path inside the checkout (no '/' first, no "
                     "'..')",
                     v);
            return false;
        }
        return inifile_text(s->binary, sizeof s->binary, v, why, why_len);
    }
    if (!strcmp(key, "bench_cmd"))
        return inifile_text(s->bench_cmd, sizeof s->bench_cmd, v, why, why_len);
    if (!strcmp(key, "bench"))
        return set_bench(s, v, why, why_len);
    if (!strcmp(key, "net_sha256"))
        return set_net_expect(s, v, why, why_len);
    if (!strcmp(key, "build_timeout")) {
        if (!inifile_long(v, 1, 86400, &n, why, why_len))
            return false;
        s->build_timeout_s = (int)n;
        return true;
    }
    return set_build_env(s, key + 10, v, why, why_len); // build_env.NAME
}

bool job_source_check(const JobSource *s, const PlayerConfig *pc, const char **key, char *why,
                      size_t why_len)
{
    if (!s->source[0]) {
        *key = s->commit[0] ? "commit" : s->build[0] ? "build" : s->binary[0] ? "binary" : NULL;
        if (*key)
            snprintf(why, why_len, "%s needs source = PATH (a local git repository)", *key);
        return *key == NULL;
    }
    *key = !s->commit[0] ? "commit" : !s->build[0] ? "build" : !s->binary[0] ? "binary" : NULL;
    if (*key) {
        snprintf(why, why_len, "an engine built from source needs %s", *key);
        return false;
    }
    if (pc->cmd[0]) {
        *key = "cmd";
        snprintf(why, why_len, "give cmd or source, not both: the built binary is the program");
        return false;
    }
    return true;
}
