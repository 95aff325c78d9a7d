// SPDX-License-Identifier: MIT
// The job parser's context, internal to job/ (job.c, job_kinds.c): where a setting came from,
// the engines and their settings kept for later, the first error, and the setters that check
// a value and name the file, line, section and key when it is bad. job.c reads sections and
// keys into it, job_kinds.c validates a kind with it; neither includes the other.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "job.h"

enum {
    ENTRIES_MAX = 1024, // engine settings in [time], [each] and [engine NAME] sections
    INI_NAME_MAX = INIFILE_NAME_MAX,
    ENGINE_NAME_MAX = 40,
    TARGET_TIME = -2,
    TARGET_EACH = -1
};

typedef enum {
    SEC_JOB,
    SEC_ENGINE,
    SEC_EACH,
    SEC_TIME,
    SEC_OPENINGS,
    SEC_ADJUDICATION,
    SEC_SPRT,
    SEC_OUTPUT,
    SEC_REPORT,
    SEC_BOOK,
    SEC_SPSA,
    SEC_TEXEL,
    SEC_DATAGEN,
    SEC_TRAIN,
    SEC_VERIFY,
    SEC_BUILD,
    SEC_LOOP,
    SEC_DOE,
    SEC_NB
} Section;

/// Where a setting came from: a file line, or an override (line 0).
typedef struct {
    int line;
    const char *override;
} Origin;

typedef struct {
    int target; // engine index, TARGET_EACH or TARGET_TIME
    Origin at;
    char key[INI_NAME_MAX + 1];
    char value[JOB_LINE_MAX + 1];
} Entry;

typedef struct JobCtx {
    const char *path;
    const char *override_dir; // where an override's relative path is taken from (NULL: as typed)
    Origin at;
    JobConfig *job;
    JobStatus st;
    char *why;
    size_t why_len;
    // Engines, in order of appearance, and their settings
    char engines[JOB_PLAYERS_MAX][ENGINE_NAME_MAX + 1];
    int engine_lines[JOB_PLAYERS_MAX];
    Entry entries[ENTRIES_MAX];
    int entry_count;
    bool has_kind, has_rounds;
    int section_lines[SEC_NB];     // where each section (but [engine NAME]) is first written
    int repeated, repeat_lines[2]; // the first section written twice, and its two lines
    PlayerConfig scratch;          // checks an engine setting where it is written
    TimeControl scratch_tc;
} JobCtx;

/// Records the first error as "where: [section] key: message"; later ones are dropped.
/// Returns false, so that a setter can end with `return ctx_fail(...)`.
__attribute__((format(printf, 5, 6))) bool ctx_fail(JobCtx *c, JobStatus st, const char *section,
                                                    const char *key, const char *fmt, ...);
/// The index of v in names[0..n), or -1.
int ctx_parse_name(const char *v, const char *const *names, int n);
/// Where a relative path written at c->at comes from: the job file's directory, or, for an
/// override, the current directory (NULL: kept as typed).
const char *ctx_path_base(const JobCtx *c);

// Setters: each parses v for [sec] key, stores it, or records the error and returns false.
bool ctx_set_enum(JobCtx *c, const char *sec, const char *key, const char *v,
                  const char *const *names, int n, int *out);
bool ctx_set_long(JobCtx *c, const char *sec, const char *key, const char *v, long lo, long hi,
                  long *out);
bool ctx_set_int(JobCtx *c, const char *sec, const char *key, const char *v, long lo, long hi,
                 int *out);
bool ctx_set_dbl(JobCtx *c, const char *sec, const char *key, const char *v, double lo, double hi,
                 double *out);
bool ctx_set_bool(JobCtx *c, const char *sec, const char *key, const char *v, bool *out);
bool ctx_set_text(JobCtx *c, const char *sec, const char *key, const char *v, char *dst,
                  size_t cap);
bool ctx_set_path(JobCtx *c, const char *sec, const char *key, const char *v, char *dst,
                  size_t cap);
bool ctx_set_file_name(JobCtx *c, const char *sec, const char *key, const char *v, char *dst,
                       size_t cap);
bool ctx_unknown(JobCtx *c, const char *sec, const char *key);

/// Applies the settings of target (TARGET_TIME, TARGET_EACH or an engine) to player i.
bool ctx_apply_entries(JobCtx *c, int i, int target);
/// Builds player i from its settings ([time], [each], its section) and checks it whole;
/// tunes_eval: the job sets its evaluation weights (spsa), which the NNUE net never reads.
bool ctx_build_player(JobCtx *c, int i, bool tunes_eval);

/// The row of [section] key in job_keys.def, or NULL.
const JobKeyDef *ctx_key_find(const char *section, const char *key);
/// Sets a plain key from its row: its range, the checks its flags ask for, the same errors as
/// the typed setters.
bool ctx_set_key(JobCtx *c, const JobKeyDef *k, const char *v);
/// Every plain key at its default.
void ctx_key_defaults(JobConfig *j);
