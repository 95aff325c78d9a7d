// SPDX-License-Identifier: MIT
// The coordinator side of book jobs (kind = book): each unit's candidates, replayed here (keys
// and FENs are never the worker's), are committed strictly in unit order into the book
// (coordinator/bookstore): the window, deduplication by key, the EPD file, the move book.
// Because a unit's candidates depend only on the job and the unit number, and the commit
// order is fixed, the book is the same on 1 or 100 ranks, and a run killed and resumed ends
// with the book of an uninterrupted run.
#pragma once

#include "bookgen.h"
#include "coord_job.h"
#include "coordinator.h"
#include "job.h"

typedef struct BooksCoord BooksCoord;

/// Opens the book and excludes an existing one; NULL with why.
BooksCoord *books_coord_new(const JobConfig *job, const BookgenConfig *gen, const char *dir,
                            char *why, size_t why_len);
void books_coord_kind(BooksCoord *b, CoordKind *out);
/// After the journal's replay: commits what it holds, prints the job line.
bool books_coord_start(BooksCoord *b, const CoordState *st, const char *run_id, char *why,
                       size_t why_len);
/// The move book, the page, result.json, the report; the exit status.
int books_coord_finish(BooksCoord *b, const CoordState *st);
void books_coord_free(BooksCoord *b);

/// Rank 0 of book jobs: the plan is the generator's BookgenConfig.
extern const CoordKindDef coord_books_def;
