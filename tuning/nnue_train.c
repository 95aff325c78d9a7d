// SPDX-License-Identifier: MIT
#include "nnue_train_impl.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "fitrun.h"
#include "why.h"

const char *nnue_train_strerror(NnueTrainStatus st)
{
    static const char *const text[NNUE_TRAIN_STATUS_NB] = {"ok",
                                                           "input/output error",
                                                           "positions file refused",
                                                           "out of memory",
                                                           "reduce failed (a rank is gone)",
                                                           "bad settings",
                                                           "checkpoint of other inputs",
                                                           "quantized net beyond the tolerance",
                                                           "stopped after a checkpoint"};
    return st >= 0 && st < NNUE_TRAIN_STATUS_NB ? text[st] : "unknown status";
}

// ---- Model ---------------------------------------------------------------------------------

NnueTrainStatus nnue_model_init(NnueModel *m, int hidden, uint64_t seed)
{
    return nnue_model_init_version(m, NNUE_VERSION, hidden, seed);
}

NnueTrainStatus nnue_model_init_version(NnueModel *m, int version, int hidden, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    version = nnue_train_version(version);
    size_t nf = (size_t)nnue_version_features(version);
    if (!nf || hidden < 32 || hidden > NNUE_HIDDEN_MAX || hidden % 32)
        return NNUE_TRAIN_ERR_CONFIG;
    size_t h = (size_t)hidden;
    m->version = version;
    m->features = (int)nf;
    m->hidden = hidden;
    m->size = nf * h + h + 2 * h + 1;
    // One block for all parameters: Adam, the sums over ranks and the checkpoint treat the
    // model as a single vector; the named pointers are views into it.
    m->p = malloc(m->size * sizeof *m->p);
    if (!m->p)
        return NNUE_TRAIN_ERR_NOMEM;
    m->ft_w = m->p;
    m->ft_b = m->ft_w + nf * h;
    m->out_w = m->ft_b + h;
    m->out_b = m->out_w + 2 * h;
    // Small transformer columns (about 30 active features per perspective) around a bias in
    // the middle of the clip, so the units start in crelu's linear part.
    uint64_t s = seed ^ 0x6e6e75652d747261ull;
    for (size_t i = 0; i < nf * h; i++)
        m->ft_w[i] = (float)((nnue_uniform(&s) * 2 - 1) * 0.1);
    for (size_t i = 0; i < h; i++)
        m->ft_b[i] = 0.5f;
    double a = 1.0 / sqrt(2.0 * (double)h); // the output starts near 0 cp, whatever h is
    for (size_t i = 0; i < 2 * h; i++)
        m->out_w[i] = (float)((nnue_uniform(&s) * 2 - 1) * a);
    *m->out_b = 0;
    return NNUE_TRAIN_OK;
}

void nnue_model_free(NnueModel *m)
{
    free(m->p);
    memset(m, 0, sizeof *m);
}

/// The win probability of a score: sigmoid(cp / K) with K = 400 / ln 10 is 1 / (1 + 10^(-cp /
/// 400)), the scale the Texel tuner and the Elo formula use.
static double sigmoid(double x) { return 1 / (1 + exp(-x)); }

/// An output weight as the net file holds it: on the grid of 1 / QB. The float net computes
/// with these (the gradient passes straight through to the float weight), so the export's
/// roundings of the output layer, worth up to 400 / 64 / 2 = 3 cp per unit each, never
/// differ from what was trained; only the transformer's (1 / QA) remain.
static inline float out_grid(float w) { return rintf(w * NNUE_QB) / NNUE_QB; }

/// The float net's output (in units of NNUE_SCALE centipawns) for s; acc receives the two
/// accumulators before the clip ([0, H) side to move, [H, 2H) the other).
static float forward(const NnueModel *m, const Sample *s, float *restrict acc)
{
    int h = m->hidden;
    float out = *m->out_b;
    // Floats, as the engine's int16 accumulators hold a similar range; restrict lets the
    // compiler vectorise the column adds, the whole cost of training.
    for (int p = 0; p < 2; p++) {
        float *restrict a = acc + p * h;
        memcpy(a, m->ft_b, sizeof *a * (size_t)h);
        for (int k = 0; k < s->n[p]; k++) {
            const float *restrict w = m->ft_w + (size_t)s->f[p][k] * (size_t)h;
            for (int i = 0; i < h; i++)
                a[i] += w[i];
        }
        const float *restrict ow = m->out_w + p * h;
        float sum = 0;
        for (int i = 0; i < h; i++)
            sum += (a[i] < 0 ? 0 : a[i] > 1 ? 1 : a[i]) * out_grid(ow[i]);
        out += sum;
    }
    return out;
}

double nnue_model_eval(const NnueModel *m, const NnueSet *s, uint64_t i)
{
    float acc[2 * NNUE_HIDDEN_MAX];
    return forward(m, &s->s[i], acc) * (double)NNUE_SCALE;
}

/// The loss of one sample and (grad not NULL) its gradient added into grad.
static double sample_loss(const NnueModel *m, const Sample *s, double lambda, float *acc,
                          float *restrict grad)
{
    // The target blends the search's score and the game's result (lambda): the score is less
    // noisy per position, the result is the truth the score only estimates.
    double out = forward(m, s, acc);
    double p = sigmoid(out * NNUE_SCALE / NNUE_TRAIN_K);
    double t = lambda * sigmoid(s->score / NNUE_TRAIN_K) + (1 - lambda) * s->result / 2.0;
    if (!grad)
        return (p - t) * (p - t);
    // Backward: d loss / d out, then through the clipped ReLU (zero where it clips) to each
    // accumulator, and from there to the bias and to the columns of the active features only.
    float g = (float)(2 * (p - t) * p * (1 - p) * NNUE_SCALE / NNUE_TRAIN_K);
    int h = m->hidden;
    size_t ob = (size_t)(m->out_b - m->p), ow = (size_t)(m->out_w - m->p);
    size_t fb = (size_t)(m->ft_b - m->p);
    grad[ob] += g;
    for (int p2 = 0; p2 < 2; p2++) {
        float *restrict a = acc + p2 * h;
        const float *restrict w = m->out_w + p2 * h;
        float *restrict gw = grad + ow + (size_t)(p2 * h);
        for (int i = 0; i < h; i++) {
            float x = a[i] < 0 ? 0 : a[i] > 1 ? 1 : a[i];
            gw[i] += g * x;
            a[i] = a[i] > 0 && a[i] < 1 ? g * out_grid(w[i]) : 0; // now d loss / d acc
        }
        float *restrict gb = grad + fb;
        for (int i = 0; i < h; i++)
            gb[i] += a[i];
        for (int k = 0; k < s->n[p2]; k++) {
            float *restrict gf = grad + (size_t)s->f[p2][k] * (size_t)h;
            for (int i = 0; i < h; i++)
                gf[i] += a[i];
        }
    }
    return (p - t) * (p - t);
}

/// The parameters a run's steps can change, as spans of the parameter vector: the input rows
/// of the features some training position has (on some rank), then the biases and the output
/// layer. A king-bucketed net's inputs are mostly rows no position reaches (an advisor off its
/// palace, a general's bucket beside a piece it cannot meet): their gradient is always 0, so
/// Adam leaves them as they are, and the steps skip them (zeroing, sums over threads and
/// ranks, Adam) with the same result, bit for bit. The gradient travels packed: span after
/// span, total values.
typedef struct {
    size_t *off, *len;
    size_t n, total;
} Spans;

static void spans_free(Spans *sp)
{
    free(sp->off);
    free(sp->len);
    memset(sp, 0, sizeof *sp);
}

/// Per-thread scratch: a gradient and the accumulators. A gradient per thread instead of one
/// shared: no atomics in the inner loop, and a fixed order when they are added.
typedef struct {
    int threads;
    size_t size;
    float *grad[NNUE_TRAIN_THREADS_MAX];
    float *acc[NNUE_TRAIN_THREADS_MAX];
} Work;

static void work_free(Work *w)
{
    for (int t = 0; t < w->threads; t++) {
        free(w->grad[t]);
        free(w->acc[t]);
    }
    w->threads = 0;
}

static bool work_init(Work *w, int threads, const NnueModel *m, bool grads)
{
    memset(w, 0, sizeof *w);
    w->threads = threads;
    w->size = m->size;
    for (int t = 0; t < threads; t++) {
        w->acc[t] = malloc(sizeof(float) * 2 * (size_t)m->hidden);
        w->grad[t] = grads ? malloc(sizeof(float) * m->size) : NULL;
        if (!w->acc[t] || (grads && !w->grad[t])) {
            work_free(w);
            return false;
        }
    }
    return true;
}

/// One thread's contiguous part of a batch and its sums.
typedef struct {
    const NnueModel *m;
    const NnueSet *s;
    const uint32_t *idx; // sample order (NULL: 0, 1, ...)
    uint64_t from, to;
    double lambda;
    float *grad, *acc;
    const Spans *sp; // of grad that the samples can reach
    double loss;
} Part;

static void *part_run(void *arg)
{
    Part *p = arg;
    for (size_t k = 0; p->grad && k < p->sp->n; k++)
        memset(p->grad + p->sp->off[k], 0, sizeof(float) * p->sp->len[k]);
    double loss = 0;
    for (uint64_t i = p->from; i < p->to; i++) {
        uint64_t j = p->idx ? p->idx[i] : i;
        loss += sample_loss(p->m, &p->s->s[j], p->lambda, p->acc, p->grad);
    }
    p->loss = loss;
    return NULL;
}

/// Sums over samples [from, to) of order idx: the loss into *loss and (gsum not NULL) the
/// gradient into gsum, packed by sp (sp->total doubles, overwritten; sp NULL: all m->size
/// parameters in order). Each thread takes a fixed contiguous part and the parts are added in
/// thread order, so the sums do not depend on timing.
static NnueTrainStatus batch_sums(const NnueModel *m, const NnueSet *s, const uint32_t *idx,
                                  uint64_t from, uint64_t to, double lambda, Work *w, double *gsum,
                                  double *loss, const Spans *sp)
{
    size_t zero = 0, size = m->size;
    const Spans all = {&zero, &size, 1, size};
    if (!sp)
        sp = &all;
    int threads = w->threads;
    Part parts[NNUE_TRAIN_THREADS_MAX];
    pthread_t tid[NNUE_TRAIN_THREADS_MAX];
    bool started[NNUE_TRAIN_THREADS_MAX] = {false};
    uint64_t n = to - from;
    for (int t = 0; t < threads; t++) {
        parts[t] = (Part){m,
                          s,
                          idx,
                          from + n * (uint64_t)t / (uint64_t)threads,
                          from + n * (uint64_t)(t + 1) / (uint64_t)threads,
                          lambda,
                          gsum ? w->grad[t] : NULL,
                          w->acc[t],
                          sp,
                          0};
        started[t] = t > 0 && pthread_create(&tid[t], NULL, part_run, &parts[t]) == 0;
        if (t > 0 && !started[t])
            part_run(&parts[t]); // no thread: the same part here, the same sums
    }
    part_run(&parts[0]);
    for (int t = 1; t < threads; t++)
        if (started[t])
            pthread_join(tid[t], NULL);
    *loss = 0; // in thread order, in doubles: the same bits for the same parts
    for (int t = 0; t < threads; t++)
        *loss += parts[t].loss;
    for (size_t k = 0, at = 0; gsum && k < sp->n; at += sp->len[k], k++) {
        double *restrict out = gsum + at;
        for (size_t j = 0; j < sp->len[k]; j++)
            out[j] = 0;
        for (int t = 0; t < threads; t++) {
            const float *restrict g = w->grad[t] + sp->off[k];
            for (size_t j = 0; j < sp->len[k]; j++)
                out[j] += g[j];
        }
    }
    return NNUE_TRAIN_OK;
}

NnueTrainStatus nnue_model_loss(const NnueModel *m, const NnueSet *s, double lambda, int threads,
                                double *loss, double *grad)
{
    Work w;
    threads = threads < 1 ? 1 : threads > NNUE_TRAIN_THREADS_MAX ? NNUE_TRAIN_THREADS_MAX : threads;
    if (!work_init(&w, threads, m, grad != NULL))
        return NNUE_TRAIN_ERR_NOMEM;
    double sum = 0;
    batch_sums(m, s, NULL, 0, s->n, lambda, &w, grad, &sum, NULL);
    double n = s->n ? (double)s->n : 1;
    *loss = sum / n;
    for (size_t j = 0; grad && j < m->size; j++)
        grad[j] /= n;
    work_free(&w);
    return NNUE_TRAIN_OK;
}

// ---- Checkpoints ---------------------------------------------------------------------------

// Checkpoint (tuning/fitrun.h): "XQNNCK2", CkptId, u64 model size, CkptState, floats p, m, v,
// the best-validation epoch's p, and the FNV-1a hash (megabytes of floats: a damaged one would
// resume silently otherwise). "XQNNCK1" (no best epoch) is refused as older: resuming it could
// not know which epoch to export.
/// What a checkpoint was made from (no padding: written as it is).
typedef struct {
    uint64_t data, job, seed;
    int32_t hidden, epochs, batch, ranks, threads;
    int32_t version; // 0: XQ1 (this was padding before XQ2: older checkpoints read as XQ1), 2
    double lr, lambda, val;
} CkptId;

typedef struct {
    double epoch, step; // completed epochs, steps into the next
    double sum_loss, sum_n;
    double loss_start, val_start;
    double loss_last, val_last;  // the last completed epoch's (the start's before any)
    double best_epoch, best_val; // the lowest validation loss of epochs 1.. (0, NaN: none yet)
    double best_train;           // and that epoch's train loss
} CkptState;

enum { CKPT_STATE_DOUBLES = sizeof(CkptState) / sizeof(double) };

/// The threads the sums are split over: part of the checkpoint's id, as the split decides
/// the order of the additions and so the last bits of every sum.
static int run_threads(const NnueTrainConfig *cfg)
{
    int t = cfg->threads < 1 ? 1 : cfg->threads;
    return t > NNUE_TRAIN_THREADS_MAX ? NNUE_TRAIN_THREADS_MAX : t;
}

static CkptId ckpt_id(const NnueTrainConfig *cfg)
{
    CkptId id;
    memset(&id, 0, sizeof id);
    id.data = cfg->inputs.data;
    id.job = cfg->inputs.job;
    id.seed = cfg->seed;
    id.hidden = cfg->hidden;
    id.epochs = cfg->epochs;
    id.batch = cfg->batch;
    id.ranks = cfg->inputs.ranks;
    id.threads = run_threads(cfg);
    id.lr = cfg->lr;
    id.lambda = cfg->lambda;
    id.val = cfg->val;
    id.version = nnue_train_version(cfg->version) == NNUE_VERSION ? 0 : cfg->version;
    return id;
}

/// The first difference between what a checkpoint was made from and now; false if none.
static bool ckpt_differs(const void *was, const void *now, char *out, size_t len)
{
    const CkptId *a = was, *b = now;
    if (a->data != b->data)
        snprintf(out, len, "made from other positions (hash %016llx, now %016llx)",
                 (unsigned long long)a->data, (unsigned long long)b->data);
    else if (a->version != b->version)
        snprintf(out, len, "made for a %s net, now %s", a->version ? "XQ2" : "XQ1",
                 b->version ? "XQ2" : "XQ1");
    else if (a->hidden != b->hidden)
        snprintf(out, len, "made with hidden %d, now %d", a->hidden, b->hidden);
    else if (a->epochs != b->epochs)
        snprintf(out, len, "made for %d epochs, now %d", a->epochs, b->epochs);
    else if (a->batch != b->batch)
        snprintf(out, len, "made with batch %d, now %d", a->batch, b->batch);
    else if (a->lr != b->lr || a->lambda != b->lambda || a->val != b->val)
        snprintf(out, len, "made with lr %g, lambda %g, val %g, now lr %g, lambda %g, val %g",
                 a->lr, a->lambda, a->val, b->lr, b->lambda, b->val);
    else if (a->seed != b->seed)
        snprintf(out, len, "made with seed %llu, now %llu", (unsigned long long)a->seed,
                 (unsigned long long)b->seed);
    else if (a->ranks != b->ranks)
        snprintf(out, len, "made on %d rank%s, now %d", a->ranks, a->ranks == 1 ? "" : "s",
                 b->ranks);
    else if (a->threads != b->threads)
        snprintf(out, len, "made with %d thread%s, now %d (the sums' order follows them)",
                 a->threads, a->threads == 1 ? "" : "s", b->threads);
    else if (a->job != b->job)
        snprintf(out, len, "made for another job (identity %016llx, now %016llx)",
                 (unsigned long long)a->job, (unsigned long long)b->job);
    else
        return false;
    return true;
}

// No fsync: checkpoints come every few hundred steps, and they guard against kills, not power
// loss (the rename still makes each one whole).
static const FitRunFormat CKPT_FORMAT = {.magic = "XQNNCK2",
                                         .old_magic = "XQNNCK1",
                                         .old_why = "no record of its best validation epoch",
                                         .name = "an NNUE training checkpoint",
                                         .unit = "parameters",
                                         .id_size = sizeof(CkptId),
                                         .count_bytes = 8,
                                         .hashed = true,
                                         .differs = ckpt_differs};

/// The model, Adam's moments and the position in the run.
typedef struct {
    CkptState st;
    size_t size;
    float *p, *m, *v;
    float *best; // the parameters after the best-validation epoch (st.best_epoch)
} TrainState;

/// cfg's checkpoint with ts as its payload (id: ckpt_id(cfg), kept by the caller).
static FitRunCkpt ckpt_of(const NnueTrainConfig *cfg, const CkptId *id, TrainState *ts)
{
    return (FitRunCkpt){.fmt = &CKPT_FORMAT,
                        .path = cfg->checkpoint,
                        .fresh = cfg->fresh,
                        .id = id,
                        .count = ts->size,
                        .part = {{&ts->st, CKPT_STATE_DOUBLES, FITRUN_DOUBLE},
                                 {ts->p, ts->size, FITRUN_FLOAT},
                                 {ts->m, ts->size, FITRUN_FLOAT},
                                 {ts->v, ts->size, FITRUN_FLOAT},
                                 {ts->best, ts->size, FITRUN_FLOAT}},
                        .parts = 5,
                        .epoch = &ts->st.epoch,
                        .epochs = cfg->epochs};
}

/// fitrun's status as the trainer's, which the callers already map to exit codes.
static NnueTrainStatus from_fitrun(FitRunStatus st)
{
    static const NnueTrainStatus map[FITRUN_STATUS_NB] = {
        NNUE_TRAIN_OK, NNUE_TRAIN_ERR_IO, NNUE_TRAIN_ERR_STALE, NNUE_TRAIN_ERR_REDUCE,
        NNUE_TRAIN_ERR_NOMEM};
    return (unsigned)st < FITRUN_STATUS_NB ? map[st] : NNUE_TRAIN_ERR_IO;
}

static bool state_alloc(TrainState *ts, size_t size)
{
    memset(ts, 0, sizeof *ts);
    ts->size = size;
    ts->p = calloc(size, sizeof(float));
    ts->m = calloc(size, sizeof(float));
    ts->v = calloc(size, sizeof(float));
    ts->best = calloc(size, sizeof(float));
    return ts->p && ts->m && ts->v && ts->best;
}

static void state_free(TrainState *ts)
{
    free(ts->p);
    free(ts->m);
    free(ts->v);
    free(ts->best);
}

NnueTrainStatus nnue_checkpoint_check(const NnueTrainConfig *cfg, bool *found, int *epoch,
                                      char *why, size_t why_len)
{
    // A bad hidden would size the state wrongly: the settings' own message comes first.
    *found = false;
    *epoch = 0;
    if (cfg->hidden < 32 || cfg->hidden > NNUE_HIDDEN_MAX || cfg->hidden % 32 ||
        !nnue_version_features(nnue_train_version(cfg->version)))
        return nnue_train_check(cfg, why, why_len);
    size_t h = (size_t)cfg->hidden,
           nf = (size_t)nnue_version_features(nnue_train_version(cfg->version));
    TrainState ts;
    CkptId id = ckpt_id(cfg);
    NnueTrainStatus st = NNUE_TRAIN_ERR_NOMEM;
    if (state_alloc(&ts, nf * h + 3 * h + 1)) {
        FitRunCkpt c = ckpt_of(cfg, &id, &ts);
        st = from_fitrun(fitrun_ckpt_read(&c, found, why, why_len));
    } else {
        why_set(why, why_len, "out of memory");
    }
    *epoch = *found ? (int)ts.st.epoch : 0;
    state_free(&ts);
    return st;
}

// ---- Training ------------------------------------------------------------------------------

NnueTrainStatus nnue_train_check(const NnueTrainConfig *cfg, char *why, size_t why_len)
{
    if (cfg->hidden < 32 || cfg->hidden > NNUE_HIDDEN_MAX || cfg->hidden % 32)
        return WHY_FAIL(NNUE_TRAIN_ERR_CONFIG, why, why_len,
                        "hidden %d: a multiple of 32 from 32 to %d", cfg->hidden, NNUE_HIDDEN_MAX);
    if (!nnue_version_features(nnue_train_version(cfg->version)))
        return WHY_FAIL(NNUE_TRAIN_ERR_CONFIG, why, why_len, "net version %d: 1 (XQ1) or 2 (XQ2)",
                        cfg->version);
    if (cfg->epochs < 1 || cfg->epochs > 100000)
        return WHY_FAIL(NNUE_TRAIN_ERR_CONFIG, why, why_len, "epochs %d: 1 to 100000", cfg->epochs);
    if (cfg->batch < 1 || cfg->batch > (1 << 24))
        return WHY_FAIL(NNUE_TRAIN_ERR_CONFIG, why, why_len, "batch %d: 1 to %d", cfg->batch,
                        1 << 24);
    if (!(cfg->lr > 0 && cfg->lr <= 1))
        return WHY_FAIL(NNUE_TRAIN_ERR_CONFIG, why, why_len, "lr %g: above 0, at most 1", cfg->lr);
    if (!(cfg->lambda >= 0 && cfg->lambda <= 1))
        return WHY_FAIL(NNUE_TRAIN_ERR_CONFIG, why, why_len, "lambda %g: 0 to 1", cfg->lambda);
    if (!(cfg->val >= 0 && cfg->val < 1))
        return WHY_FAIL(NNUE_TRAIN_ERR_CONFIG, why, why_len, "val %g: 0 to below 1", cfg->val);
    if (cfg->threads < 0 || cfg->threads > NNUE_TRAIN_THREADS_MAX || cfg->checkpoint_steps < 0 ||
        !(cfg->checkpoint_seconds >= 0))
        return WHY_FAIL(NNUE_TRAIN_ERR_CONFIG, why, why_len,
                        "threads %d (0 to %d), checkpoint every %d steps or %g s", cfg->threads,
                        NNUE_TRAIN_THREADS_MAX, cfg->checkpoint_steps, cfg->checkpoint_seconds);
    return NNUE_TRAIN_OK;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/// The sum over ranks (one process: nothing to add). Every sum is a collective: all ranks
/// must call it alike, so the loops below decide from summed flags, never from local ones.
static bool reduce(const NnueTrainConfig *cfg, double *buf, int n)
{
    return !cfg->reduce || cfg->reduce(cfg->reduce_ctx, buf, n);
}

/// The mean loss over every rank's samples of s (NaN when there are none).
static NnueTrainStatus mean_loss(const NnueTrainConfig *cfg, const NnueModel *m, const NnueSet *s,
                                 Work *w, double *loss)
{
    double sums[2] = {0, (double)nnue_set_size(s)};
    if (s && s->n)
        batch_sums(m, s, NULL, 0, s->n, cfg->lambda, w, NULL, &sums[0], NULL);
    if (!reduce(cfg, sums, 2))
        return NNUE_TRAIN_ERR_REDUCE;
    *loss = sums[1] > 0 ? sums[0] / sums[1] : NAN;
    return NNUE_TRAIN_OK;
}

/// One Adam step of the parameters of sp (gradient g packed by sp, mean over the batch) at
/// global step t, then the clips that keep the quantized net in range.
static void adam_step(const NnueTrainConfig *cfg, TrainState *ts, const NnueModel *m,
                      const double *g, double t, double total, const Spans *sp)
{
    const double b1 = 0.9, b2 = 0.999, pi = 3.14159265358979323846;
    // Cosine decay to lr / 10 over the whole run: big steps early, fine ones at the end, and
    // a function of the global step only, so a resumed run continues the same schedule.
    double lr = cfg->lr * (0.1 + 0.9 * 0.5 * (1 + cos(pi * t / total)));
    double c1 = 1 - pow(b1, t + 1), c2 = 1 - pow(b2, t + 1);
    size_t ft = (size_t)(m->out_w - m->p), ob = (size_t)(m->out_b - m->p);
    double clip_out = 127.0 / NNUE_QB;
    size_t k = 0;
    for (size_t s = 0; s < sp->n; s++)
        for (size_t j = sp->off[s]; j < sp->off[s] + sp->len[s]; j++, k++) {
            double mj = b1 * ts->m[j] + (1 - b1) * g[k];
            double vj = b2 * ts->v[j] + (1 - b2) * g[k] * g[k];
            ts->m[j] = (float)mj; // stored as floats: the checkpoint holds exactly what is used
            ts->v[j] = (float)vj;
            double p = ts->p[j] - lr * (mj / c1) / (sqrt(vj / c2) + 1e-8);
            // The clips the int16 net needs (nnue_train.h, top); the output bias is free.
            double lim = j < ft ? NNUE_TRAIN_FT_CLIP : j < ob ? clip_out : 1000;
            ts->p[j] = (float)(p < -lim ? -lim : p > lim ? lim : p);
        }
}

/// The epoch's sample order on this rank: a shuffle that is a function of (seed, epoch, rank).
static void shuffle(uint32_t *idx, uint64_t n, uint64_t seed, int epoch, int rank)
{
    uint64_t s =
        seed ^ ((uint64_t)(epoch + 1) * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(rank + 1) << 40);
    for (uint64_t i = 0; i < n; i++)
        idx[i] = (uint32_t)i;
    for (uint64_t i = n; i > 1; i--) { // Fisher-Yates
        uint64_t j = nnue_splitmix(&s) % i;
        uint32_t t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
}

/// A row of the loss CSV, the console line and the callback.
static void record_epoch(const NnueTrainConfig *cfg, int epoch, double train, double val,
                         double pps)
{
    if (cfg->loss_csv)
        fprintf(cfg->loss_csv, "%d,%.8f,%.8f\n", epoch, train, val), fflush(cfg->loss_csv);
    if (cfg->log && epoch == 0)
        fprintf(cfg->log, "epoch 0/%d: train loss %.6f, val loss %.6f (the start)\n", cfg->epochs,
                train, val);
    else if (cfg->log)
        fprintf(cfg->log, "epoch %d/%d: train loss %.6f, val loss %.6f, %.0f positions/s\n", epoch,
                cfg->epochs, train, val, pps);
    if (cfg->log)
        fflush(cfg->log);
    if (cfg->on_epoch)
        cfg->on_epoch(cfg->ctx, epoch, train, val);
}

/// A training run in progress: the state that is checkpointed (ts) and the scratch that is not.
typedef struct {
    const NnueTrainConfig *cfg;
    NnueModel *m;
    const NnueSet *train, *valid;
    TrainState ts;
    CkptId id;
    FitRunCkpt ckpt; // of ts, with id
    Work w;
    Spans sp;  // the parameters the steps change
    double *g; // gradient (packed by sp), then loss sum, count, stop
    uint32_t *idx;
    int rank;
    double steps, total_steps, saved, busy;
    uint64_t trained;
} Trainer;

/// One step: this rank's share of batch `step` of the epoch, summed over ranks, then Adam;
/// *stop when any rank asked.
static NnueTrainStatus train_step(Trainer *t, double step, bool *stop)
{
    const NnueTrainConfig *cfg = t->cfg;
    size_t n = t->sp.total;
    // Each rank takes the same fraction of its own shard, so a batch is spread over the ranks
    // in proportion to their shards, and all ranks agree on the number of steps.
    uint64_t local = t->train->n;
    uint64_t from = (uint64_t)((double)local * step / t->steps);
    uint64_t to = (uint64_t)((double)local * (step + 1) / t->steps);
    double t0 = now_s();
    batch_sums(t->m, t->train, t->idx, from, to, cfg->lambda, &t->w, t->g, &t->g[n], &t->sp);
    t->busy += now_s() - t0;
    t->trained += to - from;
    // The count and the stop flag ride on the gradient's sum: one collective a step.
    t->g[n + 1] = (double)(to - from);
    t->g[n + 2] = cfg->stop && atomic_load(cfg->stop) ? 1 : 0;
    if (!reduce(cfg, t->g, (int)n + 3))
        return NNUE_TRAIN_ERR_REDUCE;
    double count = t->g[n + 1];
    if (count > 0) {
        for (size_t j = 0; j < n; j++)
            t->g[j] /= count;
        double gstep = t->ts.st.epoch * t->steps + step;
        adam_step(cfg, &t->ts, t->m, t->g, gstep, t->total_steps, &t->sp);
    }
    t->ts.st.sum_loss += t->g[n];
    t->ts.st.sum_n += count;
    *stop = t->g[n + 2] > 0;
    return NNUE_TRAIN_OK;
}

/// At the end: the model becomes the best-validation epoch's (said on the log), or stays the
/// last when there was no validation.
static void train_keep_best(Trainer *t, NnueTrainReport *rep)
{
    const NnueTrainConfig *cfg = t->cfg;
    const CkptState *st = &t->ts.st;
    rep->best_epoch = (int)st->epoch;
    if (st->best_epoch < 1) {
        if (cfg->log)
            fprintf(cfg->log, "No validation positions: the last epoch (%d) is kept\n",
                    (int)st->epoch);
        return;
    }
    rep->best_epoch = (int)st->best_epoch;
    rep->best_val = st->best_val;
    if (st->best_epoch < st->epoch) {
        memcpy(t->ts.p, t->ts.best, sizeof(float) * t->ts.size);
        rep->loss_end = st->best_train;
        rep->val_end = st->best_val;
    }
    if (cfg->log) {
        fprintf(cfg->log,
                "Best validation at epoch %d of %d: val loss %.6f; that epoch's net is kept\n",
                (int)st->best_epoch, (int)st->epoch, st->best_val);
        if (st->best_epoch == 1 && st->epoch > 1)
            fprintf(cfg->log, "Validation never improved after epoch 1: the training only "
                              "overfits (fewer epochs, a lower lr or more positions)\n");
    }
}

static NnueTrainStatus train_epochs(Trainer *t, NnueTrainReport *rep, char *why, size_t why_len)
{
    const NnueTrainConfig *cfg = t->cfg;
    CkptState *st = &t->ts.st;
    int every = cfg->checkpoint_steps ? cfg->checkpoint_steps : NNUE_TRAIN_CHECKPOINT_STEPS;
    NnueTrainStatus rc = NNUE_TRAIN_OK;
    bool stop = false;
    double since = 0;
    while (rc == NNUE_TRAIN_OK && st->epoch < cfg->epochs && !stop) {
        // Shuffled anew at every epoch's start, also on resume in mid-epoch: the order is a
        // function of (seed, epoch, rank), so the resumed steps see the same batches.
        shuffle(t->idx, t->train->n, cfg->seed, (int)st->epoch, t->rank);
        bool end = false;
        while (rc == NNUE_TRAIN_OK && !end && !stop) {
            rc = train_step(t, st->step, &stop);
            st->step++;
            since++;
            end = st->step >= t->steps;
            if (rc == NNUE_TRAIN_OK && end) {
                // The epoch's train loss is the mean over its steps, each taken before its own
                // update (no second pass over the data); the validation loss is after the epoch.
                double val, train = st->sum_n > 0 ? st->sum_loss / st->sum_n : NAN;
                rc = mean_loss(cfg, t->m, t->valid, &t->w, &val);
                st->epoch++;
                st->step = st->sum_loss = st->sum_n = 0;
                if (rc == NNUE_TRAIN_OK)
                    record_epoch(cfg, (int)st->epoch, train, val,
                                 t->busy > 0 ? (double)t->trained / t->busy : 0);
                // The best validation so far is kept (in the checkpoint too): the export is
                // that epoch's net, not an overfitted last one. Without validation (NaN) the
                // last epoch is kept.
                if (rc == NNUE_TRAIN_OK && !isnan(val) &&
                    (st->best_epoch < 1 || val < st->best_val)) {
                    st->best_epoch = st->epoch;
                    st->best_val = val;
                    st->best_train = train;
                    memcpy(t->ts.best, t->ts.p, sizeof(float) * t->ts.size);
                }
                rep->loss_end = st->loss_last = train;
                rep->val_end = st->val_last = val;
            }
            // Due at the interval, at each epoch's end (a resume then starts a fresh epoch),
            // and on stop; the same on every rank, as every input to it is summed or shared.
            bool due =
                since >= every || end || stop ||
                (cfg->checkpoint_seconds > 0 && now_s() - t->saved >= cfg->checkpoint_seconds);
            if (rc == NNUE_TRAIN_OK && cfg->checkpoint && due) {
                if (!fitrun_ckpt_write(&t->ckpt))
                    rc = WHY_FAIL(NNUE_TRAIN_ERR_IO, why, why_len,
                                  "cannot write the checkpoint %s: %s", cfg->checkpoint,
                                  strerror(errno));
                t->saved = now_s();
                since = 0;
            }
        }
    }
    rep->epochs_done = (int)st->epoch;
    if (rc == NNUE_TRAIN_OK && st->epoch >= cfg->epochs)
        train_keep_best(t, rep);
    if (rc == NNUE_TRAIN_OK && stop && st->epoch < cfg->epochs) {
        rep->drained = true;
        rc = WHY_FAIL(NNUE_TRAIN_DRAINED, why, why_len,
                      "stopped in epoch %d of %d, step %.0f of %.0f (checkpointed)",
                      (int)st->epoch + 1, cfg->epochs, st->step, t->steps);
    }
    return rc;
}

/// The spans of the rows some rank's training positions reach (a sum over ranks: every rank
/// calls it, and all get the same spans), then the biases and the output layer.
static bool spans_build(const NnueTrainConfig *cfg, const NnueModel *m, const NnueSet *train,
                        Spans *sp)
{
    size_t nf = (size_t)m->features, h = (size_t)m->hidden;
    double *seen = calloc(nf, sizeof *seen);
    sp->off = malloc((nf + 1) * sizeof *sp->off);
    sp->len = malloc((nf + 1) * sizeof *sp->len);
    if (!seen || !sp->off || !sp->len) {
        free(seen);
        return false;
    }
    for (uint64_t i = 0; i < train->n; i++)
        for (int p = 0; p < 2; p++)
            for (int k = 0; k < train->s[i].n[p]; k++)
                seen[train->s[i].f[p][k]] = 1;
    bool ok = reduce(cfg, seen, (int)nf);
    sp->n = sp->total = 0;
    for (size_t f = 0; ok && f <= nf; f++) {
        if (f < nf && !seen[f])
            continue;
        // The tail (f == nf): the transformer's bias, the output weights and bias.
        size_t off = f * h, len = f < nf ? h : 3 * h + 1;
        if (sp->n && sp->off[sp->n - 1] + sp->len[sp->n - 1] == off)
            sp->len[sp->n - 1] += len;
        else
            sp->off[sp->n] = off, sp->len[sp->n++] = len;
        sp->total += len;
    }
    free(seen);
    return ok;
}

/// The state, the work space and the first rows: fresh (row 0 from the initial model) or
/// resumed from the checkpoint.
static NnueTrainStatus train_begin(Trainer *t, NnueTrainReport *rep, char *why, size_t why_len)
{
    const NnueTrainConfig *cfg = t->cfg;
    NnueModel *m = t->m;
    t->idx = malloc(sizeof *t->idx * (t->train->n ? t->train->n : 1));
    t->g = malloc(sizeof *t->g * (m->size + 3));
    if (!t->idx || !t->g || !state_alloc(&t->ts, m->size) ||
        !work_init(&t->w, run_threads(cfg), m, true))
        return WHY_FAIL(NNUE_TRAIN_ERR_NOMEM, why, why_len, "out of memory");
    free(t->ts.p);
    t->ts.p = m->p; // the model is the state's parameters
    double counts = (double)t->train->n;
    if (!reduce(cfg, &counts, 1))
        return NNUE_TRAIN_ERR_REDUCE;
    if (counts < 1)
        return WHY_FAIL(NNUE_TRAIN_ERR_CONFIG, why, why_len, "no training positions");
    if (!spans_build(cfg, m, t->train, &t->sp))
        return WHY_FAIL(NNUE_TRAIN_ERR_NOMEM, why, why_len,
                        "out of memory (or the sum over ranks)");
    if (cfg->log)
        fprintf(cfg->log, "Input rows reached by the training positions: %zu of %d\n",
                (t->sp.total - (size_t)(3 * m->hidden + 1)) / (size_t)m->hidden, m->features);
    // Steps per epoch from the positions of all ranks: every rank makes the same steps.
    t->steps = ceil(counts / cfg->batch);
    t->total_steps = t->steps * cfg->epochs;
    bool resumed = false;
    t->id = ckpt_id(cfg);
    t->ckpt = ckpt_of(cfg, &t->id, &t->ts);
    NnueTrainStatus rc =
        from_fitrun(fitrun_resume(&t->ckpt, cfg->reduce, cfg->reduce_ctx, &resumed, why, why_len));
    if (rc != NNUE_TRAIN_OK)
        return rc;
    CkptState *st = &t->ts.st;
    if (!resumed) { // row 0: the untrained model's losses, the curve's start
        rc = mean_loss(cfg, m, t->train, &t->w, &st->loss_start);
        if (rc == NNUE_TRAIN_OK)
            rc = mean_loss(cfg, m, t->valid, &t->w, &st->val_start);
        st->loss_last = st->loss_start;
        st->val_last = st->val_start;
        if (rc == NNUE_TRAIN_OK)
            record_epoch(cfg, 0, st->loss_start, st->val_start, 0);
    } else if (cfg->log) {
        fprintf(cfg->log, "Resuming at epoch %d, step %.0f of %.0f\n", (int)st->epoch + 1, st->step,
                t->steps);
        fflush(cfg->log); // at once: a run killed soon after still shows that it resumed
    }
    rep->resumed_epoch = resumed ? (int)st->epoch : 0;
    rep->loss_start = st->loss_start;
    rep->val_start = st->val_start;
    rep->loss_end = st->loss_last;
    rep->val_end = st->val_last;
    return rc;
}

NnueTrainStatus nnue_train(NnueModel *m, const NnueSet *train, const NnueSet *valid,
                           const NnueTrainConfig *cfg, NnueTrainReport *rep, char *why,
                           size_t why_len)
{
    memset(rep, 0, sizeof *rep);
    NnueTrainStatus rc = nnue_train_check(cfg, why, why_len);
    if (rc != NNUE_TRAIN_OK)
        return rc;
    if (m->hidden != cfg->hidden)
        return WHY_FAIL(NNUE_TRAIN_ERR_CONFIG, why, why_len, "the model has hidden %d, settings %d",
                        m->hidden, cfg->hidden);
    int version = nnue_train_version(cfg->version);
    if (m->version != version || (train && train->version != version) ||
        (valid && valid->version != version))
        return WHY_FAIL(NNUE_TRAIN_ERR_CONFIG, why, why_len,
                        "the model (%s) or the positions' features are not the settings' %s net",
                        nnue_version_name(m->version), nnue_version_name(version));
    NnueSet empty = {.version = version}; // a rank whose shard is empty still joins every sum
    Trainer t = {.cfg = cfg,
                 .m = m,
                 .train = train ? train : &empty,
                 .valid = valid ? valid : &empty,
                 .saved = now_s()};
    rc = train_begin(&t, rep, why, why_len);
    if (rc == NNUE_TRAIN_OK)
        rc = train_epochs(&t, rep, why, why_len);
    rep->seconds = t.busy;
    rep->positions_per_second = t.busy > 0 ? (double)t.trained / t.busy : 0;
    if (rc != NNUE_TRAIN_OK && why && !why[0])
        why_set(why, why_len, "%s", nnue_train_strerror(rc));
    t.ts.p = NULL; // the model's
    state_free(&t.ts);
    work_free(&t.w);
    spans_free(&t.sp);
    free(t.idx);
    free(t.g);
    return rc;
}
