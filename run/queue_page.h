// SPDX-License-Identifier: MIT
// The fleet's page: QUEUE/index.json (the record) and QUEUE/index.html (the page, made from
// the same model, refreshing itself), rewritten atomically whenever the queue changes. Each
// test's row: state, progress, Elo with its error, LLR against its bounds, share, and a link
// to its own report page; tests that are queued or running first (by priority, then id),
// ended ones below, newest first. The figures are each test's result.json, or while it runs
// its report.json.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/// The figures of a test in one shape, from its result.json (once ended) or report.json
/// (while it runs): games, elo_text, llr, lower, upper, done and total (pairs), and
/// games_per_minute, each null where unknown; JSON null when the test has neither file.
json_t *queue_page_figures(const char *dir, const char *id);

/// The queue as one JSON object: {"queue": DIR, "updated": SECONDS, "tests": [...]}, each test
/// its record (test.json) with "result" (its figures or null) and "order" applied. NULL with
/// why on failure.
json_t *queue_page_model(const char *dir, char *why, size_t why_len);

/// Writes QUEUE/index.json and QUEUE/index.html from queue_page_model.
bool queue_page_write(const char *dir, char *why, size_t why_len);
