// SPDX-License-Identifier: MIT
// SPSA as fishtest runs it (../shared/STATS.md), as pure functions: no I/O, no clock, no
// global random state, so the coordinator can journal a step and replay it exactly.
//
// N_it = games / 2 iterations (one per game pair); A = a_ratio * N_it;
// per parameter c = c_end * N_it^gamma and a = r_end * c_end^2 * (A + N_it)^alpha.
// Step k (0-based, pairs already applied): c_k = c / (k+1)^gamma,
// R_k = a / (A + k + 1)^alpha / c_k^2; a flip phi = +-1 per parameter; "plus" plays with
// clip(theta + c_k phi), "minus" with clip(theta - c_k phi), stochastically rounded to
// integers. After a pair with result W-L (plus's wins minus losses, over both games):
// theta <- clip(theta + R_k c_k (W-L) phi), with the c_k and R_k of the step.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    SPSA_PARAMS_MAX = 1024, // at least the engine's whole weight table (eval and search rows)
    SPSA_NAME_MAX = 64
};

typedef struct {
    char name[SPSA_NAME_MAX];
    int id; // the engine's weight id (params.h), or -1 when not an engine weight
    double start, min, max, c_end, r_end;
} SpsaParam;

typedef struct {
    SpsaParam params[SPSA_PARAMS_MAX];
    int count;
    int64_t iterations; // N_it, at least 1
    double a_ratio, alpha, gamma;
} SpsaConfig;

typedef enum {
    SPSA_OK,
    SPSA_ERR_RANGE,  // min >= max, start outside [min, max], c_end or r_end <= 0
    SPSA_ERR_CONFIG, // no parameters, too many, iterations < 1, bad a_ratio/alpha/gamma
    SPSA_STATUS_NB
} SpsaStatus;

/// One step handed out: what the two sides play with and how its result will be applied.
typedef struct {
    uint64_t id; // unique per run; with the seed it fixes every random choice of the step
    int64_t k;   // iterations applied when the step was made
    int count;
    int8_t flip[SPSA_PARAMS_MAX];
    double c_k[SPSA_PARAMS_MAX], r_k[SPSA_PARAMS_MAX];
    int32_t plus[SPSA_PARAMS_MAX], minus[SPSA_PARAMS_MAX];
} SpsaStep;

const char *spsa_strerror(SpsaStatus st);

/// Sets fishtest's defaults: a_ratio 0.1, alpha 0.602, gamma 0.101, no parameters.
void spsa_config_init(SpsaConfig *cfg, int64_t iterations);
/// Checks every parameter and the schedule; why names the first fault.
SpsaStatus spsa_config_check(const SpsaConfig *cfg, char *why, size_t why_len);

/// c_k, a_k = a / (A + k + 1)^alpha and R_k = a_k / c_k^2 of parameter i at iteration k (k may
/// exceed N_it - 1; it is not clamped).
double spsa_c_k(const SpsaConfig *cfg, int i, int64_t k);
double spsa_a_k(const SpsaConfig *cfg, int i, int64_t k);
double spsa_r_k(const SpsaConfig *cfg, int i, int64_t k);

/// theta[i] = start of each parameter.
void spsa_theta_init(const SpsaConfig *cfg, double *theta);

/// Makes step `id` at iteration k from theta: flips and stochastic rounding are drawn from a
/// generator seeded by (seed, id), so the same inputs give the same step.
void spsa_step_make(const SpsaConfig *cfg, const double *theta, int64_t k, uint64_t seed,
                    uint64_t id, SpsaStep *out);

/// Applies one pair's result (W-L from plus's side, -2..2) of a step to theta.
void spsa_step_apply(const SpsaConfig *cfg, const SpsaStep *step, int w_minus_l, double *theta);

/// Rounds x to floor(x) or floor(x)+1 with probability 1 - frac(x) and frac(x); u in [0,1).
int32_t spsa_round_stochastic(double x, double u);
