// SPDX-License-Identifier: MIT
// xqforge wdl fit|eval: a WDL model fitted to the games of runs (tuning/wdl), and its
// win/draw/loss at a score and material.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "identity.h"
#include "journal.h"
#include "wdl.h"
#include "wire.h"

enum { RUNS_MAX = 256 };

static void wdl_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge wdl fit RUNDIR... -o MODEL.json [--degree D]\n"
            "       xqforge wdl eval MODEL.json SCORE MATERIAL\n\n"
            "fit: reads the journals of game runs (RUNDIR: a run's output directory, or its\n"
            "journal file) and fits, by maximum likelihood, the model Stockfish fits to\n"
            "fishtest games: W = 1/(1+exp((a(m)-s)/b(m))), L = W at -s, D = 1-W-L, where s\n"
            "is a move's search score (cp, the mover's view), m the position's material over\n"
            "94 (soldier 1, advisor 2, elephant 2, horse 4, cannon 4, chariot 9, both sides),\n"
            "and a(m), b(m) polynomials of degree D (0..3, default 3). Every scored move of\n"
            "every finished game is a sample (book moves, mate scores and |s| > 2000 are\n"
            "not). MODEL.json holds the coefficients, the material range, the sample count,\n"
            "the log-likelihood and the runs (with their journals' content hashes).\n\n"
            "eval: prints the model's W, D and L for a score (cp, the mover's view) at a\n"
            "material (0..94; 94 is the start position).\n");
}

typedef struct {
    WdlSamples *samples;
    uint64_t games, results;
    char *why;
    size_t why_len;
} ScanCtx;

/// +1 Red won, -1 Black won, 0 drawn; 2 for an aborted game (no result).
static int red_result(uint8_t outcome)
{
    return outcome == WIRE_OUTCOME_RED_WINS     ? 1
           : outcome == WIRE_OUTCOME_BLACK_WINS ? -1
           : outcome == WIRE_OUTCOME_DRAW       ? 0
                                                : 2;
}

/// The samples of one played game; false with why when it does not replay.
static bool add_game(ScanCtx *c, const WireGame *g, uint64_t key, int index)
{
    int r = red_result(g->outcome);
    if (r == 2)
        return true;
    static WdlMove moves[WIRE_MAX_PLIES];
    for (int i = 0; i < g->ply_count; i++) {
        const WireGameMove *m = &g->moves[i];
        moves[i] = (WdlMove){m->move,
                             (m->flags & WIRE_MOVE_HAS_SCORE) && !(m->flags & WIRE_MOVE_MATE) &&
                                 !(m->flags & WIRE_MOVE_BOOK),
                             m->score};
    }
    char gwhy[256] = "";
    uint64_t before = c->samples->count;
    WdlStatus st =
        wdl_samples_add_game(c->samples, g->start_fen, moves, g->ply_count, r, gwhy, sizeof gwhy);
    if (st) {
        snprintf(c->why, c->why_len, "journal record %llu, game %d: %s", (unsigned long long)key,
                 index + 1, st == WDL_ERR_GAME ? gwhy : wdl_strerror(st));
        return false;
    }
    c->games += c->samples->count > before;
    return true;
}

/// One journal record: the games of a RESULT message; a kind's own records (bit 63 of the
/// key) and other messages are not games and are passed over.
static int scan_record(void *vctx, uint64_t key, const void *payload, size_t len)
{
    ScanCtx *c = vctx;
    if (key >> 63)
        return 0;
    WireMessage m;
    char why[256] = "";
    if (wire_unpack(payload, len, &m, why, sizeof why) != WIRE_OK) {
        snprintf(c->why, c->why_len, "journal record %llu: %s", (unsigned long long)key, why);
        return 1;
    }
    int rc = 0;
    if (m.kind == WIRE_RESULT) {
        c->results++;
        for (int u = 0; u < m.result->unit_count && !rc; u++)
            for (int g = 0; g < m.result->units[u].game_count && !rc; g++)
                rc = !add_game(c, &m.result->units[u].games[g], key, g);
    }
    wire_message_destroy(&m);
    return rc;
}

/// The journal of a run argument: a directory's journal.xqj, or the file itself.
static bool journal_path(const char *run, char *out, size_t len)
{
    struct stat sb;
    if (stat(run, &sb) != 0) {
        fprintf(stderr, "xqforge wdl fit: %s: %s\n", run, strerror(errno));
        return false;
    }
    snprintf(out, len, S_ISDIR(sb.st_mode) ? "%.4000s/journal.xqj" : "%.4000s", run);
    if (S_ISDIR(sb.st_mode) && stat(out, &sb) != 0) {
        fprintf(stderr, "xqforge wdl fit: %s: no journal (%s: %s)\n", run, out, strerror(errno));
        return false;
    }
    return true;
}

/// Adds one run's samples; src receives its hash, run id and counts.
static bool add_run(WdlSamples *s, const char *run, WdlSource *src, char *hash, char *run_id)
{
    char path[4096], why[512] = "", jwhy[512] = "";
    if (!journal_path(run, path, sizeof path))
        return false;
    JournalStatus js = journal_peek(path, NULL, 0, NULL, run_id, jwhy, sizeof jwhy);
    if (js != JOURNAL_OK) {
        fprintf(stderr, "xqforge wdl fit: %s: not a journal (%s)\n", path,
                jwhy[0] ? jwhy : journal_strerror(js));
        return false;
    }
    ScanCtx ctx = {s, 0, 0, why, sizeof why};
    size_t before = s->count;
    js = journal_scan(path, scan_record, &ctx, jwhy, sizeof jwhy);
    if (js != JOURNAL_OK) {
        fprintf(stderr, "xqforge wdl fit: %s: %s\n", path,
                why[0]    ? why
                : jwhy[0] ? jwhy
                          : journal_strerror(js));
        return false;
    }
    if (!ctx.results) {
        fprintf(stderr, "xqforge wdl fit: %s: no games in the journal (not a game run?)\n", path);
        return false;
    }
    Identity id;
    identity_init(&id);
    bool ok = identity_add_file(&id, "journal", path) == IDENTITY_OK;
    snprintf(hash, 17, "%s", ok ? identity_get(&id, "journal") : "?");
    identity_destroy(&id);
    *src = (WdlSource){run, hash, run_id, ctx.games, s->count - before};
    return true;
}

static int wdl_fit_cmd(int argc, char **argv)
{
    const char *out = NULL, *runs[RUNS_MAX];
    int nruns = 0;
    long degree = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--degree")) {
            if (i + 1 == argc) {
                fprintf(stderr, "xqforge wdl fit: %s needs a value\n", argv[i]);
                return EXIT_USAGE;
            }
            if (argv[i][1] == 'o')
                out = argv[++i];
            else if (!cli_parse_int(argv[++i], 0, WDL_DEGREE_MAX, &degree)) {
                fprintf(stderr, "xqforge wdl fit: --degree %s: give 0..%d\n", argv[i],
                        WDL_DEGREE_MAX);
                return EXIT_USAGE;
            }
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "xqforge wdl fit: unknown option %s\n", argv[i]);
            return EXIT_USAGE;
        } else if (nruns == RUNS_MAX) {
            fprintf(stderr, "xqforge wdl fit: more than %d runs\n", RUNS_MAX);
            return EXIT_USAGE;
        } else
            runs[nruns++] = argv[i];
    }
    if (!nruns || !out) {
        fprintf(stderr, "xqforge wdl fit: %s\n", !nruns ? "no run given" : "no -o MODEL.json");
        wdl_usage(stderr);
        return EXIT_USAGE;
    }
    static WdlSource src[RUNS_MAX];
    static char hashes[RUNS_MAX][17], ids[RUNS_MAX][JOURNAL_RUN_ID_LEN + 1];
    WdlSamples s;
    wdl_samples_init(&s);
    int rc = 0;
    for (int i = 0; i < nruns && !rc; i++)
        if (!add_run(&s, runs[i], &src[i], hashes[i], ids[i]))
            rc = EXIT_USAGE;
    WdlModel m;
    char why[512] = "";
    WdlStatus st = rc ? WDL_OK : wdl_fit(&s, (int)degree, &m, why, sizeof why);
    if (!rc && st) {
        fprintf(stderr, "xqforge wdl fit: %s\n", why);
        rc = st == WDL_ERR_FEW ? EXIT_USAGE : 1;
    }
    WdlBucket cal[WDL_BUCKET_NB];
    if (!rc)
        wdl_calibrate(&m, &s, cal);
    if (!rc && (st = wdl_save(&m, src, nruns, cal, out, why, sizeof why))) {
        fprintf(stderr, "xqforge wdl fit: %s\n", why);
        rc = 1;
    }
    if (!rc) {
        printf("%llu samples from %llu games of %d run%s, material %d..%d, log-likelihood "
               "%.3f (%.5f a sample)\n",
               (unsigned long long)s.count, (unsigned long long)s.games, nruns,
               nruns == 1 ? "" : "s", m.material_min, m.material_max, m.log_likelihood,
               m.log_likelihood / (double)s.count);
        for (int k = 0; k <= m.degree; k++)
            printf("%s a[%d] = %.6f  b[%d] = %.6f\n", k ? "   " : "fit", k, m.a[k], k, m.b[k]);
        printf("calibration (the fit's own samples, by |score|, the mover ahead):\n"
               "  score cp    samples  draw seen  draw model  win seen  win model\n");
        for (int k = 0; k < WDL_BUCKET_NB; k++)
            printf("  %4d..%-4d %8llu  %9.3f  %10.3f  %8.3f  %9.3f\n", cal[k].lo, cal[k].hi - 1,
                   (unsigned long long)cal[k].n, cal[k].draw_seen, cal[k].draw_model,
                   cal[k].win_seen, cal[k].win_model);
        printf("wrote %s\n", out);
    }
    wdl_samples_destroy(&s);
    return rc;
}

/// A finite number from text; false when it is not one.
static bool parse_double(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || v != v || v > 1e9 || v < -1e9)
        return false;
    *out = v;
    return true;
}

static int wdl_eval_cmd(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "xqforge wdl eval: give MODEL.json SCORE MATERIAL\n");
        return EXIT_USAGE;
    }
    double score;
    long material;
    if (!parse_double(argv[2], &score)) {
        fprintf(stderr, "xqforge wdl eval: SCORE %s: not a number (cp)\n", argv[2]);
        return EXIT_USAGE;
    }
    if (!cli_parse_int(argv[3], 0, WDL_MATERIAL_FULL, &material)) {
        fprintf(stderr, "xqforge wdl eval: MATERIAL %s: give 0..%d\n", argv[3], WDL_MATERIAL_FULL);
        return EXIT_USAGE;
    }
    WdlModel m;
    char why[512];
    if (wdl_load(&m, argv[1], why, sizeof why)) {
        fprintf(stderr, "xqforge wdl eval: %s\n", why);
        return EXIT_USAGE;
    }
    double w, d, l;
    wdl_eval(&m, score, (int)material, &w, &d, &l);
    printf("W %.4f D %.4f L %.4f (score %g cp, material %ld: a %.2f, b %.2f)\n", w, d, l, score,
           material, wdl_a(&m, (int)material), wdl_b(&m, (int)material));
    return 0;
}

int cmd_wdl(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        wdl_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "fit"))
        return wdl_fit_cmd(argc - 1, argv + 1);
    if (!strcmp(argv[1], "eval"))
        return wdl_eval_cmd(argc - 1, argv + 1);
    fprintf(stderr, "xqforge wdl: unknown subcommand '%s' (fit, eval)\n", argv[1]);
    return EXIT_USAGE;
}
