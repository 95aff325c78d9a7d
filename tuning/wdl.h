// SPDX-License-Identifier: MIT
// A win/draw/loss model of our own games, of the form Stockfish fits to fishtest games
// (src/uci.cpp win_rate_params, official-stockfish/WDL_model scoreWDL.py):
//   W(s, m) = 1 / (1 + exp((a(m) - s) / b(m))),  L(s, m) = W(-s, m),  D = 1 - W - L,
// s the search score in cp from the mover's view, a(m) and b(m) polynomials (degree 0..3,
// Stockfish's cubic by default) in m = clamp(material, material_min, material_max) / 94, the
// material of the start position being 94 (wdl_material). D > 0 exactly when a(m) > 0 and
// b(m) > 0, and D depends on |s| only: the draw rate is the same from either side's view.
//
// Stockfish's material is P + 3N + 3B + 5R + 9Q, clamped to [17, 78] (its data's range) and
// divided by 58; ours weighs soldier 1, advisor 2, elephant 2, horse 4, cannon 4, chariot 9
// (both sides) and clamps to the range of the fit's own samples. Stockfish fits the
// polynomials in two steps or by maximising the probability of the outcomes; we fit all the
// coefficients at once by maximum likelihood (Newton's method, wdl_fit).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"

enum {
    WDL_DEGREE_MAX = 3,
    WDL_COEF_NB = WDL_DEGREE_MAX + 1,
    WDL_MATERIAL_FULL = 94, // both sides' material at the start: m = 1
    WDL_SCORE_MAX = 2000,   // |cp| above this is not a sample (decided games)
    WDL_MIN_SAMPLES = 200   // fewer cannot pin down even a degree-0 model
};

/// One position of a played game: its score, material and the game's result for the mover.
typedef struct {
    int16_t score;    // cp, the mover's view
    uint8_t material; // wdl_material of the position
    int8_t result;    // +1 the mover won, 0 drawn, -1 lost
} WdlSample;

typedef struct {
    WdlSample *items;
    size_t count, cap;
    uint64_t games; // games that gave samples (wdl_samples_add_game)
} WdlSamples;

/// a[0..degree] and b[0..degree], highest power first as Stockfish's as[] and bs[].
typedef struct {
    int degree;
    double a[WDL_COEF_NB], b[WDL_COEF_NB];
    int material_min, material_max; // the clamp of the material: the data's range
    uint64_t samples;
    double log_likelihood; // natural log, summed over the samples of the fit
} WdlModel;

/// One move of a game as the journal holds it.
typedef struct {
    Move move;
    bool scored; // the mover's search gave a cp score (not a book move, not a mate score)
    int score;   // cp, the mover's view
} WdlMove;

typedef enum {
    WDL_OK,
    WDL_ERR_NOMEM,
    WDL_ERR_GAME,    // a game that does not replay (bad FEN, illegal move)
    WDL_ERR_FEW,     // too few samples, or all of one result
    WDL_ERR_FIT,     // the optimiser found no feasible model
    WDL_ERR_IO,      // a model file that cannot be read or written
    WDL_ERR_FORMAT,  // a model file that is not a model
    WDL_ERR_ARGUMENT // a degree or setting out of range
} WdlStatus;

const char *wdl_strerror(WdlStatus st);

/// The material measure of a position (0..WDL_MATERIAL_FULL), and of a FEN's board part
/// (-1 when the board part has a character that is not a piece, digit or '/').
int wdl_material(const Board *b);
int wdl_material_fen(const char *fen);

void wdl_samples_init(WdlSamples *s);
void wdl_samples_destroy(WdlSamples *s);
WdlStatus wdl_samples_add(WdlSamples *s, int score, int material, int result);
/// Replays a game from start_fen (each move checked legal) and adds one sample per scored
/// move with |score| <= WDL_SCORE_MAX: the score, the material of the position it was played
/// in, and red_result (+1 Red won, 0 draw, -1 Black won) from that mover's view.
WdlStatus wdl_samples_add_game(WdlSamples *s, const char *start_fen, const WdlMove *moves, int n,
                               int red_result, char *why, size_t why_len);

/// a(m) and b(m) at a material (clamped to the model's range).
double wdl_a(const WdlModel *m, int material);
double wdl_b(const WdlModel *m, int material);
/// W, D, L (each may be NULL) of a cp score from the mover's view at a material.
void wdl_eval(const WdlModel *m, double score, int material, double *w, double *d, double *l);
double wdl_draw_rate(const WdlModel *m, double score, int material);
/// The log-likelihood of the samples under the model (-INFINITY where the model gives a sample
/// probability 0: a(m) <= 0 or b(m) <= 0 at one of them).
double wdl_log_likelihood(const WdlModel *m, const WdlSamples *s);

/// Fits a and b of the given degree by maximum likelihood; fills material_min/max (the
/// samples' range), samples and log_likelihood. why says what was wrong.
WdlStatus wdl_fit(const WdlSamples *s, int degree, WdlModel *out, char *why, size_t why_len);

/// Calibration: the samples by |score| (folded so that the score is the mover's advantage:
/// a sample at -s counts at s with its result negated), the observed draw and win rates and
/// the model's mean predictions.
enum { WDL_BUCKET_NB = 7 };
typedef struct {
    int lo, hi; // |score| in lo..hi-1 cp
    uint64_t n;
    double draw_seen, draw_model, win_seen, win_model;
} WdlBucket;
void wdl_calibrate(const WdlModel *m, const WdlSamples *s, WdlBucket out[WDL_BUCKET_NB]);

/// Where a model's data came from, written into its file.
typedef struct {
    const char *run;    // the run directory as given
    const char *hash;   // 16 hex digits: the journal's content (64-bit FNV-1a)
    const char *run_id; // the journal's run id
    uint64_t games, samples;
} WdlSource;

/// The model file (JSON, written atomically): the form, coefficients, material range, sample
/// count, log-likelihood, sources and the calibration table (cal may be NULL).
WdlStatus wdl_save(const WdlModel *m, const WdlSource *src, int nsrc, const WdlBucket *cal,
                   const char *path, char *why, size_t why_len);
/// Reads a model file, every field checked; why names the field that is wrong.
WdlStatus wdl_load(WdlModel *m, const char *path, char *why, size_t why_len);
