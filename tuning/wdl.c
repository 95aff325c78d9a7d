// SPDX-License-Identifier: MIT
// The WDL model: material, samples from games, the maximum-likelihood fit, the model file.
#include "wdl.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "movegen.h"
#include "files.h"

enum { PARAM_NB = 2 * WDL_COEF_NB, FIT_ITER_MAX = 400 };

const char *wdl_strerror(WdlStatus st)
{
    static const char *const text[] = {
        [WDL_OK] = "ok",
        [WDL_ERR_NOMEM] = "out of memory",
        [WDL_ERR_GAME] = "a game that does not replay",
        [WDL_ERR_FEW] = "too few samples",
        [WDL_ERR_FIT] = "the fit found no model",
        [WDL_ERR_IO] = "I/O error",
        [WDL_ERR_FORMAT] = "not a WDL model",
        [WDL_ERR_ARGUMENT] = "bad argument",
    };
    return (unsigned)st < sizeof text / sizeof *text ? text[st] : "unknown status";
}

/// Material weights by piece type: soldier 1, advisor 2, elephant 2, horse 4, cannon 4,
/// chariot 9 (the general counts 0). Both sides at the start: 2 x 47 = 94.
static const int piece_weight[PIECE_TYPE_NB] = {
    [ADVISOR] = 2, [ELEPHANT] = 2, [HORSE] = 4, [CHARIOT] = 9, [CANNON] = 4, [SOLDIER] = 1,
};

int wdl_material(const Board *b)
{
    int total = 0;
    for (int c = RED; c < COLOR_NB; c++)
        for (int t = ADVISOR; t < PIECE_TYPE_NB; t++)
            total += piece_weight[t] * bb_count(b->pieces[c][t]);
    return total;
}

int wdl_material_fen(const char *fen)
{
    static const char letters[] = "kabnrcp";
    static const PieceType types[] = {KING, ADVISOR, ELEPHANT, HORSE, CHARIOT, CANNON, SOLDIER};
    int total = 0;
    for (const char *p = fen; *p && *p != ' '; p++) {
        if ((*p >= '0' && *p <= '9') || *p == '/')
            continue;
        char c = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
        // Pikafish's letters, and the h/e some FENs use for horse and elephant.
        c = c == 'h' ? 'n' : c == 'e' ? 'b' : c;
        const char *at = strchr(letters, c);
        if (!at || !c)
            return -1;
        total += piece_weight[types[at - letters]];
    }
    return total;
}

void wdl_samples_init(WdlSamples *s) { memset(s, 0, sizeof *s); }

void wdl_samples_destroy(WdlSamples *s)
{
    free(s->items);
    memset(s, 0, sizeof *s);
}

WdlStatus wdl_samples_add(WdlSamples *s, int score, int material, int result)
{
    if (score < -WDL_SCORE_MAX || score > WDL_SCORE_MAX || material < 0 ||
        material > WDL_MATERIAL_FULL || result < -1 || result > 1)
        return WDL_ERR_ARGUMENT;
    if (s->count == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4096;
        WdlSample *p = realloc(s->items, cap * sizeof *p);
        if (!p)
            return WDL_ERR_NOMEM;
        s->items = p;
        s->cap = cap;
    }
    s->items[s->count++] = (WdlSample){(int16_t)score, (uint8_t)material, (int8_t)result};
    return WDL_OK;
}

/// Whether m is one of the legal moves of b.
static bool is_legal(const Board *b, Move m)
{
    MoveList list;
    movegen_legal(b, &list);
    for (int i = 0; i < list.count; i++)
        if (list.moves[i] == m)
            return true;
    return false;
}

WdlStatus wdl_samples_add_game(WdlSamples *s, const char *start_fen, const WdlMove *moves, int n,
                               int red_result, char *why, size_t why_len)
{
    if (n > BOARD_HISTORY_MAX) {
        snprintf(why, why_len, "%d plies: more than %d", n, BOARD_HISTORY_MAX);
        return WDL_ERR_GAME;
    }
    Board *b = malloc(sizeof *b);
    if (!b)
        return WDL_ERR_NOMEM;
    char fwhy[128] = "";
    WdlStatus st = WDL_OK;
    if (board_set_fen(b, start_fen, fwhy, sizeof fwhy) != FEN_OK) {
        snprintf(why, why_len, "start position: %s", fwhy);
        st = WDL_ERR_GAME;
    }
    size_t before = s->count;
    for (int i = 0; i < n && st == WDL_OK; i++) {
        if (!is_legal(b, moves[i].move)) {
            snprintf(why, why_len, "ply %d: an illegal move", i + 1);
            st = WDL_ERR_GAME;
            break;
        }
        int score = moves[i].score;
        if (moves[i].scored && score >= -WDL_SCORE_MAX && score <= WDL_SCORE_MAX) {
            int result = b->side == RED ? red_result : -red_result;
            st = wdl_samples_add(s, score, wdl_material(b), result);
        }
        board_make_move(b, moves[i].move);
    }
    free(b);
    if (st != WDL_OK)
        s->count = before; // a game adds all its samples or none
    else if (s->count > before)
        s->games++;
    return st;
}

/// m of a material: clamped to the model's range, then over the start position's material.
static double norm_material(const WdlModel *m, int material)
{
    int lo = m->material_min, hi = m->material_max;
    int v = material < lo ? lo : material > hi ? hi : material;
    return v / (double)WDL_MATERIAL_FULL;
}

/// c[0] x^d + ... + c[d] by Horner's rule, as Stockfish's poly3.
static double poly(const double *c, int degree, double x)
{
    double v = 0;
    for (int k = 0; k <= degree; k++)
        v = v * x + c[k];
    return v;
}

double wdl_a(const WdlModel *m, int material)
{
    return poly(m->a, m->degree, norm_material(m, material));
}

double wdl_b(const WdlModel *m, int material)
{
    return poly(m->b, m->degree, norm_material(m, material));
}

/// 1 / (1 + exp(-z)) without overflow.
static double logistic(double z)
{
    if (z >= 0)
        return 1 / (1 + exp(-z));
    double e = exp(z);
    return e / (1 + e);
}

/// log(1 / (1 + exp(-z))) without overflow or loss to 0.
static double log_logistic(double z) { return z >= 0 ? -log1p(exp(-z)) : z - log1p(exp(z)); }

/// The draw probability from |s|: 1 - W - L written as logistic(-x) - logistic(y), where with
/// s >= 0 the second term is at most 1/2, so no two numbers near 1 are subtracted.
static double draw_prob(double s, double a, double b)
{
    s = fabs(s);
    return logistic((a - s) / b) - logistic((-s - a) / b);
}

void wdl_eval(const WdlModel *m, double score, int material, double *w, double *d, double *l)
{
    double a = wdl_a(m, material), b = wdl_b(m, material);
    // Outside the model's domain (a or b not positive) no draw is possible: the nearest
    // valid model is a step at score 0.
    bool ok = a > 0 && b > 0;
    double win = ok ? logistic((score - a) / b) : score > 0 ? 1 : score < 0 ? 0 : 0.5;
    double loss = ok ? logistic((-score - a) / b) : 1 - win;
    if (w)
        *w = win;
    if (l)
        *l = loss;
    if (d)
        *d = ok ? draw_prob(score, a, b) : 0;
}

double wdl_draw_rate(const WdlModel *m, double score, int material)
{
    double d;
    wdl_eval(m, score, material, NULL, &d, NULL);
    return d;
}

/// log p(result | s, a, b), -INFINITY outside the domain.
static double sample_log_prob(double s, int result, double a, double b)
{
    if (!(a > 0 && b > 0))
        return -INFINITY;
    if (result > 0)
        return log_logistic((s - a) / b);
    if (result < 0)
        return log_logistic((-s - a) / b);
    double p = draw_prob(s, a, b);
    return p > 0 ? log(p) : -INFINITY;
}

double wdl_log_likelihood(const WdlModel *m, const WdlSamples *s)
{
    double ll = 0;
    for (size_t i = 0; i < s->count; i++) {
        const WdlSample *x = &s->items[i];
        ll += sample_log_prob(x->score, x->result, wdl_a(m, x->material), wdl_b(m, x->material));
        if (ll == -INFINITY)
            break;
    }
    return ll;
}

/// First and second derivatives of log p with respect to (A, B) for one sample:
/// g[0] = d/dA, g[1] = d/dB; h[0] = d2/dA2, h[1] = d2/dAdB, h[2] = d2/dB2.
/// With x = (s - A)/B: x_A = -1/B, x_B = -x/B, x_AB = 1/B^2, x_BB = 2x/B^2 (x_AA = 0).
static void sample_derivatives(double s, int result, double A, double B, double g[2], double h[3])
{
    if (result != 0) {
        // A win is log logistic(x) at x = (s-A)/B, a loss the same at x = (-s-A)/B.
        double x = (result > 0 ? s - A : -s - A) / B;
        double f1 = logistic(-x), f2 = -logistic(x) * logistic(-x);
        double xa = -1 / B, xb = -x / B, xab = 1 / (B * B), xbb = 2 * x / (B * B);
        g[0] = f1 * xa;
        g[1] = f1 * xb;
        h[0] = f2 * xa * xa;
        h[1] = f2 * xa * xb + f1 * xab;
        h[2] = f2 * xb * xb + f1 * xbb;
        return;
    }
    // A draw: p = 1 - logistic(x) - logistic(y), y = (-s-A)/B; symmetric in s, so |s|.
    s = fabs(s);
    double p = draw_prob(s, A, B);
    double pa = 0, pb = 0, paa = 0, pab = 0, pbb = 0;
    for (int k = 0; k < 2; k++) {
        double x = (k == 0 ? s - A : -s - A) / B;
        double sg = logistic(x), d1 = sg * logistic(-x), d2 = d1 * (1 - 2 * sg);
        double xa = -1 / B, xb = -x / B, xab = 1 / (B * B), xbb = 2 * x / (B * B);
        pa -= d1 * xa;
        pb -= d1 * xb;
        paa -= d2 * xa * xa;
        pab -= d2 * xa * xb + d1 * xab;
        pbb -= d2 * xb * xb + d1 * xbb;
    }
    g[0] = pa / p;
    g[1] = pb / p;
    h[0] = paa / p - g[0] * g[0];
    h[1] = pab / p - g[0] * g[1];
    h[2] = pbb / p - g[1] * g[1];
}

/// The parameter vector: a's coefficients then b's, each highest power first.
static void model_from(WdlModel *m, int degree, const double *theta)
{
    m->degree = degree;
    for (int k = 0; k <= degree; k++) {
        m->a[k] = theta[k];
        m->b[k] = theta[degree + 1 + k];
    }
}

/// Gradient and Hessian of the log-likelihood in theta: a(m) and b(m) are linear in their
/// coefficients, so each sample's 2x2 (A, B) derivatives spread over the powers of m.
static void ll_derivatives(const WdlModel *m, const WdlSamples *s, double *grad, double *hess)
{
    int n = m->degree + 1, P = 2 * n;
    memset(grad, 0, (size_t)P * sizeof *grad);
    memset(hess, 0, (size_t)P * P * sizeof *hess);
    for (size_t i = 0; i < s->count; i++) {
        const WdlSample *x = &s->items[i];
        double mm = norm_material(m, x->material), phi[WDL_COEF_NB];
        phi[n - 1] = 1; // powers of m, highest first as the coefficients
        for (int k = n - 2; k >= 0; k--)
            phi[k] = phi[k + 1] * mm;
        double g[2], h[3];
        sample_derivatives(x->score, x->result, poly(m->a, m->degree, mm),
                           poly(m->b, m->degree, mm), g, h);
        for (int r = 0; r < n; r++) {
            grad[r] += g[0] * phi[r];
            grad[n + r] += g[1] * phi[r];
            for (int c = 0; c < n; c++) {
                double pp = phi[r] * phi[c];
                hess[r * P + c] += h[0] * pp;
                hess[r * P + n + c] += h[1] * pp;
                hess[(n + r) * P + c] += h[1] * pp;
                hess[(n + r) * P + n + c] += h[2] * pp;
            }
        }
    }
}

/// Solves M x = r for a symmetric positive definite M (P x P) by Cholesky; false when M is not
/// positive definite.
static bool solve_spd(const double *M, const double *r, double *x, int P)
{
    double L[PARAM_NB * PARAM_NB] = {0}, y[PARAM_NB];
    for (int i = 0; i < P; i++)
        for (int j = 0; j <= i; j++) {
            double v = M[i * P + j];
            for (int k = 0; k < j; k++)
                v -= L[i * P + k] * L[j * P + k];
            if (i == j) {
                if (!(v > 0))
                    return false;
                L[i * P + i] = sqrt(v);
            } else
                L[i * P + j] = v / L[j * P + j];
        }
    for (int i = 0; i < P; i++) {
        double v = r[i];
        for (int k = 0; k < i; k++)
            v -= L[i * P + k] * y[k];
        y[i] = v / L[i * P + i];
    }
    for (int i = P - 1; i >= 0; i--) {
        double v = y[i];
        for (int k = i + 1; k < P; k++)
            v -= L[k * P + i] * x[k];
        x[i] = v / L[i * P + i];
    }
    return true;
}

/// Levenberg-Marquardt on the negative log-likelihood from the model in *m (which must be
/// feasible): Newton steps on -H + lambda diag(-H), lambda shrunk after a step that raises the
/// likelihood and grown after one that does not (an infeasible step has likelihood -inf).
static void fit_degree(WdlModel *m, const WdlSamples *s)
{
    int n = m->degree + 1, P = 2 * n;
    double theta[PARAM_NB], grad[PARAM_NB], hess[PARAM_NB * PARAM_NB], M[PARAM_NB * PARAM_NB];
    double ll = wdl_log_likelihood(m, s), lambda = 1e-3;
    for (int k = 0; k < n; k++) {
        theta[k] = m->a[k];
        theta[n + k] = m->b[k];
    }
    for (int iter = 0, fails = 0; iter < FIT_ITER_MAX && fails < 40; iter++) {
        ll_derivatives(m, s, grad, hess);
        double step[PARAM_NB], trial[PARAM_NB];
        for (int i = 0; i < P * P; i++)
            M[i] = -hess[i];
        for (int i = 0; i < P; i++)
            M[i * P + i] += lambda * (fabs(hess[i * P + i]) + 1e-12);
        if (!solve_spd(M, grad, step, P)) {
            lambda *= 10;
            fails++;
            continue;
        }
        for (int i = 0; i < P; i++)
            trial[i] = theta[i] + step[i];
        WdlModel t = *m;
        model_from(&t, m->degree, trial);
        double tll = wdl_log_likelihood(&t, s);
        if (tll > ll) {
            bool done = tll - ll < 1e-10 * (1 + fabs(ll));
            *m = t;
            memcpy(theta, trial, sizeof trial);
            ll = tll;
            lambda = lambda / 10 > 1e-9 ? lambda / 10 : 1e-9;
            fails = 0;
            if (done)
                break;
        } else {
            lambda *= 10;
            fails++;
        }
    }
    m->log_likelihood = ll;
}

/// Checks the samples can determine a model of that degree; why says what is missing.
static WdlStatus check_samples(const WdlSamples *s, int degree, char *why, size_t why_len)
{
    uint64_t draws = 0, decisive = 0;
    bool seen[WDL_MATERIAL_FULL + 1] = {0};
    int distinct = 0;
    for (size_t i = 0; i < s->count; i++) {
        draws += s->items[i].result == 0;
        decisive += s->items[i].result != 0;
        distinct += !seen[s->items[i].material];
        seen[s->items[i].material] = true;
    }
    if (s->count < WDL_MIN_SAMPLES) {
        snprintf(why, why_len, "%zu samples: a fit needs at least %d", s->count, WDL_MIN_SAMPLES);
        return WDL_ERR_FEW;
    }
    if (!draws || !decisive) {
        snprintf(why, why_len, "%zu samples, all %s: a fit needs both draws and decided games",
                 s->count, draws ? "drawn" : "decided");
        return WDL_ERR_FEW;
    }
    if (distinct <= degree) {
        snprintf(why, why_len,
                 "%d distinct material value%s: a degree-%d model needs at least %d (try "
                 "--degree %d)",
                 distinct, distinct == 1 ? "" : "s", degree, degree + 1, distinct - 1);
        return WDL_ERR_FEW;
    }
    return WDL_OK;
}

WdlStatus wdl_fit(const WdlSamples *s, int degree, WdlModel *out, char *why, size_t why_len)
{
    if (degree < 0 || degree > WDL_DEGREE_MAX) {
        snprintf(why, why_len, "degree %d: 0..%d", degree, WDL_DEGREE_MAX);
        return WDL_ERR_ARGUMENT;
    }
    WdlStatus st = check_samples(s, degree, why, why_len);
    if (st)
        return st;
    WdlModel m = {.material_min = WDL_MATERIAL_FULL, .material_max = 0};
    double abs_sum = 0;
    for (size_t i = 0; i < s->count; i++) {
        int mat = s->items[i].material;
        m.material_min = mat < m.material_min ? mat : m.material_min;
        m.material_max = mat > m.material_max ? mat : m.material_max;
        abs_sum += abs(s->items[i].score);
    }
    // A constant start that is always feasible (a, b > 0) and of the data's scale; each
    // degree then starts from the fit of the one below, its new highest power at 0.
    double scale = abs_sum / (double)s->count;
    m.a[0] = m.b[0] = scale > 10 ? scale : 10;
    for (int d = 0; d <= degree; d++) {
        if (d > 0) {
            memmove(m.a + 1, m.a, (size_t)d * sizeof *m.a);
            memmove(m.b + 1, m.b, (size_t)d * sizeof *m.b);
            m.a[0] = m.b[0] = 0;
        }
        m.degree = d;
        fit_degree(&m, s);
    }
    if (!isfinite(m.log_likelihood)) {
        snprintf(why, why_len, "no feasible model (a and b positive) for these samples");
        return WDL_ERR_FIT;
    }
    m.samples = s->count;
    *out = m;
    return WDL_OK;
}

void wdl_calibrate(const WdlModel *m, const WdlSamples *s, WdlBucket out[WDL_BUCKET_NB])
{
    static const int edge[WDL_BUCKET_NB + 1] = {0, 25, 50, 100, 150, 250, 400, WDL_SCORE_MAX + 1};
    for (int k = 0; k < WDL_BUCKET_NB; k++)
        out[k] = (WdlBucket){.lo = edge[k], .hi = edge[k + 1]};
    for (size_t i = 0; i < s->count; i++) {
        const WdlSample *x = &s->items[i];
        int score = x->score < 0 ? -x->score : x->score;
        int result = x->score < 0 ? -x->result : x->result;
        int k = 0;
        while (score >= edge[k + 1])
            k++;
        double w, d;
        wdl_eval(m, score, x->material, &w, &d, NULL);
        out[k].n++;
        out[k].draw_seen += result == 0;
        out[k].win_seen += result > 0;
        out[k].draw_model += d;
        out[k].win_model += w;
    }
    for (int k = 0; k < WDL_BUCKET_NB; k++)
        if (out[k].n) {
            out[k].draw_seen /= (double)out[k].n;
            out[k].win_seen /= (double)out[k].n;
            out[k].draw_model /= (double)out[k].n;
            out[k].win_model /= (double)out[k].n;
        }
}

static json_t *coef_array(const double *c, int degree)
{
    json_t *a = json_array();
    for (int k = 0; k <= degree; k++)
        json_array_append_new(a, json_real(c[k]));
    return a;
}

WdlStatus wdl_save(const WdlModel *m, const WdlSource *src, int nsrc, const WdlBucket *cal,
                   const char *path, char *why, size_t why_len)
{
    json_t *o = json_object(), *sources = json_array();
    json_object_set_new(o, "schema", json_integer(1));
    json_object_set_new(o, "kind", json_string("wdl_model"));
    json_object_set_new(
        o, "form",
        json_string("W = 1/(1+exp((a(m)-s)/b(m))), L = W at -s, D = 1-W-L; s cp from the "
                    "mover's view; m = clamp(material, material_min, material_max)/94; a(m) = "
                    "a[0] m^degree + ... + a[degree] (highest power first, as Stockfish's as[])"));
    json_object_set_new(o, "material",
                        json_string("soldier 1, advisor 2, elephant 2, horse 4, cannon 4, "
                                    "chariot 9, both sides (94 at the start)"));
    json_object_set_new(o, "degree", json_integer(m->degree));
    json_object_set_new(o, "a", coef_array(m->a, m->degree));
    json_object_set_new(o, "b", coef_array(m->b, m->degree));
    json_object_set_new(o, "material_min", json_integer(m->material_min));
    json_object_set_new(o, "material_max", json_integer(m->material_max));
    json_object_set_new(o, "samples", json_integer((json_int_t)m->samples));
    json_object_set_new(o, "log_likelihood", json_real(m->log_likelihood));
    json_object_set_new(o, "score_max", json_integer(WDL_SCORE_MAX));
    for (int i = 0; i < nsrc; i++)
        json_array_append_new(sources, json_pack("{s:s, s:s, s:s, s:I, s:I}", "run", src[i].run,
                                                 "journal_hash", src[i].hash, "run_id",
                                                 src[i].run_id, "games", (json_int_t)src[i].games,
                                                 "samples", (json_int_t)src[i].samples));
    json_object_set_new(o, "sources", sources);
    if (cal) {
        json_t *rows = json_array();
        for (int k = 0; k < WDL_BUCKET_NB; k++)
            json_array_append_new(
                rows, json_pack("{s:i, s:i, s:I, s:f, s:f, s:f, s:f}", "score_from", cal[k].lo,
                                "score_to", cal[k].hi - 1, "samples", (json_int_t)cal[k].n,
                                "draw_seen", cal[k].draw_seen, "draw_model", cal[k].draw_model,
                                "win_seen", cal[k].win_seen, "win_model", cal[k].win_model));
        json_object_set_new(o, "calibration", rows);
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%.4000s.tmp", path);
    int rc = json_dump_file(o, tmp, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(o);
    if (rc != 0 || rename(tmp, path) != 0) {
        snprintf(why, why_len, "%s: %s", path, strerror(errno));
        remove(tmp);
        return WDL_ERR_IO;
    }
    return WDL_OK;
}

/// Reads a coefficient array of degree + 1 finite numbers.
static bool read_coefs(json_t *o, const char *key, int degree, double *c, char *why, size_t why_len)
{
    json_t *a = json_object_get(o, key);
    if (!json_is_array(a) || json_array_size(a) != (size_t)degree + 1) {
        snprintf(why, why_len, "\"%s\" is not an array of degree+1 = %d numbers", key, degree + 1);
        return false;
    }
    for (int k = 0; k <= degree; k++) {
        json_t *v = json_array_get(a, (size_t)k);
        if (!json_is_number(v) || !isfinite(json_number_value(v))) {
            snprintf(why, why_len, "\"%s\"[%d] is not a finite number", key, k);
            return false;
        }
        c[k] = json_number_value(v);
    }
    return true;
}

/// An integer field in lo..hi.
static bool read_int(json_t *o, const char *key, long lo, long hi, long *out, char *why,
                     size_t why_len)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        snprintf(why, why_len, "\"%s\" is not an integer in %ld..%ld", key, lo, hi);
        return false;
    }
    *out = (long)json_integer_value(v);
    return true;
}

WdlStatus wdl_load(WdlModel *m, const char *path, char *why, size_t why_len)
{
    json_error_t err;
    json_t *o = json_load_file(path, 0, &err);
    if (!o) {
        FILE *f = files_open_regular(path);
        if (!f) {
            snprintf(why, why_len, "%s: %s", path, strerror(errno));
            return WDL_ERR_IO;
        }
        fclose(f);
        snprintf(why, why_len, "%s: not JSON (line %d: %s)", path, err.line, err.text);
        return WDL_ERR_FORMAT;
    }
    memset(m, 0, sizeof *m);
    char fwhy[160] = "";
    long degree = 0, lo = 0, hi = 0, schema = 0;
    json_t *kind = json_object_get(o, "kind");
    bool ok = json_is_object(o);
    if (!ok || !json_is_string(kind) || strcmp(json_string_value(kind), "wdl_model") != 0) {
        snprintf(fwhy, sizeof fwhy, "\"kind\" is not \"wdl_model\"");
        ok = false;
    }
    ok = ok && read_int(o, "schema", 1, 1, &schema, fwhy, sizeof fwhy) &&
         read_int(o, "degree", 0, WDL_DEGREE_MAX, &degree, fwhy, sizeof fwhy) &&
         read_coefs(o, "a", (int)degree, m->a, fwhy, sizeof fwhy) &&
         read_coefs(o, "b", (int)degree, m->b, fwhy, sizeof fwhy) &&
         read_int(o, "material_min", 0, WDL_MATERIAL_FULL, &lo, fwhy, sizeof fwhy) &&
         read_int(o, "material_max", lo, WDL_MATERIAL_FULL, &hi, fwhy, sizeof fwhy);
    json_t *samples = json_object_get(o, "samples"), *ll = json_object_get(o, "log_likelihood");
    m->degree = (int)degree;
    m->material_min = (int)lo;
    m->material_max = (int)hi;
    m->samples = json_is_integer(samples) ? (uint64_t)json_integer_value(samples) : 0;
    m->log_likelihood = json_is_number(ll) ? json_number_value(ll) : 0;
    json_decref(o);
    if (!ok) {
        snprintf(why, why_len, "%s: %s", path, fwhy);
        return WDL_ERR_FORMAT;
    }
    return WDL_OK;
}
