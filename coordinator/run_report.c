// SPDX-License-Identifier: MIT
// The live report of a run on rank 0: written into the output directory at an interval, and
// spooled for upload when the job names URLs. A failing report or upload never fails the run:
// it is said on stderr and the run goes on (the results are in the journal either way).
#include "run_report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "files.h"

/// The interval is measured on the monotonic clock, so a clock change cannot stall reports.
static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void run_report_path(const RunReport *rr, const char *name, char *out, size_t len)
{
    if (name[0] == '/')
        snprintf(out, len, "%s", name);
    else
        snprintf(out, len, "%.500s/%.500s", rr->dir, name);
}

bool run_console_is_terminal(void)
{
    // (Not PMIX_RANK: Open MPI sets it in a singleton run too, started from a terminal.)
    static const char *const launched[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof launched / sizeof *launched; i++)
        if (getenv(launched[i]))
            return false;
    return isatty(STDOUT_FILENO);
}

// Atomic and with sorted keys: a reader never sees half a file, and the same data always
// gives the same bytes.
bool run_write_json(const char *path, const json_t *o)
{
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
    bool ok = text && files_write_atomic(path, text, strlen(text)) == 0;
    if (!ok)
        fprintf(stderr, "xqforge run: cannot write %s: %s\n", path,
                text ? strerror(errno) : "out of memory");
    free(text);
    return ok;
}

// The job's report method reaches the uploader by a cast: the two enums list the same methods.
_Static_assert((int)JOB_REPORT_POST == (int)UPLOAD_POST && (int)JOB_REPORT_PUT == (int)UPLOAD_PUT &&
                   (int)JOB_REPORT_MULTIPART == (int)UPLOAD_MULTIPART &&
                   (int)JOB_REPORT_METHOD_NB == (int)UPLOAD_METHOD_NB,
               "JobReportMethod mirrors UploadMethod");

// Shared with `xqforge upload --job`, so that a later upload of the spool goes where the run
// would have sent it, with the same retries.
void run_report_delivery(const JobConfig *job, UploadTarget *t, UploadPolicy *pol)
{
    for (int i = 0; i < job->report.url_count; i++)
        snprintf(t->urls[i], sizeof t->urls[i], "%s", job->report.urls[i]);
    t->url_count = job->report.url_count;
    t->method = (UploadMethod)job->report.method;
    snprintf(t->token_env, sizeof t->token_env, "%s", job->report.token_env);
    snprintf(t->token_file, sizeof t->token_file, "%s", job->report.token_file);
    snprintf(t->ca_file, sizeof t->ca_file, "%s", job->report.ca_file);
    t->connect_timeout_s = job->report.connect_timeout_s;
    t->timeout_s = job->report.timeout_s;
    pol->attempts = job->report.attempts;
    pol->backoff_s = job->report.backoff_s;
    pol->backoff_max_s = job->report.backoff_max_s;
    pol->retry_after_max_s = job->report.backoff_max_s; // a server waits no longer than we would
}

void run_report_begin(RunReport *rr, const JobConfig *job, const char *dir, const char *run_id,
                      const char *title)
{
    memset(rr, 0, sizeof *rr);
    rr->job = job;
    rr->last_ms = now_ms();
    snprintf(rr->dir, sizeof rr->dir, "%s", dir);
    if (!(rr->report = report_new(run_id, title, XQFORGE_VERSION))) {
        fprintf(stderr, "xqforge run: no report (out of memory)\n");
        return;
    }
    if (job->report.url_count == 0)
        return;
    // Where to and with which token: the job's, given to every pass (the spool holds data).
    UploadTarget *t = &rr->target;
    upload_target_default(t);
    run_report_path(rr, job->report.spool, rr->spool, sizeof rr->spool);
    UploadPolicy pol;
    upload_policy_default(&pol, rr->spool);
    run_report_delivery(job, t, &pol);
    // A spool that others can write may hold planted reports: refused (it is made 0700).
    char why[UPLOAD_TEXT_MAX + 400], token[UPLOAD_TOKEN_MAX];
    if (upload_spool_check(rr->spool, true, why, sizeof why) != UPLOAD_OK ||
        upload_target_check(t, why, sizeof why) != UPLOAD_OK) {
        fprintf(stderr, "xqforge run: report upload off: %s\n", why);
        t->url_count = 0;
        return;
    }
    // A missing token is said now, not only at the first upload; reports still spool.
    if (upload_token_load(t, token, sizeof token, why, sizeof why) != UPLOAD_OK)
        fprintf(stderr, "xqforge run: report upload: %s (reports are spooled)\n", why);
    memset(token, 0, sizeof token);
    if (!(rr->uploader = upload_start(&pol, t)))
        fprintf(stderr, "xqforge run: cannot start the upload thread (reports are spooled)\n");
}

bool run_report_due(const RunReport *rr)
{
    return rr->report && now_ms() - rr->last_ms >= 1000LL * rr->job->report.interval_s;
}

bool run_report_publish(RunReport *rr, bool final, const char *extra)
{
    Report *r = rr->report;
    if (!r)
        return false;
    rr->last_ms = now_ms();
    report_set_version(r, ++rr->version, final);
    char why[UPLOAD_TEXT_MAX + 400];
    if (report_write(r, rr->dir, why, sizeof why) != REPORT_OK) {
        fprintf(stderr, "\nxqforge run: report: %s\n", why);
        return false;
    }
    if (!rr->target.url_count)
        return true;
    // POST sends the record; PUT and multipart the page too, and the extra file at the end.
    char files[3][JOB_TEXT_MAX * 2 + 2];
    const char *list[3] = {files[0], files[1], files[2]};
    int n = rr->target.method == UPLOAD_POST ? 1 : 2;
    snprintf(files[0], sizeof files[0], "%s/report.json", rr->dir);
    snprintf(files[1], sizeof files[1], "%s/report.html", rr->dir);
    if (extra && extra[0]) {
        snprintf(files[2], sizeof files[2], "%s/%s", rr->dir, extra);
        if (final && n == 2 && access(files[2], R_OK) == 0)
            n = 3;
    }
    if (upload_spool_add(rr->spool, report_run_id(r), rr->version, final, list, n, why,
                         sizeof why) != UPLOAD_OK)
        fprintf(stderr, "\nxqforge run: report not spooled: %s\n", why);
    upload_kick(rr->uploader); // the thread sends; the run never waits on the network
    return true;
}

void run_report_end(RunReport *rr, bool final)
{
    if (rr->uploader) {
        UploadStats st;
        // Only the final report is worth waiting for; an interrupted run leaves at once and
        // what is left stays in the spool.
        upload_stop(rr->uploader, final ? rr->job->report.final_wait_s : 0, &st);
        rr->uploader = NULL;
        int left = upload_spool_count(rr->spool);
        printf("Report upload: %d delivered, %d retries%s", st.delivered, st.retries,
               left ? "" : "\n");
        if (st.untrusted)
            printf(", %d not trusted (planted or tampered: left alone, see the log)", st.untrusted);
        if (left)
            printf(", %d kept in %s (deliver with: xqforge upload --job JOBFILE, or --spool %s "
                   "--url URL)\n",
                   left, rr->spool, rr->spool);
    }
    if (final && rr->report)
        printf("Report: %s/report.html\n", rr->dir);
    report_free(rr->report);
    rr->report = NULL;
}
