// SPDX-License-Identifier: MIT
// The resumable fit, written once for both trainers (tuning/texel.c, tuning/nnue_train.c), as
// coordinator/journal.c is for results: the checkpoint file, its hand-over to every rank, and
// the loss CSV cut back to the checkpoint.
//
// Checkpoint file (host byte order: it never leaves the machine that wrote it), replaced
// through "PATH.tmp" and a rename so a kill leaves the old file or the new one, whole:
//   8 bytes   the trainer's magic (FitRunFormat.magic)
//   id_size   the run's id: what the fit was made from (inputs and settings, no padding)
//   u32/u64   the payload's element count (count_bytes), as this build counts it
//   parts     the payload: the optimiser's state, doubles and floats, in order
//   u64       (hashed formats only) FNV-1a (files_fnv) of the magic, the id and the parts
// A checkpoint is resumed only by the fit it was made from. Otherwise it is refused, never
// ignored, with one of: "P is not <name>", "checkpoint P was written by an older xqforge
// (...)", "checkpoint P is cut short", "checkpoint P was <the first difference>",
// "checkpoint P holds N <unit>, this build has M", "checkpoint P is damaged (...)".
//
// Loss CSV: a header line, then one row "epoch,value[,value...]" per epoch from 0. A resumed
// fit keeps the rows before its checkpoint and writes the rest again, so a fit killed and
// resumed leaves the very file of an uninterrupted one.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    FITRUN_OK,
    FITRUN_ERR_IO,     // the loss CSV cannot be opened or cut
    FITRUN_ERR_STALE,  // a checkpoint that cannot be resumed (why names the reason)
    FITRUN_ERR_REDUCE, // the reduce callback failed (another rank is gone)
    FITRUN_ERR_NOMEM,
    FITRUN_STATUS_NB
} FitRunStatus;

enum {
    FITRUN_ID_MAX = 128,   // bytes of a run's id at most
    FITRUN_PARTS_MAX = 5,  // payload parts at most
    FITRUN_LOSS_VALUES = 4 // values after the epoch that fitrun_loss_read passes on
};

/// Adds buf[0..n) over every rank in place (NULL: one process).
typedef bool (*FitRunReduceFn)(void *ctx, double *buf, int n);

/// A trainer's checkpoint format: fixed for the life of its files, so each trainer keeps the
/// layout it wrote before the scaffold existed.
typedef struct {
    char magic[8];
    const char *old_magic;  // an earlier format's 8 bytes (NULL: none), refused as older
    const char *old_why;    // and why it cannot be resumed: "no record of its inputs"
    const char *old_magic2; // an earlier one still (NULL: none), refused alike
    const char *old_why2;
    const char *name; // "a Texel checkpoint": a file without the magic "is not" one
    const char *unit; // what the count counts: "weights"
    size_t id_size;   // the id struct's bytes (at most FITRUN_ID_MAX)
    int count_bytes;  // 4 or 8
    bool hashed;      // the trailing FNV-1a: a damaged payload is refused, not resumed
    bool sync;        // fsync before the rename (power loss, not just a kill)
    /// The first difference between the id a checkpoint was made from and now's, as "made
    /// for 400 epochs, now 50" (the text after "was"); false if there is none.
    bool (*differs)(const void *was, const void *now, char *out, size_t len);
} FitRunFormat;

typedef enum { FITRUN_DOUBLE, FITRUN_FLOAT } FitRunType;

/// A run of n elements of the payload, read and written in place.
typedef struct {
    void *p;
    size_t n;
    FitRunType type;
} FitRunPart;

/// One fit's checkpoint: where it lives, what it was made from, and where its payload goes.
typedef struct {
    const FitRunFormat *fmt;
    const char *path; // NULL: this rank keeps none (ranks other than 0)
    bool fresh;       // the file is not read: the fit starts over, the first write replaces it
    const void *id;   // this run's id (fmt->id_size bytes)
    uint64_t count;   // the payload's element count in this build
    FitRunPart part[FITRUN_PARTS_MAX];
    int parts;
    const double *epoch; // the completed epochs, inside a part: outside [0, epochs] is damage
    int epochs;
} FitRunCkpt;

/// Reads c's checkpoint into its parts: FITRUN_OK with *found (false: no file there, no path,
/// or fresh), or FITRUN_ERR_STALE naming why the file cannot be resumed (its parts may then
/// hold a part of it).
FitRunStatus fitrun_ckpt_read(const FitRunCkpt *c, bool *found, char *why, size_t why_len);
/// Writes c's parts as the checkpoint at c->path; false with errno set.
bool fitrun_ckpt_write(const FitRunCkpt *c);
/// Every rank calls it alike: the rank whose c->path names a checkpoint reads it, and when it
/// is resumed every rank's parts receive its payload (summed with the others' zeros through
/// reduce), so all ranks continue from one state. *resumed: whether they do; a refused file
/// (on any rank) gives FITRUN_ERR_STALE everywhere.
FitRunStatus fitrun_resume(const FitRunCkpt *c, FitRunReduceFn reduce, void *ctx, bool *resumed,
                           char *why, size_t why_len);

/// Opens the loss CSV (header: its first line, without the newline) for a fit whose first
/// `rows` rows, epochs 0 .. rows - 1, are done: 0 rewrites it; otherwise the header and those
/// rows are kept, in order, and the rest is cut (a kill may have written rows after its last
/// checkpoint, or cut one short). *kept (may be NULL): the rows kept, fewer than `rows` when the
/// file lost some (the curve then has a gap). FITRUN_ERR_IO naming the file.
FitRunStatus fitrun_loss_open(const char *path, const char *header, int rows, FILE **out, int *kept,
                              char *why, size_t why_len);
/// Calls row for each row of the loss CSV at path whose epoch is below `before`, with its
/// values (n of them, up to FITRUN_LOSS_VALUES; an unreadable one NAN): a resumed fit's report
/// shows the epochs before it too. A missing file has no rows.
void fitrun_loss_read(const char *path, int before,
                      void (*row)(void *ctx, int epoch, const double *v, int n), void *ctx);
