// SPDX-License-Identifier: MIT
// The report's "code" section for engines built from source (job/engine_build.h): each
// engine's commit and subject, the base..new commit list, `git diff --stat` and a link made
// from [build] diff_url; in report.json under "code" and on the page as its own section.
#pragma once

#include <jansson.h>

#include "job.h"
#include "svg.h"

/// The "code" record of the job (a new reference), or NULL when no engine is built from source.
json_t *report_code_json(const JobConfig *job);
/// The page's "Code" section from a report's "code" record; nothing for NULL.
void report_code_html(const json_t *code, SvgBuf *o);
