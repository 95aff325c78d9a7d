// SPDX-License-Identifier: MIT
// QUEUE/fleet.ini, the queue owner's settings for the fleet: [fleet] group = NAME (the Unix
// group a shared queue is shared with) and [report] (where the fleet's page, index.json and
// index.html, is uploaded: the keys of a job's [report] that apply to it). The file must be
// the queue owner's and writable by them alone: a file others could edit could share the
// queue or send the page, with the fleet's token, anywhere.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "upload.h"

typedef enum {
    FLEET_INI_OK,
    FLEET_INI_MISSING, // no fleet.ini
    FLEET_INI_UNSAFE,  // not a regular file of the queue's owner, or others can write it
    FLEET_INI_BAD,     // a line, section, key or value is refused (why: "line N: [s] key: ...")
    FLEET_INI_STATUS_NB
} FleetIniStatus;

typedef struct {
    char group[64]; // [fleet] group; "" when not set
    // [report]: target.url_count 0 when no urls. Paths (token_file, ca_file) are taken from
    // the queue directory when relative.
    UploadTarget target;
    int attempts;
    double backoff_s, backoff_max_s;
    int interval_s;      // seconds between progress uploads of the page
    double final_wait_s; // seconds the end of the fleet waits for the final upload
} FleetIni;

/// Reads DIR/fleet.ini into *f (defaults first: no group, no URL, post, attempts 5, backoff
/// 1..60 s, interval 60 s, final_wait 10 s), checking that it is a regular file owned by
/// owner that group and others cannot write. Unknown sections and keys are refused. why says
/// what without the file's name (callers name it).
FleetIniStatus fleet_ini_read(const char *dir, uid_t owner, FleetIni *f, char *why, size_t why_len);
