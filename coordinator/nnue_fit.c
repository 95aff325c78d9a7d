// SPDX-License-Identifier: MIT
// kind = train: nnue_train_run over the ranks of a Link (gradients summed with link_sum), the
// loss curves in the run's report.
#include "nnue_fit.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fitrun.h"
#include "nnue_run.h"
#include "report.h"
#include "run_report.h"

/// The trainer's sums over ranks through the link (MPI lives in proto/link.c, not here).
static bool reduce_link(void *ctx, double *buf, int n) { return link_sum(ctx, buf, n); }

/// The run's page (rank 0) and its loss file, read for the epochs before a resumed run's.
typedef struct {
    RunReport rr;
    const char *loss_path;
    bool history; // the loss file's earlier rows are on the page
} FitPage;

/// A row of the loss file (epoch, train, val) as points of the two curves; a NaN (no
/// validation positions) is left out rather than drawn as zero.
static void loss_row(void *ctx, int epoch, const double *v, int n)
{
    Report *r = ctx;
    if (n >= 1 && isfinite(v[0]))
        report_series_add(r, "loss", "train", epoch, v[0]);
    if (n >= 2 && isfinite(v[1]))
        report_series_add(r, "loss", "validation", epoch, v[1]);
}

/// The loss curves: a point per epoch, the page refreshed as [report] says. The rows before
/// the first epoch reported come from the loss file, read only now: nnue_train_run cuts it back
/// to the checkpoint after this page began, and a kill may have left rows past it.
static void on_epoch(void *ctx, int epoch, double train, double val)
{
    FitPage *page = ctx;
    if (!page->rr.report)
        return;
    if (!page->history)
        fitrun_loss_read(page->loss_path, epoch, loss_row, page->rr.report);
    page->history = true;
    double v[2] = {train, val};
    loss_row(page->rr.report, epoch, v, 2);
    if (run_report_due(&page->rr))
        run_report_publish(&page->rr, false, NULL);
}

/// The exit status as `xqforge run` documents it: 2 for what the user must fix (the data,
/// the settings, a checkpoint of other inputs), 1 for a failure while training, 130 drained.
static int fit_exit(NnueTrainStatus st)
{
    if (st == NNUE_TRAIN_OK)
        return 0;
    if (st == NNUE_TRAIN_DRAINED)
        return 130;
    return st == NNUE_TRAIN_ERR_DATA || st == NNUE_TRAIN_ERR_STALE || st == NNUE_TRAIN_ERR_CONFIG
               ? 2
               : 1;
}

/// The finished run's facts on the page: data, training, and the net with its quantization.
static void report_result(Report *r, const NnueTrainRun *run, const NnueRunResult *res, int size)
{
    const NnueTrainReport *t = &res->train;
    report_fact(r, "Data", "positions", "%llu (%llu training, %llu validation on rank 0)",
                (unsigned long long)res->total, (unsigned long long)res->train_n,
                (unsigned long long)res->val_n);
    report_fact(r, "Data", "ranks x threads", "%d x %d", size, run->cfg.threads);
    report_fact(r, "Training", "loss",
                "%.6f at the start, %.6f at the end (validation %.6f -> %.6f)", t->loss_start,
                t->loss_end, t->val_start, t->val_end);
    report_fact(r, "Training", "epochs", "%d (resumed from %d)", t->epochs_done, t->resumed_epoch);
    report_fact(r, "Training", "net exported", "epoch %d of %d (%s)", t->best_epoch, t->epochs_done,
                t->best_val > 0 ? "the lowest validation loss" : "the last: no validation");
    report_fact(r, "Training", "throughput", "%.0f positions/s per rank (%.0f per thread)",
                t->positions_per_second, t->positions_per_second / run->cfg.threads);
    report_fact(r, "Net", "file", "%s (id %s, hidden %d)", res->net_path, res->net_id,
                run->cfg.hidden);
    report_fact(r, "Net", "quantization",
                "%.3f cp mean, %.1f cp max |int - float| (tolerance %.1f)", res->quant_mean_cp,
                res->quant_max_cp, NNUE_TRAIN_EXPORT_TOLERANCE);
    // The same figures as numbers, for what reads the page (a loop's history).
    report_set(r, "quantization",
               json_pack("{s:f, s:f}", "mean_cp", res->quant_mean_cp, "max_cp", res->quant_max_cp));
}

int nnue_fit_job(Link *link, const JobConfig *job, const char *dir, uint64_t fingerprint,
                 const atomic_bool *stop)
{
    int rank = link_rank(link), size = link_size(link);
    // threads = 0: the node's cores shared among the ranks on it, so they do not oversubscribe.
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int per_node = link_node_size(link) > 0 ? link_node_size(link) : 1;
    int threads =
        job->train.threads > 0 ? job->train.threads : (int)((cores > 0 ? cores : 1) / per_node);
    NnueTrainRun run = {.dir = dir,
                        .net = job->train.net[0] ? job->train.net : NULL,
                        .loss = job->train.loss[0] ? job->train.loss : NULL,
                        .description = job->name,
                        .init = job->train.init[0] ? job->train.init : NULL,
                        .rank = rank,
                        .ranks = size};
    for (int i = 0; i < job->train.data_count && i < NNUE_TRAIN_FILES_MAX; i++)
        run.data[run.files++] = job->train.data[i];
    run.cfg = (NnueTrainConfig){
        .hidden = job->train.hidden,
        .version = strcmp(job->train.features, "xq2") ? NNUE_VERSION : NNUE_VERSION_XQ2,
        .epochs = job->train.epochs,
        .batch = job->train.batch,
        .threads = threads < 1 ? 1 : threads,
        .lr = job->train.lr,
        .lambda = job->train.lambda,
        .val = job->train.val,
        .seed = job->train.seed,
        .checkpoint_steps = NNUE_TRAIN_CHECKPOINT_STEPS, // [train] has no keys
        .checkpoint_seconds = NNUE_TRAIN_CHECKPOINT_SECONDS,
        .inputs = {.job = fingerprint},
        .reduce = reduce_link,
        .reduce_ctx = link,
        .stop = stop,
        .log = rank == 0 ? stdout : NULL};
    if (rank == 0)
        printf("Job %s: NNUE training on %d file%s over %d rank%s x %d threads\n", job->name,
               run.files, run.files == 1 ? "" : "s", size, size == 1 ? "" : "s", run.cfg.threads);
    FitPage page;
    memset(&page, 0, sizeof page);
    RunReport *rr = &page.rr;
    char run_id[32], loss_path[4200];
    snprintf(run_id, sizeof run_id, "%016llx", (unsigned long long)fingerprint);
    const char *loss = run.loss ? run.loss : "train-loss.csv";
    if (loss[0] == '/')
        snprintf(loss_path, sizeof loss_path, "%.4000s", loss);
    else
        snprintf(loss_path, sizeof loss_path, "%.2000s/%.2000s", dir, loss);
    char title[64];
    snprintf(title, sizeof title, "%s: NNUE net", job_kind_name(JOB_TRAIN));
    if (rank == 0)
        run_report_begin(rr, job, dir, run_id, title);
    if (rank == 0 && rr->report) {
        report_plot(rr->report, "loss", REPORT_PLOT_LINE, "Loss per epoch (mean squared error)",
                    "epoch", "loss");
        page.loss_path = loss_path;
        run.cfg.on_epoch = on_epoch;
        run.cfg.ctx = &page;
    }
    char why[1024] = "";
    NnueRunResult *res = calloc(1, sizeof *res); // two paths of 4200 bytes: on the heap
    NnueTrainStatus st = res ? nnue_train_run(&run, res, why, sizeof why) : NNUE_TRAIN_ERR_NOMEM;
    if (rank == 0 && rr->report && !page.history) // stopped before an epoch ended
        fitrun_loss_read(loss_path, INT_MAX, loss_row, rr->report);
    if (rank == 0 && rr->report && st == NNUE_TRAIN_OK) {
        report_result(rr->report, &run, res, size);
        run_report_publish(rr, true, NULL);
    }
    if (rank == 0)
        run_report_end(rr, st == NNUE_TRAIN_OK);
    // Every rank says its own failure (a data file may be missing on one node only).
    if (st == NNUE_TRAIN_DRAINED && rank == 0)
        printf("Drained: %s; run it again with --resume to finish\n", why);
    else if (st != NNUE_TRAIN_OK && st != NNUE_TRAIN_DRAINED)
        fprintf(stderr, "xqforge train (rank %d): %s%s\n", rank,
                why[0] ? why : nnue_train_strerror(st),
                st == NNUE_TRAIN_ERR_STALE ? ": start afresh (remove the checkpoint)" : "");
    else if (rank == 0)
        printf("Loss %.6f -> %.6f (val %.6f -> %.6f) at epoch %d of %d%s; %.0f positions/s per "
               "rank\n"
               "Quantized: %.3f cp mean, %.1f cp max difference from the float net\n"
               "Net %s (id %s); loss per epoch: %s\n",
               res->train.loss_start, res->train.loss_end, res->train.val_start, res->train.val_end,
               res->train.best_epoch, res->train.epochs_done,
               res->train.best_val > 0 ? " (the best validation: its net is exported)" : "",
               res->train.positions_per_second, res->quant_mean_cp, res->quant_max_cp,
               res->net_path, res->net_id, res->loss_path);
    free(res);
    return fit_exit(st);
}
