// SPDX-License-Identifier: MIT
// The training loop's page (kind = loop): report.json and report.html in output.dir, made from
// the loop's record (history.json, run/loop.h) alone and rewritten each time the record
// is, so the page says what the record says: one row per generation (positions, the filters'
// counts, the kept epoch's losses, the quantization error, the gate's SPRT line, the verdict)
// and the best net's Elo against generation 0 chained over the promoted generations, with
// plots of the loss and of that Elo by generation. Schema: coordinator/REPORT.md.
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "job.h"
#include "report.h"

/// Fills r from history (history.json's object) and t's [loop] settings: the facts, the
/// "generations" and "filters" tables, the "loss" and "elo" plots, and the record fields
/// "loop" (the summary and the chained Elo) and "generations" (history's rows, each with
/// elo_vs_gen0 and elo_vs_gen0_error: the sum of the promoted gates' Elo up to that row and
/// the square root of the sum of their squared 95% errors; null while the row runs or once a
/// promoted gate had no Elo).
ReportStatus loop_report_fill(Report *r, const JobConfig *t, const json_t *history);

/// Rank 0: writes output.dir/report.json and report.html from history (final once the loop is
/// complete) and, with [report] urls, spools and uploads them as a run's report (waiting up
/// to [report] final_wait for delivery; what is left stays in the spool). false with why when
/// the page cannot be made or written (the loop goes on: the record is the truth).
bool loop_report_write(const JobConfig *t, const json_t *history, char *why, size_t why_len);
