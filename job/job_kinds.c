// SPDX-License-Identifier: MIT
// The job kinds, one row each (job_kinds.h): what a kind needs of its job file, what it
// writes and how much work it is, and the identity items its plain keys cannot say. A new
// kind is a row here, its section's rows in job_keys.def, and its enum value in job.h.
#include "job_kinds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_spec.h"
#include "files.h"
#include "job_ctx.h"
#include "job_verify.h"
#include "movegen.h"
#include "params.h"

// ---- Validation ---------------------------------------------------------------------------

/// A kind that runs the builtin code has no engine sections.
static bool no_engines(JobCtx *c, const char *why)
{
    if (c->job->player_count > 0)
        return ctx_fail(c, JOB_ERR_VALUE, "engine NAME", NULL, "%s", why);
    return true;
}

/// A book's windows, as the book and doe kinds name them in their sections.
typedef struct {
    int plies_min, plies_max, score_min, score_max;
    double draw_min, draw_max;
    const char *wdl_model;
} Windows;

/// No window may be empty, and a narrowed draw window needs the model that gives the draw
/// rates; each error names section's key.
static bool validate_windows(JobCtx *c, const char *section, const Windows *w)
{
    if (w->plies_min > w->plies_max)
        return ctx_fail(c, JOB_ERR_VALUE, section, "plies_max",
                        "plies_min (%d) is above plies_max (%d)", w->plies_min, w->plies_max);
    if (w->score_min > w->score_max)
        return ctx_fail(c, JOB_ERR_VALUE, section, "score_max",
                        "score_min (%d) is above score_max (%d)", w->score_min, w->score_max);
    if (w->draw_min > w->draw_max)
        return ctx_fail(c, JOB_ERR_VALUE, section, "draw_max",
                        "draw_min (%.12g) is above draw_max (%.12g)", w->draw_min, w->draw_max);
    if (!w->wdl_model[0] && (w->draw_min > 0 || w->draw_max < 1))
        return ctx_fail(c, JOB_ERR_VALUE, section, "wdl_model",
                        "draw_min/draw_max need a model: set %s.wdl_model (xqforge wdl fit)",
                        section);
    return true;
}

/// A book job needs no engines (it runs the builtin search) and no rounds.
static bool validate_book(JobCtx *c)
{
    const char *sec = job_kind_section(JOB_BOOK);
    const JobConfig *j = c->job;
    const __typeof__(j->book) *b = &j->book;
    Windows w = {b->plies_min, b->plies_max, b->score_min, b->score_max,
                 b->draw_min,  b->draw_max,  b->wdl_model};
    if (!no_engines(c, "a book job searches with the builtin engine: remove the engine sections") ||
        !validate_windows(c, sec, &w))
        return false;
    if (!j->book.wdl_model[0] && j->book.abort_margin > 0)
        return ctx_fail(c, JOB_ERR_VALUE, sec, "wdl_model",
                        "abort_margin needs a model: set book.wdl_model (xqforge wdl fit)");
    return true;
}

/// An SPSA job: one builtin engine (it plays itself), game pairs, at least one parameter.
static bool validate_spsa(JobCtx *c)
{
    JobConfig *j = c->job;
    if (j->player_count != 1)
        return ctx_fail(c, JOB_ERR_VALUE, "engine NAME", NULL,
                        "an spsa job tunes one builtin engine against itself (found %d engines)",
                        j->player_count);
    bool tunes_eval = false; // the net never reads evaluation weights (ctx_build_player)
    for (int k = 0; k < j->spsa.param_count; k++)
        tunes_eval |= !params_is_search(j->spsa.params[k].id);
    if (!ctx_build_player(c, 0, tunes_eval))
        return false;
    // The engine's checks named its line; what follows is about the job as a whole.
    c->at = (Origin){0, NULL};
    if (j->players[0].cfg.proto != PROTO_BUILTIN)
        return ctx_fail(c, JOB_ERR_VALUE, "engine NAME", "proto",
                        "spsa sets weights in-process: the engine must be builtin");
    if (!c->has_rounds)
        return ctx_fail(c, JOB_ERR_MISSING, "job", "rounds", "missing (game pairs = iterations)");
    if (!j->repeat)
        return ctx_fail(c, JOB_ERR_VALUE, "job", "repeat", "spsa plays game pairs: repeat = true");
    if (j->spsa.param_count == 0)
        return ctx_fail(c, JOB_ERR_MISSING, job_kind_section(JOB_SPSA), "params",
                        "no parameters: give params = all|psq|eval|NAME... or param = NAME, "
                        "start, min, max, c_end, r_end");
    // A parameter without its own r_end takes the section's, resolved only now that every line
    // is read: [spsa] r_end may come after the param lines.
    for (int i = 0; i < j->spsa.param_count; i++)
        if (isnan(j->spsa.params[i].r_end))
            j->spsa.params[i].r_end = j->spsa.r_end;
    return true;
}

/// A Texel job reads a dataset; it plays no games, so it has no engines and no rounds.
static bool validate_texel(JobCtx *c)
{
    if (!no_engines(c, "a texel job fits the builtin evaluation: remove the engine sections "
                       "(start weights: [texel] start = FILE)"))
        return false;
    if (!c->job->texel.data[0])
        return ctx_fail(c, JOB_ERR_MISSING, job_kind_section(JOB_TEXEL), "data",
                        "missing: the dataset file");
    return true;
}

/// A DOE root: a legal position with a move to make, written back as the board writes it (one
/// identity for every spelling of the position).
static bool validate_doe_root(JobCtx *c, char *root)
{
    const char *sec = job_kind_section(JOB_DOE);
    Board *b = malloc(sizeof *b);
    if (!b)
        return ctx_fail(c, JOB_ERR_VALUE, sec, "root", "out of memory");
    char why[256];
    bool ok = false;
    if (board_set_fen(b, root, why, sizeof why) != FEN_OK)
        ctx_fail(c, JOB_ERR_VALUE, sec, "root", "'%.300s': %s", root, why);
    else if (movegen_count_legal(b) == 0)
        ctx_fail(c, JOB_ERR_VALUE, sec, "root",
                 "'%.300s': the side to move has no legal move, so there is no tree", root);
    else {
        board_fen(b, root, JOB_TEXT_MAX);
        ok = true;
    }
    free(b);
    return ok;
}

/// A DOE book searches with the builtin engine; its windows must not be empty.
static bool validate_doe(JobCtx *c)
{
    JobConfig *j = c->job;
    __typeof__(j->doe) *d = &j->doe;
    Windows w = {d->plies_min, d->plies_max, d->score_min, d->score_max,
                 d->draw_min,  d->draw_max,  d->wdl_model};
    return no_engines(c,
                      "a doe job searches with the builtin engine: remove the engine sections") &&
           validate_windows(c, job_kind_section(JOB_DOE), &w) &&
           (!d->root[0] || validate_doe_root(c, d->root));
}

/// A datagen job: one builtin engine plays itself under a depth or nodes limit per move.
static bool validate_datagen(JobCtx *c)
{
    JobConfig *j = c->job;
    if (j->player_count != 1)
        return ctx_fail(c, JOB_ERR_VALUE, "engine NAME", NULL,
                        "a datagen job's one builtin engine plays itself (found %d engines)",
                        j->player_count);
    if (!ctx_build_player(c, 0, false))
        return false;
    c->at = (Origin){0, NULL};
    if (j->players[0].cfg.proto != PROTO_BUILTIN)
        return ctx_fail(c, JOB_ERR_VALUE, "engine NAME", "proto",
                        "datagen records the builtin search's scores: the engine must be builtin");
    const TimeControl *tc = &j->players[0].tc;
    if (!tc->depth && !tc->nodes)
        return ctx_fail(c, JOB_ERR_MISSING, "time", "depth",
                        "datagen searches each move to a fixed depth or node count: give depth "
                        "= N or nodes = N (in [time], [each] or the engine's section)");
    // rounds would be ignored: refused, so the user sees what ends the job instead.
    if (c->has_rounds)
        return ctx_fail(c, JOB_ERR_VALUE, "job", "rounds",
                        "a datagen job ends at [datagen] positions (cap the games with "
                        "max_games)");
    return true;
}

/// [train] features names one of the engine's net architectures.
static bool train_features_ok(JobCtx *c)
{
    const char *f = c->job->train.features;
    if (!strcmp(f, "xq1") || !strcmp(f, "xq2"))
        return true;
    return ctx_fail(c, JOB_ERR_VALUE, job_kind_section(JOB_TRAIN), "features",
                    "'%s': xq1 (colour x type x square) or xq2 (king-bucketed)", f);
}

/// A train job reads positions files; it plays no games, so it has no engines and no rounds.
static bool validate_train(JobCtx *c)
{
    if (!train_features_ok(c))
        return false;
    if (!no_engines(c, "a train job trains a net from positions files: remove the engine sections"))
        return false;
    if (c->job->train.data_count == 0)
        return ctx_fail(c, JOB_ERR_MISSING, job_kind_section(JOB_TRAIN), "data",
                        "missing: the positions files (.xqp, from kind = datagen)");
    if (c->has_rounds)
        return ctx_fail(c, JOB_ERR_VALUE, "job", "rounds", "a train job runs [train] epochs");
    return true;
}

/// A loop job: datagen's one builtin engine (its depth or nodes a move in datagen; the gate
/// plays it against itself at [loop] gate_tc or gate_nodes, one side with the new net), the
/// gate's SPRT bounds, and no [train] data (each generation's own).
static bool validate_loop(JobCtx *c)
{
    // Its own section and [train], which it reads for every generation.
    const char *loop = job_kind_section(JOB_LOOP), *train = job_kind_section(JOB_TRAIN);
    JobConfig *j = c->job;
    if (!train_features_ok(c))
        return false;
    if (j->player_count != 1)
        return ctx_fail(c, JOB_ERR_VALUE, "engine NAME", NULL,
                        "a loop job's one builtin engine makes the data and plays the gate (found "
                        "%d engines)",
                        j->player_count);
    if (!ctx_build_player(c, 0, false))
        return false;
    c->at = (Origin){0, NULL};
    if (j->players[0].cfg.proto != PROTO_BUILTIN)
        return ctx_fail(c, JOB_ERR_VALUE, "engine NAME", "proto",
                        "a loop trains the builtin engine's net: the engine must be builtin");
    const TimeControl *tc = &j->players[0].tc;
    if (!tc->depth && !tc->nodes)
        return ctx_fail(c, JOB_ERR_MISSING, "time", "depth",
                        "the loop's datagen searches each move to a fixed depth or node count: "
                        "give depth = N or nodes = N (in [time], [each] or the engine's section; "
                        "the gate's limit is [loop] gate_tc or gate_nodes)");
    if (c->has_rounds)
        return ctx_fail(c, JOB_ERR_VALUE, "job", "rounds",
                        "a loop job runs [loop] generations (the gate's games: gate_games)");
    if (j->train.data_count > 0)
        return ctx_fail(c, JOB_ERR_VALUE, train, "data",
                        "a loop trains on its own generations' data (remove [train] data; "
                        "[loop] keep sets the window)");
    if (!(j->loop.elo0 < j->loop.elo1))
        return ctx_fail(c, JOB_ERR_VALUE, loop, "elo1", "elo0 (%g) must be below elo1 (%g)",
                        j->loop.elo0, j->loop.elo1);
    if (!(j->loop.alpha + j->loop.beta < 1))
        return ctx_fail(c, JOB_ERR_VALUE, loop, "beta", "alpha + beta must be below 1");
    if (j->train.init[0])
        return ctx_fail(c, JOB_ERR_VALUE, train, "init",
                        "a loop starts each net from fresh weights or from its best net "
                        "([loop] from_scratch): remove [train] init");
    if (j->loop.gate_nodes > 0)
        return true;
    if (!j->loop.gate_tc[0])
        return ctx_fail(c, JOB_ERR_MISSING, loop, "gate_tc",
                        "empty: give a time control (10+0.1) or gate_nodes = N");
    PlayerConfig *pc = calloc(1, sizeof *pc); // large: not on the stack
    TimeControl gtc = {0};
    char why[256] = "out of memory";
    bool ok = pc && engine_spec_set(pc, &gtc, "tc", j->loop.gate_tc, NULL, why, sizeof why) ==
                        ENGINE_SPEC_OK;
    free(pc);
    return ok || ctx_fail(c, JOB_ERR_VALUE, loop, "gate_tc", "%s", why);
}

/// The index of the engine called name, or -1.
static int engine_named(const JobConfig *j, const char *name)
{
    for (int i = 0; i < j->player_count; i++)
        if (!strcmp(j->players[i].cfg.name, name))
            return i;
    return -1;
}

/// Two engines: which is new (tested, every figure its own) and which base, by [sprt] new and
/// base, else by the names "new" and "base", else the file's first engine is new; then new is
/// moved to players[0], so that every figure, file and page below reads from its side.
static bool assign_roles(JobCtx *c, const char *names)
{
    const char *sec = job_kind_section(JOB_SPRT);
    JobConfig *j = c->job;
    const char *nn = j->sprt.new_name, *bn = j->sprt.base_name;
    if (j->player_count != 2) {
        if (nn[0] || bn[0])
            return ctx_fail(c, JOB_ERR_VALUE, sec, nn[0] ? "new" : "base",
                            "roles are for two engines (found %d): with more, the first engine "
                            "is the gauntlet's base and [job] anchor sets the rating's zero",
                            j->player_count);
        return true;
    }
    int n = nn[0] ? engine_named(j, nn) : -1, b = bn[0] ? engine_named(j, bn) : -1;
    if (nn[0] && n < 0)
        return ctx_fail(c, JOB_ERR_VALUE, sec, "new", "'%s' is not one of the engines (%s)", nn,
                        names);
    if (bn[0] && b < 0)
        return ctx_fail(c, JOB_ERR_VALUE, sec, "base", "'%s' is not one of the engines (%s)", bn,
                        names);
    if (n >= 0 && n == b)
        return ctx_fail(c, JOB_ERR_VALUE, sec, "base",
                        "'%s' is also [sprt] new: the two roles need two engines", bn);
    if (n >= 0 || b >= 0) {
        j->roles = JOB_ROLES_NAMED;
        n = n >= 0 ? n : 1 - b;
    } else if (engine_named(j, "new") >= 0 && engine_named(j, "base") >= 0) {
        j->roles = JOB_ROLES_NAMES;
        n = engine_named(j, "new");
    } else {
        j->roles = JOB_ROLES_FIRST;
        n = 0;
    }
    if (n == 1) { // every per-engine array of the job and of the parser, swapped together
        JobPlayer p = j->players[0];
        j->players[0] = j->players[1], j->players[1] = p;
        JobSource s = j->sources[0];
        j->sources[0] = j->sources[1], j->sources[1] = s;
        char e[sizeof c->engines[0]];
        memcpy(e, c->engines[0], sizeof e);
        memcpy(c->engines[0], c->engines[1], sizeof e);
        memcpy(c->engines[1], e, sizeof e);
        int line = c->engine_lines[0];
        c->engine_lines[0] = c->engine_lines[1], c->engine_lines[1] = line;
    }
    return true;
}

const char *job_roles_text(JobRoles r)
{
    switch (r) {
    case JOB_ROLES_NAMED: return "[sprt] new and base";
    case JOB_ROLES_NAMES: return "the engines called new and base";
    case JOB_ROLES_FIRST: return "the first engine of the job file";
    case JOB_ROLES_DERIVED: return "the run that made this test: its new net or tuned weights";
    default: return "none";
    }
}

/// A game job (sprt, match): two or more engines, rounds; an SPRT has exactly two.
static bool validate_games(JobCtx *c, bool sprt)
{
    const char *sec = job_kind_section(JOB_SPRT);
    JobConfig *j = c->job;
    if (j->player_count < 2)
        return ctx_fail(c, JOB_ERR_MISSING, "engine NAME", NULL,
                        "at least two engines are needed (found %d)", j->player_count);
    for (int i = 0; i < j->player_count; i++)
        if (!ctx_build_player(c, i, false))
            return false;
    c->at = (Origin){0, NULL};
    char why[512];
    for (int a = 0; a < j->player_count; a++)
        for (int b = a + 1; b < j->player_count; b++)
            if (!engine_spec_check_pair(&j->players[a].cfg, &j->players[b].cfg, why, sizeof why))
                return ctx_fail(c, JOB_ERR_VALUE, "each", "option.UseNNUE", "%s", why);
    if (!c->has_rounds)
        return ctx_fail(c, JOB_ERR_MISSING, "job", "rounds", "missing");
    // The anchor names an engine of this job: a typo would otherwise silently rate against the
    // first engine.
    bool known = !j->anchor[0];
    char names[512] = "";
    for (int i = 0; i < j->player_count; i++) {
        known = known || !strcmp(j->anchor, j->players[i].cfg.name);
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", j->players[i].cfg.name);
    }
    if (!known)
        return ctx_fail(c, JOB_ERR_VALUE, "job", "anchor", "'%s' is not one of the engines (%s)",
                        j->anchor, names);
    j->sprt.enabled = sprt;
    if (sprt && j->player_count != 2)
        return ctx_fail(c, JOB_ERR_VALUE, "job", "kind",
                        "sprt needs exactly two engines (found %d); use kind = match",
                        j->player_count);
    if (!assign_roles(c, names))
        return false;
    if (sprt && !(j->sprt.elo0 < j->sprt.elo1))
        return ctx_fail(c, JOB_ERR_VALUE, sec, "elo1", "elo0 (%g) must be below elo1 (%g)",
                        j->sprt.elo0, j->sprt.elo1);
    if (sprt && !(j->sprt.alpha + j->sprt.beta < 1))
        return ctx_fail(c, JOB_ERR_VALUE, sec, "beta", "alpha + beta must be below 1");
    return true;
}

static bool validate_sprt(JobCtx *c) { return validate_games(c, true); }
static bool validate_match(JobCtx *c) { return validate_games(c, false); }

// ---- Pairings and units -------------------------------------------------------------------

/// Two engines: one pairing; more: each against the first (gauntlet) or every two.
static int pairings_games(const JobConfig *j)
{
    int n = j->player_count;
    if (n < 2)
        return 0;
    return j->round_robin ? n * (n - 1) / 2 : n - 1;
}

static int pairings_self(const JobConfig *j)
{
    (void)j;
    return 1; // the engine against itself, as plus and minus
}

static uint64_t units_games(const JobConfig *j)
{
    return (uint64_t)j->rounds * (uint64_t)job_pairing_count(j);
}

static uint64_t units_book(const JobConfig *j)
{
    // No cap given: 100 candidates a wanted position. The same rule as identity_book's
    // book.max_candidates item: the two must stay in step. Units are whole, rounded up.
    int64_t max =
        j->book.max_candidates ? j->book.max_candidates : 100 * (int64_t)j->book.positions;
    return (uint64_t)((max + j->book.unit - 1) / j->book.unit);
}

static uint64_t units_doe(const JobConfig *j)
{
    // A unit expands one leaf and scores at least one child, so the budget of scored positions
    // bounds the units; a round may start below the budget and end a round's worth past it.
    return (uint64_t)j->doe.nodes + (uint64_t)j->doe.round;
}

static uint64_t units_datagen(const JobConfig *j)
{
    // Without max_games, as many games as positions wanted: a bound the run meets only if its
    // games give less than one new position each; it normally ends at the target first.
    int64_t games = j->datagen.max_games ? j->datagen.max_games : j->datagen.positions;
    return (uint64_t)((games + j->datagen.unit - 1) / j->datagen.unit);
}

// ---- Output files -------------------------------------------------------------------------

/// Never writes past the array; job_outputs returns at most JOB_OUTPUTS_MAX.
static void out_add(JobOutput *out, int *n, const char *sec, const char *key, const char *name,
                    const char *what)
{
    if (*n < JOB_OUTPUTS_MAX)
        out[*n] = (JobOutput){sec, key, name, what};
    ++*n;
}

static void out_games(const JobConfig *j, JobOutput *out, int *n)
{
    out_add(out, n, "output", "pgn", j->output.pgn, NULL);
    out_add(out, n, "output", "positions", j->output.positions, NULL);
}

static void out_journal(const JobConfig *j, JobOutput *out, int *n)
{
    out_add(out, n, "output", "journal", j->output.journal, NULL);
    out_add(out, n, "output", "result", j->output.result, NULL);
}

static void outputs_games(const JobConfig *j, JobOutput *out, int *n, char *scratch, size_t len)
{
    (void)scratch, (void)len;
    out_games(j, out, n);
    out_journal(j, out, n);
}

/// [verify]'s SPRT keeps its files in a directory of its own (job_verify.h): --fresh moves
/// it aside with the tuning's files.
static void out_verify(const JobConfig *j, JobOutput *out, int *n)
{
    if (j->verify.enabled)
        out_add(out, n, NULL, NULL, JOB_VERIFY_DIR, "the [verify] SPRT's directory");
}

static void outputs_spsa(const JobConfig *j, JobOutput *out, int *n, char *scratch, size_t len)
{
    const char *sec = job_kind_section(JOB_SPSA);
    outputs_games(j, out, n, scratch, len);
    out_add(out, n, sec, "weights", j->spsa.weights, NULL);
    out_add(out, n, sec, "trajectory", j->spsa.trajectory, NULL);
    out_verify(j, out, n);
}

static void outputs_texel(const JobConfig *j, JobOutput *out, int *n, char *scratch, size_t len)
{
    const char *sec = job_kind_section(JOB_TEXEL);
    // The derived name lives in the caller's scratch, as long as the list that points to it.
    snprintf(scratch, len, "%s.diff", j->texel.weights);
    out_add(out, n, sec, "weights", j->texel.weights, NULL);
    out_add(out, n, sec, "loss", j->texel.loss, NULL);
    out_add(out, n, NULL, NULL, scratch, "the weights' difference file");
    out_add(out, n, NULL, NULL, "texel.ckpt", "the Texel checkpoint");
    out_verify(j, out, n);
}

static void outputs_book(const JobConfig *j, JobOutput *out, int *n, char *scratch, size_t len)
{
    const char *sec = job_kind_section(JOB_BOOK);
    (void)scratch, (void)len;
    out_journal(j, out, n);
    out_add(out, n, sec, "epd", j->book.epd, NULL);
    out_add(out, n, sec, "moves", j->book.moves, NULL);
    out_add(out, n, sec, "html", j->book.html, NULL);
}

static void outputs_doe(const JobConfig *j, JobOutput *out, int *n, char *scratch, size_t len)
{
    const char *sec = job_kind_section(JOB_DOE);
    (void)scratch, (void)len;
    out_journal(j, out, n);
    out_add(out, n, sec, "epd", j->doe.epd, NULL);
    out_add(out, n, sec, "moves", j->doe.moves, NULL);
    out_add(out, n, sec, "dat", j->doe.dat, NULL);
    out_add(out, n, sec, "tree", j->doe.tree, NULL);
}

static void outputs_datagen(const JobConfig *j, JobOutput *out, int *n, char *scratch, size_t len)
{
    (void)scratch, (void)len;
    out_journal(j, out, n);
    out_add(out, n, job_kind_section(JOB_DATAGEN), "file", j->datagen.file, NULL);
}

static void outputs_train(const JobConfig *j, JobOutput *out, int *n, char *scratch, size_t len)
{
    const char *sec = job_kind_section(JOB_TRAIN);
    (void)scratch, (void)len;
    out_add(out, n, sec, "net", j->train.net, NULL);
    out_add(out, n, sec, "loss", j->train.loss, NULL);
    out_add(out, n, NULL, NULL, "train.ckpt", "the training checkpoint");
}

/// The loop's record, its promoted nets and the best one; the generations' directories are
/// moved aside with them by the run (run/session.c).
static void outputs_loop(const JobConfig *j, JobOutput *out, int *n, char *scratch, size_t len)
{
    (void)j, (void)scratch, (void)len;
    out_add(out, n, NULL, NULL, "history.json", "the loop's record");
    out_add(out, n, NULL, NULL, "nets", "the promoted nets");
    out_add(out, n, NULL, NULL, "best.nnue", "the best net");
}

// ---- Identity items that are not plain keys -----------------------------------------------

/// The SPRT's model changes every LLR, so the verdict: a resume under another model would
/// mix two tests. [sprt] has no KEY_HOOK row: called once, after the section's keys.
static IdentityStatus identity_sprt(Identity *id, const JobConfig *j, uint64_t bench,
                                    const char *at)
{
    (void)bench, (void)at;
    return identity_add(id, "sprt.model",
                        j->sprt.model == JOB_SPRT_LOGISTIC ? "logistic" : "normalized");
}

/// SPSA: the iteration count (rounds) sets the gain schedule, so it is part of the identity
/// (before the section's keys); the parameters follow them.
static IdentityStatus identity_spsa(Identity *id, const JobConfig *j, uint64_t bench,
                                    const char *at)
{
    (void)bench;
    // The one hook is a_ratio's row: the iterations go just before it.
    if (at)
        return identity_addf(id, "spsa.iterations", "%d", j->rounds);
    IdentityStatus st = IDENTITY_OK;
    for (int i = 0; i < j->spsa.param_count && !st; i++) {
        const JobSpsaParam *p = &j->spsa.params[i];
        char key[128], start[32];
        const char *name = (unsigned)p->id < PARAM_NB ? params_info[p->id].name : "?";
        snprintf(key, sizeof key, "spsa.param.%s", name);
        if (p->has_start)
            snprintf(start, sizeof start, "%.12g", p->start);
        else
            // The engine's configured value: the engine's own items say what that is.
            snprintf(start, sizeof start, "engine");
        // r_end as validate_spsa resolves it, so the identity does not depend on where it was set.
        st = identity_addf(id, key, "start=%s min=%.12g max=%.12g c_end=%.12g r_end=%.12g", start,
                           p->min, p->max, p->c_end, isnan(p->r_end) ? j->spsa.r_end : p->r_end);
    }
    return st;
}

/// Book: the rules first, then the search settings grouped as the generator uses them, the
/// candidate cap as resolved, and the bench signature of the search last.
static IdentityStatus identity_book(Identity *id, const JobConfig *j, uint64_t bench,
                                    const char *at)
{
    const __typeof__(j->book) *b = &j->book;
    if (!at)
        return identity_addf(id, "book.bench", "%llu", (unsigned long long)bench);
    if (!strcmp(at, "positions"))
        return identity_add_rules(id, &j->rules);
    if (!strcmp(at, "plies_min"))
        return identity_addf(id, "book.plies", "%d-%d", b->plies_min, b->plies_max);
    if (!strcmp(at, "multipv"))
        return identity_addf(id, "book.select", "multipv=%d depth=%d margin=%d temperature=%.12g",
                             b->multipv, b->select_depth, b->margin, b->temperature);
    if (!strcmp(at, "verify_depth")) {
        IdentityStatus st = identity_addf(
            id, "book.verify", "depth=%d window=%d..%d either_side=%s hash_mb=%d", b->verify_depth,
            b->score_min, b->score_max, b->either_side ? "true" : "false", b->hash_mb);
        // The draw-rate window only when it is on, so that books without one keep their
        // identity: the model by content, then the window.
        if (st == IDENTITY_OK && b->wdl_model[0])
            st = identity_add_file(id, "book.wdl_model", b->wdl_model);
        if (st == IDENTITY_OK && b->wdl_model[0])
            st = identity_addf(id, "book.draw", "%.12g..%.12g", b->draw_min, b->draw_max);
        // The early abort changes the scores of the positions it gives up on: an item when on.
        if (st == IDENTITY_OK && b->wdl_model[0] && b->abort_margin > 0)
            st = identity_addf(id, "book.abort", "margin=%.12g depth=%d", b->abort_margin,
                               b->abort_depth);
        return st;
    }
    int64_t max_candidates = b->max_candidates ? b->max_candidates : 100 * (int64_t)b->positions;
    return identity_addf(id, "book.max_candidates", "%lld", (long long)max_candidates);
}

/// DOE: the rules first, the tree's settings as rows, the bench signature of the search last.
static IdentityStatus identity_doe(Identity *id, const JobConfig *j, uint64_t bench, const char *at)
{
    if (!at) {
        IdentityStatus st =
            j->doe.root[0] ? identity_add(id, "doe.root", j->doe.root) : IDENTITY_OK;
        return st ? st : identity_addf(id, "doe.bench", "%llu", (unsigned long long)bench);
    }
    return identity_add_rules(id, &j->rules);
}

/// Texel: which weights are fitted (all, or their count and a hash of their names), the fit
/// and k (0: fitted).
static IdentityStatus identity_texel(Identity *id, const JobConfig *j, uint64_t bench,
                                     const char *at)
{
    (void)bench, (void)at;
    const __typeof__(j->texel) *x = &j->texel;
    int tuned = 0;
    // A hash of the names, not the list: the item stays one short line whatever is tuned.
    uint64_t h = FILES_FNV_BASIS;
    for (int i = 0; i < PARAM_NB; i++)
        if (x->tuned[i]) {
            tuned++;
            h = files_fnv(h, params_info[i].name, strlen(params_info[i].name) + 1);
        }
    IdentityStatus st = tuned == PARAM_NB ? identity_add(id, "texel.params", "all")
                                          : identity_addf(id, "texel.params", "%d weights %016llx",
                                                          tuned, (unsigned long long)h);
    if (!st)
        st = identity_addf(id, "texel.fit", "epochs=%d lr=%.12g l2=%.12g", x->epochs, x->lr, x->l2);
    if (!st && x->k == 0)
        st = identity_add(id, "texel.k", "fitted");
    else if (!st)
        st = identity_addf(id, "texel.k", "%.12g", x->k);
    return st;
}

/// Datagen: the games' settings in one item (positions and seed are plain keys).
static IdentityStatus identity_datagen(Identity *id, const JobConfig *j, uint64_t bench,
                                       const char *at)
{
    (void)bench;
    const __typeof__(j->datagen) *d = &j->datagen;
    // The games' settings go before random_plies' row (its hook); nothing after the rows.
    if (!at)
        return IDENTITY_OK;
    // The filters are written only away from their defaults (the anchors' filters on, the
    // others off): the identities of runs before them stay what they were.
    char filters[128] = "";
    size_t n = 0;
    if (!d->skip_capture)
        n += (size_t)snprintf(filters + n, sizeof filters - n, " skip_capture=false");
    if (!d->skip_in_check)
        n += (size_t)snprintf(filters + n, sizeof filters - n, " skip_in_check=false");
    if (d->skip_early_plies)
        n += (size_t)snprintf(filters + n, sizeof filters - n, " skip_early_plies=%d",
                              d->skip_early_plies);
    if (d->skip_wdl)
        snprintf(filters + n, sizeof filters - n, " skip_wdl=%d", d->skip_wdl);
    return identity_addf(id, "datagen.games", "random_plies=%d min_ply=%d unit=%d max_games=%lld%s",
                         d->random_plies, d->min_ply, d->unit, (long long)d->max_games, filters);
}

/// Train: the data by content, the net's shape and every setting of the fit.
/// [train] has no KEY_HOOK row: called once, after the section's keys.
static IdentityStatus identity_train(Identity *id, const JobConfig *j, uint64_t bench,
                                     const char *at)
{
    (void)bench, (void)at;
    const __typeof__(j->train) *t = &j->train;
    IdentityStatus st = IDENTITY_OK;
    for (int i = 0; i < t->data_count && !st; i++) {
        char key[32];
        snprintf(key, sizeof key, "train.data.%d", i);
        st = identity_add_file(id, key, t->data[i]);
    }
    // features only when not xq1: the identities of XQ1 runs stay what they were.
    if (!st && strcmp(t->features, "xq1"))
        st = identity_addf(id, "train.net", "hidden=%d features=%s", t->hidden, t->features);
    else if (!st)
        st = identity_addf(id, "train.net", "hidden=%d", t->hidden);
    // Only when set, so that the identities of runs from fresh weights stay what they were.
    if (!st && t->init[0])
        st = identity_add_file(id, "train.init", t->init);
    if (!st)
        st = identity_addf(
            id, "train.fit", "epochs=%d batch=%d lr=%.12g lambda=%.12g val=%.12g seed=%llu",
            t->epochs, t->batch, t->lr, t->lambda, t->val, (unsigned long long)t->seed);
    return st;
}

// ---- The table ----------------------------------------------------------------------------

// Fields left out are false or NULL: no section, no pairings, no units, no extra identity.

// Indexed by JobKind, so job_kind_def is a lookup; a kind left without a row has no name
// there and reads as NULL.
static const JobKindDef KINDS[] = {
    [JOB_SPRT] = {.name = "sprt",
                  .section = "sprt",
                  .engines = JOB_ENGINES_TWO_OR_MORE,
                  .plays_games = true,
                  .clocked = true,
                  .pairings = pairings_games,
                  .units_total = units_games,
                  .outputs = outputs_games,
                  .validate = validate_sprt,
                  .identity_extra = identity_sprt},
    [JOB_MATCH] = {.name = "match",
                   .engines = JOB_ENGINES_TWO_OR_MORE,
                   .plays_games = true,
                   .clocked = true,
                   .pairings = pairings_games,
                   .units_total = units_games,
                   .outputs = outputs_games,
                   .validate = validate_match},
    [JOB_SPSA] = {.name = "spsa",
                  .section = "spsa",
                  .engines = JOB_ENGINES_ONE_BUILTIN,
                  .plays_games = true,
                  .clocked = true,
                  .pairings = pairings_self,
                  .units_total = units_games,
                  .outputs = outputs_spsa,
                  .validate = validate_spsa,
                  .identity_extra = identity_spsa},
    [JOB_TEXEL] = {.name = "texel",
                   .section = "texel",
                   .engines = JOB_ENGINES_NONE,
                   .collective = true,
                   .checkpoint = "texel.ckpt",
                   .outputs = outputs_texel,
                   .validate = validate_texel,
                   .identity_extra = identity_texel},
    [JOB_BOOK] = {.name = "book",
                  .section = "book",
                  .engines = JOB_ENGINES_NONE,
                  .units_total = units_book,
                  .outputs = outputs_book,
                  .validate = validate_book,
                  .identity_extra = identity_book},
    [JOB_DATAGEN] = {.name = "datagen",
                     .section = "datagen",
                     .engines = JOB_ENGINES_ONE_BUILTIN,
                     .plays_games = true,
                     .units_total = units_datagen,
                     .outputs = outputs_datagen,
                     .validate = validate_datagen,
                     .identity_extra = identity_datagen},
    [JOB_TRAIN] = {.name = "train",
                   .section = "train",
                   .engines = JOB_ENGINES_NONE,
                   .collective = true,
                   .checkpoint = "train.ckpt",
                   .outputs = outputs_train,
                   .validate = validate_train,
                   .identity_extra = identity_train},
    [JOB_LOOP] = {.name = "loop",
                  .section = "loop",
                  .engines = JOB_ENGINES_ONE_BUILTIN,
                  .collective = true,
                  .checkpoint = "history.json",
                  .outputs = outputs_loop,
                  .validate = validate_loop},
    [JOB_DOE] = {.name = "doe",
                 .section = "doe",
                 .engines = JOB_ENGINES_NONE,
                 .units_total = units_doe,
                 .outputs = outputs_doe,
                 .validate = validate_doe,
                 .identity_extra = identity_doe},
};
_Static_assert(sizeof KINDS / sizeof KINDS[0] == JOB_KIND_NB, "a row for every JobKind");

const JobKindDef *job_kind_def(JobKind k)
{
    return (unsigned)k < JOB_KIND_NB && KINDS[k].name ? &KINDS[k] : NULL;
}

const char *job_kind_section(JobKind k)
{
    const JobKindDef *d = job_kind_def(k);
    return d ? d->section : NULL;
}

const char *job_kind_name(JobKind k)
{
    const JobKindDef *d = job_kind_def(k);
    return d ? d->name : "?";
}

const char *job_state_file(const JobConfig *j)
{
    const JobKindDef *d = job_kind_def(j->kind);
    // A collective kind keeps no journal: its checkpoint is the run's state.
    return d && d->collective ? d->checkpoint : j->output.journal;
}

int job_outputs(const JobConfig *j, JobOutput out[JOB_OUTPUTS_MAX], char *scratch, size_t len)
{
    const JobKindDef *d = job_kind_def(j->kind);
    int n = 0;
    // Every kind's first: validate_outputs refuses a key naming one of these.
    out_add(out, &n, NULL, NULL, "report.json", "the run report");
    out_add(out, &n, NULL, NULL, "report.html", "the run report's page");
    if (d)
        d->outputs(j, out, &n, scratch, len);
    if (j->report.url_count > 0 && !strchr(j->report.spool, '/'))
        out_add(out, &n, "report", "spool", j->report.spool, NULL);
    return n < JOB_OUTPUTS_MAX ? n : JOB_OUTPUTS_MAX;
}

int job_output_files(const JobConfig *j, const char **names, int cap, char *scratch,
                     size_t scratch_len)
{
    JobOutput out[JOB_OUTPUTS_MAX];
    int n = job_outputs(j, out, scratch, scratch_len), count = 0;
    for (int i = 0; i < n; i++) {
        if (out[i].sec && !strcmp(out[i].sec, "report"))
            continue; // the spool is the uploader's, kept across runs
        if (count < cap)
            names[count] = out[i].name;
        count++;
    }
    return count;
}

int job_pairing_count(const JobConfig *job)
{
    const JobKindDef *d = job_kind_def(job->kind);
    return d && d->pairings ? d->pairings(job) : 0;
}

uint64_t job_units_total(const JobConfig *j)
{
    const JobKindDef *d = job_kind_def(j->kind);
    return d && d->units_total ? d->units_total(j) : 0;
}
