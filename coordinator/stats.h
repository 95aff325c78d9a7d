// SPDX-License-Identifier: MIT
// Match statistics as fishtest and fastchess compute them (../shared/STATS.md): Elo with
// its 95% error bar, LOS, normalized Elo, and the SPRT log-likelihood ratio for the
// normalized and logistic models on trinomial (W/D/L) or pentanomial (game pair) counts.
// Pure functions: no I/O, no globals, no allocation. Every result is finite (never NaN)
// for any counts; only the ratios documented below may be +infinity.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    STATS_TRI_NB = 3,   // cells of a trinomial result: loss, draw, win
    STATS_PENTA_NB = 5, // cells of a pentanomial result: pairs scoring 0, 1/2, 1, 3/2, 2
};

#define STATS_COUNT_MAX 1000000000000ULL // larger counts are refused (doubles stay exact)
#define STATS_ELO_MAX   3000.0           // |elo0|, |elo1| above this are refused
// Fewer games than this get no error bar: the interval is the normal approximation of
// fishtest's get_elo, and below 5 pairs (10 games) it has too little to stand on.
#define STATS_INTERVAL_MIN_GAMES 10
#define STATS_BOUND_CONFIDENCE   0.95 // of the one-sided bound given when the score is 0 or 1

typedef enum {
    STATS_OK,
    STATS_ERR_COUNTS, // no counts, a count above STATS_COUNT_MAX, or W/D/L and Ptnml disagree
    STATS_ERR_PARAMS, // SPRT parameters out of range (see sprt_params_check)
    STATS_ERR_BUFFER, // the text did not fit the caller's buffer (it was cut)
    STATS_STATUS_NB
} StatsStatus;

/// The results of new against base. Either or both of W/D/L and Ptnml may be known; when
/// both are, they must describe the same games (stats_results_check).
typedef struct {
    bool has_wdl;
    bool has_ptnml;
    uint64_t wins, draws, losses;
    uint64_t ptnml[STATS_PENTA_NB]; // pairs in which new scored 0, 1/2, 1, 3/2, 2 points
} MatchResults;

/// How much the Elo figures of an EloEstimate mean.
typedef enum {
    STATS_ESTIMATE_NONE,     // no games: nothing to estimate
    STATS_ESTIMATE_INTERVAL, // a finite Elo with a 95% interval (elo_error, nelo_error)
    STATS_ESTIMATE_POINT,    // a finite Elo but no interval: fewer than STATS_INTERVAL_MIN_GAMES
                             // games, or every game (every pair) scored the same, so the
                             // sample shows no variance; nElo needs that variance
    STATS_ESTIMATE_BOUND,    // every game won or every game lost: no finite Elo, only elo_bound
    STATS_ESTIMATE_NB
} StatsEstimate;

/// What a fixed-length run says (fishtest's get_elo, fastchess's nElo and ratios). Computed
/// from Ptnml when known, else from W/D/L. With no games at all everything is 0 and LOS is
/// one half.
typedef struct {
    uint64_t games;    // W+D+L, or 2 per pair
    double points;     // W + D/2
    double score;      // points / games, 0 without games
    double elo;        // logistic Elo
    double elo_error;  // half-width of its 95% confidence interval
    double nelo;       // normalized Elo
    double nelo_error; // half-width of its 95% confidence interval
    double los;        // likelihood of superiority, in [0, 1]
    // elo, elo_error, nelo and nelo_error are fishtest's formulas on regularised counts whatever
    // the sample; `estimate` says which of them mean something (stats_format shows only those).
    StatsEstimate estimate;
    bool pairs;         // computed from Ptnml (the units are pairs), else from W/D/L (games)
    bool no_variance;   // every game (every pair) scored the same
    double elo_bound;   // BOUND: the one-sided 95% bound on the Elo (lower after all wins, upper
                        // after all losses); 0 otherwise
    double draw_ratio;  // drawn games (W/D/L), or pairs scoring 1 point (Ptnml), in [0, 1]
    double pairs_ratio; // (p3 + p4) / (p0 + p1): +infinity when only the top is populated
    double wl_dd_ratio; // win-loss over draw-draw pairs (needs both W/D/L and Ptnml); may be
                        // +infinity, 0 when unknown
} EloEstimate;

typedef enum { SPRT_NORMALIZED, SPRT_LOGISTIC, SPRT_MODEL_NB } SprtModel;
typedef enum { SPRT_CONTINUE, SPRT_H0, SPRT_H1, SPRT_DECISION_NB } SprtDecision;

/// H0: elo = elo0 against H1: elo = elo1 (normalized or logistic Elo), with error rates
/// alpha (false H1) and beta (false H0).
typedef struct {
    double elo0, elo1;
    double alpha, beta;
    SprtModel model;
} SprtParams;

typedef struct {
    double llr;            // log-likelihood ratio; 0 without games
    double lower, upper;   // A = ln(beta/(1-alpha)), B = ln((1-beta)/alpha)
    SprtDecision decision; // H1 when llr >= upper, H0 when llr <= lower
    bool approximate;      // the exact MLE could not be found; llr is fishtest's closed-form
                           // approximation (only for absurdly lopsided counts and bounds)
} SprtResult;

const char *stats_strerror(StatsStatus st);

/// STATS_OK when the counts are usable: at least one kind is present, every count is at
/// most STATS_COUNT_MAX, and W/D/L agrees with Ptnml when both are given.
StatsStatus stats_results_check(const MatchResults *r);
StatsStatus stats_elo(const MatchResults *r, EloEstimate *out);

/// STATS_OK when alpha, beta are in (0, 1) with alpha + beta < 1, elo0 < elo1 and both
/// within +-STATS_ELO_MAX, and the model is known.
StatsStatus sprt_params_check(const SprtParams *p);
/// The stopping bounds A (lower) and B (upper) for error rates alpha and beta.
void sprt_bounds(double alpha, double beta, double *lower, double *upper);
/// The LLR of counts[k] (k = 3: losses, draws, wins; k = 5: pentanomial). *approximate (if
/// not NULL) tells whether the closed-form fallback was used.
StatsStatus sprt_llr(const uint64_t *counts, int k, const SprtParams *p, double *llr,
                     bool *approximate);
SprtDecision sprt_decide(double llr, double lower, double upper);
/// LLR, bounds and decision of a match: from Ptnml when known, else from W/D/L.
StatsStatus sprt_evaluate(const MatchResults *r, const SprtParams *p, SprtResult *out);

/// "none", "interval", "point", "bound" (report.json's `estimate`).
const char *stats_estimate_name(StatsEstimate e);
/// The Elo as it may be read, into buf[cap]: "-9.20 +/- 20.93" with an interval (pm is the
/// "+/-"), "120.41 (no error bar: 6 games, fewer than 10)", "no finite estimate (score 100 %;
/// one-sided 95% bound: above +75.49)", "none (no games)". STATS_ERR_BUFFER if it was cut.
StatsStatus stats_elo_text(const EloEstimate *e, int decimals, const char *pm, char *buf,
                           size_t cap);
/// The same for nElo: "x +/- y", "x (no error bar)", "undefined (no variance)", "no finite
/// estimate", "none".
StatsStatus stats_nelo_text(const EloEstimate *e, int decimals, const char *pm, char *buf,
                            size_t cap);

/// The games an SPRT still needs, expected from the LLR's mean drift per game so far (llr /
/// games, the straight line from 0 through the current LLR) toward the bound it heads to:
/// (upper - llr) / drift when the LLR rises, (lower - llr) / drift when it falls. 0 once
/// decided; -1 when there is no drift to go by (no games, or an LLR of 0). The LLR's expected
/// value grows linearly in the games for any fixed true strength, so the line is its
/// expectation; early on it is as noisy as the LLR itself (the ETA is at most the limit's).
double sprt_games_left(const SprtResult *s, uint64_t games);

const char *sprt_model_name(SprtModel m);       // "normalized", "logistic"
const char *sprt_decision_name(SprtDecision d); // "continue", "H0 accepted", "H1 accepted"

/// Writes fastchess's summary block (Elo, LOS, Games, Ptnml lines; with sprt not NULL also
/// the LLR line), each line ending in '\n', into buf[cap]. The Ptnml line is left out
/// without Ptnml, and the W/D/L fields and ratios that need what is unknown are left out.
StatsStatus stats_format(const MatchResults *r, const SprtParams *sprt, char *buf, size_t cap);
