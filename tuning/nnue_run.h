// SPDX-License-Identifier: MIT
// A trained model made the engine's net (quantized, checked against the float net), and a
// whole NNUE training run as `xqforge nnue train` (cli/cmd_nnue_train.c) and kind = train
// (coordinator/nnue_fit.c) make it: the trainer of nnue_train.h with its files around it (the
// shards loaded, the checkpoint checked, the loss CSV cut back to it, the net exported).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "nnue_train.h"

/// Quantizes m into net (allocated here; free with nnue_free), sets its hash and description,
/// and checks it against m on valid (may be NULL or empty: no check): *mean_cp and *max_cp the
/// mean and largest |nnue_evaluate_full - eval_cp|; NNUE_TRAIN_ERR_EXPORT above the tolerance.
NnueTrainStatus nnue_model_export(const NnueModel *m, const NnueSet *valid, const char *description,
                                  NnueNet *net, double *mean_cp, double *max_cp, char *why,
                                  size_t why_len);

/// A run as `xqforge nnue train` and kind = train make it: every rank loads its shard of the
/// files, trains (rank 0 checkpoints to dir/train.ckpt and writes the loss file), and rank 0
/// exports the net (checked on its validation shard) into dir.
typedef struct {
    const char *data[NNUE_TRAIN_FILES_MAX];
    int files;
    const char *dir;         // exists
    const char *net;         // file name in dir (or an absolute path): net.nnue
    const char *loss;        // train-loss.csv
    const char *description; // written into the net's header (16 bytes kept)
    const char *init;        // a net whose weights the model starts from (NULL: cfg.seed's);
                             // its hidden width must be cfg.hidden (a checkpoint still wins)
    NnueTrainConfig cfg;     // the settings, reduce, stop, log, on_epoch (the rest is filled here)
    int rank, ranks;
} NnueTrainRun;

typedef struct {
    NnueTrainReport train;
    uint64_t total, train_n, val_n; // the files' records; this rank's training, validation
    double load_s, quant_mean_cp, quant_max_cp;
    char net_id[NNUE_ID_MAX];
    char net_path[4200], loss_path[4200];
} NnueRunResult;

/// Runs it; NNUE_TRAIN_ERR_DATA, _STALE and _CONFIG are the inputs' fault (exit 2),
/// NNUE_TRAIN_DRAINED a stop after a checkpoint (exit 130).
NnueTrainStatus nnue_train_run(NnueTrainRun *run, NnueRunResult *res, char *why, size_t why_len);
