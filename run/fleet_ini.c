// SPDX-License-Identifier: MIT
#include "fleet_ini.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "inifile.h"
#include "queue.h"

typedef struct {
    FleetIni *f;
    const char *dir; // the file's directory, for relative paths
    char why[UPLOAD_TEXT_MAX + 256];
} Parse;

static bool parse_fail(Parse *p, int line, const char *section, const char *key, const char *fmt,
                       ...)
{
    char msg[UPLOAD_TEXT_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(p->why, sizeof p->why, "line %d: [%s] %s: %s", line, section, key, msg);
    return false;
}

static bool fleet_ini_section(void *user, int line, const char *raw)
{
    Parse *p = user;
    if (!strcmp(raw, "fleet") || !strcmp(raw, "report"))
        return true;
    snprintf(p->why, sizeof p->why,
             "line %d: unknown section [%s] (fleet.ini has [fleet] and [report])", line, raw);
    return false;
}

static bool fleet_key(Parse *p, int line, const char *key, const char *value)
{
    FleetIni *f = p->f;
    if (!strcmp(key, "group") && strlen(value) < sizeof f->group && value[0]) {
        snprintf(f->group, sizeof f->group, "%s", value);
        return true;
    }
    return parse_fail(p, line, "fleet", key, "%s",
                      strcmp(key, "group") ? "unknown key (fleet.ini knows group)"
                                           : "a Unix group name is expected");
}

/// [report] urls: up to UPLOAD_URLS_MAX, separated by spaces; the last line replaces the list.
static bool report_urls(Parse *p, int line, const char *key, const char *value)
{
    UploadTarget *t = &p->f->target;
    char buf[UPLOAD_TEXT_MAX], why[UPLOAD_TEXT_MAX + 200];
    snprintf(buf, sizeof buf, "%s", value);
    t->url_count = 0;
    for (char *save, *u = strtok_r(buf, " \t", &save); u; u = strtok_r(NULL, " \t", &save)) {
        if (t->url_count == UPLOAD_URLS_MAX)
            return parse_fail(p, line, "report", key, "more than %d URLs", UPLOAD_URLS_MAX);
        if (upload_url_check(u, why, sizeof why) != UPLOAD_OK)
            return parse_fail(p, line, "report", key, "%s", why);
        snprintf(t->urls[t->url_count++], sizeof t->urls[0], "%s", u);
    }
    if (!t->url_count)
        return parse_fail(p, line, "report", key, "no URL given");
    return true;
}

static bool report_path(Parse *p, int line, const char *key, const char *value, char *out,
                        size_t cap)
{
    char why[256];
    if (inifile_path(p->dir, value, out, cap, why, sizeof why) != INIFILE_OK)
        return parse_fail(p, line, "report", key, "%s", why);
    return true;
}

static bool report_key(Parse *p, int line, const char *key, const char *value)
{
    FleetIni *f = p->f;
    UploadTarget *t = &f->target;
    char why[256] = "";
    long n = 0;
    bool ok = true;
    if (!strcmp(key, "urls"))
        return report_urls(p, line, key, value);
    if (!strcmp(key, "method")) {
        for (int m = 0; m < UPLOAD_METHOD_NB; m++)
            if (!strcmp(value, upload_method_name((UploadMethod)m)))
                return t->method = (UploadMethod)m, true;
        return parse_fail(p, line, "report", key, "'%s' is not one of post, put, multipart", value);
    }
    if (!strcmp(key, "token_env")) {
        // Only the variable's name is kept, never the token: the file holds no secret.
        for (const char *c = value; *c; c++)
            if (!isalnum((unsigned char)*c) && *c != '_')
                return parse_fail(p, line, "report", key,
                                  "'%s' is not an environment variable name", value);
        if (!value[0] || strlen(value) >= sizeof t->token_env)
            return parse_fail(p, line, "report", key, "an environment variable name is expected");
        snprintf(t->token_env, sizeof t->token_env, "%s", value);
        return true;
    }
    if (!strcmp(key, "token_file"))
        return report_path(p, line, key, value, t->token_file, sizeof t->token_file);
    if (!strcmp(key, "ca_file"))
        return report_path(p, line, key, value, t->ca_file, sizeof t->ca_file);
    if (!strcmp(key, "interval"))
        ok = inifile_long(value, 1, 86400, &n, why, sizeof why) && (f->interval_s = (int)n, 1);
    else if (!strcmp(key, "connect_timeout"))
        ok = inifile_long(value, 1, 600, &n, why, sizeof why) && (t->connect_timeout_s = (int)n, 1);
    else if (!strcmp(key, "timeout"))
        ok = inifile_long(value, 1, 3600, &n, why, sizeof why) && (t->timeout_s = (int)n, 1);
    else if (!strcmp(key, "attempts"))
        ok = inifile_long(value, 1, 100, &n, why, sizeof why) && (f->attempts = (int)n, 1);
    else if (!strcmp(key, "backoff"))
        ok = inifile_double(value, 0.001, 3600, &f->backoff_s, why, sizeof why);
    else if (!strcmp(key, "backoff_max"))
        ok = inifile_double(value, 0.001, 86400, &f->backoff_max_s, why, sizeof why);
    else if (!strcmp(key, "final_wait"))
        ok = inifile_double(value, 0, 86400, &f->final_wait_s, why, sizeof why);
    else
        return parse_fail(p, line, "report", key,
                          "unknown key (fleet.ini's [report] knows urls, method, token_env, "
                          "token_file, ca_file, interval, connect_timeout, timeout, attempts, "
                          "backoff, backoff_max, final_wait)");
    return ok || parse_fail(p, line, "report", key, "%s", why);
}

static bool fleet_ini_key(void *user, int line, const char *section, const char *key,
                          const char *value)
{
    Parse *p = user;
    return !strcmp(section, "report") ? report_key(p, line, key, value)
                                      : fleet_key(p, line, key, value);
}

FleetIniStatus fleet_ini_read(const char *dir, uid_t owner, FleetIni *f, char *why, size_t why_len)
{
    memset(f, 0, sizeof *f);
    upload_target_default(&f->target);
    f->attempts = 5;
    f->backoff_s = 1;
    f->backoff_max_s = 60;
    f->interval_s = 60;
    f->final_wait_s = 10;
    char path[QUEUE_PATH_MAX + 16], adir[QUEUE_PATH_MAX];
    struct stat sb;
    snprintf(path, sizeof path, "%s/fleet.ini", dir);
    if (stat(path, &sb) != 0) {
        snprintf(why, why_len, "no fleet.ini");
        return FLEET_INI_MISSING;
    }
    if (!S_ISREG(sb.st_mode) || sb.st_uid != owner || (sb.st_mode & 022)) {
        snprintf(why, why_len, "it must be the queue owner's and writable by them alone");
        return FLEET_INI_UNSAFE;
    }
    if (inifile_dir(path, adir, sizeof adir, why, why_len) != INIFILE_OK)
        return FLEET_INI_BAD;
    Parse p = {.f = f, .dir = adir};
    IniHandlers h = {.section = fleet_ini_section, .key = fleet_ini_key, .user = &p};
    int line = 0;
    char perr[256] = "";
    if (inifile_parse(path, &h, &line, perr, sizeof perr) != INIFILE_OK) {
        if (p.why[0])
            snprintf(why, why_len, "%s", p.why);
        else if (line)
            snprintf(why, why_len, "line %d: %s", line, perr);
        else
            snprintf(why, why_len, "%s", perr);
        return FLEET_INI_BAD;
    }
    if (f->target.token_env[0] && f->target.token_file[0]) {
        snprintf(why, why_len, "[report] token_file: give token_env or token_file, not both");
        return FLEET_INI_BAD;
    }
    return FLEET_INI_OK;
}
