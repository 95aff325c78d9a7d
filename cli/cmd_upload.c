// SPDX-License-Identifier: MIT
// xqforge upload --spool DIR: delivers the reports a run could not deliver (its server was
// down, refused the token, ...). Each spool entry names its URLs, method and where its
// token comes from (never the token itself), so no job file is needed.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "upload.h"

static void upload_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge upload --spool DIR [--attempts N] [--backoff SECONDS] [--quiet]\n\n"
            "Delivers the reports waiting in a spool directory (a job's [report] spool,\n"
            "by default OUTPUT_DIR/spool), oldest first, with retries; each delivered\n"
            "entry is removed. Tokens come from the variable or file the job named.\n"
            "Exit status: 0 when the spool is empty at the end, 1 when entries remain.\n");
}

int cmd_upload(int argc, char **argv)
{
    const char *spool = NULL;
    long attempts = 5, backoff_ms = 1000;
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            upload_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--spool") && v) {
            spool = argv[++i];
        } else if (!strcmp(a, "--attempts") && v && cli_parse_int(v, 1, 100, &attempts)) {
            i++;
        } else if (!strcmp(a, "--backoff") && v) {
            char *end;
            double s = strtod(v, &end);
            if (*end || !(s >= 0.001 && s <= 3600)) {
                fprintf(stderr, "xqforge upload: --backoff: '%s' is not 0.001..3600 s\n", v);
                return EXIT_USAGE;
            }
            backoff_ms = (long)(s * 1000);
            i++;
        } else if (!strcmp(a, "--quiet")) {
            quiet = true;
        } else {
            fprintf(stderr, "xqforge upload: unexpected or incomplete argument '%s'\n", a);
            upload_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!spool) {
        upload_usage(stderr);
        return EXIT_USAGE;
    }
    // A mistyped path must not look like an empty spool.
    struct stat sb;
    if (stat(spool, &sb) != 0) {
        fprintf(stderr, "xqforge upload: %s: %s\n", spool, strerror(errno));
        return 1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "xqforge upload: %s: not a directory\n", spool);
        return 1;
    }
    UploadPolicy pol;
    upload_policy_default(&pol, spool);
    pol.attempts = (int)attempts;
    pol.backoff_s = backoff_ms / 1000.0;
    pol.log = quiet ? NULL : stderr;
    UploadStats st = {0};
    UploadStatus us = upload_spool_drain(&pol, &st);
    int left = upload_spool_count(spool);
    if (us != UPLOAD_OK) {
        fprintf(stderr, "xqforge upload: %s: %s\n", spool, upload_strerror(us));
        return 1;
    }
    printf("Spool %s: %d delivered, %d superseded, %d kept (%d requests, %d retries)\n", spool,
           st.delivered, st.superseded, left, st.attempts, st.retries);
    return left ? 1 : 0;
}
