// SPDX-License-Identifier: MIT
// The job kinds as data: one JobKindDef row per JobKind (job_kinds.c), holding what the rest
// of the program asks of a kind (its name and section, which engines it needs, whether it
// plays games, its pairings and work units, its output files and checkpoint, whether every
// rank fits together, its validation and the items of its identity that are not plain keys).
// The job model, the identity and the run layer ask the row instead of naming kinds.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "identity.h"
#include "job.h"

struct JobCtx; // the parser's context (job_ctx.h, internal)

/// Which engine sections a kind needs.
typedef enum {
    JOB_ENGINES_NONE,        // none: it runs the builtin code (book, texel, train)
    JOB_ENGINES_ONE_BUILTIN, // exactly one builtin engine, which plays itself (spsa, datagen)
    JOB_ENGINES_TWO_OR_MORE  // two or more engines of any protocol (sprt: exactly two)
} JobEngines;

/// One file a job writes in [output] dir: the key that names it, or a fixed name.
typedef struct {
    const char *sec, *key; // NULL key: a name the program itself writes (what says whose)
    const char *name;      // may be empty: turned off
    const char *what;
} JobOutput;

enum { JOB_OUTPUTS_MAX = 16 };

typedef struct {
    const char *name;    // as written in [job] kind
    const char *section; // the kind's own section (its keys in job_keys.def), or NULL
    JobEngines engines;
    bool plays_games;       // engines play games: engines, openings, adjudication in its identity
    bool clocked;           // its games run on the job's clocks ([time] scale), into a PGN
    bool collective;        // every rank fits together (no journal; its checkpoint resumes it)
    const char *checkpoint; // a collective kind's state file in output.dir, else NULL
    /// The pairings a round plays (NULL: none).
    int (*pairings)(const JobConfig *j);
    /// The work units of the whole run (NULL: none, a collective kind).
    uint64_t (*units_total)(const JobConfig *j);
    /// Appends the kind's files in output.dir to out[*n] (report.json, report.html and the
    /// report spool are everyone's); scratch holds derived names.
    void (*outputs)(const JobConfig *j, JobOutput *out, int *n, char *scratch, size_t len);
    /// Checks the parsed job whole (engines, rounds, the kind's settings), naming the key.
    bool (*validate)(struct JobCtx *c);
    /// The kind's identity items that are not plain keys: called before each KEY_HOOK row of
    /// its section (at: the row's name) and once after the rows (at: NULL).
    IdentityStatus (*identity_extra)(Identity *id, const JobConfig *j, uint64_t bench,
                                     const char *at);
} JobKindDef;

/// The row of kind k, or NULL when k is not a kind.
const JobKindDef *job_kind_def(JobKind k);

/// The section of kind k as its row spells it ("doe" for [doe]), so that code about one
/// kind's section never spells the name again; NULL for a kind without a section (match).
const char *job_kind_section(JobKind k);

/// The name in output.dir of the run's state: output.journal, or the collective kind's
/// checkpoint ("texel.ckpt", "train.ckpt").
const char *job_state_file(const JobConfig *j);

/// The files a run writes in output.dir (what --fresh moves aside), in a stable order, names
/// turned off included as empty strings; scratch holds derived names ("WEIGHTS.diff").
/// Returns their number; only the first cap are stored in names.
int job_output_files(const JobConfig *j, const char **names, int cap, char *scratch,
                     size_t scratch_len);

/// Every file of the run in output.dir with the key naming it (the report spool too, when it
/// is a plain name there), in the order in which validation names a clash. Returns the count.
int job_outputs(const JobConfig *j, JobOutput out[JOB_OUTPUTS_MAX], char *scratch, size_t len);

/// The work units of the whole run: games: rounds x pairings (= GamePlan.pairs_total); book:
/// ceil(max_candidates (or 100 x positions) / unit); datagen: ceil(max_games (or positions)
/// / unit); texel and train: 0.
uint64_t job_units_total(const JobConfig *j);
