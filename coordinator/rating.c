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

/// Games between i and j, and i's points against j, with the prior's virtual draws added.
/// Only for a pair that met: the virtual draw keeps an all-win pair's strength ratio finite
/// (the MLE would otherwise be infinite), and adds nothing between players who never met.
static void pair_totals(const RatingTable *t, int i, int j, double *n, double *s)
{
    double g = (double)(t->wins[i][j] + t->wins[j][i] + t->draws[i][j]);
    *n = g > 0 ? g + RATING_PRIOR_DRAWS : 0;
    *s = g > 0 ? t->wins[i][j] + 0.5 * t->draws[i][j] + 0.5 * RATING_PRIOR_DRAWS : 0;
}

/// Marks in linked[] every player reached from `from` through pairs that met (a depth-first
/// search). Two groups without games between them have no common scale.
static void link_from(const RatingTable *t, int from, bool *linked)
{
    int k = t->players, stack[RATING_MAX_PLAYERS], top = 0;
    memset(linked, 0, sizeof *linked * RATING_MAX_PLAYERS);
    linked[from] = true;
    stack[top++] = from;
    while (top) {
        int i = stack[--top];
        for (int j = 0; j < k; j++) {
            double n, s;
            pair_totals(t, i, j, &n, &s);
            if (j != i && n > 0 && !linked[j]) {
                linked[j] = true;
                stack[top++] = j;
            }
        }
    }
}

/// reach[i][j]: a chain i > x > ... > j in which each scored a point (a win or a draw) against
/// the next, in real games (the prior's draws do not count). The maximum likelihood puts i and
/// j at a finite distance exactly when each reaches the other (Zermelo, Ford 1957); the prior
/// then only keeps the fit's arithmetic finite.
static void scored_closure(const RatingTable *t, bool reach[RATING_MAX_PLAYERS][RATING_MAX_PLAYERS])
{
    int k = t->players;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
            reach[i][j] = i == j || t->wins[i][j] + t->draws[i][j] > 0;
    for (int x = 0; x < k; x++) // Warshall's transitive closure: k is 16 at most
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++)
                reach[i][j] = reach[i][j] || (reach[i][x] && reach[x][j]);
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

const char *rating_kind_name(RatingKind k)
{
    static const char *const names[RATING_KIND_NB] = {"rated", "above", "below", "unbounded",
                                                      "not connected"};
    return k >= 0 && k < RATING_KIND_NB ? names[k] : "?";
}

bool rating_fit(const RatingTable *t, int anchor, RatingResult *out)
{
    const int k = t->players;
    memset(out, 0, sizeof *out);
    if (anchor < 0 || anchor >= k)
        anchor = 0;
    out->anchor = anchor;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) {
            uint64_t g = t->wins[i][j] + t->wins[j][i] + t->draws[i][j];
            if (i != j) {
                out->games[i] += g;
                out->points[i] += t->wins[i][j] + 0.5 * t->draws[i][j];
            }
        }
    bool linked[RATING_MAX_PLAYERS];
    int member[RATING_MAX_PLAYERS], m = 0; // the anchor's group, in the players' order
    if (k == 0)
        return false;
    link_from(t, anchor, linked);
    out->connected = true;
    for (int i = 0; i < k; i++) {
        out->kind[i] = linked[i] ? RATING_FINITE : RATING_UNLINKED;
        out->connected = out->connected && linked[i];
        if (linked[i])
            member[m++] = i;
    }
    if (m < 2)
        return false;
    // MM iterations on the strengths gamma (Hunter 2004): gamma_i = W_i / sum n_ij/(g_i+g_j),
    // over the anchor's group only (its members met no one outside it).
    double g[RATING_MAX_PLAYERS];
    for (int i = 0; i < k; i++)
        g[i] = 1;
    // Each MM step raises the likelihood (Hunter 2004), so on a connected table the iteration
    // converges; 10,000 steps is a bound for pathological tables, not a tuning.
    for (out->iterations = 0; out->iterations < 10000; out->iterations++) {
        double next[RATING_MAX_PLAYERS], change = 0;
        for (int a = 0; a < m; a++) {
            int i = member[a];
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
        }
        // The likelihood only sees ratios of strengths: fixing the anchor's at 1 each step makes
        // the change measured next a real change, not a drift of all strengths together.
        double base = next[anchor];
        for (int a = 0; a < m; a++) {
            int i = member[a];
            next[i] /= base;
            change = fmax(change, fabs(log(next[i] / g[i])));
            g[i] = next[i];
        }
        // The largest change in log-strength, i.e. under 2e-8 Elo.
        if (change < 1e-10)
            break;
    }
    const double scale = 400 / log(10);
    for (int a = 0; a < m; a++)
        out->elo[member[a]] = scale * log(g[member[a]]);
    // Fisher information in log-strength over the group: a weighted graph Laplacian L. L has the
    // all-ones vector as its null space (the group is connected: no other), so L + J/m is
    // invertible, and its inverse M gives the variance of a difference of ratings:
    // var(x_i - x_a) = M_ii + M_aa - 2 M_ia (the J/m terms cancel in a difference).
    double mat[RATING_MAX_PLAYERS][RATING_MAX_PLAYERS] = {{0}};
    for (int a = 0; a < m; a++)
        for (int b = 0; b < m; b++) {
            double n, s;
            pair_totals(t, member[a], member[b], &n, &s);
            mat[a][b] += 1.0 / m;
            if (a == b || n == 0)
                continue;
            // p: the model's chance that a beats b; each of their n games adds p (1 - p).
            double p = g[member[a]] / (g[member[a]] + g[member[b]]), v = n * p * (1 - p);
            mat[a][b] -= v;
            mat[a][a] += v;
        }
    if (!invert(mat, m))
        return false;
    int x = 0; // the anchor's place in member[]
    while (member[x] != anchor)
        x++;
    bool reach[RATING_MAX_PLAYERS][RATING_MAX_PLAYERS];
    scored_closure(t, reach);
    for (int a = 0; a < m; a++) {
        int i = member[a];
        double var = mat[a][a] + mat[x][x] - 2 * mat[a][x];
        // Half-width of the 95% interval: z(0.975) sd, from log-strength to Elo.
        out->elo_error[i] = i != anchor && var > 0 ? 1.959964 * sqrt(var) * scale : 0;
        bool up = reach[i][anchor], down = reach[anchor][i];
        out->kind[i] = up && down ? RATING_FINITE
                       : up       ? RATING_ABOVE
                       : down     ? RATING_BELOW
                                  : RATING_UNBOUNDED;
    }
    return true;
}
