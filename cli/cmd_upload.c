// SPDX-License-Identifier: MIT
// xqforge upload: delivers the reports a run could not deliver (its server was down, refused
// the token, ...). A spool entry holds only the report files and their delivery state; where
// they go and with which token come from this command's options or a job file's [report]
// section, never from the spool, so a planted entry cannot send the user's secrets anywhere
// (SECURITY.md).
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "job.h"
#include "run_report.h"
#include "upload.h"

enum { SETS_MAX = 64 };

static void upload_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge upload --job JOBFILE [--set SECTION.KEY=VALUE]... [options]\n"
            "       xqforge upload --spool DIR --url URL [--url URL]... [options]\n\n"
            "Delivers the reports waiting in a spool directory, oldest first, with retries;\n"
            "an entry is removed once every URL has taken it. The spool holds only the\n"
            "reports: where they go and with which token come from here, never from it.\n\n"
            "  --job JOBFILE       the [report] section of a job file (urls, method, token_env\n"
            "                      or token_file, ca_file, timeouts, attempts, backoff); the\n"
            "                      spool is the job's (OUTPUT_DIR/spool) unless --spool is given\n"
            "  --set S.K=V         overrides the job file, as for xqforge run\n"
            "  --spool DIR         the spool directory\n"
            "  --url URL           where to send (repeatable, up to %d; replaces the job's)\n"
            "  --method M          post (report.json), put (every file to URL/NAME) or\n"
            "                      multipart (every file as a form part); default post\n"
            "  --token-env VAR     the bearer token is in this environment variable, or\n"
            "  --token-file FILE   in this file (mode 600); tokens never go on the command line\n"
            "  --ca-file FILE      an extra CA bundle for https\n"
            "  --attempts N        tries per URL, the first included (default 5)\n"
            "  --backoff SECONDS   the first retry wait, doubling (default 1)\n"
            "  --quiet             no line per request\n\n"
            "URLs with credentials in them (user:password@) are refused. The spool must be\n"
            "yours and writable by you alone (chmod 700). Entries that name their own URL or\n"
            "token, or whose files are not the ones spooled, are reported and left in place.\n"
            "Exit status: 0 when the spool is empty at the end, 1 when entries remain, 2 bad\n"
            "usage.\n",
            UPLOAD_URLS_MAX);
}

typedef struct {
    const char *spool, *job;
    const char *sets[SETS_MAX];
    int n_sets;
    const char *urls[UPLOAD_URLS_MAX];
    int url_count;
    int method; // -1: not given
    const char *token_env, *token_file, *ca_file;
    long attempts;    // 0: not given
    double backoff_s; // 0: not given
    bool quiet;
} UploadArgs;

static bool parse_method(const char *v, int *out)
{
    for (int m = 0; m < UPLOAD_METHOD_NB; m++)
        if (!strcmp(v, upload_method_name((UploadMethod)m)))
            return *out = m, true;
    return false;
}

static bool env_name_ok(const char *v)
{
    for (const char *p = v; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return false;
    return v[0] != '\0';
}

/// One option at argv[*i] (its value taken); false with a message when it is bad.
static bool parse_option(UploadArgs *a, int argc, char **argv, int *i)
{
    const char *o = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    bool valued = true;
    if (!strcmp(o, "--quiet")) {
        a->quiet = true;
        return true;
    }
    if (!v) {
        valued = false;
    } else if (!strcmp(o, "--spool")) {
        a->spool = v;
    } else if (!strcmp(o, "--job")) {
        a->job = v;
    } else if (!strcmp(o, "--set") && a->n_sets < SETS_MAX) {
        a->sets[a->n_sets++] = v;
    } else if (!strcmp(o, "--url") && a->url_count < UPLOAD_URLS_MAX) {
        a->urls[a->url_count++] = v;
    } else if (!strcmp(o, "--method")) {
        valued = parse_method(v, &a->method);
    } else if (!strcmp(o, "--token-env")) {
        valued = env_name_ok(v);
        a->token_env = v;
    } else if (!strcmp(o, "--token-file")) {
        a->token_file = v;
    } else if (!strcmp(o, "--ca-file")) {
        a->ca_file = v;
    } else if (!strcmp(o, "--attempts")) {
        valued = cli_parse_int(v, 1, 100, &a->attempts);
    } else if (!strcmp(o, "--backoff")) {
        char *end;
        a->backoff_s = strtod(v, &end);
        valued = !*end && a->backoff_s >= 0.001 && a->backoff_s <= 3600;
    } else {
        valued = false;
    }
    if (!valued) {
        fprintf(stderr, "xqforge upload: unexpected, bad or incomplete argument '%s%s%s'\n", o,
                v ? " " : "", v && strncmp(o, "--url", 5) ? v : "");
        return false;
    }
    (*i)++;
    return true;
}

/// The job's [report] section into t and pol, and its spool unless one was given.
static bool from_job(const UploadArgs *a, UploadTarget *t, UploadPolicy *pol, char *spool,
                     size_t len)
{
    JobConfig *job = malloc(sizeof *job);
    char why[2048];
    if (!job || job_load(a->job, a->sets, a->n_sets, job, why, sizeof why) != JOB_OK) {
        fprintf(stderr, "xqforge upload: %s\n", job ? why : "out of memory");
        free(job);
        return false;
    }
    run_report_delivery(job, t, pol);
    if (job->report.spool[0] == '/')
        snprintf(spool, len, "%s", job->report.spool);
    else
        snprintf(spool, len, "%.500s/%.500s", job->output.dir[0] ? job->output.dir : ".",
                 job->report.spool);
    free(job);
    return true;
}

/// The options over the job's settings (or the defaults).
static void apply_options(const UploadArgs *a, UploadTarget *t, UploadPolicy *pol)
{
    if (a->url_count) {
        for (int i = 0; i < a->url_count; i++)
            snprintf(t->urls[i], sizeof t->urls[i], "%s", a->urls[i]);
        t->url_count = a->url_count;
    }
    if (a->method >= 0)
        t->method = (UploadMethod)a->method;
    if (a->token_env || a->token_file) {
        snprintf(t->token_env, sizeof t->token_env, "%s", a->token_env ? a->token_env : "");
        snprintf(t->token_file, sizeof t->token_file, "%s", a->token_file ? a->token_file : "");
    }
    if (a->ca_file)
        snprintf(t->ca_file, sizeof t->ca_file, "%s", a->ca_file);
    if (a->attempts)
        pol->attempts = (int)a->attempts;
    if (a->backoff_s > 0)
        pol->backoff_s = a->backoff_s;
}

/// Where to send and how, from the options; 0, or the exit status.
static int resolve(const UploadArgs *a, UploadTarget *t, UploadPolicy *pol)
{
    char spool[UPLOAD_TEXT_MAX] = "", why[UPLOAD_TEXT_MAX + 400];
    if (!a->job && (!a->spool || !a->url_count)) {
        fprintf(stderr, "xqforge upload: give --job JOBFILE, or --spool DIR and --url URL "
                        "(a spool does not say where to send)\n");
        upload_usage(stderr);
        return EXIT_USAGE;
    }
    if (a->token_env && a->token_file) {
        fprintf(stderr, "xqforge upload: give --token-env or --token-file, not both\n");
        return EXIT_USAGE;
    }
    if (a->job && !from_job(a, t, pol, spool, sizeof spool))
        return EXIT_USAGE;
    snprintf(pol->spool_dir, sizeof pol->spool_dir, "%s", a->spool ? a->spool : spool);
    apply_options(a, t, pol);
    if (t->url_count == 0) {
        fprintf(stderr, "xqforge upload: %s has no [report] urls: give --url URL\n", a->job);
        return EXIT_USAGE;
    }
    if (upload_target_check(t, why, sizeof why) != UPLOAD_OK) {
        fprintf(stderr, "xqforge upload: %s\n", why);
        return EXIT_USAGE;
    }
    return 0;
}

int cmd_upload(int argc, char **argv)
{
    UploadArgs a = {.method = -1};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            upload_usage(stdout);
            return 0;
        }
        if (!parse_option(&a, argc, argv, &i)) {
            upload_usage(stderr);
            return EXIT_USAGE;
        }
    }
    UploadTarget t;
    UploadPolicy pol;
    upload_target_default(&t);
    upload_policy_default(&pol, NULL);
    int rc = resolve(&a, &t, &pol);
    if (rc)
        return rc;
    pol.log = a.quiet ? NULL : stderr;
    const char *spool = pol.spool_dir;
    // A mistyped path must not look like an empty spool; one others can write is refused.
    char why[UPLOAD_TEXT_MAX + 400];
    if (upload_spool_check(spool, false, why, sizeof why) != UPLOAD_OK) {
        fprintf(stderr, "xqforge upload: %s\n", why);
        // A path that is no spool at all is bad input; an unsafe one is the machine's state.
        struct stat sb;
        return stat(spool, &sb) != 0 || !S_ISDIR(sb.st_mode) ? EXIT_USAGE : 1;
    }
    UploadStats st = {0};
    UploadStatus us = upload_spool_drain(&pol, &t, &st);
    int left = upload_spool_count(spool);
    if (us != UPLOAD_OK) {
        fprintf(stderr, "xqforge upload: %s: %s\n", spool, upload_strerror(us));
        return 1;
    }
    printf("Spool %s: %d delivered, %d superseded, %d kept (%d requests, %d retries)", spool,
           st.delivered, st.superseded, left, st.attempts, st.retries);
    if (st.untrusted)
        printf("; %d not trusted (planted or tampered: left in place, not sent)", st.untrusted);
    printf("\n");
    return left ? 1 : 0;
}
