// SPDX-License-Identifier: MIT
// The coordinator's write-ahead journal: every finished result is appended and made durable
// (fdatasync) before it counts, and reopening the journal replays what was recorded, so a
// stopped run resumes with no result lost and none counted twice. Records are opaque byte
// strings (the coordinator stores msgpack result messages), each under a 64-bit key (the
// game-pair id) so that replay can skip and report duplicates.
//
// File format (all integers little-endian), version 2:
//   header, 48 bytes + the identity text:
//     0  "XQJOURNAL" (9 bytes), then 3 zero bytes
//     12 u32 format version (JOURNAL_VERSION; at this offset in every version)
//     16 u64 64-bit FNV-1a of the identity text (for a quick look; the text is compared)
//     24 run id: 16 lowercase hex digits, random for a new journal, kept on every reopen
//     40 u32 identity text length L, at most JOURNAL_IDENTITY_MAX
//     44 u32 CRC-32 (zlib) of bytes 0..43 followed by the identity text
//     48 identity text, L bytes, chosen by the caller (job/identity.h's text form):
//        a journal whose text differs byte for byte is refused as another job's
//   then records from byte 48 + L, back to back, each 16 bytes + payload:
//     0  u32 payload length, at most JOURNAL_RECORD_MAX
//     4  u64 key
//     12 u32 CRC-32 of the 8 key bytes followed by the payload
//     16 payload
// Version 1 (a 28-byte header holding a u64 fingerprint of the job file) is refused with a
// message telling to start afresh (--fresh): its fingerprint cannot be checked against an
// identity.
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
//   journal is refused. A journal of another identity, version or a damaged header is
//   refused before anything is written to it.
// - One process at a time: the file is locked (flock) while a Journal is open.
// No globals; one Journal per coordinator, used from one thread at a time.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JOURNAL_VERSION      2u
#define JOURNAL_RECORD_MAX   (8u << 20)  // payload bytes of one record
#define JOURNAL_IDENTITY_MAX (64u << 10) // bytes of the identity text
#define JOURNAL_HEADER_FIXED 48u         // header bytes before the identity text
#define JOURNAL_RECORD_HEAD  16u         // length, key, CRC
#define JOURNAL_RUN_ID_LEN   16u         // hex digits

typedef enum {
    JOURNAL_OK,
    JOURNAL_ERR_IO,        // a system call failed (errno kept; see journal_last_error)
    JOURNAL_ERR_NOMEM,     // out of memory
    JOURNAL_ERR_HEADER,    // not a journal: bad magic, short or damaged header
    JOURNAL_ERR_VERSION,   // a journal of another format version (1: start afresh)
    JOURNAL_ERR_IDENTITY,  // a journal of another job: its identity text differs
    JOURNAL_ERR_CORRUPT,   // a damaged record followed by valid data
    JOURNAL_ERR_LOCKED,    // another process has the journal open
    JOURNAL_ERR_TOO_LARGE, // payload above JOURNAL_RECORD_MAX
    JOURNAL_ERR_CALLBACK,  // the replay callback asked to stop
    JOURNAL_ERR_FAILED,    // an earlier append failed in a way that needs a reopen
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

/// The identity of the job that opens a journal: text (need not end in NUL) and its length.
typedef struct {
    const char *text;
    size_t len; // at most JOURNAL_IDENTITY_MAX
} JournalIdentity;

typedef struct Journal Journal;

const char *journal_strerror(JournalStatus st);

/// Opens the journal at path for the job of identity `want` (NULL: the empty identity),
/// creating it when missing (with a new random run id), else checking its header and
/// replaying its records through fn (may be NULL) with ctx. A journal of another identity is
/// JOURNAL_ERR_IDENTITY, refused without replaying or touching the file: journal_peek reads its
/// identity so that the caller can say what changed. stats (may be NULL) receives the replay
/// counts. On failure *out is NULL and why[why_len] (may be NULL) says what happened, with the byte
/// offset for JOURNAL_ERR_CORRUPT.
JournalStatus journal_open(Journal **out, const char *path, const JournalIdentity *want,
                           JournalReplayFn fn, void *ctx, JournalReplayStats *stats, char *why,
                           size_t why_len);

/// Reads the header of the journal at path without locking or changing it: the identity
/// text into identity[cap] (NUL-terminated, cut to fit when cap is too small; may be NULL
/// with cap 0), its whole length into *len (may be NULL), the run id into run_id (may be
/// NULL). Header errors as journal_open's (JOURNAL_ERR_IO with ENOENT when there is none).
JournalStatus journal_peek(const char *path, char *identity, size_t cap, size_t *len,
                           char run_id[JOURNAL_RUN_ID_LEN + 1], char *why, size_t why_len);

/// The run id of an open journal: 16 hex digits, the same on every reopen.
const char *journal_run_id(const Journal *j);

/// What a Journal wrote since it was opened (the replay excluded).
typedef struct {
    uint64_t records; // durable records appended
    uint64_t commits; // batches made durable (each one write and one fdatasync)
    uint64_t syncs;   // fdatasync calls, failed ones and cuts included
    uint64_t bytes;   // bytes of the durable records
    double sync_s;    // seconds spent in those fdatasync calls
} JournalCounters;

/// Group commit: stages one record in memory for the next journal_commit; nothing is written
/// and nothing is durable yet. Errors as journal_append's (TOO_LARGE, NOMEM, FAILED); a
/// refused record leaves the stage as it was.
JournalStatus journal_stage(Journal *j, uint64_t key, const void *payload, size_t len);
/// Writes every staged record with one write and one fdatasync (nothing staged: JOURNAL_OK,
/// no I/O). JOURNAL_OK only when all of them are durable; on any error none of them is kept
/// (cut back as journal_append does) and the stage is empty either way.
JournalStatus journal_commit(Journal *j);
/// Where the journal will end once the staged records are committed: after journal_stage,
/// the end of that record (a size for journal_cut).
uint64_t journal_staged_end(const Journal *j);
/// Cuts durable records off the end (ftruncate, fdatasync) back to size, an end of a record
/// as journal_staged_end gave it: records journaled but never counted (a verdict given part
/// way through a batch). Drops the stage. A size outside the records is JOURNAL_ERR_CORRUPT
/// (nothing done); a failure makes the journal JOURNAL_ERR_FAILED until reopened.
JournalStatus journal_cut(Journal *j, uint64_t size);
void journal_counters(const Journal *j, JournalCounters *out);

/// Reads the journal at path without locking, checking its identity or changing anything,
/// and calls fn (may not be NULL) for the first record of each key, as journal_open replays
/// (a torn tail is skipped, a damaged middle is JOURNAL_ERR_CORRUPT): for tools that reuse a
/// journal's records (the coordinator benchmark's simulated ranks).
JournalStatus journal_scan(const char *path, JournalReplayFn fn, void *ctx, char *why,
                           size_t why_len);

/// Appends one record with a single write and fdatasync (a commit of the staged records and
/// this one). On error the file is cut back to its last durable size (or, if even that fails,
/// left with at most a torn tail that the next open cuts). A failed write that could be undone
/// leaves the journal usable (e.g. retry after ENOSPC); a failed fdatasync or undo makes every
/// later append JOURNAL_ERR_FAILED until the journal is closed and reopened. payload may be NULL
/// when len is 0.
JournalStatus journal_append(Journal *j, uint64_t key, const void *payload, size_t len);

/// What the last failed journal_append said, with its errno text ("" when none failed).
const char *journal_last_error(const Journal *j);
/// The errno of the last failed journal_append (0 when none failed).
int journal_last_errno(const Journal *j);
/// Bytes in the journal: header and durable records.
uint64_t journal_size(const Journal *j);

/// Closes the journal and frees it; journal_close(NULL) is a no-op.
void journal_close(Journal *j);

/// For starting a run afresh (--fresh): moves those of names[0..n) (paths relative to dir:
/// the journal, PGN, result, reports, ...; NULL or "" entries are skipped) that exist into a
/// new directory dir/previous-YYYYmmdd-HHMMSS (local time; "-2", "-3", ... appended when
/// taken), each by one rename(2) within dir, so every file is either in its old place or in
/// the new one, whole; nothing is ever deleted. Refused before moving anything when a name
/// is absolute or has a ".." component, or a file is locked by another process (a run still
/// using its journal). Returns 0 with the new directory in moved_to[len] ("" when none of
/// the names existed: no directory is made), or -1 with why[why_len] (then moved_to names
/// the directory holding what was moved before the failure, if any).
int journal_move_aside(const char *dir, const char *const *names, int n, char *moved_to, size_t len,
                       char *why, size_t why_len);
