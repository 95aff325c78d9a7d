// SPDX-License-Identifier: MIT
// NNUE training (kind = train, `xqforge nnue train`): a float model of the engine's XQ1 or XQ2
// net (search/nnue.h; cfg.version) fitted to positions files (.xqp, tuning/posdata.h), then
// quantized to the engine's integer format of that version.
//
// Model: acc_p = ft_b + sum of the columns ft_w[f] of the active features f of perspective p,
// h_p = clamp(acc_p, 0, 1), out = h_stm . out_w[0..H) + h_nstm . out_w[H..2H) + out_b, and the
// evaluation for the side to move eval_cp = out * NNUE_SCALE (400).
// Loss per position: (sigmoid(eval_cp / K) - target)^2, K = 400 / ln 10 = 173.72 (so
// sigmoid(cp / K) = 1 / (1 + 10^(-cp / 400)), Texel's scale), target = lambda * sigmoid(score
// / K) + (1 - lambda) * result for the side to move (0, 0.5, 1).
// Optimiser: mini-batches (batch positions over all ranks; each rank takes its share of its
// shard per step), Adam (beta1 0.9, beta2 0.999, eps 1e-8) on every parameter every step,
// learning rate lr * (0.1 + 0.9 * (1 + cos(pi * step / steps)) / 2) (cosine to lr / 10).
// After each step the transformer's weights and biases are clipped to +-NNUE_TRAIN_FT_CLIP and
// the output weights to +-127 / QB, so the quantized accumulator (at most 33 terms of
// round(1.98 * 255) = 505) cannot overflow int16.
// The epoch's shuffle is a function of (seed, epoch, rank), so a checkpoint (model, Adam
// moments, epoch, step, the epoch's loss sums) resumes exactly: gradients are summed in a fixed
// order (fixed per-thread partitions, then ranks through the reduce callback), so a run killed
// and resumed with the same inputs, settings, ranks and threads writes the same bytes.
// Validation: the positions of games whose hash (file index, game number) falls in the val
// fraction; their loss is reported every epoch, never trained on. The model a run ends with
// (and exports) is the epoch of the lowest validation loss, not the last: the checkpoint keeps
// that epoch's parameters as well. With val 0 (no validation) it is the last epoch.
// Export: weights x QA (transformer), x QB (output), bias x QA x QB, rounded to nearest; the
// quantized net's nnue_evaluate_full (the engine's code) is compared with the float net's
// eval_cp on the validation positions: the export fails when the mean absolute difference
// exceeds NNUE_TRAIN_EXPORT_TOLERANCE centipawns.
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nnue.h"

#define NNUE_TRAIN_K                173.717792761 // 400 / ln 10
#define NNUE_TRAIN_FT_CLIP          1.98
#define NNUE_TRAIN_EXPORT_TOLERANCE 3.0 // centipawns, mean |quantized - float| on validation
#define NNUE_TRAIN_LOSS_HEADER      "epoch,train,val" // the loss CSV's first line (fitrun.h)
// The default lambda of `nnue train` and of [train] lambda (job/job_keys.def spells the same
// number: tests/test_nnue_train.c pins the two equal).
#define NNUE_TRAIN_LAMBDA 0.75

enum {
    NNUE_TRAIN_HIDDEN = 128, // defaults
    NNUE_TRAIN_EPOCHS = 10,
    NNUE_TRAIN_BATCH = 16384,
    NNUE_TRAIN_CHECKPOINT_STEPS = 200,  // steps between checkpoints by default
    NNUE_TRAIN_CHECKPOINT_SECONDS = 60, // and at most this long between them by default
    NNUE_TRAIN_THREADS_MAX = 256,
    NNUE_TRAIN_FILES_MAX = 64
};

typedef enum {
    NNUE_TRAIN_OK,
    NNUE_TRAIN_ERR_IO,   // a file cannot be read or written
    NNUE_TRAIN_ERR_DATA, // a positions file refused (the posdata reason in why)
    NNUE_TRAIN_ERR_NOMEM,
    NNUE_TRAIN_ERR_REDUCE, // the reduce callback failed (another rank is gone)
    NNUE_TRAIN_ERR_CONFIG, // bad settings (named)
    NNUE_TRAIN_ERR_STALE,  // a checkpoint made from other inputs or settings (named)
    NNUE_TRAIN_ERR_EXPORT, // the quantized net differs from the float net beyond the tolerance
    NNUE_TRAIN_DRAINED,    // stopped by cfg->stop after a checkpoint: resume to finish
    NNUE_TRAIN_STATUS_NB
} NnueTrainStatus;

const char *nnue_train_strerror(NnueTrainStatus st);

// ---- Samples -------------------------------------------------------------------------------

/// Positions as the trainer reads them: each perspective's active features, the side to move's
/// score and result; the validation set also keeps the records (the export check decodes them).
typedef struct NnueSet NnueSet;

/// Splits records (posdata_decode'd, file index `file` for the validation hash) into a training
/// and a validation set (val: the fraction of games held out, 0 <= val < 1), with the features
/// of net version `version` (0 or NNUE_VERSION: XQ1; NNUE_VERSION_XQ2).
NnueTrainStatus nnue_set_from_records(const uint8_t *recs, uint64_t n, int file, double val,
                                      int version, NnueSet **train, NnueSet **valid, char *why,
                                      size_t why_len);
/// Reads the records i with i % shards == shard of every file into the two sets; *total (may be
/// NULL) the files' record count. A refused file gives NNUE_TRAIN_ERR_DATA with posdata's reason.
NnueTrainStatus nnue_set_load(const char *const *paths, int files, int shard, int shards,
                              double val, int version, NnueSet **train, NnueSet **valid,
                              uint64_t *total, char *why, size_t why_len);
void nnue_set_free(NnueSet *s);
uint64_t nnue_set_size(const NnueSet *s);
/// Record i of a validation set (POSDATA_RECORD bytes); NULL for a training set or past the end.
const uint8_t *nnue_set_record(const NnueSet *s, uint64_t i);

// ---- Model ---------------------------------------------------------------------------------

/// The float net: p holds ft_w [features][hidden], ft_b [hidden], out_w [2 hidden], out_b.
typedef struct {
    int version;  // NNUE_VERSION (XQ1) or NNUE_VERSION_XQ2
    int features; // nnue_version_features(version)
    int hidden;
    size_t size; // floats in p
    float *p;
    float *ft_w, *ft_b, *out_w, *out_b;
} NnueModel;

/// Allocates and initialises an XQ1 model (deterministic from seed); hidden a multiple of 32.
NnueTrainStatus nnue_model_init(NnueModel *m, int hidden, uint64_t seed);
/// The same for a net version (0 or NNUE_VERSION: XQ1, NNUE_VERSION_XQ2).
NnueTrainStatus nnue_model_init_version(NnueModel *m, int version, int hidden, uint64_t seed);
void nnue_model_free(NnueModel *m);
/// The float evaluation (centipawns for the side to move) of sample i of s.
double nnue_model_eval(const NnueModel *m, const NnueSet *s, uint64_t i);
/// The mean loss over s and, when grad is not NULL, its gradient (m->size doubles) on `threads`
/// threads (this process only: no reduce).
NnueTrainStatus nnue_model_loss(const NnueModel *m, const NnueSet *s, double lambda, int threads,
                                double *loss, double *grad);

// ---- Training ------------------------------------------------------------------------------

/// Adds buf[0..n) over every rank in place; NULL means one process.
typedef bool (*NnueReduceFn)(void *ctx, double *buf, int n);

/// What a run is made from besides its settings: a checkpoint of anything else is refused.
typedef struct {
    uint64_t data; // FNV-1a of the positions files' bytes
    uint64_t job;  // the caller's identity of anything else (a run's job; 0: none)
    int ranks;     // the shards (the sums' order follows them)
} NnueTrainInputs;

typedef struct {
    int hidden, epochs, batch, threads;
    int version; // the net trained: 0 or NNUE_VERSION (XQ1), NNUE_VERSION_XQ2 (king-bucketed)
    double lr, lambda, val;
    uint64_t seed;
    const char *checkpoint;    // resume state (NULL: none)
    int checkpoint_steps;      // steps between checkpoints (0: NNUE_TRAIN_CHECKPOINT_STEPS)
    double checkpoint_seconds; // and when this long passed (0: never by time); at each epoch's
                               // end, at the end and on stop too
    bool fresh;                // an existing checkpoint is not read
    NnueTrainInputs inputs;
    NnueReduceFn reduce; // NULL: one process
    void *reduce_ctx;
    const atomic_bool *stop; // set (on any rank): checkpoint after this step, DRAINED
    FILE *log;               // progress lines (NULL: quiet)
    FILE *loss_csv;          // NNUE_TRAIN_LOSS_HEADER rows (fitrun_loss_open: the checkpoint's
                             // epoch + 1 rows kept, row 0 being the start)
    /// Called after each epoch's row (epoch 0: the start) with its losses (NULL: none).
    void (*on_epoch)(void *ctx, int epoch, double train, double val);
    void *ctx;
} NnueTrainConfig;

typedef struct {
    double loss_start, val_start, loss_end, val_end; // the ends: the kept (best) epoch's
    int epochs_done, resumed_epoch;
    int best_epoch;  // the epoch whose net the model holds at the end (the last without val)
    double best_val; // its validation loss (0 without val)
    double seconds, positions_per_second; // this process's training steps, all threads
    bool drained;
} NnueTrainReport;

/// Checks the settings (hidden, epochs, batch, lr, lambda, val, threads, version).
NnueTrainStatus nnue_train_check(const NnueTrainConfig *cfg, char *why, size_t why_len);
/// Whether cfg's checkpoint (tuning/fitrun.h) will be resumed: OK with *found false (none, or
/// fresh) or true and *epoch its completed epochs; NNUE_TRAIN_ERR_STALE naming the first difference
/// otherwise.
NnueTrainStatus nnue_checkpoint_check(const NnueTrainConfig *cfg, bool *found, int *epoch,
                                      char *why, size_t why_len);
/// Trains m (initialised by the caller from cfg->seed; replaced by the checkpoint's when it is
/// resumed) on this rank's train set, validation loss on valid, every rank calling it alike.
NnueTrainStatus nnue_train(NnueModel *m, const NnueSet *train, const NnueSet *valid,
                           const NnueTrainConfig *cfg, NnueTrainReport *rep, char *why,
                           size_t why_len);
