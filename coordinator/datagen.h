// SPDX-License-Identifier: MIT
// The coordinator side of datagen jobs (kind = datagen): each unit's records are decoded and
// checked here (a record whose board is not a legal position refuses the unit), deduplicated
// by the position's Zobrist key over the whole run, and appended to the positions file
// (tuning/posdata) until [datagen] positions are reached. Units are committed in unit order (a
// unit that comes early waits for those below it), so the file is the same on 1 or N ranks and
// after a kill and resume. The journal is the truth: the file is rewritten from it on every
// start (the replay counts every unit again, in unit order, so dedup and the target cut decide
// the same way), then grows as results count; it is closed whole (header count, last block's
// checksum) at every report interval and at the end.
#pragma once

#include "coord_job.h"
#include "coordinator.h"
#include "job.h"

typedef struct DatagenCoord DatagenCoord;

/// Creates the positions file afresh (the journal's replay refills it); NULL with why.
DatagenCoord *datagen_coord_new(const JobConfig *job, const char *dir, char *why, size_t why_len);
void datagen_coord_kind(DatagenCoord *d, CoordKind *out);
/// After the journal's replay: prints the job line.
bool datagen_coord_start(DatagenCoord *d, const CoordState *st, const char *run_id, char *why,
                         size_t why_len);
/// Closes the positions file, writes result.json and the report; the exit status.
int datagen_coord_finish(DatagenCoord *d, const CoordState *st);
void datagen_coord_free(DatagenCoord *d);

/// Rank 0 of datagen jobs (the plan is not read).
extern const CoordKindDef coord_datagen_def;
