// SPDX-License-Identifier: MIT
// fishtest's SPSA as pure functions (the formulas are in spsa.h): every random choice of a
// step comes from (seed, step id), so a journaled step is replayed bit for bit on resume.
#include "spsa.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "params.h"

// A tuner holds every row of the weight table (`params = all`, evaluation and search).
_Static_assert((int)PARAM_NB <= (int)SPSA_PARAMS_MAX,
               "SPSA_PARAMS_MAX below the weight table's size");

const char *spsa_strerror(SpsaStatus st)
{
    switch (st) {
    case SPSA_OK: return "ok";
    case SPSA_ERR_RANGE: return "parameter out of range";
    case SPSA_ERR_CONFIG: return "bad SPSA settings";
    default: return "unknown SPSA status";
    }
}

void spsa_config_init(SpsaConfig *cfg, int64_t iterations)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->iterations = iterations;
    cfg->a_ratio = 0.1;
    cfg->alpha = 0.602;
    cfg->gamma = 0.101;
}

SpsaStatus spsa_config_check(const SpsaConfig *cfg, char *why, size_t why_len)
{
    if (cfg->count < 1 || cfg->count > SPSA_PARAMS_MAX) {
        snprintf(why, why_len, "%d parameters (1..%d)", cfg->count, SPSA_PARAMS_MAX);
        return SPSA_ERR_CONFIG;
    }
    if (cfg->iterations < 1) {
        snprintf(why, why_len, "%lld iterations: play at least one game pair",
                 (long long)cfg->iterations);
        return SPSA_ERR_CONFIG;
    }
    if (!(cfg->a_ratio >= 0 && cfg->a_ratio <= 10) || !(cfg->alpha > 0 && cfg->alpha <= 2) ||
        !(cfg->gamma > 0 && cfg->gamma <= 2)) {
        snprintf(why, why_len, "a_ratio %g (0..10), alpha %g (0..2], gamma %g (0..2]", cfg->a_ratio,
                 cfg->alpha, cfg->gamma);
        return SPSA_ERR_CONFIG;
    }
    for (int i = 0; i < cfg->count; i++) {
        const SpsaParam *p = &cfg->params[i];
        if (!(p->min < p->max) || !(p->start >= p->min && p->start <= p->max) || !(p->c_end > 0) ||
            !(p->r_end > 0) || !isfinite(p->c_end) || !isfinite(p->r_end)) {
            snprintf(why, why_len,
                     "%s: need min < max, min <= start <= max, c_end > 0, r_end > 0 "
                     "(start %g, min %g, max %g, c_end %g, r_end %g)",
                     p->name, p->start, p->min, p->max, p->c_end, p->r_end);
            return SPSA_ERR_RANGE;
        }
    }
    return SPSA_OK;
}

/// A, the stability constant: it keeps R_k from being large in the first iterations, where
/// one noisy game pair would otherwise move theta far.
static double big_a(const SpsaConfig *cfg) { return cfg->a_ratio * (double)cfg->iterations; }

// c_end and r_end are the values at the last iteration (fishtest's parameterisation): the
// user states how far to probe and how fast to learn at the end, and c and a follow.
double spsa_c_k(const SpsaConfig *cfg, int i, int64_t k)
{
    double c = cfg->params[i].c_end * pow((double)cfg->iterations, cfg->gamma);
    return c / pow((double)(k + 1), cfg->gamma);
}

double spsa_a_k(const SpsaConfig *cfg, int i, int64_t k)
{
    const SpsaParam *p = &cfg->params[i];
    double A = big_a(cfg), n = (double)cfg->iterations;
    double a = p->r_end * p->c_end * p->c_end * pow(A + n, cfg->alpha);
    return a / pow(A + (double)k + 1, cfg->alpha);
}

// The same operations in the same order as before a_k had its own function: R_k, and so every
// step, stays bit for bit what it was.
double spsa_r_k(const SpsaConfig *cfg, int i, int64_t k)
{
    double ck = spsa_c_k(cfg, i, k);
    return spsa_a_k(cfg, i, k) / (ck * ck);
}

void spsa_theta_init(const SpsaConfig *cfg, double *theta)
{
    for (int i = 0; i < cfg->count; i++)
        theta[i] = cfg->params[i].start;
}

/// splitmix64: a tiny counter-based generator, so a step needs no stored generator state.
static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/// A uniform double in [0, 1): the generator's top 53 bits, every double of the grid alike.
static double uniform(uint64_t *s) { return (double)(splitmix(s) >> 11) * 0x1.0p-53; }

static double clip(const SpsaParam *p, double x)
{
    return x < p->min ? p->min : x > p->max ? p->max : x;
}

// Stochastic rounding: an integer weight moves by less than 1 on average as theta does, where
// plain rounding would leave small c_k probes playing the very same weights on both sides.
int32_t spsa_round_stochastic(double x, double u)
{
    double f = floor(x);
    return (int32_t)f + (u < x - f ? 1 : 0);
}

void spsa_step_make(const SpsaConfig *cfg, const double *theta, int64_t k, uint64_t seed,
                    uint64_t id, SpsaStep *out)
{
    // The step's own stream: ids mixed by an odd constant, one draw discarded so nearby ids
    // do not start from nearby states.
    uint64_t s = seed ^ (id * 0xD1B54A32D192ED03ull);
    splitmix(&s);
    out->id = id;
    out->k = k;
    out->count = cfg->count;
    for (int i = 0; i < cfg->count; i++) {
        const SpsaParam *p = &cfg->params[i];
        out->flip[i] = (splitmix(&s) & 1) ? 1 : -1;
        out->c_k[i] = spsa_c_k(cfg, i, k);
        out->r_k[i] = spsa_r_k(cfg, i, k);
        double up = clip(p, theta[i] + out->c_k[i] * out->flip[i]);
        double down = clip(p, theta[i] - out->c_k[i] * out->flip[i]);
        out->plus[i] = spsa_round_stochastic(up, uniform(&s));
        out->minus[i] = spsa_round_stochastic(down, uniform(&s));
    }
}

// With the step's own c_k and R_k, not the current k's: a pair finishing late updates theta as
// the step that produced it said, in the order the journal holds the results.
void spsa_step_apply(const SpsaConfig *cfg, const SpsaStep *step, int w_minus_l, double *theta)
{
    for (int i = 0; i < cfg->count && i < step->count; i++)
        theta[i] = clip(&cfg->params[i],
                        theta[i] + step->r_k[i] * step->c_k[i] * w_minus_l * step->flip[i]);
}
