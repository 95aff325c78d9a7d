// SPDX-License-Identifier: MIT
// The coordinator's write-ahead journal: every finished result is appended and made durable
// (fdatasync) before it counts, and reopening the journal replays what was recorded, so a
// stopped run resumes with no result lost and none counted twice. Records are opaque byte
// strings (the coordinator stores msgpack result messages), each under a 64-bit key (the
// game-pair id) so that replay can skip and report duplicates.
//
// File format (all integers little-endian):
//   header, 28 bytes:
//     0  "XQJOURNAL" (9 bytes), then 3 zero bytes
//     12 u32 format version (JOURNAL_VERSION)
//     16 u64 job fingerprint, chosen by the caller: a journal of another job is refused
//     24 u32 CRC-32 (zlib) of bytes 0..23
//   then records, back to back, each 16 bytes + payload:
//     0  u32 payload length, at most JOURNAL_RECORD_MAX
//     4  u64 key
//     12 u32 CRC-32 of the 8 key bytes followed by the payload
//     16 payload
//
// Guarantees:
// - A new journal appears atomically: the header is written to "<path>.new", synced, then
//   linked to path and the directory synced, so a file at path always has a whole header.
// - journal_append returns JOURNAL_OK only after the record is on disk (fdatasync).
// - A crash during an append leaves at most one torn record at the end of the file. On open,
//   a bad last record (short, length above the cap, or CRC mismatch) with no valid record
//   anywhere after it, within one record's reach of the end, is cut off (ftruncate) and
//   reported as torn_bytes. A bad record followed by a valid one is JOURNAL_ERR_CORRUPT
//   naming its byte offset: data in the middle is never dropped silently. (Judging a tail
//   scans it byte by byte for a valid record: instant for the small records the coordinator
//   writes, seconds for a torn multi-MiB record of incompressible bytes.)
// - Replay sees only a fully checked journal: the callback is not called at all when the
//   journal is refused.
// - One process at a time: the file is locked (flock) while a Journal is open.
// No globals; one Journal per coordinator, used from one thread at a time.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JOURNAL_VERSION     1u
#define JOURNAL_RECORD_MAX  (8u << 20) // payload bytes of one record
#define JOURNAL_HEADER_SIZE 28u
#define JOURNAL_RECORD_HEAD 16u // length, key, CRC

typedef enum {
    JOURNAL_OK,
    JOURNAL_ERR_IO,          // a system call failed (errno kept; see journal_last_error)
    JOURNAL_ERR_NOMEM,       // out of memory
    JOURNAL_ERR_HEADER,      // not a journal: bad magic, short or damaged header
    JOURNAL_ERR_VERSION,     // a journal of another format version
    JOURNAL_ERR_FINGERPRINT, // a journal of another job
    JOURNAL_ERR_CORRUPT,     // a damaged record followed by valid data
    JOURNAL_ERR_LOCKED,      // another process has the journal open
    JOURNAL_ERR_TOO_LARGE,   // payload above JOURNAL_RECORD_MAX
    JOURNAL_ERR_CALLBACK,    // the replay callback asked to stop
    JOURNAL_ERR_FAILED,      // an earlier append failed in a way that needs a reopen
    JOURNAL_STATUS_NB
} JournalStatus;

/// Called once per replayed record, in file order, for the first record of each key. Returns
/// 0 to go on; anything else stops the replay and journal_open returns JOURNAL_ERR_CALLBACK.
/// payload is valid only during the call.
typedef int (*JournalReplayFn)(void *ctx, uint64_t key, const void *payload, size_t len);

typedef struct {
    uint64_t records;    // valid records found, duplicates included
    uint64_t duplicates; // records skipped because their key came earlier
    uint64_t torn_bytes; // bytes of a torn last record that were cut off
    uint64_t bytes;      // size of the journal kept: header and valid records
    bool created;        // the file did not exist and was created
} JournalReplayStats;

typedef struct Journal Journal;

const char *journal_strerror(JournalStatus st);

/// Opens the journal at path for the job `fingerprint`, creating it when missing, else
/// checking its header (refused without touching the file when it does not match) and
/// replaying its records through fn (may be NULL) with ctx. stats (may be NULL) receives the
/// replay counts. On failure *out is NULL and why[why_len] (may be NULL) says what happened,
/// with the byte offset for JOURNAL_ERR_CORRUPT.
JournalStatus journal_open(Journal **out, const char *path, uint64_t fingerprint,
                           JournalReplayFn fn, void *ctx, JournalReplayStats *stats, char *why,
                           size_t why_len);

/// Appends one record with a single write and fdatasync. On error the file is cut back to
/// its last durable size (or, if even that fails, left with at most a torn tail that the
/// next open cuts). A failed write that could be undone leaves the journal usable (e.g. retry
/// after ENOSPC); a failed fdatasync or undo makes every later append JOURNAL_ERR_FAILED
/// until the journal is closed and reopened. payload may be NULL when len is 0.
JournalStatus journal_append(Journal *j, uint64_t key, const void *payload, size_t len);

/// What the last failed journal_append said, with its errno text ("" when none failed).
const char *journal_last_error(const Journal *j);
/// The errno of the last failed journal_append (0 when none failed).
int journal_last_errno(const Journal *j);
/// Bytes in the journal: header and durable records.
uint64_t journal_size(const Journal *j);

/// Closes the journal and frees it; journal_close(NULL) is a no-op.
void journal_close(Journal *j);
