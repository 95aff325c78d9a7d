// SPDX-License-Identifier: MIT
// xqforge stats: Elo, LOS and the SPRT verdict of given match counts, as fishtest and
// fastchess compute them (../shared/STATS.md).
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "commands.h"
#include "stats.h"

static void stats_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge stats (--ptnml LL,LD,DD,WD,WW | --wdl W,D,L) [options]\n\n"
            "Prints fastchess's summary of a match (Elo, nElo, LOS, ratios, LLR) and the SPRT\n"
            "decision, computed as fishtest does. Counts are from the tested engine's side.\n\n"
            "  --ptnml P0,P1,P2,P3,P4  game pairs scoring 0, 1/2, 1, 3/2, 2 points\n"
            "  --wdl W,D,L             wins, draws, losses (with --ptnml: must match it)\n"
            "  --elo0 X                Elo of H0 (default 0)\n"
            "  --elo1 X                Elo of H1 (default 2); -%g <= elo0 < elo1 <= %g\n"
            "  --alpha X               false-positive rate, in (0, 1) (default 0.05)\n"
            "  --beta X                false-negative rate, in (0, 1) (default 0.05)\n"
            "  --model M               normalized (default) or logistic Elo bounds\n"
            "  --json                  one JSON object instead of text (los and draw_ratio\n"
            "                          as fractions; wins/draws/losses or ptnml null if not\n"
            "                          given; decision: continue, H0 accepted, H1 accepted;\n"
            "                          estimate: interval, point or bound, see below)\n"
            "  -h, --help              this help\n\n"
            "With Ptnml the statistics use the pairs (pentanomial), else W/D/L (trinomial).\n"
            "A score of 100 %% or 0 %% has no finite Elo: the line gives the exact one-sided\n"
            "%.0f%% bound (Clopper-Pearson, on the games). Fewer than %d games, or every game\n"
            "(pair) scoring the same, give the Elo without an error bar. The LLR is always\n"
            "computed (fishtest's regularisation).\n",
            STATS_ELO_MAX, STATS_ELO_MAX, 100 * STATS_BOUND_CONFIDENCE, STATS_INTERVAL_MIN_GAMES);
}

/// Parses exactly n comma-separated decimal counts (digits only, at most STATS_COUNT_MAX).
static int parse_counts(const char *text, int n, uint64_t *out)
{
    const char *s = text;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)*s))
            return 0;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || v > STATS_COUNT_MAX)
            return 0;
        out[i] = v;
        if (*end != (i == n - 1 ? '\0' : ','))
            return 0;
        s = end + 1;
    }
    return 1;
}

/// Parses a finite decimal number in [lo, hi] (open at an end where open_ends says so).
static int parse_number(const char *text, double lo, double hi, int open_ends, double *out)
{
    if (!*text || isspace((unsigned char)*text))
        return 0;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || *end != '\0' || !isfinite(v))
        return 0;
    if (open_ends ? !(v > lo && v < hi) : !(v >= lo && v <= hi))
        return 0;
    *out = v;
    return 1;
}

static int bad_value(const char *flag, const char *what, const char *value)
{
    fprintf(stderr, "xqforge stats: %s must be %s, got '%s'\n", flag, what, value);
    return EXIT_USAGE;
}

static json_t *json_number(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *json_count(int known, uint64_t v)
{
    return known ? json_integer((json_int_t)v) : json_null();
}

/// The JSON object of the results; NULL if it could not be built (out of memory).
static json_t *build_json(const MatchResults *r, const EloEstimate *e, const SprtParams *p,
                          const SprtResult *s)
{
    json_t *o = json_object(), *ptnml = json_null();
    if (r->has_ptnml) {
        ptnml = json_array();
        for (int i = 0; i < STATS_PENTA_NB; i++)
            json_array_append_new(ptnml, json_integer((json_int_t)r->ptnml[i]));
    }
    int err = !o;
    err |= json_object_set_new(o, "games", json_integer((json_int_t)e->games));
    err |= json_object_set_new(o, "wins", json_count(r->has_wdl, r->wins));
    err |= json_object_set_new(o, "draws", json_count(r->has_wdl, r->draws));
    err |= json_object_set_new(o, "losses", json_count(r->has_wdl, r->losses));
    err |= json_object_set_new(o, "ptnml", ptnml);
    err |= json_object_set_new(o, "elo", json_number(e->elo));
    err |= json_object_set_new(o, "elo_error", json_number(e->elo_error));
    err |= json_object_set_new(o, "nelo", json_number(e->nelo));
    err |= json_object_set_new(o, "nelo_error", json_number(e->nelo_error));
    err |= json_object_set_new(o, "los", json_number(e->los));
    // Added after the figures above (whose meaning stays fishtest's): which of them mean
    // something, and the one-sided bound when the score is 0 or 1 (stats.h, StatsEstimate).
    err |= json_object_set_new(o, "estimate", json_string(stats_estimate_name(e->estimate)));
    err |= json_object_set_new(o, "elo_bound",
                               e->estimate == STATS_ESTIMATE_BOUND ? json_number(e->elo_bound)
                                                                   : json_null());
    err |= json_object_set_new(o, "draw_ratio", json_number(e->draw_ratio));
    err |= json_object_set_new(o, "llr", json_number(s->llr));
    err |= json_object_set_new(o, "lower", json_number(s->lower));
    err |= json_object_set_new(o, "upper", json_number(s->upper));
    err |= json_object_set_new(o, "elo0", json_number(p->elo0));
    err |= json_object_set_new(o, "elo1", json_number(p->elo1));
    err |= json_object_set_new(o, "model", json_string(sprt_model_name(p->model)));
    err |= json_object_set_new(o, "decision", json_string(sprt_decision_name(s->decision)));
    err |= json_object_set_new(o, "llr_approximate", json_boolean(s->approximate));
    if (err) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static int print_json(const MatchResults *r, const EloEstimate *e, const SprtParams *p,
                      const SprtResult *s)
{
    json_t *root = build_json(r, e, p, s);
    char *text = root ? json_dumps(root, JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    if (!text) {
        fprintf(stderr, "xqforge stats: could not build the JSON output\n");
        return 1;
    }
    printf("%s\n", text);
    free(text);
    return 0;
}

static int print_text(const MatchResults *r, const SprtParams *p, const SprtResult *s)
{
    char block[1024];
    StatsStatus st = stats_format(r, p, block, sizeof block);
    if (st) {
        fprintf(stderr, "xqforge stats: %s\n", stats_strerror(st));
        return 1;
    }
    fputs(block, stdout);
    printf("SPRT (%s, alpha %g, beta %g): %s\n", sprt_model_name(p->model), p->alpha, p->beta,
           sprt_decision_name(s->decision));
    if (s->approximate)
        printf("Note: counts too lopsided for the exact LLR; fishtest's approximation used\n");
    return 0;
}

/// Parses one option into r or p; returns 0 or the exit status of a bad value.
static int parse_option(int c, const char *arg, MatchResults *r, SprtParams *p)
{
    switch (c) {
    case 'p':
        r->has_ptnml = 1;
        if (!parse_counts(arg, STATS_PENTA_NB, r->ptnml))
            return bad_value("--ptnml", "5 comma-separated counts like 43,61,144,55,37", arg);
        return 0;
    case 'w': {
        uint64_t v[STATS_TRI_NB];
        r->has_wdl = 1;
        if (!parse_counts(arg, STATS_TRI_NB, v))
            return bad_value("--wdl", "3 comma-separated counts W,D,L like 248,166,266", arg);
        r->wins = v[0], r->draws = v[1], r->losses = v[2];
        return 0;
    }
    case '0':
        return parse_number(arg, -STATS_ELO_MAX, STATS_ELO_MAX, 0, &p->elo0)
                   ? 0
                   : bad_value("--elo0", "a number from -3000 to 3000", arg);
    case '1':
        return parse_number(arg, -STATS_ELO_MAX, STATS_ELO_MAX, 0, &p->elo1)
                   ? 0
                   : bad_value("--elo1", "a number from -3000 to 3000", arg);
    case 'a':
        return parse_number(arg, 0, 1, 1, &p->alpha) ? 0 : bad_value("--alpha", "in (0, 1)", arg);
    case 'b':
        return parse_number(arg, 0, 1, 1, &p->beta) ? 0 : bad_value("--beta", "in (0, 1)", arg);
    case 'm':
        if (strcmp(arg, "normalized") == 0)
            p->model = SPRT_NORMALIZED;
        else if (strcmp(arg, "logistic") == 0)
            p->model = SPRT_LOGISTIC;
        else
            return bad_value("--model", "normalized or logistic", arg);
        return 0;
    }
    return EXIT_USAGE;
}

/// Checks what the options say together; 0 or the exit status of the complaint.
static int check_inputs(const MatchResults *r, const SprtParams *p)
{
    if (!r->has_ptnml && !r->has_wdl) {
        fprintf(stderr, "xqforge stats: give the counts with --ptnml or --wdl\n");
        return EXIT_USAGE;
    }
    if (!(p->elo0 < p->elo1)) {
        fprintf(stderr, "xqforge stats: --elo0 must be below --elo1, got %g and %g\n", p->elo0,
                p->elo1);
        return EXIT_USAGE;
    }
    if (!(p->alpha + p->beta < 1)) {
        fprintf(stderr, "xqforge stats: --alpha plus --beta must be below 1, got %g and %g\n",
                p->alpha, p->beta);
        return EXIT_USAGE;
    }
    if (stats_results_check(r) != STATS_OK) {
        fprintf(stderr,
                "xqforge stats: --wdl %llu,%llu,%llu does not describe the pairs of "
                "--ptnml (W = WL + P3 + 2 P4, L = 2 P0 + P1 + WL, W + D + L = 2 pairs)\n",
                (unsigned long long)r->wins, (unsigned long long)r->draws,
                (unsigned long long)r->losses);
        return EXIT_USAGE;
    }
    return 0;
}

int cmd_stats(int argc, char **argv)
{
    static const struct option opts[] = {
        {"ptnml", required_argument, NULL, 'p'}, {"wdl", required_argument, NULL, 'w'},
        {"elo0", required_argument, NULL, '0'},  {"elo1", required_argument, NULL, '1'},
        {"alpha", required_argument, NULL, 'a'}, {"beta", required_argument, NULL, 'b'},
        {"model", required_argument, NULL, 'm'}, {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
    MatchResults r = {0};
    SprtParams p = {.elo0 = 0, .elo1 = 2, .alpha = 0.05, .beta = 0.05, .model = SPRT_NORMALIZED};
    int json = 0, err;
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        if (c == 'h') {
            stats_usage(stdout);
            return 0;
        }
        if (c == 'j') {
            json = 1;
            continue;
        }
        if (c == '?' || (err = parse_option(c, optarg, &r, &p))) {
            if (c == '?')
                stats_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "xqforge stats: unexpected argument '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }
    if ((err = check_inputs(&r, &p)))
        return err;

    EloEstimate e;
    SprtResult s;
    StatsStatus st = stats_elo(&r, &e);
    if (!st)
        st = sprt_evaluate(&r, &p, &s);
    if (st) {
        fprintf(stderr, "xqforge stats: %s\n", stats_strerror(st));
        return EXIT_USAGE;
    }
    return json ? print_json(&r, &e, &p, &s) : print_text(&r, &p, &s);
}
