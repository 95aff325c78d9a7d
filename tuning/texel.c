// SPDX-License-Identifier: MIT
// The Texel fit (texel.h): the loss and its gradient summed over threads and ranks, K, and
// Adam over the epochs with checkpoints (tuning/fitrun.h). The datasets are texel_data.c's.
#include "texel.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval.h"
#include "files.h"
#include "fitrun.h"
#include "texel_impl.h"
#include "why.h"

const char *texel_strerror(TexelStatus st)
{
    static const char *const text[TEXEL_STATUS_NB] = {"ok",
                                                      "cannot read or write the file",
                                                      "not a dataset",
                                                      "dataset of another version",
                                                      "truncated dataset",
                                                      "bad position in the dataset",
                                                      "out of memory",
                                                      "another rank failed",
                                                      "bad settings",
                                                      "damaged dataset (checksum mismatch)",
                                                      "checkpoint of other inputs",
                                                      "stopped after a checkpoint"};
    return (unsigned)st < TEXEL_STATUS_NB ? text[st] : "unknown Texel status";
}

// ---- Evaluation from a trace ---------------------------------------------------------------

// Whether each weight is a midgame term. A trace keeps only coefficients; the position's
// phase decides how much the midgame and endgame halves count (the evaluation's taper). Filled
// once, whichever thread gets here first.
static bool is_mg[PARAM_NB];
static pthread_once_t mg_once = PTHREAD_ONCE_INIT;

static void mg_init(void)
{
    for (int id = 0; id < PARAM_NB; id++)
        is_mg[id] = eval_param_is_mg(id);
}

int texel_set_eval(const TexelSet *s, uint64_t i, const Weights *w)
{
    pthread_once(&mg_once, mg_init);
    // Integers and one division, in the evaluation's own order: the result equals
    // eval_evaluate bit for bit, which the dataset's sampled check relies on.
    int mg = 0, eg = 0, p = s->phase[i];
    for (uint64_t k = s->start[i]; k < s->start[i + 1]; k++) {
        const Term *t = &s->terms[k];
        if (is_mg[t->id])
            mg += t->coef * w->v[t->id];
        else
            eg += t->coef * w->v[t->id];
    }
    return (mg * p + eg * (EVAL_PHASE_MAX - p)) / EVAL_PHASE_MAX;
}

// ---- Loss and gradient ---------------------------------------------------------------------

enum { SUM_LOSS = PARAM_NB, SUM_COUNT, SUM_NB }; // layout of a reduced sum buffer

/// One thread's slice of positions [from, to) and its sums.
typedef struct {
    const TexelSet *s;
    const double *w;
    double k;
    uint64_t from, to;
    bool want_grad;
    const uint8_t *held; // NULL: every position; else only those with held[i] == want
    uint8_t want;
    double sum[SUM_NB];
} GradJob;

/// The slice's squared errors and, with want_grad, d loss / d w: for e the evaluation,
/// sig = 1 / (1 + 10^(-K e / 400)) = 1 / (1 + exp(-scale e)), and each term moves e by its
/// coefficient times its phase share. Real-valued weights, unlike texel_set_eval: Adam moves
/// them by fractions of a centipawn.
static void *grad_thread(void *arg)
{
    GradJob *j = arg;
    const TexelSet *s = j->s;
    const double *w = j->w, scale = j->k * M_LN10 / 400.0;
    memset(j->sum, 0, sizeof j->sum);
    uint64_t count = 0;
    for (uint64_t i = j->from; i < j->to; i++) {
        if (j->held && j->held[i] != j->want)
            continue;
        count++;
        double mg = 0, eg = 0, p = s->phase[i] / (double)EVAL_PHASE_MAX;
        const Term *t = s->terms + s->start[i], *end = s->terms + s->start[i + 1];
        for (const Term *q = t; q < end; q++)
            if (is_mg[q->id])
                mg += q->coef * w[q->id];
            else
                eg += q->coef * w[q->id];
        double e = mg * p + eg * (1 - p);
        double sig = 1 / (1 + exp(-scale * e)), err = sig - s->result[i] / 2.0;
        j->sum[SUM_LOSS] += err * err;
        if (!j->want_grad)
            continue;
        double d = 2 * err * sig * (1 - sig) * scale;
        for (const Term *q = t; q < end; q++)
            j->sum[q->id] += d * q->coef * (is_mg[q->id] ? p : 1 - p);
    }
    j->sum[SUM_COUNT] = (double)count;
    return NULL;
}

/// Sums over this rank's positions on x->threads threads, then over all ranks. The slices are
/// fixed by the thread count and added in thread order, then in rank order by the reduce: the
/// same inputs give the same bits, which an exact resume needs.
/// held/want: the positions summed (held NULL: all); a sum over none is TEXEL_ERR_CONFIG.
static TexelStatus sums(const TexelSet *s, const double *w, double k, const TexelExec *x,
                        bool want_grad, const uint8_t *held, uint8_t want, double *out)
{
    pthread_once(&mg_once, mg_init);
    int threads = x && x->threads > 0 ? (x->threads > 256 ? 256 : x->threads) : 1;
    GradJob *jobs = calloc((size_t)threads, sizeof *jobs);
    if (!jobs)
        return TEXEL_ERR_NOMEM;
    pthread_t tid[256];
    bool started[256] = {false};
    for (int t = 0; t < threads; t++) {
        jobs[t] = (GradJob){s,
                            w,
                            k,
                            s->n * (uint64_t)t / (uint64_t)threads,
                            s->n * (uint64_t)(t + 1) / (uint64_t)threads,
                            want_grad,
                            held,
                            want,
                            {0}};
        started[t] = t > 0 && pthread_create(&tid[t], NULL, grad_thread, &jobs[t]) == 0;
    }
    // The calling thread takes the first slice (and any whose thread did not start) while
    // the others run.
    for (int t = 0; t < threads; t++)
        if (!started[t])
            grad_thread(&jobs[t]);
    memset(out, 0, sizeof(double) * SUM_NB);
    for (int t = 0; t < threads; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        for (int i = 0; i < SUM_NB; i++)
            out[i] += jobs[t].sum[i];
    }
    free(jobs);
    if (x && x->reduce && !x->reduce(x->ctx, out, SUM_NB))
        return TEXEL_ERR_REDUCE;
    return out[SUM_COUNT] > 0 ? TEXEL_OK : TEXEL_ERR_CONFIG;
}

/// The mean loss over the positions with held[i] == want (held NULL: all).
static TexelStatus loss_of(const TexelSet *s, const double *w, double k, const TexelExec *x,
                           const uint8_t *held, uint8_t want, double *loss)
{
    double sum[SUM_NB];
    TexelStatus st = sums(s, w, k, x, false, held, want, sum);
    if (st == TEXEL_OK)
        *loss = sum[SUM_LOSS] / sum[SUM_COUNT];
    return st;
}

TexelStatus texel_loss(const TexelSet *s, const double *w, double k, const TexelExec *x,
                       double *loss)
{
    return loss_of(s, w, k, x, NULL, 0, loss);
}

/// The loss and gradient over the positions with held[i] == want (held NULL: all).
static TexelStatus gradient_of(const TexelSet *s, const double *w, double k, const TexelExec *x,
                               const uint8_t *held, uint8_t want, double *loss, double *grad)
{
    double sum[SUM_NB];
    TexelStatus st = sums(s, w, k, x, true, held, want, sum);
    if (st != TEXEL_OK)
        return st;
    *loss = sum[SUM_LOSS] / sum[SUM_COUNT];
    for (int i = 0; i < PARAM_NB; i++)
        grad[i] = sum[i] / sum[SUM_COUNT];
    return TEXEL_OK;
}

TexelStatus texel_gradient(const TexelSet *s, const double *w, double k, const TexelExec *x,
                           double *loss, double *grad)
{
    return gradient_of(s, w, k, x, NULL, 0, loss, grad);
}

/// K over the positions with held[i] == 0 (held NULL: all).
static TexelStatus fit_k(const TexelSet *s, const double *w, const TexelExec *x,
                         const uint8_t *held, double *k)
{
    // Golden-section search: the loss is unimodal in K for a fixed evaluation.
    const double g = (sqrt(5.0) - 1) / 2;
    double a = 0.05, b = 5.0, c = b - g * (b - a), d = a + g * (b - a), fc, fd;
    TexelStatus st = loss_of(s, w, c, x, held, 0, &fc);
    if (st == TEXEL_OK)
        st = loss_of(s, w, d, x, held, 0, &fd);
    for (int it = 0; st == TEXEL_OK && it < 40; it++) {
        if (fc < fd) {
            b = d, d = c, fd = fc;
            c = b - g * (b - a);
            st = loss_of(s, w, c, x, held, 0, &fc);
        } else {
            a = c, c = d, fc = fd;
            d = a + g * (b - a);
            st = loss_of(s, w, d, x, held, 0, &fd);
        }
    }
    *k = (a + b) / 2;
    return st;
}

TexelStatus texel_fit_k(const TexelSet *s, const double *w, const TexelExec *x, double *k)
{
    return fit_k(s, w, x, NULL, k);
}

// ---- Fit -------------------------------------------------------------------------------------

// Checkpoint (tuning/fitrun.h): "XQTXCK4", CkptId, u32 PARAM_NB, FitState, no checksum (as
// the formats before it). Older ones are refused, never resumed: "XQTXCK3" kept no validation
// (its fit trained on every game, and had no best weights), "XQTXCKP" recorded no inputs.
/// All a fit needs to continue: all doubles, so it crosses the ranks' sum unchanged.
typedef struct {
    double epoch, k, loss_start; // steps done, K (held), the start's loss (for the report)
    double val_start;            // the start's validation loss (NaN: none held out)
    double best_epoch, best_val, best_loss; // the lowest validation loss so far (-1: none yet)
    double w[PARAM_NB], m[PARAM_NB], v[PARAM_NB]; // the weights and Adam's two moments
    double best_w[PARAM_NB];                      // the weights of best_epoch
} FitState;

/// What a checkpoint was made from (no padding: written as it is).
typedef struct {
    uint64_t data, start, job, tuned;
    int32_t epochs, ranks;
    double lr, l2, k, val;
} CkptId;

static CkptId ckpt_id(const TexelFitConfig *cfg)
{
    CkptId id;
    memset(&id, 0, sizeof id);
    id.data = cfg->inputs.data;
    id.start = cfg->inputs.start;
    id.job = cfg->inputs.job;
    id.tuned = files_fnv(FILES_FNV_BASIS, cfg->tuned, sizeof cfg->tuned); // only equality counts
    id.epochs = cfg->epochs;
    id.ranks = cfg->inputs.ranks;
    id.lr = cfg->lr;
    id.l2 = cfg->l2;
    id.k = cfg->k;
    id.val = cfg->val;
    return id;
}

/// The first difference between what a checkpoint was made from and now, as "made from
/// another dataset (hash X, now Y)"; false if there is none.
static bool ckpt_differs(const void *was_id, const void *now_id, char *out, size_t len)
{
    const CkptId *was = was_id, *now = now_id;
    if (was->data != now->data)
        snprintf(out, len, "made from another dataset (hash %016llx, now %016llx)",
                 (unsigned long long)was->data, (unsigned long long)now->data);
    else if (was->start != now->start)
        snprintf(out, len, "made from other start weights (hash %016llx, now %016llx)",
                 (unsigned long long)was->start, (unsigned long long)now->start);
    else if (was->tuned != now->tuned)
        snprintf(out, len, "made tuning another set of weights (params)");
    else if (was->epochs != now->epochs)
        snprintf(out, len, "made for %d epochs, now %d", was->epochs, now->epochs);
    else if (was->lr != now->lr || was->l2 != now->l2 || was->k != now->k)
        snprintf(out, len, "made with lr %g, l2 %g, k %g (0: fitted), now lr %g, l2 %g, k %g",
                 was->lr, was->l2, was->k, now->lr, now->l2, now->k);
    else if (was->val != now->val)
        snprintf(out, len, "made holding out %g of the games for validation, now %g", was->val,
                 now->val);
    else if (was->ranks != now->ranks)
        snprintf(out, len, "made on %d rank%s, now %d", was->ranks, was->ranks == 1 ? "" : "s",
                 now->ranks);
    else if (was->job != now->job)
        snprintf(out, len, "made for another job (identity %016llx, now %016llx)",
                 (unsigned long long)was->job, (unsigned long long)now->job);
    else
        return false;
    return true;
}

// fsync: a Texel checkpoint is small and seldom written, so it may as well survive power loss.
static const FitRunFormat CKPT_FORMAT = {.magic = "XQTXCK4",
                                         .old_magic = "XQTXCKP",
                                         .old_why = "no record of its inputs",
                                         .old_magic2 = "XQTXCK3",
                                         .old_why2 = "no validation games and no best weights",
                                         .name = "a Texel checkpoint",
                                         .unit = "weights",
                                         .id_size = sizeof(CkptId),
                                         .count_bytes = 4,
                                         .sync = true,
                                         .differs = ckpt_differs};

/// cfg's checkpoint with st as its payload (id: ckpt_id(cfg), kept by the caller).
static FitRunCkpt ckpt_of(const TexelFitConfig *cfg, const CkptId *id, FitState *st)
{
    return (FitRunCkpt){.fmt = &CKPT_FORMAT,
                        .path = cfg->checkpoint,
                        .fresh = cfg->fresh,
                        .id = id,
                        .count = PARAM_NB,
                        .part = {{st, sizeof *st / sizeof(double), FITRUN_DOUBLE}},
                        .parts = 1,
                        .epoch = &st->epoch,
                        .epochs = cfg->epochs};
}

/// fitrun's status as the Texel status the callers already handle.
static TexelStatus from_fitrun(FitRunStatus st)
{
    static const TexelStatus map[FITRUN_STATUS_NB] = {TEXEL_OK, TEXEL_ERR_IO, TEXEL_ERR_STALE,
                                                      TEXEL_ERR_REDUCE, TEXEL_ERR_NOMEM};
    return (unsigned)st < FITRUN_STATUS_NB ? map[st] : TEXEL_ERR_IO;
}

TexelStatus texel_checkpoint_check(const TexelFitConfig *cfg, bool *found, int *epoch, char *why,
                                   size_t why_len)
{
    *found = false;
    *epoch = 0;
    FitState *st = malloc(sizeof *st); // three weight tables: too big for a small stack
    if (!st)
        return WHY_FAIL(TEXEL_ERR_NOMEM, why, why_len, "out of memory");
    CkptId id = ckpt_id(cfg);
    FitRunCkpt c = ckpt_of(cfg, &id, st);
    TexelStatus ts = from_fitrun(fitrun_ckpt_read(&c, found, why, why_len));
    *epoch = *found ? (int)st->epoch : 0;
    free(st);
    return ts;
}

int texel_at_bounds(const Weights *w, const Weights *start, const bool *tuned, int *ids)
{
    int n = 0;
    for (int i = 0; i < PARAM_NB; i++)
        if (tuned[i] && w->v[i] != start->v[i] &&
            (w->v[i] <= params_info[i].min || w->v[i] >= params_info[i].max))
            ids[n++] = i;
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/// The checkpoint's state on every rank alike (fitrun_resume), or else the start weights: a
/// refused file may have been read in part, and out receives st's weights whatever happens.
static TexelStatus fit_resume(const TexelFitConfig *cfg, const Weights *start, const TexelExec *x,
                              FitState *st, bool *resumed, char *why, size_t why_len)
{
    CkptId id = ckpt_id(cfg);
    FitRunCkpt c = ckpt_of(cfg, &id, st);
    FitRunStatus fs =
        fitrun_resume(&c, x ? x->reduce : NULL, x ? x->ctx : NULL, resumed, why, why_len);
    if (fs != FITRUN_OK) {
        memset(st, 0, sizeof *st);
        for (int i = 0; i < PARAM_NB; i++)
            st->w[i] = start->v[i];
    }
    return from_fitrun(fs);
}

/// Whether any rank was asked to stop (the flag summed over ranks: all stop at one epoch).
static TexelStatus fit_stop(const TexelFitConfig *cfg, const TexelExec *x, bool *stop)
{
    double s = cfg->stop && atomic_load(cfg->stop) ? 1 : 0;
    if (x && x->reduce && !x->reduce(x->ctx, &s, 1))
        return TEXEL_ERR_REDUCE;
    *stop = s > 0;
    return TEXEL_OK;
}

/// One Adam step on the tuned weights from the data gradient plus the L2 pull towards the
/// start (l2 / n per (100 cp)^2), each weight clamped to its range.
static void fit_step(const TexelFitConfig *cfg, const Weights *start, double n, const double *grad,
                     FitState *st, int epoch)
{
    const double b1 = 0.9, b2 = 0.999, t = epoch + 1;
    for (int i = 0; i < PARAM_NB; i++) {
        if (!cfg->tuned[i])
            continue;
        // The pull's gradient: d/dw of l2 / n ((w - start) / 100)^2.
        double g = grad[i] + 2 * cfg->l2 * (st->w[i] - start->v[i]) / (1e4 * n);
        st->m[i] = b1 * st->m[i] + (1 - b1) * g;
        st->v[i] = b2 * st->v[i] + (1 - b2) * g * g;
        // Bias-corrected moments: the early steps are not shrunk by the moments' zero start.
        double mh = st->m[i] / (1 - pow(b1, t)), vh = st->v[i] / (1 - pow(b2, t));
        st->w[i] -= cfg->lr * mh / (sqrt(vh) + 1e-15);
        // Clamped: the engine refuses weights outside params.def's range.
        double lo = params_info[i].min, hi = params_info[i].max;
        st->w[i] = st->w[i] < lo ? lo : st->w[i] > hi ? hi : st->w[i];
    }
}

/// The validation loss of weights w: the held-out positions' (NaN when no rank holds any).
static TexelStatus fit_val(const TexelSet *s, const double *w, double k, const TexelExec *x,
                           const uint8_t *held, double *val)
{
    double sum[SUM_NB];
    TexelStatus st = sums(s, w, k, x, false, held, 1, sum);
    *val = st == TEXEL_OK ? sum[SUM_LOSS] / sum[SUM_COUNT] : NAN;
    return st == TEXEL_ERR_CONFIG ? TEXEL_OK : st; // none held out: no validation
}

/// The losses after `epoch` steps are known: the best weights so far, the CSV row, the console
/// line, the callback.
static void fit_record(const TexelFitConfig *cfg, FitState *st, int epoch, double loss, double val,
                       double per_epoch)
{
    if (!isnan(val) && (st->best_epoch < 0 || val < st->best_val)) {
        st->best_epoch = epoch;
        st->best_val = val;
        st->best_loss = loss;
        memcpy(st->best_w, st->w, sizeof st->w);
    }
    if (cfg->loss_csv && isnan(val))
        fprintf(cfg->loss_csv, "%d,%.8f,\n", epoch, loss), fflush(cfg->loss_csv);
    else if (cfg->loss_csv)
        fprintf(cfg->loss_csv, "%d,%.8f,%.8f\n", epoch, loss, val), fflush(cfg->loss_csv);
    // Every row in the file (the curve), one console line in ten (a fit runs thousands).
    if (cfg->log && epoch > 0 && (epoch % 10 == 0 || epoch == cfg->epochs)) {
        if (isnan(val))
            fprintf(cfg->log, "epoch %d/%d: loss %.6f after its step (%.3f s/epoch)\n", epoch,
                    cfg->epochs, loss, per_epoch);
        else
            fprintf(cfg->log,
                    "epoch %d/%d: loss %.6f, validation %.6f after its step (best %.6f at epoch "
                    "%d; %.3f s/epoch)\n",
                    epoch, cfg->epochs, loss, val, st->best_val, (int)st->best_epoch, per_epoch);
        fflush(cfg->log);
    }
    if (cfg->on_epoch)
        cfg->on_epoch(cfg->ctx, epoch, loss, val, st->w);
}

/// The positions held out for validation: held[i] = 1 for those of the games in cfg->val.
static uint8_t *fit_held(const TexelSet *s, double val)
{
    uint8_t *held = malloc(s->n ? s->n : 1);
    for (uint64_t i = 0; held && i < s->n; i++)
        held[i] = val > 0 && texel_game_held(s->game[i], val);
    return held;
}

/// The end of a whole fit: the best validation epoch's weights in st->w, said on the log.
static void fit_keep_best(const TexelFitConfig *cfg, FitState *st, TexelFitReport *rep, int epochs)
{
    rep->best_epoch = epochs;
    rep->best_val = rep->val_end;
    rep->best_loss = rep->loss_end;
    if (st->best_epoch < 0) // no validation: the last epoch's
        return;
    rep->best_epoch = (int)st->best_epoch;
    rep->best_val = st->best_val;
    rep->best_loss = st->best_loss;
    memcpy(st->w, st->best_w, sizeof st->w);
    if (!cfg->log)
        return;
    fprintf(cfg->log,
            "Best validation at epoch %d of %d: validation loss %.6f (%.6f at the start), "
            "training loss %.6f; its weights are written\n",
            rep->best_epoch, epochs, st->best_val, st->val_start, st->best_loss);
    if (rep->best_epoch == 0 && epochs > 0)
        fprintf(cfg->log, "The fit only overfits: no epoch did better on the held-out games than "
                          "the start weights, which are kept (more positions, a larger l2 or a "
                          "lower lr)\n");
    else if (rep->best_epoch == 1 && epochs > 1)
        fprintf(cfg->log, "Validation never improved after epoch 1: the fit overfits from its "
                          "first step (more positions, a larger l2 or a lower lr)\n");
}

TexelStatus texel_fit(const TexelSet *s, const TexelFitConfig *cfg, const Weights *start,
                      const TexelExec *x, Weights *out, TexelFitReport *rep, char *why,
                      size_t why_len)
{
    if (cfg->epochs < 1 || !(cfg->lr > 0) || !(cfg->l2 >= 0) || cfg->k < 0 ||
        cfg->checkpoint_every < 0 || !(cfg->checkpoint_seconds >= 0) ||
        !(cfg->val >= 0 && cfg->val <= 0.5))
        return WHY_FAIL(TEXEL_ERR_CONFIG, why, why_len,
                        "epochs %d, lr %g, l2 %g, k %g, val %g (0 to 0.5), checkpoint every %d "
                        "epochs or %g s",
                        cfg->epochs, cfg->lr, cfg->l2, cfg->k, cfg->val, cfg->checkpoint_every,
                        cfg->checkpoint_seconds);
    FitState *st = calloc(1, sizeof *st); // four weight tables: on the heap, not the stack
    double *grad = malloc(sizeof *grad * PARAM_NB);
    uint8_t *held = fit_held(s, cfg->val);
    if (!st || !grad || !held) {
        free(st);
        free(grad);
        free(held);
        return WHY_FAIL(TEXEL_ERR_NOMEM, why, why_len, "out of memory");
    }
    memset(rep, 0, sizeof *rep);
    int tuned = 0, every = cfg->checkpoint_every ? cfg->checkpoint_every : TEXEL_CHECKPOINT_EVERY;
    for (int i = 0; i < PARAM_NB; i++) {
        st->w[i] = start->v[i];
        tuned += cfg->tuned[i];
    }
    double n = 0; // the training positions of all ranks: the L2 pull's scale
    for (uint64_t i = 0; i < s->n; i++)
        n += !held[i];
    bool resumed = false;
    TexelStatus ts = fit_resume(cfg, start, x, st, &resumed, why, why_len);
    if (ts == TEXEL_OK && x && x->reduce && !x->reduce(x->ctx, &n, 1))
        ts = TEXEL_ERR_REDUCE;
    if (ts == TEXEL_OK && !resumed) {
        st->k = cfg->k;
        st->best_epoch = -1;
        if (st->k == 0) // K once, from the start weights: held for the whole fit
            ts = fit_k(s, st->w, x, held, &st->k);
        if (ts == TEXEL_OK)
            ts = loss_of(s, st->w, st->k, x, held, 0, &st->loss_start);
        if (ts == TEXEL_OK)
            ts = fit_val(s, st->w, st->k, x, held, &st->val_start);
    }
    rep->resumed_from = resumed ? (int)st->epoch : 0;
    if (ts == TEXEL_OK && cfg->log && resumed)
        fprintf(cfg->log, "Resuming at epoch %d: K = %.4f, loss %.6f at the start\n",
                (int)st->epoch, st->k, st->loss_start);
    else if (ts == TEXEL_OK && cfg->log)
        fprintf(cfg->log,
                "Fitted K = %.4f: loss %.6f at the start, %d weights tuned, %llu positions here\n",
                st->k, st->loss_start, tuned, (unsigned long long)s->n);
    if (ts == TEXEL_OK && cfg->log && !isnan(st->val_start))
        fprintf(cfg->log,
                "Validation: %.0f%% of the games held out (never trained on), loss %.6f at the "
                "start\n",
                cfg->val * 100, st->val_start);
    // Said at once: a fit killed before its first progress line still shows where it began.
    if (cfg->log)
        fflush(cfg->log);
    else if (ts == TEXEL_OK && cfg->log)
        fprintf(cfg->log, "Validation: none (%s): the last epoch's weights are written\n",
                cfg->val > 0 ? "no game held out" : "val 0");
    CkptId id = ckpt_id(cfg);
    FitRunCkpt ckpt = ckpt_of(cfg, &id, st); // written from st as the fit goes
    double t0 = now_s(), saved = t0, loss = st->loss_start, val = st->val_start;
    int epoch = (int)st->epoch;
    bool stop = false;
    // Epoch e: the gradient at the weights after e steps gives their loss (row e), then step
    // e + 1. A checkpoint holds the state after its steps: resuming recomputes row e exactly.
    for (; ts == TEXEL_OK && epoch < cfg->epochs && !stop; epoch++) {
        ts = gradient_of(s, st->w, st->k, x, held, 0, &loss, grad);
        if (ts == TEXEL_OK)
            ts = fit_val(s, st->w, st->k, x, held, &val);
        if (ts != TEXEL_OK)
            break;
        fit_record(cfg, st, epoch, loss, val, (now_s() - t0) / (epoch + 1 - rep->resumed_from));
        fit_step(cfg, start, n, grad, st, epoch);
        st->epoch = epoch + 1;
        // Asked after the step, so a stop's checkpoint holds a whole epoch; every rank agrees
        // on it (fit_stop sums the flag), so none waits in a sum the others never make.
        ts = fit_stop(cfg, x, &stop);
        bool due = (epoch + 1) % every == 0 || epoch + 1 == cfg->epochs || stop ||
                   (cfg->checkpoint_seconds > 0 && now_s() - saved >= cfg->checkpoint_seconds);
        if (ts == TEXEL_OK && cfg->checkpoint && due) {
            if (!fitrun_ckpt_write(&ckpt))
                ts = WHY_FAIL(TEXEL_ERR_IO, why, why_len, "cannot write the checkpoint %s: %s",
                              cfg->checkpoint, strerror(errno));
            saved = now_s();
        }
    }
    double t1 = now_s();
    // The last row: the loss after the final step, which no gradient of the loop computed.
    if (ts == TEXEL_OK)
        ts = loss_of(s, st->w, st->k, x, held, 0, &loss);
    if (ts == TEXEL_OK)
        ts = fit_val(s, st->w, st->k, x, held, &val);
    int run = epoch - rep->resumed_from;
    bool drained = stop && epoch < cfg->epochs;
    if (ts == TEXEL_OK && !drained)
        fit_record(cfg, st, epoch, loss, val, run > 0 ? (t1 - t0) / run : 0);
    if (ts == TEXEL_OK && drained) {
        rep->drained = true;
        ts = WHY_FAIL(TEXEL_DRAINED, why, why_len, "stopped after epoch %d of %d (checkpointed)",
                      epoch, cfg->epochs);
    }
    rep->k = st->k;
    rep->loss_start = st->loss_start;
    rep->loss_end = loss;
    rep->val_start = st->val_start;
    rep->val_end = val;
    rep->epochs_done = epoch;
    if (ts == TEXEL_OK)
        fit_keep_best(cfg, st, rep, epoch);
    rep->seconds_per_epoch = run > 0 ? (t1 - t0) / run : 0;
    for (int i = 0; i < PARAM_NB; i++) // the engine's weights are integers
        out->v[i] = (int32_t)lround(st->w[i]);
    if (ts != TEXEL_OK && why && !why[0])
        why_set(why, why_len, "%s", texel_strerror(ts));
    free(st);
    free(grad);
    free(held);
    return ts;
}
