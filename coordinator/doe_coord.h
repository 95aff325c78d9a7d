// SPDX-License-Identifier: MIT
// Rank 0 of drop-out expansion books (kind = doe, games/doe.h): the tree, grown in rounds.
// A round's leaves are chosen when the round before it is whole; its units (ids
// consecutive over the run, one per leaf) go out with their leaf's position and are held back
// from the schedule until then (CoordKind.unit_limit). Each unit's children are checked (the
// leaf is the one sent, the moves exactly its legal moves), journaled, and replayed here (keys
// and FENs are never the worker's); the round is applied in the order its leaves were chosen.
// A journal holds whole rounds before a partial last one, so a resumed run rebuilds the same
// tree and sends out what is missing: the tree is the same on 1 or N ranks and after any kill.
// At the end: the tree as text, the test-exit EPD (through coordinator/bookstore: window,
// draw-rate window, no duplicates, no mirrors, none in check), the weighted move book and
// ElephantEye's BOOK.DAT, and result.json.
#pragma once

#include "coord_job.h"

/// Rank 0 of DOE jobs: the plan is the BookgenConfig of worker/work_doe.c.
extern const CoordKindDef coord_doe_def;
