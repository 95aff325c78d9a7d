// SPDX-License-Identifier: MIT
// xqforge texel: Texel datasets and fitting.
//   texel extract [-o FILE] [--skip N] PGN...   quiet positions of games, with their results
//   texel info FILE                             the dataset's header
//   texel fit --data FILE [options]             fit on this machine (threads)
// and `xqforge run` of a kind = texel job: the same fit over MPI ranks, each rank holding a
// shard of the positions, gradients summed with MPI_Allreduce (proto/link.c).
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "job.h"
#include "link.h"
#include "params.h"
#include "pgn_read.h"
#include "texel_fit.h"
#include "texel.h"
#include "timeman.h"

static void texel_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge texel extract [-o FILE] [--skip N] PGN...\n"
            "       xqforge texel info FILE\n"
            "       xqforge texel fit --data FILE [--start WEIGHTS] [--epochs N] [--lr X]\n"
            "                         [--l2 X] [--k X] [--val X] [--threads N] [--params LIST]\n"
            "                         [-o FILE]\n"
            "                         [--checkpoint-every N] [--checkpoint-seconds S] [--fresh]\n"
            "       mpirun -np N xqforge run JOB   (kind = texel: the fit over ranks)\n\n"
            "extract: every quiet position (not in check, best move not a capture after a\n"
            "  quiescence search) after the first N plies (default 8) of each game, labelled\n"
            "  with the game's result; games without a result are skipped. Default output\n"
            "  texel.xqd.\n"
            "fit: minimises (result - sigmoid(K eval / 400))^2 + l2/N sum ((w - start)/100)^2\n"
            "  over the N positions with Adam, K fitted once on the start weights (unless --k)\n"
            "  and held; --l2 (default %d) pulls the weights towards the start so the fit\n"
            "  cannot inflate the scale (0: off); --params all|psq|eval|NAME,... (default all);\n"
            "  writes the tuned weights (default texel-weights.txt) and prints the changes;\n"
            "  warns below %d positions per tuned weight and when %d or more end on a bound.\n"
            "  --val (default %g): the fraction of games held out (0 to 0.5; 0: none); their\n"
            "  loss is reported beside the training loss, and the weights written are the\n"
            "  epoch's of the lowest validation loss (the start weights when no epoch beat\n"
            "  them: the fit only overfits).\n"
            "  Checkpoints (texel.ckpt) every N epochs (default %d) or S seconds (default %d),\n"
            "  at the end and on SIGINT/SIGTERM (exit 130): a rerun with the same dataset, start\n"
            "  weights and settings resumes exactly (the loss CSV cut back to the checkpoint);\n"
            "  one with others is refused (--fresh: start over).\n"
            "Exit status: 0 done, 1 failure while running, 2 bad usage or unusable input,\n"
            "130 stopped by a signal after a checkpoint.\n",
            TEXEL_L2_DEFAULT, TEXEL_POSITIONS_PER_WEIGHT, TEXEL_BOUNDS_WARN, TEXEL_VAL_DEFAULT,
            TEXEL_CHECKPOINT_EVERY, TEXEL_CHECKPOINT_SECONDS);
}

static atomic_bool stop_flag;

/// SIGINT, SIGTERM, SIGUSR1 (Slurm's warning): the fit ends its epoch, checkpoints, exits 130.
static void on_stop_signal(int sig)
{
    (void)sig;
    atomic_store(&stop_flag, true);
}

/// What an extraction has read so far, over all its files.
typedef struct {
    TexelWriter *tw;
    Board *b;
    GameRecord *rec;
    Move moves[GAME_MAX_PLIES];
    long skip;
    uint64_t games, skipped, bad, seen;
} Extract;

enum { EXTRACT_WARNINGS_MAX = 20 }; // skipped games named per file

/// Adds one game read from a PGN file: 0, 1 (the dataset cannot be written) or -1 (a move or
/// FEN the positions refuse: the game is skipped).
static int extract_game(Extract *x)
{
    const GameRecord *rec = x->rec;
    if (rec->outcome == OUTCOME_NONE) {
        x->skipped++;
        return 0;
    }
    double red = rec->outcome == OUTCOME_RED_WINS ? 1 : rec->outcome == OUTCOME_DRAW ? 0.5 : 0;
    for (int m = 0; m < rec->ply_count; m++)
        x->moves[m] = rec->moves[m].move;
    TexelStatus ts = texel_writer_add_game(x->tw, x->b, rec->start_fen, x->moves, rec->ply_count,
                                           rec->book_plies, red, (int)x->skip, &x->seen);
    if (ts == TEXEL_ERR_POSITION)
        return -1;
    if (ts != TEXEL_OK)
        return 1;
    x->games++;
    return 0;
}

/// Reads the games of one PGN file: 0; 1 if the dataset cannot be written or the file not
/// read to its end; 2 (bad input) if it is no file of games, or none of its games reads.
static int extract_file(Extract *x, const char *path, const char *out)
{
    struct stat sb;
    const char *unusable = stat(path, &sb) != 0  ? strerror(errno)
                           : S_ISDIR(sb.st_mode) ? "a directory, not a PGN file"
                                                 : NULL;
    FILE *in = unusable ? NULL : fopen(path, "r");
    if (!in) {
        fprintf(stderr, "xqforge texel: %s: %s\n", path, unusable ? unusable : strerror(errno));
        return EXIT_USAGE;
    }
    char why[512], first[512] = "";
    int line = 0, got, rc = 0;
    uint64_t good = 0, bad = 0;
    while (rc == 0 && (got = pgn_read(in, x->rec, &line, why, sizeof why)) != 0) {
        int r = got < 0 ? -1 : extract_game(x);
        if (r < 0 && got > 0)
            snprintf(why, sizeof why, "line %d: a move or FEN the positions refuse", line);
        if (r < 0 && !bad++)
            snprintf(first, sizeof first, "%s", why);
        if (r < 0 && bad <= EXTRACT_WARNINGS_MAX)
            fprintf(stderr, "xqforge texel: %s: %s (game skipped)\n", path, why);
        if (r > 0) {
            fprintf(stderr, "xqforge texel: cannot write %s\n", out);
            rc = 1;
        }
        good += r == 0;
    }
    if (rc == 0 && ferror(in)) {
        fprintf(stderr, "xqforge texel: %s: read error at line %d\n", path, line);
        rc = 1;
    } else if (rc == 0 && good == 0 && bad == 0) {
        if (line == 0)
            fprintf(stderr, "xqforge texel: %s: an empty file, no games\n", path);
        else
            fprintf(stderr, "xqforge texel: %s: no games in its %d lines: not a PGN file\n", path,
                    line);
        rc = EXIT_USAGE;
    } else if (rc == 0 && good == 0) {
        fprintf(stderr, "xqforge texel: %s: none of its %llu games could be read (the first: %s)\n",
                path, (unsigned long long)bad, first);
        rc = EXIT_USAGE;
    } else if (bad > EXTRACT_WARNINGS_MAX) {
        fprintf(stderr, "xqforge texel: %s: %llu games skipped in all\n", path,
                (unsigned long long)bad);
    }
    x->bad += bad;
    fclose(in);
    return rc;
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
    Extract *x = calloc(1, sizeof *x);
    if (!x || !(x->rec = malloc(sizeof *x->rec)) || !(x->b = malloc(sizeof *x->b))) {
        fprintf(stderr, "xqforge texel: out of memory\n");
        if (x)
            free(x->rec);
        free(x);
        return 1;
    }
    x->skip = skip;
    if (texel_writer_open(out, &x->tw, why, sizeof why) != TEXEL_OK) {
        fprintf(stderr, "xqforge texel: %s\n", why);
        free(x->rec);
        free(x->b);
        free(x);
        return 1;
    }
    int64_t t0 = timeman_now_ms();
    int rc = 0;
    for (int a = first; a < argc && rc == 0; a++)
        rc = extract_file(x, argv[a], out);
    uint64_t kept = texel_writer_count(x->tw);
    if (rc == 0 && kept == 0) {
        fprintf(stderr,
                "xqforge texel: no quiet position in the %llu games read (%llu without a result; "
                "the first %ld plies of each are skipped)\n",
                (unsigned long long)x->games, (unsigned long long)x->skipped, skip);
        rc = EXIT_USAGE;
    }
    if (rc != 0) {
        texel_writer_discard(x->tw); // a failed extraction leaves any earlier file alone
        fprintf(stderr, "xqforge texel: nothing written to %s\n", out);
    } else if (texel_writer_close(x->tw, why, sizeof why) != TEXEL_OK) {
        fprintf(stderr, "xqforge texel: %s\n", why);
        rc = 1;
    }
    double secs = (timeman_now_ms() - t0) / 1000.0;
    if (rc == 0)
        printf(
            "%llu games (%llu without a result, %llu unreadable): %llu positions looked at, %llu "
            "quiet kept in %s (%.1f s)\n",
            (unsigned long long)x->games, (unsigned long long)x->skipped,
            (unsigned long long)x->bad, (unsigned long long)x->seen, (unsigned long long)kept, out,
            secs);
    free(x->rec);
    free(x->b);
    free(x);
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

/// Texel fits what the evaluation reads: "all" means every evaluation weight.
static bool tune_one(void *ctx, int id)
{
    ((bool *)ctx)[id] = !params_is_search(id);
    return true;
}

static bool parse_params(const char *list, bool *tuned)
{
    char bad[64];
    if (params_list_names_search(list, bad, sizeof bad)) {
        fprintf(stderr,
                "xqforge texel: --params: '%s' is a search row: Texel fits only what the "
                "evaluation reads (tune the search with SPSA, kind = spsa)\n",
                bad);
        return false;
    }
    memset(tuned, 0, sizeof(bool) * PARAM_NB);
    ParamsListStatus st = params_parse_list(list, tune_one, tuned, bad, sizeof bad);
    if (st == PARAMS_LIST_OK)
        return true;
    if (st == PARAMS_LIST_UNKNOWN)
        fprintf(stderr, "xqforge texel: --params: '%s' is not a weight\n", bad);
    else
        fprintf(stderr, "xqforge texel: --params: give all, psq, eval or weight names\n");
    return false;
}

static int fit(int argc, char **argv)
{
    TexelFitJob *fj = calloc(1, sizeof *fj);
    if (!fj)
        return 1;
    *fj = (TexelFitJob){.epochs = 200,
                        .lr = 2.0,
                        .l2 = TEXEL_L2_DEFAULT,
                        .val = TEXEL_VAL_DEFAULT,
                        .checkpoint_every = TEXEL_CHECKPOINT_EVERY,
                        .checkpoint_seconds = TEXEL_CHECKPOINT_SECONDS};
    snprintf(fj->out_dir, sizeof fj->out_dir, ".");
    snprintf(fj->weights, sizeof fj->weights, "texel-weights.txt");
    snprintf(fj->loss, sizeof fj->loss, "texel-loss.csv");
    for (int i = 0; i < PARAM_NB; i++)
        fj->tuned[i] = !params_is_search(i); // the evaluation's weights
    int rc = 0;
    for (int i = 0; i < argc && rc == 0; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--fresh")) {
            fj->fresh = true;
            continue;
        }
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
        } else if (!strcmp(o, "--val") && num && d >= 0 && d <= 0.5) {
            fj->val = d;
        } else if (!strcmp(o, "--k") && num && d >= 0 && d <= 100) {
            fj->k = d;
        } else if (!strcmp(o, "--checkpoint-every") && cli_parse_int(v, 1, 1000000, &n)) {
            fj->checkpoint_every = (int)n;
        } else if (!strcmp(o, "--checkpoint-seconds") && num && d >= 0 && d <= 1e6) {
            fj->checkpoint_seconds = d;
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
        // Installed before the dataset loads: a signal then stops the fit after its first
        // epoch, with a checkpoint, as kind = texel does under `xqforge run`.
        struct sigaction sa = {0};
        sa.sa_handler = on_stop_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGUSR1, &sa, NULL);
        rc = texel_fit_run(fj, NULL, &stop_flag);
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
    for (int i = 2; i < argc; i++) // `texel fit --help` too: the usage, not an option error
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            texel_usage(stdout);
            return 0;
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
