// SPDX-License-Identifier: MIT
#include "rating.h"

#include <math.h>
#include <string.h>

void rating_init(RatingTable *t, int players)
{
    memset(t, 0, sizeof *t);
    t->players = players < 0 ? 0 : players > RATING_MAX_PLAYERS ? RATING_MAX_PLAYERS : players;
}

// A game's score is 1, 0.5 or 0; the thresholds read it without comparing floats for equality.
// Out-of-range players are ignored: a table never holds a game it cannot rate.
void rating_add(RatingTable *t, int a, int b, double score_a)
{
    if (a < 0 || b < 0 || a >= t->players || b >= t->players || a == b)
        return;
    if (score_a > 0.75)
        t->wins[a][b]++;
    else if (score_a < 0.25)
        t->wins[b][a]++;
    else {
        t->draws[a][b]++;
        t->draws[b][a]++;
    }
}

/// Games between i and j, and i's points against j, with the virtual draw added.
/// Only for a pair that met: the virtual draw keeps an all-win pair's strength ratio finite
/// (the MLE would otherwise be infinite), and adds nothing between players who never met.
static void pair_totals(const RatingTable *t, int i, int j, double *n, double *s)
{
    double g = (double)(t->wins[i][j] + t->wins[j][i] + t->draws[i][j]);
    *n = g > 0 ? g + 1 : 0;
    *s = g > 0 ? t->wins[i][j] + 0.5 * t->draws[i][j] + 0.5 : 0;
}

/// Whether every player is reached from player 0 through pairs that met (a depth-first
/// search). Without that two groups have no common scale and the fit has no unique answer.
static bool connected(const RatingTable *t)
{
    int k = t->players, seen[RATING_MAX_PLAYERS] = {0}, stack[RATING_MAX_PLAYERS], top = 0;
    if (k == 0)
        return false;
    seen[0] = 1;
    stack[top++] = 0;
    while (top) {
        int i = stack[--top];
        for (int j = 0; j < k; j++) {
            double n, s;
            pair_totals(t, i, j, &n, &s);
            if (j != i && n > 0 && !seen[j]) {
                seen[j] = 1;
                stack[top++] = j;
            }
        }
    }
    for (int i = 0; i < k; i++)
        if (!seen[i])
            return false;
    return true;
}

/// Inverts a small symmetric positive-definite matrix in place (Gauss-Jordan with pivoting).
/// false when a pivot vanishes (the matrix is singular to working precision); a is then left
/// half reduced, which the caller does not use.
static bool invert(double a[RATING_MAX_PLAYERS][RATING_MAX_PLAYERS], int k)
{
    double inv[RATING_MAX_PLAYERS][RATING_MAX_PLAYERS] = {{0}};
    for (int i = 0; i < k; i++)
        inv[i][i] = 1;
    for (int c = 0; c < k; c++) {
        int p = c;
        for (int r = c + 1; r < k; r++)
            if (fabs(a[r][c]) > fabs(a[p][c]))
                p = r;
        if (fabs(a[p][c]) < 1e-12)
            return false;
        for (int x = 0; x < k; x++) {
            double t1 = a[c][x], t2 = inv[c][x];
            a[c][x] = a[p][x], inv[c][x] = inv[p][x];
            a[p][x] = t1, inv[p][x] = t2;
        }
        double d = a[c][c];
        for (int x = 0; x < k; x++)
            a[c][x] /= d, inv[c][x] /= d;
        for (int r = 0; r < k; r++) {
            if (r == c)
                continue;
            double f = a[r][c];
            for (int x = 0; x < k; x++)
                a[r][x] -= f * a[c][x], inv[r][x] -= f * inv[c][x];
        }
    }
    memcpy(a, inv, sizeof inv);
    return true;
}

bool rating_fit(const RatingTable *t, RatingResult *out)
{
    const int k = t->players;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) {
            uint64_t g = t->wins[i][j] + t->wins[j][i] + t->draws[i][j];
            if (i != j) {
                out->games[i] += g;
                out->points[i] += t->wins[i][j] + 0.5 * t->draws[i][j];
            }
        }
    out->connected = connected(t);
    if (!out->connected)
        return false;
    // MM iterations on the strengths gamma (Hunter 2004): gamma_i = W_i / sum n_ij/(g_i+g_j).
    double g[RATING_MAX_PLAYERS];
    for (int i = 0; i < k; i++)
        g[i] = 1;
    // Each MM step raises the likelihood (Hunter 2004), so on a connected table the iteration
    // converges; 10,000 steps is a bound for pathological tables, not a tuning.
    for (out->iterations = 0; out->iterations < 10000; out->iterations++) {
        double next[RATING_MAX_PLAYERS], change = 0, logsum = 0;
        for (int i = 0; i < k; i++) {
            double w = 0, den = 0;
            for (int j = 0; j < k; j++) {
                double n, s;
                pair_totals(t, i, j, &n, &s);
                if (j == i || n == 0)
                    continue;
                w += s;
                den += n / (g[i] + g[j]);
            }
            next[i] = w / den;
            logsum += log(next[i]);
        }
        for (int i = 0; i < k; i++) {
            // The likelihood only sees ratios of strengths: fixing their scale each step makes the
            // change measured next a real change, not a drift of all strengths together.
            next[i] /= exp(logsum / k); // geometric mean 1: ratings relative to the field
            change = fmax(change, fabs(log(next[i] / g[i])));
            g[i] = next[i];
        }
        // The largest change in log-strength, i.e. under 2e-8 Elo.
        if (change < 1e-10)
            break;
    }
    const double scale = 400 / log(10);
    for (int i = 0; i < k; i++)
        out->elo[i] = scale * log(g[i]);
    // Fisher information in log-strength: a weighted graph Laplacian L. Its pseudo-inverse
    // (L + J/k)^-1 - J/k gives the covariance of ratings measured from the mean.
    double m[RATING_MAX_PLAYERS][RATING_MAX_PLAYERS] = {{0}};
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) {
            double n, s;
            pair_totals(t, i, j, &n, &s);
            if (i == j || n == 0)
                continue;
            // p: the model's chance that i beats j; each of their n games adds p (1 - p) to the
            // information. L has the all-ones vector as its null space (connected: no other), so L
            // + J/k is invertible, and subtracting 1/k again gives the variance of i's rating
            // against the mean.
            double p = g[i] / (g[i] + g[j]), v = n * p * (1 - p);
            m[i][j] -= v;
            m[i][i] += v;
        }
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
            m[i][j] += 1.0 / k;
    if (!invert(m, k))
        return false;
    for (int i = 0; i < k; i++) {
        double var = m[i][i] - 1.0 / k;
        // Half-width of the 95% interval: z(0.975) sd, from log-strength to Elo.
        out->elo_error[i] = var > 0 ? 1.959964 * sqrt(var) * scale : 0;
    }
    return true;
}
