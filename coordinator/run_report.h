// SPDX-License-Identifier: MIT
// A run's report and its delivery, for every job kind: the Report (report.json and
// report.html in the output directory), rewritten every [report] interval and at the end,
// and, when [report] names URLs, spooled and uploaded by its own thread (coordinator/upload).
// The spool holds data only; the URLs, method and token source are the job's, handed to the
// thread (never read back from the spool). The kinds fill the Report; this module writes and
// delivers it.
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "job.h"
#include "report.h"
#include "upload.h"

typedef struct {
    Report *report; // NULL: no report (out of memory)
    const JobConfig *job;
    char dir[JOB_TEXT_MAX];
    char spool[UPLOAD_TEXT_MAX];
    UploadTarget target; // the job's; url_count 0: no upload (none, or the spool refused)
    Uploader *uploader;
    uint64_t version;
    int64_t last_ms;
} RunReport;

/// Where a job's reports go and how they are retried, from its [report] section: the URLs,
/// method, token source, CA file and timeouts into t, the attempts and backoffs into pol
/// (the rest of both as the caller set them). One reading for a run and `xqforge upload`.
void run_report_delivery(const JobConfig *job, UploadTarget *t, UploadPolicy *pol);
/// Starts the report of a run (run_id kept across resumes); says on stderr what it cannot do.
/// With [report] urls it makes the spool (0700), or refuses one that is not the user's alone
/// (then no upload this run), and starts the uploader, whose first pass delivers what earlier
/// runs left to the job's URLs.
void run_report_begin(RunReport *rr, const JobConfig *job, const char *dir, const char *run_id,
                      const char *title);
/// Whether the [report] interval has passed since the last write.
bool run_report_due(const RunReport *rr);
/// Writes the report (its version raised) and hands it to the uploader; `extra` (may be
/// NULL) is a file of the output directory sent with the final report (the PGN). false with
/// a message on stderr when the files could not be written.
bool run_report_publish(RunReport *rr, bool final, const char *extra);
/// Stops the uploader (waiting up to [report] final_wait for delivery when final), says what
/// was delivered and kept, and frees the report.
void run_report_end(RunReport *rr, bool final);
/// Writes a JSON result file atomically (a reader sees the old file or the new one, whole);
/// false with a message on stderr.
bool run_write_json(const char *path, const json_t *o);
/// Whether progress may rewrite its line (\r): stdout is a terminal, and not the pseudo
/// terminal a launcher (mpirun, srun) gives its ranks whatever the user sends the output to.
bool run_console_is_terminal(void);
/// Where a [report] path lies: absolute, or relative to the output directory.
void run_report_path(const RunReport *rr, const char *name, char *out, size_t len);
