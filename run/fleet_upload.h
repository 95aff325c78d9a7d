// SPDX-License-Identifier: MIT
// The fleet's page uploaded where QUEUE/fleet.ini's [report] says, with the run reports'
// machinery (upload.h): each version of QUEUE/index.json (and index.html) is put in the spool
// QUEUE/spool as an entry of run "fleet" and sent by an Uploader thread. A version at most
// every [report] interval seconds while the page changes, at once when a test starts or ends
// (its state changes on the page), and a final one when the fleet ends. Versions are the wall
// clock in milliseconds (kept increasing), so that a restarted fleet's entries supersede the
// older ones. A failed upload never stops the fleet: it is said on stderr and kept in the spool.
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct FleetUpload FleetUpload;

/// Checks QUEUE/fleet.ini for the fleet (the file's owner and mode, its [report] keys): false
/// with why naming the file, the line and the key. No fleet.ini is fine.
bool fleet_upload_check(const char *dir, char *why, size_t why_len);
/// Starts uploading the page when fleet.ini's [report] has urls; NULL when it has none, or
/// when the spool or the thread cannot be had (said on stderr: the fleet goes on).
FleetUpload *fleet_upload_start(const char *dir);
/// Called on every turn of the fleet's loop: spools the page when it is due. NULL: no-op.
void fleet_upload_poll(FleetUpload *u);
/// Spools the final page, waits at most [report] final_wait seconds for its delivery, says
/// what was delivered and frees u. NULL: no-op.
void fleet_upload_end(FleetUpload *u);
