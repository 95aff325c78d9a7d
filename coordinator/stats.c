// SPDX-License-Identifier: MIT
// Match statistics. ../shared/STATS.md is the specification; fishtest's LLRcalc.py and
// stat_util.py are the reference implementation, and the numbers agree with theirs.
#include "stats.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum {
    CELLS_MAX = STATS_PENTA_NB,
    MLE_FISHTEST_ITERATIONS = 10, // LLRcalc.MLE_t_value's loop
    MLE_MORE_ITERATIONS = 100,    // polishing the global search's answer
    PROFILE_GRID = 3000,          // points of the global search's scan
    PROFILE_REFINE = 100,         // golden-section steps after the scan
    DUAL_ITERATIONS = 100,
    BRENT_ITERATIONS = 200,
    BRACKET_HALVINGS = 2000,
};

static const double REGULARISATION = 1e-3;    // stands in for a zero count
static const double Z975 = 1.959963984540054; // Phi^-1(0.975), scipy's norm.ppf(0.975)
static const double MLE_STEP_TOL = 1e-9;      // max |p_i change| that ends the iteration
static const double MLE_T_TOL = 1e-5;         // fishtest's check of the MLE's t-value
// scipy's brentq stops at |dx| < 2e-12 + 8.9e-16 |x|; Brent here goes to full precision, which
// a root near an end of its interval needs (p_i = phat_i / (1 + x phi_i), 1 + x phi_i ~ 1e-8).
static const double BRENT_XTOL = 1e-300;
static const double BRENT_RTOL = 4 * DBL_EPSILON;
static const double DUAL_INFEASIBLE = 1e3; // a dual value past this: no such distribution
static const double DUAL_TOL = 1e-10;      // how well its answer must meet the conditions
static const double DUAL_GRAD_TOL = 1e-13; // the gradient is the conditions' residual

/// The empirical distribution of a result: regularised counts on scores i/(k-1).
typedef struct {
    int k;
    double n;            // sum of the regularised counts
    double a[CELLS_MAX]; // scores
    double p[CELLS_MAX]; // empirical probabilities
} Pdf;

static const char *const STATUS_TEXT[STATS_STATUS_NB] = {
    [STATS_OK] = "ok",
    [STATS_ERR_COUNTS] = "invalid counts",
    [STATS_ERR_PARAMS] = "invalid SPRT parameters",
    [STATS_ERR_BUFFER] = "output buffer too small",
};

const char *stats_strerror(StatsStatus st)
{
    return st < STATS_STATUS_NB ? STATUS_TEXT[st] : "unknown statistics status";
}

/// 800 / ln 10: normalized Elo per unit of t-value.
static double nelo_per_t(void) { return 800.0 / log(10.0); }

/// Logistic Elo of an expected score, the score clamped to [1e-3, 1 - 1e-3].
static double elo_of_score(double x)
{
    x = fmax(x, 1e-3);
    x = fmin(x, 1 - 1e-3);
    return -400 * log10(1 / x - 1);
}

/// Expected score of a logistic Elo difference.
static double score_of_elo(double elo) { return 1 / (1 + pow(10, -elo / 400)); }

/// Zero counts become 1e-3, so that every cell has positive probability.
static void pdf_from_counts(const uint64_t *counts, int k, Pdf *d)
{
    d->k = k;
    d->n = 0;
    for (int i = 0; i < k; i++) {
        double c = counts[i] ? (double)counts[i] : REGULARISATION;
        d->a[i] = (double)i / (k - 1);
        d->p[i] = c;
        d->n += c;
    }
    for (int i = 0; i < k; i++)
        d->p[i] /= d->n;
}

/// mu = sum p_i a_i and var = sum p_i (a_i - mu)^2 (STATS.md, Data): two passes, so that the
/// variance is a sum of squares and never negative from cancellation.
static void moments(const double *a, const double *p, int k, double *mu, double *var)
{
    double m = 0, v = 0;
    for (int i = 0; i < k; i++)
        m += p[i] * a[i];
    for (int i = 0; i < k; i++)
        v += p[i] * (a[i] - m) * (a[i] - m);
    *mu = m;
    *var = v;
}

/// Sum of w_i phi_i / (1 + x phi_i); false where some 1 + x phi_i <= 0.
static bool secular_value(const double *w, const double *phi, int k, double x, double *f)
{
    double s = 0;
    for (int i = 0; i < k; i++) {
        double z = 1 + x * phi[i];
        if (!(z > 0))
            return false;
        s += w[i] * phi[i] / z;
    }
    *f = s;
    return isfinite(s);
}

/// Brent's method on [a, b] with f(a), f(b) of opposite signs (R. P. Brent, Algorithms for
/// Minimization without Derivatives, ch. 4), to scipy's brentq tolerances.
static bool brent(const double *w, const double *phi, int k, double a, double b, double fa,
                  double fb, double *root)
{
    double c = a, fc = fa, d = b - a, e = d;
    for (int iter = 0; iter < BRENT_ITERATIONS; iter++) {
        if ((fb > 0) == (fc > 0)) {
            c = a, fc = fa;
            d = e = b - a;
        }
        if (fabs(fc) < fabs(fb)) {
            a = b, b = c, c = a;
            fa = fb, fb = fc, fc = fa;
        }
        double tol = 0.5 * (BRENT_XTOL + BRENT_RTOL * fabs(b));
        double m = 0.5 * (c - b);
        if (fabs(m) <= tol || fb == 0) {
            *root = b;
            return true;
        }
        if (fabs(e) >= tol && fabs(fa) > fabs(fb)) {
            double s = fb / fa, p, q;
            if (a == c) { // secant step
                p = 2 * m * s;
                q = 1 - s;
            } else { // inverse quadratic interpolation
                double r = fb / fc;
                q = fa / fc;
                p = s * (2 * m * q * (q - r) - (b - a) * (r - 1));
                q = (q - 1) * (r - 1) * (s - 1);
            }
            if (p > 0)
                q = -q;
            else
                p = -p;
            if (2 * p < fmin(3 * m * q - fabs(tol * q), fabs(e * q))) {
                e = d;
                d = p / q;
            } else {
                d = e = m;
            }
        } else {
            d = e = m;
        }
        a = b, fa = fb;
        b += fabs(d) > tol ? d : (m > 0 ? tol : -tol);
        if (!secular_value(w, phi, k, b, &fb))
            return false;
    }
    *root = b;
    return true;
}

/// Walks from x towards the singular end `end`, halving the distance each step, until f
/// changes sign; then [x, y] brackets the root (x: the last point of f's old sign).
static bool bracket_towards(const double *w, const double *phi, int k, double end, double *x,
                            double *fx, double *y, double *fy)
{
    double dist = (end - *x) / 2;
    for (int i = 0; i < BRACKET_HALVINGS; i++) {
        double t = end - dist, f;
        if (t == *x || t == end || !secular_value(w, phi, k, t, &f))
            return false;
        if ((f > 0) != (*fx > 0)) {
            *y = t, *fy = f;
            return true;
        }
        *x = t, *fx = f;
        dist /= 2;
    }
    return false;
}

/// Solves sum w_i phi_i / (1 + x phi_i) = 0 on the interval where every 1 + x phi_i > 0.
/// There f falls from +inf to -inf, so the root exists and is unique when the phi_i take
/// both signs; it is bracketed from the midpoint outwards (fishtest's fixed 1e-9 margins
/// can miss a root that hugs an end) and then refined by Brent's method.
static bool secular_solve(const double *w, const double *phi, int k, double *root)
{
    double lo_phi = phi[0], hi_phi = phi[0];
    for (int i = 1; i < k; i++) {
        lo_phi = fmin(lo_phi, phi[i]);
        hi_phi = fmax(hi_phi, phi[i]);
    }
    if (!(lo_phi < 0 && hi_phi > 0))
        return false;
    double lb = -1 / hi_phi, ub = -1 / lo_phi;
    double x = lb + (ub - lb) / 2, fx, y, fy;
    if (!isfinite(x) || !secular_value(w, phi, k, x, &fx))
        return false;
    if (fx == 0) {
        *root = x;
        return true;
    }
    if (!bracket_towards(w, phi, k, fx > 0 ? ub : lb, &x, &fx, &y, &fy))
        return false;
    return brent(w, phi, k, x, y, fx, fy, root);
}

/// p_i = phat_i / (1 + x phi_i) for the root x of the secular equation; false unless every
/// p_i is a positive finite number.
static bool reweight(const Pdf *d, const double *phi, double *p)
{
    double x;
    if (!secular_solve(d->p, phi, d->k, &x))
        return false;
    for (int i = 0; i < d->k; i++) {
        p[i] = d->p[i] / (1 + x * phi[i]);
        if (!(p[i] > 0) || !isfinite(p[i]))
            return false;
    }
    return true;
}

/// The maximum-likelihood distribution with expected score s (LLRcalc.MLE_expected).
static bool mle_expected(const Pdf *d, double s, double *p)
{
    double phi[CELLS_MAX] = {0};
    for (int i = 0; i < d->k; i++)
        phi[i] = d->a[i] - s;
    return reweight(d, phi, p);
}

/// The t-value (mu - 1/2) / sigma of p, the quantity the normalized SPRT's hypotheses fix;
/// false for a distribution with no spread.
static bool t_value(const Pdf *d, const double *p, double *t)
{
    double mu, var;
    moments(d->a, p, d->k, &mu, &var);
    if (!(var > 0))
        return false;
    *t = (mu - 0.5) / sqrt(var);
    return isfinite(*t);
}

/// One step of LLRcalc.MLE_t_value: linearise (mu - 1/2)/sigma = t around p, solve.
static bool mle_t_step(const Pdf *d, const double *p, double t, double *next)
{
    double mu, var, phi[CELLS_MAX] = {0};
    moments(d->a, p, d->k, &mu, &var);
    if (!(var > 0))
        return false;
    double sigma = sqrt(var);
    for (int i = 0; i < d->k; i++) {
        double z = (mu - d->a[i]) / sigma;
        // STATS.md: phi_i = a_i - 1/2 - t sigma (1 + ((mu - a_i)/sigma)^2) / 2.
        phi[i] = d->a[i] - 0.5 - t * sigma * (1 + z * z) / 2;
    }
    return reweight(d, phi, next);
}

/// Iterates from p (updated in place) until no p_i moves by 1e-9 or max_iter steps; true
/// when the result has t-value t to fishtest's 1e-5.
static bool mle_t_iterate(const Pdf *d, double *p, double t, int max_iter)
{
    for (int iter = 0; iter < max_iter; iter++) {
        double next[CELLS_MAX], change = 0;
        if (!mle_t_step(d, p, t, next))
            return false;
        for (int i = 0; i < d->k; i++) {
            change = fmax(change, fabs(next[i] - p[i]));
            p[i] = next[i];
        }
        if (change < MLE_STEP_TOL)
            break;
    }
    double got;
    return t_value(d, p, &got) && fabs(got - t) < MLE_T_TOL;
}

/// Sum w_i ln(1 + theta . g_i); false where some 1 + theta . g_i <= 0.
static bool dual_value(const double *w, const double (*g)[2], int k, const double *theta, double *v)
{
    double s = 0;
    for (int i = 0; i < k; i++) {
        double z = 1 + theta[0] * g[i][0] + theta[1] * g[i][1];
        if (!(z > 0))
            return false;
        s += w[i] * log(z);
    }
    *v = s;
    return isfinite(s);
}

/// max over theta of sum w_i ln(1 + theta . g_i), by Newton's method with backtracking from
/// theta = 0 (the function is concave). It is the dual of the most likely distribution
/// p_i = w_i / (1 + theta . g_i) with sum p_i g_i = 0 (its gradient is that sum); where no
/// such p exists it grows without bound, and stops large.
static double dual_max(const double *w, const double (*g)[2], int k, double *theta)
{
    double val = 0;
    theta[0] = theta[1] = 0;
    for (int iter = 0; iter < DUAL_ITERATIONS && val < DUAL_INFEASIBLE; iter++) {
        double grad[2] = {0, 0}, h00 = 0, h01 = 0, h11 = 0; // gradient, minus the Hessian
        for (int i = 0; i < k; i++) {
            double z = 1 + theta[0] * g[i][0] + theta[1] * g[i][1], wz = w[i] / z;
            grad[0] += wz * g[i][0], grad[1] += wz * g[i][1];
            h00 += wz / z * g[i][0] * g[i][0];
            h01 += wz / z * g[i][0] * g[i][1];
            h11 += wz / z * g[i][1] * g[i][1];
        }
        if (fmax(fabs(grad[0]), fabs(grad[1])) < DUAL_GRAD_TOL) // the conditions hold
            break;
        double det = h00 * h11 - h01 * h01;
        if (!(det > 0))
            break;
        double step[2] = {(h11 * grad[0] - h01 * grad[1]) / det,
                          (h00 * grad[1] - h01 * grad[0]) / det};
        if (!(grad[0] * step[0] + grad[1] * step[1] > 1e-20))
            break;
        bool moved = false;
        double before = val;
        for (double lambda = 1; lambda > 1e-18 && !moved; lambda /= 2) {
            double cand[2] = {theta[0] + lambda * step[0], theta[1] + lambda * step[1]}, v;
            if (dual_value(w, g, k, cand, &v) && v >= val) {
                theta[0] = cand[0], theta[1] = cand[1], val = v;
                moved = true;
            }
        }
        if (!moved || val == before) // as good as floating point gets
            break;
    }
    return val;
}

/// Whether a distribution with every p_i > 0 on the scores i/(k-1) can have mean m and
/// second moment s2: (m, s2) must lie strictly inside the convex hull of the points
/// (a_i, a_i^2), above the chords between neighbours and below the chord from 0 to 1.
static bool moments_feasible(int k, double m, double s2)
{
    if (!(m > 0 && m < 1 && s2 < m))
        return false;
    // (a0, a1) are the neighbouring scores around m; the chord through (a0, a0^2) and (a1, a1^2)
    // is y = a0^2 + (a0 + a1)(m - a0), and s2 < m is the chord from (0, 0) to (1, 1).
    int j = (int)(m * (k - 1));
    double a0 = (double)j / (k - 1), a1 = (double)(j + 1) / (k - 1);
    return s2 > a0 * a0 + (a0 + a1) * (m - a0);
}

/// The log-likelihood (per count) of the most likely distribution with mean 1/2 + t sigma
/// and standard deviation sigma, written to p when p is not NULL; -infinity where the dual
/// did not converge to a distribution that meets both conditions.
static double profile_loglik(const Pdf *d, double t, double sigma, double *p)
{
    // The two conditions as sum q_i g_i = 0: g_i0 for the mean, g_i1 for the variance.
    double m = 0.5 + t * sigma, g[CELLS_MAX][2], q[CELLS_MAX], theta[2];
    if (!moments_feasible(d->k, m, sigma * sigma + m * m))
        return -INFINITY;
    for (int i = 0; i < d->k; i++) {
        g[i][0] = d->a[i] - m;
        g[i][1] = g[i][0] * g[i][0] - sigma * sigma;
    }
    dual_max(d->p, (const double(*)[2])g, d->k, theta);
    double ll = 0, total = 0, mean = 0, var = 0;
    for (int i = 0; i < d->k; i++) {
        q[i] = d->p[i] / (1 + theta[0] * g[i][0] + theta[1] * g[i][1]);
        if (!(q[i] > 0) || !isfinite(q[i]))
            break;
        ll += d->p[i] * log(q[i]);
        total += q[i], mean += q[i] * g[i][0], var += q[i] * g[i][1];
    }
    // Only an answer that meets all three conditions counts: an unconverged dual would otherwise
    // pass off a wrong distribution, and with it a wrong LLR.
    if (!(fabs(total - 1) < DUAL_TOL && fabs(mean) < DUAL_TOL && fabs(var) < DUAL_TOL))
        return -INFINITY;
    if (p)
        memcpy(p, q, sizeof q);
    return ll;
}

/// The profile log-likelihood at sigma = smax - e^u, where smax = 1/(2 sqrt(1 + t^2)) is the
/// largest sigma any distribution on [0, 1] with t-value t can have.
static double profile_at(const Pdf *d, double t, double u, double *p)
{
    double smax = 0.5 / sqrt(1 + t * t);
    // sigma = smax - e^u: an even grid in u is fine near smax, where a maximum close to the
    // largest possible sigma would fall between the points of a linear grid.
    return profile_loglik(d, t, smax - exp(u), p);
}

/// Where on the u axis of profile_at the profile is highest: a scan of a grid in
/// log(smax - sigma), which resolves maxima that hug either end, then golden-section search.
/// NAN when no sigma admits a distribution.
static double profile_argmax(const Pdf *d, double t)
{
    double smax = 0.5 / sqrt(1 + t * t);
    double lo = log(1e-12 * smax), hi = log(smax * (1 - 1e-12)), span = (hi - lo) / PROFILE_GRID;
    double best_u = NAN, best = -INFINITY;
    for (int i = 0; i <= PROFILE_GRID; i++) {
        double u = lo + span * i, v = profile_at(d, t, u, NULL);
        if (v > best)
            best = v, best_u = u;
    }
    if (!isfinite(best))
        return NAN;
    const double golden = (sqrt(5.0) - 1) / 2;
    double a = fmax(best_u - span, lo), b = fmin(best_u + span, hi);
    for (int i = 0; i < PROFILE_REFINE; i++) {
        double c = b - golden * (b - a), e = a + golden * (b - a);
        if (profile_at(d, t, c, NULL) > profile_at(d, t, e, NULL))
            b = e;
        else
            a = c;
    }
    return isfinite(profile_at(d, t, (a + b) / 2, NULL)) ? (a + b) / 2 : best_u;
}

/// The global maximum of the likelihood subject to t-value t, for where fishtest's
/// iteration fails: the maximum of the likelihood profile over sigma (each point a concave
/// problem in two multipliers), polished by the fixed-point iteration.
static bool mle_t_global(const Pdf *d, double t, double *p)
{
    double u = profile_argmax(d, t), got, polished[CELLS_MAX], ll_polished = 0;
    if (isnan(u))
        return false;
    double ll = profile_at(d, t, u, p);
    // The fixed-point iteration may settle on another stationary point; its answer replaces the
    // global one only when its likelihood is not lower.
    memcpy(polished, p, sizeof polished);
    if (mle_t_iterate(d, polished, t, MLE_MORE_ITERATIONS)) {
        for (int i = 0; i < d->k; i++)
            ll_polished += d->p[i] * log(polished[i]);
        if (ll_polished >= ll - 1e-9) {
            memcpy(p, polished, sizeof polished);
            return true;
        }
    }
    return t_value(d, p, &got) && fabs(got - t) < MLE_T_TOL;
}

/// The maximum-likelihood distribution with t-value (mu - 1/2)/sigma = t: exactly as
/// fishtest (10 fixed-point steps from the uniform distribution), and where that fails
/// (lopsided counts far from t: fishtest asserts, fastchess returns NaN) by a global search.
static bool mle_t(const Pdf *d, double t, double *p)
{
    for (int i = 0; i < d->k; i++)
        p[i] = 1.0 / d->k;
    if (mle_t_iterate(d, p, t, MLE_FISHTEST_ITERATIONS))
        return true;
    return mle_t_global(d, t, p);
}

/// N * sum phat_i ln(p1_i / p0_i).
/// STATS.md, SPRT: LLR = N sum phat_i ln(p_i(t1) / p_i(t0)), N the regularised count.
static double llr_of(const Pdf *d, const double *p0, const double *p1)
{
    double s = 0;
    for (int i = 0; i < d->k; i++)
        s += d->p[i] * (log(p1[i]) - log(p0[i]));
    return d->n * s;
}

/// LLRcalc.LLR_normalized_alt: the closed-form approximation of the normalized LLR.
static double llr_normalized_approx(const Pdf *d, double nelo0, double nelo1)
{
    double mu, var;
    moments(d->a, d->p, d->k, &mu, &var);
    bool penta = d->k == STATS_PENTA_NB;
    double sigma_pg = sqrt(penta ? 2 * var : var), games = penta ? 2 * d->n : d->n;
    double nt = (mu - 0.5) / sigma_pg;
    double nt0 = nelo0 / nelo_per_t(), nt1 = nelo1 / nelo_per_t();
    return games / 2 * log((1 + (nt - nt0) * (nt - nt0)) / (1 + (nt - nt1) * (nt - nt1)));
}

/// LLRcalc.LLR_alt2 times N: the Brownian approximation of the logistic LLR.
static double llr_logistic_approx(const Pdf *d, double s0, double s1)
{
    double mu, var;
    moments(d->a, d->p, d->k, &mu, &var);
    return d->n * (s1 - s0) * (2 * mu - s0 - s1) / var / 2;
}

static bool llr_exact(const Pdf *d, const SprtParams *sp, double *llr)
{
    double p0[CELLS_MAX], p1[CELLS_MAX];
    bool ok;
    if (sp->model == SPRT_LOGISTIC) {
        ok = mle_expected(d, score_of_elo(sp->elo0), p0) &&
             mle_expected(d, score_of_elo(sp->elo1), p1);
    } else {
        // STATS.md: t_k = nElo_k / (800 / ln 10), times sqrt 2 for pairs: the pair average's sigma
        // is the per-game sigma over sqrt 2, so the same nElo is a larger t per pair.
        double scale = d->k == STATS_PENTA_NB ? sqrt(2.0) : 1.0;
        ok = mle_t(d, scale * sp->elo0 / nelo_per_t(), p0) &&
             mle_t(d, scale * sp->elo1 / nelo_per_t(), p1);
    }
    if (!ok)
        return false;
    *llr = llr_of(d, p0, p1);
    return isfinite(*llr);
}

// alpha + beta < 1 is exactly what puts the bounds on either side of 0 (lower < 0 < upper), so
// that at most one hypothesis can be accepted; elo0 < elo1 orders them.
StatsStatus sprt_params_check(const SprtParams *p)
{
    if (!p || !(p->alpha > 0 && p->alpha < 1) || !(p->beta > 0 && p->beta < 1) ||
        !(p->alpha + p->beta < 1))
        return STATS_ERR_PARAMS;
    if (!(fabs(p->elo0) <= STATS_ELO_MAX) || !(fabs(p->elo1) <= STATS_ELO_MAX) ||
        !(p->elo0 < p->elo1))
        return STATS_ERR_PARAMS;
    return (unsigned)p->model < SPRT_MODEL_NB ? STATS_OK : STATS_ERR_PARAMS;
}

// STATS.md: A = ln(beta / (1 - alpha)), B = ln((1 - beta) / alpha); 0.05 each gives +-2.944.
void sprt_bounds(double alpha, double beta, double *lower, double *upper)
{
    *lower = log(beta / (1 - alpha));
    *upper = log((1 - beta) / alpha);
}

StatsStatus sprt_llr(const uint64_t *counts, int k, const SprtParams *p, double *llr,
                     bool *approximate)
{
    if (!counts || (k != STATS_TRI_NB && k != STATS_PENTA_NB))
        return STATS_ERR_COUNTS;
    uint64_t total = 0;
    for (int i = 0; i < k; i++) {
        if (counts[i] > STATS_COUNT_MAX)
            return STATS_ERR_COUNTS;
        total += counts[i];
    }
    StatsStatus st = sprt_params_check(p);
    if (st)
        return st;
    bool approx = false;
    *llr = 0;
    if (total > 0) {
        Pdf d;
        pdf_from_counts(counts, k, &d);
        // Never NaN, never an abort (STATS.md): should even the global search fail, fishtest's
        // closed-form approximations stand in, flagged as approximate; a non-finite one reads as 0,
        // which only continues the test.
        if (!llr_exact(&d, p, llr)) {
            approx = true;
            *llr = p->model == SPRT_LOGISTIC
                       ? llr_logistic_approx(&d, score_of_elo(p->elo0), score_of_elo(p->elo1))
                       : llr_normalized_approx(&d, p->elo0, p->elo1);
            if (!isfinite(*llr))
                *llr = 0;
        }
    }
    if (approximate)
        *approximate = approx;
    return STATS_OK;
}

// Reaching a bound decides (STATS.md: H1 when LLR >= B, H0 when LLR <= A); with lower < 0 <
// upper the two tests cannot both hold.
SprtDecision sprt_decide(double llr, double lower, double upper)
{
    if (llr >= upper)
        return SPRT_H1;
    if (llr <= lower)
        return SPRT_H0;
    return SPRT_CONTINUE;
}

/// The cells the statistics use: Ptnml when known, else W/D/L as loss, draw, win.
static int result_cells(const MatchResults *r, uint64_t *c)
{
    if (r->has_ptnml) {
        memcpy(c, r->ptnml, sizeof r->ptnml);
        return STATS_PENTA_NB;
    }
    // In this order cell i scores i/2, as pdf_from_counts and elo_from_cells assume.
    c[0] = r->losses, c[1] = r->draws, c[2] = r->wins;
    return STATS_TRI_NB;
}

StatsStatus sprt_evaluate(const MatchResults *r, const SprtParams *p, SprtResult *out)
{
    StatsStatus st = stats_results_check(r);
    if (st)
        return st;
    uint64_t c[CELLS_MAX];
    int k = result_cells(r, c);
    st = sprt_llr(c, k, p, &out->llr, &out->approximate);
    if (st)
        return st;
    sprt_bounds(p->alpha, p->beta, &out->lower, &out->upper);
    out->decision = sprt_decide(out->llr, out->lower, out->upper);
    return STATS_OK;
}

StatsStatus stats_results_check(const MatchResults *r)
{
    if (!r || (!r->has_wdl && !r->has_ptnml))
        return STATS_ERR_COUNTS;
    uint64_t pairs = 0;
    if (r->has_ptnml)
        for (int i = 0; i < STATS_PENTA_NB; i++) {
            if (r->ptnml[i] > STATS_COUNT_MAX)
                return STATS_ERR_COUNTS;
            pairs += r->ptnml[i];
        }
    if (!r->has_wdl)
        return STATS_OK;
    if (r->wins > STATS_COUNT_MAX || r->draws > STATS_COUNT_MAX || r->losses > STATS_COUNT_MAX)
        return STATS_ERR_COUNTS;
    if (!r->has_ptnml)
        return STATS_OK;
    // W = WL + p3 + 2 p4 and L = 2 p0 + p1 + WL with 0 <= WL <= p2; D follows from the total.
    const uint64_t *p = r->ptnml;
    if (r->wins + r->draws + r->losses != 2 * pairs || r->wins < p[3] + 2 * p[4])
        return STATS_ERR_COUNTS;
    uint64_t wl = r->wins - p[3] - 2 * p[4];
    if (wl > p[2] || r->losses != 2 * p[0] + p[1] + wl)
        return STATS_ERR_COUNTS;
    return STATS_OK;
}

/// num / den, +infinity for a positive number over zero and 0 for 0/0.
static double ratio(uint64_t num, uint64_t den)
{
    if (den)
        return (double)num / (double)den;
    return num ? INFINITY : 0;
}

/// stat_util.get_elo on regularised counts, with fastchess's nElo from the same mu, var.
static void elo_from_cells(const uint64_t *c, int k, EloEstimate *e)
{
    double r[CELLS_MAX], n = 0, mu = 0, var = 0;
    for (int i = 0; i < k; i++) {
        r[i] = c[i] ? (double)c[i] : REGULARISATION;
        n += r[i];
    }
    // STATS.md, Elo: a pair counts as 2 games; var is the per-game variance for both kinds of cell
    // (for pairs it is 2 var_pair, the nElo formula's denominator), so se = sd / sqrt(games).
    double games = n * (k - 1) / 2;
    for (int i = 0; i < k; i++)
        mu += r[i] * (i / 2.0) / games;
    for (int i = 0; i < k; i++) {
        double dev = i / 2.0 - (k - 1) / 2.0 * mu;
        var += r[i] * dev * dev / games;
    }
    double sd = sqrt(var), se = sd / sqrt(games);
    double lo = mu - Z975 * se, hi = mu + Z975 * se;
    e->elo = elo_of_score(mu);
    e->elo_error = (elo_of_score(hi) - elo_of_score(lo)) / 2;
    e->nelo = (mu - 0.5) / sd * nelo_per_t();
    e->nelo_error = (hi - lo) / 2 / sd * nelo_per_t();
    // LOS = Phi((mu - 1/2) / se), through erfc: Phi(x) = erfc(-x / sqrt 2) / 2.
    e->los = 0.5 * erfc(-(mu - 0.5) / se / sqrt(2.0));
}

/// -400 log10(1/p - 1) for p = (1 - STATS_BOUND_CONFIDENCE)^(1/n): the Elo of the exact
/// (Clopper-Pearson) one-sided lower confidence bound on the score after n wins in n games.
/// With every trial a success the binomial gives P(X >= n | p) = p^n, so the bound solves
/// p^n = alpha (Clopper and Pearson 1934; for x = n the beta quantile Beta(alpha; n, 1) is
/// alpha^(1/n)). The games are taken as the trials (as README's strength table does: 30/30
/// gives 0.905, +391); 1/p - 1 = expm1(-ln(alpha) / n) keeps the digits when p is near 1.
static double elo_bound_all_won(uint64_t n)
{
    return -400 * log10(expm1(-log(1 - STATS_BOUND_CONFIDENCE) / (double)n));
}

/// Which figures mean something (StatsEstimate): a score of 0 or 1 has no finite logistic Elo
/// (fishtest's clamp to [1e-3, 1 - 1e-3] turns it into +-1199.83), and the normal interval
/// needs STATS_INTERVAL_MIN_GAMES games and a non-zero sample variance (regularisation gives
/// zero-variance samples a tiny made-up one: 4 drawn pairs read "0.00 +/- 17.00").
static void estimate_classify(const uint64_t *c, int k, EloEstimate *e)
{
    int used = 0;
    for (int i = 0; i < k; i++)
        used += c[i] > 0;
    e->no_variance = used == 1;
    if (e->points == (double)e->games || e->points == 0) {
        e->estimate = STATS_ESTIMATE_BOUND;
        double b = elo_bound_all_won(e->games);
        e->elo_bound = e->points > 0 ? b : -b; // the all-lost bound mirrors the all-won one
    } else if (e->games < STATS_INTERVAL_MIN_GAMES || e->no_variance) {
        e->estimate = STATS_ESTIMATE_POINT;
    } else {
        e->estimate = STATS_ESTIMATE_INTERVAL;
    }
}

StatsStatus stats_elo(const MatchResults *r, EloEstimate *e)
{
    StatsStatus st = stats_results_check(r);
    if (st)
        return st;
    memset(e, 0, sizeof *e);
    uint64_t c[CELLS_MAX];
    int k = result_cells(r, c);
    e->pairs = r->has_ptnml;
    if (r->has_ptnml) {
        uint64_t pairs = 0;
        for (int i = 0; i < STATS_PENTA_NB; i++) {
            pairs += c[i];
            e->points += (double)c[i] * i / 2;
        }
        e->games = 2 * pairs;
        // fastchess's ratios on pairs: DrawRatio is p2 (pairs scoring 1) over all pairs, PairsRatio
        // the pairs won over the pairs lost (STATS.md's example: 144 / 340 = 42.35 %).
        e->draw_ratio = pairs ? (double)c[2] / (double)pairs : 0;
        e->pairs_ratio = ratio(c[3] + c[4], c[0] + c[1]);
    } else {
        e->games = r->wins + r->draws + r->losses;
        e->points = (double)r->wins + (double)r->draws / 2;
        e->draw_ratio = e->games ? (double)r->draws / (double)e->games : 0;
    }
    if (r->has_wdl && r->has_ptnml) {
        // p2 splits into win-loss and draw-draw pairs; stats_results_check made 0 <= wl <= p2.
        uint64_t wl = r->wins - c[3] - 2 * c[4];
        e->wl_dd_ratio = ratio(wl, c[2] - wl);
    }
    if (e->games == 0) {
        e->los = 0.5;
        e->estimate = STATS_ESTIMATE_NONE;
        return STATS_OK;
    }
    e->score = e->points / (double)e->games;
    elo_from_cells(c, k, e);
    estimate_classify(c, k, e);
    return STATS_OK;
}

double sprt_games_left(const SprtResult *s, uint64_t games)
{
    if (s->decision != SPRT_CONTINUE)
        return 0;
    if (games == 0 || s->llr == 0 || !isfinite(s->llr))
        return -1;
    double drift = s->llr / (double)games;
    return ((drift > 0 ? s->upper : s->lower) - s->llr) / drift;
}

const char *sprt_model_name(SprtModel m)
{
    return m == SPRT_LOGISTIC ? "logistic" : m == SPRT_NORMALIZED ? "normalized" : "unknown";
}

const char *sprt_decision_name(SprtDecision d)
{
    return d == SPRT_H0 ? "H0 accepted" : d == SPRT_H1 ? "H1 accepted" : "continue";
}

/// A bounded text sink: appends with snprintf, remembers whether anything was cut.
/// Once cut, nothing more is appended and buf stays NUL-terminated: the caller gets the text
/// up to the cut, and STATS_ERR_BUFFER.
typedef struct {
    char *buf;
    size_t cap, len;
    bool cut;
} Writer;

__attribute__((format(printf, 2, 3))) static void writer_printf(Writer *w, const char *fmt, ...)
{
    if (w->cut)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(w->buf + w->len, w->cap - w->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= w->cap - w->len) {
        w->cut = true;
        w->len = w->cap - 1;
        w->buf[w->len] = '\0';
        return;
    }
    w->len += (size_t)n;
}

/// fastchess's "(17.0%)": the LLR as a percentage of the bound it is heading to.
static double llr_percent(const SprtResult *s)
{
    return s->llr >= 0 ? 100 * s->llr / s->upper : 100 * s->llr / -s->lower;
}

/// v as printed with `decimals` decimals, without the "-0.00" of tiny negative numbers.
static double shown(double v, int decimals) { return fabs(v) < 0.5 * pow(10, -decimals) ? 0.0 : v; }

const char *stats_estimate_name(StatsEstimate e)
{
    static const char *const NAMES[STATS_ESTIMATE_NB] = {
        [STATS_ESTIMATE_NONE] = "none",
        [STATS_ESTIMATE_INTERVAL] = "interval",
        [STATS_ESTIMATE_POINT] = "point",
        [STATS_ESTIMATE_BOUND] = "bound",
    };
    return e < STATS_ESTIMATE_NB ? NAMES[e] : "unknown";
}

static void elo_text(Writer *w, const EloEstimate *e, int d, const char *pm)
{
    switch (e->estimate) {
    case STATS_ESTIMATE_INTERVAL:
        writer_printf(w, "%.*f %s %.*f", d, shown(e->elo, d), pm, d, shown(e->elo_error, d));
        break;
    case STATS_ESTIMATE_POINT:
        writer_printf(w, "%.*f (no error bar: ", d, shown(e->elo, d));
        if (e->games < STATS_INTERVAL_MIN_GAMES)
            writer_printf(w, "%llu game%s, fewer than %d)", (unsigned long long)e->games,
                          e->games == 1 ? "" : "s", STATS_INTERVAL_MIN_GAMES);
        else
            writer_printf(w, "every %s scored the same)", e->pairs ? "pair" : "game");
        break;
    case STATS_ESTIMATE_BOUND:
        writer_printf(w, "no finite estimate (score %s; one-sided %.0f%% bound: %s %+.*f)",
                      e->points > 0 ? "100 %" : "0 %", 100 * STATS_BOUND_CONFIDENCE,
                      e->points > 0 ? "above" : "below", d, e->elo_bound);
        break;
    default: writer_printf(w, "none (no games)");
    }
}

static void nelo_text(Writer *w, const EloEstimate *e, int d, const char *pm)
{
    if (e->estimate == STATS_ESTIMATE_INTERVAL)
        writer_printf(w, "%.*f %s %.*f", d, shown(e->nelo, d), pm, d, shown(e->nelo_error, d));
    else if (e->estimate == STATS_ESTIMATE_BOUND)
        writer_printf(w, "no finite estimate");
    else if (e->estimate == STATS_ESTIMATE_POINT && e->no_variance)
        writer_printf(w, "undefined (no variance)");
    else if (e->estimate == STATS_ESTIMATE_POINT)
        writer_printf(w, "%.*f (no error bar)", d, shown(e->nelo, d));
    else
        writer_printf(w, "none");
}

StatsStatus stats_elo_text(const EloEstimate *e, int decimals, const char *pm, char *buf,
                           size_t cap)
{
    if (!buf || cap == 0)
        return STATS_ERR_BUFFER;
    Writer w = {buf, cap, 0, false};
    buf[0] = '\0';
    elo_text(&w, e, decimals, pm);
    return w.cut ? STATS_ERR_BUFFER : STATS_OK;
}

StatsStatus stats_nelo_text(const EloEstimate *e, int decimals, const char *pm, char *buf,
                            size_t cap)
{
    if (!buf || cap == 0)
        return STATS_ERR_BUFFER;
    Writer w = {buf, cap, 0, false};
    buf[0] = '\0';
    nelo_text(&w, e, decimals, pm);
    return w.cut ? STATS_ERR_BUFFER : STATS_OK;
}

StatsStatus stats_format(const MatchResults *r, const SprtParams *sprt, char *buf, size_t cap)
{
    if (!buf || cap == 0)
        return STATS_ERR_BUFFER;
    buf[0] = '\0';
    EloEstimate e;
    SprtResult s;
    StatsStatus st = stats_elo(r, &e);
    if (!st && sprt)
        st = sprt_evaluate(r, sprt, &s);
    if (st)
        return st;

    Writer w = {buf, cap, 0, false};
    // The lines and their order are fastchess's (STATS.md, "Output that testers recognise"), so
    // tools and eyes that read fastchess's output read ours.
    // With an interval the line is fastchess's; otherwise it says what the sample cannot give
    // (StatsEstimate) rather than print fishtest's clamped +-1199.83 or a made-up error bar.
    writer_printf(&w, "Elo: ");
    elo_text(&w, &e, 2, "+/-");
    writer_printf(&w, ", nElo: ");
    nelo_text(&w, &e, 2, "+/-");
    writer_printf(&w, "\n");
    writer_printf(&w, "LOS: %.2f %%, DrawRatio: %.2f %%", shown(100 * e.los, 2),
                  shown(100 * e.draw_ratio, 2));
    if (r->has_ptnml)
        writer_printf(&w, ", PairsRatio: %.2f", shown(e.pairs_ratio, 2));
    writer_printf(&w, "\nGames: %llu, ", (unsigned long long)e.games);
    if (r->has_wdl)
        writer_printf(&w, "Wins: %llu, Losses: %llu, Draws: %llu, ", (unsigned long long)r->wins,
                      (unsigned long long)r->losses, (unsigned long long)r->draws);
    writer_printf(&w, "Points: %.1f (%.2f %%)\n", e.points, 100 * e.score);
    if (r->has_ptnml) {
        const uint64_t *p = r->ptnml;
        writer_printf(&w, "Ptnml(0-2): [%llu, %llu, %llu, %llu, %llu]", (unsigned long long)p[0],
                      (unsigned long long)p[1], (unsigned long long)p[2], (unsigned long long)p[3],
                      (unsigned long long)p[4]);
        if (r->has_wdl)
            writer_printf(&w, ", WL/DD Ratio: %.2f", shown(e.wl_dd_ratio, 2));
        writer_printf(&w, "\n");
    }
    if (sprt)
        writer_printf(&w, "LLR: %.2f (%.1f%%) (%.2f, %.2f) [%.2f, %.2f]\n", shown(s.llr, 2),
                      shown(llr_percent(&s), 1), s.lower, s.upper, shown(sprt->elo0, 2),
                      shown(sprt->elo1, 2));
    return w.cut ? STATS_ERR_BUFFER : STATS_OK;
}
