// SPDX-License-Identifier: MIT
// xqforge texel: Texel datasets and fitting.
//   texel extract [-o FILE] [--skip N] PGN...   quiet positions of games, with their results
//   texel info FILE                             the dataset's header
//   texel fit --data FILE [options]             fit on this machine (threads)
// and `xqforge run` of a kind = texel job: the same fit over MPI ranks, each rank holding a
// shard of the positions, gradients summed with MPI_Allreduce (proto/link.c).
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "job.h"
#include "link.h"
#include "params.h"
#include "pgn.h"
#include "report.h"
#include "run_common.h"
#include "texel.h"
#include "timeman.h"
#include "wire.h"

static void texel_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge texel extract [-o FILE] [--skip N] PGN...\n"
            "       xqforge texel info FILE\n"
            "       xqforge texel fit --data FILE [--start WEIGHTS] [--epochs N] [--lr X]\n"
            "                         [--l2 X] [--k X] [--threads N] [--params LIST] [-o FILE]\n"
            "       mpirun -np N xqforge run JOB   (kind = texel: the fit over ranks)\n\n"
            "extract: every quiet position (not in check, best move not a capture after a\n"
            "  quiescence search) after the first N plies (default 8) of each game, labelled\n"
            "  with the game's result; games without a result are skipped. Default output\n"
            "  texel.xqd.\n"
            "fit: minimises (result - sigmoid(K eval / 400))^2 over the dataset with Adam,\n"
            "  K fitted first (unless --k); --params all|psq|eval|NAME,... (default all);\n"
            "  writes the tuned weights (default texel-weights.txt) and prints the changes.\n");
}

static int extract(int argc, char **argv)
{
    const char *out = "texel.xqd";
    long skip = 8;
    int first = argc;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--skip") && i + 1 < argc) {
            if (!cli_parse_int(argv[++i], 0, 1000, &skip)) {
                fprintf(stderr, "xqforge texel: --skip '%s': expected 0..1000\n", argv[i]);
                return EXIT_USAGE;
            }
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "xqforge texel extract: unknown option '%s'\n", argv[i]);
            return EXIT_USAGE;
        } else {
            first = i;
            break;
        }
    }
    if (first >= argc) {
        texel_usage(stderr);
        return EXIT_USAGE;
    }
    char why[512];
    TexelWriter *tw;
    if (texel_writer_open(out, &tw, why, sizeof why) != TEXEL_OK) {
        fprintf(stderr, "xqforge texel: %s\n", why);
        return 1;
    }
    GameRecord *rec = malloc(sizeof *rec);
    Board *b = malloc(sizeof *b);
    Move moves[GAME_MAX_PLIES];
    uint64_t games = 0, skipped = 0, bad = 0, seen = 0;
    int64_t t0 = timeman_now_ms();
    int rc = rec && b ? 0 : 1;
    for (int a = first; a < argc && rc == 0; a++) {
        FILE *in = fopen(argv[a], "r");
        if (!in) {
            fprintf(stderr, "xqforge texel: %s: %s\n", argv[a], strerror(errno));
            rc = 1;
            break;
        }
        int line = 0, got;
        while ((got = pgn_read(in, rec, &line, why, sizeof why)) != 0) {
            if (got < 0) {
                fprintf(stderr, "xqforge texel: %s: %s (game skipped)\n", argv[a], why);
                bad++;
                continue;
            }
            if (rec->outcome == OUTCOME_NONE) {
                skipped++;
                continue;
            }
            double red = rec->outcome == OUTCOME_RED_WINS ? 1
                         : rec->outcome == OUTCOME_DRAW   ? 0.5
                                                          : 0;
            for (int m = 0; m < rec->ply_count; m++)
                moves[m] = rec->moves[m].move;
            TexelStatus ts = texel_writer_add_game(tw, b, rec->start_fen, moves, rec->ply_count,
                                                   rec->book_plies, red, (int)skip, &seen);
            if (ts == TEXEL_ERR_POSITION) {
                bad++;
                continue;
            }
            if (ts != TEXEL_OK) {
                fprintf(stderr, "xqforge texel: cannot write %s\n", out);
                rc = 1;
                break;
            }
            games++;
        }
        fclose(in);
    }
    uint64_t kept = texel_writer_count(tw);
    if (rc != 0) {
        texel_writer_discard(tw); // a failed extraction leaves any earlier file alone
        fprintf(stderr, "xqforge texel: nothing written to %s\n", out);
    } else if (texel_writer_close(tw, why, sizeof why) != TEXEL_OK) {
        fprintf(stderr, "xqforge texel: %s\n", why);
        rc = 1;
    }
    double secs = (timeman_now_ms() - t0) / 1000.0;
    printf("%llu games (%llu without a result, %llu unreadable): %llu positions looked at, %llu "
           "quiet kept in %s (%.1f s)\n",
           (unsigned long long)games, (unsigned long long)skipped, (unsigned long long)bad,
           (unsigned long long)seen, (unsigned long long)kept, out, secs);
    free(rec);
    free(b);
    return rc;
}

static int info(int argc, char **argv)
{
    if (argc != 1) {
        texel_usage(stderr);
        return EXIT_USAGE;
    }
    uint64_t n = 0;
    char why[512];
    if (texel_file_info(argv[0], &n, why, sizeof why) != TEXEL_OK) {
        fprintf(stderr, "xqforge texel: %s\n", why);
        return 2;
    }
    struct stat sb;
    double bytes = stat(argv[0], &sb) == 0 ? (double)sb.st_size : 0;
    printf("%s: Texel dataset version %d, %llu positions, %.0f bytes each with its trace\n",
           argv[0], TEXEL_VERSION, (unsigned long long)n, n ? bytes / (double)n : 0.0);
    return 0;
}

// ---- The fit, on one machine or over ranks -----------------------------------------------

typedef struct {
    char data[JOB_TEXT_MAX], start[JOB_TEXT_MAX], out_dir[JOB_TEXT_MAX];
    char weights[JOB_TEXT_MAX], loss[JOB_TEXT_MAX];
    bool tuned[PARAM_NB];
    int epochs, threads;
    double lr, l2, k;
    uint64_t fingerprint;
} FitJob;

static bool reduce_link(void *ctx, double *buf, int n) { return link_sum(ctx, buf, n); }

/// The run's report (rank 0): loss per epoch and the largest weight changes, rewritten
/// every 10 epochs and at the end (report.json and report.html in the output directory).
typedef struct {
    Report *r;
    const char *dir;
    const Weights *start;
    uint64_t version;
} FitReport;

static void report_changes(FitReport *fr, const double *w)
{
    bool used[PARAM_NB] = {false};
    report_plot(fr->r, "changes", REPORT_PLOT_BARS, "Largest weight changes (centipawns)", "weight",
                "tuned - start");
    for (int k = 0; k < 12; k++) { // the 12 largest, by selection
        int best = -1;
        for (int i = 0; i < PARAM_NB; i++)
            if (!used[i] &&
                (best < 0 || fabs(w[i] - fr->start->v[i]) > fabs(w[best] - fr->start->v[best])))
                best = i;
        if (best < 0 || fabs(w[best] - fr->start->v[best]) < 0.5)
            break;
        used[best] = true;
        report_bar_set(fr->r, "changes", params_info[best].name, w[best] - fr->start->v[best]);
    }
}

static void report_flush(FitReport *fr, bool final)
{
    char why[512];
    report_set_version(fr->r, ++fr->version, final);
    if (report_write(fr->r, fr->dir, why, sizeof why) != REPORT_OK)
        fprintf(stderr, "xqforge texel: report: %s\n", why);
}

static void on_epoch(void *ctx, int epoch, double loss, const double *w)
{
    FitReport *fr = ctx;
    report_series_add(fr->r, "loss", "loss", epoch, loss);
    if (epoch % 10 == 9) {
        report_changes(fr, w);
        report_flush(fr, false);
    }
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

static void path_in(char *out, size_t len, const char *dir, const char *name)
{
    if (name[0] == '/')
        snprintf(out, len, "%.4000s", name);
    else
        snprintf(out, len, "%.2000s/%.2000s", dir, name);
}

/// Loads this rank's shard, fits, and (rank 0) writes the weights, the diff and the loss.
static int fit_run(const FitJob *fj, Link *link)
{
    int rank = link ? link_rank(link) : 0, size = link ? link_size(link) : 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = fj->threads > 0 ? fj->threads : (int)(cores > 0 ? cores : 1);
    char why[1024] = "";
    Weights start;
    weights_default(&start);
    bool ok = !fj->start[0] || weights_load(&start, fj->start, why, sizeof why) == PARAMS_OK;
    TexelSet *set = NULL;
    uint64_t total = 0;
    int64_t t0 = timeman_now_ms();
    if (ok &&
        texel_set_load(fj->data, rank, size, threads, &set, &total, why, sizeof why) != TEXEL_OK)
        ok = false;
    if (!ok)
        fprintf(stderr, "xqforge texel (rank %d): %s\n", rank, why);
    if (link && !link_all_ok(link, ok))
        ok = false;
    if (!ok) {
        texel_set_free(set);
        return 1;
    }
    double load_s = (timeman_now_ms() - t0) / 1000.0;
    if (rank == 0)
        printf("Loaded %llu positions on %d rank%s x %d threads in %.2f s\n",
               (unsigned long long)total, size, size == 1 ? "" : "s", threads, load_s);
    char ckpt[4200], lossp[4200], wpath[4200], dpath[4200];
    path_in(ckpt, sizeof ckpt, fj->out_dir, "texel.ckpt");
    path_in(lossp, sizeof lossp, fj->out_dir, fj->loss);
    path_in(wpath, sizeof wpath, fj->out_dir, fj->weights);
    snprintf(dpath, sizeof dpath, "%.4000s.diff", wpath);
    FILE *csv = rank == 0 ? fopen(lossp, "a") : NULL;
    if (csv && ftell(csv) == 0)
        fprintf(csv, "epoch,loss\n");
    TexelFitConfig cfg = {.epochs = fj->epochs,
                          .lr = fj->lr,
                          .l2 = fj->l2,
                          .k = fj->k,
                          .checkpoint = rank == 0 ? ckpt : NULL,
                          .fingerprint = fj->fingerprint,
                          .log = rank == 0 ? stdout : NULL,
                          .loss_csv = csv};
    memcpy(cfg.tuned, fj->tuned, sizeof cfg.tuned);
    TexelExec x = {link ? reduce_link : NULL, link, threads};
    FitReport fr = {NULL, fj->out_dir, &start, 0};
    char run_id[32];
    snprintf(run_id, sizeof run_id, "%016llx", (unsigned long long)fj->fingerprint);
    if (rank == 0 && (fr.r = report_new(run_id, "texel: evaluation fit", XQFORGE_VERSION))) {
        report_plot(fr.r, "loss", REPORT_PLOT_LINE, "Loss per epoch (mean squared error)", "epoch",
                    "loss");
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
        report_fact(fr.r, "Fit", "time per epoch", "%.3f s", rep.seconds_per_epoch);
        report_flush(&fr, true);
    }
    report_free(fr.r);
    if (csv)
        fclose(csv);
    texel_set_free(set);
    if (st != TEXEL_OK) {
        fprintf(stderr, "xqforge texel (rank %d): %s\n", rank, why);
        return 1;
    }
    if (rank != 0)
        return 0;
    printf("K %.4f, loss %.6f -> %.6f after %d epochs (%.3f s/epoch, %.0f positions/s per "
           "core)\n",
           rep.k, rep.loss_start, rep.loss_end, rep.epochs_done, rep.seconds_per_epoch,
           rep.seconds_per_epoch > 0 ? total / rep.seconds_per_epoch / (threads * size) : 0.0);
    write_diff(stdout, &start, &out, 25);
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

static bool parse_params(const char *list, bool *tuned)
{
    char buf[4096], *save = NULL;
    snprintf(buf, sizeof buf, "%s", list);
    memset(tuned, 0, sizeof(bool) * PARAM_NB);
    for (char *w = strtok_r(buf, " ,", &save); w; w = strtok_r(NULL, " ,", &save)) {
        bool all = !strcmp(w, "all"), psq = !strcmp(w, "psq"), ev = !strcmp(w, "eval");
        int one = params_find(w);
        if (!all && !psq && !ev && one < 0) {
            fprintf(stderr, "xqforge texel: --params: '%s' is not a weight\n", w);
            return false;
        }
        for (int i = 0; i < PARAM_NB; i++)
            if (all || (psq && params_is_psq(i)) || (ev && !params_is_psq(i)) || i == one)
                tuned[i] = true;
    }
    return true;
}

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)data)[i]) * 0x100000001b3ull;
    return h;
}

static int fit(int argc, char **argv)
{
    FitJob *fj = calloc(1, sizeof *fj);
    if (!fj)
        return 1;
    *fj = (FitJob){.epochs = 200, .lr = 2.0};
    snprintf(fj->out_dir, sizeof fj->out_dir, ".");
    snprintf(fj->weights, sizeof fj->weights, "texel-weights.txt");
    snprintf(fj->loss, sizeof fj->loss, "texel-loss.csv");
    for (int i = 0; i < PARAM_NB; i++)
        fj->tuned[i] = true;
    int rc = 0;
    for (int i = 0; i < argc && rc == 0; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n = 0;
        char *end = NULL;
        double d = v ? strtod(v, &end) : 0;
        bool num = v && end && end != v && !*end && isfinite(d);
        if (!v) {
            fprintf(stderr, "xqforge texel fit: '%s' needs a value\n", o);
            rc = EXIT_USAGE;
        } else if (!strcmp(o, "--data")) {
            snprintf(fj->data, sizeof fj->data, "%s", v);
        } else if (!strcmp(o, "--start")) {
            snprintf(fj->start, sizeof fj->start, "%s", v);
        } else if (!strcmp(o, "-o")) {
            snprintf(fj->weights, sizeof fj->weights, "%s", v);
        } else if (!strcmp(o, "--epochs") && cli_parse_int(v, 1, 1000000, &n)) {
            fj->epochs = (int)n;
        } else if (!strcmp(o, "--threads") && cli_parse_int(v, 0, 1024, &n)) {
            fj->threads = (int)n;
        } else if (!strcmp(o, "--lr") && num && d > 0) {
            fj->lr = d;
        } else if (!strcmp(o, "--l2") && num && d >= 0) {
            fj->l2 = d;
        } else if (!strcmp(o, "--k") && num && d >= 0 && d <= 100) {
            fj->k = d;
        } else if (!strcmp(o, "--params")) {
            if (!parse_params(v, fj->tuned))
                rc = EXIT_USAGE;
        } else {
            fprintf(stderr, "xqforge texel fit: bad option or value: %s %s\n", o, v);
            rc = EXIT_USAGE;
        }
        i++;
    }
    if (rc == 0 && !fj->data[0]) {
        fprintf(stderr, "xqforge texel fit: --data FILE is required\n");
        rc = EXIT_USAGE;
    }
    if (rc == 0) {
        // A checkpoint belongs to these exact settings.
        fj->fingerprint = fnv(0xcbf29ce484222325ull, fj, sizeof *fj - sizeof fj->fingerprint);
        rc = fit_run(fj, NULL);
    }
    free(fj);
    return rc;
}

int cmd_texel(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        texel_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(argv[1], "extract"))
        return extract(argc - 2, argv + 2);
    if (!strcmp(argv[1], "info"))
        return info(argc - 2, argv + 2);
    if (!strcmp(argv[1], "fit"))
        return fit(argc - 2, argv + 2);
    fprintf(stderr, "xqforge texel: unknown subcommand '%s'\n", argv[1]);
    texel_usage(stderr);
    return EXIT_USAGE;
}

bool texel_job_is(const char *path, char **sets, int n_sets)
{
    return run_job_is(path, sets, n_sets, JOB_TEXEL);
}

int texel_run(int *argc, char ***argv, const char *path, char **sets, int n_sets, bool resume)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    JobConfig *job = malloc(sizeof *job);
    FitJob *fj = calloc(1, sizeof *fj);
    char why[1024];
    Link *link = NULL;
    int rc = 1;
    if (!job || !fj)
        goto out;
    if (link_init(argc, argv, WIRE_MAX_MESSAGE, &link, why, sizeof why) != LINK_OK) {
        fprintf(stderr, "xqforge run: MPI: %s\n", why);
        goto out;
    }
    bool ok = job_load(path, (const char *const *)sets, n_sets, job, why, sizeof why) == JOB_OK;
    if (!ok && link_rank(link) == 0)
        fprintf(stderr, "xqforge run: %s\n", why);
    const char *dir = ok && job->output.dir[0] ? job->output.dir : ".";
    if (ok && link_rank(link) == 0 && mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "xqforge run: cannot create %s: %s\n", dir, strerror(errno));
        ok = false;
    }
    char ckpt[4200];
    path_in(ckpt, sizeof ckpt, dir, "texel.ckpt");
    if (ok && resume && link_rank(link) == 0 && access(ckpt, F_OK) != 0) {
        fprintf(stderr, "xqforge run: --resume: no checkpoint at %s\n", ckpt);
        ok = false;
    }
    if (!link_all_ok(link, ok)) {
        rc = 2;
        goto out;
    }
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
    // The checkpoint belongs to this job file, these overrides and this many ranks (the
    // shards, and so the sums' rounding, depend on it).
    uint64_t h = run_fingerprint(path, sets, n_sets);
    int size = link_size(link);
    fj->fingerprint = fnv(h, &size, sizeof size);
    if (link_rank(link) == 0)
        printf("Job %s: Texel fit of %s over %d rank%s\n", job->name, fj->data, size,
               size == 1 ? "" : "s");
    rc = fit_run(fj, link);
out:
    if (link)
        link_finalize(link);
    free(job);
    free(fj);
    return rc;
}
