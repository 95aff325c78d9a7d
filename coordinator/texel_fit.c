// SPDX-License-Identifier: MIT
// kind = texel and `xqforge texel fit`: texel_fit (tuning/texel.c) with its files around it.
// Every rank loads its shard and takes part in every sum; rank 0 alone reads and writes files
// (checkpoint, loss CSV, weights, report), so the ranks need no shared directory.
#include "texel_fit.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "files.h"
#include "fitrun.h"
#include "report.h"
#include "run_report.h"
#include "texel.h"
#include "timeman.h"

/// The trainer's sums over ranks through the link (MPI lives in proto/link.c, not here).
static bool reduce_link(void *ctx, double *buf, int n) { return link_sum(ctx, buf, n); }

/// The run's report (rank 0): loss per epoch and the largest weight changes, rewritten
/// every 10 epochs and at the end (report.json and report.html in the output directory).
typedef struct {
    Report *r;
    const char *dir;
    const Weights *start;
    uint64_t version;
    RunReport *rr;   // a job's report: written and delivered as [report] says (else NULL)
    int64_t last_ms; // when the report was last refreshed (texel fit)
} FitReport;

/// The 12 largest changes from the start, largest |change| first: the chart is rebuilt each
/// time (a weight that fell out of the 12 leaves it).
static void report_changes(FitReport *fr, const double *w)
{
    int order[PARAM_NB], n = 0;
    for (int i = 0; i < PARAM_NB; i++)
        if (fabs(w[i] - fr->start->v[i]) >= 0.5)
            order[n++] = i;
    for (int i = 1; i < n; i++) // insertion sort: stable, so ties keep table order
        for (int j = i; j > 0 && fabs(w[order[j]] - fr->start->v[order[j]]) >
                                     fabs(w[order[j - 1]] - fr->start->v[order[j - 1]]);
             j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    report_plot(fr->r, "changes", REPORT_PLOT_BARS, "Largest weight changes (centipawns)", "weight",
                "tuned - start");
    report_bars_clear(fr->r, "changes");
    for (int k = 0; k < n && k < 12; k++)
        report_bar_set(fr->r, "changes", params_info[order[k]].name,
                       w[order[k]] - fr->start->v[order[k]]);
}

/// A job's report goes out as its [report] section says; `texel fit` writes its own files.
static void report_flush(FitReport *fr, bool final)
{
    if (fr->rr) {
        run_report_publish(fr->rr, final, NULL);
        return;
    }
    char why[512];
    report_set_version(fr->r, ++fr->version, final);
    if (report_write(fr->r, fr->dir, why, sizeof why) != REPORT_OK)
        fprintf(stderr, "xqforge texel: report: %s\n", why);
}

static void on_epoch(void *ctx, int epoch, double loss, double val, const double *w)
{
    FitReport *fr = ctx;
    report_series_add(fr->r, "loss", "loss", epoch, loss);
    if (isfinite(val))
        report_series_add(fr->r, "loss", "validation", epoch, val);
    // Every 10 epochs, as often as [report] interval says (a job) or every 5 s: each write
    // syncs report.json and report.html, which a fast fit must not wait for every epoch.
    int64_t now = timeman_now_ms();
    bool due = fr->rr ? run_report_due(fr->rr) : now - fr->last_ms >= 5000;
    if (epoch % 10 == 0 && epoch > 0 && due) {
        fr->last_ms = now;
        report_changes(fr, w);
        report_flush(fr, false);
    }
}

/// A row of the loss file into the page: a resumed fit's shows the epochs before it too.
static void loss_row(void *ctx, int epoch, const double *v, int n)
{
    if (n >= 1 && isfinite(v[0]))
        report_series_add(ctx, "loss", "loss", epoch, v[0]);
    if (n >= 2 && isfinite(v[1]))
        report_series_add(ctx, "loss", "validation", epoch, v[1]);
}

/// The weights that changed, largest change first, as "name start tuned change" lines.
static void write_diff(FILE *f, const Weights *from, const Weights *to, int show)
{
    int order[PARAM_NB], n = 0;
    for (int i = 0; i < PARAM_NB; i++)
        if (from->v[i] != to->v[i])
            order[n++] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && abs(to->v[order[j]] - from->v[order[j]]) >
                                     abs(to->v[order[j - 1]] - from->v[order[j - 1]]);
             j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    fprintf(f, "# %d weights changed (name start tuned change), largest first\n", n);
    for (int k = 0; k < n && k < show; k++) {
        int i = order[k];
        fprintf(f, "%-28s %6d %6d %+6d\n", params_info[i].name, from->v[i], to->v[i],
                to->v[i] - from->v[i]);
    }
}

/// name in dir, or name itself when it is an absolute path.
static void path_in(char *out, size_t len, const char *dir, const char *name)
{
    if (name[0] == '/')
        snprintf(out, len, "%.4000s", name);
    else
        snprintf(out, len, "%.2000s/%.2000s", dir, name);
}

enum { EXIT_BAD_INPUT = 2, EXIT_DRAINED = 130 }; // README: 2 bad input, 130 drained

/// Says (stderr, and in the report) what makes a fit's weights suspect: too few positions per
/// tuned weight (below TEXEL_POSITIONS_PER_WEIGHT it overfits) and TEXEL_BOUNDS_WARN or more
/// tuned weights ending on a bound of their range (named).
static void fit_warnings(const TexelFitJob *fj, const Weights *start, const Weights *out,
                         uint64_t total, Report *r)
{
    int tuned = 0, ids[PARAM_NB];
    for (int i = 0; i < PARAM_NB; i++)
        tuned += fj->tuned[i];
    json_t *list = json_array();
    char text[4096];
    if (tuned && total < (uint64_t)tuned * TEXEL_POSITIONS_PER_WEIGHT) {
        snprintf(text, sizeof text,
                 "%llu positions for %d tuned weights: %.0f per weight, below the %d per weight "
                 "a fit needs not to overfit (more data, or fewer params)",
                 (unsigned long long)total, tuned, (double)total / tuned,
                 TEXEL_POSITIONS_PER_WEIGHT);
        fprintf(stderr, "xqforge texel: warning: %s\n", text);
        json_array_append_new(list, json_string(text));
    }
    int n = texel_at_bounds(out, start, fj->tuned, ids);
    if (n >= TEXEL_BOUNDS_WARN) {
        int len =
            snprintf(text, sizeof text, "%d tuned weights ended on a bound of their range:", n);
        for (int k = 0; k < n && len < (int)sizeof text - 64; k++)
            len += snprintf(text + len, sizeof text - (size_t)len, " %s=%d%s",
                            params_info[ids[k]].name, out->v[ids[k]],
                            out->v[ids[k]] <= params_info[ids[k]].min ? "(min)" : "(max)");
        fprintf(stderr, "xqforge texel: warning: %s\n", text);
        json_array_append_new(list, json_string(text));
    }
    for (size_t k = 0; r && list && k < json_array_size(list); k++)
        report_fact(r, "Warnings", k ? "bounds" : "warning", "%s",
                    json_string_value(json_array_get(list, k)));
    if (r && list)
        report_set(r, "texel_warnings", json_incref(list));
    json_decref(list);
}

/// Whether a load failed on the input itself (exit 2) rather than on this machine (exit 1).
static bool bad_input(TexelStatus st) { return st != TEXEL_ERR_NOMEM && st != TEXEL_ERR_CONFIG; }

/// The start weights and this rank's shard; 0, or the exit status with the reason said.
static int load_inputs(const TexelFitJob *fj, int rank, int size, int threads, Weights *start,
                       TexelSet **set, uint64_t *total)
{
    char why[1024] = "";
    weights_default(start);
    int rc = 0;
    if (fj->start[0] && weights_load(start, fj->start, why, sizeof why) != PARAMS_OK)
        rc = EXIT_BAD_INPUT;
    TexelStatus st = TEXEL_OK;
    if (rc == 0)
        st = texel_set_load(fj->data, rank, size, threads, set, total, why, sizeof why);
    if (st != TEXEL_OK)
        rc = bad_input(st) ? EXIT_BAD_INPUT : 1;
    if (rc)
        fprintf(stderr, "xqforge texel (rank %d): %s\n", rank, why);
    return rc;
}

/// Rank 0: what the checkpoint must have been made from, and whether it is resumed (*found, at
/// *epoch); 0, or the exit status with the reason said (a checkpoint of other inputs is refused).
static int checkpoint_inputs(const TexelFitJob *fj, int size, TexelFitConfig *cfg, bool *found,
                             int *epoch)
{
    char why[1024] = "";
    TexelInputs *in = &cfg->inputs;
    *in = (TexelInputs){0, 0, fj->fingerprint, size};
    const char *unread = !files_hash(fj->data, &in->data)                     ? fj->data
                         : fj->start[0] && !files_hash(fj->start, &in->start) ? fj->start
                                                                              : NULL;
    if (unread) {
        fprintf(stderr, "xqforge texel: %s: %s\n", unread, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    // --fresh removes the old checkpoint now, so a fit killed before its first write cannot
    // leave the old one to be resumed by the next plain run.
    if (fj->fresh && unlink(cfg->checkpoint) != 0 && errno != ENOENT) {
        fprintf(stderr, "xqforge texel: --fresh: cannot remove %s: %s\n", cfg->checkpoint,
                strerror(errno));
        return 1;
    }
    TexelStatus st = texel_checkpoint_check(cfg, found, epoch, why, sizeof why);
    if (st == TEXEL_OK)
        return 0;
    fprintf(stderr, "xqforge texel: %s%s\n", why,
            st == TEXEL_ERR_STALE ? ": start afresh with --fresh" : "");
    return st == TEXEL_ERR_STALE ? EXIT_BAD_INPUT : 1;
}

/// Loads this rank's shard, fits, and (rank 0) writes the weights, the diff and the loss.
int texel_fit_run(const TexelFitJob *fj, Link *link, const atomic_bool *stop)
{
    int rank = link ? link_rank(link) : 0, size = link ? link_size(link) : 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN); // threads = 0: every core of this machine
    int threads = fj->threads > 0 ? fj->threads : (int)(cores > 0 ? cores : 1);
    char why[1024] = "";
    Weights start;
    TexelSet *set = NULL;
    uint64_t total = 0;
    int64_t t0 = timeman_now_ms();
    int rc = load_inputs(fj, rank, size, threads, &start, &set, &total);
    double load_s = (timeman_now_ms() - t0) / 1000.0;
    char ckpt[4200], lossp[4200], wpath[4200], dpath[4200];
    path_in(ckpt, sizeof ckpt, fj->out_dir, "texel.ckpt");
    path_in(lossp, sizeof lossp, fj->out_dir, fj->loss);
    path_in(wpath, sizeof wpath, fj->out_dir, fj->weights);
    snprintf(dpath, sizeof dpath, "%.4000s.diff", wpath);
    TexelFitConfig cfg = {.epochs = fj->epochs,
                          .lr = fj->lr,
                          .l2 = fj->l2,
                          .k = fj->k,
                          .val = fj->val,
                          .checkpoint = rank == 0 ? ckpt : NULL,
                          .checkpoint_every = fj->checkpoint_every,
                          .checkpoint_seconds = fj->checkpoint_seconds,
                          .fresh = fj->fresh,
                          .log = rank == 0 ? stdout : NULL};
    memcpy(cfg.tuned, fj->tuned, sizeof cfg.tuned);
    bool resume = false;
    int from = 0;
    if (rc == 0 && rank == 0)
        rc = checkpoint_inputs(fj, size, &cfg, &resume, &from);
    // Every rank learns whether all loaded: none starts the fit's sums while another has left.
    if (link && !link_all_ok(link, rc == 0))
        rc = rc ? rc : EXIT_BAD_INPUT; // another rank failed and said why
    if (rc != 0) {
        texel_set_free(set);
        return rc;
    }
    if (rank == 0)
        printf("Loaded %llu positions on %d rank%s x %d threads in %.2f s\n",
               (unsigned long long)total, size, size == 1 ? "" : "s", threads, load_s);
    // The loss file continues only with the checkpoint it belongs to: its rows up to the
    // checkpoint's epoch are kept, the rest written again (or all of it, fresh).
    FILE *csv = NULL;
    if (rank == 0) {
        int kept = 0;
        if (fitrun_loss_open(lossp, TEXEL_LOSS_HEADER, from, &csv, &kept, why, sizeof why) !=
            FITRUN_OK)
            fprintf(stderr, "xqforge texel: loss file: %s\n", why);
        else if (kept < from)
            fprintf(stderr,
                    "xqforge texel: warning: %s held %d of the %d rows before the "
                    "checkpoint: the curve has a gap\n",
                    lossp, kept, from);
        why[0] = 0; // a loss file that cannot be written costs the curve, not the fit
    }
    cfg.loss_csv = csv;
    cfg.stop = stop;
    TexelExec x = {link ? reduce_link : NULL, link, threads};
    FitReport fr = {NULL, fj->out_dir, &start, 0, NULL, timeman_now_ms()};
    RunReport rr;
    // The report's run id: the job's identity, or for `texel fit` the inputs' hashes.
    char run_id[32];
    snprintf(run_id, sizeof run_id, "%016llx",
             (unsigned long long)(fj->fingerprint ? fj->fingerprint
                                                  : files_fnv(cfg.inputs.data, &cfg.inputs.start,
                                                              sizeof cfg.inputs.start)));
    char title[64];
    snprintf(title, sizeof title, "%s: evaluation fit", job_kind_name(JOB_TEXEL));
    if (rank == 0 && fj->job) {
        run_report_begin(&rr, fj->job, fj->out_dir, run_id, title);
        fr.r = rr.report;
        fr.rr = &rr;
    } else if (rank == 0) {
        fr.r = report_new(run_id, title, XQFORGE_VERSION);
    }
    if (fr.r) {
        report_plot(fr.r, "loss", REPORT_PLOT_LINE, "Loss per epoch (mean squared error)", "epoch",
                    "loss");
        fitrun_loss_read(lossp, INT_MAX, loss_row, fr.r); // cut to the checkpoint above
        report_fact(fr.r, "Data", "dataset", "%s", fj->data);
        report_fact(fr.r, "Data", "positions", "%llu", (unsigned long long)total);
        report_fact(fr.r, "Data", "ranks x threads", "%d x %d", size, threads);
        report_fact(fr.r, "Data", "load time", "%.2f s", load_s);
        cfg.on_epoch = on_epoch;
        cfg.ctx = &fr;
    }
    Weights out;
    TexelFitReport rep;
    TexelStatus st = texel_fit(set, &cfg, &start, &x, &out, &rep, why, sizeof why);
    // The final page shows the rounded weights that are written, not the fit's real values.
    if (fr.r && st == TEXEL_OK) {
        double w[PARAM_NB];
        for (int i = 0; i < PARAM_NB; i++)
            w[i] = out.v[i];
        report_changes(&fr, w);
        report_fact(fr.r, "Fit", "K", "%.4f", rep.k);
        report_fact(fr.r, "Fit", "loss", "%.6f at the start, %.6f at the end", rep.loss_start,
                    rep.loss_end);
        report_fact(fr.r, "Fit", "epochs", "%d (resumed from %d)", rep.epochs_done,
                    rep.resumed_from);
        if (isfinite(rep.val_start))
            report_fact(fr.r, "Fit", "validation",
                        "%.6f at the start, best %.6f at epoch %d (its weights written%s)",
                        rep.val_start, rep.best_val, rep.best_epoch,
                        rep.best_epoch == 0 ? ": the start's, the fit only overfits" : "");
        else
            report_fact(fr.r, "Fit", "validation", "none: the last epoch's weights written");
        report_fact(fr.r, "Fit", "time per epoch", "%.3f s", rep.seconds_per_epoch);
        report_fact(fr.r, "Fit", "L2 pull", "%g positions per weight per (100 cp)^2", fj->l2);
    }
    if (rank == 0 && st == TEXEL_OK)
        fit_warnings(fj, &start, &out, total, fr.r);
    if (fr.r && st == TEXEL_OK)
        report_flush(&fr, true);
    if (fr.rr)
        run_report_end(fr.rr, st == TEXEL_OK);
    else
        report_free(fr.r);
    if (csv)
        fclose(csv);
    texel_set_free(set);
    // A drain is not a failure: the checkpoint is written, and a rerun finishes the fit.
    if (st == TEXEL_DRAINED) {
        if (rank == 0)
            printf("Drained: %s; run it again (xqforge run --resume, or texel fit) to finish\n",
                   why);
        return EXIT_DRAINED;
    }
    if (st != TEXEL_OK) {
        fprintf(stderr, "xqforge texel (rank %d): %s%s\n", rank, why,
                st == TEXEL_ERR_STALE ? ": start afresh with --fresh" : "");
        return st == TEXEL_ERR_STALE ? EXIT_BAD_INPUT : 1;
    }
    if (rank != 0)
        return 0;
    printf("K %.4f, loss %.6f -> %.6f after %d epochs (%.3f s/epoch, %.0f positions/s per "
           "core)\n",
           rep.k, rep.loss_start, rep.loss_end, rep.epochs_done, rep.seconds_per_epoch,
           rep.seconds_per_epoch > 0 ? total / rep.seconds_per_epoch / (threads * size) : 0.0);
    if (isfinite(rep.val_start))
        printf("Validation loss %.6f -> %.6f; written: epoch %d of %d (validation %.6f, "
               "training %.6f)\n",
               rep.val_start, rep.val_end, rep.best_epoch, rep.epochs_done, rep.best_val,
               rep.best_loss);
    write_diff(stdout, &start, &out, 25); // the console: the largest changes; the file: all
    FILE *df = fopen(dpath, "w");
    if (df) {
        write_diff(df, &start, &out, PARAM_NB);
        fclose(df);
    }
    if (weights_save(&out, wpath) != PARAMS_OK) {
        fprintf(stderr, "xqforge texel: cannot write %s\n", wpath);
        return 1;
    }
    printf("Tuned weights: %s; changes: %s; loss per epoch: %s\n", wpath, dpath, lossp);
    return 0;
}

int texel_fit_job(Link *link, const JobConfig *job, const char *dir, uint64_t fingerprint,
                  const atomic_bool *stop)
{
    TexelFitJob *fj = calloc(1, sizeof *fj); // a few paths of JOB_TEXT_MAX: not on the stack
    if (!fj)
        return 1;
    fj->job = job;
    snprintf(fj->data, sizeof fj->data, "%s", job->texel.data);
    snprintf(fj->start, sizeof fj->start, "%s", job->texel.start);
    snprintf(fj->out_dir, sizeof fj->out_dir, "%s", dir);
    snprintf(fj->weights, sizeof fj->weights, "%s", job->texel.weights);
    snprintf(fj->loss, sizeof fj->loss, "%s", job->texel.loss);
    memcpy(fj->tuned, job->texel.tuned, sizeof fj->tuned);
    fj->epochs = job->texel.epochs;
    fj->threads = job->texel.threads;
    fj->lr = job->texel.lr;
    fj->l2 = job->texel.l2;
    fj->k = job->texel.k;
    fj->val = job->texel.val;
    fj->checkpoint_every = job->texel.checkpoint_every;
    fj->checkpoint_seconds = job->texel.checkpoint_seconds;
    // The checkpoint records the job's identity (its file, overrides, the dataset's and start
    // weights' bytes) besides what texel_fit_run adds (the settings, the rank count).
    int size = link_size(link);
    fj->fingerprint = fingerprint;
    if (link_rank(link) == 0)
        printf("Job %s: Texel fit of %s over %d rank%s\n", job->name, fj->data, size,
               size == 1 ? "" : "s");
    int rc = texel_fit_run(fj, link, stop);
    free(fj);
    return rc;
}
