// SPDX-License-Identifier: MIT
// xqforge nnue train: trains a net on positions files on this machine (threads); kind = train
// (coordinator/nnue_fit.c) is the same over MPI ranks.
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "files.h"
#include "nnue_run.h"

static void train_usage(FILE *out)
{
    fprintf(
        out,
        "usage: xqforge nnue train --data A.xqp[,B.xqp...] --out DIR [--hidden N] [--epochs N]\n"
        "                          [--batch N] [--lr X] [--lambda X] [--val X] [--seed N]\n"
        "                          [--threads N] [--checkpoint-steps N]\n"
        "                          [--checkpoint-seconds S] [--fresh] [--features xq1|xq2]\n\n"
        "Trains the XQ1 net (search/nnue.h; --features xq2: the king-bucketed XQ2 net,\n"
        "a version-2 file) on the positions (tuning/nnue_train.h): loss\n"
        "(sigmoid(eval/K) - target)^2, K = 400/ln 10, target = lambda sigmoid(score/K) +\n"
        "(1 - lambda) result; Adam on mini-batches, cosine learning rate from lr to lr/10;\n"
        "the games hashed into the val fraction are held out for the validation loss.\n"
        "Defaults: hidden %d (a multiple of 32), epochs %d, batch %d, lr 0.001, lambda %g,\n"
        "val 0.05, seed 1, threads = cores.\n"
        "The net exported is the epoch with the lowest validation loss (the last with --val 0).\n"
        "Writes DIR/net.nnue (quantized; refused when its evaluation differs from the float\n"
        "net's by more than %.1f cp on average over the validation positions),\n"
        "DIR/train-loss.csv (epoch,train,val; row 0 the start) and DIR/train.ckpt every N\n"
        "steps (default %d) or S seconds (default %d), at each epoch's end and on\n"
        "SIGINT/SIGTERM (exit 130): a rerun with the same files and settings (threads too)\n"
        "resumes exactly; one with others is refused, naming the difference (--fresh: start\n"
        "over).\n"
        "Exit status: 0 done, 1 failure while training, 2 bad usage or unusable input,\n"
        "130 stopped by a signal after a checkpoint.\n",
        NNUE_TRAIN_HIDDEN, NNUE_TRAIN_EPOCHS, NNUE_TRAIN_BATCH, NNUE_TRAIN_LAMBDA,
        NNUE_TRAIN_EXPORT_TOLERANCE, NNUE_TRAIN_CHECKPOINT_STEPS, NNUE_TRAIN_CHECKPOINT_SECONDS);
}

static atomic_bool stop_flag;

static void on_stop_signal(int sig)
{
    (void)sig;
    atomic_store(&stop_flag, true);
}

/// Splits the comma-separated list (in place) into run->data; false if there are too many.
static bool split_files(char *list, NnueTrainRun *run)
{
    run->files = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (run->files == NNUE_TRAIN_FILES_MAX)
            return false;
        run->data[run->files++] = tok;
    }
    return run->files > 0;
}

/// One option and its value into run; false with the reason said.
static bool parse_option(const char *o, const char *v, NnueTrainRun *run, char *files)
{
    NnueTrainConfig *c = &run->cfg;
    long n = 0;
    char *end = NULL;
    double d = strtod(v, &end);
    bool num = end && end != v && !*end && isfinite(d);
    if (!strcmp(o, "--data")) {
        snprintf(files, 8192, "%s", v);
        if (!split_files(files, run)) {
            fprintf(stderr, "xqforge nnue train: --data: 1 to %d files, comma-separated\n",
                    NNUE_TRAIN_FILES_MAX);
            return false;
        }
        return true;
    }
    if (!strcmp(o, "--out"))
        run->dir = v;
    else if (!strcmp(o, "--hidden") && cli_parse_int(v, 32, NNUE_HIDDEN_MAX, &n) && n % 32 == 0)
        c->hidden = (int)n;
    else if (!strcmp(o, "--epochs") && cli_parse_int(v, 1, 100000, &n))
        c->epochs = (int)n;
    else if (!strcmp(o, "--batch") && cli_parse_int(v, 1, 1 << 24, &n))
        c->batch = (int)n;
    else if (!strcmp(o, "--threads") && cli_parse_int(v, 0, NNUE_TRAIN_THREADS_MAX, &n))
        c->threads = (int)n;
    else if (!strcmp(o, "--seed") && cli_parse_int(v, 0, 1L << 62, &n))
        c->seed = (uint64_t)n;
    else if (!strcmp(o, "--checkpoint-steps") && cli_parse_int(v, 1, 100000000, &n))
        c->checkpoint_steps = (int)n;
    else if (!strcmp(o, "--checkpoint-seconds") && num && d >= 0 && d <= 1e6)
        c->checkpoint_seconds = d;
    else if (!strcmp(o, "--lr") && num && d > 0 && d <= 1)
        c->lr = d;
    else if (!strcmp(o, "--lambda") && num && d >= 0 && d <= 1)
        c->lambda = d;
    else if (!strcmp(o, "--val") && num && d >= 0 && d < 1)
        c->val = d;
    else if (!strcmp(o, "--features") && (!strcmp(v, "xq1") || !strcmp(v, "xq2")))
        c->version = !strcmp(v, "xq2") ? NNUE_VERSION_XQ2 : NNUE_VERSION;
    else {
        fprintf(stderr, "xqforge nnue train: bad option or value: %s %s (see --help)\n", o, v);
        return false;
    }
    return true;
}

static int train_exit(NnueTrainStatus st)
{
    return st == NNUE_TRAIN_OK        ? 0
           : st == NNUE_TRAIN_DRAINED ? 130
           : st == NNUE_TRAIN_ERR_DATA || st == NNUE_TRAIN_ERR_STALE || st == NNUE_TRAIN_ERR_CONFIG
               ? EXIT_USAGE
               : 1;
}

int cmd_nnue_train(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            train_usage(stdout);
            return 0;
        }
    static char files[8192];
    NnueTrainRun run = {.description = "nnue train", .ranks = 1};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    run.cfg = (NnueTrainConfig){.hidden = NNUE_TRAIN_HIDDEN,
                                .epochs = NNUE_TRAIN_EPOCHS,
                                .batch = NNUE_TRAIN_BATCH,
                                .threads = cores > 0 ? (int)cores : 1,
                                .lr = 0.001,
                                .lambda = NNUE_TRAIN_LAMBDA,
                                .val = 0.05,
                                .seed = 1,
                                .checkpoint_steps = NNUE_TRAIN_CHECKPOINT_STEPS,
                                .checkpoint_seconds = NNUE_TRAIN_CHECKPOINT_SECONDS,
                                .log = stdout};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--fresh")) {
            run.cfg.fresh = true;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "xqforge nnue train: '%s' needs a value\n", argv[i]);
            return EXIT_USAGE;
        }
        if (!parse_option(argv[i], argv[i + 1], &run, files))
            return EXIT_USAGE;
        i++;
    }
    if (!run.files || !run.dir) {
        fprintf(stderr, "xqforge nnue train: --data FILES and --out DIR are required\n");
        train_usage(stderr);
        return EXIT_USAGE;
    }
    if (files_mkdir_p(run.dir) != 0) {
        fprintf(stderr, "xqforge nnue train: cannot create %s\n", run.dir);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    atomic_store(&stop_flag, false);
    struct sigaction sa = {0};
    sa.sa_handler = on_stop_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    run.cfg.stop = &stop_flag;
    char why[1024] = "";
    NnueRunResult *res = calloc(1, sizeof *res);
    if (!res)
        return 1;
    NnueTrainStatus st = nnue_train_run(&run, res, why, sizeof why);
    int rc = train_exit(st);
    if (st == NNUE_TRAIN_DRAINED)
        printf("Drained: %s; run it again to finish\n", why);
    else if (st != NNUE_TRAIN_OK)
        fprintf(stderr, "xqforge nnue train: %s%s\n", why,
                st == NNUE_TRAIN_ERR_STALE ? ": start afresh with --fresh" : "");
    else
        printf("Loss %.6f -> %.6f (val %.6f -> %.6f) at epoch %d of %d%s; %.0f positions/s on %d "
               "threads (%.0f per thread)\n"
               "Quantized: %.3f cp mean, %.1f cp max difference from the float net over %llu "
               "validation positions\n"
               "Net %s (id %s); loss per epoch: %s\n",
               res->train.loss_start, res->train.loss_end, res->train.val_start, res->train.val_end,
               res->train.best_epoch, res->train.epochs_done,
               res->train.best_val > 0 ? " (the best validation: its net is exported)" : "",
               res->train.positions_per_second, run.cfg.threads,
               res->train.positions_per_second / run.cfg.threads, res->quant_mean_cp,
               res->quant_max_cp, (unsigned long long)res->val_n, res->net_path, res->net_id,
               res->loss_path);
    free(res);
    return rc;
}
