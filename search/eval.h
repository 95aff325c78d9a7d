// SPDX-License-Identifier: MIT
// Hand-crafted, tapered evaluation. Linear in every weight: with phase p (0 = bare
// endgame .. EVAL_PHASE_MAX = full middlegame) and the trace's coefficients c_i (Red's
// count minus Black's for the feature weighted by i),
//   eval_red = (sum over _mg weights c_i w_i * p + sum over _eg weights c_i w_i * (MAX - p)) / MAX
// so a tuner gets exact gradients from the very code the search runs.
#pragma once

#include "board.h"
#include "params.h"

enum { EVAL_PHASE_MAX = 32 };

typedef struct {
    int16_t coef[PARAM_NB]; // Red minus Black
    int phase;
} EvalTrace;

/// Score in centipawns from the side to move's point of view.
int eval_evaluate(const Board *b, const Weights *w);
/// Same score, also filling the trace (Red's point of view coefficients).
int eval_trace(const Board *b, const Weights *w, EvalTrace *trace);
/// Whether a weight is a middlegame weight (else endgame), from its name.
bool eval_param_is_mg(int id);
